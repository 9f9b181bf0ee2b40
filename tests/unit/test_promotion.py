"""Promotion gates: parsing the tenant's settings, and every blocker."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from engram.domain.models import MemoryItem, MemoryKind
from engram.domain.promotion import Facts, Gates, blockers, parse_gates
from engram.errors import ValidationFailed
from engram.events.envelope import Event
from services.promotion.service import items_named

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
FACT = MemoryKind("fact", False, False, True, 0.5, True)
DOCTRINE = MemoryKind("doctrine", False, True, True, 0.8, True)


def _item(**changes: object) -> MemoryItem:
    item = MemoryItem(
        id=uuid.uuid4(),
        tenant_id=uuid.uuid4(),
        workspace_id=uuid.uuid4(),
        principal_id=uuid.uuid4(),
        content="x",
        content_hash=b"x",
        kind="fact",
        importance=0.5,
        review_status="proposed",
        authority=20,
        source_type="agent",
        source_trust=0.5,
        memory_confidence=0.7,
        created_at=NOW - timedelta(hours=1),
        classified_at=NOW,
        taxonomy_confidence=0.7,
        retention="retain",
    )
    return replace(item, **changes)  # type: ignore[arg-type]


def test_a_ready_proposal_has_no_blockers() -> None:
    assert blockers(_item(), FACT, Gates(), Facts(), NOW) == []


@pytest.mark.parametrize(
    ("changes", "kind", "gates", "facts", "code"),
    [
        ({"review_status": "active"}, FACT, Gates(), Facts(), "not_proposed"),
        ({"invalidated_at": NOW}, FACT, Gates(), Facts(), "invalidated"),
        ({"expires_at": NOW}, FACT, Gates(), Facts(), "expired"),
        ({"kind": "doctrine"}, DOCTRINE, Gates(), Facts(), "kind_manual"),
        ({}, FACT, Gates(kinds={"fact": "manual"}), Facts(), "kind_manual"),
        ({"created_at": NOW - timedelta(minutes=9)}, FACT, Gates(), Facts(), "age"),
        ({"memory_confidence": 0.59}, FACT, Gates(), Facts(), "confidence"),
        ({"taxonomy_confidence": 0.4}, FACT, Gates(), Facts(), "confidence"),
        ({"classified_at": None}, FACT, Gates(), Facts(), "unclassified"),
        ({"retention": "noise"}, FACT, Gates(), Facts(), "noise"),
        ({}, FACT, Gates(), Facts(open_conflicts=1), "conflict"),
        ({}, FACT, Gates(), Facts(was_disputed=True), "disputed"),
        ({"subject": "s"}, FACT, Gates(), Facts(slot_holder="holder"), "singleton_slot"),
    ],
)
def test_each_gate_blocks(changes: dict[str, object], kind: MemoryKind, gates: Gates, facts: Facts, code: str) -> None:
    assert [c for c, _ in blockers(_item(**changes), kind, gates, facts, NOW)] == [code]


def test_a_tenant_can_open_a_review_kind_to_promotion_and_lower_the_bars() -> None:
    gates = parse_gates({"min_age_minutes": 0, "min_memory_confidence": 0.5, "kinds": {"doctrine": "auto"}})
    assert blockers(_item(kind="doctrine", created_at=NOW, memory_confidence=0.55), DOCTRINE, gates, Facts(), NOW) == []
    assert parse_gates(None) == Gates()


@pytest.mark.parametrize(
    "raw",
    [
        [],
        {"min_age_minutes": -1},
        {"min_age_minutes": True},
        {"min_memory_confidence": 1.5},
        {"min_taxonomy_confidence": "high"},
        {"kinds": {"fact": "sometimes"}},
        {"kinds": []},
        {"speed": 1},
    ],
)
def test_bad_gates_are_refused_naming_the_field(raw: object) -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_gates(raw)
    assert refused.value.field == "promotion"


def _event(event_type: str, subject: str, **data: object) -> Event:
    return Event(type=f"engram.{event_type}", tenant_id=str(uuid.uuid4()), subject=subject, data=dict(data))


def test_which_items_an_event_may_unblock() -> None:
    assert items_named(_event("memory.classified", "i1")) == ["i1"]
    assert items_named(_event("conflict.resolved", "c1", item_a="a", item_b="b")) == ["a", "b"]
    assert items_named(_event("feedback.recorded", "i2", item_id="i2")) == ["i2"]
    assert items_named(_event("memory.review_changed", "i3", to="proposed", by=None)) == ["i3"]
    assert items_named(_event("memory.review_changed", "i4", to="active")) == []
    assert items_named(_event("memory.review_changed", "i5", to="proposed", by="promotion")) == []
