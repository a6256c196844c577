//! The knowledge graph as the memory browser shows it: entities by
//! mentions or by a piece of a name, one entity with its relations and
//! their evidence, and the neighbourhood of an entity (or the most
//! mentioned entities) with the edges among them.
//!
//! Entities and relations are named by their external ids, numbered
//! within the tenant ([`ids::GraphIds`]); a malformed entity id, an
//! unknown one and another tenant's all read the same: not found. Every
//! reply is bounded by the browse limits of [`crate::limits`]. Community
//! membership comes from the latest stored community snapshot (its finest
//! level); nothing here rebuilds one.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::Memory;
use crate::error::{Error, Result};
use crate::graph::confidence;
use crate::ids;
use crate::limits::{
    ENTITIES_MAX_LIMIT, ENTITY_MAX_ALIASES, ENTITY_MAX_RELATIONS, GRAPH_MAX_DEPTH, GRAPH_MAX_EDGES,
    GRAPH_MAX_NODES, GRAPH_RELATIONS_PER_NODE, MAX_ENTITY_QUERY_BYTES, RELATION_MAX_EVIDENCE,
};
use crate::service::principal::Permission;
use crate::store::{EntityRow, TenantReader};

/// An entity as listings show it.
#[derive(Debug, Clone)]
pub struct EntityCard {
    pub entity_id: String,
    pub name: String,
    pub kind: String,
    pub mentions: i64,
    /// Other names of it (at most [`ENTITY_MAX_ALIASES`]).
    pub aliases: Vec<String>,
}

/// The community an entity belongs to, at the snapshot's finest level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommunityRef {
    pub level: usize,
    pub community: u32,
    pub title: String,
}

/// One entity with its relations.
#[derive(Debug, Clone)]
pub struct EntityView {
    pub card: EntityCard,
    /// Unix ms.
    pub first_seen: i64,
    pub last_seen: i64,
    pub community: Option<CommunityRef>,
    pub relations: Vec<RelationView>,
    /// More relations than [`ENTITY_MAX_RELATIONS`] touch it.
    pub truncated: bool,
}

/// The other end of a relation.
#[derive(Debug, Clone)]
pub struct EntityRef {
    pub entity_id: String,
    pub name: String,
    pub kind: String,
}

/// A relation seen from one of its entities.
#[derive(Debug, Clone)]
pub struct RelationView {
    pub relation_id: String,
    /// True when the entity is the subject.
    pub outgoing: bool,
    pub predicate: String,
    pub other: EntityRef,
    /// The Beta mean, alpha / (alpha + beta).
    pub confidence: f64,
    pub support: i64,
    pub contradict: i64,
    /// Unix ms; `valid_to` once superseded.
    pub valid_from: i64,
    pub valid_to: Option<i64>,
    /// The relation that replaced it, for a fact that holds one value at
    /// a time.
    pub superseded_by: Option<String>,
    pub evidence: Vec<EvidenceView>,
    /// More documents bear on it than [`RELATION_MAX_EVIDENCE`].
    pub evidence_truncated: bool,
}

/// One document's evidence for or against a relation.
#[derive(Debug, Clone)]
pub struct EvidenceView {
    pub document_id: String,
    /// `<document_id>:<ordinal>`, when the chunk is stored.
    pub chunk_id: Option<String>,
    /// Span in the document's extracted text.
    pub byte_start: i64,
    pub byte_end: i64,
    /// The text of the span, when its chunk holds it.
    pub quote: Option<String>,
    pub provenance: String,
    pub supports: bool,
}

/// A neighbourhood for an interactive view.
#[derive(Debug, Clone)]
pub struct GraphView {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdgeView>,
    /// Something was left out: nodes past the limit, relations past
    /// [`GRAPH_RELATIONS_PER_NODE`] of a node, or edges past
    /// [`GRAPH_MAX_EDGES`].
    pub truncated: bool,
}

#[derive(Debug, Clone)]
pub struct GraphNode {
    pub entity_id: String,
    pub name: String,
    pub kind: String,
    pub mentions: i64,
    /// Its community at the finest level of the latest snapshot.
    pub community: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct GraphEdgeView {
    pub relation_id: String,
    /// Entity ids of the subject and the object.
    pub source: String,
    pub target: String,
    pub label: String,
    pub confidence: f64,
}

/// The one answer for an entity id this caller cannot see.
fn unknown_entity(id: &str) -> Error {
    Error::NotFound(format!("no entity {id:?} in this memory"))
}

/// Entity → its community, at the finest level of one snapshot.
type Membership = HashMap<i64, CommunityRef>;

/// What identifies a snapshot: its graph version and build time.
type Stamp = (i64, i64);

/// The membership of each tenant's latest community snapshot, kept while
/// that snapshot is the latest: reading and parsing a whole snapshot (a
/// few hundred summaries with their member lists) for every entity or
/// graph request cost tens of milliseconds at 10k documents.
#[derive(Default)]
pub(crate) struct Memberships {
    /// Tenant → (the snapshot's graph version and build time, membership).
    by_tenant: Mutex<HashMap<String, (Stamp, Arc<Membership>)>>,
}

impl Memberships {
    /// Each entity's community at the finest level of the latest snapshot
    /// (none before a snapshot, or while retention withholds it).
    fn of(&self, reader: &TenantReader<'_>, tenant: &str) -> Result<Arc<Membership>> {
        let Some(stamp) = reader.latest_communities_stamp()? else {
            return Ok(Arc::default());
        };
        let lock = || self.by_tenant.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((kept, membership)) = lock().get(tenant) {
            if *kept == stamp {
                return Ok(membership.clone());
            }
        }
        let membership = Arc::new(read_membership(reader)?);
        lock().insert(tenant.to_string(), (stamp, membership.clone()));
        Ok(membership)
    }
}

fn read_membership(reader: &TenantReader<'_>) -> Result<Membership> {
    let Some(snapshot) = reader.latest_communities()? else {
        return Ok(HashMap::new());
    };
    let finest = snapshot.summaries.iter().map(|s| s.level).min();
    let mut out = HashMap::new();
    for s in snapshot
        .summaries
        .iter()
        .filter(|s| Some(s.level) == finest)
    {
        for id in &s.member_ids {
            out.entry(*id).or_insert_with(|| CommunityRef {
                level: s.level,
                community: s.community,
                title: s.title.clone(),
            });
        }
    }
    Ok(out)
}

impl Memory<'_> {
    fn memberships(&self, reader: &TenantReader<'_>) -> Result<Arc<Membership>> {
        // The cache holds the whole tenant's; a limited sight reads its own
        // (`latest_communities` leaves out what it must not see).
        if reader.is_limited() {
            return Ok(Arc::new(read_membership(reader)?));
        }
        let tenant = self.principal.tenant.name();
        self.service.memberships.of(reader, tenant)
    }

    /// Without `text`, the `limit` most mentioned entities; with it, those
    /// whose name or another name contains it (ASCII case ignored), most
    /// mentioned first. `limit` is at most [`ENTITIES_MAX_LIMIT`].
    pub fn entities(&self, text: Option<&str>, limit: usize) -> Result<Vec<EntityCard>> {
        self.require(Permission::Query)?;
        let limit = limit.clamp(1, ENTITIES_MAX_LIMIT);
        let reader = self.reader()?;
        let rows = match text.map(str::trim).filter(|t| !t.is_empty()) {
            Some(t) if t.len() > MAX_ENTITY_QUERY_BYTES => {
                return Err(Error::invalid(format!(
                    "q is {} bytes; the limit is {MAX_ENTITY_QUERY_BYTES}",
                    t.len()
                )))
            }
            Some(t) => reader.entities_matching(t, limit)?,
            None => reader.top_entities(limit)?,
        };
        rows.into_iter()
            .map(|e| {
                let aliases = reader.aliases_of(e.id, ENTITY_MAX_ALIASES)?;
                Ok(card(&reader.graph_ids(), e, aliases))
            })
            .collect()
    }

    /// The entity `entity_id` names, with its strongest relations (at most
    /// [`ENTITY_MAX_RELATIONS`], superseded ones included) and each
    /// relation's newest evidence (at most [`RELATION_MAX_EVIDENCE`]).
    pub fn entity(&self, entity_id: &str) -> Result<EntityView> {
        self.require(Permission::Query)?;
        let reader = self.reader()?;
        let ids = reader.graph_ids();
        let key = reader
            .entity_key(entity_id)?
            .ok_or_else(|| unknown_entity(entity_id))?;
        let detail = reader
            .entity(key)?
            .ok_or_else(|| unknown_entity(entity_id))?;
        let aliases = reader.aliases_of(key, ENTITY_MAX_ALIASES)?;
        let mut relations = reader.entity_relations(key, ENTITY_MAX_RELATIONS + 1)?;
        let truncated = relations.len() > ENTITY_MAX_RELATIONS;
        relations.truncate(ENTITY_MAX_RELATIONS);
        let mut views = Vec::with_capacity(relations.len());
        for r in relations {
            let mut evidence = reader.relation_evidence(r.id, RELATION_MAX_EVIDENCE + 1)?;
            let evidence_truncated = evidence.len() > RELATION_MAX_EVIDENCE;
            evidence.truncate(RELATION_MAX_EVIDENCE);
            views.push(RelationView {
                relation_id: ids.relation_id(r.id),
                outgoing: r.outgoing,
                predicate: r.label,
                other: EntityRef {
                    entity_id: ids.entity_id(r.other.id),
                    name: r.other.name,
                    kind: r.other.kind,
                },
                confidence: confidence::mean(r.alpha, r.beta),
                support: r.support,
                contradict: r.contradict,
                valid_from: r.valid_from,
                valid_to: r.valid_to,
                superseded_by: r.superseded_by.map(|id| ids.relation_id(id)),
                evidence: evidence.into_iter().map(evidence_view).collect(),
                evidence_truncated,
            });
        }
        let community = self.memberships(&reader)?.get(&key).cloned();
        Ok(EntityView {
            card: card(&ids, detail.entity, aliases),
            first_seen: detail.first_seen,
            last_seen: detail.last_seen,
            community,
            relations: views,
            truncated,
        })
    }

    /// The neighbourhood of `centre` up to `depth` relations away (1 or
    /// [`GRAPH_MAX_DEPTH`]), strongest relations first, or without a
    /// centre the most mentioned entities; at most `limit` nodes (at most
    /// [`GRAPH_MAX_NODES`]) and the current relations among them.
    pub fn graph(&self, centre: Option<&str>, depth: usize, limit: usize) -> Result<GraphView> {
        self.require(Permission::Query)?;
        let limit = limit.clamp(1, GRAPH_MAX_NODES);
        let depth = depth.clamp(1, GRAPH_MAX_DEPTH);
        let reader = self.reader()?;
        let mut truncated = false;
        let nodes: Vec<EntityRow> = match centre {
            Some(id) => {
                let key = reader.entity_key(id)?.ok_or_else(|| unknown_entity(id))?;
                let centre = reader.entity(key)?.ok_or_else(|| unknown_entity(id))?;
                let (keys, cut) = grow(&reader, centre.entity.id, depth, limit)?;
                truncated |= cut;
                reader.entities_by_ids(&keys)?
            }
            None => {
                let mut top = reader.top_entities(limit + 1)?;
                truncated |= top.len() > limit;
                top.truncate(limit);
                top
            }
        };
        let inside: HashSet<i64> = nodes.iter().map(|n| n.id).collect();
        let mut edges = Vec::new();
        for n in &nodes {
            let from = reader.edges_from(n.id, GRAPH_RELATIONS_PER_NODE + 1)?;
            truncated |= from.len() > GRAPH_RELATIONS_PER_NODE;
            edges.extend(
                from.into_iter()
                    .take(GRAPH_RELATIONS_PER_NODE)
                    .filter(|e| inside.contains(&e.object_id)),
            );
        }
        if edges.len() > GRAPH_MAX_EDGES {
            edges.sort_by(|a, b| {
                confidence::mean(b.alpha, b.beta)
                    .total_cmp(&confidence::mean(a.alpha, a.beta))
                    .then(a.id.cmp(&b.id))
            });
            edges.truncate(GRAPH_MAX_EDGES);
            truncated = true;
        }
        let communities = self.memberships(&reader)?;
        let ids = reader.graph_ids();
        Ok(GraphView {
            nodes: nodes
                .into_iter()
                .map(|n| GraphNode {
                    community: communities.get(&n.id).map(|c| c.community),
                    entity_id: ids.entity_id(n.id),
                    name: n.name,
                    kind: n.kind,
                    mentions: n.mention_count,
                })
                .collect(),
            edges: edges
                .into_iter()
                .map(|e| GraphEdgeView {
                    relation_id: ids.relation_id(e.id),
                    source: ids.entity_id(e.subject_id),
                    target: ids.entity_id(e.object_id),
                    label: e.label,
                    confidence: confidence::mean(e.alpha, e.beta),
                })
                .collect(),
            truncated,
        })
    }
}

/// The entities within `depth` relations of `centre` (itself first, then
/// breadth first, each node's strongest relations first), at most `limit`;
/// and whether anything was left out.
fn grow(
    reader: &TenantReader<'_>,
    centre: i64,
    depth: usize,
    limit: usize,
) -> Result<(Vec<i64>, bool)> {
    let mut nodes = vec![centre];
    let mut seen = HashSet::from([centre]);
    let mut frontier = vec![centre];
    let mut truncated = false;
    for _ in 0..depth {
        let mut next = Vec::new();
        for n in &frontier {
            let mut around = reader.neighbours(*n, GRAPH_RELATIONS_PER_NODE + 1)?;
            truncated |= around.len() > GRAPH_RELATIONS_PER_NODE;
            around.truncate(GRAPH_RELATIONS_PER_NODE);
            for m in around {
                if seen.contains(&m) {
                    continue;
                }
                if nodes.len() >= limit {
                    return Ok((nodes, true));
                }
                seen.insert(m);
                nodes.push(m);
                next.push(m);
            }
        }
        frontier = next;
    }
    Ok((nodes, truncated))
}

fn card(ids: &ids::GraphIds, e: EntityRow, aliases: Vec<String>) -> EntityCard {
    EntityCard {
        entity_id: ids.entity_id(e.id),
        name: e.name,
        kind: e.kind,
        mentions: e.mention_count,
        aliases,
    }
}

fn evidence_view(ev: crate::store::RelationEvidence) -> EvidenceView {
    let (chunk_id, quote) = match &ev.chunk {
        Some((ordinal, chunk_start, text)) => {
            // Spans are offsets in the document; the chunk starts at
            // `chunk_start` of it.
            let from = usize::try_from(ev.start - chunk_start).ok();
            let to = usize::try_from(ev.end - chunk_start).ok();
            let quote = from
                .zip(to)
                .and_then(|(a, b)| text.get(a..b))
                .map(String::from);
            (Some(format!("{}:{ordinal}", ev.doc_id)), quote)
        }
        None => (None, None),
    };
    EvidenceView {
        document_id: ev.doc_id,
        chunk_id,
        byte_start: ev.start,
        byte_end: ev.end,
        quote,
        provenance: ev.provenance,
        supports: ev.supports,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RelationEvidence;

    fn evidence(chunk: Option<(i64, i64, &str)>, start: i64, end: i64) -> RelationEvidence {
        RelationEvidence {
            doc_id: "doc_1".into(),
            chunk: chunk.map(|(o, s, t)| (o, s, t.to_string())),
            start,
            end,
            provenance: "user".into(),
            supports: true,
        }
    }

    #[test]
    fn quotes_are_cut_from_the_chunk_at_document_offsets() {
        // The chunk is bytes 100.. of its document.
        let chunk = Some((2, 100, "Acme Corp. acquired Widgets Inc."));
        let v = evidence_view(evidence(chunk, 100, 110));
        assert_eq!(v.quote.as_deref(), Some("Acme Corp."));
        assert_eq!(v.chunk_id.as_deref(), Some("doc_1:2"));
        assert_eq!((v.byte_start, v.byte_end), (100, 110));
        let v = evidence_view(evidence(chunk, 111, 119));
        assert_eq!(v.quote.as_deref(), Some("acquired"));
    }

    #[test]
    fn a_span_the_chunk_cannot_hold_has_no_quote() {
        let chunk = Some((0, 100, "Zoë met Dana."));
        for (start, end) in [(90, 105), (100, 200), (102, 103), (108, 104)] {
            // Before the chunk, past its end, inside a character, reversed.
            let v = evidence_view(evidence(chunk, start, end));
            assert_eq!(v.quote, None, "{start}..{end}");
            assert_eq!(v.chunk_id.as_deref(), Some("doc_1:0"));
        }
        let v = evidence_view(evidence(None, 0, 4));
        assert_eq!((v.chunk_id, v.quote), (None, None));
    }
}
