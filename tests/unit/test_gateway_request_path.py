"""The gateway's per-request work, kept cheap without changing what it does: one key lookup per request however
many dependencies need the caller, the caller's request id and traceparent, new ids in their usual shapes,
and the media-type rule. The app is the real one (create_app); the key lookup and ingest are stand-ins."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient
from starlette.requests import Request

from engram.config import Settings
from engram.db import keys
from engram.domain.keys import hash_secret
from engram.domain.models import CallerContext, StoredKey
from engram.errors import Unauthenticated
from engram.v1 import ingest_pb2, memory_pb2
from services.gateway.app import create_app, request_path
from services.gateway.auth import CALLER, Authenticator, context, trace_context
from services.gateway.clients import Downstream
from services.gateway.guards import new_request_id
from services.gateway.limits import LIMIT, Limits
from services.gateway.media import is_json

KEY_ID = "0123456789abcdef"
SECRET = "S" * 43
TENANT = "00000000-0000-4000-8000-0000000000e1"
PRINCIPAL = "00000000-0000-4000-8000-0000000000e2"
HEADERS = {"authorization": f"Bearer eng_{KEY_ID}_{SECRET}"}


class Ingest:
    def __init__(self) -> None:
        self.metadata: list[dict[str, str]] = []

    async def Remember(self, request: Any, **call: Any) -> Any:  # noqa: N802
        self.metadata.append(dict(call["metadata"]))
        item = memory_pb2.MemoryItem(id="00000000-0000-4000-8000-0000000000e3", tenant_id=TENANT, content="x")
        return ingest_pb2.RememberResponse(id=item.id, status="created", review_status="active", item=item)


class Admin:
    async def RateLimits(self, request: Any, **call: Any) -> Any:  # noqa: N802
        from engram.v1 import admin_pb2

        return admin_pb2.RateLimitsResponse()


@pytest.fixture
def gateway(monkeypatch: pytest.MonkeyPatch) -> tuple[FastAPI, Authenticator, Ingest]:
    return _gateway(monkeypatch, Settings(auth_enabled=True))


def _gateway(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> tuple[FastAPI, Authenticator, Ingest]:
    salt = b"t" * 16
    stored = StoredKey(KEY_ID, TENANT, PRINCIPAL, "agent", salt, hash_secret(salt, SECRET), ("write",), True, False)

    async def find(pool: Any, key_id: str) -> StoredKey | None:
        return stored if key_id == KEY_ID else None

    monkeypatch.setattr(keys, "find", find)
    app = create_app(settings)
    ingest = Ingest()
    ds = Downstream(settings, None, None, ingest, None, Admin())  # type: ignore[arg-type]
    app.state.downstream = ds
    app.state.authenticator = Authenticator(None, settings)  # type: ignore[arg-type]
    app.state.limits = Limits(ds, settings)
    return app, app.state.authenticator, ingest


def test_a_rate_limited_route_looks_the_key_up_once(gateway: tuple[FastAPI, Authenticator, Ingest]) -> None:
    app, authenticator, ingest = gateway
    client = TestClient(app)  # no `with`: the lifespan (database, gRPC) never starts
    answer = client.post("/v1/remember", json={"content": "x"}, headers={**HEADERS, "x-request-id": "req-1"})
    assert answer.status_code == 201, answer.text
    assert authenticator.lookups == 1
    sent = ingest.metadata[0]
    assert (sent["x-engram-tenant-id"], sent["x-engram-principal-id"]) == (TENANT, PRINCIPAL)
    assert sent["x-request-id"] == "req-1"  # the caller's own id, as RecordLatency kept it
    assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-01", sent["traceparent"])


def test_without_a_usable_request_id_one_is_made_for_the_request(
    gateway: tuple[FastAPI, Authenticator, Ingest],
) -> None:
    app, _, ingest = gateway
    incoming = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
    answer = TestClient(app).post(
        "/v1/remember", json={"content": "x"}, headers={**HEADERS, "x-request-id": "bad id", "traceparent": incoming}
    )
    assert answer.status_code == 201, answer.text
    sent = ingest.metadata[0]
    assert str(uuid.UUID(sent["x-request-id"])) == sent["x-request-id"]
    assert sent["traceparent"] == incoming  # a well-formed traceparent travels on


def test_a_refused_key_is_refused_before_the_rate_limit(gateway: tuple[FastAPI, Authenticator, Ingest]) -> None:
    app, authenticator, ingest = gateway
    wrong = {"authorization": f"Bearer eng_{KEY_ID}_{'W' * 43}"}
    for _ in range(2):  # revocation-style refusals are looked up on every request, never remembered
        answer = TestClient(app).post("/v1/remember", json={"content": "x"}, headers=wrong)
        assert answer.status_code == 401 and answer.json()["code"] == "unauthenticated"
    assert authenticator.lookups == 2 and ingest.metadata == []


def test_fastapis_own_telemetry_asks_no_provider_per_request(
    gateway: tuple[FastAPI, Authenticator, Ingest], monkeypatch: pytest.MonkeyPatch
) -> None:
    """FastAPI 0.165's native OpenTelemetry is off (the gateway's spans are the instrumentation's): a request does
    not ask the global providers whether they are configured."""
    from opentelemetry import _logs, metrics, trace

    app, _, _ = gateway
    client = TestClient(app)
    assert client.post("/v1/remember", json={"content": "x"}, headers=HEADERS).status_code == 201  # built
    asked: list[str] = []
    for module, name in (
        (trace, "get_tracer_provider"),
        (metrics, "get_meter_provider"),
        (_logs, "get_logger_provider"),
    ):
        original = getattr(module, name)

        def counted(*args: Any, _original: Any = original, _name: str = name) -> Any:
            asked.append(_name)
            return _original(*args)

        monkeypatch.setattr(module, name, counted)
    assert client.post("/v1/remember", json={"content": "x"}, headers=HEADERS).status_code == 201
    assert asked == []


def test_a_nul_in_a_query_parameter_is_refused_naming_it(gateway: tuple[FastAPI, Authenticator, Ingest]) -> None:
    app, authenticator, _ = gateway
    answer = TestClient(app).get("/v1/items", params={"tag": "x\x00"}, headers=HEADERS)
    assert answer.status_code == 422 and answer.json()["field"] == "tag", answer.text
    assert authenticator.lookups == 0  # refused before authentication, as a body with a NUL is


def test_a_body_not_sent_as_json_is_refused_before_authentication(
    gateway: tuple[FastAPI, Authenticator, Ingest],
) -> None:
    app, authenticator, ingest = gateway
    answer = TestClient(app).post("/v1/remember", content=b'{"content": "x"}', headers={"content-type": "text/plain"})
    assert answer.status_code == 415 and answer.json()["code"] == "unsupported_media_type", answer.text
    assert authenticator.lookups == 0 and ingest.metadata == []


def test_public_routes_read_no_key_and_still_refuse_a_nul(gateway: tuple[FastAPI, Authenticator, Ingest]) -> None:
    app, authenticator, _ = gateway
    client = TestClient(app)
    assert client.get("/health").status_code == 200
    assert client.get("/docs").status_code == 200  # fastapi-offline's page, declared public by create_app
    for path in ("/health", "/docs"):
        answer = client.get(path, params={"q": "x\x00"})
        assert answer.status_code == 422 and answer.json()["field"] == "q", (path, answer.text)
    assert authenticator.lookups == 0


def test_a_route_that_declares_no_scope_policy_is_refused_before_the_key(
    gateway: tuple[FastAPI, Authenticator, Ingest],
) -> None:
    app, authenticator, _ = gateway

    @app.get("/undeclared")
    async def undeclared() -> dict[str, str]:
        return {"reached": "yes"}

    answer = TestClient(app).get("/undeclared", headers=HEADERS)
    assert answer.status_code == 403 and answer.json()["code"] == "no_scope_policy", answer.text
    assert authenticator.lookups == 0


def test_the_rate_limit_counts_after_the_scope_check_and_before_the_body_is_validated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one = Settings(auth_enabled=True, rate_limit_remember_per_minute=1, rate_limit_recall_per_minute=1)
    app, authenticator, ingest = _gateway(monkeypatch, one)
    client = TestClient(app)
    for _ in range(2):  # the key has no `read` scope: refused each time, never counted against recall's limit
        refused = client.post("/v1/recall", json={"query": "x", "mode": "keyword"}, headers=HEADERS)
        assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope", refused.text
    # an invalid body is counted (the limit runs before validation), so the valid one after it is over the limit
    assert client.post("/v1/remember", json={"content": 1}, headers=HEADERS).status_code == 422
    over = client.post("/v1/remember", json={"content": "x"}, headers=HEADERS)
    assert over.status_code == 429 and over.json()["code"] == "rate_limited", over.text
    assert ingest.metadata == [] and authenticator.lookups == 4


def test_each_rate_limited_route_declares_its_route_class() -> None:
    declared = {
        (method, context.path_format): getattr(context.endpoint, LIMIT)
        for context in iter_route_contexts(create_app(Settings()).routes)
        if isinstance(context.original_route, APIRoute) and hasattr(context.endpoint, LIMIT)
        for method in context.methods or ()
    }
    assert declared == {
        ("POST", "/v1/remember"): "remember",
        ("POST", "/v1/items/{item_id}/supersede"): "remember",
        ("POST", "/v1/observe"): "remember",
        ("POST", "/v1/recall"): "recall",
        ("POST", "/v1/search"): "recall",
        ("POST", "/v1/classify"): "recall",
        ("POST", "/v1/feedback"): "feedback",
        ("POST", "/v1/items/{item_id}/review"): "review",
        ("POST", "/v1/items/{item_id}/verify"): "review",
        ("POST", "/v1/items/{item_id}/invalidate"): "review",
        ("POST", "/v1/items/bulk"): "bulk",
    }  # remember/batch counts each of its memories itself


def test_the_idempotency_fingerprint_is_the_bodys_json_and_made_only_with_a_key() -> None:
    from services.gateway.idempotency import fingerprint, idempotency
    from services.gateway.schemas import RememberBody

    body = RememberBody(content="x", tags=["a"], metadata={"k": 1})
    once = idempotency("key-1", body)
    assert once is not None and once.request_hash == fingerprint(body.model_dump(mode="json"))

    class Unreadable(RememberBody):
        def model_dump(self, **options: Any) -> Any:
            raise AssertionError("dumped without a key")

    assert idempotency(None, Unreadable(content="x")) is None


def test_context_is_the_caller_the_request_has_and_the_apps_connections() -> None:
    ctx = CallerContext(tenant_id=TENANT, principal_id=PRINCIPAL, principal_type="agent")
    app = FastAPI()
    app.state.downstream = object()
    assert context(Request({"type": "http", "headers": [], CALLER: ctx, "app": app})) == (ctx, app.state.downstream)


def test_context_without_an_authenticated_caller_is_refused() -> None:
    with pytest.raises(Unauthenticated):
        context(Request({"type": "http", "headers": [], "app": FastAPI()}))


def test_new_request_ids_are_canonical_version_4_uuids() -> None:
    made = {new_request_id() for _ in range(2000)}
    assert len(made) == 2000
    for text in made:
        parsed = uuid.UUID(text)
        assert (str(parsed), parsed.version, parsed.variant) == (text, 4, uuid.RFC_4122)


def test_a_new_trace_context_is_a_well_formed_traceparent() -> None:
    made = {trace_context("") for _ in range(500)} | {trace_context("00-" + "0" * 32 + "-" + "1" * 16 + "-01")}
    assert len(made) == 501
    for value in made:
        assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-01", value) and value[3:35] != "0" * 32


@pytest.mark.parametrize(
    ("content_type", "json"),
    [
        ("application/json", True),
        ("application/json; charset=utf-8", True),
        ("Application/JSON", True),
        ("application/problem+json", True),
        ("text/json", False),
        ("application/x-www-form-urlencoded", False),
        ("", False),
    ],
)
def test_the_media_type_rule_is_the_same_on_every_ask(content_type: str, json: bool) -> None:
    assert [is_json(content_type) for _ in range(3)] == [json] * 3


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/v1/remember",
        "/v1/items/00000000-0000-4000-8000-0000000000aa/status",
        "//v1/remember",
        "/v1//items",
        "/v1/items/a?b",
        "/v1/items/a#b",
        "/v1/items/a\\b",
        "/v1/items/a\tb",
        "/v1/items/a\nb",
        "/v1/items/a\rb",
        "/v1/items/a b",
        "/v1/items/ä;x=1:y@z%2F",
        "/v1/items/\x00\x7f",
        " /v1",
    ],
)
@pytest.mark.parametrize("host", [None, b"gateway:8080", b"[::1]:8080", b"bad host/"])
@pytest.mark.parametrize("server", [None, ("127.0.0.1", 8080)])
def test_the_logged_path_is_the_request_urls_path(path: str, host: bytes | None, server: Any) -> None:
    scope: dict[str, Any] = {"type": "http", "path": path, "query_string": b"a=1", "headers": [], "server": server}
    if host is not None:
        scope["headers"] = [(b"host", host)]
    assert request_path(scope) == Request(scope).url.path
