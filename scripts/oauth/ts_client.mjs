// The official TypeScript SDK v1's OAuth client (@modelcontextprotocol/sdk,
// pinned in scripts/oauth_test.py) against alayasiki-api's authorization
// server: discovery, RFC 7591 registration, authorization (the URL is
// printed as `AUTHORIZE <url>`; scripts/oauth_test.py signs in through
// chromium and writes the code back on stdin), token, then tools/list,
// alayasiki_ingest and alayasiki_query. Prints `OK <json>` at the end.
//
// Usage: node ts_client.mjs PREFIX MCP_URL REDIRECT_URI
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const [prefix, mcpUrl, redirectUri] = process.argv.slice(2);
const require = createRequire(join(prefix, 'package.json'));
const load = (s) => import(pathToFileURL(require.resolve(s)).href);
const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { UnauthorizedError } = await load('@modelcontextprotocol/sdk/client/auth.js');

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

class MemoryProvider {
  get redirectUrl() { return redirectUri; }
  get clientMetadata() {
    return {
      client_name: 'oauth_test typescript',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() { return this.client; }
  saveClientInformation(info) { this.client = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  redirectToAuthorization(url) { console.log(`AUTHORIZE ${url.href}`); }
  saveCodeVerifier(verifier) { this.verifier = verifier; }
  codeVerifier() { return this.verifier; }
}

const provider = new MemoryProvider();
let transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
const client = new Client({ name: 'oauth-test-ts', version: '1.0.0' });
try {
  await client.connect(transport);
  throw new Error('connected without signing in');
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
}
const code = (await lines.next()).value.trim();
await transport.finishAuth(code);
transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
await client.connect(transport);
const tools = await client.listTools();
const note = 'The typescript team rotates the on-call pager every Tuesday.';
const stored = await client.callTool({ name: 'alayasiki_ingest', arguments: { content: note, wait: true } });
if (stored.isError) throw new Error(`ingest: ${JSON.stringify(stored.content)}`);
const found = await client.callTool({ name: 'alayasiki_query', arguments: { query: 'when is the on-call pager rotated' } });
if (found.isError || !found.content[0].text.includes('Tuesday')) throw new Error(`query: ${JSON.stringify(found.content)}`);
await client.close();
console.log(`OK ${JSON.stringify({ client_id: provider.client.client_id, tools: tools.tools.length, refresh: Boolean(provider.saved.refresh_token) })}`);
process.exit(0);
