"""The learned contradiction judge beside the rules (docs/adr/0008-learned-contradiction-judge.md).

An L2-regularised logistic regression over 21 word and edit features of the two texts (with their e5 cosine), the rules'
verdict one-hot and the nearest labelled changes (``neighbours.py``: of the ten labelled pairs whose vectors moved most
alike, the share of contradictions, and the best cosine to a contradiction less the best to a compatible pair, counted
only as far as the two texts speak of one thing: ``one_thing``, ``gated``), fitted
on the labelled pairs of bench/data/conflicts by ``bench/contradiction_model.py --fit-all`` and shipped as package data
(``learned_judge.json``: the columns' means and scales, the weights, the threshold; ``learned_references.npz``: the
labelled directions). Without the two texts' own passage vectors of the references' profile, the neighbour columns read
their fitted means, adding nothing to the log-odds. ``judge_with_learned`` is what the conflicts consumer and the
scoring harness (tests/support/conflicts_eval.py) call: the rules' verdict when it is a contradiction; otherwise, when
the model's probability is at least the threshold, a ``contradiction`` verdict of rule ``learned_judge`` (whatever the
rules said: none, duplicate or refinement — the decision measured on a fresh batch was "rules flag it OR probability ≥
threshold"), its score the probability, its explanation the probability, the features that pushed it most and the
nearest labelled changes; else the rules' verdict.

The pairs handed over are candidates (cosine ≥ the conflict floor less the consumer's margin): the model was
fitted and measured on those only. It judges only pairs like the ones it was fitted on (``in_domain``, and the
words group within the range of the fitted rows, shipped with the weights): statements, not chat turns with
their speaker, questions, exclamations or other turns that read as chat (``chat.py``), nor texts past
``MAX_WORDS`` words; and not a pair the rules left unjudged at one of their bounds. Pure: no I/O but reading
the weights and the references once.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from engram.domain.conflict_rules import neighbours
from engram.domain.conflict_rules.chat import reads_as_chat
from engram.domain.conflict_rules.rules import DEFAULT_FLOOR, judge, not_one_claim
from engram.domain.conflict_rules.verdicts import Verdict
from engram.domain.conflict_rules.words import is_content, overlap, stem
from engram.domain.conflict_rules.work import Work

WEIGHTS_PATH = Path(__file__).with_name("learned_judge.json")
LEARNED_RULE = "learned_judge"
FEATURES = "words,rules,knngate"  # the feature groups the shipped weights were fitted on
KNN_GROUP = "knngate"  # the nearest labelled changes, counted as far as the pair speaks of one thing (one_thing)
MAX_WORDS = 60  # longer texts are left to the rules alone (the fitted texts have at most 15 words)
REASONS = 3  # features named in an explanation

WORD = re.compile(r"[a-z0-9]+(?:['’.][a-z0-9]+)*")
NUMBER_WORDS = set(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "half quarter dozen".split()
)
NEGATIONS = {
    "not", "no", "never", "none", "nobody", "nothing", "without", "cannot", "can't", "don't", "doesn't", "didn't",
    "isn't", "aren't", "wasn't", "weren't", "won't", "hasn't", "haven't", "n't", "nor",
}  # fmt: skip
CHANGE = {
    "longer", "anymore", "stopped", "quit", "switched", "moved", "replaced", "now", "instead", "nowadays",
    "dropped", "left", "gave", "cancelled", "canceled", "ended", "since", "became", "become", "changed",
    "relocated", "migrated", "retired", "sold", "closed", "new",
}  # fmt: skip
ADDITION = {
    "also", "too", "additionally", "plus", "visiting", "visit", "trip", "week", "planning", "plan", "plans",
    "sometimes", "occasionally", "backup", "alongside", "both", "another", "extra", "considering", "might",
}  # fmt: skip
HEDGES = {"think", "maybe", "probably", "pretty", "believe", "apparently", "guess", "around", "about"}
WORD_FEATURES = (
    "cosine",
    "jaccard",
    "only_existing",
    "only_new",
    "substitution",
    "new_adds_only",
    "length_ratio",
    "numbers_differ",
    "numbers_same",
    "names_differ",
    "negation_one_side",
    "change_new_only",
    "change_existing_only",
    "addition_new_only",
    "hedge_either",
    "spans_replaced",
    "spans_inserted",
    "spans_deleted",
    "one_replacement_only",
    "first_difference_at",
    "last_replacement_at",
)
VERDICTS = ("none", "contradiction", "refinement", "duplicate", "flagged")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower().replace("n't", " n't"))


def numbers(tokens: list[str]) -> set[str]:
    return {t for t in tokens if any(c.isdigit() for c in t) or t in NUMBER_WORDS}


def names(text: str) -> set[str]:
    """Capitalised words that do not start a sentence."""
    found = set()
    for sentence in re.split(r"[.!?:;]\s+", text):
        for token in re.findall(r"[A-Za-z][\w'’.-]*", sentence)[1:]:
            if token[0].isupper():
                found.add(token.lower())
    return found


def word_features(existing: str, new: str, cosine: float) -> list[float]:
    """The ``words`` group, in the order of ``WORD_FEATURES``."""
    a, b = words(existing), words(new)
    sa, sb = set(a), set(b)
    union = sa | sb
    only_a, only_b = sa - sb, sb - sa
    na, nb = numbers(a), numbers(b)
    ma, mb = names(existing), names(new)
    return [
        cosine,
        len(sa & sb) / len(union) if union else 1.0,
        float(np.log1p(len(only_a))),
        float(np.log1p(len(only_b))),
        float(min(len(only_a), len(only_b)) > 0),
        float(not only_a and bool(only_b)),
        min(len(a), len(b)) / max(len(a), len(b), 1),
        float(bool(na) and bool(nb) and na != nb),
        float(bool(na) and na == nb),
        float(bool(ma - mb) and bool(mb - ma)),
        float(bool(NEGATIONS & sa) != bool(NEGATIONS & sb)),
        float(bool(CHANGE & only_b)),
        float(bool(CHANGE & only_a)),
        float(bool(ADDITION & only_b)),
        float(bool(HEDGES & union)),
        *edit_features(a, b),
    ]


def _edits(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    return [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]


def edit_features(a: list[str], b: list[str]) -> list[float]:
    """How the word sequence changes from ``a`` to ``b``: spans replaced, inserted, deleted; whether the only
    change is one replaced span; where (0..1 along ``a``) the first change and the last replacement fall."""
    ops = _edits(a, b)
    kinds = Counter(op[0] for op in ops)
    length = max(len(a), 1)
    replaced = [op for op in ops if op[0] == "replace"]
    return [
        float(kinds["replace"]),
        float(kinds["insert"]),
        float(kinds["delete"]),
        float(len(ops) == 1 and kinds["replace"] == 1),
        ops[0][1] / length if ops else 1.0,
        replaced[-1][1] / length if replaced else -1.0,
    ]


def rule_features(label: str | None, flagged: bool) -> list[float]:
    """The ``rules`` group: the rules' verdict one-hot, and whether it opens a contradiction conflict."""
    label = label or "none"
    return [float(label == v) for v in VERDICTS[:4]] + [float(flagged)]


@dataclass
class Model:
    """A logistic regression on standardised columns: ``mean``, ``scale``, ``weights`` (intercept last)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # intercept last
    features: str
    lam: float
    threshold: float = 1.0
    low: np.ndarray | None = None  # the words group's range over the fitted rows (the domain it was fitted on)
    high: np.ndarray | None = None
    neutral: np.ndarray | None = None  # the nearest labelled changes' mean over the fitted rows (ungated; gated)

    def probability(self, x: np.ndarray) -> np.ndarray:
        z = (x - self.mean) / self.scale
        return np.asarray(1.0 / (1.0 + np.exp(-(z @ self.weights[:-1] + self.weights[-1]))))

    def contributions(self, x: np.ndarray) -> np.ndarray:
        """Each column's share of the log-odds of one row (its standardised value times its weight)."""
        return np.asarray((x - self.mean) / self.scale * self.weights[:-1])

    def within(self, words_row: np.ndarray) -> bool:
        """Whether a row's words group lies within the range of the fitted rows (always, without a range)."""
        if self.low is None or self.high is None:
            return True
        return bool(np.all((words_row >= self.low) & (words_row <= self.high)))

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "features": self.features,
            "lambda": self.lam,
            "threshold": self.threshold,
            "columns": {"words": list(WORD_FEATURES), "rules": [f"rules_{v}" for v in VERDICTS]}
            | ({KNN_GROUP: list(neighbours.COLUMNS)} if KNN_GROUP in self.features else {}),
            "mean": [round(float(v), 7) for v in self.mean],
            "scale": [round(float(v), 7) for v in self.scale],
            "weights": [round(float(v), 7) for v in self.weights],
        }
        if self.neutral is not None:
            out["neutral"] = [round(float(v), 7) for v in self.neutral]
        if self.low is not None and self.high is not None:  # widened to 7 digits: every fitted row stays within
            out["low"] = [float(np.floor(v * 1e7) / 1e7) for v in self.low]
            out["high"] = [float(np.ceil(v * 1e7) / 1e7) for v in self.high]
        return out

    @classmethod
    def from_json(cls, raw: dict[str, object]) -> Model:
        arr = {k: np.array(raw[k], dtype=np.float64) for k in ("mean", "scale", "weights")}
        bounds = {k: np.array(raw[k], dtype=np.float64) if k in raw else None for k in ("low", "high", "neutral")}
        return cls(arr["mean"], arr["scale"], arr["weights"], str(raw["features"]), float(raw["lambda"]),  # type: ignore[arg-type]
                   float(raw["threshold"]), bounds["low"], bounds["high"], bounds["neutral"])  # type: ignore[arg-type]  # fmt: skip


@lru_cache(maxsize=1)
def shipped() -> Model:
    """The weights shipped with the package, checked against the columns this module computes."""
    raw = json.loads(WEIGHTS_PATH.read_text())
    model = Model.from_json(raw)
    columns = len(WORD_FEATURES) + len(VERDICTS) + len(neighbours.COLUMNS)
    if model.features != FEATURES or raw.get("columns", {}).get("words") != list(WORD_FEATURES):
        raise ValueError(f"{WEIGHTS_PATH.name}: fitted on other features ({model.features})")
    if not (len(model.mean) == len(model.scale) == len(model.weights) - 1 == columns):
        raise ValueError(f"{WEIGHTS_PATH.name}: {len(model.mean)} columns, expected {columns}")
    return model


def features(
    existing: str, new: str, similarity: float, rules: Verdict | None, near: neighbours.Nearest | None = None,
    model: Model | None = None,
) -> np.ndarray:  # fmt: skip
    """The row ``model`` (the shipped one) reads: the words group, the rules' verdict (a contradiction verdict of
    the rules is one that opens a conflict), then, when it was fitted on them, the nearest labelled changes
    (their fitted means without ``near``)."""
    model = shipped() if model is None else model
    label = rules.label if rules is not None else None
    row = word_features(existing, new, similarity) + rule_features(label, label == "contradiction")
    if KNN_GROUP in model.features:
        row += gated(near, one_thing(existing, new), model)
    return np.array(row)


def nearest(
    vectors: tuple[np.ndarray | None, np.ndarray | None] | None,
    profile: str = neighbours.PROFILE,
    references: neighbours.References | None = None,
) -> neighbours.Nearest | None:
    """The nearest labelled changes (among ``references``, the shipped ones) to the pair whose own passage vectors
    (existing, new) are ``vectors``, or None without two usable vectors of the references' profile."""
    if vectors is None:
        return None
    references = neighbours.shipped() if references is None else references
    towards = neighbours.direction(*vectors) if profile == references.profile else None
    if towards is None or towards.shape[0] != references.directions.shape[1]:
        return None
    return neighbours.nearest(towards, references)


def probability(
    existing: str, new: str, similarity: float, rules: Verdict | None, model: Model | None = None,
    near: neighbours.Nearest | None = None,
) -> float:  # fmt: skip
    """The shipped model's probability that ``new`` contradicts ``existing``."""
    model = shipped() if model is None else model
    return float(model.probability(features(existing, new, similarity, rules, near, model)))


def judge_with_learned(
    existing: str,
    new: str,
    similarity: float,
    *,
    floor: float = DEFAULT_FLOOR,
    work: Work | None = None,
    learned: bool = True,
    model: Model | None = None,
    vectors: tuple[np.ndarray | None, np.ndarray | None] | None = None,
    profile: str = neighbours.PROFILE,
    references: neighbours.References | None = None,
) -> Verdict | None:
    """The rules' verdict on a candidate pair (``judge``), or the learned judge's contradiction where the rules
    saw none and the model's probability reaches its threshold (see the module docstring). ``vectors``: the two
    texts' own passage vectors (existing, new) under the embedding ``profile``, for the nearest labelled changes
    among ``references`` (the shipped ones; the scoring harness leaves a labelled pair's own batch out)."""
    work = Work() if work is None else work
    verdict = judge(existing, new, similarity, floor=floor, work=work)
    if not learned or (verdict is not None and verdict.label == "contradiction") or work.gave_up is not None:
        return verdict
    if not in_domain(existing, new, similarity) or not_one_claim(existing, new):
        return verdict  # a past state next to the present one, two numbered things: no change to read
    model = shipped() if model is None else model
    # in_domain: the two share a content stem, so the gate (one_thing, in ``features``) is open at least a little
    near = nearest(vectors, profile, references) if KNN_GROUP in model.features else None
    row = features(existing, new, similarity, verdict, near, model)
    if not model.within(row[: len(WORD_FEATURES)]):
        return verdict
    p = float(model.probability(row))
    if p < model.threshold:
        return verdict
    return Verdict("contradiction", LEARNED_RULE, round(p, 3), explain(existing, new, row, p, model, near))


def in_domain(existing: str, new: str, similarity: float) -> bool:
    """Whether both texts are of the kind the model was fitted on: statements, not turns of a conversation
    (``chat.reads_as_chat``: stored with their speaker, a question or exclamation, the listener addressed, a
    feeling voiced, a reply word opening them), of at most ``MAX_WORDS`` words, that share a content word (a
    contradiction speaks of one thing). Between chat turns, whose e5 vectors sit close whatever they say, the
    model saw nothing like them and flags most pairs, pleasantries stored without their speaker included;
    between two unrelated short statements that happen to sit close ("Production deploys happen on Tuesdays
    after the standup." / "The nightly job retries 3 times.") it reads their many one-sided words as a change
    (docs/benchmarks.md)."""
    if not np.isfinite(similarity):
        return False
    for text in (existing, new):
        if reads_as_chat(text) or len(words(text)) > MAX_WORDS:
            return False
    return bool(_content_stems(existing) & _content_stems(new))


def one_thing(existing: str, new: str) -> float:
    """How far the two texts speak of one thing: the share of the smaller one's content stems that the other
    has too (``words.overlap``), the gate of the nearest labelled changes. A pair's direction of change says
    which words left and came, not whether the claim was denied: another fact of the same subject ("The team
    deploys the billing service every Thursday afternoon." / "The billing service keeps its logs for ninety
    days.", 2 of 6 stems shared) moves as the "no longer" contradictions that drop an "every …" phrase do
    (docs/benchmarks.md, "knngate")."""
    return overlap(frozenset(_content_stems(existing)), frozenset(_content_stems(new)))


def gated(near: neighbours.Nearest | None, gate: float, model: Model) -> list[float]:
    """The ``knngate`` columns: the nearest labelled changes drawn towards ``model.neutral`` (their mean over the
    fitted rows) as ``gate`` falls from 1 to 0; without ``near`` (no two vectors of the references' profile),
    the columns' fitted means, adding nothing to the log-odds."""
    if near is None or model.neutral is None:
        return [float(v) for v in model.mean[-len(neighbours.COLUMNS) :]]
    return [float(m + gate * (x - m)) for m, x in zip(model.neutral, near.row, strict=True)]


def _content_stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if is_content(w)}


def explain(
    existing: str, new: str, row: np.ndarray, p: float, model: Model, near: neighbours.Nearest | None = None
) -> str:
    """The probability, the word features that pushed it up most, said in words, and the nearest labelled
    changes (how many of them are contradictions, the nearest few by id)."""
    share = model.contributions(row)[: len(WORD_FEATURES)]
    order = [int(i) for i in np.argsort(-share, kind="stable") if share[i] > 0][:REASONS]
    said = [_describe(WORD_FEATURES[i], float(row[i]), existing, new) for i in order]
    text = f"learned judge {p:.2f} (threshold {model.threshold:.2f}): " + ", ".join(said)
    return text + (f"; {near.describe()}" if near is not None else "")


def _quote(tokens: list[str]) -> str:
    text = " ".join(tokens)
    return f"'{text if len(text) <= 40 else text[:39] + '…'}'"


def _each(found: set[str]) -> str:
    return ", ".join(f"'{w}'" for w in sorted(found)[:4]) or "–"


def _describe(name: str, value: float, existing: str, new: str) -> str:
    a, b = words(existing), words(new)
    sa, sb = set(a), set(b)
    on = value > 0
    if name == "cosine":
        return f"the texts are close (cosine {value:.2f})"
    if name == "jaccard":
        return f"they share {value:.0%} of their words"
    if name in ("only_existing", "only_new"):
        count = len(sa - sb) if name == "only_existing" else len(sb - sa)
        return f"{count} word{'s' * (count != 1)} only in the {name.removeprefix('only_')} memory"
    if name == "substitution":
        return "each has words the other lacks" if on else "one only adds to the other"
    if name == "new_adds_only":
        return "the new memory only adds words" if on else "the new memory does not only add words"
    if name == "length_ratio":
        return f"lengths alike ({value:.0%})"
    if name == "numbers_differ":
        na, nb = numbers(a), numbers(b)
        return f"numbers differ ({_each(na - nb)} → {_each(nb - na)})" if on else "no number differs"
    if name == "numbers_same":
        return "the same numbers" if on else "not the same numbers"
    if name == "names_differ":
        ma, mb = names(existing), names(new)
        return f"names differ ({_each(ma - mb)} → {_each(mb - ma)})" if on else "no name differs"
    if name == "negation_one_side":
        return "a negation on one side only" if on else "no negation on one side only"
    if name in ("change_new_only", "change_existing_only", "addition_new_only"):
        pool, side, other = {
            "change_new_only": (CHANGE, "new", sb - sa),
            "change_existing_only": (CHANGE, "existing", sa - sb),
            "addition_new_only": (ADDITION, "new", sb - sa),
        }[name]
        if on:
            return f"{_each(pool & other)} only in the {side} memory"
        kind = "addition" if pool is ADDITION else "change"
        return f"no word of {kind} only in the {side} memory"
    if name == "hedge_either":
        return f"a hedge ({_each(HEDGES & (sa | sb))})" if on else "no hedge"
    if name in ("spans_replaced", "spans_inserted", "spans_deleted"):
        count = int(value)
        return f"{count} span{'s' * (count != 1)} {name.removeprefix('spans_')}"
    if name == "one_replacement_only":
        if not on:
            return "not a single replaced span"
        _, i1, i2, j1, j2 = _edits(a, b)[0]
        return f"one span replaced ({_quote(a[i1:i2])} → {_quote(b[j1:j2])})"
    if name == "first_difference_at":
        return "they differ from the first word" if value == 0 else f"the first change {value:.0%} into the text"
    return f"the last replaced span {value:.0%} into the text" if value >= 0 else "no replaced span"
