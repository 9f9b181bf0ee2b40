"""EngramError ⇄ gRPC status. The code and field travel in trailing metadata so the gateway can rebuild
the same error and answer with the same problem+json."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar

import asyncpg
import grpc

from engram.errors import ERRORS_BY_CODE, ERRORS_BY_STATUS, EngramError, RateLimited, Unavailable

log = logging.getLogger(__name__)

CODE_KEY = "engram-error-code"
FIELD_KEY = "engram-error-field"
STATUS_KEY = "engram-error-status"
RETRY_AFTER_KEY = "engram-retry-after"

_STATUS: dict[int, grpc.StatusCode] = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.FAILED_PRECONDITION,
    422: grpc.StatusCode.INVALID_ARGUMENT,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    503: grpc.StatusCode.UNAVAILABLE,
}

Handler = TypeVar("Handler", bound=Callable[..., Awaitable[Any]])


def translate_errors(method: Handler) -> Handler:
    """Servicer decorator: EngramError (and lost dependencies) become a gRPC status with code metadata."""

    @wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await method(self, request, context)
        except EngramError as exc:
            await _abort(context, exc)
        except (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError) as exc:
            await _abort(context, Unavailable(f"dependency unavailable: {exc}"))
        except Exception:
            log.exception("unhandled error in %s", method.__name__)
            await _abort(context, EngramError("internal error"))

    return wrapper  # type: ignore[return-value]


async def _abort(context: grpc.aio.ServicerContext, exc: EngramError) -> None:
    trailing = [(CODE_KEY, exc.code), (STATUS_KEY, str(exc.http_status))]
    if exc.field:
        trailing.append((FIELD_KEY, exc.field))
    if isinstance(exc, RateLimited):
        trailing.append((RETRY_AFTER_KEY, f"{exc.retry_after_s:.3f}"))
    context.set_trailing_metadata(tuple(trailing))
    await context.abort(_STATUS.get(exc.http_status, grpc.StatusCode.INTERNAL), exc.detail)


def from_rpc_error(exc: grpc.aio.AioRpcError) -> EngramError:
    """Rebuild the EngramError a service raised (gateway side)."""
    trailing = {k: v for k, v in (exc.trailing_metadata() or ()) if isinstance(v, str)}
    code = trailing.get(CODE_KEY)
    if code is None:
        if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return Unavailable(f"downstream service unavailable: {exc.details()}")
        return EngramError(exc.details() or "internal error")
    cls = ERRORS_BY_CODE.get(code) or ERRORS_BY_STATUS.get(trailing.get(STATUS_KEY, ""), EngramError)
    if issubclass(cls, RateLimited):
        return RateLimited(exc.details() or "", retry_after_s=float(trailing.get(RETRY_AFTER_KEY, "1")),
                           field=trailing.get(FIELD_KEY), code=code)
    return cls(exc.details() or "", field=trailing.get(FIELD_KEY), code=code)
