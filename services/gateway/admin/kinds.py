"""Admin API: the memory kinds a tenant can use (built-in and custom); kinds are never deleted, only
disabled."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from engram.v1 import admin_pb2
from services.gateway.auth import Caller, policy
from services.gateway.clients import Services
from services.gateway.schemas import Body

router = APIRouter()
KIND_NAME = r"^[a-z][a-z0-9_]{0,63}$"


class KindBody(Body):
    name: str = Field(pattern=KIND_NAME, description="Lower-case letters, digits and _; starts with a letter.")
    singleton: bool = False
    requires_review: bool = False
    stays_in_recall_when_disputed: bool = False
    default_importance: float = Field(default=0.5, ge=0, le=1)


class KindPatchBody(Body):
    singleton: bool | None = None
    requires_review: bool | None = None
    stays_in_recall_when_disputed: bool | None = None
    default_importance: float | None = Field(default=None, ge=0, le=1)
    enabled: bool | None = None
    tenant_id: str | None = None


class Kind(BaseModel):
    name: str
    singleton: bool = Field(description="One live memory per subject: a new one supersedes the last.")
    requires_review: bool = Field(description="New memories of this kind wait as proposals for review.")
    stays_in_recall_when_disputed: bool
    default_importance: float
    enabled: bool
    built_in: bool


class Kinds(BaseModel):
    items: list[Kind]


def _kind(k: admin_pb2.Kind) -> Kind:
    return Kind(
        name=k.name,
        singleton=k.singleton,
        requires_review=k.requires_review,
        stays_in_recall_when_disputed=k.stays_in_recall_when_disputed,
        default_importance=k.default_importance,
        enabled=k.enabled,
        built_in=k.built_in,
    )


@router.get("/kinds", summary="The memory kinds a tenant can use (built-in and custom)", **policy("admin"))
async def list_kinds(ctx: Caller, ds: Services, tenant_id: str | None = None) -> Kinds:
    reply = await ds.call(ds.admin.ListKinds, admin_pb2.ListKindsRequest(tenant_id=tenant_id or ""), ctx)
    return Kinds(items=[_kind(k) for k in reply.items])


@router.post("/kinds", status_code=201, summary="Register a custom memory kind", **policy("admin"))
async def create_kind(body: KindBody, ctx: Caller, ds: Services, tenant_id: str | None = None) -> Kind:
    request = admin_pb2.CreateKindRequest(tenant_id=tenant_id or "", **body.model_dump())
    return _kind(await ds.call(ds.admin.CreateKind, request, ctx))


@router.patch(
    "/kinds/{name}",
    **policy("admin"),
    summary="Change a custom kind, or enable/disable any kind for the tenant (never deleted)",
)
async def patch_kind(name: str, body: KindPatchBody, ctx: Caller, ds: Services) -> Kind:
    changes = body.model_dump(exclude={"tenant_id"}, exclude_none=True)
    request = admin_pb2.PatchKindRequest(tenant_id=body.tenant_id or "", name=name, **changes)
    return _kind(await ds.call(ds.admin.PatchKind, request, ctx))
