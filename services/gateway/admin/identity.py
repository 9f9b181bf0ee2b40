"""Admin API: tenants, workspaces, members, principals and API keys.

A caller with the admin scope manages its own tenant. A principal of type ``admin`` (the platform
administrator, e.g. the development admin) may also name another tenant and create tenants. A tenant the
caller may not manage answers 404, like one that does not exist.
"""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from engram.domain.values import PrincipalType, WorkspaceRole
from engram.v1 import admin_pb2
from services.gateway.admin.common import Name, time_json
from services.gateway.auth import Caller, policy
from services.gateway.clients import Services
from services.gateway.schemas import Body

router = APIRouter()


class TenantBody(Body):
    name: str = Name


class WorkspaceBody(Body):
    tenant_id: str | None = None
    name: str = Name


class MemberBody(Body):
    principal_id: str
    role: WorkspaceRole
    tenant_id: str | None = None


class PrincipalBody(Body):
    tenant_id: str | None = None
    name: str = Name
    type: PrincipalType
    trusted: bool = Field(default=False, description="Trusted agents write with authority 30 instead of 20.")


class ApiKeyBody(Body):
    tenant_id: str | None = None
    principal_id: str
    scopes: list[str] | None = Field(default=None, description="Omitted: read and write.")
    label: str = Field(default="", max_length=200)


class Created(BaseModel):
    id: str


class Membership(BaseModel):
    workspace_id: str
    principal_id: str
    role: str


class IssuedKey(BaseModel):
    id: str
    key: str = Field(description="eng_<id>_<secret>: shown in this answer only; only a salted hash is stored.")
    tenant_id: str
    principal_id: str
    scopes: list[str]
    label: str


class ApiKey(BaseModel):
    id: str
    principal_id: str
    scopes: list[str]
    label: str
    created_at: str | None
    revoked_at: str | None
    last_used_at: str | None


class ApiKeys(BaseModel):
    items: list[ApiKey]


@router.post("/tenants", status_code=201, summary="Create a tenant (platform administrator)", **policy("admin"))
async def create_tenant(body: TenantBody, ctx: Caller, ds: Services) -> Created:
    reply = await ds.call(ds.admin.CreateTenant, admin_pb2.CreateTenantRequest(name=body.name), ctx)
    return Created(id=reply.id)


@router.post("/workspaces", status_code=201, summary="Create a workspace", **policy("admin"))
async def create_workspace(body: WorkspaceBody, ctx: Caller, ds: Services) -> Created:
    request = admin_pb2.CreateWorkspaceRequest(tenant_id=body.tenant_id or "", name=body.name)
    return Created(id=(await ds.call(ds.admin.CreateWorkspace, request, ctx)).id)


@router.post("/workspaces/{workspace_id}/members", summary="Add a member (or change its role)", **policy("admin"))
async def add_member(workspace_id: str, body: MemberBody, ctx: Caller, ds: Services) -> Membership:
    request = admin_pb2.AddMemberRequest(
        tenant_id=body.tenant_id or "", workspace_id=workspace_id, principal_id=body.principal_id, role=body.role
    )
    reply = await ds.call(ds.admin.AddMember, request, ctx)
    return Membership(workspace_id=reply.workspace_id, principal_id=reply.principal_id, role=reply.role)


@router.post(
    "/principals", status_code=201, summary="Create a principal (agent, user, system, admin)", **policy("admin")
)
async def create_principal(body: PrincipalBody, ctx: Caller, ds: Services) -> Created:
    request = admin_pb2.CreatePrincipalRequest(
        tenant_id=body.tenant_id or "", name=body.name, type=body.type, trusted=body.trusted
    )
    return Created(id=(await ds.call(ds.admin.CreatePrincipal, request, ctx)).id)


@router.post("/api-keys", status_code=201, summary="Issue an API key (shown once)", **policy("admin"))
async def create_api_key(body: ApiKeyBody, ctx: Caller, ds: Services) -> IssuedKey:
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
async def list_api_keys(ctx: Caller, ds: Services, tenant_id: str | None = None) -> ApiKeys:
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
async def revoke_api_key(key_id: str, ctx: Caller, ds: Services, tenant_id: str | None = None) -> Response:
    await ds.call(ds.admin.RevokeApiKey, admin_pb2.RevokeApiKeyRequest(tenant_id=tenant_id or "", id=key_id), ctx)
    return Response(status_code=204)
