#!/usr/bin/env python3
"""Disk footprint of a small memory, measured through the real binary.

Usage: scripts/footprint.py [--binary target/release/alayasiki-mcp]
                            [--conversation ../shared/eval/locomo-dev/43.json]
                            [--idle-wait 2.5] [--keep DIR] [--no-check]
       scripts/footprint.py --notes 100000 [--binary ...] [--keep DIR]

Spawns the server over stdio on a fresh data directory, ingests one LoCoMo
conversation the way scripts/eval_locomo does (one document per turn, the
session as source; its loader is imported, not copied), and prints, per
file of the data directory, the bytes allocated on disk (st_blocks * 512,
not the apparent size, so sparse tails cost nothing):

- during ingestion: the largest write-ahead log and data directory seen
  (sampled every 20 ms while turns are sent and indexed);
- right after the last job is indexed;
- after --idle-wait seconds without writes (default 2.5), the server still
  running.

Exits 1 if a target is missed: the log after the idle wait at most
IDLE_WAL_BYTES (4 MiB), the log during ingestion at most PEAK_WAL_BYTES
(64 MiB), the data directory after the idle wait at most IDLE_TOTAL_BYTES
(8 MB). --no-check only prints.

With --notes N it measures a memory of N short notes instead: the ~110-byte
synthetic memories of scripts/bench_peers.py (memory i depends on i alone),
sent 32 calls in flight with `wait: false` until nothing is pending, the
server (in process, not through an owner) then shut down cleanly. It prints
the data directory's bytes per note, and per table and index (SQLite's
dbstat, read after the server has exited) the bytes per note, largest
first. Exits 1 if the data directory takes more than NOTE_BYTES (1,200) per
note.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

IDLE_WAL_BYTES = 4 * 1024 * 1024
PEAK_WAL_BYTES = 64 * 1024 * 1024
IDLE_TOTAL_BYTES = 8 * 1000 * 1000
WAL_FILE = "memory.db-wal"
NOTE_BYTES = 1200


def load_eval_locomo():
    """scripts/eval_locomo as a module (it has no .py suffix)."""
    path = os.path.join(HERE, "eval_locomo")
    loader = importlib.machinery.SourceFileLoader("eval_locomo", path)
    spec = importlib.util.spec_from_loader("eval_locomo", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def allocated(path):
    """Bytes allocated on disk for a file (0 if it is gone)."""
    try:
        return os.stat(path).st_blocks * 512
    except FileNotFoundError:
        return 0


def files_of(data_dir):
    """{relative path: (allocated bytes, apparent bytes)} for every file."""
    out = {}
    for root, _, names in os.walk(data_dir):
        for name in names:
            p = os.path.join(root, name)
            try:
                st = os.stat(p)
            except FileNotFoundError:
                continue
            out[os.path.relpath(p, data_dir)] = (st.st_blocks * 512, st.st_size)
    return out


def total(files):
    return sum(a for a, _ in files.values())


class Sampler(threading.Thread):
    """Tracks the largest log and data directory while ingestion runs."""

    def __init__(self, data_dir):
        super().__init__(daemon=True)
        self.data_dir = data_dir
        self.peak_wal = 0
        self.peak_total = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.peak_wal = max(self.peak_wal, allocated(os.path.join(self.data_dir, WAL_FILE)))
            self.peak_total = max(self.peak_total, total(files_of(self.data_dir)))
            time.sleep(0.02)


def show(title, files):
    print(f"\n{title}")
    print(f"  {'file':<28} {'allocated':>12} {'apparent':>12}")
    for name in sorted(files):
        a, s = files[name]
        print(f"  {name:<28} {a:>12,} {s:>12,}")
    print(f"  {'total':<28} {total(files):>12,}")


def load_bench_peers():
    """scripts/bench_peers.py as a module, for its synthetic memories."""
    spec = importlib.util.spec_from_file_location("bench_peers",
                                                  os.path.join(HERE, "bench_peers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tables_per_note(db_path, notes):
    """[(table or index, bytes per note)] from dbstat, largest first."""
    import sqlite3
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    finally:
        db.close()
    return sorted(((name, size / notes) for name, size in rows), key=lambda r: -r[1])


def measure_notes(args):
    peers = load_bench_peers()
    data_dir = args.keep or tempfile.mkdtemp(prefix="alayasiki-footprint-")
    os.makedirs(data_dir, exist_ok=True)
    if os.listdir(data_dir):
        sys.exit(f"footprint: {data_dir} is not empty")
    # In process: closing stdin then shuts the store down (a final
    # checkpoint empties the log) before the process exits.
    os.environ["ALAYASIKI_IN_PROCESS"] = "1"
    try:
        server = peers.Ours(args.binary, data_dir)
        items = ((peers.synthetic(20, i)[0], {"memory": i}) for i in range(args.notes))
        seconds = server.ingest_pipelined(items)
        server.close()
        files = files_of(data_dir)
        per_note = total(files) / args.notes
        text = sum(len(peers.synthetic(20, i)[0].encode()) for i in range(args.notes))
        print(f"{args.binary}\n{args.notes:,} notes ({text / args.notes:.0f} bytes of text "
              f"each) stored in {seconds:.1f} s, then a clean shutdown")
        show("data directory", files)
        print(f"\n  {'table or index':<36} {'bytes per note':>14}")
        for name, size in tables_per_note(os.path.join(data_dir, "memory.db"), args.notes):
            if size >= 0.5:
                print(f"  {name:<36} {size:>14,.1f}")
        vectors = sum(a for name, (a, _) in files.items() if name.startswith("vectors"))
        print(f"  {'(vector files)':<36} {vectors / args.notes:>14,.1f}")
    finally:
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    ok = per_note <= NOTE_BYTES
    print(f"\n{'ok  ' if ok else 'MISS'} data directory per note: {per_note:,.0f} bytes "
          f"(target <= {NOTE_BYTES:,})")
    if not ok and not args.no_check:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/alayasiki-mcp"))
    ap.add_argument("--conversation",
                    default=os.path.join(ROOT, "../shared/eval/locomo-dev/43.json"))
    ap.add_argument("--idle-wait", type=float, default=2.5)
    ap.add_argument("--keep", help="use this (empty or new) data directory and keep it")
    ap.add_argument("--no-check", action="store_true", help="print only")
    ap.add_argument("--notes", type=int, help="measure N short notes instead")
    args = ap.parse_args()
    if args.notes:
        return measure_notes(args)

    eval_locomo = load_eval_locomo()
    with open(args.conversation) as f:
        conv = json.load(f)
    data_dir = args.keep or tempfile.mkdtemp(prefix="alayasiki-footprint-")
    os.makedirs(data_dir, exist_ok=True)
    if os.listdir(data_dir):
        sys.exit(f"footprint: {data_dir} is not empty")
    name = os.path.splitext(os.path.basename(args.conversation))[0]
    server = eval_locomo.Server(args.binary, data_dir, {})
    sampler = Sampler(data_dir)
    try:
        sampler.start()
        started = time.monotonic()
        turns = eval_locomo.ingest_conversation(server, conv, name)
        ingest_s = time.monotonic() - started
        sampler.stop.set()
        sampler.join()
        after = files_of(data_dir)
        text = sum(len(f"{t['speaker']}: {t['text']}".encode())
                   for _, _, t in eval_locomo.turns_of(conv))
        print(f"{args.binary}\n{turns} turns ({text:,} bytes of text) ingested and "
              f"indexed in {ingest_s:.1f} s")
        print(f"\nduring ingestion: largest log {sampler.peak_wal:,} bytes allocated, "
              f"largest data directory {sampler.peak_total:,}")
        show("right after the last job was indexed", after)
        time.sleep(args.idle_wait)
        idle = files_of(data_dir)
        show(f"after {args.idle_wait} s without writes (server running)", idle)
        alive = server.proc.poll() is None
    finally:
        server.close()
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    if not alive:
        sys.exit("footprint: the server exited during the idle wait")

    idle_wal = idle.get(WAL_FILE, (0, 0))[0]
    checks = [
        (f"log after {args.idle_wait} s idle", idle_wal, IDLE_WAL_BYTES),
        ("largest log during ingestion", sampler.peak_wal, PEAK_WAL_BYTES),
        (f"data directory after {args.idle_wait} s idle", total(idle), IDLE_TOTAL_BYTES),
    ]
    print()
    missed = 0
    for what, got, limit in checks:
        ok = got <= limit
        missed += not ok
        print(f"{'ok  ' if ok else 'MISS'} {what}: {got:,} bytes (target <= {limit:,})")
    if missed and not args.no_check:
        sys.exit(1)


if __name__ == "__main__":
    main()
