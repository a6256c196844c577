-- 015: versions, the time a document is about, and its filterable fields.
--
-- A document replaced by a newer version (an update, or an ingest that
-- declares it supersedes it) keeps its row, original and chunks as history:
-- `superseded_by` names the version that replaced it (documents.id) and
-- `superseded_at` when. Default recall searches current versions only.
ALTER TABLE documents ADD COLUMN superseded_by INTEGER;
ALTER TABLE documents ADD COLUMN superseded_at INTEGER;
CREATE INDEX documents_by_superseded_by ON documents (superseded_by)
    WHERE superseded_by IS NOT NULL;

-- When what the document records was observed (Unix ms): the first full
-- date among its metadata's string values, at midnight UTC. NULL when its
-- metadata names none: the document is then timed by `created_at`. Rows
-- stored before this version are NULL (timed by when they were stored).
ALTER TABLE documents ADD COLUMN observed_at INTEGER;
CREATE INDEX documents_by_observed ON documents (tenant_id, coalesce(observed_at, created_at));

-- The top-level metadata members recall can filter on: each scalar member
-- (a string as written, a number or boolean as its JSON text) and each
-- scalar element of a list member (`tags: ["a", "b"]` is two rows). Values
-- longer than 256 bytes are not indexed (and so never match a filter).
CREATE TABLE document_fields (
    tenant_id    INTEGER NOT NULL,
    key          TEXT    NOT NULL,
    value        TEXT    NOT NULL,
    document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    PRIMARY KEY (tenant_id, key, value, document_id)
) WITHOUT ROWID;
CREATE INDEX document_fields_by_document ON document_fields (document_id);

INSERT OR IGNORE INTO document_fields (tenant_id, key, value, document_id)
SELECT d.tenant_id, m.key,
       CASE m.type WHEN 'text' THEN m.value WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'
                   ELSE CAST(m.atom AS TEXT) END,
       d.id
  FROM documents d, json_each(CASE WHEN json_valid(d.metadata) AND json_type(d.metadata) = 'object'
                                   THEN d.metadata ELSE '{}' END) m
 WHERE m.type IN ('text', 'integer', 'real', 'true', 'false')
   AND length(CAST(m.atom AS TEXT)) <= 256;

INSERT OR IGNORE INTO document_fields (tenant_id, key, value, document_id)
SELECT d.tenant_id, m.key,
       CASE e.type WHEN 'text' THEN e.value WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'
                   ELSE CAST(e.atom AS TEXT) END,
       d.id
  FROM documents d, json_each(CASE WHEN json_valid(d.metadata) AND json_type(d.metadata) = 'object'
                                   THEN d.metadata ELSE '{}' END) m, json_each(m.value) e
 WHERE m.type = 'array' AND e.type IN ('text', 'integer', 'real', 'true', 'false')
   AND length(CAST(e.atom AS TEXT)) <= 256;
