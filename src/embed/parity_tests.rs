//! Parity of the built-in model with the Python reference (model2vec + HuggingFace
//! tokenizers) on `fixtures/embedding_parity.jsonl`, recorded by
//! `scripts/record_embedding_parity.py` from the committed model.
//!
//! Owns the guarantee that a text gets the same token ids, the same pooled ids and the
//! same direction (cosine >= 0.999) as in Python, for every recorded text: prose, code,
//! identifiers, URLs, accents, CJK, emoji, control characters, special tokens, words past
//! the length limit, texts past the 512-token and character cuts, and random mixtures.

use serde::Deserialize;

use super::builtin;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/embedding_parity.jsonl"
);
/// Embedding agreement required; int8 rows make both sides exact up to float rounding, so
/// real agreement is far tighter (the fixture stores 6 decimals).
const MIN_COSINE: f64 = 0.999;
const MIN_RECORDS: usize = 200;

#[derive(Deserialize)]
struct Record {
    text: String,
    ids: Vec<u32>,
    pooled: Vec<u32>,
    embedding: Vec<f32>,
}

fn records() -> Vec<Record> {
    let raw = std::fs::read_to_string(FIXTURE).expect("fixture is committed");
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("fixture line is a record"))
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    let na: f64 = a.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

#[test]
fn fixture_is_large_and_varied_enough() {
    let records = records();
    assert!(records.len() >= MIN_RECORDS, "{} records", records.len());
    assert!(
        records.iter().any(|r| r.ids.len() > 512),
        "no text past the token limit"
    );
    assert!(
        records.iter().any(|r| r.ids.contains(&1)),
        "no unknown word"
    );
    assert!(
        records
            .iter()
            .any(|r| r.embedding.iter().all(|&x| x == 0.0)),
        "no empty text"
    );
}

#[test]
fn token_ids_match_the_reference_tokenizer() {
    let model = builtin().unwrap();
    let mismatches: Vec<String> = records()
        .iter()
        .filter(|r| model.tokenizer().encode(&r.text) != r.ids)
        .map(|r| format!("{:?}", r.text.chars().take(60).collect::<String>()))
        .collect();
    assert!(
        mismatches.is_empty(),
        "ids differ for {} texts: {mismatches:?}",
        mismatches.len()
    );
}

#[test]
fn pooled_ids_match_model2vec_truncation_and_unknown_dropping() {
    let model = builtin().unwrap();
    let mismatches: Vec<String> = records()
        .iter()
        .filter(|r| model.pooled_ids(&r.text) != r.pooled)
        .map(|r| format!("{:?}", r.text.chars().take(60).collect::<String>()))
        .collect();
    assert!(
        mismatches.is_empty(),
        "pooled ids differ for {} texts: {mismatches:?}",
        mismatches.len()
    );
}

#[test]
fn embeddings_match_the_reference_within_cosine_tolerance() {
    let model = builtin().unwrap();
    let records = records();
    let texts: Vec<&str> = records.iter().map(|r| r.text.as_str()).collect();
    let ours = model.embed_batch(&texts);
    let mut worst = f64::INFINITY;
    for (record, vector) in records.iter().zip(&ours) {
        assert_eq!(vector.len(), model.dim());
        if record.embedding.iter().all(|&x| x == 0.0) {
            assert!(
                vector.iter().all(|&x| x == 0.0),
                "{:?} should embed to zero",
                record.text
            );
            continue;
        }
        let c = cosine(vector, &record.embedding);
        assert!(c >= MIN_COSINE, "cosine {c} for {:?}", record.text);
        worst = worst.min(c);
    }
    assert!(worst.is_finite());
    println!("worst cosine over the fixture: {worst:.7}");
}

#[test]
fn single_and_batch_embedding_agree_exactly() {
    let model = builtin().unwrap();
    let records = records();
    let texts: Vec<&str> = records.iter().take(40).map(|r| r.text.as_str()).collect();
    let batch = model.embed_batch(&texts);
    for (text, vector) in texts.iter().zip(&batch) {
        assert_eq!(&model.embed(text), vector);
    }
}
