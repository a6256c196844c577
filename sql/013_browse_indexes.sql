-- 013: indexes for the memory browser's lists, which otherwise sorted a
-- whole tenant on each request (measured at 100k documents and 72k+
-- entities; scripts/bench_browse.py).
--
-- A tenant's entities in order of mentions: the most-mentioned list and
-- the graph's starting picture (`GET /v1/entities`, `GET /v1/graph`
-- without an entity).
CREATE INDEX entities_by_mentions ON entities (tenant_id, mention_count DESC, id);
-- A tenant's documents newest first (`GET /v1/documents` pages by id): the
-- planner otherwise read them by creation time and sorted them all.
CREATE INDEX documents_newest ON documents (tenant_id, id);
