-- Other tenants' public memories, for a tenant that accepts them (the keyword search's public branch): the newest
-- that match the query, up to the candidate cap. `@@` is not leakproof, so under forced Row Level Security it is
-- tested as a row filter after the policies, never as an index condition; with no index to lead the walk to the
-- public rows, that branch read every row of memory_items, of every tenant (a sequential scan: 100,000 rows for
-- each question at 100,000 memories, docs/benchmarks.md). Through this index it reads the public rows only,
-- newest first, and stops at the cap; writes of other memories add nothing to it.
--
-- The predicate's second condition is always true (content_tsv is generated from text that is never null) and
-- is there for the planner. The branch's own `content_tsv @@ ...` (a strict operator) implies it, so the branch
-- can use the index, but Row Level Security's public_items policy (`visibility = 'public' AND EXISTS ...`) does
-- not. With `visibility = 'public'` alone, the policy's OR with the tenant's own rows could be planned as a
-- bitmap OR of a tenant index and this one, and the tenant's own branch then read all of its rows for a hash
-- join instead of looking up its matches by id (measured: 60,000 rows, docs/benchmarks.md). A condition
-- on tenant_id would not do: the column is NOT NULL, and the planner proves `tenant_id IS NOT NULL` from that.
CREATE INDEX IF NOT EXISTS memory_items_public_recent ON memory_items (created_at DESC)
    WHERE visibility = 'public' AND content_tsv IS NOT NULL;
