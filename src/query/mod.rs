//! Query: from a question to ranked, cited evidence and an extractive answer.
//!
//! A pipeline of named stages, each testable alone:
//! [`terms`] (question → search terms) → [`retrieve`] (candidates from the
//! keyword and vector lanes) and [`graph`] (the graph lane), plus
//! [`communities`] (a further lane in global search; [`modes`] chooses the
//! search mode) and [`when`] (the time lane, for a question naming a
//! [`period`])
//! → [`fuse`] (one ranked list; the lanes and their fusion make a `round`,
//! and drift may run a second, wider one that [`reuse`]s the first's
//! rankings) → [`neighbours`] (each of the
//! best lends a share of its score to the chunks beside it) → [`labels`] (a
//! question naming who said something, or what it is filed under, prefers
//! the chunks that carry that name) → [`neighbours`] again (the chunks two
//! away borrow from what the labels chose) → [`pack`] (diversity and the
//! character budget) → [`answer`] (cited sentences from the evidence). [`synthesis`] optionally replaces that answer with one an
//! LLM composed, if it cites the evidence it was given.

pub mod answer;
pub mod communities;
pub mod facts;
pub mod fuse;
pub mod graph;
pub mod labels;
pub mod lists;
pub mod modes;
pub mod near_duplicates;
pub mod neighbours;
pub mod pack;
pub mod period;
pub mod retrieve;
pub mod reuse;
mod round;
pub mod synthesis;
pub mod terms;
pub mod when;

use serde::Serialize;

use std::collections::BTreeMap;

use crate::embed::Embedder;
use crate::error::Result;
/// The Porter stemmer lives with the knowledge model (relation keys are
/// stemmed too); kept at this path for the query stages that use it.
pub use crate::knowledge::stem;
use crate::store::{RecallFilter, TenantReader};
pub use answer::{Answer, AnswerMethod, Citation};
pub use fuse::{Fusion, LaneRank};
use round::{Question, Round};

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
    pub graph: bool,
}

impl LaneSet {
    pub const NAMES: &'static [&'static str] = &["keyword", "vector", "graph"];
    pub const ALL: LaneSet = LaneSet {
        keyword: true,
        vector: true,
        graph: true,
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
    /// A working-memory session whose evidence is merged with persistent
    /// memory's (each item then says where it came from).
    pub session_id: Option<String>,
    /// Which stored documents every lane draws from (a session's notes
    /// are not filtered).
    pub filter: RecallFilter,
    /// Facts that change are judged as of this time (Unix ms; `None`:
    /// now): see [`facts`].
    pub as_of: Option<i64>,
}

/// Where a piece of evidence came from. Reported only by queries that
/// merged working memory with persistent memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Persistent memory (a stored document).
    Memory,
    /// A working-memory session (a note).
    Session,
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
    /// Relations of the knowledge graph whose evidence this item is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub relations: Vec<graph::RelationUse>,
    /// The chunk's store key (for attaching graph facts; never shown).
    #[serde(skip)]
    pub chunk_key: i64,
    /// True when the budget cut `text` short (the span says where).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Set when the query merged sources (see [`Origin`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// Other documents whose matching text is this item's with small edits
    /// (`near_duplicates`): they took no slot of their own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub near_duplicates: Vec<String>,
    /// The changing facts this item states, current or superseded (see
    /// [`facts`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<facts::FactUse>,
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
    /// Community summaries used by a global search (best first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub communities: Vec<communities::CommunityUse>,
    /// How the search went: the entities recognised, the rounds run, what
    /// was excluded.
    pub explain: modes::Explain,
}

/// How a query runs, beyond the spec: fusion, confidence decay and, for
/// evaluation, a fixed ranking depth.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub fusion: Fusion,
    pub half_life_days: f64,
    /// See [`crate::config::ranking_depth_from_env`]; `None` in normal use.
    pub fixed_depth: Option<usize>,
}

impl Settings {
    /// How many results a query asking for `top_k` ranks: `top_k`, at least
    /// [`MIN_RANKING_DEPTH`], unless a fixed depth is set.
    pub fn ranking_depth(&self, top_k: usize) -> usize {
        self.fixed_depth
            .unwrap_or_else(|| top_k.max(MIN_RANKING_DEPTH))
    }
}

/// Runs a query against one tenant's memory.
pub fn run(
    reader: &TenantReader<'_>,
    spec: &QuerySpec,
    embedder: &dyn Embedder,
    settings: Settings,
) -> Result<QueryOutcome> {
    Ok(finish(spec, candidates(reader, spec, embedder, settings)?))
}

/// Ranked candidates from one source, before packing: what [`merge`]
/// combines and [`finish`] turns into an outcome.
#[derive(Debug, Clone)]
pub struct Candidates {
    pub terms: Vec<String>,
    pub ignored_terms: Vec<String>,
    pub fused: Vec<fuse::Fused>,
    pub lane_errors: BTreeMap<&'static str, String>,
    /// Graph relations whose evidence is in each chunk (by chunk key).
    pub relations: std::collections::HashMap<i64, Vec<graph::RelationUse>>,
    /// Marks of the changing facts each chunk states (by chunk key).
    pub facts: std::collections::HashMap<i64, Vec<facts::FactUse>>,
    pub search_mode: ModeReport,
    pub communities: Vec<communities::CommunityUse>,
    pub explain: modes::Explain,
}

/// Every query ranks as though it asked for at least this many results,
/// then returns its first `top_k`.
///
/// The lanes' pools, and the bar a neighbour must clear, grow with the
/// depth ranked: ranked only as deep as a small `top_k`, a query would see
/// fewer candidates and get a worse best few than the same question asked
/// for more. With this floor the results of any `top_k` up to it are the
/// first results of a query asking for the floor itself. Measured on
/// LoCoMo (BENCHMARKS.md): recall of the results returned at `top_k` 1, 3
/// and 5 is 0.488, 0.647 and 0.713 this way, against 0.450, 0.638 and
/// 0.702 ranked only `top_k` deep, at the cost of a query asking for 10.
pub const MIN_RANKING_DEPTH: usize = crate::limits::DEFAULT_TOP_K as usize;

/// Retrieves and fuses one tenant's candidates for the question, in the
/// search mode that applies (see [`modes`]), ranked as deep as
/// [`Settings::ranking_depth`] says.
pub fn candidates(
    reader: &TenantReader<'_>,
    spec: &QuerySpec,
    embedder: &dyn Embedder,
    settings: Settings,
) -> Result<Candidates> {
    // Whether the evidence is thin is judged on the results the caller
    // asked for, no more than were ranked (so that a fixed depth's first
    // results are the default query's).
    let depth = settings.ranking_depth(spec.top_k);
    let asked = spec.top_k.min(depth);
    let spec = &QuerySpec {
        top_k: depth,
        ..spec.clone()
    };
    let terms = terms::analyze(&spec.text);
    let scope = reader.recall_scope(&spec.filter)?;
    let entities = if spec.lanes.graph {
        graph::question_entities(reader, &spec.text, &terms)?
    } else {
        Vec::new()
    };
    let mut choice = modes::choose(spec.search_mode, &spec.text, &entities);
    let mut explain = modes::Explain::new(&entities);
    explain.excluded.retention_expired = reader.expired_count()?;
    let stored = match choice.ran {
        SearchMode::Global => reader.latest_communities()?,
        _ => None,
    };
    // Why global cannot run: no snapshot (none built yet, or the stored one
    // is withheld because documents it may quote have expired), or one
    // with no community in it.
    let withheld = explain.excluded.retention_expired > 0;
    let snapshot = stored.filter(|s| !s.summaries.is_empty());
    if choice.ran == SearchMode::Global && snapshot.is_none() {
        choice.ran = SearchMode::Local;
        choice.reason.push_str(if withheld {
            "; the community summaries are being rebuilt without expired documents, so local ran instead"
        } else {
            "; no community summaries are built yet, so local ran instead"
        });
    }
    let question = Question {
        terms: &terms,
        entities: &entities,
        scope: &scope,
    };
    // Drift may widen every pool in a second round: the lanes rank once,
    // as deep as that round would (`reuse`).
    let mut reuse = reuse::Reuse::new(choice.ran == SearchMode::Drift);
    let mut round = Round::run(reader, spec, question, embedder, settings, 1, &mut reuse)?;
    let mut community_uses = Vec::new();
    if let Some(snapshot) = &snapshot {
        let (hits, uses) = communities::lane(reader, snapshot, &terms, &entities, &scope)?;
        explain.communities = Some(snapshot.summaries.len());
        explain.communities_version = Some(snapshot.graph_version);
        community_uses = uses;
        round.extra_lane(
            fuse::Lane {
                name: "community",
                weight: fuse::COMMUNITY_LANE_WEIGHT,
                hits,
            },
            settings.fusion,
        );
    }
    if choice.ran == SearchMode::Drift && modes::is_thin(&round.fused, asked) {
        // Widen: neighbours of the question's entities, more candidates.
        let wide = QuerySpec {
            top_k: spec.top_k * reuse::WIDENED,
            ..spec.clone()
        };
        round = Round::run(reader, &wide, question, embedder, settings, 2, &mut reuse)?;
        explain.rounds = 2;
    }
    // The chunks beside the best borrow before the labels choose among
    // them; the chunks two away borrow after, from what the labels chose,
    // so that they follow the turns of whoever the question names.
    let fused = neighbours::lend(
        reader,
        round.fused,
        neighbours::BESIDE,
        neighbours::LENDING_CANDIDATES,
        spec.top_k,
        &scope,
    )?;
    let fused = labels::prefer_named(&spec.text, fused, labels::LABEL_SHARE);
    let fused = neighbours::lend(
        reader,
        fused,
        neighbours::SECOND,
        neighbours::LENDING_CANDIDATES,
        spec.top_k,
        &scope,
    )?;
    let (fused, fact_marks) = facts::settle(
        reader, &spec.text, &entities, fused, asked, spec.as_of, &scope,
    )?;
    Ok(Candidates {
        terms,
        ignored_terms: round.ignored_terms,
        fused,
        lane_errors: round.lane_errors,
        relations: round.relations,
        facts: fact_marks,
        search_mode: ModeReport {
            requested: spec.search_mode,
            ran: choice.ran,
            reason: choice.reason,
        },
        communities: community_uses,
        explain,
    })
}

/// Merges working-memory candidates into persistent memory's: every item
/// is marked with its origin, and the two lists are interleaved by fused
/// score (each list was fused by the same method and lane weights, so the
/// scores share a scale). On a tie the session's item goes first: it is
/// the task at hand. Lane errors of the session are reported under
/// `session.<lane>`.
pub fn merge(
    memory: Candidates,
    session: Vec<fuse::Fused>,
    session_errors: BTreeMap<&'static str, String>,
) -> Candidates {
    let mut fused: Vec<fuse::Fused> = session
        .into_iter()
        .map(|f| fuse::Fused {
            origin: Some(Origin::Session),
            ..f
        })
        .chain(memory.fused.into_iter().map(|f| fuse::Fused {
            origin: Some(Origin::Memory),
            ..f
        }))
        .collect();
    // Stable: equal scores keep session-first order.
    fused.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut lane_errors = memory.lane_errors;
    for (lane, why) in session_errors {
        let name = match lane {
            "keyword" => "session.keyword",
            _ => "session.vector",
        };
        lane_errors.insert(name, why);
    }
    Candidates {
        fused,
        lane_errors,
        ..memory
    }
}

/// Packs candidates into evidence, attaches the graph relations behind
/// each item and, in answer mode, composes the answer.
pub fn finish(spec: &QuerySpec, candidates: Candidates) -> QueryOutcome {
    let Candidates {
        terms,
        ignored_terms,
        fused,
        lane_errors,
        relations,
        facts,
        search_mode,
        communities,
        explain,
    } = candidates;
    // A list or count question wants one item from each place it was said.
    let fused = if lists::asks_for_many(&spec.text) {
        lists::spread(fused)
    } else {
        fused
    };
    let (mut evidence, budget) = pack::pack(fused, spec.top_k, spec.budget_chars);
    for e in &mut evidence {
        // Session items have no store key; they never carry graph facts.
        if e.origin != Some(Origin::Session) {
            if let Some(r) = relations.get(&e.chunk_key) {
                e.relations = r.clone();
            }
            if let Some(f) = facts.get(&e.chunk_key) {
                e.facts = f.clone();
            }
        }
    }
    let answer = match spec.mode {
        ResultMode::Answer => Some(answer::compose(&terms, &evidence)),
        ResultMode::Evidence => None,
    };
    QueryOutcome {
        search_mode,
        mode: spec.mode,
        terms,
        ignored_terms,
        answer,
        evidence,
        budget,
        lane_errors,
        communities,
        explain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ChunkHit;

    fn fused(doc: &str, score: f64) -> fuse::Fused {
        fuse::Fused {
            hit: ChunkHit {
                page: None,
                chunk_key: 0,
                ordinal: 0,
                start: 0,
                end: 1,
                text: "x".into(),
                doc_id: doc.into(),
                source: None,
                title: None,
                metadata: "{}".into(),
                provenance: None,
                created_at: 0,
                bm25: -score,
            },
            score,
            lanes: BTreeMap::new(),
            origin: None,
        }
    }

    #[test]
    fn merge_interleaves_by_score_marks_origins_and_puts_the_session_first_on_ties() {
        let memory = Candidates {
            terms: vec!["x".into()],
            ignored_terms: vec![],
            fused: vec![fused("doc_a", 1.0), fused("doc_b", 0.5)],
            lane_errors: BTreeMap::new(),
            relations: Default::default(),
            facts: Default::default(),
            search_mode: ModeReport {
                requested: SearchMode::Auto,
                ran: SearchMode::Local,
                reason: String::new(),
            },
            communities: Vec::new(),
            explain: modes::Explain::new(&[]),
        };
        let session = vec![fused("s/1", 1.0), fused("s/2", 0.7)];
        let errors = BTreeMap::from([("vector", "embedder down".to_string())]);
        let merged = merge(memory, session, errors);
        let order: Vec<(&str, Option<Origin>)> = merged
            .fused
            .iter()
            .map(|f| (f.hit.doc_id.as_str(), f.origin))
            .collect();
        assert_eq!(
            order,
            [
                ("s/1", Some(Origin::Session)),
                ("doc_a", Some(Origin::Memory)),
                ("s/2", Some(Origin::Session)),
                ("doc_b", Some(Origin::Memory)),
            ]
        );
        assert_eq!(merged.lane_errors["session.vector"], "embedder down");
        assert_eq!(merged.terms, ["x"]);
    }
}
