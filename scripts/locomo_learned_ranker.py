#!/usr/bin/env python3
"""How far re-weighting the server's own signals could go: a ranker learned over them.

Usage: ALAYASIKI_RANKING_DEPTH=10 scripts/eval_locomo --lanes all --top-k 50 --rankings RANKINGS.json
       target/rerank-venv/bin/python scripts/locomo_learned_ranker.py RANKINGS.json

Every stage of the query path adds to a candidate's score by a rule with a share
chosen by hand. This asks what the best weighting of all of them together would
give: a ranker learned from the evidence labels over the signals the server
already has for each candidate of a question's top 50, trained on one split and
measured on the other (the tuning three 26, 30, 41 and the confirming two 42, 43),
both ways. A ranker measured on the conversations it was trained on says nothing;
only the other split's figure counts.

The signals of a candidate (nothing keyed to LoCoMo's names, wording or ids; the
turn id only stands in for reading order, as in scripts/locomo_stage_sim.py):
its fused score over the question's best and its rank; its keyword score over
the best keyword score, and keyword rank; its cosine, the cosine's gap to the best
cosine, and vector rank; whether the graph, a label and the time lane found it and
what a neighbour lent it; its length in words (log); whether it asks a question;
the share of the question's terms it holds; the best score among the candidates
up to two places away; its session's summed score among the best 20.

Two rankers: a linear one, trained on pairs (evidence against non-evidence of the
same question) by logistic loss (numpy), and gradient-boosted trees over the same
signals (scikit-learn), the strongest cheap learner and the ceiling of what these
signals hold. Both print R@5 / R@10 on each split beside the server's own ranking.

The rankings must be the default query's own: without ALAYASIKI_RANKING_DEPTH=10,
asking for 50 ranks 50 deep, whose first 10 differ from the default query's (tune
0.727 / 0.790 against 0.732 / 0.797), and a ranker measured on them partly repairs
that difference and flatters (scripts/locomo_stage_sim.py says more). Needs numpy
and scikit-learn (scripts/requirements-rerank.txt).
"""
import argparse
import json
import math

import numpy as np

from locomo_stage_sim import STOPWORDS, TUNE, position, words  # this folder is on sys.path

SIGNALS = ["score", "1/rank", "keyword", "1/keyword rank", "cosine", "cosine gap",
           "1/vector rank", "graph", "label", "neighbour", "time", "log words",
           "asks", "question terms held", "best within two", "session"]


def signals(q, turns):
    """One row of SIGNALS per candidate of question `q`."""
    ranking, scores, lanes = q["ranking"], q["scores"], q["item_lanes"]
    top = scores[0] or 1.0
    at = {d: i for i, d in enumerate(ranking)}
    best_keyword = max([l.get("keyword", {}).get("score", 0) for l in lanes] + [1e-9])
    best_cosine = max([l.get("vector", {}).get("score", 0) for l in lanes] + [1e-9])
    terms = {w for w in words(q["question"]) if w not in STOPWORDS}
    session = {}
    for i, d in enumerate(ranking[:20]):
        s, _ = position(d)
        session[s] = session.get(s, 0.0) + scores[i] / top
    rows = []
    for i, d in enumerate(ranking):
        lane = lanes[i]
        body = turns[d].split(": ", 1)[-1]
        s, n = position(d)
        near = [scores[at[f"D{s}:{n + o}"]] / top for o in (-2, -1, 1, 2)
                if f"D{s}:{n + o}" in at]
        rows.append([
            scores[i] / top,
            1.0 / (i + 1),
            lane.get("keyword", {}).get("score", 0) / best_keyword,
            1.0 / lane["keyword"]["rank"] if "keyword" in lane else 0.0,
            lane.get("vector", {}).get("score", 0),
            lane.get("vector", {}).get("score", 0) - best_cosine,
            1.0 / lane["vector"]["rank"] if "vector" in lane else 0.0,
            float("graph" in lane),
            float("label" in lane),
            lane.get("neighbour", {}).get("score", 0),
            float("time" in lane),
            math.log1p(len(words(body))),
            float(body.rstrip().endswith("?")),
            len(terms & set(words(body))) / max(1, len(terms)),
            max(near, default=0.0),
            session.get(s, 0.0),
        ])
    return np.array(rows, dtype=np.float64)


def recall(order, ranking, evidence, k):
    return len(evidence & {ranking[i] for i in order[:k]}) / len(evidence)


def measure(questions, score=None):
    """R@5, R@10 of the questions re-ranked by `score(X)` (None: as ranked)."""
    at5, at10 = [], []
    for q in questions:
        order = list(range(len(q["ranking"]))) if score is None else \
            list(np.argsort(-score(q["X"]), kind="stable"))
        at5.append(recall(order, q["ranking"], q["ev"], 5))
        at10.append(recall(order, q["ranking"], q["ev"], 10))
    return f"{np.mean(at5):.3f} / {np.mean(at10):.3f}"


def train_linear(questions, l2, steps=300, rate=1.0):
    X = np.vstack([q["X"] for q in questions])
    mean, spread = X.mean(0), X.std(0) + 1e-9
    pairs = []
    for q in questions:
        Z = (q["X"] - mean) / spread
        found = [i for i, d in enumerate(q["ranking"]) if d in q["ev"]]
        others = [i for i, d in enumerate(q["ranking"]) if d not in q["ev"]][:30]
        pairs += [Z[p] - Z[n] for p in found for n in others]
    P = np.array(pairs)
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        margin = P @ w
        w -= rate * (-(P * (1 / (1 + np.exp(margin)))[:, None]).mean(0) + l2 * w / len(P))
    return (lambda X: ((X - mean) / spread) @ w), w


def train_trees(questions, depth, rounds):
    from sklearn.ensemble import HistGradientBoostingClassifier
    X = np.vstack([q["X"] for q in questions])
    y = np.concatenate([[d in q["ev"] for d in q["ranking"]] for q in questions])
    model = HistGradientBoostingClassifier(max_depth=depth, max_iter=rounds,
                                           learning_rate=0.05, min_samples_leaf=50,
                                           random_state=0).fit(X, y)
    return lambda X: model.predict_proba(X)[:, 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rankings")
    args = ap.parse_args()
    data = json.load(open(args.rankings))
    split = {"tune": [], "confirm": []}
    for q in data["questions"]:
        if q["lanes"] != "all" or "item_lanes" not in q:
            continue
        q["X"] = signals(q, data["turns"][q["conversation"]])
        q["ev"] = set(q["evidence"])
        split["tune" if q["conversation"] in TUNE else "confirm"].append(q)
    print("R@5 / R@10, each ranker trained on one split; the other split's column is the one that counts")
    print(f"{'ranker':<34} {'tune (26, 30, 41)':>18} {'confirm (42, 43)':>18}")
    print(f"{'the server':<34} {measure(split['tune']):>18} {measure(split['confirm']):>18}")
    for trained, other in (("tune", "confirm"), ("confirm", "tune")):
        for l2 in (1.0, 100.0):
            score, w = train_linear(split[trained], l2)
            name = f"linear, l2 {l2:g}, trained on {trained}"
            print(f"{name:<34} {measure(split['tune'], score):>18} {measure(split['confirm'], score):>18}")
        for depth, rounds in ((2, 50), (3, 50), (3, 200)):
            score = train_trees(split[trained], depth, rounds)
            name = f"trees {depth} x {rounds}, trained on {trained}"
            print(f"{name:<34} {measure(split['tune'], score):>18} {measure(split['confirm'], score):>18}")
    _, w = train_linear(split["tune"] + split["confirm"], 1.0)
    print("linear weights (standardized signals, trained on all five):")
    for name, x in sorted(zip(SIGNALS, w), key=lambda p: -abs(p[1])):
        print(f"  {name:<22} {x:+.3f}")


if __name__ == "__main__":
    main()
