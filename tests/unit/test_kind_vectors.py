"""The local kind model's vectors in one call of the model for a batch equal one call per text."""

from __future__ import annotations

import numpy as np

from engram.domain.classification import KIND_TEXT_LIMIT
from engram.pipeline import kind_model


def test_a_batch_embeds_each_text_as_a_call_of_its_own() -> None:
    texts = [
        "Caroline: I went to a support group yesterday and it was so powerful.",
        "ok thanks!",
        "We decided to move the ledger to Postgres 16.",
        "Clone the repo, run the setup script, then start the dev server. " * 30,  # beyond the prefix read
    ]
    batch = kind_model.embed_many(texts)
    assert len(batch) == len(texts)
    for text, vector in zip(texts, batch, strict=True):
        single = kind_model.embed(text)
        assert vector.shape == single.shape == (384,)
        assert np.allclose(vector, single, atol=1e-6), text[:40]
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert np.allclose(batch[3], kind_model.embed(texts[3][:KIND_TEXT_LIMIT]), atol=1e-6)  # only the prefix
    assert float(batch[0] @ batch[1]) < 0.99  # different texts, different vectors


def test_an_empty_batch_calls_nothing() -> None:
    assert kind_model.embed_many([]) == []
