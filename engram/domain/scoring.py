"""Recall scoring rules: the startup working-set score, trust weighting and hybrid fusion."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram.domain.models import MemoryItem
from engram.domain.values import ReviewStatus
from engram.errors import ValidationFailed

SCORING_VERSION = "v5-session-replies"
RECENCY_HALF_LIFE_DAYS = 30.0
PROPOSED_FACTOR = 0.85
CONFLICT_FACTOR = 0.75
# Chosen on the LoCoMo dev conversations (docs/benchmarks.md): the boost on the grid 0.15–0.6 × 0–1.0 (best
# MRR, 2026-11-30); the dense share and session context with rarity-weighted keyword scores (2026-12-02), the
# middle of a plateau (dense 0.3–0.4 × context 0.3–0.6), not its single best point.
DENSE_WEIGHT = 0.35
SUBJECT_BOOST = 1.0
SESSION_NEIGHBOURS = 0.4


def recency(created_at: datetime, now: datetime) -> float:
    """1.0 now, 0.5 after one half-life."""
    age_days = max((now - created_at).total_seconds(), 0.0) / 86_400
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def startup_score(item: MemoryItem, now: datetime) -> float:
    """0.30·importance + 0.25·source_trust + 0.20·memory_confidence + 0.15·recency + 0.10·human_verified."""
    return (
        0.30 * item.importance
        + 0.25 * item.source_trust
        + 0.20 * item.memory_confidence
        + 0.15 * recency(item.created_at, now)
        + 0.10 * (1.0 if item.human_verified else 0.0)
    )


FREE_RECALLS = 5
PENALTY_PER_RECALL = 0.03
MIN_FEEDBACK_FACTOR = 0.55


def feedback_factor(recalls_since_useful: int) -> float:
    """The anti-feedback penalty of the startup score: an item served again and again with no useful verdict
    slowly gives way. The first five recalls are free; each further one costs 3%, down to ×0.55; a useful
    verdict resets the count."""
    extra = max(recalls_since_useful - FREE_RECALLS, 0)
    return max(MIN_FEEDBACK_FACTOR, 1.0 - PENALTY_PER_RECALL * extra)


def trust_score(item: MemoryItem, *, in_open_conflict: bool = False) -> float:
    """How much to believe an item, up to 1.0, so relevance still leads: similarity × trust. Proposals ×0.85,
    items in an unresolved conflict ×0.75."""
    base = 0.6 * item.source_trust + 0.4 * item.memory_confidence
    if item.human_verified:
        base = min(1.0, base + 0.2)
    score = 0.5 + 0.5 * base
    if item.review_status == ReviewStatus.PROPOSED:
        score *= PROPOSED_FACTOR
    if in_open_conflict:
        score *= CONFLICT_FACTOR
    return score


FOREIGN_TRUST_CAP = 0.5  # another tenant's public memory: no more trust than the least trusted of one's own


def trust_score_for(item: MemoryItem, tenant_id: str, *, in_open_conflict: bool = False) -> float:
    """``trust_score`` as the recall of ``tenant_id`` sees it: another tenant's memory (a public one) is capped
    at ``FOREIGN_TRUST_CAP``, whatever authority it claims in its own tenant."""
    trust = trust_score(item, in_open_conflict=in_open_conflict)
    return trust if str(item.tenant_id) == tenant_id else min(trust, FOREIGN_TRUST_CAP)


def trust_reason(item: MemoryItem, trust: float) -> str:
    """How a ranked item's trust is shown among its reasons."""
    return f"trust {trust:.2f} (authority {item.authority}, {item.source_type})"


@dataclass(frozen=True)
class RecallWeights:
    """A tenant's recall tuning (tenant config ``recall``): the dense side's share of hybrid fusion, and the
    boost for an item whose subject the query names."""

    dense_weight: float = DENSE_WEIGHT
    subject_boost: float = SUBJECT_BOOST
    mmr_lambda: float = 1.0  # 1: no diversification
    graph_expansion: bool = True
    session_neighbours: float = SESSION_NEIGHBOURS  # the share of a hit's score lifting its session neighbours
    accept_public: bool = False  # other tenants' public memories join recall (read by ``visible_to`` in SQL)
    reranker: bool = False  # hybrid relevance from the second stage (``rerank``) instead of the weighted sum
    keyword_idf: bool = True  # keyword relevance weighs each query word by its rarity (``keyword_relevance``)
    session_replies: bool = True  # a hit that asks lifts the memory recorded next more (``context_lift``)

    def as_dict(self) -> dict[str, float | bool]:
        return {
            "dense_weight": self.dense_weight,
            "subject_boost": self.subject_boost,
            "mmr_lambda": self.mmr_lambda,
            "graph_expansion": self.graph_expansion,
            "session_neighbours": self.session_neighbours,
            "accept_public": self.accept_public,
            "reranker": self.reranker,
            "keyword_idf": self.keyword_idf,
            "session_replies": self.session_replies,
        }


_SWITCHES = ("graph_expansion", "accept_public", "reranker", "keyword_idf", "session_replies")


def parse_recall_weights(raw: Any) -> RecallWeights:
    if raw is None:
        return RecallWeights()
    known = {"dense_weight", "subject_boost", "mmr_lambda", "session_neighbours", *_SWITCHES}
    if not isinstance(raw, dict) or set(raw) - known:
        raise ValidationFailed(
            "recall takes dense_weight, subject_boost, mmr_lambda, session_neighbours (each "
            "0–1), graph_expansion, accept_public, reranker, keyword_idf and session_replies (true or false)",
            field="recall",
        )
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if name in _SWITCHES:
            if not isinstance(value, bool):
                raise ValidationFailed(f"recall.{name} must be true or false", field="recall")
            values[name] = value
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValidationFailed(f"recall.{name} must be 0–1", field="recall")
        values[name] = float(value)
    return RecallWeights(**values)


SESSION_CONTEXT_WIDTH = 2  # places before and after a hit in its session
SESSION_CONTEXT_DECAY = 0.5  # each further place keeps this share of the lift
# The memory recorded right after a hit that asks a question (its reply) gains this many times the lift.
# Chosen on the LoCoMo dev conversations (docs/benchmarks.md, 2026-12-03): MRR rose from ×1.5 to ×2.25 and fell
# past ×2.5; 2.0 is inside that plateau. A question turn matches the question put to recall; its reply answers.
SESSION_REPLY_FACTOR = 2.0
_CLOSERS = "\"')]»”’"


def asks(content: str) -> bool:
    """Whether a memory ends with a question mark (before closing quotes or brackets): in a conversation, what
    is recorded next is its reply."""
    return content.rstrip().rstrip(_CLOSERS).endswith("?")


def context_lift(hit_score: float, offset: int, weight: float, *, hit_asks: bool = False) -> float:
    """What a memory recorded ``offset`` places from a hit in the same session gains: ``weight`` of the hit's
    score next to it, decaying with each further place. In a conversation the answer sits next to the turn
    that matched the question: the reply to it, or the turn that asked. When the hit itself asks a question
    (``hit_asks``), the memory right after it, its reply, gains ``SESSION_REPLY_FACTOR`` times as much."""
    lift = weight * hit_score * SESSION_CONTEXT_DECAY ** (abs(offset) - 1)
    return lift * SESSION_REPLY_FACTOR if hit_asks and offset == 1 else lift


_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def names_subject(query_words: set[str], subject: str | None) -> bool:
    """Whether the query names the item's subject: one of the subject's words (3 letters or more) is in it."""
    return bool(subject) and any(len(w) >= 3 and w in query_words for w in words(subject or ""))


def min_max(values: dict[str, float]) -> dict[str, float]:
    """Scale to 0–1; a single value (or all equal) maps to 1."""
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    if high - low < 1e-12:
        return {key: 1.0 for key in values}
    return {key: (value - low) / (high - low) for key, value in values.items()}


def fuse(keyword: dict[str, float], dense: dict[str, float], dense_weight: float = DENSE_WEIGHT) -> dict[str, float]:
    """Min-max normalised weighted sum; an item missing from one list scores 0 there."""
    k, d = min_max(keyword), min_max(dense)
    return {key: (1 - dense_weight) * k.get(key, 0.0) + dense_weight * d.get(key, 0.0) for key in k.keys() | d.keys()}


# The keyword score (``keyword_idf``, on by default): each query word a memory contains adds its rarity among the
# tenant's memories (BM25's inverse document frequency) times a saturating share of how often the memory uses
# it, with no length normalisation (BM25 with b = 0). Chosen on the LoCoMo dev conversations against
# PostgreSQL's ts_rank, which weighs every word alike (docs/benchmarks.md, 2026-12-02). engram/db/search.py
# computes the same sum in SQL to pick the candidates; ``keyword_relevance`` is its definition.
KEYWORD_K1 = 1.2
DOCUMENT_FREQUENCY_CAP = 10_000  # the counts behind the rarity stop here (bounded work for a large tenant)


def term_rarity(document_frequency: int, memories: int) -> float:
    """BM25's inverse document frequency of a word found in ``document_frequency`` of ``memories`` memories:
    ln(1 + (N − df + 0.5) / (df + 0.5)); above 0 for every df, highest for the rarest word."""
    n = max(memories, document_frequency)
    return math.log(1 + (n - document_frequency + 0.5) / (document_frequency + 0.5))


def keyword_relevance(terms: dict[str, tuple[float, int]], k1: float = KEYWORD_K1) -> float:
    """The keyword score of one memory: Σ rarity × tf·(k1 + 1)/(tf + k1) over the query words it contains
    (``terms``: word → (rarity, how often the memory has it))."""
    return sum(rarity * tf * (k1 + 1) / (tf + k1) for rarity, tf in terms.values() if tf > 0)


def keyword_reason(score: float, terms: dict[str, tuple[float, int]]) -> str:
    """How a keyword hit says why: its score and the query words it matched, the rarest first."""
    matched = sorted(terms.items(), key=lambda kv: (-kv[1][0], kv[0]))
    words = ", ".join(f"{term!r} rarity {rarity:.2f}" + (f" ×{tf}" if tf > 1 else "") for term, (rarity, tf) in matched)
    return f"keyword match {score:.3f} ({words})"
