"""Pure rules: canonical content, authority, budgets, scoring, the event envelope."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from engram.domain.authority import Authority, default_source_type, derive_authority, source_trust
from engram.domain.budget import Budgets, estimate_tokens, pack
from engram.domain.content import canonical_text, content_hash
from engram.domain.models import CallerContext, MemoryItem, RankedItem
from engram.domain.scoring import fuse, min_max, recency, startup_score, trust_score
from engram.domain.validation import metadata_bytes, metadata_depth, unrepresentable_number_at, validate_metadata
from engram.errors import ValidationFailed
from engram.events.envelope import Event, filter_for, subject_for

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def make_item(content: str = "x", **overrides: object) -> MemoryItem:
    values: dict[str, object] = dict(
        id=uuid.uuid4(),
        tenant_id=uuid.uuid4(),
        workspace_id=uuid.uuid4(),
        principal_id=uuid.uuid4(),
        content=content,
        content_hash=content_hash(content),
        kind="fact",
        importance=0.5,
        review_status="active",
        authority=50,
        source_type="explicit",
        source_trust=1.0,
        memory_confidence=0.7,
        created_at=NOW,
    )
    values.update(overrides)
    return MemoryItem(**values)  # type: ignore[arg-type]


def test_canonical_text_ignores_case_and_whitespace_but_not_words() -> None:
    assert canonical_text("  Alice\tLIKES \n tea ") == "alice likes tea"
    assert content_hash("Alice likes tea") == content_hash("alice  likes tea ")
    assert content_hash("Alice likes tea") != content_hash("Alice likes coffee")
    assert content_hash("e\u0301") == content_hash("\u00e9")  # NFC


@pytest.mark.parametrize(
    ("source", "principal", "trusted", "expected"),
    [
        ("inferred", "user", False, Authority.INFERRED),
        ("inferred", "agent", True, Authority.INFERRED),
        ("agent", "agent", False, Authority.UNTRUSTED_AGENT),
        ("explicit", "agent", False, Authority.UNTRUSTED_AGENT),  # an agent cannot claim to be a user
        ("explicit", "agent", True, Authority.TRUSTED_AGENT),
        ("import", "agent", True, Authority.TRUSTED_AGENT),
        ("import", "system", False, Authority.TRUSTED_IMPORT),
        ("agent", "user", False, Authority.TRUSTED_AGENT),
        ("explicit", "user", False, Authority.EXPLICIT_USER),
        ("explicit", "admin", False, Authority.EXPLICIT_USER),
    ],
)
def test_authority_table(source: str, principal: str, trusted: bool, expected: Authority) -> None:
    assert derive_authority(source, principal, trusted=trusted) is expected


def test_default_source_type_and_trust_prior() -> None:
    assert default_source_type("agent") == "agent" and default_source_type("user") == "explicit"
    assert source_trust(Authority.INFERRED) == 0.2 and source_trust(Authority.EXPLICIT_USER) == 1.0


def test_budgets_validate_and_pack_in_rank_order() -> None:
    with pytest.raises(ValidationFailed) as caught:
        Budgets.from_request(0, None, None)
    assert caught.value.field == "item_budget"
    with pytest.raises(ValidationFailed):
        Budgets.from_request(None, None, -5)
    ranked = [
        RankedItem(make_item("a" * 40), 0.9, "semantic"),
        RankedItem(make_item("b" * 400), 0.8, "semantic"),
        RankedItem(make_item("c" * 40), 0.7, "semantic"),
    ]
    kept, omitted = pack(ranked, Budgets(items=10, bytes=100, tokens=1000))
    assert [r.item.content[0] for r in kept] == ["a", "c"] and omitted == 1
    kept, omitted = pack(ranked, Budgets(items=1))
    assert len(kept) == 1 and omitted == 2
    kept, _ = pack(ranked, Budgets(tokens=estimate_tokens("a" * 40)))
    assert [r.item.content[0] for r in kept] == ["a"]


def test_startup_score_weights_and_recency() -> None:
    fresh = make_item(importance=1.0, source_trust=1.0, memory_confidence=1.0, human_verified=True)
    assert startup_score(fresh, NOW) == pytest.approx(1.0)
    old = make_item(importance=1.0, source_trust=1.0, memory_confidence=1.0, created_at=NOW - timedelta(days=30))
    assert recency(old.created_at, NOW) == pytest.approx(0.5)
    assert startup_score(old, NOW) == pytest.approx(0.30 + 0.25 + 0.20 + 0.075)


def test_trust_prefers_authority_and_marks_proposals_down() -> None:
    user, inferred = make_item(source_trust=1.0), make_item(source_trust=0.2)
    assert 0.5 <= trust_score(inferred) < trust_score(user) <= 1.0
    assert trust_score(make_item(review_status="proposed")) == pytest.approx(trust_score(user) * 0.85)


def test_fusion_is_a_min_max_weighted_sum() -> None:
    assert min_max({"a": 2.0, "b": 4.0}) == {"a": 0.0, "b": 1.0}
    assert min_max({"a": 3.0}) == {"a": 1.0}
    fused = fuse({"a": 1.0, "b": 0.5}, {"b": 0.9, "c": 0.8}, dense_weight=0.5)
    assert fused == pytest.approx({"a": 0.5, "b": 0.5, "c": 0.0})


def test_envelope_round_trip_and_subjects() -> None:
    event = Event(
        type="engram.memory.created", tenant_id="t1", subject="i1", data={"item_id": "i1"}, traceparent="00-abc-def-01"
    )
    decoded = Event.decode(event.encode())
    assert decoded == event and decoded.entity_action == "memory.created"
    envelope = event.to_json()
    assert envelope["specversion"] == "1.0" and envelope["tenantid"] == "t1" and envelope["source"] == "engram"
    assert subject_for("engram.events", "t1", "memory.created") == "engram.events.t1.memory.created"
    assert filter_for("engram.events", "memory.created") == "engram.events.*.memory.created"
    for garbage in (b'{"id": "x"}', b"5", b'"text"', b"\xff", b"not json"):
        with pytest.raises(ValueError):
            Event.decode(garbage)
    with pytest.raises(ValueError):
        Event.decode({**envelope, "data": [1, 2]})


def test_feedback_moves_importance_once_per_verdict() -> None:
    from engram.domain.feedback import adjusted_importance

    assert adjusted_importance(0.5, "useful", None) == pytest.approx(0.55)
    assert adjusted_importance(0.55, "useful", "useful") == pytest.approx(0.55)  # repeating changes nothing
    assert adjusted_importance(0.55, "noise", "useful") == pytest.approx(0.40)  # undo +0.05, then -0.10
    assert adjusted_importance(0.40, "useful", "noise") == pytest.approx(0.55)
    assert adjusted_importance(0.02, "noise", None) == 0.0 and adjusted_importance(0.99, "useful", None) == 1.0


@pytest.mark.parametrize(("recalls", "factor"), [(0, 1.0), (5, 1.0), (6, 0.97), (10, 0.85), (20, 0.55), (1000, 0.55)])
def test_the_anti_feedback_factor(recalls: int, factor: float) -> None:
    from engram.domain.scoring import feedback_factor

    assert feedback_factor(recalls) == pytest.approx(factor)


@pytest.mark.parametrize(("offset", "lift"), [(1, 0.32), (-1, 0.32), (2, 0.16), (-2, 0.16)])
def test_session_context_lift_halves_with_each_further_place(offset: int, lift: float) -> None:
    from engram.domain.scoring import RecallWeights, context_lift

    assert context_lift(0.8, offset, RecallWeights().session_neighbours) == pytest.approx(lift)
    assert context_lift(0.8, offset, 0.0) == 0.0


@pytest.mark.parametrize(("offset", "lift"), [(1, 0.64), (-1, 0.32), (2, 0.16), (-2, 0.16)])
def test_the_reply_to_a_hit_that_asks_gains_twice_the_lift(offset: int, lift: float) -> None:
    from engram.domain.scoring import RecallWeights, context_lift

    weight = RecallWeights().session_neighbours
    assert context_lift(0.8, offset, weight, hit_asks=True) == pytest.approx(lift)
    assert context_lift(0.8, 1, weight, hit_asks=False) == pytest.approx(0.32)


@pytest.mark.parametrize(
    ("content", "asking"),
    [
        ("Caroline: How did the adoption interview go?", True),
        ('Mel: Did she really say "never again?"', True),
        ("Jon: Was it the blue one (or the red?)  ", True),
        ("Gina: Why? Because it rained.", False),
        ("Maria: Look at this! [image: a photo of a dog]", False),
        ("", False),
    ],
)
def test_a_memory_asks_when_it_ends_with_a_question_mark(content: str, asking: bool) -> None:
    from engram.domain.scoring import asks

    assert asks(content) is asking


def test_session_replies_is_a_switch_on_by_default() -> None:
    from engram.domain.scoring import RecallWeights, parse_recall_weights
    from engram.errors import ValidationFailed

    assert RecallWeights().session_replies is True
    assert parse_recall_weights({"session_replies": False}).as_dict()["session_replies"] is False
    with pytest.raises(ValidationFailed):
        parse_recall_weights({"session_replies": 0})


def test_index_context_and_passage_carry_the_date_and_subject() -> None:
    from datetime import UTC, datetime, timedelta, timezone

    from engram.domain.content import date_words, index_context, passage

    may = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert date_words(may) == "8 May 2023 (Monday)"
    assert date_words(datetime(2023, 5, 8, 1, 0, tzinfo=timezone(timedelta(hours=5)))) == "7 May 2023 (Sunday)"
    assert index_context("bob.drink", may) == "8 May 2023 (Monday) bob drink"
    assert index_context(None, None) == "" and index_context("team/infra", None) == "team infra"
    assert passage("Caroline: hi", may) == "8 May 2023 (Monday): Caroline: hi"
    assert passage("no date", None) == "no date"


def test_mmr_moves_a_near_duplicate_below_a_different_result() -> None:
    import uuid as _uuid
    from datetime import UTC, datetime

    import numpy as np

    from engram.domain.diversity import mmr
    from engram.domain.models import MemoryItem, RankedItem

    def ranked(score: float) -> RankedItem:
        item = MemoryItem(
            id=_uuid.uuid4(),
            tenant_id=_uuid.uuid4(),
            workspace_id=_uuid.uuid4(),
            principal_id=_uuid.uuid4(),
            content="x",
            content_hash=b"x",
            kind="fact",
            importance=0.5,
            review_status="active",
            authority=50,
            source_type="explicit",
            source_trust=1.0,
            memory_confidence=0.7,
            created_at=datetime.now(UTC),
        )
        return RankedItem(item=item, score=score, origin="hybrid", reasons=[])

    first, twin, other = ranked(1.0), ranked(0.95), ranked(0.8)
    vectors = {
        str(first.item.id): np.array([1.0, 0.0]),
        str(twin.item.id): np.array([0.99, 0.14]),
        str(other.item.id): np.array([0.0, 1.0]),
    }
    assert mmr([first, twin, other], vectors, 1.0, 3) == [first, twin, other]  # λ = 1 changes nothing
    assert mmr([first, twin, other], vectors, 0.5, 3) == [first, other, twin]
    assert twin.reasons and twin.reasons[0].startswith("diversified (λ 0.50)")


def test_metadata_depth_and_size_are_capped_naming_the_field() -> None:
    assert metadata_depth({}) == 1 and metadata_depth({"a": [{"b": 1}]}) == 3 and metadata_depth(5) == 0
    hostile: object = 1
    for _ in range(50_000):  # deeper than Python's recursion limit: counted without recursion
        hostile = [hostile]
    assert metadata_depth({"x": hostile}) == 50_001
    assert metadata_bytes({"a": "é"}) == len('{"a":"é"}'.encode())
    validate_metadata({"a": {"b": "c"}}, max_bytes=100, max_depth=2)
    for metadata, rule in (({"a": {"b": {"c": 1}}}, "levels deep"), ({"a": "x" * 200}, "bytes as JSON")):
        with pytest.raises(ValidationFailed, match=rule) as refused:
            validate_metadata(metadata, max_bytes=100, max_depth=2)
        assert refused.value.field == "metadata"


def test_a_metadata_number_no_double_holds_is_refused_naming_its_path() -> None:
    """JSON has no NaN or infinity (Python's parser reads them, and 1e400 as infinity) and the Struct carrying
    metadata holds doubles: found as 500s by probing beyond what the fuzzer generates."""
    assert unrepresentable_number_at({"a": [1, 2.5, True, -(10**308), {"b": "NaN"}]}) is None
    assert unrepresentable_number_at({"a": {"b": [0, float("nan")]}}) == "metadata.a.b[1]"
    assert unrepresentable_number_at({"n": 10**309}) == "metadata.n"
    with pytest.raises(ValidationFailed, match="finite number") as refused:
        validate_metadata({"ok": 1, "x": float("-inf")}, max_bytes=100, max_depth=2)
    assert refused.value.field == "metadata.x"


def test_the_workspace_role_is_read_only_when_it_decides_whether_a_recall_count_is_shown() -> None:
    """``needs_role`` False means ``sees_recall_count`` gives the same answer whatever the caller's role is (recall
    then skips reading the roles); True means some role changes the answer."""
    from engram.domain.disclosure import needs_role, sees_recall_count
    from engram.domain.values import WorkspaceRole

    tenant, me, other = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    roles: list[str | None] = [None, *WorkspaceRole]
    for scopes in (frozenset({"read"}), frozenset({"read", "write"}), frozenset({"admin"})):
        ctx = CallerContext(tenant_id=tenant, principal_id=me, principal_type="user", scopes=scopes)
        for item_tenant in (tenant, str(uuid.uuid4())):
            for author in (me, other):
                item = make_item(tenant_id=uuid.UUID(item_tenant), principal_id=uuid.UUID(author))
                answers = {sees_recall_count(ctx, item, role) for role in roles}
                assert needs_role(ctx, item) == (len(answers) == 2), (scopes, item_tenant == tenant, author == me)
    reader = CallerContext(tenant_id=tenant, principal_id=me, principal_type="user", scopes=frozenset({"read"}))
    assert needs_role(reader, make_item(tenant_id=uuid.UUID(tenant), principal_id=uuid.UUID(other)))
