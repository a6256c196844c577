//! The extractive answer: the evidence sentences that best cover the
//! question's terms, each followed by a citation marker `[n]` that names
//! evidence item `n`.
//!
//! Sentences are scored by the question terms they contain, each term
//! weighted by how rare it is among the candidate sentences (so a sentence
//! with the one distinctive word beats one with three common ones), with a
//! mild preference for higher-ranked evidence. Terms match on their Porter
//! stems (as the index does), so "acquired" answers "acquire".
//!
//! The answer quotes one document: the one whose evidence carries the
//! question's terms best (the same weights, summed over the distinct terms
//! its evidence holds), even when it ranks below a long section that
//! repeats one common term. Within it, sentences are taken best first
//! while each adds a question term the ones before did not cover; an
//! answer stops rather than pad with sentences that repeat a term, and
//! never quotes a second document.

use serde::Serialize;
use std::collections::HashSet;

use super::stem::stem;
use super::{Evidence, Span};
use crate::text::floor_char_boundary;

/// Sentences in an answer.
pub const MAX_ANSWER_SENTENCES: usize = 3;

/// Longest sentence quoted whole (bytes); of a longer one (a paragraph
/// without sentence ends) only this much is quoted, around its first word
/// of the question, between `…` marks, since an answer should be readable.
pub const MAX_SENTENCE_BYTES: usize = 600;

/// What the answer says when nothing was found.
pub const NOTHING_FOUND: &str = "No stored evidence matches this question.";

/// What the answer says when evidence was found but none of its sentences
/// holds a word of the question (the vector lane's nearest matches).
pub const NO_SENTENCE_MATCHES: &str =
    "No evidence sentence contains the question's words; the evidence items are only the nearest matches.";

#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The sentences with markers, e.g. `Acme bought Widgets in May. [1]`
    /// (or the LLM's answer, with the markers it chose).
    pub text: String,
    pub citations: Vec<Citation>,
    /// What composed `text`.
    pub method: AnswerMethod,
    /// Why the configured LLM's answer is not the one given (client-safe).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// What composed an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerMethod {
    /// Evidence sentences quoted by [`compose`].
    Extractive,
    /// The optional LLM, citing evidence it was given (see
    /// [`super::synthesis`]).
    Llm,
}

#[derive(Debug, Clone, Serialize)]
pub struct Citation {
    /// The `n` of `[n]`: the cited evidence item's rank.
    pub marker: usize,
    pub chunk_id: String,
    pub document_id: String,
    /// Byte span of the quoted sentence in the document's extracted text.
    pub span: Span,
}

struct Candidate<'e> {
    evidence: &'e Evidence,
    start: usize, // byte offsets within evidence.text
    end: usize,
    /// Whether the quote leaves out part of its sentence before and after
    /// it (a window of an over-long sentence).
    cut: (bool, bool),
    stems: HashSet<String>,
}

/// Builds the answer; with no matching sentence the text says nothing was
/// found and there are no citations.
pub fn compose(terms: &[String], evidence: &[Evidence]) -> Answer {
    let query: HashSet<String> = terms.iter().map(|t| stem(t)).collect();
    let mut candidates = Vec::new();
    for e in evidence {
        for (start, end) in sentences(&e.text) {
            let (start, end, cut) = if end - start > MAX_SENTENCE_BYTES {
                match window(&e.text, start, end, &query) {
                    Some((s, t)) => (s, t, (s > start, t < end)),
                    None => continue,
                }
            } else {
                (start, end, (false, false))
            };
            let stems: HashSet<String> = super::terms::words(&e.text[start..end])
                .map(|w| stem(&w))
                .filter(|s| query.contains(s))
                .collect();
            if !stems.is_empty() {
                candidates.push(Candidate {
                    evidence: e,
                    start,
                    end,
                    cut,
                    stems,
                });
            }
        }
    }
    if candidates.is_empty() {
        let text = if evidence.is_empty() {
            NOTHING_FOUND
        } else {
            NO_SENTENCE_MATCHES
        };
        return Answer {
            text: text.to_string(),
            citations: Vec::new(),
            method: AnswerMethod::Extractive,
            fallback: None,
        };
    }
    let n = candidates.len() as f64;
    let weight = |term: &String| {
        let df = candidates.iter().filter(|c| c.stems.contains(term)).count() as f64;
        (1.0 + n / df).ln()
    };
    // The document whose evidence covers the most question weight; ties
    // go to the better-ranked evidence.
    let mut documents: Vec<(&str, usize, HashSet<&String>)> = Vec::new();
    for c in &candidates {
        let id = c.evidence.document_id.as_str();
        match documents.iter_mut().find(|d| d.0 == id) {
            Some(d) => {
                d.1 = d.1.min(c.evidence.rank);
                d.2.extend(&c.stems);
            }
            None => documents.push((id, c.evidence.rank, c.stems.iter().collect())),
        }
    }
    // Weights are summed in term order, not the sets' (per-process,
    // random) order: documents holding the same terms must tie exactly,
    // so that the rank decides and the answer is the same in every run.
    let total = |terms: &mut dyn Iterator<Item = &String>| {
        let mut terms: Vec<&String> = terms.collect();
        terms.sort();
        terms.into_iter().map(&weight).sum::<f64>()
    };
    let carried = |d: &(&str, usize, HashSet<&String>)| total(&mut d.2.iter().copied());
    let best = documents
        .iter()
        .max_by(|a, b| carried(a).total_cmp(&carried(b)).then(b.1.cmp(&a.1)))
        .map(|d| d.0.to_string());
    let mut scored: Vec<(f64, usize)> = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| Some(c.evidence.document_id.as_str()) == best.as_deref())
        .map(|(i, c)| {
            let coverage = total(&mut c.stems.iter());
            (coverage / (1.0 + 0.05 * c.evidence.rank as f64), i)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut chosen: Vec<&Candidate> = Vec::new();
    let mut covered: HashSet<&String> = HashSet::new();
    for (_, i) in scored {
        let c = &candidates[i];
        // A sentence that brings no question term the chosen ones lack
        // would only pad the answer.
        if c.stems.iter().any(|t| !covered.contains(t)) {
            covered.extend(&c.stems);
            chosen.push(c);
        }
        if chosen.len() == MAX_ANSWER_SENTENCES {
            break;
        }
    }
    // Read in evidence order, then document order, not score order.
    chosen.sort_by_key(|c| (c.evidence.rank, c.start));
    let mut text = String::new();
    let mut citations = Vec::new();
    for c in chosen {
        if !text.is_empty() {
            text.push(' ');
        }
        if c.cut.0 {
            text.push('…');
        }
        text.push_str(c.evidence.text[c.start..c.end].trim());
        if c.cut.1 {
            text.push('…');
        }
        text.push_str(&format!(" [{}]", c.evidence.rank));
        citations.push(Citation {
            marker: c.evidence.rank,
            chunk_id: c.evidence.chunk_id.clone(),
            document_id: c.evidence.document_id.clone(),
            span: Span {
                start: c.evidence.span.start + c.start,
                end: c.evidence.span.start + c.end,
            },
        });
    }
    Answer {
        text,
        citations,
        method: AnswerMethod::Extractive,
        fallback: None,
    }
}

/// Of the over-long sentence `text[start..end]`, a span of at most
/// [`MAX_SENTENCE_BYTES`] between words, beginning a little before its
/// first word of the question (`query`, as stems); `None` if it has none.
fn window(text: &str, start: usize, end: usize, query: &HashSet<String>) -> Option<(usize, usize)> {
    let sentence = &text[start..end];
    let (first, _) = super::terms::words_at(sentence).find(|(_, w)| query.contains(&stem(w)))?;
    // Some words before the match, then as much after as fits.
    let mut from = floor_char_boundary(sentence, first.saturating_sub(MAX_SENTENCE_BYTES / 4));
    if from > 0 {
        from = sentence[from..first]
            .find(char::is_whitespace)
            .map_or(first, |k| from + k);
    }
    let mut to = floor_char_boundary(sentence, from + MAX_SENTENCE_BYTES);
    if to < sentence.len() {
        to = sentence[first..to]
            .rfind(char::is_whitespace)
            .map_or(to, |k| first + k);
    }
    let piece = &sentence[from..to];
    let lead = piece.len() - piece.trim_start().len();
    Some((
        start + from + lead,
        start + from + lead + piece.trim().len(),
    ))
}

/// Sentence spans (trimmed) in `text`: ends at `.`, `!`, `?` followed by
/// whitespace, and at line breaks.
pub fn sentences(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let push = |s: usize, e: usize, out: &mut Vec<(usize, usize)>| {
        let slice = &text[s..e];
        let lead = slice.len() - slice.trim_start().len();
        let trimmed = slice.trim();
        if !trimmed.is_empty() {
            out.push((s + lead, s + lead + trimmed.len()));
        }
    };
    for i in 0..bytes.len() {
        let b = bytes[i];
        let boundary = b == b'\n'
            || (matches!(b, b'.' | b'!' | b'?')
                && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()));
        if boundary {
            push(start, i + 1, &mut out);
            start = i + 1;
        }
    }
    push(start, text.len(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(rank: usize, text: &str, start: usize) -> Evidence {
        Evidence {
            rank,
            document_id: format!("doc{rank}"),
            chunk_id: format!("doc{rank}:0"),
            source: None,
            title: None,
            metadata: serde_json::json!({}),
            provenance: None,
            created_at: String::new(),
            span: Span {
                start,
                end: start + text.len(),
            },
            page: None,
            text: text.to_string(),
            score: 1.0,
            lanes: Default::default(),
            relations: Vec::new(),
            chunk_key: rank as i64,
            truncated: false,
            origin: None,
            near_duplicates: Vec::new(),
            facts: Vec::new(),
        }
    }

    #[test]
    fn answer_cites_the_sentence_that_matches() {
        let evidence = [
            ev(
                1,
                "The weather was nice. Acme acquired Widgets Inc in May.",
                100,
            ),
            ev(2, "Widgets makes gears.", 0),
        ];
        let terms = super::super::terms::analyze("What did Acme acquire?");
        let a = compose(&terms, &evidence);
        assert_eq!(a.text, "Acme acquired Widgets Inc in May. [1]");
        assert_eq!(a.citations.len(), 1);
        let c = &a.citations[0];
        assert_eq!(c.marker, 1);
        // The cited span is the sentence's position in the document.
        assert_eq!(c.span.start, 100 + "The weather was nice. ".len());
        assert_eq!(c.span.end, 100 + evidence[0].text.len());
    }

    #[test]
    fn no_match_gives_no_citations() {
        let a = compose(&["zebra".into()], &[ev(1, "Nothing here.", 0)]);
        assert!(a.citations.is_empty());
    }

    #[test]
    fn a_long_sentence_is_quoted_around_the_question_word() {
        let filler = "lorem ipsum dolor sit amet ".repeat(40);
        let text = format!("{filler}the ferry leaves at noon {filler}");
        let terms = super::super::terms::analyze("When does the ferry leave?");
        let a = compose(&terms, &[ev(1, &text, 10)]);
        let c = &a.citations[0];
        let quoted = &text[c.span.start - 10..c.span.end - 10];
        assert!(quoted.len() <= MAX_SENTENCE_BYTES, "{}", quoted.len());
        assert!(quoted.contains("the ferry leaves at noon"), "{quoted}");
        assert!(
            quoted.starts_with("lorem")
                || quoted.starts_with("ipsum")
                || quoted.starts_with("dolor")
                || quoted.starts_with("sit")
                || quoted.starts_with("amet"),
            "{quoted}"
        );
        assert_eq!(a.text, format!("…{quoted}… [1]"));
    }

    #[test]
    fn evidence_without_a_matching_sentence_is_not_called_nothing() {
        let terms = super::super::terms::analyze("penguins in Antarctica");
        assert_eq!(compose(&terms, &[]).text, NOTHING_FOUND);
        assert_eq!(
            compose(&terms, &[ev(1, "Release planning, 3 March.", 0)]).text,
            NO_SENTENCE_MATCHES
        );
    }

    #[test]
    fn sentence_spans_are_trimmed() {
        let t = "One. Two!\n Three";
        let s = sentences(t);
        let parts: Vec<&str> = s.iter().map(|&(a, b)| &t[a..b]).collect();
        assert_eq!(parts, ["One.", "Two!", "Three"]);
    }

    #[test]
    fn answer_stops_instead_of_padding_with_sentences_that_add_no_term() {
        let evidence = [
            ev(
                1,
                "- The long tests run for hours.\n- Long tests run nightly.",
                0,
            ),
            ev(2, "To run the zstd tests, type make check. It is quick.", 0),
        ];
        let terms = super::super::terms::analyze("How do I run the zstd tests?");
        let a = compose(&terms, &evidence);
        assert_eq!(a.text, "To run the zstd tests, type make check. [2]");
    }

    #[test]
    fn answer_quotes_one_document_only() {
        let mut copy = ev(2, "The backup job runs at 02:00.", 0);
        copy.document_id = "doc1".into();
        let evidence = [
            ev(
                1,
                "The backup job runs at 02:00. Backups are kept a week.",
                0,
            ),
            copy,
            ev(3, "Every job may run ten minutes.", 0),
        ];
        let terms = super::super::terms::analyze("When does the backup job run?");
        let a = compose(&terms, &evidence);
        assert_eq!(a.text, "The backup job runs at 02:00. [1]");
        assert!(a.citations.iter().all(|c| c.document_id == "doc1"));
    }
}
