//! The Porter stemmer, as SQLite's FTS5 `porter` tokenizer applies it.
//!
//! The full-text index stores stemmed terms. To ask the index how common a
//! query term is (its document frequency, for pruning terms so common that
//! ranking them would cost more than they tell), the query must stem its
//! terms the same way. This is M. F. Porter's 1980 algorithm with the
//! details SQLite chose: words shorter than 3 or longer than 64 bytes are
//! left alone; it works on bytes, so a non-ASCII byte is a consonant; Step
//! 1c's `y` counts as a vowel anywhere but first; only the first matching
//! suffix of each step's list is considered. A test checks it against
//! SQLite itself on thousands of words.
//!
//! Correctness of search never depends on this: a term whose stem is not
//! found in the index is kept, not dropped, so a mismatch only costs speed.
//!
//! Owns the stemmer alone. It sits with the knowledge model because
//! relation keys are stemmed with it too ([`super::fragment::predicate_key`],
//! which the store records relations under); `query::stem` re-exports it
//! for the query stages.

/// Words outside this length range (bytes) are not stemmed (as in SQLite).
pub const MIN_STEM_BYTES: usize = 3;
pub const MAX_STEM_BYTES: usize = 64;

/// Stems a lowercase word.
pub fn stem(word: &str) -> String {
    let bytes = word.as_bytes();
    if bytes.len() < MIN_STEM_BYTES || bytes.len() > MAX_STEM_BYTES {
        return word.to_string();
    }
    let mut w = bytes.to_vec();
    step1a(&mut w);
    step1b(&mut w);
    step1c(&mut w);
    apply(&mut w, STEP2);
    apply(&mut w, STEP3);
    apply(&mut w, STEP4);
    step5(&mut w);
    // Only ASCII bytes are ever removed or added, so the result is UTF-8.
    String::from_utf8(w).unwrap_or_else(|_| word.to_string())
}

fn is_vowel(c: u8, y_is_vowel: bool) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u') || (y_is_vowel && c == b'y')
}

/// Per byte: is it a consonant? (`y` is a vowel after a consonant.)
fn consonants(stem: &[u8]) -> impl Iterator<Item = bool> + '_ {
    let mut prev_consonant = false;
    stem.iter().map(move |&c| {
        prev_consonant = !is_vowel(c, prev_consonant);
        prev_consonant
    })
}

/// Porter's m: the number of vowel-consonant sequences in `[C](VC)^m[V]`.
fn measure(stem: &[u8]) -> usize {
    let mut m = 0;
    let mut seen_vowel = false;
    for consonant in consonants(stem) {
        if !consonant {
            seen_vowel = true;
        } else if seen_vowel {
            m += 1;
            seen_vowel = false;
        }
    }
    m
}

/// `*v*`: the stem has a vowel (SQLite: `y` counts unless it is first).
fn has_vowel(stem: &[u8]) -> bool {
    stem.iter().enumerate().any(|(i, &c)| is_vowel(c, i > 0))
}

/// `*o`: ends consonant-vowel-consonant, the last not w, x or y.
fn ends_cvc(stem: &[u8]) -> bool {
    let n = stem.len();
    if n < 3 || matches!(stem[n - 1], b'w' | b'x' | b'y') {
        return false;
    }
    let c: Vec<bool> = consonants(stem).collect();
    c[n - 3] && !c[n - 2] && c[n - 1]
}

#[derive(Clone, Copy)]
enum Cond {
    M0,
    M1,
    /// m > 1 and the stem ends in s or t.
    M1ST,
}

fn holds(cond: Cond, stem: &[u8]) -> bool {
    match cond {
        Cond::M0 => measure(stem) > 0,
        Cond::M1 => measure(stem) > 1,
        Cond::M1ST => matches!(stem.last(), Some(b's' | b't')) && measure(stem) > 1,
    }
}

type Rule = (&'static str, &'static str, Cond);

/// Applies the first rule whose suffix matches (leaving a non-empty stem),
/// if its condition holds; later rules are not tried either way.
fn apply(w: &mut Vec<u8>, rules: &[Rule]) {
    for &(suffix, replacement, cond) in rules {
        let s = suffix.as_bytes();
        if w.len() > s.len() && w.ends_with(s) {
            let stem_len = w.len() - s.len();
            if holds(cond, &w[..stem_len]) {
                w.truncate(stem_len);
                w.extend_from_slice(replacement.as_bytes());
            }
            return;
        }
    }
}

const STEP2: &[Rule] = &[
    ("ational", "ate", Cond::M0),
    ("tional", "tion", Cond::M0),
    ("enci", "ence", Cond::M0),
    ("anci", "ance", Cond::M0),
    ("izer", "ize", Cond::M0),
    ("logi", "log", Cond::M0),
    ("bli", "ble", Cond::M0),
    ("alli", "al", Cond::M0),
    ("entli", "ent", Cond::M0),
    ("eli", "e", Cond::M0),
    ("ousli", "ous", Cond::M0),
    ("ization", "ize", Cond::M0),
    ("ation", "ate", Cond::M0),
    ("ator", "ate", Cond::M0),
    ("alism", "al", Cond::M0),
    ("iveness", "ive", Cond::M0),
    ("fulness", "ful", Cond::M0),
    ("ousness", "ous", Cond::M0),
    ("aliti", "al", Cond::M0),
    ("iviti", "ive", Cond::M0),
    ("biliti", "ble", Cond::M0),
];

const STEP3: &[Rule] = &[
    ("icate", "ic", Cond::M0),
    ("ative", "", Cond::M0),
    ("alize", "al", Cond::M0),
    ("iciti", "ic", Cond::M0),
    ("ical", "ic", Cond::M0),
    ("ful", "", Cond::M0),
    ("ness", "", Cond::M0),
];

const STEP4: &[Rule] = &[
    ("al", "", Cond::M1),
    ("ance", "", Cond::M1),
    ("ence", "", Cond::M1),
    ("er", "", Cond::M1),
    ("ic", "", Cond::M1),
    ("able", "", Cond::M1),
    ("ible", "", Cond::M1),
    ("ant", "", Cond::M1),
    ("ement", "", Cond::M1),
    ("ment", "", Cond::M1),
    ("ent", "", Cond::M1),
    ("ion", "", Cond::M1ST),
    ("ou", "", Cond::M1),
    ("ism", "", Cond::M1),
    ("ate", "", Cond::M1),
    ("iti", "", Cond::M1),
    ("ous", "", Cond::M1),
    ("ive", "", Cond::M1),
    ("ize", "", Cond::M1),
];

/// Plurals: sses → ss, ies → i, ss stays, s → "".
fn step1a(w: &mut Vec<u8>) {
    if (w.len() > 4 && w.ends_with(b"sses")) || (w.len() > 3 && w.ends_with(b"ies")) {
        w.truncate(w.len() - 2);
    } else if w.ends_with(b"s") && !w.ends_with(b"ss") {
        w.truncate(w.len() - 1);
    }
}

/// Past tense and gerunds, with the clean-up that restores a stem's `e` or
/// undoubles its last consonant.
fn step1b(w: &mut Vec<u8>) {
    let stripped = if w.len() > 3 && w.ends_with(b"eed") {
        if measure(&w[..w.len() - 3]) > 0 {
            w.truncate(w.len() - 1);
        }
        false
    } else if w.len() > 2 && w.ends_with(b"ed") && has_vowel(&w[..w.len() - 2]) {
        w.truncate(w.len() - 2);
        true
    } else if w.len() > 3 && w.ends_with(b"ing") && has_vowel(&w[..w.len() - 3]) {
        w.truncate(w.len() - 3);
        true
    } else {
        false
    };
    if !stripped {
        return;
    }
    if w.len() > 2 && (w.ends_with(b"at") || w.ends_with(b"bl") || w.ends_with(b"iz")) {
        w.push(b'e');
        return;
    }
    let n = w.len();
    let last = w[n - 1];
    if n >= 2 && !is_vowel(last, false) && !matches!(last, b'l' | b's' | b'z') && last == w[n - 2] {
        w.truncate(n - 1);
    } else if measure(w) == 1 && ends_cvc(w) {
        w.push(b'e');
    }
}

/// `y` → `i` when the stem has a vowel.
fn step1c(w: &mut [u8]) {
    let n = w.len();
    if w[n - 1] == b'y' && has_vowel(&w[..n - 1]) {
        w[n - 1] = b'i';
    }
}

/// A final `e` goes when m > 1 (or m = 1 and not `*o`); a final `ll`
/// becomes `l` when m > 1.
fn step5(w: &mut Vec<u8>) {
    let n = w.len();
    if w[n - 1] == b'e' {
        let stem = &w[..n - 1];
        let m = measure(stem);
        if m > 1 || (m == 1 && !ends_cvc(stem)) {
            w.truncate(n - 1);
        }
    }
    let n = w.len();
    if n > 1 && w[n - 1] == b'l' && w[n - 2] == b'l' && measure(&w[..n - 1]) > 1 {
        w.truncate(n - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_examples() {
        for (w, s) in [
            ("caresses", "caress"),
            ("sses", "sse"),
            ("ponies", "poni"),
            ("ties", "ti"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("troubled", "troubl"),
            ("sized", "size"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("generalization", "gener"),
            ("acquired", "acquir"),
            ("acquire", "acquir"),
            ("companies", "compani"),
            ("company", "compani"),
            ("is", "is"),
            ("a", "a"),
            ("caf\u{e9}", "caf\u{e9}"),
        ] {
            assert_eq!(stem(w), s, "{w}");
        }
    }

    #[test]
    fn never_panics_and_keeps_utf8() {
        for w in [
            "",
            "yyy",
            "sss",
            "eee",
            "ies",
            "éées",
            "ñing",
            "ыыыing",
            "e",
            "eds",
            "ings",
        ] {
            let _ = stem(w);
        }
    }

    /// Parity with SQLite's own porter tokenizer on the words of this
    /// repository's sources and fixtures plus generated inflections.
    #[test]
    fn matches_sqlite_fts5_porter() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter ascii');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
        )
        .unwrap();
        let mut words: Vec<String> = Vec::new();
        let mut corpus = String::new();
        for dir in ["src/query", "src/protocol", "fixtures/sessions", "tests"] {
            collect_text(
                &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir),
                &mut corpus,
            );
        }
        for w in corpus.split(|c: char| !c.is_ascii_alphabetic()) {
            let w = w.to_ascii_lowercase();
            if (1..=70).contains(&w.len()) {
                for suffix in [
                    "", "s", "es", "ed", "ing", "ly", "ness", "ation", "izer", "ful",
                ] {
                    words.push(format!("{w}{suffix}"));
                }
            }
        }
        words.sort();
        words.dedup();
        assert!(words.len() > 5000, "{}", words.len());
        let mut insert = conn
            .prepare("INSERT INTO t(rowid, x) VALUES (?1, ?2)")
            .unwrap();
        for (i, w) in words.iter().enumerate() {
            insert.execute(rusqlite::params![i as i64 + 1, w]).unwrap();
        }
        let mut q = conn.prepare("SELECT doc, term FROM v").unwrap();
        let rows = q
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .unwrap();
        let mut mismatches = Vec::new();
        for row in rows {
            let (doc, term) = row.unwrap();
            let word = &words[doc as usize - 1];
            if stem(word) != term {
                mismatches.push(format!("{word}: sqlite {term}, ours {}", stem(word)));
            }
        }
        assert!(
            mismatches.is_empty(),
            "{} mismatches, e.g. {:?}",
            mismatches.len(),
            &mismatches[..mismatches.len().min(10)]
        );
    }

    fn collect_text(dir: &std::path::Path, out: &mut String) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                collect_text(&p, out);
            } else if let Some(text) = p
                .extension()
                .filter(|e| *e == "rs" || *e == "jsonl")
                .and_then(|_| std::fs::read_to_string(&p).ok())
            {
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
}
