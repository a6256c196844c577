"""Generate src/visible/tables.rs: the code points that show nothing on their own.

An identity (tenant or subject) must hold a character a person can see; Rust's standard
library has no general categories, so the table is generated here from Python's
`unicodedata` (Unicode 14.0.0 with Python 3.11; pinned below, as for the tokenizer's tables
in scripts/gen_unicode_tables.py). A code point is in NO_GLYPH when it is:

* a separator (Zs, Zl, Zp): spaces of every width;
* a format character (Cf): zero-width space and joiners, direction marks and isolates, the
  byte-order mark, invisible operators, tag characters, ...;
* a mark (Mn, Mc, Me): a combining accent, vowel sign or enclosing circle alone combines
  with nothing (variation selectors are nonspacing marks too);
* Default_Ignorable_Code_Point (DerivedCoreProperties.txt of the same version, which
  `unicodedata` does not expose, so its ranges are listed below): the Hangul fillers, the
  combining grapheme joiner, reserved tag and variation-selector ranges;
* one of BLANK_GLYPHS: letters or symbols drawn as empty space (U+2800 BRAILLE PATTERN
  BLANK).

Run from the repository root:

    python3 scripts/gen_visible_tables.py
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

PINNED_UNICODE = "14.0.0"
OUT = Path(__file__).resolve().parent.parent / "src" / "visible" / "tables.rs"
CATEGORIES = {"Zs", "Zl", "Zp", "Cf", "Mn", "Mc", "Me"}
# Default_Ignorable_Code_Point, Unicode 14.0.0 DerivedCoreProperties.txt.
DEFAULT_IGNORABLE = [
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
]
# Drawn as nothing though their category says otherwise.
BLANK_GLYPHS = [(0x2800, 0x2800)]
# Format characters of later Unicode versions (Egyptian hieroglyph format controls of 15.0)
# that a newer client may send.
LATER_FORMAT = [(0x13430, 0x1343F)]


def main() -> None:
    if unicodedata.unidata_version != PINNED_UNICODE:
        sys.exit(f"unicodedata is {unicodedata.unidata_version}; this table pins {PINNED_UNICODE}")
    points = set()
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        if unicodedata.category(chr(cp)) in CATEGORIES:
            points.add(cp)
    for lo, hi in DEFAULT_IGNORABLE + BLANK_GLYPHS + LATER_FORMAT:
        points.update(range(lo, hi + 1))
    ranges = []
    for cp in sorted(points):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    rows = "\n".join(f"    (0x{lo:04X}, 0x{hi:04X})," for lo, hi in ranges)
    OUT.write_text(
        "//! Code points that show nothing on their own: generated, do not edit.\n"
        "//!\n"
        f"//! Made by `scripts/gen_visible_tables.py` from Python's `unicodedata` {PINNED_UNICODE}\n"
        "//! (separators, format characters, marks, default-ignorable code points and\n"
        "//! blank glyphs; the script says why each). Sorted, inclusive and disjoint, for\n"
        "//! binary search. Owns data only; the logic lives in `mod.rs`.\n"
        "\n"
        "/// Code points that, alone or only among themselves, show a reader nothing.\n"
        "pub(super) static NO_GLYPH: &[(u32, u32)] = &[\n"
        f"{rows}\n"
        "];\n"
    )
    print(f"{OUT}: {len(ranges)} ranges, {len(points)} code points")


if __name__ == "__main__":
    main()
