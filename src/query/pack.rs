//! Candidates → the evidence list: diversity, near-duplicates, then the
//! character budget.
//!
//! Diversity keeps one long document from filling the page: at most
//! [`MAX_PER_DOCUMENT`] of the first results come from one document; the
//! rest wait until other documents had their turn. A candidate whose text
//! is an item's from another document with small edits
//! ([`near_duplicates`](super::near_duplicates)) takes no slot: the item
//! names its document instead. The budget bounds the
//! characters of evidence text returned; the first item is cut to fit
//! rather than returning nothing, and its span is cut with it.

use serde::Serialize;

use super::fuse::Fused;
use super::near_duplicates::Shingles;
use super::{Evidence, Span};

/// Items from one document before others get a turn.
pub const MAX_PER_DOCUMENT: usize = 3;

/// How the budget was spent.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetReport {
    pub limit_chars: usize,
    pub used_chars: usize,
    /// Results that ranked but did not fit.
    pub omitted: usize,
}

pub fn pack(hits: Vec<Fused>, top_k: usize, budget: usize) -> (Vec<Evidence>, BudgetReport) {
    let ordered = diversify(hits);
    let mut evidence: Vec<Evidence> = Vec::with_capacity(top_k.min(ordered.len()));
    // The shingles of each item taken, by position in `evidence`.
    let mut taken: Vec<Shingles> = Vec::with_capacity(evidence.capacity());
    let mut used = 0usize;
    let mut omitted = 0usize;
    for hit in ordered {
        if evidence.len() == top_k {
            break;
        }
        let shingles = Shingles::of(&hit.hit.text);
        let same = evidence
            .iter_mut()
            .zip(&taken)
            .find(|(e, s)| e.document_id != hit.hit.doc_id && s.near(&shingles));
        if let Some((item, _)) = same {
            if !item.near_duplicates.contains(&hit.hit.doc_id) {
                item.near_duplicates.push(hit.hit.doc_id.clone());
            }
            continue;
        }
        let chars = hit.hit.text.chars().count();
        if used + chars <= budget {
            used += chars;
            evidence.push(to_evidence(hit, evidence.len() + 1, None));
            taken.push(shingles);
        } else if evidence.is_empty() {
            let cut = hit
                .hit
                .text
                .char_indices()
                .nth(budget)
                .map(|(i, _)| i)
                .unwrap_or(hit.hit.text.len());
            used += budget.min(chars);
            evidence.push(to_evidence(hit, 1, Some(cut)));
            taken.push(shingles);
        } else {
            omitted += 1;
        }
    }
    (
        evidence,
        BudgetReport {
            limit_chars: budget,
            used_chars: used,
            omitted,
        },
    )
}

/// Reorders so no document has more than [`MAX_PER_DOCUMENT`] items ahead
/// of another document's first; keeps rank order otherwise.
fn diversify(hits: Vec<Fused>) -> Vec<Fused> {
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    let mut first = Vec::with_capacity(hits.len());
    let mut later = Vec::new();
    for hit in hits {
        let n = counts.entry(hit.hit.doc_id.clone()).or_insert(0);
        *n += 1;
        if *n <= MAX_PER_DOCUMENT {
            first.push(hit);
        } else {
            later.push(hit);
        }
    }
    first.extend(later);
    first
}

fn to_evidence(fused: Fused, rank: usize, cut: Option<usize>) -> Evidence {
    let Fused {
        hit,
        score,
        lanes,
        origin,
    } = fused;
    let (text, end, truncated) = match cut {
        Some(c) if c < hit.text.len() => (hit.text[..c].to_string(), hit.start as usize + c, true),
        _ => (hit.text, hit.end as usize, false),
    };
    Evidence {
        rank,
        chunk_id: format!("{}:{}", hit.doc_id, hit.ordinal),
        document_id: hit.doc_id,
        source: hit.source,
        title: hit.title,
        metadata: serde_json::from_str(&hit.metadata).unwrap_or_default(),
        provenance: hit.provenance,
        created_at: crate::clock::rfc3339(hit.created_at),
        span: Span {
            start: hit.start as usize,
            end,
        },
        page: hit.page.and_then(|p| u32::try_from(p).ok()),
        text,
        score,
        lanes,
        relations: Vec::new(),
        chunk_key: hit.chunk_key,
        truncated,
        origin,
        near_duplicates: Vec::new(),
        facts: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ChunkHit;

    fn hit(doc: &str, ordinal: i64, text: &str, bm25: f64) -> Fused {
        let hit = ChunkHit {
            chunk_key: ordinal,
            ordinal,
            start: 10,
            end: 10 + text.len() as i64,
            text: text.to_string(),
            doc_id: doc.to_string(),
            source: None,
            title: None,
            metadata: "{}".into(),
            provenance: None,
            created_at: 0,
            bm25,
            page: None,
        };
        Fused {
            hit,
            score: -bm25,
            lanes: Default::default(),
            origin: None,
        }
    }

    #[test]
    fn one_document_cannot_fill_the_page() {
        let hits: Vec<Fused> = (0..6)
            .map(|i| hit("a", i, "x", -10.0 + i as f64))
            .chain([hit("b", 0, "y", -1.0)])
            .collect();
        let (ev, _) = pack(hits, 4, 1000);
        let docs: Vec<&str> = ev.iter().map(|e| e.document_id.as_str()).collect();
        assert_eq!(docs, ["a", "a", "a", "b"]);
    }

    #[test]
    fn budget_is_never_exceeded_and_first_item_is_cut_to_fit() {
        let (ev, report) = pack(
            vec![hit("a", 0, "ééééé", -1.0), hit("b", 0, "zz", -0.5)],
            10,
            3,
        );
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].text, "ééé");
        assert!(ev[0].truncated);
        assert_eq!(ev[0].span.end - ev[0].span.start, "ééé".len());
        assert_eq!(report.used_chars, 3);
        assert_eq!(report.omitted, 1);
    }

    #[test]
    fn a_near_duplicate_of_another_document_takes_no_slot() {
        let text = "Dana leads the platform team, which owns the build farm, the deploy \
                    tooling and the release calendar; she took it over from Sam in March, \
                    after the reorganisation that moved on-call to the infrastructure group.";
        let edited = text.replace("took it over", "took over");
        let (ev, report) = pack(
            vec![
                hit("a", 0, text, -3.0),
                hit("b", 0, &edited, -2.9),
                hit("a", 1, &edited, -2.8),
                hit("c", 0, "Sam runs the on-call rota.", -2.0),
            ],
            10,
            1000,
        );
        let docs: Vec<&str> = ev.iter().map(|e| e.document_id.as_str()).collect();
        assert_eq!(docs, ["a", "a", "c"], "the same document's chunks stay");
        assert_eq!(ev[0].near_duplicates, ["b"]);
        assert_eq!(ev[2].rank, 3);
        assert_eq!(report.omitted, 0);
    }

    #[test]
    fn scores_are_positive_and_ranks_start_at_one() {
        let (ev, _) = pack(vec![hit("a", 0, "x", -2.5)], 10, 100);
        assert_eq!(ev[0].rank, 1);
        assert_eq!(ev[0].score, 2.5);
        assert_eq!(ev[0].chunk_id, "a:0");
    }
}
