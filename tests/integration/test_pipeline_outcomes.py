"""Outcomes a pipeline consumer records instead of failing: an item deleted while its event is in flight, and
a model judge that cannot be reached (real database, real model, a local OpenAI-compatible stub)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import asyncpg
import numpy as np

from engram.config import Settings
from engram.domain.models import CallerContext
from engram.embeddings.provider import EmbeddingProvider
from engram.events.envelope import Event
from engram.llm import JsonChat
from services.classifier.service import CONSUMER as CLASSIFIER
from services.classifier.service import ClassifierService
from services.conflicts.service import ConflictsService
from services.embedder.service import CONSUMER as EMBEDDER
from services.embedder.service import EmbedderService
from services.ingest.service import IngestService, RememberCommand
from services.ingest.trash import TrashService
from tests.support.llm_stub import ERROR, running_stub
from tests.support.tenants import create_tenant


class DeletingWhileEmbedding:
    """The real provider, with a deletion (as a caller would make it) landing while the vectors are computed."""

    def __init__(self, inner: EmbeddingProvider, delete: Callable[[], Awaitable[object]]) -> None:
        self._inner = inner
        self._delete = delete
        self.profile = inner.profile
        self.dimensions = inner.dimensions

    async def embed_passages(self, texts: list[str]) -> list[np.ndarray]:
        vectors = await self._inner.embed_passages(texts)
        await self._delete()
        return vectors

    async def embed_query(self, text: str) -> np.ndarray:
        return await self._inner.embed_query(text)

    async def close(self) -> None:
        pass


async def _event(owner_pool: asyncpg.Pool, event_type: str, item_id: str) -> Event:
    async with owner_pool.acquire() as conn:
        raw = await conn.fetchval(
            "SELECT envelope FROM outbox WHERE envelope->>'type' = $1 "
            "AND envelope->>'subject' = $2 ORDER BY id DESC LIMIT 1",
            f"engram.{event_type}",
            item_id,
        )
    return Event.decode(json.loads(raw))


async def _effects(owner_pool: asyncpg.Pool, item_id: str, event: Event, consumer: str) -> dict[str, int]:
    async with owner_pool.acquire() as conn:
        row = await conn.fetchrow(
            """SELECT (SELECT count(*) FROM consumer_inbox WHERE consumer = $3 AND event_id = $2::uuid) AS handled,
                      (SELECT count(*) FROM memory_embeddings WHERE item_id = $1::uuid) AS vectors,
                      (SELECT count(*) FROM outbox WHERE envelope->>'subject' = $1::text
                          AND envelope->>'type' IN ('engram.memory.embedded', 'engram.memory.classified')) AS events,
                      (SELECT count(*) FROM trash WHERE item_id = $1::uuid) AS in_trash""",
            item_id,
            event.id,
            consumer,
        )
    return dict(row)


async def test_an_item_deleted_while_it_is_embedded_is_handled_not_retried(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    item = (
        await IngestService(app_pool, settings).remember(
            tenant, RememberCommand(content="The release freeze starts on the first Monday of December.")
        )
    ).item
    event = await _event(owner_pool, "memory.created", str(item.id))
    trash = TrashService(app_pool, settings)
    service = EmbedderService(
        app_pool,
        settings,
        DeletingWhileEmbedding(embedder, lambda: trash.delete(tenant, str(item.id), "no longer needed")),
    )
    assert await service.handle([event]) == {}  # no failure: the message is acknowledged, not redelivered
    assert await _effects(owner_pool, str(item.id), event, EMBEDDER) == {
        "handled": 1,
        "vectors": 0,
        "events": 0,
        "in_trash": 1,
    }
    assert await EmbedderService(app_pool, settings, embedder).handle([event]) == {}  # a redelivery does nothing
    assert (await _effects(owner_pool, str(item.id), event, EMBEDDER))["vectors"] == 0


async def test_an_item_deleted_before_the_embedder_and_classifier_run_is_recorded_as_handled(
    app_pool: asyncpg.Pool,
    owner_pool: asyncpg.Pool,
    settings: Settings,
    tenant: CallerContext,
    embedder: EmbeddingProvider,
) -> None:
    item = (
        await IngestService(app_pool, settings).remember(
            tenant, RememberCommand(content="Invoices go out on the 25th of each month.")
        )
    ).item
    event = await _event(owner_pool, "memory.created", str(item.id))
    await TrashService(app_pool, settings).delete(tenant, str(item.id), "")
    assert await EmbedderService(app_pool, settings, embedder).handle([event]) == {}
    assert await ClassifierService(app_pool, settings).handle([event]) == {}
    for consumer in (EMBEDDER, CLASSIFIER):
        assert await _effects(owner_pool, str(item.id), event, consumer) == {
            "handled": 1,
            "vectors": 0,
            "events": 0,
            "in_trash": 1,
        }


async def _conflict_stage(owner_pool: asyncpg.Pool, item_id: str) -> str:
    async with owner_pool.acquire() as conn:
        detail: str = await conn.fetchval(
            "SELECT detail FROM item_stages WHERE item_id = $1::uuid AND stage = 'conflict_check' AND status = 'done'",
            item_id,
        )
    return detail


async def _check_newcomer(
    owner_pool: asyncpg.Pool, app_pool: asyncpg.Pool, settings: Settings, embedder: EmbeddingProvider, llm: JsonChat
) -> tuple[list[str], str, int]:
    """In a fresh tenant, two memories and a newcomer: the rules call the newcomer a contradiction of the first
    (another size) and leave its likeness to the second (who owns the database) to the judge. Returns the ids,
    the newcomer's conflict stage detail, and the open conflicts between the first and the newcomer."""
    tenant = await create_tenant(owner_pool)
    ingest = IngestService(app_pool, settings)
    ids = [
        str((await ingest.remember(tenant, RememberCommand(content=text))).item.id)
        for text in (
            "The staging database has 64 GB of memory.",
            "The payments team owns the staging database.",
            "The staging database has 32 GB of memory.",
        )
    ]
    assert (
        await EmbedderService(app_pool, settings, embedder).handle(
            [await _event(owner_pool, "memory.created", i) for i in ids]
        )
        == {}
    )
    assert (
        await ConflictsService(app_pool, settings, llm).handle([await _event(owner_pool, "memory.embedded", ids[2])])
        == {}
    )
    async with owner_pool.acquire() as conn:
        opened = await conn.fetchval(
            "SELECT count(*) FROM conflicts WHERE status = 'open' AND item_a = $1::uuid AND item_b = $2::uuid",
            ids[0],
            ids[2],
        )
    return ids, await _conflict_stage(owner_pool, ids[2]), opened


async def test_an_unavailable_judge_is_named_in_the_stage_detail_and_the_rules_still_apply(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, settings: Settings, embedder: EmbeddingProvider
) -> None:
    async with running_stub() as stub:
        llm = JsonChat(stub.base_url, "judge-model", "k", timeout_s=1)
        stub.default = {"label": "none", "confidence": 0.9, "explanation": "unrelated"}
        ids, answered, opened = await _check_newcomer(owner_pool, app_pool, settings, embedder, llm)
        assert len(stub.requests) == 1  # the judge was asked about the pair the rules left, and answered
        assert answered.startswith("2 near memories compared: ") and f"contradiction with {ids[0]}" in answered
        assert "judge unavailable" not in answered and opened == 1
        stub.default = ERROR  # the model fails from now on
        ids, failing, opened = await _check_newcomer(owner_pool, app_pool, settings, embedder, llm)
        assert len(stub.requests) > 1
        assert failing.startswith("2 near memories compared, rules only (judge unavailable): ")
        assert f"contradiction with {ids[0]}" in failing and opened == 1  # the rules' verdict still applies
    ids, stopped, opened = await _check_newcomer(owner_pool, app_pool, settings, embedder, llm)  # server gone
    await llm.close()
    assert stopped.startswith("2 near memories compared, rules only (judge unavailable): ")
    assert f"contradiction with {ids[0]}" in stopped and opened == 1
