-- 006: optional LLM extraction. Each piece of relation evidence records
-- what found it: 'rules' (the offline extractor) or 'llm' (a triple an LLM
-- proposed, checked against the text). LLM extraction runs as jobs of kind
-- 'llm_extract' in the journal, after the document's own indexing job.
ALTER TABLE relation_evidence ADD COLUMN extractor TEXT NOT NULL DEFAULT 'rules'
    CHECK (extractor IN ('rules', 'llm'));
