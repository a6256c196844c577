//! Mutation fuzzing: thousands of deterministic random corruptions of the
//! fixtures and of hand-built uncompressed PDFs (whose syntax is all
//! exposed). Extraction must return, `Ok` or `Err`, without panicking and
//! in bounded time.
//!
//! `PDF_FUZZ_ITERATIONS` (default 3000) sets the number of mutants and
//! `PDF_FUZZ_SEED` the starting seed, to run longer campaigns locally.

use std::time::{Duration, Instant};

use super::super::extract_text;
use super::builder::{simple_pdf, text_page};

/// xorshift64*: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
}

/// Tokens whose corruption stresses the parser's structure handling.
const TOKENS: &[&[u8]] = &[
    b"obj",
    b"endobj",
    b"stream",
    b"endstream",
    b" R",
    b"<<",
    b">>",
    b"[",
    b"]",
    b"(",
    b")",
    b"xref",
    b"trailer",
    b"/Length",
    b"/Kids",
    b"/Contents",
    b"/Font",
    b"/Filter",
    b"BT",
    b"Tj",
    b"TJ",
    b"Do",
    b"q",
    b"Q",
    b"/Type /Page",
    b"99999999999",
    b"-1",
    b"0 0 R",
];

fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    if data.is_empty() {
        data.push(rng.byte());
        return;
    }
    let len = data.len();
    match rng.below(7) {
        0 => {
            for _ in 0..=rng.below(8) {
                let at = rng.below(len);
                data[at] = rng.byte();
            }
        }
        1 => data.truncate(rng.below(len)),
        2 => {
            let at = rng.below(len);
            let junk: Vec<u8> = (0..=rng.below(16)).map(|_| rng.byte()).collect();
            data.splice(at..at, junk);
        }
        3 => {
            let at = rng.below(len);
            let end = (at + 1 + rng.below(256)).min(len);
            data.drain(at..end);
        }
        4 => {
            let at = rng.below(len);
            let end = (at + 1 + rng.below(512)).min(len);
            let chunk = data[at..end].to_vec();
            let to = rng.below(len);
            data.splice(to..to, chunk);
        }
        5 => {
            // Change a digit: offsets, lengths, object numbers, counts.
            let start = rng.below(len);
            if let Some(i) = (start..len)
                .chain(0..start)
                .find(|&i| data[i].is_ascii_digit())
            {
                data[i] = b'0' + rng.below(10) as u8;
            }
        }
        _ => {
            let at = rng.below(len);
            let token = TOKENS[rng.below(TOKENS.len())];
            let end = (at + rng.below(4)).min(len);
            data.splice(at..end, token.iter().copied());
        }
    }
}

fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/pdf");
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "pdf"))
                .filter_map(|p| Some((p.display().to_string(), std::fs::read(&p).ok()?)))
                .collect()
        })
        .unwrap_or_default();
    seeds.sort();
    assert!(seeds.len() >= 7, "fixtures missing from {dir}");
    let content =
        "BT /F1 12 Tf 14 TL 72 720 Td [(Fuzz) -300 (me)] TJ T* (line) ' q 1 0 0 1 5 5 cm Q ET \
                   BI /W 1 /H 1 ID x EI";
    seeds.push((
        "built:simple".into(),
        simple_pdf(&[content, &text_page("second")]),
    ));
    seeds
}

#[test]
fn mutated_pdfs_never_panic() {
    let iterations: usize = std::env::var("PDF_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let seed: u64 = std::env::var("PDF_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED);
    let mut rng = Rng(seed | 1);
    let seeds = seeds();
    let mut slowest = (Duration::ZERO, String::new());
    let mut outcomes = [0usize; 2];
    for i in 0..iterations {
        let (name, original) = &seeds[i % seeds.len()];
        let mut data = original.clone();
        for _ in 0..=rng.below(3) {
            mutate(&mut rng, &mut data);
        }
        let started = Instant::now();
        let result = extract_text(&data);
        let elapsed = started.elapsed();
        outcomes[usize::from(result.is_err())] += 1;
        if elapsed > slowest.0 {
            slowest = (elapsed, format!("iteration {i} of {name}"));
        }
    }
    // Generous for debug builds on a busy machine; a hang would not return.
    assert!(
        slowest.0 < Duration::from_secs(10),
        "slowest mutant: {slowest:?}"
    );
    // Most single corruptions of a real file leave text to extract.
    assert!(outcomes[0] > iterations / 4, "ok/err: {outcomes:?}");
}
