"""python -m services.embedder"""

from engram.config import Settings
from engram.runtime.process import run_service
from services.embedder.app import serve

if __name__ == "__main__":
    run_service("embedder", Settings(), serve)
