"""The REST answers: /openapi.json documents a response body for every route, and each answer model, built
from a representative protobuf reply, serializes to exactly the JSON the API has always returned (the same
keys, in the same order, with null for absent text and times)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from google.protobuf import struct_pb2, timestamp_pb2
from pydantic import BaseModel, TypeAdapter

from engram.config import Settings
from engram.v1 import ingest_pb2, memory_pb2, recall_pb2
from services.gateway import mapping
from services.gateway.app import create_app

# Operations whose answer is not documented yet, each with the reason; the test below fails once one of them
# is documented, so the entry can go.
NOT_DOCUMENTED_YET: dict[tuple[str, str], str] = {}


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    spec = create_app(Settings()).openapi()
    return [(method, path, op) for path, ops in spec["paths"].items() for method, op in ops.items()]


def _success_schemas(op: dict[str, Any]) -> dict[str, Any]:
    return {
        status: response.get("content", {}).get("application/json", {}).get("schema")
        for status, response in op["responses"].items()
        if status.startswith("2")
    }


def test_every_operation_documents_a_response_body() -> None:
    operations = _operations()
    assert len(operations) > 30  # positive control: the admin API and the v1 routes are all here
    for method, path, op in operations:
        schemas = _success_schemas(op)
        assert schemas, f"{method} {path} documents no 2xx response"
        for status, schema in schemas.items():
            if status == "204":
                assert schema is None, f"{method} {path}: a 204 has no body"
            elif (method, path) in NOT_DOCUMENTED_YET:
                assert not schema, f"{method} {path} is documented now: drop it from NOT_DOCUMENTED_YET"
            else:
                assert schema, f"{method} {path} answers {status} with an empty schema"


def test_every_v1_answer_is_a_named_model_listing_its_fields() -> None:
    spec = create_app(Settings()).openapi()
    components = spec["components"]["schemas"]
    checked = 0
    for method, path, op in _operations():
        if not path.startswith("/v1/") or path.startswith("/v1/admin/"):
            continue
        for status, schema in _success_schemas(op).items():
            if status == "204":
                continue
            name = schema["$ref"].rsplit("/", 1)[1]
            model = components[name]
            assert model["properties"] and model["additionalProperties"] is False, f"{method} {path}: {name}"
            checked += 1
    assert checked >= 24


# --- representative replies --------------------------------------------------------------------------------


def _ts(text: str) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(datetime.fromisoformat(text))
    return stamp


def _struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


A, B, C = (f"00000000-0000-4000-8000-00000000000{n}" for n in "abc")


def _full_item(**overrides: Any) -> memory_pb2.MemoryItem:
    fields: dict[str, Any] = {
        "id": A,
        "tenant_id": "t",
        "workspace_id": "w",
        "principal_id": "p",
        "content": "Deploys happen on Tuesdays — après le standup.",
        "content_hash": "h",
        "kind": "fact",
        "subject": "deploy.day",
        "wing": "ops",
        "room": "release",
        "tags": ["ops", "deploy"],
        "importance": 0.123456,
        "pinned": True,
        "visibility": "workspace",
        "review_status": "active",
        "authority": 50,
        "source_type": "explicit",
        "source_uri": "https://example.invalid/x",
        "source_session": "s-1",
        "source_trust": 1.0,
        "memory_confidence": 0.7,
        "human_verified": True,
        "valid_from": _ts("2026-05-08T00:00:00"),
        "valid_to": _ts("2026-06-01T12:30:00.5"),
        "created_at": _ts("2026-11-29T22:17:00.453163"),
        "expires_at": _ts("2027-01-01T00:00:00"),
        "superseded_by": B,
        "invalidated_at": _ts("2026-12-01T00:00:00"),
        "external_id": "ext-1",
        "metadata": _struct({"ticket": 42}),
        "recall_count": 3,
        "retention": "retain",
        "retention_confidence": 0.66666,
        "taxonomy_confidence": 0.85,
        "sensitivity": "normal",
        "classified_at": _ts("2026-11-29T22:17:01"),
        "kind_explicit": False,
    }
    return memory_pb2.MemoryItem(**(fields | overrides))


FULL_ITEM_JSON: dict[str, Any] = {
    "id": A,
    "tenant_id": "t",
    "workspace_id": "w",
    "principal_id": "p",
    "content": "Deploys happen on Tuesdays — après le standup.",
    "content_hash": "h",
    "kind": "fact",
    "tags": ["ops", "deploy"],
    "importance": 0.1235,
    "pinned": True,
    "visibility": "workspace",
    "review_status": "active",
    "authority": 50,
    "source_type": "explicit",
    "source_trust": 1.0,
    "memory_confidence": 0.7,
    "human_verified": True,
    "recall_count": 3,
    "kind_explicit": False,
    "taxonomy_confidence": 0.85,
    "retention_confidence": 0.6667,
    "metadata": {"ticket": 42.0},
    "subject": "deploy.day",
    "wing": "ops",
    "room": "release",
    "source_uri": "https://example.invalid/x",
    "source_session": "s-1",
    "superseded_by": B,
    "external_id": "ext-1",
    "retention": "retain",
    "sensitivity": "normal",
    "valid_from": "2026-05-08T00:00:00Z",
    "valid_to": "2026-06-01T12:30:00.500000Z",
    "created_at": "2026-11-29T22:17:00.453163Z",
    "expires_at": "2027-01-01T00:00:00Z",
    "invalidated_at": "2026-12-01T00:00:00Z",
    "classified_at": "2026-11-29T22:17:01Z",
}

# A fresh item: no optional text, no times but created_at, not classified, no metadata.
BARE_ITEM = memory_pb2.MemoryItem(
    id=B,
    tenant_id="t",
    workspace_id="w",
    principal_id="p",
    content="x",
    content_hash="h",
    kind="fact",
    importance=0.5,
    visibility="workspace",
    review_status="proposed",
    authority=30,
    source_type="agent",
    source_trust=0.6,
    memory_confidence=0.7,
    created_at=_ts("2026-11-29T22:17:00"),
    kind_explicit=True,
)
BARE_ITEM_JSON: dict[str, Any] = {
    "id": B,
    "tenant_id": "t",
    "workspace_id": "w",
    "principal_id": "p",
    "content": "x",
    "content_hash": "h",
    "kind": "fact",
    "tags": [],
    "importance": 0.5,
    "pinned": False,
    "visibility": "workspace",
    "review_status": "proposed",
    "authority": 30,
    "source_type": "agent",
    "source_trust": 0.6,
    "memory_confidence": 0.7,
    "human_verified": False,
    "recall_count": None,  # unset: not shown to this caller
    "kind_explicit": True,
    "taxonomy_confidence": None,
    "retention_confidence": None,
    "metadata": {},
    **dict.fromkeys(
        ("subject", "wing", "room", "source_uri", "source_session", "superseded_by", "external_id", "retention"),
        None,
    ),
    "sensitivity": None,
    "valid_from": None,
    "valid_to": None,
    "created_at": "2026-11-29T22:17:00Z",
    "expires_at": None,
    "invalidated_at": None,
    "classified_at": None,
}

RECALLED = memory_pb2.RecalledItem(item=BARE_ITEM, score=0.1234567, reasons=["keyword match 0.061"], origin="keyword")
RECALLED_JSON = {"item": BARE_ITEM_JSON, "score": 0.123457, "reasons": ["keyword match 0.061"], "origin": "keyword"}
REDIRECTED = memory_pb2.RecalledItem(item=BARE_ITEM, score=0.5, reasons=["r"], origin="semantic", matched_via=C)
REDIRECTED_JSON = {"item": BARE_ITEM_JSON, "score": 0.5, "reasons": ["r"], "origin": "semantic", "matched_via": C}

CONFLICT = memory_pb2.Conflict(
    id=C,
    existing_item_id=A,
    new_item_id=B,
    type="contradiction",
    detector="rules",
    score=0.87654,
    rule="numbers_differ",
    explanation="30 vs 60",
    status="resolved",
    resolution="keep_existing",
    resolver_id="p",
    reason="checked",
    created_at=_ts("2026-11-29T22:17:00"),
    resolved_at=_ts("2026-11-30T08:00:00"),
)
CONFLICT_JSON = {
    "id": C,
    "existing_item_id": A,
    "new_item_id": B,
    "type": "contradiction",
    "detector": "rules",
    "score": 0.8765,
    "rule": "numbers_differ",
    "explanation": "30 vs 60",
    "status": "resolved",
    "resolution": "keep_existing",
    "resolver_id": "p",
    "reason": "checked",
    "created_at": "2026-11-29T22:17:00Z",
    "resolved_at": "2026-11-30T08:00:00Z",
}
OPEN_CONFLICT = memory_pb2.Conflict(
    id=C, existing_item_id=A, new_item_id=B, type="contradiction", detector="embedding", status="open"
)
OPEN_CONFLICT_JSON = {
    "id": C,
    "existing_item_id": A,
    "new_item_id": B,
    "type": "contradiction",
    "detector": "embedding",
    "score": None,
    "rule": None,
    "explanation": None,
    "status": "open",
    "resolution": None,
    "resolver_id": None,
    "reason": None,
    "created_at": None,
    "resolved_at": None,
}

EDGE = memory_pb2.Edge(
    id=C, src_id=A, dst_id=B, type="references", created_by="p", created_at=_ts("2026-11-30T00:00:00")
)
EDGE_JSON = {
    "id": C,
    "src_id": A,
    "dst_id": B,
    "type": "references",
    "created_by": "p",
    "created_at": "2026-11-30T00:00:00Z",
}

TRASH = recall_pb2.TrashEntry(
    id=C,
    item_id=A,
    kind="fact",
    workspace_id="w",
    author_id="p",
    visibility="workspace",
    review_status="active",
    invalidated=False,
    reason="expired",
    deleted_at=_ts("2026-11-29T23:59:54.143129"),
    purge_after=_ts("2026-12-29T23:59:54.143129"),
    preview="Deploys happen…",
)
TRASH_JSON = {
    "id": C,
    "item_id": A,
    "kind": "fact",
    "workspace_id": "w",
    "author_id": "p",
    "visibility": "workspace",
    "review_status": "active",
    "invalidated": False,
    "reason": "expired",
    "deleted_by": None,
    "deleted_at": "2026-11-29T23:59:54.143129Z",
    "purge_after": "2026-12-29T23:59:54.143129Z",
    "preview": "Deploys happen…",
}

# Struct values (metadata, old/new, gates) hold one key each here: a protobuf Struct is a map, so the order of
# several keys is protobuf's, before and after alike.
CASES: list[tuple[str, BaseModel, Any]] = [
    ("full item", mapping.item_answer(_full_item()), FULL_ITEM_JSON),
    ("bare item", mapping.item_answer(BARE_ITEM), BARE_ITEM_JSON),
    (
        "remember",
        mapping.remember_answer(
            ingest_pb2.RememberResponse(
                id=A,
                status="superseded",
                review_status="active",
                authority=50,
                item=_full_item(),
                possible_supersedes=[ingest_pb2.PossibleSupersede(id=C, similarity=0.91, preview="Deploys…")],
                superseded=[B],
            )
        ),
        {
            "id": A,
            "status": "superseded",
            "review_status": "active",
            "authority": 50,
            "possible_supersedes": [{"id": C, "similarity": 0.91, "preview": "Deploys…"}],
            "superseded": [B],
            "item": FULL_ITEM_JSON,
        },
    ),
    (
        "recall",
        mapping.recall_answer(
            recall_pb2.RecallResponse(
                items=[RECALLED, REDIRECTED], scoring_version="v4", recall_id=C, omitted=2, mode="hybrid"
            ),
            explain=False,
        ),
        {
            "items": [RECALLED_JSON, REDIRECTED_JSON],
            "mode": "hybrid",
            "scoring_version": "v4",
            "recall_id": C,
            "omitted": 2,
        },
    ),
    (
        "recall with explain",
        mapping.recall_answer(
            recall_pb2.RecallResponse(
                items=[RECALLED],
                scoring_version="v4",
                recall_id=C,
                omitted=1,
                mode="keyword",
                cut=[recall_pb2.CutItem(item=REDIRECTED, reason="over the item budget (1)")],
            ),
            explain=True,
        ),
        {
            "items": [RECALLED_JSON],
            "mode": "keyword",
            "scoring_version": "v4",
            "recall_id": C,
            "omitted": 1,
            "cut": [{**REDIRECTED_JSON, "cut_because": "over the item budget (1)"}],
        },
    ),
    (
        "recall with explain and nothing cut",
        mapping.recall_answer(recall_pb2.RecallResponse(scoring_version="v4", recall_id=C, mode="startup"), True),
        {"items": [], "mode": "startup", "scoring_version": "v4", "recall_id": C, "omitted": 0, "cut": []},
    ),
    (
        "search",
        mapping.search_answer(recall_pb2.SearchResponse(items=[REDIRECTED], mode="semantic")),
        {"items": [REDIRECTED_JSON], "mode": "semantic"},
    ),
    (
        "status",
        mapping.status_answer(
            recall_pb2.GetStatusResponse(
                id=A,
                review_status="proposed",
                stages=[
                    recall_pb2.Stage(
                        name="embedding", status="done", detail="e5:384", updated_at=_ts("2026-11-30T00:14:34")
                    ),
                    recall_pb2.Stage(name="classification", status="pending"),
                ],
            )
        ),
        {
            "id": A,
            "review_status": "proposed",
            "embedding": "done",
            "stages": [
                {"name": "embedding", "status": "done", "detail": "e5:384", "updated_at": "2026-11-30T00:14:34Z"},
                {"name": "classification", "status": "pending", "detail": None, "updated_at": None},
            ],
        },
    ),
    (
        "status without stages",
        mapping.status_answer(recall_pb2.GetStatusResponse(id=A, review_status="active")),
        {"id": A, "review_status": "active", "embedding": "pending", "stages": []},
    ),
    (
        "events",
        mapping.events_answer(
            recall_pb2.GetEventsResponse(
                id=A,
                events=[
                    recall_pb2.ItemEvent(
                        id=41,
                        action="created",
                        actor_id="p",
                        new_value=_struct({"authority": 30}),
                        request_id="req-1",
                        created_at=_ts("2026-11-29T22:17:00.453163"),
                    ),
                    recall_pb2.ItemEvent(
                        id=57,
                        action="expired",
                        old_value=_struct({"importance": 0.5}),
                        new_value=_struct({"trash_id": C}),
                        reason="time to live ended",
                        created_at=_ts("2026-11-30T00:00:00"),
                    ),
                ],
            )
        ),
        {
            "id": A,
            "events": [
                {
                    "id": 41,
                    "action": "created",
                    "actor_id": "p",
                    "old": None,
                    "new": {"authority": 30},
                    "reason": None,
                    "request_id": "req-1",
                    "time": "2026-11-29T22:17:00.453163Z",
                },
                {
                    "id": 57,
                    "action": "expired",
                    "actor_id": None,
                    "old": {"importance": 0.5},
                    "new": {"trash_id": C},
                    "reason": "time to live ended",
                    "request_id": None,
                    "time": "2026-11-30T00:00:00Z",
                },
            ],
        },
    ),
    (
        "deleted",
        mapping.deleted_answer(ingest_pb2.DeleteResponse(item_id=A, trash_id=C)),
        {"item_id": A, "trash_id": C},
    ),
    (
        "trash page",
        mapping.trash_page(
            recall_pb2.ListTrashResponse(entries=[TRASH, recall_pb2.TrashEntry(id=B, deleted_by="p")], next_cursor="n1")
        ),
        {
            "items": [
                TRASH_JSON,
                {
                    "id": B,
                    "item_id": "",
                    "kind": "",
                    "workspace_id": "",
                    "author_id": "",
                    "visibility": "",
                    "review_status": "",
                    "invalidated": False,
                    "reason": "",
                    "deleted_by": "p",
                    "deleted_at": None,
                    "purge_after": None,
                    "preview": "",
                },
            ],
            "next_cursor": "n1",
        },
    ),
    ("last trash page", mapping.trash_page(recall_pb2.ListTrashResponse()), {"items": [], "next_cursor": None}),
    (
        "bulk",
        mapping.bulk_answer(
            ingest_pb2.BulkResponse(
                action="archive",
                dry_run=True,
                matched=3,
                affected=[A, B],
                skipped=[ingest_pb2.BulkSkip(id=C, code="invalid_transition", detail="already archived")],
                truncated=True,
            )
        ),
        {
            "action": "archive",
            "dry_run": True,
            "matched": 3,
            "affected": [A, B],
            "truncated": True,
            "skipped": [{"id": C, "code": "invalid_transition", "detail": "already archived"}],
        },
    ),
    (
        "expiry candidates",
        mapping.expiry_answer(recall_pb2.ExpiryCandidatesResponse(items=[BARE_ITEM])),
        {"items": [BARE_ITEM_JSON]},
    ),
    (
        "item page",
        mapping.item_page(recall_pb2.ListItemsResponse(items=[BARE_ITEM], next_cursor="n2")),
        {"items": [BARE_ITEM_JSON], "next_cursor": "n2"},
    ),
    ("last item page", mapping.item_page(recall_pb2.ListItemsResponse()), {"items": [], "next_cursor": None}),
    (
        "stats",
        mapping.stats_answer(
            recall_pb2.GetStatsResponse(
                total=12,
                by_review_status={"proposed": 2, "active": 10},
                by_kind={"fact": 9, "decision": 3},
                proposed=2,
                oldest_proposed_at=_ts("2026-12-01T10:00:00"),
                open_conflicts=1,
                failed_stages={"classification": 1},
                expiring_within_7d=3,
                trash=4,
                superseded=2,
                invalidated=1,
            )
        ),
        {
            "items": {
                "total": 12,
                "by_review_status": {"active": 10, "proposed": 2},
                "by_kind": {"decision": 3, "fact": 9},
            },
            "review_queue": {"proposed": 2, "disputed": 0, "oldest_proposed_at": "2026-12-01T10:00:00Z"},
            "hygiene": {
                "open_conflicts": 1,
                "pending_stages": {"embedding": 0, "classification": 0, "conflict_check": 0, "promotion": 0},
                "failed_stages": {"embedding": 0, "classification": 1, "conflict_check": 0, "promotion": 0},
                "expiring_within_7d": 3,
                "trash": 4,
                "superseded": 2,
                "invalidated": 1,
            },
        },
    ),
    (
        "conflict page",
        mapping.conflict_page(recall_pb2.ListConflictsResponse(conflicts=[CONFLICT, OPEN_CONFLICT])),
        {"items": [CONFLICT_JSON, OPEN_CONFLICT_JSON], "next_cursor": None},
    ),
    (
        "resolved by merge",
        mapping.resolved_answer(
            ingest_pb2.ResolveConflictResponse(
                conflict=CONFLICT, existing=BARE_ITEM, new=BARE_ITEM, merged=_full_item()
            )
        ),
        {"conflict": CONFLICT_JSON, "existing": BARE_ITEM_JSON, "new": BARE_ITEM_JSON, "merged": FULL_ITEM_JSON},
    ),
    (
        "resolved without merge",
        mapping.resolved_answer(
            ingest_pb2.ResolveConflictResponse(conflict=OPEN_CONFLICT, existing=BARE_ITEM, new=BARE_ITEM)
        ),
        {"conflict": OPEN_CONFLICT_JSON, "existing": BARE_ITEM_JSON, "new": BARE_ITEM_JSON, "merged": None},
    ),
    ("edge", mapping.edge_answer(EDGE), EDGE_JSON),
    (
        "edges",
        mapping.edges_answer(
            recall_pb2.ListEdgesResponse(id=A, edges=[EDGE, memory_pb2.Edge(id=B, type="supersedes")])
        ),
        {
            "id": A,
            "items": [
                EDGE_JSON,
                {"id": B, "src_id": "", "dst_id": "", "type": "supersedes", "created_by": None, "created_at": None},
            ],
        },
    ),
    (
        "classify",
        mapping.classify_answer(
            ingest_pb2.ClassifyResponse(
                kind="decision",
                taxonomy_confidence=0.85,
                retention="retain",
                retention_confidence=0.699999,
                sensitivity="normal",
                reasons=["kind cue 'we decided'"],
                classifier="rules",
            )
        ),
        {
            "kind": "decision",
            "taxonomy_confidence": 0.85,
            "retention": "retain",
            "retention_confidence": 0.7,
            "sensitivity": "normal",
            "wing": None,
            "room": None,
            "suggested_visibility": None,
            "reasons": ["kind cue 'we decided'"],
            "classifier": "rules",
            "fallback_reason": None,
        },
    ),
    (
        "classify with placement",
        mapping.classify_answer(
            ingest_pb2.ClassifyResponse(
                kind="fact",
                wing="ops",
                room="db",
                suggested_visibility="private",
                classifier="llm:m",
                fallback_reason="timeout",
            )
        ),
        {
            "kind": "fact",
            "taxonomy_confidence": 0.0,
            "retention": "",
            "retention_confidence": 0.0,
            "sensitivity": "",
            "wing": "ops",
            "room": "db",
            "suggested_visibility": "private",
            "reasons": [],
            "classifier": "llm:m",
            "fallback_reason": "timeout",
        },
    ),
    (
        "promotion readiness",
        mapping.readiness_answer(
            recall_pb2.PromotionReadinessResponse(
                id=A,
                review_status="proposed",
                ready=False,
                blockers=[recall_pb2.PromotionBlocker(code="conflict", detail="1 open conflict(s)")],
                gates=_struct({"min_age_minutes": 10}),
            )
        ),
        {
            "id": A,
            "review_status": "proposed",
            "ready": False,
            "blockers": [{"code": "conflict", "detail": "1 open conflict(s)"}],
            "gates": {"min_age_minutes": 10.0},
        },
    ),
    (
        "feedback",
        mapping.feedback_answer(
            ingest_pb2.FeedbackResponse(item_id=A, verdict="noise", previous="useful", importance=0.4)
        ),
        {"item_id": A, "verdict": "noise", "previous": "useful", "importance": 0.4},
    ),
    (
        "first feedback",
        mapping.feedback_answer(ingest_pb2.FeedbackResponse(item_id=A, verdict="useful", importance=0.55000001)),
        {"item_id": A, "verdict": "useful", "previous": None, "importance": 0.55},
    ),
]


@pytest.mark.parametrize(("answer", "expected"), [(a, e) for _, a, e in CASES], ids=[c[0] for c in CASES])
def test_answer_serializes_to_the_json_the_api_returns(answer: BaseModel, expected: Any) -> None:
    # The gateway serializes a route's answer with pydantic (FastAPI's response field), and used to send the
    # dicts mapping.py built through json.dumps: the bytes must be the same.
    sent = TypeAdapter(type(answer)).dump_json(answer)
    assert sent == json.dumps(expected, ensure_ascii=False, separators=(",", ":")).encode()
    assert type(answer).model_validate_json(sent) == answer  # and it reads back as the same answer


def test_absent_optional_keys_stay_absent_not_null() -> None:
    recall = mapping.recall_answer(recall_pb2.RecallResponse(items=[RECALLED], mode="hybrid"), explain=False)
    body = json.loads(TypeAdapter(type(recall)).dump_json(recall))
    assert "cut" not in body and "matched_via" not in body["items"][0]
    explained = mapping.recall_answer(recall_pb2.RecallResponse(items=[REDIRECTED], mode="hybrid"), explain=True)
    body = json.loads(TypeAdapter(type(explained)).dump_json(explained))
    assert body["cut"] == [] and body["items"][0]["matched_via"] == C


@pytest.mark.parametrize(
    ("seconds", "nanos"),
    [
        (0, 0),
        (1_790_000_000, 123_000_000),
        (1_790_000_000, 999_999_999),  # microseconds rounded toward zero
        (1_790_000_000, 1_500),
        (-1, 999_999_000),  # before the epoch
        (-62_135_596_800, 0),  # 0001-01-01, the least protobuf allows
        (253_402_300_799, 999_999_999),  # 9999-12-31T23:59:59.999999
    ],
)
def test_a_timestamp_is_written_as_protobufs_datetime_writes_it(seconds: int, nanos: int) -> None:
    item = memory_pb2.MemoryItem(created_at=timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos))
    assert mapping._time(item, "created_at") == item.created_at.ToDatetime().isoformat() + "Z"


@pytest.mark.parametrize(("seconds", "nanos"), [(-62_135_596_801, 0), (253_402_300_800, 0), (0, -1), (0, 10**9)])
def test_an_invalid_timestamp_is_refused_as_protobuf_refuses_it(seconds: int, nanos: int) -> None:
    item = memory_pb2.MemoryItem(created_at=timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos))
    with pytest.raises(ValueError, match="Timestamp is not valid"):
        mapping._time(item, "created_at")
