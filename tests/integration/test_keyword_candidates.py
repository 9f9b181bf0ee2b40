"""Keyword candidates through memory_terms (migration 017): what the services' role finds under Row Level
Security, how the candidate cap is shared between a query's terms, and the triggers that keep the postings in
step with memory_items."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from engram.db import search
from engram.db.counts import CountCache
from engram.db.pool import tenant_tx
from engram.db.search import Filters
from engram.domain import scoring
from engram.domain.models import CallerContext
from tests.support.bulk import ITEM_COLUMNS, fact_row
from tests.support.tenants import create_tenant

START = datetime(2026, 1, 1, tzinfo=UTC)


def _tag() -> str:
    """A made-up word of letters only (a hex tag like "1e5a…" would be parsed as a number and split)."""
    return "zq" + uuid.uuid4().hex[:8].translate(str.maketrans("0123456789", "ghijklmnop"))


async def _store(
    owner_pool: asyncpg.Pool, who: CallerContext, texts: list[str], visibility: str = "tenant", first: int = 0
) -> list[str]:
    """Memories written straight into the table (one an hour from START + ``first`` hours, in order), as a bulk
    load would."""
    async with owner_pool.acquire() as conn:
        workspace = await conn.fetchval("SELECT id FROM workspaces WHERE tenant_id = $1", uuid.UUID(who.tenant_id))
        rows = [
            (
                *fact_row(uuid.UUID(who.tenant_id), uuid.uuid4(), workspace, uuid.UUID(who.principal_id), text),
                START + timedelta(hours=first + n),
                visibility,
            )
            for n, text in enumerate(texts)
        ]
        await conn.copy_records_to_table(
            "memory_items",
            records=rows,
            columns=[*ITEM_COLUMNS, "created_at", "visibility"],
        )
    return [str(r[1]) for r in rows]


async def _keyword(
    app_pool: asyncpg.Pool, who: CallerContext, query: str, limit: int = 10, cap: int = 2_000, *, rarity: bool = True
) -> list[tuple[str, float]]:
    return [(str(item.id), rank) for item, rank, _ in await _hits(app_pool, who, query, limit, cap, rarity=rarity)]


async def _hits(
    app_pool: asyncpg.Pool, who: CallerContext, query: str, limit: int = 10, cap: int = 2_000, *, rarity: bool = True
) -> list[search.KeywordHit]:
    async with tenant_tx(app_pool, who.tenant_id) as conn:
        return await search.keyword(conn, query, Filters(), who.principal_id, limit, cap, rarity=rarity)


async def test_a_memory_with_a_rarer_query_term_is_ranked_first_though_a_common_term_fills_the_cap(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    who = await create_tenant(owner_pool)
    tag = _tag()
    [rare, *common] = await _store(
        owner_pool,
        who,
        [f"The {tag} ledger was reconciled in Zanzibar."] + [f"The {tag} ledger has entry {n}." for n in range(30)],
    )
    # the rare one is the oldest of 31 matches, so the 10 most recent alone would leave it out
    hits = await _keyword(app_pool, who, "Zanzibar ledger", limit=5, cap=10)
    assert hits[0][0] == rare
    assert hits[0][1] > hits[1][1]  # both query terms against one
    assert {h for h, _ in hits[1:]} <= set(common)
    # one term: the cap is the most recent matches, as before
    only_common = await _keyword(app_pool, who, "ledger", limit=30, cap=10)
    assert [h for h, _ in only_common] and rare not in {h for h, _ in only_common}
    assert {h for h, _ in only_common} <= set(common[-10:])


async def test_below_the_cap_every_match_is_ranked_by_ts_rank_as_a_scan_of_the_rows_would_without_rarity(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    who = await create_tenant(owner_pool)
    tag = _tag()
    ids = await _store(
        owner_pool,
        who,
        [
            f"{tag} Alice moved to Lisbon.",
            f"{tag} Bob moved to Oslo and likes green tea.",
            f"{tag} Carol drinks green tea in Lisbon.",
            "Nothing in common here at all.",
        ],
    )
    hits = await _keyword(app_pool, who, "who moved to Lisbon and drinks tea?", rarity=False)
    async with owner_pool.acquire() as conn:
        expected = await conn.fetch(
            """SELECT id::text, ts_rank(content_tsv, q) AS rank
               FROM memory_items, to_tsquery('simple', 'move | lisbon | drink | tea') AS q
               WHERE tenant_id = $1 AND content_tsv @@ q ORDER BY rank DESC, created_at DESC""",
            uuid.UUID(who.tenant_id),
        )
    assert [h for h, _ in hits] == [r["id"] for r in expected]
    assert [round(r, 6) for _, r in hits] == [round(r["rank"], 6) for r in expected]
    assert ids[3] not in {h for h, _ in hits}


async def test_another_tenants_memories_and_postings_stay_invisible(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    mine, theirs = await create_tenant(owner_pool), await create_tenant(owner_pool)
    tag = _tag()
    [own] = await _store(owner_pool, mine, [f"The {tag} quarterly ledger is closed."])
    await _store(owner_pool, theirs, [f"The {tag} quarterly ledger is open.", f"Another {tag} ledger."])
    assert [h for h, _ in await _keyword(app_pool, mine, f"{tag} ledger")] == [own]
    async with tenant_tx(app_pool, mine.tenant_id) as conn:
        seen = await conn.fetch(
            "SELECT DISTINCT tenant_id::text FROM memory_terms"
            " WHERE term = ANY(tsvector_to_array(to_tsvector('english', $1)))",
            tag,
        )
    assert [r[0] for r in seen] == [mine.tenant_id]
    async with owner_pool.acquire() as conn:  # the other tenant's postings are there, only not for this tenant
        assert await conn.fetchval(
            "SELECT count(*) FROM memory_terms WHERE tenant_id = $1"
            " AND term = ANY(tsvector_to_array(to_tsvector('english', $2)))",
            uuid.UUID(theirs.tenant_id),
            tag,
        )


async def test_a_tenant_accepting_public_memories_finds_the_publishers_public_ones_and_never_their_others(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    """The public-memory branch (read through memory_items_public_recent, migration 033): another tenant's public
    memories join the keyword hits of a tenant that accepts them, ranked as a scan of every readable row would rank
    them; that tenant's other memories, and the public ones of a tenant that does not publish, never do."""
    reader, publisher, silent = [await create_tenant(owner_pool) for _ in range(3)]
    tag = _tag()
    own = await _store(owner_pool, reader, [f"{tag} ledger of the reader.", f"{tag} reader ledger, second copy."])
    public = await _store(
        owner_pool, publisher, [f"{tag} public ledger.", f"{tag} ledger ledger, public."], "public", first=10
    )
    hidden = [
        *await _store(owner_pool, publisher, [f"{tag} ledger for the publisher only."], "tenant", first=20),
        *await _store(owner_pool, publisher, [f"{tag} private ledger."], "private", first=21),
        *await _store(owner_pool, silent, [f"{tag} public ledger, unpublished."], "public", first=22),
    ]
    publishing = "UPDATE tenants SET public_enabled = $2 WHERE id = $1"
    await owner_pool.execute(publishing, uuid.UUID(publisher.tenant_id), True)
    try:
        assert {h for h, _ in await _keyword(app_pool, reader, f"{tag} ledger")} == set(own)  # not accepting yet
        async with owner_pool.acquire() as conn:
            await conn.execute(
                """INSERT INTO tenant_config (tenant_id, config) VALUES ($1, '{"recall": {"accept_public": true}}')
                   ON CONFLICT (tenant_id) DO UPDATE SET config = excluded.config""",
                uuid.UUID(reader.tenant_id),
            )
            expected = await conn.fetch(
                """SELECT id::text, ts_rank(content_tsv, q) AS rank FROM memory_items,
                          (SELECT to_tsquery('simple', string_agg(quote_literal(l), ' | ')) AS q
                           FROM unnest(tsvector_to_array(to_tsvector('english', $2))) l) q
                   WHERE id = ANY($1::uuid[]) ORDER BY rank DESC, created_at DESC""",
                [uuid.UUID(i) for i in [*own, *public]],
                f"{tag} ledger",
            )
        for rarity in (True, False):
            hits = await _keyword(app_pool, reader, f"{tag} ledger", rarity=rarity)
            assert {h for h, _ in hits} == {*own, *public}, rarity
            assert not {h for h, _ in hits} & set(hidden)
        assert [(h, round(r, 6)) for h, r in hits] == [(r["id"], round(r["rank"], 6)) for r in expected]
        # the publisher's own search is unchanged: its memories, public or not, and nobody else's
        assert {h for h, _ in await _keyword(app_pool, publisher, f"{tag} ledger")} == {*public, *hidden[:2]}
    finally:
        await owner_pool.execute(publishing, uuid.UUID(publisher.tenant_id), False)


async def test_the_public_branch_walks_the_public_memories_newest_first_not_the_whole_table(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    """Migration 033: the keyword statement of a tenant that accepts public memories reads other tenants' public
    rows through the partial index memory_items_public_recent, newest first, under Row Level Security (the plan a
    large table gets), never by a scan of every row of memory_items; its own memories are still read by id."""
    reader = await create_tenant(owner_pool)
    async with owner_pool.acquire() as conn:
        await conn.execute(
            """INSERT INTO tenant_config (tenant_id, config) VALUES ($1, '{"recall": {"accept_public": true}}')
               ON CONFLICT (tenant_id) DO UPDATE SET config = excluded.config""",
            uuid.UUID(reader.tenant_id),
        )

    class Capture:
        """Records the keyword statement (the fetch that starts ``WITH recent``)."""

        def __init__(self, conn: asyncpg.Connection) -> None:
            self.conn, self.sql, self.args = conn, "", ()

        async def fetchrow(self, sql: str, *args: object) -> object:
            return await self.conn.fetchrow(sql, *args)

        async def fetch(self, sql: str, *args: object) -> object:
            if sql.lstrip().startswith("WITH recent"):
                self.sql, self.args = sql, args
            return await self.conn.fetch(sql, *args)

    for rarity in (True, False):
        async with tenant_tx(app_pool, reader.tenant_id) as conn:
            capture = Capture(conn)
            await search.keyword(capture, "ledger in Lisbon", Filters(), reader.principal_id, 10, rarity=rarity)  # type: ignore[arg-type]
            await conn.execute("SET LOCAL enable_seqscan = off")  # the plan a large table gets
            plan = "\n".join(r[0] for r in await conn.fetch(f"EXPLAIN {capture.sql}", *capture.args))
        scans = [line for line in plan.splitlines() if "memory_items_public_recent" in line]
        assert len(scans) == 1 and "Index Scan using memory_items_public_recent" in scans[0], plan
        assert "Seq Scan on memory_items" not in plan, plan
        # and only there: the public-items policy, in an OR with the tenant's own rows, cannot use the index (with
        # a bare `visibility = 'public'` predicate it could, and a bitmap OR then read all of the tenant's rows)
        assert "Bitmap Heap Scan on memory_items" not in plan, plan


async def test_deleted_and_invalidated_memories_are_not_candidates_and_deletion_drops_their_postings(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    who = await create_tenant(owner_pool)
    tag = _tag()
    kept, invalidated, deleted = await _store(
        owner_pool, who, [f"{tag} kept note.", f"{tag} invalidated note.", f"{tag} deleted note."]
    )
    assert {h for h, _ in await _keyword(app_pool, who, tag)} == {kept, invalidated, deleted}
    async with owner_pool.acquire() as conn:
        await conn.execute("UPDATE memory_items SET invalidated_at = now() WHERE id = $1", uuid.UUID(invalidated))
        await conn.execute("DELETE FROM memory_items WHERE id = $1", uuid.UUID(deleted))
        assert await conn.fetchval("SELECT count(*) FROM memory_terms WHERE item_id = $1", uuid.UUID(deleted)) == 0
        assert await conn.fetchval("SELECT count(*) FROM memory_terms WHERE item_id = $1", uuid.UUID(kept)) == 3
    assert [h for h, _ in await _keyword(app_pool, who, tag)] == [kept]


async def test_an_edited_memory_is_found_by_its_new_words_only(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    who = await create_tenant(owner_pool)
    tag = _tag()
    [item] = await _store(owner_pool, who, [f"{tag} the meeting is on Tuesday."])
    assert [h for h, _ in await _keyword(app_pool, who, "Tuesday")] == [item]
    async with owner_pool.acquire() as conn:
        await conn.execute(
            "UPDATE memory_items SET content = $2, index_context = 'Friday' WHERE id = $1",
            uuid.UUID(item),
            f"{tag} the meeting moved to Thursday.",
        )
    assert await _keyword(app_pool, who, "Tuesday") == []
    assert [h for h, _ in await _keyword(app_pool, who, "Thursday")] == [item]
    assert [h for h, _ in await _keyword(app_pool, who, "Friday")] == [item]


async def test_stop_words_and_empty_queries_find_nothing(app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool) -> None:
    who = await create_tenant(owner_pool)
    await _store(owner_pool, who, ["The and of it is what it was.", "Which is it, then?"])
    for query in ("the and of", "what is it", "", "   ", "?!, ...", "'"):
        assert await _keyword(app_pool, who, query) == [], query


async def test_rarity_weights_each_query_word_by_how_few_of_the_tenants_memories_have_it(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    who = await create_tenant(owner_pool)
    tag = _tag()
    ids = await _store(
        owner_pool,
        who,
        [f"{tag} Melanie went to the park on day {n}." for n in range(3)]
        + [f"{tag} Melanie and Melanie again, the park with Melanie."]
        + [f"{tag} We camped by the lake.", "Nothing in common here at all."],
    )
    camped = ids[4]
    # ts_rank weighs "melani" and "camp" alike, so the memory that repeats the common word leads
    plain = await _keyword(app_pool, who, "Where has Melanie camped?", rarity=False)
    assert plain[0][0] == ids[3] and camped in {h for h, _ in plain}
    # with rarity, the one memory of six that has "camp" outweighs four that repeat "melani"
    hits = await _hits(app_pool, who, "Where has Melanie camped?")
    assert str(hits[0][0].id) == camped
    assert ids[5] not in {str(item.id) for item, _, _ in hits}
    for _, rank, terms in hits:
        assert abs(rank - scoring.keyword_relevance(terms)) < 1e-9  # SQL computes the domain's definition
    assert hits[0][2] == {"camp": (pytest.approx(scoring.term_rarity(1, 6)), 1)}
    repeated = next(terms for item, _, terms in hits if str(item.id) == ids[3])
    assert repeated == {"melani": (pytest.approx(scoring.term_rarity(4, 6)), 3)}


async def test_a_large_tenants_word_rarities_are_remembered_for_a_minute_a_small_ones_counted_every_time(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    now = [1000.0]
    counts = CountCache(clock=lambda: now[0])
    rare, common = _tag() + "x", _tag() + "x"  # no English suffix ends in x: the stemmer keeps them whole

    async def camp_rarity(who: CallerContext) -> float:
        async with tenant_tx(app_pool, who.tenant_id) as conn:
            hits = await search.keyword(conn, f"{rare} {common}", Filters(), who.principal_id, 5, counts=counts)
        [weight] = {terms[rare][0] for _, _, terms in hits if rare in terms}
        return weight

    large = await create_tenant(owner_pool)
    await _store(owner_pool, large, [f"{common} note {n}" for n in range(search.RARITY_REMEMBERED_FROM)] + [rare])
    first = await camp_rarity(large)
    assert first == pytest.approx(scoring.term_rarity(1, search.RARITY_REMEMBERED_FROM + 1))
    assert {key[2] for key in counts.live() if isinstance(key, tuple) and key[1] == large.tenant_id} == {
        rare,
        common,
    }
    await _store(owner_pool, large, [f"{rare} again {n}" for n in range(9)])
    now[0] += 59
    assert await camp_rarity(large) == first  # within the minute the remembered weight stands
    now[0] += 2
    assert await camp_rarity(large) == pytest.approx(scoring.term_rarity(10, search.RARITY_REMEMBERED_FROM + 10))

    small = await create_tenant(owner_pool)
    await _store(owner_pool, small, [f"{common} note {n}" for n in range(5)] + [rare])
    assert await camp_rarity(small) == pytest.approx(scoring.term_rarity(1, 6))
    await _store(owner_pool, small, [f"{rare} again"])
    # a small tenant's words are counted on every recall: the next one sees the new memory at once
    assert await camp_rarity(small) == pytest.approx(scoring.term_rarity(2, 7))
    assert not [key for key in counts.live() if isinstance(key, tuple) and key[1] == small.tenant_id]


async def test_a_workspace_filter_finds_that_workspaces_memories_and_follows_a_memory_moved_into_it(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool
) -> None:
    who = await create_tenant(owner_pool)
    tag = _tag()
    here, there = await _store(owner_pool, who, [f"{tag} note kept here.", f"{tag} note kept elsewhere."])
    async with owner_pool.acquire() as conn:
        first = await conn.fetchval("SELECT workspace_id FROM memory_items WHERE id = $1", uuid.UUID(here))
        other = uuid.uuid4()
        await conn.execute(
            "INSERT INTO workspaces (tenant_id, id, name) VALUES ($1, $2, 'other')", uuid.UUID(who.tenant_id), other
        )
        await conn.execute(
            "INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role) VALUES ($1, $2, $3, 'owner')",
            uuid.UUID(who.tenant_id),
            other,
            uuid.UUID(who.principal_id),
        )
        await conn.execute("UPDATE memory_items SET workspace_id = $1 WHERE id = $2", other, uuid.UUID(there))

    async def found(workspace: uuid.UUID) -> list[str]:
        async with tenant_tx(app_pool, who.tenant_id) as conn:
            hits = await search.keyword(conn, tag, Filters(workspace_id=str(workspace)), who.principal_id, 10)
        return [str(item.id) for item, _, _ in hits]

    assert await found(first) == [here]
    assert await found(other) == [there]
    async with owner_pool.acquire() as conn:  # the postings moved with the memory (migration 029's trigger)
        assert await conn.fetchval(
            "SELECT array_agg(DISTINCT workspace_id) FROM memory_terms WHERE item_id = $1", uuid.UUID(there)
        ) == [other]
        await conn.execute("UPDATE memory_items SET workspace_id = $1 WHERE id = $2", first, uuid.UUID(there))
    assert sorted(await found(first)) == sorted([here, there])
    assert await found(other) == []


async def test_a_tenants_number_of_memories_is_remembered_once_it_reaches_the_cap_and_then_not_counted_again(
    app_pool: asyncpg.Pool, owner_pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scoring, "DOCUMENT_FREQUENCY_CAP", 4)  # a store "at the cap" of a few memories
    counts = CountCache()
    word, later = _tag() + "x", _tag() + "x"
    small, full = await create_tenant(owner_pool), await create_tenant(owner_pool)
    await _store(owner_pool, small, [f"{word} note {n}" for n in range(3)])
    await _store(owner_pool, full, [f"{word} note {n}" for n in range(6)] + [f"{later} note"])

    async def rarities(who: CallerContext, terms: list[str]) -> list[float]:
        async with tenant_tx(app_pool, who.tenant_id) as conn:
            return await search.term_rarities(conn, who.tenant_id, terms, counts)

    assert await rarities(small, [word]) == [pytest.approx(scoring.term_rarity(3, 3))]
    assert ("memories", small.tenant_id) not in counts.live()  # below the cap it is counted every time
    assert await rarities(full, [word]) == [pytest.approx(scoring.term_rarity(4, 4))]
    assert counts.live()[("memories", full.tenant_id)] == 4
    counts.put(("memories", full.tenant_id), 3)  # a new word now takes the remembered number, not a count
    assert await rarities(full, [later]) == [pytest.approx(scoring.term_rarity(1, 3))]
