"""python -m services.gateway"""

from __future__ import annotations

import asyncio

import uvicorn

from engram.config import Settings
from engram.runtime.ports import CannotListen, listen
from engram.runtime.process import run_service
from services.gateway.app import create_app


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    settings.require_for("gateway")
    try:  # bound before the app starts, so a busy port is one line naming the setting, not a traceback
        sock = listen(
            settings.gateway_host,
            settings.gateway_port,
            host_setting="ENGRAM_GATEWAY_HOST",
            port_setting="ENGRAM_GATEWAY_PORT",
        )
    except CannotListen as exc:
        raise SystemExit(f"engram gateway: {exc.detail}") from None
    config = uvicorn.Config(
        create_app(settings),
        host=settings.gateway_host,
        port=settings.gateway_port,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    server = uvicorn.Server(config)  # uvicorn captures SIGTERM/SIGINT while serving, drains, then re-raises them
    task = asyncio.create_task(server.serve(sockets=[sock]))
    await asyncio.wait([task, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    await task


if __name__ == "__main__":
    run_service("gateway", Settings(), serve)
