-- 003: the knowledge graph. Entities and their mentions in chunks,
-- relations with their evidence and Beta confidence, community summaries.

CREATE TABLE entities (
    id             INTEGER PRIMARY KEY,
    tenant_id      INTEGER NOT NULL REFERENCES tenants(id),
    key            TEXT    NOT NULL,          -- normalized name, the merge key
    name           TEXT    NOT NULL,          -- display name
    kind           TEXT    NOT NULL,
    mention_count  INTEGER NOT NULL DEFAULT 0,
    first_seen     INTEGER NOT NULL,
    last_seen      INTEGER NOT NULL,
    UNIQUE (tenant_id, key)
);

-- Other names of an entity ("Acme" for "Acme Corporation"), by key.
CREATE TABLE entity_aliases (
    tenant_id  INTEGER NOT NULL REFERENCES tenants(id),
    alias_key  TEXT    NOT NULL,
    alias      TEXT    NOT NULL,
    entity_id  INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    PRIMARY KEY (tenant_id, alias_key)
) WITHOUT ROWID;
CREATE INDEX entity_aliases_by_entity ON entity_aliases (entity_id);

-- Where an entity is mentioned: a byte span of a chunk's document.
CREATE TABLE mentions (
    entity_id   INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    chunk_id    INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    byte_start  INTEGER NOT NULL,
    byte_end    INTEGER NOT NULL,
    PRIMARY KEY (entity_id, chunk_id, byte_start)
) WITHOUT ROWID;
CREATE INDEX mentions_by_chunk ON mentions (chunk_id);

-- Subject-predicate-object triples. Evidence counts per provenance class
-- (one per document) give the Beta(alpha, beta) confidence.
CREATE TABLE relations (
    id                INTEGER PRIMARY KEY,
    tenant_id         INTEGER NOT NULL REFERENCES tenants(id),
    subject_id        INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    predicate         TEXT    NOT NULL,          -- key: stemmed verb phrase
    label             TEXT    NOT NULL,          -- as first written
    object_id         INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    kind              TEXT    NOT NULL CHECK (kind IN ('pattern', 'cooccurrence')),
    support_external  INTEGER NOT NULL DEFAULT 0,
    support_user      INTEGER NOT NULL DEFAULT 0,
    support_agent     INTEGER NOT NULL DEFAULT 0,
    contra_external   INTEGER NOT NULL DEFAULT 0,
    contra_user       INTEGER NOT NULL DEFAULT 0,
    contra_agent      INTEGER NOT NULL DEFAULT 0,
    alpha             REAL    NOT NULL DEFAULT 1.0,
    beta              REAL    NOT NULL DEFAULT 1.0,
    valid_from        INTEGER NOT NULL,
    valid_to          INTEGER,                  -- set when superseded
    superseded_by     INTEGER,
    last_evidence_at  INTEGER NOT NULL,
    UNIQUE (tenant_id, subject_id, predicate, object_id, kind)
);
CREATE INDEX relations_by_object ON relations (object_id);

CREATE TABLE relation_evidence (
    relation_id  INTEGER NOT NULL REFERENCES relations(id) ON DELETE CASCADE,
    document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    chunk_id     INTEGER NOT NULL,
    byte_start   INTEGER NOT NULL,
    byte_end     INTEGER NOT NULL,
    supports     INTEGER NOT NULL,              -- 1 supports, 0 contradicts
    provenance   TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    PRIMARY KEY (relation_id, document_id)
) WITHOUT ROWID;
CREATE INDEX relation_evidence_by_document ON relation_evidence (document_id);

-- Community summaries, an immutable snapshot per graph version.
CREATE TABLE communities (
    tenant_id      INTEGER NOT NULL REFERENCES tenants(id),
    graph_version  INTEGER NOT NULL,
    level          INTEGER NOT NULL,
    community      INTEGER NOT NULL,
    parent         INTEGER,
    title          TEXT    NOT NULL,
    summary        TEXT    NOT NULL,            -- JSON
    size           INTEGER NOT NULL,
    built_at       INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, graph_version, level, community)
) WITHOUT ROWID;

ALTER TABLE tenants ADD COLUMN graph_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tenants ADD COLUMN communities_version INTEGER NOT NULL DEFAULT -1;
