-- Full-text postings the services' role can search under Row Level Security.
--
-- The GIN index on content_tsv is never used by the services: `@@` is not a leakproof operator, so under Row
-- Level Security PostgreSQL must not apply it before the tenant policy, and a keyword query read every row of
-- the tenant (about 100 ms per 100,000 memories). Btree equality on text is leakproof, so one row per
-- (memory, stemmed lexeme of content_tsv) with a btree on (tenant, term, created_at) finds a term's most recent
-- matches through the index, newest first, under the same policies. Triggers keep it in step with
-- memory_items (insert, delete, and an update of what content_tsv is built from), so no writer changes.
CREATE TABLE memory_terms (
    tenant_id  uuid NOT NULL,
    term       text NOT NULL,
    created_at timestamptz NOT NULL,
    item_id    uuid NOT NULL,
    PRIMARY KEY (tenant_id, term, created_at, item_id)
);

-- The rows already there (as the owner: Row Level Security is lifted for the backfill, inside this transaction).
ALTER TABLE memory_items NO FORCE ROW LEVEL SECURITY;
INSERT INTO memory_terms (tenant_id, term, created_at, item_id)
SELECT i.tenant_id, t.term, i.created_at, i.id
FROM memory_items i, unnest(tsvector_to_array(i.content_tsv)) AS t(term);
ALTER TABLE memory_items FORCE ROW LEVEL SECURITY;

ALTER TABLE memory_terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_terms FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_terms
    USING (tenant_id = engram_current_tenant() OR engram_system_scope())
    WITH CHECK (tenant_id = engram_current_tenant() OR engram_system_scope());

CREATE FUNCTION engram_terms_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_terms (tenant_id, term, created_at, item_id)
    SELECT n.tenant_id, t.term, n.created_at, n.id
    FROM added n, unnest(tsvector_to_array(n.content_tsv)) AS t(term);
    RETURN NULL;
END $$;

CREATE FUNCTION engram_terms_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_terms p USING removed o, unnest(tsvector_to_array(o.content_tsv)) AS t(term)
    WHERE p.tenant_id = o.tenant_id AND p.term = t.term AND p.created_at = o.created_at AND p.item_id = o.id;
    RETURN NULL;
END $$;

CREATE FUNCTION engram_terms_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.content_tsv IS NOT DISTINCT FROM NEW.content_tsv AND OLD.created_at = NEW.created_at
       AND OLD.tenant_id = NEW.tenant_id THEN
        RETURN NULL;
    END IF;
    DELETE FROM memory_terms p USING unnest(tsvector_to_array(OLD.content_tsv)) AS t(term)
    WHERE p.tenant_id = OLD.tenant_id AND p.term = t.term AND p.created_at = OLD.created_at AND p.item_id = OLD.id;
    INSERT INTO memory_terms (tenant_id, term, created_at, item_id)
    SELECT NEW.tenant_id, t.term, NEW.created_at, NEW.id FROM unnest(tsvector_to_array(NEW.content_tsv)) AS t(term);
    RETURN NULL;
END $$;

CREATE TRIGGER memory_items_terms_inserted AFTER INSERT ON memory_items
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION engram_terms_inserted();
CREATE TRIGGER memory_items_terms_deleted AFTER DELETE ON memory_items
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION engram_terms_deleted();
CREATE TRIGGER memory_items_terms_updated AFTER UPDATE OF content, index_context, created_at, tenant_id
    ON memory_items FOR EACH ROW EXECUTE FUNCTION engram_terms_updated();

