-- Each posting of memory_terms carries its memory's workspace, in the primary key's index (INCLUDE), so a
-- keyword search filtered to one workspace skips another workspace's postings inside the index-only scan
-- instead of reading each of those memories to reject it (one heap lookup per posting: a LoCoMo question in a
-- 419-memory workspace took up to 2 s when a common word of it had 10,000 postings in the tenant's other
-- workspace; docs/benchmarks.md, 2026-12-03). The triggers of 017 now copy the workspace too, and an item
-- moved to another workspace has its postings rewritten.
ALTER TABLE memory_terms ADD COLUMN workspace_id uuid;

-- The rows already there (as the owner: Row Level Security is lifted for the backfill, inside this transaction).
ALTER TABLE memory_items NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_terms NO FORCE ROW LEVEL SECURITY;
UPDATE memory_terms p SET workspace_id = i.workspace_id FROM memory_items i WHERE i.id = p.item_id;
ALTER TABLE memory_terms FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_items FORCE ROW LEVEL SECURITY;

ALTER TABLE memory_terms ALTER COLUMN workspace_id SET NOT NULL;
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey,
    ADD CONSTRAINT memory_terms_pkey PRIMARY KEY (tenant_id, term, created_at, item_id) INCLUDE (workspace_id);

CREATE OR REPLACE FUNCTION engram_terms_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_terms (tenant_id, term, created_at, item_id, workspace_id)
    SELECT n.tenant_id, t.term, n.created_at, n.id, n.workspace_id
    FROM added n, unnest(tsvector_to_array(n.content_tsv)) AS t(term);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION engram_terms_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.content_tsv IS NOT DISTINCT FROM NEW.content_tsv AND OLD.created_at = NEW.created_at
       AND OLD.tenant_id = NEW.tenant_id AND OLD.workspace_id = NEW.workspace_id THEN
        RETURN NULL;
    END IF;
    DELETE FROM memory_terms p USING unnest(tsvector_to_array(OLD.content_tsv)) AS t(term)
    WHERE p.tenant_id = OLD.tenant_id AND p.term = t.term AND p.created_at = OLD.created_at AND p.item_id = OLD.id;
    INSERT INTO memory_terms (tenant_id, term, created_at, item_id, workspace_id)
    SELECT NEW.tenant_id, t.term, NEW.created_at, NEW.id, NEW.workspace_id
    FROM unnest(tsvector_to_array(NEW.content_tsv)) AS t(term);
    RETURN NULL;
END $$;

DROP TRIGGER memory_items_terms_updated ON memory_items;
CREATE TRIGGER memory_items_terms_updated AFTER UPDATE OF content, index_context, created_at, tenant_id, workspace_id
    ON memory_items FOR EACH ROW EXECUTE FUNCTION engram_terms_updated();
