-- Identity for authentication: API keys are found by their key id before the tenant is known, and the
-- development tenant gets an admin principal.

-- Authentication reads exactly one key row across tenants: the one whose id the caller presented
-- (set as app.api_key_id for that transaction). The secret's salted hash still has to match.
CREATE POLICY key_lookup ON api_keys FOR SELECT
    USING (id = NULLIF(current_setting('app.api_key_id', true), ''));

-- The development tenant's administrator: `engram up` issues the development key for it.
INSERT INTO principals (tenant_id, id, name, type)
    VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000004', 'admin', 'admin');
INSERT INTO workspace_members (tenant_id, workspace_id, principal_id, role)
    VALUES ('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002',
            '00000000-0000-4000-8000-000000000004', 'owner');

CREATE INDEX api_keys_principal ON api_keys (tenant_id, principal_id);
