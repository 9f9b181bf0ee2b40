"""The SDK's rules that need no server: which failures are retried and for how long, how an answer becomes an
error class, that the sync and the async client offer the same methods, and that every gateway route has
one. (The SDK against the real gateway: tests/integration/test_sdk.py.)"""

from __future__ import annotations

import inspect
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from engram_client import (
    AsyncEngramClient,
    Conflict,
    EngramClient,
    EngramError,
    Forbidden,
    NotFound,
    RateLimited,
    RetryPolicy,
    Unauthorized,
    Unavailable,
    ValidationFailed,
)
from engram_client import operations as ops
from engram_client.errors import from_response

from engram.config import Settings
from engram.errors import ValidationFailed as EngramValidationFailed
from engram.events.tail import since_time, subjects
from services.gateway.app import create_app

REQUEST = httpx.Request("GET", "http://gateway/v1/items/x")


def _answer(status: int, body: object = None, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers, request=REQUEST)


def _problem(status: int, code: str, field: str | None = None) -> dict[str, object]:
    return {
        "type": f"https://engram.dev/problems/{code}",
        "status": status,
        "code": code,
        "detail": "x",
        "field": field,
    }


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (401, "unauthenticated", Unauthorized),
        (403, "review_not_allowed", Forbidden),
        (404, "not_found", NotFound),
        (409, "not_live", Conflict),
        (422, "secret_detected", ValidationFailed),
        (429, "rate_limited", RateLimited),
        (503, "unavailable", Unavailable),
        (500, "internal", EngramError),
    ],
)
def test_each_status_raises_its_class_with_the_problem_code(status: int, code: str, cls: type[EngramError]) -> None:
    error = from_response(_answer(status, _problem(status, code, field="content")))
    assert type(error) is cls and (error.status, error.code, error.field) == (status, code, "content")


def test_retry_after_is_read_in_seconds_or_as_a_date() -> None:
    limited = from_response(_answer(429, _problem(429, "rate_limited"), {"Retry-After": "7"}))
    assert isinstance(limited, RateLimited) and limited.retry_after == 7
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    unavailable = from_response(_answer(503, _problem(503, "unavailable"), {"Retry-After": later}))
    assert isinstance(unavailable, Unavailable) and unavailable.retry_after is not None
    assert 25 < unavailable.retry_after <= 30


def test_an_answer_that_is_not_a_problem_still_raises_by_status() -> None:
    error = from_response(httpx.Response(502, text="bad gateway", request=REQUEST))
    assert type(error) is EngramError and (error.status, error.code) == (502, "internal")


def _policy(**options: float) -> RetryPolicy:
    return RetryPolicy(jitter=random.Random(7), **options)  # type: ignore[arg-type]


def test_a_429_waits_at_least_retry_after_and_retries_are_bounded() -> None:
    policy = _policy(max_attempts=3, max_wait_s=20)
    limited = RateLimited("slow down", retry_after=5.0, status=429, code="rate_limited")
    first = policy.delay(1, limited, idempotent=False, waited_s=0)
    assert first is not None and first >= 5.0
    assert policy.delay(3, limited, idempotent=False, waited_s=5) is None  # attempts spent
    assert policy.delay(1, RateLimited("x", retry_after=30.0), idempotent=True, waited_s=0) is None  # too long


def test_unavailable_and_lost_answers_are_retried_only_when_safe() -> None:
    policy = _policy()
    unavailable = Unavailable("down", retry_after=1.0, status=503, code="unavailable")
    assert policy.delay(1, unavailable, idempotent=True, waited_s=0) == pytest.approx(1.0, abs=0.5)
    assert policy.delay(1, unavailable, idempotent=False, waited_s=0) is None
    lost = httpx.ReadTimeout("no answer", request=REQUEST)
    assert policy.delay(1, lost, idempotent=True, waited_s=0) is not None
    assert policy.delay(1, lost, idempotent=False, waited_s=0) is None
    refused = httpx.ConnectError("refused", request=REQUEST)  # nothing was sent
    assert policy.delay(1, refused, idempotent=False, waited_s=0) is not None
    assert policy.delay(1, NotFound("gone", status=404, code="not_found"), idempotent=True, waited_s=0) is None


def test_backoff_grows_and_is_capped() -> None:
    policy = _policy(backoff_s=1.0, max_backoff_s=4.0, max_attempts=10, max_wait_s=1000)
    refused = httpx.ConnectError("refused", request=REQUEST)
    delays = [policy.delay(n, refused, idempotent=True, waited_s=0) or 0.0 for n in range(1, 9) for _ in range(20)]
    assert max(delays) <= 4.0 and max(delays[:20]) <= 1.0 and max(delays) > 1.0


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(cls).items()
        if callable(member) and not name.startswith("_") and name not in {"close", "aclose"}
    }


def test_the_sync_and_the_async_client_offer_the_same_methods() -> None:
    sync, async_ = _public(EngramClient), _public(AsyncEngramClient)
    assert set(sync) == set(async_) and len(sync) > 40
    differ = [name for name in sync if str(sync[name]).replace("Iterator", "AsyncIterator") != str(async_[name])]
    assert not differ, f"signatures differ: {differ}"
    awaited = {name for name in async_ if inspect.iscoroutinefunction(getattr(AsyncEngramClient, name))}
    assert awaited == {name for name in async_ if not name.startswith("iter_")}


ROUTES = {
    ("POST", "/v1/remember"): "remember",
    ("POST", "/v1/remember/batch"): "remember_batch",
    ("POST", "/v1/observe"): "observe",
    ("POST", "/v1/recall"): "recall",
    ("POST", "/v1/search"): "search",
    ("GET", "/v1/items"): "list_items",
    ("GET", "/v1/stats"): "stats",
    ("GET", "/v1/items/{item_id}"): "get",
    ("PATCH", "/v1/items/{item_id}"): "patch",
    ("DELETE", "/v1/items/{item_id}"): "delete",
    ("GET", "/v1/items/{item_id}/status"): "status",
    ("GET", "/v1/items/{item_id}/events"): "events",
    ("GET", "/v1/items/{item_id}/edges"): "edges",
    ("GET", "/v1/items/{item_id}/promotion-readiness"): "promotion_readiness",
    ("POST", "/v1/items/{item_id}/review"): "review",
    ("POST", "/v1/items/{item_id}/verify"): "verify",
    ("POST", "/v1/items/{item_id}/supersede"): "supersede",
    ("POST", "/v1/items/{item_id}/invalidate"): "invalidate",
    ("GET", "/v1/items/expiry-candidates"): "expiry_candidates",
    ("POST", "/v1/items/bulk"): "bulk",
    ("GET", "/v1/trash"): "trash",
    ("POST", "/v1/trash/{trash_id}/restore"): "restore",
    ("POST", "/v1/feedback"): "feedback",
    ("POST", "/v1/classify"): "classify",
    ("GET", "/v1/conflicts"): "conflicts",
    ("POST", "/v1/conflicts/{conflict_id}/resolve"): "resolve_conflict",
    ("POST", "/v1/edges"): "link",
    ("DELETE", "/v1/edges/{edge_id}"): "unlink",
    ("POST", "/v1/admin/tenants"): "admin_create_tenant",
    ("POST", "/v1/admin/workspaces"): "admin_create_workspace",
    ("POST", "/v1/admin/workspaces/{workspace_id}/members"): "admin_add_member",
    ("POST", "/v1/admin/principals"): "admin_create_principal",
    ("POST", "/v1/admin/api-keys"): "admin_create_api_key",
    ("GET", "/v1/admin/api-keys"): "admin_api_keys",
    ("DELETE", "/v1/admin/api-keys/{key_id}"): "admin_revoke_api_key",
    ("GET", "/v1/admin/tenant-config"): "admin_tenant_config",
    ("PATCH", "/v1/admin/tenant-config"): "admin_patch_tenant_config",
    ("GET", "/v1/admin/kinds"): "admin_kinds",
    ("POST", "/v1/admin/kinds"): "admin_create_kind",
    ("PATCH", "/v1/admin/kinds/{name}"): "admin_patch_kind",
    ("POST", "/v1/admin/promote"): "admin_promote",
    ("POST", "/v1/admin/tunnels"): "admin_add_tunnel",
    ("GET", "/v1/admin/tunnels"): "admin_tunnels",
    ("DELETE", "/v1/admin/tunnels/{tunnel_id}"): "admin_remove_tunnel",
}
"""Each REST route and the client method that sends it (the routes of issue #15 included before they land)."""


def test_every_gateway_route_has_a_client_method() -> None:
    paths = create_app(Settings()).openapi()["paths"]
    served = {(method.upper(), path) for path, ops in paths.items() for method in ops if path.startswith("/v1/")}
    assert ("POST", "/v1/remember") in served  # positive control
    assert not served - set(ROUTES), f"routes without a client method: {sorted(served - set(ROUTES))}"
    assert set(ROUTES.values()) <= set(_public(EngramClient))


def test_tail_reads_since_as_a_duration_or_a_time() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert since_time("10m", now) == now - timedelta(minutes=10)
    assert since_time("1.5h", now) == now - timedelta(minutes=90)
    assert since_time("2026-11-30T08:00:00+01:00") == datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
    for bad in ("yesterday", "2026-11-30T08:00:00", "10x"):
        with pytest.raises(EngramValidationFailed) as refused:
            since_time(bad)
        assert refused.value.field == "since"


def test_tail_filters_on_one_subject_per_type() -> None:
    tenant = "00000000-0000-4000-8000-000000000001"
    assert subjects("engram.events", [""], None) == ["engram.events.*.>"]
    assert subjects("engram.events", ["memory.created", "engram.conflict.detected", "memory.created"], tenant) == [
        f"engram.events.{tenant}.memory.created",
        f"engram.events.{tenant}.conflict.detected",
    ]
    with pytest.raises(EngramValidationFailed):
        subjects("engram.events", ["memory.*"], None)
    with pytest.raises(EngramValidationFailed):
        subjects("engram.events", ["memory.created"], "acme")


def test_a_remember_is_repeated_after_a_lost_answer_only_when_a_repeat_deduplicates() -> None:
    assert ops.remember("text", None, {}).idempotent
    assert not ops.remember("text", None, {"supersedes": ["a"]}).idempotent  # the repeat would answer 409
    assert ops.remember("text", "key-1", {"supersedes": ["a"]}).idempotent
    assert ops.remember("text", "key-1", {}).headers == {"Idempotency-Key": "key-1"}
    assert not ops.supersede("a", "text", {}).idempotent and not ops.review("a", "reject", "").idempotent
