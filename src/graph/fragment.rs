//! A document's contribution to the graph, computed before it is stored:
//! the entities its chunks mention, where, and the relations between them.
//! This module builds it ([`from_chunks`]) and decides which entities are
//! nodes (`is_node`); the types are `knowledge::fragment`'s.
//!
//! Extraction runs per chunk (so every span falls inside one chunk and can
//! be cited); entities are then merged across the document's chunks by
//! their normalized key, so "Acme Corp." in chunk 0 and "Acme" in chunk 3
//! are one entity with both names.

use std::collections::HashMap;

use super::extract::{self, EntityKind, RelationKind};
use crate::store::NewChunk;

/// The fragment's types are values of the knowledge model, below the store
/// that records them; kept at this path.
pub use crate::knowledge::fragment::{
    predicate_key, Extractor, Fragment, FragmentEntity, FragmentMention, FragmentRelation,
};

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

/// The dates and quantities of an extraction that are the value of a
/// single-valued fact ("runs at 03:00", "upgraded to version 2.4", "due
/// on May 15"): nodes after all, so that the fact's history can be kept
/// (see `knowledge::facts`). Only as such a value: a date named in
/// passing still makes no node.
fn fact_values(found: &extract::Extraction) -> Vec<usize> {
    let kind = |i: usize| found.entities[i].kind;
    found
        .relations
        .iter()
        .filter(|r| r.kind == RelationKind::Pattern)
        .filter(|r| is_node(kind(r.subject), &found.entities[r.subject].key))
        .filter(|r| {
            crate::knowledge::facts::single_valued(&r.predicate, kind(r.subject), kind(r.object))
                .is_some()
        })
        .map(|r| r.object)
        .collect()
}

/// Extracts the graph fragment of a document's chunks.
pub fn from_chunks(chunks: &[NewChunk]) -> Fragment {
    let mut out = Fragment::default();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for (ordinal, chunk) in chunks.iter().enumerate() {
        let found = extract::extract(&chunk.text);
        let values = fact_values(&found);
        // Extraction-local entity index → fragment entity index.
        let mut local: Vec<Option<usize>> = Vec::with_capacity(found.entities.len());
        for (i, e) in found.entities.iter().enumerate() {
            if !is_node(e.kind, &e.key) && !values.contains(&i) {
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
