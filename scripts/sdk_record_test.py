#!/usr/bin/env python3
"""README's worked example: record a session with the official MCP Python
SDK through `alayasiki-mcp record`, then replay it with `alayasiki-mcp
replay`, which must pass as recorded.

Usage: sdk_record_test.py BINARY

Runs once per era of `mcp.Client` ("auto", the stateless 2026-07-28
revision; "legacy", initialize at 2025-11-25). Exits non-zero with a
message on any failure.
"""
import asyncio
import os
import subprocess
import sys
import tempfile

from mcp import Client, StdioServerParameters


def fail(msg):
    print(f"sdk_record_test: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


async def record(binary, fixture, mode):
    # The client starts the recorder instead of the server: that is all.
    params = StdioServerParameters(command=binary, args=["record", "--out", fixture],
                                   env={"ALAYASIKI_LOG": "warn", "PATH": os.environ.get("PATH", "")})
    async with Client(params, mode=mode) as client:
        await client.call_tool("alayasiki_ingest", {
            "content": "The night ferry leaves the north pier at 23:40 on weekdays.",
            "source": "timetable", "idempotency_key": "ferry"})
        await client.call_tool("alayasiki_query", {"query": "When does the night ferry leave?"})
        await client.call_tool("alayasiki_status", {})


def main(binary):
    with tempfile.TemporaryDirectory(prefix="alayasiki-record-") as tmp:
        for mode in ("auto", "legacy"):
            fixture = os.path.join(tmp, f"ferry-{mode}.jsonl")
            asyncio.run(record(binary, fixture, mode))
            with open(fixture) as f:
                text = f.read()
            if "<capture:doc1>" not in text:
                fail(f"{mode}: the recording captured no document id:\n{text[:2000]}")
            run = subprocess.run([binary, "replay", fixture], capture_output=True, text=True)
            if run.returncode != 0:
                fail(f"{mode}: replay exited {run.returncode}:\n{run.stdout[-4000:]}{run.stderr[-2000:]}")
            steps = sum(1 for line in text.splitlines() if '"expect"' in line)
            print(f"sdk_record_test: ok, mode {mode}: recorded {steps} replies, replayed green")


if __name__ == "__main__":
    main(sys.argv[1])
