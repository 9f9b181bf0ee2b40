"""NATS with authorization on (a real nats-server given a configuration of users and permissions): a connection
without credentials is refused, each of Engram's connections (relay, consumers' broker, gateway readiness,
doctor) gets in with the identity its settings give, and a service's permissions bound what it may do."""

from __future__ import annotations

import asyncio
import os
import secrets
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import nats.errors
import nkeys
import pytest
import pytest_asyncio

from engram import doctor
from engram.config import Settings
from engram.domain.models import CallerContext
from engram.events import connection
from engram.events.stream import ensure_streams
from engram.runtime.nats import EmbeddedNats
from services.gateway.clients import Downstream
from services.ingest.app import run_relay
from services.ingest.service import IngestService, RememberCommand
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(120)

INGEST_PASSWORD = secrets.token_urlsafe(12)
GATEWAY_PASSWORD = secrets.token_urlsafe(12)
WORKER_SEED = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()


def _config() -> str:
    """ingest may do anything; the gateway may only ask for stream information; a consumer signs in with an
    nkey. Nobody gets in anonymously."""
    worker_key = nkeys.from_seed(WORKER_SEED.encode()).public_key.decode()
    return f"""
authorization {{
  users = [
    {{ user: ingest, password: "{INGEST_PASSWORD}" }}
    {{ user: gateway, password: "{GATEWAY_PASSWORD}",
       permissions: {{ publish: {{ allow: ["$JS.API.STREAM.INFO.>"] }}, subscribe: {{ allow: ["_INBOX.>"] }} }} }}
    {{ nkey: {worker_key} }}
  ]
}}
"""


@pytest.fixture(scope="module")
def guarded_nats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("nats-auth")
    config = home / "auth.conf"
    config.write_text(_config())
    server = EmbeddedNats(home / "store", config=config)
    url = server.start()
    try:
        yield url
    finally:
        server.stop()


@pytest.fixture
def seed_file(tmp_path: Path) -> Path:
    path = tmp_path / "worker.nk"
    path.write_text(WORKER_SEED)
    return path


@pytest_asyncio.fixture
async def on_guarded(settings: Settings, guarded_nats: str) -> AsyncIterator[Settings]:
    """This test's settings on the guarded server, as ingest (the streams exist)."""
    as_ingest = settings.model_copy(
        update={"nats_url": guarded_nats, "nats_user": "ingest", "nats_password": INGEST_PASSWORD}
    )
    nc = await connection.connect(as_ingest)
    try:
        await ensure_streams(nc.jetstream(), as_ingest)
        yield as_ingest
    finally:
        await nc.jetstream().delete_stream(as_ingest.events_stream)
        await nc.close()


def _anonymous(settings: Settings) -> Settings:
    return settings.model_copy(update={"nats_user": None, "nats_password": None})


async def test_without_credentials_the_connection_is_refused_with_them_it_is_accepted(
    on_guarded: Settings, seed_file: Path
) -> None:
    with pytest.raises((nats.errors.Error, OSError)):
        await connection.connect(_anonymous(on_guarded), allow_reconnect=False, connect_timeout=2)
    for identity in (on_guarded, _anonymous(on_guarded).model_copy(update={"nats_nkey_seed": seed_file})):
        nc = await connection.connect(identity, allow_reconnect=False, connect_timeout=2)
        assert nc.is_connected
        await nc.close()


async def test_the_consumers_broker_signs_in_with_the_configured_identity(
    on_guarded: Settings, seed_file: Path
) -> None:
    """(The server's refusal of an anonymous client is the test above; a refused faststream broker leaves its
    socket open, which this suite's warnings-as-errors would report against the next test.)"""
    worker = connection.broker(_anonymous(on_guarded).model_copy(update={"nats_nkey_seed": seed_file}))
    try:
        await worker.connect()
        info = await worker.config.connection_state.stream.stream_info(on_guarded.events_stream)
        assert info.config.name == on_guarded.events_stream
    finally:
        await worker.stop()


async def test_the_relay_publishes_with_credentials(
    app_pool: asyncpg.Pool, on_guarded: Settings, tenant: CallerContext
) -> None:
    await IngestService(app_pool, on_guarded).remember(tenant, RememberCommand(content="Standup moved to 9:30."))
    stop = asyncio.Event()
    relay = asyncio.create_task(run_relay(on_guarded, app_pool, stop))
    nc = await connection.connect(on_guarded)
    try:
        js = nc.jetstream()

        async def published() -> bool:
            return (await js.stream_info(on_guarded.events_stream)).state.messages >= 1

        await eventually(published, timeout=20)
    finally:
        stop.set()
        await asyncio.wait_for(relay, 10)
        await nc.close()


async def test_gateway_readiness_and_doctor_use_the_credentials(on_guarded: Settings) -> None:
    as_gateway = on_guarded.model_copy(update={"nats_user": "gateway", "nats_password": GATEWAY_PASSWORD})
    for settings, expected in ((_anonymous(on_guarded), "unreachable"), (as_gateway, "ok")):
        downstream = Downstream.connect(settings)
        try:
            assert (await downstream._probe_nats()).startswith(expected)
        finally:
            await downstream.close()
    anonymous = {c.name: c for c in await doctor._events(_anonymous(on_guarded), on_guarded.nats_url)}
    assert not anonymous["nats"].ok
    checks = {c.name: c for c in await doctor._events(on_guarded, on_guarded.nats_url)}
    assert checks["nats"].ok and checks["stream"].ok


async def test_a_service_may_do_only_what_its_permissions_allow(on_guarded: Settings) -> None:
    """The gateway's user reads stream information but cannot publish an event: the server, not Engram, holds
    each service to its part."""
    as_gateway = on_guarded.model_copy(update={"nats_user": "gateway", "nats_password": GATEWAY_PASSWORD})
    nc = await connection.connect(as_gateway, allow_reconnect=False)
    try:
        js = nc.jetstream(timeout=2)
        await js.stream_info(on_guarded.events_stream)  # allowed
        subject = f"{on_guarded.events_subject_prefix}.{uuid.uuid4()}.memory.created"
        with pytest.raises((nats.errors.Error, TimeoutError)):
            await js.publish(subject, b"{}", timeout=2)
    finally:
        await nc.close()
    ingest = await connection.connect(on_guarded)
    try:
        assert (await ingest.jetstream().stream_info(on_guarded.events_stream)).state.messages == 0
    finally:
        await ingest.close()
