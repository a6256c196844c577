//! Entity resolution as values: what the store records of a merge and the
//! bounds it looks candidates up by.
//!
//! Owns the evidence of a merge ([`Evidence`]: the [`NameMatch`] of two
//! names, by a [`NameRule`], and the cosine of their embeddings), the
//! [`Thresholds`] it is judged by, a stored [`Candidate`], which kinds are
//! resolved at all ([`is_resolvable_kind`]), the per-lookup bounds
//! ([`MAX_CANDIDATES_PER_TERM`], [`MAX_CANDIDATES`]) and the version of the
//! name-term derivation ([`NAME_TERMS_VERSION`]).
//!
//! The policy (name profiles, similarity, which terms to index and look
//! up, the thresholds' values, the choice) is `graph::resolution`'s, which
//! hands it to the store as a [`NamePolicy`] when the store opens; the
//! term index and the merges are `store::resolution`'s.

/// Lowest scores a pair needs on both signals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// `graph::resolution::similarity`, in [0, 1].
    pub name: f64,
    /// Cosine of the names' built-in embeddings, in [-1, 1].
    pub embedding: f32,
}

/// Which rule gave a `graph::resolution::similarity` score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// Same words once spacing, hyphens, case and accents are ignored.
    SameWords,
    /// One is an acronym of the other.
    Acronym,
    /// Words aligned one to one.
    Words,
    /// Nothing in common, or a rule forbids it.
    None,
}

impl NameRule {
    /// Stable lowercase name ("same_words", "acronym", ...).
    pub fn as_str(self) -> &'static str {
        match self {
            NameRule::SameWords => "same_words",
            NameRule::Acronym => "acronym",
            NameRule::Words => "words",
            NameRule::None => "none",
        }
    }
}

/// How alike two names are, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NameMatch {
    pub score: f64,
    pub rule: NameRule,
}

/// Most entities read back for one lookup term: a word shared by more
/// names than this ("john", "university") finds only the oldest ones. Kept
/// small so that common words neither dominate the lookup cost on the
/// writer thread nor use up [`MAX_CANDIDATES`] before the name's rarer
/// terms are looked up.
pub const MAX_CANDIDATES_PER_TERM: usize = 8;

/// Most candidate entities compared with one new name.
pub const MAX_CANDIDATES: usize = 32;

/// Version of `graph::resolution::index_terms`: bump it whenever the
/// terms change, and the store rebuilds every tenant's term index at its
/// next graph write.
/// 2: only entities of a resolvable kind are indexed.
pub const NAME_TERMS_VERSION: i64 = 2;

/// A stored entity the resolver may compare a new name with.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub id: i64,
    pub key: String,
    pub name: String,
    pub kind: String,
}

/// Both signals for one pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    pub name: NameMatch,
    pub cosine: f32,
}

impl Evidence {
    pub fn passes(&self, t: Thresholds) -> bool {
        self.name.score >= t.name && self.cosine >= t.embedding
    }
}

/// Kinds whose names the resolver compares: things with proper names.
/// Concepts ("support group" / "lgbtq support group") are more or less
/// specific things, not other names of one thing; dates and values have
/// canonical keys already.
pub fn is_resolvable_kind(kind: &str) -> bool {
    matches!(
        kind,
        "person" | "organization" | "place" | "artifact" | "unknown"
    )
}

/// The resolution policy as the store runs it, inside its lookups and
/// writes: which terms a name is indexed and looked up by, and which
/// candidate (if any) a name is another name of. Implemented by
/// `graph::resolution::POLICY`; every method is a pure function of its
/// inputs (same names in, same answer out).
pub trait NamePolicy: Send + Sync {
    /// Terms the store indexes for a stored name (`key`, display `name`).
    fn index_terms(&self, key: &str, name: &str) -> Vec<String>;
    /// Terms a name in a question is looked up by.
    fn lookup_terms(&self, key: &str, name: &str) -> Vec<String>;
    /// Terms a new name of `kind` that may merge is looked up by.
    fn merge_lookup_terms(&self, key: &str, name: &str, kind: &str) -> Vec<String>;
    /// The one candidate a new name is another name of, with the evidence.
    fn choose_merge(
        &self,
        key: &str,
        name: &str,
        kind: &str,
        candidates: &[Candidate],
    ) -> Option<(i64, Evidence)>;
    /// The candidates a name in a question stands for, best first.
    fn question_matches(&self, key: &str, name: &str, candidates: &[Candidate]) -> Vec<i64>;
    /// The key a mention's surface text has as a name of `kind`.
    fn surface_key(&self, surface: &str, kind: &str) -> String;
}
