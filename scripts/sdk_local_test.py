#!/usr/bin/env python3
"""Eight official MCP Python SDK clients on one memory, over stdio.

Usage: sdk_local_test.py BINARY

Starts eight `mcp.Client`s at once on one fresh data directory, four in
each era of the SDK ("auto": the stateless 2026-07-28 revision; "legacy":
initialize at 2025-11-25). Each `alayasiki-mcp` they spawn reaches the
directory's one owner (started by whichever came first). Each client
stores a fact of its own (`wait: true`), then, once all have, asks for
every other client's fact and must find it: a write acknowledged to one
agent is seen by the next query of every other. Exactly one owner must
have run, and it must stop by itself once the clients are gone
(`ALAYASIKI_OWNER_IDLE_SECS=1`). Exits non-zero with a message on any
failure.
"""
import asyncio
import json
import os
import sys
import tempfile
import time

from mcp import Client, StdioServerParameters

CLIENTS = 8
PLACES = ["Kestrel Quay", "Fennick Point", "Oyster Reach", "Gull Harbour",
          "Moss Bank", "Slate Jetty", "Heron Sound", "Tern Island"]


def fail(msg):
    print(f"sdk_local_test: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def text_json(result):
    if result.is_error:
        fail(f"tool returned an error: {result.content}")
    return json.loads(result.content[0].text)


def owner_pid(data):
    with open(os.path.join(data, "alayasiki.owner")) as f:
        record = json.load(f)
    if record.get("program") != "alayasiki-mcp owner":
        fail(f"the directory is held by {record}")
    return record["pid"]


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


async def agent(binary, data, i, stored, all_stored):
    mode = "auto" if i % 2 == 0 else "legacy"
    env = {"ALAYASIKI_LOG": "warn", "ALAYASIKI_OWNER_IDLE_SECS": "1"}
    params = StdioServerParameters(command=binary, args=["--data-dir", data], env=env)
    async with Client(params, mode=mode) as client:
        place = PLACES[i]
        receipt = text_json(await client.call_tool("alayasiki_ingest", {
            "content": f"Agent {i} noted that the survey boat {i} moors at {place}.",
            "wait": True}))
        if receipt["state"] != "ready":
            fail(f"client {i}: ingest not ready: {receipt}")
        stored.add(i)
        if len(stored) == CLIENTS:
            all_stored.set()
        await asyncio.wait_for(all_stored.wait(), 60)
        pids = set()
        for j, other in enumerate(PLACES):
            answer = text_json(await client.call_tool(
                "alayasiki_query", {"query": f"Which survey boat moors at {other}?",
                                    "mode": "evidence"}))
            if other not in json.dumps(answer["evidence"]):
                fail(f"client {i} ({mode}) did not find client {j}'s write: {answer}")
        pids.add(owner_pid(data))
        return mode, client.protocol_version, pids


async def main(binary):
    data = tempfile.mkdtemp(prefix="alayasiki-sdk-local-")
    stored, all_stored = set(), asyncio.Event()
    started = time.monotonic()
    results = await asyncio.gather(*(agent(binary, data, i, stored, all_stored)
                                     for i in range(CLIENTS)))
    took = time.monotonic() - started
    owners = set().union(*(pids for _, _, pids in results))
    if len(owners) != 1:
        fail(f"{len(owners)} owners served the clients: {owners}")
    eras = sorted({(mode, version) for mode, version, _ in results})
    pid = owners.pop()
    deadline = time.monotonic() + 15
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if running(pid):
        fail(f"the owner (pid {pid}) still runs 15 s after its last client left")
    print(f"sdk_local_test: ok, {CLIENTS} clients ({eras}) on one owner saw each other's "
          f"writes in {took:.1f} s; the owner stopped by itself")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: sdk_local_test.py BINARY")
    asyncio.run(main(sys.argv[1]))
