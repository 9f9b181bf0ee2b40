"""The Admin service: tenants, workspaces, members, principals, API keys, tenant configuration, memory kinds,
tunnels and promotion runs, plus the rate limits the gateway enforces.

Every operation but ``rate_limits`` needs the admin scope. The tenant an operation acts on is the caller's own
unless it names another, which only the platform administrator may (``engram/domain/admin.py``); a tenant the
caller may not manage answers NotFound, like one that does not exist.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any

import asyncpg

from engram.config import Settings
from engram.db import edges, identity, kinds
from engram.db.pool import tenant_tx
from engram.domain import admin as rules
from engram.domain import promotion, scoring, ttl
from engram.domain.classification import parse_placement_rules
from engram.domain.keys import normalize_scopes
from engram.domain.models import ApiKeyInfo, CallerContext, TenantConfig, Tunnel
from engram.domain.ratelimit import validate_limits
from engram.domain.validation import is_uuid, validate_label
from engram.errors import Conflict, NotFound, PermissionDenied, ValidationFailed
from engram.pipeline import promotion as promotion_runs


@dataclass(frozen=True)
class IssuedApiKey:
    key_id: str
    key: str  # shown once
    tenant_id: str
    principal_id: str
    scopes: list[str]
    label: str


@dataclass(frozen=True)
class ConfigChanges:
    """A change to a tenant's configuration: each field not None is one setting to change. The free-form
    settings (``ttl_days``, ``promotion``, ``recall``, ``placement_rules``) come as JSON text."""

    rate_limits: dict[str, int] | None = None
    public_enabled: bool | None = None
    feedback_daily_limit: int | None = None
    ttl_days: str | None = None
    secret_policy: str | None = None
    promotion: str | None = None
    recall: str | None = None
    placement_rules: str | None = None
    trash_retention_days: int | None = None

    def given(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self) if getattr(self, f.name) is not None]


class AdminService:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self._pool = pool
        self._settings = settings

    async def tenant(self, ctx: CallerContext, requested: str) -> str:
        """The tenant an admin call acts on (empty: the caller's own), after the scope check."""
        rules.require_admin_scope(ctx)
        tenant_id = requested or ctx.tenant_id
        if not rules.may_name_tenant(ctx, tenant_id):
            raise NotFound("no such tenant", field="tenant_id")
        if not is_uuid(tenant_id) or not await identity.tenant_exists(self._pool, tenant_id):
            raise NotFound("no such tenant", field="tenant_id")
        return tenant_id

    async def _principal(self, tenant_id: str, principal_id: str) -> str:
        if not is_uuid(principal_id) or not await identity.principal_exists(self._pool, tenant_id, principal_id):
            raise NotFound("no such principal in this tenant", field="principal_id")
        return principal_id

    # Tenants, workspaces, members, principals

    async def create_tenant(self, ctx: CallerContext, name: str) -> str:
        rules.require_admin_scope(ctx)
        rules.require_platform_admin(ctx, "creating tenants needs the platform administrator")
        return await identity.create_tenant(self._pool, rules.validate_name(name))

    async def create_workspace(self, ctx: CallerContext, tenant_id: str, name: str) -> str:
        tenant = await self.tenant(ctx, tenant_id)
        return await identity.create_workspace(self._pool, tenant, rules.validate_name(name))

    async def add_member(
        self, ctx: CallerContext, tenant_id: str, workspace_id: str, principal_id: str, role: str
    ) -> None:
        tenant = await self.tenant(ctx, tenant_id)
        rules.validate_role(role)
        if not is_uuid(workspace_id) or not await identity.workspace_exists(self._pool, tenant, workspace_id):
            raise NotFound("no such workspace")
        await identity.add_member(self._pool, tenant, workspace_id, await self._principal(tenant, principal_id), role)

    async def create_principal(
        self, ctx: CallerContext, tenant_id: str, name: str, principal_type: str, trusted: bool
    ) -> str:
        tenant = await self.tenant(ctx, tenant_id)
        rules.validate_name(name)
        rules.validate_principal_type(principal_type)
        if principal_type == "admin":
            rules.require_platform_admin(ctx, "only the platform administrator creates admin principals")
        return await identity.create_principal(self._pool, tenant, name, principal_type, trusted)

    # API keys

    async def create_api_key(
        self, ctx: CallerContext, tenant_id: str, principal_id: str, scopes: list[str], label: str
    ) -> IssuedApiKey:
        normalized = normalize_scopes(scopes)
        validate_label(label, "label")
        tenant = await self.tenant(ctx, tenant_id)
        principal = await self._principal(tenant, principal_id)
        if await identity.principal_type(self._pool, tenant, principal) == "admin":
            rules.require_platform_admin(ctx, "only the platform administrator issues keys for admin principals")
        issued = await identity.create_key(self._pool, tenant, principal, normalized, label)
        return IssuedApiKey(issued.key_id, issued.key, tenant, principal, normalized, label)

    async def list_api_keys(self, ctx: CallerContext, tenant_id: str) -> list[ApiKeyInfo]:
        return await identity.list_keys(self._pool, await self.tenant(ctx, tenant_id))

    async def revoke_api_key(self, ctx: CallerContext, tenant_id: str, key_id: str) -> None:
        if not await identity.revoke_key(self._pool, await self.tenant(ctx, tenant_id), key_id):
            raise NotFound("no such API key")

    # Tenant configuration

    async def config(self, ctx: CallerContext, tenant_id: str) -> TenantConfig:
        return await identity.full_config(self._pool, await self.tenant(ctx, tenant_id))

    async def patch_config(self, ctx: CallerContext, tenant_id: str, changes: ConfigChanges) -> TenantConfig:
        """Validate each change and the size of the configuration it leaves (``MAX_TENANT_CONFIG_BYTES``), then
        merge them into the configuration in one versioned write."""
        tenant = await self.tenant(ctx, tenant_id)
        if not changes.given():
            settings = ", ".join(sorted(f.name for f in dataclasses.fields(ConfigChanges)))
            raise ValidationFailed(f"nothing to change: give one of {settings}", field="body")
        if changes.public_enabled is not None:
            rules.require_platform_admin(
                ctx,
                "publishing a tenant to every other tenant is the platform administrator's call",
                field="public_enabled",
            )
        patch = await self._config_patch(tenant, changes)
        if patch:
            current, _ = await identity.tenant_config(self._pool, tenant)
            rules.validate_config_size({**current, **patch}, sorted(patch))
            await identity.merge_tenant_config(self._pool, tenant, patch, ctx.principal_id)
        if changes.public_enabled is not None:
            await identity.set_tenant_public(self._pool, tenant, changes.public_enabled)
        return await identity.full_config(self._pool, tenant)

    async def _config_patch(self, tenant: str, changes: ConfigChanges) -> dict[str, Any]:
        patch: dict[str, Any] = {}
        current: dict[str, Any] = {}
        if changes.rate_limits is not None or changes.ttl_days is not None:
            current, _ = await identity.tenant_config(self._pool, tenant)
        if changes.rate_limits is not None:
            patch["rate_limits"] = {
                **current.get("rate_limits", {}),
                **validate_limits(changes.rate_limits, self._settings.rate_limit_ceiling_per_minute),
            }
        if changes.feedback_daily_limit is not None:
            patch["feedback_daily_limit"] = rules.validate_range(
                changes.feedback_daily_limit, 1, rules.MAX_FEEDBACK_DAILY_LIMIT, "feedback_daily_limit"
            )
        if changes.ttl_days is not None:
            overrides = ttl.parse_overrides(rules.parse_json_setting(changes.ttl_days, "ttl_days"))
            patch["ttl_days"] = ttl.overlay(current.get("ttl_days"), overrides)
        if changes.trash_retention_days is not None:
            patch["trash_retention_days"] = rules.validate_range(
                changes.trash_retention_days, 1, rules.MAX_TRASH_RETENTION_DAYS, "trash_retention_days"
            )
        if changes.secret_policy is not None:
            patch["secret_policy"] = rules.validate_secret_policy(changes.secret_policy)
        if changes.recall is not None:
            recall = rules.parse_json_setting(changes.recall, "recall")
            patch["recall"] = scoring.parse_recall_weights(recall).as_dict()
        if changes.promotion is not None:
            gates = rules.parse_json_setting(changes.promotion, "promotion")
            patch["promotion"] = promotion.parse_gates(gates).as_dict()
        if changes.placement_rules is not None:
            placement = parse_placement_rules(rules.parse_json_setting(changes.placement_rules, "placement_rules"))
            patch["placement_rules"] = [dataclasses.asdict(r) for r in placement]
        return patch

    async def rate_limits(self, ctx: CallerContext) -> dict[str, int]:
        """The rate limits the caller's tenant set, by route class (the gateway's defaults fill the rest). Any
        authenticated caller may read its own tenant's: the gateway asks on behalf of every request."""
        if not is_uuid(ctx.tenant_id):
            return {}
        config, _ = await identity.tenant_config(self._pool, ctx.tenant_id)
        return {route: int(value) for route, value in dict(config.get("rate_limits", {})).items()}

    # Memory kinds

    async def kinds(self, ctx: CallerContext, tenant_id: str) -> list[dict[str, Any]]:
        return await kinds.list_kinds(self._pool, await self.tenant(ctx, tenant_id))

    async def create_kind(self, ctx: CallerContext, tenant_id: str, name: str, flags: dict[str, Any]) -> dict[str, Any]:
        """``flags``: singleton, requires_review, stays_in_recall_when_disputed, default_importance."""
        tenant = await self.tenant(ctx, tenant_id)
        rules.validate_kind_name(name)
        rules.validate_default_importance(flags["default_importance"])
        existing = await kinds.list_kinds(self._pool, tenant)
        if any(k["name"] == name and k["built_in"] for k in existing):
            raise ValidationFailed(f"{name!r} is a built-in kind; custom kinds cannot shadow it", field="name")
        if any(k["name"] == name for k in existing):
            raise Conflict(f"kind {name!r} exists; change it with PATCH", field="name", code="name_taken")
        return await kinds.create(self._pool, tenant, name, flags)

    async def patch_kind(
        self, ctx: CallerContext, tenant_id: str, name: str, changes: dict[str, Any]
    ) -> dict[str, Any]:
        """Change a custom kind's flags (``changes``: singleton, requires_review, stays_in_recall_when_disputed,
        default_importance, enabled); a built-in kind may only be switched on or off for the tenant."""
        tenant = await self.tenant(ctx, tenant_id)
        if not changes:
            raise ValidationFailed("nothing to change", field="body")
        if "default_importance" in changes:
            rules.validate_default_importance(changes["default_importance"])
        if any(k["name"] == name and k["built_in"] for k in await kinds.list_kinds(self._pool, tenant)):
            if set(changes) != {"enabled"}:
                raise PermissionDenied(
                    f"{name!r} is a built-in kind: a tenant may only enable or disable it", code="built_in_kind"
                )
            return await kinds.switch_built_in(self._pool, tenant, name, changes["enabled"])
        changed = await kinds.update(self._pool, tenant, name, changes)
        if changed is None:
            raise NotFound(f"no custom kind {name!r}")
        return changed

    # Promotion

    async def promote(
        self, ctx: CallerContext, tenant_id: str, *, dry_run: bool, limit: int
    ) -> tuple[str, Counter[str]]:
        """The same decisions as the promotion consumer: oldest proposals first; counts per outcome."""
        tenant = await self.tenant(ctx, tenant_id)
        rules.validate_range(limit, 1, rules.MAX_PROMOTE_LIMIT, "limit")
        counts = await promotion_runs.promote_proposed(
            self._pool, self._settings.events_subject_prefix, tenant_id=tenant, limit=limit, dry_run=dry_run
        )
        return tenant, counts

    # Tunnels

    async def add_tunnel(
        self, ctx: CallerContext, tenant_id: str, from_wing: str, from_room: str, to_wing: str, to_room: str
    ) -> tuple[Tunnel, bool]:
        """The tunnel and whether it is new (the same two areas answer the existing one)."""
        tenant = await self.tenant(ctx, tenant_id)
        rules.validate_tunnel(from_wing, from_room, to_wing, to_room)
        async with tenant_tx(self._pool, tenant) as conn:
            return await edges.add_tunnel(conn, tenant, from_wing, from_room, to_wing, to_room, ctx.principal_id)

    async def tunnels(self, ctx: CallerContext, tenant_id: str) -> list[Tunnel]:
        async with tenant_tx(self._pool, await self.tenant(ctx, tenant_id)) as conn:
            return await edges.tunnels(conn)

    async def remove_tunnel(self, ctx: CallerContext, tenant_id: str, tunnel_id: str) -> None:
        async with tenant_tx(self._pool, await self.tenant(ctx, tenant_id)) as conn:
            if not is_uuid(tunnel_id) or not await edges.remove_tunnel(conn, tunnel_id):
                raise NotFound(f"no tunnel {tunnel_id}")
