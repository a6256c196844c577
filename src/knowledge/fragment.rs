//! A document's contribution to the knowledge graph, as values: its
//! entities (with their [`EntityKind`]), where its chunks mention them, and
//! the relations between them, each with the [`Extractor`] that found it;
//! and [`predicate_key`], the key relations are recorded under.
//!
//! Owns the types only. Building a fragment from a document's chunks is
//! `graph::fragment::from_chunks` (and `graph::llm_triples`,
//! `graph::declared`); recording one is `store::graph`. Indices in a
//! fragment (`entity`, `subject`, `object`, `chunk`) point into its own
//! lists and the document's chunks; spans are byte offsets in the document.

/// What kind of thing an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntityKind {
    Person,
    Organization,
    Place,
    /// Dates, times and relative dates ("yesterday").
    Date,
    /// Products, software, code identifiers, files, URLs, emails, titles.
    Artifact,
    /// Lowercase noun phrases and quoted terms.
    Concept,
    /// No usable evidence; also quantities ("$30 million", "5 km"), which
    /// are values rather than things.
    Unknown,
}

impl EntityKind {
    /// Every kind, in declaration order.
    pub const ALL: [EntityKind; 7] = [
        EntityKind::Person,
        EntityKind::Organization,
        EntityKind::Place,
        EntityKind::Date,
        EntityKind::Artifact,
        EntityKind::Concept,
        EntityKind::Unknown,
    ];

    /// Stable lowercase name ("person", "organization", ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Person => "person",
            EntityKind::Organization => "organization",
            EntityKind::Place => "place",
            EntityKind::Date => "date",
            EntityKind::Artifact => "artifact",
            EntityKind::Concept => "concept",
            EntityKind::Unknown => "unknown",
        }
    }

    /// Parses a kind name, case-insensitively.
    pub fn parse(name: &str) -> Option<EntityKind> {
        EntityKind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(name))
    }
}

/// An entity of the document.
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentEntity {
    pub key: String,
    pub name: String,
    pub kind: EntityKind,
    /// Other names used for it, each with its key.
    pub aliases: Vec<(String, String)>,
    pub mentions: usize,
}

/// A mention: entity index, chunk ordinal, byte span in the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentMention {
    pub entity: usize,
    pub chunk: usize,
    pub start: usize,
    pub end: usize,
}

/// What found a relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extractor {
    /// The offline rule-based extractor (`graph::extract`).
    Rules,
    /// The optional LLM (`graph::llm_triples`), checked against the text.
    Llm,
    /// The document's own declaration (`graph::declared`), checked
    /// against the text the same way.
    Declared,
}

impl Extractor {
    /// Stable name, as stored with the relation's evidence.
    pub fn name(self) -> &'static str {
        match self {
            Extractor::Rules => "rules",
            Extractor::Llm => "llm",
            Extractor::Declared => "declared",
        }
    }
}

/// A relation with its evidence span in the document.
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentRelation {
    pub subject: usize,
    pub predicate: String,
    pub object: usize,
    pub negated: bool,
    pub pattern: bool,
    pub chunk: usize,
    pub start: usize,
    pub end: usize,
    pub extractor: Extractor,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fragment {
    pub entities: Vec<FragmentEntity>,
    pub mentions: Vec<FragmentMention>,
    pub relations: Vec<FragmentRelation>,
}

/// A predicate's relation key: its words Porter-stemmed, so "acquired",
/// "acquire" and "acquires" are one relation (and "did not acquire"
/// contradicts "acquired").
pub fn predicate_key(predicate: &str) -> String {
    predicate
        .split_whitespace()
        .map(|w| super::stem::stem(&w.to_lowercase()))
        .collect::<Vec<_>>()
        .join(" ")
}
