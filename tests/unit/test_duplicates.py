"""Recorded duplicates in a ranking take one slot, held by the stronger, which names the others."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from engram.domain.disclosure import HIDDEN
from engram.domain.duplicates import collapse
from engram.domain.models import MemoryItem, RankedItem

NOW = datetime(2026, 12, 1, tzinfo=UTC)
TENANT = uuid.uuid4()


def _hit(score: float, *, authority: int = 50, age_days: int = 0) -> RankedItem:
    item = MemoryItem(
        id=uuid.uuid4(),
        tenant_id=TENANT,
        workspace_id=uuid.uuid4(),
        principal_id=uuid.uuid4(),
        content="c",
        content_hash=b"h",
        kind="fact",
        importance=0.5,
        review_status="active",
        authority=authority,
        source_type="explicit",
        source_trust=1.0,
        memory_confidence=0.7,
        created_at=NOW - timedelta(days=age_days),
    )
    return RankedItem(item=item, score=score, origin="hybrid", reasons=["semantic match"])


def _id(hit: RankedItem) -> str:
    return str(hit.item.id)


def test_the_stronger_of_a_pair_takes_the_better_slot_and_names_the_weaker() -> None:
    weak, other, strong = _hit(0.9, authority=30), _hit(0.8), _hit(0.5, authority=50)
    out = collapse([weak, other, strong], {_id(weak): [_id(strong)], _id(strong): [_id(weak)]}, str(TENANT))
    assert [_id(h) for h in out] == [_id(strong), _id(other)]
    assert out[0].score == 0.9
    assert f"duplicate of {_id(weak)}, shown once: this is the stronger" in out[0].reasons


def test_equals_keep_the_newer_and_a_chain_collapses_into_one_slot() -> None:
    a, b, c = _hit(0.9, age_days=3), _hit(0.8, age_days=1), _hit(0.7, age_days=2)
    links = {_id(a): [_id(b)], _id(b): [_id(a), _id(c)], _id(c): [_id(b)]}
    [kept] = collapse([a, b, c], links, str(TENANT))
    assert kept is b
    assert {r for r in kept.reasons if r.startswith("duplicate of")} == {
        f"duplicate of {_id(a)}, shown once: this is the stronger",
        f"duplicate of {_id(c)}, shown once: this is the stronger",
    }


def test_a_duplicate_outside_the_hits_is_named_only_when_readable() -> None:
    hit, elsewhere = _hit(0.9), str(uuid.uuid4())
    [shown] = collapse([hit], {_id(hit): [elsewhere, ""]}, str(TENANT))
    assert f"duplicate of {elsewhere}" in shown.reasons and f"duplicate of {HIDDEN}" in shown.reasons


def test_without_recorded_duplicates_the_ranking_is_unchanged() -> None:
    ranked = [_hit(0.9), _hit(0.8)]
    assert collapse(ranked, {}, str(TENANT)) == ranked
    assert [h.reasons for h in collapse(ranked, {_id(ranked[0]): []}, str(TENANT))] == [["semantic match"]] * 2
