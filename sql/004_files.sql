-- 004: files, originals and forgetting.
--
-- Paginated documents (PDF) keep their pages' byte spans in the extracted
-- text, and each of their chunks the page it lies on, so evidence can cite
-- a page. Forgetting a document deletes its original only when no other
-- document of the tenant shares it, which needs documents by hash.

ALTER TABLE documents ADD COLUMN pages TEXT;   -- JSON [{"page","start","end"}, ...]
ALTER TABLE chunks ADD COLUMN page INTEGER;    -- 1-based page of a paginated document

CREATE INDEX documents_by_tenant_sha256 ON documents (tenant_id, sha256);
