-- Pipeline state: what the classifier decided and why, how a conflict was found, and where the promotion
-- sweep left off.

-- Whether the writer named the kind (the classifier may only fill in a kind nobody chose).
ALTER TABLE memory_items ADD COLUMN kind_explicit boolean NOT NULL DEFAULT true;
ALTER TABLE memory_items ADD COLUMN retention text CHECK (retention IN ('retain', 'transient', 'noise', 'uncertain'));
ALTER TABLE memory_items ADD COLUMN sensitivity text;
ALTER TABLE memory_items ADD COLUMN classified_at timestamptz;

-- One receipt per classification: who classified (rules, or which model), what it said, what changed.
CREATE TABLE classification_receipts (
    tenant_id        uuid NOT NULL,
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    item_id          uuid NOT NULL,
    classifier       text NOT NULL,
    fallback_reason  text,
    output           jsonb NOT NULL,
    applied          jsonb NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, item_id) REFERENCES memory_items (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX classification_receipts_item ON classification_receipts (item_id, id);

ALTER TABLE conflicts ADD COLUMN rule text;
ALTER TABLE conflicts ADD COLUMN explanation text;
-- A pair has at most one open conflict, whichever detector saw it first.
CREATE UNIQUE INDEX conflicts_one_open_pair ON conflicts (tenant_id, least(item_a, item_b), greatest(item_a, item_b))
    WHERE status = 'open';
CREATE INDEX conflicts_items ON conflicts (item_a, item_b);

-- The periodic promotion sweep walks proposed items in (created_at, id) order, a bounded batch at a time.
CREATE TABLE promotion_cursors (
    tenant_id        uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    last_created_at  timestamptz NOT NULL,
    last_id          uuid NOT NULL,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['classification_receipts', 'promotion_cursors']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = engram_current_tenant())'
                       ' WITH CHECK (tenant_id = engram_current_tenant())', t);
    END LOOP;
END $$;
