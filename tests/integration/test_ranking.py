"""Recall ranking settings a tenant can tune: the dense share of hybrid fusion and the subject boost."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import asyncpg
import httpx
import pytest_asyncio

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider
from services.embedder.service import EmbedderService
from tests.support.gateway import Headers, recall, remember
from tests.support.outbox import deliver

Embedded = Callable[[Sequence[str]], Awaitable[list[str]]]


@pytest_asyncio.fixture
async def embedded(
    gateway: httpx.AsyncClient,
    who: Headers,
    tenant: CallerContext,
    owner_pool: asyncpg.Pool,
    app_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
) -> Embedded:
    """``await embedded(texts)``: the ids of memories of these texts, remembered by ``who`` and embedded."""
    embed = EmbedderService(app_pool, settings, embedder)

    async def write(texts: Sequence[str]) -> list[str]:
        ids = [await remember(gateway, who, text) for text in texts]
        await deliver(owner_pool, embed.handle, tenant=tenant, types=["memory.created"])
        return ids

    return write


async def _tune(gateway: httpx.AsyncClient, who: Headers, **recall_config: Any) -> httpx.Response:
    return await gateway.patch("/v1/admin/tenant-config", json={"recall": recall_config}, headers=who)


async def test_a_query_naming_the_subject_lifts_that_memory_unless_the_tenant_turns_it_off(
    gateway: httpx.AsyncClient, who: Headers
) -> None:
    tag = uuid.uuid4().hex[:6]
    plain = await remember(gateway, who, f"The {tag} lunch order is vegetarian.")
    named = await remember(gateway, who, f"The {tag} lunch order is vegetarian too.", subject="dana")
    query = f"{tag} lunch order for Dana"
    hits = await recall(gateway, who, query)
    assert [h["item"]["id"] for h in hits] == [named, plain]
    assert "the query names its subject 'dana' (×2.00)" in hits[0]["reasons"]
    boosted = hits[0]["score"]

    off = await _tune(gateway, who, subject_boost=0)
    assert off.status_code == 200 and off.json()["config"]["recall"] == {
        "dense_weight": 0.35,
        "subject_boost": 0.0,
        "mmr_lambda": 1.0,
        "graph_expansion": True,
        "session_neighbours": 0.4,
        "accept_public": False,
        "reranker": False,
        "keyword_idf": True,
        "session_replies": True,
    }
    hits = await recall(gateway, who, query)
    unboosted = next(h["score"] for h in hits if h["item"]["id"] == named)
    assert abs(boosted - 2 * unboosted) < 1e-4
    assert not any("names its subject" in r for h in hits for r in h["reasons"])
    for bad in ({"dense_weight": 2}, {"subject_boost": "high"}, {"speed": 1}):
        refused = await _tune(gateway, who, **bad)
        assert refused.status_code == 422 and refused.json()["field"] == "recall", bad


async def test_mmr_moves_a_near_duplicate_down_when_the_tenant_asks(
    gateway: httpx.AsyncClient, who: Headers, embedded: Embedded
) -> None:
    ids = await embedded(
        [
            "The Lisbon office opens at nine.",
            "The Lisbon office opens at nine every weekday.",
            "Parking near the Lisbon office is free after six.",
        ]
    )
    query = "When does the Lisbon office open?"
    plain = [h["item"]["id"] for h in await recall(gateway, who, query, mode="semantic")]
    assert set(plain[:2]) == set(ids[:2]) and plain[2] == ids[2]  # the two near-duplicates lead
    assert (await _tune(gateway, who, mmr_lambda=0.5)).status_code == 200
    hits = await recall(gateway, who, query, mode="semantic")
    assert [h["item"]["id"] for h in hits] == [plain[0], ids[2], plain[1]]
    assert any(r.startswith("diversified (λ 0.50)") for r in hits[2]["reasons"])


async def test_the_reranker_orders_hybrid_recall_and_says_why_when_the_tenant_turns_it_on(
    gateway: httpx.AsyncClient, who: Headers, embedded: Embedded
) -> None:
    ids = await embedded(
        [
            "Melanie painted a sunrise over the lake with her kids last summer.",
            "Melanie signed up for a pottery class in the spring.",
            "The water of the lake was too cold for swimming in March.",
        ]
    )
    query = "When did Melanie paint a sunrise at the lake?"
    plain = await recall(gateway, who, query, mode="hybrid")
    assert plain and not any(r.startswith("reranked") for h in plain for r in h["reasons"])  # off by default

    on = await _tune(gateway, who, reranker=True)
    assert on.status_code == 200 and on.json()["config"]["recall"]["reranker"] is True
    hits = await recall(gateway, who, query, mode="hybrid")
    assert hits[0]["item"]["id"] == ids[0]  # the memory with every word of the question leads
    assert {h["item"]["id"] for h in hits} <= set(ids)
    for hit in hits:
        reason = next(r for r in hit["reasons"] if r.startswith("reranked "))
        assert 0 < float(reason.split()[1]) < 1
    assert "keyword 1.00" in next(r for r in hits[0]["reasons"] if r.startswith("reranked "))
    again = await recall(gateway, who, query, mode="hybrid")
    assert [(h["item"]["id"], h["score"], h["reasons"]) for h in again] == [
        (h["item"]["id"], h["score"], h["reasons"]) for h in hits
    ]


async def test_a_rare_query_word_reaches_the_top_only_with_rarity_weighting_and_the_reason_names_it(
    gateway: httpx.AsyncClient, who: Headers
) -> None:
    for topic in ("garden", "car", "rent", "party", "dentist"):
        await remember(gateway, who, f"Melanie told Melanie's sister that Melanie would call about the {topic}.")
    camped = await remember(gateway, who, "We camped by the lake in June.")
    query = "Where has Melanie camped?"

    hits = await recall(gateway, who, query, item_budget=3)
    assert hits[0]["item"]["id"] == camped  # one rare word outweighs a common one said three times
    assert hits[0]["reasons"][0].startswith("keyword match ") and "'camp' rarity 1.5" in hits[0]["reasons"][0]
    assert "'melani' rarity 0.24 ×3" in hits[1]["reasons"][0]

    off = await _tune(gateway, who, keyword_idf=False)
    assert off.status_code == 200 and off.json()["config"]["recall"]["keyword_idf"] is False
    plain = await recall(gateway, who, query, item_budget=3)
    assert len(plain) == 3 and camped not in {h["item"]["id"] for h in plain}  # ts_rank: every word alike
    assert not any("rarity" in r for h in plain for r in h["reasons"])
