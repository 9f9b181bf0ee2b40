"""Recall telemetry written off the request path, and the startup score's anti-feedback penalty."""

from __future__ import annotations

import asyncpg

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider
from services.ingest.feedback import FeedbackService
from services.ingest.service import IngestService, RememberCommand
from services.ingest.trash import sweep
from services.recall.ranking import RecallQuery
from services.recall.service import RecallService
from services.recall.telemetry import RecallTelemetry


async def test_recalls_are_logged_and_counted_and_a_much_served_item_gives_way(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    ingest = IngestService(app_pool, settings)
    first = (await ingest.remember(tenant, RememberCommand(content="Standups start at 9:30.", importance=0.6))).item
    second = (await ingest.remember(tenant, RememberCommand(content="Retros are on Fridays.", importance=0.6))).item
    telemetry = RecallTelemetry(app_pool)
    recall = RecallService(app_pool, settings, embedder, telemetry)
    answer = await recall.ranking.recall(tenant, RecallQuery(mode="startup"))
    assert [str(r.item.id) for r in answer.items] == [str(second.id), str(first.id)]  # equal but for recency
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM recall_logs WHERE id = $1", answer.recall_id) == 0
    assert await telemetry.flush() == 1  # what the background task does; nothing was written on the request path
    async with owner_pool.acquire() as conn:
        log = await conn.fetchrow("SELECT * FROM recall_logs WHERE id = $1", answer.recall_id)
        counts = await conn.fetch(
            "SELECT id, recall_count, recalls_since_useful FROM memory_items WHERE id = ANY($1) ORDER BY created_at",
            [first.id, second.id],
        )
    assert log["mode"] == "startup" and log["scoring_version"] == answer.scoring_version
    assert set(log["item_ids"]) == {first.id, second.id} and str(log["principal_id"]) == tenant.principal_id
    assert [(r["recall_count"], r["recalls_since_useful"]) for r in counts] == [(1, 1), (1, 1)]

    for _ in range(12):  # the newer item leads every time, so only it is served
        await recall.ranking.recall(tenant, RecallQuery(mode="startup", budgets=answer_budget(1)))
    await telemetry.flush()
    again = await recall.ranking.recall(tenant, RecallQuery(mode="startup"))
    assert [str(r.item.id) for r in again.items] == [str(first.id), str(second.id)]
    assert any(reason.startswith("served 13 times without useful feedback") for reason in again.items[1].reasons)
    await telemetry.flush()  # the count of recalls served before the verdict is in before it
    await FeedbackService(app_pool, settings).record(tenant, str(second.id), "useful", "")
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT recalls_since_useful FROM memory_items WHERE id = $1", second.id) == 0
    await recall.ranking.recall(tenant, RecallQuery(mode="startup"))
    await telemetry.flush()
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT recalls_since_useful FROM memory_items WHERE id = $1", second.id) == 1
    await FeedbackService(app_pool, settings).record(tenant, str(second.id), "useful", "")  # the same verdict again
    async with owner_pool.acquire() as conn:
        assert await conn.fetchval("SELECT recalls_since_useful FROM memory_items WHERE id = $1", second.id) == 0
        assert await conn.fetchval("SELECT count(*) FROM feedback_events WHERE item_id = $1", second.id) == 1


async def test_the_sweep_deletes_recall_logs_past_their_retention(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    await IngestService(app_pool, settings).remember(tenant, RememberCommand(content="Builds run at night."))
    telemetry = RecallTelemetry(app_pool)
    recall = RecallService(app_pool, settings, embedder, telemetry)
    served = [(await recall.ranking.recall(tenant, RecallQuery(mode="startup"))).recall_id for _ in range(3)]
    assert await telemetry.flush() == 3
    async with owner_pool.acquire() as conn:  # one a day past the retention, one a day inside it, one new
        for recall_id, age in zip(served, (31, 29, 0), strict=True):
            await conn.execute(
                "UPDATE recall_logs SET created_at = now() - make_interval(days => $2) WHERE id = $1", recall_id, age
            )
    report = await sweep(app_pool, settings.model_copy(update={"recall_log_retention_days": 30}))
    assert report.recall_logs >= 1
    async with owner_pool.acquire() as conn:
        kept = {str(r["id"]) for r in await conn.fetch("SELECT id FROM recall_logs WHERE id = ANY($1::uuid[])", served)}
    assert kept == set(served[1:])


def answer_budget(items: int):  # type: ignore[no-untyped-def]
    from engram.domain.budget import Budgets

    return Budgets.from_request(items, None, None)
