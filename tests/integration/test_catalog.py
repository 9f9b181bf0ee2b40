"""GET /v1/items (filters, orders, cursor pages, visibility), GET /v1/stats, and the validity time range of
recall and search, through REST on real servers and PostgreSQL. Times and states that the API does not let a
caller set (creation time, a dispute, a pipeline stage's state) are set as the database owner."""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest_asyncio

from engram.db import identity

Headers = dict[str, str]
BASE = datetime(2020, 1, 1, tzinfo=UTC)


@dataclass
class Tenant:
    id: str
    keys: dict[str, Headers]  # principal name → Authorization header
    principals: dict[str, str]  # principal name → id


async def _tenant(app_pool: asyncpg.Pool, *names: str) -> Tenant:
    tenant_id = await identity.create_tenant(app_pool, f"catalog-{uuid.uuid4().hex[:8]}")
    keys, principals = {}, {}
    for name in names:
        principal = await identity.create_principal(app_pool, tenant_id, name, "user")
        issued = await identity.create_key(app_pool, tenant_id, principal, ["read", "write", "review", "publish"], name)
        keys[name], principals[name] = {"authorization": f"Bearer {issued.key}"}, principal
    return Tenant(tenant_id, keys, principals)


@pytest_asyncio.fixture
async def abroad(app_pool: asyncpg.Pool) -> AsyncIterator[Tenant]:
    """Another tenant that publishes its public items to every tenant, until the test ends (the database is
    shared by the whole session, so other tests must not find them)."""
    tenant = await _tenant(app_pool, "carol")
    await identity.set_tenant_public(app_pool, tenant.id, True)
    yield tenant
    await identity.set_tenant_public(app_pool, tenant.id, False)


async def _remember(gateway: httpx.AsyncClient, who: Headers, content: str, **fields: Any) -> str:
    response = await gateway.post("/v1/remember", json={"content": content, **fields}, headers=who)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def _set(owner_pool: asyncpg.Pool, item_id: str, **columns: Any) -> None:
    """Set columns of an item as the owner (times and states no route sets directly)."""
    assignments = ", ".join(f"{name} = ${n}" for n, name in enumerate(columns, start=2))
    async with owner_pool.acquire() as conn:
        await conn.execute(f"UPDATE memory_items SET {assignments} WHERE id = $1", item_id, *columns.values())


async def _list(gateway: httpx.AsyncClient, who: Headers, **params: Any) -> list[str]:
    response = await gateway.get("/v1/items", params={"limit": 500, **params}, headers=who)
    assert response.status_code == 200, response.text
    assert response.json()["next_cursor"] is None
    return [item["id"] for item in response.json()["items"]]


async def _refused(gateway: httpx.AsyncClient, who: Headers, **params: Any) -> str:
    """The field a refused listing names."""
    response = await gateway.get("/v1/items", params=params, headers=who)
    assert response.status_code == 422, response.text
    return str(response.json()["field"])


# --- filters ------------------------------------------------------------------------------------------------


@pytest_asyncio.fixture
async def shelf(gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> dict[str, Any]:
    """One tenant; alice wrote most items, bob one tenant-wide; each item differs from the others in the
    attributes the filters look at. Creation times are one hour apart, in the order written."""
    world = await _tenant(app_pool, "alice", "bob")
    side = await identity.create_workspace(app_pool, world.id, "side")
    await identity.add_member(app_pool, world.id, side, world.principals["alice"], "member")
    alice, bob = world.keys["alice"], world.keys["bob"]
    specs: list[tuple[str, Headers, dict[str, Any]]] = [
        ("f1", alice, {"kind": "fact", "tags": ["alpha"], "subject": "deploy.day"}),
        ("d1", alice, {"kind": "decision", "tags": ["beta"], "subject": "db.choice"}),
        ("f2", alice, {"kind": "fact", "tags": ["alpha", "beta"], "workspace_id": side}),
        ("b1", bob, {"kind": "fact", "visibility": "tenant"}),
        ("p1", alice, {"kind": "doctrine"}),  # requires review: proposed
        ("x1", alice, {"kind": "fact"}),  # disputed below
        ("r1", alice, {"kind": "procedure"}),  # archived below
        ("v_old", alice, {"valid_from": "2020-01-01T00:00:00Z", "valid_to": "2021-01-01T00:00:00Z"}),
        ("v_since", alice, {"valid_from": "2022-01-01T00:00:00Z"}),
        ("v_until", alice, {"valid_to": "2021-06-01T00:00:00Z"}),
    ]
    ids: dict[str, str] = {}
    for n, (name, who, fields) in enumerate(specs):
        ids[name] = await _remember(gateway, who, f"Shelf item {name}: note number {n}.", **fields)
        await _set(owner_pool, ids[name], created_at=BASE + timedelta(hours=n))
    await _set(owner_pool, ids["x1"], review_status="disputed")
    await _set(owner_pool, ids["r1"], review_status="archived")
    return {"world": world, "side": side, "ids": ids, "order": [name for name, _, _ in specs]}


async def test_each_filter_keeps_exactly_the_matching_items(gateway: httpx.AsyncClient, shelf: dict[str, Any]) -> None:
    ids, alice, bob_id = shelf["ids"], shelf["world"].keys["alice"], shelf["world"].principals["bob"]
    no_validity = {"f1", "d1", "f2", "b1", "p1", "x1", "r1"}

    async def names(**params: Any) -> set[str]:
        by_id = {v: k for k, v in ids.items()}
        return {by_id[i] for i in await _list(gateway, alice, **params)}

    assert await names() == set(ids)  # positive control: alice reads every item of the shelf
    assert await names(kind="fact") == {"f1", "f2", "b1", "x1", "v_old", "v_since", "v_until"}
    assert await names(kind="decision,doctrine") == {"d1", "p1"}
    assert await names(kind=" decision , procedure ") == {"d1", "r1"}
    assert await names(review_status="proposed,disputed") == {"p1", "x1"}  # the review queue
    assert await names(review_status="archived") == {"r1"}
    assert await names(workspace_id=shelf["side"]) == {"f2"}
    assert await names(author=bob_id) == {"b1"}
    assert await names(tag="alpha") == {"f1", "f2"}
    assert await names(tag="beta", kind="fact") == {"f2"}
    assert await names(subject="deploy.day") == {"f1"}
    assert await names(subject="deploy") == set()  # exact, not a prefix
    # created_after is inclusive, created_before exclusive: items 2, 3 and 4 (one hour apart from BASE)
    after, before = (BASE + timedelta(hours=2)).isoformat(), (BASE + timedelta(hours=5)).isoformat()
    assert await names(created_after=after, created_before=before) == {"f2", "b1", "p1"}
    assert await names(created_before=(BASE + timedelta(hours=1)).isoformat()) == {"f1"}
    # validity [valid_from, valid_to) overlapping the range; an item without validity matches any range
    assert await names(valid_start="2020-06-01T00:00:00Z", valid_end="2020-12-31T00:00:00Z") == no_validity | {
        "v_old",
        "v_until",
    }
    assert await names(valid_start="2021-03-01T00:00:00Z", valid_end="2021-04-01T00:00:00Z") == no_validity | {
        "v_until"
    }
    assert await names(valid_start="2021-06-01T00:00:00Z") == no_validity | {"v_since"}  # valid_to is exclusive
    assert await names(valid_end="2019-12-31T23:00:00Z") == no_validity | {"v_until"}  # open start


async def test_bad_filters_are_refused_naming_the_parameter(gateway: httpx.AsyncClient, shelf: dict[str, Any]) -> None:
    alice = shelf["world"].keys["alice"]
    assert await _refused(gateway, alice, kind="fact,nonsense") == "kind"
    assert await _refused(gateway, alice, review_status="proposed,pending") == "review_status"
    assert await _refused(gateway, alice, workspace_id="side") == "workspace_id"
    assert await _refused(gateway, alice, author="bob") == "author"
    assert await _refused(gateway, alice, created_after="2020-01-01T02:00:00") == "created_after"  # no offset
    assert await _refused(gateway, alice, valid_start="2021-01-01T00:00:00Z", valid_end="2020-01-01T00:00:00Z") == (
        "valid_end"
    )
    assert await _refused(gateway, alice, sort="importance") == "sort"
    assert await _refused(gateway, alice, limit=501) == "limit"
    assert await _refused(gateway, alice, limit=0) == "limit"


# --- orders and cursors -------------------------------------------------------------------------------------


async def _pages(gateway: httpx.AsyncClient, who: Headers, limit: int, **params: Any) -> tuple[list[str], int]:
    """Every page of a listing, followed by cursor: the ids in the order served, and how many pages."""
    served: list[str] = []
    cursor = None
    for pages in range(1, 50):  # a cursor that never runs out fails instead of looping
        query = {"limit": limit, **params, **({"cursor": cursor} if cursor else {})}
        response = await gateway.get("/v1/items", params=query, headers=who)
        assert response.status_code == 200, response.text
        page = response.json()
        assert len(page["items"]) <= limit
        served += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return served, pages
    raise AssertionError("the cursor never ran out")


async def test_every_order_pages_through_each_item_exactly_once(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    world = await _tenant(app_pool, "alice")
    alice = world.keys["alice"]
    rows = []
    # ties on purpose: two items share a creation time, three an importance, so the id decides
    for n in range(8):
        item_id = await _remember(gateway, alice, f"Paged memory {n} about the harbour.")
        created, importance = BASE + timedelta(minutes=0 if n < 2 else n), [0.25, 0.5, 0.75][n % 3]
        await _set(owner_pool, item_id, created_at=created, importance=importance)
        rows.append((item_id, created, importance))
    newest = [r[0] for r in sorted(rows, key=lambda r: (r[1], uuid.UUID(r[0])), reverse=True)]
    important = [r[0] for r in sorted(rows, key=lambda r: (r[2], r[1], uuid.UUID(r[0])), reverse=True)]
    for sort, expected in (("-created_at", newest), ("created_at", newest[::-1]), ("-importance", important)):
        served, pages = await _pages(gateway, alice, 3, sort=sort)
        assert served == expected, sort
        assert pages == 3, sort
    assert (await _pages(gateway, alice, 3))[0] == newest  # -created_at is the default


async def test_pages_stay_exact_while_items_are_added(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    world = await _tenant(app_pool, "alice")
    alice = world.keys["alice"]
    first = []
    for n in range(6):
        first.append(await _remember(gateway, alice, f"Before the inserts, memory {n}."))
        await _set(owner_pool, first[-1], created_at=BASE + timedelta(minutes=n))
    for sort, before in (("-created_at", first[::-1]), ("created_at", first)):
        page = (await gateway.get("/v1/items", params={"limit": 2, "sort": sort}, headers=alice)).json()
        assert [i["id"] for i in page["items"]] == before[:2]
        added = [await _remember(gateway, alice, f"Added between pages ({sort}), memory {n}.") for n in range(2)]
        rest, _ = await _pages(gateway, alice, 2, sort=sort, cursor=page["next_cursor"])
        if sort == "-created_at":  # newer than the cursor: the remaining pages go on where the first stopped
            assert rest == before[2:]
        else:  # oldest first: the new items come after every older one, once each
            assert rest[: len(before) - 2] == before[2:]
            assert rest[len(before) - 2 :] == added
        first += added if sort == "-created_at" else []


async def test_a_cursor_the_api_did_not_issue_for_that_order_is_refused(
    gateway: httpx.AsyncClient, shelf: dict[str, Any]
) -> None:
    alice = shelf["world"].keys["alice"]
    page = (await gateway.get("/v1/items", params={"limit": 2}, headers=alice)).json()
    assert page["next_cursor"] and len(page["items"]) == 2  # positive control: the cursor resumes its own order
    resumed = await gateway.get("/v1/items", params={"limit": 2, "cursor": page["next_cursor"]}, headers=alice)
    assert resumed.status_code == 200 and resumed.json()["items"]
    trash_cursor = base64.urlsafe_b64encode(f"{BASE.isoformat()}|{uuid.uuid4()}".encode()).decode()
    for cursor, sort in (
        ("garbage", "-created_at"),
        (trash_cursor, "-created_at"),  # another listing's cursor
        (page["next_cursor"], "created_at"),  # another order's
        (page["next_cursor"][:-4], "-created_at"),  # cut short
    ):
        assert await _refused(gateway, alice, cursor=cursor, sort=sort) == "cursor", cursor


# --- visibility and states ----------------------------------------------------------------------------------


async def test_the_list_holds_only_what_the_caller_may_read_in_its_tenant(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, abroad: Tenant
) -> None:
    home = await _tenant(app_pool, "alice", "bob")
    admin = await identity.create_key(app_pool, home.id, home.principals["alice"], ["admin"], "home-admin")
    opted = await gateway.patch(  # so the foreign public item is readable here at all
        "/v1/admin/tenant-config",
        json={"recall": {"accept_public": True}},
        headers={"authorization": f"Bearer {admin.key}"},
    )
    assert opted.status_code == 200, opted.text
    secret = await identity.create_workspace(app_pool, home.id, "secret")
    await identity.add_member(app_pool, home.id, secret, home.principals["alice"], "owner")
    alice, bob = home.keys["alice"], home.keys["bob"]
    ids = {
        "alice_private": await _remember(gateway, alice, "Alice's private note.", visibility="private"),
        "alice_secret_ws": await _remember(gateway, alice, "Alice's secret workspace note.", workspace_id=secret),
        "alice_tenant": await _remember(gateway, alice, "Alice's tenant-wide note.", visibility="tenant"),
        "alice_public": await _remember(gateway, alice, "Alice's public note.", visibility="public"),
        "bob_private": await _remember(gateway, bob, "Bob's private note.", visibility="private"),
    }
    carol = abroad.keys["carol"]
    public_id = await _remember(gateway, carol, "Published catalog note from abroad.", visibility="public")
    foreign = {public_id, await _remember(gateway, carol, "Tenant catalog note from abroad.", visibility="tenant")}
    # positive control: the foreign public item is readable one by one, yet never listed
    assert (await gateway.get(f"/v1/items/{public_id}", headers=bob)).status_code == 200

    seen = {who: set(await _list(gateway, home.keys[who])) for who in ("alice", "bob")}
    assert seen["alice"] == {ids[n] for n in ("alice_private", "alice_secret_ws", "alice_tenant", "alice_public")}
    assert seen["bob"] == {ids[n] for n in ("alice_tenant", "alice_public", "bob_private")}
    assert set(await _list(gateway, carol)) == foreign  # positive control: carol lists her own tenant
    for who in ("alice", "bob"):
        assert not seen[who] & foreign
        assert not set(await _list(gateway, home.keys[who], include_superseded="true")) & foreign


async def test_superseded_and_invalidated_only_on_request_and_the_trash_never(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool
) -> None:
    world = await _tenant(app_pool, "alice")
    alice = world.keys["alice"]
    old = await _remember(gateway, alice, "The harbour opens at six.")
    replaced = await gateway.post(
        f"/v1/items/{old}/supersede", json={"content": "The harbour opens at seven."}, headers=alice
    )
    assert replaced.status_code == 201, replaced.text
    new = replaced.json()["id"]
    withdrawn = await _remember(gateway, alice, "The ferry is free on Sundays.")
    invalidated = await gateway.post(f"/v1/items/{withdrawn}/invalidate", json={"reason": "wrong"}, headers=alice)
    assert invalidated.status_code == 200
    trashed = await _remember(gateway, alice, "The lighthouse is closed.")
    assert (await gateway.delete(f"/v1/items/{trashed}", headers=alice)).status_code == 200
    kept = await _remember(gateway, alice, "The pier is under repair.")

    assert set(await _list(gateway, alice)) == {new, kept}
    assert set(await _list(gateway, alice, include_superseded="true")) == {old, new, withdrawn, kept}
    assert await _list(gateway, alice, include_superseded="true", review_status="superseded") == [old]


# --- stats ----------------------------------------------------------------------------------------------------


async def test_stats_count_exactly_what_the_caller_may_read(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, abroad: Tenant
) -> None:
    world = await _tenant(app_pool, "alice", "bob")
    alice, bob = world.keys["alice"], world.keys["bob"]
    soon = (datetime.now(UTC) + timedelta(days=3)).isoformat()
    a = {
        "one": await _remember(gateway, alice, "Stats: the office has two floors.", kind="fact"),
        "expiring": await _remember(gateway, alice, "Stats: the parking pass ends.", kind="fact", expires_at=soon),
        "decided": await _remember(gateway, alice, "Stats: we chose Postgres.", kind="decision"),
        "proposal": await _remember(gateway, alice, "Stats: always review schemas.", kind="doctrine"),
        "disputed": await _remember(gateway, alice, "Stats: the canteen opens at noon.", kind="fact"),
        "private": await _remember(gateway, alice, "Stats: alice's own note.", kind="fact", visibility="private"),
        "old": await _remember(gateway, alice, "Stats: the wifi password rotates monthly.", kind="fact"),
        "withdrawn": await _remember(gateway, alice, "Stats: lunch is free on Fridays.", kind="fact"),
        "trashed": await _remember(gateway, alice, "Stats: the printer is on floor one.", kind="fact"),
    }
    replaced = await gateway.post(
        f"/v1/items/{a['old']}/supersede", json={"content": "Stats: the wifi password rotates weekly."}, headers=alice
    )
    a["new"] = replaced.json()["id"]
    assert (
        await gateway.post(f"/v1/items/{a['withdrawn']}/invalidate", json={"reason": "no"}, headers=alice)
    ).is_success
    assert (await gateway.delete(f"/v1/items/{a['trashed']}", headers=alice)).is_success
    bob_private = await _remember(gateway, bob, "Stats: bob's own decision.", kind="decision", visibility="private")
    await _set(owner_pool, a["disputed"], review_status="disputed")
    # another tenant's public items never count
    await _remember(gateway, abroad.keys["carol"], "Stats: a published fact from abroad.", visibility="public")
    async with owner_pool.acquire() as conn:
        await conn.execute("UPDATE item_stages SET status = 'done' WHERE tenant_id = $1", world.id)
        for item_id, stage, status in (
            (a["one"], "embedding", "pending"),
            (a["decided"], "classification", "failed"),
            (bob_private, "classification", "failed"),
        ):
            await conn.execute(
                "UPDATE item_stages SET status = $3 WHERE item_id = $1 AND stage = $2", item_id, stage, status
            )
        for left, right, status in (
            (a["one"], a["decided"], "open"),
            (a["one"], bob_private, "open"),  # bob's private memory: only bob counts it
            (a["one"], a["disputed"], "resolved"),
        ):
            await conn.execute(
                "INSERT INTO conflicts (tenant_id, id, item_a, item_b, type, detector, status) "
                "VALUES ($1, gen_random_uuid(), $2, $3, 'contradiction', 'rules:test', $4)",
                world.id,
                left,
                right,
                status,
            )
        proposed_at = await conn.fetchval("SELECT created_at FROM memory_items WHERE id = $1", a["proposal"])

    def expected(facts: int, decisions: int, conflicts: int, failed: int) -> dict[str, Any]:
        return {
            "items": {
                "total": 7,
                "by_review_status": {"active": 5, "disputed": 1, "proposed": 1},
                "by_kind": {"decision": decisions, "doctrine": 1, "fact": facts},
            },
            "review_queue": {
                "proposed": 1,
                "disputed": 1,
                "oldest_proposed_at": proposed_at.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z",
            },
            "hygiene": {
                "open_conflicts": conflicts,
                "pending_stages": {"embedding": 1, "classification": 0, "conflict_check": 0, "promotion": 0},
                "failed_stages": {"embedding": 0, "classification": failed, "conflict_check": 0, "promotion": 0},
                "expiring_within_7d": 1,
                "trash": 1,
                "superseded": 1,
                "invalidated": 1,
            },
        }

    alice_stats = await gateway.get("/v1/stats", headers=alice)
    assert alice_stats.status_code == 200, alice_stats.text
    # alice: one, expiring, disputed, private, new are facts; bob's private decision is not hers to see
    assert alice_stats.json() == expected(facts=5, decisions=1, conflicts=1, failed=1)
    # bob: not alice's private fact, but his own decision, its conflict and its failed stage
    assert (await gateway.get("/v1/stats", headers=bob)).json() == expected(facts=4, decisions=2, conflicts=2, failed=2)


async def test_stats_of_an_empty_tenant_are_zero(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool, abroad: Tenant
) -> None:
    published = await _remember(gateway, abroad.keys["carol"], "A published note, abroad.", visibility="public")
    world = await _tenant(app_pool, "alice")
    admin = await identity.create_key(app_pool, world.id, world.principals["alice"], ["admin"], "world-admin")
    opted = await gateway.patch(
        "/v1/admin/tenant-config",
        json={"recall": {"accept_public": True}},
        headers={"authorization": f"Bearer {admin.key}"},
    )
    assert opted.status_code == 200, opted.text
    # positive control: the published note is readable from here, yet counts for nothing
    assert (await gateway.get(f"/v1/items/{published}", headers=world.keys["alice"])).status_code == 200
    body = (await gateway.get("/v1/stats", headers=world.keys["alice"])).json()
    assert body["items"] == {"total": 0, "by_review_status": {}, "by_kind": {}}
    assert body["review_queue"] == {"proposed": 0, "disputed": 0, "oldest_proposed_at": None}
    assert set(body["hygiene"]["pending_stages"].values()) == {0}


# --- the validity time range of recall and search --------------------------------------------------------------


async def test_recall_and_search_keep_items_valid_in_the_time_range(
    gateway: httpx.AsyncClient, app_pool: asyncpg.Pool
) -> None:
    world = await _tenant(app_pool, "alice")
    alice = world.keys["alice"]
    ids = {
        "q1": await _remember(
            gateway,
            alice,
            "Orchid launch window in the first quarter.",
            valid_from="2020-01-01T00:00:00Z",
            valid_to="2020-04-01T00:00:00Z",
        ),
        "q3": await _remember(
            gateway,
            alice,
            "Orchid launch window in the third quarter.",
            valid_from="2020-07-01T00:00:00Z",
            valid_to="2020-10-01T00:00:00Z",
        ),
        "since_may": await _remember(
            gateway, alice, "Orchid launch owner since May.", valid_from="2020-05-01T00:00:00Z"
        ),
        "always": await _remember(gateway, alice, "Orchid launch code name."),
    }
    by_id = {v: k for k, v in ids.items()}

    async def found(**window: str) -> dict[str, set[str]]:
        search = await gateway.post(
            "/v1/search", json={"query": "Orchid", "mode": "keyword", "limit": 50, **window}, headers=alice
        )
        recall = await gateway.post(
            "/v1/recall", json={"query": "Orchid", "mode": "keyword", "item_budget": 50, **window}, headers=alice
        )
        assert search.status_code == 200 and recall.status_code == 200, (search.text, recall.text)
        return {
            "search": {by_id[h["item"]["id"]] for h in search.json()["items"]},
            "recall": {by_id[h["item"]["id"]] for h in recall.json()["items"]},
        }

    def both(*names: str) -> dict[str, set[str]]:
        return {"search": set(names), "recall": set(names)}

    assert await found() == both("q1", "q3", "since_may", "always")  # positive control: no range, every item
    assert await found(time_start="2020-02-01T00:00:00Z", time_end="2020-02-15T00:00:00Z") == both("q1", "always")
    assert await found(time_start="2020-04-15T00:00:00Z", time_end="2020-04-30T00:00:00Z") == both("always")
    assert await found(time_start="2020-04-01T00:00:00Z", time_end="2020-04-02T00:00:00Z") == both("always")  # q1 ends
    assert await found(time_start="2020-08-01T00:00:00Z") == both("q3", "since_may", "always")  # open end
    assert await found(time_end="2020-03-01T00:00:00Z") == both("q1", "always")  # open start
    # beside as_of: valid now (since_may, always; q3 ended) and overlapping June on (q3, since_may, always)
    assert await found(time_start="2020-06-01T00:00:00Z", as_of=datetime.now(UTC).isoformat()) == both(
        "since_may", "always"
    )

    for path, body in (("/v1/search", {"query": "Orchid"}), ("/v1/recall", {"query": "Orchid", "mode": "keyword"})):
        backwards = await gateway.post(
            path, json={**body, "time_start": "2020-05-01T00:00:00Z", "time_end": "2020-04-01T00:00:00Z"}, headers=alice
        )
        assert backwards.status_code == 422 and backwards.json()["field"] == "time_end", backwards.text
        naive = await gateway.post(path, json={**body, "time_start": "2020-05-01T00:00:00"}, headers=alice)
        assert naive.status_code == 422 and naive.json()["field"] == "time_start", naive.text
