-- Feedback on memories: the history of every verdict (append-only) and, per item, the counter the startup
-- score's anti-feedback penalty reads (recalls since the last useful verdict).

CREATE TABLE feedback_events (
    tenant_id     uuid NOT NULL,
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    item_id       uuid NOT NULL,
    principal_id  uuid NOT NULL,
    verdict       text NOT NULL CHECK (verdict IN ('useful', 'noise')),
    recall_id     uuid,
    importance_before real NOT NULL,
    importance_after  real NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, item_id) REFERENCES memory_items (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);
-- The current verdict of a principal on an item is its latest row.
CREATE INDEX feedback_current ON feedback_events (item_id, principal_id, id DESC);
CREATE INDEX feedback_daily ON feedback_events (principal_id, created_at);

ALTER TABLE feedback_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE feedback_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON feedback_events
    USING (tenant_id = engram_current_tenant()) WITH CHECK (tenant_id = engram_current_tenant());
CREATE TRIGGER feedback_events_append_only BEFORE UPDATE OR DELETE ON feedback_events
    FOR EACH ROW EXECUTE FUNCTION engram_refuse_audit_change();

ALTER TABLE memory_items ADD COLUMN recalls_since_useful integer NOT NULL DEFAULT 0;
