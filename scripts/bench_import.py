#!/usr/bin/env python3
"""Import throughput of an MCP memory-server file, through the real binary.

Usage: scripts/bench_import.py [--binary target/release/alayasiki-mcp]
                               [--lines 250000] [--keep DIR] [--file PATH]

Writes a knowledge-graph file in the format of
@modelcontextprotocol/server-memory (its memory.jsonl: entity lines first,
then relation lines; two fifths entities with one to three observations
each, three fifths relations between them), deterministic for a given
--lines, then runs `alayasiki-mcp import FILE` on a fresh data directory
(full durability, the built-in embedder) and prints the wall time and the
lines per second until the import returned, every document indexed. It then
imports the same file again and prints how long finding everything already
present took. --file reuses (or keeps) the generated file at PATH.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

TYPES = ["person", "organization", "project", "concept", "place", "tool", "event"]
RELATIONS = ["works_at", "knowsAbout", "uses", "depends-on", "located in", "mentors"]
WORDS = (
    "prefers dark roast coffee, reviews pull requests in the morning, moved to Lisbon, "
    "maintains the billing service, speaks Portuguese and German, asked about the release, "
    "owns the incident runbook, likes long walks, reported a flaky test, plans a trip"
).split(", ")


def write_file(path, lines):
    rng = random.Random(lines)
    entities = lines * 2 // 5
    with open(path, "w", encoding="utf-8") as f:
        for i in range(entities):
            kind = TYPES[i % len(TYPES)]
            observations = rng.sample(WORDS, rng.randint(1, 3))
            f.write(json.dumps({"type": "entity", "name": f"{kind.title()} {i}",
                                "entityType": kind, "observations": observations}) + "\n")
        for _ in range(lines - entities):
            a, b = rng.randrange(entities), rng.randrange(entities)
            f.write(json.dumps({"type": "relation",
                                "from": f"{TYPES[a % len(TYPES)].title()} {a}",
                                "to": f"{TYPES[b % len(TYPES)].title()} {b}",
                                "relationType": rng.choice(RELATIONS)}) + "\n")


def run_import(binary, path, data_dir):
    began = time.monotonic()
    out = subprocess.run([binary, "import", path, "--data-dir", data_dir],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         env={**os.environ, "ALAYASIKI_LOG": "warn"})
    elapsed = time.monotonic() - began
    if out.returncode != 0:
        sys.exit(f"import failed ({out.returncode}): {out.stderr[-2000:]}")
    return elapsed, out.stdout.strip().splitlines()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/alayasiki-mcp")
    ap.add_argument("--lines", type=int, default=250_000)
    ap.add_argument("--keep", help="data directory to keep (default: a temporary one)")
    ap.add_argument("--file", help="where the generated file is (reused if it exists)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-import-")
    try:
        path = args.file or os.path.join(work, "memory.jsonl")
        if not os.path.exists(path):
            write_file(path, args.lines)
        lines = sum(1 for _ in open(path, "rb"))
        data_dir = args.keep or os.path.join(work, "memory")
        if args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
        elapsed, report = run_import(args.binary, path, data_dir)
        print(f"import of {lines} lines ({os.path.getsize(path) / 1e6:.1f} MB): "
              f"{elapsed:.1f} s, {lines / elapsed:.0f} lines/s")
        print(f"  {report}")
        again, report = run_import(args.binary, path, data_dir)
        print(f"the same file again: {again:.1f} s, {lines / again:.0f} lines/s")
        print(f"  {report}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
