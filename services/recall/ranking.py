"""Ranking: recall and search. Candidates from full-text and vector search, trust weighting, fusion, the
supersession redirect, session context, graph expansion and MMR, budgets and the reasons for each hit."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

import asyncpg
import numpy as np

from engram.config import Settings
from engram.db import conflicts, embeddings, identity, items, kinds, recall_logs, search, supersession, tenants
from engram.db.counts import CountCache
from engram.db.pool import tenant_tx
from engram.db.search import Filters
from engram.domain import disclosure, diversity, duplicates, rerank, scoring, validation, validity
from engram.domain.budget import Budgets, pack_explained
from engram.domain.models import CallerContext, MemoryItem, RankedItem
from engram.domain.values import RecallMode, ReviewStatus, SearchMode
from engram.embeddings.provider import EmbeddingProvider
from engram.errors import ValidationFailed
from engram.telemetry.metrics import RECALLS, timed
from services.recall import expansion
from services.recall.shown import items_shown
from services.recall.telemetry import RecallTelemetry

MAX_QUERY_CHARS = 2_000
MIN_CANDIDATES = 50
PINNED_CEILING_SHARE = 0.5  # pinned items take at most half of a startup answer
EXPLAIN_CUT = 5  # with explain: how many of the best cut candidates are shown
MMR_WINDOW_FACTOR = 3  # MMR reorders the top (item budget × this) candidates


@dataclass
class RecallQuery:
    mode: str = "hybrid"
    query: str = ""
    filters: Filters = field(default_factory=Filters)
    budgets: Budgets = field(default_factory=Budgets)
    include_superseded: bool = False
    explain: bool = False


@dataclass
class Candidates:
    """What the retrievers found for one query: the items by id, their keyword ranks and semantic
    similarities (each only for the items that list found), open conflicts and duplicates among them."""

    by_id: dict[str, MemoryItem] = field(default_factory=dict)
    keyword: dict[str, float] = field(default_factory=dict)
    dense: dict[str, float] = field(default_factory=dict)
    keyword_terms: dict[str, dict[str, tuple[float, int]]] = field(default_factory=dict)  # the words each matched
    conflicted: dict[str, list[str]] = field(default_factory=dict)
    duplicated: dict[str, list[str]] = field(default_factory=dict)
    weights: scoring.RecallWeights = field(default_factory=scoring.RecallWeights)


@dataclass
class RecallResult:
    items: list[RankedItem]
    mode: str
    recall_id: str
    omitted: int
    scoring_version: str = scoring.SCORING_VERSION
    cut: list[tuple[RankedItem, str]] = field(default_factory=list)  # with explain: the best candidates cut


class Ranking:
    """``Recall`` and ``Search``: the ranked memories for a query (or for the start of a session)."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        settings: Settings,
        embedder: EmbeddingProvider,
        telemetry: RecallTelemetry | None = None,
    ) -> None:
        self._pool = pool
        self._settings = settings
        self._embedder = embedder
        self._telemetry = telemetry
        self._counts = CountCache()  # the vector counts and word rarities the candidate queries steer by

    async def recall(self, ctx: CallerContext, q: RecallQuery) -> RecallResult:
        mode = q.mode or "hybrid"
        validation.validate_choice(mode, RecallMode, "mode")
        query = "" if mode == RecallMode.STARTUP else _require_query(q.query)
        _check_filters(q.filters)
        vector = await self._query_vector(mode, query)  # before the transaction: no connection waits on the model
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:  # one transaction: every statement of the recall
            if mode == RecallMode.STARTUP:
                ranked = await self._startup(conn, ctx, q)
            else:
                ranked, weights = await self._ranked(
                    conn,
                    ctx,
                    mode,
                    query,
                    vector,
                    q.filters,
                    max(q.budgets.items * 4, MIN_CANDIDATES),
                    q.include_superseded,
                )
                with timed("widen"):
                    ranked = await self._widen(conn, ranked, q, weights, ctx.principal_id, ctx.tenant_id)
            kept, cut = pack_explained(ranked, q.budgets)
            omitted = len(cut)
            result = RecallResult(kept, mode, str(uuid.uuid4()), omitted, cut=cut[:EXPLAIN_CUT] if q.explain else [])
            await self._present(conn, ctx, [*result.items, *(r for r, _ in result.cut)])
        RECALLS.labels("recall", mode, "hits" if kept else "empty").inc()
        if self._telemetry is not None:  # queued: written by a background task, never on this path
            self._telemetry.served(
                recall_logs.Served(
                    tenant_id=ctx.tenant_id,
                    recall_id=result.recall_id,
                    principal_id=ctx.principal_id,
                    mode=mode,
                    scoring_version=result.scoring_version,
                    item_ids=[str(r.item.id) for r in kept if str(r.item.tenant_id) == ctx.tenant_id],
                    scores=[r.score for r in kept if str(r.item.tenant_id) == ctx.tenant_id],
                    omitted=omitted,
                    at=datetime.now(UTC),
                )
            )
        return result

    async def _widen(
        self,
        conn: asyncpg.Connection,
        ranked: list[RankedItem],
        q: RecallQuery,
        weights: scoring.RecallWeights,
        viewer: str,
        tenant_id: str,
    ) -> list[RankedItem]:
        """Graph expansion (links and tunnels) and MMR diversity, as the tenant's recall settings say; neither
        applies to answers ``as_of`` a past time."""
        expanding = weights.graph_expansion or weights.session_neighbours
        if not ranked or q.filters.as_of is not None or not (expanding or weights.mmr_lambda < 1):
            return ranked
        if expanding:
            with timed("graph_expansion"):
                ranked = await expansion.expand(
                    conn,
                    ranked,
                    viewer,
                    q.filters,
                    session_weight=weights.session_neighbours,
                    links=weights.graph_expansion,
                    tenant_id=tenant_id,
                    replies=weights.session_replies,
                )
        if weights.mmr_lambda < 1:
            window = ranked[: q.budgets.items * MMR_WINDOW_FACTOR]
            vectors = await embeddings.vectors(conn, [str(r.item.id) for r in window], self._embedder.profile)
            ranked = diversity.mmr(ranked, vectors, weights.mmr_lambda, len(window))
        return ranked

    async def search(self, ctx: CallerContext, mode: str, query: str, filters: Filters, limit: int) -> list[RankedItem]:
        mode = mode or "hybrid"
        validation.validate_choice(mode, SearchMode, "mode")
        if not 1 <= limit <= 200:
            raise ValidationFailed(f"limit must be 1–200, got {limit}", field="limit")
        query = _require_query(query)
        _check_filters(filters)
        vector = await self._query_vector(mode, query)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:  # one transaction: every statement of the search
            ranked, _ = await self._ranked(conn, ctx, mode, query, vector, filters, max(limit, MIN_CANDIDATES))
            await self._present(conn, ctx, ranked[:limit])
        RECALLS.labels("search", mode, "hits" if ranked else "empty").inc()
        return ranked[:limit]

    async def _query_vector(self, mode: str, query: str) -> np.ndarray | None:
        """The query's embedding, in the modes that search by meaning."""
        if mode not in (RecallMode.SEMANTIC, RecallMode.HYBRID):
            return None
        with timed("embed_query"):
            return await self._embedder.embed_query(query)

    async def _present(self, conn: asyncpg.Connection, ctx: CallerContext, ranked: list[RankedItem]) -> None:
        """The hits as the caller is shown them (``services.recall.shown``). A hit from another tenant (a public
        memory of a publishing tenant, served only to tenants that accept public memories) says where it came
        from first among its reasons; its trust was capped when it was scored."""
        if not ranked:
            return
        foreign = sorted({str(r.item.tenant_id) for r in ranked} - {ctx.tenant_id})
        known = await tenants.names(conn, foreign) if foreign else {}
        for r, item in zip(ranked, await items_shown(conn, ctx, [r.item for r in ranked]), strict=True):
            r.item = item
        for r in ranked:
            origin = str(r.item.tenant_id)
            if origin != ctx.tenant_id:
                r.reasons.insert(
                    0,
                    f"public memory of another tenant, {known.get(origin, 'unnamed')!r} ({origin}): "
                    f"trust capped at {scoring.FOREIGN_TRUST_CAP:.2f}",
                )

    async def _ranked(
        self,
        conn: asyncpg.Connection,
        ctx: CallerContext,
        mode: str,
        query: str,
        vector: np.ndarray | None,
        filters: Filters,
        limit: int,
        include_superseded: bool = False,
    ) -> tuple[list[RankedItem], scoring.RecallWeights]:
        """The ranked candidates, and the tenant's recall settings they were ranked with (read once)."""
        found = await self._found(conn, ctx, mode, query, vector, filters, limit)
        with timed("fuse"):
            ranked = self._fused(
                ctx.tenant_id,
                mode,
                query,
                found.by_id,
                found.keyword,
                found.dense,
                found.conflicted,
                found.weights,
                found.keyword_terms,
            )
        with timed("redirect"):
            ranked = await self._redirect(conn, ctx, ranked, include_superseded, filters.as_of)
        return duplicates.collapse(ranked, found.duplicated, ctx.tenant_id), found.weights

    async def candidates(self, ctx: CallerContext, mode: str, query: str, filters: Filters, limit: int) -> Candidates:
        """The first stage: each retriever's candidates with their scores, the open conflicts and duplicates
        among them, and the tenant's recall settings (read once)."""
        _check_filters(filters)
        vector = await self._query_vector(mode, query)
        async with tenant_tx(self._pool, ctx.tenant_id) as conn:
            return await self._found(conn, ctx, mode, query, vector, filters, limit)

    async def _found(
        self,
        conn: asyncpg.Connection,
        ctx: CallerContext,
        mode: str,
        query: str,
        vector: np.ndarray | None,
        filters: Filters,
        limit: int,
    ) -> Candidates:
        """``candidates`` in the caller's transaction, with the query's embedding (None in ``keyword``). In
        ``semantic`` the search's scope statement also reads the tenant's recall settings. ``hybrid`` reads them
        alone, before its keyword statements, which thus stay out of the scope's custom plans (they last until the
        vector search ends)."""
        found = Candidates()
        await _check_kinds(conn, filters)
        scope = await search.vector_scope(conn, limit) if mode == RecallMode.SEMANTIC else None
        found.weights = _weights(scope.recall_config if scope else await identity.config_value(conn, "recall"))
        if mode in (RecallMode.KEYWORD, RecallMode.HYBRID):
            with timed("keyword_sql"):
                matched = await search.keyword(
                    conn,
                    query,
                    filters,
                    ctx.principal_id,
                    limit,
                    self._settings.keyword_candidate_cap,
                    rarity=found.weights.keyword_idf,
                    counts=self._counts,
                )
            for item, rank, terms in matched:
                found.by_id[str(item.id)] = item
                found.keyword[str(item.id)] = rank
                if terms:
                    found.keyword_terms[str(item.id)] = terms
        if vector is not None:
            with timed("semantic_sql"):
                near = await search.semantic(
                    conn,
                    vector,
                    self._embedder.profile,
                    self._embedder.dimensions,
                    filters,
                    ctx.principal_id,
                    limit,
                    self._counts,
                    scope,
                )
            for item, similarity in near:
                found.by_id[str(item.id)] = item
                found.dense[str(item.id)] = similarity
        ids = list(found.by_id)
        with timed("conflicts_sql"):
            if ids:
                found.conflicted, found.duplicated = await conflicts.open_among(conn, ids, ctx.principal_id)
        return found

    @staticmethod
    def _fused(
        tenant_id: str,
        mode: str,
        query: str,
        by_id: dict[str, MemoryItem],
        keyword: dict[str, float],
        dense: dict[str, float],
        conflicted: dict[str, list[str]],
        weights: scoring.RecallWeights,
        keyword_terms: dict[str, dict[str, tuple[float, int]]] | None = None,
    ) -> list[RankedItem]:
        """The keyword and semantic scores fused into one relevance, times each item's trust, best first. In
        ``hybrid`` with the tenant's ``reranker`` on, the relevance is the second stage's (``rerank``), which
        weighs the subject itself; otherwise the fixed weighted sum, with the subject boost."""
        query_words = scoring.words(query)
        vectors: dict[str, list[float]] = {}
        if mode == RecallMode.KEYWORD:
            relevance = scoring.min_max(keyword)
        elif mode == RecallMode.SEMANTIC:
            relevance = dense
        elif weights.reranker:
            vectors = rerank.features(query, _candidates(query_words, by_id, keyword, dense), keyword, dense)
            relevance = {key: rerank.relevance(vector) for key, vector in vectors.items()}
        else:
            relevance = scoring.fuse(keyword, dense, weights.dense_weight)
        ranked = []
        for key, value in relevance.items():
            item = by_id[key]
            trust = scoring.trust_score_for(item, tenant_id, in_open_conflict=key in conflicted)
            reasons = []
            if key in vectors:
                reasons.append(rerank.explain(vectors[key]))
                if scoring.names_subject(query_words, item.subject):
                    reasons.append(f"the query names its subject {item.subject!r}")
            elif weights.subject_boost and scoring.names_subject(query_words, item.subject):
                value *= 1 + weights.subject_boost
                reasons.append(f"the query names its subject {item.subject!r} (×{1 + weights.subject_boost:.2f})")
            if key in dense:
                reasons.append(f"semantic match {dense[key]:.2f}")
            if key in keyword:
                terms = (keyword_terms or {}).get(key)
                reasons.append(
                    scoring.keyword_reason(keyword[key], terms) if terms else f"keyword match {keyword[key]:.3f}"
                )
            reasons.append(scoring.trust_reason(item, trust))
            reasons.extend(_standing(item, tenant_id, with_trust=False))
            for other in conflicted.get(key, []):
                with_whom = other or "a memory you cannot see"
                reasons.append(f"open conflict with {with_whom} (trust ×{scoring.CONFLICT_FACTOR})")
            if item.pinned:
                reasons.append("pinned")
            ranked.append(RankedItem(item=item, score=round(value * trust, 6), origin=mode, reasons=reasons))
        ranked.sort(key=lambda r: (-r.score, -r.item.created_at.timestamp()))
        return ranked

    async def _redirect(
        self,
        conn: asyncpg.Connection,
        ctx: CallerContext,
        ranked: list[RankedItem],
        include_superseded: bool,
        as_of: datetime | None = None,
    ) -> list[RankedItem]:
        """A hit on a superseded item becomes its terminal successor at the old rank (listed once, only if the
        caller may see it); a chain ending in an invalidated item is dropped. With ``include_superseded``
        the superseded items themselves are kept, as history."""
        if not any(_replaced(r.item) for r in ranked):
            return ranked
        out: list[RankedItem] = []
        seen: set[str] = set()
        # which successors the caller may read: named only by the reasons of history and of answers as of a time
        readable = (
            await items.readable_ids(
                conn, [str(r.item.superseded_by) for r in ranked if r.item.superseded_by], ctx.principal_id
            )
            if include_superseded or as_of is not None
            else set()
        )
        if include_superseded:
            for r in ranked:
                if _replaced(r.item):
                    r.reasons.append(f"history: superseded by {_successor(r.item, readable)}")
            return ranked
        for r in ranked:
            if not _replaced(r.item):
                if str(r.item.id) not in seen:
                    seen.add(str(r.item.id))
                    out.append(r)
                continue
            successor = await supersession.terminal(conn, r.item, ctx.principal_id, as_of)
            if successor is None or str(successor.id) in seen:
                continue
            seen.add(str(successor.id))
            if successor.id == r.item.id:  # as of then, it had not been replaced yet
                r.reasons.append(f"as of then: superseded later by {_successor(r.item, readable)}")
                out.append(r)
                continue
            relevance = [
                reason for reason in r.reasons if reason.startswith(("reranked", "semantic match", "keyword match"))
            ]
            out.append(
                RankedItem(
                    item=successor,
                    score=r.score,
                    origin=r.origin,
                    matched_via=str(r.item.id),
                    reasons=[
                        *relevance,
                        f"superseded: {r.item.id} was replaced by this",
                        *_standing(successor, ctx.tenant_id),
                    ],
                )
            )
        return out

    async def _startup(self, conn: asyncpg.Connection, ctx: CallerContext, q: RecallQuery) -> list[RankedItem]:
        limit = max(q.budgets.items * 4, MIN_CANDIDATES)
        await _check_kinds(conn, q.filters)
        candidates = await search.startup(conn, q.filters, ctx.principal_id, limit)
        now = datetime.now(UTC)
        pinned_ceiling = max(1, int(q.budgets.items * PINNED_CEILING_SHARE))
        pinned: list[RankedItem] = []
        rest: list[RankedItem] = []
        for item in candidates:
            factor = scoring.feedback_factor(item.recalls_since_useful)
            score = scoring.startup_score(item, now) * factor
            reasons = [
                f"startup score {score:.2f} (importance {item.importance:.2f}, "
                f"source trust {item.source_trust:.2f}, recency {scoring.recency(item.created_at, now):.2f})"
            ]
            if factor < 1:
                reasons.append(f"served {item.recalls_since_useful} times without useful feedback (×{factor:.2f})")
            ranked = RankedItem(item=item, score=round(score, 6), origin="startup", reasons=reasons)
            if item.pinned and len(pinned) < pinned_ceiling:
                ranked.reasons.insert(0, "pinned")
                pinned.append(ranked)
            else:
                rest.append(ranked)
        pinned.sort(key=lambda r: -r.score)
        rest.sort(key=lambda r: -r.score)
        return pinned + rest


def _candidates(
    query_words: set[str], by_id: dict[str, MemoryItem], keyword: dict[str, float], dense: dict[str, float]
) -> dict[str, rerank.Candidate]:
    """What the second stage is given of each candidate."""
    return {
        key: rerank.Candidate(
            item.content, keyword.get(key), dense.get(key), scoring.names_subject(query_words, item.subject)
        )
        for key, item in by_id.items()
    }


def _weights(raw: object) -> scoring.RecallWeights:
    """The tenant's recall settings from its stored ``recall`` configuration (None when unset)."""
    try:
        return scoring.parse_recall_weights(raw)
    except ValidationFailed:  # validated when set; a bad old value falls back to the defaults
        return scoring.RecallWeights()


def _successor(item: MemoryItem, readable: set[str]) -> str:
    """How a reason names an item's successor: its id only when the caller may read it."""
    if item.superseded_by is None:
        return "an item since deleted"
    return str(item.superseded_by) if str(item.superseded_by) in readable else disclosure.HIDDEN


def _replaced(item: MemoryItem) -> bool:
    """Superseded: by a successor, or by one since deleted (the chain then ends in nothing)."""
    return item.superseded_by is not None or item.review_status == ReviewStatus.SUPERSEDED


def _check_filters(filters: Filters) -> None:
    if filters.workspace_id:
        validation.require_uuid(filters.workspace_id, "workspace_id")
    validity.check_range(filters.time_start, filters.time_end, "time_end")


def _standing(item: MemoryItem, tenant_id: str, *, with_trust: bool = True) -> list[str]:
    """The reasons that describe an item itself: its trust, review state and verification."""
    reasons = []
    if with_trust:
        reasons.append(scoring.trust_reason(item, scoring.trust_score_for(item, tenant_id)))
    if item.review_status == ReviewStatus.PROPOSED:
        reasons.append("unreviewed (proposed)")
    elif item.review_status == ReviewStatus.DISPUTED:
        reasons.append("disputed (its kind stays in recall while disputed)")
    if item.human_verified:
        reasons.append("verified by a human")
    return reasons


async def _check_kinds(conn: asyncpg.Connection, filters: Filters) -> None:
    """An unknown kind in a filter is refused with the known ones, not answered with nothing."""
    if not filters.kinds:
        return
    known = await kinds.enabled_kind_names(conn)
    unknown = [k for k in filters.kinds if k not in known]
    if unknown:
        raise ValidationFailed(f"unknown kinds {unknown}; known kinds: {', '.join(known)}", field="kinds")


def _require_query(query: str) -> str:
    query = query.strip()
    if not query:
        raise ValidationFailed("query is required for this mode", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise ValidationFailed(f"query must be at most {MAX_QUERY_CHARS} characters", field="query")
    return query
