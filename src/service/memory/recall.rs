//! Recall: answering a question from the tenant's memory (merged with a
//! working-memory session when asked) and summarizing its communities.

use serde_json::Value;

use super::Memory;
use crate::error::Result;
use crate::limits::COMMUNITY_MAX_MEMBER_IDS;
use crate::query::{self, QueryOutcome, QuerySpec};
use crate::service::principal::Permission;

impl Memory<'_> {
    /// Answers a question from this tenant's memory, merged with the
    /// caller's working-memory session when `spec.session_id` names one.
    ///
    /// In answer mode, an LLM configured for answers composes the answer
    /// from the evidence; if it fails or cites nothing it was given, the
    /// extractive answer stays (see [`query::synthesis`]).
    pub fn query(&self, spec: &QuerySpec) -> Result<QueryOutcome> {
        self.require(Permission::Query)?;
        let mut outcome = match &spec.session_id {
            Some(session_id) => self.query_with_session(spec, session_id)?,
            None => {
                let reader = self.reader()?;
                query::run(
                    &reader,
                    spec,
                    self.service.shared.embedder.as_ref(),
                    self.service.settings(),
                )?
            }
        };
        if let Some(llm) = &self.service.answer_llm {
            if let Some(extractive) = outcome.answer.take() {
                outcome.answer = Some(query::synthesis::synthesize(
                    llm,
                    &spec.text,
                    extractive,
                    &outcome.evidence,
                ));
            }
        }
        Ok(outcome)
    }

    /// The tenant's community summaries, rebuilt first if the graph changed
    /// since the last build, as JSON (citations as chunk ids).
    pub fn communities(&self) -> Result<Value> {
        self.community_summaries(false)
    }

    /// [`Memory::communities`], each community also listing its members'
    /// entity ids (`entity_ids`, the most mentioned first, at most
    /// [`COMMUNITY_MAX_MEMBER_IDS`], with `entity_ids_truncated`): what the
    /// memory browser colours its graph by.
    pub fn communities_with_members(&self) -> Result<Value> {
        self.community_summaries(true)
    }

    fn community_summaries(&self, members: bool) -> Result<Value> {
        self.require(Permission::Query)?;
        crate::graph::communities::refresh(&self.service.store, &self.principal.tenant)?;
        let reader = self.reader()?;
        let snapshot = match reader.latest_communities()? {
            Some(snapshot) => snapshot,
            // The stored snapshot may quote documents that have expired
            // since it was built (see `store::retention`): summarize the
            // visible data now, without storing it (the worker rebuilds
            // once the sweep has purged them).
            None => crate::store::CommunitySnapshot {
                graph_version: reader.community_versions()?.0,
                built_at: crate::clock::now_ms(),
                summaries: crate::graph::communities::build(&reader.graph_input()?),
            },
        };
        if snapshot.summaries.is_empty() {
            return Ok(
                serde_json::json!({"graph_version": snapshot.graph_version, "communities": []}),
            );
        }
        let keys: Vec<(i64, f64)> = snapshot
            .summaries
            .iter()
            .flat_map(|s| s.citations.iter().map(|c| (c.chunk_key, 0.0)))
            .collect();
        let chunk_ids: std::collections::HashMap<i64, String> = reader
            .chunks_by_keys(&keys)?
            .into_iter()
            .map(|h| (h.chunk_key, format!("{}:{}", h.doc_id, h.ordinal)))
            .collect();
        let graph_ids = reader.graph_ids();
        let communities: Vec<Value> = snapshot
            .summaries
            .iter()
            .map(|s| {
                let mut community = serde_json::json!({
                    "level": s.level,
                    "community": s.community,
                    "parent": s.parent,
                    "title": s.title,
                    "size": s.size,
                    "entities": s.entities,
                    "facts": s.facts,
                    "citations": s.citations.iter().filter_map(|c| chunk_ids.get(&c.chunk_key)).collect::<Vec<_>>(),
                });
                if members {
                    let ids: Vec<String> = s
                        .member_ids
                        .iter()
                        .take(COMMUNITY_MAX_MEMBER_IDS)
                        .map(|id| graph_ids.entity_id(*id))
                        .collect();
                    community["entity_ids"] = serde_json::json!(ids);
                    community["entity_ids_truncated"] =
                        Value::Bool(s.member_ids.len() > COMMUNITY_MAX_MEMBER_IDS);
                }
                // Written by the LLM: shown apart from the extractive fields,
                // and only while a chunk it cites can still be shown.
                if let Some(llm) = &s.llm_summary {
                    let cited: Vec<&String> = llm
                        .citations
                        .iter()
                        .filter_map(|k| chunk_ids.get(k))
                        .collect();
                    if !cited.is_empty() {
                        community["llm_summary"] =
                            serde_json::json!({"text": llm.text, "citations": cited});
                    }
                }
                community
            })
            .collect();
        Ok(serde_json::json!({
            "graph_version": snapshot.graph_version,
            "built_at": crate::clock::rfc3339(snapshot.built_at),
            "communities": communities,
        }))
    }
}
