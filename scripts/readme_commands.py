#!/usr/bin/env python3
"""Run the README's two commands exactly as written.

README.md's "Two commands" section marks each command with an HTML comment
(`<!-- readme-command: serve -->`, `<!-- readme-command: test -->`) before
its fenced block. This script reads them from there, never from a copy, so
the README cannot drift from what CI runs:

    python3 scripts/readme_commands.py show    # print both commands
    python3 scripts/readme_commands.py serve   # run the server command, drive it
    python3 scripts/readme_commands.py test    # run the test command

`serve` runs the command through bash in the repository root on a fresh
`./memory` (an existing one is moved aside for the run and put back after),
writes the README's first session to its stdin in one burst (initialize,
initialized, an ingest, a query about it), checks that the query found the
ingested sentence with its source, closes stdin and expects exit 0. The
first run compiles the release binary, so the wait for `initialize` is long.

`test` runs the test command through bash and exits with its status.
Standard library only. Exit status: that of the command, or 1 when a check
fails, 2 when the README lacks a command.
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MARKER = re.compile(r"<!-- readme-command: (\w+) -->\n```(?:sh|bash)\n(.*?)\n```", re.S)

# The first run of `cargo run --release` builds the binary.
COMPILE_AND_START_TIMEOUT_S = 1800
REPLY_TIMEOUT_S = 60
EXIT_TIMEOUT_S = 60

FACT = "The deploy key rotates every Friday at noon."
SOURCE = "notes.md"


def commands():
    found = {name: body.strip() for name, body in MARKER.findall(README.read_text())}
    for name in ("serve", "test"):
        if name not in found:
            sys.exit(f"readme_commands: README.md has no `<!-- readme-command: {name} -->` block")
        if "\n" in found[name]:
            sys.exit(f"readme_commands: the {name} command must be one line, not:\n{found[name]}")
    return found


def session():
    init = {"protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "readme-check", "version": "1"}}
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "alayasiki_ingest",
                    "arguments": {"content": FACT, "metadata": {"source": SOURCE}}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "alayasiki_query",
                    "arguments": {"query": "When does the deploy key rotate?"}}},
    ]


def tool_json(reply):
    return json.loads(reply["result"]["content"][0]["text"])


def serve(command):
    memory = ROOT / "memory"
    aside = None
    if memory.exists():
        aside = ROOT / f"memory.readme-check-{int(time.time())}"
        memory.rename(aside)
    try:
        return drive(command, memory)
    finally:
        if memory.exists():
            shutil.rmtree(memory)
        if aside is not None:
            aside.rename(memory)


def drive(command, memory):
    print(f"readme_commands: running `{command}` with a scripted session", flush=True)
    proc = subprocess.Popen(["bash", "-c", command], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    replies = {}
    got = threading.Condition()

    def read():
        for line in proc.stdout:
            message = json.loads(line)  # stdout carries only JSON-RPC
            with got:
                replies[message.get("id")] = message
                got.notify_all()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def wait_for(ids, timeout):
        deadline = time.monotonic() + timeout
        with got:
            while not all(i in replies for i in ids):
                left = deadline - time.monotonic()
                if left <= 0 or proc.poll() is not None:
                    return False
                got.wait(min(left, 1.0))
        return True

    try:
        burst = "".join(json.dumps(m) + "\n" for m in session())
        proc.stdin.write(burst)
        proc.stdin.flush()
        if not wait_for([1], COMPILE_AND_START_TIMEOUT_S):
            return fail(proc, "no initialize reply")
        if not wait_for([3, 4], REPLY_TIMEOUT_S):
            return fail(proc, f"replies missing: have ids {sorted(map(str, replies))}")
        ingest, query = tool_json(replies[3]), tool_json(replies[4])
        if ingest.get("state") != "ready":
            return fail(proc, f"the ingest is not ready: {ingest}")
        evidence = query.get("evidence") or [{}]
        if evidence[0].get("text") != FACT or evidence[0].get("source") != SOURCE:
            return fail(proc, f"the query did not find the ingest: {query}")
        if "[1]" not in (query.get("answer") or {}).get("text", json.dumps(query.get("answer"))):
            return fail(proc, f"the answer does not cite its evidence: {query.get('answer')}")
        proc.stdin.close()
        status = proc.wait(timeout=EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return fail(proc, "the server did not exit after stdin closed")
    if status != 0:
        print(f"readme_commands: the server exited with status {status}", file=sys.stderr)
        return 1
    if not any(memory.iterdir()):
        print("readme_commands: ./memory holds nothing", file=sys.stderr)
        return 1
    print("readme_commands: serve command OK (initialize, ingest ready, query found it with "
          "its source, answer cited it, exit 0)")
    return 0


def fail(proc, why):
    print(f"readme_commands: {why}", file=sys.stderr)
    proc.kill()
    proc.wait()
    return 1


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("show", "serve", "test"):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: readme_commands.py show|serve|test", file=sys.stderr)
        return 2
    found = commands()
    what = sys.argv[1]
    if what == "show":
        for name in ("serve", "test"):
            print(f"{name}: {found[name]}")
        return 0
    if what == "serve":
        return serve(found["serve"])
    print(f"readme_commands: running `{found['test']}`", flush=True)
    return subprocess.call(["bash", "-c", found["test"]], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
