-- 014: each document's content key (the hash of its text after white space
-- and line endings are normalised, or of its bytes), so that content already
-- stored is found before it is stored twice. NULL for documents stored
-- before this version and for images and audio, whose content is not
-- compared.
ALTER TABLE documents ADD COLUMN content_key TEXT;
CREATE INDEX documents_by_content_key ON documents (tenant_id, content_key)
    WHERE content_key IS NOT NULL;
