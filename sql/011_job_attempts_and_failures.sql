-- 011: a job's attempts count the times the worker began it; a failed job
-- says why in a reason code.
--
-- `attempts` counted start-ups that found a job pending, so a job far back
-- in a replayed backlog could be failed after a few restarts without ever
-- having run. It now counts attempts the worker began (committed before
-- the work, `TenantWriter::begin_attempts`); counts of pending jobs made
-- the old way mean nothing and start again from zero. `failure` is the
-- client-safe reason code of a failed job (`journal::FailureKind`), which
-- `alayasiki_status` counts.
ALTER TABLE jobs ADD COLUMN failure TEXT;
UPDATE jobs SET attempts = 0 WHERE state = 'pending';
UPDATE jobs SET failure = CASE
        WHEN error = 'interrupted repeatedly' THEN 'interrupted'
        WHEN error LIKE 'internal error%' THEN 'internal'
        WHEN error LIKE 'the document''s original is missing%' THEN 'missing_original'
        ELSE 'content' END
 WHERE state = 'failed';
-- Start-up used to fail documents whose pending embed job had been found
-- pending too often, though their chunks were indexed (searchable by
-- keyword): they are ready, and their embed job stays failed.
UPDATE documents SET state = 'ready', error = NULL
 WHERE state = 'failed' AND EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = documents.id);
-- Failed jobs are few; status counts and lists them through this.
CREATE INDEX jobs_failed ON jobs (tenant_id, updated_at) WHERE state = 'failed';
