-- 016: memory scopes, the parts of a tenant's memory a token may be limited
-- to (a team, a project). A document belongs to each scope it was stored
-- into or later shared into: a grant, not a copy, so forgetting the
-- document forgets it in every scope. `granted_by` is the subject that
-- stored or shared it there, `granted_at` when (Unix ms). A document in no
-- scope is seen only by unrestricted callers and the subject that wrote it.
CREATE TABLE document_scopes (
    tenant_id    INTEGER NOT NULL,
    scope        TEXT    NOT NULL,
    document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    granted_by   TEXT    NOT NULL,
    granted_at   INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, scope, document_id)
) WITHOUT ROWID;
CREATE INDEX document_scopes_by_document ON document_scopes (document_id, scope);
