//! When two pieces of evidence say the same thing: the same text with small
//! edits (a word changed, a typo fixed, punctuation or white space
//! reworked), stored as two documents. Such a pair takes one evidence slot,
//! not two (see [`super::pack`]).
//!
//! A text is the set of its word trigrams (lowercased, punctuation
//! ignored); two texts are near-duplicates when the trigrams they share are
//! at least [`NEAR_DUPLICATE_SIMILARITY`] of all their trigrams (Jaccard).
//! Texts of fewer than three words are one "trigram" of all their words, so
//! short texts match only when their words are the same.
//!
//! An ingest that waited for its document is told of the current
//! documents it nearly duplicates ([`of_document`]). Candidates are found
//! by probing the full-text index with a few of its first chunk's word
//! trigrams as phrases, each probe reading at most
//! [`NEAR_DUPLICATE_PROBE_DEPTH`] matches, newest first; each probe's
//! matches share one vote, and the candidates with most votes are compared
//! whole. The probes are disjoint trigrams, so one edited word spoils at
//! most one of them, and a text that keeps four in five of its trigrams is
//! found by most. The cost is bounded
//! however large the memory: ranking every keyword match of the chunk's
//! words read each common word's postings, and took half of a waited
//! write's time at 1k notes (BENCHMARKS.md, "Writes as a client makes
//! them"). What it gives up: a near-duplicate older than the newest
//! [`NEAR_DUPLICATE_PROBE_DEPTH`] holders of every probe is not named
//! (a text that common is named with its newer copies instead).

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// Jaccard similarity of word trigrams at or above which two evidence texts
/// of different documents count as one. One word changed in a passage of
/// n words leaves n - 5 of n + 1 trigrams shared, so at 0.8 such an edit
/// matches from about 30 words on (shorter texts must be nearer still); a
/// second sentence added to a one-sentence note never does.
pub const NEAR_DUPLICATE_SIMILARITY: f64 = 0.8;

/// Candidates (the chunks with most probe votes) compared with a new
/// document's first chunk.
pub const NEAR_DUPLICATE_CANDIDATES: usize = 10;

/// Phrases (disjoint word trigrams) of a new document's first chunk the
/// full-text index is probed with.
pub const NEAR_DUPLICATE_PROBES: usize = 8;

/// Matches one probe reads, newest first.
pub const NEAR_DUPLICATE_PROBE_DEPTH: usize = 32;

/// Most near-duplicates an ingest reply names.
pub const MAX_NEAR_DUPLICATES_REPORTED: usize = 5;

/// The current documents (ids) whose text the document `doc_id` nearly
/// duplicates, judged on its first chunk: at most
/// [`MAX_NEAR_DUPLICATES_REPORTED`], best match first.
pub fn of_document(
    reader: &crate::store::TenantReader<'_>,
    doc_id: &str,
) -> crate::error::Result<Vec<String>> {
    let Some(first) = reader
        .chunks_of_document(doc_id, None, 1)?
        .and_then(|c| c.into_iter().next())
    else {
        return Ok(Vec::new());
    };
    // Each probe's matches share one vote: a phrase few chunks hold says
    // more than one of boilerplate that many do.
    let mut votes: HashMap<i64, f64> = HashMap::new();
    for phrase in probes(&words(&first.text)) {
        let keys = reader.newest_with_phrase::<NEAR_DUPLICATE_PROBE_DEPTH>(&phrase)?;
        let share = 1.0 / keys.len().max(1) as f64;
        for key in keys {
            *votes.entry(key).or_default() += share;
        }
    }
    // Most votes first, then newest; one more than the candidates, as the
    // document's own chunk is among them.
    let mut ranked: Vec<(i64, f64)> = votes.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    ranked.truncate(NEAR_DUPLICATE_CANDIDATES + 1);
    let scope = crate::store::Scope::current();
    let hits = reader.scoped_chunks_by_keys(&ranked, ranked.len(), &scope)?;
    let mine = Shingles::of(&first.text);
    let mut found: Vec<String> = Vec::new();
    for hit in hits {
        if hit.doc_id != doc_id
            && !found.contains(&hit.doc_id)
            && found.len() < MAX_NEAR_DUPLICATES_REPORTED
            && mine.near(&Shingles::of(&hit.text))
        {
            found.push(hit.doc_id);
        }
    }
    Ok(found)
}

/// A text's words as shingles count them: runs of letters and digits,
/// lowercased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The full-text phrases a text is probed with: its disjoint word
/// trigrams (all its words when it has fewer than three), at most
/// [`NEAR_DUPLICATE_PROBES`] of them, those with the longest word that is
/// not a stopword first (a probe reads the postings of its words until it
/// has its matches, and rarer words have fewer).
fn probes(words: &[String]) -> Vec<String> {
    let windows: Vec<&[String]> = match words.len() {
        0 => Vec::new(),
        1 | 2 => vec![words],
        _ => words.chunks_exact(3).collect(),
    };
    let telling = |w: &[String]| {
        w.iter()
            .filter(|w| !super::terms::is_stopword(w))
            .map(|w| w.chars().count())
            .max()
            .unwrap_or(0)
    };
    let mut ranked: Vec<(usize, usize)> = windows
        .iter()
        .enumerate()
        .map(|(at, w)| (telling(w), at))
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<String> = Vec::new();
    for (_, at) in ranked {
        let phrase = format!("\"{}\"", windows[at].join(" "));
        if !out.contains(&phrase) {
            out.push(phrase);
        }
        if out.len() == NEAR_DUPLICATE_PROBES {
            break;
        }
    }
    out
}

/// A text's word trigrams, hashed.
pub struct Shingles(HashSet<u64>);

impl Shingles {
    pub fn of(text: &str) -> Shingles {
        let words = words(text);
        let hash = |ws: &[String]| {
            let mut h = DefaultHasher::new();
            ws.hash(&mut h);
            h.finish()
        };
        let set = if words.len() < 3 {
            std::iter::once(hash(&words)).collect()
        } else {
            words.windows(3).map(hash).collect()
        };
        Shingles(set)
    }

    /// Whether `self` and `other` are near-duplicates.
    pub fn near(&self, other: &Shingles) -> bool {
        let shared = self.0.intersection(&other.0).count();
        let all = self.0.len() + other.0.len() - shared;
        all > 0 && shared as f64 >= NEAR_DUPLICATE_SIMILARITY * all as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_edits_are_the_same_text_and_new_sentences_are_not() {
        let base = "The nightly backup of the build server runs at 03:00 and copies the \
                    artifacts to the NAS in the basement; it takes about an hour and mails \
                    the ops channel when it is done, or when it fails for any reason.";
        let one_word = base.replace("about an hour", "about one hour");
        let punctuation = base.replace(';', ".").replace("03:00", "03 00");
        let a = Shingles::of(base);
        assert!(a.near(&Shingles::of(&one_word)));
        assert!(a.near(&Shingles::of(&punctuation)));
        assert!(a.near(&Shingles::of(&base.to_uppercase())));
        let longer = format!("{base} The restore drill is on the first Monday of each month.");
        assert!(!a.near(&Shingles::of(&longer)));
        assert!(!a.near(&Shingles::of("The backup runs at 04:00.")));
        // Short texts: the same words, or not the same.
        assert!(Shingles::of("Thanks, Mel!").near(&Shingles::of("thanks mel")));
        assert!(!Shingles::of("Thanks, Mel!").near(&Shingles::of("Thanks, Melanie!")));
    }

    #[test]
    fn probes_are_disjoint_trigrams_with_telling_words_first() {
        let w = words("The nightly backup of the build server runs at 03:00, or so.");
        // the nightly backup | of the build | server runs at | 03 00 or
        // ("so" is left over); "nightly" is the longest telling word.
        assert_eq!(
            probes(&w),
            [
                "\"the nightly backup\"",
                "\"server runs at\"",
                "\"of the build\"",
                "\"03 00 or\""
            ]
        );
        assert_eq!(probes(&words("Thanks, Mel!")), ["\"thanks mel\""]);
        assert!(probes(&words(" ... ")).is_empty());
        let long: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        assert_eq!(probes(&long).len(), NEAR_DUPLICATE_PROBES);
    }
}
