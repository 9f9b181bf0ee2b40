import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MemoryItem(_message.Message):
    __slots__ = ("id", "tenant_id", "workspace_id", "principal_id", "content", "content_hash", "kind", "subject", "wing", "room", "tags", "importance", "pinned", "visibility", "review_status", "authority", "source_type", "source_uri", "source_session", "source_trust", "memory_confidence", "human_verified", "valid_from", "valid_to", "created_at", "expires_at", "superseded_by", "invalidated_at", "external_id", "metadata", "recall_count", "retention", "retention_confidence", "taxonomy_confidence", "sensitivity", "classified_at", "kind_explicit")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    WING_FIELD_NUMBER: _ClassVar[int]
    ROOM_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    REVIEW_STATUS_FIELD_NUMBER: _ClassVar[int]
    AUTHORITY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URI_FIELD_NUMBER: _ClassVar[int]
    SOURCE_SESSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TRUST_FIELD_NUMBER: _ClassVar[int]
    MEMORY_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    HUMAN_VERIFIED_FIELD_NUMBER: _ClassVar[int]
    VALID_FROM_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    INVALIDATED_AT_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    RECALL_COUNT_FIELD_NUMBER: _ClassVar[int]
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    RETENTION_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    TAXONOMY_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SENSITIVITY_FIELD_NUMBER: _ClassVar[int]
    CLASSIFIED_AT_FIELD_NUMBER: _ClassVar[int]
    KIND_EXPLICIT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    workspace_id: str
    principal_id: str
    content: str
    content_hash: str
    kind: str
    subject: str
    wing: str
    room: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    importance: float
    pinned: bool
    visibility: str
    review_status: str
    authority: int
    source_type: str
    source_uri: str
    source_session: str
    source_trust: float
    memory_confidence: float
    human_verified: bool
    valid_from: _timestamp_pb2.Timestamp
    valid_to: _timestamp_pb2.Timestamp
    created_at: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    superseded_by: str
    invalidated_at: _timestamp_pb2.Timestamp
    external_id: str
    metadata: _struct_pb2.Struct
    recall_count: int
    retention: str
    retention_confidence: float
    taxonomy_confidence: float
    sensitivity: str
    classified_at: _timestamp_pb2.Timestamp
    kind_explicit: bool
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., content: _Optional[str] = ..., content_hash: _Optional[str] = ..., kind: _Optional[str] = ..., subject: _Optional[str] = ..., wing: _Optional[str] = ..., room: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., importance: _Optional[float] = ..., pinned: _Optional[bool] = ..., visibility: _Optional[str] = ..., review_status: _Optional[str] = ..., authority: _Optional[int] = ..., source_type: _Optional[str] = ..., source_uri: _Optional[str] = ..., source_session: _Optional[str] = ..., source_trust: _Optional[float] = ..., memory_confidence: _Optional[float] = ..., human_verified: _Optional[bool] = ..., valid_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., superseded_by: _Optional[str] = ..., invalidated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., external_id: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., recall_count: _Optional[int] = ..., retention: _Optional[str] = ..., retention_confidence: _Optional[float] = ..., taxonomy_confidence: _Optional[float] = ..., sensitivity: _Optional[str] = ..., classified_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., kind_explicit: _Optional[bool] = ...) -> None: ...

class RecalledItem(_message.Message):
    __slots__ = ("item", "score", "reasons", "origin", "matched_via")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    MATCHED_VIA_FIELD_NUMBER: _ClassVar[int]
    item: MemoryItem
    score: float
    reasons: _containers.RepeatedScalarFieldContainer[str]
    origin: str
    matched_via: str
    def __init__(self, item: _Optional[_Union[MemoryItem, _Mapping]] = ..., score: _Optional[float] = ..., reasons: _Optional[_Iterable[str]] = ..., origin: _Optional[str] = ..., matched_via: _Optional[str] = ...) -> None: ...

class Conflict(_message.Message):
    __slots__ = ("id", "existing_item_id", "new_item_id", "type", "detector", "score", "rule", "explanation", "status", "resolution", "resolver_id", "reason", "created_at", "resolved_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    EXISTING_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    NEW_ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DETECTOR_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    RESOLVER_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    existing_item_id: str
    new_item_id: str
    type: str
    detector: str
    score: float
    rule: str
    explanation: str
    status: str
    resolution: str
    resolver_id: str
    reason: str
    created_at: _timestamp_pb2.Timestamp
    resolved_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., existing_item_id: _Optional[str] = ..., new_item_id: _Optional[str] = ..., type: _Optional[str] = ..., detector: _Optional[str] = ..., score: _Optional[float] = ..., rule: _Optional[str] = ..., explanation: _Optional[str] = ..., status: _Optional[str] = ..., resolution: _Optional[str] = ..., resolver_id: _Optional[str] = ..., reason: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resolved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Edge(_message.Message):
    __slots__ = ("id", "src_id", "dst_id", "type", "created_by", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    SRC_ID_FIELD_NUMBER: _ClassVar[int]
    DST_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    src_id: str
    dst_id: str
    type: str
    created_by: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., src_id: _Optional[str] = ..., dst_id: _Optional[str] = ..., type: _Optional[str] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RecallFilters(_message.Message):
    __slots__ = ("kinds", "tags", "workspace_id", "wing", "room", "as_of", "time_start", "time_end")
    KINDS_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    WING_FIELD_NUMBER: _ClassVar[int]
    ROOM_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    TIME_START_FIELD_NUMBER: _ClassVar[int]
    TIME_END_FIELD_NUMBER: _ClassVar[int]
    kinds: _containers.RepeatedScalarFieldContainer[str]
    tags: _containers.RepeatedScalarFieldContainer[str]
    workspace_id: str
    wing: str
    room: str
    as_of: _timestamp_pb2.Timestamp
    time_start: _timestamp_pb2.Timestamp
    time_end: _timestamp_pb2.Timestamp
    def __init__(self, kinds: _Optional[_Iterable[str]] = ..., tags: _Optional[_Iterable[str]] = ..., workspace_id: _Optional[str] = ..., wing: _Optional[str] = ..., room: _Optional[str] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
