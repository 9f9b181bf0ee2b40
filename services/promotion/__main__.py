"""python -m services.promotion"""

from engram.config import Settings
from engram.runtime.process import run_service
from services.promotion.app import serve

if __name__ == "__main__":
    run_service("promotion", Settings(), serve)
