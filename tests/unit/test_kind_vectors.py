"""The local kind model's vectors: one call of the model for a batch equals one call per text; which stored vectors
the classifier may read instead of embedding the text itself."""

from __future__ import annotations

import numpy as np

from engram.config import Settings
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


def test_only_the_local_models_stored_vectors_of_its_size_are_read() -> None:
    settings = Settings()
    assert kind_model.stored_vectors_fit(settings)
    assert not kind_model.stored_vectors_fit(settings.model_copy(update={"embedding_provider": "openai"}))
    assert not kind_model.stored_vectors_fit(settings.model_copy(update={"embedding_model": "text-embedding-3-small"}))
    assert not kind_model.stored_vectors_fit(settings.model_copy(update={"embedding_dimensions": 256}))
    vector = kind_model.embed("We decided to move the ledger to Postgres 16.")
    assert kind_model.stored_vector_usable(vector)
    assert not kind_model.stored_vector_usable(None)
    assert not kind_model.stored_vector_usable(vector[:256])
    assert not kind_model.stored_vector_usable(np.full_like(vector, np.nan))
