"""Domain objects ⇄ protobuf messages (used at the gRPC edges only)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from google.protobuf import struct_pb2, timestamp_pb2
from google.protobuf.json_format import MessageToDict

from engram.domain import validation
from engram.domain.models import ConflictRecord, Edge, ItemEvent, MemoryItem, RankedItem, Stage
from engram.errors import ValidationFailed
from engram.v1 import memory_pb2, recall_pb2

OUTSIDE_YEARS = "must fall after 0001-01-01T00:00:00Z and before 9999-12-31T23:59:59.999999Z"
"""Why a time is refused whose offset (REST) or seconds (gRPC) take it past the years a datetime holds, or onto
either end: asyncpg writes those two instants as PostgreSQL's -infinity/infinity and reads them back naive."""
_ENDS = (datetime.min, datetime.max)


def in_range(value: datetime) -> bool:
    """Whether ``value`` converts to UTC (a naive one is taken as local time) strictly inside the years 1–9999."""
    try:
        utc = value.astimezone(UTC)
    except (OverflowError, ValueError):  # past year 9999, before year 1 (naive: "year 0 is out of range")
        return False
    return utc.replace(tzinfo=None) not in _ENDS


def timestamp(value: datetime | None) -> timestamp_pb2.Timestamp | None:
    if value is None:
        return None
    if value.tzinfo is None and value in _ENDS:  # a row holding -infinity/infinity, as asyncpg reads it
        value = value.replace(tzinfo=UTC)
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(value.astimezone(UTC))
    return ts


def from_timestamp(message: Any, field: str) -> datetime | None:
    """The datetime of an optional Timestamp field, or None when unset. A Timestamp holds seconds far past the
    years 1–9999 that a datetime (and the gateway) takes: such a request is refused naming the field."""
    if not message.HasField(field):
        return None
    try:
        value: datetime = getattr(message, field).ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError):
        value = datetime.min
    if not in_range(value):
        raise ValidationFailed(f"{field} {OUTSIDE_YEARS}", field=field)
    return value


def struct(value: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(value)
    return message


def from_struct(message: Any, field: str) -> dict[str, Any]:
    """A Struct field as a dict ({} when unset). A Struct can carry NaN or an infinity, which JSON (and so jsonb)
    cannot: such a request is refused naming where, as the gateway refuses the same metadata."""
    if not message.HasField(field):
        return {}
    value = getattr(message, field)
    try:
        parsed: dict[str, Any] = MessageToDict(value)
    except ValueError:  # "Fail to serialize Infinity for Value.number_value"
        where = _non_finite_at(value, field)
        if where is None:
            raise
        raise ValidationFailed(validation.NOT_A_DOUBLE.format(where=where), field=where) from None
    return parsed


def _non_finite_at(message: struct_pb2.Struct, path: str) -> str | None:
    """The dotted path of a NaN or infinite number in a Struct, else None."""
    stack: list[tuple[struct_pb2.Value, str]] = [(value, f"{path}.{key}") for key, value in message.fields.items()]
    while stack:
        value, where = stack.pop()
        kind = value.WhichOneof("kind")
        if kind == "number_value" and not math.isfinite(value.number_value):
            return where
        if kind == "struct_value":
            stack.extend((inner, f"{where}.{key}") for key, inner in value.struct_value.fields.items())
        elif kind == "list_value":
            stack.extend((inner, f"{where}[{i}]") for i, inner in enumerate(value.list_value.values))
    return None


def item_to_proto(item: MemoryItem) -> memory_pb2.MemoryItem:
    return memory_pb2.MemoryItem(
        id=str(item.id),
        tenant_id=str(item.tenant_id),
        workspace_id=str(item.workspace_id),
        principal_id=str(item.principal_id),
        content=item.content,
        content_hash=item.content_hash.hex(),
        kind=item.kind,
        subject=item.subject or "",
        wing=item.wing or "",
        room=item.room or "",
        tags=item.tags,
        importance=item.importance,
        pinned=item.pinned,
        visibility=item.visibility,
        review_status=item.review_status,
        authority=item.authority,
        source_type=item.source_type,
        source_uri=item.source_uri or "",
        source_session=item.source_session or "",
        source_trust=item.source_trust,
        memory_confidence=item.memory_confidence,
        human_verified=item.human_verified,
        valid_from=timestamp(item.valid_from),
        valid_to=timestamp(item.valid_to),
        created_at=timestamp(item.created_at),
        expires_at=timestamp(item.expires_at),
        superseded_by=str(item.superseded_by or ""),
        invalidated_at=timestamp(item.invalidated_at),
        external_id=item.external_id or "",
        metadata=struct(item.metadata),
        recall_count=item.recall_count,
        retention=item.retention or "",
        retention_confidence=item.retention_confidence,
        taxonomy_confidence=item.taxonomy_confidence,
        sensitivity=item.sensitivity or "",
        classified_at=timestamp(item.classified_at),
        kind_explicit=item.kind_explicit,
    )


def ranked_to_proto(ranked: RankedItem) -> memory_pb2.RecalledItem:
    return memory_pb2.RecalledItem(
        item=item_to_proto(ranked.item),
        score=ranked.score,
        reasons=ranked.reasons,
        origin=ranked.origin,
        matched_via=ranked.matched_via,
    )


def stage_to_proto(stage: Stage) -> recall_pb2.Stage:
    return recall_pb2.Stage(
        name=stage.name, status=stage.status, detail=stage.detail, updated_at=timestamp(stage.updated_at)
    )


def event_to_proto(event: ItemEvent) -> recall_pb2.ItemEvent:
    """One row of an item's audit trail as a protobuf message."""
    message = recall_pb2.ItemEvent(
        id=event.id,
        action=event.action,
        actor_id=event.actor_id or "",
        reason=event.reason or "",
        request_id=event.request_id or "",
        created_at=timestamp(event.created_at),
    )
    if event.old_value is not None:
        message.old_value.update(event.old_value)
    if event.new_value is not None:
        message.new_value.update(event.new_value)
    return message


def edge_to_proto(edge: Edge) -> memory_pb2.Edge:
    return memory_pb2.Edge(
        id=edge.id,
        src_id=edge.src_id,
        dst_id=edge.dst_id,
        type=edge.type,
        created_by=edge.created_by or "",
        created_at=timestamp(edge.created_at),
    )


def conflict_to_proto(conflict: ConflictRecord) -> memory_pb2.Conflict:
    return memory_pb2.Conflict(
        id=conflict.id,
        existing_item_id=conflict.item_a,
        new_item_id=conflict.item_b,
        type=conflict.type,
        detector=conflict.detector,
        score=conflict.score,
        rule=conflict.rule or "",
        explanation=conflict.explanation or "",
        status=conflict.status,
        resolution=conflict.resolution or "",
        resolver_id=conflict.resolver_id or "",
        reason=conflict.reason or "",
        created_at=timestamp(conflict.created_at),
        resolved_at=timestamp(conflict.resolved_at),
    )
