//! Community summaries: groups of entities that belong together, found by
//! hierarchical Leiden over the weighted entity graph, each summarised
//! extractively.
//!
//! A summary's title names its most-mentioned entities; its facts are the
//! community's strongest relations written as sentences; its citations are
//! the chunks that mention the most members. Everything is derived from
//! the tenant's current data (what a query could see), and the result for
//! a graph is deterministic: Leiden is seeded and ties break by id.
//!
//! When the optional LLM is configured to summarize, the largest
//! communities of a stored snapshot may later gain an [`LlmSummary`]
//! (see [`super::llm_summaries`]); building never asks for one.

use std::collections::HashMap;

use super::leiden::{self, LeidenParams, WeightedGraph};

/// Smallest community summarised (single entities are not communities).
pub const MIN_COMMUNITY_SIZE: usize = 2;
/// Most communities summarised per level (the largest).
pub const MAX_COMMUNITIES_PER_LEVEL: usize = 500;
/// Entities named in a title.
pub const TITLE_ENTITIES: usize = 3;
/// Facts per summary.
pub const SUMMARY_FACTS: usize = 5;
/// Citations per summary.
pub const SUMMARY_CITATIONS: usize = 3;
/// Weight of a co-occurrence edge relative to a pattern relation's.
pub const COOCCURRENCE_EDGE_WEIGHT: f64 = 0.3;

/// The summaries' types are values of the knowledge model, below the store
/// that keeps their snapshots; kept at this path.
pub use crate::knowledge::community::{CommunityCitation, GraphInput, LlmSummary, Summary};

/// Builds the summaries of every level.
pub fn build(input: &GraphInput) -> Vec<Summary> {
    let index: HashMap<i64, u32> = input
        .entities
        .iter()
        .enumerate()
        .map(|(i, (id, _, _))| (*id, i as u32))
        .collect();
    let edges: Vec<(u32, u32, f64)> = input
        .relations
        .iter()
        .filter_map(|(s, o, _, conf, pattern)| {
            let (a, b) = (*index.get(s)?, *index.get(o)?);
            let w = conf
                * if *pattern {
                    1.0
                } else {
                    COOCCURRENCE_EDGE_WEIGHT
                };
            (a != b && w > 0.0 && w.is_finite()).then_some((a, b, w))
        })
        .collect();
    // Leiden runs over the entities that have a relation only: an entity
    // without one stays alone at every level, and single entities are not
    // summarized (`MIN_COMMUNITY_SIZE`). On text whose entities are mostly
    // unrelated concepts that is three quarters of them, which cost the
    // rebuild most of its time for nothing. `nodes` maps the compact
    // numbering back to `input.entities`, in the same order, so the
    // result stays deterministic.
    let mut related = vec![false; input.entities.len()];
    for &(a, b, _) in &edges {
        related[a as usize] = true;
        related[b as usize] = true;
    }
    let nodes: Vec<usize> = (0..related.len()).filter(|n| related[*n]).collect();
    let mut compact = vec![u32::MAX; related.len()];
    for (i, node) in nodes.iter().enumerate() {
        compact[*node] = i as u32;
    }
    let edges: Vec<(u32, u32, f64)> = edges
        .into_iter()
        .map(|(a, b, w)| (compact[a as usize], compact[b as usize], w))
        .collect();
    let Ok(graph) = WeightedGraph::from_edges(nodes.len(), &edges) else {
        return Vec::new();
    };
    let Ok(hierarchy) = leiden::hierarchical_leiden(&graph, &LeidenParams::default()) else {
        return Vec::new();
    };
    let ends = pattern_ends(input, &index, &compact);
    let mut out = Vec::new();
    for (level, partition) in hierarchy.levels.iter().enumerate() {
        let mut members: HashMap<u32, Vec<usize>> = HashMap::new();
        for (node, community) in partition.membership.iter().enumerate() {
            members.entry(*community).or_default().push(nodes[node]);
        }
        let mut groups: Vec<(u32, Vec<usize>)> = members
            .into_iter()
            .filter(|(_, m)| m.len() >= MIN_COMMUNITY_SIZE)
            .collect();
        // Largest first, then by id: deterministic.
        groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        groups.truncate(MAX_COMMUNITIES_PER_LEVEL);
        let mut inside = relations_inside(&ends, &partition.membership);
        for (community, nodes) in groups {
            let parent = partition
                .parents
                .get(community as usize)
                .copied()
                .filter(|_| level + 1 < hierarchy.levels.len());
            let relations = inside.remove(&community).unwrap_or_default();
            out.push(summarize(
                input, level, community, parent, &nodes, &relations,
            ));
        }
    }
    out
}

/// The pattern relations whose two ends are both nodes of the clustered
/// graph, as (position in `input.relations`, node, node). Resolved once for
/// every level (see [`relations_inside`]).
fn pattern_ends(
    input: &GraphInput,
    index: &HashMap<i64, u32>,
    compact: &[u32],
) -> Vec<(usize, u32, u32)> {
    let node = |entity: &i64| {
        let n = compact[*index.get(entity)? as usize];
        (n != u32::MAX).then_some(n)
    };
    input
        .relations
        .iter()
        .enumerate()
        .filter(|(_, r)| r.4)
        .filter_map(|(i, (s, o, ..))| Some((i, node(s)?, node(o)?)))
        .collect()
}

/// The pattern relations (positions in `input.relations`) whose two ends
/// lie in one community of `membership`, by community. One pass over the
/// relations per level: each summary filtering all of them for its own
/// members was half of a rebuild's time (563 summaries × 152k relations at
/// 10k entity-rich documents).
fn relations_inside(ends: &[(usize, u32, u32)], membership: &[u32]) -> HashMap<u32, Vec<usize>> {
    let mut inside: HashMap<u32, Vec<usize>> = HashMap::new();
    for &(i, a, b) in ends {
        let (Some(a), Some(b)) = (membership.get(a as usize), membership.get(b as usize)) else {
            continue;
        };
        if a == b {
            inside.entry(*a).or_default().push(i);
        }
    }
    inside
}

/// One community's summary; `relations` are its pattern relations
/// (positions in `input.relations`, see [`relations_inside`]).
fn summarize(
    input: &GraphInput,
    level: usize,
    community: u32,
    parent: Option<u32>,
    nodes: &[usize],
    relations: &[usize],
) -> Summary {
    let mut members: Vec<&(i64, String, i64)> = nodes.iter().map(|n| &input.entities[*n]).collect();
    members.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    let names: HashMap<i64, &str> = members.iter().map(|m| (m.0, m.1.as_str())).collect();
    let title = members
        .iter()
        .take(TITLE_ENTITIES)
        .map(|m| m.1.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut relations: Vec<&(i64, i64, String, f64, bool)> =
        relations.iter().map(|i| &input.relations[*i]).collect();
    relations.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
    let facts = relations
        .iter()
        .take(SUMMARY_FACTS)
        .map(|(s, o, label, _, _)| format!("{} {} {}.", names[s], label, names[o]))
        .collect();
    let mut per_chunk: HashMap<i64, usize> = HashMap::new();
    for m in &members {
        for chunk in input.mentions.get(&m.0).map(Vec::as_slice).unwrap_or(&[]) {
            *per_chunk.entry(*chunk).or_default() += 1;
        }
    }
    let mut chunks: Vec<(i64, usize)> = per_chunk.into_iter().collect();
    chunks.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    Summary {
        level,
        community,
        parent,
        title,
        size: members.len(),
        entities: members.iter().take(20).map(|m| m.1.clone()).collect(),
        facts,
        citations: chunks
            .into_iter()
            .take(SUMMARY_CITATIONS)
            .map(|(chunk_key, members)| CommunityCitation { chunk_key, members })
            .collect(),
        member_ids: members.iter().map(|m| m.0).collect(),
        llm_summary: None,
    }
}

/// Rebuilds a tenant's summaries if its graph changed since the last build
/// (building reads current data through a reader; the snapshot is written
/// in one transaction). Returns whether a snapshot was written.
pub fn refresh(
    store: &crate::store::Store,
    tenant: &crate::store::Tenant,
) -> crate::error::Result<bool> {
    let (input, graph_version) = {
        let reader = store.reader(tenant)?;
        let (graph_version, built) = reader.community_versions()?;
        if graph_version == built {
            return Ok(false);
        }
        (reader.graph_input()?, graph_version)
    };
    let started = std::time::Instant::now();
    let summaries = build(&input);
    log::debug!(
        "built {} community summaries from {} entities in {:?}",
        summaries.len(),
        input.entities.len(),
        started.elapsed()
    );
    let now = crate::clock::now_ms();
    store.write(tenant, move |w| {
        w.store_communities(graph_version, &summaries, now)
    })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> GraphInput {
        let names = ["Acme", "Widgets", "Dana", "Lisbon", "Porto", "Madrid"];
        let entities = names
            .iter()
            .enumerate()
            .map(|(i, n)| (i as i64 + 1, n.to_string(), 10 - i as i64))
            .collect();
        let relations = vec![
            (1, 2, "acquired".into(), 0.9, true),
            (3, 1, "works at".into(), 0.8, true),
            (2, 3, "co-occurs with".into(), 0.5, false),
            (4, 5, "near".into(), 0.7, true),
            (5, 6, "near".into(), 0.7, true),
            (4, 6, "near".into(), 0.6, true),
        ];
        let mentions = HashMap::from([
            (1, vec![100, 101]),
            (2, vec![100]),
            (3, vec![101, 102]),
            (4, vec![200]),
        ]);
        GraphInput {
            entities,
            relations,
            mentions,
        }
    }

    #[test]
    fn separate_topics_become_separate_summaries_with_facts_and_citations() {
        let s = build(&input());
        let level0: Vec<&Summary> = s.iter().filter(|c| c.level == 0).collect();
        assert_eq!(level0.len(), 2, "{s:#?}");
        let company = level0
            .iter()
            .find(|c| c.entities.contains(&"Acme".to_string()))
            .unwrap();
        assert!(company.title.starts_with("Acme"));
        assert!(
            company
                .facts
                .contains(&"Acme acquired Widgets.".to_string()),
            "{:?}",
            company.facts
        );
        assert_eq!(company.citations[0].members, 2);
    }

    #[test]
    fn facts_are_the_strongest_relations_with_both_ends_inside() {
        let mut g = input();
        // Across the two topics (weak), to an entity not in the graph, and
        // onto itself: only the last can be a fact of a community.
        g.relations.push((3, 4, "visited".into(), 0.05, true));
        g.relations.push((1, 99, "owns".into(), 0.95, true));
        g.relations.push((1, 1, "rebranded".into(), 0.85, true));
        let names: HashMap<i64, &str> = g.entities.iter().map(|e| (e.0, e.1.as_str())).collect();
        let summaries = build(&g);
        assert!(!summaries.is_empty());
        for s in &summaries {
            // What each summary's facts must be, straight from the definition.
            let inside = |id: &i64| {
                names
                    .get(id)
                    .is_some_and(|n| s.entities.iter().any(|e| e == n))
            };
            let mut expected: Vec<&(i64, i64, String, f64, bool)> = g
                .relations
                .iter()
                .filter(|(a, b, _, _, pattern)| *pattern && inside(a) && inside(b))
                .collect();
            expected.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
            let expected: Vec<String> = expected
                .iter()
                .take(SUMMARY_FACTS)
                .map(|(a, b, label, _, _)| format!("{} {} {}.", names[a], label, names[b]))
                .collect();
            assert_eq!(s.facts, expected, "{s:#?}");
            assert!(!s
                .facts
                .iter()
                .any(|f| f.contains("visited") || f.contains("owns")));
        }
        let company = summaries
            .iter()
            .find(|s| s.level == 0 && s.entities.contains(&"Acme".to_string()))
            .unwrap();
        assert!(
            company.facts.contains(&"Acme rebranded Acme.".to_string()),
            "{company:#?}"
        );
    }

    #[test]
    fn the_same_graph_gives_the_same_summaries() {
        assert_eq!(build(&input()), build(&input()));
        assert!(build(&input()).iter().all(|s| s.llm_summary.is_none()));
    }

    #[test]
    fn snapshots_without_llm_summaries_serialize_as_before_and_load() {
        let s = &build(&input())[0];
        let json = serde_json::to_string(s).unwrap();
        assert!(!json.contains("llm_summary"), "{json}");
        let back: Summary = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, s);
        let mut with = s.clone();
        with.llm_summary = Some(LlmSummary {
            text: "Acme bought Widgets [1].".into(),
            citations: vec![100],
            input_digest: "d".into(),
        });
        let back: Summary = serde_json::from_str(&serde_json::to_string(&with).unwrap()).unwrap();
        assert_eq!(back, with);
    }

    #[test]
    fn entities_without_relations_join_no_community() {
        // Unrelated entities (text whose entities are concepts with no
        // relation between them) share nothing to summarize; grouping them
        // would title a "community" with names that never met.
        let mut g = input();
        g.relations.clear();
        assert_eq!(build(&g), vec![]);
        // Isolated entities beside connected ones change nothing.
        let mut g = input();
        let alone: Vec<(i64, String, i64)> = (100..400).map(|i| (i, format!("E{i}"), 1)).collect();
        g.entities.extend(alone);
        let with = build(&g);
        assert_eq!(with, build(&input()));
        assert!(with
            .iter()
            .all(|s| s.entities.iter().all(|e| !e.starts_with('E'))));
    }

    #[test]
    fn an_empty_graph_has_no_communities() {
        assert!(build(&GraphInput {
            entities: vec![],
            relations: vec![],
            mentions: HashMap::new()
        })
        .is_empty());
    }
}
