-- Trigram index for possible_supersedes: the same-kind live items whose text is nearest a new memory's.
-- GiST supports nearest-first scans (ORDER BY content <-> text LIMIT n), which stay cheap when many
-- stored memories resemble each other; a GIN index would hand back every match above the threshold.
CREATE INDEX memory_items_trgm ON memory_items USING gist (content gist_trgm_ops);

-- Memories arrive in bursts; re-analyze early so plans (this index's nearest-first scan above all) follow
-- the table's real size instead of the empty table's statistics.
ALTER TABLE memory_items SET (autovacuum_analyze_threshold = 200, autovacuum_analyze_scale_factor = 0.05);
