"""Recall candidate queries: full-text, vector (per-profile HNSW) and the startup working set.

Every query runs inside a tenant transaction, so Row Level Security bounds it to one tenant; the live
filter keeps out invalidated, superseded, rejected, archived and expired items.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg
import numpy as np

from engram.db.counts import CountCache
from engram.db.items import ACCEPTS_PUBLIC, ITEM_COLUMNS, TENANT, row_to_item, visible_to
from engram.domain import scoring
from engram.domain.models import MemoryItem

# Superseded items stay candidates: recall redirects a hit on one to its successor.
IN_RECALL = (
    "(i.review_status IN ('active', 'proposed', 'superseded') OR (i.review_status = 'disputed' AND EXISTS ("
    "SELECT 1 FROM memory_kinds k WHERE k.name = i.kind AND k.stays_in_recall_when_disputed "
    "AND (k.tenant_id IS NULL OR k.tenant_id = i.tenant_id))))"
)
LIVE = f"i.invalidated_at IS NULL AND (i.expires_at IS NULL OR i.expires_at > now()) AND {IN_RECALL}"


def live_as_of(at: str) -> str:
    """What was recorded by ``at``, not yet invalidated or expired then, and claimed true at that time."""
    return (
        f"i.created_at <= {at} AND (i.invalidated_at IS NULL OR i.invalidated_at > {at}) "
        f"AND (i.expires_at IS NULL OR i.expires_at > {at}) AND (i.valid_from IS NULL OR i.valid_from <= {at}) "
        f"AND (i.valid_to IS NULL OR i.valid_to > {at}) AND {IN_RECALL}"
    )


def overlaps(start: str | None, end: str | None) -> str:
    """SQL that keeps the items whose validity interval [valid_from, valid_to) overlaps [start, end]: a missing
    bound, and a null valid_from or valid_to, is open-ended (``start``/``end`` are SQL expressions or None)."""
    clauses = []
    if end is not None:
        clauses.append(f"(i.valid_from IS NULL OR i.valid_from <= {end})")
    if start is not None:
        clauses.append(f"(i.valid_to IS NULL OR i.valid_to > {start})")
    return " AND ".join(clauses) or "true"


# The most vector candidates one semantic search reads before the items' filters (it widens up to this when
# the filters leave too few): beyond it, a tenant's nearest live memories are not worth the scan.
MAX_VECTOR_CANDIDATES = 5_000
# Semantic search computes the distance to each of the tenant's vectors (exact) rather than walk the HNSW
# graph all tenants share when held² ≤ EXACT_SCAN_RATIO × stored (held: the tenant's vectors, stored: the
# table's): a filtered graph walk visits about candidates × stored / held vectors at roughly fifteen times the
# cost of one exact distance (measured, docs/benchmarks.md 2026-12-02). A tenant alone in its store walks the
# graph; 5k among 100k reads its own rows.
EXACT_SCAN_RATIO = 1_000


def exact_scan_bound(stored: int) -> int:
    """The most vectors a tenant may hold for its search to read them all, in a table of ``stored`` vectors."""
    return math.isqrt(EXACT_SCAN_RATIO * max(stored, 0))


async def _held(
    conn: asyncpg.Connection, readable: list[object], profile: str, bound: int, counts: CountCache | None
) -> int:
    """How many vectors the ``readable`` tenants hold in ``profile``, counted up to ``bound + 1`` (remembered in
    ``counts``: the count only chooses between two searches that find the same nearest, the exact one or the
    graph at 0.99, so a minute-old count serves)."""
    key = ("held", tuple(sorted(str(t) for t in readable)), profile, bound)
    cached = counts.get(key) if counts is not None else None
    if cached is not None:
        return int(cached)
    held = int(
        await conn.fetchval(
            """SELECT count(*) FROM (SELECT 1 FROM memory_embeddings e
                                     WHERE e.tenant_id = ANY($1::uuid[]) AND e.profile = $2 LIMIT $3) s""",
            readable,
            profile,
            bound + 1,
        )
    )
    if counts is not None:
        counts.put(key, held)
    return held


ITEM_COLUMNS_I = ", ".join(f"i.{c.strip()}" for c in ITEM_COLUMNS.split(","))


@dataclass(frozen=True)
class Filters:
    kinds: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    workspace_id: str | None = None
    wing: str | None = None
    room: str | None = None
    as_of: datetime | None = None  # answer as of that time: what was valid and known then
    time_start: datetime | None = None  # items whose validity interval overlaps [time_start, time_end]
    time_end: datetime | None = None


def _where(filters: Filters, viewer: str, args: list[object]) -> str:
    """Live items ``viewer`` may read that match the filters; parameters are appended to ``args``."""

    def param(value: object) -> str:
        args.append(value)
        return f"${len(args)}"

    clauses = [live_as_of(f"{param(filters.as_of)}::timestamptz") if filters.as_of else LIVE, visible_to(param(viewer))]

    if filters.kinds:
        clauses.append(f"i.kind = ANY({param(filters.kinds)}::text[])")
    if filters.tags:
        clauses.append(f"i.tags @> {param(filters.tags)}::text[]")
    if filters.workspace_id:
        clauses.append(f"i.workspace_id = {param(filters.workspace_id)}::uuid")
    if filters.wing:
        clauses.append(f"i.wing = {param(filters.wing)}")
    if filters.room:
        clauses.append(f"i.room = {param(filters.room)}")
    if filters.time_start or filters.time_end:
        start = f"{param(filters.time_start)}::timestamptz" if filters.time_start else None
        end = f"{param(filters.time_end)}::timestamptz" if filters.time_end else None
        clauses.append(overlaps(start, end))
    return " AND ".join(clauses)


# A keyword hit: the memory, its score, and (with rarity weighting) each query word it contains → (the word's
# rarity, how often the memory has it).
KeywordHit = tuple[MemoryItem, float, dict[str, tuple[float, int]]]


# A tenant's count of memories from which the rarity of its words is remembered (``CountCache``) rather than
# counted on every recall: below it the counts are cheap, and each new memory still moves them noticeably.
RARITY_REMEMBERED_FROM = 1_000


async def keyword(
    conn: asyncpg.Connection,
    query: str,
    filters: Filters,
    viewer: str,
    limit: int,
    candidate_cap: int = 2_000,
    *,
    rarity: bool = True,
    counts: CountCache | None = None,
) -> list[KeywordHit]:
    """Full-text match with OR semantics over the query's stemmed words, ranked by ``scoring.keyword_relevance``
    (each word weighted by its rarity among the tenant's memories; ``rarity`` false: ts_rank, every word alike).

    At most ``candidate_cap`` matches are ranked: the most recent ones, and for a query of several terms a share
    of the cap kept for each term's own most recent matches, so a rarer term's memories are not crowded out by a
    common term's (a term with fewer matches than its share has them all ranked). Matches are found through
    ``memory_terms`` (one row per memory and lexeme, a btree on tenant, term and time; migration 017), which
    Row Level Security lets the services' role use, unlike the GIN index: one branch per term walks that term's
    live matches the filters admit, newest first, and a merge of the branches stops at the cap. So the work
    follows the cap, not the tenant's size. Below the cap every match is ranked, as a scan of every row would.
    Public memories of other tenants, for a tenant that accepts them, are matched on their tsvector, walked newest
    first through ``memory_items_public_recent`` (migration 033), so that branch reads the public rows only.

    The rarity of each query word comes from ``term_rarities`` (remembered in ``counts`` for a tenant of at
    least ``RARITY_REMEMBERED_FROM`` memories)."""
    parsed = await conn.fetchrow(
        """SELECT array_agg(lexeme ORDER BY lexeme) AS terms,
                  to_tsquery('simple', string_agg(quote_literal(lexeme), ' | '))::text AS tsq,
                  engram_current_tenant()::text AS tenant
           FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS lexeme""",
        query,
    )
    terms: list[str] = list(parsed["terms"] or [])
    if not terms:
        return []
    share = candidate_cap // (2 * len(terms)) if len(terms) > 1 else 0
    args: list[object] = [terms, parsed["tsq"], limit, candidate_cap - share * len(terms)]
    if share:
        args.append(share)
    share_param = f"${len(args)}"
    # a workspace filter applies to the postings themselves, in the index (migration 029), before any memory is read
    in_workspace = ""
    if filters.workspace_id:
        args.append(filters.workspace_id)
        in_workspace = f"AND p.workspace_id = ${len(args)}::uuid"
    where = _where(filters, viewer, args)
    rank = "ts_rank(i.content_tsv, $2::tsquery)"  # with rarity: the tsvector, scored once per memory below
    score = ""
    if rarity:
        args.extend([await term_rarities(conn, str(parsed["tenant"]), terms, counts), scoring.KEYWORD_K1])
        w, k1 = f"${len(args) - 1}::float8[]", f"${len(args)}::float8"
        # scoring.keyword_relevance: Σ rarity × tf·(k1 + 1)/(tf + k1) over the query words the memory has,
        # computed once per matched memory (the branches carry its tsvector, not a score)
        score = f"""(SELECT coalesce(sum(({w})[array_position($1::text[], u.lexeme)]
                             * coalesce(cardinality(u.positions), 1) * ({k1} + 1)
                             / (coalesce(cardinality(u.positions), 1) + {k1})), 0)
                     FROM unnest(m.rank) u WHERE u.lexeme = ANY($1::text[]))"""
        rank = "i.content_tsv"

    # Each word's postings, newest first, merged into one stream in which a memory with several of the words
    # comes once: the items' filters then apply to each memory once, and the walk stops at the cap.
    postings = " UNION ALL ".join(
        f"""(SELECT p.created_at, p.item_id FROM memory_terms p
             WHERE p.tenant_id = engram_current_tenant() AND p.term = ($1::text[])[{n}] {in_workspace}
             ORDER BY p.created_at DESC, p.item_id DESC)"""
        for n in range(1, len(terms) + 1)
    )
    newest = [
        f"""(SELECT i.id, p.created_at, {rank} AS rank
             FROM (SELECT p.created_at, p.item_id,
                          lag(p.item_id) OVER (ORDER BY p.created_at DESC, p.item_id DESC) AS previous
                   FROM ({postings}) p) p
             JOIN memory_items i ON i.id = p.item_id
             WHERE p.previous IS DISTINCT FROM p.item_id AND i.tenant_id = {TENANT} AND {where}
             ORDER BY p.created_at DESC, p.item_id DESC LIMIT $4)""",
        f"""(SELECT i.id, i.created_at, {rank} AS rank FROM memory_items i
             WHERE {ACCEPTS_PUBLIC} AND i.visibility = 'public' AND i.tenant_id <> {TENANT}
               AND i.content_tsv @@ $2::tsquery AND {where}
             ORDER BY i.created_at DESC LIMIT $4)""",
    ]
    # each word's own most recent matches (one lateral walk per word)
    shares = (
        [
            f"""SELECT s.id, s.created_at, s.rank FROM unnest($1::text[]) AS t(term) CROSS JOIN LATERAL (
                    SELECT i.id, p.created_at, {rank} AS rank
                    FROM memory_terms p JOIN memory_items i ON i.id = p.item_id
                    WHERE p.tenant_id = engram_current_tenant() AND p.term = t.term {in_workspace}
                      AND i.tenant_id = {TENANT} AND {where}
                    ORDER BY p.created_at DESC LIMIT {share_param}) s"""
        ]
        if share
        else []
    )
    # with rarity: each hit's query words, how often it has each, and the words' rarity (for its reason)
    detail = (
        f""", (SELECT jsonb_object_agg(x.lexeme, jsonb_build_array(r.w, x.tf))
               FROM (SELECT u.lexeme, coalesce(cardinality(u.positions), 1) AS tf FROM unnest(i.content_tsv) u) x
               JOIN unnest($1::text[], {w}) AS r(term, w) ON r.term = x.lexeme) AS terms"""
        if rarity
        else ""
    )
    # with rarity, matched's "rank" is the memory's tsvector until scored here
    scored = f"(SELECT m.id, m.created_at, {score} AS rank FROM matched m) s" if rarity else "matched"
    rows = await conn.fetch(
        f"""WITH recent AS (
                SELECT u.id, u.created_at, u.rank FROM ({" UNION ALL ".join(newest)}) u
                ORDER BY u.created_at DESC LIMIT $4),
            matched AS (
                SELECT DISTINCT ON (c.id) c.id, c.created_at, c.rank
                FROM (SELECT * FROM recent {"".join(f" UNION ALL {b}" for b in shares)}) c ORDER BY c.id),
            ranked AS (SELECT id, rank FROM {scored} ORDER BY rank DESC, created_at DESC LIMIT $3)
            SELECT {ITEM_COLUMNS_I}, r.rank {detail} FROM ranked r JOIN memory_items i ON i.id = r.id
            ORDER BY r.rank DESC, i.created_at DESC""",
        *args,
    )
    out: list[KeywordHit] = []
    for r in rows:
        matched: dict[str, tuple[float, int]] = {}
        if rarity and r["terms"]:
            matched = {term: (float(w), int(tf)) for term, (w, tf) in json.loads(r["terms"]).items()}
        out.append((row_to_item(r), float(r["rank"]), matched))
    return out


async def term_rarities(
    conn: asyncpg.Connection, tenant: str, terms: list[str], counts: CountCache | None = None
) -> list[float]:
    """``scoring.term_rarity`` of each of ``terms`` among the current tenant's memories: how many of them have the
    word (from ``memory_terms``) and how many there are, each counted up to ``scoring.DOCUMENT_FREQUENCY_CAP``, in
    one statement for the words ``counts`` does not hold. A tenant's words are remembered once it holds
    ``RARITY_REMEMBERED_FROM`` memories, and its number of memories once that reaches the cap (it stays there
    while the tenant holds as many); counting a common word reads as many index entries as the cap."""
    found: dict[str, float] = {}
    for term in terms if counts is not None else []:
        remembered = counts.get(("rarity", tenant, term)) if counts is not None else None
        if remembered is not None:
            found[term] = remembered
    missing = [t for t in terms if t not in found]
    if missing:
        # The number of memories, once it reaches the cap, stays at the cap: remembered then, so a new word costs
        # the count of its own postings only (counting the cap's 10,000 memories under Row Level Security took
        # 40-50 ms at 100k, loaded; docs/benchmarks.md 2026-12-03).
        saturated = counts.get(("memories", tenant)) if counts is not None else None
        memories = (
            "SELECT $3::bigint AS n"
            if saturated is not None
            else f"""SELECT count(*) AS n FROM (SELECT 1 FROM memory_items i
                    WHERE i.tenant_id = {TENANT} LIMIT $2) s"""
        )
        rows = await conn.fetch(
            f"""SELECT t.term, d.df, n.n
               FROM unnest($1::text[]) AS t(term)
               CROSS JOIN LATERAL (SELECT count(*) AS df FROM (SELECT 1 FROM memory_terms p
                   WHERE p.tenant_id = engram_current_tenant() AND p.term = t.term LIMIT $2) s) d
               CROSS JOIN ({memories}) n""",
            missing,
            scoring.DOCUMENT_FREQUENCY_CAP,
            *([int(saturated)] if saturated is not None else []),
        )
        for r in rows:
            found[r["term"]] = rarity = scoring.term_rarity(int(r["df"]), int(r["n"]))
            if counts is not None and int(r["n"]) >= RARITY_REMEMBERED_FROM:
                counts.put(("rarity", tenant, r["term"]), rarity)
            if counts is not None and int(r["n"]) >= scoring.DOCUMENT_FREQUENCY_CAP:
                counts.put(("memories", tenant), int(r["n"]))
    return [found[t] for t in terms]


@dataclass(frozen=True)
class VectorScope:
    """What one transaction's semantic search reads before its candidates: the tenants whose vectors the caller
    may see (its own, and the publishing tenants' when it accepts public memories), the table's size, and — read
    in the same statement, for recall — the tenant's ``recall`` configuration (None when unset)."""

    readable: list[object]
    stored: int
    recall_config: Any = None


async def vector_scope(conn: asyncpg.Connection, limit: int) -> VectorScope:
    """One round trip sets the transaction's search settings and reads the readable tenants, the table's size and
    the tenant's recall configuration: relaxed_order finds more of the true nearest than strict_order (the
    candidates are sorted here anyway), and each statement is planned for this tenant's share of the table, never
    one generic plan for every tenant. Before ``semantic`` (``scope``) in the same transaction."""
    readable, stored, recall_config = await conn.fetchrow(
        f"""SELECT array_append(CASE WHEN {ACCEPTS_PUBLIC} THEN (
                       SELECT coalesce(array_agg(t.id), '{{}}') FROM tenants t WHERE t.public_enabled)
                   ELSE '{{}}'::uuid[] END, engram_current_tenant()),
                   (SELECT greatest(c.reltuples, 0)::bigint FROM pg_class c
                    WHERE c.oid = 'memory_embeddings'::regclass),
                   (SELECT c.config -> 'recall' FROM tenant_config c WHERE c.tenant_id = engram_current_tenant())
            FROM (SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
                         set_config('hnsw.ef_search', $1, true),
                         set_config('plan_cache_mode', 'force_custom_plan', true)) settings""",
        str(max(40, min(int(limit) * 2, 1000))),
    )
    return VectorScope(readable, int(stored), json.loads(recall_config) if recall_config is not None else None)


async def semantic(
    conn: asyncpg.Connection,
    vector: np.ndarray,
    profile: str,
    dimensions: int,
    filters: Filters,
    viewer: str,
    limit: int,
    counts: CountCache | None = None,
    scope: VectorScope | None = None,
) -> list[tuple[MemoryItem, float]]:
    """Nearest items by cosine similarity: the tenant's nearest vectors first, then the items' filters.

    The candidates are read from the embeddings alone, kept to the tenants whose memories the caller may see
    (``vector_scope``, read here unless the caller read it already in this transaction, as ``scope``) by a plain
    parameter checked on each row before Row Level Security's subqueries. When those tenants hold a small share of
    the table's vectors (``exact_scan_bound``), the distance to each of theirs is computed (exact, and cheaper than
    walking a graph shared with every other tenant); otherwise the profile's HNSW index is walked with an iterative
    scan. The items' filters then apply to the candidates; when they leave fewer than ``limit``, the candidate set
    widens."""
    dims = int(dimensions)
    if scope is None:
        scope = await vector_scope(conn, limit)
    readable, stored = scope.readable, scope.stored
    bound = exact_scan_bound(int(stored))
    held = await _held(conn, readable, profile, bound, counts)
    # "+ 0" keeps the planner off the HNSW index (it orders by the bare operator only): every distance, exactly
    order = f"(e.embedding::vector({dims}) <=> $1::vector({dims}))" + (" + 0" if held <= bound else "")
    candidates = max(int(limit) * 2, int(limit) + 20)
    while True:
        # The nearest vectors are read first (materialised, so the planner never starts from memory_items and
        # its policies), then the items' filters apply to them by id; a vector whose item they keep out comes
        # back without one, so the rows also count the vectors read.
        args: list[object] = [vector, profile, readable, candidates]
        where = _where(filters, viewer, args)
        near = await conn.fetch(
            f"""WITH near AS MATERIALIZED (
                    SELECT e.item_id, e.embedding::vector({dims}) <=> $1::vector({dims}) AS distance
                    FROM memory_embeddings e
                    WHERE e.profile = $2 AND e.tenant_id = ANY($3::uuid[])
                    ORDER BY {order}
                    LIMIT $4)
                SELECT {ITEM_COLUMNS_I}, n.distance
                FROM near n LEFT JOIN memory_items i ON i.id = n.item_id AND {where}""",
            *args,
        )
        rows = [r for r in near if r["id"] is not None]
        if len(rows) >= limit or len(near) < candidates or candidates >= MAX_VECTOR_CANDIDATES:
            break
        candidates = min(candidates * 4, MAX_VECTOR_CANDIDATES)
    nearest = sorted(rows, key=lambda r: float(r["distance"]))[: int(limit)]
    # The custom plans end with the search: the statements after it in the transaction are planned as any other's
    # (custom, planning the conflicts and links statements cost recall more than running them).
    await conn.execute("SET LOCAL plan_cache_mode TO DEFAULT")
    return [(row_to_item(r), 1 - float(r["distance"])) for r in nearest]


async def session_window(
    conn: asyncpg.Connection, seeds: list[str], filters: Filters, viewer: str, width: int
) -> list[tuple[str, int, MemoryItem]]:
    """For each seed with a ``source_session``, the live items ``viewer`` may read that match the filters and
    were recorded within ``width`` places before or after it in that session: (seed id, offset, item), the
    offset negative before the seed. One query, the session index finding each side."""
    if not seeds:
        return []
    args: list[object] = [seeds, width]
    where = _where(filters, viewer, args)
    side = f"""SELECT {ITEM_COLUMNS_I}, row_number() OVER (ORDER BY i.created_at {{order}}) AS place
               FROM memory_items i
               WHERE i.source_session = s.source_session AND i.created_at {{cmp}} s.created_at AND i.id <> s.id
                 AND i.superseded_by IS NULL AND i.review_status <> 'superseded' AND {where}
               ORDER BY i.created_at {{order}} LIMIT $2"""
    rows = await conn.fetch(
        f"""SELECT s.id AS seed_id, n.*, n.place * n.direction AS offset_
            FROM memory_items s, LATERAL (
                (SELECT b.*, -1 AS direction FROM ({side.format(order="DESC", cmp="<")}) b)
                UNION ALL
                (SELECT a.*, 1 AS direction FROM ({side.format(order="ASC", cmp=">")}) a)) n
            WHERE s.id = ANY($1::uuid[]) AND s.source_session IS NOT NULL""",
        *args,
    )
    return [(str(r["seed_id"]), int(r["offset_"]), row_to_item(r)) for r in rows]


async def startup(conn: asyncpg.Connection, filters: Filters, viewer: str, limit: int) -> list[MemoryItem]:
    """Active items for the start of a session: pinned and important first, bounded."""
    args: list[object] = [limit]
    where = _where(filters, viewer, args)
    rows = await conn.fetch(
        f"""SELECT {ITEM_COLUMNS_I} FROM memory_items i
            WHERE {where} AND i.review_status = 'active' AND i.tenant_id = {TENANT}
            ORDER BY i.pinned DESC, i.importance DESC, i.created_at DESC
            LIMIT $1""",
        *args,
    )
    return [row_to_item(r) for r in rows]
