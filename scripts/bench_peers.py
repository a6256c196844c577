#!/usr/bin/env python3
"""alayasiki-mcp and @modelcontextprotocol/server-memory, side by side, in one run.

Usage: python3 scripts/bench_peers.py [--sizes 1000,10000,50000] [--queries 300]
                                      [--workloads locomo,synthetic] [--json out.json]
                                      [--binary target/release/alayasiki-mcp] [--node node]
                                      [--time-limit 1200]

Both servers are real processes spoken to over stdio pipes with newline-delimited
JSON-RPC (MCP): our release binary with a fresh temporary `--data-dir`, and
@modelcontextprotocol/server-memory (PEER_VERSION, installed by this script with npm into
target/peers/, pinned together with its MCP SDK) run by `node`, its MEMORY_FILE_PATH a
temporary file. One request at a time is sent to server-memory: it runs requests
concurrently, and two writes in flight would each rewrite its file from the same read.

Workload A, LoCoMo (../shared/eval/locomo-dev/*.json): each conversation gets a fresh
store on each server. One memory per dialog turn, text "<speaker>: <text>":
  - ours: alayasiki_ingest with that content, source "<conversation>/session_<n>" and the
    turn's dia_id in metadata; scripts/eval_locomo's own ingest loop (one call at a time,
    `wait: false`, the clock stopped once nothing is pending: everything searchable);
  - server-memory: create_entities with one entity per turn, name "<conversation>:<dia_id>",
    entityType "dialog turn", observations [the same text]; one call at a time.
Then every question of categories 1-4 with evidence is asked once, alternating between
the servers: ours alayasiki_query (mode evidence, top_k 10), server-memory search_nodes
with the question. Evidence recall@k: the fraction of a question's evidence turns among
the first k items returned (ours: the items' dia_id; server-memory: the entities' names,
in the order it returns them), averaged over questions.

Workload B, synthetic: deterministic sentences (memory i is generated from seed and i
alone), grown in one store per server to each size. At each size:
  - bulk load up to size - W (W = min(200, size / 5)): ours 32 alayasiki_ingest calls in
    flight with `wait: false`, timed until nothing is pending; server-memory
    create_entities with 100 entities per call (its array form), one call at a time;
  - W memories written one call at a time, alternating between the servers: ours
    alayasiki_ingest with the default `wait: true` (searchable when it returns),
    server-memory create_entities with one entity (written to its file when it returns);
  - --queries queries, alternating: a five-word phrase taken from a random stored
    memory (the kind of query search_nodes, a substring match, can answer); ours
    alayasiki_query mode evidence top_k 10, server-memory search_nodes. hit@10: the
    memory the phrase came from is among the first 10 items.
  Peak RSS is /proc/PID/status VmHWM of each server process (for ours it counts pages of
  its memory-mapped files as they are touched); the store's size is the disk space its
  files take (ours: the data directory, write-ahead log shown apart; server-memory: its
  JSONL file).

Python 3 standard library only. Everything is bounded by --time-limit (the servers are
killed and the script fails when it is exceeded).
"""
import argparse
import importlib.machinery
import importlib.util
import json
import math
import os
import platform
import random
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PEER = "@modelcontextprotocol/server-memory"
PEER_VERSION = "2026.8.31"
PEER_SDK_VERSION = "1.32.2"  # @modelcontextprotocol/sdk, pinned beside it
PEER_DIR = os.path.join(REPO, "target", "peers")
PROCS = []  # every server process started, for the watchdog


def fail(msg):
    for p in PROCS:
        if p.poll() is None:
            p.kill()
    sys.stderr.write(f"bench_peers: {msg}\n")
    sys.stderr.flush()
    os._exit(2)


def load_eval_locomo():
    """scripts/eval_locomo (no .py suffix) as a module: its Server client, turn
    iterator, ingest loop and recall are reused as they are."""
    path = os.path.join(HERE, "eval_locomo")
    loader = importlib.machinery.SourceFileLoader("eval_locomo", path)
    spec = importlib.util.spec_from_loader("eval_locomo", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


EV = load_eval_locomo()


# --- measurement helpers -----------------------------------------------------------

def pct(values, p):
    """Nearest-rank percentile, in the values' unit."""
    s = sorted(values)
    if not s:
        return float("nan")
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def vmhwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def disk_bytes(path):
    """Disk space taken (allocated blocks) by a file or everything under a directory."""
    if os.path.isfile(path):
        return os.stat(path).st_blocks * 512
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


def wal_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            if f.endswith("-wal"):
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
    return total


# --- the two clients ----------------------------------------------------------------

class Ours:
    """alayasiki-mcp through scripts/eval_locomo's Server (real binary, stdio)."""

    def __init__(self, binary, data_dir):
        started = time.perf_counter()
        self.s = EV.Server(binary, data_dir, {})
        self.startup = time.perf_counter() - started
        PROCS.append(self.s.proc)
        self.pid = self.s.proc.pid
        self.data_dir = data_dir

    def call(self, name, args):
        """One tool call; returns (seconds, parsed result)."""
        t0 = time.perf_counter()
        result = self.s.request("tools/call", {"name": name, "arguments": args})
        dt = time.perf_counter() - t0
        if result.get("isError"):
            fail(f"ours: {name} failed: {result['content'][0]['text']}")
        return dt, json.loads(result["content"][0]["text"])

    def wait_indexed(self):
        while self.call("alayasiki_status", {})[1]["jobs"]["pending"]:
            time.sleep(0.02)

    def ingest_pipelined(self, items, depth=32):
        """items: (content, metadata) pairs; `depth` calls in flight, `wait: false`,
        then until nothing is pending. Returns seconds."""
        t0 = time.perf_counter()
        it = iter(items)
        inflight = 0

        def send_next():
            try:
                content, meta = next(it)
            except StopIteration:
                return False
            self.s.send("tools/call", {"name": "alayasiki_ingest", "arguments": {
                "content": content, "source": "synthetic", "metadata": meta, "wait": False}})
            return True

        while inflight < depth and send_next():
            inflight += 1
        self.s.proc.stdin.flush()
        while inflight:
            reply = self.s.read()
            inflight -= 1
            if "error" in reply or reply.get("result", {}).get("isError"):
                fail(f"ours: ingest failed: {reply}")
            if send_next():
                inflight += 1
                self.s.proc.stdin.flush()
        self.wait_indexed()
        return time.perf_counter() - t0

    def close(self):
        self.s.close()


class ServerMemory:
    """@modelcontextprotocol/server-memory under node, over stdio."""

    def __init__(self, node, memory_file, stderr_file):
        script = os.path.join(PEER_DIR, "node_modules", PEER, "dist", "index.js")
        env = dict(os.environ, MEMORY_FILE_PATH=memory_file)
        started = time.perf_counter()
        self.proc = subprocess.Popen([node, script], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=stderr_file, env=env)
        PROCS.append(self.proc)
        self.pid = self.proc.pid
        self.memory_file = memory_file
        self.buf = bytearray()
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                    "clientInfo": {"name": "bench_peers", "version": "1"}})
        self.startup = time.perf_counter() - started
        self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def write(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def read(self, timeout=120):
        fd = self.proc.stdout.fileno()
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line = bytes(self.buf[:nl])
                del self.buf[:nl + 1]
                return json.loads(line)
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                fail("server-memory: no reply within %d s" % timeout)
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                fail("server-memory: the server exited")
            self.buf += chunk

    def request(self, method, params):
        self.next_id += 1
        self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                break
        if "error" in reply:
            fail(f"server-memory: {method} failed: {reply['error']}")
        return reply["result"]

    def call(self, name, args):
        t0 = time.perf_counter()
        result = self.request("tools/call", {"name": name, "arguments": args})
        dt = time.perf_counter() - t0
        if result.get("isError"):
            fail(f"server-memory: {name} failed: {result['content'][0]['text']}")
        if "structuredContent" in result:
            return dt, result["structuredContent"]
        return dt, json.loads(result["content"][0]["text"])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# --- set-up --------------------------------------------------------------------------

def ensure_binary(binary):
    if not os.path.exists(binary):
        print(f"building {binary}: cargo build --release --bins", flush=True)
        subprocess.run(["cargo", "build", "--release", "--bins"], cwd=REPO, check=True)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    return version


def installed_version(pkg):
    path = os.path.join(PEER_DIR, "node_modules", *pkg.split("/"), "package.json")
    try:
        return json.load(open(path))["version"]
    except (OSError, ValueError, KeyError):
        return None


def ensure_peer(node):
    if installed_version(PEER) != PEER_VERSION or \
            installed_version("@modelcontextprotocol/sdk") != PEER_SDK_VERSION:
        os.makedirs(PEER_DIR, exist_ok=True)
        cmd = ["npm", "install", "--prefix", PEER_DIR, "--save-exact", "--no-audit", "--no-fund",
               f"{PEER}@{PEER_VERSION}", f"@modelcontextprotocol/sdk@{PEER_SDK_VERSION}"]
        print("installing the peer:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    got = installed_version(PEER), installed_version("@modelcontextprotocol/sdk")
    if got != (PEER_VERSION, PEER_SDK_VERSION):
        fail(f"expected {PEER}@{PEER_VERSION} with sdk {PEER_SDK_VERSION}, found {got}")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    if int(node_version.lstrip("v").split(".")[0]) < 18:
        fail(f"{PEER} needs Node 18 or later; {node} is {node_version} "
             "(npm install --prefix target/node22 node@22 and pass --node)")
    return node_version


def machine():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem = next(line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal"))
        mem = f"{int(mem) / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration):
        mem = "?"
    return f"{os.cpu_count()} CPUs ({model}), {mem} RAM, {platform.system()} {platform.release()}"


# --- workload A: LoCoMo --------------------------------------------------------------

def workload_locomo(args, out):
    files = sorted(f for f in os.listdir(args.data) if f.endswith(".json"))
    stats = {k: {"ingest_s": 0.0, "memories": 0, "lat": [], "r5": [], "r10": [], "rss": 0.0,
                 "startup": [], "nonempty": 0} for k in ("ours", "peer")}
    for f in files:
        conv = json.load(open(os.path.join(args.data, f)))
        name = f[:-5]
        with tempfile.TemporaryDirectory(prefix="bench-peers-locomo-") as tmp:
            data_dir = os.path.join(tmp, "ours")
            os.mkdir(data_dir)
            with open(os.path.join(tmp, "peer.stderr"), "wb") as err:
                ours = Ours(args.binary, data_dir)
                peer = ServerMemory(args.node, os.path.join(tmp, "memory.jsonl"), err)
                stats["ours"]["startup"].append(ours.startup)
                stats["peer"]["startup"].append(peer.startup)

                # ours: eval_locomo's own ingest loop, timed until everything is indexed
                t0 = time.perf_counter()
                stats["ours"]["memories"] += EV.ingest_conversation(ours.s, conv, name)
                stats["ours"]["ingest_s"] += time.perf_counter() - t0

                # server-memory: one entity per turn, one call at a time
                t0 = time.perf_counter()
                for _, _, turn in EV.turns_of(conv):
                    text = f"{turn['speaker']}: {turn['text']}"
                    if EV.CAPTIONS and turn.get("blip_caption"):
                        text += f" [shares a photo: {turn['blip_caption']}]"
                    peer.call("create_entities", {"entities": [{
                        "name": f"{name}:{turn['dia_id'].strip()}", "entityType": "dialog turn",
                        "observations": [text]}]})
                    stats["peer"]["memories"] += 1
                stats["peer"]["ingest_s"] += time.perf_counter() - t0

                for qa in conv["qa"]:
                    evidence = [e.strip() for e in qa.get("evidence", []) if e.strip()]
                    if qa.get("category") not in EV.CATEGORIES or not evidence:
                        continue
                    dt, res = ours.call("alayasiki_query", {"query": qa["question"],
                                                            "mode": "evidence", "top_k": 10})
                    found = [(e.get("metadata") or {}).get("dia_id") for e in res["evidence"]]
                    st = stats["ours"]
                    st["lat"].append(dt)
                    st["nonempty"] += bool(found)
                    st["r5"].append(EV.recall(found, evidence, 5))
                    st["r10"].append(EV.recall(found, evidence, 10))

                    dt, res = peer.call("search_nodes", {"query": qa["question"]})
                    found = [e["name"].split(":", 1)[1] for e in res.get("entities", [])]
                    st = stats["peer"]
                    st["lat"].append(dt)
                    st["nonempty"] += bool(found)
                    st["r5"].append(EV.recall(found, evidence, 5))
                    st["r10"].append(EV.recall(found, evidence, 10))

                stats["ours"]["rss"] = max(stats["ours"]["rss"], vmhwm_mib(ours.pid))
                stats["peer"]["rss"] = max(stats["peer"]["rss"], vmhwm_mib(peer.pid))
                ours.close()
                peer.close()
        print(f"  locomo {name}: done ({time.time() - START:.0f} s into the run)", flush=True)
    rows = {}
    for k, st in stats.items():
        n = len(st["lat"])
        rows[k] = {
            "memories": st["memories"],
            "ingest_per_s": st["memories"] / st["ingest_s"],
            "questions": n,
            "query_p50_ms": pct(st["lat"], 50) * 1000,
            "query_p99_ms": pct(st["lat"], 99) * 1000,
            "peak_rss_mib": st["rss"],
            "recall@5": sum(st["r5"]) / n,
            "recall@10": sum(st["r10"]) / n,
            "questions_with_results": st["nonempty"],
            "startup_median_ms": pct(st["startup"], 50) * 1000,
        }
    out["locomo"] = rows
    print(f"\nWorkload A: LoCoMo, {len(files)} conversations, {rows['ours']['memories']} turns "
          f"(one memory each), {rows['ours']['questions']} questions (categories 1-4)")
    print(f"{'server':<16} {'ingest mem/s':>12} {'query p50':>10} {'p99':>9} {'peak RSS':>9} "
          f"{'R@5':>6} {'R@10':>6} {'answered':>9} {'start':>8}")
    for k, label in (("ours", "alayasiki-mcp"), ("peer", "server-memory")):
        r = rows[k]
        print(f"{label:<16} {r['ingest_per_s']:>12,.0f} {r['query_p50_ms']:>8.2f}ms "
              f"{r['query_p99_ms']:>7.2f}ms {r['peak_rss_mib']:>6.0f}MiB {r['recall@5']:>6.3f} "
              f"{r['recall@10']:>6.3f} {r['questions_with_results']:>9} "
              f"{r['startup_median_ms']:>6.0f}ms")
    print("(answered: questions with at least one item returned; start: median spawn -> "
          "initialize answered over the conversations' fresh starts)", flush=True)


# --- workload B: synthetic -----------------------------------------------------------

FIRST = ("Ada Alan Anna Boris Carla Chen Dara Elif Emil Farah Gita Hana Ivan Jonas Kai Lena "
         "Luis Maya Mira Nadia Omar Pia Quinn Rosa Sami Tara Udo Vera Wen Yara Zoe Ravi").split()
LAST = ("Abe Bauer Costa Dahl Eriksen Fischer Garcia Haas Ito Jensen Kowalski Lopez Moreau "
        "Novak Okafor Petrov Quispe Rossi Sato Tanaka Ulrich Varga Weber Xu Yilmaz Zhou "
        "Almeida Brandt Castro Diaz Engel Fontaine Gruber Horvat Ibarra Jovanovic Keller "
        "Lindqvist Marino Nilsen Olsen Popescu Ramos Schmidt Torres Urban Vogel Walsh "
        "Young Zeller").split()
VERBS = ("repaired moved painted sold ordered measured cleaned labelled borrowed returned "
         "tested packed weighed inspected replaced photographed catalogued shipped "
         "assembled polished").split()
ADJS = ("blue rusty heavy narrow spare old quiet bright wooden copper broken tall round "
        "folding antique electric damp spotless cracked compact woollen striped glass "
        "portable").split()
NOUNS = ("bicycle ladder kettle printer lantern cabinet drone telescope piano tent router "
         "canoe sewing-machine toolbox camera fridge violin scooter clock microscope "
         "bookshelf heater trolley projector compressor").split()
PLACES = ("garage workshop attic library harbour studio warehouse greenhouse basement "
          "office kitchen market depot clinic school").split()
CITIES = ("Lisbon Porto Lyon Kyoto Osaka Turku Bergen Graz Ghent Cork Split Brno Malmo "
          "Leeds Quito Cusco Tartu Riga Varna Izmir").split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = ("January February March April May June July August September October November "
          "December").split()
TAILS = ("because the old one had failed", "before the inspection", "for the winter fair",
         "after a long delay", "as agreed with the neighbours", "while it was raining",
         "for a friend's birthday", "ahead of the move", "to settle an old bet",
         "at the request of the council")


def synthetic(seed, i):
    """Memory i: (text, query phrase). Depends on seed and i only."""
    r = random.Random(f"{seed}:{i}")
    last, verb, adj, noun = r.choice(LAST), r.choice(VERBS), r.choice(ADJS), r.choice(NOUNS)
    text = (f"{r.choice(FIRST)} {last} {verb} the {adj} {noun} in the {r.choice(PLACES)} in "
            f"{r.choice(CITIES)} on {r.choice(DAYS)} {r.randint(1, 28)} {r.choice(MONTHS)}, "
            f"{r.choice(TAILS)}.")
    return text, f"{last} {verb} the {adj} {noun}"


def workload_synthetic(args, out):
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-peers-synth-") as tmp:
        data_dir = os.path.join(tmp, "ours")
        os.mkdir(data_dir)
        memory_file = os.path.join(tmp, "memory.jsonl")
        with open(os.path.join(tmp, "peer.stderr"), "wb") as err:
            ours = Ours(args.binary, data_dir)
            peer = ServerMemory(args.node, memory_file, err)
            have = 0
            qrng = random.Random(f"{args.seed}:queries")
            for size in sizes:
                window = min(200, size // 5)
                bulk_end = max(have, size - window)
                row = {"size": size, "window": size - bulk_end}
                if bulk_end > have:
                    n = bulk_end - have
                    items = ((synthetic(args.seed, i)[0], {"memory": i}) for i in range(have, bulk_end))
                    row["ours_bulk_per_s"] = n / ours.ingest_pipelined(items)
                    t0 = time.perf_counter()
                    for start in range(have, bulk_end, 100):
                        batch = [{"name": f"memory-{i}", "entityType": "memory",
                                  "observations": [synthetic(args.seed, i)[0]]}
                                 for i in range(start, min(bulk_end, start + 100))]
                        peer.call("create_entities", {"entities": batch})
                    row["peer_bulk_per_s"] = n / (time.perf_counter() - t0)
                    have = bulk_end
                # one memory per call, alternating between the servers
                ow, pw = [], []
                for i in range(have, size):
                    text, _ = synthetic(args.seed, i)
                    dt, _ = ours.call("alayasiki_ingest", {"content": text, "source": "synthetic",
                                                           "metadata": {"memory": i}})
                    ow.append(dt)
                    dt, _ = peer.call("create_entities", {"entities": [{
                        "name": f"memory-{i}", "entityType": "memory", "observations": [text]}]})
                    pw.append(dt)
                have = size
                if ow:
                    row["ours_write_per_s"] = len(ow) / sum(ow)
                    row["peer_write_per_s"] = len(pw) / sum(pw)
                    row["ours_write_p50_ms"] = pct(ow, 50) * 1000
                    row["peer_write_p50_ms"] = pct(pw, 50) * 1000
                # queries, alternating
                ol, pl, oh, ph = [], [], 0, 0
                for _ in range(args.queries):
                    target = qrng.randrange(size)
                    phrase = synthetic(args.seed, target)[1]
                    dt, res = ours.call("alayasiki_query", {"query": phrase, "mode": "evidence",
                                                            "top_k": 10})
                    ol.append(dt)
                    oh += any((e.get("metadata") or {}).get("memory") == target
                              for e in res["evidence"][:10])
                    dt, res = peer.call("search_nodes", {"query": phrase})
                    pl.append(dt)
                    ph += any(e["name"] == f"memory-{target}" for e in res.get("entities", [])[:10])
                row.update({
                    "queries": args.queries,
                    "ours_query_p50_ms": pct(ol, 50) * 1000, "ours_query_p99_ms": pct(ol, 99) * 1000,
                    "peer_query_p50_ms": pct(pl, 50) * 1000, "peer_query_p99_ms": pct(pl, 99) * 1000,
                    "ours_hit@10": oh / args.queries, "peer_hit@10": ph / args.queries,
                    "ours_peak_rss_mib": vmhwm_mib(ours.pid), "peer_peak_rss_mib": vmhwm_mib(peer.pid),
                    "ours_disk_mib": disk_bytes(data_dir) / 2**20,
                    "ours_wal_mib": wal_bytes(data_dir) / 2**20,
                    "peer_disk_mib": disk_bytes(memory_file) / 2**20,
                })
                rows.append(row)
                print(f"  synthetic {size}: done ({time.time() - START:.0f} s into the run)", flush=True)
            ours.close()
            peer.close()
            after_exit = disk_bytes(data_dir) / 2**20
            # restarts on the full stores: spawn -> initialize answered
            restarts = {"ours": [], "peer": []}
            for _ in range(5):
                ours = Ours(args.binary, data_dir)
                restarts["ours"].append(ours.startup)
                ours.close()
                peer = ServerMemory(args.node, memory_file, err)
                restarts["peer"].append(peer.startup)
                peer.close()
    restart_ms = {k: pct(v, 50) * 1000 for k, v in restarts.items()}
    out["synthetic"] = {"rows": rows, "ours_disk_after_exit_mib": after_exit,
                        "restart_median_ms": restart_ms}
    print(f"\nWorkload B: synthetic memories (~110 bytes each), one store per server grown to "
          f"each size; {args.queries} phrase queries per size")
    print(f"{'size':>7} {'server':<14} {'bulk mem/s':>10} {'1-by-1 mem/s':>12} {'write p50':>10} "
          f"{'query p50':>10} {'p99':>9} {'hit@10':>6} {'peak RSS':>9} {'disk':>14}")
    for r in rows:
        for k, label in (("ours", "alayasiki-mcp"), ("peer", "server-memory")):
            bulk = r.get(f"{k}_bulk_per_s")
            one = r.get(f"{k}_write_per_s")
            bulk = f"{bulk:,.0f}" if bulk else "-"
            write_p50 = f"{r[k + '_write_p50_ms']:.2f}ms" if one else "-"
            one = f"{one:,.0f}" if one else "-"
            if k == "ours":
                disk = f"{r['ours_disk_mib'] - r['ours_wal_mib']:.1f}+{r['ours_wal_mib']:.0f}MiB"
            else:
                disk = f"{r['peer_disk_mib']:.1f}MiB"
            print(f"{r['size']:>7} {label:<14} {bulk:>10} {one:>12} {write_p50:>10} "
                  f"{r[k + '_query_p50_ms']:>8.2f}ms {r[k + '_query_p99_ms']:>7.2f}ms "
                  f"{r[k + '_hit@10']:>6.3f} {r[k + '_peak_rss_mib']:>6.0f}MiB {disk:>14}")
    print("(bulk: load up to size - W; 1-by-1: W writes one call at a time, ours waiting until "
          "searchable; disk: ours store + write-ahead log)")
    print(f"(alayasiki-mcp's data directory after it exited: {after_exit:.1f} MiB)")
    print(f"restart on the {sizes[-1]}-memory stores, spawn -> initialize answered, median of 5: "
          f"alayasiki-mcp {restart_ms['ours']:.0f} ms, server-memory {restart_ms['peer']:.0f} ms",
          flush=True)


START = time.time()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(REPO, "target", "release", "alayasiki-mcp"))
    ap.add_argument("--node", default="node")
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "eval", "locomo-dev"))
    ap.add_argument("--workloads", default="locomo,synthetic")
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--queries", type=int, default=300, help="queries per size (synthetic)")
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--time-limit", type=float, default=1200, help="seconds for the whole run")
    ap.add_argument("--json")
    args = ap.parse_args()
    timer = threading.Timer(args.time_limit, fail, [f"over the time limit of {args.time_limit:.0f} s"])
    timer.daemon = True
    timer.start()
    version = ensure_binary(args.binary)
    node_version = ensure_peer(args.node)
    out = {"machine": machine(), "ours": version,
           "peer": f"{PEER}@{PEER_VERSION} (sdk {PEER_SDK_VERSION}), node {node_version}",
           "load_before": os.getloadavg()}
    print(f"machine: {out['machine']}; load average {out['load_before'][0]:.2f}")
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    built = time.strftime("%Y-%m-%d %H:%M", time.gmtime(os.stat(args.binary).st_mtime))
    out["ours_built"] = f"{built} UTC, checkout at {head}"
    print(f"ours: {version} ({args.binary}, built {out['ours_built']}); peer: {out['peer']}",
          flush=True)
    workloads = args.workloads.split(",")
    if "locomo" in workloads:
        workload_locomo(args, out)
    if "synthetic" in workloads:
        workload_synthetic(args, out)
    out["load_after"] = os.getloadavg()
    out["seconds"] = time.time() - START
    print(f"\ntotal {out['seconds']:.0f} s; load average at the end {out['load_after'][0]:.2f}")
    if args.json:
        json.dump(out, open(args.json, "w"), indent=2)
    timer.cancel()


if __name__ == "__main__":
    main()
