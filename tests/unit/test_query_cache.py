"""The query vector cache: keyed by embedding profile and normalised text, bounded, least recently used out."""

from __future__ import annotations

import numpy as np
import pytest

from engram.embeddings.query_cache import QueryCache, normalise


def vec(x: float) -> np.ndarray:
    return np.full(4, x, dtype=np.float32)


def test_a_hit_returns_the_stored_vector_and_only_under_its_profile() -> None:
    cache = QueryCache(8)
    stored = cache.put("e5-small:384", "who moved to Lisbon?", vec(1))
    assert cache.get("e5-small:384", "who moved to Lisbon?") is stored
    assert cache.get("other-model:384", "who moved to Lisbon?") is None
    assert cache.get("e5-small:384", "who moved to Lisboa?") is None


def test_it_holds_at_most_its_size_dropping_the_least_recently_used() -> None:
    cache = QueryCache(2)
    cache.put("p", "a", vec(1))
    cache.put("p", "b", vec(2))
    assert cache.get("p", "a") is not None  # a is now the most recently used
    cache.put("p", "c", vec(3))
    assert len(cache) == 2
    assert cache.get("p", "b") is None
    assert cache.get("p", "a") is not None and cache.get("p", "c") is not None


def test_size_zero_stores_nothing() -> None:
    cache = QueryCache(0)
    cache.put("p", "a", vec(1))
    assert len(cache) == 0 and cache.get("p", "a") is None
    with pytest.raises(ValueError):
        QueryCache(-1)


def test_stored_vectors_are_read_only() -> None:
    stored = QueryCache(2).put("p", "a", vec(1))
    with pytest.raises(ValueError):
        stored[0] = 2.0


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("  who  moved to\tLisbon?\n", "who moved to Lisbon?"),
        ("cafe\u0301 near Oslo", "caf\u00e9 near Oslo"),  # NFC: one code point for é
        ("Who moved?", "Who moved?"),  # case is kept
        ("   ", ""),
    ],
)
def test_normalise(raw: str, normal: str) -> None:
    assert normalise(raw) == normal
