-- Idempotency keys of the writes that take one (remember, remember/batch, observe): per tenant, principal and
-- route, the fingerprint of the request first sent with the key and the answer it got. The row is inserted
-- first thing in the write's transaction and its answer stored before commit, so a concurrent request with the
-- same key waits on the primary key and then replays the answer instead of writing twice. The ingest sweep
-- deletes rows older than ENGRAM_IDEMPOTENCY_TTL_HOURS.
CREATE TABLE idempotency_keys (
    tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    principal_id  uuid NOT NULL,
    route         text NOT NULL,
    key           text NOT NULL,
    request_hash  bytea NOT NULL,
    answer        bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, principal_id, route, key),
    FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (tenant_id, created_at);

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_keys
    USING (tenant_id = engram_current_tenant()) WITH CHECK (tenant_id = engram_current_tenant());
