-- possible_supersedes' nearest-first trigram scan (similar_live in engram/db/items.py) looks for memories of
-- one tenant and one kind. The index it had (006) held the text alone, so the scan walked the nearest texts
-- of every tenant and kind and threw most away: with 100k memories of one kind, a memory of another kind
-- read the whole index (about 340 ms here). Now the index leads with the tenant and the kind (btree_gist),
-- and each entry's trigram signature is 64 bytes instead of 12, which short texts filled so full that the
-- index could hardly tell its pages apart. Measured in docs/benchmarks.md (bench/trigram_index.py).
-- The index is rebuilt in this transaction: writes to memory_items wait while it builds.
CREATE EXTENSION IF NOT EXISTS btree_gist;
DROP INDEX IF EXISTS memory_items_trgm;
CREATE INDEX memory_items_trgm ON memory_items
    USING gist (tenant_id, kind, content gist_trgm_ops(siglen = 64));
