"""python -m services.conflicts"""

from engram.config import Settings
from engram.runtime.process import run_service
from services.conflicts.app import serve

if __name__ == "__main__":
    run_service("conflicts", Settings(), serve)
