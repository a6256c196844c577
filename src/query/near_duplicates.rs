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
//! documents it nearly duplicates ([`of_document`]): its first chunk's
//! words are searched, and the best few keyword matches compared.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// Jaccard similarity of word trigrams at or above which two evidence texts
/// of different documents count as one. One word changed in a passage of
/// n words leaves n - 5 of n + 1 trigrams shared, so at 0.8 such an edit
/// matches from about 30 words on (shorter texts must be nearer still); a
/// second sentence added to a one-sentence note never does.
pub const NEAR_DUPLICATE_SIMILARITY: f64 = 0.8;

/// Keyword matches of a new document's first chunk compared with it.
pub const NEAR_DUPLICATE_CANDIDATES: usize = 10;

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
    let terms = super::terms::analyze(&first.text);
    let plan = super::retrieve::plan(reader, &terms)?;
    let scope = crate::store::Scope::current();
    let hits = super::retrieve::keyword(reader, &plan, NEAR_DUPLICATE_CANDIDATES, &scope)?;
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

/// A text's word trigrams, hashed.
pub struct Shingles(HashSet<u64>);

impl Shingles {
    pub fn of(text: &str) -> Shingles {
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
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
}
