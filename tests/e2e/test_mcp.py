"""The MCP server against the stack as ``engram up`` starts it, driven by the ``mcp`` SDK's own client: over
stdio (``engram mcp`` as a subprocess, with ENGRAM_URL and ENGRAM_API_KEY) and over streamable HTTP (the
gateway's ``/mcp`` with an ``Authorization`` header). Every test runs over both."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
import httpx2
import pytest
from engram_client import EngramClient
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

from tests.support.stack import Stack
from tests.unit.test_readme_mcp import servers

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

TOOLS = {
    "remember",
    "observe",
    "recall",
    "search",
    "get",
    "list",
    "supersede",
    "invalidate",
    "feedback",
    "review",
    "conflicts",
    "resolve",
}
TRANSPORTS = ["stdio", "http"]


@dataclass(frozen=True)
class Keys:
    writer: str  # tenant A: read, write, review
    reader: str  # tenant A: read only
    other_item: str  # tenant B's memory, stored before any test runs


@pytest.fixture(scope="module")
def keys(stack: Stack) -> Keys:
    """Two fresh tenants; tenant B's memory is stored first, for the isolation test to look for."""
    with EngramClient(stack.url, stack.dev_key) as platform:
        issued: dict[str, str] = {}
        for tenant_name, key_name, scopes in (
            ("a", "writer", ["read", "write", "review"]),
            ("a", "reader", ["read"]),
            ("b", "writer", ["read", "write"]),
        ):
            tenant = issued.get(tenant_name) or platform.admin_create_tenant(f"mcp-{uuid.uuid4().hex[:8]}").id
            issued[tenant_name] = tenant
            principal = platform.admin_create_principal(f"{tenant_name}-{key_name}", "agent", tenant_id=tenant).id
            key = platform.admin_create_api_key(principal, scopes=scopes, tenant_id=tenant).key
            issued[f"{tenant_name}-{key_name}"] = key
    with EngramClient(stack.url, issued["b-writer"]) as other:
        stored = other.remember("Team Borealis ships the release train on Fridays at noon.", visibility="tenant")
    return Keys(writer=issued["a-writer"], reader=issued["a-reader"], other_item=stored.id)


@asynccontextmanager
async def connected(stack: Stack, transport: str, key: str) -> AsyncIterator[Client]:
    if transport == "stdio":
        command = StdioServerParameters(
            command=sys.executable,
            args=["-m", "engram.cli", "mcp"],
            env={"ENGRAM_URL": stack.url, "ENGRAM_API_KEY": key, "ENGRAM_HOME": str(stack.home.parent / "none")},
        )
        async with Client(command) as client:
            yield client
        return
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http,
        Client(streamable_http_client(f"{stack.url}/mcp", http_client=http)) as client,
    ):
        yield client


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


async def _rows(stack: Stack, content: str) -> int:
    conn = await asyncpg.connect(stack.info()["database_url"])
    try:
        return int(await conn.fetchval("SELECT count(*) FROM memory_items WHERE content = $1", content))
    finally:
        await conn.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_lists_the_tools_and_teaches_superseding(stack: Stack, keys: Keys, transport: str) -> None:
    async with connected(stack, transport, keys.writer) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        assert "supersede" in (client.instructions or "") and "feedback" in (client.instructions or "")
        assert "supersede" in (tools["remember"].description or "")
        assert "feedback" in (tools["recall"].description or "")
        assert tools["recall"].input_schema["properties"]["mode"]  # budgets and modes are documented arguments
        assert "item_budget" in tools["recall"].input_schema["properties"]
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["engram://items/{id}"]
        assert [p.name for p in (await client.list_prompts()).prompts] == ["startup"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_remember_then_recall_finds_it_with_reasons(stack: Stack, keys: Keys, transport: str) -> None:
    marker = uuid.uuid4().hex[:8]
    content = f"The {transport} deploy window of project {marker} opens on Tuesdays."
    async with connected(stack, transport, keys.writer) as client:
        stored = structured(await client.call_tool("remember", {"content": content, "tags": ["deploys"]}))
        assert stored["status"] == "created" and stored["id"]

        recalled = structured(
            await client.call_tool("recall", {"query": f"deploy window {marker}", "mode": "keyword", "item_budget": 5})
        )
        [found] = [hit for hit in recalled["items"] if hit["id"] == stored["id"]]
        assert found["score"] > 0 and found["reasons"] and found["content"] == content
        assert recalled["recall_id"]
        searched = structured(await client.call_tool("search", {"query": marker, "mode": "keyword"}))
        assert [hit["id"] for hit in searched["items"]] == [stored["id"]] and searched["items"][0]["reasons"]

        feedback = structured(
            await client.call_tool(
                "feedback", {"item_id": stored["id"], "verdict": "useful", "recall_id": recalled["recall_id"]}
            )
        )
        assert feedback["verdict"] == "useful"

        newer = f"The {transport} deploy window of project {marker} opens on Wednesdays."
        replaced = structured(await client.call_tool("supersede", {"item_id": stored["id"], "content": newer}))
        assert replaced["superseded"] == [stored["id"]]
        assert structured(await client.call_tool("get", {"item_id": stored["id"]}))["superseded_by"] == replaced["id"]

        read = await client.read_resource(f"engram://items/{replaced['id']}")
        assert json.loads(read.contents[0].text)["content"] == newer  # type: ignore[union-attr]

        pinned = structured(await client.call_tool("remember", {"content": f"Pinned rule {marker}.", "pinned": True}))
        prompt = await client.get_prompt("startup")
        assert pinned["id"] in prompt.messages[0].content.text  # type: ignore[union-attr]

        invalid = await client.call_tool("remember", {"content": f"Out of range {marker}.", "importance": 2.0})
        assert invalid.is_error and "validation_failed" in text(invalid) and "field: importance" in text(invalid)
        naive = await client.call_tool("recall", {"query": marker, "as_of": "2026-03-01T09:30:00"})  # no offset
        assert naive.is_error and "field: as_of" in text(naive) and "timezone offset" in text(naive)
        dated = await client.call_tool(
            "recall", {"query": marker, "mode": "keyword", "as_of": "2099-01-01T00:00:00+01:00"}
        )
        ids = [hit["id"] for hit in structured(dated)["items"]]
        assert replaced["id"] in ids and stored["id"] not in ids  # the old one was replaced before then
        missing = await client.call_tool("get", {"item_id": str(uuid.uuid4())})
        assert missing.is_error and "not_found" in text(missing)
    assert await _rows(stack, f"Out of range {marker}.") == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_key_without_write_cannot_remember(stack: Stack, keys: Keys, transport: str) -> None:
    content = f"Read-only keys must not write ({transport}, {uuid.uuid4().hex[:8]})."
    async with connected(stack, transport, keys.reader) as client:
        refused = await client.call_tool("remember", {"content": content})
        assert refused.is_error and "insufficient_scope" in text(refused)
        structured(await client.call_tool("recall", {"query": "read-only keys", "mode": "keyword"}))  # it reads
    assert await _rows(stack, content) == 0
    async with connected(stack, transport, keys.writer) as client:  # positive control: a write key stores it
        assert structured(await client.call_tool("remember", {"content": content}))["status"] == "created"
    assert await _rows(stack, content) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_another_tenants_memory_never_appears(stack: Stack, keys: Keys, transport: str) -> None:
    async with connected(stack, transport, keys.writer) as client:
        mine = f"Team Aurora ships the release train on Fridays at noon ({transport})."
        own = structured(await client.call_tool("remember", {"content": mine, "visibility": "tenant"}))["id"]
        query = {"query": "release train Fridays noon", "mode": "keyword"}
        recalled = structured(await client.call_tool("recall", {**query, "item_budget": 50}))["items"]
        searched = structured(await client.call_tool("search", {**query, "limit": 50}))["items"]
        listed = structured(await client.call_tool("list", {"limit": 500}))["items"]
        for hits in (recalled, searched, listed):
            ids = [hit["id"] for hit in hits]
            assert own in ids and keys.other_item not in ids  # this tenant's own memory is there, the other's not
        assert not any("Borealis" in hit["content"] for hit in recalled + searched + listed)
        got = await client.call_tool("get", {"item_id": keys.other_item})
        assert got.is_error and "not_found" in text(got)
        with pytest.raises(Exception, match="not_found"):
            await client.read_resource(f"engram://items/{keys.other_item}")


def test_mcp_needs_a_valid_key(stack: Stack, keys: Keys) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(base_url=stack.url, timeout=30) as http:
        for auth in ({}, {"Authorization": "Bearer eng_nope_nope"}, {"Authorization": "Basic Zm9vOmJhcg=="}):
            refused = http.post("/mcp", json=initialize, headers={**headers, **auth})
            assert refused.status_code == 401 and refused.json()["code"] == "unauthenticated"
            assert refused.headers["www-authenticate"] == 'Bearer realm="engram"'
        accepted = http.post("/mcp", json=initialize, headers={**headers, "Authorization": f"Bearer {keys.reader}"})
        assert accepted.status_code == 200 and accepted.json()["result"]["serverInfo"]["name"] == "engram"


async def test_the_readme_configurations_connect(stack: Stack, keys: Keys) -> None:
    """The README's Claude Code (stdio) and Cursor (HTTP) configurations, with this stack's address and a key."""
    stdio, http = servers()
    bin_dir = os.path.dirname(sys.executable)  # where `engram` is installed
    env = {**stdio["env"], "ENGRAM_URL": stack.url, "ENGRAM_API_KEY": keys.reader}
    command = StdioServerParameters(
        command=stdio["command"], args=stdio["args"], env={**env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    )
    async with Client(command) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
    url = stack.url + http["url"].split("8080", 1)[1]
    headers = {"Authorization": http["headers"]["Authorization"].replace("eng_…", keys.reader)}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as session,
        Client(streamable_http_client(url, http_client=session)) as client,
    ):
        assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
