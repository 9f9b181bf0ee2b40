-- What recall served, to whom, under which scoring version: one row per recall, written off the request path.
-- The query text is not kept (it can hold anything); the items and their scores are.
CREATE TABLE recall_logs (
    tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id               uuid NOT NULL PRIMARY KEY,
    principal_id     uuid NOT NULL,
    mode             text NOT NULL,
    scoring_version  text NOT NULL,
    item_ids         uuid[] NOT NULL,
    scores           real[] NOT NULL,
    omitted          integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX recall_logs_tenant_created ON recall_logs (tenant_id, created_at DESC);

ALTER TABLE recall_logs ENABLE ROW LEVEL SECURITY;
ALTER TABLE recall_logs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON recall_logs
    USING (tenant_id = engram_current_tenant()) WITH CHECK (tenant_id = engram_current_tenant());
