#!/usr/bin/env python3
"""Drive alayasiki-api with the official MCP Python SDK's SSE client.

Usage: sdk_sse_test.py API_BINARY

Starts the binary on a free loopback port with an HS256 secret, mints a
token (HS256 by hand: the standard library is enough), connects with
`mcp.client.sse.sse_client` + `ClientSession` (the deprecated HTTP+SSE
transport; the SDK's initialize asks for 2025-11-25 and gets it), then: list tools, call every tool, read the stored document as
a resource, check that a foreign-tenant token sees nothing, and shut the
server down with SIGTERM (exit status 0). Exits non-zero with a message on
any failure.
"""
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time

import api_process
from mcp import ClientSession
from mcp.client.sse import sse_client

SECRET = "sdk-sse-test-secret-0123456789abcdef"
ARGS = {
    "alayasiki_ingest": {"content": "The ferry to the island leaves at 07:40 on weekdays.",
                         "source": "sdk-sse-test", "idempotency_key": "sdk-sse-1"},
    "alayasiki_query": {"query": "When does the ferry leave?"},
    "alayasiki_memory_write": {"session_id": "sdk-sse", "content": "scratch note"},
    "alayasiki_memory_read": {"session_id": "sdk-sse"},
}


def fail(msg):
    print(f"sdk_sse_test: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def token(sub, tenant, roles):
    return api_process.token(SECRET, sub, tenant, roles)


def start(binary, data):
    return api_process.start(binary, data, SECRET, fail)


def text_json(result):
    if result.is_error:
        fail(f"tool returned an error: {result.content}")
    return json.loads(result.content[0].text)


async def main(binary):
    data = tempfile.mkdtemp(prefix="alayasiki-sdk-sse-")
    proc, base = start(binary, data)
    try:
        started = time.monotonic()
        async with sse_client(f"{base}/mcp/sse",
                              headers={"Authorization": f"Bearer {token('agent', 'acme', ['admin'])}"}) as (r, w):
            async with ClientSession(r, w) as client:
                init = await client.initialize()
                # The SDK asks for 2025-11-25, which the server speaks.
                if init.protocol_version != "2025-11-25":
                    fail(f"negotiated {init.protocol_version!r}")
                connected = time.monotonic() - started
                tools = [t.name for t in (await client.list_tools()).tools]
                for name in ("alayasiki_ingest", "alayasiki_query", "alayasiki_status"):
                    if name not in tools:
                        fail(f"{name} not listed: {tools}")
                # Every tool of the table is reachable; ingest runs first.
                for name in sorted(tools, key=lambda n: n != "alayasiki_ingest"):
                    result = await client.call_tool(name, ARGS.get(name, {}))
                    if name in ("alayasiki_ingest", "alayasiki_query", "alayasiki_status"):
                        text_json(result)
                receipt = text_json(await client.call_tool("alayasiki_ingest", ARGS["alayasiki_ingest"]))
                if not receipt["idempotent_replay"]:
                    fail(f"same key did not replay: {receipt}")
                answer = text_json(await client.call_tool("alayasiki_query", ARGS["alayasiki_query"]))
                if not answer["evidence"] or answer["evidence"][0]["source"] != "sdk-sse-test":
                    fail(f"query did not find the document: {answer}")
                doc = receipt["document_id"]
                read = await client.read_resource(f"alayasiki://documents/{doc}")
                if "07:40" not in read.contents[0].text:
                    fail("resource read did not return the stored text")
                status = text_json(await client.call_tool("alayasiki_status", {}))
                if status["documents"] != 1 or status["tenant"] != "acme":
                    fail(f"status: {status}")

        async with sse_client(f"{base}/mcp/sse",
                              headers={"Authorization": f"Bearer {token('agent', 'other', ['reader'])}"}) as (r, w):
            async with ClientSession(r, w) as client:
                await client.initialize()
                other = text_json(await client.call_tool("alayasiki_query", ARGS["alayasiki_query"]))
                if other["evidence"]:
                    fail("another tenant's token saw the document")
                denied = await client.call_tool("alayasiki_ingest", {"content": "x"})
                if not denied.is_error:
                    fail("a reader token could ingest")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            fail("server did not exit after SIGTERM")
    if code != 0:
        fail(f"server exited with status {code} after SIGTERM")
    print(f"sdk_sse_test: ok (mcp SDK SSE connect + initialize {connected * 1000:.0f} ms)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: sdk_sse_test.py API_BINARY")
    asyncio.run(main(sys.argv[1]))
