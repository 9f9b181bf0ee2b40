"""Links between memories, tunnels between areas, and what they do to recall; explain and diversity."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import httpx
import pytest_asyncio

from engram.db import identity
from tests.support.tenants import create_tenant

Headers = dict[str, str]


@pytest_asyncio.fixture
async def people(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> dict[str, Headers]:
    base = await create_tenant(owner_pool)
    people: dict[str, Headers] = {}
    for name, kind, scopes in (
        ("user", "user", ["read", "write"]),
        ("colleague", "user", ["read", "write"]),
        ("reviewer", "user", ["read", "write", "review"]),
        ("reader", "user", ["read"]),
        ("admin", "user", ["admin"]),
    ):
        principal = await identity.create_principal(app_pool, base.tenant_id, name, kind)
        issued = await identity.create_key(app_pool, base.tenant_id, principal, scopes, name)
        people[name] = {"authorization": f"Bearer {issued.key}"}
    stranger = await create_tenant(owner_pool)
    issued = await identity.create_key(app_pool, stranger.tenant_id, stranger.principal_id, ["read", "write"], "s")
    people["stranger"] = {"authorization": f"Bearer {issued.key}"}
    return people


async def _remember(gateway: httpx.AsyncClient, who: Headers, content: str, **fields: object) -> str:
    response = await gateway.post("/v1/remember", json={"content": content, **fields}, headers=who)
    assert response.status_code == 201, response.text
    return response.json()["id"]  # type: ignore[no-any-return]


async def _recall(gateway: httpx.AsyncClient, who: Headers, **body: Any) -> dict[str, Any]:
    response = await gateway.post("/v1/recall", json={"mode": "keyword", **body}, headers=who)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def test_links_are_made_listed_and_removed_by_the_rules(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user = people["user"]
    a = await _remember(gateway, user, "The incident report for the March outage.")
    b = await _remember(gateway, user, "The root cause was an expired TLS certificate.")
    made = await gateway.post("/v1/edges", json={"src_id": a, "dst_id": b, "type": "explains"}, headers=user)
    assert made.status_code == 201 and made.json()["type"] == "explains"
    again = await gateway.post("/v1/edges", json={"src_id": a, "dst_id": b, "type": "explains"}, headers=user)
    assert again.status_code == 200 and again.json()["id"] == made.json()["id"]
    listed = (await gateway.get(f"/v1/items/{b}/edges", headers=user)).json()["items"]
    assert [(e["src_id"], e["dst_id"], e["type"]) for e in listed] == [(a, b, "explains")]
    for body, status, field in (
        ({"src_id": a, "dst_id": b, "type": "supersedes"}, 422, "type"),
        ({"src_id": a, "dst_id": a, "type": "mentions"}, 422, "dst_id"),
        ({"src_id": a, "dst_id": str(uuid.uuid4()), "type": "mentions"}, 404, "dst_id"),
        ({"src_id": "x", "dst_id": b, "type": "mentions"}, 422, "src_id"),
    ):
        refused = await gateway.post("/v1/edges", json=body, headers=user)
        assert refused.status_code == status and refused.json()["field"] == field, body
    assert (
        await gateway.post("/v1/edges", json={"src_id": a, "dst_id": b, "type": "mentions"}, headers=people["reader"])
    ).status_code == 403
    assert (
        await gateway.post("/v1/edges", json={"src_id": a, "dst_id": b, "type": "mentions"}, headers=people["stranger"])
    ).status_code == 404
    refused = await gateway.delete(f"/v1/edges/{made.json()['id']}", headers=people["colleague"])
    assert refused.status_code == 403 and refused.json()["code"] == "review_not_allowed"
    assert (await gateway.delete(f"/v1/edges/{made.json()['id']}", headers=user)).status_code == 204
    assert (await gateway.get(f"/v1/items/{b}/edges", headers=user)).json()["items"] == []
    trail = (await gateway.get(f"/v1/items/{a}/events", headers=user)).json()["events"]
    assert [e["action"] for e in trail][-2:] == ["linked", "unlinked"]
    new = (
        await gateway.post(
            f"/v1/items/{b}/supersede",
            json={"content": "The root cause was an expired intermediate certificate."},
            headers=user,
        )
    ).json()
    history = (await gateway.get(f"/v1/items/{b}/edges", headers=user)).json()["items"]
    assert history[0]["type"] == "supersedes" and history[0]["src_id"] == new["id"]
    kept = await gateway.delete(f"/v1/edges/{history[0]['id']}", headers=people["reviewer"])
    assert kept.status_code == 409 and kept.json()["code"] == "supersession_link"


async def test_recall_brings_linked_memories_along_unless_the_tenant_turns_it_off(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user, tag = people["user"], uuid.uuid4().hex[:6]
    seed = await _remember(gateway, user, f"The {tag} migration plan moves billing to the new cluster.")
    linked = await _remember(gateway, user, "Rollback needs the old DNS records kept for a week.")
    assert (
        await gateway.post("/v1/edges", json={"src_id": seed, "dst_id": linked, "type": "depends_on"}, headers=user)
    ).status_code == 201
    answer = await _recall(gateway, user, query=f"{tag} migration plan")
    by_id = {h["item"]["id"]: h for h in answer["items"]}
    assert by_id[linked]["origin"] == "graph" and f"linked via depends_on from {seed}" in by_id[linked]["reasons"]
    trust = float(next(r for r in by_id[linked]["reasons"] if r.startswith("trust ")).split()[1])
    assert abs(by_id[linked]["score"] - by_id[seed]["score"] * 0.5 * trust) < 1e-3
    off = await gateway.patch(
        "/v1/admin/tenant-config", json={"recall": {"graph_expansion": False}}, headers=people["admin"]
    )
    assert off.status_code == 200
    answer = await _recall(gateway, user, query=f"{tag} migration plan")
    assert linked not in {h["item"]["id"] for h in answer["items"]}


async def test_a_tunnel_lifts_candidates_in_the_connected_area(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user, admin, tag = people["user"], people["admin"], uuid.uuid4().hex[:6]
    seed = await _remember(gateway, user, f"{tag} {tag} failover drill for the database.", wing="infra", room="db")
    other = await _remember(gateway, user, f"The {tag} runbook lives in the ops wiki.", wing="ops")
    before = {h["item"]["id"]: h for h in (await _recall(gateway, user, query=f"{tag} failover"))["items"]}
    made = await gateway.post(
        "/v1/admin/tunnels", json={"from_wing": "infra", "from_room": "db", "to_wing": "ops"}, headers=admin
    )
    assert made.status_code == 201
    after = {h["item"]["id"]: h for h in (await _recall(gateway, user, query=f"{tag} failover"))["items"]}
    assert "linked via tunnel from infra/db" in after[other]["reasons"]
    assert abs(after[other]["score"] - before[other]["score"] * 1.1) < 1e-4
    assert after[seed]["score"] == before[seed]["score"]
    listed = (await gateway.get("/v1/admin/tunnels", headers=admin)).json()["items"]
    assert [(t["from_wing"], t["from_room"], t["to_wing"], t["to_room"]) for t in listed] == [
        ("infra", "db", "ops", None)
    ]
    assert (await gateway.delete(f"/v1/admin/tunnels/{made.json()['id']}", headers=admin)).status_code == 204
    assert (await gateway.delete(f"/v1/admin/tunnels/{made.json()['id']}", headers=admin)).status_code == 404
    assert (
        await gateway.post("/v1/admin/tunnels", json={"from_wing": "a", "to_wing": "a"}, headers=admin)
    ).status_code == 422


async def test_explain_shows_the_best_candidates_the_budgets_cut(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user, tag = people["user"], uuid.uuid4().hex[:6]
    for n in range(3):
        await _remember(gateway, user, f"{tag} deploy checklist step {n}.")
    answer = await _recall(gateway, user, query=f"{tag} deploy checklist", item_budget=1, explain=True)
    assert len(answer["items"]) == 1 and answer["omitted"] == 2
    assert [c["cut_because"] for c in answer["cut"]] == ["over the item budget (1)"] * 2
    assert "cut" not in await _recall(gateway, user, query=f"{tag} deploy checklist", item_budget=1)


async def test_session_context_lifts_what_was_said_near_a_hit(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user, tag = people["user"], uuid.uuid4().hex[:6]
    session = f"chat-{tag}"
    said = {}
    for name, text in (
        ("before2", "Shall we eat out tonight?"),
        ("before", "Did you try the new ramen place?"),
        ("hit", f"Yes, the {tag} noodles were great."),
        ("after", "We should go again on Friday."),
        ("after2", "Friday works for me."),
        ("after3", "Bring cash, they take no cards."),
    ):
        said[name] = await _remember(gateway, user, text, source_session=session)
    hidden = await _remember(
        gateway, people["colleague"], "A private aside in the same chat.", source_session=session, visibility="private"
    )
    elsewhere = await _remember(gateway, user, "Unrelated chat line.", source_session=f"other-{tag}")
    admin = people["admin"]
    off = await gateway.patch("/v1/admin/tenant-config", json={"recall": {"session_neighbours": 0}}, headers=admin)
    assert off.status_code == 200
    assert {h["item"]["id"] for h in (await _recall(gateway, user, query=f"{tag} noodles"))["items"]} == {said["hit"]}
    on = await gateway.patch("/v1/admin/tenant-config", json={"recall": {"session_neighbours": 0.5}}, headers=admin)
    assert on.status_code == 200
    answer = (await _recall(gateway, user, query=f"{tag} noodles"))["items"]
    by_id = {h["item"]["id"]: h for h in answer}
    near = {said[n] for n in ("before2", "before", "hit", "after", "after2")}
    assert set(by_id) == near  # two places each side; not the third, not another session, not a private aside
    assert not {said["after3"], hidden, elsewhere} & set(by_id)
    assert answer[0]["item"]["id"] == said["hit"]
    after, after2 = by_id[said["after"]], by_id[said["after2"]]
    assert after["origin"] == "session"
    assert any(r.startswith(f"recorded 1 after {said['hit']} in session {session} (+") for r in after["reasons"])
    assert any(r.startswith(f"recorded 2 before {said['hit']}") for r in by_id[said["before2"]]["reasons"])
    assert abs(after2["score"] / after["score"] - 0.5) < 0.01  # one place further keeps half the lift
    trust = float(next(r for r in after["reasons"] if r.startswith("trust ")).split()[1])  # its own, 2 decimals
    assert abs(after["score"] / (by_id[said["hit"]]["score"] * 0.5) - trust) < 0.006


async def test_the_reply_to_a_hit_that_asks_gains_twice_the_lift_unless_the_tenant_turns_it_off(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user, tag = people["user"], uuid.uuid4().hex[:6]
    # two hits with the same words (the same keyword score), one asking, each followed by a memory of its session
    asked = await _remember(gateway, user, f"Did the {tag} interview happen?", source_session=f"a-{tag}")
    reply = await _remember(gateway, user, "Yes, they offered me the job on the spot.", source_session=f"a-{tag}")
    said = await _remember(gateway, user, f"The {tag} interview did happen.", source_session=f"b-{tag}")
    after_said = await _remember(gateway, user, "Good luck with it.", source_session=f"b-{tag}")
    admin = people["admin"]

    async def scores() -> dict[str, float]:
        items = (await _recall(gateway, user, query=f"{tag} interview"))["items"]
        return {h["item"]["id"]: h["score"] for h in items}

    on = await gateway.patch("/v1/admin/tenant-config", json={"recall": {"session_neighbours": 0.4}}, headers=admin)
    assert on.status_code == 200 and on.json()["config"]["recall"]["session_replies"] is True
    lifted = await scores()
    assert lifted[asked] == lifted[said] > 0
    assert lifted[after_said] > 0
    assert abs(lifted[reply] / lifted[after_said] - 2.0) < 0.01  # the reply to the hit that asks: twice the lift
    off = await gateway.patch(
        "/v1/admin/tenant-config", json={"recall": {"session_neighbours": 0.4, "session_replies": False}}, headers=admin
    )
    assert off.status_code == 200 and off.json()["config"]["recall"]["session_replies"] is False
    plain = await scores()
    assert abs(plain[reply] - plain[after_said]) < 1e-6
    assert abs(plain[after_said] - lifted[after_said]) < 1e-6


async def test_session_context_lifts_a_candidate_that_matched_too(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user, tag = people["user"], uuid.uuid4().hex[:6]
    session = f"chat-{tag}"
    strong = await _remember(gateway, user, f"The {tag} {tag} outage began at noon.", source_session=session)
    reply = await _remember(gateway, user, f"Which {tag} dashboard showed it first?", source_session=session)
    alone = await _remember(gateway, user, f"A {tag} note from another day.", source_session=f"other-{tag}")
    admin = people["admin"]
    await gateway.patch("/v1/admin/tenant-config", json={"recall": {"session_neighbours": 0}}, headers=admin)
    plain = {h["item"]["id"]: h["score"] for h in (await _recall(gateway, user, query=f"{tag} outage"))["items"]}
    assert set(plain) == {strong, reply, alone}
    await gateway.patch("/v1/admin/tenant-config", json={"recall": {"session_neighbours": 0.5}}, headers=admin)
    lifted = {h["item"]["id"]: h for h in (await _recall(gateway, user, query=f"{tag} outage"))["items"]}
    assert lifted[reply]["score"] > plain[reply] and lifted[reply]["origin"] == "keyword"
    assert lifted[alone]["score"] == plain[alone]  # no neighbour in its session matched
