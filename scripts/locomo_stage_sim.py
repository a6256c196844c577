#!/usr/bin/env python3
"""Candidate query stages simulated over the server's own ranking, offline.

Usage: ALAYASIKI_RANKING_DEPTH=10 scripts/eval_locomo --lanes all --top-k 50 --rankings RANKINGS.json
       python3 scripts/locomo_stage_sim.py RANKINGS.json [--stage NAME ...]

A stage that only adds to (or scales) the scores of ranked candidates can be
measured without building it: the rankings file holds every question's top 50
with the fused score of each item and the text of every turn, so re-ranking
them here gives the recall the stage would give, at @5 and @10, on the tuning
three conversations (26, 30, 41) and the confirming two (42, 43). The first
row of each stage is the server's ranking as it is (share 0). A stage keyed to
nothing but the question's wording and the candidates' text and reading order
(never `dia_id`, evidence or categories) is a fair candidate; one that helps
only the tuning three is not kept (BENCHMARKS.md, "Retrieval quality on
LoCoMo").

ALAYASIKI_RANKING_DEPTH=10 makes the server rank as the default query does (10
deep) while returning 50: the first 10 are the default query's results and the
rest the candidates it ranked after them. Without it, asking for 50 ranks 50 deep,
whose first 10 are a different ranking (tune 0.727 / 0.790 against the default's
0.732 / 0.797), and a stage screened on that ranking partly repairs the difference:
stages that simulated a gain then gave nothing in the server. With it, a stage
that only re-weighs the candidates simulates what the server gives (a trial build
of one matched to the third decimal); one that adds chunks no lane found (third)
can still simulate a little above the server.

Stages (what each gives, as a share of the question's best score):
  third      the chunks three places away from each of the best 20
  when       a question opening with "when": candidates that state a time
  source     every candidate: its source's (session's) summed score among the best 20
  pairs      candidates holding adjacent pairs of the question's words
  cosine     every candidate: its cosine with the question under a static model
             (--model, a model.safetensors with the built-in vocabulary; default the
             built-in model), min-max scaled over the candidates. The vector lane
             scores only its own pool; this scores every candidate. Needs numpy and
             tokenizers (target/rerank-venv has both), so it runs only when named:
             without --stage, every other stage runs.
  hypernym   every turn (found by a lane or not) holding a noun that WordNet files
             under a class the question names ("pottery" under "activity", for "What
             activities ..."), when the turn does not name the class itself and the
             class covers at most 5% of the conversation's turns. Needs --wordnet, a
             folder of WordNet's database files (Debian's wordnet-base package), so it
             runs only when named.
  period     every turn (found by a lane or not) whose session is dated in a period
             the question names ("in July 2022", "on 3 June, 2023"), widened as the
             server widens it (3 days before, 14 after). The server's time lane ranks
             only the period's chunks its keyword and vector pools found; this asks
             what the rest would add. Reads the sessions' dates from --data (default
             ../shared/eval/locomo-dev), so it runs only when named.
"""
import argparse
import collections
import datetime
import json
import re
import struct
from pathlib import Path

TUNE = ("26", "30", "41")
MODEL_DIR = Path(__file__).resolve().parent.parent / "src" / "embed" / "model"
LENDERS = 20
STOPWORDS = set("""a about above after again against all am an and any are aren as at be
because been before being below between both but by can could couldn d did didn do does
doesn doing don down during each else ever few for from further had hadn has hasn have
haven having he her here hers herself him himself his how i if in into is isn it its
itself just ll m me might more most must my myself no nor not now of off on once only or
other ought our ours ourselves out over own re s same shall she should shouldn so some
such t than that the their theirs them themselves then there these they this those
through to too under until up ve very was wasn we were weren what when where which while
who whom why will with won would wouldn you your yours yourself yourselves""".split())
TIME = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|recently|last (week|month|year|weekend|night)"
    r"|(this|next) (week|month|year|weekend)|(mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|january|february|march|april|may|june|july|august|september|october|november"
    r"|december|(19|20)\d\d)\b", re.I)


def position(dia_id):
    """(session, turn) of a LoCoMo turn id `D<session>:<turn>`: its reading order."""
    s, n = dia_id[1:].split(":")
    return int(s), int(n)


def words(text):
    def stem(w):
        for suffix in ("ing", "ed", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                return w[:-len(suffix)]
        return w
    return [stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def third(q, turns, share):
    lent = {}
    for x, score in list(zip(q["ranking"], q["scores"]))[:LENDERS]:
        s, n = position(x)
        for d in (3, -3):
            y = f"D{s}:{n + d}"
            if y in turns:
                lent[y] = max(lent.get(y, 0.0), share * score)
    return lent


def when(q, turns, share):
    if not re.match(r"\s*when\b", q["question"], re.I):
        return {}
    best = q["scores"][0]
    return {x: share * best for x in q["ranking"] if TIME.search(turns.get(x, ""))}


def source(q, turns, share):
    by_session = collections.defaultdict(float)
    for x, score in list(zip(q["ranking"], q["scores"]))[:LENDERS]:
        by_session[position(x)[0]] += score
    return {x: share * by_session.get(position(x)[0], 0.0) for x in q["ranking"]}


def pairs(q, turns, share):
    content = [w for w in words(q["question"]) if w not in STOPWORDS]
    wanted = set(zip(content, content[1:]))
    if not wanted:
        return {}
    best = q["scores"][0]
    out = {}
    for x in q["ranking"]:
        t = words(turns.get(x, ""))
        found = len(wanted & set(zip(t, t[1:])))
        if found:
            out[x] = share * best * found / len(wanted)
    return out


class StaticModel:
    """Mean of token rows, normalized: what the server's embedder does, over `rows` in the
    built-in vocabulary's order."""

    def __init__(self, rows):
        import numpy as np
        from tokenizers import Tokenizer
        self.np = np
        self.rows = rows
        self.tokenizer = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))

    @classmethod
    def load(cls, path):
        """The rows of a model.safetensors (int8, float16 or float32)."""
        import numpy as np
        raw = Path(path).read_bytes()
        size = struct.unpack("<Q", raw[:8])[0]
        meta = json.loads(raw[8:8 + size])["embeddings"]
        start, end = meta["data_offsets"]
        dtype = {"I8": np.int8, "F16": np.float16, "F32": np.float32}[meta["dtype"]]
        rows = np.frombuffer(raw[8 + size + start:8 + size + end], dtype).reshape(meta["shape"])
        return cls(rows.astype(np.float32))

    def embed(self, texts):
        np = self.np
        out = np.zeros((len(texts), self.rows.shape[1]), np.float32)
        for j, enc in enumerate(self.tokenizer.encode_batch(texts)):
            if len(enc.ids) > 2:
                out[j] = self.rows[enc.ids[1:-1]].mean(0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


MODEL = {"path": MODEL_DIR / "model.safetensors"}


def cosine(q, turns, share):
    if "loaded" not in MODEL:
        MODEL["loaded"] = StaticModel.load(MODEL["path"])
    model = MODEL["loaded"]
    cos = model.embed([turns.get(x, "") for x in q["ranking"]]) @ model.embed([q["question"]])[0]
    low, high = float(cos.min()), float(cos.max())
    best = q["scores"][0]
    return {x: share * best * (c - low) / (high - low or 1.0) for x, c in zip(q["ranking"], cos)}


class WordNet:
    """Noun hypernyms from WordNet's database files (Debian's wordnet-base): for a word,
    the lemmas of every class above its first senses, a few levels up."""

    SENSES, LEVELS = 2, 6

    def __init__(self, folder):
        folder = Path(folder)
        self.synsets, self.senses, self.irregular = {}, {}, {}
        for line in open(folder / "data.noun", encoding="latin-1"):
            if line.startswith("  "):
                continue
            f = line.split(" | ")[0].split()
            n = int(f[3], 16)
            i = 5 + 2 * n
            above = [f[j + 1] for j in range(i, i + 4 * int(f[i - 1]), 4)
                     if f[j] in ("@", "@i") and f[j + 2] == "n"]
            self.synsets[f[0]] = ([f[4 + 2 * k].lower() for k in range(n)], above)
        for line in open(folder / "index.noun", encoding="latin-1"):
            if not line.startswith("  "):
                f = line.split()
                self.senses[f[0]] = f[-int(f[2]):]
        for line in open(folder / "noun.exc", encoding="latin-1"):
            plural, singular = line.split()[:2]
            self.irregular[plural] = singular
        self.cache = {}

    def noun(self, word):
        """The noun a word is a form of ("activities" is "activity"), or None."""
        if word in self.irregular:
            return self.irregular[word]
        for suffix, ending in (("", ""), ("ies", "y"), ("ses", "s"), ("es", ""), ("s", "")):
            if word.endswith(suffix) and word[:len(word) - len(suffix)] + ending in self.senses:
                return word[:len(word) - len(suffix)] + ending
        return None

    def classes(self, noun):
        if noun not in self.cache:
            out, seen = set(), set()
            frontier = [(o, 0) for o in self.senses.get(noun, [])[:self.SENSES]]
            while frontier:
                o, level = frontier.pop()
                if o in seen or level > self.LEVELS:
                    continue
                seen.add(o)
                lemmas, above = self.synsets[o]
                if level:
                    out.update(lemmas)
                frontier += [(a, level + 1) for a in above]
            self.cache[noun] = out
        return self.cache[noun]


WORDNET = {"folder": None}
SPECIFIC = 0.05  # a class above at most this share of the conversation's turns


def hypernym(q, turns, share):
    if "loaded" not in WORDNET:
        WORDNET["loaded"], WORDNET["turns"] = WordNet(WORDNET["folder"]), {}
    wn, memo = WORDNET["loaded"], WORDNET["turns"]

    def plain(text):
        """A turn's words as nouns where WordNet has them (its speaker left out)."""
        return {wn.noun(w) or w for w in re.findall(r"[a-z]+", text.split(": ", 1)[-1].lower())}

    if id(turns) not in memo:
        memo[id(turns)] = {x: (plain(t), {c for w in plain(t) for c in wn.classes(w)})
                           for x, t in turns.items()}
    above = memo[id(turns)]
    asked = {wn.noun(w) for w in re.findall(r"[a-z]+", q["question"].lower()) if w not in STOPWORDS}
    asked = {c for c in asked - {None}
             if 0 < sum(c in a for _, a in above.values()) <= SPECIFIC * len(above)}
    best = q["scores"][0]
    return {x: share * best for x, (own, a) in above.items() if (asked & a) - own}


MONTHS = ("january february march april may june july august september october november "
          "december").split()
PERIOD = re.compile(r"\b(?:(\d{1,2}) )?(" + "|".join(MONTHS) + r")(?: (\d{1,2}))?,? (\d{4})\b", re.I)
DATES = {"folder": Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "locomo-dev"}


def session_dates(conversation):
    """Each session's date, from the conversation's file (`session_N_date_time`)."""
    memo = DATES.setdefault("loaded", {})
    if conversation not in memo:
        raw = json.load(open(Path(DATES["folder"]) / f"{conversation}.json"))
        memo[conversation] = {}
        for key, value in raw.items():
            m = re.search(r"(\d+) (\w+), (\d{4})", value) if key.endswith("_date_time") else None
            if m:
                day = datetime.date(int(m[3]), MONTHS.index(m[2].lower()) + 1, int(m[1]))
                memo[conversation][int(key.split("_")[1])] = day
    return memo[conversation]


def period(q, turns, share):
    spans = []
    for m in PERIOD.finditer(q["question"]):
        year, month, day = int(m[4]), MONTHS.index(m[2].lower()) + 1, m[1] or m[3]
        if day:
            first = last = datetime.date(year, month, int(day))
        else:
            first = datetime.date(year, month, 1)
            last = datetime.date(year + month // 12, month % 12 + 1, 1) - datetime.timedelta(1)
        spans.append((first - datetime.timedelta(3), last + datetime.timedelta(14)))
    dates = session_dates(q["conversation"]) if spans else {}
    best = q["scores"][0]
    return {x: share * best for x in turns
            if any(a <= dates.get(position(x)[0], datetime.date.min) <= b for a, b in spans)}


STAGES = {"third": third, "when": when, "source": source, "pairs": pairs, "cosine": cosine,
          "hypernym": hypernym, "period": period}
NAMED_ONLY = {"cosine", "hypernym", "period"}
SHARES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)


def measure(data, stage, share):
    sums = {"tune": [0.0, 0.0, 0], "confirm": [0.0, 0.0, 0]}
    for q in data["questions"]:
        if not q["scores"]:
            continue
        turns = data["turns"][q["conversation"]]
        score = dict(zip(q["ranking"], q["scores"]))
        for x, extra in (stage(q, turns, share) if share else {}).items():
            score[x] = score.get(x, 0.0) + extra
        first = {x: i for i, x in enumerate(q["ranking"])}
        order = sorted(score, key=lambda x: (-score[x], first.get(x, len(first))))
        split = sums["tune" if q["conversation"] in TUNE else "confirm"]
        for i, k in enumerate((5, 10)):
            top = set(order[:k])
            split[i] += sum(e in top for e in q["evidence"]) / len(q["evidence"])
        split[2] += 1
    return {name: (s[0] / s[2], s[1] / s[2]) for name, s in sums.items() if s[2]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rankings")
    ap.add_argument("--stage", action="append", choices=sorted(STAGES))
    ap.add_argument("--model", help="model.safetensors for the cosine stage (default: the built-in model)")
    ap.add_argument("--wordnet", help="folder of WordNet's data.noun, index.noun and noun.exc "
                                      "for the hypernym stage")
    ap.add_argument("--data", help="folder of the conversations' files, for the period stage's "
                                   "session dates (default ../shared/eval/locomo-dev)")
    args = ap.parse_args()
    if args.data:
        DATES["folder"] = args.data
    if args.model:
        MODEL["path"] = Path(args.model)
    if "hypernym" in (args.stage or []) and not args.wordnet:
        ap.error("the hypernym stage needs --wordnet")
    WORDNET["folder"] = args.wordnet
    data = json.load(open(args.rankings))
    data["questions"] = [q for q in data["questions"] if q["lanes"] == "all"]
    print(f"{'stage':8} {'share':>5}  tune R@5 / R@10   confirm R@5 / R@10")
    for name in args.stage or sorted(set(STAGES) - NAMED_ONLY):
        for share in SHARES:
            r = measure(data, STAGES[name], share)
            print(f"{name:8} {share:5.2f}  {r['tune'][0]:.3f} / {r['tune'][1]:.3f}"
                  f"      {r['confirm'][0]:.3f} / {r['confirm'][1]:.3f}")


if __name__ == "__main__":
    main()
