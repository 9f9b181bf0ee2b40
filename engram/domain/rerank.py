"""The second stage of hybrid recall: a small linear model over what is known of each candidate once the
keyword and semantic lists are in, instead of a fixed weighted sum of the two normalised scores.

Each candidate gets a few features (``FEATURES``), computed from the two lists, the query and the memory
alone, so a candidate's score does not depend on anything but this recall. The relevance is the logistic of
``BIAS`` + Σ weight × feature, between 0 and 1. The weights were fitted offline on the LoCoMo dev
conversations (``python bench/rerank_fit.py``, docs/benchmarks.md) and are constants
here: the same query over the same memories always ranks the same way, and the reason of each hit names the
features that counted most for it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

FEATURES = (
    "keyword",  # the full-text rank, min-max normalised over the keyword list (0 when not in it)
    "semantic",  # the cosine similarity, min-max normalised over the semantic list (0 when not in it)
    "keyword_place",  # 1 / (1 + place in the keyword list / 10): 1 for the first, 0 when not in it
    "semantic_place",  # the same for the semantic list
    "semantic_gap",  # similarity − the best similarity of the list (the list's lowest when not in it)
    "both",  # found by both lists
    "subject",  # the query names the memory's subject
    "coverage",  # share of the query's content words (stemmed) that the memory's content has
    "length",  # log(1 + words in the content) / 5
)
# Fitted on the LoCoMo dev conversations (383 questions, 31,593 candidates) by
# ``python bench/rerank_fit.py /tmp/q-rerank-dev-candidates.json``, the dump written by
# ``cd bench && python locomo.py --split dev --candidates …`` at commit 6ef423e on 2026-12-02. Leaving one dev
# conversation out, it ranked the candidates at MRR 0.565 / R@10 0.735 against the weighted sum's 0.583 / 0.720,
# so the tenant setting ``reranker`` stays off by default (docs/benchmarks.md).
WEIGHTS: Mapping[str, float] = {
    "keyword": 2.1377,
    "semantic": 1.3110,
    "keyword_place": 1.1443,
    "semantic_place": 1.7177,
    "semantic_gap": 0.5567,
    "both": -0.2645,
    "subject": 1.4518,
    "coverage": 1.0998,
    "length": 3.1062,
}
BIAS = -10.2214
PLACE_SCALE = 10.0

# English function words: they do not count toward coverage.
STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing done down during each even ever few for from further get got
    had has have having he her here hers herself him himself his how i if in into is it its itself just like me
    more most much my myself no nor not now of off on once only or other our ours ourselves out over own really
    same she should so some such than that the their theirs them themselves then there these they thing things
    this those through to too under until up very was way we were what when where which while who whom whose why
    will with would you your yours yourself yourselves""".split()
)
_WORD = re.compile(r"[^\W_]+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """A light English stem: the longest of a few common suffixes removed, keeping at least three letters."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> set[str]:
    """The stems of the words of ``text`` that are not function words (lower-cased)."""
    return {stem(w) for w in (w.lower() for w in _WORD.findall(text)) if w not in STOP_WORDS}


@dataclass(frozen=True)
class Candidate:
    """What the first stage knows of one candidate."""

    content: str
    keyword: float | None  # the full-text rank, None when the keyword list did not find it
    semantic: float | None  # the cosine similarity, None when the semantic list did not find it
    subject_named: bool


def _places(scores: Mapping[str, float]) -> dict[str, int]:
    return {key: place for place, key in enumerate(sorted(scores, key=lambda k: (-scores[k], k)))}


def features(
    query: str, candidates: Mapping[str, Candidate], keyword: Mapping[str, float], semantic: Mapping[str, float]
) -> dict[str, list[float]]:
    """The feature vector (in ``FEATURES`` order) of each candidate, by id."""
    query_stems = content_stems(query)
    k_low, k_high = (min(keyword.values()), max(keyword.values())) if keyword else (0.0, 0.0)
    s_low, s_high = (min(semantic.values()), max(semantic.values())) if semantic else (0.0, 0.0)
    k_place, s_place = _places(keyword), _places(semantic)
    out = {}
    for key, c in candidates.items():
        k = c.keyword
        s = c.semantic
        words = _WORD.findall(c.content)
        shared = len(query_stems & content_stems(c.content)) / len(query_stems) if query_stems else 0.0
        out[key] = [
            (k - k_low) / (k_high - k_low) if k is not None and k_high > k_low else float(k is not None),
            (s - s_low) / (s_high - s_low) if s is not None and s_high > s_low else float(s is not None),
            1 / (1 + k_place[key] / PLACE_SCALE) if key in k_place else 0.0,
            1 / (1 + s_place[key] / PLACE_SCALE) if key in s_place else 0.0,
            (s if s is not None else s_low) - s_high,
            float(k is not None and s is not None),
            float(c.subject_named),
            shared,
            math.log1p(len(words)) / 5,
        ]
    return out


def relevance(vector: list[float]) -> float:
    """The model's relevance of one candidate, 0–1."""
    z = BIAS + sum(WEIGHTS[name] * value for name, value in zip(FEATURES, vector, strict=True))
    return 1 / (1 + math.exp(-z))


def explain(vector: list[float], top: int = 3) -> str:
    """The reason a reranked hit carries: its relevance and the features that added most to it."""
    parts = sorted(
        ((WEIGHTS[name] * value, name, value) for name, value in zip(FEATURES, vector, strict=True)),
        key=lambda p: (-p[0], p[1]),
    )
    named = ", ".join(f"{name} {value:.2f}" for contribution, name, value in parts[:top] if contribution > 0)
    return f"reranked {relevance(vector):.3f}" + (f" ({named})" if named else "")
