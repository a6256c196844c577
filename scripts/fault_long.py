#!/usr/bin/env python3
"""Long fault runs against the release binaries; standard library only.

The bounded versions of these runs are tests in CI (`tests/kill_loop.rs`,
`tests/local_owner.rs`, `tests/hostile_seeded.rs`, `tests/http_abuse.rs`,
`tests/http_amplification.rs`, `tests/http_compaction.rs`,
`tests/stdio_backpressure.rs`, `tests/storage_faults.rs`,
`tests/cluster_outage.rs`); this script runs each fault family at a larger
scale and prints one line of counts per family (the kill loop one per
transport):

    cargo build --release --bins
    python3 scripts/fault_long.py                       # every family
    python3 scripts/fault_long.py --family http --scale 3

`--family` picks one of kills, hostile, http, amplification, disk, cluster
(default all, in that order). `--kills` sets the kill loop's length;
`--scale` multiplies the counts of every other family (default 1, which
takes a few minutes per family on two cores).

kills
    `kill -9` loops (issue 21), one per transport (`--binary`):
    `mcp`: `alayasiki-mcp` on stdio serving in-process
    (`ALAYASIKI_IN_PROCESS=1`); `api`: `alayasiki-api` through the JSON API
    (`POST /v1/ingest`); `mcp-http`: `alayasiki-api` through Streamable HTTP
    (stateless 2026-07-28 `tools/call` at `POST /mcp`). Each iteration
    starts the binary on one data directory, ingests a burst (`wait: false`
    and `wait: true`, some with idempotency keys, which a client re-sends
    after a crash), kills it with SIGKILL at a random moment and starts
    again. `owner`: four `alayasiki-mcp` relay clients ingest (every write
    under an idempotency key) while their memory owner (the pid in
    `DATA_DIR/alayasiki.owner`, program `alayasiki-mcp owner`) is killed at
    a random moment after each new one appears; a request answered -32001
    is sent again (each write must be acknowledged within 10 s, retries
    included), there must be one owner afterwards, every client must exit
    with status 0 and the last owner must stop within 10 s of its clients
    leaving. After the last kill a clean start (for `owner`, the clients'
    next requests) must show every acknowledged document (its reply was
    received) searchable exactly once: `lost` counts acknowledged markers
    no query finds, `duplicated` those found in more than one document,
    `failed` the failed indexing jobs, `pending` the jobs left after 600 s,
    and the SQLite file must pass `PRAGMA integrity_check`. Peak RSS is the
    largest VmHWM seen (Linux /proc) across the runs, including the clean
    one. `--binary mcp|owner|api|mcp-http|all`, `--kills N` (default 300
    per transport), `--max-kill-ms`.

hostile
    `tests/hostile_seeded.rs` (generated malformed frames, JSON-RPC shapes and
    tool arguments over stdio: one reply per request, no leak, clean exit)
    built once with `cargo test --release --test hostile_seeded --no-run`
    (retried for ten minutes while the tree does not build) and its test run
    for seeds 1, 2, 3 (`ALAYASIKI_HOSTILE_SEED`) with `ALAYASIKI_HOSTILE_CASES`
    = 200,000 x scale each. Counts cases run and seeds that failed.

http
    The release `alayasiki-api` with `RLIMIT_NOFILE` 256 (so its connection
    cap is 192 and at most 96 connections carry no admitted request), rate
    100/s and burst 200 per caller, attacked in turn with: 3,000 bodies
    declared at 1 TiB, 2^62 and 2^63+1 bytes (`GET /health` and an
    authenticated `POST /v1/ingest`; each must get 413 and its connection
    ended), the HTTP/2 preface and 1,000 `GET /health HTTP/2.0` lines whose
    clients keep their sockets (505, then released), 2,000 idle plus 1,000
    slowloris connections (a byte a second, past `HEADER_READ_TIMEOUT`;
    descriptors and threads within the connection cap, every connection
    ended), 600 requests with conflicting framing (two `Content-Length`s, one
    with `Transfer-Encoding`, chunked twice; each must get 400 and a close,
    nothing stored), 10,000 unauthenticated (no, a malformed or a forged
    token: 401) and 10,000 authenticated requests (200 or 429) from 8
    threads, 50 rounds of one token opening its 8 SSE streams (the 9th must
    get 429 `too_many_streams_for_caller`, another tenant's still opens) and
    50 rounds of 8 SSE clients vanishing (closed or reset, one with a request
    in flight; their writers must be gone within 1 s and the caller able to
    open 8 again), 1,100 connections each pipelining 200 `GET /ui/app.js`
    and never reading an answer (50 authenticated requests meanwhile must
    all be served; the blocked answers must be gone within
    `ANSWER_WRITE_TIMEOUT`), four tenants of eight callers opening every
    Streamable HTTP session and then 20 other tenants each opening one (all
    must get one), one caller's 48 concurrent 1 MiB `wait: true` ingests
    beside another tenant's queries (none may be refused `overloaded`; RSS
    at the end and 5 s later is printed), and one tenant's compaction
    beside another tenant's writes (`tests/http_compaction.rs`): tenant B
    holds 25,000 chunks and forgets its middle document (about half the
    vector slots move), then compacts once and, for 10 s, loops ingest,
    forget and compact; tenant A loops ingest (`wait: true`) then query all
    the while. Every compaction of B after the first must be answered 429
    `compaction_too_soon` with a `Retry-After` of at most `COMPACT_INTERVAL`
    (30 s); A must never be refused and its worst ingest must stay under 2
    s (printed: the compaction's time, A's worst ingest during it and
    before it, A's iterations); counts x scale. `--phases` runs only the
    attacks named (comma-separated, e.g. "session hoard,compaction").
    Throughout, a
    well-behaved client asks
    `GET /v1/status` and `POST /v1/query` by turns ten times a second,
    honouring `Retry-After`: served, deferred (answered 429/503 with
    `Retry-After`, then served) and failed. Threads, descriptors and RSS
    (/proc/PID/task, /proc/PID/fd, VmRSS) are measured idle (after a first
    request of each kind and 600 concurrent queries, so that the embedding
    model and the pool of read connections are loaded), at their peak, and
    after each attack (polled up to 30 s until within 1 thread and 2
    descriptors of idle, the slack of `tests/http_abuse.rs`; RSS is reported,
    and marked when over idle + 8 MiB). Fails if the server exited or
    panicked, the well-behaved client failed, an attack was not answered as
    above, or threads or descriptors did not return to idle.

amplification
    Against the release binaries: 10 rounds of 48 concurrent authenticated
    `POST /v1/ingest` bodies of four million small numbers from 4 callers
    (each must get 413 `body_too_costly`, or 503/429), 400 stdio frames of
    the same (each refused naming `MAX_PARSED_MESSAGE_BYTES`), a JSON
    document that flattens 500-fold (60 levels of 100-byte keys over 20,000
    leaves) ingested 50 times over HTTP and 50 over stdio (refused naming
    `MAX_JSON_EXPANSION`), 80,000 pipelined stdio ingests with a `ping`
    behind them, and 3,000 ingests one after another to a server logging at
    `ALAYASIKI_LOG=trace` into a stderr pipe nobody reads; counts x scale.
    Fails if a server died or panicked, anything was stored that should not
    be, peak RSS (VmHWM) grew by 600 MiB or more over HTTP or 120 MiB or
    more over stdio, the pipelined server's peak reached 300 MiB, the `ping`
    was answered 2 s or more after the burst was written (the bounds of
    `tests/http_amplification.rs` and `tests/stdio_backpressure.rs`), or an
    ingest behind the unread stderr went 10 s without its reply.

disk
    Needs root, `mount`, `losetup` and `mkfs.ext4` (else skipped, saying why).
    Each of 10 x scale cycles runs `alayasiki-mcp` on three disks in turn, as
    `tests/storage_faults.rs` does: a 6 MiB tmpfs filled up to a little slack
    and then ingested into until three writes are refused, then freed: the
    server must resume by itself (`full`); an ext4 file system on a loop
    device (backing file on a tmpfs, mounted `errors=remount-ro`) shut down
    with `EXT4_IOC_SHUTDOWN` at a random moment while four ingests at a time
    run (`failing`); the same turned read-only through
    `/sys/fs/ext4/<loop>/trigger_fs_error` (`read-only`), after which a start
    on a read-only mount must be refused naming the read-only file system.
    Ingests go on for 0.5 to 1.5 s (at most 200) after the fault. Every reply
    must come within 10 s, never say `internal` nor contain the data
    directory's path, and every refusal must start `unavailable: storage
    full|failing|read-only` (on an ext4 fault an in-flight write named with
    the other ext4 fault is counted, not failed); a `wait: true` ingest
    acknowledged as pending on the full disk must name it. Afterwards (ext4:
    stop, unmount, mount again, `PRAGMA integrity_check`, start) every
    acknowledged document must be found exactly once (`lost`, `duplicated`),
    no refused write stored (`refused yet stored`), nothing else stored but
    writes whose reply never came within 90 s (`unanswered`, itself a
    failure), no job failed or pending, and each server must have exited with
    status 0 within 10 s of its stdin closing. First, 30 x scale probes per
    ext4 fault run the file system alone: a file appended to and `fdatasync`'d
    in a loop as the fault strikes, then mounted again; when one comes back
    shorter than its last successful `fdatasync`, ext4 itself loses
    acknowledged data at the moment of that fault, and a document sent within
    100 ms of it, acknowledged and then missing is counted as `lost at the
    error` rather than failed. Mounts and loop devices are always removed.

cluster
    Needs `rqlited` (`ALAYASIKI_RQLITED`, else the pinned build
    `bash scripts/rqlite_install.sh` puts under target/rqlite/; else
    skipped, saying why). Each of 3 x scale rounds starts a 3-node rqlited
    cluster on loopback (500 ms Raft timeouts) and two `alayasiki-api` nodes
    with `ALAYASIKI_STORE=rqlite://` all three, and then: kills both
    followers (`kill -9`: no quorum), waits until each API node logs the
    loss, makes 3 reads (each must be served, from the replica) and 3
    writes (two on one node, one on the other): each must be refused 503
    `unavailable` with `Retry-After: 5`, no node address in the body, within
    `CLUSTER_WRITE_WAIT` (5 s) plus 2.5 s for its last request to the
    cluster; restarts the followers: each API node must serve a write within
    20 s of a leader being back (rqlite is given 60 s to elect one, and a
    restarted rqlited that exits because its join timed out is started
    again; a round whose cluster elects none fails, keeping the rqlite
    logs); then freezes both followers (`SIGSTOP`, a
    partition that drops packets) while two tenants write twice each, one on
    each API node, at once: every write must be answered 503 with a
    `Retry-After` within `CLUSTER_WRITE_DEADLINE` (30 s); resumes them: each
    node must serve a write within 20 s again. Fails also if an API node
    exited, panicked or logged at ERROR (an expected loss of quorum is a
    warning). Printed: the slowest refusal and its bound, the Retry-After
    values, the slowest recovery, the slowest frozen write, the time all
    four took and rqlite's slowest election.

Exit status 0 when every family selected held (a skipped one counts as
held); 1 otherwise.
"""

import argparse
import base64
import collections
import fcntl
import hashlib
import hmac
import http.client
import json
import os
import random
import resource
import selectors
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "fault-long-secret-0123456789abcdef-0123"
WINDOW = 4  # requests a client keeps outstanding
SETTLE_SECS = 600  # how long the clean start may take to index the backlog
FAMILIES = ["kills", "hostile", "http", "amplification", "disk", "cluster"]


def plan(rng, it, n):
    marker = f"kl{it}x{n}q"
    content = f"Kill loop note {it}-{n}: the ferry log carries marker {marker}."
    if rng.randrange(5) == 0:
        content += " The harbour master checks the moorings at every tide." * 400
    args = {"content": content, "wait": rng.randrange(2) == 0}
    if rng.randrange(3) == 0:
        args["idempotency_key"] = f"key-{marker}"
    return marker, args


def status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def peak_rss_kib(pid):
    return status_kib(pid, "VmHWM")


def scaled(n, scale):
    return max(1, int(round(n * scale)))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


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


def drain(pipe, kept, flags):
    """Reads a child's stderr into `kept` (the last lines), noting panics."""
    for raw in pipe:
        line = raw.decode(errors="replace").rstrip()
        kept.append(line)
        if "panicked" in line:
            flags["panicked"] = flags.get("panicked", 0) + 1
        if " ERROR " in line:
            flags["ERROR"] = flags.get("ERROR", 0) + 1


# ------------------------------------------------------------------ stdio


class Stdio:
    """`alayasiki-mcp` over pipes. `capture=True` keeps its stderr (the last
    lines in `self.err`, panics counted in `self.flags`) instead of passing
    it through; `unread=True` gives it a stderr pipe nobody reads."""

    def __init__(self, binary, data_dir, capture=False, log_level="error", unread=False,
                 relay=False):
        # In-process unless `relay`: the process killed is then the one that
        # owns the store. A relay reaches the directory's memory owner, which
        # stops one second after its last client leaves.
        env = dict(os.environ, ALAYASIKI_LOG=log_level, ALAYASIKI_IN_PROCESS="1")
        if relay:
            env.update(ALAYASIKI_IN_PROCESS="", ALAYASIKI_OWNER_IDLE_SECS="1")
        for k in ("ALAYASIKI_DATA_DIR", "ALAYASIKI_MCP_TENANT", "ALAYASIKI_MCP_SUBJECT"):
            env.pop(k, None)
        self.p = subprocess.Popen(
            [binary, "--data-dir", data_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # unread: a pipe held open and never read (it fills after 64 KiB)
            stderr=subprocess.PIPE if capture or unread else None,
            env=env,
        )
        self.err = collections.deque(maxlen=200)
        self.flags = {}
        if capture:
            threading.Thread(target=drain, args=(self.p.stderr, self.err, self.flags),
                             daemon=True).start()
        self.lines = collections.deque()  # (arrival time, raw line)
        self.cv = threading.Condition()
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        for line in self.p.stdout:
            with self.cv:
                self.lines.append((time.time(), line))
                self.cv.notify_all()
        with self.cv:
            self.closed = True
            self.cv.notify_all()

    def send_raw(self, data):
        try:
            self.p.stdin.write(data)
            self.p.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def send(self, method, params=None, notify=False):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        if not self.send_raw((json.dumps(msg) + "\n").encode()):
            return None
        return msg.get("id")

    def next_reply_timed(self, timeout):
        """(arrival time, message), None on timeout, "closed" at EOF."""
        deadline = time.time() + timeout
        with self.cv:
            while not self.lines and not self.closed:
                left = deadline - time.time()
                if left <= 0:
                    return None
                self.cv.wait(left)
            if self.lines:
                at, raw = self.lines.popleft()
                try:
                    return at, json.loads(raw)
                except ValueError:
                    return at, None  # cut short by the kill
            return "closed"

    def next_reply(self, timeout):
        r = self.next_reply_timed(timeout)
        if r is None or r == "closed":
            return r
        return r[1]

    def call(self, method, params, timeout=60):
        rid = self.send(method, params)
        while True:
            r = self.next_reply(timeout)
            if r is None or r == "closed":
                raise RuntimeError(f"no reply to {method}")
            if isinstance(r, dict) and r.get("id") == rid:
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

    def close(self, timeout=30):
        """Closes stdin; (exit status or None, seconds the exit took)."""
        started = time.time()
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            rc = None
        return rc, time.time() - started

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


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


# ------------------------------------------------------------ the owner

OWNER_LOST = -32001  # a relay's answer to a request its owner died with
RELAY_CLIENTS = 4
RETRIED_WITHIN = 10.0  # the longest one write may take, retries included


def pid_alive(pid):
    """A zombie (exited, not yet reaped by the client that started it)
    counts as gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return not f.read().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def recorded_owner(data_dir):
    """The pid the directory's owner record names, if any (it still names a
    killed owner until the next one takes the directory)."""
    try:
        with open(os.path.join(data_dir, "alayasiki.owner")) as f:
            v = json.load(f)
    except (OSError, ValueError):
        return None
    return v.get("pid") if v.get("program") == "alayasiki-mcp owner" else None


def owners_of(data_dir):
    want = f"owner\0--data-dir\0{data_dir}\0".encode()
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit() and pid_alive(int(name)):
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    n += want in f.read()
            except OSError:
                pass
    return n


def owner_loop(binary, data_dir, kills, rng, counts, max_kill_ms):
    """Relay clients ingest while their memory owner is killed: each new
    owner serves for a random moment up to `max_kill_ms`, then SIGKILL. A
    request answered OWNER_LOST is sent again under its idempotency key."""
    clients = [Stdio(binary, data_dir, relay=True) for _ in range(RELAY_CLIENTS)]
    for c in clients:
        c.initialize()
    stop = threading.Event()
    lock = threading.Lock()
    seen = {"retried": 0, "slowest": 0.0, "problems": []}

    def ingest_until_stopped(i, c):
        local = random.Random(rng.random())
        n = 0
        while not stop.is_set():
            n += 1
            marker, args = plan(local, i, n)
            args["idempotency_key"] = f"key-{marker}"  # every write may be retried
            first = time.time()
            while True:
                try:
                    r = c.call("tools/call", {"name": "alayasiki_ingest", "arguments": args})
                except RuntimeError as e:
                    with lock:
                        seen["problems"].append(f"client {i}: {e}")
                    stop.set()
                    return
                if "error" in r:
                    if r["error"].get("code") != OWNER_LOST:
                        with lock:
                            seen["problems"].append(f"client {i}: {r['error']}")
                        stop.set()
                        return
                    with lock:
                        seen["retried"] += 1
                    if time.time() - first > RETRIED_WITHIN:
                        with lock:
                            seen["problems"].append(f"client {i}: {marker} not acknowledged "
                                                    f"within {RETRIED_WITHIN:.0f} s")
                        stop.set()
                        return
                    time.sleep(0.01)  # no owner yet: spare the cores
                    continue
                result = r.get("result", {})
                receipt = json.loads(result["content"][0]["text"])
                if result.get("isError") or receipt.get("state") == "failed":
                    print(f"ingest answered badly: {receipt}", file=sys.stderr)
                    break
                with lock:
                    counts.ack(marker, receipt["document_id"])
                    seen["slowest"] = max(seen["slowest"], time.time() - first)
                break

    loops = [threading.Thread(target=ingest_until_stopped, args=(i, c))
             for i, c in enumerate(clients)]
    for t in loops:
        t.start()
    killed = set()
    while counts.kills < kills and not stop.is_set():
        pid = recorded_owner(data_dir)
        if pid is None or pid in killed or not pid_alive(pid):
            time.sleep(0.002)
            continue
        time.sleep(rng.uniform(0.001, max_kill_ms / 1000))
        counts.peak_kib = max(counts.peak_kib, peak_rss_kib(pid))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        killed.add(pid)
        counts.kills += 1
        if counts.kills % 50 == 0:
            log(f"owner: {counts.kills} kills, {len(counts.acked)} acknowledged")
    stop.set()
    for t in loops:
        t.join()
    c = clients[0]
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
    owners = owners_of(data_dir)
    last = recorded_owner(data_dir)
    if last:
        counts.peak_kib = max(counts.peak_kib, peak_rss_kib(last))
    exits = [cl.close()[0] for cl in clients]
    # The last owner stops one second after its last client left.
    deadline = time.time() + 10
    while last and pid_alive(last) and time.time() < deadline:
        time.sleep(0.05)
    if last and pid_alive(last):
        seen["problems"].append("the last owner stayed 10 s after its clients left")
        os.kill(last, signal.SIGTERM)
    if owners != 1:
        seen["problems"].append(f"{owners} owners after the kills")
    if any(rc != 0 for rc in exits):
        seen["problems"].append(f"client exit statuses {exits}")
    verdict.update(retried=seen["retried"], slowest=seen["slowest"],
                   problems=seen["problems"])
    return verdict


# ------------------------------------------------------------------- HTTP


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(tenant="fault", sub="fault-long", secret=SECRET):
    now = int(time.time())
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": sub, "tenant": tenant, "roles": ["admin"], "iat": now, "nbf": now,
              "exp": now + 86400, "iss": "fault-long", "aud": "alayasiki"}
    body = b64url(json.dumps(claims).encode())
    sig = hmac.new(secret.encode(), f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64url(sig)}"


class Api:
    """`alayasiki-api` on a loopback port. `descriptors` sets its
    RLIMIT_NOFILE (soft and hard); `env` adds to or overrides the
    environment; `capture` keeps its stderr after it listens."""

    def __init__(self, binary, data_dir, descriptors=None, env=None, log_level="error"):
        full = dict(os.environ, ALAYASIKI_LOG=log_level, ALAYASIKI_JWT_SECRET=SECRET,
                    ALAYASIKI_JWT_ISSUER="fault-long", ALAYASIKI_JWT_AUDIENCE="alayasiki",
                    ALAYASIKI_API_RATE="100000", ALAYASIKI_API_BURST="100000")
        for k in ("ALAYASIKI_DATA_DIR", "ALAYASIKI_JWT_SECRET_FILE",
                  "ALAYASIKI_JWT_PUBLIC_KEY_FILE", "ALAYASIKI_JWT_ALGORITHM",
                  "ALAYASIKI_MCP_ALLOWED_ORIGINS", "ALAYASIKI_API_ALLOWED_HOSTS"):
            full.pop(k, None)
        full.update(env or {})

        def limit():
            if descriptors is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

        self.p = subprocess.Popen(
            [binary, "--bind", "127.0.0.1:0", "--data-dir", data_dir],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=full, preexec_fn=limit if descriptors is not None else None,
        )
        self.err = collections.deque(maxlen=500)
        self.flags = {}
        for raw in self.p.stderr:
            line = raw.decode(errors="replace").strip()
            prefix = "alayasiki-api: listening on http://"
            if line.startswith(prefix):
                host, port = line[len(prefix):].rsplit(":", 1)
                self.host, self.port = host, int(port)
                break
            self.err.append(line)
        else:
            raise RuntimeError("alayasiki-api did not start: " + "\n".join(self.err))
        threading.Thread(target=drain, args=(self.p.stderr, self.err, self.flags),
                         daemon=True).start()

    @property
    def addr(self):
        return (self.host, self.port)

    def running(self):
        return self.p.poll() is None

    def request(self, method, path, tok, body=None, timeout=60, headers=None):
        try:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            data = json.dumps(body).encode() if body is not None else None
            headers = {"Authorization": f"Bearer {tok}", "Content-Type": "application/json",
                       **(headers or {})}
            conn.request(method, path, body=data, headers=headers)
            r = conn.getresponse()
            payload = r.read()
            conn.close()
            return r.status, json.loads(payload)
        except (OSError, http.client.HTTPException, ValueError):
            return None, None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


MODERN = "2026-07-28"  # the stateless revision of Streamable HTTP


def mcp_tool(api, tok, name, args, rid=1):
    """A stateless `tools/call` at `POST /mcp` (revision 2026-07-28, with the
    headers a conforming client sends): (HTTP status, the tool's JSON or
    None, whether the tool said isError)."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": args, "_meta": meta}}
    status, reply = api.request("POST", "/mcp", tok, body, headers={
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call", "Mcp-Name": name})
    try:
        result = reply["result"]
        return status, json.loads(result["content"][0]["text"]), bool(result.get("isError"))
    except (TypeError, KeyError, IndexError, ValueError):
        return status, None, False


def v1_ingest(api, tok, args):
    status, receipt = api.request("POST", "/v1/ingest", tok, args)
    return status, receipt, False


def mcp_ingest(api, tok, args):
    return mcp_tool(api, tok, "alayasiki_ingest", args)


def http_loop(binary, data_dir, kills, rng, counts, max_kill_ms, wire="v1"):
    """`alayasiki-api` killed under four clients ingesting through the JSON
    API (`wire` "v1") or Streamable HTTP ("mcp")."""
    tok = token()
    send = v1_ingest if wire == "v1" else mcp_ingest
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
                status, receipt, is_error = send(api, tok, args)
                if status == 200 and receipt and not is_error and receipt.get("state") != "failed":
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
            log(f"http ({wire}): {it + 1} kills, {len(counts.acked)} acknowledged")
    api = Api(binary, data_dir)
    deadline = time.time() + SETTLE_SECS
    while True:
        if wire == "v1":
            _, st = api.request("GET", "/v1/status", tok)
        else:
            _, st, _ = mcp_tool(api, tok, "alayasiki_status", {})
        if (st and st["jobs"]["pending"] == 0) or time.time() > deadline:
            break
        time.sleep(0.1)

    def query(marker):
        body = {"query": marker, "mode": "evidence", "top_k": 100, "lanes": ["keyword"]}
        if wire == "v1":
            return api.request("POST", "/v1/query", tok, body)[1] or {}
        return mcp_tool(api, tok, "alayasiki_query", body)[1] or {}

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


# --binary: (what the line is called, the binary, the loop)
KILL_TARGETS = {
    "mcp": ("alayasiki-mcp", "alayasiki-mcp", stdio_loop),
    "owner": ("alayasiki-mcp owner", "alayasiki-mcp", owner_loop),
    "api": ("alayasiki-api /v1", "alayasiki-api", http_loop),
    "mcp-http": ("alayasiki-api /mcp", "alayasiki-api",
                 lambda *a: http_loop(*a, wire="mcp")),
}


def family_kills(args, seed):
    ok = True
    for which in (list(KILL_TARGETS) if args.binary == "all" else [args.binary]):
        name, program, loop = KILL_TARGETS[which]
        binary = binary_path(args, program)
        data_dir = tempfile.mkdtemp(prefix=f"alayasiki-fault-{which}-")
        rng = random.Random(seed)
        counts = Counts()
        started = time.time()
        try:
            verdict = loop(binary, data_dir, args.kills, rng, counts, args.max_kill_ms)
        finally:
            if which == "owner":  # never leave an owner behind
                pid = recorded_owner(data_dir)
                if pid and pid_alive(pid):
                    os.kill(pid, signal.SIGKILL)
        check = integrity(data_dir)
        if verdict["failed"]:
            log(f"{name}: failed jobs (kind, attempts, error): {failed_jobs(data_dir)}")
        took = time.time() - started
        problems = verdict.get("problems", [])
        owner = ""
        if which == "owner":
            owner = (f", requests answered {OWNER_LOST} and retried {verdict['retried']}, "
                     f"slowest acknowledgement {verdict['slowest']:.2f} s")
        print(f"kills {name}: kills {counts.kills}, acknowledged {len(counts.acked)}, "
              f"lost {verdict['lost']}, duplicated {verdict['duplicated']}, "
              f"failed {verdict['failed']}, pending {verdict['pending']}, "
              f"peak RSS {counts.peak_kib / 1024:.1f} MiB, integrity {check}{owner}, "
              f"{took:.0f} s" + "".join(f"\n  {p}" for p in problems), flush=True)
        ok &= (verdict["lost"] == 0 and verdict["duplicated"] == 0 and verdict["failed"] == 0
               and verdict["pending"] == 0 and check == "ok" and not problems
               and counts.kills == args.kills)
        if args.keep:
            print(f"data directory kept: {data_dir}", file=sys.stderr)
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
    return ok


# ---------------------------------------------------------------- hostile

HOSTILE_CASES = 200_000
HOSTILE_SEEDS = [1, 2, 3]


def build_test(args, name):
    """Builds one integration test (retrying while the tree does not
    build); the path of its executable."""
    profile = {"release": ["--release"], "debug": []}.get(args.profile,
                                                          [f"--profile={args.profile}"])
    cmd = ["cargo", "test", *profile, "--test", name, "--no-run", "--message-format=json"]
    exe = None
    for attempt in range(10):
        out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for line in out.stdout.decode(errors="replace").splitlines():
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if (msg.get("reason") == "compiler-artifact" and msg.get("executable")
                    and msg.get("target", {}).get("name") == name):
                exe = msg["executable"]
        if out.returncode == 0:
            return exe
        log(f"hostile: `{' '.join(cmd)}` failed (attempt {attempt + 1}); retrying in 60 s\n"
            + out.stderr.decode(errors="replace")[-2000:])
        time.sleep(60)
    return None


def family_hostile(args, seed):
    cases = scaled(HOSTILE_CASES, args.scale)
    started = time.time()
    exe = build_test(args, "hostile_seeded")
    if exe is None:
        print("hostile: FAILED: tests/hostile_seeded.rs did not build", flush=True)
        return False
    run = failed = 0
    notes = []
    for s in HOSTILE_SEEDS:
        env = dict(os.environ, ALAYASIKI_HOSTILE_CASES=str(cases), ALAYASIKI_HOSTILE_SEED=str(s))
        t0 = time.time()
        out = subprocess.run([exe, "--exact",
                              "generated_hostile_input_is_answered_once_each_without_leaks"],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        text = out.stdout.decode(errors="replace")
        passed = out.returncode == 0 and "1 passed" in text
        run += cases
        if not passed:
            failed += 1
            lines = [l for l in text.splitlines() if "panicked" in l or "leaks" in l
                     or "never" in l or "reply" in l]
            notes.append(f"seed {s}: " + " | ".join(lines[:3]))
        log(f"hostile: seed {s}, {cases} cases, {'ok' if passed else 'FAILED'}, "
            f"{time.time() - t0:.0f} s")
    print(f"hostile: seeds {','.join(map(str, HOSTILE_SEEDS))}, cases {run} "
          f"({cases} per seed), failed seeds {failed}, {time.time() - started:.0f} s"
          + ("".join("; " + n for n in notes)), flush=True)
    return failed == 0


# ------------------------------------------------------------- raw HTTP

HEADER_READ_TIMEOUT = 10.0
REFUSED_BODY_LINGER = 5.0
MAX_SSE_CONNECTIONS_PER_CALLER = 8
HANGUP_POLL = 0.25
DESCRIPTORS = 256
RESERVED_DESCRIPTORS = 64
CONNECTION_CAP = DESCRIPTORS - RESERVED_DESCRIPTORS
# How far above idle the footprint may stay (tests/http_abuse.rs): a thread
# or descriptor that comes and goes, memory the allocator keeps.
SLACK_THREADS = 1
SLACK_DESCRIPTORS = 2
SLACK_RSS_KIB = 8 * 1024


class Raw:
    """One TCP connection speaking HTTP/1.1 by hand, so every header can lie."""

    def __init__(self, addr, timeout=20):
        self.s = socket.create_connection(addr, timeout=timeout)
        self.buf = b""

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.s.sendall(data)

    def _fill(self):
        chunk = self.s.recv(65536)
        if not chunk:
            raise EOFError("connection ended")
        self.buf += chunk

    def head(self):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = []
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers.append((k.strip().lower(), v.strip()))
        return status, headers

    def line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exactly(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def chunk(self):
        """One chunk of a chunked body; None at the last one."""
        n = int(self.line().strip() or b"0", 16)
        if n == 0:
            return None
        data = self.exactly(n + 2)
        return data[:n]

    def body(self, headers):
        h = dict(headers)
        if h.get("transfer-encoding", "").lower() == "chunked":
            out = b""
            while True:
                c = self.chunk()
                if c is None:
                    return out
                out += c
        if "content-length" in h:
            return self.exactly(int(h["content-length"]))
        try:
            while True:
                self._fill()
        except EOFError:
            pass
        data, self.buf = self.buf, b""
        return data

    def to_end(self, timeout=None):
        """Reads until the server ends the connection: "eof", "reset", or
        "open" when it is still open after the timeout."""
        if timeout is not None:
            self.s.settimeout(timeout)
        try:
            while True:
                if not self.s.recv(65536):
                    return "eof"
        except socket.timeout:
            return "open"
        except ConnectionResetError:
            return "reset"
        except OSError:
            return "reset"

    def close(self, reset=False):
        try:
            if reset:
                self.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.s.close()
        except OSError:
            pass


def header(headers, name):
    for k, v in headers:
        if k == name:
            return v
    return None


def http_request(addr, method, path, headers=(), body=None, timeout=30):
    """One request on a fresh connection (`Connection: close`): (status,
    headers, body). Raises OSError or EOFError when no answer came."""
    c = Raw(addr, timeout)
    try:
        head = f"{method} {path} HTTP/1.1\r\nHost: {addr[0]}:{addr[1]}\r\nConnection: close\r\n"
        for k, v in headers:
            head += f"{k}: {v}\r\n"
        if body is not None:
            head += f"Content-Length: {len(body)}\r\n"
        c.send(head + "\r\n")
        if body is not None:
            try:
                c.send(body)
            except OSError:
                pass  # answered (and closed) before the whole body was read
        status, hdrs = c.head()
        return status, hdrs, c.body(hdrs)
    finally:
        c.close()


def bearer(tok):
    return [("Authorization", f"Bearer {tok}"), ("Content-Type", "application/json")]


def error_code(body):
    try:
        return json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return ""


def footprint(pid):
    """(threads, descriptors, RSS KiB) of a process, None once it is gone."""
    try:
        threads = len(os.listdir(f"/proc/{pid}/task"))
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    return (threads, fds, status_kib(pid, "VmRSS"))


def fp_text(fp):
    return f"{fp[0]}/{fp[1]}/{fp[2] / 1024:.1f} MiB" if fp else "gone"


def threads_named(pid, name):
    n = 0
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{t}/comm") as f:
                    n += f.read().strip() == name
            except OSError:
                pass
    except OSError:
        pass
    return n


def near_idle(fp, idle):
    return (fp is not None and fp[0] <= idle[0] + SLACK_THREADS
            and fp[1] <= idle[1] + SLACK_DESCRIPTORS)


def settle(pid, idle, limit):
    """Polls until threads and descriptors are back within the slack of
    `idle` (RSS is reported, not required), for at most `limit` seconds:
    (footprint then, seconds taken, whether it got there)."""
    started = time.time()
    while True:
        fp = footprint(pid)
        if near_idle(fp, idle) or fp is None or time.time() - started > limit:
            return fp, time.time() - started, near_idle(fp, idle)
        time.sleep(0.1)


def idle_footprint(pid, secs=3.0):
    """The lowest footprint seen over `secs`, field by field."""
    least = footprint(pid)
    until = time.time() + secs
    while time.time() < until:
        time.sleep(0.1)
        fp = footprint(pid)
        if fp:
            least = tuple(min(a, b) for a, b in zip(least, fp))
    return least


class Sampler(threading.Thread):
    """Samples a process's footprint every 50 ms: the overall and the
    current phase's peak, field by field."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = self.phase = None
        self.stopped = threading.Event()

    def sample(self):
        """Takes one sample now; the phase's peak."""
        fp = footprint(self.pid)
        if fp:
            self.peak = fp if self.peak is None else tuple(map(max, self.peak, fp))
            self.phase = fp if self.phase is None else tuple(map(max, self.phase, fp))
        return self.phase

    def run(self):
        while not self.stopped.is_set():
            self.sample()
            time.sleep(0.05)


QUERY = b'{"query": "ferry moorings", "mode": "evidence"}'


class WellBehaved(threading.Thread):
    """An authenticated client asking `GET /v1/status` and `POST /v1/query`
    (by turns) ten times a second.
    A 429/503 with `Retry-After` is honoured (waited, at most 2 s, and
    retried, up to 10 times): `deferred`; anything else but 200 is a
    failure."""

    def __init__(self, addr, tok):
        super().__init__(daemon=True)
        self.addr, self.tok = addr, tok
        self.served = self.deferred = self.failed = self.n = 0
        self.failures = []
        self.active = threading.Event()
        self.busy = threading.Lock()
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            if not self.active.wait(0.05):
                continue
            with self.busy:
                self.one()
            time.sleep(0.1)

    def one(self):
        self.n += 1
        method, path, data = ("GET", "/v1/status", None) if self.n % 2 else ("POST", "/v1/query",
                                                                              QUERY)
        for _ in range(10):
            try:
                status, hdrs, body = http_request(self.addr, method, path, bearer(self.tok), data,
                                                  timeout=30)
            except (OSError, EOFError, ValueError) as e:
                self.fail(repr(e))
                return
            if status == 200:
                self.served += 1
                return
            retry = header(hdrs, "retry-after")
            if status in (429, 503) and retry is not None:
                self.deferred += 1
                time.sleep(min(float(retry), 2.0))
                continue
            self.fail(f"{status} {body[:200]!r}")
            return
        self.fail("still deferred after 10 tries")

    def fail(self, why):
        self.failed += 1
        if len(self.failures) < 10:
            self.failures.append(why)

    def pause(self):
        self.active.clear()
        with self.busy:
            pass

    def resume(self):
        self.active.set()


def parallel(n, workers, fn):
    """Calls fn(i) for i in range(n) on `workers` threads; the results."""
    results = [None] * n
    it = iter(range(n))
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                i = next(it, None)
            if i is None:
                return
            results[i] = fn(i)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def refused(addr, head, timeout=20):
    """Sends `head`; (status, whether the server said `Connection: close`
    and then ended the connection)."""
    try:
        c = Raw(addr, timeout)
    except OSError:
        return None, False
    try:
        c.send(head)
        status, hdrs = c.head()
        closing = (header(hdrs, "connection") or "").lower() == "close"
        return status, closing and c.to_end() == "eof"
    except (OSError, EOFError, ValueError):
        return None, False
    finally:
        c.close()


class SseStream:
    """`GET /mcp/sse`: `status`, and for 200 the `endpoint` of the session;
    else the refusal's `code` and `retry_after`."""

    def __init__(self, addr, tok):
        self.addr = addr
        self.c = Raw(addr, 30)
        self.c.send(f"GET /mcp/sse HTTP/1.1\r\nHost: {addr[0]}:{addr[1]}\r\n"
                    f"Accept: text/event-stream\r\nAuthorization: Bearer {tok}\r\n\r\n")
        self.status, hdrs = self.c.head()
        self.endpoint = self.code = None
        self.retry_after = header(hdrs, "retry-after")
        if self.status != 200:
            self.code = error_code(self.c.body(hdrs))
            return
        pending = b""
        while b"\n\n" not in pending:
            c = self.c.chunk()
            if c is None:
                raise EOFError("stream ended before its endpoint event")
            pending += c
        for line in pending.split(b"\n\n", 1)[0].decode().splitlines():
            if line.startswith("data: "):
                self.endpoint = line[len("data: "):]

    def close(self, reset=False):
        self.c.close(reset)


# ------------------------------------------------------------ http family


def hx(addr):
    return f"{addr[0]}:{addr[1]}"


def phase_huge(ctx):
    n = scaled(3000, ctx.scale)
    lengths = [1 << 40, 1 << 62, (1 << 63) + 1]
    addr = ctx.addr

    def one(i):
        length = lengths[i % len(lengths)]
        if i % 2 == 0:
            head = f"GET /health HTTP/1.1\r\nHost: {hx(addr)}\r\nContent-Length: {length}\r\n\r\n"
        else:
            tok = token(sub=f"huge-{i // 50}")  # within one caller's burst
            head = (f"POST /v1/ingest HTTP/1.1\r\nHost: {hx(addr)}\r\nAuthorization: Bearer "
                    f"{tok}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n"
                    f"\r\n{{\"content\": \"x")
        try:
            c = Raw(addr, 20)
        except OSError as e:
            return (None, repr(e))
        try:
            c.send(head)
            status, _ = c.head()
            return (status, c.to_end())
        except (OSError, EOFError, ValueError) as e:
            return (None, repr(e))
        finally:
            c.close()

    results = parallel(n, 16, one)
    good = sum(1 for s, e in results if s == 413 and e == "eof")
    problems = []
    if good != n:
        bad = collections.Counter(f"{s}/{e}" for s, e in results if not (s == 413 and e == "eof"))
        problems.append(f"huge lengths: {n - good} not answered 413 and ended: {dict(bad)}")
    return f"huge lengths {n} (413 and ended {good})", problems, None


def phase_http2(ctx):
    n = scaled(1000, ctx.scale)
    addr = ctx.addr
    problems = []
    preface = refused(addr, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    if preface != (505, True):
        problems.append(f"HTTP/2 preface answered {preface}")
    held = []
    good = 0
    for i in range(n):
        try:
            c = Raw(addr, 20)
            c.send(f"GET /health HTTP/2.0\r\nHost: {hx(addr)}\r\n\r\n")
            status, _ = c.head()
        except (OSError, EOFError, ValueError) as e:
            status = repr(e)
        good += status == 505
        if status != 505 and len(problems) < 5:
            problems.append(f"HTTP/2.0 line {i} answered {status}")
        held.append(c)

    def cleanup():
        # Released by the server though every client kept its socket.
        ended = sum(1 for c in held if c.to_end(2) in ("eof", "reset"))
        for c in held:
            c.close()
        return [] if ended == len(held) else [f"HTTP/2.0: {len(held) - ended} still open"]

    return f"HTTP/2 preface and {n} HTTP/2.0 lines (505 {good})", problems, cleanup


def phase_slowloris(ctx):
    n_idle, n_loris = scaled(2000, ctx.scale), scaled(1000, ctx.scale)
    addr = ctx.addr
    started = time.time()

    def opened(n):
        out = []
        for _ in range(n):
            try:
                out.append(socket.create_connection(addr, timeout=1))
            except OSError:
                pass
        return out

    idlers = opened(n_idle)
    lorises = opened(n_loris)
    prefix = f"GET /health HTTP/1.1\r\nHost: {hx(addr)}\r\n".encode()
    trickle = b"X-Slow: 1\r\n" * 64
    for k, s in enumerate(lorises):
        s.setblocking(False)
        if k % 2 == 0:  # half send the request line at once, half dribble it too
            try:
                s.send(prefix)
            except OSError:
                pass
    log(f"http: slowloris: {len(idlers) + len(lorises)} connections opened in "
        f"{time.time() - started:.1f} s")
    until = time.time() + HEADER_READ_TIMEOUT + 2
    step = 0
    while time.time() < until:
        for k, s in enumerate(lorises):
            data = trickle if k % 2 == 0 else prefix + trickle
            try:
                s.send(data[step:step + 1])  # a byte a second
            except OSError:
                pass
        step += 1
        time.sleep(1)
    during = ctx.sampler.sample()
    problems = []
    if len(idlers) + len(lorises) < (n_idle + n_loris) * 2 // 3:
        problems.append(f"slowloris: only {len(idlers) + len(lorises)} connections opened")
    if during and during[1] > ctx.idle[1] + CONNECTION_CAP + SLACK_DESCRIPTORS:
        problems.append(f"slowloris: {during[1]} descriptors, over the connection cap")
    if during and during[0] > ctx.idle[0] + CONNECTION_CAP + SLACK_THREADS:
        problems.append(f"slowloris: {during[0]} threads, over the connection cap")

    def cleanup():
        # Every connection must have been ended by the server.
        socks = idlers + lorises
        sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        remaining = len(socks)
        deadline = time.time() + 5
        while remaining and time.time() < deadline:
            for key, _ in sel.select(timeout=0.5):
                try:
                    data = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(key.fileobj)
                    remaining -= 1
        sel.close()
        for s in socks:
            s.close()
        return [f"slowloris: {remaining} connections still open"] if remaining else []

    return (f"{len(idlers)} idle and {len(lorises)} slowloris connections", problems, cleanup)


FRAMINGS = [
    "Content-Length: 13\r\nContent-Length: 14",
    "Content-Length: 22\r\nContent-Length: 22",
    "Content-Length: 22\r\nTransfer-Encoding: chunked",
    "Transfer-Encoding: chunked\r\nContent-Length: 22",
    "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
    "Transfer-Encoding: gzip, chunked",
]


def phase_conflicting(ctx):
    rounds = scaled(50, ctx.scale)
    addr = ctx.addr
    body = '{"content":"smuggled"}'
    n = good = 0
    problems = []
    for r in range(rounds):
        tok = token(sub=f"smuggle-{r}")
        for framing in FRAMINGS:
            for path, auth in (("/v1/ingest", f"Authorization: Bearer {tok}\r\n"),
                               ("/health", "")):
                method = "GET" if path == "/health" else "POST"
                head = (f"{method} {path} HTTP/1.1\r\nHost: {hx(addr)}\r\n{auth}Content-Type: "
                        f"application/json\r\n{framing}\r\n\r\n{body}GET /health HTTP/1.1\r\n\r\n")
                got = refused(addr, head)
                n += 1
                good += got == (400, True)
                if got != (400, True) and len(problems) < 5:
                    problems.append(f"conflicting {framing!r} to {path}: {got}")
    _, st = ctx.api.request("GET", "/v1/status", ctx.tok)
    stored = (st or {}).get("documents")
    if stored != 0:
        problems.append(f"conflicting lengths: documents {stored} after the smuggling")
    ctx.conflicting_ok = good == n
    return f"conflicting framing {n} (400 and closed {good}, stored {stored})", problems, None


def flood(ctx, n, headers_of, paths):
    addr = ctx.addr

    def one(i):
        method, path, body = paths[i % len(paths)]
        try:
            status, hdrs, data = http_request(addr, method, path, headers_of(i), body, timeout=30)
        except (OSError, EOFError, ValueError):
            return "no answer"
        if status in (429, 503):
            return f"{status}" + ("" if header(hdrs, "retry-after") else " without Retry-After")
        return str(status)

    return collections.Counter(parallel(n, 8, one))


def counter_text(c):
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))


def phase_unauth_flood(ctx):
    n = scaled(10000, ctx.scale)
    forged = token(sub="forger", secret="not-the-secret-0123456789abcdef-0123")
    variants = [[], [("Authorization", "Bearer garbage")], [("Authorization", f"Bearer {forged}")]]
    got = flood(ctx, n, lambda i: variants[i % 3],
                [("GET", "/v1/status", None),
                 ("POST", "/v1/query", b'{"query": "ferry"}')])
    allowed = {"401", "429", "503"}
    bad = {k: v for k, v in got.items() if k not in allowed}
    problems = [f"unauthenticated flood answered {bad}"] if bad else []
    return f"unauthenticated flood {n} ({counter_text(got)})", problems, None


def phase_auth_flood(ctx):
    n = scaled(10000, ctx.scale)
    tok = token(sub="flooder")
    got = flood(ctx, n, lambda i: bearer(tok),
                [("GET", "/v1/status", None),
                 ("POST", "/v1/query", QUERY)])
    allowed = {"200", "429", "503"}
    bad = {k: v for k, v in got.items() if k not in allowed}
    problems = [f"authenticated flood answered {bad}"] if bad else []
    return f"authenticated flood {n} ({counter_text(got)})", problems, None


def writers_become(pid, n, limit):
    started = time.time()
    while time.time() - started < limit:
        if threads_named(pid, "sse-writer") == n:
            return time.time() - started
        time.sleep(0.02)
    return None


def open_streams(ctx, tok, n, problems, what):
    out = []
    for _ in range(n):
        try:
            s = SseStream(ctx.addr, tok)
        except (OSError, EOFError, ValueError) as e:
            problems.append(f"{what}: a stream did not open: {e!r}")
            continue
        if s.status != 200 or not s.endpoint:
            problems.append(f"{what}: a stream was answered {s.status} {s.code}")
            s.close()
            continue
        out.append(s)
    return out


def phase_sse_share(ctx):
    rounds = scaled(50, ctx.scale)
    pid = ctx.api.p.pid
    problems = []
    opened = refused_9th = 0
    for r in range(rounds):
        tok = token(sub=f"sse-{r}")
        mine = open_streams(ctx, tok, MAX_SSE_CONNECTIONS_PER_CALLER, problems, "one token")
        opened += len(mine)
        try:
            extra = SseStream(ctx.addr, tok)
            if (extra.status, extra.code) == (429, "too_many_streams_for_caller") \
                    and extra.retry_after is not None:
                refused_9th += 1
            else:
                problems.append(f"one token: stream 9 answered {extra.status} {extra.code}")
            extra.close()
        except (OSError, EOFError, ValueError) as e:
            problems.append(f"one token: stream 9: {e!r}")
        theirs = open_streams(ctx, token(tenant="other-tenant", sub=f"someone-{r}"), 1,
                              problems, "another tenant")
        for s in mine + theirs:
            s.close()
        if writers_become(pid, 0, 2) is None:
            problems.append(f"one token: round {r}: SSE writers still running 2 s after close")
    return (f"one token {rounds} rounds ({opened} streams, the 9th refused 429 {refused_9th})",
            problems[:5], None)


def phase_sse_vanish(ctx):
    rounds = scaled(50, ctx.scale)
    pid = ctx.api.p.pid
    problems = []
    vanished = 0
    slowest = 0.0
    for r in range(rounds):
        tok = token(sub=f"gone-{r}")
        streams = open_streams(ctx, tok, MAX_SSE_CONNECTIONS_PER_CALLER, problems, "vanished")
        if writers_become(pid, len(streams), 2) is None:
            problems.append(f"vanished: round {r}: writers did not start")
        # One of them leaves a request behind whose reply nobody reads.
        if streams:
            msg = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
            try:
                status, _, _ = http_request(ctx.addr, "POST", streams[0].endpoint, bearer(tok),
                                            msg)
                if status != 202:
                    problems.append(f"vanished: POST answered {status}")
            except (OSError, EOFError, ValueError) as e:
                problems.append(f"vanished: POST: {e!r}")
        for k, s in enumerate(streams):
            s.close(reset=k % 2 == 0)  # half reset, half closed
        vanished += len(streams)
        freed = writers_become(pid, 0, 5)
        if freed is None:
            problems.append(f"vanished: round {r}: writers still running after 5 s")
        else:
            slowest = max(slowest, freed)
            if freed >= HANGUP_POLL * 4:
                problems.append(f"vanished: round {r}: freed after {freed:.2f} s")
        # Every place is the caller's again.
        again = open_streams(ctx, tok, MAX_SSE_CONNECTIONS_PER_CALLER, problems, "reopened")
        for s in again:
            s.close()
        writers_become(pid, 0, 2)
    return (f"vanished SSE clients {vanished} (freed within {slowest * 1000:.0f} ms)",
            problems[:5], None)


def phase_pipelined(ctx):
    """Connections that pipeline `GET /ui/app.js` (a public asset) and never
    read an answer, more of them than the server holds: authenticated
    requests must all be served meanwhile, and the blocked answers must
    end within `ANSWER_WRITE_TIMEOUT` (the settle that follows)."""
    n, depth = scaled(1100, ctx.scale), 200
    addr = ctx.addr
    requests = (f"GET /ui/app.js HTTP/1.1\r\nHost: {hx(addr)}\r\n\r\n" * depth).encode()
    held = []
    for _ in range(n):
        try:
            s = socket.create_connection(addr, timeout=1)
        except OSError:
            continue
        try:
            s.sendall(requests)
        except OSError:
            pass
        held.append(s)
    time.sleep(2)
    served, slowest, problems = 0, 0.0, []
    for _ in range(50):
        t = time.time()
        try:
            status, _, _ = http_request(addr, "GET", "/v1/status", bearer(ctx.tok), timeout=10)
        except (OSError, EOFError, ValueError) as e:
            status = repr(e)
        slowest = max(slowest, time.time() - t)
        if status == 200:
            served += 1
        elif len(problems) < 5:
            problems.append(f"pipelined: an authenticated request answered {status}")
        time.sleep(0.1)

    def cleanup():
        for s in held:
            s.close()
        return []

    return (f"pipelined {len(held)} connections x {depth} unread answers (authenticated "
            f"served {served}/50, slowest {slowest * 1000:.0f} ms)", problems, cleanup)


def phase_dispatch_share(ctx):
    """One caller holds 48 concurrent 1 MiB `wait: true` ingests while
    another tenant queries: the other tenant is never refused for want of
    dispatch (its share is kept), and memory goes back once idle."""
    n = scaled(48, ctx.scale)
    addr, pid = ctx.addr, ctx.api.p.pid
    hog = bearer(token(tenant="hog-tenant", sub="hog"))
    body = json.dumps({"content": "The ferry log notes tides and moorings. " * 26_000,
                       "wait": True}).encode()
    other = bearer(token(tenant="other-tenant", sub="neighbour"))
    hog_status = collections.Counter()
    done = threading.Event()

    def hogging(i):
        try:
            status, _, _ = http_request(addr, "POST", "/v1/ingest", hog, body, timeout=120)
        except (OSError, EOFError, ValueError) as e:
            status = type(e).__name__
        hog_status[status] += 1

    flood = threading.Thread(target=lambda: (parallel(n, n, hogging), done.set()))
    flood.start()
    time.sleep(1)
    asked = refused_for_dispatch = 0
    problems = []
    while not done.is_set() and asked < 200:
        asked += 1
        try:
            status, _, answer = http_request(addr, "POST", "/v1/query", other, QUERY, timeout=60)
        except (OSError, EOFError, ValueError) as e:
            status, answer = repr(e), b""
        if status == 429 and error_code(answer) in ("overloaded",):
            refused_for_dispatch += 1
        elif status != 200 and len(problems) < 5:
            problems.append(f"dispatch share: another tenant's query answered {status}")
        time.sleep(0.2)
    flood.join()
    peak = status_kib(pid, "VmRSS")
    time.sleep(5)
    after = status_kib(pid, "VmRSS")
    if refused_for_dispatch:
        problems.append(f"dispatch share: another tenant refused {refused_for_dispatch} of "
                        f"{asked} queries as overloaded")
    return (f"dispatch share: {n} concurrent 1 MiB ingests of one caller "
            f"({dict(hog_status)}), another tenant's queries refused {refused_for_dispatch} of "
            f"{asked}; RSS {peak // 1024} MiB at the end, {after // 1024} MiB 5 s later",
            problems, None)


def phase_session_hoard(ctx):
    """Four tenants of eight callers fill every Streamable HTTP session;
    a fifth tenant must still open one."""
    addr = ctx.addr
    init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                       "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "hoarder", "version": "1"}}}).encode()
    accept = [("Accept", "application/json, text/event-stream")]

    def initialize(tok):
        try:
            status, hdrs, _ = http_request(addr, "POST", "/mcp", bearer(tok) + accept, init)
        except (OSError, EOFError, ValueError) as e:
            return repr(e)
        return status

    hoarders = [token(tenant=f"hoard-{t}", sub=f"hoarder-{c}") for t in range(4) for c in range(8)]
    opened = sum(1 for tok in hoarders for _ in range(32) if initialize(tok) == 200)
    rounds = scaled(20, ctx.scale)
    admitted = sum(1 for r in range(rounds)
                   if initialize(token(tenant=f"fresh-{r}", sub="newcomer")) == 200)
    problems = [] if admitted == rounds else [
        f"session hoard: {rounds - admitted} of {rounds} other tenants refused a session"]
    return (f"session hoard: {opened} sessions of 4 tenants, then {admitted}/{rounds} other "
            f"tenants opened one", problems, None)


COMPACT_INTERVAL = 30.0  # one compaction per tenant this often (src/transport/http_compact.rs)
# A's worst ingest while B compacts and loops: the bound the phase holds
# (before compaction ran in short writes and was paced, A's worst was 540 ms
# and its loop ran 18 times slower).
FAIR_WORST_INGEST = 2.0
FAIR_WORDS = ("harbour ferry orchard station library telescope survey tide wind archive "
              "ledger garden bridge market council river meadow signal lantern quarry").split()


def fair_document(d, paragraphs=500):
    """~500 KB of ~1 KB paragraphs (about two chunks each), as
    `scripts/bench_compact_fairness.py` writes them."""
    return "\n\n".join(
        f"Record {d}-{c}: "
        + " ".join(FAIR_WORDS[(d * 7 + c + k) % len(FAIR_WORDS)] for k in range(140)) + "."
        for c in range(paragraphs))


def fd_targets(pid):
    """What a process's descriptors point at."""
    targets = []
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                pass
    except OSError:
        pass
    return targets


def json_call(addr, method, path, tok, body=None, timeout=300):
    """(status, headers, JSON or None); a refusal for the caller's rate is
    waited out as its Retry-After says."""
    data = None if body is None else json.dumps(body).encode()
    while True:
        try:
            status, hdrs, answer = http_request(addr, method, path, bearer(tok), data, timeout)
        except (OSError, EOFError, ValueError) as e:
            return repr(e), [], None
        if status == 429 and error_code(answer) == "rate_limited":
            time.sleep(float(header(hdrs, "retry-after") or 1))
            continue
        try:
            return status, hdrs, json.loads(answer)
        except ValueError:
            return status, hdrs, None


def phase_compaction(ctx):
    """Tenant B (an admin) holds 25,000 x scale chunks; tenant A loops ingest
    (`wait: true`) then query throughout. B forgets its middle document
    (so about half the vector slots move) and compacts once; then for 10 s
    x scale B loops ingest, forget and compact, each compaction within
    `COMPACT_INTERVAL` of the first to be answered 429 `compaction_too_soon`
    with a `Retry-After` of at most the interval. A is never refused and
    its worst ingest stays under `FAIR_WORST_INGEST`."""
    addr = ctx.addr
    a_tok = token(tenant="fair-a", sub="a")
    b_tok = token(tenant="fair-b", sub="b")
    problems = []
    t0 = time.time()
    docs = []
    pid = ctx.api.p.pid
    fds_before = set(fd_targets(pid))
    for d in range(scaled(25, ctx.scale)):
        status, _, out = json_call(addr, "POST", "/v1/ingest", b_tok,
                                   {"content": fair_document(d), "wait": True})
        if status != 200 or not out:
            return (f"compaction: B's ingest answered {status}",
                    [f"compaction: B's bulk ingest answered {status}"], None)
        docs.append(out["document_id"])
    _, _, st = json_call(addr, "GET", "/v1/status", b_tok)
    chunks = (st or {}).get("chunks", "?")
    filled = time.time() - t0
    samples = []  # (start, latency) of A's ingests
    a_failed = collections.Counter()
    a_iterations = [0]
    stop = threading.Event()

    def tenant_a():
        i = 0
        while not stop.is_set():
            t = time.time()
            status, _, _ = json_call(addr, "POST", "/v1/ingest", a_tok, {
                "content": f"Note {i}: the {FAIR_WORDS[i % 20]} opened at {i % 24}h.",
                "wait": True})
            samples.append((t, time.time() - t))
            if status != 200:
                a_failed[status] += 1
            status, _, _ = json_call(addr, "POST", "/v1/query", a_tok,
                                     {"query": f"when did note {i} open"})
            if status != 200:
                a_failed[status] += 1
            a_iterations[0] += 1
            i += 1

    def worst(start, end):
        return max((d for t, d in samples if t <= end and t + d >= start), default=0.0)

    # The two tenants' memories stay open (their vector files): idle is
    # measured again with them, after A's first writes and queries.
    json_call(addr, "POST", "/v1/ingest", a_tok, {"content": "A first note.", "wait": True})
    json_call(addr, "POST", "/v1/query", a_tok, {"query": "first note"})
    ctx.rebased_idle = idle_footprint(pid, 2)
    log(f"http: compaction: idle now {fp_text(ctx.rebased_idle)}, descriptors opened: "
        f"{sorted(set(fd_targets(pid)) - fds_before)}")
    a = threading.Thread(target=tenant_a, daemon=True)
    a.start()
    time.sleep(2)
    status, _, _ = json_call(addr, "DELETE", f"/v1/documents/{docs[len(docs) // 2]}", b_tok)
    if status != 200:
        problems.append(f"compaction: B's forget answered {status}")
    time.sleep(1)
    c0 = time.time()
    status, _, out = json_call(addr, "POST", "/v1/compact", b_tok, {})
    c1 = time.time()
    rows = ""
    if status != 200:
        problems.append(f"compaction: B's first compaction answered {status} {out}")
    elif out:
        rows = f" ({out.get('vector_rows_before', '?')} -> {out.get('vector_rows_after', '?')} " \
               "vector rows)"
    too_soon = other = 0
    longest_retry = 0
    loop_end = time.time() + scaled(10, ctx.scale)
    i = 0
    while time.time() < loop_end:
        i += 1
        status, _, out = json_call(addr, "POST", "/v1/ingest", b_tok,
                                   {"content": f"Passing note {i} about the {FAIR_WORDS[i % 20]}.",
                                    "wait": True})
        if status == 200:
            json_call(addr, "DELETE", f"/v1/documents/{out['document_id']}", b_tok)
        status, hdrs, out = json_call(addr, "POST", "/v1/compact", b_tok, {})
        retry = header(hdrs, "retry-after")
        if (status == 429 and (out or {}).get("error", {}).get("code") == "compaction_too_soon"
                and retry and retry.isdigit() and 0 < int(retry) <= COMPACT_INTERVAL):
            too_soon += 1
            longest_retry = max(longest_retry, int(retry))
        else:
            other += 1
            if other <= 3:
                problems.append(f"compaction: a second compaction within COMPACT_INTERVAL "
                                f"answered {status} {out} (Retry-After {retry})")
        time.sleep(0.05)
    stop.set()
    a.join()
    during = worst(c0, c1)
    before = max((d for t, d in samples if t + d < c0), default=0.0)
    overall = max((d for _, d in samples), default=0.0)
    if a_failed:
        problems.append(f"compaction: tenant A's requests answered {dict(a_failed)}")
    if overall >= FAIR_WORST_INGEST:
        problems.append(f"compaction: tenant A's worst ingest {overall:.2f} s "
                        f"(bound {FAIR_WORST_INGEST:.0f} s)")
    return (f"compaction: B {chunks} chunks ({filled:.0f} s to ingest), one compaction "
            f"{c1 - c0:.2f} s{rows}, A's worst ingest during it {during * 1000:.0f} ms (before "
            f"it {before * 1000:.0f} ms); {too_soon + other} more compactions within "
            f"COMPACT_INTERVAL, {too_soon} answered 429 compaction_too_soon (Retry-After at "
            f"most {longest_retry} s), {other} otherwise; A {a_iterations[0]} iterations, "
            f"worst ingest {overall * 1000:.0f} ms, refused {sum(a_failed.values())}",
            problems, None)


PHASES = [
    ("huge lengths", phase_huge),
    ("HTTP/2.0", phase_http2),
    ("slowloris", phase_slowloris),
    ("conflicting lengths", phase_conflicting),
    ("unauthenticated flood", phase_unauth_flood),
    ("authenticated flood", phase_auth_flood),
    ("one token", phase_sse_share),
    ("vanished clients", phase_sse_vanish),
    ("pipelined", phase_pipelined),
    ("session hoard", phase_session_hoard),
    ("dispatch share", phase_dispatch_share),
    ("compaction", phase_compaction),
]


class Ctx:
    pass


def raise_own_descriptor_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def family_http(args, seed):
    raise_own_descriptor_limit()
    started = time.time()
    data_dir = tempfile.mkdtemp(prefix="alayasiki-fault-http-")
    api = Api(binary_path(args, "alayasiki-api"), data_dir, descriptors=DESCRIPTORS,
              env={"ALAYASIKI_API_RATE": "100", "ALAYASIKI_API_BURST": "200"},
              log_level="warn")
    ctx = Ctx()
    ctx.api, ctx.addr, ctx.scale = api, api.addr, args.scale
    ctx.tok = token(sub="owner")
    # Set by the conflicting-lengths attack; held if it is not run.
    ctx.conflicting_ok = bool(args.phases) and "conflicting lengths" not in args.phases
    pid = api.p.pid
    problems = []
    texts = []
    wb = WellBehaved(api.addr, token(sub="well-behaved"))
    sampler = ctx.sampler = Sampler(pid)
    try:
        # Load what loads once (the embedding model at the first query; the
        # pool of idle read connections, filled by concurrent queries), then
        # the idle footprint.
        wb.one()
        wb.one()
        parallel(600, 64, lambda i: http_request(
            api.addr, "POST", "/v1/query", bearer(token(sub=f"warm-{i}")), QUERY))
        SseStream(api.addr, ctx.tok).close()
        http_request(api.addr, "GET", "/health")
        writers_become(pid, 0, 2)
        idle = ctx.idle = first_idle = idle_footprint(pid)
        wb.served = 0
        wb.start()
        sampler.start()
        after = idle
        for name, phase in PHASES:
            if args.phases and name not in args.phases:
                continue
            sampler.phase = None
            wb.resume()
            t0 = time.time()
            ctx.rebased_idle = None
            text, probs, cleanup = phase(ctx)
            wb.pause()
            if ctx.rebased_idle:  # what the attack keeps open by design
                idle = ctx.idle = ctx.rebased_idle
            during = sampler.sample()
            if not api.running():
                problems.append(f"{name}: the server exited ({api.p.returncode})")
                texts.append(text)
                break
            after, took, back = settle(pid, idle, 30)
            if not back:
                probs.append(f"{name}: {fp_text(after)} 30 s after, idle {fp_text(idle)}")
            if cleanup:
                probs += cleanup()
            log(f"http: {text}; during {fp_text(during)}, after {fp_text(after)} "
                f"({took:.1f} s to settle); {time.time() - t0:.0f} s"
                + "".join(f"\n  {p}" for p in probs))
            texts.append(text)
            problems += probs
        # A last well-behaved request once everything settled.
        wb.resume()
        time.sleep(0.5)
        wb.pause()
        wb.stopped.set()
        if not api.running():
            problems.append(f"the server exited ({api.p.returncode})")
        if api.flags.get("panicked"):
            problems.append("the server's stderr says it panicked")
        if wb.failed:
            problems.append(f"well-behaved client failed {wb.failed}: {wb.failures[:3]}")
        final, _, back = settle(pid, idle, 30)
        if not back:
            problems.append(f"not back to idle: {fp_text(final)}, idle {fp_text(idle)}")
        peak = sampler.peak
    finally:
        sampler.stopped.set()
        wb.stopped.set()
        api.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    held = not problems and ctx.conflicting_ok
    rss_note = "" if final and final[2] <= idle[2] + SLACK_RSS_KIB else " (RSS over idle + 8 MiB)"
    print(f"http: {'; '.join(texts)}; well-behaved served {wb.served}, deferred {wb.deferred}, "
          f"failed {wb.failed}; threads/descriptors/RSS idle {fp_text(first_idle)}"
          + (f" ({fp_text(idle)} once the compaction's tenants were open)"
             if idle != first_idle else "") + ", peak "
          f"{fp_text(peak)}, after {fp_text(final)}{rss_note}; server "
          f"{'up' if api.p.returncode in (0, -15, None) else 'exited'}; "
          f"{time.time() - started:.0f} s; {'held' if held else 'FAILED'}"
          + "".join(f"\n  {p}" for p in problems), flush=True)
    return held


# --------------------------------------------------- amplification family

NUMBERS = ",".join(["1"] * 4_000_000)


def flattening_document():
    """60 levels of 100-byte keys over 20,000 leaves: ~120 KB of JSON whose
    flattened text (each leaf under its full key path) is ~500 times that."""
    key = "k" * 100
    doc = "".join(f'{{"{key}": ' for _ in range(60))
    doc += "[" + ",".join(str(i % 10) for i in range(20_000)) + "]"
    return doc + "}" * 60


def family_amplification(args, seed):
    started = time.time()
    problems = []
    parts = []
    dirs = [tempfile.mkdtemp(prefix=f"alayasiki-fault-amp{i}-") for i in range(4)]
    doc = flattening_document()
    try:
        # ---- HTTP: bodies of small numbers, 48 at once, then flattening JSON.
        api = Api(binary_path(args, "alayasiki-api"), dirs[0], log_level="warn")
        try:
            tok = token(sub="amplifier")
            http_request(api.addr, "GET", "/v1/status", bearer(tok))
            idle = status_kib(api.p.pid, "VmRSS")
            body = ('{"File": {"content": [' + NUMBERS + ']}}').encode()
            rounds = scaled(10, args.scale)
            got = collections.Counter()

            callers = [bearer(token(sub=f"amplifier-{k}")) for k in range(4)]

            def post(i):
                try:
                    status, _, data = http_request(api.addr, "POST", "/v1/ingest",
                                                   callers[i % 4], body, timeout=60)
                except (OSError, EOFError, ValueError) as e:
                    return f"no answer ({type(e).__name__})"
                return f"{status} {error_code(data)}"

            for _ in range(rounds):
                got.update(parallel(48, 48, post))
            allowed = ("413 body_too_costly", "503", "429")
            bad = {k: v for k, v in got.items() if not k.startswith(allowed)}
            if bad:
                problems.append(f"HTTP bodies of numbers answered {bad}")
            flat_n = scaled(50, args.scale)
            flat = parallel(flat_n, 4, lambda _: http_request(
                api.addr, "POST", "/v1/ingest", bearer(tok),
                json.dumps({"content": doc, "media_type": "application/json"}).encode()))
            flat_refused = sum(1 for s, _, b in flat if s == 400 and b"MAX_JSON_EXPANSION" in b)
            if flat_refused != flat_n:
                problems.append(f"HTTP flattening JSON: {flat_n - flat_refused} not refused: "
                                f"{[(s, b[:200]) for s, _, b in flat][:2]}")
            http_grew = status_kib(api.p.pid, "VmHWM") - idle
            if http_grew >= 600 * 1024:
                problems.append(f"HTTP peak RSS grew by {http_grew / 1024:.0f} MiB")
            _, st = api.request("GET", "/v1/status", tok)
            if not api.running() or (st or {}).get("documents") != 0:
                problems.append(f"HTTP server after the bodies: running {api.running()}, "
                                f"status {st}")
            if api.flags.get("panicked"):
                problems.append("alayasiki-api panicked")
            parts.append(f"HTTP {48 * rounds} bodies of 4M numbers, 48 at once "
                         f"({counter_text(got)}), flattening JSON refused {flat_refused}/"
                         f"{flat_n}, peak RSS growth {http_grew / 1024:.0f} MiB")
        finally:
            api.stop()

        # ---- stdio: frames of small numbers, then flattening JSON.
        c = Stdio(binary_path(args, "alayasiki-mcp"), dirs[1], capture=True, log_level="warn")
        try:
            c.initialize()
            baseline = status_kib(c.p.pid, "VmHWM")
            frames = scaled(400, args.scale)
            head = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":' \
                   b'"alayasiki_ingest","arguments":{"File":{"content":['
            tail = b']}}}}\n'
            numbers = NUMBERS.encode()
            for i in range(frames):
                if not c.send_raw(head % (i + 1) + numbers + tail):
                    break
            c.next_id = frames
            frame_refused = 0
            for _ in range(frames):
                r = c.next_reply(120)
                if not isinstance(r, dict):
                    problems.append(f"stdio numbers: no reply ({r})")
                    break
                if "MAX_PARSED_MESSAGE_BYTES" in r.get("error", {}).get("message", ""):
                    frame_refused += 1
                elif len(problems) < 8:
                    problems.append(f"stdio numbers: not refused by its cost: {str(r)[:200]}")
            stdio_grew = status_kib(c.p.pid, "VmHWM") - baseline
            if stdio_grew >= 120 * 1024:
                problems.append(f"stdio peak RSS grew by {stdio_grew / 1024:.0f} MiB")
            flat_n = scaled(50, args.scale)
            flat_refused = 0
            for _ in range(flat_n):
                r = c.call("tools/call", {"name": "alayasiki_ingest", "arguments": {
                    "content": doc, "media_type": "application/json"}})
                res = r.get("result", {})
                text = json.dumps(r)
                if res.get("isError") and "MAX_JSON_EXPANSION" in text:
                    flat_refused += 1
                elif len(problems) < 8:
                    problems.append(f"stdio flattening JSON not refused: {text[:200]}")
            st = c.tool("alayasiki_status", {})
            if st.get("documents") != 0:
                problems.append(f"stdio: documents {st.get('documents')} after refusals")
            rc, _ = c.close()
            if rc != 0 or c.flags.get("panicked"):
                problems.append(f"alayasiki-mcp (numbers) exit {rc}, panicked "
                                f"{c.flags.get('panicked', 0)}")
            parts.append(f"stdio {frames} frames of 4M numbers (refused {frame_refused}), "
                         f"flattening JSON refused {flat_refused}/{flat_n}, peak RSS growth "
                         f"{stdio_grew / 1024:.0f} MiB")
        finally:
            c.kill()

        # ---- stdio: a backlog of pipelined calls with a ping behind it.
        c = Stdio(binary_path(args, "alayasiki-mcp"), dirs[2], capture=True, log_level="warn")
        try:
            calls = scaled(80_000, args.scale)
            burst = [json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                                 "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                                            "clientInfo": {"name": "flood", "version": "1"}}}),
                     '{"jsonrpc":"2.0","method":"notifications/initialized"}']
            for i in range(calls):
                burst.append(json.dumps({
                    "jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "alayasiki_ingest",
                               "arguments": {"content": f"flood note {i} about the pumps"}}}))
            burst.append('{"jsonrpc":"2.0","id":"ping","method":"ping"}')
            data = ("\n".join(burst) + "\n").encode()
            sent = time.time()
            c.send_raw(data)
            written = time.time() - sent
            answered = busy = errors = 0
            ping_after = None
            while answered + busy < calls or ping_after is None:
                r = c.next_reply_timed(120)
                if r is None or r == "closed":
                    problems.append(f"pipelined: the server stopped answering ({r}) after "
                                    f"{answered + busy} replies")
                    break
                at, msg = r
                rid = msg.get("id") if isinstance(msg, dict) else None
                if rid == "ping":
                    ping_after = at - sent
                elif isinstance(rid, str):
                    pass
                elif msg.get("error", {}).get("code") == -32000:
                    busy += 1
                else:
                    answered += 1
                    errors += bool(msg.get("result", {}).get("isError"))
            peak = status_kib(c.p.pid, "VmHWM")
            drained = time.time() - sent
            if ping_after is None or ping_after >= written + 2:
                problems.append(f"pipelined: ping answered {ping_after} s after the burst began "
                                f"(written in {written:.2f} s)")
            if busy == 0:
                problems.append("pipelined: the backlog never reached STDIO_QUEUE")
            if answered < 1024:
                problems.append(f"pipelined: only {answered} queued calls served")
            if peak >= 300 * 1024:
                problems.append(f"pipelined: peak RSS {peak / 1024:.0f} MiB")
            c.next_id = 1 << 40
            st = c.tool("alayasiki_status", {})
            if st.get("documents") != answered - errors:
                problems.append(f"pipelined: documents {st.get('documents')}, answered "
                                f"{answered} ({errors} errors)")
            rc, _ = c.close()
            if rc != 0 or c.flags.get("panicked"):
                problems.append(f"alayasiki-mcp (pipelined) exit {rc}, panicked "
                                f"{c.flags.get('panicked', 0)}")
            ping_text = f"{ping_after * 1000:.0f} ms" if ping_after is not None else "never"
            parts.append(f"pipelined {calls} calls (served {answered}, busy {busy}), ping "
                         f"answered {ping_text} after the burst began (written in "
                         f"{written * 1000:.0f} ms, backlog drained in {drained:.0f} s), "
                         f"peak RSS {peak / 1024:.0f} MiB")
        finally:
            c.kill()

        # ---- stdio: a stderr pipe nobody reads, every log line written.
        c = Stdio(binary_path(args, "alayasiki-mcp"), dirs[3], log_level="trace", unread=True)
        try:
            c.initialize()
            writes = scaled(3000, args.scale)
            slowest = 0.0
            t0 = time.time()
            for i in range(writes):
                t1 = time.time()
                try:
                    r = c.call("tools/call", {"name": "alayasiki_ingest", "arguments": {
                        "content": f"note {i}: the valve on line {i} was replaced"}}, timeout=10)
                except RuntimeError:
                    problems.append(f"stderr unread: ingest {i} stalled (no reply in 10 s)")
                    break
                slowest = max(slowest, time.time() - t1)
                if '"ready"' not in reply_text(r)[1]:
                    problems.append(f"stderr unread: ingest {i}: {reply_text(r)[1][:200]}")
                    break
            parts.append(f"stderr unread with ALAYASIKI_LOG=trace: {writes} ingests in "
                         f"{time.time() - t0:.0f} s, slowest {slowest * 1000:.0f} ms")
        finally:
            c.kill()
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    held = not problems
    print(f"amplification: {'; '.join(parts)}; {time.time() - started:.0f} s; "
          f"{'held' if held else 'FAILED'}" + "".join(f"\n  {p}" for p in problems), flush=True)
    return held


# ------------------------------------------------------------ disk family

EXT4_IOC_SHUTDOWN = 0x8004587D
EXT4_GOING_FLAGS_NOLOGFLUSH = 2


def run(*cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class DiskCounts:
    def __init__(self):
        self.c = collections.Counter()
        self.fs_loses = {}  # fault -> probes in which ext4 lost fdatasync'd data
        self.kinds = collections.Counter()  # problem kind -> times
        self.first = {}  # problem kind -> its first instance

    def problem(self, what):
        """Notes a problem; the same kind (the text up to its first colon,
        digits aside) is reported once, with how often it happened."""
        self.c["problems"] += 1
        kind = "".join(ch for ch in what.split(": ", 2)[0] + ": " + what.split(": ", 2)[1][:40]
                       if not ch.isdigit()) if what.count(": ") >= 1 else what
        self.kinds[kind] += 1
        self.first.setdefault(kind, what)

    def report(self):
        return [f"{n} x {self.first[k][:400]}" for k, n in self.kinds.most_common()]


class Mounts:
    """Mount points and loop devices made by a cycle, removed by `clean`."""

    def __init__(self):
        self.points = []  # innermost last
        self.loops = []
        self.dirs = []

    def tmpfs(self, size):
        at = tempfile.mkdtemp(prefix="alayasiki-fault-disk-")
        self.dirs.append(at)
        r = run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", at)
        if r.returncode != 0:
            raise RuntimeError(f"mount tmpfs: {r.stderr.decode().strip()}")
        self.points.append(at)
        return at

    def loop_ext4(self, size):
        backing = self.tmpfs(size + (4 << 20))
        image = os.path.join(backing, "disk.img")
        with open(image, "wb") as f:
            f.truncate(size)
        r = run("losetup", "-f", "--show", image)
        if r.returncode != 0:
            raise RuntimeError(f"losetup: {r.stderr.decode().strip()}")
        device = r.stdout.decode().strip()
        self.loops.append(device)
        r = run("mkfs.ext4", "-q", "-F", device)
        if r.returncode != 0:
            raise RuntimeError(f"mkfs.ext4: {r.stderr.decode().strip()}")
        at = tempfile.mkdtemp(prefix="alayasiki-fault-ext4-")
        self.dirs.append(at)
        self.mount(device, at, "errors=remount-ro")
        return device, at

    def mount(self, device, at, options):
        r = run("mount", "-o", options, device, at)
        if r.returncode != 0:
            raise RuntimeError(f"mount -o {options}: {r.stderr.decode().strip()}")
        self.points.append(at)

    def umount(self, at):
        r = run("umount", at)
        if r.returncode != 0:
            raise RuntimeError(f"umount {at}: {r.stderr.decode().strip()}")
        self.points.remove(at)

    def clean(self):
        for at in reversed(self.points):
            run("umount", at)
            if os.path.ismount(at):
                run("umount", "-l", at)
        self.points = []
        for device in self.loops:
            run("losetup", "-d", device)
        self.loops = []
        for d in self.dirs:
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.dirs = []


def reply_text(msg):
    """(is an error, the text a client sees) of a tools/call reply."""
    if not isinstance(msg, dict):
        return True, repr(msg)
    if "error" in msg:
        return True, json.dumps(msg["error"])
    res = msg.get("result", {})
    content = res.get("content") or [{}]
    return bool(res.get("isError")), content[0].get("text", json.dumps(res))


def judge(counts, data, fault, msg, took, server=None):
    """Checks one reply during a disk fault; whether it was a refusal."""
    is_error, text = reply_text(msg)
    raw = json.dumps(msg)
    if not is_error:
        # The local stdio identity is an admin, told the data directory by
        # alayasiki_status; anywhere else the path is a leak.
        try:
            shown = json.loads(text)
            if isinstance(shown, dict) and shown.get("data_dir") == data:
                del shown["data_dir"]
                raw = json.dumps(shown)
        except ValueError:
            pass
    if took >= 10:
        counts.c["slow"] += 1
        counts.problem(f"{fault}: a reply took {took:.1f} s: {raw[:200]}")
    internal = "internal" in raw
    if internal:
        counts.c["internal"] += 1
        # The server's log says what the client is not told.
        why = ""
        if server is not None:
            time.sleep(0.2)
            why = "; server log: " + " | ".join(
                line.strip()[:200] for line in list(server.err) if "ERROR" in line)[-600:]
        counts.problem(f"{fault}: 'internal' in {raw[:300]}{why}")
    if data in raw:
        counts.c["leaks"] += 1
        counts.problem(f"{fault}: the data directory in {raw[:300]}")
    if is_error and not internal:
        named = [f for f in ("full", "failing", "read-only")
                 if f"unavailable: storage {f}" in text]
        if fault not in named:
            if named and fault != "full":
                # An in-flight write may meet the other face of the same
                # fault (ext4 answers EIO while it turns read-only).
                counts.c[f"named {named[0]} on a {fault} disk"] += 1
            else:
                counts.c["unnamed"] += 1
                counts.problem(f"{fault}: a refusal not naming the disk: {text[:200]}")
    return is_error


def failed_jobs(data_dir):
    """(kind, attempts, error) of the failed jobs in a store."""
    conn = sqlite3.connect(f"file:{os.path.join(data_dir, 'memory.db')}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT kind, attempts, error FROM jobs WHERE state = 'failed'"
                            ).fetchall()
    except sqlite3.Error as e:
        return [("?", "?", str(e))]
    finally:
        conn.close()


def check_all_there(counts, c, fault, data, t):
    """Waits for the backlog, then each acknowledged marker must be found
    in exactly its own document, no refused one at all, and nothing else
    stored (a write whose reply never came may be)."""
    deadline = time.time() + 30
    while True:
        st = c.tool("alayasiki_status", {})
        if st["jobs"]["pending"] == 0 or time.time() > deadline:
            break
        time.sleep(0.2)
    if st["jobs"]["pending"] or st["jobs"]["failed"]:
        counts.c["jobs"] += 1
        counts.problem(f"{fault}: jobs pending {st['jobs']['pending']}, failed "
                       f"{st['jobs']['failed']}: {failed_jobs(data)[:3]}")

    def found(marker):
        hits = c.tool("alayasiki_query", {"query": marker, "mode": "evidence", "top_k": 100,
                                          "lanes": ["keyword"]})
        return {e["document_id"] for e in hits.get("evidence", [])
                if marker in (e.get("text") or "")}

    lost = 0
    for marker, doc_id in t.acked.items():
        ids = found(marker)
        if doc_id not in ids:
            lost += 1
            counts.c["lost"] += 1
            at = t.sent.get(marker)
            if at is not None and abs(at) <= RACE_WINDOW and counts.fs_loses.get(fault):
                # Committed as the error struck: ext4 itself loses data
                # fdatasync reported written at that moment (the probe).
                counts.c["lost at the error"] += 1
                log(f"disk: {fault}: {marker} ({doc_id}) lost at the error; {t.info[marker]}")
            else:
                counts.problem(f"{fault}: {marker} ({doc_id}) lost; {t.info.get(marker, '')}")
        if len(ids) > 1:
            counts.c["duplicated"] += 1
            counts.problem(f"{fault}: {marker} in {len(ids)} documents")
    stored_refused = 0
    for marker, text in t.refused.items():
        if found(marker):
            stored_refused += 1
            counts.c["refused yet stored"] += 1
            counts.problem(f"{fault}: a write refused ({text[:80]}) was stored")
    stored_unanswered = sum(1 for marker in t.unanswered if found(marker))
    counts.c["unanswered"] += len(t.unanswered)
    counts.c["unanswered, stored"] += stored_unanswered
    extra = st["documents"] - (len(t.acked) - lost) - stored_refused - stored_unanswered
    if extra:
        counts.c["extra"] += extra
        counts.problem(f"{fault}: {st['documents']} documents, {len(t.acked)} acknowledged "
                       f"({lost} lost), {stored_refused} refused yet stored, "
                       f"{stored_unanswered} unanswered yet stored")


class Tally:
    """What one server run on one disk was told: acknowledged markers (to
    their documents), refused ones (to the refusal) and unanswered ones,
    with writes refused as unconfirmed (committed, sync failed: they may be
    stored) counted among the unanswered."""

    def __init__(self):
        self.acked, self.refused, self.unanswered = {}, {}, []
        self.info = {}  # marker -> when it was sent and answered, relative to the fault
        self.sent = {}  # marker -> when it was sent, relative to the fault

    def refuse(self, marker, text):
        if "may or may not have been stored" in text:
            self.unanswered.append(marker)
        else:
            self.refused[marker] = text


def start_ready(binary, data):
    c = Stdio(binary, data, capture=True, log_level="warn")
    c.initialize()
    return c


def close_cleanly(counts, c, fault):
    rc, took = c.close(timeout=90)
    if rc != 0 or took >= 10 or c.flags.get("panicked"):
        counts.c["unclean exits"] += 1
        counts.problem(f"{fault}: exit {rc} after {took:.1f} s, panicked "
                       f"{c.flags.get('panicked', 0)}: {list(c.err)[-3:]}")


def ingest_acked(counts, c, data, fault, t, marker, content, wait=True):
    """One ingest, judged and tallied; whether it was acknowledged."""
    t0 = time.time()
    rid = c.send("tools/call", {"name": "alayasiki_ingest",
                                "arguments": {"content": content, "wait": wait}})
    while True:
        r = c.next_reply(90)
        if not isinstance(r, dict):
            counts.problem(f"{fault}: no reply to an ingest in 90 s ({r})")
            t.unanswered.append(marker)
            return False
        if r.get("id") == rid:
            break
    if judge(counts, data, fault, r, time.time() - t0, c):
        counts.c["refused"] += 1
        counts.c[f"{fault} refused"] += 1
        t.refuse(marker, reply_text(r)[1])
        return False
    receipt = json.loads(reply_text(r)[1])
    counts.c["acknowledged"] += 1
    counts.c[f"{fault} acknowledged"] += 1
    if receipt.get("state") == "pending" and fault == "full" and wait:
        counts.c["deferred"] += 1
        if "storage full" not in (receipt.get("error") or ""):
            counts.problem(f"full: a pending receipt not naming the full disk: {receipt}")
    t.acked[marker] = receipt["document_id"]
    return True


def cycle_full(counts, binary, rng, n):
    m = Mounts()
    try:
        disk = m.tmpfs(6 << 20)
        data = os.path.join(disk, "memory")
        c = start_ready(binary, data)
        t = Tally()
        try:
            for i in range(5):
                marker = f"fullseed{n}x{i}q"
                ingest_acked(counts, c, data, "full", t, marker,
                             f"{marker}: seed note about the north pumps")
            # Fill the disk but for a little slack, then ingest until refused.
            filler = os.path.join(disk, "filler")
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            try:
                while os.write(fd, b"\1" * 65536):
                    pass
            except OSError:
                pass
            finally:
                os.close(fd)
            slack = rng.choice([64 << 10, 256 << 10, 1 << 20])
            os.truncate(filler, max(0, os.path.getsize(filler) - slack))
            big = "the pump log line repeats here. " * 600
            refusals = 0
            for i in range(400):
                marker = f"fullnote{n}x{i}q"
                if not ingest_acked(counts, c, data, "full", t, marker,
                                    f"{marker} full-disk note: {big}", wait=rng.random() < 0.7):
                    refusals += 1
                    if refusals >= 3:
                        break
            if not t.refused:
                counts.problem("full: the disk never refused a write")
            t0 = time.time()
            r = c.call("tools/call", {"name": "alayasiki_query",
                                      "arguments": {"query": "north pumps", "mode": "evidence"}})
            if judge(counts, data, "full", r, time.time() - t0, c):
                counts.problem(f"full: a query was refused: {reply_text(r)[1][:200]}")
            # Space returns: no restart.
            os.remove(filler)
            marker = f"fullafter{n}q"
            if not ingest_acked(counts, c, data, "full", t, marker,
                                f"{marker} after the disk was freed"):
                counts.problem("full: a write was refused after the disk was freed")
            check_all_there(counts, c, "full", data, t)
            close_cleanly(counts, c, "full")
        finally:
            c.kill()
    finally:
        m.clean()


def shutdown_fs(at):
    fd = os.open(at, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, EXT4_IOC_SHUTDOWN, struct.pack("I", EXT4_GOING_FLAGS_NOLOGFLUSH))
    finally:
        os.close(fd)


def trigger_error(device):
    with open(f"/sys/fs/ext4/{os.path.basename(device)}/trigger_fs_error", "w") as f:
        f.write("fault_long\n")


def cycle_ext4(counts, binary, rng, n, fault):
    m = Mounts()
    try:
        device, at = m.loop_ext4(48 << 20)
        data = os.path.join(at, "memory")
        c = start_ready(binary, data)
        t = Tally()
        try:
            for i in range(6):
                marker = f"{fault[:4]}seed{n}x{i}q"
                ingest_acked(counts, c, data, fault, t, marker,
                             f"{marker} is a note about the east valves")
            # Ingests running (a window of them outstanding) when the disk fails.
            outstanding = {}
            fault_at = time.time() + rng.uniform(0.05, 0.8)
            stop_at = None
            k = after_fault = 0
            refused_here = 0
            while True:
                now = time.time()
                if stop_at is None and now >= fault_at:
                    if fault == "failing":
                        shutdown_fs(at)
                    else:
                        trigger_error(device)
                    fault_time = time.time()
                    stop_at = now + rng.uniform(0.5, 1.5)
                sending = (stop_at is None or now < stop_at) and after_fault < 200
                while sending and len(outstanding) < WINDOW:
                    k += 1
                    marker = f"{fault[:4]}run{n}x{k}q"
                    content = f"{marker} written as the disk {fault}"
                    if rng.randrange(4) == 0:
                        content += " The valve log repeats its readings. " * 300
                    wait = rng.random() < 0.5
                    rid = c.send("tools/call", {"name": "alayasiki_ingest", "arguments": {
                        "content": content, "wait": wait}})
                    outstanding[rid] = (marker, time.time(), wait)
                    after_fault += stop_at is not None
                if not sending and not outstanding:
                    break
                r = c.next_reply(0.02 if sending else 90)
                if r == "closed" or (r is None and not sending):
                    counts.problem(f"{fault}: {len(outstanding)} ingests unanswered after 90 s"
                                   if r is None else f"{fault}: the server exited")
                    t.unanswered += [m_ for m_, _ in outstanding.values()]
                    break
                if not isinstance(r, dict):
                    continue
                item = outstanding.pop(r.get("id"), None)
                if item is None:
                    continue
                if judge(counts, data, fault, r, time.time() - item[1], c):
                    counts.c["refused"] += 1
                    counts.c[f"{fault} refused"] += 1
                    refused_here += 1
                    t.refuse(item[0], reply_text(r)[1])
                else:
                    receipt = json.loads(reply_text(r)[1])
                    counts.c["acknowledged"] += 1
                    counts.c[f"{fault} acknowledged"] += 1
                    t.acked[item[0]] = receipt["document_id"]
                    if stop_at is not None:
                        t.sent[item[0]] = item[1] - fault_time
                        t.info[item[0]] = (f"wait {item[2]}, sent {item[1] - fault_time:+.3f} s "
                                           f"and answered {time.time() - fault_time:+.3f} s from "
                                           f"the fault, {receipt}")
            if refused_here == 0:
                counts.problem(f"{fault}: no write was refused")
            for tool, a in (("alayasiki_query", {"query": "east valves", "mode": "evidence"}),
                            ("alayasiki_status", {})):
                t0 = time.time()
                r = c.call("tools/call", {"name": tool, "arguments": a})
                refused = judge(counts, data, fault, r, time.time() - t0, c)
                if fault == "read-only" and refused:
                    counts.problem(f"read-only: {tool} refused: {reply_text(r)[1][:200]}")
            close_cleanly(counts, c, fault)
        finally:
            c.kill()
        if fault == "read-only":
            # A start on a read-only mount is refused, saying why.
            m.umount(at)
            m.mount(device, at, "ro")
            env = dict(os.environ, ALAYASIKI_LOG="warn")
            env.pop("ALAYASIKI_DATA_DIR", None)
            out = subprocess.run([binary, "--data-dir", data], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                 timeout=60)
            err = out.stderr.decode(errors="replace")
            if out.returncode != 0 and "Read-only file system" in err and "panicked" not in err:
                counts.c["read-only starts refused"] += 1
            else:
                counts.problem(f"read-only: a start answered {out.returncode}: {err[-300:]}")
        m.umount(at)
        m.mount(device, at, "errors=remount-ro")
        verdict = integrity(data)
        if verdict != "ok":
            counts.c["integrity failures"] += 1
            counts.problem(f"{fault}: integrity_check {verdict}")
        c = start_ready(binary, data)
        try:
            check_all_there(counts, c, fault, data, t)
            close_cleanly(counts, c, fault)
        finally:
            c.kill()
    finally:
        m.clean()


RACE_WINDOW = 0.1  # s either side of the fault


def probe_fs(fault, trials, rng):
    """The file system alone: a file appended to and fdatasync'd in a loop
    while the fault strikes, then unmounted and mounted again. In how many
    trials it came back shorter than the last fdatasync that succeeded."""
    lost = 0
    for _ in range(trials):
        m = Mounts()
        try:
            device, at = m.loop_ext4(48 << 20)
            path = os.path.join(at, "log")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT)
            synced = size = 0
            strike = threading.Timer(rng.uniform(0.05, 0.3),
                                     shutdown_fs if fault == "failing" else trigger_error,
                                     args=(at,) if fault == "failing" else (device,))
            strike.start()
            try:
                while True:
                    os.write(fd, b"\x5a" * 4000)
                    size += 4000
                    os.fdatasync(fd)
                    synced = size
            except OSError:
                pass
            strike.join()
            os.close(fd)
            m.umount(at)
            m.mount(device, at, "errors=remount-ro")
            lost += os.path.getsize(path) < synced
        finally:
            m.clean()
    return lost


def family_disk(args, seed):
    if os.geteuid() != 0:
        print("disk: skipped: needs root to mount file systems", flush=True)
        return True
    missing = [t for t in ("mount", "umount", "losetup", "mkfs.ext4") if not shutil.which(t)]
    if missing:
        print(f"disk: skipped: {', '.join(missing)} not found", flush=True)
        return True
    binary = binary_path(args, "alayasiki-mcp")
    cycles = scaled(10, args.scale)
    rng = random.Random(seed)
    counts = DiskCounts()
    started = time.time()
    probes = scaled(30, args.scale)
    for fault in ("failing", "read-only"):
        try:
            counts.fs_loses[fault] = probe_fs(fault, probes, rng)
        except (RuntimeError, OSError) as e:
            counts.problem(f"{fault}: the file-system probe failed: {e}")
    done = 0
    for n in range(cycles):
        t0 = time.time()
        for name, step in (("full", lambda: cycle_full(counts, binary, rng, n)),
                           ("failing", lambda: cycle_ext4(counts, binary, rng, n, "failing")),
                           ("read-only", lambda: cycle_ext4(counts, binary, rng, n, "read-only"))):
            try:
                step()
            except (RuntimeError, OSError, KeyError, ValueError, subprocess.SubprocessError) as e:
                counts.problem(f"{name}: cycle {n}: {type(e).__name__}: {e}")
        done += 1
        log(f"disk: cycle {n + 1}: {dict(counts.c)}, {time.time() - t0:.0f} s")
    c = counts.c
    held = c["problems"] == 0
    per = lambda what: ", ".join(f"{f} {c[f'{f} {what}']}" for f in ("full", "failing",
                                                                      "read-only"))
    other = "".join(f", {k} {v}" for k, v in sorted(c.items()) if k.startswith("named "))
    print(f"disk: cycles {done} (a full, a failing and a read-only disk each), writes "
          f"acknowledged {c['acknowledged']} ({per('acknowledged')}; pending on the full disk "
          f"{c['deferred']}), refused {c['refused']} ({per('refused')}{other}), unanswered "
          f"in 90 s or unconfirmed {c['unanswered']} (stored {c['unanswered, stored']}), "
          f"lost {c['lost']} "
          f"(sent within {RACE_WINDOW * 1000:.0f} ms of an ext4 fault that loses "
          f"fdatasync'd data by itself: {c['lost at the error']}; ext4 alone lost fdatasync'd "
          f"data in {counts.fs_loses.get('failing', '?')}/{probes} shutdown and "
          f"{counts.fs_loses.get('read-only', '?')}/{probes} read-only probes), "
          f"duplicated {c['duplicated']}, refused yet stored {c['refused yet stored']}, other "
          f"extra documents {c['extra']}, internal "
          f"{c['internal']}, path leaks {c['leaks']}, unnamed refusals {c['unnamed']}, replies "
          f"over 10 s {c['slow']}, unclean exits {c['unclean exits']}, read-only starts refused "
          f"{c['read-only starts refused']}/{done}, integrity failures "
          f"{c['integrity failures']}; {time.time() - started:.0f} s; "
          f"{'held' if held else 'FAILED'}" + "".join(f"\n  {p}" for p in counts.report()),
          flush=True)
    return held


# --------------------------------------------------------- cluster family

RQLITED_PINNED = os.path.join(ROOT, "target/rqlite/8.26.8-0/package/bin/rqlited")
ELECTION_TIMEOUT_MS = 500  # rqlited's Raft timeouts (tests/cluster_common)
CLUSTER_WRITE_WAIT = 5.0  # src/limits.rs: how long a write waits for a leader
CLUSTER_WRITE_DEADLINE = 30.0  # src/limits.rs: how long a write waits for its answer
CLUSTER_SLACK = 2.5  # a refused write's last request to the cluster, a loaded machine
CLUSTER_RECOVERY = 20.0  # writes must succeed this soon after a leader is back
CLUSTER_READS = 3  # reads made before the first write without quorum
CLUSTER_ELECTION = 60.0  # how long rqlite may take to elect a leader again (not ours to bound)


def rqlited_path():
    found = os.environ.get("ALAYASIKI_RQLITED") or (
        RQLITED_PINNED if os.path.exists(RQLITED_PINNED) else None)
    return found if found and os.path.exists(found) else None


def free_ports(n):
    """`n` distinct free ports, every listener held until all are chosen."""
    held = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        held.append(s)
    ports = [s.getsockname()[1] for s in held]
    for s in held:
        s.close()
    return ports


def get_json(url, timeout=2):
    host_port, path = url[len("http://"):].split("/", 1)
    host, port = host_port.split(":")
    try:
        conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
        conn.request("GET", "/" + path)
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return json.loads(body) if r.status == 200 else None
    except (OSError, http.client.HTTPException, ValueError):
        return None


class Rqlite:
    """Three `rqlited` voters on loopback (the first bootstraps, the others
    join it), each with its own directory under `root`."""

    def __init__(self, binary, root, n=3):
        self.binary, self.root = binary, root
        self.respawned = 0
        ports = free_ports(2 * n)
        self.nodes = [{"id": f"n{i}", "http": ports[2 * i], "raft": ports[2 * i + 1],
                       "p": None, "paused": False} for i in range(n)]
        for i in range(n):
            self.spawn(i)
            if i == 0:
                self.wait_for_leader(20)
        deadline = time.time() + 60
        while not (self.reachable() == n and self.leader() is not None):
            if time.time() > deadline:
                raise RuntimeError(f"{n} rqlite members not up within 60 s")
            time.sleep(0.1)

    def spawn(self, i, join=None):
        """Starts node i; it joins through node 0, or through `join` (raft
        addresses) when started again."""
        node = self.nodes[i]
        timeout = f"{ELECTION_TIMEOUT_MS}ms"
        cmd = [self.binary, "-node-id", node["id"],
               "-http-addr", f"127.0.0.1:{node['http']}",
               "-raft-addr", f"127.0.0.1:{node['raft']}",
               "-raft-timeout", timeout, "-raft-election-timeout", timeout]
        if join or i > 0:
            cmd += ["-join", join or f"127.0.0.1:{self.nodes[0]['raft']}"]
        out = open(os.path.join(self.root, f"{node['id']}.log"), "ab")
        node["p"] = subprocess.Popen(cmd + [os.path.join(self.root, node["id"])],
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        out.close()
        node["paused"] = False

    def address(self):
        return "rqlite://" + ",".join(f"127.0.0.1:{n['http']}" for n in self.nodes)

    def members(self, i):
        """Node i's view of the members: [(id, reachable, leader)]."""
        v = get_json(f"http://127.0.0.1:{self.nodes[i]['http']}/nodes?ver=2")
        if isinstance(v, dict) and isinstance(v.get("nodes"), list):
            return [(m.get("id"), m.get("reachable"), m.get("leader")) for m in v["nodes"]]
        if isinstance(v, dict):
            return [(k, m.get("reachable"), m.get("leader")) for k, m in v.items()
                    if isinstance(m, dict)]
        return None

    def reachable(self):
        return sum(1 for _, r, _ in (self.members(0) or []) if r)

    def leader(self):
        """The index of the node every running node agrees leads, or None."""
        seen = None
        for i, n in enumerate(self.nodes):
            if n["p"] is None or n["paused"]:
                continue
            leaders = [m for m, _, lead in (self.members(i) or []) if lead]
            if not leaders:
                return None
            at = next((j for j, o in enumerate(self.nodes) if o["id"] == leaders[0]), None)
            if at is None or (seen is not None and seen != at):
                return None
            seen = at
        return seen

    def restart(self, i):
        """Starts a killed node again on its directory, joining through
        every other node (the one it bootstrapped from may be down)."""
        self.spawn(i, ",".join(f"127.0.0.1:{n['raft']}" for j, n in enumerate(self.nodes)
                               if j != i))

    def wait_for_leader(self, within, what="rqlite"):
        deadline = time.time() + within
        while True:
            for i, n in enumerate(self.nodes):
                # A node started again exits when its join times out (no
                # leader to answer it yet): start it once more.
                if n["p"] is not None and n["p"].poll() is not None:
                    log(f"cluster: rqlited {n['id']} exited ({n['p'].returncode}); "
                        "starting it again")
                    self.respawned += 1
                    self.restart(i)
            leader = self.leader()
            if leader is not None:
                return leader
            if time.time() > deadline:
                raise RuntimeError(f"{what}: no rqlite leader within {within:.0f} s "
                                   f"(logs in {self.root})")
            time.sleep(0.1)

    def kill(self, i):
        p = self.nodes[i]["p"]
        if p is not None:
            if self.nodes[i]["paused"]:
                p.send_signal(signal.SIGCONT)
            p.kill()
            p.wait()
        self.nodes[i]["p"] = None
        self.nodes[i]["paused"] = False

    def pause(self, i):
        self.nodes[i]["p"].send_signal(signal.SIGSTOP)
        self.nodes[i]["paused"] = True

    def resume(self, i):
        self.nodes[i]["p"].send_signal(signal.SIGCONT)
        self.nodes[i]["paused"] = False

    def stop(self):
        for i in range(len(self.nodes)):
            self.kill(i)


def cluster_write(api, tok, key):
    """A write: (status, Retry-After, error code, seconds to its answer, body)."""
    t = time.time()
    try:
        status, hdrs, body = http_request(
            api.addr, "POST", "/v1/tools/alayasiki_ingest", bearer(tok),
            json.dumps({"content": f"Cluster note {key}: the ferry bell rang.",
                        "idempotency_key": key}).encode(), timeout=120)
    except (OSError, EOFError, ValueError) as e:
        return repr(e), None, "", time.time() - t, b""
    return status, header(hdrs, "retry-after"), error_code(body), time.time() - t, body


def write_until_served(api, tok, key, within):
    """Seconds until a write was answered 200 (None if not within)."""
    t = time.time()
    while time.time() - t < within:
        if cluster_write(api, tok, key)[0] == 200:
            return time.time() - t
        time.sleep(0.2)
    return None


def cluster_round(args, rqlited, r, tally):
    """One round: a fresh 3-node cluster and two API nodes on it; no quorum,
    recovery, frozen followers, recovery."""
    root = tempfile.mkdtemp(prefix="alayasiki-fault-cluster-")
    cluster = apis = None
    keep = False
    problems = tally["problems"]
    try:
        cluster = Rqlite(rqlited, root)
        binary = binary_path(args, "alayasiki-api")
        apis = []
        for name in ("a", "b"):
            data = os.path.join(root, f"api-{name}")
            os.makedirs(data)
            apis.append(Api(binary, data, env={"ALAYASIKI_STORE": cluster.address()},
                            log_level="info"))
        tok, other, reader = token(tenant="team", sub="agent"), \
            token(tenant="other-team", sub="agent"), token(tenant="team", sub="reader")
        for i, api in enumerate(apis):
            if write_until_served(api, tok, f"r{r}-before-{i}", CLUSTER_RECOVERY) is None:
                problems.append(f"round {r}: node {i} never served a first write")
                return

        # No quorum: both followers killed.
        leader = cluster.wait_for_leader(10, "before the kills")
        followers = [i for i in range(3) if i != leader]
        for f in followers:
            cluster.kill(f)
        deadline = time.time() + 10
        while not all(any("no leader" in line for line in api.err) for api in apis):
            if time.time() > deadline:
                problems.append(f"round {r}: the loss of quorum went unnoticed for 10 s")
                break
            time.sleep(0.05)
        for n in range(CLUSTER_READS):
            status, _, _ = json_call(apis[0].addr, "POST", "/v1/query", reader,
                                     {"query": "ferry bell", "mode": "evidence"}, timeout=60)
            tally["reads"] += 1
            if status != 200:
                problems.append(f"round {r}: a read without quorum answered {status}")
        for i, key in [(0, "nq-1"), (0, "nq-2"), (1, "nq-3")]:
            status, retry, code, took, body = cluster_write(apis[i], tok, f"r{r}-{key}")
            tally["refused"] += 1
            tally["no_quorum"] = max(tally["no_quorum"], took)
            tally["retry_after"].add(retry)
            if (status != 503 or code != "unavailable" or retry != "5"
                    or took >= CLUSTER_WRITE_WAIT + CLUSTER_SLACK or b"127.0.0.1" in body):
                problems.append(f"round {r}: no quorum, node {i}'s write answered {status} "
                                f"{code} Retry-After {retry} in {took:.2f} s")
        for f in followers:
            cluster.restart(f)
        t = time.time()
        cluster.wait_for_leader(CLUSTER_ELECTION, "followers restarted")
        tally["elected"] = max(tally["elected"], time.time() - t)
        for i, api in enumerate(apis):
            took = write_until_served(api, tok, f"r{r}-healed-{i}", CLUSTER_RECOVERY)
            if took is None:
                problems.append(f"round {r}: node {i} served no write {CLUSTER_RECOVERY:.0f} s "
                                "after quorum returned")
            else:
                tally["recovered"] = max(tally["recovered"], took)

        # Both followers frozen: four writes of two tenants on both nodes at once.
        leader = cluster.wait_for_leader(10, "before the freeze")
        followers = [i for i in range(3) if i != leader]
        for f in followers:
            cluster.pause(f)
        answers = []

        def writes(api, t, tag):
            for n in range(2):
                answers.append(cluster_write(api, t, f"r{r}-frozen-{tag}{n}"))

        started = time.time()
        threads = [threading.Thread(target=writes, args=(apis[0], tok, "t")),
                   threading.Thread(target=writes, args=(apis[1], other, "o"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        tally["frozen_all"] = max(tally["frozen_all"], time.time() - started)
        for status, retry, code, took, _ in answers:
            tally["frozen"] += 1
            tally["frozen_worst"] = max(tally["frozen_worst"], took)
            if status != 503 or not retry or took >= CLUSTER_WRITE_DEADLINE:
                problems.append(f"round {r}: followers frozen, a write answered {status} "
                                f"{code} Retry-After {retry} in {took:.2f} s")
        for f in followers:
            cluster.resume(f)
        t = time.time()
        cluster.wait_for_leader(CLUSTER_ELECTION, "followers resumed")
        tally["elected"] = max(tally["elected"], time.time() - t)
        for i, api in enumerate(apis):
            took = write_until_served(api, tok, f"r{r}-thawed-{i}", CLUSTER_RECOVERY)
            if took is None:
                problems.append(f"round {r}: node {i} served no write {CLUSTER_RECOVERY:.0f} s "
                                "after the thaw")
            else:
                tally["thawed"] = max(tally["thawed"], took)
        for i, api in enumerate(apis):
            if not api.running():
                problems.append(f"round {r}: node {i} exited ({api.p.returncode})")
            tally["errors"] += api.flags.get("ERROR", 0)
            if api.flags.get("panicked"):
                problems.append(f"round {r}: node {i} panicked")
    except Exception:
        keep = True
        raise
    finally:
        for api in apis or []:
            api.stop()
        if cluster:
            tally["respawned"] += cluster.respawned
            cluster.stop()
        if keep:
            log(f"cluster: round {r}: rqlite logs kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def family_cluster(args, seed):
    rqlited = rqlited_path()
    if rqlited is None:
        print("cluster: skipped: no rqlited (bash scripts/rqlite_install.sh, or set "
              "ALAYASIKI_RQLITED)", flush=True)
        return True
    started = time.time()
    rounds = scaled(3, args.scale)
    tally = {"problems": [], "reads": 0, "refused": 0, "no_quorum": 0.0, "retry_after": set(),
             "recovered": 0.0, "frozen": 0, "frozen_worst": 0.0, "frozen_all": 0.0,
             "thawed": 0.0, "errors": 0, "elected": 0.0, "respawned": 0}
    for r in range(rounds):
        t0 = time.time()
        try:
            cluster_round(args, rqlited, r, tally)
        except Exception as e:  # a round that crashed failed; the next still runs
            tally["problems"].append(f"round {r}: {type(e).__name__}: {e}")
        log(f"cluster: round {r + 1} of {rounds}, {time.time() - t0:.0f} s")
    problems = tally["problems"]
    if tally["errors"]:
        problems.append(f"{tally['errors']} ERROR lines in the nodes' logs")
    retry = ",".join(sorted(str(x) for x in tally["retry_after"]))
    print(f"cluster: {rounds} rounds of a 3-node rqlite cluster and two API nodes; no quorum: "
          f"{tally['reads']} reads, {tally['refused']} writes refused, slowest "
          f"{tally['no_quorum']:.2f} s (bound {CLUSTER_WRITE_WAIT + CLUSTER_SLACK:.1f} s), "
          f"Retry-After {retry or '-'}, writes served again within {tally['recovered']:.2f} s "
          f"of a leader; "
          f"followers frozen: {tally['frozen']} writes answered, slowest "
          f"{tally['frozen_worst']:.2f} s (bound {CLUSTER_WRITE_DEADLINE:.0f} s), all four "
          f"within {tally['frozen_all']:.2f} s, writes served again within "
          f"{tally['thawed']:.2f} s of a leader after the thaw (rqlite's elections took at "
          f"most {tally['elected']:.1f} s; a restarted rqlited whose join timed out started "
          f"again {tally['respawned']} times); ERROR log lines {tally['errors']}; "
          f"{time.time() - started:.0f} s; {'held' if not problems else 'FAILED'}"
          + "".join(f"\n  {p}" for p in problems[:20]), flush=True)
    return not problems


# ------------------------------------------------------------------- main


def binary_path(args, name):
    binary = os.path.join(ROOT, "target", args.profile, name)
    if not os.path.exists(binary):
        sys.exit(f"{binary} not found: cargo build --{args.profile} --bins "
                 "(or --profile debug)")
    return binary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", choices=FAMILIES + ["all"], default="all",
                    help="the fault family to run (default all)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies the counts of hostile, http, amplification, disk and "
                         "cluster (default 1)")
    ap.add_argument("--binary", choices=list(KILL_TARGETS) + ["all"], default="all",
                    help="kills: what to kill (default all)")
    ap.add_argument("--kills", type=int, default=300, help="kills per transport (default 300)")
    ap.add_argument("--max-kill-ms", type=int, default=500,
                    help="a kill lands up to this long after start (default 500)")
    ap.add_argument("--phases", type=lambda v: [p.strip() for p in v.split(",")],
                    default=None, metavar="NAME,...",
                    help="http: run only these attacks (e.g. \"session hoard,compaction\")")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--profile", default="release", help="target/<profile>/ (default release)")
    ap.add_argument("--keep", action="store_true", help="kills: keep the data directories")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    log(f"seed {seed}")
    runners = {"kills": family_kills, "hostile": family_hostile, "http": family_http,
               "amplification": family_amplification, "disk": family_disk,
               "cluster": family_cluster}
    ok = True
    for family in (FAMILIES if args.family == "all" else [args.family]):
        try:
            held = runners[family](args, seed)
        except Exception as e:  # a family that crashed failed; the others still run
            print(f"{family}: FAILED: {type(e).__name__}: {e}", flush=True)
            held = False
        ok &= held
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
