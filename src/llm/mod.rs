//! The optional LLM: a chat model on a local (or remote) server, asked for
//! JSON that follows a schema.
//!
//! Off by default. When `ALAYASIKI_LLM_URL` is set (see
//! [`LlmConfig::from_env`]) the server may use it for three things,
//! each checked before it is trusted:
//!
//! - **extraction** (`graph::llm_triples`): triples for an indexed
//!   document's chunks, run by the background enricher (`ingest::enrich`),
//!   never on a query's path; a triple counts only if its evidence quote is
//!   in the chunk and its names resolve like the rule-based extractor's;
//! - **answers** (`query::synthesis`): an answer composed from the packed
//!   evidence that must cite it; anything else falls back to the
//!   extractive answer;
//! - **community summaries** (`graph::llm_summaries`): a short summary of
//!   each of the largest communities, written by a background thread
//!   (`ingest::summarize`) after a snapshot is built, kept only if it cites
//!   the chunks it was given; the extractive summary stays either way.
//!
//! This module owns the conversation with the server: the two wire formats
//! ([`wire`]), the deadline and the response bound, and client-safe errors.
//! It knows nothing of graphs or evidence.
//!
//! Must never: block past the configured timeout, read more than
//! [`MAX_LLM_RESPONSE_BYTES`], panic on any response, or put the URL, key
//! or response text into a message a client can see (those go to the log).

mod config;
pub mod wire;

use serde_json::Value;
use std::time::Duration;

use crate::limits::MAX_LLM_RESPONSE_BYTES;
use crate::model_endpoint::{excerpt, Api, EndpointError, ModelEndpoint};

/// Where the LLM is and what it is used for.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// The chat endpoint (resolved from the configured base URL).
    pub url: String,
    pub api: Api,
    pub model: String,
    pub api_key: Option<String>,
    /// Per request: connect, send, and read the whole response.
    pub timeout: Duration,
    /// Extract triples at ingestion.
    pub extract: bool,
    /// Compose answers in `answer` mode.
    pub answer: bool,
    /// Summarize the largest communities after each rebuild.
    pub summarize: bool,
}

/// One structured request: instructions, the input (as JSON text, so that
/// quoted content cannot pose as instructions), and the schema the reply
/// must follow.
pub struct Task<'a> {
    /// Names the schema (OpenAI requires a name).
    pub name: &'a str,
    pub system: &'a str,
    pub user: &'a str,
    pub schema: &'a Value,
}

/// Why the LLM gave nothing usable. Its [`std::fmt::Display`] is client-safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmError {
    /// Connection refused, reset, or the timeout passed.
    Unreachable,
    /// The server answered with this HTTP status.
    Status(u16),
    /// The response was longer than [`MAX_LLM_RESPONSE_BYTES`].
    TooLarge,
    /// The response is not a chat reply holding a JSON object.
    Malformed,
}

impl LlmError {
    /// True when asking again soon is pointless (the server is down or
    /// slow), so a batch of requests should stop.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, LlmError::Unreachable | LlmError::Status(_))
    }
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LlmError::Unreachable => f.write_str("the LLM server is unreachable or timed out"),
            LlmError::Status(s) => write!(f, "the LLM server answered HTTP {s}"),
            LlmError::TooLarge => write!(
                f,
                "the LLM server's response is longer than MAX_LLM_RESPONSE_BYTES"
            ),
            LlmError::Malformed => {
                f.write_str("the LLM server's response is not the JSON that was asked for")
            }
        }
    }
}

/// A configured LLM. Shared between threads; each call is one blocking
/// HTTP request.
pub struct Llm {
    config: LlmConfig,
    endpoint: ModelEndpoint,
}

impl Llm {
    pub fn new(config: LlmConfig) -> Llm {
        let endpoint =
            ModelEndpoint::new(config.url.clone(), config.api_key.clone(), config.timeout);
        Llm { config, endpoint }
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// Asks for one JSON object following `task.schema`. The object is
    /// returned as is: checking it against the schema (and the input) is
    /// the caller's job, since a server may ignore the schema.
    pub fn complete_json(&self, task: &Task<'_>) -> Result<Value, LlmError> {
        let body = wire::request(self.config.api, &self.config.model, task);
        let response = self
            .endpoint
            .post_json(&body, MAX_LLM_RESPONSE_BYTES)
            .map_err(|e| {
                log::warn!("LLM server {} ({}): {e}", self.endpoint.url(), task.name);
                match e {
                    EndpointError::Unreachable(_) => LlmError::Unreachable,
                    EndpointError::TooLarge(_) => LlmError::TooLarge,
                    EndpointError::Status(s, _) => LlmError::Status(s),
                    EndpointError::NotJson(_) | EndpointError::Shape(_) => LlmError::Malformed,
                }
            })?;
        wire::reply_object(self.config.api, &response).ok_or_else(|| {
            log::warn!(
                "LLM server {} ({}): unexpected reply: {}",
                self.endpoint.url(),
                task.name,
                excerpt(&response.to_string())
            );
            LlmError::Malformed
        })
    }
}
