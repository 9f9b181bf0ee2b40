"""``engram doctor`` against real PostgreSQL, NATS and the embedding model: healthy, then broken on purpose."""

from __future__ import annotations

import uuid

import asyncpg
import nats
import pytest
from nats.js.api import ConsumerConfig

from engram import doctor
from engram.cli import main
from engram.config import Settings
from engram.db.migrate import load_migrations, migrate
from engram.events.durables import all_durables, durable_events
from engram.events.envelope import filter_for
from engram.events.stream import ensure_streams
from engram.runtime.ports import free_port

pytestmark = pytest.mark.timeout(180)


async def _fresh_migrated(owner_pool: asyncpg.Pool, database_url: str) -> str:
    name = f"doctor_{uuid.uuid4().hex[:12]}"
    async with owner_pool.acquire() as conn:
        await conn.execute(f'CREATE DATABASE "{name}"')
    url = database_url.rsplit("/", 1)[0] + f"/{name}"
    await migrate(url, Settings())
    return url


async def _stream_with_consumers(settings: Settings, durables: list[str]) -> None:
    assert settings.nats_url
    nc = await nats.connect(settings.nats_url)
    try:
        js = nc.jetstream()
        await ensure_streams(js, settings)
        for durable in durables:
            subject = filter_for(settings.events_subject_prefix, durable_events()[durable])
            await js.add_consumer(settings.events_stream, ConsumerConfig(durable_name=durable, filter_subject=subject))
    finally:
        await nc.close()


def _by_name(checks: list[doctor.Check]) -> dict[str, doctor.Check]:
    return {check.name: check for check in checks}


async def test_a_healthy_deployment_passes_every_check(
    owner_pool: asyncpg.Pool, migrated: str, settings: Settings
) -> None:
    url = await _fresh_migrated(owner_pool, migrated)
    await _stream_with_consumers(settings, all_durables())
    checks = await doctor.run(settings, doctor.Targets(url, settings.nats_url))
    failing = [check for check in checks if not check.ok]
    assert failing == []
    names = _by_name(checks)
    assert {f"consumer {d}" for d in all_durables()} <= set(names)
    assert names["migrations"].detail == f"current ({len(load_migrations())} applied)"
    assert names["embedding"].detail.endswith("384 dimensions (expected 384)")
    assert names["dead letters"].detail == "0 dead-lettered events"


async def test_a_missing_migration_consumer_and_stopped_service_are_named(
    owner_pool: asyncpg.Pool, migrated: str, settings: Settings
) -> None:
    url = await _fresh_migrated(owner_pool, migrated)
    last = load_migrations()[-1]
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("DELETE FROM schema_migrations WHERE version = $1", last.version)
    finally:
        await conn.close()
    await _stream_with_consumers(settings, [d for d in all_durables() if d != "classifier"])
    nowhere = f"http://127.0.0.1:{free_port()}/ready"
    checks = _by_name(await doctor.run(settings, doctor.Targets(url, settings.nats_url, {"classifier": nowhere})))
    assert not checks["migrations"].ok and checks["migrations"].detail == f"pending: {last.name} (run `engram migrate`)"
    assert not checks["consumer classifier"].ok and checks["consumer classifier"].detail.startswith("missing")
    assert checks["consumer embedder"].ok
    assert not checks["ready classifier"].ok and "ConnectError" in checks["ready classifier"].detail
    assert "outbox" not in checks  # not read from a schema that is behind


async def test_stopped_nats_fails_the_command_with_a_line_naming_it(
    migrated: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_DATABASE_URL", migrated)
    monkeypatch.setenv("ENGRAM_NATS_URL", f"nats://127.0.0.1:{free_port()}")
    code = await _in_thread(lambda: main(["doctor"]))
    out = capsys.readouterr().out
    assert code == 1
    nats_line = next(line for line in out.splitlines() if " nats " in f" {line} ")
    assert nats_line.startswith("FAIL") and "unreachable" in nats_line
    assert any(line.startswith("ok    database") for line in out.splitlines())


async def test_probe_flags_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--probe", "gateway"]) == 1
    assert "--probe must be NAME=URL" in capsys.readouterr().err


async def _in_thread(work: object) -> int:
    import asyncio

    assert callable(work)
    result: int = await asyncio.to_thread(work)
    return result
