"""Liveness and readiness of gRPC and consumer processes (engram/telemetry/probes.py)."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest

from engram.runtime.ports import free_port
from engram.telemetry.probes import Probes, ProbeServer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_silent_event_loop_is_reported_as_stalled() -> None:
    clock = Clock()
    probes = Probes(stall_after_s=10, clock=clock)
    assert probes.live() == (True, {"status": "ok"})
    clock.now += 10.5
    live, body = probes.live()
    assert not live and body == {"status": "stalled", "event_loop_silent_s": 10.5}
    probes.beat()
    assert probes.live()[0]


def test_ready_only_while_serving_and_every_check_passes() -> None:
    probes = Probes()
    nats_up = False
    probes.add_check("nats", lambda: None if nats_up else "NATS connection lost")
    ready, body = probes.ready()
    assert not ready and body["problems"] == {
        "nats": "NATS connection lost",
        "process": "not serving (starting or draining)",
    }
    probes.serving()
    assert probes.ready()[1]["problems"] == {"nats": "NATS connection lost"}
    nats_up = True
    assert probes.ready() == (True, {"status": "ready"})
    probes.serving(False)  # draining
    assert not probes.ready()[0]


def test_a_check_that_raises_is_a_problem_not_an_error() -> None:
    probes = Probes()
    probes.serving()
    probes.add_check("database", lambda: str(1 / 0))
    assert probes.ready() == (
        False,
        {"status": "not_ready", "problems": {"database": "check failed: ZeroDivisionError"}},
    )


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


async def test_the_server_answers_health_ready_and_metrics_on_its_port() -> None:
    port = free_port()
    server = ProbeServer(port, "127.0.0.1")
    try:
        base = f"http://127.0.0.1:{port}"
        status, body = await asyncio.to_thread(_get, f"{base}/ready")
        assert status == 503 and json.loads(body)["status"] == "not_ready"
        server.probes.serving()
        assert await asyncio.to_thread(_get, f"{base}/ready") == (200, '{"status": "ready"}')
        assert await asyncio.to_thread(_get, f"{base}/health") == (200, '{"status": "ok"}')
        status, body = await asyncio.to_thread(_get, f"{base}/metrics")
        assert status == 200 and "python_info" in body
    finally:
        await server.close()
    with pytest.raises(urllib.error.URLError):
        await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/health")


async def test_no_port_serves_nothing_but_still_beats() -> None:
    server = ProbeServer(0, "127.0.0.1", Probes(stall_after_s=0.5))
    assert server.port is None
    await asyncio.sleep(1.2)  # longer than stall_after_s: only the heartbeat task keeps it live
    assert server.probes.live()[0]
    await server.close()
