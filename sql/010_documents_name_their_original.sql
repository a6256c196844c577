-- 010: documents name their original by id, not by hash.
--
-- A document found its original through the hash (`originals.tenant_id,
-- sha256` = `documents.tenant_id, sha256`), and forgetting needed documents
-- by hash too (`documents_by_tenant_sha256`, to keep an original another
-- document shares). Hashes are random, so every new document wrote one
-- random page of that index: 13% of the pages written to the log while
-- ingesting from 100k to 110k documents. `original_id` grows with the
-- originals' ids, and its index is appended to instead. Identical bytes
-- still share one original; the hash stays in `documents` as the content's
-- digest, and the originals' own (tenant, hash) key still finds a shared one.
ALTER TABLE documents ADD COLUMN original_id INTEGER REFERENCES originals(id);
UPDATE documents SET original_id = (
    SELECT o.id FROM originals o
     WHERE o.tenant_id = documents.tenant_id AND o.sha256 = documents.sha256);
CREATE INDEX documents_by_original ON documents (original_id);
DROP INDEX documents_by_tenant_sha256;
