"""python -m services.classifier"""

from engram.config import Settings
from engram.runtime.process import run_service
from services.classifier.app import serve

if __name__ == "__main__":
    run_service("classifier", Settings(), serve)
