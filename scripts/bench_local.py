#!/usr/bin/env python3
"""What reaching the memory owner costs a client; standard library only.

    cargo build --release --bins
    python3 scripts/bench_local.py [--binary target/release/alayasiki-mcp]
                                   [--runs 10] [--calls 2000] [--ops 200]

Prints, for `alayasiki-mcp` on stdio through the directory's owner and, for
comparison, in-process (`--in-process`), measured in the same run:

- start: spawn to the `initialize` reply, with no owner running (the
  client starts it: the owner's start is included) and with one running;
  in-process for comparison (median and max of --runs);
- per call: `ping` round trips one after another on one session (p50 /
  p99 of --calls), through the owner and in-process;
- throughput: one session alone, then 8 at once, each doing --ops
  operations (an ingest with `wait: true`, then a query, by turns);
- the relay process's peak resident memory (VmHWM) after the calls.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}


class Client:
    def __init__(self, binary, data, in_process=False):
        env = dict(os.environ, ALAYASIKI_LOG="warn", ALAYASIKI_OWNER_IDLE_SECS="0")
        env.pop("ALAYASIKI_IN_PROCESS", None)
        args = [binary, "--data-dir", data] + (["--in-process"] if in_process else [])
        self.started = time.perf_counter()
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.n = 0

    def call(self, method, params=None, notify=False):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            self.n += 1
            msg["id"] = self.n
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        if notify:
            return None
        while True:
            reply = json.loads(self.p.stdout.readline())
            if reply.get("id") == self.n:
                return reply

    def initialize(self):
        r = self.call("initialize", INIT["params"])
        self.call("notifications/initialized", notify=True)
        return r

    def tool(self, name, args):
        r = self.call("tools/call", {"name": name, "arguments": args})
        return json.loads(r["result"]["content"][0]["text"])

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)


def stop_owner(data):
    try:
        with open(os.path.join(data, "alayasiki.owner")) as f:
            pid = json.load(f)["pid"]
        os.kill(pid, signal.SIGTERM)
        deadline = time.time() + 30
        while time.time() < deadline:
            os.kill(pid, 0)  # raises once the owner is gone (and reaped)
            time.sleep(0.01)
    except (OSError, ValueError, KeyError):
        pass


def ms(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


def start_times(binary, runs):
    cold, warm, alone = [], [], []
    for _ in range(runs):
        data = tempfile.mkdtemp(prefix="alayasiki-bench-local-")
        c = Client(binary, data)
        c.initialize()
        cold.append(time.perf_counter() - c.started)
        for _ in range(3):
            w = Client(binary, data)
            w.initialize()
            warm.append(time.perf_counter() - w.started)
            w.close()
        c.close()
        stop_owner(data)
        i = Client(binary, data, in_process=True)
        i.initialize()
        alone.append(time.perf_counter() - i.started)
        i.close()
        shutil.rmtree(data, ignore_errors=True)
    for name, xs in (("no owner running (starts it)", cold), ("owner running", warm),
                     ("in-process", alone)):
        print(f"start to initialize reply, {name}: median {statistics.median(xs) * 1000:.1f} ms, "
              f"max {max(xs) * 1000:.1f} ms ({len(xs)} runs)")


def ping_latency(binary, calls):
    out = {}
    for label, in_process in (("through the owner", False), ("in-process", True)):
        data = tempfile.mkdtemp(prefix="alayasiki-bench-local-")
        c = Client(binary, data, in_process)
        c.initialize()
        times = []
        for _ in range(calls):
            t = time.perf_counter()
            c.call("ping")
            times.append(time.perf_counter() - t)
        hwm = None
        with open(f"/proc/{c.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) / 1024
        c.close()
        stop_owner(data)
        shutil.rmtree(data, ignore_errors=True)
        out[label] = (ms(times, 0.5), ms(times, 0.99), hwm)
        print(f"ping round trip, {label}: p50 {out[label][0]:.3f} ms, p99 {out[label][1]:.3f} ms "
              f"({calls} calls); that process's peak RSS {hwm:.1f} MiB")
    print(f"added by the relay: p50 {out['through the owner'][0] - out['in-process'][0]:.3f} ms, "
          f"p99 {out['through the owner'][1] - out['in-process'][1]:.3f} ms")


def throughput(binary, ops):
    def run(clients):
        data = tempfile.mkdtemp(prefix="alayasiki-bench-local-")
        sessions = [Client(binary, data) for _ in range(clients)]
        for s in sessions:
            s.initialize()

        def work(k, s):
            for i in range(ops):
                if i % 2 == 0:
                    s.tool("alayasiki_ingest", {"content": f"Session {k} note {i}: the tug "
                                                f"{k}-{i} berths at pier {i % 17}.",
                                                "wait": True})
                else:
                    s.tool("alayasiki_query", {"query": f"Where does tug {k}-{i - 1} berth?",
                                               "mode": "evidence"})

        t = time.perf_counter()
        threads = [threading.Thread(target=work, args=(k, s)) for k, s in enumerate(sessions)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        took = time.perf_counter() - t
        for s in sessions:
            s.close()
        stop_owner(data)
        shutil.rmtree(data, ignore_errors=True)
        return clients * ops / took

    one = run(1)
    eight = run(8)
    print(f"throughput (ingest wait:true and query by turns): 1 session {one:.0f} ops/s, "
          f"8 sessions at once {eight:.0f} ops/s in all ({eight / one:.2f}x)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "alayasiki-mcp"))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--ops", type=int, default=200)
    args = ap.parse_args()
    start_times(args.binary, args.runs)
    ping_latency(args.binary, args.calls)
    throughput(args.binary, args.ops)


if __name__ == "__main__":
    main()
