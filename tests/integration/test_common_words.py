"""Common words in full-text matching: counted per tenant, they stop making matches on their own."""

from __future__ import annotations

import asyncpg

from engram.config import Settings
from engram.db import search
from engram.db.pool import tenant_tx
from engram.db.search import Filters
from engram.domain.models import CallerContext
from services.ingest.service import IngestService, RememberCommand
from tests.conftest import create_tenant


async def _store(app_pool: asyncpg.Pool, settings: Settings, ctx: CallerContext) -> dict[str, str]:
    ingest = IngestService(app_pool, settings)
    texts = {f"status-{n}": f"Weekly status {n}: the deploy went fine." for n in range(24)}
    texts |= {"both": "The deploy needed a rollback.", "rollback": "Payments rollback happened at noon.",
              "lunch": "Payments team lunch on Friday."}
    return {name: str((await ingest.remember(ctx, RememberCommand(content=text))).item.id)
            for name, text in texts.items()}


async def test_common_words_are_counted_per_tenant(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool,
                                                   settings: Settings) -> None:
    ctx, quiet = await create_tenant(owner_pool), await create_tenant(owner_pool)
    await _store(app_pool, settings, ctx)
    await IngestService(app_pool, settings).remember(quiet, RememberCommand(content="The deploy is on Monday."))
    async with tenant_tx(app_pool, ctx.tenant_id) as conn:
        common = await search.common_words(conn, sample=2000, share=0.5, least=10)
        assert {"deploy", "week", "status", "went", "fine"} <= common
        assert not {"rollback", "payment", "lunch"} & common
        assert await search.common_words(conn, sample=2000, share=0.5, least=100) == frozenset()  # too few
    async with tenant_tx(app_pool, quiet.tenant_id) as conn:  # another tenant's words are not counted here
        assert await search.common_words(conn, sample=2000, share=0.5, least=1) == {"deploy", "monday"}


async def test_a_common_word_alone_makes_no_match_but_still_ranks(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool,
                                                                  settings: Settings) -> None:
    ctx = await create_tenant(owner_pool)
    ids = await _store(app_pool, settings, ctx)
    async with tenant_tx(app_pool, ctx.tenant_id) as conn:
        every = await search.keyword(conn, "deploy rollback", Filters(), ctx.principal_id, 50)
        assert len(every) == 26  # every status line matches "deploy"
        bounded = await search.keyword(conn, "deploy rollback", Filters(), ctx.principal_id, 50,
                                       common=frozenset({"deploy"}))
        assert [str(item.id) for item, _ in bounded] == [ids["both"], ids["rollback"]]  # "deploy" still ranks
        alone = await search.keyword(conn, "deploy", Filters(), ctx.principal_id, 50, common=frozenset({"deploy"}))
        assert len(alone) == 25  # a query of common words only keeps them
