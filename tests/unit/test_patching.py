"""The pure rules of a metadata patch, an observation's expiry and the Idempotency-Key format."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from engram.domain import patching, ttl
from engram.domain.models import MemoryItem
from engram.domain.validation import validate_idempotency_key
from engram.errors import ValidationFailed

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _item(**fields: object) -> MemoryItem:
    base: dict[str, object] = {
        "id": uuid.uuid4(),
        "tenant_id": uuid.uuid4(),
        "workspace_id": uuid.uuid4(),
        "principal_id": uuid.uuid4(),
        "content": "c",
        "content_hash": b"h",
        "kind": "fact",
        "importance": 0.30000001192092896,  # 0.3 read back from a real column
        "review_status": "active",
        "authority": 50,
        "source_type": "explicit",
        "source_trust": 1.0,
        "memory_confidence": 0.7,
        "created_at": NOW,
    }
    return MemoryItem(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        (["content"], "content", "supersede the memory instead"),
        (["tags", "content"], "content", "supersede"),
        (["kind"], "kind", "cannot be patched"),
        ([], "body", "at least one field"),
    ],
)
def test_only_metadata_fields_may_be_named(fields: list[str], field: str, message: str) -> None:
    with pytest.raises(ValidationFailed, match=message) as refused:
        patching.check_fields(fields)
    assert refused.value.field == field


def test_every_patchable_field_is_accepted_once() -> None:
    names = ["tags", "importance", "pinned", "visibility", "subject", "valid_to", "tags"]
    assert [str(f) for f in patching.check_fields(names)] == names[:-1]


def test_changes_hold_only_what_differs_and_reals_compare_by_value() -> None:
    item = _item(tags=["a"], subject="s")
    wanted = {"importance": 0.3, "tags": ["a", "b"], "subject": "s", "pinned": False}
    assert patching.changes(item, wanted) == {"tags": (["a"], ["a", "b"])}


@pytest.mark.parametrize(
    ("old", "new", "wider"),
    [
        ("private", "workspace", True),
        ("workspace", "public", True),
        ("tenant", "workspace", False),
        ("tenant", "tenant", False),
    ],
)
def test_widening_is_a_move_to_a_larger_audience(old: str, new: str, wider: bool) -> None:
    assert patching.widens(old, new) is wider


def test_an_observation_expires_after_the_given_hours_unless_it_says_otherwise() -> None:
    assert ttl.observation_expiry(tags=[], requested=None, now=NOW, hours=72) == NOW + timedelta(hours=72)
    later = NOW + timedelta(days=9)
    assert ttl.observation_expiry(tags=[], requested=later, now=NOW, hours=72) == later
    assert ttl.observation_expiry(tags=["permanent"], requested=None, now=NOW, hours=72) is None
    for tags, requested in (([], NOW), (["permanent"], later)):
        with pytest.raises(ValidationFailed) as refused:
            ttl.observation_expiry(tags=tags, requested=requested, now=NOW, hours=72)
        assert refused.value.field == "expires_at"


@pytest.mark.parametrize("key", ["", "x" * 201, "clé", "line\nbreak", "\x7f"])
def test_a_malformed_idempotency_key_is_refused(key: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        validate_idempotency_key(key)
    assert refused.value.field == "Idempotency-Key"


def test_a_printable_idempotency_key_is_accepted() -> None:
    validate_idempotency_key("a" * 200)
    validate_idempotency_key("order 42: retry ~1")
