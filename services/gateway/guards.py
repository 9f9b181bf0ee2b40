"""What the gateway checks before a request reaches a route, so that a caller without a key costs little: the
request body's size, a per-client-IP rate limit (both plain ASGI middleware, outside authentication), the
``x-request-id`` a caller may send, and the HTTP method as a metric label."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from engram.domain.ratelimit import RateLimiter, retry_after_header
from services.gateway.problems import problem

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
UNLIMITED_PATHS = frozenset({"/health", "/ready", "/metrics"})  # probes and scrapes, answered from memory
INNER = "engram.inner"
"""Set in the ASGI scope of a request the gateway sends itself: an MCP tool's REST call (``mcp_http``), made
while serving a /mcp request that was already counted. A client cannot set it: only headers come from it."""
_REQUEST_ID = re.compile(r"^[\x21-\x7e]{1,128}$")


def method_label(method: str) -> str:
    """The HTTP method as a metric label: one of a fixed set, anything else ``other``."""
    return method if method in METHODS else "other"


def request_id(presented: str | None) -> str:
    """The caller's ``x-request-id`` when it is 1–128 printable ASCII characters without spaces; otherwise a
    new one (it travels in gRPC metadata and logs, which take ASCII only)."""
    if presented and _REQUEST_ID.match(presented):
        return presented
    return new_request_id()


def new_request_id() -> str:
    """A random (version 4) UUID in its canonical text form, as ``str(uuid.uuid4())`` gives, without building
    a ``uuid.UUID`` on every request."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class BodyLimit:
    """Refuse (413 ``payload_too_large``) a request body over ``max_bytes``: at once when its Content-Length
    says so, otherwise as soon as that many bytes have arrived (the body is then read here, and handed on)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self._app = app
        self._max = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None:
            if not declared.isdigit() or int(declared) > self._max:
                await self._refuse(scope, receive, send)
                return
            await self._app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self._max:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        await self._app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem(
            413,
            "payload_too_large",
            "Payload too large",
            f"the request body is over the limit of {self._max} bytes",
            field="body",
        )
        await response(scope, receive, send)


class ClientLimit:
    """A token bucket per client IP, ``per_minute`` requests, checked before anything else (authentication
    included): 429 ``rate_limited`` with Retry-After when it is empty. At most ``max_clients`` addresses are
    remembered; the least recently seen go first."""

    def __init__(
        self, app: ASGIApp, per_minute: int, max_clients: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._app = app
        self._per_minute = per_minute
        self._limiter = RateLimiter(clock=clock, max_buckets=max_clients)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in UNLIMITED_PATHS or scope.get(INNER):
            await self._app(scope, receive, send)
            return
        client = scope.get("client")
        address = str(client[0]) if client else "unknown"
        wait = self._limiter.take(address, "client", self._per_minute)
        if wait > 0:
            response = problem(
                429,
                "rate_limited",
                "Too many requests",
                f"rate limit of {self._per_minute} requests a minute from one address reached",
                headers={"Retry-After": retry_after_header(wait)},
            )
            await response(scope, receive, send)
            return
        await self._app(scope, receive, send)
