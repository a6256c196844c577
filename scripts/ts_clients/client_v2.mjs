// The official TypeScript SDK v2 client (@modelcontextprotocol/client,
// pinned in scripts/ts_clients_test.sh): Client + StreamableHTTPClientTransport
// against alayasiki-api's /mcp, the bearer token in requestInit headers, in
// each of its version-negotiation modes:
//
// - default (no versionNegotiation, i.e. 'legacy'): initialize, 2025-11-25,
//   a session (Mcp-Session-Id) ended with DELETE;
// - { mode: 'auto' }: probes server/discover, which this server answers, so
//   it must end up on 2026-07-28, stateless;
// - { mode: { pin: '2026-07-28' } }: exactly 2026-07-28 (its server/discover
//   is sent at that revision, with no fallback to initialize).
import { checkWire, fail, installedVersion, load, recordingFetch, scenario, token, withServer } from './common.mjs';

const LABEL = 'ts_client_v2';
const MODES = [
  { name: 'default', negotiation: undefined, version: '2025-11-25', era: 'legacy' },
  { name: 'auto', negotiation: { mode: 'auto' }, version: '2026-07-28', era: 'modern' },
  { name: 'pin-2026-07-28', negotiation: { mode: { pin: '2026-07-28' } }, version: '2026-07-28', era: 'modern' },
];

await withServer(LABEL, async (base) => {
  const { Client, StreamableHTTPClientTransport } = await load('@modelcontextprotocol/client');
  const sdk = installedVersion('@modelcontextprotocol/client');
  for (const mode of MODES) {
    const label = `${LABEL} mode=${mode.name}`;
    const tenant = `ts-v2-${mode.name}`;
    const wire = recordingFetch();
    const started = performance.now();
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token('agent', tenant, ['admin'])}` } },
      fetch: wire.fetch,
    });
    const options = mode.negotiation ? { versionNegotiation: mode.negotiation } : {};
    const client = new Client({ name: 'alayasiki-ts-client-v2-test', version: '1.0.0' }, options);
    await client.connect(transport);
    const connected = performance.now() - started;
    const version = client.getNegotiatedProtocolVersion();
    const era = client.getProtocolEra();
    if (version !== mode.version || era !== mode.era) {
      fail(label, `negotiated ${version} (${era}), expected ${mode.version} (${mode.era})`);
    }
    await scenario(`ts-client-v2-${mode.name}`, client, tenant);
    const sessionBased = mode.era === 'legacy';
    if (sessionBased) await transport.terminateSession();
    await client.close();
    const elapsed = performance.now() - started;
    if (process.env.TS_CLIENTS_DEBUG) {
      console.error(label, wire.exchanges.map((e) => [e.method, e.rpc, e.status, e.headers['mcp-protocol-version'],
        e.headers['mcp-method'], e.headers['mcp-name'], e.ms?.toFixed(1)]));
    }
    if (sessionBased) {
      const deletes = wire.exchanges.filter((e) => e.method === 'DELETE');
      if (deletes.length !== 1 || deletes[0].status !== 200) fail(label, `DELETE of the session: ${JSON.stringify(deletes)}`);
    } else {
      const named = wire.exchanges.filter((e) => ['tools/call', 'resources/read'].includes(e.rpc));
      if (named.some((e) => !e.headers['mcp-name'])) fail(label, 'a tools/call or resources/read POST without Mcp-Name');
    }
    const posts = checkWire(label, wire.exchanges, mode.version, sessionBased);
    console.log(`${label}: ok @modelcontextprotocol/client ${sdk}: protocol ${version} (${era}), ` +
      `connect ${connected.toFixed(0)} ms, ${posts} POSTs in ${elapsed.toFixed(0)} ms`);
  }
});
