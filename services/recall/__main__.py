"""python -m services.recall"""

from engram.config import Settings
from engram.runtime.process import run_service
from services.recall.app import serve

if __name__ == "__main__":
    run_service("recall", Settings(), serve)
