#!/usr/bin/env python3
"""Evidence recall on a second, independent set: a household's dated notes.

Usage: scripts/eval_notes.py [--binary target/release/alayasiki-mcp]
                             [--data fixtures/notes_eval] [--json results.json]
                             [--misses]

Not LoCoMo: `fixtures/notes_eval/notes.json` holds 138 short notes written
for this check (a family's journal, shopping, calendar, travel, work, school,
health, house and car notes from January 2024 to June 2025; many share their
words: people, places, the dog, the ferry-booking project, several trips,
dentist visits and purchases), each with a date and a source.
`questions.json` holds 74 questions, each with the notes that answer it (its
evidence) and its kind:

  single      one fact, worded differently from its note
  period      names a month or a year ("in March 2024", "in 2025")
  bound       an open bound ("before May 2024", "since January 2025")
  relative    a relative phrase ("last month", "last summer"), resolved
              against the newest note (28 June 2025)
  list        a list or a count whose evidence is spread over several notes
  paraphrase  a question sharing few words with its note

Every note is one document (metadata: its date and note id; source
"household/<source>"), ingested with wait false into a fresh data directory
of an in-process server over stdio; once alayasiki_status reports nothing
pending, every question is asked through `alayasiki_query` (mode evidence,
top_k 10, the default lanes). Evidence recall@k = the fraction of a
question's evidence notes among the top k items, averaged over questions;
printed overall and per kind, with the questions naming a month or a year
apart (read from the question text as scripts/eval_locomo does, for
reporting only: the server is never told) and the round trip of a query
(p50, p99). --misses lists every question with evidence outside the top 10;
--json also writes each question's R@5 and R@10, to compare two binaries
question by question.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

KINDS = ["single", "period", "bound", "relative", "list", "paraphrase"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
# Words after which a lone capitalised month name is a month ("in May").
MONTH_CUES = {"in", "during", "early", "late", "mid", "since", "until", "of", "by", "last", "next"}


def month_of(word):
    w = word.lower().rstrip(".")
    for i, m in enumerate(MONTHS):
        if w == m or (len(w) >= 3 and len(m) > 3 and m.startswith(w)):
            return i + 1
    return None


def is_year(word):
    return len(word) == 4 and word.isdigit() and 1900 <= int(word) <= 2199


def is_day(word):
    m = re.fullmatch(r"(\d{1,2})(st|nd|rd|th)?", word)
    return bool(m) and 1 <= int(m.group(1)) <= 31


def names_month_or_year(question):
    """Whether a question names a month or a year the way the server reads
    one (src/query/when.rs): a year, an ISO date, a month beside a day or a
    year, or a capitalised month after a cue word ("in May")."""
    if re.search(r"(?<![0-9A-Za-z])\d{4}-\d{2}-\d{2}(?!\d)", question):
        return True
    w = re.findall(r"[^\W_]+", question)
    for i, word in enumerate(w):
        if is_year(word):
            return True
        if month_of(word):
            near = [w[j] for j in (i - 1, i + 1) if 0 <= j < len(w)]
            if any(is_day(x) or is_year(x) for x in near):
                return True
            if word[0].isupper() and i > 0 and w[i - 1].lower() in MONTH_CUES:
                return True
    return False


class Server:
    def __init__(self, binary, data_dir):
        env = dict(os.environ, ALAYASIKI_LOG="warn")
        self.proc = subprocess.Popen([binary, "--in-process", "--data-dir", data_dir],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                    "clientInfo": {"name": "eval_notes", "version": "1"}})

    def request(self, method, params):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("eval_notes: the server exited")
        reply = json.loads(line)
        if "error" in reply:
            sys.exit(f"eval_notes: {method} failed: {reply['error']}")
        return reply["result"]

    def tool(self, name, args):
        result = self.request("tools/call", {"name": name, "arguments": args})
        if result.get("isError"):
            sys.exit(f"eval_notes: {name} failed: {result['content'][0]['text']}")
        return json.loads(result["content"][0]["text"])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def ingest(server, notes):
    """Ingests every note in date order (wait false), then waits until
    nothing is pending."""
    for n in notes:
        server.tool("alayasiki_ingest", {
            "content": n["text"], "source": f"household/{n['source']}", "wait": False,
            "metadata": {"date": n["date"], "note": n["id"]}})
    while server.tool("alayasiki_status", {})["jobs"]["pending"]:
        time.sleep(0.05)


def recall(found, evidence, k):
    top = set(found[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def mean(xs):
    return sum(xs) / max(1, len(xs))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/alayasiki-mcp")
    ap.add_argument("--data", default=os.path.join(here, "..", "fixtures", "notes_eval"))
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--misses", action="store_true",
                    help="list the questions with evidence outside the top 10")
    args = ap.parse_args()
    notes = json.load(open(os.path.join(args.data, "notes.json")))
    questions = json.load(open(os.path.join(args.data, "questions.json")))
    known = {n["id"] for n in notes}
    for q in questions:
        if q["kind"] not in KINDS or not q["evidence"] or not set(q["evidence"]) <= known:
            sys.exit(f"eval_notes: {q['id']}: unknown kind or evidence")
    scores = {kind: {5: [], 10: []} for kind in KINDS}
    dated = {5: [], 10: []}
    latency = []
    misses = []
    per_question = {}
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="alayasiki-notes-") as data_dir:
        server = Server(args.binary, data_dir)
        ingest(server, notes)
        ingest_s = time.time() - started
        for q in questions:
            asked = time.perf_counter()
            items = server.tool("alayasiki_query", {"query": q["question"], "mode": "evidence",
                                                    "top_k": 10})["evidence"]
            latency.append((time.perf_counter() - asked) * 1000)
            found = [e["metadata"].get("note") for e in items]
            per_question[q["id"]] = {k: recall(found, q["evidence"], k) for k in (5, 10)}
            for k in (5, 10):
                r = per_question[q["id"]][k]
                scores[q["kind"]][k].append(r)
                if names_month_or_year(q["question"]):
                    dated[k].append(r)
            missing = [e for e in q["evidence"] if e not in found]
            if missing:
                misses.append((q, missing, found))
        server.close()
    every = {k: [x for kind in KINDS for x in scores[kind][k]] for k in (5, 10)}
    times = sorted(latency)
    results = {
        "notes": len(notes), "questions": len(questions),
        "recall@5": mean(every[5]), "recall@10": mean(every[10]),
        "kinds": {kind: {"questions": len(scores[kind][5]), "recall@5": mean(scores[kind][5]),
                         "recall@10": mean(scores[kind][10])} for kind in KINDS},
        "month_or_year": {"questions": len(dated[5]), "recall@5": mean(dated[5]),
                          "recall@10": mean(dated[10])},
        "query_ms": {"p50": times[len(times) // 2],
                     "p99": times[min(len(times) - 1, len(times) * 99 // 100)]},
        "ingest_s": ingest_s,
        "per_question": per_question,
    }
    print(f"Written notes: evidence recall, {len(notes)} notes, {len(questions)} questions, "
          f"ingest {ingest_s:.1f} s")
    print(f"{'kind':<11} {'questions':>9} {'R@5':>6} {'R@10':>6}")
    for kind in KINDS:
        row = results["kinds"][kind]
        print(f"{kind:<11} {row['questions']:>9} {row['recall@5']:>6.3f} {row['recall@10']:>6.3f}")
    print(f"{'all':<11} {len(questions):>9} {results['recall@5']:>6.3f} {results['recall@10']:>6.3f}")
    d, t = results["month_or_year"], results["query_ms"]
    print(f"naming a month or year: {d['questions']} questions, R@5 {d['recall@5']:.3f} "
          f"R@10 {d['recall@10']:.3f}; query round trip p50 {t['p50']:.2f} ms, "
          f"p99 {t['p99']:.2f} ms")
    if args.misses:
        for q, missing, found in misses:
            print(f"{q['id']} [{q['kind']}] {q['question']}\n  missing {' '.join(missing)}; "
                  f"top 10: {' '.join(str(f) for f in found)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
