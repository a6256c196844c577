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

use serde::Deserialize;
use serde_json::json;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::embedder::{EmbedError, Embedder};
pub use crate::model_endpoint::Api;
use crate::model_endpoint::{check_url, parse_timeout_ms, EndpointError, ModelEndpoint};

pub const URL_ENV: &str = "ALAYASIKI_EMBED_URL";
pub const API_ENV: &str = "ALAYASIKI_EMBED_API";
pub const MODEL_ENV: &str = "ALAYASIKI_EMBED_MODEL";
pub const DIM_ENV: &str = "ALAYASIKI_EMBED_DIM";
pub const TIMEOUT_ENV: &str = "ALAYASIKI_EMBED_TIMEOUT_MS";
pub const KEY_ENV: &str = "ALAYASIKI_EMBED_API_KEY";

/// Default per-request timeout.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Longest per-request timeout accepted (ten minutes).
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Texts sent in one request.
pub const HTTP_EMBED_BATCH: usize = 64;
/// Largest response body read (a batch of vectors as JSON text).
pub const MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;
/// Largest dimension accepted.
pub const MAX_DIM: usize = 8192;

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
        check_url(URL_ENV, &url)?;
        let api = match var(API_ENV).as_deref() {
            Some(name) => Api::parse(API_ENV, name)?,
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
        let timeout = match var(TIMEOUT_ENV) {
            None => Duration::from_millis(DEFAULT_TIMEOUT_MS),
            Some(t) => parse_timeout_ms(TIMEOUT_ENV, &t, MAX_TIMEOUT_MS)?,
        };
        Ok(Some(HttpEmbedderConfig {
            url,
            api,
            model,
            dim,
            timeout,
            api_key: var(KEY_ENV),
        }))
    }
}

pub struct HttpEmbedder {
    config: HttpEmbedderConfig,
    id: String,
    endpoint: ModelEndpoint,
    breaker: Breaker,
}

/// How long requests fail at once after the server failed one, before one
/// is let through to try it again; doubled after each failed try up to
/// [`MAX_COOL_DOWN`], forgotten after a success.
pub const FIRST_COOL_DOWN: Duration = Duration::from_secs(1);
pub const MAX_COOL_DOWN: Duration = Duration::from_secs(60);

/// Stops every caller waiting out the timeout on a server that just
/// failed: a hung server would otherwise cost each query's vector lane,
/// and each job of a batch, the whole timeout.
#[derive(Default)]
struct Breaker {
    open: Mutex<Option<Open>>,
}

struct Open {
    /// Until when requests fail at once (while one tries the server: the
    /// end of its timeout).
    until: Instant,
    cool_down: Duration,
    error: String,
}

impl Breaker {
    /// `Err` with the last error while cooling down; `Ok` to try the
    /// server (then the caller reports how it went).
    fn admit(&self, timeout: Duration) -> Result<(), EmbedError> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let Some(o) = open.as_mut() else {
            return Ok(());
        };
        let now = Instant::now();
        if now < o.until {
            let left = o.until - now;
            return Err(EmbedError(format!(
                "{} (not tried again for {} s)",
                o.error,
                left.as_secs_f64().ceil() as u64
            )));
        }
        // This caller tries the server; the others keep failing at once
        // until it knows.
        o.until = now + timeout;
        Ok(())
    }

    fn succeeded(&self) {
        *self.open.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn failed(&self, error: &str) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let cool_down = open
            .as_ref()
            .map_or(FIRST_COOL_DOWN, |o| (o.cool_down * 2).min(MAX_COOL_DOWN));
        *open = Some(Open {
            until: Instant::now() + cool_down,
            cool_down,
            error: error.to_string(),
        });
    }
}

impl HttpEmbedder {
    pub fn new(config: HttpEmbedderConfig) -> HttpEmbedder {
        let id = format!("http:{}:{}:{}", config.api.name(), config.model, config.dim);
        let endpoint =
            ModelEndpoint::new(config.url.clone(), config.api_key.clone(), config.timeout);
        HttpEmbedder {
            config,
            id,
            endpoint,
            breaker: Breaker::default(),
        }
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = json!({"model": self.config.model, "input": texts});
        let limit = response_limit(texts.len(), self.config.dim);
        let parsed = match self.config.api {
            Api::OpenAi => self
                .endpoint
                .post_for::<OpenAiResponse>(&body, limit)
                .map(OpenAiResponse::vectors),
            Api::Ollama => self
                .endpoint
                .post_for::<OllamaResponse>(&body, limit)
                .map(|r| r.embeddings),
        };
        let vectors = parsed.map_err(|e| {
            log::warn!("embedding server {} failed: {e}", self.endpoint.url());
            EmbedError(match e {
                EndpointError::Unreachable(detail) => {
                    format!("the embedding server is unreachable or timed out ({detail})")
                }
                EndpointError::TooLarge(n) => {
                    format!("the embedding server's response is longer than {n} bytes")
                }
                EndpointError::Status(status, _) => {
                    format!("the embedding server answered HTTP {status}")
                }
                EndpointError::NotJson(_) => {
                    "the embedding server sent a response that is not JSON".into()
                }
                EndpointError::Shape(_) => {
                    "the embedding server's response has an unexpected shape".into()
                }
            })
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

/// Bytes one vector component may take in a response (`-0.0123456789012345678, `
/// and some slack), and what a response may hold besides its vectors.
const BYTES_PER_COMPONENT: u64 = 32;
const RESPONSE_OVERHEAD_BYTES: u64 = 64 * 1024;

/// The longest response accepted for `texts` vectors of `dim` components:
/// what they can honestly take, at most [`MAX_RESPONSE_BYTES`]. A server
/// sending far more (a flood of numbers) is refused before it is parsed.
fn response_limit(texts: usize, dim: usize) -> u64 {
    let vectors = (texts as u64).saturating_mul(dim as u64);
    vectors
        .saturating_mul(BYTES_PER_COMPONENT)
        .saturating_add(RESPONSE_OVERHEAD_BYTES)
        .min(MAX_RESPONSE_BYTES)
}

/// `{"data": [{"index": i, "embedding": [...]}, ...]}`.
#[derive(Deserialize)]
struct OpenAiResponse {
    data: Vec<OpenAiItem>,
}

#[derive(Deserialize)]
struct OpenAiItem {
    #[serde(default)]
    index: Option<u64>,
    embedding: Vec<f32>,
}

impl OpenAiResponse {
    /// The vectors in index order (an item without one keeps its place).
    fn vectors(self) -> Vec<Vec<f32>> {
        let mut items: Vec<(u64, Vec<f32>)> = self
            .data
            .into_iter()
            .enumerate()
            .map(|(i, d)| (d.index.unwrap_or(i as u64), d.embedding))
            .collect();
        items.sort_by_key(|(i, _)| *i);
        items.into_iter().map(|(_, e)| e).collect()
    }
}

/// `{"embeddings": [[...], ...]}`.
#[derive(Deserialize)]
struct OllamaResponse {
    embeddings: Vec<Vec<f32>>,
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
            self.breaker.admit(self.config.timeout)?;
            match self.request(batch) {
                Ok(vectors) => {
                    self.breaker.succeeded();
                    out.extend(vectors);
                }
                Err(e) => {
                    self.breaker.failed(&e.0);
                    return Err(e);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_of_both_apis_parse() {
        let openai: OpenAiResponse = serde_json::from_value(json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}]}))
        .unwrap();
        assert_eq!(openai.vectors(), vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        let ollama: OllamaResponse =
            serde_json::from_value(json!({"embeddings": [[0.5, 0.5]]})).unwrap();
        assert_eq!(ollama.embeddings, vec![vec![0.5, 0.5]]);
        assert!(serde_json::from_value::<OllamaResponse>(json!({"embeddings": [["x"]]})).is_err());
        assert!(serde_json::from_value::<OpenAiResponse>(json!({"error": "x"})).is_err());
        // Out of f32's range reads as infinite, which `check` refuses.
        let big: OllamaResponse = serde_json::from_str(r#"{"embeddings": [[1e39]]}"#).unwrap();
        assert!(!big.embeddings[0][0].is_finite());
    }

    #[test]
    fn after_a_failure_requests_fail_at_once_for_a_growing_cool_down() {
        let b = Breaker::default();
        let timeout = Duration::from_secs(30);
        assert!(b.admit(timeout).is_ok());
        b.failed("the embedding server is unreachable or timed out");
        let e = b.admit(timeout).unwrap_err();
        assert!(
            e.0.contains("unreachable") && e.0.contains("not tried again"),
            "{e:?}"
        );
        assert_eq!(
            b.open.lock().unwrap().as_ref().unwrap().cool_down,
            FIRST_COOL_DOWN
        );
        // A cool-down past: one caller tries, the others still fail at once.
        b.open.lock().unwrap().as_mut().unwrap().until = Instant::now();
        assert!(b.admit(timeout).is_ok());
        assert!(b.admit(timeout).is_err());
        b.failed("again");
        assert_eq!(
            b.open.lock().unwrap().as_ref().unwrap().cool_down,
            2 * FIRST_COOL_DOWN
        );
        for _ in 0..10 {
            b.failed("again");
        }
        assert_eq!(
            b.open.lock().unwrap().as_ref().unwrap().cool_down,
            MAX_COOL_DOWN
        );
        b.succeeded();
        assert!(b.admit(timeout).is_ok());
    }

    #[test]
    fn a_response_may_be_as_long_as_its_vectors_can_honestly_be() {
        assert_eq!(response_limit(1, 768), 768 * 32 + 64 * 1024);
        assert_eq!(
            response_limit(HTTP_EMBED_BATCH, MAX_DIM),
            64 * 8192 * 32 + 64 * 1024
        );
        assert!(response_limit(HTTP_EMBED_BATCH, MAX_DIM) <= MAX_RESPONSE_BYTES);
        assert_eq!(response_limit(usize::MAX, usize::MAX), MAX_RESPONSE_BYTES);
    }
}
