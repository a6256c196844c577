//! The [`Embedder`] trait and the choice of embedder from the environment.
//!
//! The built-in model is the default and needs nothing. Users who run a
//! local model server can point `ALAYASIKI_EMBED_URL` at an OpenAI-style
//! `/v1/embeddings` or an Ollama `/api/embed` endpoint (see [`super::http`]).
//! Whatever embedder is configured, its [`Embedder::id`] is recorded in the
//! vector files, so vectors from different embedders are never compared.

use std::sync::Arc;

/// Turns texts into vectors of a fixed dimension.
pub trait Embedder: Send + Sync {
    /// Stable identity: it changes whenever the vectors would.
    fn id(&self) -> &str;
    /// Dimension of every vector.
    fn dim(&self) -> usize;
    /// One vector per text, in order, each L2-normalized (or all zeros for a
    /// text with no content the model knows).
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Why texts could not be embedded. The message is safe to show a client
/// (no URLs, keys or response bodies); details go to the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedError(pub String);

impl std::fmt::Display for EmbedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Identity of the built-in model: its name and the first 12 hex digits of
/// the SHA-256 of its files (a test checks this against the loaded model, so
/// the constant cannot go stale). A constant, so opening a store never has
/// to load the model.
pub const BUILTIN_ID: &str = "builtin:m2v-minilm-256-int8@8c03dd17e99b";
/// Dimension of the built-in model.
pub const BUILTIN_DIM: usize = 256;

/// The built-in static model, loaded on first use.
pub struct BuiltinEmbedder;

impl Embedder for BuiltinEmbedder {
    fn id(&self) -> &str {
        BUILTIN_ID
    }

    fn dim(&self) -> usize {
        BUILTIN_DIM
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let model = super::builtin().map_err(|e| {
            log::error!("built-in embedding model failed to load: {e}");
            EmbedError("the built-in embedding model is damaged".into())
        })?;
        Ok(model.embed_batch(texts))
    }
}

/// The configured embedder: HTTP when `ALAYASIKI_EMBED_URL` is set, else
/// the built-in model. Configuration errors are for the operator (stderr at
/// start-up), so they may name variables and values.
pub fn from_env() -> Result<Arc<dyn Embedder>, String> {
    match super::http::HttpEmbedderConfig::from_env()? {
        Some(config) => Ok(Arc::new(super::http::HttpEmbedder::new(config))),
        None => Ok(Arc::new(BuiltinEmbedder)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_constants_match_the_model() {
        let model = super::super::builtin().unwrap();
        assert_eq!(BUILTIN_ID, format!("builtin:{}", model.id()));
        assert_eq!(BUILTIN_DIM, model.dim());
    }

    #[test]
    fn builtin_vectors_are_unit_length() {
        let v = BuiltinEmbedder
            .embed_batch(&["the startup bought a company"])
            .unwrap();
        let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
    }
}
