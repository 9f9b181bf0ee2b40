"""Recall ``as_of``: what was valid (valid_from/valid_to) and known (recorded, not yet invalidated or
replaced) at a given time, through REST."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta

import asyncpg
import httpx
import pytest_asyncio

from engram.db import identity
from tests.support.tenants import create_tenant

Headers = dict[str, str]


@pytest_asyncio.fixture
async def user(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> Headers:
    base = await create_tenant(owner_pool)
    issued = await identity.create_key(app_pool, base.tenant_id, base.principal_id, ["read", "write"], "user")
    return {"authorization": f"Bearer {issued.key}"}


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


async def _ids(
    gateway: httpx.AsyncClient,
    user: Headers,
    query: str,
    as_of: datetime | None = None,
) -> list[str]:
    body: dict[str, object] = {"query": query, "mode": "keyword"}
    if as_of is not None:
        body["as_of"] = as_of.isoformat()
    answer = await gateway.post("/v1/recall", json=body, headers=user)
    assert answer.status_code == 200, answer.text
    return [hit["item"]["id"] for hit in answer.json()["items"]]


async def test_validity_windows(gateway: httpx.AsyncClient, user: Headers) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    now = datetime.now().astimezone()
    switch = now + timedelta(seconds=30)
    oslo = (
        await gateway.post(
            "/v1/remember",
            json={"content": f"{marker} Carol lives in Oslo.", "valid_to": switch.isoformat()},
            headers=user,
        )
    ).json()
    lima = (
        await gateway.post(
            "/v1/remember",
            json={"content": f"{marker} Carol lives in Lima.", "valid_from": switch.isoformat()},
            headers=user,
        )
    ).json()
    recorded = max(_at(oslo["item"]["created_at"]), _at(lima["item"]["created_at"]))
    assert await _ids(gateway, user, marker, recorded + timedelta(seconds=1)) == [oslo["id"]]
    assert await _ids(gateway, user, marker, switch + timedelta(seconds=1)) == [lima["id"]]
    assert await _ids(gateway, user, marker, recorded - timedelta(days=1)) == []  # not known yet
    assert set(await _ids(gateway, user, marker)) == {oslo["id"], lima["id"]}  # no as_of: every live claim


async def test_supersession_and_invalidation_as_they_were(gateway: httpx.AsyncClient, user: Headers) -> None:
    marker = f"zq{uuid.uuid4().hex[:8]}"
    old = (
        await gateway.post("/v1/remember", json={"content": f"{marker} The deploy window is Tuesday."}, headers=user)
    ).json()
    await asyncio.sleep(0.05)
    new = (
        await gateway.post(
            f"/v1/items/{old['id']}/supersede",
            json={"content": f"{marker} The deploy window is Thursday."},
            headers=user,
        )
    ).json()
    between = _at(old["item"]["created_at"]) + (_at(new["item"]["created_at"]) - _at(old["item"]["created_at"])) / 2
    answer = await gateway.post(
        "/v1/recall", json={"query": f"{marker} Tuesday", "mode": "keyword", "as_of": between.isoformat()}, headers=user
    )
    [hit] = answer.json()["items"]
    assert hit["item"]["id"] == old["id"] and "matched_via" not in hit  # it was the live one then
    assert any(r.startswith("as of then: superseded later") for r in hit["reasons"])
    redirected = await gateway.post("/v1/recall", json={"query": f"{marker} Tuesday", "mode": "keyword"}, headers=user)
    assert [h["item"]["id"] for h in redirected.json()["items"]] == [new["id"]]

    await asyncio.sleep(0.05)
    before_invalidation = datetime.now().astimezone()
    await asyncio.sleep(0.05)
    gone = await gateway.post(f"/v1/items/{new['id']}/invalidate", json={"reason": "no more windows"}, headers=user)
    assert gone.status_code == 200
    assert await _ids(gateway, user, f"{marker} Thursday") == []
    assert await _ids(gateway, user, f"{marker} Thursday", before_invalidation) == [new["id"]]


async def test_the_date_a_claim_holds_from_and_its_subject_are_searchable(
    gateway: httpx.AsyncClient, user: Headers
) -> None:
    tag = uuid.uuid4().hex[:8]
    dated = await gateway.post(
        "/v1/remember",
        json={
            "content": f"Caroline went to the {tag} support group.",
            "valid_from": "2023-05-07T10:00:00Z",
            "subject": "caroline.events",
        },
        headers=user,
    )
    undated = await gateway.post(
        "/v1/remember", json={"content": f"Melanie went to the {tag} pottery class."}, headers=user
    )
    assert dated.status_code == undated.status_code == 201
    for query in (f"{tag} May 2023", f"{tag} Sunday", f"{tag} caroline events"):
        hits = (await gateway.post("/v1/search", json={"query": query, "mode": "keyword"}, headers=user)).json()
        assert hits["items"][0]["item"]["id"] == dated.json()["id"], query
    assert dated.json()["item"]["content"] == f"Caroline went to the {tag} support group."  # content untouched
