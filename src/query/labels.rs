//! Labels: a question that names who said something, or what it is tagged
//! with, prefers the chunks that carry that name.
//!
//! A chunk's labels are the proper names it is filed under: the short
//! string values of its document's metadata (`{"speaker": "Ann"}`, `{"project":
//! "Kestrel"}`) and the speaker a transcript line opens with (`Ann: …`).
//! "What has Ann done with her family?" is answered by what Ann said, yet
//! keyword and vector ranking see her name in every turn addressed to her
//! too, and barely weigh a name that opens half the conversation. When the
//! question names a label some of the candidates carry, each of those gains
//! [`LABEL_SHARE`] of the best candidate's score; candidates that all carry
//! it keep their order. Measured on LoCoMo (BENCHMARKS.md), where every
//! category gained on the tuning and the confirming conversations alike.
//!
//! A label is a name: one to [`MAX_LABEL_WORDS`] words, each starting with
//! an upper-case letter, at most [`MAX_LABEL_CHARS`] characters, and not a
//! stopword. It is named when every one of its words is a word of the
//! question (any case). No field name is read: a value is a label by its
//! form, wherever it is in the metadata's top level.

use std::collections::HashSet;

use super::fuse::{Fused, LaneRank};
use super::terms;

/// What a candidate carrying a label the question names gains, as a share
/// of the best candidate's fused score.
pub const LABEL_SHARE: f64 = 0.5;

/// Most words in a label.
pub const MAX_LABEL_WORDS: usize = 3;

/// Most characters in a label (a metadata value longer than this is text,
/// not a name).
pub const MAX_LABEL_CHARS: usize = 48;

/// Name under which the gain is reported in an item's `lanes`.
pub const LANE: &str = "label";

/// The label words of a name, lowercased, if `value` has a label's form.
fn label(value: &str) -> Option<Vec<String>> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > MAX_LABEL_CHARS {
        return None;
    }
    let names: Vec<&str> = value.split_whitespace().collect();
    if names.len() > MAX_LABEL_WORDS {
        return None;
    }
    let name_like = |w: &&str| {
        w.chars().next().is_some_and(char::is_uppercase)
            && w.chars().all(|c| c.is_alphanumeric() || "'-.".contains(c))
    };
    if !names.iter().all(name_like) {
        return None;
    }
    let words: Vec<String> = terms::words(value).collect();
    // A name made only of stopwords ("The", "I") names nothing.
    if words.iter().all(|w| terms::is_stopword(w)) {
        return None;
    }
    Some(words)
}

/// The labels of a candidate: its document's short metadata string values
/// and the speaker its text opens with.
fn labels_of(f: &Fused) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(&f.hit.metadata) {
        for v in map.values() {
            if let Some(l) = v.as_str().and_then(label) {
                out.push(l);
            }
        }
    }
    if let Some(l) = speaker(&f.hit.text).and_then(label) {
        out.push(l);
    }
    out
}

/// The speaker a transcript line opens with: the text before a colon
/// within its first [`MAX_LABEL_CHARS`] characters, followed by a space or
/// the end (`Ann: …`, `Ann Lee: …`; not `https://…`).
fn speaker(text: &str) -> Option<&str> {
    let (colon, _) = text
        .char_indices()
        .take(MAX_LABEL_CHARS + 1)
        .find(|&(_, c)| c == ':')?;
    let rest = &text[colon + 1..];
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| &text[..colon])
}

/// Adds the labels' gain to `fused` and sorts it again, best first.
pub fn prefer_named(question: &str, mut fused: Vec<Fused>, share: f64) -> Vec<Fused> {
    let Some(best) = fused.first().map(|f| f.score) else {
        return fused;
    };
    if share <= 0.0 || best <= 0.0 {
        return fused;
    }
    let asked: HashSet<String> = terms::words(question).collect();
    let named = |l: &Vec<String>| l.iter().all(|w| asked.contains(w));
    let carries: Vec<bool> = fused
        .iter()
        .map(|f| labels_of(f).iter().any(named))
        .collect();
    if !carries.iter().any(|&c| c) || carries.iter().all(|&c| c) {
        return fused;
    }
    let gain = share * best;
    for (f, _) in fused.iter_mut().zip(&carries).filter(|(_, &c)| c) {
        f.score += gain;
        f.lanes.insert(
            LANE,
            LaneRank {
                rank: 1,
                score: gain,
            },
        );
    }
    super::fuse::sort_best_first(&mut fused);
    fused
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ChunkHit;

    fn candidate(key: i64, text: &str, metadata: &str, score: f64) -> Fused {
        Fused {
            hit: ChunkHit {
                chunk_key: key,
                ordinal: 0,
                start: 0,
                end: text.len() as i64,
                text: text.to_string(),
                doc_id: format!("d{key}"),
                source: None,
                title: None,
                metadata: metadata.to_string(),
                provenance: None,
                created_at: 0,
                bm25: -score,
                page: None,
            },
            score,
            lanes: Default::default(),
            origin: None,
        }
    }

    fn order(fused: &[Fused]) -> Vec<i64> {
        fused.iter().map(|f| f.hit.chunk_key).collect()
    }

    #[test]
    fn a_label_is_a_short_proper_name() {
        assert_eq!(label("Ann"), Some(vec!["ann".to_string()]));
        assert_eq!(label(" Ann Lee "), Some(vec!["ann".into(), "lee".into()]));
        assert_eq!(label("O'Neil"), Some(vec!["o".into(), "neil".into()]));
        assert_eq!(label("ann"), None, "not capitalised");
        assert_eq!(label("Ann Lee Ray Moss"), None, "more than MAX_LABEL_WORDS");
        assert_eq!(label("The"), None, "a stopword names nothing");
        assert_eq!(label("D1:3"), None);
        assert_eq!(label("1:56 pm on 8 May, 2023"), None);
        assert_eq!(label(&format!("A{}", "b".repeat(MAX_LABEL_CHARS))), None);
        assert!(label(&format!("A{}", "b".repeat(MAX_LABEL_CHARS - 1))).is_some());
    }

    #[test]
    fn a_speaker_opens_a_transcript_line() {
        assert_eq!(speaker("Ann: I went"), Some("Ann"));
        assert_eq!(speaker("Ann Lee:"), Some("Ann Lee"));
        assert_eq!(speaker("See https://example.com"), None);
        assert_eq!(speaker("no colon here"), None);
        // A colon past the first MAX_LABEL_CHARS characters is not a speaker's;
        // multi-byte text is cut on a character, never inside one.
        let far = format!("{}: x", "é".repeat(MAX_LABEL_CHARS + 1));
        assert_eq!(speaker(&far), None);
        assert_eq!(speaker("Zoë: hi"), Some("Zoë"));
    }

    #[test]
    fn the_named_speakers_chunks_move_up_and_others_keep_their_order() {
        let fused = vec![
            candidate(1, "Bo: Ann, how was the hike with your family?", "{}", 1.0),
            candidate(2, "Bo: my family went to the coast", "{}", 0.9),
            candidate(3, "Ann: we camped by the lake with the kids", "{}", 0.6),
            candidate(4, "something else", r#"{"speaker": "Ann", "n": 3}"#, 0.3),
        ];
        let out = prefer_named("What has ann done with her family?", fused, LABEL_SHARE);
        assert_eq!(order(&out), vec![3, 1, 2, 4]);
        assert_eq!(out[0].lanes[LANE].score, LABEL_SHARE * 1.0);
        assert!(!out[1].lanes.contains_key(LANE));
        // A metadata value is a label wherever it is: chunk 4 gained too.
        assert!(out[3].lanes.contains_key(LANE));
        assert!((out[3].score - (0.3 + LABEL_SHARE)).abs() < 1e-12);
    }

    #[test]
    fn nothing_moves_unless_the_question_tells_candidates_apart() {
        let fused = || {
            vec![
                candidate(1, "Ann: the studio opened", "{}", 1.0),
                candidate(2, "Ann: it rained", "{}", 0.5),
            ]
        };
        // Every candidate carries the named label.
        let out = prefer_named("What did Ann open?", fused(), LABEL_SHARE);
        assert_eq!(order(&out), vec![1, 2]);
        assert!(out.iter().all(|f| f.lanes.is_empty()));
        // No candidate carries a label the question names.
        let out = prefer_named("What opened?", fused(), LABEL_SHARE);
        assert!(out.iter().all(|f| f.lanes.is_empty()));
        assert!(prefer_named("Ann?", Vec::new(), LABEL_SHARE).is_empty());
        // A label of two words is named only by both.
        let fused = vec![
            candidate(1, "Bo: the studio opened", "{}", 1.0),
            candidate(2, "Ann Lee: it rained", "{}", 0.5),
        ];
        assert_eq!(
            order(&prefer_named("Did Ann see rain?", fused.clone(), 0.5)),
            vec![1, 2]
        );
        assert_eq!(
            order(&prefer_named("Did Ann Lee see rain?", fused, 0.6)),
            vec![2, 1]
        );
    }
}
