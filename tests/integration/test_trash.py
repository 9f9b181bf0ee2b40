"""The trash, bulk changes, time to live and the sweep, through REST on real servers and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import httpx
import pytest_asyncio

from engram.config import Settings
from engram.db import embeddings, identity
from engram.db.pool import tenant_tx
from engram.embeddings.provider import EmbeddingProvider
from services.embedder.service import EmbedderService
from services.ingest.trash import sweep
from tests.support.outbox import deliver, outbox_envelopes
from tests.support.tenants import create_tenant

Headers = dict[str, str]


@pytest_asyncio.fixture
async def people(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> dict[str, Headers]:
    base = await create_tenant(owner_pool)
    headers: dict[str, Headers] = {"tenant": {"id": base.tenant_id}}
    for name, kind, scopes in (
        ("user", "user", ["read", "write"]),
        ("reviewer", "user", ["read", "write", "review"]),
        ("agent", "agent", ["read", "write"]),
        ("reader", "user", ["read"]),
        ("admin", "user", ["admin"]),
    ):
        principal = await identity.create_principal(app_pool, base.tenant_id, name, kind)
        issued = await identity.create_key(app_pool, base.tenant_id, principal, scopes, name)
        headers[name] = {"authorization": f"Bearer {issued.key}"}
        headers[f"{name}_id"] = {"id": principal}
    stranger = await create_tenant(owner_pool)
    issued = await identity.create_key(app_pool, stranger.tenant_id, stranger.principal_id, ["read", "write"], "x")
    headers["stranger"] = {"authorization": f"Bearer {issued.key}"}
    return headers


async def _remember(gateway: httpx.AsyncClient, who: Headers, content: str, **fields: object) -> dict:  # type: ignore[type-arg]
    response = await gateway.post("/v1/remember", json={"content": content, **fields}, headers=who)
    assert response.status_code == 201, response.text
    return response.json()["item"]  # type: ignore[no-any-return]


async def _outbox(owner_pool: asyncpg.Pool, event_type: str, item_id: str) -> dict | None:  # type: ignore[type-arg]
    found = await outbox_envelopes(owner_pool, types=[event_type], subjects=[item_id])
    return found[0] if found else None


async def _search(gateway: httpx.AsyncClient, who: Headers, query: str, mode: str = "keyword") -> list[str]:
    response = await gateway.post("/v1/search", json={"query": query, "mode": mode}, headers=who)
    assert response.status_code == 200, response.text
    return [hit["item"]["id"] for hit in response.json()["items"]]


async def test_delete_keeps_a_full_snapshot_and_restore_brings_it_all_back(
    gateway: httpx.AsyncClient,
    people: dict[str, Headers],
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    embedder: EmbeddingProvider,
) -> None:
    user, tenant_id = people["user"], people["tenant"]["id"]
    item = await _remember(gateway, user, "The staging cluster runs in eu-west-3.", tags=["infra"])
    vector = (await embedder.embed_passages([item["content"]]))[0]
    async with tenant_tx(app_pool, tenant_id) as conn:
        await embeddings.upsert(conn, tenant_id, item["id"], embedder.profile, vector)
    assert (
        await gateway.post("/v1/feedback", json={"item_id": item["id"], "verdict": "useful"}, headers=user)
    ).status_code == 200
    assert item["id"] in await _search(gateway, user, "staging cluster region", "semantic")

    deleted = await gateway.delete(f"/v1/items/{item['id']}", params={"reason": "moved to the wiki"}, headers=user)
    assert deleted.status_code == 200, deleted.text
    trash_id = deleted.json()["trash_id"]
    assert (await gateway.get(f"/v1/items/{item['id']}", headers=user)).status_code == 404
    assert item["id"] not in await _search(gateway, user, "staging cluster region", "semantic")
    assert item["id"] not in await _search(gateway, user, "staging cluster")
    listed = (await gateway.get("/v1/trash", headers=user)).json()["items"]
    entry = next(e for e in listed if e["id"] == trash_id)
    assert entry["item_id"] == item["id"] and entry["reason"] == "deleted"
    assert entry["preview"].startswith("The staging")
    purge_after = datetime.fromisoformat(entry["purge_after"].rstrip("Z"))
    assert (
        timedelta(days=29) < purge_after - datetime.fromisoformat(entry["deleted_at"].rstrip("Z")) <= timedelta(days=30)
    )
    trail = (await gateway.get(f"/v1/items/{item['id']}/events", headers=user)).json()["events"]
    assert trail[-1]["action"] == "deleted" and trail[-1]["reason"] == "moved to the wiki"
    event = await _outbox(owner_pool, "memory.deleted", item["id"])
    assert event is not None and event["data"]["trash_id"] == trash_id and "content" not in event["data"]

    restored = await gateway.post(f"/v1/trash/{trash_id}/restore", headers=user)
    assert restored.status_code == 200, restored.text
    back = restored.json()
    for field in ("id", "content", "content_hash", "created_at", "authority", "review_status", "tags", "kind"):
        assert back[field] == item[field], field
    assert back["importance"] > item["importance"]  # the useful verdict came back too
    assert item["id"] in await _search(gateway, user, "staging cluster region", "semantic")  # embedding restored
    assert all(e["id"] != trash_id for e in (await gateway.get("/v1/trash", headers=user)).json()["items"])
    trail = (await gateway.get(f"/v1/items/{item['id']}/events", headers=user)).json()["events"]
    assert [e["action"] for e in trail][-2:] == ["deleted", "restored"]
    assert trail[-1]["new"]["embeddings"] == 1
    restored_event = await _outbox(owner_pool, "memory.restored", item["id"])
    assert restored_event is not None and restored_event["data"]["embedded"] is True
    again = await gateway.post(f"/v1/trash/{trash_id}/restore", headers=user)
    assert again.status_code == 404


async def test_restore_keeps_state_and_relinks_what_still_exists(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user = people["user"]
    old = await _remember(gateway, user, "The on-call rota changes on Mondays.")
    new = (
        await gateway.post(
            f"/v1/items/{old['id']}/supersede", json={"content": "The on-call rota changes on Tuesdays."}, headers=user
        )
    ).json()["item"]
    # the successor goes: the old item stays superseded, and recall drops the chain rather than reviving it
    trash_id = (await gateway.delete(f"/v1/items/{new['id']}", headers=user)).json()["trash_id"]
    orphan = (await gateway.get(f"/v1/items/{old['id']}", headers=user)).json()
    assert orphan["review_status"] == "superseded" and orphan["superseded_by"] is None
    assert old["id"] not in await _search(gateway, user, "on-call rota Mondays")
    restored = await gateway.post(f"/v1/trash/{trash_id}/restore", headers=user)
    assert restored.status_code == 200
    relinked = (await gateway.get(f"/v1/items/{old['id']}", headers=user)).json()
    assert relinked["superseded_by"] == new["id"]
    recalled = (
        await gateway.post("/v1/recall", json={"mode": "keyword", "query": "on-call rota Mondays"}, headers=user)
    ).json()["items"]
    assert [r["item"]["id"] for r in recalled] == [new["id"]] and recalled[0]["matched_via"] == old["id"]

    dead = await _remember(gateway, user, "The VPN endpoint is vpn-old.example.net.")
    assert (
        await gateway.post(f"/v1/items/{dead['id']}/invalidate", json={"reason": "decommissioned"}, headers=user)
    ).status_code == 200
    trash_id = (await gateway.delete(f"/v1/items/{dead['id']}", headers=user)).json()["trash_id"]
    entry = next(e for e in (await gateway.get("/v1/trash", headers=user)).json()["items"] if e["id"] == trash_id)
    assert entry["invalidated"] is True
    back = (await gateway.post(f"/v1/trash/{trash_id}/restore", headers=user)).json()
    assert back["invalidated_at"] is not None  # an invalidated item stays invalidated
    assert dead["id"] not in await _search(gateway, user, "VPN endpoint")


async def test_who_may_delete_see_and_restore(gateway: httpx.AsyncClient, people: dict[str, Headers]) -> None:
    mine = await _remember(gateway, people["user"], "My notes on the billing migration.")
    private = await _remember(gateway, people["user"], "My private reminder about the dentist.", visibility="private")
    for who, status, code in (
        ("agent", 403, "review_not_allowed"),
        ("reader", 403, "insufficient_scope"),
        ("stranger", 404, "not_found"),
    ):
        refused = await gateway.delete(f"/v1/items/{mine['id']}", headers=people[who])
        assert refused.status_code == status and refused.json()["code"] == code, who
    assert (await gateway.get(f"/v1/items/{mine['id']}", headers=people["user"])).status_code == 200
    by_reviewer = await gateway.delete(f"/v1/items/{mine['id']}", headers=people["reviewer"])
    assert by_reviewer.status_code == 200
    private_trash = (await gateway.delete(f"/v1/items/{private['id']}", headers=people["user"])).json()["trash_id"]

    reviewer_view = {e["id"] for e in (await gateway.get("/v1/trash", headers=people["reviewer"])).json()["items"]}
    assert by_reviewer.json()["trash_id"] in reviewer_view and private_trash not in reviewer_view
    assert (await gateway.get("/v1/trash", headers=people["stranger"])).json()["items"] == []
    refused = await gateway.post(f"/v1/trash/{by_reviewer.json()['trash_id']}/restore", headers=people["agent"])
    assert refused.status_code == 403 and refused.json()["code"] == "review_not_allowed"
    hidden = await gateway.post(f"/v1/trash/{private_trash}/restore", headers=people["reviewer"])
    assert hidden.status_code == 404
    assert (await gateway.post("/v1/trash/not-a-uuid/restore", headers=people["user"])).status_code == 422

    # the same text written again while the first is in the trash: restoring would duplicate a live item
    await _remember(gateway, people["user"], "My private reminder about the dentist.", visibility="private")
    clash = await gateway.post(f"/v1/trash/{private_trash}/restore", headers=people["user"])
    assert clash.status_code == 409 and clash.json()["code"] == "duplicate_live_item"
    listed = (await gateway.get("/v1/trash", headers=people["user"])).json()["items"]
    assert any(e["id"] == private_trash for e in listed)


async def test_the_trash_pages_with_a_cursor(gateway: httpx.AsyncClient, people: dict[str, Headers]) -> None:
    user = people["user"]
    for n in range(5):
        item = await _remember(gateway, user, f"Scratch note number {n} for paging.")
        assert (await gateway.delete(f"/v1/items/{item['id']}", headers=user)).status_code == 200
    seen: list[str] = []
    cursor = None
    for _ in range(10):  # five entries, two a page: a cursor that never ends fails instead of looping
        page = (
            await gateway.get("/v1/trash", params={"limit": 2, **({"cursor": cursor} if cursor else {})}, headers=user)
        ).json()
        seen += [e["id"] for e in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert cursor is None, "the trash cursor never ran out"
    assert len(seen) == len(set(seen)) == 5
    bad = await gateway.get("/v1/trash", params={"cursor": "garbage"}, headers=user)
    assert bad.status_code == 422 and bad.json()["field"] == "cursor"


async def test_bulk_changes_report_first_and_write_only_when_asked(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    user, agent = people["user"], people["agent"]
    ours = [await _remember(gateway, user, f"Sprint {n} retro: ship smaller PRs.", tags=["retro"]) for n in range(3)]
    theirs = await _remember(gateway, agent, "Sprint 9 retro: agent summary.", tags=["retro"])
    await _remember(gateway, user, "Unrelated: the coffee machine is fixed.", tags=["office"])

    dry = await gateway.post("/v1/items/bulk", json={"action": "delete", "filter": {"tags": ["retro"]}}, headers=user)
    assert dry.status_code == 200, dry.text
    report = dry.json()
    assert report["dry_run"] is True and report["matched"] == 4 and not report["truncated"]
    assert set(report["affected"]) == {i["id"] for i in ours}
    assert report["skipped"] == [
        {"id": theirs["id"], "code": "review_not_allowed", "detail": report["skipped"][0]["detail"]}
    ]
    assert [(await gateway.get(f"/v1/items/{i['id']}", headers=user)).status_code for i in ours] == [200] * 3

    limited = await gateway.post(
        "/v1/items/bulk",
        json={"action": "archive", "filter": {"tags": ["retro"]}, "limit": 2, "dry_run": True},
        headers=user,
    )
    assert limited.json()["truncated"] is True and limited.json()["matched"] == 2
    archived = await gateway.post(
        "/v1/items/bulk",
        json={"action": "archive", "filter": {"tags": ["retro"]}, "dry_run": False, "reason": "old retros"},
        headers=user,
    )
    assert set(archived.json()["affected"]) == {i["id"] for i in ours}
    assert [(await gateway.get(f"/v1/items/{i['id']}", headers=user)).json()["review_status"] for i in ours] == [
        "archived"
    ] * 3
    assert (await gateway.get(f"/v1/items/{theirs['id']}", headers=user)).json()["review_status"] == "active"

    deleted = await gateway.post(
        "/v1/items/bulk",
        json={"action": "delete", "dry_run": False, "filter": {"tags": ["retro"], "review_status": ["archived"]}},
        headers=user,
    )
    assert set(deleted.json()["affected"]) == {i["id"] for i in ours}
    assert [(await gateway.get(f"/v1/items/{i['id']}", headers=user)).status_code for i in ours] == [404] * 3
    for i in ours:
        assert await _outbox(owner_pool, "memory.deleted", i["id"]) is not None

    for body, field in (
        ({"action": "delete", "filter": {}}, "filter"),
        ({"action": "purge", "filter": {"tags": ["x"]}}, "action"),
        ({"action": "delete", "filter": {"author_id": "nope"}}, "filter.author_id"),
        ({"action": "delete", "filter": {"tags": ["x"]}, "limit": 5000}, "limit"),
    ):
        refused = await gateway.post("/v1/items/bulk", json=body, headers=user)
        assert refused.status_code == 422 and refused.json()["field"] == field, body
    assert (
        await gateway.post(
            "/v1/items/bulk", json={"action": "delete", "filter": {"tags": ["office"]}}, headers=people["reader"]
        )
    ).status_code == 403


async def test_time_to_live_defaults_protections_and_refusals(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user = people["user"]
    now = datetime.now(UTC)
    seen = await _remember(gateway, user, "Saw a spike in 502s at noon.", kind="observation")
    assert seen["importance"] == 0.3
    expires = datetime.fromisoformat(seen["expires_at"].rstrip("Z")).replace(tzinfo=UTC)
    assert timedelta(days=29, hours=23) < expires - now < timedelta(days=30, minutes=5)
    medium = await _remember(gateway, user, "Saw the cache hit rate drop to 80%.", kind="observation", importance=0.5)
    assert timedelta(days=89) < datetime.fromisoformat(medium["expires_at"].rstrip("Z")).replace(tzinfo=UTC) - now
    for fields in ({"pinned": True}, {"importance": 0.85}, {"tags": ["permanent"]}):
        kept = await _remember(gateway, user, f"Observation protected by {fields}.", kind="observation", **fields)
        assert kept["expires_at"] is None, fields
    assert (await _remember(gateway, user, "Postgres is the system of record."))["expires_at"] is None  # a fact
    later = (now + timedelta(days=3)).isoformat()
    explicit = await _remember(gateway, user, "The promo banner runs this week.", expires_at=later)
    assert explicit["expires_at"].startswith(later[:19])
    for fields in ({"pinned": True, "expires_at": later}, {"expires_at": (now - timedelta(hours=1)).isoformat()}):
        refused = await gateway.post("/v1/remember", json={"content": "Refused expiry.", **fields}, headers=user)
        assert refused.status_code == 422 and refused.json()["field"] == "expires_at", fields

    patched = await gateway.patch(
        "/v1/admin/tenant-config",
        json={"ttl_days": {"observation": {"low": 2}, "fact": {"medium": 10}}},
        headers=people["admin"],
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["config"]["ttl_days"] == {"observation": {"low": 2}, "fact": {"medium": 10}}
    short = await _remember(gateway, user, "Saw one flaky test run.", kind="observation")
    short_expiry = datetime.fromisoformat(short["expires_at"].rstrip("Z")).replace(tzinfo=UTC)
    assert short_expiry - now < timedelta(days=2, hours=1)
    fact = await _remember(gateway, user, "The build takes nine minutes.")
    assert fact["expires_at"] is not None
    for bad in ({"observation": {"high": 5}}, {"observation": {"low": 0}}, {"observation": []}):
        refused = await gateway.patch("/v1/admin/tenant-config", json={"ttl_days": bad}, headers=people["admin"])
        assert refused.status_code == 422 and refused.json()["field"] == "ttl_days", bad


async def test_expired_items_leave_recall_and_the_sweep_trashes_them(
    gateway: httpx.AsyncClient,
    people: dict[str, Headers],
    owner_pool: asyncpg.Pool,
    app_pool: asyncpg.Pool,
    settings: Settings,
) -> None:
    user = people["user"]
    soon = await _remember(gateway, user, "Maintenance window tonight at 22:00.", kind="observation")
    gone = await _remember(gateway, user, "Maintenance window last night was extended.", kind="observation")
    keep = await _remember(gateway, user, "Maintenance windows are announced in #ops.")
    async with owner_pool.acquire() as conn:  # time passes: one item's TTL ends, another's is near
        await conn.execute("UPDATE memory_items SET expires_at = now() - interval '1 minute' WHERE id = $1", gone["id"])
        await conn.execute("UPDATE memory_items SET expires_at = now() + interval '2 days' WHERE id = $1", soon["id"])
    hits = await _search(gateway, user, "maintenance window")
    assert gone["id"] not in hits and soon["id"] in hits and keep["id"] in hits
    candidates = (await gateway.get("/v1/items/expiry-candidates", params={"within_days": 3}, headers=user)).json()[
        "items"
    ]
    assert [c["id"] for c in candidates] == [gone["id"], soon["id"]]
    one_day = (await gateway.get("/v1/items/expiry-candidates", params={"within_days": 1}, headers=user)).json()
    assert [c["id"] for c in one_day["items"]] == [gone["id"]]
    assert (
        await gateway.get("/v1/items/expiry-candidates", params={"within_days": 0}, headers=user)
    ).status_code == 422

    report = await sweep(app_pool, settings)
    assert report.expired >= 1
    assert (await gateway.get(f"/v1/items/{gone['id']}", headers=user)).status_code == 404
    assert (await gateway.get(f"/v1/items/{soon['id']}", headers=user)).status_code == 200
    entry = next(
        e for e in (await gateway.get("/v1/trash", headers=user)).json()["items"] if e["item_id"] == gone["id"]
    )
    assert entry["reason"] == "expired" and entry["deleted_by"] is None
    event = await _outbox(owner_pool, "memory.expired", gone["id"])
    assert event is not None and event["data"]["trash_id"] == entry["id"]
    back = (await gateway.post(f"/v1/trash/{entry['id']}/restore", headers=user)).json()
    assert back["expires_at"] is None and back["review_status"] == "active"  # restoring says it is still wanted
    assert gone["id"] in await _search(gateway, user, "maintenance window")

    async with owner_pool.acquire() as conn:  # an entry past the retention is emptied; a recent one is kept
        await conn.execute("UPDATE trash SET deleted_at = now() - interval '31 days' WHERE item_id = $1", gone["id"])
    old_trash = (await gateway.delete(f"/v1/items/{gone['id']}", headers=user)).json()["trash_id"]
    recent_trash = (await gateway.delete(f"/v1/items/{keep['id']}", headers=user)).json()["trash_id"]
    async with owner_pool.acquire() as conn:
        await conn.execute("UPDATE trash SET deleted_at = now() - interval '31 days' WHERE id = $1", old_trash)
    report = await sweep(app_pool, settings)
    assert report.purged >= 1
    remaining = {e["id"] for e in (await gateway.get("/v1/trash", headers=user)).json()["items"]}
    assert old_trash not in remaining and recent_trash in remaining


async def test_writing_the_text_of_an_expired_item_again_is_a_new_memory(
    gateway: httpx.AsyncClient, people: dict[str, Headers], owner_pool: asyncpg.Pool
) -> None:
    user = people["user"]
    first = await _remember(gateway, user, "Daily standup moved to 9:30.", kind="observation")
    async with owner_pool.acquire() as conn:
        await conn.execute(
            "UPDATE memory_items SET expires_at = now() - interval '1 minute' WHERE id = $1", first["id"]
        )
    again = await gateway.post(
        "/v1/remember", json={"content": "Daily standup moved to 9:30.", "kind": "observation"}, headers=user
    )
    assert again.status_code == 201 and again.json()["status"] == "created" and again.json()["id"] != first["id"]
    assert await _outbox(owner_pool, "memory.expired", first["id"]) is not None
    assert (await gateway.get(f"/v1/items/{first['id']}", headers=user)).status_code == 404


async def test_an_item_restored_before_it_was_embedded_is_embedded_on_memory_restored(
    gateway: httpx.AsyncClient,
    people: dict[str, Headers],
    owner_pool: asyncpg.Pool,
    app_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> None:
    user = people["user"]
    item = await _remember(gateway, user, "The release train leaves every second Thursday.")
    trash_id = (await gateway.delete(f"/v1/items/{item['id']}", headers=user)).json()["trash_id"]
    assert (await gateway.post(f"/v1/trash/{trash_id}/restore", headers=user)).status_code == 200
    envelope = await _outbox(owner_pool, "memory.restored", item["id"])
    assert envelope is not None and envelope["data"]["embedded"] is False
    assert (
        await deliver(
            owner_pool,
            EmbedderService(app_pool, settings, embedder).handle,
            types=["memory.restored"],
            subjects=[item["id"]],
        )
        == {}
    )
    assert item["id"] in await _search(gateway, user, "when does the release train leave", "semantic")
    status = (await gateway.get(f"/v1/items/{item['id']}/status", headers=user)).json()
    assert {s["name"]: s["status"] for s in status["stages"]}["embedding"] == "done"


async def test_a_truncated_bulk_archive_makes_progress_when_run_again(
    gateway: httpx.AsyncClient, people: dict[str, Headers]
) -> None:
    user = people["user"]
    ids = [(await _remember(gateway, user, f"Old incident note {n}.", tags=["incident"]))["id"] for n in range(5)]
    archived: set[str] = set()
    for _ in range(3):
        page = await gateway.post(
            "/v1/items/bulk",
            json={"action": "archive", "filter": {"tags": ["incident"]}, "limit": 2, "dry_run": False},
            headers=user,
        )
        archived |= set(page.json()["affected"])
    assert archived == set(ids)  # each run takes the next ones: already archived items are not matched again
