"""Time to live: the kind × importance matrix, protections and tenant overrides."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram.domain import ttl
from engram.errors import ValidationFailed

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("kind", "importance", "days"),
    [
        ("observation", 0.0, 30),
        ("observation", 0.39, 30),
        ("observation", 0.4, 90),
        ("observation", 0.79, 90),
        ("observation", 0.8, None),
        ("diary_entry", 0.3, 90),
        ("diary_entry", 0.5, 365),
        ("summary", 0.2, 180),
        ("summary", 0.6, 730),
        ("fact", 0.1, None),
        ("invariant", 0.1, None),
        ("decision", 0.5, None),
        ("preference", 0.3, None),
        ("doctrine", 0.3, None),
        ("procedure", 0.3, None),
        ("meeting_note", 0.3, None),
    ],
)
def test_the_default_matrix(kind: str, importance: float, days: int | None) -> None:
    expected = NOW + timedelta(days=days) if days else None
    assert ttl.expiry(kind=kind, importance=importance, pinned=False, tags=[], requested=None, now=NOW) == expected


@pytest.mark.parametrize(
    ("pinned", "importance", "tags", "why"),
    [
        (True, 0.1, [], "pinned"),
        (False, 0.8, [], "importance ≥ 0.8"),
        (False, 0.95, ["x"], "importance ≥ 0.8"),
        (False, 0.1, ["ops", "permanent"], "tagged permanent"),
        (False, 0.1, ["Permanent"], None),
        (False, 0.79, ["perm"], None),
    ],
)
def test_protection(pinned: bool, importance: float, tags: list[str], why: str | None) -> None:
    assert ttl.protection(pinned, importance, tags) == why
    got = ttl.expiry(kind="observation", importance=importance, pinned=pinned, tags=tags, requested=None, now=NOW)
    assert (got is None) == (why is not None)


def test_a_requested_expiry_is_kept_unless_protected_or_past() -> None:
    later = NOW + timedelta(hours=5)
    assert ttl.expiry(kind="fact", importance=0.5, pinned=False, tags=[], requested=later, now=NOW) == later
    for pinned, tags in ((True, []), (False, ["permanent"])):
        with pytest.raises(ValidationFailed) as refused:
            ttl.expiry(kind="fact", importance=0.5, pinned=pinned, tags=tags, requested=later, now=NOW)
        assert refused.value.field == "expires_at" and "protected" in refused.value.detail
    with pytest.raises(ValidationFailed, match="future"):
        ttl.expiry(kind="fact", importance=0.5, pinned=False, tags=[], requested=NOW, now=NOW)


def test_tenant_overrides_lay_over_the_defaults() -> None:
    overrides = ttl.parse_overrides({"observation": {"low": 2}, "fact": {"medium": 10, "low": None}})

    def get(kind: str, imp: float) -> datetime | None:
        return ttl.expiry(
            kind=kind, importance=imp, pinned=False, tags=[], requested=None, now=NOW, overrides=overrides
        )

    assert get("observation", 0.1) == NOW + timedelta(days=2)
    assert get("observation", 0.5) == NOW + timedelta(days=90)  # the other cell keeps its default
    assert get("fact", 0.5) == NOW + timedelta(days=10)
    assert get("fact", 0.1) is None
    assert ttl.overlay({"fact": {"low": 3, "medium": 4}}, {"fact": {"low": 5}}) == {"fact": {"low": 5, "medium": 4}}


@pytest.mark.parametrize(
    "raw",
    [
        [],
        {"observation": 5},
        {"observation": {}},
        {"observation": {"high": 1}},
        {"observation": {"low": 0}},
        {"observation": {"low": 36_501}},
        {"observation": {"low": "7"}},
        {"observation": {"low": True}},
        {"observation": {"low": 1.5}},
    ],
)
def test_bad_overrides_are_refused_naming_the_field(raw: object) -> None:
    with pytest.raises(ValidationFailed) as refused:
        ttl.parse_overrides(raw)
    assert refused.value.field == "ttl_days"
