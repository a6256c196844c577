//! A document's contribution to the graph, computed before it is stored:
//! the entities its chunks mention, where, and the relations between them.
//!
//! Extraction runs per chunk (so every span falls inside one chunk and can
//! be cited); entities are then merged across the document's chunks by
//! their normalized key, so "Acme Corp." in chunk 0 and "Acme" in chunk 3
//! are one entity with both names.

use std::collections::HashMap;

use super::extract::{self, EntityKind, RelationKind};
use crate::store::NewChunk;

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
    /// The offline rule-based extractor ([`super::extract`]).
    Rules,
    /// The optional LLM ([`super::llm_triples`]), checked against the text.
    Llm,
    /// The document's own declaration ([`super::declared`]), checked
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

/// Whether an entity is worth a graph node. Dates and quantities are
/// values: they make poor nodes (every note from May 2024 would link) but
/// they are still found by the keyword lane. The extractor marks
/// quantities `Unknown`, like names it cannot classify; a key starting
/// with a digit or a currency sign tells the quantities apart.
pub(crate) fn is_node(kind: EntityKind, key: &str) -> bool {
    match kind {
        EntityKind::Date => false,
        EntityKind::Unknown => key.chars().next().is_some_and(char::is_alphabetic),
        _ => true,
    }
}

/// A predicate's relation key: its words Porter-stemmed, so "acquired",
/// "acquire" and "acquires" are one relation (and "did not acquire"
/// contradicts "acquired").
pub fn predicate_key(predicate: &str) -> String {
    predicate
        .split_whitespace()
        .map(|w| crate::query::stem::stem(&w.to_lowercase()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Extracts the graph fragment of a document's chunks.
pub fn from_chunks(chunks: &[NewChunk]) -> Fragment {
    let mut out = Fragment::default();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for (ordinal, chunk) in chunks.iter().enumerate() {
        let found = extract::extract(&chunk.text);
        // Extraction-local entity index → fragment entity index.
        let mut local: Vec<Option<usize>> = Vec::with_capacity(found.entities.len());
        for e in &found.entities {
            if !is_node(e.kind, &e.key) {
                local.push(None);
                continue;
            }
            let index = *by_key.entry(e.key.clone()).or_insert_with(|| {
                out.entities.push(FragmentEntity {
                    key: e.key.clone(),
                    name: e.name.clone(),
                    kind: e.kind,
                    aliases: Vec::new(),
                    mentions: 0,
                });
                out.entities.len() - 1
            });
            let entity = &mut out.entities[index];
            for alias in &e.aliases {
                let key = extract::entity_key(alias, e.kind);
                if key != entity.key && !entity.aliases.iter().any(|(k, _)| *k == key) {
                    entity.aliases.push((key, alias.clone()));
                }
            }
            local.push(Some(index));
        }
        for m in &found.mentions {
            if let Some(Some(entity)) = local.get(m.entity) {
                out.entities[*entity].mentions += 1;
                out.mentions.push(FragmentMention {
                    entity: *entity,
                    chunk: ordinal,
                    start: chunk.start + m.start,
                    end: chunk.start + m.end,
                });
            }
        }
        for r in &found.relations {
            let (Some(Some(subject)), Some(Some(object))) =
                (local.get(r.subject), local.get(r.object))
            else {
                continue;
            };
            if subject == object {
                continue;
            }
            out.relations.push(FragmentRelation {
                subject: *subject,
                predicate: r.predicate.clone(),
                object: *object,
                negated: r.negated,
                pattern: r.kind == RelationKind::Pattern,
                chunk: ordinal,
                start: chunk.start + r.start,
                end: chunk.start + r.end,
                extractor: Extractor::Rules,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(start: usize, text: &str) -> NewChunk {
        NewChunk {
            start,
            end: start + text.len(),
            text: text.into(),
            context: String::new(),
        }
    }

    #[test]
    fn spans_are_document_offsets_and_entities_merge_across_chunks() {
        let chunks = [
            chunk(0, "Acme Corp. acquired Widgets Inc. in May."),
            chunk(100, "Dana Scully joined Acme as an engineer."),
        ];
        let f = from_chunks(&chunks);
        let acme = f
            .entities
            .iter()
            .position(|e| e.key == "acme")
            .expect("acme");
        let acme_mentions: Vec<&FragmentMention> =
            f.mentions.iter().filter(|m| m.entity == acme).collect();
        assert_eq!(acme_mentions.len(), 2, "{f:#?}");
        assert!(acme_mentions.iter().any(|m| m.chunk == 1 && m.start >= 100));
        for m in &f.mentions {
            let c = &chunks[m.chunk];
            assert!(m.start >= c.start && m.end <= c.end);
        }
        assert!(
            f.relations
                .iter()
                .any(|r| r.pattern && r.subject == acme && r.predicate.contains("acquired")),
            "{f:#?}"
        );
    }

    #[test]
    fn inflections_of_a_predicate_share_a_key() {
        assert_eq!(predicate_key("acquired"), predicate_key("acquire"));
        assert_eq!(predicate_key("works at"), predicate_key("working at"));
    }

    #[test]
    fn dates_and_quantities_are_not_nodes() {
        let f = from_chunks(&[chunk(0, "On 8 May 2023 we paid $30 to Acme.")]);
        assert!(f.entities.iter().all(|e| is_node(e.kind, &e.key)), "{f:#?}");
        assert!(f.entities.iter().any(|e| e.key == "acme"), "{f:#?}");
    }
}
