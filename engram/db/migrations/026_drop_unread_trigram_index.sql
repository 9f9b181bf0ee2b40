-- The GiST trigram index memory_items_trgm (migrations 006 and 012) served possible_supersedes' nearest-first
-- scan. Since migration 025 that search reads a bounded window of recent live items through
-- memory_items_recent_live and computes similarity() on each row, so no query reads the trigram index any more;
-- it only cost every insert and update of memory_items (and about 38 MB per 100,000 memories).
DROP INDEX IF EXISTS memory_items_trgm;
