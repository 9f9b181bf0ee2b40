"""The value sets of engram/domain/values.py agree with the gRPC contracts and the event docs that list them,
and the errors and settings that drive behaviour say what they should."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path

import pytest

from engram.config import ROLE_NEEDS, Settings, SettingsError
from engram.domain.values import (
    BulkAction,
    ConflictStatus,
    ConflictType,
    EdgeType,
    EventType,
    FeedbackVerdict,
    LinkType,
    PipelineStage,
    RecallMode,
    RememberStatus,
    Resolution,
    Retention,
    SearchMode,
    Sensitivity,
    StageStatus,
    TrashReason,
)
from engram.errors import (
    Conflict,
    EngramError,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unavailable,
    ValidationFailed,
    is_retryable,
)

ROOT = Path(__file__).resolve().parents[2]

# (proto file, message, field) → the value set its comment documents
PROTO_FIELDS: list[tuple[str, str, str, type[StrEnum]]] = [
    ("ingest.proto", "BulkRequest", "action", BulkAction),
    ("ingest.proto", "FeedbackRequest", "verdict", FeedbackVerdict),
    ("ingest.proto", "RememberResponse", "status", RememberStatus),
    ("memory.proto", "Conflict", "type", ConflictType),
    ("memory.proto", "Conflict", "status", ConflictStatus),
    ("memory.proto", "Conflict", "resolution", Resolution),
    ("memory.proto", "Edge", "type", EdgeType),
    ("memory.proto", "MemoryItem", "retention", Retention),
    ("memory.proto", "MemoryItem", "sensitivity", Sensitivity),
    ("memory.proto", "RecalledItem", "origin", RecallMode),
    ("recall.proto", "ListConflictsRequest", "status", ConflictStatus),
    ("recall.proto", "TrashEntry", "reason", TrashReason),
    ("recall.proto", "RecallRequest", "mode", RecallMode),
    ("recall.proto", "SearchRequest", "mode", SearchMode),
    ("recall.proto", "Stage", "status", StageStatus),
    ("recall.proto", "Stage", "name", PipelineStage),
]


def _field_comment(proto: str, message: str, field: str) -> str:
    """The comment lines right above ``field`` in ``message``."""
    text = (ROOT / "proto" / "engram" / "v1" / proto).read_text()
    body = re.search(rf"^message {message} \{{\n(.*?)^\}}", text, re.S | re.M)
    assert body, f"no message {message} in {proto}"
    lines = body.group(1).splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(rf"\s*(optional |repeated )?\w+ {field} = \d+;", line))
    comment: list[str] = []
    for line in reversed(lines[:at]):
        if not line.strip().startswith("//"):
            break
        comment.insert(0, line.strip().removeprefix("//").strip())
    return " ".join(comment)


def _words(comment: str) -> set[str]:
    """The words of a comment listing values (``a | b``, ``Lead-in: a, b or c``) up to a ``;``, ``(`` or ``,
    with``."""
    listing = re.split(r";|\(|, with", comment)[0].split(":")[-1]
    return set(re.findall(r"\b[a-z][a-z_]*\b", listing)) - {"or"}


@pytest.mark.parametrize(("proto", "message", "field", "values"), PROTO_FIELDS)
def test_the_proto_documents_the_same_values(proto: str, message: str, field: str, values: type[StrEnum]) -> None:
    comment = _field_comment(proto, message, field)
    words = _words(comment)
    assert words == {v.value for v in values}, comment


def test_every_event_type_is_documented_and_nothing_else_is() -> None:
    text = (ROOT / "docs" / "events.md").read_text()
    types = text.split("## Event types", 1)[1].split("## Delivery guarantees", 1)[0]
    assert re.findall(r"^### `([a-z_]+\.[a-z_]+)`$", types, re.M) == [e.value for e in EventType]


def test_an_event_type_gives_its_subject_suffix_and_cloudevents_type() -> None:
    assert EventType.MEMORY_CREATED == "memory.created"
    assert EventType.MEMORY_CREATED.cloud_type == "engram.memory.created"
    for member in EventType:
        assert EventType.from_cloud_type(member.cloud_type) is member
    assert EventType.from_cloud_type("engram.memory.teleported") is None
    assert EventType.from_cloud_type("memory.created") is None


def test_a_caller_links_with_every_edge_type_but_supersedes() -> None:
    assert [t.value for t in LinkType] == [t.value for t in EdgeType if t is not EdgeType.SUPERSEDES]


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (ValidationFailed("bad", field="x"), False),
        (NotFound("gone"), False),
        (PermissionDenied("no"), False),
        (Conflict("taken"), False),
        (EngramError("bug"), False),
        (SettingsError("unset"), False),
        (Unavailable("down"), True),
        (RateLimited("slow down"), True),
        (ConnectionResetError(), True),  # not an Engram error: worth another try
        (RuntimeError("unknown"), True),
    ],
)
def test_is_retryable_follows_the_flag_and_retries_the_unknown(error: Exception, retryable: bool) -> None:
    assert is_retryable(error) is retryable


FULL = {
    "database_url": "postgresql://db/engram",
    "nats_url": "nats://127.0.0.1:4222",
    "ingest_addr": "127.0.0.1:1",
    "recall_addr": "127.0.0.1:2",
}

# role → the settings it cannot start without (each is missing in turn below)
NEEDED = {
    "gateway": ["database_url", "nats_url", "ingest_addr", "recall_addr"],
    "ingest": ["database_url", "nats_url", "ingest_addr"],
    "recall": ["database_url", "recall_addr"],
    "embedder": ["database_url", "nats_url"],
    "classifier": ["database_url", "nats_url"],
    "conflicts": ["database_url", "nats_url"],
    "promotion": ["database_url", "nats_url"],
}


def test_every_service_role_has_requirements() -> None:
    assert set(ROLE_NEEDS) == set(NEEDED)


@pytest.mark.parametrize("role", sorted(NEEDED))
def test_a_role_starts_with_what_it_needs_and_names_what_is_missing(role: str) -> None:
    Settings(**FULL).require_for(role)  # type: ignore[arg-type]
    for setting in NEEDED[role]:
        settings = Settings(**{**FULL, setting: "" if setting.endswith("addr") else None})  # type: ignore[arg-type]
        with pytest.raises(SettingsError) as refused:
            settings.require_for(role)
        assert refused.value.field == setting
        assert f"ENGRAM_{setting.upper()}" in refused.value.detail and role in refused.value.detail
    for setting in set(FULL) - set(NEEDED[role]):  # what it does not need may be missing
        Settings(**{**FULL, setting: "" if setting.endswith("addr") else None}).require_for(role)  # type: ignore[arg-type]


@pytest.mark.parametrize("role", sorted(NEEDED))
def test_the_app_database_url_alone_is_a_database(role: str) -> None:
    Settings(**{**FULL, "database_url": None, "app_database_url": "postgresql://app@db/engram"}).require_for(role)  # type: ignore[arg-type]


@pytest.mark.parametrize("role", ["recall", "embedder"])
def test_an_openai_embedding_provider_needs_its_endpoint(role: str) -> None:
    settings = Settings(**FULL, embedding_provider="openai")  # type: ignore[arg-type]
    with pytest.raises(SettingsError) as refused:
        settings.require_for(role)
    assert refused.value.field == "embedding_base_url" and "ENGRAM_EMBEDDING_BASE_URL" in refused.value.detail
    Settings(**FULL, embedding_provider="openai", embedding_base_url="http://127.0.0.1:9/v1").require_for(role)  # type: ignore[arg-type]
    Settings(**FULL, embedding_provider="openai").require_for("classifier")  # type: ignore[arg-type]


def test_an_unknown_role_is_refused() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings(**FULL).require_for("scheduler")  # type: ignore[arg-type]
    assert refused.value.field == "role"
