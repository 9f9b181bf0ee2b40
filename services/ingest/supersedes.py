"""possible_supersedes: the live items of the new memory's tenant and kind, among the recent window, whose text
is trigram-similar to the new one's (docs/api.md, "Possible supersedes").

The answer is ``items.similar_live``'s, found with fewer ``similarity()`` calls: PostgreSQL lists the ids of the
window (an index read, no text; one ``bytea`` of 16 bytes an id); this process keeps a sketch of each item's
trigrams by id, as rows of one matrix (``engram.domain.trigrams.SketchTable``; an item's content never
changes), and reads only the openings of the ids it does not hold; the sketches pick the items that may reach
the threshold (an estimate, never below the similarity, at least the threshold less ``MARGIN``), and PostgreSQL
computes the exact ``similarity()`` on those, best estimate first (ten, then the rest only if one of them could
still be among the five), and applies liveness, expiry and the caller's visibility. Each ingest process keeps
its own cache; what is in the window is always the database's."""

from __future__ import annotations

import uuid

import asyncpg

from engram.db import items
from engram.domain import trigrams

LIMIT = 5  # items listed at most


class PossibleSupersedes:
    def __init__(self, threshold: float, window: int, cache_entries: int) -> None:
        self.threshold = threshold
        self.window = window
        self.cache = trigrams.SketchTable(cache_entries)
        self._unicode_words: bool | None = None  # asked of the database once

    async def find(
        self, conn: asyncpg.Connection, item_id: str, content: str, kind: str, viewer: str, replaced: list[str]
    ) -> list[items.Similar]:
        """For the item just written (``item_id``, ``content``, ``kind``), in the caller's transaction; the items
        it has just replaced are left out, as is the item itself."""
        if self._unicode_words is None:
            self._unicode_words = await items.trigram_words_are_unicode(conn)
        unicode_words = self._unicode_words
        exclude = [item_id, *replaced]
        excluded = {uuid.UUID(i).bytes for i in exclude}
        ids = await items.live_window(conn, kind, self.window)
        keys = [k for k in (ids[at : at + 16] for at in range(0, len(ids), 16)) if k not in excluded]
        extra: dict[bytes, trigrams.Sketch] = {}
        missing = self.cache.lookup(keys)
        if missing:
            read = set()
            for held, opening in await items.openings(conn, [uuid.UUID(bytes=k) for k in missing]):
                read.add(held.bytes)
                value = trigrams.sketch(opening, unicode_words=unicode_words)
                if not self.cache.put(held.bytes, value):
                    extra[held.bytes] = value  # the table is smaller than the window
            if len(read) < len(missing):  # deleted since the window was read
                gone = set(missing) - read
                keys = [k for k in keys if k not in gone]
        query = trigrams.sketch(content[: items.SIMILARITY_PREFIX], unicode_words=unicode_words)
        ranked = self.cache.candidates(query, keys, max(self.threshold - trigrams.MARGIN, 0.0), extra)
        # The next remember of this kind finds this item in its window: its sketch is ready (if this transaction
        # rolls back, the id never shows up in a window and the entry ages out).
        self.cache.put(uuid.UUID(item_id).bytes, query)
        # Estimates are upper bounds: score the best few; the rest only when one of them could still rank.
        found: list[items.Similar] = []
        start, size = 0, 2 * LIMIT
        while start < len(ranked):
            part = [uuid.UUID(bytes=key) for _, key in ranked[start : start + size]]
            start += len(part)
            found += await items.similar_among(conn, content, kind, viewer, part, exclude, self.threshold, LIMIT)
            found = sorted(found, key=lambda s: (-s.similarity, s.id))[:LIMIT]
            if len(found) == LIMIT and start < len(ranked) and found[-1].similarity - 0.00005 >= ranked[start][0]:
                break
            size = len(ranked)
        return found
