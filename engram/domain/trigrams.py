"""pg_trgm's trigram similarity in Python, and a bounded cache of trigram sketches by item id.

possible_supersedes (ingest) compares a new memory with the recent window of its tenant and kind. Instead of
asking PostgreSQL for ``similarity()`` on every row of the window (which extracts the trigrams of both texts on
every call), ingest keeps a sketch of each window item's trigrams (``SketchCache``) and estimates the
similarity here; only the items at or above the threshold less ``MARGIN`` go to PostgreSQL, which computes the
exact ``similarity()`` on them. No I/O here.

pg_trgm's trigrams: the text's words (runs of word characters) are lowered and padded with two spaces in
front and one behind, and every three consecutive characters of a padded word are a trigram; a set (no
repeats). Similarity is the Jaccard index of the two sets (shared / all). Which characters are word characters
depends on the database's LC_CTYPE: with ``C`` (Engram's embedded PostgreSQL) only ASCII letters and digits
are, so accented letters, CJK and emoji separate words; with a Unicode locale they are letters
(``unicode_words``; pg_trgm then hashes a trigram of multi-byte characters, which can rarely merge two). A
letter is a word character before it is lowered: under ``C``, the Kelvin sign and dotted capital I separate
words, though they lower to ASCII letters.

A sketch is the trigram count and a set of 4,096 bits, one per trigram (Python's string hash): the shared
bits of two sketches count their shared trigrams but for collisions. Two trigrams of one text on one bit
(in about one text in five of 40 trigrams) can hide a shared trigram, never more than the text's own lost bits
(``lost``), so the shared bits plus those give an upper bound of the shared trigrams and so of the similarity:
an item whose trigrams reach the threshold is never passed over. A collision across texts only adds a
candidate, which PostgreSQL then measures. ``MARGIN`` covers differences between these trigrams and pg_trgm's
(none measured with the ``C`` LC_CTYPE). A window is compared at once with numpy (a matrix of its bits).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

_ASCII_WORDS = re.compile(r"[A-Za-z0-9]+")
_UNICODE_WORDS = re.compile(r"[^\W_]+")
SKETCH_BITS = 4096
MARGIN = 0.05  # candidates are the items whose estimate is at least the threshold less this


def trigrams(text: str, *, unicode_words: bool = False) -> frozenset[str]:
    """The set of pg_trgm trigrams of ``text`` (``show_trgm``'s)."""
    words = (_UNICODE_WORDS if unicode_words else _ASCII_WORDS).findall(text)
    out: set[str] = set()
    for word in words:
        padded = f"  {word.lower()} "
        out.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return frozenset(out)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """pg_trgm's ``similarity``: shared trigrams over all trigrams of the two sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


@dataclass(frozen=True, slots=True)
class Sketch:
    count: int  # trigrams in the text
    lost: int  # trigrams that fell on a bit another trigram of the text had set
    bits: bytes  # SKETCH_BITS bits, those of its trigrams set


def sketch(text: str, *, unicode_words: bool = False) -> Sketch:
    grams = trigrams(text, unicode_words=unicode_words)
    field = bytearray(SKETCH_BITS // 8)
    for gram in grams:
        bit = hash(gram) & (SKETCH_BITS - 1)
        field[bit >> 3] |= 1 << (bit & 7)
    return Sketch(len(grams), len(grams) - int.from_bytes(field, "little").bit_count(), bytes(field))


def estimate(a: Sketch, b: Sketch) -> float:
    """At least the similarity of the two texts (equal to it unless trigrams collide on a bit): ``candidates``'
    estimate for one pair."""
    return candidates(a, [(None, b)], 0.0)[0][0]


def candidates(query: Sketch, window: Sequence[tuple[Hashable, Sketch]], floor: float) -> list[tuple[float, Hashable]]:
    """``(estimate, key)`` of the ``window`` entries whose ``estimate`` with ``query`` is at least ``floor`` (all
    those whose similarity is, and a few more), highest estimate first. All at once with numpy: the window's
    bits as one matrix, a row per entry."""
    if not window:
        return []
    if not query.count:  # no trigrams: every similarity is 0, which reaches only a floor of 0
        return [(0.0, key) for key, _ in window] if floor <= 0 else []
    sketches = [sketch for _, sketch in window]
    rows = np.frombuffer(b"".join(s.bits for s in sketches), dtype=np.uint64).reshape(len(sketches), -1)
    common = np.bitwise_count(rows & np.frombuffer(query.bits, dtype=np.uint64)).sum(axis=1, dtype=np.int64)
    counts = np.fromiter((s.count for s in sketches), dtype=np.int64, count=len(sketches))
    lost = np.fromiter((s.lost for s in sketches), dtype=np.int64, count=len(sketches))
    shared = np.minimum(np.minimum(common + np.minimum(lost, query.lost), query.count), counts)
    union = query.count + counts - shared
    estimates = np.where(counts > 0, shared / np.maximum(union, 1), 0.0)
    chosen = np.nonzero(estimates >= floor)[0]
    chosen = chosen[np.argsort(-estimates[chosen], kind="stable")]
    return [(float(estimates[i]), window[int(i)][0]) for i in chosen]


class SketchCache:
    """Sketches by item id, at most ``capacity`` of them, the least recently used dropped first. An item's
    content never changes (a new text is a new item), so an entry never goes stale; an item deleted or no
    longer live only waits here until it is dropped (the caller asks the database which items are live)."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._held: OrderedDict[Hashable, Sketch] = OrderedDict()

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._held

    def put(self, key: Hashable, value: Sketch) -> None:
        self._held[key] = value
        self._held.move_to_end(key)
        while len(self._held) > self.capacity:
            self._held.popitem(last=False)

    def take(self, keys: Iterable[Hashable]) -> tuple[list[tuple[Hashable, Sketch]], list[Hashable]]:
        """``(key, sketch)`` of the held keys among ``keys`` in their order (each marked as used), and the
        keys not held."""
        held: list[tuple[Hashable, Sketch]] = []
        missing: list[Hashable] = []
        for key in keys:
            value = self._held.get(key)
            if value is None:
                missing.append(key)
            else:
                self._held.move_to_end(key)
                held.append((key, value))
        return held, missing
