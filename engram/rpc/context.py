"""The caller's identity in gRPC metadata: the gateway writes it (``to_metadata``); on ingest and recall,
``EdgeInterceptor`` (``engram/rpc/server.py``) reads it once per call (``bind_caller``) and servicer methods
ask for it with ``caller()``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

from engram.domain.models import CallerContext
from engram.errors import Unauthenticated

TENANT = "x-engram-tenant-id"
PRINCIPAL = "x-engram-principal-id"
PRINCIPAL_TYPE = "x-engram-principal-type"
SCOPES = "x-engram-scopes"
REQUEST_ID = "x-request-id"
INTERNAL_TOKEN = "x-engram-internal-token"
TRACEPARENT = "traceparent"
PLATFORM_ADMIN = "x-engram-platform-admin"


def to_metadata(ctx: CallerContext, internal_token: str | None = None) -> tuple[tuple[str, str], ...]:
    pairs = [
        (TENANT, ctx.tenant_id),
        (PRINCIPAL, ctx.principal_id),
        (PRINCIPAL_TYPE, ctx.principal_type),
        (SCOPES, ",".join(sorted(ctx.scopes))),
        (REQUEST_ID, ctx.request_id),
    ]
    if ctx.traceparent:
        pairs.append((TRACEPARENT, ctx.traceparent))
    if ctx.platform_admin:
        pairs.append((PLATFORM_ADMIN, "true"))
    if internal_token:
        pairs.append((INTERNAL_TOKEN, internal_token))
    return tuple(pairs)


def from_metadata(metadata: Sequence[tuple[str, str | bytes]] | None) -> CallerContext:
    """Refuse a call that does not say who it is for."""
    values = {key: value for key, value in (metadata or ()) if isinstance(value, str)}
    missing = [key for key in (TENANT, PRINCIPAL, PRINCIPAL_TYPE) if not values.get(key)]
    if missing:
        raise Unauthenticated(f"caller context missing from gRPC metadata: {', '.join(missing)}")
    return CallerContext(
        tenant_id=values[TENANT],
        principal_id=values[PRINCIPAL],
        principal_type=values[PRINCIPAL_TYPE],
        scopes=frozenset(s for s in values.get(SCOPES, "").split(",") if s),
        request_id=values.get(REQUEST_ID, ""),
        traceparent=values.get(TRACEPARENT, ""),
        platform_admin=values.get(PLATFORM_ADMIN) == "true",
    )


_CALLER: ContextVar[CallerContext] = ContextVar("engram_caller")


@contextmanager
def bind_caller(metadata: Sequence[tuple[str, str | bytes]] | None, traceparent: str = "") -> Iterator[CallerContext]:
    """For the duration of one call, the caller named in its metadata is ``caller()``; a call without one is
    refused (``Unauthenticated``). ``traceparent`` (the call's server span, when tracing is on) replaces the
    one in the metadata, so the events the call writes name the span that wrote them."""
    ctx = from_metadata(metadata)
    token = _CALLER.set(replace(ctx, traceparent=traceparent) if traceparent else ctx)
    try:
        yield _CALLER.get()
    finally:
        _CALLER.reset(token)


def caller() -> CallerContext:
    """The caller of the gRPC call being served."""
    try:
        return _CALLER.get()
    except LookupError:
        raise RuntimeError("no caller context: the servicer is not behind start_server's EdgeInterceptor") from None
