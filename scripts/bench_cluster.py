#!/usr/bin/env python3
"""Measures a memory on a 3-node rqlite cluster on loopback (BENCHMARKS.md,
"A memory on an rqlite cluster").

For each size: a data directory of N generated notes is made with
`alayasiki-mcp ingest`, pushed into a fresh cluster (`cluster push`) and
pulled back (`cluster pull`, whose re-embedding is timed on its own); both
print rows/s and the command's peak RSS. Then, on the cluster alone: write
transactions of the kind the store's writer makes (an operation id recorded
once, then its rows) one at a time and 500 rows at a time, p50 / p99 per
commit; and the time from a `kill -9` of the leader to the next
acknowledged write.

    python3 scripts/bench_cluster.py [--sizes 1000,10000] [--binary target/release/alayasiki-mcp]
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Cluster:
    # The CPUs every rqlited is started on (`None`: wherever the caller
    # runs). Set by a benchmark that keeps the cluster off its server's CPU.
    cpus = None

    def __init__(self, rqlited, root, n=3):
        self.rqlited, self.root, self.nodes = rqlited, root, []
        for i in range(n):
            node = {"id": f"n{i}", "http": free_port(), "raft": free_port(), "proc": None}
            self.nodes.append(node)
            self.start(i)
            if i == 0:
                self.wait_leader()
        self.wait_members(n)

    def start(self, i):
        node = self.nodes[i]
        args = [self.rqlited, "-node-id", node["id"],
                "-http-addr", f"127.0.0.1:{node['http']}",
                "-raft-addr", f"127.0.0.1:{node['raft']}",
                "-raft-timeout", "500ms", "-raft-election-timeout", "500ms"]
        if i > 0:
            args += ["-join", f"127.0.0.1:{self.nodes[0]['raft']}"]
        args.append(os.path.join(self.root, node["id"]))
        log = open(os.path.join(self.root, node["id"] + ".log"), "ab")
        cpus = self.cpus
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        node["proc"] = subprocess.Popen(args, stdout=log, stderr=log, preexec_fn=pin)

    def address(self):
        return "rqlite://" + ",".join(f"127.0.0.1:{n['http']}" for n in self.nodes)

    def get(self, i, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.nodes[i]['http']}{path}", timeout=2) as r:
            return json.load(r)

    def leader(self):
        for i, n in enumerate(self.nodes):
            if n["proc"] is None:
                continue
            try:
                for m in self.get(i, "/nodes").values():
                    if m.get("leader"):
                        return next(k for k, x in enumerate(self.nodes) if x["id"] == m["id"])
            except (OSError, ValueError, StopIteration):
                pass
        return None

    def wait_leader(self, within=20):
        deadline = time.time() + within
        while time.time() < deadline:
            leader = self.leader()
            if leader is not None:
                return leader
            time.sleep(0.05)
        raise SystemExit("no leader")

    def wait_members(self, n, within=30):
        deadline = time.time() + within
        while time.time() < deadline:
            try:
                if sum(1 for m in self.get(0, "/nodes").values() if m.get("reachable")) == n:
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise SystemExit("members did not join")

    def kill(self, i):
        self.nodes[i]["proc"].kill()
        self.nodes[i]["proc"].wait()
        self.nodes[i]["proc"] = None

    def stop(self):
        for i, n in enumerate(self.nodes):
            if n["proc"] is not None:
                self.kill(i)


def execute(port, statements, timeout=5):
    body = json.dumps(statements).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/db/execute?transaction&timeout=4s",
                                 data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        out = json.load(r)
    if out.get("error") or any("error" in x for x in out.get("results", [])):
        raise RuntimeError(out)
    return out


def run_timed(cmd, env):
    """Runs cmd; returns (seconds, stderr, the child's own peak RSS in MiB)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as err:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        took = time.perf_counter() - started
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {text}")
    return took, text, usage.ru_maxrss / 1024


def notes(dir_, n):
    os.makedirs(dir_, exist_ok=True)
    words = ("harbour ferry orchard station library telescope survey tide wind archive "
             "ledger garden bridge market council river meadow signal lantern quarry").split()
    for i in range(n):
        body = " ".join(words[(i * 7 + k * 3) % len(words)] for k in range(60))
        with open(os.path.join(dir_, f"note-{i:06d}.md"), "w") as f:
            f.write(f"# Note {i}\n\nEntry {i} by Person{i % 97} about {body}.\n")


def bench_copy(binary, rqlited, size, work):
    data = os.path.join(work, f"memory-{size}")
    src = os.path.join(work, f"notes-{size}")
    notes(src, size)
    env = dict(os.environ, ALAYASIKI_LOG="warn")
    subprocess.run([binary, "ingest", src, "--data-dir", data], env=env, check=True,
                   capture_output=True)
    root = tempfile.mkdtemp(prefix="bench-rqlite-")
    cluster = Cluster(rqlited, root)
    try:
        env["ALAYASIKI_CLUSTER"] = cluster.address()
        took, err, rss = run_timed([binary, "cluster", "push", "--data-dir", data], env)
        rows = int(err.split(" tables, ")[1].split(" rows")[0])
        mb = os.path.getsize(os.path.join(data, "memory.db")) / 2**20
        print(f"{size:>7} docs  push  {rows:>8} rows {mb:7.1f} MiB  {took:6.1f} s  "
              f"{rows / took:8.0f} rows/s  peak RSS {rss:5.0f} MiB")
        pulled = os.path.join(work, f"pulled-{size}")
        took, err, rss = run_timed([binary, "cluster", "pull", "--data-dir", pulled], env)
        copy_s = float(err.split("checked in ")[1].split("s")[0])
        print(f"{size:>7} docs  pull  {rows:>8} rows               {copy_s:6.1f} s  "
              f"{rows / copy_s:8.0f} rows/s  (+ re-embedding {took - copy_s:.1f} s)  "
              f"peak RSS {rss:5.0f} MiB")
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def bench_writes(rqlited):
    root = tempfile.mkdtemp(prefix="bench-rqlite-")
    cluster = Cluster(rqlited, root)
    try:
        port = cluster.nodes[1]["http"]  # a follower: writes are forwarded
        execute(port, [["CREATE TABLE ops(op_id TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID"],
                       ["CREATE TABLE rows(op_id TEXT, k INTEGER, v TEXT, PRIMARY KEY(op_id, k))"]])

        def op(name, rows):
            return [["INSERT INTO ops(op_id, n) VALUES (?, ?) ON CONFLICT DO NOTHING", name, rows]] + [
                ["INSERT INTO rows(op_id, k, v) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                 name, k, "x" * 200] for k in range(rows)]

        for rows, count in ((1, 400), (500, 40)):
            times = []
            started = time.perf_counter()
            for i in range(count):
                t = time.perf_counter()
                execute(port, op(f"b{rows}-{i}", rows))
                times.append((time.perf_counter() - t) * 1000)
            total = time.perf_counter() - started
            times.sort()
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            print(f"commits of {rows:>3} row(s) through a follower: {count / total:7.0f} commits/s "
                  f"{count * rows / total:8.0f} rows/s  p50 {statistics.median(times):5.1f} ms  "
                  f"p99 {p99:5.1f} ms")

        # Recovery: the time from kill -9 of the leader to the next
        # acknowledged write through a surviving node.
        leader = cluster.wait_leader()
        survivor = next(i for i in range(3) if i != leader)
        port = cluster.nodes[survivor]["http"]
        killed = time.perf_counter()
        cluster.kill(leader)
        n = 0
        while True:
            try:
                execute(port, op(f"after-kill-{n}", 1), timeout=2)
                break
            except (OSError, RuntimeError, urllib.error.URLError):
                n += 1
                time.sleep(0.02)
        print(f"leader killed: next acknowledged write after {time.perf_counter() - killed:.2f} s "
              f"({n} refused tries; election timeout 500 ms)")
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def find_rqlited():
    """`ALAYASIKI_RQLITED`, else the pinned build, installed if need be."""
    return os.environ.get("ALAYASIKI_RQLITED") or subprocess.run(
        ["bash", os.path.join(ROOT, "scripts/rqlite_install.sh")],
        check=True, capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/alayasiki-mcp"))
    args = ap.parse_args()
    rqlited = find_rqlited()
    work = tempfile.mkdtemp(prefix="bench-cluster-")
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            bench_copy(args.binary, rqlited, size, work)
        bench_writes(rqlited)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
