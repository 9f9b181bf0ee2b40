"""The rules of administering a tenant, checked by the Admin service before anything is written.

Who manages which tenant: a caller with the admin scope manages its own tenant; a principal flagged
``platform_admin`` (the platform administrator) may also name another tenant, create tenants, create admin
principals, issue keys for them and publish a tenant to every other. A tenant the caller may not manage is
reported as not found, like one that does not exist. Each other rule names the field it checks."""

from __future__ import annotations

import json
import re
from typing import Any

from engram.domain.keys import allows
from engram.domain.models import CallerContext
from engram.domain.validation import validate_choice
from engram.domain.values import PrincipalType, SecretPolicy, WorkspaceRole
from engram.errors import PermissionDenied, ValidationFailed

MAX_NAME_LENGTH = 200
KIND_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
DEFAULT_KIND_IMPORTANCE = 0.5
MAX_PROMOTE_LIMIT = 10_000
MAX_FEEDBACK_DAILY_LIMIT = 1_000_000
MAX_TRASH_RETENTION_DAYS = 3650
MAX_TENANT_CONFIG_BYTES = 65_536  # a tenant's whole configuration as JSON, and any one setting sent as JSON


def require_admin_scope(ctx: CallerContext) -> None:
    if not allows(ctx.scopes, "admin"):
        raise PermissionDenied("Requires scope: admin", code="insufficient_scope")


def is_platform_admin(ctx: CallerContext) -> bool:
    """The principal's explicit flag (set by migration 015 for the development admin only), with the admin
    scope; a principal's type ``admin`` alone no longer makes one."""
    return ctx.platform_admin and allows(ctx.scopes, "admin")


def require_platform_admin(ctx: CallerContext, detail: str, field: str | None = None) -> None:
    """Refuse (``platform_admin_only``, with ``detail``) what only the platform administrator may do."""
    if not is_platform_admin(ctx):
        raise PermissionDenied(detail, code="platform_admin_only", field=field)


def may_name_tenant(ctx: CallerContext, tenant_id: str) -> bool:
    """Whether the caller may act on ``tenant_id`` (its own, or any for the platform administrator)."""
    return tenant_id == ctx.tenant_id or is_platform_admin(ctx)


def validate_name(value: str, field: str = "name") -> str:
    if not 1 <= len(value) <= MAX_NAME_LENGTH:
        raise ValidationFailed(f"{field} must be 1–{MAX_NAME_LENGTH} characters", field=field)
    return value


def validate_optional_text(value: str, field: str) -> str:
    if len(value) > MAX_NAME_LENGTH:
        raise ValidationFailed(f"{field} must be at most {MAX_NAME_LENGTH} characters", field=field)
    return value


def validate_role(value: str) -> str:
    validate_choice(value, WorkspaceRole, "role")
    return value


def validate_principal_type(value: str) -> str:
    validate_choice(value, PrincipalType, "type")
    return value


def validate_secret_policy(value: str) -> str:
    validate_choice(value, SecretPolicy, "secret_policy")
    return value


def validate_range(value: int, low: int, high: int, field: str) -> int:
    if not low <= value <= high:
        raise ValidationFailed(f"{field} must be {low}–{high}, got {value}", field=field)
    return value


def validate_kind_name(value: str) -> str:
    if not KIND_NAME.match(value):
        raise ValidationFailed(
            "a kind name is lower-case letters, digits and _, starts with a letter, at most 64 characters",
            field="name",
        )
    return value


def validate_default_importance(value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise ValidationFailed(f"default_importance must be between 0 and 1, got {value}", field="default_importance")
    return value


def validate_tunnel(from_wing: str, from_room: str, to_wing: str, to_room: str) -> None:
    """Both ends name a wing (a room is optional: empty covers the whole wing), and they differ."""
    validate_name(from_wing, "from_wing")
    validate_name(to_wing, "to_wing")
    validate_optional_text(from_room, "from_room")
    validate_optional_text(to_room, "to_room")
    if (from_wing, from_room) == (to_wing, to_room):
        raise ValidationFailed("a tunnel connects two different areas", field="to_wing")


def parse_json_setting(text: str, field: str) -> Any:
    """A configuration setting sent as JSON text, at most ``MAX_TENANT_CONFIG_BYTES`` of it (checked before it
    is parsed)."""
    size = len(text.encode())
    if size > MAX_TENANT_CONFIG_BYTES:
        raise ValidationFailed(f"{field} is {size:,} bytes of JSON; at most {MAX_TENANT_CONFIG_BYTES:,}", field=field)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValidationFailed(f"{field} is not valid JSON: {exc}", field=field) from exc


def validate_config_size(config: dict[str, Any], changed: list[str]) -> None:
    """The configuration a change would leave (``config``, with the ``changed`` settings) fits in
    ``MAX_TENANT_CONFIG_BYTES`` of JSON; the error names the largest changed setting."""
    size = len(json.dumps(config).encode())
    if size <= MAX_TENANT_CONFIG_BYTES:
        return
    largest = max(changed, key=lambda name: len(json.dumps(config.get(name)).encode()), default="config")
    raise ValidationFailed(
        f"the tenant configuration would be {size:,} bytes of JSON with this change; at most "
        f"{MAX_TENANT_CONFIG_BYTES:,} (the largest setting changed: {largest})",
        field=largest,
    )
