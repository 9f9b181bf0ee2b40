"""Authentication, scopes and rate limits at the edge.

Every route declares the scope it needs as ``x-engram-scope-policy`` in its OpenAPI extra; the ``caller``
dependency reads that one declaration, so what is documented is what is enforced, and a route that declares
nothing is refused (fail closed). ``caller`` is the app's one dependency (``FastAPI(dependencies=EDGE)``), so
no route can leave it out: it refuses a body that is not JSON, authenticates the key unless the route is
public, checks the scope, and counts the request against the rate limit its handler declares
(``limits.limited``), in that order. Handlers read what it found through ``context``: one dependency node per
request instead of one for each of these steps (FastAPI walks every node on every request). Missing,
malformed, unknown and revoked keys all get the same 401; an unknown key id is remembered for a short while
(``UnknownKeys``) so that repeating it costs no database lookup, and its secret is hashed and compared all
the same.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import asyncpg
from fastapi import Depends, Request
from starlette.datastructures import Headers

from engram.config import DEFAULT_ADMIN_ID, DEFAULT_TENANT_ID, Settings
from engram.db import keys
from engram.domain.keys import SCOPES, allows, hash_secret, parse_key, secret_matches
from engram.domain.models import CallerContext
from engram.errors import PermissionDenied, Unauthenticated, Unavailable
from engram.rpc.errors import LOST_DEPENDENCY
from engram.telemetry.tracing import current_traceparent
from services.gateway import media
from services.gateway.clients import Downstream
from services.gateway.guards import request_id
from services.gateway.limits import LIMIT

POLICY = "x-engram-scope-policy"
PUBLIC = "public"
CALLER = "engram.caller"
"""The ASGI scope key under which ``caller`` keeps the request's authenticated caller."""


def policy(scope: str) -> dict[str, Any]:
    """Route decorator keyword arguments declaring the scope a route requires; ``a|b`` means either."""
    if scope != PUBLIC and not set(scope.split("|")) <= set(SCOPES):
        raise ValueError(f"unknown scope {scope!r}")
    return {"openapi_extra": {POLICY: scope}}


_DUMMY_SALT = secrets.token_bytes(16)
_DUMMY_HASH = hash_secret(_DUMMY_SALT, secrets.token_urlsafe(32))


class UnknownKeys:
    """Key ids the database did not know, each remembered for ``ttl_s`` (at most ``size``, the oldest
    forgotten first). Only absence is remembered: a revoked key or a wrong secret is looked up every time."""

    def __init__(self, ttl_s: float, size: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl_s
        self._size = size
        self._clock = clock
        self._until: OrderedDict[str, float] = OrderedDict()

    def __contains__(self, key_id: str) -> bool:
        until = self._until.get(key_id)
        if until is None:
            return False
        if until < self._clock():
            del self._until[key_id]
            return False
        return True

    def add(self, key_id: str) -> None:
        if self._ttl <= 0:
            return
        self._until.pop(key_id, None)
        while len(self._until) >= self._size:
            self._until.popitem(last=False)
        self._until[key_id] = self._clock() + self._ttl


class Authenticator:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._enabled = settings.auth_enabled
        self.unknown = UnknownKeys(settings.unknown_key_cache_s, settings.unknown_key_cache_size)
        self.lookups = 0  # key lookups in the database, for tests and debugging

    async def authenticate(self, request: Request) -> CallerContext:
        headers = request.headers
        state = request.scope.get("state")  # RecordLatency's request id, read without building request.state
        known_id = state.get("request_id") if isinstance(state, dict) else None
        return await self._authenticate(
            headers,
            known_id or request_id(headers.get("x-request-id")),
            current_traceparent() or trace_context(headers.get("traceparent", "")),
        )

    async def _authenticate(self, headers: Headers, request_id: str, traceparent: str) -> CallerContext:
        if not self._enabled:  # the explicit opt-out: the development admin as its tenant's administrator
            return CallerContext(
                tenant_id=DEFAULT_TENANT_ID,
                principal_id=DEFAULT_ADMIN_ID,
                principal_type="admin",
                scopes=frozenset({"admin"}),
                request_id=request_id,
                traceparent=traceparent,
            )
        header = headers.get("authorization", "")
        scheme, _, presented = header.partition(" ")
        parsed = parse_key(presented.strip()) if scheme.lower() == "bearer" else None
        if parsed is None:
            raise _refused()
        key_id, secret = parsed
        record = None
        try:
            if key_id not in self.unknown:
                self.lookups += 1
                record = await keys.find(self._pool, key_id)
                if record is None:
                    self.unknown.add(key_id)
            if record is None:
                secret_matches(_DUMMY_SALT, _DUMMY_HASH, secret)  # the same work as for a known key id
                raise _refused()
            if not record.usable or not secret_matches(record.salt, record.secret_hash, secret):
                raise _refused()
            if record.last_used_stale:
                await keys.touch(self._pool, record.tenant_id, key_id)
        except LOST_DEPENDENCY as exc:  # the database is down or restarting: 503 + Retry-After, not a 500
            raise Unavailable(f"cannot check the API key now: {type(exc).__name__}") from exc
        return CallerContext(
            tenant_id=record.tenant_id,
            principal_id=record.principal_id,
            principal_type=record.principal_type,
            scopes=frozenset(record.scopes),
            request_id=request_id,
            traceparent=traceparent,
            platform_admin=record.platform_admin,
        )


_TRACEPARENT = re.compile(r"^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")


def trace_context(incoming: str) -> str:
    """Without tracing: the caller's W3C traceparent when well formed, else a new trace (so every write's events
    carry one). With tracing on, the request's server span is the context instead."""
    if _TRACEPARENT.match(incoming) and incoming[3:35] != "0" * 32:
        return incoming
    ids = os.urandom(24).hex()  # a trace id and a span id, as secrets.token_hex(16) and token_hex(8) would give
    return f"00-{ids[:32]}-{ids[32:]}-01"


def _refused() -> Unauthenticated:
    return Unauthenticated("a valid API key is required (Authorization: Bearer eng_…)")


async def caller(request: Request) -> None:
    """Before any handler work, in this order: a body that is not JSON (or holds a NUL or a lone surrogate)
    is refused (``media.json_bodies``); a route that declares no scope policy is refused; unless it is public,
    the key is authenticated, its scope checked, and the request counted against the rate limit the handler
    declares. The caller is kept in the request's scope (``CALLER``), where ``context`` finds it."""
    await media.json_bodies(request)
    route = request.scope.get("route")
    required = (getattr(route, "openapi_extra", None) or {}).get(POLICY)
    if required is None:
        raise PermissionDenied("this route declares no scope policy", code="no_scope_policy")
    if required == PUBLIC:
        return
    ctx: CallerContext = await request.app.state.authenticator.authenticate(request)
    if not any(allows(ctx.scopes, scope) for scope in required.split("|")):
        raise PermissionDenied(f"Requires scope: {required.replace('|', ' or ')}", code="insufficient_scope")
    request.scope[CALLER] = ctx
    limit = getattr(getattr(route, "endpoint", None), LIMIT, None)
    if limit is not None:
        await request.app.state.limits.check(ctx, limit)


def context(request: Request) -> tuple[CallerContext, Downstream]:
    """In a handler: the caller ``caller`` authenticated for this request (its scope checked, its rate limit
    counted) and the app's connections to ingest and recall (made once, at startup)."""
    scope = request.scope
    ctx = scope.get(CALLER)
    if not isinstance(ctx, CallerContext):  # only a route outside ``caller`` (none is) would get here
        raise _refused()
    return ctx, scope["app"].state.downstream


EDGE = [Depends(caller)]
"""The app's dependencies: ``caller``, before every route's own parameters."""
