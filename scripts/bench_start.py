#!/usr/bin/env python3
"""What a start costs on an existing memory: time to the initialize answer and
resident memory right after it, then the first query's time and memory.

Usage: python3 scripts/bench_start.py [--binary target/release/alayasiki-mcp]
                                      [--runs 5] DATA_DIR [DATA_DIR ...]

Each DATA_DIR is a memory already filled (for instance the store
scripts/bench_filters.py leaves with --store). For each, RUNS times: spawn
`alayasiki-mcp --data-dir DIR --in-process` (the store is opened by this
process, not an owner), time spawn -> initialize answered, wait 0.3 s, read
/proc/PID/status (VmRSS, and RssFile: pages of the mapped database and
vector files the start touched), ask one evidence query and read them again.
The first query also loads the built-in embedding model, which a start does
not. Prints each directory's document count, bytes on disk, and the median
and range of every figure. Linux only (it reads /proc); Python 3 standard
library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def memory(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssFile", "RssAnon"):
                out[key] = int(value.split()[0]) / 1024
    return out


def one_start(binary, data_dir):
    started = time.perf_counter()
    proc = subprocess.Popen(
        [binary, "--data-dir", data_dir, "--in-process"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def call(i, method, params):
        msg = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"the server exited (status {proc.wait()})")
        return json.loads(line)

    try:
        call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "bench_start", "version": "1"}})
        ready = time.perf_counter()
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        time.sleep(0.3)
        after_start = memory(proc.pid)
        asked = time.perf_counter()
        reply = call(2, "tools/call", {"name": "alayasiki_query", "arguments": {
            "query": "what was decided about the backup schedule", "mode": "evidence"}})
        answered = time.perf_counter()
        if "result" not in reply:
            raise SystemExit(f"query failed: {reply}")
        after_query = memory(proc.pid)
        status = call(3, "tools/call", {"name": "alayasiki_status", "arguments": {}})
        documents = json.loads(status["result"]["content"][0]["text"])["documents"]
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return {
        "initialize_ms": (ready - started) * 1000,
        "rss_after_start_mib": after_start["VmRSS"],
        "file_after_start_mib": after_start["RssFile"],
        "first_query_ms": (answered - asked) * 1000,
        "rss_after_query_mib": after_query["VmRSS"],
        "documents": documents,
    }


def disk_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            total += os.stat(os.path.join(root, name)).st_blocks * 512
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default="target/release/alayasiki-mcp")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    figures = ["initialize_ms", "rss_after_start_mib", "file_after_start_mib",
               "first_query_ms", "rss_after_query_mib"]
    print(f"{'documents':>10} {'disk MiB':>9}  " + "  ".join(f"{f:>22}" for f in figures))
    for d in args.dirs:
        runs = [one_start(args.binary, d) for _ in range(args.runs)]
        cells = []
        for f in figures:
            values = [r[f] for r in runs]
            cells.append(f"{statistics.median(values):8.1f} ({min(values):.1f}-{max(values):.1f})")
        print(f"{runs[0]['documents']:>10} {disk_bytes(d) / 2**20:>9.1f}  "
              + "  ".join(f"{c:>22}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
