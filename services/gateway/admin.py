"""Admin API: tenants, workspaces, members, principals and API keys (admin scope).

A caller with the admin scope manages its own tenant. A principal of type ``admin`` (the platform
administrator, e.g. the development admin) may also name another tenant and create tenants. A tenant the
caller may not manage answers 404, like one that does not exist.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any, Literal

import asyncpg
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import Field

from engram.db import edges, identity, kinds
from engram.db.pool import tenant_tx
from engram.domain import promotion, scoring, ttl
from engram.domain.classification import parse_placement_rules
from engram.domain.keys import normalize_scopes
from engram.domain.models import CallerContext, Tunnel
from engram.domain.ratelimit import validate_limits
from engram.domain.validation import is_uuid
from engram.errors import Conflict, NotFound, PermissionDenied, ValidationFailed
from engram.pipeline import promotion as promotion_runs
from services.gateway.auth import Caller, policy
from services.gateway.schemas import Body

router = APIRouter(prefix="/v1/admin", tags=["admin"])
Name = Field(min_length=1, max_length=200)


class TenantBody(Body):
    name: str = Name


class WorkspaceBody(Body):
    tenant_id: str | None = None
    name: str = Name


class MemberBody(Body):
    principal_id: str
    role: Literal["owner", "admin", "member", "viewer"]
    tenant_id: str | None = None


class PrincipalBody(Body):
    tenant_id: str | None = None
    name: str = Name
    type: Literal["agent", "user", "system", "admin"]
    trusted: bool = Field(default=False, description="Trusted agents write with authority 30 instead of 20.")


class ApiKeyBody(Body):
    tenant_id: str | None = None
    principal_id: str
    scopes: list[str] | None = Field(default=None, description="Omitted: read and write.")
    label: str = Field(default="", max_length=200)


def _pool(request: Request) -> asyncpg.Pool:
    pool: asyncpg.Pool = request.app.state.pool
    return pool


async def _tenant(pool: asyncpg.Pool, ctx: CallerContext, requested: str | None) -> str:
    """The tenant an admin call acts on: its own, or any for the platform administrator."""
    tenant_id = requested or ctx.tenant_id
    if tenant_id != ctx.tenant_id and ctx.principal_type != "admin":
        raise NotFound("no such tenant", field="tenant_id")
    if not is_uuid(tenant_id) or not await identity.tenant_exists(pool, tenant_id):
        raise NotFound("no such tenant", field="tenant_id")
    return tenant_id


async def _principal(pool: asyncpg.Pool, tenant_id: str, principal_id: str) -> str:
    if not is_uuid(principal_id) or not await identity.principal_exists(pool, tenant_id, principal_id):
        raise NotFound("no such principal in this tenant", field="principal_id")
    return principal_id


@router.post("/tenants", status_code=201, summary="Create a tenant (platform administrator)", **policy("admin"))
async def create_tenant(body: TenantBody, request: Request, ctx: Caller) -> dict[str, str]:
    if ctx.principal_type != "admin":
        raise PermissionDenied("creating tenants needs the platform administrator", code="platform_admin_only")
    try:
        return {"id": await identity.create_tenant(_pool(request), body.name)}
    except asyncpg.UniqueViolationError as exc:
        raise Conflict(f"a tenant named {body.name!r} exists", field="name", code="name_taken") from exc


@router.post("/workspaces", status_code=201, summary="Create a workspace", **policy("admin"))
async def create_workspace(body: WorkspaceBody, request: Request, ctx: Caller) -> dict[str, str]:
    pool = _pool(request)
    tenant_id = await _tenant(pool, ctx, body.tenant_id)
    try:
        return {"id": await identity.create_workspace(pool, tenant_id, body.name)}
    except asyncpg.UniqueViolationError as exc:
        raise Conflict(f"a workspace named {body.name!r} exists", field="name", code="name_taken") from exc


@router.post("/workspaces/{workspace_id}/members", summary="Add a member (or change its role)", **policy("admin"))
async def add_member(workspace_id: str, body: MemberBody, request: Request, ctx: Caller) -> dict[str, str]:
    pool = _pool(request)
    tenant_id = await _tenant(pool, ctx, body.tenant_id)
    if not is_uuid(workspace_id) or not await identity.workspace_exists(pool, tenant_id, workspace_id):
        raise NotFound("no such workspace")
    await identity.add_member(
        pool, tenant_id, workspace_id, await _principal(pool, tenant_id, body.principal_id), body.role
    )
    return {"workspace_id": workspace_id, "principal_id": body.principal_id, "role": body.role}


@router.post(
    "/principals", status_code=201, summary="Create a principal (agent, user, system, admin)", **policy("admin")
)
async def create_principal(body: PrincipalBody, request: Request, ctx: Caller) -> dict[str, str]:
    pool = _pool(request)
    tenant_id = await _tenant(pool, ctx, body.tenant_id)
    if body.type == "admin" and ctx.principal_type != "admin":
        raise PermissionDenied("only the platform administrator creates admin principals", code="platform_admin_only")
    return {"id": await identity.create_principal(pool, tenant_id, body.name, body.type, body.trusted)}


@router.post("/api-keys", status_code=201, summary="Issue an API key (shown once)", **policy("admin"))
async def create_api_key(body: ApiKeyBody, request: Request, ctx: Caller) -> dict[str, Any]:
    pool = _pool(request)
    scopes = normalize_scopes(body.scopes)
    tenant_id = await _tenant(pool, ctx, body.tenant_id)
    principal_id = await _principal(pool, tenant_id, body.principal_id)
    if await identity.principal_type(pool, tenant_id, principal_id) == "admin" and ctx.principal_type != "admin":
        raise PermissionDenied(
            "only the platform administrator issues keys for admin principals", code="platform_admin_only"
        )
    issued = await identity.create_key(pool, tenant_id, principal_id, scopes, body.label)
    return {
        "id": issued.key_id,
        "key": issued.key,
        "tenant_id": tenant_id,
        "principal_id": principal_id,
        "scopes": scopes,
        "label": body.label,
    }


@router.get("/api-keys", summary="List API keys (never their secrets)", **policy("admin"))
async def list_api_keys(request: Request, ctx: Caller, tenant_id: str | None = None) -> dict[str, Any]:
    pool = _pool(request)
    keys = await identity.list_keys(pool, await _tenant(pool, ctx, tenant_id))
    return {
        "items": [
            {
                "id": k.key_id,
                "principal_id": k.principal_id,
                "scopes": k.scopes,
                "label": k.label,
                "created_at": _iso(k.created_at),
                "revoked_at": _iso(k.revoked_at),
                "last_used_at": _iso(k.last_used_at),
            }
            for k in keys
        ]
    }


@router.delete("/api-keys/{key_id}", status_code=204, summary="Revoke an API key", **policy("admin"))
async def revoke_api_key(key_id: str, request: Request, ctx: Caller, tenant_id: str | None = None) -> Response:
    pool = _pool(request)
    if not await identity.revoke_key(pool, await _tenant(pool, ctx, tenant_id), key_id):
        raise NotFound("no such API key")
    return Response(status_code=204)


class TenantConfigBody(Body):
    tenant_id: str | None = None
    rate_limits: dict[str, int] | None = Field(
        default=None, description="Requests a minute per principal, by route class: remember, recall, feedback."
    )
    public_enabled: bool | None = Field(
        default=None, description="Let callers of every tenant read this tenant's `public` items."
    )
    feedback_daily_limit: int | None = Field(
        default=None, ge=1, le=1_000_000, description="Feedback verdicts a principal may give per 24 hours."
    )
    ttl_days: dict[str, Any] | None = Field(
        default=None,
        description="Default lifetimes by kind and importance band, merged over the built-in matrix: "
        '{"observation": {"low": 30, "medium": 90}}; null means never. Importance ≥ 0.8 never expires.',
    )
    secret_policy: Literal["refuse", "redact"] | None = Field(
        default=None,
        description="What remember does with content holding credentials: refuse it (422, the "
        "default) or store it with each secret replaced by [REDACTED:<kind>].",
    )
    promotion: dict[str, Any] | None = Field(
        default=None,
        description='Promotion gates: {"min_age_minutes": 10, "min_memory_confidence": 0.6, '
        '"min_taxonomy_confidence": 0.5, "kinds": {"doctrine": "manual", "observation": "auto"}}. Replaces them.',
    )
    recall: dict[str, Any] | None = Field(
        default=None, description='Recall tuning: {"dense_weight": 0.5, "subject_boost": 0.0}. Replaces it.'
    )
    placement_rules: list[Any] | None = Field(
        default=None,
        description='Where the classifier places memories: [{"wing": "infra", "room": "db", '
        '"any_of": ["postgres", "replica"]}]; the first rule with a phrase in the content wins. Replaces the list.',
    )
    trash_retention_days: int | None = Field(
        default=None, ge=1, le=3650, description="Days a deleted or expired memory stays restorable."
    )


@router.get("/tenant-config", summary="Read a tenant's configuration", **policy("admin"))
async def get_tenant_config(request: Request, ctx: Caller, tenant_id: str | None = None) -> dict[str, Any]:
    pool = _pool(request)
    tenant = await _tenant(pool, ctx, tenant_id)
    config, version = await identity.tenant_config(pool, tenant)
    return {
        "tenant_id": tenant,
        "config": config,
        "version": version,
        "public_enabled": await identity.tenant_public(pool, tenant),
    }


@router.patch("/tenant-config", summary="Change a tenant's configuration (merged, versioned)", **policy("admin"))
async def patch_tenant_config(body: TenantConfigBody, request: Request, ctx: Caller) -> dict[str, Any]:
    pool = _pool(request)
    tenant = await _tenant(pool, ctx, body.tenant_id)
    changes = body.model_dump(exclude={"tenant_id"}, exclude_none=True)
    if not changes:
        settings = ", ".join(sorted(set(TenantConfigBody.model_fields) - {"tenant_id"}))
        raise ValidationFailed(f"nothing to change: give one of {settings}", field="body")
    if body.public_enabled is not None and ctx.principal_type != "admin":
        raise PermissionDenied(
            "publishing a tenant to every other tenant is the platform administrator's call",
            code="platform_admin_only",
            field="public_enabled",
        )
    patch: dict[str, Any] = {}
    if body.rate_limits is not None:
        current, _ = await identity.tenant_config(pool, tenant)
        patch["rate_limits"] = {**current.get("rate_limits", {}), **validate_limits(body.rate_limits)}
    if body.feedback_daily_limit is not None:
        patch["feedback_daily_limit"] = body.feedback_daily_limit
    if body.ttl_days is not None:
        current, _ = await identity.tenant_config(pool, tenant)
        patch["ttl_days"] = ttl.overlay(current.get("ttl_days"), ttl.parse_overrides(body.ttl_days))
    if body.trash_retention_days is not None:
        patch["trash_retention_days"] = body.trash_retention_days
    if body.secret_policy is not None:
        patch["secret_policy"] = body.secret_policy
    if body.recall is not None:
        patch["recall"] = scoring.parse_recall_weights(body.recall).as_dict()
    if body.promotion is not None:
        patch["promotion"] = promotion.parse_gates(body.promotion).as_dict()
    if body.placement_rules is not None:
        patch["placement_rules"] = [dataclasses.asdict(r) for r in parse_placement_rules(body.placement_rules)]
    config, version = (
        await identity.merge_tenant_config(pool, tenant, patch, ctx.principal_id)
        if patch
        else await identity.tenant_config(pool, tenant)
    )
    if body.public_enabled is not None:
        await identity.set_tenant_public(pool, tenant, body.public_enabled)
    request.app.state.limits.forget(tenant)
    return {
        "tenant_id": tenant,
        "config": config,
        "version": version,
        "public_enabled": await identity.tenant_public(pool, tenant),
    }


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


@router.get("/kinds", summary="The memory kinds a tenant can use (built-in and custom)", **policy("admin"))
async def list_kinds(request: Request, ctx: Caller, tenant_id: str | None = None) -> dict[str, Any]:
    pool = _pool(request)
    return {"items": await kinds.list_kinds(pool, await _tenant(pool, ctx, tenant_id))}


@router.post("/kinds", status_code=201, summary="Register a custom memory kind", **policy("admin"))
async def create_kind(body: KindBody, request: Request, ctx: Caller, tenant_id: str | None = None) -> dict[str, Any]:
    pool = _pool(request)
    tenant = await _tenant(pool, ctx, tenant_id)
    existing = await kinds.list_kinds(pool, tenant)
    if any(k["name"] == body.name and k["built_in"] for k in existing):
        raise ValidationFailed(f"{body.name!r} is a built-in kind; custom kinds cannot shadow it", field="name")
    if any(k["name"] == body.name for k in existing):
        raise Conflict(f"kind {body.name!r} exists; change it with PATCH", field="name", code="name_taken")
    try:
        return await kinds.create(pool, tenant, body.name, body.model_dump(exclude={"name"}))
    except asyncpg.UniqueViolationError as exc:
        raise Conflict(f"kind {body.name!r} exists", field="name", code="name_taken") from exc


@router.patch(
    "/kinds/{name}",
    **policy("admin"),
    summary="Change a custom kind, or enable/disable any kind for the tenant (never deleted)",
)
async def patch_kind(name: str, body: KindPatchBody, request: Request, ctx: Caller) -> dict[str, Any]:
    pool = _pool(request)
    tenant = await _tenant(pool, ctx, body.tenant_id)
    changes = body.model_dump(exclude={"tenant_id"}, exclude_none=True)
    if not changes:
        raise ValidationFailed("nothing to change", field="body")
    if any(k["name"] == name and k["built_in"] for k in await kinds.list_kinds(pool, tenant)):
        if set(changes) != {"enabled"}:
            raise PermissionDenied(
                f"{name!r} is a built-in kind: a tenant may only enable or disable it", code="built_in_kind"
            )
        return await kinds.switch_built_in(pool, tenant, name, changes["enabled"])
    changed = await kinds.update(pool, tenant, name, changes)
    if changed is None:
        raise NotFound(f"no custom kind {name!r}")
    return changed


def _iso(value: datetime | None) -> str | None:
    """UTC with a Z, like every other time the API returns."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z" if value else None


class PromoteBody(Body):
    tenant_id: str | None = None
    dry_run: bool = Field(default=True, description="Report the decisions and write nothing (the default).")
    limit: int = Field(default=100, ge=1, le=10_000)


@router.post(
    "/promote", summary="Promote the proposals every gate lets through (or report, with dry_run)", **policy("admin")
)
async def promote(body: PromoteBody, request: Request, ctx: Caller) -> dict[str, Any]:
    """The same decisions as the promotion consumer and ``engram promote-proposed``: oldest proposals first,
    counts per outcome (``promoted``, ``skipped_<blocker>``)."""
    pool = _pool(request)
    tenant = await _tenant(pool, ctx, body.tenant_id)
    counts = await promotion_runs.promote_proposed(
        pool,
        request.app.state.downstream.settings.events_subject_prefix,
        tenant_id=tenant,
        limit=body.limit,
        dry_run=body.dry_run,
    )
    return {"tenant_id": tenant, "dry_run": body.dry_run, "decided": sum(counts.values()), "counts": dict(counts)}


class TunnelBody(Body):
    tenant_id: str | None = None
    from_wing: str = Field(min_length=1, max_length=200)
    from_room: str = Field(default="", max_length=200, description="Empty: the whole wing.")
    to_wing: str = Field(min_length=1, max_length=200)
    to_room: str = Field(default="", max_length=200, description="Empty: the whole wing.")


def _tunnel_json(t: Tunnel) -> dict[str, Any]:
    return {
        "id": t.id,
        "from_wing": t.from_wing,
        "from_room": t.from_room or None,
        "to_wing": t.to_wing,
        "to_room": t.to_room or None,
        "created_by": t.created_by,
        "created_at": _iso(t.created_at),
    }


@router.post("/tunnels", status_code=201, summary="Connect two (wing, room) areas for recall", **policy("admin"))
async def add_tunnel(body: TunnelBody, request: Request, ctx: Caller) -> JSONResponse:
    """Recall lifts candidates in an area a tunnel connects to the area of its best hits (both directions)."""
    pool = _pool(request)
    tenant = await _tenant(pool, ctx, body.tenant_id)
    if (body.from_wing, body.from_room) == (body.to_wing, body.to_room):
        raise ValidationFailed("a tunnel connects two different areas", field="to_wing")
    async with tenant_tx(pool, tenant) as conn:
        tunnel, created = await edges.add_tunnel(
            conn, tenant, body.from_wing, body.from_room, body.to_wing, body.to_room, ctx.principal_id
        )
    return JSONResponse(_tunnel_json(tunnel), status_code=201 if created else 200)


@router.get("/tunnels", summary="The tenant's tunnels", **policy("admin"))
async def list_tunnels(request: Request, ctx: Caller, tenant_id: str | None = None) -> dict[str, Any]:
    pool = _pool(request)
    async with tenant_tx(pool, await _tenant(pool, ctx, tenant_id)) as conn:
        return {"items": [_tunnel_json(t) for t in await edges.tunnels(conn)]}


@router.delete("/tunnels/{tunnel_id}", status_code=204, summary="Remove a tunnel", **policy("admin"))
async def remove_tunnel(tunnel_id: str, request: Request, ctx: Caller, tenant_id: str | None = None) -> Response:
    pool = _pool(request)
    async with tenant_tx(pool, await _tenant(pool, ctx, tenant_id)) as conn:
        if not is_uuid(tunnel_id) or not await edges.remove_tunnel(conn, tunnel_id):
            raise NotFound(f"no tunnel {tunnel_id}")
    return Response(status_code=204)
