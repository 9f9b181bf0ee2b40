"""Recall against real PostgreSQL + pgvector with real e5 embeddings."""

from __future__ import annotations

import asyncpg
import pytest

from engram.config import Settings
from engram.db.search import Filters
from engram.domain.budget import Budgets
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider
from engram.errors import NotFound, ValidationFailed
from services.embedder.service import EmbedderService
from services.ingest.service import IngestService, RememberCommand
from services.recall.ranking import RecallQuery
from services.recall.service import RecallService
from tests.support.outbox import deliver
from tests.support.tenants import create_tenant

MEMORIES = [
    RememberCommand(content="Alice is allergic to peanuts, so the team avoids them at lunch.", kind="fact"),
    RememberCommand(
        content="Deployments to production happen on Tuesdays after the standup.", kind="procedure", tags=["ops"]
    ),
    RememberCommand(
        content="Our main database is PostgreSQL 18 with the pgvector extension.",
        kind="fact",
        tags=["ops"],
        pinned=True,
    ),
    RememberCommand(content="Bob prefers dark roast coffee in the morning.", kind="preference", importance=0.9),
]


async def _populate(
    ctx: CallerContext,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    embedder: EmbeddingProvider,
    commands: list[RememberCommand] = MEMORIES,
) -> list[str]:
    ingest = IngestService(app_pool, settings)
    ids = [str((await ingest.remember(ctx, c)).item.id) for c in commands]
    await deliver(owner_pool, EmbedderService(app_pool, settings, embedder).handle, tenant=ctx, unsent=True)
    return ids


@pytest.fixture
def recall_service(app_pool: asyncpg.Pool, settings: Settings, embedder: EmbeddingProvider) -> RecallService:
    return RecallService(app_pool, settings, embedder)


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
async def test_paraphrase_finds_the_memory_by_meaning(
    mode: str,
    recall_service: RecallService,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    ids = await _populate(tenant, app_pool, owner_pool, settings, embedder)
    result = await recall_service.ranking.recall(
        tenant, RecallQuery(mode=mode, query="which nut allergy does someone have?")
    )
    assert result.items[0].item.id.hex == ids[0].replace("-", "")
    top = result.items[0]
    assert top.origin == mode and top.score > 0
    assert any(r.startswith("semantic match") for r in top.reasons)
    assert any(r.startswith("trust") for r in top.reasons)


async def test_keyword_mode_uses_full_text(
    recall_service: RecallService,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    ids = await _populate(tenant, app_pool, owner_pool, settings, embedder)
    result = await recall_service.ranking.recall(tenant, RecallQuery(mode="keyword", query="deployment tuesday"))
    assert [str(r.item.id) for r in result.items] == [ids[1]]
    assert result.items[0].reasons[0].startswith("keyword match")


async def test_filters_and_item_budget(
    recall_service: RecallService,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    ids = await _populate(tenant, app_pool, owner_pool, settings, embedder)
    tagged = await recall_service.ranking.recall(
        tenant, RecallQuery(mode="semantic", query="infrastructure", filters=Filters(tags=["ops"]))
    )
    assert {str(r.item.id) for r in tagged.items} == {ids[1], ids[2]}
    one = await recall_service.ranking.recall(
        tenant, RecallQuery(mode="semantic", query="infrastructure", budgets=Budgets(items=1))
    )
    assert len(one.items) == 1 and one.omitted == len(MEMORIES) - 1


async def test_startup_puts_pinned_first_and_explains(
    recall_service: RecallService,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    ids = await _populate(tenant, app_pool, owner_pool, settings, embedder)
    result = await recall_service.ranking.recall(tenant, RecallQuery(mode="startup"))
    assert str(result.items[0].item.id) == ids[2] and result.items[0].reasons[0] == "pinned"
    assert str(result.items[1].item.id) == ids[3]  # importance 0.9 leads the unpinned
    assert all(r.reasons for r in result.items)


async def test_other_tenants_memories_are_invisible(
    recall_service: RecallService,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    ids = await _populate(tenant, app_pool, owner_pool, settings, embedder)
    stranger = await create_tenant(owner_pool)
    # positive control: the owner tenant finds the memory in every mode
    for mode in ("keyword", "semantic", "hybrid"):
        own = await recall_service.ranking.recall(tenant, RecallQuery(mode=mode, query="peanuts allergy"))
        assert ids[0] in {str(r.item.id) for r in own.items}
    for mode in ("keyword", "semantic", "hybrid", "startup"):
        theirs = await recall_service.ranking.recall(stranger, RecallQuery(mode=mode, query="peanuts allergy"))
        assert theirs.items == []
    with pytest.raises(NotFound):
        await recall_service.reads.get_item(stranger, ids[0])
    assert str((await recall_service.reads.get_item(tenant, ids[0])).id) == ids[0]


async def test_status_shows_the_embedding_stage(
    recall_service: RecallService,
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    pending = await IngestService(app_pool, settings).remember(tenant, RememberCommand(content="not embedded yet"))
    _, stages = await recall_service.reads.get_status(tenant, str(pending.item.id))
    assert [(s.name, s.status) for s in stages] == [
        ("embedding", "pending"),
        ("classification", "pending"),
        ("conflict_check", "pending"),
    ]
    ids = await _populate(tenant, app_pool, owner_pool, settings, embedder)
    _, stages = await recall_service.reads.get_status(tenant, ids[0])
    assert (stages[0].name, stages[0].status) == ("embedding", "done")


@pytest.mark.parametrize(
    ("query", "field"),
    [
        (RecallQuery(mode="semantic", query="  "), "query"),
        (RecallQuery(mode="psychic", query="x"), "mode"),
        (RecallQuery(mode="keyword", query="x", filters=Filters(kinds=["fact", "gossip"])), "kinds"),
        (RecallQuery(mode="startup", filters=Filters(kinds=["gossip"])), "kinds"),
        (RecallQuery(mode="hybrid", query="x", filters=Filters(workspace_id="abc")), "workspace_id"),
    ],
)
async def test_bad_recall_input_names_the_field(
    recall_service: RecallService, tenant: CallerContext, query: RecallQuery, field: str
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        await recall_service.ranking.recall(tenant, query)
    assert caught.value.field == field
