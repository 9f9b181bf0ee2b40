"""Protobuf answers → the JSON the REST API returns."""

from __future__ import annotations

from typing import Any

from google.protobuf.json_format import MessageToDict

from engram.v1 import memory_pb2, recall_pb2

_OPTIONAL_TEXT = (
    "subject",
    "wing",
    "room",
    "source_uri",
    "source_session",
    "superseded_by",
    "external_id",
    "retention",
    "sensitivity",
)
_TIMES = ("valid_from", "valid_to", "created_at", "expires_at", "invalidated_at", "classified_at")


def _time(message: Any, name: str) -> str | None:
    if not message.HasField(name):
        return None
    return str(getattr(message, name).ToDatetime().isoformat()) + "Z"


def item_json(item: memory_pb2.MemoryItem) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": item.id,
        "tenant_id": item.tenant_id,
        "workspace_id": item.workspace_id,
        "principal_id": item.principal_id,
        "content": item.content,
        "content_hash": item.content_hash,
        "kind": item.kind,
        "tags": list(item.tags),
        "importance": round(item.importance, 4),
        "pinned": item.pinned,
        "visibility": item.visibility,
        "review_status": item.review_status,
        "authority": item.authority,
        "source_type": item.source_type,
        "source_trust": round(item.source_trust, 4),
        "memory_confidence": round(item.memory_confidence, 4),
        "human_verified": item.human_verified,
        "recall_count": item.recall_count,
        "kind_explicit": item.kind_explicit,
        "taxonomy_confidence": round(item.taxonomy_confidence, 4) if item.HasField("taxonomy_confidence") else None,
        "retention_confidence": round(item.retention_confidence, 4) if item.HasField("retention_confidence") else None,
        "metadata": MessageToDict(item.metadata) if item.HasField("metadata") else {},
    }
    for name in _OPTIONAL_TEXT:
        body[name] = getattr(item, name) or None
    for name in _TIMES:
        body[name] = _time(item, name)
    return body


def recalled_json(recalled: memory_pb2.RecalledItem) -> dict[str, Any]:
    body: dict[str, Any] = {
        "item": item_json(recalled.item),
        "score": round(recalled.score, 6),
        "reasons": list(recalled.reasons),
        "origin": recalled.origin,
    }
    if recalled.matched_via:
        body["matched_via"] = recalled.matched_via
    return body


def status_json(status: recall_pb2.GetStatusResponse) -> dict[str, Any]:
    stages = [
        {"name": s.name, "status": s.status, "detail": s.detail or None, "updated_at": _time(s, "updated_at")}
        for s in status.stages
    ]
    by_name = {s["name"]: s["status"] for s in stages}
    return {
        "id": status.id,
        "review_status": status.review_status,
        "embedding": by_name.get("embedding", "pending"),
        "stages": stages,
    }


def _plain(value: Any) -> Any:
    """protobuf Struct numbers are doubles: give whole numbers back as ints (authority 50, not 50.0)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def events_json(reply: recall_pb2.GetEventsResponse) -> dict[str, Any]:
    return {
        "id": reply.id,
        "events": [
            {
                "id": e.id,
                "action": e.action,
                "actor_id": e.actor_id or None,
                "old": _plain(MessageToDict(e.old_value)) if e.HasField("old_value") else None,
                "new": _plain(MessageToDict(e.new_value)) if e.HasField("new_value") else None,
                "reason": e.reason or None,
                "request_id": e.request_id or None,
                "time": _time(e, "created_at"),
            }
            for e in reply.events
        ],
    }


def trash_json(entry: recall_pb2.TrashEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "item_id": entry.item_id,
        "kind": entry.kind,
        "workspace_id": entry.workspace_id,
        "author_id": entry.author_id,
        "visibility": entry.visibility,
        "review_status": entry.review_status,
        "invalidated": entry.invalidated,
        "reason": entry.reason,
        "deleted_by": entry.deleted_by or None,
        "deleted_at": _time(entry, "deleted_at"),
        "purge_after": _time(entry, "purge_after"),
        "preview": entry.preview,
    }


def conflict_json(c: memory_pb2.Conflict) -> dict[str, Any]:
    return {
        "id": c.id,
        "existing_item_id": c.existing_item_id,
        "new_item_id": c.new_item_id,
        "type": c.type,
        "detector": c.detector,
        "score": round(c.score, 4) if c.HasField("score") else None,
        "rule": c.rule or None,
        "explanation": c.explanation or None,
        "status": c.status,
        "resolution": c.resolution or None,
        "resolver_id": c.resolver_id or None,
        "reason": c.reason or None,
        "created_at": _time(c, "created_at"),
        "resolved_at": _time(c, "resolved_at"),
    }


def edge_json(e: memory_pb2.Edge) -> dict[str, Any]:
    return {
        "id": e.id,
        "src_id": e.src_id,
        "dst_id": e.dst_id,
        "type": e.type,
        "created_by": e.created_by or None,
        "created_at": _time(e, "created_at"),
    }
