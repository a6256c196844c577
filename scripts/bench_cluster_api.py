#!/usr/bin/env python3
"""Measures `alayasiki-api` on a 3-node rqlite cluster on loopback beside the
same server on a local store (BENCHMARKS.md, "alayasiki-api on a cluster").

For each size N, in one run: a local server, one cluster node, and two
cluster nodes writing at once each ingest N generated notes through
`/v1/tools/alayasiki_ingest` (8 clients, `wait: false`), timed until every
document is indexed; then 300 queries, p50 / p99, on the local server and
on a node (plain, and with `X-Alayasiki-After` naming the node's own
position); the cost of reading your write on the other node (ingest on A,
query on B with `X-Alayasiki-After`); and the time from a `kill -9` of the
cluster's leader to the next acknowledged ingest. Peak RSS is each server's
`VmHWM`.

    python3 scripts/bench_cluster_api.py [--sizes 1000,10000] [--one-node] [--api target/release/alayasiki-api]
    python3 scripts/bench_cluster_api.py --documents 1000000,4000000

`--one-node` stops after the one-node figures (and the leader kill), for
sizes where two nodes ingesting again would take too long. `--documents`
instead times single large documents of the given sizes in bytes, each
ingested with `wait: true` through one node of a fresh cluster.
`--compact` instead times `POST /v1/compact` after a tenth of N notes was
forgotten: on a local server, and on a node of a cluster with a second node
following (until the second has applied it), with query p50 / p99 on the
compacting server while it runs.

    python3 scripts/bench_cluster_api.py --compact 10000,100000

`--pin` runs the three `rqlited` on the last CPU and everything else (this
script's clients, the local server, the nodes) on the others, as if the
cluster had machines of its own: the node's figures beside the local
store's then show what the node itself costs.

    python3 scripts/bench_cluster_api.py --pin --sizes 10000
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_process  # noqa: E402
from bench_cluster import ROOT, Cluster, find_rqlited  # noqa: E402

SECRET = "bench-secret-0123456789abcdef-0123456789"
TOKEN = api_process.token(SECRET, "bench", "team", ["admin"], ttl_s=7200)
CLIENTS = 8
QUERIES = 300
WORDS = ("harbour ferry orchard station library telescope survey tide wind archive "
         "ledger garden bridge market council river meadow signal lantern quarry").split()


def note(i):
    body = " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(40))
    return f"Entry {i} by Person{i % 97} about {body}."


def call(base, path, body, after=None, timeout=60):
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    if after is not None:
        headers["X-Alayasiki-After"] = str(after)
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.load(r), r.headers.get("X-Alayasiki-Position")
    except urllib.error.HTTPError as e:
        return e.code, None, None


def ingest(base, i, wait=False):
    body = {"content": note(i), "source": f"bench/{i % 50}", "idempotency_key": f"n{i}",
            "wait": wait}
    while True:
        status, out, position = call(base, "/v1/tools/alayasiki_ingest", body)
        if status == 200:
            return int(position) if position else 0
        if status != 503:
            raise SystemExit(f"ingest {i}: HTTP {status}")
        time.sleep(0.05)


def pending(base):
    status, out, _ = call(base, "/v1/tools/alayasiki_status", {})
    return out["jobs"]["pending"]


def peak_rss_mib(proc):
    with open(f"/proc/{proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def ingest_all(bases, n, first=0):
    """Ingests notes first..first+n spread over `bases`; docs/s until all
    are indexed."""
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(lambda i: ingest(bases[i % len(bases)], first + i), range(n)))
    while any(pending(b) > 0 for b in bases):
        time.sleep(0.05)
    return n / (time.perf_counter() - started)


def latencies(fn, n=QUERIES):
    took = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        took.append((time.perf_counter() - t) * 1000)
    took.sort()
    return statistics.median(took), took[int(len(took) * 0.99) - 1]


def query(base, i, after=None):
    q = f"what did Person{i % 97} write about the {WORDS[i % len(WORDS)]}"
    status, _, _ = call(base, "/v1/tools/alayasiki_query", {"query": q}, after)
    if status != 200:
        raise SystemExit(f"query: HTTP {status}")


def position(base):
    status, out, _ = call(base, "/v1/tools/alayasiki_status", {})
    return out["cluster"]["position"]


def stop_all(procs):
    """Stops the servers, each given 30 s to finish."""
    for p in procs:
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


def kill_leader(cluster, base, n):
    """Kills the cluster's leader; prints when `base` next acknowledges an ingest."""
    cluster.kill(cluster.wait_leader())
    t = time.perf_counter()
    ingest(base, 30 * n)
    print(f"N={n} cluster: leader killed, next ingest acknowledged "
          f"{time.perf_counter() - t:.2f} s later", flush=True)


def bench_size(api, rqlited, n, work, one_node=False):
    env = {"ALAYASIKI_API_RATE": "100000", "ALAYASIKI_API_BURST": "100000"}
    procs = []

    def start(tag, store=None):
        extra = dict(env, **({"ALAYASIKI_STORE": store} if store else {"ALAYASIKI_STORE": ""}))
        proc, base = api_process.start(api, os.path.join(work, f"{tag}-{n}"), SECRET,
                                       lambda m: (_ for _ in ()).throw(SystemExit(m)), extra)
        procs.append(proc)
        return proc, base

    try:
        local_proc, local = start("local")
        rate = ingest_all([local], n)
        p50, p99 = latencies(lambda i: query(local, i))
        print(f"N={n} local: ingest {rate:,.0f} docs/s; query p50 {p50:.2f} ms p99 {p99:.2f} ms; "
              f"peak RSS {peak_rss_mib(local_proc):.0f} MiB", flush=True)

        os.makedirs(os.path.join(work, f"rqlite-{n}"), exist_ok=True)
        cluster = Cluster(rqlited, os.path.join(work, f"rqlite-{n}"))
        try:
            a_proc, a = start("a", cluster.address())
            rate = ingest_all([a], n)
            p50, p99 = latencies(lambda i: query(a, i))
            at = position(a)
            q50, q99 = latencies(lambda i: query(a, i, after=at))
            print(f"N={n} cluster, one node: ingest {rate:,.0f} docs/s; query p50 {p50:.2f} ms "
                  f"p99 {p99:.2f} ms; with X-Alayasiki-After p50 {q50:.2f} ms p99 {q99:.2f} ms; "
                  f"peak RSS {peak_rss_mib(a_proc):.0f} MiB", flush=True)

            if one_node:
                return kill_leader(cluster, a, n)
            b_proc, b = start("b", cluster.address())
            offset = 10 * n

            def write_then_read(i):
                at = ingest(a, offset + i, wait=True)
                query(b, i, after=at)
            r50, r99 = latencies(write_then_read, 100)
            rate = ingest_all([a, b], n, first=2 * offset)
            print(f"N={n} cluster, two nodes writing: ingest {rate:,.0f} docs/s; ingest on A "
                  f"(wait) then query on B with X-Alayasiki-After p50 {r50:.2f} ms "
                  f"p99 {r99:.2f} ms", flush=True)

            kill_leader(cluster, a, n)
        finally:
            cluster.stop()
    finally:
        stop_all(procs)


def large_document(size):
    """`size` bytes of generated sentences, a few thousand distinct words."""
    words = [f"{a}{b}{c}" for a in ("har", "fer", "orc", "sta", "lib", "tel", "sur", "tid")
             for b in ("bo", "ri", "ve", "la", "mu", "no", "ka", "pe")
             for c in ("ur", "ard", "ion", "ary", "ope", "ey", "in", "ed")]
    out, i = [], 0
    while sum(map(len, out)) < size:
        line = " ".join(words[(i * 31 + k * 17) % len(words)] for k in range(12))
        out.append(f"Line {i}: {line.capitalize()}. Person{i % 97} noted it. ")
        i += 1
    return "".join(out)[:size]


def bench_documents(api, rqlited, sizes, work):
    env = {"ALAYASIKI_API_RATE": "100000", "ALAYASIKI_API_BURST": "100000"}
    for size in sizes:
        os.makedirs(os.path.join(work, f"rqlite-doc-{size}"))
        cluster = Cluster(rqlited, os.path.join(work, f"rqlite-doc-{size}"))
        proc = None
        try:
            proc, base = api_process.start(
                api, os.path.join(work, f"doc-{size}"), SECRET,
                lambda m: (_ for _ in ()).throw(SystemExit(m)),
                dict(env, ALAYASIKI_STORE=cluster.address()))
            body = {"content": large_document(size), "source": "bench/large", "wait": True}
            t = time.perf_counter()
            status, out, _ = call(base, "/v1/tools/alayasiki_ingest", body, timeout=600)
            took = time.perf_counter() - t
            if status != 200 or out.get("state") != "ready":
                raise SystemExit(f"document of {size} bytes: HTTP {status} {out}")
            print(f"document of {size:,} bytes: {out['chunks']:,} chunks, ready {took:.2f} s "
                  f"after it was sent, through one cluster node", flush=True)
        finally:
            if proc:
                proc.terminate()
                proc.wait(timeout=30)
            cluster.stop()


def forget_a_tenth(base):
    """Forgets the notes of 5 of the 50 sources: a tenth of them."""
    for source in range(5):
        status, _, _ = call(base, "/v1/tools/alayasiki_forget", {"source": f"bench/{source}"},
                            timeout=600)
        if status != 200:
            raise SystemExit(f"forget: HTTP {status}")


def compact_while_querying(base):
    """Times POST /v1/compact on `base` while another client queries it."""
    done, took = [], []

    def querying():
        i = 0
        while not done:
            t = time.perf_counter()
            query(base, i)
            took.append((time.perf_counter() - t) * 1000)
            i += 1
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        queries = pool.submit(querying)
        t = time.perf_counter()
        status, out, at = call(base, "/v1/compact", {}, timeout=600)
        elapsed = time.perf_counter() - t
        done.append(True)
        queries.result()
    if status != 200:
        raise SystemExit(f"compact: HTTP {status}")
    took.sort()
    p50 = statistics.median(took) if took else 0.0
    p99 = took[max(0, int(len(took) * 0.99) - 1)] if took else 0.0
    return elapsed, out, int(at) if at else 0, p50, p99, len(took)


def bench_compact(api, rqlited, sizes, work):
    env = {"ALAYASIKI_API_RATE": "100000", "ALAYASIKI_API_BURST": "100000"}
    for n in sizes:
        procs = []

        def start(tag, store=""):
            proc, base = api_process.start(api, os.path.join(work, f"compact-{tag}-{n}"), SECRET,
                                           lambda m: (_ for _ in ()).throw(SystemExit(m)),
                                           dict(env, ALAYASIKI_STORE=store))
            procs.append(proc)
            return base

        cluster = None
        try:
            local = start("local")
            ingest_all([local], n)
            forget_a_tenth(local)
            took, out, _, p50, p99, q = compact_while_querying(local)
            print(f"N={n} local: compact {took:.2f} s ({out['vector_rows_before']:,} -> "
                  f"{out['vector_rows_after']:,} vector rows); {q} queries meanwhile, "
                  f"p50 {p50:.2f} ms p99 {p99:.2f} ms", flush=True)

            os.makedirs(os.path.join(work, f"rqlite-compact-{n}"))
            cluster = Cluster(rqlited, os.path.join(work, f"rqlite-compact-{n}"))
            a = start("a", cluster.address())
            b = start("b", cluster.address())
            ingest_all([a], n)
            forget_a_tenth(a)
            while position(b) < position(a):
                time.sleep(0.05)
            t = time.perf_counter()
            took, out, at, p50, p99, q = compact_while_querying(a)
            while position(b) < at:
                time.sleep(0.01)
            followed = time.perf_counter() - t
            print(f"N={n} cluster: compact on A {took:.2f} s, applied on B {followed:.2f} s "
                  f"after the request ({out['vector_rows_before']:,} -> "
                  f"{out['vector_rows_after']:,} vector rows); {q} queries on A meanwhile, "
                  f"p50 {p50:.2f} ms p99 {p99:.2f} ms", flush=True)
        finally:
            stop_all(procs)
            if cluster:
                cluster.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--one-node", action="store_true")
    ap.add_argument("--api", default=os.path.join(ROOT, "target/release/alayasiki-api"))
    ap.add_argument("--documents", help="sizes in bytes of single documents to time instead")
    ap.add_argument("--compact", help="sizes at which to time compaction instead")
    ap.add_argument("--pin", action="store_true",
                    help="the cluster on the last CPU, the servers and clients on the others")
    args = ap.parse_args()
    if args.pin:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            sys.exit("--pin needs two CPUs")
        Cluster.cpus = {cpus[-1]}
        # Inherited by every server this script starts, and by its threads.
        os.sched_setaffinity(0, set(cpus[:-1]))
        print(f"pinned: rqlited on CPU {cpus[-1]}, servers and clients on {cpus[:-1]}",
              flush=True)
    rqlited = find_rqlited()
    work = tempfile.mkdtemp(prefix="bench-cluster-api-")
    try:
        if args.compact:
            return bench_compact(args.api, rqlited, [int(s) for s in args.compact.split(",")],
                                 work)
        if args.documents:
            return bench_documents(args.api, rqlited, [int(s) for s in args.documents.split(",")],
                                   work)
        for size in [int(s) for s in args.sizes.split(",")]:
            bench_size(args.api, rqlited, size, work, args.one_node)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
