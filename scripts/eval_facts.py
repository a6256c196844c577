#!/usr/bin/env python3
"""Facts that change: the share of written scenarios whose current value
ranks first and whose superseded value is marked.

Drives the real binary over stdio (MCP, newline-delimited JSON-RPC) on a
fresh data directory: ingests every scenario of
tests/fixtures/changing_facts.json (its distractors first, then each
scenario's documents in the order listed, each with metadata
{"date": ...}), then asks each scenario's question in evidence mode.

A scenario passes when
  - the first evidence item's text contains `current`, and
  - an evidence item carries a `facts` mark with status `superseded`
    (`ended` when the scenario says so) whose value contains
    `superseded`.
Scenarios with `as_of` are asked again as of that date; the first item
must then contain `then`.

    python3 scripts/eval_facts.py --binary target/debug/alayasiki-mcp [-v]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "tests", "fixtures", "changing_facts.json")


class Server:
    def __init__(self, binary, data_dir):
        env = dict(os.environ, ALAYASIKI_LOG="warn", ALAYASIKI_IN_PROCESS="1")
        env.pop("ALAYASIKI_DATA_DIR", None)
        self.p = subprocess.Popen(
            [binary, "--data-dir", data_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "eval_facts", "version": "1"},
        })
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("server exited")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                return msg

    def tool(self, name, args):
        msg = self.request("tools/call", {"name": name, "arguments": args})
        result = msg["result"]
        if result.get("isError"):
            raise RuntimeError(f"{name}: {result['content'][0]['text']}")
        return result["structuredContent"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def ingest(server, doc):
    r = server.tool("alayasiki_ingest", {"content": doc["text"], "metadata": {"date": doc["date"]}})
    assert r["state"] == "ready", r


def first_holds(evidence, value):
    return bool(evidence) and value.lower() in evidence[0]["text"].lower()


def marked(evidence, value, status):
    for e in evidence:
        for f in e.get("facts", []):
            if f["status"] == status and value.lower() in f["value"].lower():
                return True
    return False


def evaluate(binary, verbose=False):
    scenarios = json.load(open(FIXTURE))
    with tempfile.TemporaryDirectory(prefix="eval_facts") as data_dir:
        server = Server(binary, data_dir)
        for doc in scenarios["distractors"]:
            ingest(server, doc)
        for s in scenarios["scenarios"]:
            for doc in s["documents"]:
                ingest(server, doc)
        results = []
        for s in scenarios["scenarios"]:
            r = server.tool("alayasiki_query", {"query": s["question"], "mode": "evidence"})
            ev = r["evidence"]
            status = "ended" if s.get("ended") else "superseded"
            first = first_holds(ev, s["current"])
            mark = marked(ev, s["superseded"], status)
            then = None
            if "as_of" in s:
                r = server.tool("alayasiki_query", {"query": s["question"], "mode": "evidence", "as_of": s["as_of"]})
                then = first_holds(r["evidence"], s["then"])
            results.append((s, first, mark, then))
            if verbose and not (first and mark and then is not False):
                print(f"FAIL {s['name']}: first={first} marked={mark} as_of={then}", file=sys.stderr)
                for e in ev[:3]:
                    print(f"    {e['text'][:90]!r} {e.get('facts', '')}", file=sys.stderr)
        server.close()
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="target/debug/alayasiki-mcp")
    ap.add_argument("-v", "--verbose", action="store_true", help="show the failing scenarios")
    args = ap.parse_args()
    results = evaluate(args.binary, args.verbose)
    n = len(results)
    first = sum(1 for _, f, _, _ in results if f)
    mark = sum(1 for _, _, m, _ in results if m)
    both = sum(1 for _, f, m, _ in results if f and m)
    as_of = [t for _, _, _, t in results if t is not None]
    print(f"scenarios: {n}")
    print(f"current value ranks first: {first / n:.3f} ({first}/{n})")
    print(f"superseded value marked:   {mark / n:.3f} ({mark}/{n})")
    print(f"both:                      {both / n:.3f} ({both}/{n})")
    if as_of:
        print(f"as_of, value then first:   {sum(as_of) / len(as_of):.3f} ({sum(as_of)}/{len(as_of)})")


if __name__ == "__main__":
    main()
