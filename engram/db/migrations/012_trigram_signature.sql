-- possible_supersedes' nearest-first trigram scan, with a 64-byte signature per index entry instead of the
-- default 12. Short memories already fill most of the 96 default bits, so the index could hardly tell
-- pages apart and the scan read most of the tree; at 100k synthetic memories one search went from about
-- 64 ms to 19 ms (bench results in docs/benchmarks.md). The index is rebuilt: writes to memory_items wait
-- while it builds.
DROP INDEX IF EXISTS memory_items_trgm;
CREATE INDEX memory_items_trgm ON memory_items USING gist (content gist_trgm_ops(siglen = 64));
