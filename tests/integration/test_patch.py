"""PATCH /v1/items/{id}: metadata corrections through REST (real servers and database): each field, the audit
row with old → new, memory.updated, and who may patch what."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest_asyncio

from engram.db import identity
from tests.support.outbox import outbox_envelopes
from tests.support.tenants import create_tenant

Headers = dict[str, str]


@pytest_asyncio.fixture
async def people(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> dict[str, Headers]:
    base = await create_tenant(owner_pool)
    workspace = await owner_pool.fetchval("SELECT id FROM workspaces WHERE tenant_id = $1::uuid", base.tenant_id)
    headers: dict[str, Headers] = {"tenant": {"id": base.tenant_id}}
    for name, kind, scopes in (
        ("author", "user", ["read", "write"]),
        ("colleague", "user", ["read", "write"]),
        ("agent", "agent", ["read", "write"]),
        ("viewer", "user", ["read", "write"]),
        ("reader", "user", ["read"]),
        ("reviewer", "user", ["read", "write", "review"]),
    ):
        principal = await identity.create_principal(app_pool, base.tenant_id, name, kind)
        if name == "viewer":
            await identity.add_member(app_pool, base.tenant_id, str(workspace), principal, "viewer")
        issued = await identity.create_key(app_pool, base.tenant_id, principal, scopes, name)
        headers[name] = {"authorization": f"Bearer {issued.key}"}
    return headers


async def _remember(gateway: httpx.AsyncClient, who: Headers, content: str, **fields: object) -> dict[str, Any]:
    response = await gateway.post("/v1/remember", json={"content": content, **fields}, headers=who)
    assert response.status_code == 201, response.text
    return response.json()["item"]  # type: ignore[no-any-return]


async def _events(gateway: httpx.AsyncClient, who: Headers, item_id: str) -> list[dict[str, Any]]:
    response = await gateway.get(f"/v1/items/{item_id}/events", headers=who)
    assert response.status_code == 200, response.text
    return response.json()["events"]  # type: ignore[no-any-return]


async def _updates(owner_pool: asyncpg.Pool, tenant_id: str, item_id: str) -> list[dict[str, Any]]:
    return await outbox_envelopes(owner_pool, tenant=tenant_id, types=["memory.updated"], subjects=[item_id])


async def test_a_patch_changes_each_field_audits_old_and_new_and_announces_it(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    author, tenant_id = people["author"], people["tenant"]["id"]
    valid_from = datetime(2026, 1, 1, tzinfo=UTC)
    item = await _remember(
        gateway, author, "The release train leaves on Thursdays.", tags=["release"], valid_from=valid_from.isoformat()
    )
    valid_to = datetime(2026, 12, 31, 12, tzinfo=UTC)
    body = {
        "tags": ["release", "process"],
        "importance": 0.65,
        "pinned": True,
        "visibility": "tenant",
        "subject": "release.train",
        "valid_to": valid_to.isoformat(),
    }
    response = await gateway.patch(f"/v1/items/{item['id']}", json=body, headers=author)
    assert response.status_code == 200, response.text
    patched = response.json()
    assert patched["tags"] == ["release", "process"] and patched["importance"] == 0.65 and patched["pinned"]
    assert patched["visibility"] == "tenant" and patched["subject"] == "release.train"
    assert datetime.fromisoformat(patched["valid_to"]) == valid_to
    assert patched["content"] == item["content"] and patched["kind"] == "fact"
    read = (await gateway.get(f"/v1/items/{item['id']}", headers=author)).json()
    assert {k: read[k] for k in body} == {k: patched[k] for k in body}

    trail = await _events(gateway, author, item["id"])
    assert [e["action"] for e in trail] == ["created", "patched"]
    audit = trail[1]
    assert audit["old"] == {
        "tags": ["release"],
        "importance": 0.5,
        "pinned": False,
        "visibility": "workspace",
        "subject": None,
        "valid_to": None,
    }
    assert audit["new"]["tags"] == ["release", "process"] and audit["new"]["importance"] == 0.65
    assert audit["new"]["pinned"] is True and audit["new"]["visibility"] == "tenant"
    assert audit["new"]["subject"] == "release.train"
    assert datetime.fromisoformat(audit["new"]["valid_to"]) == valid_to
    updates = await _updates(owner_pool, tenant_id, item["id"])
    assert len(updates) == 1
    assert updates[0]["type"] == "engram.memory.updated"
    assert updates[0]["data"]["changed"] == sorted(body)
    assert updates[0]["data"]["item_id"] == item["id"]
    assert "Thursdays" not in str(updates[0]), "events carry no content"

    # the same values again: 200 with the item, nothing written
    again = await gateway.patch(f"/v1/items/{item['id']}", json=body, headers=author)
    assert again.status_code == 200 and again.json()["tags"] == ["release", "process"]
    assert len(await _events(gateway, author, item["id"])) == 2
    assert len(await _updates(owner_pool, tenant_id, item["id"])) == 1

    # one field, and clearing the nullable ones
    cleared = await gateway.patch(f"/v1/items/{item['id']}", json={"subject": None, "valid_to": None}, headers=author)
    assert cleared.status_code == 200 and cleared.json()["subject"] is None and cleared.json()["valid_to"] is None
    last = (await _events(gateway, author, item["id"]))[-1]
    assert last["old"]["subject"] == "release.train" and last["new"] == {"subject": None, "valid_to": None}
    assert (await _updates(owner_pool, tenant_id, item["id"]))[-1]["data"]["changed"] == ["subject", "valid_to"]


async def test_content_and_unknown_fields_are_refused_and_nothing_changes(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    author = people["author"]
    item = await _remember(gateway, author, "The on-call rota changes on Mondays.", tags=["oncall"])
    refusals = [
        ({"content": "The on-call rota changes on Tuesdays."}, "content", "supersede the memory instead"),
        ({"content": "x", "tags": ["a"]}, "content", "supersede the memory instead"),
        ({"kind": "decision"}, "kind", "Extra inputs are not permitted"),
        ({"importance": 1.5}, "importance", "between 0 and 1"),
        ({"importance": None}, "importance", "may not be null"),
        ({"valid_to": "2026-01-01T00:00:00"}, "valid_to", "timezone offset"),
        ({"tags": ["  "]}, "tags", "1–64 characters"),
        ({}, "body", "at least one field"),
    ]
    for body, field, message in refusals:
        response = await gateway.patch(f"/v1/items/{item['id']}", json=body, headers=author)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["field"] == field, (body, response.json())
        assert message in response.json()["detail"], (body, response.json())
    read = (await gateway.get(f"/v1/items/{item['id']}", headers=author)).json()
    assert read["content"] == item["content"] and read["tags"] == ["oncall"] and read["importance"] == 0.5
    assert [e["action"] for e in await _events(gateway, author, item["id"])] == ["created"]
    assert await _updates(owner_pool, people["tenant"]["id"], item["id"]) == []
    # positive control: a valid patch of the same item goes through
    ok = await gateway.patch(f"/v1/items/{item['id']}", json={"tags": ["oncall", "rota"]}, headers=author)
    assert ok.status_code == 200 and ok.json()["tags"] == ["oncall", "rota"]


async def test_a_patch_needs_the_write_scope_and_a_writing_role(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    item = await _remember(gateway, people["author"], "Staging refreshes nightly at 02:00.")
    viewer = await gateway.patch(f"/v1/items/{item['id']}", json={"importance": 0.9}, headers=people["viewer"])
    assert viewer.status_code == 403 and viewer.json()["code"] == "workspace_read_only", viewer.text
    reader = await gateway.patch(f"/v1/items/{item['id']}", json={"importance": 0.9}, headers=people["reader"])
    assert reader.status_code == 403 and reader.json()["code"] == "insufficient_scope", reader.text
    # both could read it: the refusal is about writing
    for who in ("viewer", "reader"):
        assert (await gateway.get(f"/v1/items/{item['id']}", headers=people[who])).status_code == 200
    assert (await gateway.get(f"/v1/items/{item['id']}", headers=people["author"])).json()["importance"] == 0.5
    assert await _updates(owner_pool, people["tenant"]["id"], item["id"]) == []
    # positive controls: the author, and another member with a writing role
    for who, importance in (("author", 0.6), ("colleague", 0.7)):
        response = await gateway.patch(f"/v1/items/{item['id']}", json={"importance": importance}, headers=people[who])
        assert response.status_code == 200 and response.json()["importance"] == importance, response.text


async def test_widening_follows_the_write_rule_and_another_s_memory_needs_a_reviewer(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    item = await _remember(gateway, people["author"], "The VPN gateway is vpn.internal.example.")
    for who in ("colleague", "agent"):
        refused = await gateway.patch(f"/v1/items/{item['id']}", json={"visibility": "tenant"}, headers=people[who])
        assert refused.status_code == 403 and refused.json()["code"] == "review_not_allowed", refused.text
        assert refused.json()["field"] == "visibility"
    viewer = await gateway.patch(f"/v1/items/{item['id']}", json={"visibility": "tenant"}, headers=people["viewer"])
    assert viewer.status_code == 403 and viewer.json()["code"] == "workspace_read_only"
    read = (await gateway.get(f"/v1/items/{item['id']}", headers=people["author"])).json()
    assert read["visibility"] == "workspace"
    # positive controls: narrowing by a writer, widening by the author and by a reviewer
    narrowed = await gateway.patch(
        f"/v1/items/{item['id']}", json={"visibility": "private"}, headers=people["colleague"]
    )
    assert narrowed.status_code == 200 and narrowed.json()["visibility"] == "private"
    # now private: only its author reads it, so for the colleague it does not exist
    hidden = await gateway.patch(
        f"/v1/items/{item['id']}", json={"visibility": "workspace"}, headers=people["colleague"]
    )
    assert hidden.status_code == 404
    widened = await gateway.patch(f"/v1/items/{item['id']}", json={"visibility": "workspace"}, headers=people["author"])
    assert widened.status_code == 200 and widened.json()["visibility"] == "workspace"
    by_reviewer = await gateway.patch(
        f"/v1/items/{item['id']}", json={"visibility": "tenant"}, headers=people["reviewer"]
    )
    assert by_reviewer.status_code == 200 and by_reviewer.json()["visibility"] == "tenant"


async def test_only_a_live_item_is_patched_and_a_singleton_keeps_its_subject(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    author = people["author"]
    gone = await _remember(gateway, author, "The build cache lives on node 7.")
    invalidated = await gateway.post(f"/v1/items/{gone['id']}/invalidate", json={"reason": "moved"}, headers=author)
    assert invalidated.status_code == 200
    refused = await gateway.patch(f"/v1/items/{gone['id']}", json={"tags": ["build"]}, headers=author)
    assert refused.status_code == 409 and refused.json()["code"] == "not_live", refused.text

    preference = await _remember(gateway, author, "Bob drinks tea.", kind="preference", subject="bob.drink")
    moved = await gateway.patch(f"/v1/items/{preference['id']}", json={"subject": "bob.food"}, headers=author)
    assert moved.status_code == 409 and moved.json()["code"] == "singleton_subject", moved.text
    tagged = await gateway.patch(f"/v1/items/{preference['id']}", json={"tags": ["bob"]}, headers=author)
    assert tagged.status_code == 200 and tagged.json()["subject"] == "bob.drink"  # positive control


async def test_pinning_an_expiring_memory_drops_its_expiry(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    author = people["author"]
    expires = datetime.now(UTC) + timedelta(days=3)
    item = await _remember(gateway, author, "The demo tenant is wiped on Fridays.", expires_at=expires.isoformat())
    assert item["expires_at"] is not None
    response = await gateway.patch(f"/v1/items/{item['id']}", json={"pinned": True}, headers=author)
    assert response.status_code == 200 and response.json()["pinned"] and response.json()["expires_at"] is None
    audit = (await _events(gateway, author, item["id"]))[-1]
    assert audit["action"] == "patched" and audit["new"] == {"pinned": True, "expires_at": None}
    assert datetime.fromisoformat(audit["old"]["expires_at"]) == expires
    updates = await _updates(owner_pool, people["tenant"]["id"], item["id"])
    assert updates[-1]["data"]["changed"] == ["expires_at", "pinned"]
