-- 007: entity resolution across documents.
--
-- An index from the terms of entity names to entities
-- (`graph::resolution::index_terms`: each word, the words run together,
-- the initials, the acronym, the first and last letters of long words), so
-- a name new to a tenant finds the few stored entities it may be another
-- name of through indexed lookups, never a scan. Derived data: the writer
-- rebuilds a tenant's terms at its next graph write whenever
-- `tenants.name_terms_version` is older than the binary's derivation
-- (0 here: entities stored before this migration get their terms then).
CREATE TABLE entity_name_terms (
    tenant_id  INTEGER NOT NULL REFERENCES tenants(id),
    term       TEXT    NOT NULL,
    entity_id  INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    PRIMARY KEY (tenant_id, term, entity_id)
) WITHOUT ROWID;
CREATE INDEX entity_name_terms_by_entity ON entity_name_terms (entity_id);

ALTER TABLE tenants ADD COLUMN name_terms_version INTEGER NOT NULL DEFAULT 0;

-- Why a name from another document was merged into an entity: the alias
-- it became (also in entity_aliases), the rule, both scores. Kept to
-- explain and audit merges; nothing reads it to decide.
CREATE TABLE entity_merges (
    tenant_id   INTEGER NOT NULL REFERENCES tenants(id),
    alias_key   TEXT    NOT NULL,
    entity_id   INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    rule        TEXT    NOT NULL,
    name_score  REAL    NOT NULL,
    cosine      REAL    NOT NULL,
    at          INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, alias_key)
) WITHOUT ROWID;
CREATE INDEX entity_merges_by_entity ON entity_merges (entity_id);
