-- possible_supersedes on remember (similar_live in engram/db/items.py) compares the new text with the N most
-- recent live items of the tenant and kind (ENGRAM_POSSIBLE_SUPERSEDES_WINDOW) instead of a nearest-first
-- scan of the trigram index, whose cost grew with the store (28-41 ms per search at 100k memories of one
-- kind, idle). This index reads that window newest first; it holds only live items (the rows the search
-- keeps), so superseded, invalidated, rejected and archived items never take a place in the window.
-- Measured in docs/benchmarks.md (bench/trigram_index.py --window-ab).
CREATE INDEX IF NOT EXISTS memory_items_recent_live ON memory_items (tenant_id, kind, created_at DESC)
    WHERE invalidated_at IS NULL AND superseded_by IS NULL AND review_status IN ('proposed', 'active', 'disputed');
