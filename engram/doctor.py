"""``engram doctor``: one command that says whether a deployment is healthy, one line per check.

It reads the same ``ENGRAM_*`` settings as the services (the owner ``ENGRAM_DATABASE_URL``, ``ENGRAM_NATS_URL``,
the embedding settings), or the running ``engram up`` stack's ``stack.json`` when no URLs are set, and checks:
the database is reachable, pgvector is installed, every migration this version ships is applied (and none
unknown to it), the outbox is draining, the event stream and every durable consumer exist, each on the event
it should take (with their lag), no event is dead-lettered, the embedding provider answers with the configured
dimension, and each service it was told about (the gateway's ``/ready`` and the processes' ``/ready`` probes)
is ready.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from functools import partial

import asyncpg
import httpx
from nats.js.errors import NotFoundError

from engram.config import Settings
from engram.db import health, outbox
from engram.db.migrate import load_migrations
from engram.embeddings.provider import create_provider
from engram.events import connection
from engram.events.durables import durable_events
from engram.events.envelope import filter_for, filters_only
from engram.events.stream import deadletter_stream

TIMEOUT_S = 5.0
MAX_OUTBOX_AGE_S = 300.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass
class Targets:
    """Where the deployment's parts are."""

    database_url: str | None = None
    nats_url: str | None = None
    probes: dict[str, str] = field(default_factory=dict)  # service → its readiness URL

    @classmethod
    def find(cls, settings: Settings, gateway: str | None = None, probes: dict[str, str] | None = None) -> Targets:
        """From the settings, else from the ``engram up`` stack running in ``ENGRAM_HOME``; flags win."""
        targets = cls(settings.database_url, settings.nats_url)
        stack_file = settings.home.expanduser() / "stack.json"
        if not (targets.database_url and targets.nats_url) and stack_file.exists():
            stack = json.loads(stack_file.read_text())
            targets.database_url = targets.database_url or stack["database_url"]
            targets.nats_url = targets.nats_url or stack["nats_url"]
            for name, url in stack.get("metrics", {}).items():
                targets.probes[name] = url.removesuffix("/metrics") + "/ready"
        if gateway:
            targets.probes["gateway"] = gateway.rstrip("/") + "/ready"
        targets.probes.update(probes or {})
        return targets


async def run(settings: Settings, targets: Targets) -> list[Check]:
    checks = await _database(targets.database_url)
    checks += await _events(settings, targets.nats_url)
    checks.append(await _guard("embedding", lambda: _embedding(settings)))
    for name, url in sorted(targets.probes.items()):
        checks.append(await _guard(f"ready {name}", partial(_ready, url)))
    return checks


async def _guard(name: str, check: Callable[[], Awaitable[tuple[bool, str]]]) -> Check:
    try:
        ok, detail = await asyncio.wait_for(check(), TIMEOUT_S * 6)
    except Exception as exc:
        return Check(name, False, f"{type(exc).__name__}: {exc}".strip(": "))
    return Check(name, ok, detail)


async def _database(url: str | None) -> list[Check]:
    if not url:
        return [Check("database", False, "no database URL: set ENGRAM_DATABASE_URL (the owner URL)")]
    try:
        conn = await asyncpg.connect(url, timeout=TIMEOUT_S)
    except Exception as exc:
        return [Check("database", False, f"unreachable: {type(exc).__name__}: {exc}")]
    try:
        checks = [Check("database", True, f"reachable, PostgreSQL {await health.server_version(conn)}")]
        vector = await health.pgvector_version(conn)
        checks.append(Check("pgvector", vector is not None, f"version {vector}" if vector else "not installed"))
        checks.append(_migrations(await health.applied_migrations(conn)))
        if checks[-1].ok:
            unsent, age_s = await outbox.backlog(conn)
            checks.append(
                Check(
                    "outbox",
                    age_s <= MAX_OUTBOX_AGE_S,
                    f"{unsent} unsent, oldest {age_s:.0f} s"
                    + (" (is the ingest relay running?)" if age_s > 60 else ""),
                )
            )
        return checks
    finally:
        await conn.close()


def _migrations(applied: dict[int, str] | None) -> Check:
    shipped = {m.version: m.name for m in load_migrations()}
    if applied is None:
        return Check("migrations", False, "never applied: run `engram migrate`")
    pending = [name for version, name in sorted(shipped.items()) if version not in applied]
    unknown = [name for version, name in sorted(applied.items()) if version not in shipped]
    if pending:
        return Check("migrations", False, f"pending: {', '.join(pending)} (run `engram migrate`)")
    if unknown:
        return Check(
            "migrations", False, f"the database has migrations this version does not ship: {', '.join(unknown)}"
        )
    return Check("migrations", True, f"current ({len(applied)} applied)")


async def _events(settings: Settings, url: str | None) -> list[Check]:
    if not url:
        return [Check("nats", False, "no NATS URL: set ENGRAM_NATS_URL")]
    try:
        nc = await asyncio.wait_for(
            connection.connect(
                settings.model_copy(update={"nats_url": url}),
                connect_timeout=TIMEOUT_S,
                max_reconnect_attempts=1,
                allow_reconnect=False,
                error_cb=_quiet,
            ),
            TIMEOUT_S * 2,
        )
    except Exception as exc:
        return [Check("nats", False, f"unreachable: {type(exc).__name__}: {exc}")]
    try:
        js = nc.jetstream(timeout=TIMEOUT_S)
        checks = [Check("nats", True, f"reachable, server {nc.connected_server_version}")]
        try:
            stream = await js.stream_info(settings.events_stream)
        except NotFoundError:
            return [*checks, Check("stream", False, f"{settings.events_stream} missing (does ingest run?)")]
        checks.append(Check("stream", True, f"{settings.events_stream}: {stream.state.messages} events"))
        for durable, event in durable_events().items():
            try:
                info = await js.consumer_info(settings.events_stream, durable)
            except NotFoundError:
                checks.append(Check(f"consumer {durable}", False, "missing (has its service started?)"))
                continue
            wanted = filter_for(settings.events_subject_prefix, event)
            if not filters_only(info.config.filter_subject, info.config.filter_subjects, wanted):
                # an upgrade moved it to another event; its service moves it when it starts
                found = info.config.filter_subject or info.config.filter_subjects or "everything"
                detail = f"takes {found}, expected {wanted} (restart its service to move it)"
                checks.append(Check(f"consumer {durable}", False, detail))
                continue
            lag = f"{info.num_pending or 0} pending, {info.num_ack_pending or 0} unacknowledged"
            checks.append(Check(f"consumer {durable}", True, lag))
        try:
            dead = (await js.stream_info(deadletter_stream(settings))).state.messages
        except NotFoundError:
            dead = 0
        checks.append(
            Check("dead letters", dead == 0, f"{dead} dead-lettered events" + (" (see docs/events.md)" if dead else ""))
        )
        return checks
    finally:
        await nc.close()


async def _quiet(exc: Exception) -> None:
    """nats-py logs every failed connection attempt with a traceback; the check reports the failure once."""


async def _embedding(settings: Settings) -> tuple[bool, str]:
    provider = create_provider(settings)
    try:
        vector = await provider.embed_query("engram doctor")
    finally:
        await provider.close()
    expected = settings.embedding_dimensions
    return (
        len(vector) == expected,
        f"{settings.embedding_provider} {settings.embedding_model}: {len(vector)} dimensions (expected {expected})",
    )


async def _ready(url: str) -> tuple[bool, str]:
    async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
        response = await client.get(url)
    if response.status_code == 200:
        return True, url
    return False, f"{url} answered {response.status_code}: {response.text[:300]}"


def report(checks: list[Check], as_json: bool) -> str:
    if as_json:
        return json.dumps({"ok": all(c.ok for c in checks), "checks": [asdict(c) for c in checks]}, indent=2)
    width = max(len(c.name) for c in checks)
    return "\n".join(f"{'ok  ' if c.ok else 'FAIL'}  {c.name:<{width}}  {c.detail}" for c in checks)


def main(settings: Settings, gateway: str | None, probes: dict[str, str], as_json: bool) -> int:
    checks = asyncio.run(run(settings, Targets.find(settings, gateway, probes)))
    print(report(checks, as_json))
    return 0 if all(c.ok for c in checks) else 1
