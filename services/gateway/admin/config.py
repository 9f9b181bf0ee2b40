"""Admin API: a tenant's configuration (read, and changed by merging; every change is versioned)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from engram.domain.values import SecretPolicy
from engram.v1 import admin_pb2
from services.gateway.admin.common import TenantField, TenantQuery
from services.gateway.auth import context, policy
from services.gateway.schemas import Body

router = APIRouter()
INT64_MAX = 2**63 - 1


class TenantConfigBody(Body):
    tenant_id: TenantField = None
    rate_limits: dict[str, int] | None = Field(
        default=None,
        description="Requests a minute per principal by route class: `remember`, `recall`, `feedback`, "
        "`review`, `bulk`; each from 1 to the platform ceiling ENGRAM_RATE_LIMIT_CEILING_PER_MINUTE (100,000). "
        "Merged into the tenant's current limits.",
    )
    public_enabled: bool | None = Field(
        default=None,
        description="Let callers of every tenant read this tenant's `public` items (platform administrator only). "
        "Kept on the tenant, outside the versioned config.",
    )
    feedback_daily_limit: int | None = Field(
        default=None,
        ge=1,
        le=1_000_000,
        description="Feedback verdicts a principal may give in any 24 hours; 500 while unset.",
    )
    ttl_days: dict[str, Any] | None = Field(
        default=None,
        description="Default lifetimes by kind and importance band, merged over the built-in matrix: "
        '{"observation": {"low": 30, "medium": 90}}, each 1–36,500 days or null for never. Merged cell by cell.',
    )
    secret_policy: SecretPolicy | None = Field(
        default=None,
        description="What remember does with content holding credentials: refuse it (422, the "
        "default) or store it with each secret replaced by [REDACTED:<kind>].",
    )
    promotion: dict[str, Any] | None = Field(
        default=None,
        description='Promotion gates: {"min_age_minutes": 10, "min_memory_confidence": 0.6, '
        '"min_taxonomy_confidence": 0.5, "kinds": {"doctrine": "manual", "observation": "auto"}}: minutes '
        "0–525,600, confidences 0–1, each kind `auto` or `manual` (by default `manual` for kinds that require "
        "review). Replaces the previous object; settings left out take their defaults.",
    )
    recall: dict[str, Any] | None = Field(
        default=None,
        description='Recall settings: {"dense_weight": 0.35, "subject_boost": 1.0, "mmr_lambda": 1.0, '
        '"graph_expansion": true, "session_neighbours": 0.4, "session_replies": true, "accept_public": false}; '
        "the numbers 0–1. "
        "`accept_public` lets this tenant's queries find other tenants' public memories (trust capped, origin "
        "named). Replaces the previous object; settings left out take their defaults.",
    )
    placement_rules: list[Any] | None = Field(
        default=None,
        description='Where the classifier places memories: [{"wing": "infra", "room": "db", '
        '"any_of": ["postgres", "replica"]}], at most 200; the first rule with one of its phrases in the content '
        "(whole words, any case) wins. `wing` required, `room` optional, `any_of` 1–100 phrases and 200 phrases "
        "in all; each value 1–200 characters, trimmed; at most 65,536 bytes as JSON, like the whole "
        "configuration. Replaces the list; [] removes every rule.",
    )
    trash_retention_days: int | None = Field(
        default=None,
        ge=1,
        le=3650,
        description="Days a deleted or expired memory stays restorable; ENGRAM_TRASH_RETENTION_DAYS (30) while unset.",
    )


class TenantConfig(BaseModel):
    tenant_id: str = Field(description="The tenant.")
    config: dict[str, Any] = Field(description="The settings the tenant has changed (the defaults apply to the rest).")
    version: int = Field(description="Goes up by one with every change; 0 when never changed.")
    public_enabled: bool = Field(description="Whether the tenant's `public` items are readable from other tenants.")


def _config(reply: admin_pb2.TenantConfigResponse) -> TenantConfig:
    return TenantConfig(
        tenant_id=reply.tenant_id,
        config=json.loads(reply.config_json),
        version=reply.version,
        public_enabled=reply.public_enabled,
    )


def _patch(body: TenantConfigBody) -> admin_pb2.PatchTenantConfigRequest:
    request = admin_pb2.PatchTenantConfigRequest(
        tenant_id=body.tenant_id or "",
        public_enabled=body.public_enabled,
        feedback_daily_limit=body.feedback_daily_limit,
        secret_policy=body.secret_policy,
        trash_retention_days=body.trash_retention_days,
    )
    if body.rate_limits is not None:  # out-of-range values stay out of range for ingest to refuse
        limits = {route: max(-INT64_MAX, min(value, INT64_MAX)) for route, value in body.rate_limits.items()}
        request.rate_limits.CopyFrom(admin_pb2.RouteLimits(per_minute=limits))
    for name in ("ttl_days", "promotion", "recall", "placement_rules"):
        value = getattr(body, name)
        if value is not None:
            setattr(request, f"{name}_json", json.dumps(value))
    return request


@router.get("/tenant-config", summary="Read a tenant's configuration", **policy("admin"))
async def get_tenant_config(http: Request, tenant_id: TenantQuery = None) -> TenantConfig:
    """The settings the tenant has changed, with their version; `{}` and version 0 when never configured."""
    ctx, ds = context(http)
    request = admin_pb2.GetTenantConfigRequest(tenant_id=tenant_id or "")
    return _config(await ds.call(ds.admin.GetTenantConfig, request, ctx))


@router.patch("/tenant-config", summary="Change a tenant's configuration (merged, versioned)", **policy("admin"))
async def patch_tenant_config(body: TenantConfigBody, request: Request) -> TenantConfig:
    """Merges the fields given into the configuration (at least one besides `tenant_id`); any change but
    `public_enabled` raises the version."""
    ctx, ds = context(request)
    changed = _config(await ds.call(ds.admin.PatchTenantConfig, _patch(body), ctx))
    request.app.state.limits.forget(changed.tenant_id)  # this replica applies new rate limits at once
    return changed
