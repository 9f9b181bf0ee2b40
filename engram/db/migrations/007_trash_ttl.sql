-- The trash, expiry, and per-tenant switches for the built-in kinds.

-- A destroyed item lives on here as a full snapshot (the row, its edges, embeddings, conflicts, pipeline
-- stages and the items it had replaced) until it is restored or swept. The columns beside the snapshot are
-- what listing and visibility read: the same names as on memory_items, so one visibility predicate serves both.
CREATE TABLE trash (
    tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id            uuid NOT NULL PRIMARY KEY,
    item_id       uuid NOT NULL UNIQUE,
    workspace_id  uuid NOT NULL,
    principal_id  uuid NOT NULL,
    visibility    text NOT NULL,
    kind          text NOT NULL,
    review_status text NOT NULL,
    invalidated   boolean NOT NULL,
    reason        text NOT NULL CHECK (reason IN ('deleted', 'expired')),
    deleted_by    uuid,
    deleted_at    timestamptz NOT NULL DEFAULT now(),
    snapshot      jsonb NOT NULL
);
CREATE INDEX trash_tenant_deleted ON trash (tenant_id, deleted_at, id);

ALTER TABLE trash ENABLE ROW LEVEL SECURITY;
ALTER TABLE trash FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON trash
    USING (tenant_id = engram_current_tenant()) WITH CHECK (tenant_id = engram_current_tenant());

-- Feedback history outlives its item, like the audit trail: deleting an item must not try to delete it
-- (the table refuses deletes), and a restored item finds its history again.
ALTER TABLE feedback_events DROP CONSTRAINT feedback_events_tenant_id_item_id_fkey;

-- The sweep finds what has expired without scanning every item.
CREATE INDEX memory_items_expiry ON memory_items (expires_at) WHERE expires_at IS NOT NULL;

-- The sweep works tenant by tenant; it may list tenants when it says it is infrastructure.
CREATE POLICY system_lists_tenants ON tenants FOR SELECT USING (engram_system_scope());

-- Built-in kinds are shared rows; a tenant switches one off (or back on) here rather than shadowing it.
CREATE TABLE tenant_kind_settings (
    tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name        text NOT NULL,
    enabled     boolean NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, name)
);
ALTER TABLE tenant_kind_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_kind_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_kind_settings
    USING (tenant_id = engram_current_tenant()) WITH CHECK (tenant_id = engram_current_tenant());
