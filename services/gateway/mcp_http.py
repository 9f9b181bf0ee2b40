"""``/mcp``: Engram's MCP server (``engram/mcp``) over streamable HTTP, on the gateway.

Each request must carry an API key (``Authorization: Bearer eng_…``); without a valid one it gets the same
401 problem as a REST route. Each tool then calls the REST API through the Python SDK with that same key,
in process: the SDK's httpx client sends into this very app (``httpx.ASGITransport``), so a tool call passes
the same authentication, scope check, rate limit, validation and visibility as the REST call it makes
(ADR 0005). Those inner requests are marked (``guards.INNER``) so the per-IP limit, which counted the /mcp
request, does not count them again; the body size limit applies to both.

The transport is stateless and answers JSON: no session lives on a replica, so any replica serves any
request, and nothing an earlier request authenticated is reused by a later one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from engram_client import NO_RETRIES, AsyncEngramClient
from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request

from engram.config import Settings
from engram.mcp.server import build_server
from engram.mcp.tools import Ctx
from services.gateway.guards import INNER, Receive, Scope, Send

PATH = "/mcp"
INNER_BASE_URL = "http://engram.gateway"


def bearer_key(request: object) -> str | None:
    """The API key of an ``Authorization: Bearer …`` header of the MCP request, if any."""
    headers = getattr(request, "headers", None)
    scheme, _, key = (headers.get("authorization", "") if headers is not None else "").partition(" ")
    return (key.strip() or None) if scheme.lower() == "bearer" else None


class McpEndpoint:
    """The ASGI endpoint at ``/mcp``: authenticate, then hand the request to the MCP session manager, which
    ``running()`` (the app's lifespan) keeps alive."""

    def __init__(self, app: FastAPI, settings: Settings) -> None:
        self._app = app
        server = build_server(self._connect)
        # the app's own Starlette routes are not used: only the session manager it sets up is
        server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=settings.max_request_bytes,
            # a bearer key is required, which a page rebinding a name to this host cannot send
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._sessions = server.session_manager

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager's task group for the app's lifespan, held by a task of its own: an anyio task
        group must be left by the task that entered it, whichever tasks start and stop the app."""
        started, stop = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            async with self._sessions.run():
                started.set()
                await stop.wait()

        holder = asyncio.create_task(hold())
        waiting = asyncio.create_task(started.wait())
        await asyncio.wait({holder, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if holder.done():  # it failed to start: its error
            waiting.cancel()
            holder.result()
        try:
            yield
        finally:
            stop.set()
            await holder

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # a missing or bad key raises Unauthenticated: the app's handler answers the REST routes' 401 problem
        await self._app.state.authenticator.authenticate(Request(scope, receive))
        await self._sessions.handle_request(scope, receive, send)

    async def _inner(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[INNER] = True
        await self._app(scope, receive, send)

    @asynccontextmanager
    async def _connect(self, ctx: Ctx) -> AsyncIterator[AsyncEngramClient]:
        request = ctx.request_context.request
        request_id = getattr(getattr(request, "state", None), "request_id", None)
        http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self._inner),
            base_url=INNER_BASE_URL,
            headers={"x-request-id": request_id} if request_id else None,
            trust_env=False,
        )
        key = bearer_key(request)
        async with http, AsyncEngramClient(INNER_BASE_URL, key, http_client=http, retry=NO_RETRIES) as client:
            yield client
