"""The memory kinds registry and singleton kinds, through REST."""

from __future__ import annotations

import json
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
    for name, kind, scopes in (
        ("admin", "user", ["admin"]),
        ("user", "user", ["read", "write"]),
        ("agent", "agent", ["read", "write"]),
        ("reviewer", "user", ["read", "write", "review"]),
        ("agent_reviewer", "agent", ["read", "write", "review"]),
    ):
        principal = await identity.create_principal(app_pool, base.tenant_id, name, kind)
        issued = await identity.create_key(app_pool, base.tenant_id, principal, scopes, name)
        headers[name] = {"authorization": f"Bearer {issued.key}"}
    other = await create_tenant(owner_pool)
    issued = await identity.create_key(app_pool, other.tenant_id, other.principal_id, ["read", "write"], "other")
    headers["other_tenant"] = {"authorization": f"Bearer {issued.key}"}
    return headers


async def test_custom_kinds_are_registered_validated_and_disabled(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    admin = people["admin"]
    listed = (await gateway.get("/v1/admin/kinds", headers=admin)).json()["items"]
    assert {k["name"] for k in listed if k["built_in"]} == {
        "fact",
        "preference",
        "doctrine",
        "decision",
        "invariant",
        "observation",
        "diary_entry",
        "procedure",
        "summary",
    }
    created = await gateway.post(
        "/v1/admin/kinds",
        json={"name": "meeting_note", "default_importance": 0.4, "requires_review": True},
        headers=admin,
    )
    assert created.status_code == 201 and created.json()["built_in"] is False
    for body, status, field in (
        ({"name": "fact"}, 422, "name"),
        ({"name": "Bad-Name"}, 422, "name"),
        ({"name": "x" * 65}, 422, "name"),
        ({"name": "meeting_note"}, 409, "name"),
    ):
        refused = await gateway.post("/v1/admin/kinds", json=body, headers=admin)
        assert refused.status_code == status and refused.json()["field"] == field, body
    note = await gateway.post(
        "/v1/remember", json={"content": "Decided to pilot the new CI.", "kind": "meeting_note"}, headers=people["user"]
    )
    assert note.status_code == 201 and note.json()["review_status"] == "proposed"
    assert note.json()["item"]["importance"] == 0.4
    elsewhere = await gateway.post(
        "/v1/remember", json={"content": "x", "kind": "meeting_note"}, headers=people["other_tenant"]
    )
    assert elsewhere.status_code == 422 and elsewhere.json()["field"] == "kind"
    disabled = await gateway.patch("/v1/admin/kinds/meeting_note", json={"enabled": False}, headers=admin)
    assert disabled.status_code == 200 and disabled.json()["enabled"] is False
    refused = await gateway.post(
        "/v1/remember", json={"content": "Another note.", "kind": "meeting_note"}, headers=people["user"]
    )
    assert refused.status_code == 422 and "disabled" in refused.json()["detail"]
    reshaped = await gateway.patch("/v1/admin/kinds/fact", json={"singleton": True}, headers=admin)
    assert reshaped.status_code == 403 and reshaped.json()["code"] == "built_in_kind"
    assert (await gateway.delete("/v1/admin/kinds/meeting_note", headers=admin)).status_code == 405


async def test_a_tenant_switches_a_built_in_kind_off_and_on_for_itself_only(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    admin, user = people["admin"], people["user"]
    before = await gateway.post(
        "/v1/remember", json={"content": "Diary: shipped the release.", "kind": "diary_entry"}, headers=user
    )
    assert before.status_code == 201
    off = await gateway.patch("/v1/admin/kinds/diary_entry", json={"enabled": False}, headers=admin)
    assert off.status_code == 200 and off.json() == {**off.json(), "enabled": False, "built_in": True}
    refused = await gateway.post(
        "/v1/remember", json={"content": "Diary: fixed the flaky test.", "kind": "diary_entry"}, headers=user
    )
    assert refused.status_code == 422 and refused.json()["field"] == "kind"
    assert "diary_entry" not in refused.json()["detail"].split("known kinds:")[1]
    listed = (await gateway.get("/v1/admin/kinds", headers=admin)).json()["items"]
    assert next(k for k in listed if k["name"] == "diary_entry")["enabled"] is False
    elsewhere = await gateway.post(
        "/v1/remember",
        json={"content": "Diary: another tenant's day.", "kind": "diary_entry"},
        headers=people["other_tenant"],
    )
    assert elsewhere.status_code == 201  # the switch is this tenant's, the shared row is untouched
    assert (await gateway.get(f"/v1/items/{before.json()['id']}", headers=user)).status_code == 200
    on = await gateway.patch("/v1/admin/kinds/diary_entry", json={"enabled": True}, headers=admin)
    assert on.status_code == 200 and on.json()["enabled"] is True
    again = await gateway.post(
        "/v1/remember", json={"content": "Diary: fixed the flaky test.", "kind": "diary_entry"}, headers=user
    )
    assert again.status_code == 201


async def test_a_lower_authority_singleton_write_becomes_a_proposal_with_a_conflict(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    subject = f"bob.drink.{uuid.uuid4().hex[:6]}"
    users = await gateway.post(
        "/v1/remember",
        json={"content": "Bob prefers black coffee.", "kind": "preference", "subject": subject},
        headers=people["user"],
    )
    assert users.status_code == 201 and users.json()["authority"] == 50
    agents = await gateway.post(
        "/v1/remember",
        json={"content": "Bob prefers green tea.", "kind": "preference", "subject": subject, "source_type": "inferred"},
        headers=people["agent"],
    )
    assert agents.status_code == 201
    assert agents.json()["status"] == "created" and agents.json()["review_status"] == "proposed"
    assert agents.json()["authority"] == 10
    kept = (await gateway.get(f"/v1/items/{users.json()['id']}", headers=people["user"])).json()
    assert kept["review_status"] == "active" and kept["superseded_by"] is None  # never a silent replacement
    async with owner_pool.acquire() as conn:
        conflict = await conn.fetchrow("SELECT * FROM conflicts WHERE item_b = $1::uuid", agents.json()["id"])
        event = await conn.fetchval(
            "SELECT envelope FROM outbox WHERE envelope->>'type' = 'engram.conflict.detected' "
            "AND envelope->'data'->>'new_item_id' = $1",
            agents.json()["id"],
        )
    assert conflict["status"] == "open" and str(conflict["item_a"]) == users.json()["id"]
    assert json.loads(event)["data"]["detector"] == "singleton"

    answer = await gateway.post("/v1/recall", json={"query": "Bob prefers", "mode": "keyword"}, headers=people["user"])
    hits = answer.json()["items"]
    assert hits[0]["item"]["id"] == users.json()["id"]  # the user's preference still leads
    by_id = {h["item"]["id"]: h["reasons"] for h in hits}
    assert any(r.startswith("open conflict with") for r in by_id[users.json()["id"]])
    assert "unreviewed (proposed)" in by_id[agents.json()["id"]]

    # only a reviewer can accept the change: not the agent, not an agent holding the review scope, not a writer
    proposal = agents.json()["id"]
    for who in ("agent", "agent_reviewer", "user"):
        refused = await gateway.post(f"/v1/items/{proposal}/review", json={"action": "activate"}, headers=people[who])
        assert refused.status_code == 403 and refused.json()["code"] == "review_not_allowed", who
    still = (await gateway.get(f"/v1/items/{users.json()['id']}", headers=people["user"])).json()
    assert still["superseded_by"] is None
    accepted = await gateway.post(
        f"/v1/items/{proposal}/review", json={"action": "activate", "reason": "Bob said so"}, headers=people["reviewer"]
    )
    assert accepted.status_code == 200 and accepted.json()["review_status"] == "active"
    replaced = (await gateway.get(f"/v1/items/{users.json()['id']}", headers=people["user"])).json()
    assert replaced["review_status"] == "superseded" and replaced["superseded_by"] == proposal
    async with owner_pool.acquire() as conn:
        conflict = await conn.fetchrow("SELECT * FROM conflicts WHERE item_b = $1::uuid", proposal)
    [resolved] = await outbox_envelopes(owner_pool, types=["conflict.resolved"], subjects=[str(conflict["id"])])
    assert conflict["status"] == "resolved" and conflict["resolution"] == "accept_new"
    assert resolved["data"]["resolution"] == "accept_new"
    answer = await gateway.post(
        "/v1/recall", json={"query": "Bob prefers black coffee", "mode": "keyword"}, headers=people["user"]
    )
    top = answer.json()["items"][0]
    assert top["item"]["id"] == proposal and top["matched_via"] == users.json()["id"]
    assert not any(r.startswith("open conflict") for r in top["reasons"])
    trail = (await gateway.get(f"/v1/items/{users.json()['id']}/events", headers=people["user"])).json()["events"]
    assert trail[-1]["action"] == "superseded" and trail[-1]["reason"] == "Bob said so"


async def test_rejecting_a_singleton_proposal_keeps_the_incumbent_and_closes_the_conflict(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    subject = f"carol.editor.{uuid.uuid4().hex[:6]}"
    users = await gateway.post(
        "/v1/remember",
        json={"content": "Carol prefers vim.", "kind": "preference", "subject": subject},
        headers=people["user"],
    )
    agents = await gateway.post(
        "/v1/remember",
        json={"content": "Carol prefers emacs.", "kind": "preference", "subject": subject, "source_type": "inferred"},
        headers=people["agent"],
    )
    rejected = await gateway.post(
        f"/v1/items/{agents.json()['id']}/review", json={"action": "reject"}, headers=people["reviewer"]
    )
    assert rejected.status_code == 200 and rejected.json()["review_status"] == "rejected"
    kept = (await gateway.get(f"/v1/items/{users.json()['id']}", headers=people["user"])).json()
    assert kept["review_status"] == "active" and kept["superseded_by"] is None
    async with owner_pool.acquire() as conn:
        conflict = await conn.fetchrow("SELECT * FROM conflicts WHERE item_b = $1::uuid", agents.json()["id"])
    assert conflict["status"] == "resolved" and conflict["resolution"] == "keep_existing"
    hits = (
        await gateway.post("/v1/recall", json={"query": "Carol prefers", "mode": "keyword"}, headers=people["user"])
    ).json()["items"]
    assert [h["item"]["id"] for h in hits] == [users.json()["id"]]
    assert not any(r.startswith("open conflict") for r in hits[0]["reasons"])


async def test_an_equal_authority_singleton_write_supersedes(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    subject = f"office.{uuid.uuid4().hex[:6]}"
    first = await gateway.post(
        "/v1/remember",
        json={"content": "The office is in Lisbon.", "kind": "preference", "subject": subject},
        headers=people["user"],
    )
    second = await gateway.post(
        "/v1/remember",
        json={"content": "The office is in Porto.", "kind": "preference", "subject": subject},
        headers=people["user"],
    )
    assert second.status_code == 201 and second.json()["status"] == "superseded"
    assert second.json()["superseded"] == [first.json()["id"]]
    same = await gateway.post(
        "/v1/remember",
        json={"content": "the office is in porto.", "kind": "preference", "subject": subject},
        headers=people["user"],
    )
    assert same.status_code == 200 and same.json()["status"] == "deduplicated"


async def test_a_conflict_reason_never_names_a_hidden_item(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    subject = f"desk.{uuid.uuid4().hex[:6]}"
    users = await gateway.post(
        "/v1/remember",
        json={"content": "Dana sits at desk twelve.", "kind": "preference", "subject": subject, "visibility": "tenant"},
        headers=people["user"],
    )
    hidden = await gateway.post(
        "/v1/remember",
        json={
            "content": "Dana sits at desk four.",
            "kind": "preference",
            "subject": subject,
            "source_type": "inferred",
            "visibility": "private",
        },
        headers=people["agent"],
    )
    assert hidden.json()["review_status"] == "proposed"
    answer = await gateway.post("/v1/recall", json={"query": "Dana desk", "mode": "keyword"}, headers=people["user"])
    [hit] = answer.json()["items"]
    assert hit["item"]["id"] == users.json()["id"]
    assert "open conflict with a memory you cannot see (trust ×0.75)" in hit["reasons"]
    assert not any(hidden.json()["id"] in reason for reason in hit["reasons"])


async def test_archiving_the_incumbent_settles_the_conflict_for_the_newcomer(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    subject = f"erin.shell.{uuid.uuid4().hex[:6]}"
    users = await gateway.post(
        "/v1/remember",
        json={"content": "Erin prefers bash.", "kind": "preference", "subject": subject},
        headers=people["user"],
    )
    agents = await gateway.post(
        "/v1/remember",
        json={"content": "Erin prefers zsh.", "kind": "preference", "subject": subject, "source_type": "inferred"},
        headers=people["agent"],
    )
    archived = await gateway.post(
        f"/v1/items/{users.json()['id']}/review", json={"action": "archive"}, headers=people["reviewer"]
    )
    assert archived.status_code == 200
    async with owner_pool.acquire() as conn:
        conflict = await conn.fetchrow("SELECT * FROM conflicts WHERE item_b = $1::uuid", agents.json()["id"])
    assert conflict["status"] == "resolved" and conflict["resolution"] == "accept_new"
