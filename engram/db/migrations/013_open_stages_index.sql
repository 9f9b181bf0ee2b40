-- The inventory ingest keeps for its gauges counts, per tenant, the items still waiting at a pipeline stage or
-- failed there (engram_pipeline_items). item_stages is keyed by item; without this index each count would read
-- every stage row of every tenant. Only the open rows are indexed: a stage that is done leaves it.
CREATE INDEX item_stages_open ON item_stages (tenant_id, stage, status) WHERE status <> 'done';
