"""The review lifecycle, verification and the audit trail through REST (real servers and database)."""

from __future__ import annotations

import json
import uuid

import asyncpg
import httpx
import pytest_asyncio

from engram.db import identity
from tests.support.outbox import outbox_envelopes
from tests.support.tenants import create_tenant


@pytest_asyncio.fixture
async def people(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> dict[str, dict[str, str]]:
    base = await create_tenant(owner_pool)
    headers = {}
    for name, kind, scopes in (
        ("reviewer", "user", ["read", "write", "review"]),
        ("agent", "agent", ["read", "write"]),
        ("other_agent", "agent", ["read", "write", "review"]),
        ("reader", "user", ["read"]),
    ):
        principal = await identity.create_principal(app_pool, base.tenant_id, name, kind)
        issued = await identity.create_key(app_pool, base.tenant_id, principal, scopes, name)
        headers[name] = {"authorization": f"Bearer {issued.key}"}
    stranger = await create_tenant(owner_pool)
    issued = await identity.create_key(app_pool, stranger.tenant_id, stranger.principal_id, ["admin"], "stranger")
    headers["stranger"] = {"authorization": f"Bearer {issued.key}"}
    headers["tenant"] = {"id": base.tenant_id}
    return headers


async def _remember(gateway: httpx.AsyncClient, who: dict[str, str], content: str, **fields: object) -> dict:  # type: ignore[type-arg]
    response = await gateway.post("/v1/remember", json={"content": content, **fields}, headers=who)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


async def _review(
    gateway: httpx.AsyncClient, who: dict[str, str], item_id: str, action: str, reason: str = ""
) -> httpx.Response:
    return await gateway.post(f"/v1/items/{item_id}/review", json={"action": action, "reason": reason}, headers=who)


async def test_a_proposal_needs_a_human_reviewer(
    gateway: httpx.AsyncClient, people: dict[str, dict[str, str]], owner_pool: asyncpg.Pool
) -> None:
    proposal = await _remember(gateway, people["agent"], "Never deploy on Fridays.", kind="doctrine")
    assert proposal["review_status"] == "proposed"
    item_id = proposal["id"]
    for who in ("agent", "other_agent"):  # an agent, even one holding the review scope, cannot activate
        refused = await _review(gateway, people[who], item_id, "activate")
        assert refused.status_code == 403 and refused.json()["code"] == "review_not_allowed"
    activated = await _review(gateway, people["reviewer"], item_id, "activate", "agreed in the retro")
    assert activated.status_code == 200 and activated.json()["review_status"] == "active"
    again = await _review(gateway, people["reviewer"], item_id, "activate")
    assert again.status_code == 409 and again.json()["code"] == "invalid_transition"

    trail = (await gateway.get(f"/v1/items/{item_id}/events", headers=people["reader"])).json()["events"]
    assert [e["action"] for e in trail] == ["created", "review.activate"]
    assert trail[1]["old"] == {"review_status": "proposed"} and trail[1]["new"] == {"review_status": "active"}
    assert trail[1]["reason"] == "agreed in the retro" and trail[1]["time"].endswith("Z")
    [envelope] = await outbox_envelopes(owner_pool, types=["memory.review_changed"], subjects=[item_id])
    assert envelope["data"]["from"] == "proposed" and envelope["data"]["to"] == "active"
    assert envelope["data"]["action"] == "activate" and "retro" not in json.dumps(envelope)


async def test_agents_dispute_and_withdraw_their_own(
    gateway: httpx.AsyncClient, people: dict[str, dict[str, str]]
) -> None:
    fact = await _remember(gateway, people["reviewer"], "The office opens at 8.")
    disputed = await _review(gateway, people["agent"], fact["id"], "dispute", "the sign says 9")
    assert disputed.status_code == 200 and disputed.json()["review_status"] == "disputed"
    proposal = await _remember(gateway, people["agent"], "Standups move to 10:15.", kind="doctrine")
    not_theirs = await _review(gateway, people["other_agent"], proposal["id"], "withdraw")
    assert not_theirs.status_code == 403
    withdrawn = await _review(gateway, people["agent"], proposal["id"], "withdraw")
    assert withdrawn.status_code == 200 and withdrawn.json()["review_status"] == "archived"
    read_only = await _review(gateway, people["reader"], fact["id"], "archive")
    assert read_only.status_code == 403 and read_only.json()["detail"] == "Requires scope: write or review"


async def test_disputed_items_leave_recall_unless_their_kind_stays(
    gateway: httpx.AsyncClient, people: dict[str, dict[str, str]]
) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    stays = await _remember(gateway, people["reviewer"], f"Fact {marker}: the wiki moved.", kind="fact")
    leaves = await _remember(
        gateway, people["reviewer"], f"Observation {marker}: the build was slow.", kind="observation"
    )

    async def found() -> dict[str, list[str]]:
        answer = await gateway.post("/v1/recall", json={"query": marker, "mode": "keyword"}, headers=people["reviewer"])
        return {hit["item"]["id"]: hit["reasons"] for hit in answer.json()["items"]}

    assert set(await found()) == {stays["id"], leaves["id"]}  # positive control
    for item in (stays, leaves):
        assert (await _review(gateway, people["agent"], item["id"], "dispute")).status_code == 200
    after = await found()
    assert set(after) == {stays["id"]}
    assert any(reason.startswith("disputed") for reason in after[stays["id"]])


async def test_verification_is_for_human_reviewers(
    gateway: httpx.AsyncClient, people: dict[str, dict[str, str]]
) -> None:
    item = await _remember(gateway, people["agent"], "The VPN endpoint is vpn.example.org.")
    refused = await gateway.post(f"/v1/items/{item['id']}/verify", json={}, headers=people["other_agent"])
    assert refused.status_code == 403
    verified = await gateway.post(
        f"/v1/items/{item['id']}/verify", json={"reason": "checked"}, headers=people["reviewer"]
    )
    assert verified.status_code == 200 and verified.json()["human_verified"] is True
    trail = (await gateway.get(f"/v1/items/{item['id']}/events", headers=people["reviewer"])).json()["events"]
    assert trail[-1]["action"] == "verified" and trail[-1]["new"] == {"human_verified": True}


async def test_other_tenants_and_hidden_items_cannot_be_reviewed(
    gateway: httpx.AsyncClient, people: dict[str, dict[str, str]]
) -> None:
    item = await _remember(gateway, people["reviewer"], "Quarterly numbers are in the vault.")
    private = await _remember(gateway, people["agent"], "The agent's private scratch note.", visibility="private")
    assert (await gateway.get(f"/v1/items/{item['id']}/events", headers=people["reviewer"])).status_code == 200
    for method, path, body in (
        ("POST", "/review", {"action": "dispute"}),
        ("POST", "/verify", {}),
        ("GET", "/events", None),
    ):
        response = await gateway.request(method, f"/v1/items/{item['id']}{path}", json=body, headers=people["stranger"])
        assert response.status_code == 404, path
        hidden = await gateway.request(
            method, f"/v1/items/{private['id']}{path}", json=body, headers=people["reviewer"]
        )
        assert hidden.status_code == 404, path
    unchanged = await gateway.get(f"/v1/items/{item['id']}", headers=people["reviewer"])
    assert unchanged.json()["review_status"] == "active" and unchanged.json()["human_verified"] is False


async def test_disputing_needs_a_writing_role_in_the_items_workspace(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    """Reading an item and holding ``write`` does not let a caller take it out of startup recall and promotion:
    a dispute needs a writing role in the item's workspace (or a reviewer)."""
    base = await create_tenant(owner_pool)
    ops = await identity.create_workspace(app_pool, base.tenant_id, "ops")
    headers = {}
    for name, role in (("author", "member"), ("teammate", "member"), ("onlooker", "viewer"), ("outsider", None)):
        principal = await identity.create_principal(app_pool, base.tenant_id, name, "agent")
        if role is not None:
            await identity.add_member(app_pool, base.tenant_id, ops, principal, role)
        issued = await identity.create_key(app_pool, base.tenant_id, principal, ["read", "write"], name)
        headers[name] = {"authorization": f"Bearer {issued.key}"}
    item = await _remember(
        gateway, headers["author"], "The ops runbook lives in the wiki.", workspace_id=ops, visibility="tenant"
    )
    for who in ("outsider", "onlooker"):  # both can read it and hold write, neither writes in ops
        assert (await gateway.get(f"/v1/items/{item['id']}", headers=headers[who])).status_code == 200
        refused = await _review(gateway, headers[who], item["id"], "dispute", "vandalism")
        assert refused.status_code == 403, who
        assert refused.json()["code"] == "workspace_read_only"
    unchanged = await gateway.get(f"/v1/items/{item['id']}/events", headers=headers["author"])
    assert [e["action"] for e in unchanged.json()["events"]] == ["created"]
    assert (await gateway.get(f"/v1/items/{item['id']}", headers=headers["author"])).json()["review_status"] == "active"
    disputed = await _review(gateway, headers["teammate"], item["id"], "dispute", "the wiki moved")  # positive control
    assert disputed.status_code == 200 and disputed.json()["review_status"] == "disputed"
