#!/usr/bin/env python3
"""Eight official MCP Python SDK clients on one memory, over stdio.

Usage: sdk_local_test.py BINARY

Starts eight `mcp.Client`s at once on one fresh data directory, four in
each era of the SDK ("auto": the stateless 2026-07-28 revision; "legacy":
initialize at 2025-11-25). Each `alayasiki-mcp` they spawn reaches the
directory's one owner (started by whichever came first). Each client
stores a fact of its own (`wait: true`), then, once all have, asks for
every other client's fact and must find it: a write acknowledged to one
agent is seen by the next query of every other. While they run, the
shell's commands reach the same owner: `alayasiki-mcp ingest DIR` stores
a note every client then finds, `query` finds the clients' facts, and
`ui` serves the memory page until Ctrl-C. Exactly one owner must have
run, and it must stop by itself once the clients are gone
(`ALAYASIKI_OWNER_IDLE_SECS=1`). Exits non-zero with a message on any
failure.
"""
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
import urllib.request

from mcp import Client, StdioServerParameters

CLIENTS = 8
PLACES = ["Kestrel Quay", "Fennick Point", "Oyster Reach", "Gull Harbour",
          "Moss Bank", "Slate Jetty", "Heron Sound", "Tern Island"]
# The place named by the note the shell ingests.
SHELL_PLACE = "Cormorant Ledge"
SHELL_ENV = {"ALAYASIKI_LOG": "warn", "ALAYASIKI_OWNER_IDLE_SECS": "1",
             "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


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


async def shell(binary, data, *args):
    """Runs `alayasiki-mcp ARGS --data-dir DATA` as a user would; its stdout."""
    proc = await asyncio.create_subprocess_exec(
        binary, *args, "--data-dir", data, env=SHELL_ENV,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    if proc.returncode != 0:
        fail(f"`{' '.join(args)}` exited {proc.returncode}: {err.decode()}")
    return out.decode()


async def from_the_shell(binary, data, all_stored, shell_done):
    """Once every client has stored its fact: ingest a folder, query, and
    serve the memory page beside them."""
    await asyncio.wait_for(all_stored.wait(), 60)
    notes = tempfile.mkdtemp(prefix="alayasiki-sdk-notes-")
    with open(os.path.join(notes, "shell.md"), "w") as f:
        f.write(f"The shell noted that the survey boat 9 moors at {SHELL_PLACE}.\n")
    report = await shell(binary, data, "ingest", notes)
    if "stored:         1 file(s)" not in report:
        fail(f"the shell's ingest stored nothing: {report}")
    shell_done.set()
    answer = await shell(binary, data, "query", f"Which survey boat moors at {PLACES[3]}?")
    if PLACES[3] not in answer:
        fail(f"the shell's query did not find a client's write: {answer}")
    ui = await asyncio.create_subprocess_exec(
        binary, "ui", "--bind", "127.0.0.1:0", "--data-dir", data, env=SHELL_ENV,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    url = (await asyncio.wait_for(ui.stdout.readline(), 30)).decode().strip()
    page_url = url.split("#", 1)[0]
    page = await asyncio.to_thread(lambda: urllib.request.urlopen(page_url, timeout=10))
    if page.status != 200:
        fail(f"the memory page answered {page.status}")
    ui.send_signal(signal.SIGINT)
    if await asyncio.wait_for(ui.wait(), 30) != 0:
        fail(f"`ui` exited {ui.returncode} on Ctrl-C: {(await ui.stderr.read()).decode()}")


async def agent(binary, data, i, stored, all_stored, shell_done):
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
        await asyncio.wait_for(shell_done.wait(), 60)
        pids = set()
        for j, other in enumerate(PLACES + [SHELL_PLACE]):
            answer = text_json(await client.call_tool(
                "alayasiki_query", {"query": f"Which survey boat moors at {other}?",
                                    "mode": "evidence"}))
            if other not in json.dumps(answer["evidence"]):
                who = f"client {j}'s" if j < CLIENTS else "the shell's"
                fail(f"client {i} ({mode}) did not find {who} write: {answer}")
        pids.add(owner_pid(data))
        return mode, client.protocol_version, pids


async def main(binary):
    data = tempfile.mkdtemp(prefix="alayasiki-sdk-local-")
    stored, all_stored, shell_done = set(), asyncio.Event(), asyncio.Event()
    started = time.monotonic()
    results = await asyncio.gather(
        *(agent(binary, data, i, stored, all_stored, shell_done) for i in range(CLIENTS)),
        from_the_shell(binary, data, all_stored, shell_done))
    results = results[:CLIENTS]
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
    print(f"sdk_local_test: ok, {CLIENTS} clients ({eras}) and the shell's ingest, query "
          f"and ui on one owner saw each other's writes in {took:.1f} s; the owner stopped "
          f"by itself")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: sdk_local_test.py BINARY")
    asyncio.run(main(sys.argv[1]))
