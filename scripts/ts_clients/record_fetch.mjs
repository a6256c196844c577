// Preloaded into the MCP Inspector (NODE_OPTIONS=--import) by
// scripts/ts_clients_test.sh: wraps globalThis.fetch so that every request
// to RECORD_FETCH_URL_PREFIX is appended to RECORD_FETCH_LOG as one JSON
// line: method, JSON-RPC method, the MCP headers sent, status, and the
// session id answered. It changes nothing of the exchange itself.
import { appendFileSync } from 'node:fs';

const log = process.env.RECORD_FETCH_LOG;
const prefix = process.env.RECORD_FETCH_URL_PREFIX;
const original = globalThis.fetch;
if (log && prefix && original) {
  globalThis.fetch = async function recordingFetch(input, init = {}) {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(prefix)) return original(input, init);
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    let rpc = null;
    if (typeof init.body === 'string') {
      try {
        rpc = JSON.parse(init.body).method ?? null;
      } catch {
        rpc = '?';
      }
    }
    const entry = {
      method: (init.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase(),
      rpc,
      version: headers.get('mcp-protocol-version'),
      mcpMethod: headers.get('mcp-method'),
      mcpName: headers.get('mcp-name'),
      session: headers.get('mcp-session-id'),
      bearer: (headers.get('authorization') ?? '').startsWith('Bearer '),
    };
    try {
      const response = await original(input, init);
      entry.status = response.status;
      entry.sessionAnswered = response.headers.get('mcp-session-id');
      return response;
    } catch (e) {
      entry.error = String(e);
      throw e;
    } finally {
      appendFileSync(log, JSON.stringify(entry) + '\n');
    }
  };
}
