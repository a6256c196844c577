-- 002: usage accounting. One row per completed call made through the HTTP
-- API or the SSE transport: who called what, how many bytes went in and out
-- and how long it took. Failed calls are not charged, so no row is written
-- for them. Rows never hold content.
--
-- Timestamps are Unix milliseconds (UTC).

CREATE TABLE usage (
    id            INTEGER PRIMARY KEY,
    tenant_id     INTEGER NOT NULL REFERENCES tenants(id),
    subject       TEXT    NOT NULL,
    operation     TEXT    NOT NULL,            -- tool name, MCP method or API route
    request_bytes INTEGER NOT NULL,
    reply_bytes   INTEGER NOT NULL,
    duration_us   INTEGER NOT NULL,
    at            INTEGER NOT NULL
);
-- Status sums one caller's rows: (tenant, subject) leads the key.
CREATE INDEX usage_by_caller ON usage (tenant_id, subject, operation);
