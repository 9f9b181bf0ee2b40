"""A/B of the gateway's latency middleware: as Starlette's BaseHTTPMiddleware (before, its dispatch as it was
until 2026-12-02) and as plain ASGI (services.gateway.app.RecordLatency), CPU milliseconds of this process per
GET /health through the whole middleware stack (the ASGI app in process, no lifespan: /health touches nothing
downstream; the client's share is the same in both).

    python bench/gateway_middleware.py [--requests 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from engram.config import Settings
from services.gateway import app as gw


async def old_dispatch(request: Any, call_next: Any) -> Any:
    started = time.perf_counter()
    request.state.request_id = gw.request_id(request.headers.get("x-request-id"))
    response = await call_next(request)
    path = gw.route_template(request)
    elapsed = time.perf_counter() - started
    gw.HTTP_LATENCY.labels(path, gw.method_label(request.method), str(response.status_code)).observe(elapsed)
    return response


def build(variant: str) -> Any:
    app = gw.create_app(Settings())
    if variant == "before":
        app.user_middleware = [
            Middleware(BaseHTTPMiddleware, dispatch=old_dispatch) if m.cls is gw.RecordLatency else m
            for m in app.user_middleware
        ]
    return app


async def run(app: Any, n: int) -> float:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        for _ in range(50):
            await c.get("/health")
        t0 = time.process_time()
        for _ in range(n):
            r = await c.get("/health")
            r.raise_for_status()
        return (time.process_time() - t0) / n * 1000


async def main(requests: int, rounds: int) -> None:
    logging.disable(logging.CRITICAL)  # the access log and httpx's own would dominate
    apps = {v: build(v) for v in ("before", "after")}
    for round_ in range(1, rounds + 1):
        for variant, app in apps.items():
            print(f"round {round_}, {variant}: {await run(app, requests):.3f} CPU ms per request", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.rounds))
