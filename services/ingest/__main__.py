"""python -m services.ingest"""

from engram.config import Settings
from engram.runtime.process import run_service
from services.ingest.app import serve

if __name__ == "__main__":
    run_service("ingest", Settings(), serve)
