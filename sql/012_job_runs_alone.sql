-- 012: a job remembers that it was begun, apart from how often it was
-- begun alone.
--
-- A kill during a batch of many jobs cannot be charged to any one of them:
-- `begun` marks every job of an interrupted batch so that each runs in a
-- batch of its own next time, and `attempts` now counts only attempts begun
-- alone (`TenantWriter::begin_attempts`), the only ones a crash can be
-- blamed on. A job counted the old way was interrupted at least once.
ALTER TABLE jobs ADD COLUMN begun INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET begun = 1 WHERE state = 'pending' AND attempts > 0;
