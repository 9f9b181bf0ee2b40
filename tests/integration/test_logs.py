"""Every log line of a real process is one JSON object; the lines written inside a request carry its trace id;
what a caller said and the API key it presented never reach a log line or an exported span."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from engram.config import Settings
from engram.domain.keys import parse_key
from engram.domain.models import CallerContext
from engram.runtime.ports import free_port, free_ports
from tests.support.keys import KeyMaker
from tests.support.manifests import declared_process, wait_http
from tests.support.otlp import otlp_receiver
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(300)

CANARY = "Quillfeather-canary-5521 stores the boiler access code under the third floor mat."
QUERY = "where does Quillfeather-canary-5521 store the boiler access code"
LEAK_MARKERS = ("Quillfeather", "boiler", "floor mat")


def json_lines(log: Path) -> list[dict[str, Any]]:
    """Every line of ``log`` decoded; a line that is not a JSON object fails the test naming it."""
    entries = []
    for line in log.read_text().splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            raise AssertionError(f"a log line is not JSON: {line[:300]!r}") from None
        assert isinstance(entry, dict), line
        entries.append(entry)
    return entries


async def test_gateway_logs_are_json_with_trace_ids_and_no_content(
    servers: Settings, tenant: CallerContext, make_key: KeyMaker, tmp_path: Path
) -> None:
    key = await make_key(tenant)
    parsed = parse_key(key.removeprefix("Bearer "))
    assert parsed is not None
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "gateway.log"
    assert servers.database_url and servers.nats_url and servers.ingest_addr and servers.recall_addr
    with otlp_receiver() as receiver:
        env = {
            "ENGRAM_DATABASE_URL": servers.database_url,
            "ENGRAM_NATS_URL": servers.nats_url,
            "ENGRAM_INGEST_ADDR": servers.ingest_addr,
            "ENGRAM_RECALL_ADDR": servers.recall_addr,
            "ENGRAM_INTERNAL_TOKEN": servers.internal_token or "",
            "ENGRAM_EVENTS_STREAM": servers.events_stream,
            "ENGRAM_GATEWAY_HOST": "127.0.0.1",
            "ENGRAM_GATEWAY_PORT": str(port),
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }
        with declared_process(["engram", "serve", "gateway"], env, log) as process:
            async with httpx.AsyncClient(base_url=url, timeout=10) as client:

                async def up() -> bool:  # the in-process ingest and recall answer only while this loop runs
                    assert process.poll() is None, log.read_text()[-2000:]
                    return (await client.get("/health")).status_code == 200

                await eventually(up, timeout=120, ignoring=(httpx.TransportError,), message="the gateway never came up")
                client.headers["authorization"] = key
                created = await client.post("/v1/remember", json={"content": CANARY})
                assert created.status_code == 201, created.text
                recalled = await client.post("/v1/recall", json={"query": QUERY})
                assert recalled.status_code == 200, recalled.text
                refused = await client.post("/v1/remember", json={"content": CANARY, "kind": "no such kind!"})
                assert refused.status_code == 422, refused.text
                wrong_key = await client.post(
                    "/v1/recall", json={"query": QUERY}, headers={"authorization": key[:-4] + "AAAA"}
                )
                assert wrong_key.status_code == 401

            def exported() -> bool:
                return {"POST /v1/remember", "POST /v1/recall"} <= {s.name for s in receiver.spans()}

            await eventually(exported, timeout=30, message="the gateway exported no request spans")
        assert process.returncode == 0
        spans = receiver.spans()

    text = log.read_text()
    entries = json_lines(log)
    assert entries and all({"time", "level", "service", "logger", "message"} <= set(e) for e in entries)
    assert {e["service"] for e in entries} == {"gateway"}
    access = [e for e in entries if e["logger"] == "engram.access"]
    assert len(access) == 4, [e["message"] for e in access]  # one line per request, each with its trace
    for entry in access:
        method, path = entry["message"].split()[:2]
        traces = {s.trace_id.hex() for s in spans if s.name == f"{method} {path}"}
        assert entry.get("trace_id") in traces and entry.get("span_id"), entry
    for secret in (*LEAK_MARKERS, parsed[1]):
        assert secret not in text, f"{secret!r} appears in the gateway's log"
        leaked = [s.name for s in spans if secret in str(s)]
        assert not leaked, f"{secret!r} appears in exported spans {leaked}"


def test_a_consumer_logs_json_including_faststreams_lines(migrated: str, nats_url: str, tmp_path: Path) -> None:
    port = free_port()
    env = {
        "ENGRAM_DATABASE_URL": migrated,
        "ENGRAM_NATS_URL": nats_url,
        "ENGRAM_METRICS_PORT": str(port),
        "ENGRAM_METRICS_HOST": "127.0.0.1",
        "ENGRAM_WORKER_NICE": "0",
    }
    log = tmp_path / "classifier.log"
    with declared_process(["engram", "serve", "classifier"], env, log) as process:
        ready = wait_http(process, log, f"http://127.0.0.1:{port}/ready")
        assert ready.json() == {"status": "ready"}
    assert process.returncode == 0  # SIGTERM drains and exits cleanly
    entries = json_lines(log)
    assert {e["service"] for e in entries} == {"classifier"}
    assert any(e["logger"].startswith("faststream") for e in entries), [e["logger"] for e in entries]
    assert any(e["logger"] == "engram.events.worker" for e in entries)


def test_text_logs_are_what_engram_up_gives_its_services(migrated: str, tmp_path: Path) -> None:
    grpc_port, port = free_ports(2)
    address = f"127.0.0.1:{grpc_port}"
    env = {
        "ENGRAM_DATABASE_URL": migrated,
        "ENGRAM_RECALL_ADDR": address,
        "ENGRAM_LOG_FORMAT": "text",
        "ENGRAM_METRICS_PORT": str(port),
        "ENGRAM_METRICS_HOST": "127.0.0.1",
    }
    log = tmp_path / "recall.log"
    with declared_process(["engram", "serve", "recall"], env, log) as process:
        wait_http(process, log, f"http://127.0.0.1:{port}/ready")
    lines = [line for line in log.read_text().splitlines() if "recall serving on" in line]
    assert lines and not lines[0].startswith("{") and f"services.recall.app: recall serving on {address}" in lines[0]
