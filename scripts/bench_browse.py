"""Latency of the memory browser's reads on a kept store.

Serves DATA_DIR with the real binary (`alayasiki-mcp ui --data-dir DATA_DIR`,
the local memory browser), takes the per-start secret from its `ui.url`,
and times every read the page makes, one request in flight at a time over
one kept-alive connection, as a page does: the documents list (first page,
with its total; a source filter; a page deep in the list), a document's
chunks with their entities, the entity list (most mentioned; a name
search), one entity with its relations and evidence, the graph (the
starting picture; one entity's neighbourhood at depth 1 and 2), the
communities, and the working-memory sessions. Prints p50 / p99 / max per
read, and the server's peak RSS. The per-caller rate limit is raised for
the run (ALAYASIKI_API_RATE, ALAYASIKI_API_BURST): it is latency that is
measured.

Build the store first, e.g. with the graph-rich corpus:
    cargo build --release --bins --examples
    ./target/release/examples/bench_stdio --sizes 10000 --queries 100 \\
        --corpus entities --wait false --store /tmp/browse-store
    python3 scripts/bench_browse.py /tmp/browse-store [--requests 200] \\
        [--binary target/release/alayasiki-mcp]
"""
import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse


def percentile(sorted_ms, p):
    if not sorted_ms:
        return float("nan")
    k = min(len(sorted_ms) - 1, max(0, round(p / 100 * (len(sorted_ms) - 1))))
    return sorted_ms[k]


def peak_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class Client:
    def __init__(self, url):
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.secret = urllib.parse.parse_qs(parsed.fragment)["secret"][0]
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)

    def get(self, path):
        self.conn.request("GET", path, headers={"Authorization": f"Bearer {self.secret}"})
        r = self.conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise SystemExit(f"GET {path}: {r.status} {body[:300]!r}")
        return json.loads(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--binary", default="target/release/alayasiki-mcp")
    args = ap.parse_args()
    url_file = os.path.join(args.data_dir, "ui.url")
    started = time.monotonic()
    # Latency, not the per-caller rate limit (50/s by default), is measured.
    env = dict(os.environ, ALAYASIKI_API_RATE="100000", ALAYASIKI_API_BURST="100000")
    proc = subprocess.Popen([args.binary, "ui", "--data-dir", args.data_dir], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = proc.stdout.readline().strip()
        if "#secret=" not in url:
            raise SystemExit(f"no URL from `alayasiki-mcp ui`: {url!r}")
        ready_ms = (time.monotonic() - started) * 1000
        c = Client(url)
        status = c.get("/v1/status")
        first = c.get("/v1/documents?limit=20")
        doc = first["documents"][0]
        total = first["total"]
        source = doc.get("source")
        # A page deep in the list: walk the cursor to about the middle.
        deep = c.get(f"/v1/documents?limit=200")
        for _ in range(min(20, total // 400)):
            if deep["next_before"] is None:
                break
            deep = c.get(f"/v1/documents?limit=200&before={deep['next_before']}")
        deep_before = deep["next_before"]
        top = c.get("/v1/entities?limit=30")["entities"]
        entity = top[0]["entity_id"] if top else None
        name = top[len(top) // 2]["name"][:4] if top else "a"
        reads = [
            ("documents, first page + total", "/v1/documents?limit=20"),
            ("documents by media type + total", "/v1/documents?limit=20&media_type=text%2Fplain"),
            ("documents, a deep page", f"/v1/documents?limit=20&before={deep_before}" if deep_before else "/v1/documents?limit=20"),
            ("a document's chunks", f"/v1/documents/{doc['document_id']}/chunks"),
            ("entities, most mentioned", "/v1/entities?limit=30"),
            ("entities by name", "/v1/entities?limit=30&q=" + urllib.parse.quote(name)),
        ]
        if source:
            reads.append(("documents by source + total",
                          "/v1/documents?limit=20&source=" + urllib.parse.quote(source)))
        if entity:
            reads += [
                ("one entity + relations", f"/v1/entities/{entity}"),
                ("graph, starting picture", "/v1/graph"),
                ("graph, depth 1", f"/v1/graph?entity={entity}&depth=1"),
                ("graph, depth 2", f"/v1/graph?entity={entity}&depth=2"),
            ]
        reads += [
            ("communities", "/v1/communities"),
            ("working-memory sessions", "/v1/sessions"),
        ]
        print(f"store: {total} documents, {status.get('chunks')} chunks, "
              f"{status.get('store_bytes', 0) / 2**20:.0f} MiB; page ready {ready_ms:.0f} ms "
              f"after spawn")
        print(f"{'read':34} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'reply KiB':>10}")
        for label, path in reads:
            c.get(path)  # warm
            times = []
            size = 0
            for _ in range(args.requests):
                t = time.perf_counter()
                c.conn.request("GET", path, headers={"Authorization": f"Bearer {c.secret}"})
                r = c.conn.getresponse()
                body = r.read()
                times.append((time.perf_counter() - t) * 1000)
                size = len(body)
                if r.status != 200:
                    raise SystemExit(f"GET {path}: {r.status}")
            times.sort()
            print(f"{label:34} {percentile(times, 50):8.2f} {percentile(times, 99):8.2f} "
                  f"{times[-1]:8.2f} {size / 1024:10.1f}")
        rss = peak_rss_kib(proc.pid)
        if rss:
            print(f"server peak RSS: {rss / 1024:.1f} MiB")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    sys.exit(main())
