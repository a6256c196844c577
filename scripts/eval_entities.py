#!/usr/bin/env python3
"""Entity precision: how many of the entities the graph stores from
technical text are real, and how many real ones it stores.

Drives the real `alayasiki-api` on a fresh data directory: ingests every
passage of fixtures/entities/labelled.jsonl (one document each, as
text/markdown, waiting until it is indexed), then reads the entities each
chunk mentions back through `GET /v1/documents/{id}/chunks`, with their
byte spans. The surfaces the extractor marked in a passage are compared
with the passage's gold entities (`surface`, `kind`).

Scoring, per passage: the extractor's entities (mentions grouped by
entity id, so "Sven" after "Sven Aas" is one entity) against the gold
surfaces.
  - an entity matches a gold surface when one of its mentions equals it
    after light normalization (case, surrounding quotes/backticks, a
    trailing period or possessive "'s" ignored);
  - entity precision = entities matching some gold surface / entities,
    recall = gold surfaces matched / gold surfaces;
  - kind precision and recall count a match only when the stored kind is
    the gold kind too.
Reported for all passages and per split (`dev` was looked at while the
rules were written; `heldout` never was).

    python3 scripts/eval_entities.py --binary target/debug/alayasiki-api [-v SPLIT]
"""

import argparse
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import api_process  # noqa: E402

FIXTURE = os.path.join(HERE, "..", "fixtures", "entities", "labelled.jsonl")
SECRET = "eval-entities-secret-0123456789abcdef"
ENV = {"ALAYASIKI_API_RATE": "100000", "ALAYASIKI_API_BURST": "100000"}


def call(base, method, path, token, body=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {token}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def norm(surface):
    s = surface.strip().strip("`\"'\u201c\u201d").strip()
    for tail in ("'s", "\u2019s"):
        if s.endswith(tail):
            s = s[: -len(tail)]
    return " ".join(s.rstrip(".").split()).lower()


def marked_entities(base, token, passage):
    """{entity id: {normalized surface: (surface, kind)}} the extractor
    stored for `passage`."""
    status, out = call(base, "POST", "/v1/ingest", token, {
        "content": passage["text"],
        "media_type": "text/markdown",
        "source": f"eval/{passage['id']}.md",
        "wait": True,
    })
    if status != 200 or out.get("state") != "ready":
        raise SystemExit(f"ingest {passage['id']}: HTTP {status} {out}")
    doc = out["document_id"]
    found = {}
    after = None
    while True:
        path = f"/v1/documents/{doc}/chunks" + (f"?after={after}" if after is not None else "")
        status, page = call(base, "GET", path, token)
        if status != 200:
            raise SystemExit(f"chunks {doc}: HTTP {status} {page}")
        for c in page["chunks"]:
            raw = c["text"].encode()
            for e in c["entities"]:
                a, b = e["byte_start"] - c["byte_start"], e["byte_end"] - c["byte_start"]
                surface = raw[a:b].decode(errors="replace")
                found.setdefault(e["entity_id"], {}).setdefault(norm(surface), (surface, e["kind"].lower()))
        after = page.get("next_after")
        if after is None:
            return found


def judge(row):
    """Per entity of `row`: (surfaces, kind, matched gold surfaces)."""
    out = []
    for surfaces in row["found"].values():
        kind = next(iter(surfaces.values()))[1]
        out.append((surfaces, kind, surfaces.keys() & row["gold"].keys()))
    return out


def score(rows):
    """(entity P, entity R, kind P, kind R, marked, gold) over `rows`."""
    marked = gold = hit = kind_hit = recalled = kind_recalled = 0
    for r in rows:
        judged = judge(r)
        marked += len(judged)
        gold += len(r["gold"])
        hit += sum(1 for _, _, m in judged if m)
        kind_hit += sum(1 for _, k, m in judged if any(r["gold"][g][1] == k for g in m))
        got = {g: k for _, k, m in judged for g in m}
        recalled += len(got)
        kind_recalled += sum(1 for g, k in got.items() if r["gold"][g][1] == k)
    p = lambda a, b: a / b if b else 0.0  # noqa: E731
    return p(hit, marked), p(recalled, gold), p(kind_hit, marked), p(kind_recalled, gold), marked, gold


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(HERE, "..", "target", "debug", "alayasiki-api"))
    ap.add_argument("-v", "--verbose", metavar="SPLIT", help="print every miss of SPLIT (dev, heldout, all)")
    args = ap.parse_args()
    passages = [json.loads(line) for line in open(FIXTURE) if line.strip()]
    token = api_process.token(SECRET, "eval", "eval", ["admin"], ttl_s=3600)
    rows = []
    with tempfile.TemporaryDirectory(prefix="eval_entities") as data:
        proc, base = api_process.start(args.binary, data, SECRET, lambda m: sys.exit(m), ENV)
        try:
            for passage in passages:
                gold = {norm(g["surface"]): (g["surface"], g["kind"].lower()) for g in passage["entities"]}
                rows.append({"id": passage["id"], "split": passage["split"], "gold": gold,
                             "found": marked_entities(base, token, passage)})
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    for r in rows:
        if args.verbose not in (r["split"], "all"):
            continue
        judged = judge(r)
        matched = set()
        for surfaces, kind, m in judged:
            names = ", ".join(repr(s) for s, _ in surfaces.values())
            matched |= m
            if not m:
                print(f"  {r['id']}: extra {names} ({kind})")
            elif all(r["gold"][g][1] != kind for g in m):
                print(f"  {r['id']}: kind {names} {kind} != {r['gold'][min(m)][1]}")
        for g in sorted(r["gold"].keys() - matched):
            print(f"  {r['id']}: missed {r['gold'][g][0]!r} ({r['gold'][g][1]})")
    print(f"{'split':<8} {'passages':>8} {'gold':>5} {'marked':>6}  {'entity P':>8} {'entity R':>8}  {'kind P':>6} {'kind R':>6}")
    for split in ("dev", "heldout", "all"):
        part = [r for r in rows if split in (r["split"], "all")]
        ep, er, kp, kr, marked, gold = score(part)
        print(f"{split:<8} {len(part):>8} {gold:>5} {marked:>6}  {ep:>8.3f} {er:>8.3f}  {kp:>6.3f} {kr:>6.3f}")


if __name__ == "__main__":
    main()
