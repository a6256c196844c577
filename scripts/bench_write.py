#!/usr/bin/env python3
"""Writes as a client makes them: one at a time waiting for each, and many in flight.

Usage: python3 scripts/bench_write.py [--binary target/release/alayasiki-mcp]
                                      [--writes 300] [--in-flight 32] [--runs 3]
                                      [--onto DIR] [BINARY ...]

For each binary (default: --binary), RUNS times, on a fresh data directory over
stdio (`--in-process`):
  one at a time   WRITES alayasiki_ingest calls of ~110-byte notes with the default
                  `wait: true` (searchable when answered), each sent after the last
                  was answered; p50 and p99 of the round trip (the first 20 left
                  out: the embedding model loads on the first);
  in flight       WRITES calls with IN_FLIGHT outstanding, `wait: true` and then
                  `wait: false` (timed until nothing is pending); documents per
                  second.
With --onto DIR, only the one-at-a-time figures, each run on a fresh copy of
the data directory DIR (a memory already filled, e.g. by
scripts/bench_filters.py --store DIR): what a waited write costs on a large
memory.
Binaries are run in turn within each run, so a busy machine weighs on each alike.
Prints the median over runs. Python 3 standard library only.
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


class Server:
    def __init__(self, binary, onto=None):
        self.dir = tempfile.TemporaryDirectory(prefix="bench-write-")
        if onto:
            shutil.copytree(onto, self.dir.name, dirs_exist_ok=True)
        self.proc = subprocess.Popen(
            [binary, "--data-dir", self.dir.name, "--in-process"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench_write", "version": "1"}})

    def send(self, method, params):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the server exited (status {self.proc.wait()})")
        reply = json.loads(line)
        if "error" in reply or reply.get("result", {}).get("isError"):
            raise SystemExit(f"a call failed: {reply}")
        return reply

    def call(self, method, params):
        self.send(method, params)
        self.proc.stdin.flush()
        return self.receive()

    def pending(self):
        reply = self.call("tools/call", {"name": "alayasiki_status", "arguments": {}})
        return json.loads(reply["result"]["content"][0]["text"])["jobs"]["pending"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=120)
        self.dir.cleanup()


def note(i):
    teams = ["billing", "search", "auth", "payments", "ingest"]
    return (f"Note {i}: Dana moved the nightly backup of the {teams[i % 5]} cluster "
            f"to 03:{i % 60:02d} after the outage on day {i}.")


def one_at_a_time(binary, writes, onto=None):
    server = Server(binary, onto)
    times = []
    for i in range(writes + 20):
        started = time.perf_counter()
        server.call("tools/call", {"name": "alayasiki_ingest", "arguments": {"content": note(i)}})
        times.append((time.perf_counter() - started) * 1000)
    server.close()
    times = sorted(times[20:])
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def in_flight(binary, writes, window, wait):
    server = Server(binary)
    started = time.perf_counter()
    sent = answered = 0
    while answered < writes:
        while sent < writes and sent - answered < window:
            server.send("tools/call", {"name": "alayasiki_ingest",
                                       "arguments": {"content": note(sent), "wait": wait}})
            sent += 1
        server.proc.stdin.flush()
        server.receive()
        answered += 1
    while server.pending() > 0:
        time.sleep(0.01)
    rate = writes / (time.perf_counter() - started)
    server.close()
    return rate


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default="target/release/alayasiki-mcp")
    ap.add_argument("--writes", type=int, default=300)
    ap.add_argument("--in-flight", type=int, default=32)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--onto", help="a filled data directory to copy and write onto")
    ap.add_argument("binaries", nargs="*")
    args = ap.parse_args()
    binaries = args.binaries or [args.binary]
    results = {b: {"p50": [], "p99": [], "waited": [], "unwaited": []} for b in binaries}
    for _ in range(args.runs):
        for b in binaries:
            p50, p99 = one_at_a_time(b, args.writes, args.onto)
            results[b]["p50"].append(p50)
            results[b]["p99"].append(p99)
            if args.onto:
                continue
            results[b]["waited"].append(in_flight(b, args.writes, args.in_flight, True))
            results[b]["unwaited"].append(in_flight(b, args.writes, args.in_flight, False))
    print(f"{'binary':<40} {'one at a time p50 ms':>21} {'p99 ms':>8} "
          f"{f'{args.in_flight} in flight, waited /s':>26} {'not waited /s':>14}")
    for b, r in results.items():
        med = {k: statistics.median(v) if v else float("nan") for k, v in r.items()}
        print(f"{b:<40} {med['p50']:>21.2f} {med['p99']:>8.2f} "
              f"{med['waited']:>26.0f} {med['unwaited']:>14.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
