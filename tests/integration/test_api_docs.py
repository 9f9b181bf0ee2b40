"""The API explains itself through the real gateway: its documentation pages work offline, the scopes its
OpenAPI document declares are the ones it enforces, and a body it cannot read is answered with what to fix."""

from __future__ import annotations

import re
import uuid

import asyncpg
import httpx
import pytest

from engram.domain.keys import SCOPES
from engram.domain.models import CallerContext
from tests.support.keys import KeyMaker


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_the_documentation_pages_load_everything_from_the_gateway(gateway: httpx.AsyncClient, page: str) -> None:
    html = await gateway.get(page)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assets = re.findall(r'<(?:script|link)[^>]*?(?:src|href)="([^"]+)"', html.text)
    assert any(a.endswith(".js") for a in assets)  # positive control: the page loads its UI's script
    assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", html.text), "an external host in the page"
    spec = re.findall(r"""(?:url: '|spec-url=")(/[^'"]+)""", html.text)
    assert spec == ["/openapi.json"]
    for url in [*assets, *spec]:
        assert url.startswith("/") and not url.startswith("//"), url
        answer = await gateway.get(url)
        assert answer.status_code == 200 and answer.content, url


async def test_the_declared_scopes_are_the_enforced_ones(
    gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker
) -> None:
    """Every operation, with a key of each scope: refused for lack of scope exactly when the OpenAPI document
    does not list that scope (``admin`` passes every check). Bodies are ``[]``, so what is let in stops at
    validation or at a missing item and changes nothing."""
    spec = (await gateway.get("/openapi.json")).json()
    keys = {scope: await make_key(tenant, [scope]) for scope in SCOPES}
    refused = allowed = 0
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            declared = [scope for requirement in op.get("security", []) for scope in requirement["ApiKey"]]
            if not declared:
                continue
            url = re.sub(r"\{[^}]+\}", str(uuid.uuid4()), path)
            body = {"json": []} if "requestBody" in op else {}
            for scope, key in keys.items():
                answer = await gateway.request(method, url, headers={"authorization": key}, **body)
                lacking = answer.status_code == 403 and answer.json()["code"] == "insufficient_scope"
                assert lacking == (scope not in declared and scope != "admin"), (method, path, scope, answer.text)
                refused, allowed = refused + lacking, allowed + (not lacking)
    assert refused > 100 and allowed > 50  # both outcomes, for every scope


async def test_a_body_that_is_not_json_is_answered_with_where_it_breaks(
    gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker
) -> None:
    auth = {"authorization": await make_key(tenant), "content-type": "application/json"}
    ok = await gateway.post("/v1/remember", content=b'{"content": "well formed",\n "kind": "fact"}', headers=auth)
    assert ok.status_code == 201, ok.text  # positive control
    broken = b'{"content": "not closed",\n "kind": }'
    for headers in (auth, {"content-type": "application/json"}):  # before the key is checked, too
        answer = await gateway.post("/v1/remember", content=broken, headers=headers)
        assert answer.status_code == 422 and answer.headers["content-type"] == "application/problem+json"
        problem = answer.json()
        assert problem["code"] == "invalid_json" and problem["field"] == "body"
        assert problem["detail"] == "body is not valid JSON (line 2, column 10): Expecting value"
    trailing = await gateway.post("/v1/recall", content=b'{"query": "x"} }', headers=auth)
    assert trailing.json()["detail"] == "body is not valid JSON (line 1, column 16): Extra data"
    latin1 = await gateway.post("/v1/remember", content='{"content":\n "café"}'.encode("latin-1"), headers=auth)
    assert latin1.status_code == 422 and latin1.json()["code"] == "invalid_json"
    assert latin1.json()["detail"] == "body is not valid JSON (line 2, column 6): not UTF-8 (invalid continuation byte)"
    # a body that is JSON but breaks the schema is still a schema error, naming its field
    schema = await gateway.post("/v1/remember", content=b'{"content": 7}', headers=auth)
    assert schema.json()["code"] == "validation_failed" and schema.json()["field"] == "content"


async def test_json_sent_as_another_media_type_gets_415_naming_application_json(
    gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker, owner_pool: asyncpg.Pool
) -> None:
    key = await make_key(tenant)
    body = b'{"content": "sent with the wrong media type"}'
    ok = await gateway.post(
        "/v1/remember", content=body, headers={"authorization": key, "content-type": "application/json"}
    )
    assert ok.status_code == 201, ok.text  # positive control: the same body as JSON is stored

    async def count() -> int:
        async with owner_pool.acquire() as conn:
            sql = "SELECT count(*) FROM memory_items WHERE tenant_id = $1::uuid"
            return int(await conn.fetchval(sql, tenant.tenant_id))

    before = await count()
    cases = {"text/plain": "as text/plain", "application/x-www-form-urlencoded": "as application/x-www-form-urlencoded"}
    for content_type, named in [*cases.items(), (None, "without a Content-Type")]:
        for auth in ({"authorization": key}, {}):  # refused before the key is checked
            headers = auth | ({"content-type": content_type} if content_type else {})
            answer = await gateway.post("/v1/remember", content=body, headers=headers)
            assert answer.status_code == 415, (content_type, answer.text)
            problem = answer.json()
            assert problem["code"] == "unsupported_media_type" and problem["field"] == "body"
            assert "Content-Type: application/json" in problem["detail"] and named in problem["detail"]
    assert await count() == before
    # a JSON subtype is JSON; an empty body under another type is a missing body, not a media type problem
    patch = await gateway.post(
        "/v1/recall", content=b'{"query": "x"}', headers={"authorization": key, "content-type": "application/x+json"}
    )
    assert patch.status_code == 200, patch.text
    empty = await gateway.post(
        "/v1/remember", content=b"", headers={"authorization": key, "content-type": "text/plain"}
    )
    assert empty.status_code == 422 and empty.json()["code"] == "validation_failed"


async def test_every_operation_documents_its_errors_as_the_problem_json_it_answers(
    gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker
) -> None:
    """Found by the fuzz test's conformance checks (ENGRAM_FUZZ_CONFORMANCE=1): every 401/404/409 was an
    undocumented status, and each 422 was documented as FastAPI's HTTPValidationError in application/json,
    which the gateway never sends."""
    spec = (await gateway.get("/openapi.json")).json()
    problem = spec["components"]["schemas"]["Problem"]
    assert "HTTPValidationError" not in str(spec)
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            for status in ("422", "default"):
                if status in op["responses"]:
                    content = op["responses"][status]["content"]
                    assert list(content) == ["application/problem+json"], (method, path, status)
            assert "default" in op["responses"], (method, path)
    assert sum("422" in op["responses"] for ops in spec["paths"].values() for op in ops.values()) > 30
    key = await make_key(tenant)
    answers = [
        await gateway.get("/v1/stats"),  # 401: no key
        await gateway.get(f"/v1/items/{uuid.uuid4()}", headers={"authorization": key}),  # 404
        await gateway.post("/v1/remember", json={"content": ""}, headers={"authorization": key}),  # 422
    ]
    types = {"string": str, "integer": int, "array": list}
    for answer in answers:
        body = answer.json()
        assert answer.headers["content-type"].startswith("application/problem+json"), answer.text
        assert set(problem["required"]) <= set(body), body
        for name, value in body.items():
            if name in problem["properties"]:
                assert isinstance(value, types[problem["properties"][name]["type"]]), (name, body)
    assert [answer.status_code for answer in answers] == [401, 404, 422]
