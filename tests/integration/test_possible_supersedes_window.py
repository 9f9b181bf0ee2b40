"""possible_supersedes compares a new memory only with the most recent live memories of its tenant and kind
(``ENGRAM_POSSIBLE_SUPERSEDES_WINDOW``), through REST against the real servers and database. The window is
set small here so that a near-copy can be pushed out of it."""

from __future__ import annotations

import uuid

import asyncpg
import httpx
import pytest
import pytest_asyncio

from engram.config import Settings
from engram.db import identity
from tests.support.tenants import create_tenant

Headers = dict[str, str]
WINDOW = 4
FILLERS = (
    "Lunch is served at noon in the cafeteria.",
    "The quarterly review moved to the second Thursday.",
    "Invoices go to accounts payable by the fifth.",
    "The office plants are watered on Mondays.",
    "Badge readers at the north door were replaced.",
    "The team offsite is planned for Lisbon in May.",
    "Printer toner is kept in the supply closet.",
)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"possible_supersedes_window": WINDOW})


async def _writer(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> Headers:
    base = await create_tenant(owner_pool)
    principal = await identity.create_principal(app_pool, base.tenant_id, "user", "user")
    issued = await identity.create_key(app_pool, base.tenant_id, principal, ["read", "write"], "user")
    return {"authorization": f"Bearer {issued.key}"}


@pytest_asyncio.fixture
async def user(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> Headers:
    return await _writer(app_pool, owner_pool)


async def _remember(gateway: httpx.AsyncClient, who: Headers, content: str, kind: str = "fact") -> dict:  # type: ignore[type-arg]
    response = await gateway.post("/v1/remember", json={"content": content, "kind": kind}, headers=who)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def _reported(answer: dict) -> set[str]:  # type: ignore[type-arg]
    return {p["id"] for p in answer["possible_supersedes"]}


async def test_a_near_copy_within_the_window_is_reported(gateway: httpx.AsyncClient, user: Headers) -> None:
    marker = f"zw{uuid.uuid4().hex[:8]}"
    original = await _remember(gateway, user, f"{marker} The staging database runs on port 6543.")
    for filler in FILLERS[: WINDOW - 2]:  # the original stays among the WINDOW most recent
        await _remember(gateway, user, f"{marker} {filler}")
    new = await _remember(gateway, user, f"{marker} The staging database now runs on port 6544.")
    assert _reported(new) == {original["id"]}


async def test_the_window_holds_window_memories_besides_the_new_one(gateway: httpx.AsyncClient, user: Headers) -> None:
    """The window is read before the new memory is inserted (with its write context): the WINDOW most recent
    live memories of the kind other than the new one, so a near-copy WINDOW memories back is still compared,
    and one WINDOW + 1 back is not."""
    marker = f"zb{uuid.uuid4().hex[:8]}"
    edge = await _remember(gateway, user, f"{marker} The staging database runs on port 6543.")
    for filler in FILLERS[: WINDOW - 1]:  # the near-copy is the WINDOW-th most recent before the new one
        await _remember(gateway, user, f"{marker} {filler}")
    new = await _remember(gateway, user, f"{marker} The staging database now runs on port 6544.")
    assert _reported(new) == {edge["id"]}
    marker = f"zb{uuid.uuid4().hex[:8]}"
    await _remember(gateway, user, f"{marker} The staging database runs on port 6543.")
    for filler in FILLERS[:WINDOW]:  # now WINDOW newer memories push it out
        await _remember(gateway, user, f"{marker} {filler}")
    new = await _remember(gateway, user, f"{marker} The staging database now runs on port 6544.")
    assert _reported(new) == set()


async def test_a_near_copy_older_than_the_window_is_not_reported_inline(
    gateway: httpx.AsyncClient, user: Headers, owner_pool: asyncpg.Pool
) -> None:
    marker = f"zw{uuid.uuid4().hex[:8]}"
    old = await _remember(gateway, user, f"{marker} The staging database runs on port 6543.")
    for filler in FILLERS[: WINDOW + 2]:  # more newer memories of the same kind than the window holds
        await _remember(gateway, user, f"{marker} {filler}")
    recent = await _remember(gateway, user, f"{marker} The staging database runs on port 6543 for the team.")
    new = await _remember(gateway, user, f"{marker} The staging database now runs on port 6544.")
    assert _reported(new) == {recent["id"]}  # the search ran: the recent near-copy is there, the old one is not
    async with owner_pool.acquire() as conn:  # the old one is live and as similar as the recent one
        similarity = await conn.fetchval(
            "SELECT similarity(content, $2) FROM memory_items WHERE id = $1 AND superseded_by IS NULL "
            "AND invalidated_at IS NULL",
            uuid.UUID(old["id"]),
            f"{marker} The staging database now runs on port 6544.",
        )
    assert similarity is not None and similarity >= 0.35


async def test_another_kinds_or_tenants_near_copy_is_never_reported(
    gateway: httpx.AsyncClient, user: Headers, app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    marker = f"zw{uuid.uuid4().hex[:8]}"
    stranger = await _writer(app_pool, owner_pool)
    elsewhere = await _remember(gateway, stranger, f"{marker} The staging database runs on port 6543.")
    other_kind = await _remember(gateway, user, f"{marker} The staging database runs on port 6543.", kind="decision")
    new = await _remember(gateway, user, f"{marker} The staging database now runs on port 6544.")
    assert elsewhere["id"] not in _reported(new) and other_kind["id"] not in _reported(new)
    assert _reported(new) == set()
    same_kind = await _remember(gateway, user, f"{marker} The staging database runs on port 6543 today.")
    assert _reported(same_kind) == {new["id"]}  # within the same tenant and kind, it is found


async def test_long_memories_are_compared_by_their_opening(gateway: httpx.AsyncClient, user: Headers) -> None:
    """similarity() costs time in proportion to length, so each side is read to SIMILARITY_PREFIX characters:
    two long memories that open alike are reported though their long tails differ, and one that opens
    differently is not, though its tail is the same."""
    marker = f"zl{uuid.uuid4().hex[:8]}"
    opening = f"{marker} Runbook for the payments cluster failover, revision notes and owners. " * 14  # > 1,000
    tail_a = " ".join(f"alpha{n} step" for n in range(900))
    tail_b = " ".join(f"omega{n} check" for n in range(900))
    original = await _remember(gateway, user, opening + tail_a)
    other_opening = await _remember(gateway, user, f"{marker} Holiday rota for the front desk. " * 30 + tail_b)
    answer = await _remember(gateway, user, opening + tail_b)
    assert original["id"] in _reported(answer)
    assert other_opening["id"] not in _reported(answer)
