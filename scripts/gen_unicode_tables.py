"""Generate src/embed/unicode_tables.rs: the Unicode tables the WordPiece tokenizer needs.

Rust's standard library has no Unicode general categories and no canonical decomposition,
yet BERT's normalizer and pre-tokenizer need both:

* CLEAN_DROP: characters `clean_text` deletes (NUL, U+FFFD and "other" characters: Cc, Cf,
  Co; except tab, CR and LF, which become spaces);
* STRIP_DROP: characters accent stripping deletes after NFD (nonspacing marks, Mn);
* STRIPPED: per code point, NFD with nonspacing marks removed, for every code point where
  that differs from the code point itself (Hangul syllables excluded: decomposed
  arithmetically in Rust);
* PUNCTUATION: what the pre-tokenizer splits off as its own token (ASCII punctuation or
  a P* general category);
* KEPT_COMBINING: combining marks (canonical combining class != 0) that survive
  stripping; canonical reordering could only move these, see tokenizer/mod.rs.

The base data is Python's `unicodedata` (Unicode 14.0.0 with Python 3.11; the version is
pinned below and printed). The reference implementation, HuggingFace `tokenizers`, does
not use the current Unicode version: its category tables are frozen at an older one
(Unicode 8.0) and it never deletes unassigned (Cn) code points. Parity with the model's
reference tokenizer matters more than following the newest standard, so the script probes
`tokenizers` (pinned in scripts/requirements-distill.txt) code point by code point, uses
what it observes, and prints and records in the generated file every code point where that
differs from `unicodedata`. Run from the repository root:

    venv/bin/python scripts/gen_unicode_tables.py
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import tokenizers
from tokenizers import normalizers, pre_tokenizers

PINNED_UNICODE = "14.0.0"
PINNED_TOKENIZERS = "0.22.2"
OUT = Path(__file__).resolve().parent.parent / "src" / "embed" / "unicode_tables.rs"
MAX_CODE_POINT = 0x10FFFF
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
# Values of STRIPPED at or above this mark index STRIPPED_MULTI instead of naming a char.
MULTI_FLAG = 0x8000_0000


def scalar_values():
    """Every Unicode scalar value (code points minus surrogates): what a Rust char can be."""
    for cp in range(MAX_CODE_POINT + 1):
        if not 0xD800 <= cp <= 0xDFFF:
            yield cp


def ranges(cps: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for cp in sorted(cps):
        if out and out[-1][1] + 1 == cp:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def is_ascii_punct(cp: int) -> bool:
    return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126


# ---- expectations from unicodedata ------------------------------------------------------


def ucd_clean_drop(cp: int) -> bool:
    if cp in (0, 0xFFFD):
        return True
    return chr(cp) not in "\t\n\r" and unicodedata.category(chr(cp)) in ("Cc", "Cf", "Co")


def ucd_stripped(cp: int) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", chr(cp)) if unicodedata.category(c) != "Mn")


def ucd_punct(cp: int) -> bool:
    return is_ascii_punct(cp) or unicodedata.category(chr(cp)).startswith("P")


# ---- observations from the reference tokenizer ------------------------------------------

CLEAN_ONLY = normalizers.BertNormalizer(
    clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False
)
STRIP_ONLY = normalizers.BertNormalizer(
    clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False
)
PRE = pre_tokenizers.BertPreTokenizer()


def ref_clean_drop(cp: int) -> bool:
    return CLEAN_ONLY.normalize_str(chr(cp)) == ""


def ref_stripped(cp: int) -> str:
    return STRIP_ONLY.normalize_str(chr(cp))


def ref_punct(cp: int) -> bool:
    # "a" + c + "b" comes back as three pieces exactly when c is split off as punctuation
    # (two when c is whitespace, one otherwise).
    return len(PRE.pre_tokenize_str("a" + chr(cp) + "b")) == 3


def hangul_stripped(cp: int) -> str:
    """Arithmetic Hangul decomposition (Unicode 3.12); jamo are letters, so nothing is stripped."""
    s = cp - HANGUL_FIRST
    lead, vowel, trail = 0x1100 + s // 588, 0x1161 + (s % 588) // 28, 0x11A7 + s % 28
    return chr(lead) + chr(vowel) + (chr(trail) if trail != 0x11A7 else "")


def main() -> int:
    if unicodedata.unidata_version != PINNED_UNICODE:
        print(
            f"unicodedata is {unicodedata.unidata_version}, expected {PINNED_UNICODE} (use Python 3.11)",
            file=sys.stderr,
        )
        return 1
    if tokenizers.__version__ != PINNED_TOKENIZERS:
        print(f"tokenizers is {tokenizers.__version__}, expected {PINNED_TOKENIZERS}", file=sys.stderr)
        return 1
    print(
        f"Python {sys.version.split()[0]}, unicodedata {unicodedata.unidata_version}, "
        f"tokenizers {tokenizers.__version__}"
    )

    clean_drop, strip_drop, punct, kept_combining = [], [], [], []
    stripped: dict[int, str] = {}
    deviations: dict[str, list[int]] = {"CLEAN_DROP": [], "STRIP": [], "PUNCTUATION": []}
    for cp in scalar_values():
        c = chr(cp)
        ref_drop = ref_clean_drop(cp)
        if ref_drop:
            clean_drop.append(cp)
        if ref_drop != ucd_clean_drop(cp):
            deviations["CLEAN_DROP"].append(cp)

        ref = ref_stripped(cp)
        if ref != ucd_stripped(cp):
            deviations["STRIP"].append(cp)
        if HANGUL_FIRST <= cp <= HANGUL_LAST:
            if ref != hangul_stripped(cp):
                print(f"Hangul U+{cp:04X} is not decomposed as expected", file=sys.stderr)
                return 1
        elif ref == "":
            strip_drop.append(cp)
        elif ref != c:
            stripped[cp] = ref

        if ref_punct(cp):
            punct.append(cp)
        if ref_punct(cp) != ucd_punct(cp):
            deviations["PUNCTUATION"].append(cp)

        if unicodedata.combining(c) != 0 and ref == c:
            kept_combining.append(cp)

    # Code points whose stripped form is empty go to STRIP_DROP, the others that change to
    # STRIPPED: the two tables are disjoint.
    multi = sorted({s for s in stripped.values() if len(s) != 1})
    multi_index = {s: i for i, s in enumerate(multi)}

    def packed(s: str) -> str:
        return f"0x{ord(s):04X}" if len(s) == 1 else f"0x{MULTI_FLAG | multi_index[s]:08X}"

    def range_table(name: str, doc: str, cps: list[int]) -> str:
        rows = "".join(f"    (0x{a:04X}, 0x{b:04X}),\n" for a, b in ranges(cps))
        return f"{doc}pub(crate) static {name}: &[(u32, u32)] = &[\n{rows}];\n"

    def deviation_note(name: str) -> str:
        items = [f"{a:04X}" if a == b else f"{a:04X}-{b:04X}" for a, b in ranges(deviations[name])]
        lines = [f"// {name}: {len(deviations[name])} code points differ from unicodedata {PINNED_UNICODE}:"]
        for item in items or ["none"]:
            if len(lines[-1]) + len(item) + 2 > 96:
                lines.append("//")
            lines[-1] += f" {item},"
        return "\n".join(lines).rstrip(",") + "\n"

    parts = [
        "//! Unicode tables for the BERT tokenizer: generated, do not edit.\n",
        "//!\n",
        "//! Made by `scripts/gen_unicode_tables.py` from Python's `unicodedata`\n",
        f"//! {PINNED_UNICODE}, with every code point checked against (and, where they disagree,\n",
        f"//! taken from) HuggingFace `tokenizers` {PINNED_TOKENIZERS}, the reference the embedding\n",
        "//! model was built with: its category tables are frozen at an older Unicode version and\n",
        "//! it keeps unassigned code points. All range tables are sorted, inclusive and disjoint,\n",
        "//! for binary search. Owns data only; the logic lives in `tokenizer/mod.rs`.\n",
        "\n",
        "// Where the reference tokenizer differs from unicodedata (hex code points):\n",
        "// (unassigned code points are kept by both and not listed)\n",
        deviation_note("CLEAN_DROP"),
        deviation_note("STRIP"),
        deviation_note("PUNCTUATION"),
        "\n",
        "/// Values of [`STRIPPED`] at or above this flag index [`STRIPPED_MULTI`] (low bits).\n",
        f"pub(crate) const MULTI_FLAG: u32 = 0x{MULTI_FLAG:08X};\n\n",
        range_table(
            "CLEAN_DROP",
            "/// Deleted by `clean_text`: NUL, U+FFFD and control, format and private-use\n"
            "/// characters (tab, LF and CR excluded: they are whitespace).\n",
            clean_drop,
        ),
        "\n",
        range_table(
            "STRIP_DROP",
            "/// Deleted by accent stripping: nonspacing marks, and the few code points whose\n"
            "/// canonical decomposition consists of nonspacing marks only.\n",
            strip_drop,
        ),
        "\n",
        "/// Canonical decomposition with nonspacing marks removed, for code points where it\n"
        "/// differs from the code point (Hangul syllables excluded): (code point, char or\n"
        "/// `MULTI_FLAG | index into STRIPPED_MULTI`), sorted by code point.\n",
        "pub(crate) static STRIPPED: &[(u32, u32)] = &[\n",
        "".join(f"    (0x{cp:04X}, {packed(s)}),\n" for cp, s in sorted(stripped.items())),
        "];\n\n",
        "/// Stripped decompositions longer than one char.\n",
        "pub(crate) static STRIPPED_MULTI: &[&str] = &[\n",
        "".join('    "' + "".join(f"\\u{{{ord(c):04X}}}" for c in s) + '",\n' for s in multi),
        "];\n\n",
        range_table(
            "PUNCTUATION",
            "/// Split off by the pre-tokenizer as single-char tokens: ASCII punctuation and the\n"
            "/// punctuation general categories (Pc, Pd, Ps, Pe, Pi, Pf, Po).\n",
            punct,
        ),
        "\n",
        range_table(
            "KEPT_COMBINING",
            "/// Combining marks (canonical combining class != 0) that survive accent stripping.\n"
            "/// Only a test needs it: it checks that no vocabulary token contains one.\n"
            "#[cfg(test)]\n",
            kept_combining,
        ),
    ]
    OUT.write_text("".join(parts), encoding="utf-8")
    print(
        f"wrote {OUT}: CLEAN_DROP {len(ranges(clean_drop))} ranges, STRIP_DROP {len(ranges(strip_drop))} ranges, "
        f"STRIPPED {len(stripped)} entries ({len(multi)} multi-char), PUNCTUATION {len(ranges(punct))} ranges, "
        f"KEPT_COMBINING {len(kept_combining)} code points"
    )
    for name, cps in deviations.items():
        print(
            f"{name}: {len(cps)} code points where tokenizers {PINNED_TOKENIZERS} "
            f"differs from unicodedata {PINNED_UNICODE}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
