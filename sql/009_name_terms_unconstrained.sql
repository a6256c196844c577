-- 009: the name-term index without a foreign key or a by-entity index.
--
-- `entity_name_terms` is derived data (`graph::resolution::index_terms` of
-- each entity's key and name) and about four rows are written per new
-- entity: with the foreign key and the second index that was eight B-tree
-- writes and eight parent look-ups per entity, measured at about a tenth of
-- the writer's time on entity-rich text. The writer now deletes an entity's
-- terms itself, by deriving them again, before it deletes the entity
-- (`TenantWriter::forget_graph`), which is the only place entities are
-- deleted. The table is recreated empty and every tenant's terms are
-- rebuilt at its next graph write (`name_terms_version` 0).
DROP TABLE entity_name_terms;
CREATE TABLE entity_name_terms (
    tenant_id  INTEGER NOT NULL,
    term       TEXT    NOT NULL,
    entity_id  INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, term, entity_id)
) WITHOUT ROWID;
UPDATE tenants SET name_terms_version = 0;
