//! Query: from a question to ranked, cited evidence and an extractive answer.
//!
//! A pipeline of named stages, each testable alone:
//! [`terms`] (question → search terms) → [`retrieve`] (candidates from the
//! keyword and vector lanes) → [`fuse`] (one ranked list) → [`pack`]
//! (diversity and the character budget) → [`answer`] (cited sentences from
//! the evidence).

pub mod answer;
pub mod fuse;
pub mod pack;
pub mod retrieve;
pub mod stem;
pub mod terms;

use serde::Serialize;

use std::collections::BTreeMap;

use crate::embed::Embedder;
use crate::error::Result;
use crate::store::TenantReader;
pub use answer::{Answer, Citation};
pub use fuse::{Fusion, LaneRank};

/// How the caller wants the memory searched (`search_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    Local,
    Global,
    Drift,
    Auto,
}

impl SearchMode {
    pub const NAMES: &'static [&'static str] = &["local", "global", "drift", "auto"];

    pub fn parse(s: &str) -> Option<SearchMode> {
        match s {
            "local" => Some(SearchMode::Local),
            "global" => Some(SearchMode::Global),
            "drift" => Some(SearchMode::Drift),
            "auto" => Some(SearchMode::Auto),
            _ => None,
        }
    }
}

/// What to return (`mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultMode {
    /// Evidence plus an extractive answer citing it.
    Answer,
    /// Ranked evidence only.
    Evidence,
}

/// Retrieval lanes a query may use (`lanes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneSet {
    pub keyword: bool,
    pub vector: bool,
}

impl LaneSet {
    pub const NAMES: &'static [&'static str] = &["keyword", "vector"];
    pub const ALL: LaneSet = LaneSet {
        keyword: true,
        vector: true,
    };
}

/// A validated query.
#[derive(Debug, Clone)]
pub struct QuerySpec {
    pub text: String,
    pub search_mode: SearchMode,
    pub mode: ResultMode,
    pub top_k: usize,
    pub budget_chars: usize,
    pub lanes: LaneSet,
}

/// One piece of evidence: a chunk (or part of one, when the budget cut it),
/// with everything needed to cite it.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    /// 1-based position; answer citations refer to it as `[rank]`.
    pub rank: usize,
    pub document_id: String,
    pub chunk_id: String,
    pub source: Option<String>,
    pub title: Option<String>,
    pub metadata: serde_json::Value,
    pub provenance: Option<String>,
    pub created_at: String,
    /// Byte span of `text` in the document's extracted text.
    pub span: Span,
    /// The page `text` is on, for paginated documents (PDF).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    pub text: String,
    /// Fused relevance (higher is better; comparable within one response).
    pub score: f64,
    /// The lanes that found this item, with its rank and score in each.
    pub lanes: BTreeMap<&'static str, LaneRank>,
    /// True when the budget cut `text` short (the span says where).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Which search ran and why.
#[derive(Debug, Clone, Serialize)]
pub struct ModeReport {
    pub requested: SearchMode,
    pub ran: SearchMode,
    pub reason: String,
}

/// The result of a query.
#[derive(Debug, Clone, Serialize)]
pub struct QueryOutcome {
    pub search_mode: ModeReport,
    pub mode: ResultMode,
    /// The question's search terms (stopwords removed).
    pub terms: Vec<String>,
    /// Terms left out of the keyword search because they occur in too
    /// large a share of the memory to discriminate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_terms: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    pub evidence: Vec<Evidence>,
    pub budget: pack::BudgetReport,
    /// Lanes that could not run, and why (e.g. the embedding server is
    /// down); the others still answered.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub lane_errors: BTreeMap<&'static str, String>,
}

/// Runs a query against one tenant's memory.
pub fn run(
    reader: &TenantReader<'_>,
    spec: &QuerySpec,
    embedder: &dyn Embedder,
    fusion: Fusion,
) -> Result<QueryOutcome> {
    let terms = terms::analyze(&spec.text);
    let mut lanes = Vec::new();
    let mut lane_errors = BTreeMap::new();
    let mut ignored_terms = Vec::new();
    if spec.lanes.keyword {
        let plan = retrieve::plan(reader, &terms)?;
        lanes.push(fuse::Lane {
            name: "keyword",
            weight: fuse::KEYWORD_LANE_WEIGHT,
            hits: retrieve::keyword(reader, &plan, spec.top_k)?,
        });
        ignored_terms = plan.ignored;
    }
    if spec.lanes.vector {
        match retrieve::vector(reader, &spec.text, embedder, spec.top_k)? {
            Ok(hits) => lanes.push(fuse::Lane {
                name: "vector",
                weight: fuse::VECTOR_LANE_WEIGHT,
                hits,
            }),
            Err(e) => {
                lane_errors.insert("vector", e.0);
            }
        }
    }
    let fused = fuse::fuse(lanes, fusion);
    let (evidence, budget) = pack::pack(fused, spec.top_k, spec.budget_chars);
    let answer = match spec.mode {
        ResultMode::Answer => Some(answer::compose(&terms, &evidence)),
        ResultMode::Evidence => None,
    };
    Ok(QueryOutcome {
        search_mode: mode_report(spec.search_mode),
        mode: spec.mode,
        terms,
        ignored_terms,
        answer,
        evidence,
        budget,
        lane_errors,
    })
}

/// Until the graph exists, every mode runs local chunk retrieval; the report
/// says so rather than pretending otherwise.
fn mode_report(requested: SearchMode) -> ModeReport {
    let reason = match requested {
        SearchMode::Local => "local: chunks matching the question, by keyword and meaning",
        SearchMode::Auto => {
            "auto chose local: chunk retrieval by keyword and meaning is what is built"
        }
        SearchMode::Global => {
            "global needs community summaries, which are not built yet; ran local instead"
        }
        SearchMode::Drift => {
            "drift needs the entity graph, which is not built yet; ran local instead"
        }
    };
    ModeReport {
        requested,
        ran: SearchMode::Local,
        reason: reason.to_string(),
    }
}
