"""The rules of the internal surfaces that settings alone decide: gRPC beyond loopback only with the internal
token, one NATS identity per process, and an inbox kept longer than the stream keeps events."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.config import Settings, SettingsError, is_loopback
from engram.events.connection import broker_security, credentials

BASE = {"database_url": "postgresql://db/engram", "nats_url": "nats://127.0.0.1:4222"}
WIDE = ["0.0.0.0:50051", "[::]:50051", "engram-ingest:50051", "10.1.2.3:50051", "192.168.0.7:1"]
LOOPBACK = ["127.0.0.1:50051", "127.8.9.10:1", "localhost:50051", "[::1]:50051"]


@pytest.mark.parametrize("address", WIDE)
@pytest.mark.parametrize("role", ["ingest", "recall"])
def test_a_grpc_service_refuses_a_wide_address_without_the_internal_token(role: str, address: str) -> None:
    settings = Settings(**BASE, ingest_addr=address, recall_addr=address)  # type: ignore[arg-type]
    with pytest.raises(SettingsError) as refused:
        settings.require_for(role)
    assert refused.value.field == "internal_token"
    assert "ENGRAM_INTERNAL_TOKEN" in refused.value.detail and address in refused.value.detail
    # the positive control: the same address with a token starts
    settings.model_copy(update={"internal_token": "t0ken"}).require_for(role)


@pytest.mark.parametrize("address", LOOPBACK)
@pytest.mark.parametrize("role", ["ingest", "recall"])
def test_loopback_needs_no_token(role: str, address: str) -> None:
    Settings(**BASE, ingest_addr=address, recall_addr=address).require_for(role)  # type: ignore[arg-type]


def test_only_the_serving_roles_look_at_the_bind_address() -> None:
    """The gateway dials ingest and recall by name; it binds neither."""
    Settings(**BASE, ingest_addr="engram-ingest:50051", recall_addr="engram-recall:50052").require_for("gateway")  # type: ignore[arg-type]


def test_loopback_is_read_from_the_host_part() -> None:
    assert all(is_loopback(a) for a in LOOPBACK)
    assert not any(is_loopback(a) for a in WIDE)


def test_the_nats_identity_becomes_connection_options(tmp_path: Path) -> None:
    assert credentials(Settings()) == {} and broker_security(Settings()) is None
    assert credentials(Settings(nats_user="ingest", nats_password="pw")) == {"user": "ingest", "password": "pw"}
    seed, creds = tmp_path / "u.nk", tmp_path / "u.creds"
    assert credentials(Settings(nats_nkey_seed=seed)) == {"nkeys_seed": str(seed)}
    assert credentials(Settings(nats_creds=creds)) == {"user_credentials": str(creds)}


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"nats_user": "ingest"}, "nats_password"),
        ({"nats_user": "ingest", "nats_password": "pw", "nats_creds": "/x.creds"}, "nats_creds"),
        ({"nats_creds": "/x.creds", "nats_nkey_seed": "/x.nk"}, "nats_creds"),
    ],
)
def test_nats_credentials_must_be_whole_and_one(given: dict[str, str], field: str) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings(**BASE, **given).require_for("embedder")  # type: ignore[arg-type]
    assert refused.value.field == field


def test_inbox_rows_outlive_the_events_the_stream_may_redeliver() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings(**BASE, events_max_age_days=30, inbox_retention_days=30).require_for("ingest")  # type: ignore[arg-type]
    assert refused.value.field == "inbox_retention_days" and "ENGRAM_EVENTS_MAX_AGE_DAYS" in refused.value.detail
    Settings(**BASE, events_max_age_days=30, inbox_retention_days=31).require_for("ingest")  # type: ignore[arg-type]
