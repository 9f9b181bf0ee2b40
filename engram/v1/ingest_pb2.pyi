import datetime

from engram.v1 import memory_pb2 as _memory_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LinkRequest(_message.Message):
    __slots__ = ("src_id", "dst_id", "type")
    SRC_ID_FIELD_NUMBER: _ClassVar[int]
    DST_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    src_id: str
    dst_id: str
    type: str
    def __init__(self, src_id: _Optional[str] = ..., dst_id: _Optional[str] = ..., type: _Optional[str] = ...) -> None: ...

class LinkResponse(_message.Message):
    __slots__ = ("edge", "created")
    EDGE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    edge: _memory_pb2.Edge
    created: bool
    def __init__(self, edge: _Optional[_Union[_memory_pb2.Edge, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class UnlinkRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class UnlinkResponse(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ResolveConflictRequest(_message.Message):
    __slots__ = ("id", "resolution", "reason", "content")
    ID_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    id: str
    resolution: str
    reason: str
    content: str
    def __init__(self, id: _Optional[str] = ..., resolution: _Optional[str] = ..., reason: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class ResolveConflictResponse(_message.Message):
    __slots__ = ("conflict", "existing", "new", "merged")
    CONFLICT_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    NEW_FIELD_NUMBER: _ClassVar[int]
    MERGED_FIELD_NUMBER: _ClassVar[int]
    conflict: _memory_pb2.Conflict
    existing: _memory_pb2.MemoryItem
    new: _memory_pb2.MemoryItem
    merged: _memory_pb2.MemoryItem
    def __init__(self, conflict: _Optional[_Union[_memory_pb2.Conflict, _Mapping]] = ..., existing: _Optional[_Union[_memory_pb2.MemoryItem, _Mapping]] = ..., new: _Optional[_Union[_memory_pb2.MemoryItem, _Mapping]] = ..., merged: _Optional[_Union[_memory_pb2.MemoryItem, _Mapping]] = ...) -> None: ...

class ClassifyRequest(_message.Message):
    __slots__ = ("content",)
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    content: str
    def __init__(self, content: _Optional[str] = ...) -> None: ...

class ClassifyResponse(_message.Message):
    __slots__ = ("kind", "taxonomy_confidence", "retention", "retention_confidence", "sensitivity", "wing", "room", "suggested_visibility", "reasons", "classifier", "fallback_reason")
    KIND_FIELD_NUMBER: _ClassVar[int]
    TAXONOMY_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    RETENTION_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SENSITIVITY_FIELD_NUMBER: _ClassVar[int]
    WING_FIELD_NUMBER: _ClassVar[int]
    ROOM_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    CLASSIFIER_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_REASON_FIELD_NUMBER: _ClassVar[int]
    kind: str
    taxonomy_confidence: float
    retention: str
    retention_confidence: float
    sensitivity: str
    wing: str
    room: str
    suggested_visibility: str
    reasons: _containers.RepeatedScalarFieldContainer[str]
    classifier: str
    fallback_reason: str
    def __init__(self, kind: _Optional[str] = ..., taxonomy_confidence: _Optional[float] = ..., retention: _Optional[str] = ..., retention_confidence: _Optional[float] = ..., sensitivity: _Optional[str] = ..., wing: _Optional[str] = ..., room: _Optional[str] = ..., suggested_visibility: _Optional[str] = ..., reasons: _Optional[_Iterable[str]] = ..., classifier: _Optional[str] = ..., fallback_reason: _Optional[str] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class DeleteResponse(_message.Message):
    __slots__ = ("item_id", "trash_id")
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    TRASH_ID_FIELD_NUMBER: _ClassVar[int]
    item_id: str
    trash_id: str
    def __init__(self, item_id: _Optional[str] = ..., trash_id: _Optional[str] = ...) -> None: ...

class RestoreRequest(_message.Message):
    __slots__ = ("trash_id",)
    TRASH_ID_FIELD_NUMBER: _ClassVar[int]
    trash_id: str
    def __init__(self, trash_id: _Optional[str] = ...) -> None: ...

class BulkFilter(_message.Message):
    __slots__ = ("kinds", "tags", "workspace_id", "wing", "room", "review_statuses", "author_id", "created_before", "created_after")
    KINDS_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    WING_FIELD_NUMBER: _ClassVar[int]
    ROOM_FIELD_NUMBER: _ClassVar[int]
    REVIEW_STATUSES_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    kinds: _containers.RepeatedScalarFieldContainer[str]
    tags: _containers.RepeatedScalarFieldContainer[str]
    workspace_id: str
    wing: str
    room: str
    review_statuses: _containers.RepeatedScalarFieldContainer[str]
    author_id: str
    created_before: _timestamp_pb2.Timestamp
    created_after: _timestamp_pb2.Timestamp
    def __init__(self, kinds: _Optional[_Iterable[str]] = ..., tags: _Optional[_Iterable[str]] = ..., workspace_id: _Optional[str] = ..., wing: _Optional[str] = ..., room: _Optional[str] = ..., review_statuses: _Optional[_Iterable[str]] = ..., author_id: _Optional[str] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class BulkRequest(_message.Message):
    __slots__ = ("action", "filter", "dry_run", "limit", "reason")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    action: str
    filter: BulkFilter
    dry_run: bool
    limit: int
    reason: str
    def __init__(self, action: _Optional[str] = ..., filter: _Optional[_Union[BulkFilter, _Mapping]] = ..., dry_run: _Optional[bool] = ..., limit: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class BulkSkip(_message.Message):
    __slots__ = ("id", "code", "detail")
    ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    id: str
    code: str
    detail: str
    def __init__(self, id: _Optional[str] = ..., code: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class BulkResponse(_message.Message):
    __slots__ = ("action", "dry_run", "matched", "affected", "skipped", "truncated")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    MATCHED_FIELD_NUMBER: _ClassVar[int]
    AFFECTED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    action: str
    dry_run: bool
    matched: int
    affected: _containers.RepeatedScalarFieldContainer[str]
    skipped: _containers.RepeatedCompositeFieldContainer[BulkSkip]
    truncated: bool
    def __init__(self, action: _Optional[str] = ..., dry_run: _Optional[bool] = ..., matched: _Optional[int] = ..., affected: _Optional[_Iterable[str]] = ..., skipped: _Optional[_Iterable[_Union[BulkSkip, _Mapping]]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class FeedbackRequest(_message.Message):
    __slots__ = ("item_id", "verdict", "recall_id")
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    RECALL_ID_FIELD_NUMBER: _ClassVar[int]
    item_id: str
    verdict: str
    recall_id: str
    def __init__(self, item_id: _Optional[str] = ..., verdict: _Optional[str] = ..., recall_id: _Optional[str] = ...) -> None: ...

class FeedbackResponse(_message.Message):
    __slots__ = ("item_id", "verdict", "previous", "importance")
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    item_id: str
    verdict: str
    previous: str
    importance: float
    def __init__(self, item_id: _Optional[str] = ..., verdict: _Optional[str] = ..., previous: _Optional[str] = ..., importance: _Optional[float] = ...) -> None: ...

class InvalidateRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ReviewRequest(_message.Message):
    __slots__ = ("id", "action", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    action: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., action: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class VerifyRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ItemResponse(_message.Message):
    __slots__ = ("item",)
    ITEM_FIELD_NUMBER: _ClassVar[int]
    item: _memory_pb2.MemoryItem
    def __init__(self, item: _Optional[_Union[_memory_pb2.MemoryItem, _Mapping]] = ...) -> None: ...

class RememberRequest(_message.Message):
    __slots__ = ("content", "kind", "importance", "tags", "subject", "wing", "room", "pinned", "visibility", "source_type", "source_uri", "source_session", "valid_from", "valid_to", "expires_at", "external_id", "metadata", "workspace_id", "supersedes", "idempotency")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    WING_FIELD_NUMBER: _ClassVar[int]
    ROOM_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URI_FIELD_NUMBER: _ClassVar[int]
    SOURCE_SESSION_FIELD_NUMBER: _ClassVar[int]
    VALID_FROM_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDES_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_FIELD_NUMBER: _ClassVar[int]
    content: str
    kind: str
    importance: float
    tags: _containers.RepeatedScalarFieldContainer[str]
    subject: str
    wing: str
    room: str
    pinned: bool
    visibility: str
    source_type: str
    source_uri: str
    source_session: str
    valid_from: _timestamp_pb2.Timestamp
    valid_to: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    external_id: str
    metadata: _struct_pb2.Struct
    workspace_id: str
    supersedes: _containers.RepeatedScalarFieldContainer[str]
    idempotency: IdempotencyKey
    def __init__(self, content: _Optional[str] = ..., kind: _Optional[str] = ..., importance: _Optional[float] = ..., tags: _Optional[_Iterable[str]] = ..., subject: _Optional[str] = ..., wing: _Optional[str] = ..., room: _Optional[str] = ..., pinned: _Optional[bool] = ..., visibility: _Optional[str] = ..., source_type: _Optional[str] = ..., source_uri: _Optional[str] = ..., source_session: _Optional[str] = ..., valid_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., external_id: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., workspace_id: _Optional[str] = ..., supersedes: _Optional[_Iterable[str]] = ..., idempotency: _Optional[_Union[IdempotencyKey, _Mapping]] = ...) -> None: ...

class IdempotencyKey(_message.Message):
    __slots__ = ("key", "request_hash")
    KEY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_HASH_FIELD_NUMBER: _ClassVar[int]
    key: str
    request_hash: bytes
    def __init__(self, key: _Optional[str] = ..., request_hash: _Optional[bytes] = ...) -> None: ...

class BatchEntry(_message.Message):
    __slots__ = ("index", "memory")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    index: int
    memory: RememberRequest
    def __init__(self, index: _Optional[int] = ..., memory: _Optional[_Union[RememberRequest, _Mapping]] = ...) -> None: ...

class RememberBatchRequest(_message.Message):
    __slots__ = ("items", "idempotency")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[BatchEntry]
    idempotency: IdempotencyKey
    def __init__(self, items: _Optional[_Iterable[_Union[BatchEntry, _Mapping]]] = ..., idempotency: _Optional[_Union[IdempotencyKey, _Mapping]] = ...) -> None: ...

class ItemError(_message.Message):
    __slots__ = ("error_class", "code", "detail", "field")
    ERROR_CLASS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    error_class: str
    code: str
    detail: str
    field: str
    def __init__(self, error_class: _Optional[str] = ..., code: _Optional[str] = ..., detail: _Optional[str] = ..., field: _Optional[str] = ...) -> None: ...

class BatchResult(_message.Message):
    __slots__ = ("index", "answer", "error")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    index: int
    answer: RememberResponse
    error: ItemError
    def __init__(self, index: _Optional[int] = ..., answer: _Optional[_Union[RememberResponse, _Mapping]] = ..., error: _Optional[_Union[ItemError, _Mapping]] = ...) -> None: ...

class RememberBatchResponse(_message.Message):
    __slots__ = ("results", "replayed")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[BatchResult]
    replayed: bool
    def __init__(self, results: _Optional[_Iterable[_Union[BatchResult, _Mapping]]] = ..., replayed: _Optional[bool] = ...) -> None: ...

class ObserveRequest(_message.Message):
    __slots__ = ("content", "source_session", "workspace_id", "tags", "metadata", "source_uri", "expires_at", "idempotency")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_SESSION_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URI_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_FIELD_NUMBER: _ClassVar[int]
    content: str
    source_session: str
    workspace_id: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    metadata: _struct_pb2.Struct
    source_uri: str
    expires_at: _timestamp_pb2.Timestamp
    idempotency: IdempotencyKey
    def __init__(self, content: _Optional[str] = ..., source_session: _Optional[str] = ..., workspace_id: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., source_uri: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., idempotency: _Optional[_Union[IdempotencyKey, _Mapping]] = ...) -> None: ...

class ObserveResponse(_message.Message):
    __slots__ = ("id", "status", "expires_at", "replayed")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    id: str
    status: str
    expires_at: _timestamp_pb2.Timestamp
    replayed: bool
    def __init__(self, id: _Optional[str] = ..., status: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., replayed: _Optional[bool] = ...) -> None: ...

class PatchRequest(_message.Message):
    __slots__ = ("id", "fields", "tags", "importance", "pinned", "visibility", "subject", "valid_to")
    ID_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    id: str
    fields: _containers.RepeatedScalarFieldContainer[str]
    tags: _containers.RepeatedScalarFieldContainer[str]
    importance: float
    pinned: bool
    visibility: str
    subject: str
    valid_to: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., fields: _Optional[_Iterable[str]] = ..., tags: _Optional[_Iterable[str]] = ..., importance: _Optional[float] = ..., pinned: _Optional[bool] = ..., visibility: _Optional[str] = ..., subject: _Optional[str] = ..., valid_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PossibleSupersede(_message.Message):
    __slots__ = ("id", "similarity", "preview")
    ID_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    id: str
    similarity: float
    preview: str
    def __init__(self, id: _Optional[str] = ..., similarity: _Optional[float] = ..., preview: _Optional[str] = ...) -> None: ...

class RememberResponse(_message.Message):
    __slots__ = ("id", "status", "review_status", "authority", "item", "possible_supersedes", "superseded", "replayed")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REVIEW_STATUS_FIELD_NUMBER: _ClassVar[int]
    AUTHORITY_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    POSSIBLE_SUPERSEDES_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    id: str
    status: str
    review_status: str
    authority: int
    item: _memory_pb2.MemoryItem
    possible_supersedes: _containers.RepeatedCompositeFieldContainer[PossibleSupersede]
    superseded: _containers.RepeatedScalarFieldContainer[str]
    replayed: bool
    def __init__(self, id: _Optional[str] = ..., status: _Optional[str] = ..., review_status: _Optional[str] = ..., authority: _Optional[int] = ..., item: _Optional[_Union[_memory_pb2.MemoryItem, _Mapping]] = ..., possible_supersedes: _Optional[_Iterable[_Union[PossibleSupersede, _Mapping]]] = ..., superseded: _Optional[_Iterable[str]] = ..., replayed: _Optional[bool] = ...) -> None: ...
