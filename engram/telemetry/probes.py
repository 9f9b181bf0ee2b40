"""Liveness and readiness of a gRPC or consumer process, served beside ``/metrics`` on its metrics port.

``GET /health`` (liveness) answers 200 while the process's event loop keeps beating: a loop stuck for longer
than ``stall_after_s`` answers 503, so an orchestrator restarts the process. ``GET /ready`` (readiness) answers
200 once the process said it is serving and every readiness check passes (e.g. the NATS connection is up), and
503 naming what is missing otherwise — before start-up finished, while it drains on the way out, or while a
dependency is away. Both answer a small JSON object; ``GET /metrics`` is the Prometheus exposition.

The HTTP server runs in a thread (like ``prometheus_client.start_http_server``), so it answers even when the
event loop is stuck — which is what lets ``/health`` report the stall.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import make_wsgi_app

Check = Callable[[], str | None]  # a problem to report, or None when this dependency is fine
StartResponse = Callable[[str, list[tuple[str, str]]], Any]

BEAT_INTERVAL_S = 1.0
STALL_AFTER_S = 10.0


class Probes:
    """What ``/health`` and ``/ready`` answer. Thread-safe enough by construction: the event loop writes plain
    attributes, the HTTP thread reads them."""

    def __init__(self, stall_after_s: float = STALL_AFTER_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._stall_after_s = stall_after_s
        self._last_beat = clock()
        self._serving = False
        self._checks: dict[str, Check] = {}

    def serving(self, on: bool = True) -> None:
        """Start-up finished (``True``) or the process started to drain (``False``)."""
        self._serving = on

    def add_check(self, name: str, check: Check) -> None:
        self._checks[name] = check

    def beat(self) -> None:
        self._last_beat = self._clock()

    async def keep_beating(self, stop: asyncio.Event) -> None:
        """Beat every second until ``stop`` is set (run it as a task on the process's event loop)."""
        while not stop.is_set():
            self.beat()
            try:
                await asyncio.wait_for(stop.wait(), BEAT_INTERVAL_S)
            except TimeoutError:
                continue

    def live(self) -> tuple[bool, dict[str, Any]]:
        silent_s = self._clock() - self._last_beat
        if silent_s > self._stall_after_s:
            return False, {"status": "stalled", "event_loop_silent_s": round(silent_s, 1)}
        return True, {"status": "ok"}

    def ready(self) -> tuple[bool, dict[str, Any]]:
        problems = dict(self._problems())
        if not self._serving:
            problems["process"] = "not serving (starting or draining)"
        if problems:
            return False, {"status": "not_ready", "problems": problems}
        return True, {"status": "ready"}

    def _problems(self) -> Iterable[tuple[str, str]]:
        for name, check in list(self._checks.items()):
            try:
                problem = check()
            except Exception as exc:  # a broken check is a problem to report, never a 500
                problem = f"check failed: {type(exc).__name__}"
            if problem:
                yield name, problem


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # probes every few seconds would flood the log
        pass


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


def probe_app(probes: Probes) -> Callable[[dict[str, Any], StartResponse], Iterable[bytes]]:
    """The WSGI app: ``/health``, ``/ready``, and everything else to the Prometheus exposition."""
    metrics = make_wsgi_app()

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path in ("/health", "/ready"):
            ok, body = probes.live() if path == "/health" else probes.ready()
            payload = json.dumps(body).encode()
            status = "200 OK" if ok else "503 Service Unavailable"
            start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
            return [payload]
        result: Iterable[bytes] = metrics(environ, start_response)
        return result

    return app


class ProbeServer:
    """``/metrics``, ``/health`` and ``/ready`` of one process on ``host:port`` (port 0: not served, but the
    probes still exist), and the heartbeat task that keeps ``/health`` green. Start it first thing in a
    process's ``serve`` (it must run on the process's event loop) and ``close()`` it last, or use it as
    ``async with ProbeServer(port, host) as probes:``."""

    def __init__(self, port: int, host: str, probes: Probes | None = None) -> None:
        self.probes = probes or Probes()
        self._server: WSGIServer | None = None
        if port:
            self._server = make_server(
                host, port, probe_app(self.probes), server_class=_ThreadingServer, handler_class=_QuietHandler
            )
            threading.Thread(target=self._server.serve_forever, name="engram-probes", daemon=True).start()
        self._stop = asyncio.Event()
        self._beating = asyncio.create_task(self.probes.keep_beating(self._stop))

    @property
    def port(self) -> int | None:
        return self._server.server_port if self._server else None

    async def __aenter__(self) -> Probes:
        return self.probes

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        self.probes.serving(False)
        self._stop.set()
        await self._beating
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
