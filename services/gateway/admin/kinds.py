"""Admin API: the memory kinds a tenant can use (built-in and custom); kinds are never deleted, only
disabled."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from engram.v1 import admin_pb2
from services.gateway.admin.common import TenantField, TenantQuery
from services.gateway.auth import context, policy
from services.gateway.schemas import Body

router = APIRouter()
KIND_NAME = r"^[a-z][a-z0-9_]{0,63}$"
SINGLETON = "One live memory per workspace, subject and kind: a new one supersedes the last or is proposed."
REQUIRES_REVIEW = "New memories of this kind wait as proposals for review and cannot supersede."
STAYS = "A disputed memory of this kind stays in recall and search."
DEFAULT_IMPORTANCE = "The importance of a new memory that gives none."


class KindBody(Body):
    name: str = Field(
        pattern=KIND_NAME,
        description="Lower-case letters, digits and _; starts with a letter; not a built-in kind's name.",
        examples=["meeting_note"],
    )
    singleton: bool = Field(default=False, description=SINGLETON)
    requires_review: bool = Field(default=False, description=REQUIRES_REVIEW)
    stays_in_recall_when_disputed: bool = Field(default=False, description=STAYS)
    default_importance: float = Field(default=0.5, ge=0, le=1, description=DEFAULT_IMPORTANCE)


class KindPatchBody(Body):
    """The changes; a field left out (or null) stays as it is. A built-in kind accepts `enabled` only."""

    singleton: bool | None = Field(default=None, description=SINGLETON)
    requires_review: bool | None = Field(default=None, description=REQUIRES_REVIEW)
    stays_in_recall_when_disputed: bool | None = Field(default=None, description=STAYS)
    default_importance: float | None = Field(default=None, ge=0, le=1, description=DEFAULT_IMPORTANCE)
    enabled: bool | None = Field(
        default=None,
        description="false disables the kind for the tenant: remember and the `kinds` filter refuse it (422); "
        "memories already stored keep it.",
    )
    tenant_id: TenantField = None


class Kind(BaseModel):
    name: str = Field(description="The kind's name.")
    singleton: bool = Field(description=SINGLETON)
    requires_review: bool = Field(description=REQUIRES_REVIEW)
    stays_in_recall_when_disputed: bool = Field(description=STAYS)
    default_importance: float = Field(description=DEFAULT_IMPORTANCE + " Stored as a 4-byte real, returned unrounded.")
    enabled: bool = Field(description="Whether the tenant can use it; for a built-in kind, this tenant's switch.")
    built_in: bool = Field(description="Seeded for every tenant, rather than the tenant's own.")


class Kinds(BaseModel):
    items: list[Kind] = Field(description="The built-in kinds, then the tenant's own, each group by name.")


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
async def list_kinds(http: Request, tenant_id: TenantQuery = None) -> Kinds:
    """Every kind, disabled ones included."""
    ctx, ds = context(http)
    reply = await ds.call(ds.admin.ListKinds, admin_pb2.ListKindsRequest(tenant_id=tenant_id or ""), ctx)
    return Kinds(items=[_kind(k) for k in reply.items])


@router.post("/kinds", status_code=201, summary="Register a custom memory kind", **policy("admin"))
async def create_kind(body: KindBody, http: Request, tenant_id: TenantQuery = None) -> Kind:
    """The tenant's callers can use it at once; other tenants do not see it. `tenant_id` goes in the query
    string here."""
    ctx, ds = context(http)
    request = admin_pb2.CreateKindRequest(tenant_id=tenant_id or "", **body.model_dump())
    return _kind(await ds.call(ds.admin.CreateKind, request, ctx))


@router.patch(
    "/kinds/{name}",
    **policy("admin"),
    summary="Change a custom kind, or enable/disable any kind for the tenant (never deleted)",
)
async def patch_kind(name: str, body: KindPatchBody, http: Request) -> Kind:
    """A built-in kind accepts only `enabled` (403 `built_in_kind`), which switches it for this tenant alone.
    Changes apply to new memories, except `enabled` and `stays_in_recall_when_disputed`, which apply at once."""
    ctx, ds = context(http)
    changes = body.model_dump(exclude={"tenant_id"}, exclude_none=True)
    request = admin_pb2.PatchKindRequest(tenant_id=body.tenant_id or "", name=name, **changes)
    return _kind(await ds.call(ds.admin.PatchKind, request, ctx))
