// The MCP Inspector CLI (pinned in scripts/ts_clients_test.sh, the same
// install as scripts/inspector_strict.sh) against alayasiki-api's /mcp:
// `--transport http --server-url .../mcp --header "Authorization: Bearer …"`,
// in its default era (legacy: initialize, 2025-11-25, a session) and with
// `--protocol-era modern` (2026-07-28, stateless). Each era runs, one CLI
// invocation each: tools/list, tools/call alayasiki_ingest, tools/call
// alayasiki_query (the evidence must hold the text and the document id),
// resources/read of alayasiki://documents/<id>.
//
// The CLI prints no protocol version, so record_fetch.mjs is preloaded into
// it (NODE_OPTIONS=--import) to log every request it makes to the server;
// the revision is checked on those requests' headers.
//
// Usage: node inspector_http.mjs API_BINARY INSPECTOR_BIN
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fail, token, withServer } from './common.mjs';

const LABEL = 'inspector_http';
const inspector = process.argv[3];
const recorder = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), 'record_fetch.mjs')).href;
const ERAS = [
  { name: 'default', flags: [], version: '2025-11-25', sessionBased: true },
  { name: 'modern', flags: ['--protocol-era', 'modern'], version: '2026-07-28', sessionBased: false },
];

await withServer(LABEL, async (base) => {
  if (!inspector) fail(LABEL, 'usage: node inspector_http.mjs API_BINARY INSPECTOR_BIN');
  const home = mkdtempSync(join(tmpdir(), 'alayasiki-inspector-http-'));
  try {
    for (const era of ERAS) {
      const label = `${LABEL} era=${era.name}`;
      const tenant = `inspector-${era.name}`;
      const bearer = `Authorization: Bearer ${token('agent', tenant, ['admin'])}`;
      const log = join(home, `${era.name}.jsonl`);
      writeFileSync(log, '');
      const runs = [];
      // One Inspector CLI invocation; its parsed --format json `result`.
      const cli = (args) => {
        const started = performance.now();
        const argv = ['--cli', '--transport', 'http', '--server-url', `${base}/mcp`, '--header', bearer,
          ...era.flags, '--format', 'json', '--stored-auth-only', ...args];
        const out = spawnSync(inspector, argv, {
          encoding: 'utf8',
          timeout: 60_000,
          env: {
            ...process.env,
            // Its catalog, client config and OAuth state go to a scratch HOME.
            HOME: home,
            NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${recorder}`.trim(),
            RECORD_FETCH_LOG: log,
            RECORD_FETCH_URL_PREFIX: `${base}/`,
          },
        });
        const tool = args.indexOf('--tool-name');
        runs.push({ what: tool < 0 ? args[1] : args[tool + 1], ms: performance.now() - started });
        if (out.error) fail(label, `cannot run ${inspector}: ${out.error}`);
        if (out.status !== 0) {
          fail(label, `inspector ${args.join(' ')} exited ${out.status ?? out.signal}\n--- stderr\n${out.stderr}\n--- stdout\n${out.stdout.slice(0, 4000)}`);
        }
        try {
          return JSON.parse(out.stdout).result;
        } catch {
          fail(label, `inspector ${args.join(' ')} printed no JSON result: ${out.stdout.slice(0, 4000)}`);
        }
      };
      const toolJson = (result) => {
        if (!result || result.isError) fail(label, `tool error: ${JSON.stringify(result)}`);
        return JSON.parse(result.content[0].text);
      };

      const text = `The ${tenant} ferry leaves pier 9 at 07:40 on weekdays.`;
      const names = (cli(['--method', 'tools/list']).tools ?? []).map((t) => t.name);
      for (const name of ['alayasiki_ingest', 'alayasiki_query', 'alayasiki_status']) {
        if (!names.includes(name)) fail(label, `${name} not listed: ${names}`);
      }
      const receipt = toolJson(cli(['--method', 'tools/call', '--tool-name', 'alayasiki_ingest', '--tool-args-json',
        JSON.stringify({ content: text, source: label, idempotency_key: label })]));
      const doc = receipt.document_id;
      if (!doc || receipt.state !== 'ready') fail(label, `ingest receipt ${JSON.stringify(receipt)}`);
      const answer = toolJson(cli(['--method', 'tools/call', '--tool-name', 'alayasiki_query',
        '--tool-arg', 'query=When does the ferry leave pier 9?']));
      const evidence = answer.evidence ?? [];
      if (!evidence.some((e) => e.document_id === doc && (e.text ?? '').includes('07:40'))) {
        fail(label, `query evidence lacks ${doc} with the ingested text: ${JSON.stringify(answer)}`);
      }
      if (evidence.some((e) => e.document_id !== doc)) fail(label, `evidence from another document: ${JSON.stringify(evidence)}`);
      const read = cli(['--method', 'resources/read', '--uri', `alayasiki://documents/${doc}`]);
      if (!(read.contents?.[0]?.text ?? '').includes(text)) {
        fail(label, `resources/read did not return the stored text: ${JSON.stringify(read)}`);
      }

      // The wire: what the CLI actually sent.
      const wire = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      const show = () => JSON.stringify(wire.map((e) => [e.method, e.rpc, e.status, e.version]));
      if (wire.length === 0) fail(label, 'no request of the Inspector was recorded (record_fetch.mjs not loaded?)');
      for (const e of wire) {
        if (!e.bearer) fail(label, `${e.method} ${e.rpc} without the bearer token`);
        if (e.error || !(e.status < 400)) fail(label, `${e.method} ${e.rpc} answered ${e.status ?? e.error}: ${show()}`);
      }
      const rpcs = wire.map((e) => e.rpc);
      if (era.sessionBased) {
        const inits = wire.filter((e) => e.rpc === 'initialize');
        if (inits.length !== runs.length) fail(label, `${inits.length} initialize for ${runs.length} runs: ${show()}`);
        for (const e of wire) {
          if (e.rpc === 'initialize') {
            if (!e.sessionAnswered) fail(label, `initialize answered without Mcp-Session-Id: ${show()}`);
          } else if (e.version !== era.version || !e.session) {
            fail(label, `${e.method} ${e.rpc} sent version ${e.version}, session ${e.session}: ${show()}`);
          }
        }
      } else {
        if (rpcs.includes('initialize')) fail(label, `initialize sent in the stateless era: ${show()}`);
        for (const e of wire) {
          if (e.method !== 'POST' || e.version !== era.version || e.mcpMethod !== e.rpc || e.sessionAnswered) {
            fail(label, `${e.method} ${e.rpc}: version ${e.version}, Mcp-Method ${e.mcpMethod}, session ${e.sessionAnswered}: ${show()}`);
          }
          if (['tools/call', 'resources/read'].includes(e.rpc) && !e.mcpName) fail(label, `${e.rpc} without Mcp-Name`);
        }
      }
      for (const rpc of ['tools/list', 'tools/call', 'resources/read']) {
        if (!rpcs.includes(rpc)) fail(label, `no ${rpc} recorded: ${show()}`);
      }
      const versions = [...new Set(wire.map((e) => e.version).filter(Boolean))];
      console.log(`${label}: ok protocol ${versions.join(',')}: ${runs.length} CLI runs, ${wire.length} requests; ` +
        runs.map((r) => `${r.what} ${r.ms.toFixed(0)} ms`).join(', '));
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
