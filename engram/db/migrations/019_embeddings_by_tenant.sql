-- A tenant's own embeddings, for the vector candidate query (engram/db/search.semantic). On a store shared by
-- many tenants a small tenant's nearest memories are read exactly from its own rows (a few thousand
-- distances) instead of walking the shared HNSW graph past every other tenant's vectors; the item id is
-- included so counting a tenant's rows can stay in the index.
CREATE INDEX memory_embeddings_tenant ON memory_embeddings (tenant_id, profile) INCLUDE (item_id);
