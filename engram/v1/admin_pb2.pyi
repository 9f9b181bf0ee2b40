import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreatedResponse(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class CreateTenantRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class CreateWorkspaceRequest(_message.Message):
    __slots__ = ("tenant_id", "name")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    name: str
    def __init__(self, tenant_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class AddMemberRequest(_message.Message):
    __slots__ = ("tenant_id", "workspace_id", "principal_id", "role")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    workspace_id: str
    principal_id: str
    role: str
    def __init__(self, tenant_id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., role: _Optional[str] = ...) -> None: ...

class AddMemberResponse(_message.Message):
    __slots__ = ("workspace_id", "principal_id", "role")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    principal_id: str
    role: str
    def __init__(self, workspace_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., role: _Optional[str] = ...) -> None: ...

class CreatePrincipalRequest(_message.Message):
    __slots__ = ("tenant_id", "name", "type", "trusted")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TRUSTED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    name: str
    type: str
    trusted: bool
    def __init__(self, tenant_id: _Optional[str] = ..., name: _Optional[str] = ..., type: _Optional[str] = ..., trusted: _Optional[bool] = ...) -> None: ...

class CreateApiKeyRequest(_message.Message):
    __slots__ = ("tenant_id", "principal_id", "scopes", "label")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    principal_id: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    label: str
    def __init__(self, tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., label: _Optional[str] = ...) -> None: ...

class CreateApiKeyResponse(_message.Message):
    __slots__ = ("id", "key", "tenant_id", "principal_id", "scopes", "label")
    ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    id: str
    key: str
    tenant_id: str
    principal_id: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    label: str
    def __init__(self, id: _Optional[str] = ..., key: _Optional[str] = ..., tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., label: _Optional[str] = ...) -> None: ...

class ListApiKeysRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ApiKey(_message.Message):
    __slots__ = ("id", "principal_id", "scopes", "label", "created_at", "revoked_at", "last_used_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    principal_id: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    label: str
    created_at: _timestamp_pb2.Timestamp
    revoked_at: _timestamp_pb2.Timestamp
    last_used_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., principal_id: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., label: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., revoked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_used_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListApiKeysResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[ApiKey]
    def __init__(self, items: _Optional[_Iterable[_Union[ApiKey, _Mapping]]] = ...) -> None: ...

class RevokeApiKeyRequest(_message.Message):
    __slots__ = ("tenant_id", "id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    id: str
    def __init__(self, tenant_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class RevokeApiKeyResponse(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetTenantConfigRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class RouteLimits(_message.Message):
    __slots__ = ("per_minute",)
    class PerMinuteEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    PER_MINUTE_FIELD_NUMBER: _ClassVar[int]
    per_minute: _containers.ScalarMap[str, int]
    def __init__(self, per_minute: _Optional[_Mapping[str, int]] = ...) -> None: ...

class PatchTenantConfigRequest(_message.Message):
    __slots__ = ("tenant_id", "rate_limits", "public_enabled", "feedback_daily_limit", "ttl_days_json", "secret_policy", "promotion_json", "recall_json", "placement_rules_json", "trash_retention_days")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITS_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_ENABLED_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_DAILY_LIMIT_FIELD_NUMBER: _ClassVar[int]
    TTL_DAYS_JSON_FIELD_NUMBER: _ClassVar[int]
    SECRET_POLICY_FIELD_NUMBER: _ClassVar[int]
    PROMOTION_JSON_FIELD_NUMBER: _ClassVar[int]
    RECALL_JSON_FIELD_NUMBER: _ClassVar[int]
    PLACEMENT_RULES_JSON_FIELD_NUMBER: _ClassVar[int]
    TRASH_RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    rate_limits: RouteLimits
    public_enabled: bool
    feedback_daily_limit: int
    ttl_days_json: str
    secret_policy: str
    promotion_json: str
    recall_json: str
    placement_rules_json: str
    trash_retention_days: int
    def __init__(self, tenant_id: _Optional[str] = ..., rate_limits: _Optional[_Union[RouteLimits, _Mapping]] = ..., public_enabled: _Optional[bool] = ..., feedback_daily_limit: _Optional[int] = ..., ttl_days_json: _Optional[str] = ..., secret_policy: _Optional[str] = ..., promotion_json: _Optional[str] = ..., recall_json: _Optional[str] = ..., placement_rules_json: _Optional[str] = ..., trash_retention_days: _Optional[int] = ...) -> None: ...

class TenantConfigResponse(_message.Message):
    __slots__ = ("tenant_id", "config_json", "version", "public_enabled")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_ENABLED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    config_json: str
    version: int
    public_enabled: bool
    def __init__(self, tenant_id: _Optional[str] = ..., config_json: _Optional[str] = ..., version: _Optional[int] = ..., public_enabled: _Optional[bool] = ...) -> None: ...

class Kind(_message.Message):
    __slots__ = ("name", "singleton", "requires_review", "stays_in_recall_when_disputed", "default_importance", "enabled", "built_in")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SINGLETON_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_REVIEW_FIELD_NUMBER: _ClassVar[int]
    STAYS_IN_RECALL_WHEN_DISPUTED_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    BUILT_IN_FIELD_NUMBER: _ClassVar[int]
    name: str
    singleton: bool
    requires_review: bool
    stays_in_recall_when_disputed: bool
    default_importance: float
    enabled: bool
    built_in: bool
    def __init__(self, name: _Optional[str] = ..., singleton: _Optional[bool] = ..., requires_review: _Optional[bool] = ..., stays_in_recall_when_disputed: _Optional[bool] = ..., default_importance: _Optional[float] = ..., enabled: _Optional[bool] = ..., built_in: _Optional[bool] = ...) -> None: ...

class ListKindsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ListKindsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Kind]
    def __init__(self, items: _Optional[_Iterable[_Union[Kind, _Mapping]]] = ...) -> None: ...

class CreateKindRequest(_message.Message):
    __slots__ = ("tenant_id", "name", "singleton", "requires_review", "stays_in_recall_when_disputed", "default_importance")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SINGLETON_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_REVIEW_FIELD_NUMBER: _ClassVar[int]
    STAYS_IN_RECALL_WHEN_DISPUTED_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    name: str
    singleton: bool
    requires_review: bool
    stays_in_recall_when_disputed: bool
    default_importance: float
    def __init__(self, tenant_id: _Optional[str] = ..., name: _Optional[str] = ..., singleton: _Optional[bool] = ..., requires_review: _Optional[bool] = ..., stays_in_recall_when_disputed: _Optional[bool] = ..., default_importance: _Optional[float] = ...) -> None: ...

class PatchKindRequest(_message.Message):
    __slots__ = ("tenant_id", "name", "singleton", "requires_review", "stays_in_recall_when_disputed", "default_importance", "enabled")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SINGLETON_FIELD_NUMBER: _ClassVar[int]
    REQUIRES_REVIEW_FIELD_NUMBER: _ClassVar[int]
    STAYS_IN_RECALL_WHEN_DISPUTED_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    name: str
    singleton: bool
    requires_review: bool
    stays_in_recall_when_disputed: bool
    default_importance: float
    enabled: bool
    def __init__(self, tenant_id: _Optional[str] = ..., name: _Optional[str] = ..., singleton: _Optional[bool] = ..., requires_review: _Optional[bool] = ..., stays_in_recall_when_disputed: _Optional[bool] = ..., default_importance: _Optional[float] = ..., enabled: _Optional[bool] = ...) -> None: ...

class PromoteRequest(_message.Message):
    __slots__ = ("tenant_id", "dry_run", "limit")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    dry_run: bool
    limit: int
    def __init__(self, tenant_id: _Optional[str] = ..., dry_run: _Optional[bool] = ..., limit: _Optional[int] = ...) -> None: ...

class PromoteResponse(_message.Message):
    __slots__ = ("tenant_id", "dry_run", "decided", "counts")
    class CountsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    DECIDED_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    dry_run: bool
    decided: int
    counts: _containers.ScalarMap[str, int]
    def __init__(self, tenant_id: _Optional[str] = ..., dry_run: _Optional[bool] = ..., decided: _Optional[int] = ..., counts: _Optional[_Mapping[str, int]] = ...) -> None: ...

class Tunnel(_message.Message):
    __slots__ = ("id", "from_wing", "from_room", "to_wing", "to_room", "created_by", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    FROM_WING_FIELD_NUMBER: _ClassVar[int]
    FROM_ROOM_FIELD_NUMBER: _ClassVar[int]
    TO_WING_FIELD_NUMBER: _ClassVar[int]
    TO_ROOM_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    from_wing: str
    from_room: str
    to_wing: str
    to_room: str
    created_by: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., from_wing: _Optional[str] = ..., from_room: _Optional[str] = ..., to_wing: _Optional[str] = ..., to_room: _Optional[str] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AddTunnelRequest(_message.Message):
    __slots__ = ("tenant_id", "from_wing", "from_room", "to_wing", "to_room")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_WING_FIELD_NUMBER: _ClassVar[int]
    FROM_ROOM_FIELD_NUMBER: _ClassVar[int]
    TO_WING_FIELD_NUMBER: _ClassVar[int]
    TO_ROOM_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    from_wing: str
    from_room: str
    to_wing: str
    to_room: str
    def __init__(self, tenant_id: _Optional[str] = ..., from_wing: _Optional[str] = ..., from_room: _Optional[str] = ..., to_wing: _Optional[str] = ..., to_room: _Optional[str] = ...) -> None: ...

class AddTunnelResponse(_message.Message):
    __slots__ = ("tunnel", "created")
    TUNNEL_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    tunnel: Tunnel
    created: bool
    def __init__(self, tunnel: _Optional[_Union[Tunnel, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class ListTunnelsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ListTunnelsResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Tunnel]
    def __init__(self, items: _Optional[_Iterable[_Union[Tunnel, _Mapping]]] = ...) -> None: ...

class RemoveTunnelRequest(_message.Message):
    __slots__ = ("tenant_id", "id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    id: str
    def __init__(self, tenant_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class RemoveTunnelResponse(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class RateLimitsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RateLimitsResponse(_message.Message):
    __slots__ = ("limits",)
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    limits: RouteLimits
    def __init__(self, limits: _Optional[_Union[RouteLimits, _Mapping]] = ...) -> None: ...
