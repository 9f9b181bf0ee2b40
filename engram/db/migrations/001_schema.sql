-- Schema v1: identity, the memory kinds registry, memory items and their embeddings, typed links,
-- conflicts, the append-only audit trail, pipeline stages, and the outbox / inbox of the event bus.
-- Every tenant-scoped table carries tenant_id; Row Level Security is enabled and forced on each one.
-- Services run as a non-owner role (granted by the migration runner) and set app.tenant_id per
-- transaction; the policies below read it through engram_current_tenant().

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE FUNCTION engram_current_tenant() RETURNS uuid
    LANGUAGE sql STABLE
    AS $$ SELECT NULLIF(current_setting('app.tenant_id', true), '')::uuid $$;

-- The outbox relay is the one reader that works across tenants; it says so explicitly.
CREATE FUNCTION engram_system_scope() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(current_setting('app.system_scope', true), '') = 'on' $$;

-- ---------------------------------------------------------------- identity

CREATE TABLE tenants (
    id              uuid PRIMARY KEY,
    name            text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
    public_enabled  boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspaces (
    tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id          uuid NOT NULL PRIMARY KEY,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, name)
);

CREATE TABLE principals (
    tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id          uuid NOT NULL PRIMARY KEY,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    type        text NOT NULL CHECK (type IN ('agent', 'user', 'system', 'admin')),
    trusted     boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    disabled_at timestamptz,
    UNIQUE (tenant_id, id)
);

CREATE TABLE workspace_members (
    tenant_id     uuid NOT NULL,
    workspace_id  uuid NOT NULL,
    principal_id  uuid NOT NULL,
    role          text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, principal_id),
    FOREIGN KEY (tenant_id, workspace_id) REFERENCES workspaces (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE api_keys (
    tenant_id     uuid NOT NULL,
    id            text NOT NULL PRIMARY KEY,          -- the <key_id> of eng_<key_id>_<secret>
    principal_id  uuid NOT NULL,
    salt          bytea NOT NULL,
    secret_hash   bytea NOT NULL,
    scopes        text[] NOT NULL,
    label         text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz,
    last_used_at  timestamptz,
    FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);

-- ---------------------------------------------------------------- memory kinds

-- Built-in kinds have tenant_id NULL and are visible to every tenant; custom kinds belong to one.
CREATE TABLE memory_kinds (
    tenant_id                       uuid REFERENCES tenants (id) ON DELETE CASCADE,
    name                            text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,63}$'),
    singleton                       boolean NOT NULL DEFAULT false,
    requires_review                 boolean NOT NULL DEFAULT false,
    stays_in_recall_when_disputed   boolean NOT NULL DEFAULT false,
    default_importance              real NOT NULL DEFAULT 0.5 CHECK (default_importance BETWEEN 0 AND 1),
    enabled                         boolean NOT NULL DEFAULT true,
    created_at                      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX memory_kinds_name ON memory_kinds (tenant_id, name) NULLS NOT DISTINCT;

INSERT INTO memory_kinds (tenant_id, name, singleton, requires_review, stays_in_recall_when_disputed,
                          default_importance) VALUES
    (NULL, 'fact',        false, false, true,  0.5),
    (NULL, 'preference',  true,  false, true,  0.6),
    (NULL, 'doctrine',    false, true,  true,  0.8),
    (NULL, 'decision',    false, false, true,  0.7),
    (NULL, 'invariant',   true,  true,  true,  0.9),
    (NULL, 'observation', false, false, false, 0.3),
    (NULL, 'diary_entry', false, false, false, 0.3),
    (NULL, 'procedure',   false, false, true,  0.6),
    (NULL, 'summary',     false, false, false, 0.5);

-- ---------------------------------------------------------------- memory items

CREATE TABLE memory_items (
    tenant_id                 uuid NOT NULL,
    id                        uuid NOT NULL PRIMARY KEY,
    workspace_id              uuid NOT NULL,
    principal_id              uuid NOT NULL,
    content                   text NOT NULL CHECK (length(content) > 0),
    content_hash              bytea NOT NULL,
    content_tsv               tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
    kind                      text NOT NULL,
    subject                   text,
    wing                      text,
    room                      text,
    tags                      text[] NOT NULL DEFAULT '{}',
    importance                real NOT NULL CHECK (importance BETWEEN 0 AND 1),
    pinned                    boolean NOT NULL DEFAULT false,
    visibility                text NOT NULL DEFAULT 'workspace'
                              CHECK (visibility IN ('private', 'workspace', 'tenant', 'public')),
    review_status             text NOT NULL DEFAULT 'active'
                              CHECK (review_status IN ('proposed', 'active', 'disputed', 'rejected',
                                                       'superseded', 'archived')),
    authority                 smallint NOT NULL CHECK (authority IN (10, 20, 30, 40, 50)),
    source_type               text NOT NULL,
    source_uri                text,
    source_session            text,
    extracted_by_model        text,
    source_trust              real NOT NULL CHECK (source_trust BETWEEN 0 AND 1),
    memory_confidence         real NOT NULL DEFAULT 0.7 CHECK (memory_confidence BETWEEN 0 AND 1),
    source_confidence_prior   real CHECK (source_confidence_prior BETWEEN 0 AND 1),
    taxonomy_confidence       real CHECK (taxonomy_confidence BETWEEN 0 AND 1),
    retention_confidence      real CHECK (retention_confidence BETWEEN 0 AND 1),
    human_verified            boolean NOT NULL DEFAULT false,
    human_verified_by         uuid,
    human_verified_at         timestamptz,
    valid_from                timestamptz,
    valid_to                  timestamptz,
    created_at                timestamptz NOT NULL DEFAULT now(),
    superseded_by             uuid,
    invalidated_at            timestamptz,
    invalidated_reason        text,
    expires_at                timestamptz,
    recall_count              bigint NOT NULL DEFAULT 0,
    last_recalled_at          timestamptz,
    external_id               text,
    metadata                  jsonb NOT NULL DEFAULT '{}',
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, workspace_id) REFERENCES workspaces (tenant_id, id),
    FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id),
    FOREIGN KEY (tenant_id, superseded_by) REFERENCES memory_items (tenant_id, id),
    CHECK (valid_to IS NULL OR valid_from IS NULL OR valid_to >= valid_from)
);

-- Live rows are unique on their canonical content per author and workspace: remember is idempotent.
CREATE UNIQUE INDEX memory_items_dedup ON memory_items (tenant_id, workspace_id, principal_id, content_hash)
    WHERE review_status IN ('proposed', 'active', 'disputed') AND invalidated_at IS NULL;
CREATE INDEX memory_items_tsv ON memory_items USING gin (content_tsv);
CREATE INDEX memory_items_tenant_created ON memory_items (tenant_id, created_at DESC);
CREATE INDEX memory_items_tenant_kind ON memory_items (tenant_id, kind, review_status);
CREATE INDEX memory_items_external ON memory_items (tenant_id, external_id) WHERE external_id IS NOT NULL;

-- One row per (item, embedding profile); each profile gets its own partial HNSW index on a cast to its
-- dimension (created by the migration runner for the configured profile), so models can change
-- with a back-fill and no downtime.
CREATE TABLE memory_embeddings (
    tenant_id   uuid NOT NULL,
    item_id     uuid NOT NULL,
    profile     text NOT NULL,
    embedding   vector NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (item_id, profile),
    FOREIGN KEY (tenant_id, item_id) REFERENCES memory_items (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE memory_edges (
    tenant_id   uuid NOT NULL,
    id          uuid NOT NULL PRIMARY KEY,
    src_id      uuid NOT NULL,
    dst_id      uuid NOT NULL,
    type        text NOT NULL CHECK (type IN ('derived_from', 'references', 'explains', 'contradicts',
                                              'supports', 'depends_on', 'mentions', 'supersedes')),
    created_by  uuid,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, src_id, dst_id, type),
    FOREIGN KEY (tenant_id, src_id) REFERENCES memory_items (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, dst_id) REFERENCES memory_items (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE tunnels (
    tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id          uuid NOT NULL PRIMARY KEY,
    from_wing   text NOT NULL,
    from_room   text NOT NULL DEFAULT '',
    to_wing     text NOT NULL,
    to_room     text NOT NULL DEFAULT '',
    created_by  uuid,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, from_wing, from_room, to_wing, to_room)
);

CREATE TABLE conflicts (
    tenant_id    uuid NOT NULL,
    id           uuid NOT NULL PRIMARY KEY,
    item_a       uuid NOT NULL,
    item_b       uuid NOT NULL,
    type         text NOT NULL CHECK (type IN ('contradiction', 'duplicate', 'refinement', 'scope_overlap')),
    detector     text NOT NULL,
    score        real,
    status       text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    resolution   text CHECK (resolution IN ('keep_existing', 'accept_new', 'keep_both', 'merge')),
    resolver_id  uuid,
    reason       text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    resolved_at  timestamptz,
    FOREIGN KEY (tenant_id, item_a) REFERENCES memory_items (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, item_b) REFERENCES memory_items (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX conflicts_open ON conflicts (tenant_id, status);

-- ---------------------------------------------------------------- audit and pipeline state

-- Append-only: the trail outlives the item (no foreign key), and the database refuses edits.
CREATE TABLE item_events (
    tenant_id   uuid NOT NULL REFERENCES tenants (id),
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    item_id     uuid NOT NULL,
    actor_id    uuid,
    action      text NOT NULL,
    old_value   jsonb,
    new_value   jsonb,
    reason      text,
    request_id  text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX item_events_item ON item_events (tenant_id, item_id, id);

CREATE FUNCTION engram_refuse_audit_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'item_events is append-only: % refused', TG_OP
                USING ERRCODE = 'insufficient_privilege'; END $$;
CREATE TRIGGER item_events_append_only BEFORE UPDATE OR DELETE ON item_events
    FOR EACH ROW EXECUTE FUNCTION engram_refuse_audit_change();
CREATE TRIGGER item_events_no_truncate BEFORE TRUNCATE ON item_events
    FOR EACH STATEMENT EXECUTE FUNCTION engram_refuse_audit_change();

-- Where each item is in the asynchronous pipeline (embedding, classification, ...).
CREATE TABLE item_stages (
    tenant_id   uuid NOT NULL,
    item_id     uuid NOT NULL,
    stage       text NOT NULL,
    status      text NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
    detail      text NOT NULL DEFAULT '',
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (item_id, stage),
    FOREIGN KEY (tenant_id, item_id) REFERENCES memory_items (tenant_id, id) ON DELETE CASCADE
);

-- ---------------------------------------------------------------- event bus

CREATE TABLE outbox (
    tenant_id     uuid NOT NULL REFERENCES tenants (id),
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      uuid NOT NULL UNIQUE,
    subject       text NOT NULL,
    envelope      jsonb NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    sent_at       timestamptz,
    attempts      integer NOT NULL DEFAULT 0,
    last_error    text
);
CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL;

CREATE TABLE consumer_inbox (
    tenant_id     uuid NOT NULL REFERENCES tenants (id),
    consumer      text NOT NULL,
    event_id      uuid NOT NULL,
    processed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, event_id)
);

-- ---------------------------------------------------------------- row level security

ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants USING (id = engram_current_tenant());

ALTER TABLE memory_kinds ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_kinds FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_kinds
    USING (tenant_id IS NULL OR tenant_id = engram_current_tenant())
    WITH CHECK (tenant_id = engram_current_tenant());

ALTER TABLE outbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE outbox FORCE ROW LEVEL SECURITY;
-- A tenant transaction writes its own tenant's events; only the relay (system scope) reads and marks across tenants.
CREATE POLICY tenant_writes ON outbox FOR INSERT WITH CHECK (tenant_id = engram_current_tenant());
CREATE POLICY tenant_or_relay_reads ON outbox FOR SELECT
    USING (tenant_id = engram_current_tenant() OR engram_system_scope());
CREATE POLICY relay_marks_sent ON outbox FOR UPDATE
    USING (engram_system_scope()) WITH CHECK (engram_system_scope());

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['workspaces', 'principals', 'workspace_members', 'api_keys', 'memory_items',
                             'memory_embeddings', 'memory_edges', 'tunnels', 'conflicts', 'item_events',
                             'item_stages', 'consumer_inbox']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = engram_current_tenant())'
                       ' WITH CHECK (tenant_id = engram_current_tenant())', t);
    END LOOP;
END $$;

-- ---------------------------------------------------------------- the development identity

-- Requests run as this tenant and principal until authentication lands.
INSERT INTO tenants (id, name) VALUES ('00000000-0000-4000-8000-000000000001', 'default');
INSERT INTO workspaces (tenant_id, id, name)
    VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', 'default');
INSERT INTO principals (tenant_id, id, name, type)
    VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000003', 'developer', 'user');
INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role)
    VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002',
            '00000000-0000-4000-8000-000000000003', 'owner');
