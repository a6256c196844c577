"""Record fixtures/embedding_parity.jsonl: reference token ids and embeddings.

For each text, the Python reference (model2vec 0.10 with HuggingFace tokenizers, versions
pinned in scripts/requirements-distill.txt) loaded from the committed model in
src/embed/model/ gives:

* `ids`: the tokenizer's ids, no special tokens added, no truncation, [UNK] kept;
* `pooled`: the ids `StaticModel.encode` averages (text cut to 512 * median token length
  chars, tokenized, truncated to 512 tokens, [UNK] dropped);
* `embedding`: `StaticModel.encode`'s vector, rounded to 6 decimals.

The Rust parity test (src/embed/parity_tests.rs) requires identical `ids` and `pooled`
and cosine >= 0.999 with `embedding`. Texts are hand-picked edge cases plus seeded random
mixtures of many scripts, so re-running the script gives the same file. Usage from the
repository root:

    HF_HUB_OFFLINE=1 venv/bin/python scripts/record_embedding_parity.py
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model2vec import StaticModel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODEL_DIR = ROOT / "src" / "embed" / "model"
OUT = ROOT / "fixtures" / "embedding_parity.jsonl"
SEED = 20240611
RANDOM_TEXTS = 80
DECIMALS = 6

PROSE = [
    "The quick brown fox jumps over the lazy dog.",
    "I went hiking with my sister last weekend and we saw a family of deer near the lake.",
    "Remember to water the tomatoes before you leave for the conference on Thursday.",
    "She finally finished her thesis on coral reef restoration after four long years.",
    "What time does the pharmacy on Elm Street close on Sundays?",
    "My grandmother's recipe for apple pie uses a pinch of nutmeg and a lot of butter.",
    "The meeting was moved to 3:30 PM because the projector in room B is broken.",
    "He adopted a rescue dog named Biscuit in March, and they go running every morning.",
    "Our team shipped the new search feature; latency dropped from 120 ms to 35 ms.",
    "Do you think it will rain tomorrow, or should we plan the picnic anyway?",
    "The museum's new exhibit explores the history of navigation, from astrolabes to GPS.",
    "After the storm, volunteers cleared fallen branches from the playground.",
    "I'm allergic to peanuts, so please double-check the ingredients.",
    "They painted the nursery a soft shade of green before the baby arrived.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "The agent stored a note: user prefers concise answers with citations.",
]

CODE = [
    'fn main() {\n    println!("Hello, world!");\n}',
    "def add(a: int, b: int) -> int:\n\treturn a + b  # sum",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01' ORDER BY name;",
    '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask"}}',
    "for (let i = 0; i < arr.length; i++) { total += arr[i] ?? 0; }",
    "$ cargo test --release -- --nocapture 2>&1 | tee log.txt",
    '#include <stdio.h>\nint main(void) { return printf("%d\\n", 42) < 0; }',
    '<div class="card"><a href="/docs#intro">Read&nbsp;more</a></div>',
    "x = [i**2 for i in range(10) if i % 2 == 0]",
    "git commit -m 'fix: handle EOF on stdin' && git push origin HEAD:main",
    "std::sync::OnceLock<Result<StaticModel, String>>",
    "@@ -12,7 +12,9 @@ impl Foo {\n-    let x = 1;\n+    let x = 2;",
]

IDENTIFIERS = [
    "snake_case_identifier",
    "camelCaseIdentifier",
    "PascalCaseHTTPServer",
    "SCREAMING_SNAKE_CASE_CONSTANT",
    "kebab-case-name",
    "__dunder_method__",
    "getUserByIdAndTenantId",
    "XMLHttpRequest",
    "i18n l10n a11y k8s",
    "v2.3.1-rc.4+build.567",
    "node_modules/.bin/eslint",
    "C:\\Users\\alaya\\Documents\\notes.txt",
    "/home/user/.config/alayasiki/config.toml",
]

URLS_EMAILS_NUMBERS = [
    "https://example.com/path/to/page?query=rust&lang=en#section-2",
    "http://localhost:8080/mcp/sse?session_id=3f2a9c1e-7b4d-4e8a-9f0b-1c2d3e4f5a6b",
    "ftp://files.example.org/pub/data_2023-12-31.tar.gz",
    "Contact me at jane.doe+news@example.co.uk or ops@sub.example.io",
    "mailto:support@example.com?subject=Hello%20there",
    "192.168.1.254 and 2001:db8::ff00:42:8329",
    "3.14159 2.71828 1.41421 6.022e23 -40 +7",
    "1,234,567.89 USD vs 1.234.567,89 EUR vs ¥120,000",
    "Call +1 (555) 010-9999 ext. 42",
    "0xDEADBEEF 0b1010 0o755 1e-9",
    "2024-06-11T14:30:00Z 11/06/2024 June 11th, 2024",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "ISBN 978-3-16-148410-0",
    "50% off!!! only $19.99 (was $39.99)",
]

ACCENTS = [
    "Café déjà vu — naïve façade, crème brûlée",
    "Über die Brücke gehen Müller und Schröder; Straße",
    "El niño comió jalapeños en la mañana",
    "Tiếng Việt có nhiều dấu: Nguyễn, Phạm, Đặng",
    "Zażółć gęślą jaźń",
    "İstanbul'da ılık bir gün; ISTANBUL ıi İI",
    "Ελληνικά: ΟΔΟΣ, οδός, Άλφα, ΐ",
    "Русский текст: Ёжик в тумане, ЙОД",
    "Ångström Øresund Æsir þorn ð",
    "ǅemal ǆ Ǆ ǈ ǉ ǋ",
    "résumé vs resume vs RÉSUMÉ",
    "a\u0301e\u0300i\u0302o\u0308u\u0303 (combining marks after letters)",
    "e\u0301\u0301\u0301 stacked marks",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３",
    "ﬁnancial ﬂow ligatures Ⅻ ① ² ½",
    "ẞ capital sharp s, ß small",
    "עִבְרִית עם ניקוד",
    "العَرَبِيَّة مع التشكيل",
    "हिन्दी देवनागरी",
    "ภาษาไทย",
    "ქართული",
    "Հայերեն",
]

CJK = [
    "東京で寿司を食べました。",
    "我喜欢学习中文，也喜欢看电影。",
    "한국어 문장입니다. 안녕하세요!",
    "ｶﾀｶﾅ カタカナ ひらがな",
    "中文English混合text测试",
    "漢字と kana の mix",
    "\U00020000\U0002a6d6 CJK extension B",
    "\uf900\ufa0e compatibility ideographs",
    "「引用」『二重』【括弧】〜",
    "가나다라마바사 ᄀᄁᄂ ㄱㄴㄷ",
]

EMOJI = [
    "I love pizza 🍕🍕🍕",
    "family: 👨‍👩‍👧‍👦 and flags 🇯🇵🇺🇸",
    "thumbs 👍🏽 👍🏿 keycap 1️⃣ #️⃣",
    "🤣🥰🦀 newer emoji",
    "✨ sparkles ✓ check ✗ cross ★ star",
    "☕️ coffee ♥️ heart",
]

PUNCT = [
    "!!!???...",
    "—–-‒―",
    "“smart quotes” ‘single’ «guillemets» „low“",
    "...and then... nothing...",
    "a.b.c.d/e/f\\g|h",
    "((([[[{{{<<<>>>}}}]]])))",
    "~`!@#$%^&*()_+-={}[]|\\:;\"'<>,.?/",
    "¿Qué? ¡Sí! ‽ ⁂ § ¶ † ‡ •",
    "。、！？；：",
    "\u2e43\u061d\u0c77 newer punctuation",
    "---\n***\n___",
]

EDGE = [
    "",
    " ",
    "\t\n\r",
    "\u200b",
    "\x00",
    "\ufeff",
    "\ufffd",
    "[UNK]",
    "[PAD]",
    "[CLS] [SEP] [MASK]",
    "[PAD][UNK][PAD]",
    "a[PAD]b[UNK]c",
    "[pad] [Pad] [ PAD ]",
    "[[PAD]]",
    "##",
    "##ing",
    "MiXeD CaSe TeXt",
    "ALL CAPS SHOUTING",
    "tab\tseparated\tvalues\nnew\nlines\r\nwindows",
    "control\x01chars\x02here\x07bell\x1bescape\x7fdel",
    "next\x85line nbsp\u00a0here ideographic\u3000space\u2028sep",
    "vertical\x0btab form\x0cfeed",
    "soft\u00adhyphen zero\u200bwidth joiner\u200dhere",
    "private\ue000use \U000f0000 plane",
    "unassigned \u0378 \U000e01f0 \U0010fffd",
    "\u0890\u08e2 \u0898x \u1734y \U00011938 newer marks and formats",
    "a" * 100,
    "a" * 101,
    "é" * 100,
    "é" * 101,
    "supercalifragilisticexpialidocious" * 3,
    "pneumonoultramicroscopicsilicovolcanoconiosis",
    "x" * 5000,
    "word " * 3,
    "\u0344\u0f73 \u0bca\u0bcb \u1d15f",
    "\u0130\u0131",
    "ΣΑΣ σας",
    "a\u0307\u0323 q\u0323\u0307",
    "\U0001d15e\U0001d165\U0001d16d",
]


def long_texts() -> list[str]:
    out = [
        # > 512 tokens of ordinary prose.
        " ".join(PROSE) * 4,
        # Over 512 * median chars but fewer tokens: the character cut decides.
        "international " * 300,
        # Unknown words fill the 512-token budget first, so nothing is left to pool.
        "ⱥⱥⱥ " * 520 + "hello world",
        # The cut lands inside a word.
        "abcdefghij" * 400,
        # Code-like long text.
        "\n".join(CODE) * 6,
        # Long CJK text: one token per ideograph.
        "我喜欢学习中文" * 120,
    ]
    return out


def span(first: int, end: int) -> list[str]:
    """The chars `first` up to, not including, `end`."""
    return [chr(c) for c in range(first, end)]


# Code points where the reference tokenizer's frozen Unicode tables differ from current
# Unicode, plus unassigned, private-use and multi-mark decomposition oddities.
RARE = list(
    "\u0890\u08e2\U000110cd\U00013430\u07fd\u0898\u1734\U00011938\u2e43"
    "\u061d\u166d\U000111c9\u0378\ue000\U0010fffd\U0001d15e\u0344\u0f73"
)
POOLS = {
    "ascii": span(0x20, 0x7F),
    "space": list(" \t\n\r\x0b\x0c\x85\u00a0\u1680\u2000\u2009\u200a\u2028\u2029\u202f\u205f\u3000"),
    "control": span(0, 0x20) + ["\x7f", "\u00ad", "\u200b", "\u200e", "\u2060", "\ufeff", "\ufffd"],
    "latin": span(0xC0, 0x250),
    "marks": span(0x300, 0x370) + ["\u20e3", "\ufe0f", "\u1ab0", "\u1dc0"],
    "greek_cyrillic": [c for c in span(0x370, 0x530) if c not in "\u0378\u0379"],
    "indic": span(0x900, 0xDFF),
    "cjk": span(0x4E00, 0x4F00) + span(0xF900, 0xF920) + span(0x3040, 0x3100),
    "hangul": span(0xAC00, 0xAD00) + span(0x1100, 0x1120),
    "emoji": span(0x1F300, 0x1F400) + span(0x1F900, 0x1F980) + ["\u200d"],
    "punct": span(0x2010, 0x2060) + span(0x2E00, 0x2E60) + span(0x3000, 0x3020),
    "symbols": span(0x2100, 0x2200) + span(0x2460, 0x2500) + span(0xFF00, 0xFF70),
    "rare": RARE,
    "special": ["[PAD]", "[UNK]", "[CLS]", "[", "]", "##"],
}
WORDS = [
    *"memory agent graph evidence citation the and of to running quickly".split(),
    *"unbelievable tokenization Café naïve".split(),
]


def random_texts(rng: random.Random) -> list[str]:
    out = []
    names = sorted(POOLS)
    for _ in range(RANDOM_TEXTS):
        pools = rng.sample(names, k=rng.randint(1, 4))
        parts = []
        for _ in range(rng.randint(1, 60)):
            if rng.random() < 0.25:
                parts.append(rng.choice(WORDS))
            else:
                parts.append(rng.choice(POOLS[rng.choice(pools)]))
            if rng.random() < 0.2:
                parts.append(" ")
        out.append("".join(parts))
    return out


def main() -> int:
    model = StaticModel.from_pretrained(MODEL_DIR)
    tokenizer = model.tokenizer
    max_chars = model.max_length * model.median_token_length
    texts = PROSE + CODE + IDENTIFIERS + URLS_EMAILS_NUMBERS + ACCENTS + CJK + EMOJI + PUNCT + EDGE
    texts += long_texts() + random_texts(random.Random(SEED))
    # Mixed-case variants exercise lowercasing on every kind of text above.
    texts += [t.upper() for t in PROSE[:4] + ACCENTS[:6]]

    embeddings = model.encode(texts)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as f:
        for text, embedding in zip(texts, embeddings, strict=True):
            tokenizer.no_truncation()
            ids = tokenizer.encode(text, add_special_tokens=False).ids
            tokenizer.enable_truncation(model.max_length)
            pooled = model.tokenize([text[:max_chars]])[0]
            record = {
                "text": text,
                "ids": ids,
                "pooled": pooled,
                "embedding": [round(float(x), DECIMALS) + 0.0 for x in embedding],
            }
            f.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {len(texts)} texts to {OUT} ({OUT.stat().st_size} bytes); model {MODEL_DIR}, max chars {max_chars}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
