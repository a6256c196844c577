//! Search modes: what `local`, `global`, `drift` and `auto` mean, and the
//! `explain` that says what ran and why.
//!
//! - `local`: entity-centred. The question's entities, their relations and
//!   the chunks that mention them (the graph lane), fused with the keyword
//!   and vector lanes.
//! - `global`: community summaries ranked against the question, with the
//!   chunks behind the best ones (see `query::communities`); falls back to
//!   `local` (and says so) while no summaries exist.
//! - `drift`: `local` first; when the evidence is thin, a second round
//!   widens to the neighbours of the question's entities and to more
//!   candidates.
//! - `auto`: `global` for broad questions about the whole memory, `local`
//!   when the question names entities the graph knows, `drift` otherwise.

use serde::Serialize;

use super::fuse::Fused;
use super::SearchMode;
use crate::store::EntityRow;

/// Words that make a question about the memory as a whole.
const BROAD_CUES: &[&str] = &[
    "overall",
    "overview",
    "summarize",
    "summarise",
    "summary",
    "themes",
    "theme",
    "topics",
    "main",
    "generally",
    "everything",
    "big picture",
    "in general",
    "recurring",
];

/// Which mode runs, and why.
#[derive(Debug, Clone)]
pub struct Choice {
    pub ran: SearchMode,
    pub reason: String,
}

/// Decides the mode that runs for a requested one.
pub fn choose(requested: SearchMode, question: &str, entities: &[EntityRow]) -> Choice {
    // Whole words only: "domain" or "maintenance" must not read as "main".
    // The question as " word word ... " so a cue of one or more words
    // matches exactly when its words appear in a row.
    let words: Vec<String> = question
        .split(|ch: char| !ch.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let padded = format!(" {} ", words.join(" "));
    let broad = BROAD_CUES
        .iter()
        .any(|c| padded.contains(&format!(" {c} ")));
    let (ran, reason) = match requested {
        SearchMode::Local => (
            SearchMode::Local,
            "local: entity-centred retrieval, as requested".to_string(),
        ),
        SearchMode::Drift => (
            SearchMode::Drift,
            "drift: local first, widening when evidence is thin".to_string(),
        ),
        SearchMode::Global => (
            SearchMode::Global,
            "global: community summaries, as requested".to_string(),
        ),
        SearchMode::Auto if broad => (
            SearchMode::Global,
            "auto chose global: the question asks about the memory as a whole".to_string(),
        ),
        SearchMode::Auto if !entities.is_empty() => (
            SearchMode::Local,
            format!(
                "auto chose local: the question names {} known entit{}",
                entities.len(),
                if entities.len() == 1 { "y" } else { "ies" }
            ),
        ),
        SearchMode::Auto => (
            SearchMode::Drift,
            "auto chose drift: the question names no known entity, so retrieval widens if \
             evidence is thin"
                .to_string(),
        ),
    };
    Choice { ran, reason }
}

/// Too little evidence to stop: fewer than half the requested items, or
/// none found by more than one lane.
pub fn is_thin(fused: &[Fused], top_k: usize) -> bool {
    fused.len() < (top_k / 2).max(1) || !fused.iter().take(top_k).any(|f| f.lanes.len() > 1)
}

/// What the query did, for the caller and for debugging.
#[derive(Debug, Clone, Serialize)]
pub struct Explain {
    /// Entities of the question found in the graph.
    pub entities: Vec<String>,
    /// Retrieval rounds run (drift may run two).
    pub rounds: usize,
    /// Community summaries consulted (global).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub communities: Option<usize>,
    /// The graph version of the summary snapshot used (global): the same
    /// snapshot gives the same answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub communities_version: Option<i64>,
    /// Documents left out and why (e.g. past their retention).
    pub excluded: Excluded,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Excluded {
    /// Documents past `expires_at` or the tenant's retention period, not
    /// yet purged: never returned.
    pub retention_expired: usize,
}

impl Explain {
    pub fn new(entities: &[EntityRow]) -> Explain {
        Explain {
            entities: entities.iter().map(|e| e.name.clone()).collect(),
            rounds: 1,
            communities: None,
            communities_version: None,
            excluded: Excluded::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(name: &str) -> EntityRow {
        EntityRow {
            id: 1,
            key: name.to_lowercase(),
            name: name.into(),
            kind: "person".into(),
            mention_count: 3,
        }
    }

    #[test]
    fn auto_picks_by_the_question() {
        assert_eq!(
            choose(SearchMode::Auto, "What are the main themes overall?", &[]).ran,
            SearchMode::Global
        );
        assert_eq!(
            choose(SearchMode::Auto, "Where does Dana work?", &[entity("Dana")]).ran,
            SearchMode::Local
        );
        assert_eq!(
            choose(SearchMode::Auto, "where is it", &[]).ran,
            SearchMode::Drift
        );
    }

    #[test]
    fn broad_cues_match_whole_words_only() {
        for q in [
            "Which domain does the maintenance team remain in?",
            "Who summarized the themed party?",
        ] {
            assert_eq!(
                choose(SearchMode::Auto, q, &[]).ran,
                SearchMode::Drift,
                "{q}"
            );
        }
        for q in [
            "Give me the big picture.",
            "What is this about, in general?",
            "Summary, please",
        ] {
            assert_eq!(
                choose(SearchMode::Auto, q, &[]).ran,
                SearchMode::Global,
                "{q}"
            );
        }
    }

    #[test]
    fn explicit_modes_run_as_requested() {
        for m in [SearchMode::Local, SearchMode::Global, SearchMode::Drift] {
            assert_eq!(choose(m, "x", &[]).ran, m);
        }
    }
}
