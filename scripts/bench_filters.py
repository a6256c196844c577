"""What a recall filter costs: query latency with and without `filter`.

Builds (or tops up) a store of small notes through the real binary over
stdio (`wait: false`, many in flight), each with a source under one of a few
prefixes, a media type, metadata (`team`, `tags`) and a date in its
metadata, so that the filters below admit from a handful of documents to
most of them. Then times the same questions (evidence mode, one in flight)
unfiltered and under each filter, and prints p50 / p99 per filter, the
extra p50 over the unfiltered run, the share of the memory each filter
admits, and the server's peak RSS: VmHWM, and, sampled every 100 ms, the
peaks of its heap (RssAnon) and of the pages of its mapped database and
vector files (RssFile), which the kernel can drop under pressure. Each
question is asked under every filter in turn (one in flight), so that other
work on the machine weighs on every row alike.

`--fill import` writes the notes a size still lacks to an export file
(`alayasiki-mcp export`'s format) and loads them with `alayasiki-mcp import`
with the server stopped, the bulk path for stores of several million notes.
The notes are the same; an imported note also keeps an idempotency key. The
peak RSS printed is then the server's while it answers, not the import's.

    cargo build --release
    python3 scripts/bench_filters.py --sizes 10000,100000 [--queries 300] \\
        [--store /tmp/filters-store] [--binary target/release/alayasiki-mcp] [--warmup 10] \\
        [--fill import] [--unfiltered]
"""
import argparse
import base64
import hashlib
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

TEAMS = ["platform", "network", "data", "security"]  # 40/30/20/10 %
TAGS = ["ops", "meeting", "incident", "design", "hiring", "rare"]
PREFIXES = ["notes/", "runbook/", "tickets/", "archive/"]


def percentile(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, max(0, round(p / 100 * (len(xs) - 1))))]


def peak_rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return float("nan")
    return float("nan")


class RssSampler(threading.Thread):
    """Peaks of a process's RssAnon and RssFile, sampled every 100 ms until
    the process is gone."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = {"RssAnon": 0, "RssFile": 0}

    def run(self):
        while True:
            try:
                with open(f"/proc/{self.pid}/status") as f:
                    for line in f:
                        key = line.split(":")[0]
                        if key in self.peak:
                            self.peak[key] = max(self.peak[key], int(line.split()[1]) / 1024)
            except OSError:
                return
            time.sleep(0.1)


class Server:
    def __init__(self, binary, data_dir):
        env = dict(os.environ, ALAYASIKI_IN_PROCESS="1", ALAYASIKI_LOG="warn")
        self.proc = subprocess.Popen(
            [binary, "--data-dir", data_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.next_id = 0
        self.call("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench_filters", "version": "1"},
        })
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def reply(self):
        while True:
            msg = json.loads(self.proc.stdout.readline())
            if "id" in msg:
                return msg

    def call(self, method, params):
        self.request(method, params)
        return self.reply()

    def tool(self, name, args):
        r = self.call("tools/call", {"name": name, "arguments": args})
        result = r["result"]
        if result.get("isError"):
            raise SystemExit(f"{name} failed: {result}")
        return result.get("structuredContent") or json.loads(result["content"][0]["text"])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def vocabulary(rng, n=20000):
    syll = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "del", "tor", "an", "qu", "ex",
            "po", "li", "ber", "gan", "zo"]
    return ["".join(rng.choice(syll) for _ in range(rng.randint(2, 3))) for _ in range(n)]


def zipf_words(rng, vocab, cum_weights, k):
    # Cumulative weights draw exactly what the weights would, without
    # summing the 20,000 of them again for every note.
    return rng.choices(vocab, cum_weights=cum_weights, k=k)


def note(rng, vocab, cum_weights, i):
    """A ~110-byte note and its ingest arguments."""
    team = rng.choices(TEAMS, weights=[40, 30, 20, 10])[0]
    tags = [t for t, p in zip(TAGS, [0.3, 0.2, 0.1, 0.1, 0.05, 0.005]) if rng.random() < p]
    day = rng.randrange(365)
    date = time.strftime("%Y-%m-%d", time.gmtime(1_735_689_600 + day * 86_400))  # 2025
    # 50 / 30 / 19 / 1 % by position, so that `runbook/51.txt` exists.
    prefix = PREFIXES[next(j for j, edge in enumerate([50, 80, 99, 100]) if i % 100 < edge)]
    media = "text/markdown" if rng.random() < 0.2 else "text/plain"
    text = " ".join(zipf_words(rng, vocab, cum_weights, 16))
    return {"Text": {"content": f"Note {i}: {text}.", "media_type": media,
                     "source": f"{prefix}{i}.txt",
                     "metadata": {"team": team, "tags": tags, "date": date}}}


def fill(server, rng, vocab, cum_weights, start, end, window=64):
    in_flight = 0
    for i in range(start, end):
        server.request("tools/call", {"name": "alayasiki_ingest",
                                      "arguments": {**note(rng, vocab, cum_weights, i), "wait": False,
                                                    "allow_duplicate": True}})
        in_flight += 1
        if in_flight >= window:
            server.reply()
            in_flight -= 1
    for _ in range(in_flight):
        server.reply()
    while True:
        s = server.tool("alayasiki_status", {})
        if s["jobs"]["pending"] == 0 and s["chunks"] >= end:
            return
        time.sleep(0.5)


FILTERS = [
    ("none", None),
    ("source exact (1 doc)", {"source": "runbook/51.txt"}),
    ("source_prefix 1%", {"source_prefix": "archive/"}),
    ("source_prefix 50%", {"source_prefix": "notes/"}),
    ("media_type 20%", {"media_type": "text/markdown"}),
    ("metadata team 10%", {"metadata": {"team": "security"}}),
    ("metadata team 40%", {"metadata": {"team": "platform"}}),
    ("tags any 1 (0.5%)", {"tags": ["rare"]}),
    ("tags any 1 (30%)", {"tags": ["ops"]}),
    ("tags any 2 (~28%)", {"tags": ["meeting", "incident"]}),
    ("tags all 2 (~6%)", {"tags": ["ops", "meeting"], "tags_match": "all"}),
    ("since 30 days (8%)", {"since": "2025-12-02"}),
    ("since+until 1 week (2%)", {"since": "2025-06-01", "until": "2025-06-07"}),
    ("combined (team+tag+since)", {"metadata": {"team": "platform"}, "tags": ["ops"],
                                   "since": "2025-07-01"}),
]


def wait_for_owner_to_stop(store, timeout=120):
    try:
        with open(os.path.join(store, "alayasiki.owner")) as f:
            pid = json.load(f)["pid"]
    except (OSError, ValueError, KeyError):
        return
    deadline = time.monotonic() + timeout
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.2)


def import_fill(binary, store, rng, vocab, cum_weights, start, end):
    """Loads notes `start..end` through `alayasiki-mcp import` (the server
    stopped): an export file of them, written beside the store."""
    path = os.path.join(os.path.dirname(os.path.abspath(store)),
                        f"{os.path.basename(store)}-{start}-{end}.jsonl")
    created = 1_767_225_600_000  # note i stored at 2026-01-01 plus i milliseconds
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"format": "alayasiki-mcp-export", "version": 1,
                            "documents": end - start, "tenant": "local"}) + "\n")
        for i in range(start, end):
            args = note(rng, vocab, cum_weights, i)["Text"]
            original = args["content"].encode()
            f.write(json.dumps({
                "type": "document", "source": args["source"], "media_type": args["media_type"],
                "metadata": args["metadata"], "created_at": created + i,
                "original": base64.b64encode(original).decode(),
                "sha256": hashlib.sha256(original).hexdigest(),
            }) + "\n")
    began = time.monotonic()
    # The import runs in the memory owner it starts; the owner stops a
    # second after the import leaves, and the benchmark's own server opens
    # the store once it has.
    env = dict(os.environ, ALAYASIKI_LOG="warn", ALAYASIKI_OWNER_IDLE_SECS="1")
    out = subprocess.run([binary, "import", path, "--data-dir", store], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - began
    os.remove(path)
    if out.returncode != 0:
        raise SystemExit(f"import failed ({out.returncode}): {out.stderr[-2000:]}")
    wait_for_owner_to_stop(store)
    print(f"imported {end - start} notes in {elapsed:.1f} s ({(end - start) / elapsed:.0f} /s)")


def run(args):
    rng = random.Random(7)
    vocab = vocabulary(rng)
    cum_weights = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(vocab))))
    store = args.store or tempfile.mkdtemp(prefix="bench-filters-")
    sizes = [int(s) for s in args.sizes.split(",")]
    qrng = random.Random(11)
    # Questions of mid-frequency words (ranks 50-2000).
    questions = [" ".join(qrng.choice(vocab[50:2000]) for _ in range(3))
                 for _ in range(args.queries)]
    wrng = random.Random(13)
    warmup = [" ".join(wrng.choice(vocab[50:2000]) for _ in range(3))
              for _ in range(args.warmup)]
    server = Server(args.binary, store)
    rss = RssSampler(server.proc.pid)
    rss.start()
    have = server.tool("alayasiki_status", {})["documents"]
    print(f"store {store}; binary {args.binary}")
    for size in sizes:
        if have < size:
            t0 = time.time()
            if args.fill == "import":
                server.close()
                rss.join()
                import_fill(args.binary, store, random.Random(size), vocab, cum_weights, have, size)
                server = Server(args.binary, store)
                rss = RssSampler(server.proc.pid)
                rss.start()
            else:
                fill(server, random.Random(size), vocab, cum_weights, have, size)
            print(f"\n{size} notes: filled {size - have} in {time.time() - t0:.1f} s")
            have = size
        else:
            print(f"\n{size} notes (kept store)")
        # Questions asked first and not timed: the first query loads the
        # embedding model, and a large memory's first searches build the
        # vector lane's sign index on a helper thread.
        for q in warmup:
            server.tool("alayasiki_query", {"query": q, "mode": "evidence", "top_k": 10})
        time.sleep(1 if args.warmup else 0)
        # Each question is asked under every filter in turn, so that a
        # change in the machine's load (other work on a shared machine)
        # moves every row alike.
        filters = FILTERS[:1] if args.unfiltered else FILTERS
        times = {name: [] for name, _ in filters}
        hits = {name: 0 for name, _ in filters}
        load = os.getloadavg()[0]
        for q in questions:
            for name, flt in filters:
                a = {"query": q, "mode": "evidence", "top_k": 10}
                if flt:
                    a["filter"] = flt
                t = time.perf_counter()
                r = server.tool("alayasiki_query", a)
                times[name].append((time.perf_counter() - t) * 1000)
                hits[name] += len(r["evidence"])
        print(f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
        base = percentile(times[FILTERS[0][0]], 50)
        print(f"{'filter':30} {'p50 ms':>8} {'p99 ms':>8} {'+p50 ms':>8} {'hits/q':>7}")
        for name, _ in filters:
            p50 = percentile(times[name], 50)
            print(f"{name:30} {p50:8.2f} {percentile(times[name], 99):8.2f} {p50 - base:+8.2f} "
                  f"{hits[name] / len(questions):7.1f}")
        print(f"peak RSS {peak_rss_mib(server.proc.pid):.0f} MiB (sampled peaks: heap "
              f"{rss.peak['RssAnon']:.0f} MiB, mapped files {rss.peak['RssFile']:.0f} MiB)")
    server.close()
    if not args.store:
        shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--store")
    p.add_argument("--warmup", type=int, default=0,
                   help="questions asked (unfiltered) before the timed ones")
    p.add_argument("--binary", default="target/release/alayasiki-mcp")
    p.add_argument("--unfiltered", action="store_true",
                   help="time the questions without a filter only")
    p.add_argument("--fill", choices=["stdio", "import"], default="stdio",
                   help="how a size's missing notes are added (see above)")
    run(p.parse_args())
    sys.exit(0)
