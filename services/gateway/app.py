"""The gateway: REST (FastAPI) in front of the ingest (writes, Admin) and recall gRPC services."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.datastructures import URL
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram.config import Settings
from engram.db.pool import service_pool
from engram.telemetry import tracing
from engram.telemetry.metrics import HTTP_LATENCY
from services.gateway import admin, openapi, problems, routes
from services.gateway.answers import HealthAnswer, ReadyReport
from services.gateway.auth import EDGE, PUBLIC, Authenticator, policy
from services.gateway.clients import Downstream
from services.gateway.guards import BodyLimit, ClientLimit, method_label, request_id
from services.gateway.limits import Limits
from services.gateway.mcp_http import PATH as MCP_PATH
from services.gateway.mcp_http import McpEndpoint

access = logging.getLogger("engram.access")
QUIET_PATHS = ("/health", "/ready", "/metrics")
DOCS_ASSETS = "/docs/assets"
DOCS_PAGES = ("/docs", "/docs/oauth2-redirect", "/redoc")


NATIVE_TELEMETRY_OFF: dict[str, Any] = {"tracing": False, "metrics": False, "logs": False, "operation_spans": False}
"""FastAPI's own OpenTelemetry (0.165) stays off: the gateway's server spans come from the OpenTelemetry
instrumentation (``FastAPIInstrumentor``, below), in whose presence FastAPI's does nothing, and its metrics are
Prometheus'. Left on, it asked the global tracer, meter and logger providers whether they were configured on every
request (about 5% of the app's Python per request) to find it had nothing to do."""

_PLAIN_PATH = re.compile(r"/(?!/)[^?#\\\t\r\n]*")


def request_path(scope: Scope) -> str:
    """``Request(scope).url.path`` without building the URL: a path without ``?``, ``#``, ``\\``, tabs or line
    breaks that does not start with ``//`` is what Starlette's URL gives back unchanged; any other goes through
    the URL as before."""
    path: str = scope["path"]
    return path if _PLAIN_PATH.fullmatch(path) else URL(scope=scope).path


def route_template(request: Request) -> str:
    """The matched route's full path template (``/v1/items/{item_id}``), a bounded metric label; "unmatched"
    when no route matched. Routes included through nested routers know only their own part of the path, so
    the prefix is taken from the request path: the template's segments are the request path's last ones."""
    route = request.scope.get("route")
    template = getattr(route, "path", None)
    if not isinstance(template, str):
        return "unmatched"
    segments = request_path(request.scope).split("/")
    prefix = segments[: len(segments) - len(template.split("/")) + 1]
    return "/".join(prefix) + template


class RecordLatency:
    """Plain ASGI (no extra task and stream per request, as Starlette's BaseHTTPMiddleware has): gives each HTTP
    request its id (``request.state.request_id``, the caller's ``x-request-id`` when usable), records its
    latency by route template, method and status, and writes the access log line (path only; never body or
    query) for every path but the probes and the scrape."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        request = Request(scope)
        request.state.request_id = request_id(request.headers.get("x-request-id"))
        status = 500

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self._app(scope, receive, sent)
        elapsed = time.perf_counter() - started
        HTTP_LATENCY.labels(route_template(request), method_label(request.method), str(status)).observe(elapsed)
        path = request_path(scope)
        if path not in QUIET_PATHS:
            access.info(
                "%s %s %d %.1fms",
                request.method,
                path,
                status,
                elapsed * 1000,
                extra={"request_id": request.state.request_id},
            )


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings.require_for("gateway")
        app.state.pool = await service_pool(settings, max_size=5)  # for the API-key lookup only
        app.state.authenticator = Authenticator(app.state.pool, settings)
        app.state.downstream = Downstream.connect(settings, app.state.pool)
        app.state.limits = Limits(app.state.downstream, settings)
        try:
            async with mcp.running():  # the MCP session manager's task group, which serves /mcp
                yield
        finally:
            await app.state.downstream.close()
            await app.state.pool.close()

    # /docs and /redoc load Swagger UI and ReDoc from DOCS_ASSETS, served by this app (no CDN)
    app = FastAPIOffline(
        title="Engram",
        version="0.1.0",
        lifespan=lifespan,
        description="Trustable memory for AI agents: remember, recall, and know why.",
        static_url=DOCS_ASSETS,
        dependencies=EDGE,  # auth.caller, before every route's own: a non-JSON body is refused first
        telemetry=NATIVE_TELEMETRY_OFF,
    )
    for route in app.router.routes:  # fastapi-offline's /docs and /redoc pages: public (caller refuses no policy)
        if isinstance(route, APIRoute) and route.path in DOCS_PAGES:
            route.openapi_extra = policy(PUBLIC)["openapi_extra"]
    problems.install(app)
    openapi.install(app)
    routes.include(app)
    admin.include(app)
    # /mcp is a plain ASGI route: outside the app-wide dependency; it authenticates itself (mcp_http)
    mcp = McpEndpoint(app, settings)
    app.router.routes.append(Route(MCP_PATH, mcp, include_in_schema=False))
    # plain ASGI, so outside the routes and authentication; the latency middleware below wraps both
    app.add_middleware(
        ClientLimit, per_minute=settings.ip_rate_limit_per_minute, max_clients=settings.ip_rate_limit_max_clients
    )
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)

    app.add_middleware(RecordLatency)

    if tracing.enabled():  # the server span per request, outermost; probes and scrapes make none
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

        FastAPIInstrumentor.instrument_app(
            app,
            excluded_urls=",".join(f"{p}$" for p in QUIET_PATHS),
            exclude_spans=["receive", "send"],
            http_capture_headers_sanitize_fields=[".*authorization.*", ".*cookie.*", ".*key.*", ".*token.*"],
        )

    @app.get("/health", summary="Liveness: the process answers", **policy(PUBLIC))
    async def health() -> HealthAnswer:
        """200 whenever the gateway process answers; it checks nothing else."""
        return HealthAnswer(status="ok")

    @app.get(
        "/ready",
        summary="Readiness: database, NATS and both gRPC services reachable",
        response_model=ReadyReport,
        responses={503: {"model": ReadyReport, "description": "A dependency is not ready; `checks` says which."}},
        **policy(PUBLIC),
    )
    async def ready(request: Request) -> JSONResponse:
        """Probes each dependency (2 s each) through the gateway's own connections, at most once every
        ENGRAM_READINESS_CACHE_S (5 s): 200 when all are ``ok``, otherwise 503 naming what failed."""
        checks = await request.app.state.downstream.readiness()
        ok = all(value == "ok" for value in checks.values())
        body: dict[str, Any] = {"status": "ready" if ok else "not_ready", "checks": checks}
        return JSONResponse(body, status_code=200 if ok else 503)

    @app.get("/metrics", summary="Prometheus metrics", include_in_schema=False, **policy(PUBLIC))
    async def metrics() -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return app
