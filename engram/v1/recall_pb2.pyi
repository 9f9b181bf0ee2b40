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
    __slots__ = ("mode", "query", "filters", "item_budget", "byte_budget", "token_budget", "include_superseded")
    MODE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    ITEM_BUDGET_FIELD_NUMBER: _ClassVar[int]
    BYTE_BUDGET_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    mode: str
    query: str
    filters: _memory_pb2.RecallFilters
    item_budget: int
    byte_budget: int
    token_budget: int
    include_superseded: bool
    def __init__(self, mode: _Optional[str] = ..., query: _Optional[str] = ..., filters: _Optional[_Union[_memory_pb2.RecallFilters, _Mapping]] = ..., item_budget: _Optional[int] = ..., byte_budget: _Optional[int] = ..., token_budget: _Optional[int] = ..., include_superseded: _Optional[bool] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("items", "scoring_version", "recall_id", "omitted", "mode")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    SCORING_VERSION_FIELD_NUMBER: _ClassVar[int]
    RECALL_ID_FIELD_NUMBER: _ClassVar[int]
    OMITTED_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[_memory_pb2.RecalledItem]
    scoring_version: str
    recall_id: str
    omitted: int
    mode: str
    def __init__(self, items: _Optional[_Iterable[_Union[_memory_pb2.RecalledItem, _Mapping]]] = ..., scoring_version: _Optional[str] = ..., recall_id: _Optional[str] = ..., omitted: _Optional[int] = ..., mode: _Optional[str] = ...) -> None: ...

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
