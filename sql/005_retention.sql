-- 005: retention. A document may expire at a given time; expired documents
-- are invisible at once and purged (forgotten) by the ingestion worker.
ALTER TABLE documents ADD COLUMN expires_at INTEGER;
CREATE INDEX documents_expiry ON documents (tenant_id, expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX documents_by_created ON documents (tenant_id, created_at);
