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

class ListItemsRequest(_message.Message):
    __slots__ = ("kinds", "review_statuses", "workspace_id", "author_id", "tag", "subject", "created_after", "created_before", "valid_start", "valid_end", "include_superseded", "sort", "limit", "cursor")
    KINDS_FIELD_NUMBER: _ClassVar[int]
    REVIEW_STATUSES_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_ID_FIELD_NUMBER: _ClassVar[int]
    TAG_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    VALID_START_FIELD_NUMBER: _ClassVar[int]
    VALID_END_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    SORT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    kinds: _containers.RepeatedScalarFieldContainer[str]
    review_statuses: _containers.RepeatedScalarFieldContainer[str]
    workspace_id: str
    author_id: str
    tag: str
    subject: str
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    valid_start: _timestamp_pb2.Timestamp
    valid_end: _timestamp_pb2.Timestamp
    include_superseded: bool
    sort: str
    limit: int
    cursor: str
    def __init__(self, kinds: _Optional[_Iterable[str]] = ..., review_statuses: _Optional[_Iterable[str]] = ..., workspace_id: _Optional[str] = ..., author_id: _Optional[str] = ..., tag: _Optional[str] = ..., subject: _Optional[str] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., include_superseded: _Optional[bool] = ..., sort: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListItemsResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[_memory_pb2.MemoryItem]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[_memory_pb2.MemoryItem, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStatsResponse(_message.Message):
    __slots__ = ("total", "by_review_status", "by_kind", "proposed", "disputed", "oldest_proposed_at", "open_conflicts", "pending_stages", "failed_stages", "expiring_within_7d", "trash", "superseded", "invalidated")
    class ByReviewStatusEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class ByKindEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class PendingStagesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class FailedStagesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    BY_REVIEW_STATUS_FIELD_NUMBER: _ClassVar[int]
    BY_KIND_FIELD_NUMBER: _ClassVar[int]
    PROPOSED_FIELD_NUMBER: _ClassVar[int]
    DISPUTED_FIELD_NUMBER: _ClassVar[int]
    OLDEST_PROPOSED_AT_FIELD_NUMBER: _ClassVar[int]
    OPEN_CONFLICTS_FIELD_NUMBER: _ClassVar[int]
    PENDING_STAGES_FIELD_NUMBER: _ClassVar[int]
    FAILED_STAGES_FIELD_NUMBER: _ClassVar[int]
    EXPIRING_WITHIN_7D_FIELD_NUMBER: _ClassVar[int]
    TRASH_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    INVALIDATED_FIELD_NUMBER: _ClassVar[int]
    total: int
    by_review_status: _containers.ScalarMap[str, int]
    by_kind: _containers.ScalarMap[str, int]
    proposed: int
    disputed: int
    oldest_proposed_at: _timestamp_pb2.Timestamp
    open_conflicts: int
    pending_stages: _containers.ScalarMap[str, int]
    failed_stages: _containers.ScalarMap[str, int]
    expiring_within_7d: int
    trash: int
    superseded: int
    invalidated: int
    def __init__(self, total: _Optional[int] = ..., by_review_status: _Optional[_Mapping[str, int]] = ..., by_kind: _Optional[_Mapping[str, int]] = ..., proposed: _Optional[int] = ..., disputed: _Optional[int] = ..., oldest_proposed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., open_conflicts: _Optional[int] = ..., pending_stages: _Optional[_Mapping[str, int]] = ..., failed_stages: _Optional[_Mapping[str, int]] = ..., expiring_within_7d: _Optional[int] = ..., trash: _Optional[int] = ..., superseded: _Optional[int] = ..., invalidated: _Optional[int] = ...) -> None: ...

class ListEdgesResponse(_message.Message):
    __slots__ = ("id", "edges")
    ID_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    id: str
    edges: _containers.RepeatedCompositeFieldContainer[_memory_pb2.Edge]
    def __init__(self, id: _Optional[str] = ..., edges: _Optional[_Iterable[_Union[_memory_pb2.Edge, _Mapping]]] = ...) -> None: ...

class PromotionBlocker(_message.Message):
    __slots__ = ("code", "detail")
    CODE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    code: str
    detail: str
    def __init__(self, code: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class PromotionReadinessResponse(_message.Message):
    __slots__ = ("id", "review_status", "ready", "blockers", "gates")
    ID_FIELD_NUMBER: _ClassVar[int]
    REVIEW_STATUS_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    BLOCKERS_FIELD_NUMBER: _ClassVar[int]
    GATES_FIELD_NUMBER: _ClassVar[int]
    id: str
    review_status: str
    ready: bool
    blockers: _containers.RepeatedCompositeFieldContainer[PromotionBlocker]
    gates: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., review_status: _Optional[str] = ..., ready: _Optional[bool] = ..., blockers: _Optional[_Iterable[_Union[PromotionBlocker, _Mapping]]] = ..., gates: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ListConflictsRequest(_message.Message):
    __slots__ = ("status", "type", "item_id", "limit", "cursor")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    status: str
    type: str
    item_id: str
    limit: int
    cursor: str
    def __init__(self, status: _Optional[str] = ..., type: _Optional[str] = ..., item_id: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListConflictsResponse(_message.Message):
    __slots__ = ("conflicts", "next_cursor")
    CONFLICTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    conflicts: _containers.RepeatedCompositeFieldContainer[_memory_pb2.Conflict]
    next_cursor: str
    def __init__(self, conflicts: _Optional[_Iterable[_Union[_memory_pb2.Conflict, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ListTrashRequest(_message.Message):
    __slots__ = ("limit", "cursor")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    limit: int
    cursor: str
    def __init__(self, limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class TrashEntry(_message.Message):
    __slots__ = ("id", "item_id", "kind", "workspace_id", "author_id", "visibility", "review_status", "invalidated", "reason", "deleted_by", "deleted_at", "purge_after", "preview")
    ID_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_ID_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    REVIEW_STATUS_FIELD_NUMBER: _ClassVar[int]
    INVALIDATED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DELETED_BY_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    PURGE_AFTER_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    id: str
    item_id: str
    kind: str
    workspace_id: str
    author_id: str
    visibility: str
    review_status: str
    invalidated: bool
    reason: str
    deleted_by: str
    deleted_at: _timestamp_pb2.Timestamp
    purge_after: _timestamp_pb2.Timestamp
    preview: str
    def __init__(self, id: _Optional[str] = ..., item_id: _Optional[str] = ..., kind: _Optional[str] = ..., workspace_id: _Optional[str] = ..., author_id: _Optional[str] = ..., visibility: _Optional[str] = ..., review_status: _Optional[str] = ..., invalidated: _Optional[bool] = ..., reason: _Optional[str] = ..., deleted_by: _Optional[str] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., purge_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., preview: _Optional[str] = ...) -> None: ...

class ListTrashResponse(_message.Message):
    __slots__ = ("entries", "next_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[TrashEntry]
    next_cursor: str
    def __init__(self, entries: _Optional[_Iterable[_Union[TrashEntry, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ExpiryCandidatesRequest(_message.Message):
    __slots__ = ("within_days", "limit", "workspace_id")
    WITHIN_DAYS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    within_days: int
    limit: int
    workspace_id: str
    def __init__(self, within_days: _Optional[int] = ..., limit: _Optional[int] = ..., workspace_id: _Optional[str] = ...) -> None: ...

class ExpiryCandidatesResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[_memory_pb2.MemoryItem]
    def __init__(self, items: _Optional[_Iterable[_Union[_memory_pb2.MemoryItem, _Mapping]]] = ...) -> None: ...

class GetEventsRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ItemEvent(_message.Message):
    __slots__ = ("id", "action", "actor_id", "old_value", "new_value", "reason", "request_id", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    OLD_VALUE_FIELD_NUMBER: _ClassVar[int]
    NEW_VALUE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: int
    action: str
    actor_id: str
    old_value: _struct_pb2.Struct
    new_value: _struct_pb2.Struct
    reason: str
    request_id: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[int] = ..., action: _Optional[str] = ..., actor_id: _Optional[str] = ..., old_value: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., new_value: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., reason: _Optional[str] = ..., request_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetEventsResponse(_message.Message):
    __slots__ = ("id", "events")
    ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    id: str
    events: _containers.RepeatedCompositeFieldContainer[ItemEvent]
    def __init__(self, id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[ItemEvent, _Mapping]]] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("mode", "query", "filters", "item_budget", "byte_budget", "token_budget", "include_superseded", "explain")
    MODE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    ITEM_BUDGET_FIELD_NUMBER: _ClassVar[int]
    BYTE_BUDGET_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    mode: str
    query: str
    filters: _memory_pb2.RecallFilters
    item_budget: int
    byte_budget: int
    token_budget: int
    include_superseded: bool
    explain: bool
    def __init__(self, mode: _Optional[str] = ..., query: _Optional[str] = ..., filters: _Optional[_Union[_memory_pb2.RecallFilters, _Mapping]] = ..., item_budget: _Optional[int] = ..., byte_budget: _Optional[int] = ..., token_budget: _Optional[int] = ..., include_superseded: _Optional[bool] = ..., explain: _Optional[bool] = ...) -> None: ...

class CutItem(_message.Message):
    __slots__ = ("item", "reason")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    item: _memory_pb2.RecalledItem
    reason: str
    def __init__(self, item: _Optional[_Union[_memory_pb2.RecalledItem, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("items", "scoring_version", "recall_id", "omitted", "mode", "cut")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    SCORING_VERSION_FIELD_NUMBER: _ClassVar[int]
    RECALL_ID_FIELD_NUMBER: _ClassVar[int]
    OMITTED_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    CUT_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[_memory_pb2.RecalledItem]
    scoring_version: str
    recall_id: str
    omitted: int
    mode: str
    cut: _containers.RepeatedCompositeFieldContainer[CutItem]
    def __init__(self, items: _Optional[_Iterable[_Union[_memory_pb2.RecalledItem, _Mapping]]] = ..., scoring_version: _Optional[str] = ..., recall_id: _Optional[str] = ..., omitted: _Optional[int] = ..., mode: _Optional[str] = ..., cut: _Optional[_Iterable[_Union[CutItem, _Mapping]]] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("query", "mode", "filters", "limit")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    query: str
    mode: str
    filters: _memory_pb2.RecallFilters
    limit: int
    def __init__(self, query: _Optional[str] = ..., mode: _Optional[str] = ..., filters: _Optional[_Union[_memory_pb2.RecallFilters, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("items", "mode")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[_memory_pb2.RecalledItem]
    mode: str
    def __init__(self, items: _Optional[_Iterable[_Union[_memory_pb2.RecalledItem, _Mapping]]] = ..., mode: _Optional[str] = ...) -> None: ...

class GetItemRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetItemResponse(_message.Message):
    __slots__ = ("item",)
    ITEM_FIELD_NUMBER: _ClassVar[int]
    item: _memory_pb2.MemoryItem
    def __init__(self, item: _Optional[_Union[_memory_pb2.MemoryItem, _Mapping]] = ...) -> None: ...

class GetStatusRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class Stage(_message.Message):
    __slots__ = ("name", "status", "detail", "updated_at")
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    name: str
    status: str
    detail: str
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., status: _Optional[str] = ..., detail: _Optional[str] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("id", "review_status", "stages")
    ID_FIELD_NUMBER: _ClassVar[int]
    REVIEW_STATUS_FIELD_NUMBER: _ClassVar[int]
    STAGES_FIELD_NUMBER: _ClassVar[int]
    id: str
    review_status: str
    stages: _containers.RepeatedCompositeFieldContainer[Stage]
    def __init__(self, id: _Optional[str] = ..., review_status: _Optional[str] = ..., stages: _Optional[_Iterable[_Union[Stage, _Mapping]]] = ...) -> None: ...
