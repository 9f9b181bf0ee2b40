"""Counts that steer a search, remembered for a while by the process that read them.

Two of recall's statements would otherwise count index entries on every call: how many vectors the readable
tenants hold (which of two vector searches to run, ``search.semantic``) and how many of a tenant's memories
have each query word (the word's rarity, ``search.keyword``). Both are counted up to a cap (10,000 entries at
100k memories: milliseconds of PostgreSQL per recall) and both move slowly, so a minute-old figure serves as
well. The recall service owns one ``CountCache``; a caller that passes none counts every time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

DEFAULT_TTL_SECONDS = 60.0
DEFAULT_MAX_ENTRIES = 16_384


@dataclass
class CountCache:
    """A map from a key to a number, each entry trusted for ``ttl_seconds``; when full it starts over."""

    ttl_seconds: float = DEFAULT_TTL_SECONDS
    max_entries: int = DEFAULT_MAX_ENTRIES
    clock: Callable[[], float] = time.monotonic
    _entries: dict[Hashable, tuple[float, float]] = field(default_factory=dict, repr=False)

    def get(self, key: Hashable) -> float | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self.clock():
            del self._entries[key]
            return None
        return entry[1]

    def put(self, key: Hashable, value: float) -> None:
        if len(self._entries) >= self.max_entries:
            self._entries.clear()
        self._entries[key] = (self.clock() + self.ttl_seconds, value)

    def live(self) -> dict[Hashable, float]:
        """The entries not yet expired (for tests and diagnostics)."""
        now = self.clock()
        return {key: value for key, (until, value) in self._entries.items() if until > now}
