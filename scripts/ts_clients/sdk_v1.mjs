// The official TypeScript SDK v1 (@modelcontextprotocol/sdk, pinned in
// scripts/ts_clients_test.sh): Client + StreamableHTTPClientTransport
// against alayasiki-api's /mcp, the bearer token in requestInit headers.
// v1 speaks only the session-based era: initialize, then 2025-11-25 with an
// Mcp-Session-Id, ended with DELETE (terminateSession).
import { checkWire, fail, installedVersion, load, recordingFetch, scenario, token, withServer } from './common.mjs';

const LABEL = 'ts_sdk_v1';
const VERSION = '2025-11-25';

await withServer(LABEL, async (base) => {
  const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const wire = recordingFetch();
  const started = performance.now();
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token('agent', 'ts-v1', ['admin'])}` } },
    fetch: wire.fetch,
  });
  const client = new Client({ name: 'alayasiki-ts-sdk-v1-test', version: '1.0.0' });
  await client.connect(transport);
  const connected = performance.now() - started;
  if (transport.protocolVersion !== VERSION) fail(LABEL, `negotiated ${transport.protocolVersion}, expected ${VERSION}`);
  if (client.getServerVersion()?.name !== 'alayasiki-mcp') fail(LABEL, `serverInfo ${JSON.stringify(client.getServerVersion())}`);
  await scenario(LABEL, client, 'ts-v1');
  await transport.terminateSession();
  await client.close();
  const elapsed = performance.now() - started;
  const deletes = wire.exchanges.filter((e) => e.method === 'DELETE');
  if (deletes.length !== 1 || deletes[0].status !== 200) fail(LABEL, `DELETE of the session: ${JSON.stringify(deletes)}`);
  if (process.env.TS_CLIENTS_DEBUG) console.error(wire.exchanges.map((e) => [e.method, e.rpc, e.status, e.ms?.toFixed(1)]));
  const posts = checkWire(LABEL, wire.exchanges, VERSION, true);
  console.log(`${LABEL}: ok @modelcontextprotocol/sdk ${installedVersion('@modelcontextprotocol/sdk')}: protocol ${VERSION}, ` +
    `connect ${connected.toFixed(0)} ms, ${posts} POSTs in ${elapsed.toFixed(0)} ms`);
});
