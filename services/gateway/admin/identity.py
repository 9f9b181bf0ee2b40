"""Admin API: tenants, workspaces, members, principals and API keys.

A caller with the admin scope manages its own tenant. A principal of type ``admin`` (the platform
administrator, e.g. the development admin) may also name another tenant and create tenants. A tenant the
caller may not manage answers 404, like one that does not exist.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from engram.domain.values import PrincipalType, WorkspaceRole
from engram.v1 import admin_pb2
from services.gateway.admin.common import TenantField, TenantQuery, name_field, time_json
from services.gateway.auth import context, policy
from services.gateway.schemas import Body

router = APIRouter()


class TenantBody(Body):
    name: str = name_field("Unique across all tenants.")


class WorkspaceBody(Body):
    tenant_id: TenantField = None
    name: str = name_field("Unique within the tenant.")


class MemberBody(Body):
    principal_id: str = Field(description="A principal of the same tenant.")
    role: WorkspaceRole = Field(
        description="`owner`, `admin` and `member` may write into the workspace; a `viewer` may only read."
    )
    tenant_id: TenantField = None


class PrincipalBody(Body):
    tenant_id: TenantField = None
    name: str = name_field("A readable name; need not be unique.")
    type: PrincipalType = Field(description="`admin` only from a platform administrator.")
    trusted: bool = Field(default=False, description="Trusted agents write with authority 30 instead of 20.")


class ApiKeyBody(Body):
    tenant_id: TenantField = None
    principal_id: str = Field(
        description="A principal of the tenant; one of type `admin` needs a platform administrator."
    )
    scopes: list[str] | None = Field(
        default=None,
        description="Each of `read`, `write`, `review`, `publish` (writing `public` memories), `export`, `admin`; "
        "`read` and `write` when left out or empty.",
    )
    label: str = Field(default="", max_length=200, description="A note on what the key is for.")


class Created(BaseModel):
    id: str = Field(description="The new tenant's, workspace's or principal's id (a UUID).")


class Membership(BaseModel):
    workspace_id: str = Field(description="The workspace.")
    principal_id: str = Field(description="The member.")
    role: str = Field(description="Its role there now.")


class IssuedKey(BaseModel):
    id: str = Field(description="The key's id, the part after `eng_`; revoke it with this.")
    key: str = Field(description="eng_<id>_<secret>: shown in this answer only; only a salted hash is stored.")
    tenant_id: str = Field(description="The tenant the key belongs to.")
    principal_id: str = Field(description="The principal every request with the key runs as.")
    scopes: list[str] = Field(description="De-duplicated, in the order read, write, review, export, admin.")
    label: str = Field(description="The label given.")


class ApiKey(BaseModel):
    id: str = Field(description="The key's id.")
    principal_id: str = Field(description="The principal the key belongs to.")
    scopes: list[str] = Field(description="Its scopes.")
    label: str = Field(description="Its label.")
    created_at: str | None = Field(description="When it was issued.")
    revoked_at: str | None = Field(description="When it was first revoked; null while it works.")
    last_used_at: str | None = Field(
        description="Refreshed at most once a minute, by a request whose secret matched; null if never used."
    )


class ApiKeys(BaseModel):
    items: list[ApiKey] = Field(description="The tenant's keys, oldest first, revoked ones included.")


@router.post("/tenants", status_code=201, summary="Create a tenant (platform administrator)", **policy("admin"))
async def create_tenant(body: TenantBody, http: Request) -> Created:
    """A new tenant with its `default` workspace and no principals or keys (403 `platform_admin_only` for a
    tenant administrator)."""
    ctx, ds = context(http)
    reply = await ds.call(ds.admin.CreateTenant, admin_pb2.CreateTenantRequest(name=body.name), ctx)
    return Created(id=reply.id)


@router.post("/workspaces", status_code=201, summary="Create a workspace", **policy("admin"))
async def create_workspace(body: WorkspaceBody, http: Request) -> Created:
    """A new workspace of the tenant, with no members (not even the caller)."""
    ctx, ds = context(http)
    request = admin_pb2.CreateWorkspaceRequest(tenant_id=body.tenant_id or "", name=body.name)
    return Created(id=(await ds.call(ds.admin.CreateWorkspace, request, ctx)).id)


@router.post("/workspaces/{workspace_id}/members", summary="Add a member (or change its role)", **policy("admin"))
async def add_member(workspace_id: str, body: MemberBody, http: Request) -> Membership:
    """Makes a principal of the tenant a member of the workspace with the role, or changes its role."""
    ctx, ds = context(http)
    request = admin_pb2.AddMemberRequest(
        tenant_id=body.tenant_id or "", workspace_id=workspace_id, principal_id=body.principal_id, role=body.role
    )
    reply = await ds.call(ds.admin.AddMember, request, ctx)
    return Membership(workspace_id=reply.workspace_id, principal_id=reply.principal_id, role=reply.role)


@router.post(
    "/principals", status_code=201, summary="Create a principal (agent, user, system, admin)", **policy("admin")
)
async def create_principal(body: PrincipalBody, http: Request) -> Created:
    """A new principal, which joins the tenant's `default` workspace as a `member`."""
    ctx, ds = context(http)
    request = admin_pb2.CreatePrincipalRequest(
        tenant_id=body.tenant_id or "", name=body.name, type=body.type, trusted=body.trusted
    )
    return Created(id=(await ds.call(ds.admin.CreatePrincipal, request, ctx)).id)


@router.post("/api-keys", status_code=201, summary="Issue an API key (shown once)", **policy("admin"))
async def create_api_key(body: ApiKeyBody, http: Request) -> IssuedKey:
    """A key for a principal of the tenant. The full key is in this answer only; only a salted hash is kept."""
    ctx, ds = context(http)
    request = admin_pb2.CreateApiKeyRequest(
        tenant_id=body.tenant_id or "", principal_id=body.principal_id, scopes=body.scopes or [], label=body.label
    )
    reply = await ds.call(ds.admin.CreateApiKey, request, ctx)
    return IssuedKey(
        id=reply.id,
        key=reply.key,
        tenant_id=reply.tenant_id,
        principal_id=reply.principal_id,
        scopes=list(reply.scopes),
        label=reply.label,
    )


@router.get("/api-keys", summary="List API keys (never their secrets)", **policy("admin"))
async def list_api_keys(http: Request, tenant_id: TenantQuery = None) -> ApiKeys:
    """The tenant's keys, oldest first, revoked ones included; never their secrets."""
    ctx, ds = context(http)
    reply = await ds.call(ds.admin.ListApiKeys, admin_pb2.ListApiKeysRequest(tenant_id=tenant_id or ""), ctx)
    return ApiKeys(
        items=[
            ApiKey(
                id=k.id,
                principal_id=k.principal_id,
                scopes=list(k.scopes),
                label=k.label,
                created_at=time_json(k, "created_at"),
                revoked_at=time_json(k, "revoked_at"),
                last_used_at=time_json(k, "last_used_at"),
            )
            for k in reply.items
        ]
    )


@router.delete("/api-keys/{key_id}", status_code=204, summary="Revoke an API key", **policy("admin"))
async def revoke_api_key(key_id: str, http: Request, tenant_id: TenantQuery = None) -> Response:
    """Requests with the key answer 401 from then on. Revoking a revoked key keeps its first `revoked_at`."""
    ctx, ds = context(http)
    await ds.call(ds.admin.RevokeApiKey, admin_pb2.RevokeApiKeyRequest(tenant_id=tenant_id or "", id=key_id), ctx)
    return Response(status_code=204)
