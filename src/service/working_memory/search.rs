//! Searching one session like memory: a keyword lane (BM25 over the notes'
//! passages, on Porter stems, as the FTS5 index does for persistent
//! memory) and a vector lane (cosine against the passages' embeddings),
//! fused by the same method and lane weights as persistent retrieval, so
//! session and memory candidates can be interleaved by score.
//!
//! Owns the in-memory scoring only. It reads a snapshot of immutable notes
//! and never holds the registry lock, never stores anything, and never
//! sees another session.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::session_graph::Note;
use crate::embed::Embedder;
use crate::query::fuse::{self, Fused, Fusion, Lane};
use crate::query::retrieve::CANDIDATES_PER_RESULT;
use crate::query::stem::stem;
use crate::query::{terms, LaneSet};
use crate::store::ChunkHit;

/// BM25 term-frequency saturation and length normalization (the values
/// FTS5's `bm25()` uses, so both lanes weigh terms alike).
pub const BM25_K1: f64 = 1.2;
pub const BM25_B: f64 = 0.75;

/// Stemmed term counts of a passage, and its length in words.
pub fn term_counts(text: &str) -> (HashMap<String, u32>, u32) {
    let mut counts: HashMap<String, u32> = HashMap::new();
    let mut length = 0u32;
    for word in terms::words(text) {
        length = length.saturating_add(1);
        *counts.entry(stem(&word)).or_insert(0) += 1;
    }
    (counts, length)
}

/// The session's fused candidates for a question, best first, and the
/// lanes that could not run (the vector lane when the embedder failed).
pub fn candidates(
    notes: &[Arc<Note>],
    question: &str,
    terms: &[String],
    embedder: &dyn Embedder,
    lanes: LaneSet,
    top_k: usize,
    fusion: Fusion,
) -> (Vec<Fused>, BTreeMap<&'static str, String>) {
    let limit = top_k.saturating_mul(CANDIDATES_PER_RESULT);
    let passages: Vec<(&Note, usize)> = notes
        .iter()
        .flat_map(|n| (0..n.chunks.len()).map(move |i| (n.as_ref(), i)))
        .collect();
    let mut found = Vec::new();
    let mut errors = BTreeMap::new();
    if passages.is_empty() {
        return (Vec::new(), errors);
    }
    if lanes.keyword {
        found.push(Lane {
            name: "keyword",
            weight: fuse::KEYWORD_LANE_WEIGHT,
            hits: keyword(&passages, terms, limit),
        });
    }
    let any_vectors = notes.iter().any(|n| n.vectors.get().is_some());
    if lanes.vector && any_vectors {
        match embedder.embed_batch(&[question]) {
            Ok(mut v) => {
                let query = v.pop().unwrap_or_default();
                found.push(Lane {
                    name: "vector",
                    weight: fuse::VECTOR_LANE_WEIGHT,
                    hits: vector(&passages, &query, limit),
                });
            }
            Err(e) => {
                errors.insert("vector", e.0);
            }
        }
    }
    (fuse::fuse(found, fusion), errors)
}

/// BM25 over the passages. IDF is `ln(1 + (N - n + 0.5) / (n + 0.5))`,
/// which stays positive: a session is tiny, and the classic form (FTS5's)
/// goes negative for a term in more than half the passages, which in a
/// two-note session would rank a matching passage below a silent one.
fn keyword(passages: &[(&Note, usize)], terms: &[String], limit: usize) -> Vec<ChunkHit> {
    let mut stems: Vec<String> = Vec::new();
    for t in terms {
        let s = stem(t);
        if !stems.contains(&s) {
            stems.push(s);
        }
    }
    if stems.is_empty() {
        return Vec::new();
    }
    let n = passages.len() as f64;
    let average_length = passages
        .iter()
        .map(|(note, i)| f64::from(note.chunks[*i].length))
        .sum::<f64>()
        / n;
    let average_length = average_length.max(1.0);
    let idf: Vec<f64> = stems
        .iter()
        .map(|s| {
            let df = passages
                .iter()
                .filter(|(note, i)| note.chunks[*i].term_counts.contains_key(s))
                .count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mut scored: Vec<(f64, usize)> = passages
        .iter()
        .enumerate()
        .filter_map(|(p, (note, i))| {
            let chunk = &note.chunks[*i];
            let norm = 1.0 - BM25_B + BM25_B * f64::from(chunk.length) / average_length;
            let score: f64 = stems
                .iter()
                .zip(&idf)
                .filter_map(|(s, idf)| {
                    let tf = f64::from(*chunk.term_counts.get(s)?);
                    Some(idf * tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * norm))
                })
                .sum();
            (score > 0.0).then_some((score, p))
        })
        .collect();
    // Best first; ties in write order, so results are deterministic.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    scored
        .into_iter()
        .map(|(score, p)| hit(passages[p].0, passages[p].1, score))
        .collect()
}

/// Passages nearest the question's vector (cosine; vectors are unit
/// length). Notes whose embedding failed are skipped.
fn vector(passages: &[(&Note, usize)], query: &[f32], limit: usize) -> Vec<ChunkHit> {
    let mut scored: Vec<(f64, usize)> = passages
        .iter()
        .enumerate()
        .filter_map(|(p, (note, i))| {
            let v = note.vectors.get()?.get(*i)?;
            let dot: f32 = v.iter().zip(query).map(|(a, b)| a * b).sum();
            dot.is_finite().then_some((f64::from(dot), p))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    scored
        .into_iter()
        .map(|(score, p)| hit(passages[p].0, passages[p].1, score))
        .collect()
}

/// A passage in the shape persistent retrieval returns, so fusion, packing
/// and answers treat both alike. The score is negated as the store does
/// (lower is better).
fn hit(note: &Note, i: usize, score: f64) -> ChunkHit {
    let chunk = &note.chunks[i];
    let provenance = note
        .metadata
        .get("provenance")
        .and_then(|p| p.as_str())
        .filter(|p| matches!(*p, "external" | "user" | "agent"))
        .map(str::to_string);
    ChunkHit {
        page: None,
        // Unique within the session: fusion keys candidates by it.
        chunk_key: (i64::from(note.seq) << 24) | chunk.ordinal as i64,
        ordinal: chunk.ordinal as i64,
        start: chunk.start as i64,
        end: chunk.end as i64,
        text: note
            .text
            .get(chunk.start..chunk.end)
            .unwrap_or("")
            .to_string(),
        doc_id: note.id.clone(),
        source: None,
        title: note.file.as_ref().and_then(|f| f.filename.clone()),
        metadata: serde_json::Value::Object(note.metadata.clone()).to_string(),
        provenance,
        created_at: note.written_at_ms,
        bm25: -score,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::BuiltinEmbedder;
    use crate::ingest::media::MediaKind;
    use crate::query::terms::analyze;
    use crate::service::working_memory::session_graph::NoteChunk;
    use std::sync::OnceLock;

    fn note(seq: u32, text: &str, embed: bool) -> Arc<Note> {
        let passages = crate::ingest::chunk::chunk(text, MediaKind::PlainText);
        let chunks = passages
            .iter()
            .enumerate()
            .map(|(ordinal, p)| {
                let (term_counts, length) = term_counts(&p.text);
                NoteChunk {
                    ordinal,
                    start: p.start,
                    end: p.end,
                    term_counts,
                    length,
                }
            })
            .collect();
        let vectors = OnceLock::new();
        if embed {
            let v = crate::ingest::embed_chunks(&passages, &BuiltinEmbedder).unwrap();
            vectors.set(v).unwrap();
        }
        Arc::new(Note {
            id: format!("s/{seq}"),
            seq,
            media_type: "text/plain".into(),
            text: text.into(),
            original: None,
            file: None,
            metadata: Default::default(),
            written_at_ms: 0,
            chunks,
            vectors,
        })
    }

    #[test]
    fn stems_match_across_word_forms() {
        let (counts, length) = term_counts("Deploying deployed deploys; the END.");
        assert_eq!(counts["deploi"], 3);
        assert_eq!(length, 5);
        // The question side stems the same way.
        assert_eq!(stem(&analyze("deploying")[0]), "deploi");
    }

    #[test]
    fn keyword_lane_ranks_the_matching_note_with_an_exact_span() {
        let notes = vec![
            note(1, "Lunch was pasta.", false),
            note(2, "The cache eviction bug is in the LRU map.", false),
        ];
        let keyword_only = LaneSet {
            keyword: true,
            vector: false,
            graph: false,
        };
        let (fused, errors) = candidates(
            &notes,
            "where is the eviction bug?",
            &analyze("where is the eviction bug?"),
            &BuiltinEmbedder,
            keyword_only,
            5,
            Fusion::Calibrated,
        );
        assert!(errors.is_empty());
        assert_eq!(fused.len(), 1, "only the matching note");
        let top = &fused[0].hit;
        assert_eq!(top.doc_id, "s/2");
        assert_eq!(
            &notes[1].text[top.start as usize..top.end as usize],
            top.text
        );
    }

    #[test]
    fn idf_stays_positive_when_every_passage_has_the_term() {
        let notes = [note(1, "alpha beta", false), note(2, "alpha gamma", false)];
        let hits = keyword(
            &notes.iter().map(|n| (n.as_ref(), 0)).collect::<Vec<_>>(),
            &analyze("alpha"),
            10,
        );
        assert_eq!(hits.len(), 2);
        assert!(hits.iter().all(|h| h.bm25 < 0.0));
    }

    #[test]
    fn vector_lane_finds_meaning_without_shared_words() {
        let notes = vec![
            note(1, "The cat sat on the mat purring.", true),
            note(2, "Quarterly revenue grew by ten percent.", true),
        ];
        let vector_only = LaneSet {
            keyword: false,
            vector: true,
            graph: false,
        };
        let (fused, _) = candidates(
            &notes,
            "kitten",
            &analyze("kitten"),
            &BuiltinEmbedder,
            vector_only,
            1,
            Fusion::Calibrated,
        );
        assert_eq!(fused[0].hit.doc_id, "s/1");
        assert!(fused[0].lanes.contains_key("vector"));
    }
}
