"""The gateway's request schemas take the value sets: a bad value is refused naming the field and every allowed
value, /openapi.json lists them, and /ready probes the database the gateway was given."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio

from engram.config import Settings
from engram.db.pool import with_user
from engram.domain.values import LinkType, RecallMode, ReviewAction, SearchMode, Visibility
from services.gateway.app import create_app

# (route, body, field, the value set it takes)
BAD_VALUES = [
    ("/v1/remember", {"content": "x", "visibility": "everyone"}, "visibility", Visibility),
    ("/v1/recall", {"query": "x", "mode": "psychic"}, "mode", RecallMode),
    ("/v1/search", {"query": "x", "mode": "startup"}, "mode", SearchMode),
    ("/v1/edges", {"src_id": "a", "dst_id": "b", "type": "supersedes"}, "type", LinkType),
]


@pytest_asyncio.fixture
async def open_gateway(servers: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(servers.model_copy(update={"auth_enabled": False}))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway") as client:
            yield client


@pytest.mark.parametrize(("route", "body", "field", "values"), BAD_VALUES)
async def test_a_value_outside_its_set_is_refused_naming_the_field_and_the_allowed_values(
    open_gateway: httpx.AsyncClient, route: str, body: dict[str, str], field: str, values: type[Visibility]
) -> None:
    refused = await open_gateway.post(route, json=body)
    problem = refused.json()
    assert refused.status_code == 422 and problem["code"] == "validation_failed" and problem["field"] == field
    assert all(f"'{v.value}'" in problem["detail"] for v in values), problem["detail"]
    assert problem["errors"][0]["field"] == field


async def test_openapi_lists_the_allowed_values(open_gateway: httpx.AsyncClient) -> None:
    schemas = (await open_gateway.get("/openapi.json")).json()["components"]["schemas"]
    for name, values in (("Visibility", Visibility), ("RecallMode", RecallMode), ("ReviewAction", ReviewAction)):
        assert schemas[name]["enum"] == [v.value for v in values], name


async def test_ready_probes_the_app_database_url_when_that_is_all_the_gateway_has(
    servers: Settings, migrated: str
) -> None:
    app_only = servers.model_copy(
        update={"database_url": None, "app_database_url": with_user(migrated, servers.app_role)}
    )
    app = create_app(app_only)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway") as client:
            ready = await client.get("/ready")
    assert ready.json()["checks"]["database"] == "ok", ready.json()


async def test_ready_says_so_when_the_database_is_not_there(servers: Settings) -> None:
    """Populated first: the gateway is ready; then its pool (which /ready probes through) loses its
    connections."""
    app = create_app(servers.model_copy(update={"readiness_cache_s": 0.0}))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway") as client:
            assert (await client.get("/ready")).json()["checks"]["database"] == "ok"
            app.state.pool.terminate()
            ready = await client.get("/ready")
    assert ready.status_code == 503 and ready.json()["checks"]["database"].startswith("unreachable")


# counts that cross gRPC as int32: (method, route, body or query, field)
HUGE = 2**31
BEYOND_INT32 = [
    ("POST", "/v1/recall", {"json": {"query": "x", "item_budget": HUGE}}, "item_budget"),
    ("POST", "/v1/recall", {"json": {"query": "x", "byte_budget": -HUGE - 1}}, "byte_budget"),
    ("POST", "/v1/recall", {"json": {"query": "x", "token_budget": HUGE}}, "token_budget"),
    ("POST", "/v1/search", {"json": {"query": "x", "limit": HUGE}}, "limit"),
    ("GET", "/v1/trash", {"params": {"limit": HUGE}}, "limit"),
    ("GET", "/v1/conflicts", {"params": {"limit": HUGE}}, "limit"),
    ("GET", "/v1/items/expiry-candidates", {"params": {"within_days": HUGE}}, "within_days"),
    ("GET", "/v1/items/expiry-candidates", {"params": {"limit": HUGE}}, "limit"),
    ("GET", "/v1/items", {"params": {"limit": HUGE}}, "limit"),
]


@pytest.mark.parametrize(("method", "route", "request_", "field"), BEYOND_INT32)
async def test_a_count_beyond_int32_is_refused_naming_the_field_not_a_500(
    open_gateway: httpx.AsyncClient, method: str, route: str, request_: dict[str, object], field: str
) -> None:
    """Found by the fuzzer (tests/e2e/test_fuzz.py): such a value failed building the gRPC request."""
    refused = await open_gateway.request(method, route, **request_)  # type: ignore[arg-type]
    assert refused.status_code == 422, refused.text
    assert refused.json()["field"] == field
    # control: a value inside int32 but outside the rule still reaches the service, which names the same field
    inside = {k: {n: (0 if v in (HUGE, -HUGE - 1) else v) for n, v in part.items()} for k, part in request_.items()}
    checked = await open_gateway.request(method, route, **inside)  # type: ignore[arg-type]
    assert checked.status_code == 422 and checked.json()["field"] == field, checked.text


NUL_BODIES = [
    ("/v1/remember", {"content": "a\x00b"}, "content"),
    ("/v1/remember", {"content": "ab", "tags": ["ok", "x\x00"]}, "tags[1]"),
    ("/v1/remember", {"content": "ab", "metadata": {"k\x00": 1}}, "metadata.k\x00"),
    ("/v1/recall", {"query": "ab", "tags": ["x\x00"]}, "tags[0]"),
    ("/v1/search", {"query": "a\x00b"}, "query"),
    ("/v1/search", {"query": "ab", "wing": "x\x00"}, "wing"),
    # found by tests/e2e/test_fuzz.py: a NUL in a tag, with an empty tag and characters outside the BMP
    ("/v1/search", {"limit": 165, "tags": ["Ñ\x00", "", "p"], "query": "ᕩ¸\U00102ba9\x9dL9"}, "tags[0]"),
]


@pytest.mark.parametrize(("route", "body", "field"), NUL_BODIES)
async def test_a_nul_character_is_refused_naming_where_it_is_not_a_500(
    open_gateway: httpx.AsyncClient, route: str, body: dict[str, object], field: str
) -> None:
    response = await open_gateway.post(route, json=body)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["field"] == field and "NUL" in problem["detail"]


async def test_a_nul_character_in_a_query_parameter_is_refused_naming_it(open_gateway: httpx.AsyncClient) -> None:
    response = await open_gateway.get("/v1/items", params={"tag": "x\x00"})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "tag"
    assert (await open_gateway.get("/v1/items", params={"tag": "x"})).status_code == 200  # the same without it


async def test_a_backslash_before_u0000_written_out_is_no_nul(open_gateway: httpx.AsyncClient) -> None:
    response = await open_gateway.post("/v1/search", json={"query": "C:\\u0000 path"})
    assert response.status_code == 200, response.text


# Found by the wide fuzz sweep (tests/e2e/test_fuzz.py with ENGRAM_FUZZ_EXAMPLES, ENGRAM_FUZZ_SEED): each was a 500.
SURROGATE_BODIES = [  # raw JSON: a lone surrogate escape, which no UTF-8 text holds
    ("/v1/remember", r'{"content": "a\ud800b"}', "content"),
    ("/v1/remember", r'{"content": "ab", "tags": ["ok", "\uDFFF"]}', "tags[1]"),
    ("/v1/remember", r'{"content": "ab", "metadata": {"\ud800": 1}}', r"metadata.\ud800"),
    ("/v1/recall", r'{"query": "a\udc00 b"}', "query"),
]


@pytest.mark.parametrize(("route", "body", "field"), SURROGATE_BODIES)
async def test_a_lone_surrogate_is_refused_naming_where_it_is_not_a_500(
    open_gateway: httpx.AsyncClient, route: str, body: str, field: str
) -> None:
    response = await open_gateway.post(route, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["field"] == field and "surrogate" in problem["detail"]


async def test_an_escaped_surrogate_pair_is_one_character_and_passes(open_gateway: httpx.AsyncClient) -> None:
    body = r'{"query": "coffee \ud83d\ude00", "tags": ["\uD83C\uDF75"]}'  # what json.dumps(ensure_ascii=True) sends
    response = await open_gateway.post("/v1/search", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text


PAST_THE_ENDS = "0001-01-01T00:00:00+05:00"  # before year 1 in UTC
PAST_THE_END = "9999-12-31T23:00:00-05:00"  # after year 9999 in UTC
OUT_OF_RANGE_TIMES = [
    ("POST", "/v1/remember", {"json": {"content": "ab", "valid_from": PAST_THE_END}}, "valid_from"),
    ("POST", "/v1/remember", {"json": {"content": "ab", "expires_at": PAST_THE_ENDS}}, "expires_at"),
    ("POST", "/v1/recall", {"json": {"query": "ab", "as_of": PAST_THE_ENDS}}, "as_of"),
    ("POST", "/v1/search", {"json": {"query": "ab", "time_end": PAST_THE_END}}, "time_end"),
    ("GET", "/v1/items", {"params": {"created_after": PAST_THE_ENDS}}, "created_after"),
    ("GET", "/v1/items", {"params": {"valid_end": PAST_THE_END}}, "valid_end"),
    # either end exactly: asyncpg stores it as -infinity/infinity and reads it back naive (then every read of
    # the item failed, and remember answered 500 after storing it)
    (
        "POST",
        "/v1/remember",
        {"json": {"content": "the first instant", "valid_from": "0001-01-01T00:00:00Z"}},
        "valid_from",
    ),
    ("POST", "/v1/recall", {"json": {"query": "ab", "as_of": "9999-12-31T23:59:59.999999Z"}}, "as_of"),
    ("GET", "/v1/items", {"params": {"created_after": "0001-01-01T00:00:00+00:00"}}, "created_after"),
]


@pytest.mark.parametrize(("method", "route", "request_", "field"), OUT_OF_RANGE_TIMES)
async def test_a_time_outside_the_utc_years_1_to_9999_is_refused_naming_the_field_not_a_500(
    open_gateway: httpx.AsyncClient, method: str, route: str, request_: dict[str, object], field: str
) -> None:
    """Its offset takes it past the range a protobuf Timestamp (and Python's datetime) holds in UTC."""
    refused = await open_gateway.request(method, route, **request_)  # type: ignore[arg-type]
    assert refused.status_code == 422, refused.text
    problem = refused.json()
    assert problem["field"] == field and "after 0001-01-01T00:00:00Z and before" in problem["detail"], problem


async def test_a_time_just_inside_the_range_is_stored_and_read_back(open_gateway: httpx.AsyncClient) -> None:
    answer = await open_gateway.post("/v1/recall", json={"query": "ab", "as_of": "9999-12-31T23:00:00+05:00"})
    assert answer.status_code == 200, answer.text
    first = "0001-01-01T00:00:00.000001Z"
    stored = await open_gateway.post("/v1/remember", json={"content": "nearly the first instant", "valid_from": first})
    assert stored.status_code == 201, stored.text
    listed = await open_gateway.get("/v1/items", params={"valid_end": "0001-01-02T00:00:00Z"})
    assert listed.status_code == 200, listed.text
    # other tests' memories without a start may be listed too (valid since forever); this one reads back as sent
    valid_from = {item["id"]: item["valid_from"] for item in listed.json()["items"]}
    assert valid_from[stored.json()["id"]] == first, listed.text
    assert all(start is None or start == first for start in valid_from.values()), valid_from


NOT_A_DOUBLE = [  # raw JSON, as Python's parser reads it: NaN, 1e400 (infinity), a 400-digit integer
    ("/v1/remember", '{"content": "ab", "metadata": {"score": 1e400}}', "metadata.score"),
    ("/v1/remember", '{"content": "ab", "metadata": {"n": [1, NaN]}}', "metadata.n[1]"),
    ("/v1/remember", '{"content": "ab", "metadata": {"big": ' + "9" * 400 + "}}", "metadata.big"),
    ("/v1/observe", '{"content": "ab", "metadata": {"a": {"b": -Infinity}}}', "metadata.a.b"),
]


@pytest.mark.parametrize(("route", "body", "field"), NOT_A_DOUBLE)
async def test_a_metadata_number_no_double_holds_is_refused_naming_it_not_a_500(
    open_gateway: httpx.AsyncClient, route: str, body: str, field: str
) -> None:
    response = await open_gateway.post(route, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["field"] == field and "finite number" in problem["detail"], problem


async def test_a_batch_memory_with_such_a_number_is_refused_alone(open_gateway: httpx.AsyncClient) -> None:
    body = '{"items": [{"content": "a fine memory"}, {"content": "ab", "metadata": {"x": 1e999}}]}'
    answer = await open_gateway.post("/v1/remember/batch", content=body, headers={"content-type": "application/json"})
    assert answer.status_code < 500, answer.text
    results = answer.json()["results"]
    assert results[1]["error"]["field"] == "metadata.x", results
    assert "error" not in results[0] or results[0]["error"] is None, results


NAIVE = "2026-03-01T09:30:00"  # no offset: before, read in the gateway host's local time and stored
TAGGED = {"content": "a naive time test memory", "tags": ["naive-time"]}
NAIVE_TIMES = [
    ("/v1/remember", {**TAGGED, "valid_from": NAIVE}, "valid_from"),
    ("/v1/remember", {**TAGGED, "valid_to": NAIVE}, "valid_to"),
    ("/v1/remember", {**TAGGED, "expires_at": "2999-01-01"}, "expires_at"),  # a date alone has no offset either
    ("/v1/observe", {**TAGGED, "expires_at": "2999-01-01T00:00:00"}, "expires_at"),
    ("/v1/recall", {"query": "ab", "as_of": NAIVE}, "as_of"),
    ("/v1/search", {"query": "ab", "as_of": NAIVE}, "as_of"),
    (
        "/v1/items/bulk",
        {"action": "archive", "dry_run": False, "filter": {"tags": ["naive-time"], "created_after": NAIVE}},
        "filter.created_after",
    ),
]


async def _tagged(gateway: httpx.AsyncClient) -> list[tuple[str, str]]:
    listed = await gateway.get("/v1/items", params={"tag": "naive-time", "include_superseded": "true", "limit": 500})
    assert listed.status_code == 200, listed.text
    return sorted((item["id"], item["review_status"]) for item in listed.json()["items"])


@pytest.mark.parametrize(("route", "body", "field"), NAIVE_TIMES)
async def test_a_time_without_an_offset_is_refused_naming_the_field_and_nothing_is_written(
    open_gateway: httpx.AsyncClient, route: str, body: dict[str, object], field: str
) -> None:
    """Before, these fields took it in the gateway host's local time: what was stored depended on its TZ."""
    await open_gateway.post("/v1/remember", json=TAGGED)  # something for the bulk archive to find
    before = await _tagged(open_gateway)
    refused = await open_gateway.post(route, json=body)
    assert refused.status_code == 422, refused.text
    problem = refused.json()
    assert problem["code"] == "validation_failed" and problem["field"] == field, problem
    assert problem["detail"] == f"{field}: a time needs a timezone offset (Z or ±HH:MM)", problem
    assert await _tagged(open_gateway) == before


async def test_a_batch_memory_with_a_time_without_an_offset_is_refused_alone(open_gateway: httpx.AsyncClient) -> None:
    answer = await open_gateway.post("/v1/remember/batch", json={"items": [TAGGED, {**TAGGED, "valid_from": NAIVE}]})
    assert answer.status_code < 500, answer.text
    results = answer.json()["results"]
    assert results[1]["error"]["field"] == "valid_from" and "timezone offset" in results[1]["error"]["detail"]


async def test_times_with_an_offset_are_stored_as_their_utc_instant(open_gateway: httpx.AsyncClient) -> None:
    sent = {
        "content": "an offset time test memory",
        "valid_from": "2026-03-01T09:30:00+01:00",
        "valid_to": "2026-03-02T09:30:00-05:30",
        "expires_at": "2999-01-01T00:00:00Z",
    }
    stored = await open_gateway.post("/v1/remember", json=sent)
    assert stored.status_code == 201, stored.text
    item = (await open_gateway.get(f"/v1/items/{stored.json()['id']}")).json()
    assert item["valid_from"] == "2026-03-01T08:30:00Z" and item["valid_to"] == "2026-03-02T15:00:00Z", item
    assert item["expires_at"] == "2999-01-01T00:00:00Z", item
    for as_of in ("2026-03-01T09:30:00Z", "2026-03-01T09:30:00+01:00", "2026-03-01T09:30:00-05:30"):
        answer = await open_gateway.post("/v1/recall", json={"query": "offset", "as_of": as_of})
        assert answer.status_code == 200, answer.text
