-- 013: a tenant's entities in order of mentions, for the memory browser's
-- most-mentioned list and the graph's starting picture (`GET /v1/entities`,
-- `GET /v1/graph` without an entity), which otherwise sorted every entity
-- of the tenant on each request (50 ms at 72k entities).
CREATE INDEX entities_by_mentions ON entities (tenant_id, mention_count DESC, id);
