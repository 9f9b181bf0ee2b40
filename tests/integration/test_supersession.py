"""Supersession (atomic, authority-gated), recall's redirect to the terminal successor, and invalidation,
through REST against the real servers and database."""

from __future__ import annotations

import uuid

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
    headers: dict[str, Headers] = {}
    for name, kind in (("user", "user"), ("agent", "agent"), ("colleague", "user")):
        principal = await identity.create_principal(app_pool, base.tenant_id, name, kind)
        issued = await identity.create_key(app_pool, base.tenant_id, principal, ["read", "write"], name)
        headers[name] = {"authorization": f"Bearer {issued.key}"}
    return headers


async def _remember(gateway: httpx.AsyncClient, who: Headers, content: str, **fields: object) -> dict:  # type: ignore[type-arg]
    response = await gateway.post("/v1/remember", json={"content": content, **fields}, headers=who)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


async def _hits(gateway: httpx.AsyncClient, who: Headers, query: str, **fields: object) -> list[dict]:  # type: ignore[type-arg]
    answer = await gateway.post("/v1/recall", json={"query": query, "mode": "keyword", **fields}, headers=who)
    assert answer.status_code == 200, answer.text
    return answer.json()["items"]  # type: ignore[no-any-return]


async def _count(owner_pool: asyncpg.Pool, marker: str) -> int:
    async with owner_pool.acquire() as conn:
        return int(await conn.fetchval("SELECT count(*) FROM memory_items WHERE content LIKE $1", f"%{marker}%"))


async def test_lower_authority_cannot_supersede_and_writes_nothing(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    preference = await _remember(gateway, people["user"], f"{marker} Bob drinks dark roast.", kind="preference")
    assert preference["authority"] == 50
    refused = await gateway.post(
        f"/v1/items/{preference['id']}/supersede",
        json={"content": f"{marker} Bob drinks green tea now."},
        headers=people["agent"],
    )
    assert refused.status_code == 403 and refused.json()["code"] == "authority_too_low"
    assert await _count(owner_pool, marker) == 1
    unchanged = await gateway.get(f"/v1/items/{preference['id']}", headers=people["user"])
    assert unchanged.json()["review_status"] == "active" and unchanged.json()["superseded_by"] is None
    # positive control: equal authority may
    accepted = await gateway.post(
        f"/v1/items/{preference['id']}/supersede",
        json={"content": f"{marker} Bob drinks green tea now."},
        headers=people["user"],
    )
    assert accepted.status_code == 201 and accepted.json()["status"] == "superseded"
    assert accepted.json()["superseded"] == [preference["id"]]


async def test_recall_redirects_to_the_terminal_successor_once(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    first = await _remember(gateway, people["user"], f"{marker} The standup is at nine in room Azure.")
    second = (
        await gateway.post(
            f"/v1/items/{first['id']}/supersede",
            json={"content": f"{marker} The standup is at ten."},
            headers=people["user"],
        )
    ).json()
    third = await _remember(
        gateway, people["user"], f"{marker} The standup is at half past ten.", supersedes=[second["id"]]
    )
    assert third["status"] == "superseded" and third["superseded"] == [second["id"]]
    old = (await gateway.get(f"/v1/items/{first['id']}", headers=people["user"])).json()
    assert old["review_status"] == "superseded" and old["superseded_by"] == second["id"]

    # "Azure" is only in the first memory: the hit is redirected two hops, at the old rank
    hits = await _hits(gateway, people["user"], f"{marker} Azure")
    assert [h["item"]["id"] for h in hits] == [third["id"]]
    assert hits[0]["matched_via"] == first["id"]
    assert any(r == f"superseded: {first['id']} was replaced by this" for r in hits[0]["reasons"])
    # all three match the marker: the successor is listed once
    once = await _hits(gateway, people["user"], marker)
    assert [h["item"]["id"] for h in once] == [third["id"]]
    history = await _hits(gateway, people["user"], marker, include_superseded=True)
    assert {h["item"]["id"] for h in history} == {first["id"], second["id"], third["id"]}
    trail = (await gateway.get(f"/v1/items/{first['id']}/events", headers=people["user"])).json()["events"]
    assert trail[-1]["action"] == "superseded" and trail[-1]["new"]["superseded_by"] == second["id"]
    [envelope] = await outbox_envelopes(owner_pool, types=["memory.superseded"], subjects=[first["id"]])
    async with owner_pool.acquire() as conn:
        edge = await conn.fetchval(
            "SELECT type FROM memory_edges WHERE src_id = $1::uuid AND dst_id = $2::uuid", second["id"], first["id"]
        )
    assert envelope["data"]["superseded_by"] == second["id"] and edge == "supersedes"


async def test_a_chain_ending_in_an_invalidated_item_is_dropped(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    old = await _remember(gateway, people["user"], f"{marker} The parking garage code is Juniper.")
    new = (
        await gateway.post(
            f"/v1/items/{old['id']}/supersede", json={"content": f"{marker} The code changed."}, headers=people["user"]
        )
    ).json()
    assert [h["item"]["id"] for h in await _hits(gateway, people["user"], f"{marker} Juniper")] == [new["id"]]
    missing_reason = await gateway.post(
        f"/v1/items/{new['id']}/invalidate", json={"reason": ""}, headers=people["user"]
    )
    assert missing_reason.status_code == 422 and missing_reason.json()["field"] == "reason"
    not_theirs = await gateway.post(
        f"/v1/items/{new['id']}/invalidate", json={"reason": "no"}, headers=people["colleague"]
    )
    assert not_theirs.status_code == 403
    gone = await gateway.post(
        f"/v1/items/{new['id']}/invalidate", json={"reason": "the garage closed"}, headers=people["user"]
    )
    assert gone.status_code == 200 and gone.json()["invalidated_at"]
    assert await _hits(gateway, people["user"], f"{marker} Juniper") == []
    assert await _hits(gateway, people["user"], marker) == []
    kept = await gateway.get(f"/v1/items/{new['id']}", headers=people["user"])
    assert kept.status_code == 200  # kept for audit
    again = await gateway.post(f"/v1/items/{new['id']}/invalidate", json={"reason": "twice"}, headers=people["user"])
    assert again.status_code == 409
    dead_target = await gateway.post(
        f"/v1/items/{new['id']}/supersede", json={"content": f"{marker} x"}, headers=people["user"]
    )
    assert dead_target.status_code == 409 and dead_target.json()["code"] == "not_live"
    trail = (await gateway.get(f"/v1/items/{new['id']}/events", headers=people["user"])).json()["events"]
    assert trail[-1]["action"] == "invalidated" and trail[-1]["reason"] == "the garage closed"


async def test_a_hidden_successor_is_not_revealed(gateway: httpx.AsyncClient, people: dict[str, Headers]) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    shared = await _remember(gateway, people["user"], f"{marker} Lunch order goes to Sakura.", visibility="tenant")
    await _remember(
        gateway,
        people["user"],
        f"{marker} Lunch order goes to Sakura, private reminder.",
        visibility="private",
        supersedes=[shared["id"]],
    )
    assert await _hits(gateway, people["colleague"], f"{marker} Sakura") == []
    assert len(await _hits(gateway, people["user"], f"{marker} Sakura")) == 1  # the author sees it


async def test_bad_supersedes_are_refused(gateway: httpx.AsyncClient, people: dict[str, Headers]) -> None:
    for value, status in ((["not-a-uuid"], 422), ([str(uuid.uuid4())], 404)):
        response = await gateway.post(
            "/v1/remember", json={"content": "replacement", "supersedes": value}, headers=people["user"]
        )
        assert response.status_code == status and response.json()["field"] == "supersedes"


async def test_superseding_needs_a_writing_role_and_a_reviewed_kind(
    gateway: httpx.AsyncClient, people: dict[str, Headers], app_pool: asyncpg.Pool
) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    shared = await _remember(
        gateway, people["user"], f"{marker} Shared runbook lives in the wiki.", visibility="tenant"
    )
    item = (await gateway.get(f"/v1/items/{shared['id']}", headers=people["user"])).json()
    # the colleague can read it; demote the colleague to a viewer of that workspace
    colleague_id = (
        await gateway.post("/v1/remember", json={"content": f"{marker} colleague probe"}, headers=people["colleague"])
    ).json()["item"]["principal_id"]
    await identity.add_member(app_pool, item["tenant_id"], item["workspace_id"], colleague_id, "viewer")
    side = await identity.create_workspace(app_pool, item["tenant_id"], f"side-{marker}")
    await identity.add_member(app_pool, item["tenant_id"], side, colleague_id, "member")
    refused = await gateway.post(
        f"/v1/items/{shared['id']}/supersede",
        json={"content": f"{marker} Runbook moved.", "visibility": "private", "workspace_id": side},
        headers=people["colleague"],
    )
    assert refused.status_code == 403 and refused.json()["field"] == "supersedes"
    assert refused.json()["code"] == "workspace_read_only"
    proposal = await gateway.post(
        f"/v1/items/{shared['id']}/supersede",
        json={"content": f"{marker} Runbook doctrine.", "kind": "doctrine"},
        headers=people["user"],
    )
    assert proposal.status_code == 409 and proposal.json()["code"] == "proposal_cannot_supersede"
    still = (await gateway.get(f"/v1/items/{shared['id']}", headers=people["user"])).json()
    assert still["review_status"] == "active" and still["superseded_by"] is None
    not_an_id = await gateway.post("/v1/items/not-an-id/supersede", json={"content": "x"}, headers=people["user"])
    assert not_an_id.status_code == 404


async def test_a_redirect_respects_a_disputed_successors_kind(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    old = await _remember(
        gateway, people["user"], f"{marker} The build took forty minutes Kestrel.", kind="observation"
    )
    new = (
        await gateway.post(
            f"/v1/items/{old['id']}/supersede",
            json={"content": f"{marker} The build took thirty minutes.", "kind": "observation"},
            headers=people["user"],
        )
    ).json()
    assert [h["item"]["id"] for h in await _hits(gateway, people["user"], f"{marker} Kestrel")] == [new["id"]]
    disputed = await gateway.post(
        f"/v1/items/{new['id']}/review", json={"action": "dispute"}, headers=people["colleague"]
    )
    assert disputed.status_code == 200
    assert await _hits(gateway, people["user"], f"{marker} Kestrel") == []  # observations leave recall when disputed
    trail = (await gateway.get(f"/v1/items/{new['id']}/events", headers=people["user"])).json()["events"]
    assert trail[0]["new"]["authority"] == 50 and isinstance(trail[0]["new"]["authority"], int)
    invalidated = await gateway.post(
        f"/v1/items/{new['id']}/invalidate", json={"reason": "wrong"}, headers=people["user"]
    )
    assert invalidated.status_code == 200
    review_after = await gateway.post(
        f"/v1/items/{new['id']}/review", json={"action": "activate"}, headers=people["user"]
    )
    assert review_after.status_code == 409


async def test_possible_supersedes_are_reported_never_applied(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    first = await _remember(gateway, people["user"], f"{marker} The staging database runs on port 6543.")
    other_kind = await _remember(
        gateway, people["user"], f"{marker} The staging database runs on port 6543 today.", kind="observation"
    )
    await _remember(gateway, people["user"], f"{marker} Lunch is served at noon in the cafeteria.")
    second = await _remember(gateway, people["user"], f"{marker} The staging database now runs on port 6544.")
    reported = {p["id"]: p for p in second["possible_supersedes"]}
    assert first["id"] in reported and other_kind["id"] not in reported
    assert reported[first["id"]]["similarity"] >= 0.35 and "staging database" in reported[first["id"]]["preview"]
    assert len(reported) == 1  # the unrelated memory is not suggested
    untouched = (await gateway.get(f"/v1/items/{first['id']}", headers=people["user"])).json()
    assert untouched["review_status"] == "active" and untouched["superseded_by"] is None
