-- Recall can bring the memories written next to a hit in the same session (source_session, in the order they
-- were recorded); this index finds them.
CREATE INDEX memory_items_session ON memory_items (source_session, created_at) WHERE source_session IS NOT NULL;
