//! An embedder that calls a local model server over HTTP (via ureq):
//! OpenAI-compatible `POST /v1/embeddings` or Ollama `POST /api/embed`.
//!
//! Configured only by environment variables (the API key never appears in
//! flags or files):
//!
//! | variable | meaning |
//! |---|---|
//! | `ALAYASIKI_EMBED_URL` | full endpoint URL; setting it enables this embedder |
//! | `ALAYASIKI_EMBED_API` | `openai` or `ollama` (default: `ollama` if the path ends in `/api/embed`, else `openai`) |
//! | `ALAYASIKI_EMBED_MODEL` | model name sent with each request (required) |
//! | `ALAYASIKI_EMBED_DIM` | dimension the model returns (required; checked on every response) |
//! | `ALAYASIKI_EMBED_TIMEOUT_MS` | per-request timeout (default 30000) |
//! | `ALAYASIKI_EMBED_API_KEY` | sent as `Authorization: Bearer …` when set |

use serde_json::{json, Value};
use std::time::Duration;

use super::embedder::{EmbedError, Embedder};

pub const URL_ENV: &str = "ALAYASIKI_EMBED_URL";
pub const API_ENV: &str = "ALAYASIKI_EMBED_API";
pub const MODEL_ENV: &str = "ALAYASIKI_EMBED_MODEL";
pub const DIM_ENV: &str = "ALAYASIKI_EMBED_DIM";
pub const TIMEOUT_ENV: &str = "ALAYASIKI_EMBED_TIMEOUT_MS";
pub const KEY_ENV: &str = "ALAYASIKI_EMBED_API_KEY";

/// Default per-request timeout.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Texts sent in one request.
pub const HTTP_EMBED_BATCH: usize = 64;
/// Largest response body read (a batch of vectors as JSON text).
pub const MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;
/// Largest dimension accepted.
pub const MAX_DIM: usize = 8192;

/// Which wire format the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Ollama,
}

#[derive(Debug, Clone)]
pub struct HttpEmbedderConfig {
    pub url: String,
    pub api: Api,
    pub model: String,
    pub dim: usize,
    pub timeout: Duration,
    pub api_key: Option<String>,
}

impl HttpEmbedderConfig {
    /// `None` when `ALAYASIKI_EMBED_URL` is unset (use the built-in model).
    pub fn from_env() -> Result<Option<HttpEmbedderConfig>, String> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let Some(url) = var(URL_ENV) else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("{URL_ENV} must be an http:// or https:// URL"));
        }
        let api = match var(API_ENV).as_deref() {
            Some("openai") => Api::OpenAi,
            Some("ollama") => Api::Ollama,
            Some(other) => {
                return Err(format!("{API_ENV}={other:?} is not one of: openai, ollama"))
            }
            None if url.trim_end_matches('/').ends_with("/api/embed") => Api::Ollama,
            None => Api::OpenAi,
        };
        let model =
            var(MODEL_ENV).ok_or_else(|| format!("{MODEL_ENV} is required with {URL_ENV}"))?;
        let dim = var(DIM_ENV)
            .ok_or_else(|| format!("{DIM_ENV} is required with {URL_ENV}"))?
            .parse::<usize>()
            .ok()
            .filter(|d| (1..=MAX_DIM).contains(d))
            .ok_or_else(|| format!("{DIM_ENV} must be an integer between 1 and {MAX_DIM}"))?;
        let timeout_ms = match var(TIMEOUT_ENV) {
            None => DEFAULT_TIMEOUT_MS,
            Some(t) => t.parse::<u64>().ok().filter(|t| *t > 0).ok_or_else(|| {
                format!("{TIMEOUT_ENV} must be a positive number of milliseconds")
            })?,
        };
        Ok(Some(HttpEmbedderConfig {
            url,
            api,
            model,
            dim,
            timeout: Duration::from_millis(timeout_ms),
            api_key: var(KEY_ENV),
        }))
    }
}

pub struct HttpEmbedder {
    config: HttpEmbedderConfig,
    id: String,
    agent: ureq::Agent,
}

impl HttpEmbedder {
    pub fn new(config: HttpEmbedderConfig) -> HttpEmbedder {
        let api = match config.api {
            Api::OpenAi => "openai",
            Api::Ollama => "ollama",
        };
        let id = format!("http:{api}:{}:{}", config.model, config.dim);
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        HttpEmbedder { config, id, agent }
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = json!({"model": self.config.model, "input": texts});
        let mut req = self.agent.post(&self.config.url);
        if let Some(key) = &self.config.api_key {
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        let unreachable = |detail: String| {
            log::warn!("embedding server {} failed: {detail}", self.config.url);
            EmbedError(format!(
                "the embedding server is unreachable or timed out ({detail})"
            ))
        };
        let mut response = req
            .send_json(&body)
            .map_err(|e| unreachable(short(&e.to_string())))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_string()
            .map_err(|e| unreachable(short(&e.to_string())))?;
        if !(200..300).contains(&status) {
            log::warn!("embedding server answered {status}: {}", short(&text));
            return Err(EmbedError(format!(
                "the embedding server answered HTTP {status}"
            )));
        }
        let value: Value = serde_json::from_str(&text).map_err(|_| {
            log::warn!("embedding server sent invalid JSON: {}", short(&text));
            EmbedError("the embedding server sent a response that is not JSON".into())
        })?;
        let vectors = match self.config.api {
            Api::OpenAi => parse_openai(&value),
            Api::Ollama => parse_ollama(&value),
        }
        .ok_or_else(|| {
            log::warn!("unexpected embedding response shape: {}", short(&text));
            EmbedError("the embedding server's response has an unexpected shape".into())
        })?;
        if vectors.len() != texts.len() {
            return Err(EmbedError(format!(
                "the embedding server returned {} vectors for {} texts",
                vectors.len(),
                texts.len()
            )));
        }
        vectors.into_iter().map(|v| self.check(v)).collect()
    }

    fn check(&self, mut v: Vec<f32>) -> Result<Vec<f32>, EmbedError> {
        if v.len() != self.config.dim {
            return Err(EmbedError(format!(
                "the embedding server returned vectors of dimension {}, but {DIM_ENV} is {}",
                v.len(),
                self.config.dim
            )));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(EmbedError(
                "the embedding server returned a non-finite value".into(),
            ));
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        Ok(v)
    }
}

fn short(s: &str) -> String {
    s.chars().take(200).collect()
}

fn floats(v: &Value) -> Option<Vec<f32>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_f64().map(|f| f as f32))
        .collect()
}

/// `{"data": [{"index": i, "embedding": [...]}, ...]}`, in index order.
fn parse_openai(v: &Value) -> Option<Vec<Vec<f32>>> {
    let mut items: Vec<(u64, Vec<f32>)> = v["data"]
        .as_array()?
        .iter()
        .enumerate()
        .map(|(i, d)| {
            Some((
                d["index"].as_u64().unwrap_or(i as u64),
                floats(&d["embedding"])?,
            ))
        })
        .collect::<Option<_>>()?;
    items.sort_by_key(|(i, _)| *i);
    Some(items.into_iter().map(|(_, e)| e).collect())
}

/// `{"embeddings": [[...], ...]}`.
fn parse_ollama(v: &Value) -> Option<Vec<Vec<f32>>> {
    v["embeddings"].as_array()?.iter().map(floats).collect()
}

impl Embedder for HttpEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.config.dim
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(HTTP_EMBED_BATCH) {
            out.extend(self.request(batch)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_of_both_apis_parse() {
        let openai = json!({"data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}]});
        assert_eq!(
            parse_openai(&openai),
            Some(vec![vec![1.0, 0.0], vec![0.0, 1.0]])
        );
        let ollama = json!({"embeddings": [[0.5, 0.5]]});
        assert_eq!(parse_ollama(&ollama), Some(vec![vec![0.5, 0.5]]));
        assert_eq!(parse_ollama(&json!({"embeddings": [["x"]]})), None);
        assert_eq!(parse_openai(&json!({"error": "x"})), None);
    }
}
