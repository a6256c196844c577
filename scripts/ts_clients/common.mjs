// Shared by the TypeScript SDK clients' tests (scripts/ts_clients_test.sh):
// start alayasiki-api, mint a token, record every HTTP exchange, and run the
// ingest -> query -> resources/read scenario over one connected client.
//
// The SDK packages live in target/ (TS_CLIENTS_PREFIX), not beside these
// files, so they are loaded through a require rooted there.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

export const SECRET = 'ts-clients-test-secret-0123456789abcdef';

let failed = false;
export function fail(label, msg) {
  failed = true;
  console.error(`${label}: FAIL: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}

/** A module of the pinned SDK installs under TS_CLIENTS_PREFIX. */
export async function load(specifier) {
  const prefix = process.env.TS_CLIENTS_PREFIX;
  if (!prefix) throw new Error('TS_CLIENTS_PREFIX is not set (run scripts/ts_clients_test.sh)');
  const require = createRequire(join(prefix, 'package.json'));
  return import(pathToFileURL(require.resolve(specifier)).href);
}

/** The version of an installed package, from its package.json. */
export function installedVersion(pkg) {
  const file = join(process.env.TS_CLIENTS_PREFIX, 'node_modules', pkg, 'package.json');
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

const b64 = (data) => Buffer.from(data).toString('base64url');

/** An HS256 JWT for `sub` in `tenant` with `roles`, valid for 10 minutes. */
export function token(sub, tenant, roles) {
  const header = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const claims = { sub, tenant, roles, exp: Math.floor(Date.now() / 1000) + 600 };
  const payload = b64(JSON.stringify(claims));
  const sig = createHmac('sha256', SECRET).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${sig}`;
}

/**
 * Starts `binary` on a free loopback port with a fresh data directory;
 * resolves to { base, stop } once it printed its address. `stop()` sends
 * SIGTERM and resolves to the exit status.
 */
export function startServer(label, binary) {
  const data = mkdtempSync(join(tmpdir(), 'alayasiki-ts-clients-'));
  const child = spawn(binary, ['--bind', '127.0.0.1:0', '--data-dir', data], {
    env: { ...process.env, ALAYASIKI_JWT_SECRET: SECRET, ALAYASIKI_LOG: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  const stop = async () => {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await exited;
    clearTimeout(timer);
    rmSync(data, { recursive: true, force: true });
    return code;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: server did not report its address`)), 30_000);
    const lines = createInterface({ input: child.stderr });
    let found = false;
    lines.on('line', (line) => {
      if (!found && line.startsWith('alayasiki-api: listening on ')) {
        found = true;
        clearTimeout(timer);
        resolve({ base: line.slice('alayasiki-api: listening on '.length).trim(), stop });
      } else if (found) {
        process.stderr.write(`${label}: server: ${line}\n`);
      }
    });
    exited.then((code) => {
      if (!found) {
        clearTimeout(timer);
        reject(new Error(`${label}: server exited early with status ${code}`));
      }
    });
  });
}

/** A fetch that records every exchange: method, headers, JSON-RPC method, status. */
export function recordingFetch() {
  const exchanges = [];
  const wrapped = async (url, init = {}) => {
    const headers = Object.fromEntries(
      [...new Headers(init.headers ?? {}).entries()].map(([k, v]) => [k.toLowerCase(), v]),
    );
    let rpc = null;
    if (typeof init.body === 'string') {
      try {
        rpc = JSON.parse(init.body).method ?? null;
      } catch {
        rpc = '?';
      }
    }
    const ex = { method: (init.method ?? 'GET').toUpperCase(), headers, rpc, status: null, responseHeaders: {} };
    exchanges.push(ex);
    ex.at = performance.now();
    const response = await fetch(url, init);
    ex.status = response.status;
    ex.ms = performance.now() - ex.at;
    ex.responseHeaders = Object.fromEntries(response.headers.entries());
    return response;
  };
  return { fetch: wrapped, exchanges };
}

export function summary(exchanges) {
  return JSON.stringify(exchanges.map((e) => [e.method, e.rpc, e.status, e.headers['mcp-protocol-version'] ?? null]));
}

/**
 * Checks the recorded exchanges against the era the client should have
 * spoken: `version` in every request's MCP-Protocol-Version header (after
 * initialize, for the session-based era), the session header, no
 * initialize in the stateless era, and no error status anywhere.
 */
export function checkWire(label, exchanges, version, sessionBased) {
  const posts = exchanges.filter((e) => e.method === 'POST');
  const rpcs = posts.map((e) => e.rpc);
  for (const e of exchanges) {
    // 405 to a GET is the server telling a session-less client it has no
    // listening stream; anything else >= 400 is a failure.
    if (e.status === null || (e.status >= 400 && !(e.method === 'GET' && e.status === 405 && !sessionBased))) {
      fail(label, `${e.method} ${e.rpc} answered ${e.status}: ${summary(exchanges)}`);
    }
  }
  if (sessionBased) {
    if (rpcs[0] !== 'initialize') fail(label, `first POST is ${rpcs[0]}, not initialize: ${summary(exchanges)}`);
    const sid = posts[0].responseHeaders['mcp-session-id'];
    if (!sid) fail(label, 'initialize answered without Mcp-Session-Id');
    for (const e of exchanges.slice(1)) {
      if (e.headers['mcp-session-id'] !== sid) fail(label, `${e.method} ${e.rpc} lacks the session id`);
      if (e.headers['mcp-protocol-version'] !== version) {
        fail(label, `${e.method} ${e.rpc} sent MCP-Protocol-Version ${e.headers['mcp-protocol-version']}, not ${version}`);
      }
    }
  } else {
    if (rpcs.includes('initialize')) fail(label, `sent initialize in the stateless era: ${summary(exchanges)}`);
    for (const e of posts) {
      if (e.responseHeaders['mcp-session-id']) fail(label, 'the server opened a session for a stateless request');
      if (e.headers['mcp-protocol-version'] !== version) {
        fail(label, `${e.rpc} POST sent MCP-Protocol-Version ${e.headers['mcp-protocol-version']}, not ${version}`);
      }
      if (e.rpc && e.headers['mcp-method'] !== e.rpc) fail(label, `Mcp-Method ${e.headers['mcp-method']} for ${e.rpc}`);
    }
  }
  for (const rpc of ['tools/list', 'tools/call', 'resources/read']) {
    if (!rpcs.includes(rpc)) fail(label, `no ${rpc} POST seen: ${summary(exchanges)}`);
  }
  return posts.length;
}

function toolJson(label, result) {
  if (result.isError) fail(label, `tool returned an error: ${JSON.stringify(result.content)}`);
  return JSON.parse(result.content[0].text);
}

/** tools/list, ingest, query (evidence holds the text and id), resources/read. */
export async function scenario(label, client, tenant) {
  const text = `The ${tenant} ferry leaves pier 9 at 07:40 on weekdays.`;
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of ['alayasiki_ingest', 'alayasiki_query', 'alayasiki_status']) {
    if (!names.includes(name)) fail(label, `${name} not listed: ${names}`);
  }
  const receipt = toolJson(label, await client.callTool({
    name: 'alayasiki_ingest',
    arguments: { content: text, source: label, idempotency_key: label },
  }));
  const doc = receipt.document_id;
  if (!doc || receipt.state !== 'ready') fail(label, `ingest receipt ${JSON.stringify(receipt)}`);
  const answer = toolJson(label, await client.callTool({
    name: 'alayasiki_query',
    arguments: { query: 'When does the ferry leave pier 9?' },
  }));
  const evidence = answer.evidence ?? [];
  if (!evidence.some((e) => e.document_id === doc && (e.text ?? '').includes('07:40'))) {
    fail(label, `query evidence lacks ${doc} with the ingested text: ${JSON.stringify(answer)}`);
  }
  if (evidence.some((e) => e.document_id !== doc)) fail(label, `evidence from another document: ${JSON.stringify(evidence)}`);
  const read = await client.readResource({ uri: `alayasiki://documents/${doc}` });
  if (!(read.contents?.[0]?.text ?? '').includes(text)) {
    fail(label, `resources/read did not return the stored text: ${JSON.stringify(read)}`);
  }
  return doc;
}

/** Runs `body(base)` against a fresh server; the server must exit 0 on SIGTERM. */
export async function withServer(label, body) {
  const binary = process.argv[2];
  if (!binary) {
    console.error(`${label}: usage: node ${label}.mjs API_BINARY`);
    process.exit(2);
  }
  const server = await startServer(label, binary);
  try {
    await body(server.base);
  } catch (e) {
    if (!failed) console.error(`${label}: FAIL: ${e?.stack ?? e}`);
    process.exitCode = 1;
  } finally {
    const code = await server.stop();
    if (code !== 0) {
      console.error(`${label}: FAIL: server exited with status ${code} after SIGTERM`);
      process.exitCode = 1;
    }
  }
}
