//! The graph lane: from the entities a question names to the chunks that
//! mention them and the relations that connect them.
//!
//! Question entities are found by running the extractor on the question
//! and by looking up its terms as entity keys and aliases, then, for a
//! name that matched nothing, by the resolver's name match
//! (`graph::resolution::question_matches`: name rules and embedding
//! similarity over a bounded candidate set from the name-term index). Each matched
//! entity contributes its chunks (rarer entities weigh more, so "Caroline"
//! in a conversation with Caroline counts less than "pottery") and the
//! evidence chunks of its relations, weighted by the relation's decayed
//! confidence. A chunk naming several question entities adds their
//! weights up, which is what answers multi-hop questions. With `depth` 2
//! the neighbours of the question entities contribute too, at a discount.

use std::collections::HashMap;

use serde::Serialize;

use crate::clock::now_ms;
use crate::error::Result;
use crate::graph::confidence;
use crate::graph::extract::{self, EntityKind};
use crate::store::{ChunkHit, EntityRow, RelationRow, Scope, TenantReader};

/// Most question entities followed.
pub const MAX_QUESTION_ENTITIES: usize = 8;
/// Relations read per entity.
pub const MAX_RELATIONS_PER_ENTITY: usize = 24;
/// Mentioning chunks read per entity (newest first).
pub const MAX_CHUNKS_PER_ENTITY: usize = 64;
/// Weight of a neighbour's chunks relative to a question entity's.
pub const NEIGHBOUR_DISCOUNT: f64 = 0.35;
/// Co-occurrence relations count this much of a pattern relation.
pub const COOCCURRENCE_WEIGHT: f64 = 0.3;
/// An entity mentioned in more than this fraction of the chunks says
/// little about which chunk answers (a chat partner's name in a chat);
/// it is skipped when the question names more specific ones.
pub const COMMON_ENTITY_FRACTION: f64 = 0.1;

/// A relation as shown with evidence.
#[derive(Debug, Clone, Serialize)]
pub struct RelationUse {
    pub subject: String,
    pub predicate: String,
    pub object: String,
    /// Beta mean decayed by age, in [0, 1].
    pub confidence: f64,
    pub provenance: &'static str,
    /// What found the evidence shown: `rules` (the offline extractor),
    /// `llm` (the optional LLM, checked against the text) or `declared`
    /// (the document's own `declared_graph`, checked the same way).
    pub extractor: &'static str,
    /// Set when a newer fact superseded this one (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
}

/// What the graph lane found.
#[derive(Debug, Default)]
pub struct GraphLane {
    pub hits: Vec<ChunkHit>,
    /// Relations whose evidence is in each chunk.
    pub relations: HashMap<i64, Vec<RelationUse>>,
    /// Names of the question entities found in the graph.
    pub entities: Vec<String>,
}

/// The question's entities, as stored entities.
pub fn question_entities(
    reader: &TenantReader<'_>,
    question: &str,
    terms: &[String],
) -> Result<Vec<EntityRow>> {
    let found = extract::extract(question);
    let mut keys: Vec<String> = found.entities.iter().map(|e| e.key.clone()).collect();
    for e in &found.entities {
        for a in &e.aliases {
            keys.push(extract::entity_key(a, e.kind));
        }
    }
    // Lowercase concepts ("pottery") are not always recognised in a
    // question: try each term and each pair of adjacent terms as a key.
    keys.extend(terms.iter().cloned());
    keys.extend(terms.windows(2).map(|w| format!("{} {}", w[0], w[1])));
    keys.dedup();
    let mut entities = reader.entities_by_keys(&keys)?;
    // A name the graph holds under no key or alias of its own may still be
    // another name of a stored entity ("NYC" for "New York City"): the
    // resolver's bounded name lookup. Concepts and dates have canonical
    // keys; the term lookups above already covered them.
    for e in &found.entities {
        if matches!(e.kind, EntityKind::Concept | EntityKind::Date) {
            continue;
        }
        let mut own = vec![e.key.clone()];
        own.extend(e.aliases.iter().map(|a| extract::entity_key(a, e.kind)));
        if !reader.entities_by_keys(&own)?.is_empty() {
            continue;
        }
        for row in reader.entities_named_like(&e.key, &e.name)? {
            if !entities.iter().any(|x| x.id == row.id) {
                entities.push(row);
            }
        }
    }
    // Specific entities first: fewer mentions, more telling.
    entities.sort_by_key(|e| e.mention_count);
    let total = reader.chunk_count()? as f64;
    if entities
        .iter()
        .any(|e| (e.mention_count as f64) <= total * COMMON_ENTITY_FRACTION)
    {
        entities.retain(|e| (e.mention_count as f64) <= total * COMMON_ENTITY_FRACTION);
    }
    entities.truncate(MAX_QUESTION_ENTITIES);
    Ok(entities)
}

/// Runs the graph lane for up to `limit` chunks.
pub fn lane(
    reader: &TenantReader<'_>,
    entities: &[EntityRow],
    depth: usize,
    half_life_days: f64,
    limit: usize,
    scope: &Scope,
) -> Result<GraphLane> {
    let mut scores: HashMap<i64, f64> = HashMap::new();
    let mut relations: HashMap<i64, Vec<RelationUse>> = HashMap::new();
    let now = now_ms();
    let mut neighbours: Vec<(i64, f64)> = Vec::new();
    let total = reader.chunk_count()? as f64;
    for e in entities {
        // Inverse document frequency of the entity among chunks.
        let specificity = ((total + 1.0) / (e.mention_count as f64 + 1.0))
            .ln()
            .max(0.0);
        for chunk in reader.chunks_mentioning(e.id, MAX_CHUNKS_PER_ENTITY)? {
            *scores.entry(chunk).or_default() += specificity;
        }
        for r in reader.relations_of(e.id, false, MAX_RELATIONS_PER_ENTITY)? {
            let conf = decayed(&r, now, half_life_days);
            let weight = if r.pattern { 1.0 } else { COOCCURRENCE_WEIGHT };
            if let Some((chunk, _, _)) = r.evidence_chunk {
                *scores.entry(chunk).or_default() += specificity * conf * weight;
                if r.pattern {
                    relations.entry(chunk).or_default().push(show(&r, conf));
                }
            }
            let other = if r.subject_id == e.id {
                r.object_id
            } else {
                r.subject_id
            };
            neighbours.push((other, specificity * conf * weight));
        }
    }
    if depth > 1 {
        for (entity, weight) in neighbours {
            if entities.iter().any(|e| e.id == entity) {
                continue;
            }
            for chunk in reader.chunks_mentioning(entity, MAX_CHUNKS_PER_ENTITY / 4)? {
                *scores.entry(chunk).or_default() += NEIGHBOUR_DISCOUNT * weight;
            }
        }
    }
    let mut ranked: Vec<(i64, f64)> = scores.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    // The first `limit` the scope admits: a filter applies before the
    // lane's cut, not after.
    let hits = reader.scoped_chunks_by_keys(&ranked, limit, scope)?;
    Ok(GraphLane {
        hits,
        relations,
        entities: entities.iter().map(|e| e.name.clone()).collect(),
    })
}

fn decayed(r: &RelationRow, now: i64, half_life_days: f64) -> f64 {
    let age_days = (now - r.last_evidence_at) as f64 / 86_400_000.0;
    confidence::confidence(r.alpha, r.beta, age_days, half_life_days)
}

fn show(r: &RelationRow, conf: f64) -> RelationUse {
    RelationUse {
        subject: r.subject.clone(),
        predicate: r.predicate.clone(),
        object: r.object.clone(),
        confidence: (conf * 1000.0).round() / 1000.0,
        provenance: r.provenance,
        extractor: r.extractor,
        valid_to: r.valid_to.map(crate::clock::rfc3339),
    }
}
