"""engram-client: the Python client of Engram's REST API.

    from engram_client import EngramClient

    with EngramClient() as engram:  # ENGRAM_URL and ENGRAM_API_KEY
        stored = engram.remember("Deploys happen on Tuesdays.", tags=["ops"])
        for hit in engram.recall("when do we deploy?").items:
            print(hit.score, hit.item.content)

``AsyncEngramClient`` has the same methods, awaited. Errors are ``EngramError`` subclasses (``errors``);
429 and 503 are retried with back-off as ``RetryPolicy`` says.
"""

from engram_client._core import VERSION
from engram_client.async_client import AsyncEngramClient
from engram_client.client import EngramClient
from engram_client.errors import (
    Conflict,
    ConnectionFailed,
    EngramError,
    Forbidden,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
    ValidationFailed,
)
from engram_client.retry import NO_RETRIES, RetryPolicy

__version__ = VERSION

__all__ = [
    "NO_RETRIES",
    "AsyncEngramClient",
    "Conflict",
    "ConnectionFailed",
    "EngramClient",
    "EngramError",
    "Forbidden",
    "NotFound",
    "RateLimited",
    "RetryPolicy",
    "Unauthorized",
    "Unavailable",
    "ValidationFailed",
    "__version__",
]
