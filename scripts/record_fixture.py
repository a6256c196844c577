#!/usr/bin/env python3
"""Record a JSON-RPC session fixture from a script of messages to send.

Usage: scripts/record_fixture.py SCRIPT.jsonl OUT.jsonl [--binary PATH]

SCRIPT holds the steps to perform (`send`, `send_raw`, `comment`,
`expect_silence_ms`); after each `send`/`send_raw` of a request this runs
the real binary, reads the replies, and writes them as `expect` steps with
volatile values replaced by wildcards: document ids become captures
(`<capture:doc1>`, then `${doc1}`), timestamps, sizes, paths and scores
become `<string>`/`<number>`, and JSON carried in text blocks is unpacked
into `{"$json": ...}` so it is matched structurally. Review the result
before committing it: a fixture is a specification.
"""
import json
import re
import subprocess
import sys
import tempfile

DOC_ID = re.compile(r"doc_[0-9a-f]{24}")
VOLATILE_STRINGS = {"created_at", "data_dir", "since", "version", "built_at", "updated_at", "expires_at", "written_at"}
VOLATILE_NUMBERS = {"store_bytes", "score", "entities", "relations"}


def wildcard(value, ids, key=None):
    if isinstance(value, dict):
        return {k: wildcard(v, ids, k) for k, v in value.items()}
    if isinstance(value, list):
        return [wildcard(v, ids) for v in value]
    if key in VOLATILE_NUMBERS and isinstance(value, (int, float)):
        return "<number>"
    if isinstance(value, str):
        if key in VOLATILE_STRINGS:
            return "<string>"
        if key == "text":
            try:
                inner = json.loads(value)
            except ValueError:
                inner = None
            if isinstance(inner, (dict, list)):
                return {"$json": wildcard(inner, ids)}
        def sub(m):
            if m.group(0) not in ids:
                ids[m.group(0)] = "doc%d" % (len(ids) + 1)
                return "\0capture:" + ids[m.group(0)]
            return "${%s}" % ids[m.group(0)]
        out = DOC_ID.sub(sub, value)
        if out.startswith("\0capture:") and out == "\0capture:" + ids[DOC_ID.search(value).group(0)]:
            return "<capture:%s>" % out[len("\0capture:"):]
        # A new id inside a longer string: capture is impossible, accept any.
        return "<string>" if "\0capture:" in out else out
    return value


def main():
    script, out_path = sys.argv[1], sys.argv[2]
    binary = "target/debug/alayasiki-mcp"
    if "--binary" in sys.argv:
        binary = sys.argv[sys.argv.index("--binary") + 1]
    steps = [json.loads(l) for l in open(script) if l.strip()]
    data = tempfile.mkdtemp(prefix="alayasiki-record-")
    proc = subprocess.Popen([binary, "--data-dir", data], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env={"ALAYASIKI_LOG": "error"})
    ids = {}
    out = []
    for step in steps:
        out.append(step)
        if "send" in step or "send_raw" in step:
            line = json.dumps(step["send"]) if "send" in step else step["send_raw"]
            for k, v in ids.items():
                line = line.replace("${%s}" % v, k)
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
            msg = step.get("send")
            expects_reply = not (isinstance(msg, dict) and "id" not in msg) and \
                not (isinstance(msg, list) and msg and all(isinstance(m, dict) and "id" not in m for m in msg))
            if expects_reply:
                reply = json.loads(proc.stdout.readline())
                out.append({"expect": wildcard(reply, ids)})
    proc.stdin.close()
    proc.wait(timeout=10)
    with open(out_path, "w") as f:
        f.write(json.dumps({"fixture_format": 1}) + "\n")
        for step in out:
            f.write(json.dumps(step, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
