//! List and count questions: their evidence is spread over many sources.
//!
//! Owns recognising a question that asks for several things ("what books
//! has she read?", "how many times did he move?", "what are all the
//! places…") and reordering the fused candidates so that further chunks
//! of one occasion give way to the best of other occasions. An occasion
//! is a source on one day (the document's day, see
//! [`document_day`]): a conversation's session, a day's notes under one
//! heading. The items of a list were said on different occasions, while
//! the chunks of one occasion tend to repeat one of them.
//!
//! Must never: reach past the strong head of the list ([`SPREAD_POOL`]
//! candidates) for a weak candidate, or change anything for a question
//! that asks for one thing.

use std::collections::HashMap;

use super::fuse::Fused;
use crate::knowledge::calendar::document_day;

/// How many of the best candidates a list question reorders by source;
/// the rest keep their place after them.
pub const SPREAD_POOL: usize = 30;

/// Words that follow a plural noun after "what"/"which" in a question:
/// "what books *has* she read", "which cities *did* they visit".
const AUXILIARIES: &[&str] = &[
    "are", "were", "has", "have", "had", "do", "does", "did", "is", "was", "can", "could", "will",
    "would", "should", "might",
];

/// Whether `question` asks for several things: "how many …", "… all …"
/// near its start, "what/which" + a plural noun + an auxiliary, "what
/// kinds/types of …", or "what are/were …" ending on a plural noun.
pub fn asks_for_many(question: &str) -> bool {
    let words: Vec<String> = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let w = |i: usize| words.get(i).map_or("", String::as_str);
    if (w(0), w(1)) == ("how", "many") || words.iter().take(4).any(|x| x == "all") {
        return true;
    }
    if !matches!(w(0), "what" | "which") {
        return false;
    }
    if matches!(w(1), "kinds" | "types" | "sorts") && w(2) == "of" {
        return true;
    }
    if is_plural_noun(w(1)) && AUXILIARIES.contains(&w(2)) {
        return true;
    }
    matches!(w(1), "are" | "were") && words.last().is_some_and(|x| is_plural_noun(x))
}

/// A word shaped like a plural noun: "books", "cities", not "class",
/// "status", "this", "does".
fn is_plural_noun(w: &str) -> bool {
    w.len() > 3
        && w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
        && !w.ends_with('\'')
        && !AUXILIARIES.contains(&w)
}

/// What each further chunk of one source keeps of its score, against the
/// chunks of sources not yet shown: the second keeps this share, the third
/// its square, and so on.
pub const REPEAT_SHARE: f64 = 0.9;

/// The first [`SPREAD_POOL`] candidates reordered by their score times
/// [`REPEAT_SHARE`] to the power of how many better chunks of their
/// occasion (their source, else their document, on their day) come
/// before them; the rest keep their place after them.
pub fn spread(mut hits: Vec<Fused>) -> Vec<Fused> {
    let pool = hits.len().min(SPREAD_POOL);
    let mut repeats: HashMap<(&str, i64), i32> = HashMap::new();
    let mut keyed: Vec<(f64, usize)> = hits[..pool]
        .iter()
        .enumerate()
        .map(|(i, hit)| {
            let h = &hit.hit;
            let day = document_day(&h.metadata, h.created_at);
            let occasion = (h.source.as_deref().unwrap_or(&h.doc_id), day);
            let n = repeats.entry(occasion).or_insert(0);
            let share = REPEAT_SHARE.powi(*n);
            *n += 1;
            (hit.score * share, i)
        })
        .collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let rest = hits.split_off(pool);
    let mut slots: Vec<Option<Fused>> = hits.into_iter().map(Some).collect();
    let mut out: Vec<Fused> = keyed
        .into_iter()
        .filter_map(|(_, i)| slots[i].take())
        .collect();
    out.extend(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ChunkHit;

    #[test]
    fn questions_that_ask_for_several_things_are_recognised() {
        for q in [
            "How many tournaments has Nate won?",
            "What books has Melanie read?",
            "Which cities did they visit in 2023?",
            "What kinds of pottery does she make?",
            "What are Joanna's hobbies?",
            "What are all the places she lived?",
        ] {
            assert!(asks_for_many(q), "{q}");
        }
        for q in [
            "What motivates Joanna to keep writing?",
            "What is the status of the migration?",
            "When did Caroline go to the support group?",
            "Which class does she teach?",
            "What does this error mean?",
        ] {
            assert!(!asks_for_many(q), "{q}");
        }
    }

    fn hit(doc: &str, source: &str, score: f64) -> Fused {
        Fused {
            hit: ChunkHit {
                chunk_key: 0,
                ordinal: 0,
                start: 0,
                end: 1,
                text: String::new(),
                doc_id: doc.into(),
                source: Some(source.into()),
                title: None,
                metadata: "{}".into(),
                provenance: None,
                created_at: 0,
                bm25: 0.0,
                page: None,
            },
            score,
            lanes: Default::default(),
            origin: None,
        }
    }

    #[test]
    fn further_chunks_of_one_source_give_way_to_other_sources() {
        let hits = vec![
            hit("a1", "s1", 0.9),
            hit("a2", "s1", 0.8),
            hit("b1", "s2", 0.7),
            hit("a3", "s1", 0.6),
            hit("c1", "s3", 0.5),
        ];
        let order: Vec<String> = spread(hits).into_iter().map(|f| f.hit.doc_id).collect();
        // a2 keeps 0.72, a3 0.486: b1 passes a2, c1 passes a3.
        assert_eq!(order, ["a1", "a2", "b1", "c1", "a3"]);
    }

    #[test]
    fn candidates_past_the_pool_keep_their_place() {
        let mut hits: Vec<Fused> = (0..SPREAD_POOL)
            .map(|i| hit(&format!("a{i}"), "s1", 1.0))
            .collect();
        hits.push(hit("late", "s2", 0.1));
        let order: Vec<String> = spread(hits).into_iter().map(|f| f.hit.doc_id).collect();
        assert_eq!(order.last().map(String::as_str), Some("late"));
    }
}
