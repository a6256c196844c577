//! `alayasiki_query`: ask memory a question; get ranked, cited evidence and
//! (by default) an extractive answer.

use serde_json::{json, Map, Value};

use super::schema::{choice, label, session_id};
use super::{output, recall_filter, Args, Tool};
use crate::error::{Error, Result};
use crate::limits::*;
use crate::query::{LaneSet, QuerySpec, ResultMode, SearchMode};
use crate::service::{Memory, Permission};

pub static TOOL: Tool = Tool {
    name: "alayasiki_query",
    description: "Search persistent memory with the actual question and get ranked evidence \
(document id, chunk id, source, metadata, byte span, text, score) plus, in `answer` mode, an \
extractive answer whose [n] markers cite evidence items. Call it before answering anything that \
may depend on what was stored earlier. With `session_id`, a working-memory session is searched \
too and each item says where it came from.",
    input_schema: schema,
    output_schema,
    permission: Permission::Query,
    mutates: false,
    call: |memory, args| run(memory, parse(args)?),
};

const ARGS: &[&str] = &[
    "query",
    "search_mode",
    "mode",
    "top_k",
    "budget",
    "lanes",
    "session_id",
    "filter",
    "include_history",
    "as_of",
];

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": question_schema("The question, in natural language"),
            "search_mode": choice("local (entity-centred), global (community summaries), drift (local, widening), auto (default: the server chooses and says which ran).", SearchMode::NAMES),
            "mode": choice("answer (default): evidence plus a cited extractive answer; evidence: ranked evidence only.", RESULT_MODES),
            "top_k": top_k_schema("Most evidence items to return"),
            "budget": {"type": "integer", "minimum": MIN_BUDGET_CHARS, "maximum": MAX_BUDGET_CHARS, "description": format!("Most characters of evidence text to return ({MIN_BUDGET_CHARS}-{MAX_BUDGET_CHARS}, default {DEFAULT_BUDGET_CHARS}).")},
            "lanes": {
                "type": "array",
                "items": {"type": "string", "enum": LaneSet::NAMES},
                "minItems": 1,
                "maxItems": LaneSet::NAMES.len(),
                "uniqueItems": true,
                "description": "Retrieval lanes to use (default all): keyword (BM25), vector (meaning) and graph (entities and relations). For evaluation and debugging."
            },
            "as_of": {"type": "string", "maxLength": MAX_AS_OF_BYTES, "description": format!("Judge facts that change as of this time (RFC 3339 or a date, e.g. 2024-03-01; at most {MAX_AS_OF_BYTES} bytes, MAX_AS_OF_BYTES): the statement that held then ranks first and later ones are not current. Default: now.")},
            "session_id": session_id("Also search this working-memory session (see alayasiki_memory_write): its notes are ranked with persistent evidence, and every item then has `origin` `session` or `memory`."),
            "filter": recall_filter::schema(),
            "include_history": recall_filter::include_history_schema()
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// What a query returns (`QueryOutcome`, plus the question).
fn output_schema() -> Value {
    use output::{count, integer, list, number, one_of, record, string};
    let strings = |d: &str| list(d, string("A term."));
    let citation = record(
        "An evidence sentence the answer quotes.",
        json!({
            "marker": integer("The `n` of the `[n]` marker: the cited evidence item's rank.", 1),
            "chunk_id": string("The cited evidence item's chunk id."),
            "document_id": string("The cited evidence item's document id."),
            "span": output::span("Byte span of the quoted sentence in the document's extracted text.")
        }),
        &["marker", "chunk_id", "document_id", "span"],
    );
    let answer = record(
        "The answer (answer mode only): the best evidence sentences, each followed by [n] naming evidence item n.",
        json!({
            "text": string("The answer, with [n] markers; says so when nothing matched."),
            "citations": list("What each marker cites.", citation),
            "method": one_of("What composed `text`: extractive (evidence sentences quoted) or llm (the optional LLM, citing evidence it was given).", &["extractive", "llm"]),
            "fallback": string("Why a configured LLM's answer is not the one given; absent otherwise.")
        }),
        &["text", "citations", "method"],
    );
    let community = record(
        "A community summary a global search used.",
        json!({
            "level": count("The community's level in the hierarchy."),
            "title": string("The community's title."),
            "size": count("Entities in the community."),
            "entities": list("The community's entities.", string("An entity name.")),
            "facts": list("Facts that summarize it.", string("A fact.")),
            "citations": list("Chunk ids of the evidence behind the facts.", string("A chunk id.")),
            "llm_summary": record(
                "The optional LLM's summary of the community, when it wrote one.",
                json!({
                    "text": string("The summary."),
                    "citations": list("Chunk ids it cites.", string("A chunk id."))
                }),
                &["text", "citations"],
            ),
            "score": number("How well it matched the question (higher is better).")
        }),
        &[
            "level",
            "title",
            "size",
            "entities",
            "facts",
            "citations",
            "score",
        ],
    );
    let search_mode = |d: &str| one_of(d, SearchMode::NAMES);
    output::record(
        "Ranked, cited evidence for the question and, in answer mode, an extractive answer.",
        json!({
            "query": string("The question, as asked."),
            "search_mode": record(
                "Which search ran, and why.",
                json!({
                    "requested": search_mode("The search_mode asked for (auto by default)."),
                    "ran": search_mode("The search that ran (never auto)."),
                    "reason": string("Why that one ran.")
                }),
                &["requested", "ran", "reason"],
            ),
            "mode": one_of("The result mode: answer or evidence.", RESULT_MODES),
            "terms": strings("The question's search terms (lowercased, stopwords removed)."),
            "ignored_terms": strings("Terms left out of the keyword search because they occur in too many chunks to discriminate; absent if none."),
            "answer": answer,
            "evidence": output::evidence("Ranked evidence, best first: at most top_k items, within the budget."),
            "budget": output::budget("How the character budget for evidence text was spent."),
            "lane_errors": output::lane_errors(&["vector", "session.vector"]),
            "communities": list("Community summaries a global search used, best first; absent otherwise.", community),
            "explain": record(
                "How the search went.",
                json!({
                    "entities": list("Entities of the question found in the knowledge graph.", string("An entity name.")),
                    "rounds": integer("Retrieval rounds run (drift may run two).", 1),
                    "communities": count("Community summaries consulted (global search only)."),
                    "communities_version": integer("The graph version the summaries were built from (global search only): the same version gives the same answer.", 0),
                    "excluded": record(
                        "Documents left out, and why.",
                        json!({"retention_expired": count("Documents hidden because they expired (expires_at or the tenant's retention period), not yet purged.")}),
                        &["retention_expired"],
                    )
                }),
                &["entities", "rounds", "excluded"],
            )
        }),
        &[
            "query",
            "search_mode",
            "mode",
            "terms",
            "evidence",
            "budget",
            "explain",
        ],
    )
}

/// `mode` values.
const RESULT_MODES: &[&str] = &["answer", "evidence"];

/// Schema of a `query` argument, as [`question`] accepts it.
pub(super) fn question_schema(what: &str) -> Value {
    label(
        &format!("{what} (at most {MAX_QUERY_BYTES} bytes, MAX_QUERY_BYTES)."),
        MAX_QUERY_BYTES,
    )
}

/// Schema of a `top_k` argument.
pub(super) fn top_k_schema(what: &str) -> Value {
    json!({
        "type": "integer",
        "minimum": MIN_TOP_K,
        "maximum": MAX_TOP_K,
        "description": format!("{what} ({MIN_TOP_K}-{MAX_TOP_K}, default {DEFAULT_TOP_K}).")
    })
}

/// Parses `alayasiki_query` arguments (also the HTTP API's query body).
pub fn parse(map: &Map<String, Value>) -> Result<QuerySpec> {
    let args = Args::new(map, ARGS)?;
    let text = question(&args)?.ok_or_else(|| Error::invalid("`query` is required"))?;
    let search_mode = args
        .choice("search_mode", SearchMode::NAMES)?
        .and_then(SearchMode::parse)
        .unwrap_or(SearchMode::Auto);
    let mode = match args.choice("mode", RESULT_MODES)? {
        Some("evidence") => ResultMode::Evidence,
        _ => ResultMode::Answer,
    };
    let top_k = args
        .integer("top_k", MIN_TOP_K.into(), MAX_TOP_K.into())?
        .unwrap_or(DEFAULT_TOP_K.into()) as usize;
    let budget_chars = args
        .integer("budget", MIN_BUDGET_CHARS.into(), MAX_BUDGET_CHARS.into())?
        .unwrap_or(DEFAULT_BUDGET_CHARS.into()) as usize;
    let lanes = match args.value("lanes") {
        None => LaneSet::ALL,
        Some(v) => parse_lanes(v)?,
    };
    Ok(QuerySpec {
        text: text.to_string(),
        search_mode,
        mode,
        top_k,
        budget_chars,
        lanes,
        session_id: args.string("session_id")?.map(str::to_string),
        filter: recall_filter::parse(&args)?,
        as_of: as_of(&args)?,
    })
}

/// The `as_of` argument, if given: an RFC 3339 time or a date.
fn as_of(args: &Args<'_>) -> Result<Option<i64>> {
    let Some(text) = args.string("as_of")? else {
        return Ok(None);
    };
    if text.len() > MAX_AS_OF_BYTES {
        return Err(Error::LimitExceeded(format!(
            "`as_of` is {} bytes; the limit is {MAX_AS_OF_BYTES} (MAX_AS_OF_BYTES)",
            text.len()
        )));
    }
    crate::clock::parse_rfc3339(text).map(Some).ok_or_else(|| {
        Error::invalid(
            "`as_of` must be an RFC 3339 time (2024-03-01T09:00:00Z) or a date (2024-03-01)",
        )
    })
}

/// The `query` argument, if given: non-blank and within
/// [`MAX_QUERY_BYTES`].
pub(super) fn question<'a>(args: &Args<'a>) -> Result<Option<&'a str>> {
    let Some(text) = args.string("query")? else {
        return Ok(None);
    };
    if text.trim().is_empty() {
        return Err(Error::invalid("`query` must not be blank"));
    }
    if text.len() > MAX_QUERY_BYTES {
        return Err(Error::LimitExceeded(format!(
            "`query` is {} bytes; the limit is {MAX_QUERY_BYTES} (MAX_QUERY_BYTES)",
            text.len()
        )));
    }
    Ok(Some(text))
}

/// A non-empty array of lane names, without repeats.
fn parse_lanes(v: &Value) -> Result<LaneSet> {
    let bad = || {
        Error::invalid(format!(
            "`lanes` must be a non-empty array of: {}",
            LaneSet::NAMES.join(", ")
        ))
    };
    let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(bad)?;
    let mut set = LaneSet {
        keyword: false,
        vector: false,
        graph: false,
    };
    for item in items {
        match item.as_str() {
            Some("keyword") if !set.keyword => set.keyword = true,
            Some("vector") if !set.vector => set.vector = true,
            Some("graph") if !set.graph => set.graph = true,
            _ => return Err(bad()),
        }
    }
    Ok(set)
}

fn run(memory: &Memory<'_>, spec: QuerySpec) -> Result<Value> {
    let outcome = memory.query(&spec)?;
    let mut value = serde_json::to_value(outcome)?;
    value["query"] = Value::String(spec.text);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_json(v: Value) -> Result<QuerySpec> {
        parse(v.as_object().unwrap())
    }

    #[test]
    fn defaults_are_applied() {
        let q = parse_json(json!({"query": "x"})).unwrap();
        assert_eq!(q.top_k, DEFAULT_TOP_K as usize);
        assert_eq!(q.budget_chars, DEFAULT_BUDGET_CHARS as usize);
        assert_eq!(q.search_mode, SearchMode::Auto);
        assert_eq!(q.mode, ResultMode::Answer);
    }

    #[test]
    fn query_length_limit_is_exact() {
        assert!(parse_json(json!({"query": "a".repeat(MAX_QUERY_BYTES)})).is_ok());
        let err = parse_json(json!({"query": "a".repeat(MAX_QUERY_BYTES + 1)}))
            .err()
            .unwrap();
        assert_eq!(err.code(), "limit_exceeded");
    }

    #[test]
    fn bad_values_are_rejected() {
        assert!(parse_json(json!({"query": "x", "top_k": 0})).is_err());
        assert!(parse_json(json!({"query": "x", "top_k": 101})).is_err());
        assert!(parse_json(json!({"query": "x", "search_mode": "deep"})).is_err());
        assert!(parse_json(json!({"query": "  "})).is_err());
        assert!(parse_json(json!({})).is_err());
        assert!(parse_json(json!({"query": "x", "lanes": []})).is_err());
        assert!(parse_json(json!({"query": "x", "lanes": ["graph", "graph"]})).is_err());
        assert!(parse_json(json!({"query": "x", "lanes": ["community"]})).is_err());
        assert!(parse_json(json!({"query": "x", "lanes": ["vector", "vector"]})).is_err());
    }

    #[test]
    fn lanes_select_retrieval() {
        let q = parse_json(json!({"query": "x", "lanes": ["vector"]})).unwrap();
        assert_eq!(
            q.lanes,
            LaneSet {
                keyword: false,
                vector: true,
                graph: false
            }
        );
        assert_eq!(
            parse_json(json!({"query": "x"})).unwrap().lanes,
            LaneSet::ALL
        );
    }
}
