"""examples/subscriber.py against the real JetStream: it hands real ``memory.created`` events (written by a
real remember) to its handler, acknowledges them, has a failed one redelivered, and resumes after a restart
with what was published meanwhile, without seeing an acknowledged event again. And the per-tenant NATS
permissions docs/events.md documents, run as written on a real nats-server."""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import asyncpg
import httpx
import nats
import nats.errors
import pytest
from engram_client import AsyncEngramClient
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.runtime.nats import EmbeddedNats
from tests.support.keys import KeyMaker
from tests.support.outbox import outbox_envelopes
from tests.support.scripts import load_script

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subscriber.py"
RUN_TIMEOUT_S = 30.0


def _example() -> ModuleType:
    return load_script(EXAMPLE, "subscriber_example")


async def _publish_created(
    client: AsyncEngramClient, js: JetStreamContext, owner_pool: asyncpg.Pool, settings: Settings, content: str
) -> dict[str, Any]:
    """Remember ``content`` and publish its real outbox envelope to this test's stream, as the relay would."""
    item_id = (await client.remember(content)).id
    [envelope] = await outbox_envelopes(owner_pool, types=["memory.created"], subjects=[item_id])
    subject = f"{settings.events_subject_prefix}.{envelope['tenantid']}.memory.created"
    await js.publish(subject, json.dumps(envelope).encode(), headers={"Nats-Msg-Id": envelope["id"]})
    return envelope


async def test_the_example_subscriber_acks_retries_and_resumes(
    js: JetStreamContext,
    settings: Settings,
    gateway: httpx.AsyncClient,
    make_key: KeyMaker,
    tenant: CallerContext,
    owner_pool: asyncpg.Pool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    example = _example()
    monkeypatch.setattr(example, "RETRY_DELAY_S", 0.2)
    client = AsyncEngramClient(api_key=(await make_key(tenant)).removeprefix("Bearer "), http_client=gateway)
    assert settings.nats_url
    first = await _publish_created(client, js, owner_pool, settings, "The subscriber example sees this one.")

    await example.handle(first)  # the example's own handler, with the real event
    assert first["data"]["item_id"] in capsys.readouterr().out

    handled: list[str] = []
    failures = [RuntimeError("index offline")]  # the first delivery fails once

    async def consume(expected: int) -> None:
        stop = asyncio.Event()

        async def handler(event: dict[str, Any]) -> None:
            if failures:
                raise failures.pop()
            handled.append(event["subject"])
            if len(handled) == expected:
                stop.set()

        run = example.run(
            settings.nats_url,
            durable="example-indexer",
            stream=settings.events_stream,
            prefix=settings.events_subject_prefix,
            handler=handler,
            stop=stop,
        )
        await asyncio.wait_for(run, RUN_TIMEOUT_S)

    await consume(expected=1)
    assert handled == [first["subject"]] and not failures  # failed once, redelivered, then handled
    info = await js.consumer_info(settings.events_stream, "example-indexer")
    assert (info.num_ack_pending, info.num_pending) == (0, 0)

    second = await _publish_created(client, js, owner_pool, settings, "Published while the subscriber was down.")
    await consume(expected=2)  # a restart: the acknowledged first event is not seen again
    assert handled == [first["subject"], second["subject"]]


EVENTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"


def _doc_block(language: str) -> str:
    section = EVENTS_DOC.read_text().split("### Per-tenant permissions", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.DOTALL)[0]


class ConfiguredNats(EmbeddedNats):
    """The embedded NATS server, also reading a configuration file (accounts, users, permissions)."""

    def __init__(self, store_dir: Path, config: Path) -> None:
        super().__init__(store_dir)
        self.config = config

    def command(self) -> list[str]:
        return [*super().command(), "-c", str(self.config)]


def _envelope(tenant: str) -> dict[str, Any]:
    item = str(uuid.uuid4())
    return {
        "specversion": "1.0",
        "id": str(uuid.uuid4()),
        "source": "engram",
        "type": "engram.memory.created",
        "subject": item,
        "time": "2026-12-01T10:00:00+00:00",
        "tenantid": tenant,
        "data": {"item_id": item, "kind": "fact", "review_status": "active", "visibility": "workspace"},
    }


async def test_the_documented_per_tenant_permissions_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/events.md's nats-server configuration and consumer, as written: the tenant's user receives its
    tenant's events through its consumer and acknowledges them; everything else is refused."""
    example = _example()
    (tmp_path / "nats.conf").write_text(_doc_block("conf"))
    monkeypatch.setenv("ENGRAM_NATS_PASSWORD", "engram-password")
    monkeypatch.setenv("ACME_NATS_PASSWORD", "acme-password")
    server = ConfiguredNats(tmp_path / "js", tmp_path / "nats.conf")
    await asyncio.to_thread(server.start)
    try:
        host_port = server.url.removeprefix("nats://")
        operator = await nats.connect(f"nats://engram:engram-password@{host_port}")
        js = operator.jetstream()
        await js.add_stream(StreamConfig(name="ENGRAM_EVENTS", subjects=["engram.events.>"]))
        namespace: dict[str, Any] = {"ConsumerConfig": ConsumerConfig, "AckPolicy": AckPolicy}
        exec("async def provision(js):\n" + textwrap.indent(_doc_block("python"), "    "), namespace)
        await namespace["provision"](js)
        [acme] = re.findall(r"engram\.events\.([0-9a-f-]{36})\.>", _doc_block("python"))
        other = str(uuid.uuid4())
        for tenant in (other, acme, other):
            await js.publish(f"engram.events.{tenant}.memory.created", json.dumps(_envelope(tenant)).encode())

        seen: list[str] = []
        stop = asyncio.Event()

        async def handler(event: dict[str, Any]) -> None:
            seen.append(event["tenantid"])
            stop.set()

        acme_url = f"nats://acme:acme-password@{host_port}"
        run = example.run(
            acme_url, durable="acme-indexer", tenant=acme, inbox_prefix="_INBOX_acme", handler=handler, stop=stop
        )
        await asyncio.wait_for(run, RUN_TIMEOUT_S)
        assert seen == [acme]  # positive control: the tenant's own event, through its consumer
        info = await js.consumer_info("ENGRAM_EVENTS", "acme-indexer")
        assert (info.num_pending, info.num_ack_pending) == (0, 0)

        refused: list[str] = []

        async def on_error(error: Exception) -> None:
            refused.append(str(error))

        tenant_nc = await nats.connect(acme_url, inbox_prefix="_INBOX_acme", error_cb=on_error)
        tenant_js = tenant_nc.jetstream(timeout=1)
        with pytest.raises(nats.errors.TimeoutError):
            await tenant_js.add_consumer(
                "ENGRAM_EVENTS", ConsumerConfig(durable_name="sneaky", filter_subject=f"engram.events.{other}.>")
            )
        with pytest.raises(nats.errors.TimeoutError):
            await tenant_js.get_msg("ENGRAM_EVENTS", 1)
        await tenant_nc.subscribe(f"engram.events.{other}.>")
        await tenant_nc.subscribe("_INBOX.>")
        await tenant_nc.flush()
        await asyncio.sleep(0.5)  # the server reports violations asynchronously
        await tenant_nc.close()
        await operator.close()
        for subject in (
            "$js.api.consumer.durable.create.engram_events.sneaky",
            "$js.api.stream.msg.get.engram_events",
            f'subscription to "engram.events.{other}.>"',
            'subscription to "_inbox.>"',
        ):
            assert any(subject.lower() in r.lower() for r in refused), (subject, refused)
    finally:
        await asyncio.to_thread(server.stop)
