#!/usr/bin/env python3
"""Drive alayasiki-mcp with the official MCP Python SDK over stdio.

Usage: sdk_stdio_test.py BINARY

Runs the same session twice, with `mcp.Client` in each of its eras:

- "auto" (the default): the client probes with the 2026-07-28
  `server/discover` request; the server answers it, so the client stays
  on the stateless 2026-07-28 revision (per-request `_meta`, no
  initialize);
- "legacy": the initialize handshake, which the server answers at
  2025-11-25, the revision the SDK asks for.

The connect is timed (a server that does not answer the probe at once
costs every client a 10 s timeout). Then: list tools, prompts and resource
templates, ingest, query, read the document back as a resource, ingest a
copy (named its `duplicate_of`, nothing stored), update it (the old
version read back with its history in `_meta`), and use working memory
(write, merged query, session resource, delete); every tool result
also carries structuredContent equal to its text. Exits non-zero with a
message on any failure.
"""
import asyncio
import json
import sys
import tempfile
import time

from mcp import Client, StdioServerParameters

CONNECT_BUDGET_S = 3.0


def fail(msg):
    print(f"sdk_stdio_test: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


# What each mode of the SDK's Client must end up speaking.
MODES = {"auto": "2026-07-28", "legacy": "2025-11-25"}


def text_json(result):
    if result.is_error:
        fail(f"tool returned an error: {result.content}")
    value = json.loads(result.content[0].text)
    if result.structured_content != value:
        fail(f"structuredContent differs from the text block: {result.structured_content}")
    return value


async def main(binary):
    for mode, version in MODES.items():
        connected = await session(binary, mode, version)
        print(f"sdk_stdio_test: ok, mode {mode} speaking {version} (connect {connected * 1000:.0f} ms)")


async def session(binary, mode, version):
    data = tempfile.mkdtemp(prefix="alayasiki-sdk-")
    # The SDK passes only the environment given here: the memory owner the
    # server starts stops a second after the session ends.
    env = {"ALAYASIKI_LOG": "warn", "ALAYASIKI_OWNER_IDLE_SECS": "1"}
    params = StdioServerParameters(command=binary, args=["--data-dir", data], env=env)
    started = time.monotonic()
    async with Client(params, mode=mode) as client:
        connected = time.monotonic() - started
        if connected > CONNECT_BUDGET_S:
            fail(f"connect took {connected:.1f}s; the server/discover probe was not answered promptly")
        if client.protocol_version != version:
            fail(f"mode {mode}: speaking {client.protocol_version!r}, expected {version}")
        if "alayasiki_query" not in (client.instructions or ""):
            fail("initialize instructions do not mention alayasiki_query")

        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("alayasiki_ingest", "alayasiki_update", "alayasiki_query", "alayasiki_status"):
            if name not in tools:
                fail(f"tool {name} not listed (got {sorted(tools)})")
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        if prompts != ["alayasiki_reasoning"]:
            fail(f"prompts: {prompts}")
        templates = (await client.list_resource_templates()).resource_templates
        if not any(t.uri_template == "alayasiki://documents/{id}" for t in templates):
            fail("document resource template missing")

        receipt = text_json(await client.call_tool("alayasiki_ingest", {
            "content": "The observatory on Mauna Kea reopened in June after the storm repairs.",
            "source": "sdk-test", "metadata": {"kind": "note"}, "idempotency_key": "sdk-1"}))
        if receipt["state"] != "ready":
            fail(f"ingest not ready: {receipt}")
        doc = receipt["document_id"]

        answer = text_json(await client.call_tool("alayasiki_query", {"query": "When did the observatory reopen?"}))
        evidence = answer["evidence"]
        if not evidence or evidence[0]["document_id"] != doc:
            fail(f"query did not find the document: {answer}")
        if "[1]" not in answer["answer"]["text"]:
            fail(f"answer has no citation: {answer['answer']}")

        read = await client.read_resource(f"alayasiki://documents/{doc}")
        if "Mauna Kea" not in read.contents[0].text:
            fail("document resource did not return the stored text")

        # The same note again, spaced differently: the stored document comes
        # back as its duplicate and nothing new is stored.
        copy = text_json(await client.call_tool("alayasiki_ingest", {
            "content": "The observatory on Mauna Kea reopened in June\r\nafter the storm repairs.\n"}))
        if copy.get("duplicate_of") != doc or copy["document_id"] != doc:
            fail(f"a copy of a stored note was not named its duplicate: {copy}")

        status = text_json(await client.call_tool("alayasiki_status", {}))
        if status["documents"] != 1:
            fail(f"status counts: {status}")

        # A new version of the note: the old one stays readable as history,
        # its `_meta` naming the version that replaced it and the chain.
        newer = text_json(await client.call_tool("alayasiki_update", {
            "document_id": doc,
            "content": "The observatory on Mauna Kea reopened in July after the storm repairs."}))
        if newer.get("supersedes") != [doc] or newer["state"] != "ready":
            fail(f"update: {newer}")
        old = (await client.read_resource(f"alayasiki://documents/{doc}")).contents[0]
        meta = old.model_dump(by_alias=True).get("_meta") or {}
        chain = [v["document_id"] for v in meta.get("versions", [])]
        if meta.get("superseded_by") != newer["document_id"] or chain != [doc, newer["document_id"]]:
            fail(f"the superseded version does not name its history: {meta}")
        if "June" not in old.text:
            fail("the superseded version's text changed")

        # Working memory: write a note, find it merged into a query, read the
        # session as a resource.
        if not any(t.uri_template == "alayasiki://sessions/{session_id}" for t in templates):
            fail("session resource template missing")
        note = text_json(await client.call_tool("alayasiki_memory_write", {
            "session_id": "sdk-task", "content": "The telescope dome motor needs a new encoder."}))
        merged = text_json(await client.call_tool("alayasiki_query", {
            "query": "What does the dome motor need?", "session_id": "sdk-task"}))
        top = merged["evidence"][0] if merged["evidence"] else {}
        if top.get("origin") != "session" or top.get("document_id") != note["note_id"]:
            fail(f"merged query did not rank the session note first: {merged}")
        session = await client.read_resource("alayasiki://sessions/sdk-task")
        if "encoder" not in json.loads(session.contents[0].text)["notes"][0]["text"]:
            fail("session resource did not return the note")
        # Deleted before it expires, the session is gone at once.
        gone = text_json(await client.call_tool("alayasiki_memory_delete", {"session_id": "sdk-task"}))
        if gone["notes"] != 1 or gone["bytes_released"] <= 0:
            fail(f"session delete: {gone}")
        after = await client.call_tool("alayasiki_memory_read", {"session_id": "sdk-task"})
        if not after.is_error:
            fail("a deleted session could still be read")
    return connected


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: sdk_stdio_test.py BINARY")
    asyncio.run(main(sys.argv[1]))
