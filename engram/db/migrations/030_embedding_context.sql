-- Context passages (docs/adr/0009-context-passages.md): a memory of a session may be embedded for search together
-- with the memory before it in its session (its predecessor). The search row (the configured profile) names that
-- predecessor here, so a change to it (deleted, expired, its visibility narrowed) finds the rows built from its
-- text; NULL for a vector of the memory's own text. The memory's own vector is then kept under
-- '<profile>#content'. No foreign key: the predecessor's deletion must re-embed the row, not delete it.
ALTER TABLE memory_embeddings ADD COLUMN context_item_id uuid;
CREATE INDEX memory_embeddings_context ON memory_embeddings (context_item_id) WHERE context_item_id IS NOT NULL;
