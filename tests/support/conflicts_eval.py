"""Scoring contradiction detection on the labelled pairs of bench/data/conflicts the way the conflicts consumer
judges a pair: the e5 passage vectors of both memories (committed in vectors.npz), the candidate floor
(``conflict_similarity_floor`` less the consumer's margin), ``conflict_rules.judge_with_learned`` at the floor
(the rules, then the learned judge, given both texts' vectors) and ``conflict_rules.outcome`` (two memories of
one author, not turns of one session). Used by
bench/contradictions.py and by the floors in tests/unit/test_contradiction_quality.py."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from engram.domain import conflict_rules
from engram.domain.conflict_rules import neighbours

PAIRS = Path(__file__).resolve().parents[2] / "bench" / "data" / "conflicts" / "pairs.jsonl"
# the batches of labelled pairs, in the order they were written (bench/data/conflicts/README.md)
BATCHES = {
    "1": PAIRS,
    "2": PAIRS.parent / "pairs-2.jsonl",
    "3": PAIRS.parent / "pairs-3.jsonl",
    "4": PAIRS.parent / "pairs-4.jsonl",
    "5": PAIRS.parent / "pairs-5.jsonl",
    "6": PAIRS.parent / "pairs-6.jsonl",
    "7": PAIRS.parent / "pairs-7.jsonl",
    "8": PAIRS.parent / "pairs-8.jsonl",
    "9": PAIRS.parent / "pairs-9.jsonl",
    "10": PAIRS.parent / "pairs-10.jsonl",
    "11": PAIRS.parent / "pairs-11.jsonl",
    "12": PAIRS.parent / "pairs-12.jsonl",
    "13": PAIRS.parent / "pairs-13.jsonl",  # held out: scored with figures only (bench/data/conflicts/README.md)
}
# batches 1, 2 and 3 are tuning data in full since 2026-12-02 evening, batch 4 since that night (all of it
# ``test`` by its split field, but read while the rules were changed: bench/data/conflicts/README.md), batch 5 since
# 2026-12-03, batch 6 since that day's second round, batches 7 and 8 (each scored once held out) since that evening,
# batch 9 since that late evening and batches 10, 11 and 12 since that night
TUNING = "1,2,3,4,5,6,7,8,9,10,11,12"
VECTORS = PAIRS.parent / "vectors.npz"
FLOOR = 0.85  # Settings.conflict_similarity_floor's default
CANDIDATE_MARGIN = 0.05  # services/conflicts/service.py
AUTHORITY = 50


@dataclass(frozen=True)
class Pair:
    id: str
    split: str
    label: str  # contradiction | compatible
    type: str
    existing: str
    new: str


@dataclass(frozen=True)
class Judged:
    pair: Pair
    similarity: float
    candidate: bool  # similar enough for the consumer to hand the pair to the rules
    verdict: conflict_rules.Verdict | None
    flagged: bool  # a contradiction conflict is opened


@dataclass
class Scores:
    judged: list[Judged] = field(default_factory=list)

    def _count(self, truth: bool, flagged: bool) -> int:
        return sum(1 for j in self.judged if (j.pair.label == "contradiction") == truth and j.flagged == flagged)

    @property
    def true_positives(self) -> int:
        return self._count(True, True)

    @property
    def false_positives(self) -> int:
        return self._count(False, True)

    @property
    def false_negatives(self) -> int:
        return self._count(True, False)

    @property
    def true_negatives(self) -> int:
        return self._count(False, False)

    @property
    def precision(self) -> float:
        flagged = self.true_positives + self.false_positives
        return self.true_positives / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        actual = self.true_positives + self.false_negatives
        return self.true_positives / actual if actual else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def by_type(self) -> dict[str, tuple[int, int]]:
        """type → (pairs flagged as contradictions, pairs)."""
        total, flagged = Counter[str](), Counter[str]()
        for j in self.judged:
            total[j.pair.type] += 1
            flagged[j.pair.type] += j.flagged
        return {t: (flagged[t], total[t]) for t in sorted(total)}


def load_pairs(split: str | None = None, batch: str = "1") -> list[Pair]:
    """The pairs of one batch (``"1"``, ``"2"``, ``"3"``), of several (``"1,2"``) or of all of them (``"all"``), of
    one split or of both."""
    files = list(BATCHES.values()) if batch == "all" else [BATCHES[b] for b in batch.split(",")]
    rows = [Pair(**json.loads(line)) for path in files for line in path.read_text().splitlines() if line.strip()]
    return [p for p in rows if split in (None, "all", p.split)]


def stored_vectors() -> dict[str, np.ndarray]:
    """The committed passage vectors of the pairs' texts (``python bench/contradictions.py vectors``)."""
    with np.load(VECTORS, allow_pickle=False) as data:
        return {str(t): v.astype(np.float32) for t, v in zip(data["texts"], data["vectors"], strict=True)}


def similarity(vectors: dict[str, np.ndarray], a: str, b: str) -> float:
    x, y = vectors[a], vectors[b]
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


@lru_cache(maxsize=16)
def references_without(batch: str | None) -> neighbours.References:
    """The shipped labelled directions but those of ``batch`` (all of them for None)."""
    shipped = neighbours.shipped()
    return shipped if batch is None else shipped.subset(shipped.batches != batch)


def references_for(pair: Pair) -> neighbours.References:
    """The references a labelled pair is judged against: all but its own batch's, as the judge's training rows
    met them (a pair of a batch the references do not hold meets them all)."""
    shipped = neighbours.shipped()
    own = shipped.batches[shipped.ids == pair.id]
    return references_without(str(own[0]) if len(own) else None)


def judge_pair(pair: Pair, vectors: dict[str, np.ndarray], floor: float = FLOOR, *, learned: bool = True) -> Judged:
    """The pair as the consumer judges it: the rules, then the learned judge with both texts' own passage vectors
    (``learned=False``: the rules alone, as with ``ENGRAM_CONFLICT_LEARNED_JUDGE=false``); the nearest labelled
    changes never from the pair's own batch (``references_for``)."""
    sim = similarity(vectors, pair.existing, pair.new)
    candidate = sim >= floor - CANDIDATE_MARGIN
    verdict = (
        conflict_rules.judge_with_learned(
            pair.existing,
            pair.new,
            sim,
            floor=floor,
            learned=learned,
            vectors=(vectors[pair.existing], vectors[pair.new]),
            references=references_for(pair) if learned else None,
        )
        if candidate
        else None
    )
    flagged = False
    if verdict is not None and verdict.label == "contradiction":
        plan = conflict_rules.outcome(verdict, AUTHORITY, AUTHORITY)
        flagged = plan.opens_conflict  # between equals a conflict for a reviewer, nothing disputed
    return Judged(pair, sim, candidate, verdict, flagged)


def score(pairs: list[Pair], vectors: dict[str, np.ndarray], floor: float = FLOOR, *, learned: bool = True) -> Scores:
    return Scores([judge_pair(p, vectors, floor, learned=learned) for p in pairs])


def _word_jaccard(a: str, b: str) -> float:
    x, y = set(re.findall(r"[a-z0-9]+", a.lower())), set(re.findall(r"[a-z0-9]+", b.lower()))
    return len(x & y) / len(x | y) if x | y else 1.0


def near_copies(pairs: list[Pair], tuning: list[Pair], vectors: dict[str, np.ndarray]) -> set[str]:
    """Ids of ``pairs`` that copy a tuning pair of the same label and type closely: both texts share at least
    half their words with that pair's (word Jaccard), or both sit at cosine 0.95 or more from its texts. The
    third batch was written without looking at the second, yet a few of its pairs came out near the same; they
    are reported apart so that the held-out figure can be read without them (bench/data/conflicts/README.md)."""
    found = set()
    for p in pairs:
        for q in tuning:
            if (p.label, p.type) != (q.label, q.type):
                continue
            words = min(_word_jaccard(p.existing, q.existing), _word_jaccard(p.new, q.new))
            cosine = min(similarity(vectors, p.existing, q.existing), similarity(vectors, p.new, q.new))
            if words >= 0.5 or cosine >= 0.95:
                found.add(p.id)
                break
    return found
