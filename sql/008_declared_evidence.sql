-- 008: relation evidence may also be 'declared': a fact the document states
-- about itself in its metadata (`declared_graph`, written by `import` for
-- the MCP memory server's relations), checked against its text like an
-- LLM's triple. SQLite cannot change a CHECK constraint in place, so the
-- table is rebuilt with the same rows (006 added `extractor` with a CHECK
-- allowing only 'rules' and 'llm'). Rows naming a relation or document that
-- no longer exists (impossible with foreign keys on, which the writer always
-- has) would fail the copy, so they are left behind.
CREATE TABLE relation_evidence_008 (
    relation_id  INTEGER NOT NULL REFERENCES relations(id) ON DELETE CASCADE,
    document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    chunk_id     INTEGER NOT NULL,
    byte_start   INTEGER NOT NULL,
    byte_end     INTEGER NOT NULL,
    supports     INTEGER NOT NULL,              -- 1 supports, 0 contradicts
    provenance   TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    extractor    TEXT    NOT NULL DEFAULT 'rules'
        CHECK (extractor IN ('rules', 'llm', 'declared')),
    PRIMARY KEY (relation_id, document_id)
) WITHOUT ROWID;
INSERT INTO relation_evidence_008
    SELECT relation_id, document_id, chunk_id, byte_start, byte_end, supports, provenance, at,
           extractor
      FROM relation_evidence
     WHERE relation_id IN (SELECT id FROM relations)
       AND document_id IN (SELECT id FROM documents);
DROP TABLE relation_evidence;
ALTER TABLE relation_evidence_008 RENAME TO relation_evidence;
CREATE INDEX relation_evidence_by_document ON relation_evidence (document_id);
