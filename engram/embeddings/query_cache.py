"""A bounded least-recently-used cache of query vectors, keyed by embedding profile and normalised query text.

Agents repeat their queries (the same start-up question each session, the same lookup in a loop); a hit skips
the model. The key holds the profile so a vector of one model is never served for another, and the text in its
normalised form (``normalise``), which is also the text the model embeds, so a hit is exactly the vector a miss
would compute. Vectors are stored read-only: every caller shares the same array.
"""

from __future__ import annotations

import unicodedata
from collections import OrderedDict

import numpy as np

from engram.telemetry.metrics import QUERY_EMBEDDING_CACHE


def normalise(text: str) -> str:
    """Unicode NFC, whitespace runs as one space, no leading or trailing space. Case is kept: e5 tells
    "Apple" from "apple"."""
    return " ".join(unicodedata.normalize("NFC", text).split())


class QueryCache:
    def __init__(self, max_entries: int) -> None:
        if max_entries < 0:
            raise ValueError("max_entries must be >= 0")
        self._max = max_entries
        self._entries: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, profile: str, text: str) -> np.ndarray | None:
        """The cached vector of ``text`` (already normalised) under ``profile``, or None; counts the hit or miss."""
        if self._max == 0:
            return None
        vector = self._entries.get((profile, text))
        if vector is None:
            QUERY_EMBEDDING_CACHE.labels("miss").inc()
            return None
        self._entries.move_to_end((profile, text))
        QUERY_EMBEDDING_CACHE.labels("hit").inc()
        return vector

    def put(self, profile: str, text: str, vector: np.ndarray) -> np.ndarray:
        """Store ``vector`` (made read-only) and return it; the least recently used entry goes when full."""
        vector.setflags(write=False)
        if self._max == 0:
            return vector
        self._entries[(profile, text)] = vector
        self._entries.move_to_end((profile, text))
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
            QUERY_EMBEDDING_CACHE.labels("evicted").inc()
        return vector
