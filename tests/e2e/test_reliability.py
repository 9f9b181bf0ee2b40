"""Faults on the real stack: consumers killed mid-stream; NATS paused and killed, PostgreSQL restarted and ingest
killed while 4 writers and 2 readers run. Every accepted write must have each pipeline effect exactly once
afterwards (counted in the database), every refusal must be a 503 with Retry-After (never a 500), and the
services must recover without being restarted themselves."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import uuid
from collections.abc import Iterator

import asyncpg
import httpx
import psutil
import pytest

from engram.runtime.ports import free_port
from tests.support.load import Load
from tests.support.stack import Stack
from tests.support.waiting import eventually_blocking

# a stack may take 180 s to start and a wait up to 180 s more: far above the default per-test timeout
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    unlimited = {
        "ENGRAM_RATE_LIMIT_REMEMBER_PER_MINUTE": "1000000",
        "ENGRAM_RATE_LIMIT_RECALL_PER_MINUTE": "1000000",
        "ENGRAM_IP_RATE_LIMIT_PER_MINUTE": "1000000",  # every client here is 127.0.0.1
    }
    home = tmp_path_factory.mktemp("reliability") / "home"
    stack = Stack(home=home, port=free_port(), extra_env=unlimited).start()
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


async def _once_each(database_url: str, ids: list[str]) -> dict[str, int]:
    """How many of these items lack an effect or have one twice (each should be 0), and how many are stored."""
    conn = await asyncpg.connect(database_url)
    try:
        row = await conn.fetchrow(
            """WITH given AS (SELECT unnest($1::uuid[]) AS id),
                    counted AS (
                        SELECT g.id,
                               (SELECT count(*) FROM memory_items m WHERE m.id = g.id) AS stored,
                               (SELECT count(*) FROM memory_embeddings e WHERE e.item_id = g.id) AS vectors,
                               (SELECT count(*) FROM classification_receipts r WHERE r.item_id = g.id) AS receipts,
                               (SELECT count(*) FROM outbox o WHERE o.envelope->>'subject' = g.id::text
                                   AND o.envelope->>'type' = 'engram.memory.embedded') AS embedded,
                               (SELECT count(*) FROM outbox o WHERE o.envelope->>'subject' = g.id::text
                                   AND o.envelope->>'type' = 'engram.memory.classified') AS classified
                        FROM given g)
               SELECT count(*) FILTER (WHERE stored = 1) AS stored,
                      count(*) FILTER (WHERE vectors <> 1) AS vectors_not_once,
                      count(*) FILTER (WHERE receipts <> 1) AS receipts_not_once,
                      count(*) FILTER (WHERE embedded <> 1) AS embedded_events_not_once,
                      count(*) FILTER (WHERE classified <> 1) AS classified_events_not_once
               FROM counted""",
            ids,
        )
        return dict(row)
    finally:
        await conn.close()


async def _duplicated_texts(database_url: str, tag: str) -> int:
    """Texts of this run stored more than once (a retried write that created a second item)."""
    conn = await asyncpg.connect(database_url)
    try:
        return int(
            await conn.fetchval(
                """SELECT count(*) FROM (SELECT content FROM memory_items WHERE content LIKE $1
                       GROUP BY content HAVING count(*) > 1) AS twice""",
                f"Load {tag}:%",
            )
        )
    finally:
        await conn.close()


def _reconcile(stack: Stack, load: Load) -> None:
    """Every acknowledged write stored once, embedded once and classified once; no text stored twice; every
    refusal a problem+json 503 with Retry-After; the gateway itself always answered."""
    assert not load.transport_errors, load.transport_errors[:5]
    wrong = [r for r in load.refusals if not (r.status == 503 and r.retry_after and r.problem)]
    # the services' own account of a wrong answer (their log lines), so a failure here says what broke
    if wrong:
        print("\n".join(line for line in stack.output if "ERROR" in line or "Error" in line or "error" in line))
    assert not wrong, wrong[:5]
    ids = list(load.acknowledged)
    eventually_blocking(lambda: _all_done(stack, ids), timeout=240, message=f"every stage done for all {len(ids)}")
    url = stack.info()["database_url"]
    assert asyncio.run(_once_each(url, ids)) == {
        "stored": len(ids),
        "vectors_not_once": 0,
        "receipts_not_once": 0,
        "embedded_events_not_once": 0,
        "classified_events_not_once": 0,
    }
    assert asyncio.run(_duplicated_texts(url, load.tag)) == 0


def _more_acknowledged(load: Load, count: int, message: str) -> None:
    target = load.acked() + count
    eventually_blocking(lambda: load.acked() >= target, timeout=120, message=message)


def _postmaster(stack: Stack) -> psutil.Process:
    assert stack.process
    return next(p for p in stack.children() if p.name() == "postgres" and p.ppid() == stack.process.pid)


SERVICES = ("gateway", "ingest", "recall", "embedder", "classifier", "conflicts", "promotion")


def test_a_postgres_restart_under_load_refuses_with_503_and_loses_nothing(faulty: Stack) -> None:
    services = {name: faulty.service_pid(name) for name in SERVICES}
    postmaster = _postmaster(faulty)
    load = Load(faulty.url, faulty.dev_key, uuid.uuid4().hex[:6]).start()
    try:
        _more_acknowledged(load, 20, "20 writes before the restart")
        postmaster.send_signal(signal.SIGINT)  # fast shutdown: every session ends; the supervisor starts it again
        # a backend may end between the listing of the children and the reading of its name: look again
        eventually_blocking(
            lambda: _postmaster(faulty).pid != postmaster.pid,
            timeout=60,
            ignoring=(StopIteration, psutil.NoSuchProcess),
        )
        _more_acknowledged(load, 40, "40 writes after the restart, with no service restarted")
    finally:
        load.stop()
    print(f"postgres restart: {load.acked()} acknowledged, refused {dict(load.statuses())}, {load.reads_ok} reads")
    _reconcile(faulty, load)
    assert load.reads_ok > 0
    assert {name: faulty.service_pid(name) for name in SERVICES} == services  # recovered by themselves


def test_writes_accepted_while_nats_is_paused_or_killed_are_all_delivered(faulty: Stack) -> None:
    nats = next(p for p in faulty.children() if p.name() == "nats-server")
    services = {name: faulty.service_pid(name) for name in SERVICES}
    load = Load(faulty.url, faulty.dev_key, uuid.uuid4().hex[:6]).start()
    try:
        _more_acknowledged(load, 10, "10 writes before NATS is paused")
        nats.send_signal(signal.SIGSTOP)  # unresponsive: publishes time out, nothing is acknowledged
        try:
            _more_acknowledged(load, 20, "20 writes while NATS is paused")
        finally:
            nats.send_signal(signal.SIGCONT)
        nats.send_signal(signal.SIGKILL)  # gone: the supervisor starts it again on the same port and store
        _more_acknowledged(load, 20, "20 writes while NATS is killed and restarted")
        eventually_blocking(
            lambda: next(p for p in faulty.children() if p.name() == "nats-server").pid != nats.pid,
            timeout=60,
            ignoring=(StopIteration, psutil.NoSuchProcess),
        )
        _more_acknowledged(load, 20, "20 writes after NATS is back")
    finally:
        load.stop()
    assert load.refusals == []  # writes and reads need only PostgreSQL: the outbox holds the events
    _reconcile(faulty, load)
    assert {name: faulty.service_pid(name) for name in SERVICES} == services


def test_ingest_killed_under_load_refuses_only_with_503_and_duplicates_nothing(faulty: Stack) -> None:
    ingest = faulty.service_pid("ingest")
    load = Load(faulty.url, faulty.dev_key, uuid.uuid4().hex[:6]).start()
    try:
        _more_acknowledged(load, 20, "20 writes before ingest is killed")
        os.kill(ingest, signal.SIGKILL)  # mid-request: the gateway retries a plain remember until it is back
        eventually_blocking(lambda: faulty.service_pid("ingest") != ingest, timeout=60, ignoring=(AssertionError,))
        _more_acknowledged(load, 40, "40 writes after ingest is back")
    finally:
        load.stop()
    print(f"ingest kill -9: {load.acked()} acknowledged, refused {dict(load.statuses())}")
    _reconcile(faulty, load)
