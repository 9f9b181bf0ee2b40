"""The entry point every service process shares: logging, signals, and a clean exit."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable

from engram.config import Settings, SettingsError
from engram.telemetry.logging import configure_logging
from engram.telemetry.tracing import configure_tracing


def run_service(name: str, settings: Settings, serve: Callable[[Settings, asyncio.Event], Awaitable[None]]) -> None:
    """Run ``serve`` until SIGTERM or SIGINT sets its stop event. A setting the service needs and lacks ends
    the process at once with a message naming it (``Settings.require_for``). Logging and tracing are set up
    first (``ENGRAM_LOG_*``, ``OTEL_*``)."""
    configure_logging(name, settings.log_level, settings.log_format)
    configure_tracing(name)
    try:
        settings.require_for(name)
    except SettingsError as exc:
        raise SystemExit(f"engram {name}: {exc.detail}") from exc

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await serve(settings, stop)

    asyncio.run(main())
