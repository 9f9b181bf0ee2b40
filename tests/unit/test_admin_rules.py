"""The pure rules of administering a tenant (engram/domain/admin.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engram.domain import admin
from engram.domain.models import CallerContext
from engram.errors import PermissionDenied, ValidationFailed

TENANT, OTHER = "00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b"


def test_only_the_platform_administrator_names_another_tenant() -> None:
    tenant_admin = CallerContext(TENANT, "p", "user", frozenset({"admin"}))
    platform = CallerContext(TENANT, "p", "admin", frozenset({"admin"}), platform_admin=True)
    assert admin.may_name_tenant(tenant_admin, TENANT)
    assert not admin.may_name_tenant(tenant_admin, OTHER)
    assert admin.may_name_tenant(platform, OTHER)
    with pytest.raises(PermissionDenied) as refused:
        admin.require_platform_admin(tenant_admin, "only the platform administrator", field="public_enabled")
    assert (refused.value.code, refused.value.field) == ("platform_admin_only", "public_enabled")
    admin.require_platform_admin(platform, "only the platform administrator")


def test_a_principal_of_type_admin_is_not_a_platform_administrator_without_the_flag() -> None:
    """Security review finding 9: the type `admin` alone used to make a platform administrator."""
    typed_admin = CallerContext(TENANT, "p", "admin", frozenset({"admin"}))
    assert not admin.is_platform_admin(typed_admin)
    assert not admin.may_name_tenant(typed_admin, OTHER)
    flag_without_scope = CallerContext(TENANT, "p", "user", frozenset({"read"}), platform_admin=True)
    assert not admin.is_platform_admin(flag_without_scope)
    assert admin.is_platform_admin(CallerContext(TENANT, "p", "user", frozenset({"admin"}), platform_admin=True))


def test_the_admin_scope_is_required() -> None:
    admin.require_admin_scope(CallerContext(TENANT, "p", "user", frozenset({"admin"})))
    with pytest.raises(PermissionDenied) as refused:
        admin.require_admin_scope(CallerContext(TENANT, "p", "user", frozenset({"read", "write", "review"})))
    assert refused.value.code == "insufficient_scope"


@pytest.mark.parametrize(
    ("check", "field"),
    [
        (lambda: admin.validate_name(""), "name"),
        (lambda: admin.validate_name("x" * 201), "name"),
        (lambda: admin.validate_role("superuser"), "role"),
        (lambda: admin.validate_principal_type("robot"), "type"),
        (lambda: admin.validate_secret_policy("ignore"), "secret_policy"),
        (lambda: admin.validate_kind_name("Runbook"), "name"),
        (lambda: admin.validate_kind_name("9lives"), "name"),
        (lambda: admin.validate_default_importance(1.5), "default_importance"),
        (lambda: admin.validate_range(0, 1, 3650, "trash_retention_days"), "trash_retention_days"),
        (lambda: admin.validate_tunnel("infra", "db", "infra", "db"), "to_wing"),
        (lambda: admin.validate_tunnel("", "", "infra", ""), "from_wing"),
        (lambda: admin.parse_json_setting("{broken", "promotion"), "promotion"),
        (lambda: admin.parse_json_setting(f'["{"x" * 65_534}"]', "placement_rules"), "placement_rules"),
        (lambda: admin.validate_config_size({"recall": {}, "placement_rules": ["x" * 65_536]}, ["recall"]), "recall"),
        (lambda: admin.validate_config_size({"a": "x" * 40_000, "b": "y" * 30_000}, ["a", "b"]), "a"),
    ],
)
def test_each_refusal_names_its_field(check: Callable[[], object], field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        check()
    assert refused.value.field == field


def test_valid_values_pass() -> None:
    assert admin.validate_kind_name("runbook_v2") == "runbook_v2"
    assert admin.validate_role("viewer") == "viewer"
    assert admin.parse_json_setting('{"min_age_minutes": 10}', "promotion") == {"min_age_minutes": 10}
    assert admin.parse_json_setting(f'["{"x" * 65_532}"]', "placement_rules") == ["x" * 65_532]  # 65,536 bytes
    admin.validate_config_size({"placement_rules": ["x" * 65_000]}, ["placement_rules"])
    admin.validate_tunnel("infra", "", "infra", "db")  # a wing and one of its rooms are different areas
