"""EngramError ⇄ gRPC status. The class name, code and field travel in trailing metadata so the gateway can
rebuild the same error and answer with the same problem+json. ``EdgeInterceptor`` (``engram/rpc/server.py``)
calls ``abort_with`` for whatever a servicer method raises."""

from __future__ import annotations

import logging

import asyncpg
import grpc

from engram.errors import (
    Conflict,
    EngramError,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
    Unavailable,
    ValidationFailed,
    most_specific,
)

log = logging.getLogger(__name__)

CLASS_KEY = "engram-error-class"
CODE_KEY = "engram-error-code"
FIELD_KEY = "engram-error-field"
RETRY_AFTER_KEY = "engram-retry-after"

GRPC_STATUS: dict[type[EngramError], grpc.StatusCode] = {
    EngramError: grpc.StatusCode.INTERNAL,
    ValidationFailed: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    Conflict: grpc.StatusCode.FAILED_PRECONDITION,
    RateLimited: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
}
"""The status of each error class; a subclass not listed takes its nearest listed ancestor's."""

_BY_NAME: dict[str, type[EngramError]] = {cls.__name__: cls for cls in GRPC_STATUS}
_BY_STATUS: dict[grpc.StatusCode, type[EngramError]] = {}
for _cls, _status in GRPC_STATUS.items():
    _BY_STATUS.setdefault(_status, _cls)  # the first (most general) class listed for a status

LOST_DEPENDENCY = (
    OSError,  # refused, reset, timed out (TimeoutError is one)
    asyncpg.PostgresConnectionError,  # the connection broke or was never made
    asyncpg.InterfaceError,  # a connection already closed, a pool closing
    asyncpg.OperatorInterventionError,  # 57P0x: the server shutting down, crashed or still starting up
    asyncpg.TooManyConnectionsError,  # 53300: every slot taken, typically while clients reconnect after a restart
    # asyncpg's protocol state on a connection the server dropped in the middle of an operation ("cannot switch
    # to state 15; another operation (2) is in progress"), as a PostgreSQL fast shutdown does to busy sessions
    asyncpg.InternalClientError,
)
"""Exceptions that mean a dependency is out of reach right now (not that the request is wrong): each edge answers
them as ``Unavailable``, which a caller may retry."""


def as_engram_error(exc: Exception, method: str) -> EngramError:
    """What a servicer method's exception becomes at the edge: itself if it is an EngramError, Unavailable
    for a lost dependency, else a logged internal error (its detail stays in the log)."""
    if isinstance(exc, EngramError):
        return exc
    if isinstance(exc, LOST_DEPENDENCY):
        return Unavailable(f"dependency unavailable: {exc}")
    log.error("unhandled error in %s", method, exc_info=exc)
    return EngramError("internal error")


async def abort_with(context: grpc.aio.ServicerContext, exc: EngramError) -> None:
    """End the call with ``exc``'s status, its class, code and field (and retry delay) in trailing metadata."""
    trailing = [(CLASS_KEY, wire_class(type(exc)).__name__), (CODE_KEY, exc.code)]
    if exc.field:
        trailing.append((FIELD_KEY, exc.field))
    if isinstance(exc, RateLimited | Unavailable):
        trailing.append((RETRY_AFTER_KEY, f"{exc.retry_after_s:.3f}"))
    context.set_trailing_metadata(tuple(trailing))
    await context.abort(most_specific(GRPC_STATUS, type(exc)), exc.detail)


def wire_class(cls: type[EngramError]) -> type[EngramError]:
    """The nearest class in ``cls``'s MRO that the other side knows by name."""
    return next((c for c in cls.__mro__ if c in GRPC_STATUS), EngramError)


def rebuild(class_name: str, code: str, detail: str, field: str | None) -> EngramError:
    """The EngramError named by its class name (as ``wire_class`` gives it), code, detail and field: how an error
    carried inside a reply (one memory of a batch) is turned back into the error."""
    return _BY_NAME.get(class_name, EngramError)(detail, field=field or None, code=code)


def from_rpc_error(exc: grpc.aio.AioRpcError) -> EngramError:
    """Rebuild the EngramError a service raised (gateway side): the class named in the trailing metadata (else
    the one its status stands for), with the same code, field and retry delay."""
    trailing = {k: v for k, v in (exc.trailing_metadata() or ()) if isinstance(v, str)}
    code = trailing.get(CODE_KEY)
    if code is None:
        if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return Unavailable(f"downstream service unavailable: {exc.details()}")
        return EngramError(exc.details() or "internal error")
    cls = _BY_NAME.get(trailing.get(CLASS_KEY, "")) or _BY_STATUS.get(exc.code(), EngramError)
    if issubclass(cls, RateLimited | Unavailable):
        return cls(
            exc.details() or "",
            retry_after_s=float(trailing.get(RETRY_AFTER_KEY, "1")),
            field=trailing.get(FIELD_KEY),
            code=code,
        )
    return cls(exc.details() or "", field=trailing.get(FIELD_KEY), code=code)
