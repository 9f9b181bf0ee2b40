-- Row Level Security read the tenant setting once per row. A policy such as
-- `tenant_id = engram_current_tenant()` is inlined into `tenant_id = NULLIF(current_setting('app.tenant_id',
-- true), '')::uuid`, and PostgreSQL evaluates it, a setting looked up by name and a uuid parsed, for every row a
-- scan reads: for the 500 rows of possible_supersedes' window that was half of the read's CPU. Written as
-- `(SELECT engram_current_tenant())`, the setting is read once per statement (an InitPlan) and each row is one
-- uuid comparison. The same for `engram_system_scope()`. Every policy keeps its meaning: within a statement the
-- settings do not change (they are set per transaction, or per statement inside engram_find_key, migration 028),
-- and the value stays usable as an index condition.
DO $$
DECLARE
    p record;
    fix text;
BEGIN
    FOR p IN
        SELECT pol.polname, c.relname,
               pg_get_expr(pol.polqual, pol.polrelid) AS qual,
               pg_get_expr(pol.polwithcheck, pol.polrelid) AS with_check
        FROM pg_policy pol JOIN pg_class c ON c.oid = pol.polrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
    LOOP
        fix := '';
        IF p.qual LIKE '%engram_current_tenant()%' OR p.qual LIKE '%engram_system_scope()%' THEN
            fix := format(' USING (%s)', replace(replace(p.qual, 'engram_current_tenant()', '(SELECT engram_current_tenant())'),
                                                 'engram_system_scope()', '(SELECT engram_system_scope())'));
        END IF;
        IF p.with_check LIKE '%engram_current_tenant()%' OR p.with_check LIKE '%engram_system_scope()%' THEN
            fix := fix || format(' WITH CHECK (%s)',
                                 replace(replace(p.with_check, 'engram_current_tenant()', '(SELECT engram_current_tenant())'),
                                         'engram_system_scope()', '(SELECT engram_system_scope())'));
        END IF;
        IF fix <> '' THEN
            EXECUTE format('ALTER POLICY %I ON %I', p.polname, p.relname) || fix;
        END IF;
    END LOOP;
END $$;
