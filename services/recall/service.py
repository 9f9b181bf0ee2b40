"""The recall service: its three parts over one pool, built once per process and shared by the servicer."""

from __future__ import annotations

import asyncpg

from engram.config import Settings
from engram.embeddings.provider import EmbeddingProvider
from services.recall.catalog import Catalog
from services.recall.listings import Listings
from services.recall.ranking import Ranking
from services.recall.reads import ItemReads
from services.recall.telemetry import RecallTelemetry


class RecallService:
    """``ranking`` answers ``Recall`` and ``Search``; ``reads`` the reads of one item; ``listings`` the paged
    lists (trash, conflicts, expiry candidates); ``catalog`` the items browsed in pages and counted."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        settings: Settings,
        embedder: EmbeddingProvider,
        telemetry: RecallTelemetry | None = None,
    ) -> None:
        self.ranking = Ranking(pool, settings, embedder, telemetry)
        self.reads = ItemReads(pool)
        self.listings = Listings(pool, settings)
        self.catalog = Catalog(pool)
