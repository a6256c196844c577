#!/usr/bin/env python3
"""Drive alayasiki-api with the official MCP Python SDK over Streamable HTTP.

Usage: sdk_http_test.py API_BINARY

Starts the binary on a free loopback port with an HS256 secret and a fresh
data directory, mints tokens (HS256 by hand: the standard library is
enough), and connects `mcp.Client` through `streamable_http_client` to
`/mcp` in each of the SDK's connect modes:

- mode="2026-07-28": adopts the stateless revision without a handshake;
- mode="auto" (the SDK's default): probes `server/discover`, which this
  server answers, so it too must end up on 2026-07-28;
- mode="legacy": the `initialize` handshake, a session-based session
  (`Mcp-Session-Id`) at 2025-11-25, ended with DELETE on exit.

Each mode uses a tenant of its own and runs: tools/list, alayasiki_ingest,
alayasiki_query (the evidence must hold the ingested text and document
id), and resources/read of `alayasiki://documents/<id>`. Every HTTP
exchange is recorded with an httpx event hook, so the revision the client
*actually* spoke is checked on the wire (the `MCP-Protocol-Version` and
`Mcp-Method` headers, the session header, no `initialize` in the stateless
modes), not only as the client reports it. Then a request without a token
must get 401, and the server must exit 0 on SIGTERM.

Then the anonymous caller: a second server with ALAYASIKI_ANONYMOUS_SCOPE
and ALAYASIKI_ANONYMOUS_TENANT, a note stored (with a token) into the public
scope and one into a private scope, and a client that sends no token at all:
tools/list, alayasiki_query finds the public note and never the private one,
alayasiki_ingest is an error result telling it to sign in.

Exits non-zero with a message on any failure.
"""
import asyncio
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import api_process
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

SECRET = "sdk-http-test-secret-0123456789abcdef"
# mode -> (revision it must speak, whether it is the session-based era)
MODES = {
    "2026-07-28": ("2026-07-28", False),
    "auto": ("2026-07-28", False),
    "legacy": ("2025-11-25", True),
}


def fail(msg):
    print(f"sdk_http_test: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def token(sub, tenant, roles):
    return api_process.token(SECRET, sub, tenant, roles)


def start(binary, data):
    return api_process.start(binary, data, SECRET, fail)


def tool_json(result):
    if result.is_error:
        fail(f"tool returned an error: {result.content}")
    return json.loads(result.content[0].text)


class Wire:
    """Every HTTP exchange of one client: method, request headers, the
    JSON-RPC method of a POST body, and the response's status and headers."""

    def __init__(self):
        self.exchanges = []

    async def on_request(self, request):
        rpc = None
        if request.method == "POST":
            try:
                rpc = json.loads(request.content).get("method")
            except (ValueError, AttributeError):
                rpc = "?"
        self.exchanges.append({"method": request.method, "headers": dict(request.headers),
                               "rpc": rpc, "status": None, "response_headers": {}})

    async def on_response(self, response):
        for ex in reversed(self.exchanges):
            if ex["status"] is None and ex["method"] == response.request.method:
                ex["status"] = response.status_code
                ex["response_headers"] = dict(response.headers)
                break

    def summary(self):
        return [(e["method"], e["rpc"], e["status"], e["headers"].get("mcp-protocol-version"))
                for e in self.exchanges]


def check_wire(mode, wire, version, session_based):
    posts = [e for e in wire.exchanges if e["method"] == "POST"]
    rpcs = [e["rpc"] for e in posts]
    for e in wire.exchanges:
        if e["status"] is None or e["status"] >= 400:
            fail(f"mode {mode}: {e['method']} {e['rpc']} answered {e['status']}: {wire.summary()}")
    if session_based:
        if rpcs[0] != "initialize":
            fail(f"mode {mode}: first POST is {rpcs[0]!r}, not initialize: {wire.summary()}")
        sid = posts[0]["response_headers"].get("mcp-session-id")
        if not sid:
            fail(f"mode {mode}: initialize answered without Mcp-Session-Id")
        for e in posts[1:]:
            if e["headers"].get("mcp-session-id") != sid:
                fail(f"mode {mode}: {e['rpc']} POST lacks the session id")
            if e["headers"].get("mcp-protocol-version") != version:
                fail(f"mode {mode}: {e['rpc']} POST sent MCP-Protocol-Version "
                     f"{e['headers'].get('mcp-protocol-version')!r}, not {version}")
        deletes = [e for e in wire.exchanges if e["method"] == "DELETE"]
        if len(deletes) != 1 or deletes[0]["headers"].get("mcp-session-id") != sid:
            fail(f"mode {mode}: the session was not ended with one DELETE: {wire.summary()}")
    else:
        if "initialize" in rpcs:
            fail(f"mode {mode}: sent initialize in the stateless era: {wire.summary()}")
        for e in wire.exchanges:
            if e["method"] != "POST":
                fail(f"mode {mode}: stateless client sent {e['method']}: {wire.summary()}")
            if "mcp-session-id" in e["response_headers"]:
                fail(f"mode {mode}: the server opened a session for a stateless request")
            if e["headers"].get("mcp-protocol-version") != version:
                fail(f"mode {mode}: {e['rpc']} POST sent MCP-Protocol-Version "
                     f"{e['headers'].get('mcp-protocol-version')!r}, not {version}")
            if e["headers"].get("mcp-method") != e["rpc"]:
                fail(f"mode {mode}: Mcp-Method {e['headers'].get('mcp-method')!r} for {e['rpc']}")
            if e["rpc"] in ("tools/call", "resources/read") and not e["headers"].get("mcp-name"):
                fail(f"mode {mode}: {e['rpc']} POST without Mcp-Name")
    for rpc in ("tools/list", "tools/call", "resources/read"):
        if rpc not in rpcs:
            fail(f"mode {mode}: no {rpc} POST seen: {wire.summary()}")
    return rpcs


async def run_mode(base, mode):
    version, session_based = MODES[mode]
    tenant = "py-" + mode.replace("-", "")
    text = f"The {tenant} ferry leaves pier 9 at 07:40 on weekdays."
    wire = Wire()
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token('agent', tenant, ['admin'])}"})
    http.event_hooks = {"request": [wire.on_request], "response": [wire.on_response]}
    started = time.monotonic()
    async with http:
        transport = streamable_http_client(f"{base}/mcp", http_client=http)
        async with Client(transport, mode=mode) as client:
            connected = time.monotonic() - started
            if client.protocol_version != version:
                fail(f"mode {mode}: client reports protocol {client.protocol_version!r}, expected {version}")
            tools = [t.name for t in (await client.list_tools()).tools]
            for name in ("alayasiki_ingest", "alayasiki_query", "alayasiki_status"):
                if name not in tools:
                    fail(f"mode {mode}: {name} not listed: {tools}")
            receipt = tool_json(await client.call_tool("alayasiki_ingest", {
                "content": text, "source": f"sdk-http-{mode}", "idempotency_key": f"sdk-http-{mode}"}))
            doc = receipt.get("document_id")
            if not doc or receipt.get("state") != "ready":
                fail(f"mode {mode}: ingest receipt {receipt}")
            answer = tool_json(await client.call_tool("alayasiki_query", {"query": "When does the ferry leave pier 9?"}))
            evidence = answer.get("evidence") or []
            if not any(e.get("document_id") == doc and "07:40" in e.get("text", "") for e in evidence):
                fail(f"mode {mode}: query evidence lacks {doc} with the ingested text: {answer}")
            if any(e.get("document_id") != doc for e in evidence):
                fail(f"mode {mode}: evidence from another document (tenant leak?): {evidence}")
            read = await client.read_resource(f"alayasiki://documents/{doc}")
            if not read.contents or text not in (getattr(read.contents[0], "text", None) or ""):
                fail(f"mode {mode}: resources/read did not return the stored text: {read}")
        elapsed = time.monotonic() - started
    rpcs = check_wire(mode, wire, version, session_based)
    return version, connected, elapsed, len(rpcs)


ANONYMOUS_TENANT = "py-anon"
PUBLIC_NOTE = "The public tide table says the Zanzibar ferry sails at 06:15."
PRIVATE_NOTE = "The private roster says Scorpio pilots the Zanzibar ferry."


async def run_anonymous(binary):
    data = tempfile.mkdtemp(prefix="alayasiki-sdk-anon-")
    proc, base = api_process.start(binary, data, SECRET, fail, extra_env={
        "ALAYASIKI_ANONYMOUS_SCOPE": "public", "ALAYASIKI_ANONYMOUS_TENANT": ANONYMOUS_TENANT})
    try:
        admin = {"Authorization": f"Bearer {token('keeper', ANONYMOUS_TENANT, ['admin'])}"}
        async with create_mcp_http_client(headers=admin) as raw:
            for text, scope in ((PUBLIC_NOTE, "public"), (PRIVATE_NOTE, "crew")):
                r = await raw.post(f"{base}/v1/ingest", json={"content": text, "scope": scope, "wait": True})
                if r.status_code != 200:
                    fail(f"anonymous: storing into {scope} answered {r.status_code} {r.text}")
        # No Authorization header at all.
        async with create_mcp_http_client() as http:
            transport = streamable_http_client(f"{base}/mcp", http_client=http)
            async with Client(transport) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                if "alayasiki_query" not in tools:
                    fail(f"anonymous: alayasiki_query not listed: {tools}")
                answer = tool_json(await client.call_tool(
                    "alayasiki_query", {"query": "When does the Zanzibar ferry sail?"}))
                texts = " ".join(e.get("text", "") for e in answer.get("evidence") or [])
                if "06:15" not in texts:
                    fail(f"anonymous: the public note was not found: {answer}")
                if "Scorpio" in json.dumps(answer):
                    fail(f"anonymous: the private note leaked: {answer}")
                refused = await client.call_tool("alayasiki_ingest", {"content": "graffiti"})
                said = " ".join(getattr(c, "text", "") for c in refused.content)
                if not refused.is_error or "sign in" not in said:
                    fail(f"anonymous: alayasiki_ingest was not refused with the way out: {refused}")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            fail("anonymous: server did not exit after SIGTERM")
        shutil.rmtree(data, ignore_errors=True)
    if code != 0:
        fail(f"anonymous: server exited with status {code} after SIGTERM")
    print("sdk_http_test: ok anonymous: tools/list, the public note found, ingest refused")


async def main(binary):
    data = tempfile.mkdtemp(prefix="alayasiki-sdk-http-")
    proc, base = start(binary, data)
    results = {}
    try:
        for mode in MODES:
            results[mode] = await run_mode(base, mode)
        async with create_mcp_http_client() as raw:
            r = await raw.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                               headers={"Accept": "application/json, text/event-stream"})
            if r.status_code != 401 or "bearer" not in r.headers.get("www-authenticate", "").lower():
                fail(f"POST /mcp without a token answered {r.status_code} {r.headers}")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            fail("server did not exit after SIGTERM")
        shutil.rmtree(data, ignore_errors=True)
    if code != 0:
        fail(f"server exited with status {code} after SIGTERM")
    for mode, (version, connected, elapsed, posts) in results.items():
        print(f"sdk_http_test: ok mode={mode}: protocol {version}, connect {connected * 1000:.0f} ms, "
              f"{posts} POSTs in {elapsed * 1000:.0f} ms")
    await run_anonymous(binary)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: sdk_http_test.py API_BINARY")
    asyncio.run(main(sys.argv[1]))
