"""pg_trgm's trigram similarity in Python, and a bounded cache of trigram sketches by item id.

possible_supersedes (ingest) compares a new memory with the recent window of its tenant and kind. Instead of
asking PostgreSQL for ``similarity()`` on every row of the window (which extracts the trigrams of both texts on
every call), ingest keeps a sketch of each window item's trigrams (``SketchTable``) and estimates the
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
(none measured with the ``C`` LC_CTYPE). A window is compared at once with numpy (a matrix of its bits; the
table keeps its sketches as rows of one matrix).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import repeat

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


def _estimates(query: Sketch, bits: np.ndarray, counts: np.ndarray, lost: np.ndarray) -> np.ndarray:
    """``estimate`` of ``query`` with each row: ``bits`` a row of 64-bit words per entry, ``counts`` and ``lost``
    its trigram counts (the query has trigrams)."""
    common = np.bitwise_count(bits & np.frombuffer(query.bits, dtype=np.uint64)).sum(axis=1, dtype=np.int64)
    shared = np.minimum(np.minimum(common + np.minimum(lost, query.lost), query.count), counts)
    union = query.count + counts - shared
    return np.where(counts > 0, shared / np.maximum(union, 1), 0.0)


def _ranked(estimates: np.ndarray, keys: Sequence[Hashable], floor: float) -> list[tuple[float, Hashable]]:
    chosen = np.nonzero(estimates >= floor)[0]
    chosen = chosen[np.argsort(-estimates[chosen], kind="stable")]
    return [(e, keys[i]) for e, i in zip(estimates[chosen].tolist(), chosen.tolist(), strict=True)]


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
    counts = np.fromiter((s.count for s in sketches), dtype=np.int64, count=len(sketches))
    lost = np.fromiter((s.lost for s in sketches), dtype=np.int64, count=len(sketches))
    return _ranked(_estimates(query, rows, counts, lost), [key for key, _ in window], floor)


class SketchTable:
    """Sketches by key (an item id's 16 bytes), at most ``capacity``, kept as rows of one numpy matrix: a window
    of keys is scored by taking its rows (``candidates``' estimates, in the same order), with no Python object
    per entry but its key and a dict look-up. The least recently used are dropped first, an eighth of the table
    at a time, but never one used since the last ``lookup`` (the window being scored): when the table is smaller
    than the window, the caller scores the rest from sketches it passes in (``extra``). An item's content never
    changes (a new text is a new item), so an entry never goes stale; which items are live is the database's."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._slot: dict[bytes, int] = {}
        self._keys: list[bytes | None] = []
        self._free: list[int] = []
        size = min(capacity, 1024)
        self._bits = np.zeros((0, SKETCH_BITS // 64), dtype=np.uint64)
        self._counts = np.zeros(0, dtype=np.int64)
        self._lost = np.zeros(0, dtype=np.int64)
        self._used = np.zeros(0, dtype=np.int64)
        self._grow(size)
        self._tick = 0

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: object) -> bool:
        return key in self._slot

    def _grow(self, size: int) -> None:
        old = len(self._keys)
        self._bits = np.concatenate([self._bits, np.zeros((size - old, SKETCH_BITS // 64), dtype=np.uint64)])
        self._counts = np.concatenate([self._counts, np.zeros(size - old, dtype=np.int64)])
        self._lost = np.concatenate([self._lost, np.zeros(size - old, dtype=np.int64)])
        self._used = np.concatenate([self._used, np.zeros(size - old, dtype=np.int64)])
        self._keys.extend([None] * (size - old))
        self._free.extend(range(size - 1, old - 1, -1))

    def lookup(self, keys: Sequence[bytes]) -> list[bytes]:
        """Starts a window: marks the held ``keys`` as used (kept until the next ``lookup``) and returns those not
        held, in their order."""
        self._tick += 1
        slots = np.fromiter(map(self._slot.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
        self._used[slots[slots >= 0]] = self._tick
        return [k for k in keys if k not in self._slot] if (slots < 0).any() else []

    def put(self, key: bytes, value: Sketch) -> bool:
        """Holds ``value`` for ``key``; ``False`` when the table is full of entries the current window uses."""
        slot = self._slot.get(key)
        if slot is None:
            if not self._free and not self._make_room():
                return False
            slot = self._free.pop()
            self._slot[key] = slot
            self._keys[slot] = key
        self._bits[slot] = np.frombuffer(value.bits, dtype=np.uint64)
        self._counts[slot] = value.count
        self._lost[slot] = value.lost
        self._used[slot] = self._tick
        return True

    def _make_room(self) -> bool:
        if len(self._keys) < self.capacity:
            self._grow(min(self.capacity, 2 * len(self._keys)))
            return True
        idle = np.nonzero(self._used < self._tick)[0]
        if not len(idle):
            return False
        drop = max(1, self.capacity // 8)
        if len(idle) > drop:
            idle = idle[np.argpartition(self._used[idle], drop - 1)[:drop]]
        for slot in idle.tolist():
            key = self._keys[slot]
            if key is not None:
                del self._slot[key]
                self._keys[slot] = None
            self._free.append(slot)
        return True

    def candidates(
        self, query: Sketch, keys: Sequence[bytes], floor: float, extra: dict[bytes, Sketch] | None = None
    ) -> list[tuple[float, bytes]]:
        """``candidates(query, [(key, sketch of key), …], floor)`` for ``keys``, each held here or in ``extra``."""
        if not keys:
            return []
        if not query.count:
            return [(0.0, key) for key in keys] if floor <= 0 else []
        slots = np.fromiter(map(self._slot.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
        absent = np.nonzero(slots < 0)[0]
        if not len(absent):
            bits, counts, lost = self._bits[slots], self._counts[slots], self._lost[slots]
        else:
            slots[absent] = 0
            bits, counts, lost = self._bits[slots], self._counts[slots], self._lost[slots]
            for i in absent.tolist():
                value = (extra or {})[keys[i]]
                bits[i] = np.frombuffer(value.bits, dtype=np.uint64)
                counts[i], lost[i] = value.count, value.lost
        return _ranked(_estimates(query, bits, counts, lost), keys, floor)  # type: ignore[return-value]
