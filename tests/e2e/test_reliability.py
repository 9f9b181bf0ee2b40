"""Faults on the real stack: consumers killed mid-stream, NATS paused and killed while writes go on. Every
accepted write must have each pipeline effect exactly once afterwards (counted in the database)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator

import asyncpg
import httpx
import psutil
import pytest

from engram.runtime.ports import free_port
from tests.support.stack import Stack
from tests.support.waiting import eventually_blocking

# a stack may take 180 s to start and a wait up to 180 s more: far above the default per-test timeout
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(home=tmp_path_factory.mktemp("reliability") / "home", port=free_port()).start()
    yield stack
    stack.stop()


def _remember_all(client: httpx.Client, texts: list[str]) -> list[str]:
    ids = []
    for text in texts:
        response = client.post("/v1/remember", json={"content": text})
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    return ids


async def _effects(database_url: str, ids: list[str]) -> dict[str, int]:
    """How many times each pipeline effect happened for these items."""
    conn = await asyncpg.connect(database_url)
    try:
        row = await conn.fetchrow(
            """SELECT (SELECT count(*) FROM outbox WHERE envelope->>'type' = 'engram.memory.embedded'
                          AND envelope->>'subject' = ANY($1::text[])) AS embedded_events,
                      (SELECT count(*) FROM memory_embeddings WHERE item_id = ANY($1::uuid[])) AS vectors,
                      (SELECT count(*) FROM classification_receipts WHERE item_id = ANY($1::uuid[])) AS receipts,
                      (SELECT count(*) FROM outbox WHERE envelope->>'type' = 'engram.memory.classified'
                          AND envelope->>'subject' = ANY($1::text[])) AS classified_events,
                      (SELECT count(*) FROM item_stages WHERE item_id = ANY($1::uuid[]) AND status = 'done'
                          AND stage IN ('embedding', 'classification', 'conflict_check')) AS stages_done""",
            ids,
        )
        return dict(row)
    finally:
        await conn.close()


def _all_done(stack: Stack, ids: list[str]) -> bool:
    return asyncio.run(_effects(stack.info()["database_url"], ids))["stages_done"] == 3 * len(ids)


def test_the_pipeline_yields_the_cores_to_the_request_path(faulty: Stack) -> None:
    base = psutil.Process(faulty.service_pid("ingest")).nice()
    assert psutil.Process(faulty.service_pid("recall")).nice() == base
    assert psutil.Process(faulty.service_pid("gateway")).nice() == base
    for name in ("embedder", "classifier", "conflicts", "promotion"):  # ENGRAM_WORKER_NICE, 10 by default
        assert psutil.Process(faulty.service_pid(name)).nice() == min(19, base + 10), name


def test_consumers_killed_mid_stream_leave_every_effect_exactly_once(faulty: Stack) -> None:
    tag = uuid.uuid4().hex[:6]
    texts = [f"Run {tag}: we decided to keep build log number {n} for audits." for n in range(60)]
    ids: list[str] = []
    with faulty.client() as client:
        writer = threading.Thread(target=lambda: ids.extend(_remember_all(client, texts)))
        writer.start()
        eventually_blocking(lambda: len(ids) >= 15, timeout=60, message="15 writes accepted")
        for name in ("embedder", "classifier", "conflicts"):  # while the backlog is being worked through
            psutil.Process(faulty.service_pid(name)).send_signal(signal.SIGKILL)
        writer.join()
        eventually_blocking(lambda: _all_done(faulty, ids), timeout=180, message="every stage done for all 60")
    effects = asyncio.run(_effects(faulty.info()["database_url"], ids))
    assert effects == {
        "embedded_events": 60,
        "vectors": 60,
        "receipts": 60,
        "classified_events": 60,
        "stages_done": 180,
    }


def test_writes_accepted_while_nats_is_paused_or_killed_are_all_delivered(faulty: Stack) -> None:
    tag = uuid.uuid4().hex[:6]
    nats_pid = next(p.pid for p in faulty.children() if p.name() == "nats-server")
    ids: list[str] = []
    with faulty.client() as client:
        os.kill(nats_pid, signal.SIGSTOP)  # unresponsive: publishes time out, nothing is acknowledged
        try:
            ids += _remember_all(client, [f"Paused {tag}: note {n} about the cache warmer." for n in range(10)])
            time.sleep(2)
        finally:
            os.kill(nats_pid, signal.SIGCONT)
        os.kill(nats_pid, signal.SIGKILL)  # gone: the supervisor starts it again on the same port and store
        ids += _remember_all(client, [f"Killed {tag}: note {n} about the cache warmer." for n in range(10)])
        eventually_blocking(lambda: _all_done(faulty, ids), timeout=180, message="every stage done for all 20")
    effects = asyncio.run(_effects(faulty.info()["database_url"], ids))
    assert effects["embedded_events"] == effects["vectors"] == effects["receipts"] == 20
    assert effects["classified_events"] == 20 and effects["stages_done"] == 60
