"""The gateway's /mcp under its edge guards: it needs a valid key, the per-IP limit counts each MCP request once
(a tool's own REST call inside the gateway is not counted again), and the body size limit holds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest_asyncio

from engram.config import Settings
from engram.domain.models import CallerContext
from services.gateway.app import create_app
from tests.support.keys import KeyMaker

PER_MINUTE = 3
MAX_BYTES = 4096
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-06-18",
}


@pytest_asyncio.fixture
async def guarded(servers: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        servers.model_copy(update={"ip_rate_limit_per_minute": PER_MINUTE, "max_request_bytes": MAX_BYTES})
    )
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway") as client:
            yield client


def _call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


async def test_a_tool_call_counts_once_against_the_per_ip_limit(
    guarded: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker
) -> None:
    headers = {**HEADERS, "Authorization": await make_key(tenant, ["read"])}
    for n in range(PER_MINUTE):  # each call is one request here and one REST call inside: all of them pass
        answer = await guarded.post("/mcp", json=_call(n, "recall", {"query": "anything"}), headers=headers)
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["isError"] is False, answer.json()
    over = await guarded.post("/mcp", json=_call(9, "recall", {"query": "anything"}), headers=headers)
    assert over.status_code == 429 and over.json()["code"] == "rate_limited"  # the limit holds for /mcp


async def test_a_body_over_the_limit_is_refused(
    guarded: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker
) -> None:
    headers = {**HEADERS, "Authorization": await make_key(tenant)}
    large = await guarded.post("/mcp", json=_call(1, "remember", {"content": "x" * MAX_BYTES}), headers=headers)
    assert large.status_code == 413 and large.json()["code"] == "payload_too_large"
    small = await guarded.post("/mcp", json=_call(2, "remember", {"content": "A small note."}), headers=headers)
    assert small.status_code == 200 and small.json()["result"]["isError"] is False, small.json()


async def test_mcp_refuses_a_missing_or_bad_key_before_the_mcp_layer(
    gateway: httpx.AsyncClient, tenant: CallerContext, make_key: KeyMaker
) -> None:
    call = _call(1, "recall", {"query": "anything"})
    for auth in ({}, {"Authorization": "Bearer eng_0123456789abcdef_nope"}, {"Authorization": "Basic eDp5"}):
        refused = await gateway.post("/mcp", json=call, headers={**HEADERS, **auth})
        assert refused.status_code == 401 and refused.json()["code"] == "unauthenticated"
        assert refused.headers["www-authenticate"] == 'Bearer realm="engram"'
    accepted = await gateway.post("/mcp", json=call, headers={**HEADERS, "Authorization": await make_key(tenant)})
    assert accepted.status_code == 200 and accepted.json()["result"]["isError"] is False  # positive control
