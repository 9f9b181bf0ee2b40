-- Public items: readable by any authenticated caller, in any tenant, when their tenant enables it.
-- Row Level Security grows read-only policies for exactly that; every write policy is unchanged.

-- Whether a tenant publishes is not a secret: any caller may see the flag of a publishing tenant.
CREATE POLICY public_tenants ON tenants FOR SELECT USING (public_enabled);

CREATE POLICY public_items ON memory_items FOR SELECT
    USING (visibility = 'public'
           AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = memory_items.tenant_id AND t.public_enabled));

CREATE POLICY public_item_embeddings ON memory_embeddings FOR SELECT
    USING (EXISTS (SELECT 1 FROM memory_items i WHERE i.id = memory_embeddings.item_id AND i.visibility = 'public'
                   AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = i.tenant_id AND t.public_enabled)));

CREATE POLICY public_item_stages ON item_stages FOR SELECT
    USING (EXISTS (SELECT 1 FROM memory_items i WHERE i.id = item_stages.item_id AND i.visibility = 'public'
                   AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = i.tenant_id AND t.public_enabled)));
