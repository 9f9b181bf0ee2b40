"""possible_supersedes: the live items of the new memory's tenant and kind, among the recent window, whose text
is trigram-similar to the new one's (docs/api.md, "Possible supersedes").

The answer is ``items.similar_live``'s, found with fewer ``similarity()`` calls: PostgreSQL lists the ids of the
window (an index read, no text; one ``bytea`` of 16 bytes an id); this process keeps a sketch of each item's
trigrams by id, as rows of one matrix (``engram.domain.trigrams.SketchTable``; an item's content never
changes), and reads only the openings of the ids it does not hold; the sketches pick the items that may reach
the threshold (an estimate, never below the similarity, at least the threshold less ``MARGIN``), and PostgreSQL
computes the exact ``similarity()`` on those, best estimate first (ten, then the rest only if one of them could
still be among the five), and applies liveness, expiry and the caller's visibility. Each ingest process keeps
its own cache; what is in the window is always the database's.

A remember reads the window with its write context, before it inserts the new item (``prepare``), and scores
the first candidates in its insert statement (``creation.insert_scoring``), so possible_supersedes costs it no
round trip of its own unless sketches are missing or more than the first candidates must be scored
(``finish``). ``find`` does the same steps in statements of their own."""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass

import asyncpg

from engram.db import items
from engram.domain import trigrams

LIMIT = 5  # items listed at most


FIRST = 2 * LIMIT  # candidates scored first, best estimate first


@dataclass
class Scoring:
    """One new memory's possible_supersedes between its window and its answer: the question for its first
    candidates (``among``) and every candidate ranked by its estimate."""

    among: items.Among
    ranked: list[tuple[float, bytes]]


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
        window = await items.live_window(conn, kind, self.window)
        scoring = await self.prepare(conn, window, item_id, content, kind, viewer, replaced)
        return await self.finish(conn, scoring, await items.similar_among(conn, scoring.among))

    async def prepare(
        self,
        conn: asyncpg.Connection,
        window: bytes,
        item_id: str,
        content: str,
        kind: str,
        viewer: str,
        replaced: list[str],
    ) -> Scoring:
        """The candidates among ``window`` (``items.live_window``'s ids) for the new item (``item_id``, ``content``,
        ``kind``), written or about to be; the item and the items it replaces are left out. Reads the openings
        of the window items whose sketches this process does not hold (a round trip, only then)."""
        if self._unicode_words is None:
            self._unicode_words = await items.trigram_words_are_unicode(conn)
        unicode_words = self._unicode_words
        exclude = [item_id, *replaced]
        excluded = {uuid.UUID(i).bytes for i in exclude}
        keys = [k for k in (window[at : at + 16] for at in range(0, len(window), 16)) if k not in excluded]
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
        first = [uuid.UUID(bytes=key) for _, key in ranked[:FIRST]]
        return Scoring(items.Among(content, kind, viewer, first, exclude, self.threshold, LIMIT), ranked)

    async def finish(
        self, conn: asyncpg.Connection, scoring: Scoring, first: list[items.Similar]
    ) -> list[items.Similar]:
        """The answer, from ``first`` (``items.similar_among(scoring.among)``'s, in whatever statement it was
        asked): estimates are upper bounds, so the other candidates are scored (one more statement) only when
        one of them could still rank."""
        ranked = scoring.ranked
        found = sorted(first, key=lambda s: (-s.similarity, s.id))[:LIMIT]
        start = len(scoring.among.ids)
        if start < len(ranked) and not (len(found) == LIMIT and found[-1].similarity - 0.00005 >= ranked[start][0]):
            rest = [uuid.UUID(bytes=key) for _, key in ranked[start:]]
            found += await items.similar_among(conn, dataclasses.replace(scoring.among, ids=rest))
            found = sorted(found, key=lambda s: (-s.similarity, s.id))[:LIMIT]
        return found
