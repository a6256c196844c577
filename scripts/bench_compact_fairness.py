#!/usr/bin/env python3
"""Measures what one tenant's compactions cost another tenant's writes on
one `alayasiki-api` (BENCHMARKS.md, "Compaction and the other tenants").

Tenant B holds about N chunks (generated documents, `--chunks`, default
25,000). Two phases, each on a freshly started server over the same data:

- `loop`: for `--seconds` (20), tenant A's client loops ingest (`wait:
  true`) then query, while an admin of tenant B loops ingest, forget and
  `POST /v1/compact`. Printed: A's iterations and worst ingest, B's
  compactions accepted and refused (429).
- `one`: B forgets a document from the middle of its memory (so nearly
  every vector slot moves) and compacts once while A loops; printed: the
  compaction's time and A's worst ingest while it ran.

    python3 scripts/bench_compact_fairness.py --api target/release/alayasiki-api
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_process  # noqa: E402

SECRET = "bench-secret-0123456789abcdef-0123456789"
A = api_process.token(SECRET, "a", "tenant-a", ["admin"], ttl_s=7200)
B = api_process.token(SECRET, "b", "tenant-b", ["admin"], ttl_s=7200)
WORDS = ("harbour ferry orchard station library telescope survey tide wind archive "
         "ledger garden bridge market council river meadow signal lantern quarry").split()
ENV = {"ALAYASIKI_API_RATE": "100000", "ALAYASIKI_API_BURST": "100000"}


def call(base, method, path, token, body=None, timeout=600):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {token}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, None


def document(d, chunks):
    """Text of `chunks` paragraphs of ~1 KB (two chunks each)."""
    paras = []
    for c in range(chunks):
        words = " ".join(WORDS[(d * 7 + c + k) % len(WORDS)] for k in range(140))
        paras.append(f"Record {d}-{c}: {words}.")
    return "\n\n".join(paras)


def ingest(base, token, content, source):
    status, out = call(base, "POST", "/v1/ingest", token,
                       {"Text": {"content": content, "source": source}, "wait": True})
    if status != 200:
        raise SystemExit(f"ingest: HTTP {status}")
    return out["document_id"], out.get("chunks")


def fill(base, chunks):
    ids, per = [], 500
    for d in range((chunks // 2 + per - 1) // per):
        doc, _ = ingest(base, B, document(d, per), f"bulk/{d}")
        ids.append(doc)
    status, out = call(base, "GET", "/v1/status", B)
    print(f"tenant B: {out.get('chunks', '?')} chunks in {len(ids)} documents", flush=True)
    return ids


class TenantA(threading.Thread):
    """Tenant A's ingest + query loop, its ingest latencies with times."""

    def __init__(self, base):
        super().__init__(daemon=True)
        self.base, self.stop, self.samples, self.iterations = base, threading.Event(), [], 0

    def run(self):
        i = 0
        while not self.stop.is_set():
            t = time.monotonic()
            ingest(self.base, A, f"Note {i}: the {WORDS[i % len(WORDS)]} opened at {i % 24}h.", "a")
            self.samples.append((t, time.monotonic() - t))
            call(self.base, "POST", "/v1/query", A, {"query": f"when did note {i} open"})
            self.iterations += 1
            i += 1

    def worst(self, start=0.0, end=float("inf")):
        inside = [d for t, d in self.samples if start <= t and t + d >= start and t <= end]
        return max(inside, default=0.0)


def phase_loop(base, seconds):
    a = TenantA(base)
    a.start()
    accepted = refused = 0
    deadline = time.monotonic() + seconds
    i = 0
    while time.monotonic() < deadline:
        doc, _ = ingest(base, B, f"Passing note {i} about the {WORDS[i % len(WORDS)]}.", "b/loop")
        status, _ = call(base, "DELETE", f"/v1/documents/{doc}", B)
        if status != 200:
            raise SystemExit(f"forget: HTTP {status}")
        status, _ = call(base, "POST", "/v1/compact", B, {})
        if status == 200:
            accepted += 1
        elif status == 429:
            refused += 1
        else:
            raise SystemExit(f"compact: HTTP {status}")
        i += 1
    a.stop.set()
    a.join()
    print(f"loop: A {a.iterations} iterations in {seconds} s, worst ingest "
          f"{a.worst() * 1000:.0f} ms; B compactions {accepted} accepted, {refused} refused",
          flush=True)


def phase_one(base, middle):
    a = TenantA(base)
    a.start()
    time.sleep(2)
    status, _ = call(base, "DELETE", f"/v1/documents/{middle}", B)
    if status != 200:
        raise SystemExit(f"forget: HTTP {status}")
    time.sleep(1)
    t = time.monotonic()
    status, out = call(base, "POST", "/v1/compact", B, {})
    end = time.monotonic()
    time.sleep(1)
    a.stop.set()
    a.join()
    if status != 200:
        raise SystemExit(f"compact: HTTP {status}")
    before = [d for s, d in a.samples if s + d < t]
    print(f"one: compaction {end - t:.2f} s ({out['vector_rows_before']:,} -> "
          f"{out['vector_rows_after']:,} rows); A's worst ingest during it "
          f"{a.worst(t, end) * 1000:.0f} ms (before it {max(before, default=0) * 1000:.0f} ms)",
          flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", default="target/release/alayasiki-api")
    ap.add_argument("--chunks", type=int, default=25_000)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--data", help="a data directory filled by an earlier run (kept)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-compact-")
    fail = lambda msg: sys.exit(msg)  # noqa: E731
    data = args.data or os.path.join(work, "data")
    try:
        proc, base = api_process.start(args.api, data, SECRET, fail, ENV)
        try:
            docs_file = os.path.join(data, "bench-b-docs.json")
            if os.path.exists(docs_file):
                ids = json.load(open(docs_file))
            else:
                ids = fill(base, args.chunks)
                json.dump(ids, open(docs_file, "w"))
        finally:
            proc.terminate()
            proc.wait()
        snapshot = os.path.join(work, "snapshot")
        shutil.copytree(data, snapshot)
        for phase in ("loop", "one"):
            shutil.rmtree(os.path.join(work, "run"), ignore_errors=True)
            shutil.copytree(snapshot, os.path.join(work, "run"))
            proc, base = api_process.start(args.api, os.path.join(work, "run"), SECRET, fail, ENV)
            try:
                if phase == "loop":
                    phase_loop(base, args.seconds)
                else:
                    phase_one(base, ids[len(ids) // 2])
            finally:
                proc.terminate()
                proc.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
