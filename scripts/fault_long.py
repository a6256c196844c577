#!/usr/bin/env python3
"""Long kill -9 loops against the real binaries (issue 21); standard library only.

The bounded versions run in CI (`tests/kill_loop.rs`); this one runs hundreds
of kills and prints the counts:

    kills, acknowledged, lost, duplicated, failed, peak RSS

Each iteration starts the binary on one data directory, ingests a burst
(`wait: false` and `wait: true`, some with idempotency keys, which a client
re-sends after a crash), kills it with SIGKILL at a random moment and starts
again. After the last kill a clean start must show every acknowledged
document (its reply was received) searchable exactly once: `lost` counts
acknowledged markers no query finds, `duplicated` those found in more than
one document, `failed` the failed indexing jobs, and the SQLite file must
pass `PRAGMA integrity_check`. Peak RSS is the largest VmHWM seen
(Linux /proc) across the runs, including the clean one.

    cargo build --release --bins
    python3 scripts/fault_long.py --binary both --kills 300

Exit status 0 when nothing was lost, duplicated or failed and the integrity
check passed; 1 otherwise.
"""

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "fault-long-secret-0123456789abcdef-0123"
WINDOW = 4  # requests a client keeps outstanding
SETTLE_SECS = 600  # how long the clean start may take to index the backlog


def plan(rng, it, n):
    marker = f"kl{it}x{n}q"
    content = f"Kill loop note {it}-{n}: the ferry log carries marker {marker}."
    if rng.randrange(5) == 0:
        content += " The harbour master checks the moorings at every tide." * 400
    args = {"content": content, "wait": rng.randrange(2) == 0}
    if rng.randrange(3) == 0:
        args["idempotency_key"] = f"key-{marker}"
    return marker, args


def peak_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Counts:
    def __init__(self):
        self.kills = 0
        self.acked = {}  # marker -> document id
        self.peak_kib = 0
        self.conflicts = 0  # one marker acknowledged as two documents

    def ack(self, marker, doc_id):
        earlier = self.acked.setdefault(marker, doc_id)
        if earlier != doc_id:
            self.conflicts += 1


# ------------------------------------------------------------------ stdio


class Stdio:
    def __init__(self, binary, data_dir):
        env = dict(os.environ, ALAYASIKI_LOG="error")
        for k in ("ALAYASIKI_DATA_DIR", "ALAYASIKI_MCP_TENANT", "ALAYASIKI_MCP_SUBJECT"):
            env.pop(k, None)
        self.p = subprocess.Popen(
            [binary, "--data-dir", data_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.lines = []
        self.cv = threading.Condition()
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        for line in self.p.stdout:
            with self.cv:
                self.lines.append(line)
                self.cv.notify_all()
        with self.cv:
            self.closed = True
            self.cv.notify_all()

    def send(self, method, params=None, notify=False):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        try:
            self.p.stdin.write((json.dumps(msg) + "\n").encode())
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        return msg.get("id")

    def next_reply(self, timeout):
        deadline = time.time() + timeout
        with self.cv:
            while not self.lines and not self.closed:
                left = deadline - time.time()
                if left <= 0:
                    return None
                self.cv.wait(left)
            if self.lines:
                try:
                    return json.loads(self.lines.pop(0))
                except ValueError:
                    return None  # cut short by the kill
            return "closed"

    def call(self, method, params):
        rid = self.send(method, params)
        while True:
            r = self.next_reply(60)
            if r is None or r == "closed":
                raise RuntimeError(f"no reply to {method}")
            if r.get("id") == rid:
                return r

    def tool(self, name, args):
        r = self.call("tools/call", {"name": name, "arguments": args})
        return json.loads(r["result"]["content"][0]["text"])

    def initialize(self):
        self.call(
            "initialize",
            {"protocolVersion": "2024-11-05", "capabilities": {},
             "clientInfo": {"name": "fault-long", "version": "1"}},
        )
        self.send("notifications/initialized", notify=True)


def stdio_loop(binary, data_dir, kills, rng, counts, max_kill_ms):
    retry = []
    for it in range(kills):
        c = Stdio(binary, data_dir)
        c.initialize()
        kill_at = time.time() + rng.uniform(0.001, max_kill_ms / 1000)
        queue = list(retry)
        outstanding = {}
        n = 0
        killed = False
        while True:
            if not killed and time.time() >= kill_at:
                counts.peak_kib = max(counts.peak_kib, peak_rss_kib(c.p.pid))
                c.p.send_signal(signal.SIGKILL)
                counts.kills += 1
                killed = True
            while not killed and len(outstanding) < WINDOW:
                if queue:
                    marker, args = queue.pop(0)
                else:
                    n += 1
                    marker, args = plan(rng, it, n)
                rid = c.send("tools/call", {"name": "alayasiki_ingest", "arguments": args})
                if rid is None:
                    break
                outstanding[rid] = (marker, args)
            r = c.next_reply(0.02)
            if r == "closed":
                break
            if r is None:
                continue
            item = outstanding.pop(r.get("id"), None)
            if item is None:
                continue
            result = r.get("result", {})
            receipt = json.loads(result["content"][0]["text"])
            if result.get("isError") or receipt.get("state") == "failed":
                print(f"ingest answered badly: {receipt}", file=sys.stderr)
                continue
            counts.ack(item[0], receipt["document_id"])
        c.p.wait()
        retry = [v for v in outstanding.values() if "idempotency_key" in v[1]]
        if (it + 1) % 50 == 0:
            print(f"stdio: {it + 1} kills, {len(counts.acked)} acknowledged", file=sys.stderr)
    # The clean start.
    c = Stdio(binary, data_dir)
    c.initialize()
    deadline = time.time() + SETTLE_SECS
    while True:
        st = c.tool("alayasiki_status", {})
        if st["jobs"]["pending"] == 0 or time.time() > deadline:
            break
        time.sleep(0.1)

    def query(marker):
        return c.tool(
            "alayasiki_query",
            {"query": marker, "mode": "evidence", "top_k": 100, "lanes": ["keyword"]},
        )

    verdict = verify(counts, query, st)
    counts.peak_kib = max(counts.peak_kib, peak_rss_kib(c.p.pid))
    c.p.stdin.close()
    c.p.wait(timeout=60)
    return verdict


# ------------------------------------------------------------------- HTTP


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(tenant="fault", sub="fault-long"):
    now = int(time.time())
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": sub, "tenant": tenant, "roles": ["admin"], "iat": now, "nbf": now,
              "exp": now + 86400, "iss": "fault-long", "aud": "alayasiki"}
    body = b64url(json.dumps(claims).encode())
    sig = hmac.new(SECRET.encode(), f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64url(sig)}"


class Api:
    def __init__(self, binary, data_dir):
        env = dict(os.environ, ALAYASIKI_LOG="error", ALAYASIKI_JWT_SECRET=SECRET,
                   ALAYASIKI_JWT_ISSUER="fault-long", ALAYASIKI_JWT_AUDIENCE="alayasiki",
                   ALAYASIKI_API_RATE="100000", ALAYASIKI_API_BURST="100000")
        for k in ("ALAYASIKI_DATA_DIR", "ALAYASIKI_JWT_SECRET_FILE",
                  "ALAYASIKI_JWT_PUBLIC_KEY_FILE", "ALAYASIKI_JWT_ALGORITHM"):
            env.pop(k, None)
        self.p = subprocess.Popen(
            [binary, "--bind", "127.0.0.1:0", "--data-dir", data_dir],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=env,
        )
        for raw in self.p.stderr:
            line = raw.decode(errors="replace").strip()
            prefix = "alayasiki-api: listening on http://"
            if line.startswith(prefix):
                host, port = line[len(prefix):].rsplit(":", 1)
                self.host, self.port = host, int(port)
                break
        else:
            raise RuntimeError("alayasiki-api did not start")
        threading.Thread(target=lambda: [None for _ in self.p.stderr], daemon=True).start()

    def request(self, method, path, tok, body=None, timeout=60):
        try:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            data = json.dumps(body).encode() if body is not None else None
            headers = {"Authorization": f"Bearer {tok}", "Content-Type": "application/json"}
            conn.request(method, path, body=data, headers=headers)
            r = conn.getresponse()
            payload = r.read()
            conn.close()
            return r.status, json.loads(payload)
        except (OSError, http.client.HTTPException, ValueError):
            return None, None


def http_loop(binary, data_dir, kills, rng, counts, max_kill_ms):
    tok = token()
    retry = []
    lock = threading.Lock()
    for it in range(kills):
        api = Api(binary, data_dir)
        killed = threading.Event()
        plans = [retry[i::WINDOW] + [plan(rng, it, i * 10000 + n) for n in range(400)]
                 for i in range(WINDOW)]
        unanswered = []

        def client(mine):
            for marker, args in mine:
                if killed.is_set():
                    break
                status, receipt = api.request("POST", "/v1/ingest", tok, args)
                if status == 200 and receipt and receipt.get("state") != "failed":
                    with lock:
                        counts.ack(marker, receipt["document_id"])
                elif status == 200:
                    print(f"ingest answered badly: {receipt}", file=sys.stderr)
                else:
                    with lock:
                        unanswered.append((marker, args))

        threads = [threading.Thread(target=client, args=(m,)) for m in plans]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.001, max_kill_ms / 1000))
        counts.peak_kib = max(counts.peak_kib, peak_rss_kib(api.p.pid))
        api.p.send_signal(signal.SIGKILL)
        api.p.wait()
        counts.kills += 1
        killed.set()
        for t in threads:
            t.join()
        retry = [u for u in unanswered if "idempotency_key" in u[1]][: 2 * WINDOW]
        if (it + 1) % 50 == 0:
            print(f"http: {it + 1} kills, {len(counts.acked)} acknowledged", file=sys.stderr)
    api = Api(binary, data_dir)
    deadline = time.time() + SETTLE_SECS
    while True:
        _, st = api.request("GET", "/v1/status", tok)
        if (st and st["jobs"]["pending"] == 0) or time.time() > deadline:
            break
        time.sleep(0.1)

    def query(marker):
        body = {"query": marker, "mode": "evidence", "top_k": 100, "lanes": ["keyword"]}
        return api.request("POST", "/v1/query", tok, body)[1] or {}

    verdict = verify(counts, query, st or {})
    counts.peak_kib = max(counts.peak_kib, peak_rss_kib(api.p.pid))
    api.p.send_signal(signal.SIGTERM)
    api.p.wait(timeout=60)
    return verdict


# ---------------------------------------------------------------- verdict


def verify(counts, query, status):
    lost = duplicated = 0
    for marker, doc_id in counts.acked.items():
        ids = {e["document_id"] for e in query(marker).get("evidence", [])}
        if doc_id not in ids:
            lost += 1
        if len(ids) > 1:
            duplicated += 1
    jobs = status.get("jobs", {})
    return {"lost": lost, "duplicated": duplicated + counts.conflicts,
            "failed": jobs.get("failed", -1), "pending": jobs.get("pending", -1)}


def integrity(data_dir):
    conn = sqlite3.connect(os.path.join(data_dir, "memory.db"))
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", choices=["mcp", "api", "both"], default="both")
    ap.add_argument("--kills", type=int, default=300, help="kills per binary (default 300)")
    ap.add_argument("--max-kill-ms", type=int, default=500,
                    help="a kill lands up to this long after start (default 500)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--profile", default="release", help="target/<profile>/ (default release)")
    ap.add_argument("--keep", action="store_true", help="keep the data directories")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    print(f"seed {seed}", file=sys.stderr)
    ok = True
    for which in (["mcp", "api"] if args.binary == "both" else [args.binary]):
        name = {"mcp": "alayasiki-mcp", "api": "alayasiki-api"}[which]
        binary = os.path.join(ROOT, "target", args.profile, name)
        if not os.path.exists(binary):
            sys.exit(f"{binary} not found: cargo build --{args.profile} --bins "
                     "(or --profile debug)")
        data_dir = tempfile.mkdtemp(prefix=f"alayasiki-fault-{which}-")
        rng = random.Random(seed)
        counts = Counts()
        started = time.time()
        loop = stdio_loop if which == "mcp" else http_loop
        verdict = loop(binary, data_dir, args.kills, rng, counts, args.max_kill_ms)
        check = integrity(data_dir)
        took = time.time() - started
        print(f"{name}: kills {counts.kills}, acknowledged {len(counts.acked)}, "
              f"lost {verdict['lost']}, duplicated {verdict['duplicated']}, "
              f"failed {verdict['failed']}, pending {verdict['pending']}, "
              f"peak RSS {counts.peak_kib / 1024:.1f} MiB, integrity {check}, {took:.0f} s")
        ok &= (verdict["lost"] == 0 and verdict["duplicated"] == 0 and verdict["failed"] == 0
               and verdict["pending"] == 0 and check == "ok")
        if args.keep:
            print(f"data directory kept: {data_dir}", file=sys.stderr)
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
