-- The GIN index memory_items_tsv (migrations 001 and 010) on content_tsv is read by no statement of Engram's.
-- The services act as a role under forced Row Level Security, and `@@` (ts_match_vq) is not leakproof, so
-- PostgreSQL never uses it as an index condition ahead of the policies: keyword candidates come from memory_terms
-- (migration 017, ADR 0006), and the public-memory branch of the keyword search tests `@@` on the rows the
-- policies admit, through the same plan with or without the index. Every insert still paid for it: its entries
-- appended to the pending list (about 320 bytes of WAL), then merged into the tree by the writer that overflows
-- the list or by a vacuum; and about 11 MB per 100,000 memories on disk. The column content_tsv stays: ranking,
-- the public-memory branch and memory_terms' triggers read it.
DROP INDEX IF EXISTS memory_items_tsv;
