-- Authentication read an API key and its principal on every request in five statements inside a transaction
-- (BEGIN, set the key id the key_lookup policy admits, read the key, set its tenant, read the principal,
-- COMMIT). This function does the same reads, under the same policies (SECURITY INVOKER: the caller's role
-- and Row Level Security apply), in one statement. Both settings are local to the statement's transaction.
CREATE FUNCTION engram_find_key(p_key_id text)
RETURNS TABLE (
    tenant_id uuid, principal_id uuid, salt bytea, secret_hash bytea, scopes text[], revoked_at timestamptz,
    stale boolean, principal_type text, disabled_at timestamptz, platform_admin boolean
)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $$
#variable_conflict use_column
DECLARE
    k record;
BEGIN
    PERFORM set_config('app.api_key_id', p_key_id, true);
    SELECT a.tenant_id, a.principal_id, a.salt, a.secret_hash, a.scopes, a.revoked_at,
           coalesce(a.last_used_at < now() - interval '1 minute', true) AS stale
      INTO k
      FROM api_keys a
     WHERE a.id = p_key_id;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    PERFORM set_config('app.tenant_id', k.tenant_id::text, true);
    RETURN QUERY
        SELECT k.tenant_id, k.principal_id, k.salt, k.secret_hash, k.scopes, k.revoked_at, k.stale,
               p.type, p.disabled_at, p.platform_admin
          FROM principals p
         WHERE p.id = k.principal_id;
END
$$;
