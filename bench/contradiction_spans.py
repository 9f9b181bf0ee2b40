"""Does comparing the *values* of a claim with the embedding model help the learned contradiction judge on a writer
it never saw? An experiment for issue #16, measured by the folds of bench/contradiction_model.py, not by pooled fit
(docs/benchmarks.md has the figures: not kept).

    python bench/contradiction_spans.py [--variants baseline,spans,knn,knntext,...] [--k 10] [--target 0.95]
    python bench/contradiction_spans.py --no-forward --no-lobo --cpu 300 --by-type

For each pair the two texts' word sequences (``learned.words``) are aligned on their stems (difflib); the content
words (no stop word, no negation) of each side outside the aligned runs are that side's *value span* (what
changed), the aligned words the *frame* (the subject and attribute both texts share). The spans, the frame and
the prototypes below are embedded in-process as e5 passages (multilingual-e5-small, the product's model) and
cached under /tmp/ctx-slots-spans. New feature groups for the judge of bench/contradiction_model.py:

``spans`` (scalars): the cosine of the two value spans (two cities, two durations sit closer than a city and a
duration), and the same cosine in four bands (paraphrased values sit highest); each span's cosine with the
*other* whole text (a paraphrase's span is said in the other text, a new value is not); each whole text's cosine
with the frame (how much of the text the shared words carry); whether each span is empty (one side only adds or
only drops words); the text cosine less the span cosine; and whether both spans read as the same kind of value:
for each of seven kinds (a person, a place, an amount or count, a date or time, a tool or company, a state or
setting, a duration or rate), the lower of the two spans' cosines with that kind's prototype, the highest over
the kinds, and which kind that is, one-hot.

``spanvec``: the product of the two spans' vectors (384 columns), tried as a wider variant.

Neighbour groups (``with_knn``), computed from the training part of each fold only: among the ``--k`` training
pairs whose change is most like this pair's, the share of contradictions, and the best similarity to a
contradiction less the best to a compatible pair. ``knn`` compares changes by their value spans (old with old,
new with new), ``knnspandiff`` by the direction from the old span's vector to the new one's, ``knntext`` by the
direction from the old text's stored passage vector to the new one's (no extra embedding).

Word-feature subsets (is it the word features that overfit each writer?): ``core`` — the eleven of the words
group that name no word list and no edit position (cosine, Jaccard, one-sided counts, substitution, adds-only,
length ratio, numbers and names differ, negation on one side, numbers the same).

Decisions compared per fold, each fitted and thresholded exactly as ``contradiction_model.choose`` does (λ and
threshold inside the training batches, the threshold the lowest keeping pooled precision of "rules OR model" ≥
``--target`` there): the rules alone and "rules OR model" for each feature variant. Validations: forward folds
(batch k, k = 5, 6, 7, judged by the rules of its day, ``HISTORY`` plus batch 7 at c18e392, the rules it was
scored with once; the model fitted on batches 1..k-1 judged by those same rules) and leave one batch out over
batches 1–7 with today's rules. ``--cpu PAIRS``: CPU-ms per pair for the spans' extra embeddings (the model
loaded once with one OpenMP thread and a passive wait policy, as a pipeline consumer runs it; each pair's spans
and frame embedded in one call; process time) and for the ``knntext`` group.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contradiction_model as cm

from engram.domain.conflict_rules.learned import WORD_FEATURES, words
from engram.domain.conflict_rules.words import is_content, stem

BATCHES = ("1", "2", "3", "4", "5", "6", "7")
FORWARD = {"5": cm.HISTORY["5"], "6": cm.HISTORY["6"], "7": "c18e392"}  # batch 7 was scored once at c18e392
TODAY_RULES = "d80515b"  # the last change to engram/domain/conflict_rules (the chat gate)
CACHE = Path(tempfile.gettempdir()) / "ctx-slots-spans"
DIMENSIONS = 384
# a few plain examples of each kind of value, none taken from the labelled batches
PROTOTYPES = {
    "person": ["Anna", "Tom Becker", "my sister", "Dr Okafor", "the new manager"],
    "place": ["Madrid", "in Leeds", "the Oslo office", "Canada", "near the station"],
    "amount": ["12", "£40", "300 users", "five kilos", "2.5 GB"],
    "date": ["on Monday", "at 9:30", "in March", "2026-05-01", "next Thursday evening"],
    "tool": ["Slack", "PostgreSQL", "AWS", "Salesforce", "the Acme plugin"],
    "state": ["enabled", "disabled", "open", "closed", "public"],
    "duration": ["every week", "twice a day", "for two hours", "monthly", "10 minutes"],
}
BINS = ((0.0, 0.85), (0.85, 0.90), (0.90, 0.94), (0.94, 1.01))  # the span cosine in bands: not monotone
K = 10  # neighbours of the knn group
CORE = WORD_FEATURES[: WORD_FEATURES.index("negation_one_side") + 1]  # the 11 that name no word list nor edit place
VARIANTS = {
    "baseline": "words,rules",
    "spans": "words,rules,spans",
    "spans+spanvec": "words,rules,spans,spanvec",
    "core": "core,rules",
    "core+spans": "core,rules,spans",
    "rules+spans": "rules,spans",
    "rules+knntext": "rules,knntext",
    "knn": "words,rules,knn",
    "spans+knn": "words,rules,spans,knn",
    "knntext": "words,rules,knntext",
    "knnspandiff": "words,rules,knnspandiff",
}


def split(existing: str, new: str) -> tuple[str, str, str]:
    """The existing text's value span, the new text's (their content words: no stop word, no negation), and the
    frame (the words aligned between them)."""
    a, b = words(existing), words(new)
    ops = difflib.SequenceMatcher(None, [stem(w) for w in a], [stem(w) for w in b], autojunk=False).get_opcodes()
    span_a = [w for tag, i1, i2, _, _ in ops if tag in ("replace", "delete") for w in a[i1:i2] if is_content(w)]
    span_b = [w for tag, _, _, j1, j2 in ops if tag in ("replace", "insert") for w in b[j1:j2] if is_content(w)]
    frame = [w for tag, i1, i2, _, _ in ops if tag == "equal" for w in a[i1:i2]]
    return " ".join(span_a), " ".join(span_b), " ".join(frame)


class Embedder:
    """e5 passage vectors of short texts, unit length, cached on disk one file per text set."""

    def __init__(self) -> None:
        self._model = None

    def model(self):  # type: ignore[no-untyped-def]
        if self._model is None:
            from engram.embeddings import model_threads

            self._model = model_threads.load_e5()  # idle OpenMP threads sleep, as in the product
            model_threads.set_threads(self._model, 1)  # one thread, as a pipeline consumer runs it
        return self._model

    def vectors(self, texts: list[str]) -> dict[str, np.ndarray]:
        distinct = sorted({t for t in texts if t})
        key = hashlib.sha256("\x00".join(distinct).encode()).hexdigest()[:24]
        path = CACHE / f"{key}.npy"
        if path.exists():
            matrix = np.load(path)
        else:
            rows = [np.atleast_2d(np.asarray(self.model().passage(distinct[i : i + 64]), dtype=np.float32))
                    for i in range(0, len(distinct), 64)]  # fmt: skip
            matrix = np.vstack(rows) if rows else np.zeros((0, DIMENSIONS), dtype=np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            CACHE.mkdir(parents=True, exist_ok=True)
            np.save(path, matrix)
        return dict(zip(distinct, matrix.astype(np.float64), strict=True))


def prototypes(embedder: Embedder) -> np.ndarray:
    """One unit vector per kind of value: the mean of its examples' vectors."""
    known = embedder.vectors([t for examples in PROTOTYPES.values() for t in examples])
    rows = [np.mean([known[t] for t in examples], axis=0) for examples in PROTOTYPES.values()]
    return np.array([r / np.linalg.norm(r) for r in rows])


def span_features(
    a: np.ndarray, b: np.ndarray, sa: np.ndarray | None, sb: np.ndarray | None, frame: np.ndarray | None,
    kinds: np.ndarray,
) -> tuple[list[float], np.ndarray]:  # fmt: skip
    """The ``spans`` scalars and the ``spanvec`` columns of one pair (``None``: that text is empty)."""
    zero = np.zeros(DIMENSIONS)
    both = sa is not None and sb is not None
    span_cos = float(sa @ sb) if both else 0.0  # type: ignore[operator]
    kind_a = kinds @ sa if sa is not None else np.zeros(len(kinds))
    kind_b = kinds @ sb if sb is not None else np.zeros(len(kinds))
    shared = np.minimum(kind_a, kind_b) if both else np.zeros(len(kinds))
    best = int(np.argmax(shared))
    onehot = [float(both and i == best) for i in range(len(kinds))]
    scalars = [
        span_cos,
        float(sa @ b) if sa is not None else 0.0,
        float(sb @ a) if sb is not None else 0.0,
        float(frame @ a) if frame is not None else 0.0,
        float(frame @ b) if frame is not None else 0.0,
        float(sa is None),
        float(sb is None),
        float(a @ b) - span_cos if both else 0.0,
        float(shared.max()) if both else 0.0,
        *onehot,
        *[float(both and low <= span_cos < high) for low, high in BINS],
    ]
    return scalars, (sa * sb if both else zero)  # type: ignore[operator]


def add_spans(rows: list[cm.Row], embedder: Embedder) -> None:
    parts = [split(r.pair.existing, r.pair.new) for r in rows]
    known = embedder.vectors([t for p in parts for t in p])
    kinds = prototypes(embedder)
    for r, (x, y, f) in zip(rows, parts, strict=True):
        a = cm._VECTORS_CACHE[r.pair.existing].astype(np.float64)
        b = cm._VECTORS_CACHE[r.pair.new].astype(np.float64)
        a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
        scalars, vec = span_features(a, b, known.get(x), known.get(y), known.get(f), kinds)
        r.features["spans"] = np.array(scalars)
        r.features["spanvec"] = vec
        r.features["sa"] = known.get(x, np.zeros(DIMENSIONS))
        r.features["sb"] = known.get(y, np.zeros(DIMENSIONS))
        r.features["textdiff"] = _unit(b - a)
        r.features["spandiff"] = _unit(r.features["sb"] - r.features["sa"])
        index = [WORD_FEATURES.index(c) for c in CORE]
        r.features["core"] = r.features["words"][index]


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return v / n if n > 1e-12 else v


def with_knn(rows: list[cm.Row], reference: list[cm.Row], own_batch_apart: bool) -> list[cm.Row]:
    """The neighbour groups: among the ``K`` reference pairs whose change is most like this pair's, the share of
    contradictions, and the highest such similarity to a contradiction less the highest to a compatible pair.
    How alike two changes are: ``knn``, the mean of the cosines of the two old value spans and of the two new
    ones; ``knntext``, the cosine of the two pairs' directions of change (new text's vector less the old's, the
    stored passage vectors, no extra embedding); ``knnspandiff``, the same with the value spans' vectors.
    ``own_batch_apart``: a reference pair of the row's own batch is never its neighbour (the training rows'
    features, as a fresh batch would meet them)."""
    label = cm.truth(reference)
    batch = np.array([r.batch for r in reference])
    spans = np.hstack(
        [np.array([r.features["sa"] for r in reference]), np.array([r.features["sb"] for r in reference])]
    )
    spaces = {
        "knn": (spans / 2, ("sa", "sb")),
        "knntext": (np.array([r.features["textdiff"] for r in reference]), ("textdiff",)),
        "knnspandiff": (np.array([r.features["spandiff"] for r in reference]), ("spandiff",)),
    }  # fmt: skip
    out = []
    for r in rows:
        groups = {}
        for group, (matrix, keys) in spaces.items():
            similar = matrix @ np.concatenate([r.features[k] for k in keys])
            if own_batch_apart:
                similar = np.where(batch == r.batch, -np.inf, similar)
            top = np.argsort(-similar, kind="stable")[:K]
            pos, neg = similar[label == 1], similar[label == 0]
            best_pos = np.max(pos[np.isfinite(pos)], initial=-1.0)
            best_neg = np.max(neg[np.isfinite(neg)], initial=-1.0)
            groups[group] = np.array([float(label[top].mean()), float(best_pos - best_neg)])
        out.append(cm.Row(r.pair, r.batch, r.judged, {**r.features, **groups}))
    return out


def run(splits: list[tuple[list[cm.Row], list[cm.Row]]], variants: list[str], target: float) -> None:
    """Rules alone and rules OR model for each variant, per held-out batch and pooled."""
    results: dict[str, list[np.ndarray]] = {"rules": []}
    ys = []
    header = "| held out | " + " | ".join(["rules", *variants]) + " |"
    print(header)
    print("|" + "---|" * (len(variants) + 2))
    for train, test in splits:
        if any("knn" in VARIANTS[v] for v in variants):  # fitted on the training part only
            train, test = with_knn(train, train, True), with_knn(test, train, False)
        y = cm.truth(test)
        ys.append(y)
        cells = []
        flagged = np.array([r.judged.flagged for r in test])
        results["rules"].append(flagged)
        cells.append(_cell(flagged, y))
        for name in variants:
            features = VARIANTS[name]
            model = cm.choose(train, features, target, rules=True)
            decision = cm.decide(test, model.probability(cm.design(test, features)), model.threshold, rules=True)
            results.setdefault(name, []).append(decision)
            cells.append(_cell(decision, y) + f" (λ {model.lam:g}, t {model.threshold:.2f})")
        print(f"| {test[0].batch} | " + " | ".join(cells) + " |")
    y_all = np.concatenate(ys)
    pooled = [_cell(np.concatenate(results[name]), y_all, counts=True) for name in ["rules", *variants]]
    print("| pooled | " + " | ".join(pooled) + " |")
    sys.stdout.flush()


def _cell(flagged: np.ndarray, y: np.ndarray, counts: bool = False) -> str:
    precision, recall, tp, fp, fn = cm.pr(flagged, y)
    return f"{precision:.3f} / {recall:.3f}" + (f" ({tp}/{fp}/{fn})" if counts else "")


def forward(rows: list[cm.Row], variants: list[str], target: float, folds: dict[str, str] = FORWARD) -> None:
    print(f"\nforward folds, the rules of their day; target precision {target}; cells P / R")
    splits = []
    with tempfile.TemporaryDirectory(prefix="ctx-slots-rules-") as tmp:
        for held, commit in folds.items():
            chosen = [r for r in rows if r.batch <= held]
            triples = [(r.pair.existing, r.pair.new, r.judged.similarity) for r in chosen]
            verdicts = cm.rules_at(commit, Path(tmp), triples)
            rejudged = [cm._rejudged(r, label, flagged) for r, (label, flagged) in zip(chosen, verdicts, strict=True)]
            splits.append(([r for r in rejudged if r.batch < held], [r for r in rejudged if r.batch == held]))
    run(splits, variants, target)


def leave_one_out(rows: list[cm.Row], variants: list[str], target: float) -> None:
    print(f"\nleave one batch out over 1-7, today's rules; target precision {target}; cells P / R")
    run([([r for r in rows if r.batch != b], [r for r in rows if r.batch == b]) for b in BATCHES], variants, target)


def cpu(rows: list[cm.Row], embedder: Embedder, pairs: int) -> None:
    """CPU-ms per pair for the spans' embeddings: each pair's spans and frame in one model call, as a consumer
    would embed them next to the pair; the split and the features apart."""
    model = embedder.model()
    model.passage(["warm up"])
    chosen = rows[:pairs]
    started = time.process_time()
    parts = [split(r.pair.existing, r.pair.new) for r in chosen]
    split_ms = (time.process_time() - started) * 1000 / len(chosen)
    started = time.process_time()
    for p in parts:
        texts = [t for t in p if t]
        if texts:
            model.passage(texts)
    embed_ms = (time.process_time() - started) * 1000 / len(chosen)
    started_wall = time.monotonic()
    for p in parts[:50]:
        texts = [t for t in p if t]
        if texts:
            model.passage(texts)
    wall_ms = (time.monotonic() - started_wall) * 1000 / 50
    reference = np.array([r.features["textdiff"] for r in rows])
    label = cm.truth(rows)
    started = time.process_time()
    for r in chosen:
        similar = reference @ r.features["textdiff"]
        top = np.argpartition(-similar, K)[:K]
        float(label[top].mean()), float(similar[label == 1].max() - similar[label == 0].max())
    knn_ms = (time.process_time() - started) * 1000 / len(chosen)
    print(f"\nCPU per pair over {len(chosen)} pairs: split {split_ms:.3f} ms, embedding the spans and frame "
          f"{embed_ms:.1f} ms (one thread; wall {wall_ms:.1f} ms per pair over 50); the knntext group against "
          f"{len(rows)} stored pairs {knn_ms:.3f} ms")  # fmt: skip


def by_type(rows: list[cm.Row]) -> None:
    """The value spans' cosine among candidate pairs with both spans: per label and type, and how well it alone
    orders contradictions above compatible pairs (ROC AUC, ties shared), on all of them and on those the rules
    leave unflagged (where the judge has to add)."""
    chosen = [r for r in rows if r.judged.candidate and r.features["sa"].any() and r.features["sb"].any()]
    cosine = np.array([float(r.features["sa"] @ r.features["sb"]) for r in chosen])
    y = cm.truth(chosen)
    unflagged = np.array([not r.judged.flagged for r in chosen])
    print(f"\nvalue-span cosine, {len(chosen)} candidate pairs with both spans: ROC AUC {_auc(cosine, y):.3f}, "
          f"among the {int(unflagged.sum())} the rules leave {_auc(cosine[unflagged], y[unflagged]):.3f}")  # fmt: skip
    print("| label | type | pairs | mean | sd |\n|---|---|---|---|---|")
    for label, kind in sorted({(r.pair.label, r.pair.type) for r in chosen}):
        values = cosine[[i for i, r in enumerate(chosen) if (r.pair.label, r.pair.type) == (label, kind)]]
        print(f"| {label} | {kind} | {len(values)} | {values.mean():.3f} | {values.std():.3f} |")


def _auc(x: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        tied = x == value
        ranks[tied] = ranks[tied].mean()
    positive = y == 1
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def main() -> None:
    global K
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default="baseline,spans,core,core+spans")
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--k", type=int, default=10, help="neighbours of the knn group")
    parser.add_argument("--no-forward", action="store_true")
    parser.add_argument("--no-lobo", action="store_true")
    parser.add_argument("--by-type", action="store_true", help="the value spans' cosine per label and type")
    parser.add_argument("--cpu", type=int, default=0, metavar="PAIRS", help="measure CPU on this many pairs")
    parser.add_argument(
        "--held-out",
        metavar="BATCH",
        help="instead of the folds: fit on batches 1-7 and score this held-out batch once (today's rules)",
    )
    args = parser.parse_args()
    K = args.k
    variants = args.variants.split(",")
    pairs, batch_of, vectors = cm.load_batches(BATCHES + ((args.held_out,) if args.held_out else ()))
    cm._VECTORS_CACHE.update(vectors)
    rows = cm.featurise(pairs, batch_of, vectors)
    embedder = Embedder()
    add_spans(rows, embedder)
    if args.by_type:
        by_type(rows)
    if args.held_out:  # judged by the rules of today
        forward(rows, variants, args.target, {args.held_out: TODAY_RULES})
        return
    if not args.no_forward:
        forward(rows, variants, args.target)
    if not args.no_lobo:
        leave_one_out(rows, variants, args.target)
    if args.cpu:
        cpu(rows, embedder, args.cpu)


if __name__ == "__main__":
    main()
