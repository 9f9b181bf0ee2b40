"""Every REST operation as a ``Call``: the method, path, query, body and answer model of one request. The sync
and the async client send the same calls, so a route is written once, here. The optional fields of each body
are a TypedDict: exactly the keys given are sent (``subject=None`` in ``patch`` clears the subject)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypedDict, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from engram_client import models as m

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    answer: type[T] | None  # None: 204, no body
    params: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    idempotent: bool = False
    """Safe to send again when the answer was lost or the server was unavailable (see ``retry``)."""


def jsonable(value: Any) -> Any:
    """``value`` with datetimes as ISO 8601 and models as dicts, ready for ``json.dumps``."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def _query(**params: Any) -> dict[str, Any]:
    """Query parameters: None left out, lists comma-joined, booleans and times as the API reads them."""
    out: dict[str, Any] = {}
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, list | tuple):
            value = ",".join(str(v) for v in value)
        out[name] = value
    return out


def _id(value: str) -> str:
    return quote(str(value), safe="")


def _idempotency(key: str | None) -> dict[str, str]:
    return {"Idempotency-Key": key} if key is not None else {}


# Bodies' optional fields


class MemoryFields(TypedDict, total=False):
    """The optional fields of ``remember`` (and ``supersede``); see ``RememberBody`` in the OpenAPI document."""

    kind: str
    importance: float
    tags: list[str]
    subject: str
    wing: str
    room: str
    pinned: bool
    visibility: str
    source_type: str
    source_uri: str
    source_session: str
    valid_from: datetime | str
    valid_to: datetime | str
    expires_at: datetime | str
    external_id: str
    metadata: dict[str, Any]
    workspace_id: str
    supersedes: list[str]


class RememberItem(MemoryFields, total=False):
    content: str


class ObserveFields(TypedDict, total=False):
    source_session: str
    workspace_id: str
    tags: list[str]
    metadata: dict[str, Any]
    source_uri: str
    expires_at: datetime | str


class Filters(TypedDict, total=False):
    """Recall and search filters."""

    as_of: datetime | str
    time_start: datetime | str
    time_end: datetime | str
    kinds: list[str]
    tags: list[str]
    workspace_id: str
    wing: str
    room: str


class RecallFields(Filters, total=False):
    mode: Literal["keyword", "semantic", "hybrid", "startup"]
    item_budget: int
    byte_budget: int
    token_budget: int
    include_superseded: bool
    explain: bool


class SearchFields(Filters, total=False):
    mode: Literal["keyword", "semantic", "hybrid"]
    limit: int


class PatchFields(TypedDict, total=False):
    tags: list[str]
    importance: float
    pinned: bool
    visibility: str
    subject: str | None
    valid_to: datetime | str | None


class ListFilters(TypedDict, total=False):
    """``GET /v1/items`` filters; a list is sent comma-joined."""

    kind: list[str] | str
    review_status: list[str] | str
    workspace_id: str
    author: str
    tag: str
    subject: str
    created_after: datetime | str
    created_before: datetime | str
    valid_start: datetime | str
    valid_end: datetime | str
    include_superseded: bool
    sort: Literal["-created_at", "created_at", "-importance"]


class BulkFilter(TypedDict, total=False):
    kinds: list[str]
    tags: list[str]
    workspace_id: str
    wing: str
    room: str
    review_status: list[str]
    author_id: str
    created_before: datetime | str
    created_after: datetime | str


class TenantConfigFields(TypedDict, total=False):
    rate_limits: dict[str, int]
    public_enabled: bool
    feedback_daily_limit: int
    ttl_days: dict[str, Any]
    secret_policy: Literal["reject", "redact"]
    promotion: dict[str, Any]
    recall: dict[str, Any]
    placement_rules: list[Any]
    trash_retention_days: int


class KindFields(TypedDict, total=False):
    singleton: bool
    requires_review: bool
    stays_in_recall_when_disputed: bool
    default_importance: float


class KindPatchFields(KindFields, total=False):
    enabled: bool


# Memories


def remember(content: str, idempotency_key: str | None, fields: MemoryFields) -> Call[m.Remembered]:
    return Call(
        "POST",
        "/v1/remember",
        m.Remembered,
        json=jsonable({"content": content, **fields}),
        headers=_idempotency(idempotency_key),
        # the same content again deduplicates, unless it replaces items (then the repeat answers 409 not_live)
        idempotent=idempotency_key is not None or not fields.get("supersedes"),
    )


def remember_batch(items: list[RememberItem], idempotency_key: str | None) -> Call[m.Batch]:
    return Call(
        "POST",
        "/v1/remember/batch",
        m.Batch,
        json=jsonable({"items": items}),
        headers=_idempotency(idempotency_key),
        # each item deduplicates like remember
        idempotent=idempotency_key is not None or not any(item.get("supersedes") for item in items),
    )


def observe(content: str, idempotency_key: str | None, fields: ObserveFields) -> Call[m.Observed]:
    return Call(
        "POST",
        "/v1/observe",
        m.Observed,
        json=jsonable({"content": content, **fields}),
        headers=_idempotency(idempotency_key),
        idempotent=True,  # the same content again deduplicates
    )


def supersede(item_id: str, content: str, fields: MemoryFields) -> Call[m.Remembered]:
    body = jsonable({"content": content, **fields})
    return Call("POST", f"/v1/items/{_id(item_id)}/supersede", m.Remembered, json=body)


def recall(query: str | None, fields: RecallFields) -> Call[m.Recall]:
    body = jsonable({"query": query, **fields} if query is not None else dict(fields))
    return Call("POST", "/v1/recall", m.Recall, json=body, idempotent=True)


def search(query: str, fields: SearchFields) -> Call[m.SearchResult]:
    return Call("POST", "/v1/search", m.SearchResult, json=jsonable({"query": query, **fields}), idempotent=True)


def get(item_id: str) -> Call[m.Item]:
    return Call("GET", f"/v1/items/{_id(item_id)}", m.Item, idempotent=True)


def status(item_id: str) -> Call[m.ItemStatus]:
    return Call("GET", f"/v1/items/{_id(item_id)}/status", m.ItemStatus, idempotent=True)


def events(item_id: str) -> Call[m.AuditTrail]:
    return Call("GET", f"/v1/items/{_id(item_id)}/events", m.AuditTrail, idempotent=True)


def promotion_readiness(item_id: str) -> Call[m.Readiness]:
    return Call("GET", f"/v1/items/{_id(item_id)}/promotion-readiness", m.Readiness, idempotent=True)


def list_items(filters: ListFilters, limit: int | None, cursor: str | None) -> Call[m.Page[m.Item]]:
    params = _query(**filters, limit=limit, cursor=cursor)
    return Call("GET", "/v1/items", m.Page[m.Item], params=params, idempotent=True)


def stats() -> Call[m.Stats]:
    return Call("GET", "/v1/stats", m.Stats, idempotent=True)


def patch(item_id: str, fields: PatchFields) -> Call[m.Item]:
    # the same changes again change nothing
    return Call("PATCH", f"/v1/items/{_id(item_id)}", m.Item, json=jsonable(dict(fields)), idempotent=True)


def review(item_id: str, action: str, reason: str) -> Call[m.Item]:
    body = {"action": action, "reason": reason}
    return Call("POST", f"/v1/items/{_id(item_id)}/review", m.Item, json=body)


def verify(item_id: str, reason: str) -> Call[m.Item]:
    return Call("POST", f"/v1/items/{_id(item_id)}/verify", m.Item, json={"reason": reason}, idempotent=True)


def invalidate(item_id: str, reason: str) -> Call[m.Item]:
    return Call("POST", f"/v1/items/{_id(item_id)}/invalidate", m.Item, json={"reason": reason})


def delete(item_id: str, reason: str) -> Call[m.Deleted]:
    return Call("DELETE", f"/v1/items/{_id(item_id)}", m.Deleted, params=_query(reason=reason or None))


def trash(limit: int | None, cursor: str | None) -> Call[m.Page[m.TrashEntry]]:
    params = _query(limit=limit, cursor=cursor)
    return Call("GET", "/v1/trash", m.Page[m.TrashEntry], params=params, idempotent=True)


def restore(trash_id: str) -> Call[m.Item]:
    return Call("POST", f"/v1/trash/{_id(trash_id)}/restore", m.Item)


def bulk(action: str, filter: BulkFilter, dry_run: bool, limit: int, reason: str) -> Call[m.BulkResult]:
    body = jsonable({"action": action, "filter": filter, "dry_run": dry_run, "limit": limit, "reason": reason})
    return Call("POST", "/v1/items/bulk", m.BulkResult, json=body, idempotent=dry_run)


def expiry_candidates(within_days: int, limit: int, workspace_id: str | None) -> Call[m.Items]:
    params = _query(within_days=within_days, limit=limit, workspace_id=workspace_id)
    return Call("GET", "/v1/items/expiry-candidates", m.Items, params=params, idempotent=True)


def feedback(item_id: str, verdict: str, recall_id: str | None) -> Call[m.FeedbackResult]:
    body: dict[str, Any] = {"item_id": item_id, "verdict": verdict}
    if recall_id is not None:
        body["recall_id"] = recall_id
    # the caller's current verdict again writes nothing
    return Call("POST", "/v1/feedback", m.FeedbackResult, json=body, idempotent=True)


def classify(content: str) -> Call[m.Classification]:
    return Call("POST", "/v1/classify", m.Classification, json={"content": content}, idempotent=True)


def conflicts(
    status: str | None, type: str | None, item_id: str | None, limit: int | None, cursor: str | None
) -> Call[m.Page[m.MemoryConflict]]:
    # status "" lists both open and resolved ones; None leaves the server's default (open)
    params = _query(status=status, type=type, item_id=item_id, limit=limit, cursor=cursor)
    return Call("GET", "/v1/conflicts", m.Page[m.MemoryConflict], params=params, idempotent=True)


def resolve_conflict(conflict_id: str, resolution: str, reason: str, content: str | None) -> Call[m.Resolved]:
    body: dict[str, Any] = {"resolution": resolution, "reason": reason}
    if content is not None:
        body["content"] = content
    return Call("POST", f"/v1/conflicts/{_id(conflict_id)}/resolve", m.Resolved, json=body)


def edges(item_id: str) -> Call[m.Edges]:
    return Call("GET", f"/v1/items/{_id(item_id)}/edges", m.Edges, idempotent=True)


def link(src_id: str, dst_id: str, type: str) -> Call[m.Edge]:
    body = {"src_id": src_id, "dst_id": dst_id, "type": type}
    return Call("POST", "/v1/edges", m.Edge, json=body, idempotent=True)  # an existing link answers 200


def unlink(edge_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/edges/{_id(edge_id)}", None)


# The admin API


def _tenant(tenant_id: str | None) -> dict[str, Any]:
    return {"tenant_id": tenant_id} if tenant_id is not None else {}


def admin_create_tenant(name: str) -> Call[m.Created]:
    return Call("POST", "/v1/admin/tenants", m.Created, json={"name": name})


def admin_create_workspace(name: str, tenant_id: str | None) -> Call[m.Created]:
    return Call("POST", "/v1/admin/workspaces", m.Created, json={"name": name, **_tenant(tenant_id)})


def admin_add_member(workspace_id: str, principal_id: str, role: str, tenant_id: str | None) -> Call[m.Membership]:
    body = {"principal_id": principal_id, "role": role, **_tenant(tenant_id)}
    return Call("POST", f"/v1/admin/workspaces/{_id(workspace_id)}/members", m.Membership, json=body, idempotent=True)


def admin_create_principal(name: str, type: str, trusted: bool, tenant_id: str | None) -> Call[m.Created]:
    body = {"name": name, "type": type, "trusted": trusted, **_tenant(tenant_id)}
    return Call("POST", "/v1/admin/principals", m.Created, json=body)


def admin_create_api_key(
    principal_id: str, scopes: list[str] | None, label: str, tenant_id: str | None
) -> Call[m.IssuedKey]:
    body = {"principal_id": principal_id, "scopes": scopes, "label": label, **_tenant(tenant_id)}
    return Call("POST", "/v1/admin/api-keys", m.IssuedKey, json=body)


def admin_list_api_keys(tenant_id: str | None) -> Call[m.ApiKeys]:
    return Call("GET", "/v1/admin/api-keys", m.ApiKeys, params=_tenant(tenant_id), idempotent=True)


def admin_revoke_api_key(key_id: str, tenant_id: str | None) -> Call[None]:
    # revoking again keeps the first revoked_at
    return Call("DELETE", f"/v1/admin/api-keys/{_id(key_id)}", None, params=_tenant(tenant_id), idempotent=True)


def admin_tenant_config(tenant_id: str | None) -> Call[m.TenantConfig]:
    return Call("GET", "/v1/admin/tenant-config", m.TenantConfig, params=_tenant(tenant_id), idempotent=True)


def admin_patch_tenant_config(tenant_id: str | None, fields: TenantConfigFields) -> Call[m.TenantConfig]:
    body = jsonable({**fields, **_tenant(tenant_id)})
    return Call("PATCH", "/v1/admin/tenant-config", m.TenantConfig, json=body)


def admin_kinds(tenant_id: str | None) -> Call[m.Kinds]:
    return Call("GET", "/v1/admin/kinds", m.Kinds, params=_tenant(tenant_id), idempotent=True)


def admin_create_kind(name: str, tenant_id: str | None, fields: KindFields) -> Call[m.Kind]:
    body = {"name": name, **fields}
    return Call("POST", "/v1/admin/kinds", m.Kind, json=body, params=_tenant(tenant_id))


def admin_patch_kind(name: str, tenant_id: str | None, fields: KindPatchFields) -> Call[m.Kind]:
    body = {**fields, **_tenant(tenant_id)}
    return Call("PATCH", f"/v1/admin/kinds/{_id(name)}", m.Kind, json=body, idempotent=True)


def admin_promote(dry_run: bool, limit: int, tenant_id: str | None) -> Call[m.Promotion]:
    body = {"dry_run": dry_run, "limit": limit, **_tenant(tenant_id)}
    return Call("POST", "/v1/admin/promote", m.Promotion, json=body, idempotent=dry_run)


def admin_add_tunnel(
    from_wing: str, to_wing: str, from_room: str, to_room: str, tenant_id: str | None
) -> Call[m.Tunnel]:
    body = {"from_wing": from_wing, "from_room": from_room, "to_wing": to_wing, "to_room": to_room}
    return Call("POST", "/v1/admin/tunnels", m.Tunnel, json={**body, **_tenant(tenant_id)}, idempotent=True)


def admin_tunnels(tenant_id: str | None) -> Call[m.Tunnels]:
    return Call("GET", "/v1/admin/tunnels", m.Tunnels, params=_tenant(tenant_id), idempotent=True)


def admin_remove_tunnel(tunnel_id: str, tenant_id: str | None) -> Call[None]:
    return Call("DELETE", f"/v1/admin/tunnels/{_id(tunnel_id)}", None, params=_tenant(tenant_id))
