//! Reading a HuggingFace `tokenizer.json`: only the parts a BERT WordPiece
//! tokenizer uses, every id checked, anything this tokenizer would not
//! reproduce faithfully refused.

use std::collections::HashMap;

use serde::Deserialize;

use super::{ascii_classes, NormalizerOptions, PieceTrie, Tokenizer};

impl Tokenizer {
    /// Builds a tokenizer from the bytes of a HuggingFace `tokenizer.json`.
    ///
    /// Accepts exactly the BERT pipeline this module implements (`BertNormalizer`,
    /// `BertPreTokenizer`, `WordPiece`; special tokens matched on the raw text) and
    /// returns an error for anything else rather than tokenizing differently from the
    /// reference. Padding, truncation, post-processor and decoder settings are ignored:
    /// callers add no special tokens and truncate themselves.
    pub fn from_json(bytes: &[u8]) -> Result<Tokenizer, String> {
        let file: TokenizerFile =
            serde_json::from_slice(bytes).map_err(|e| format!("tokenizer.json: {e}"))?;
        let normalizer = file
            .normalizer
            .ok_or("tokenizer.json: a BertNormalizer is required")?;
        if normalizer.kind != "BertNormalizer" {
            return Err(format!(
                "tokenizer.json: unsupported normalizer {:?}",
                normalizer.kind
            ));
        }
        match file.pre_tokenizer {
            Some(p) if p.kind == "BertPreTokenizer" => {}
            other => {
                return Err(format!(
                    "tokenizer.json: unsupported pre-tokenizer {:?}",
                    other.map(|p| p.kind)
                ))
            }
        }
        let model = file.model;
        if model.kind != "WordPiece" {
            return Err(format!(
                "tokenizer.json: unsupported model {:?}",
                model.kind
            ));
        }
        let options = NormalizerOptions {
            clean_text: normalizer.clean_text,
            handle_chinese_chars: normalizer.handle_chinese_chars,
            // `null` means "do what lowercase does", as in the reference.
            strip_accents: normalizer.strip_accents.unwrap_or(normalizer.lowercase),
            lowercase: normalizer.lowercase,
        };

        // Ids must be exactly 0..n (they index embedding rows): none can reach the number
        // of entries, which bounds the table before a hostile id could inflate it.
        let mut ids = IdTable::with_entries(model.vocab.len() + file.added_tokens.len());
        let prefix = model.continuing_subword_prefix.as_str();
        let mut continuation = Vec::with_capacity(model.vocab.len() / 4);
        for (token, &id) in &model.vocab {
            ids.claim(token, id)?;
            // The start of a word is looked up in the whole vocabulary, later pieces with
            // the prefix in front: the second trie holds what follows the prefix.
            if let Some(rest) = token.strip_prefix(prefix) {
                if !prefix.is_empty() && !rest.is_empty() {
                    continuation.push((rest, id));
                }
            }
        }
        let initial = PieceTrie::build(model.vocab.iter().map(|(t, &id)| (t.as_str(), id)));
        let continuation = PieceTrie::build(continuation);
        let mut added = Vec::new();
        for token in &file.added_tokens {
            if token.single_word || token.lstrip || token.rstrip || token.normalized {
                return Err(format!(
                    "tokenizer.json: added token {:?} uses matching options this tokenizer does not implement",
                    token.content
                ));
            }
            if token.content.is_empty() {
                return Err("tokenizer.json: empty added token".into());
            }
            ids.claim(&token.content, token.id)?;
            added.push((Box::<str>::from(token.content.as_str()), token.id));
        }
        // Longest first, so the first match at a position is the longest one.
        added.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        let mut added_first_bytes = [false; 256];
        for (token, _) in &added {
            added_first_bytes[usize::from(token.as_bytes()[0])] = true;
        }

        let id_to_token = ids.finish()?;
        let unk_id = *model.vocab.get(&model.unk_token).ok_or_else(|| {
            format!(
                "tokenizer.json: unknown token {:?} is not in the vocabulary",
                model.unk_token
            )
        })?;
        Ok(Tokenizer {
            options,
            ascii: ascii_classes(options),
            initial,
            continuation,
            added,
            added_first_bytes,
            unk_id,
            max_input_chars_per_word: model.max_input_chars_per_word,
            vocab_size: id_to_token.len(),
            id_to_token,
        })
    }
}

/// The token of every id, checked while tokenizer.json is read.
struct IdTable(Vec<Option<Box<str>>>);

impl IdTable {
    fn with_entries(entries: usize) -> IdTable {
        IdTable(vec![None; entries])
    }

    /// Records that `id` names `token`; an id naming two tokens is an error.
    fn claim(&mut self, token: &str, id: u32) -> Result<(), String> {
        let slot = usize::try_from(id)
            .ok()
            .and_then(|i| self.0.get_mut(i))
            .ok_or_else(|| format!("tokenizer.json: id {id} is beyond the vocabulary"))?;
        match slot {
            Some(existing) if &**existing != token => Err(format!(
                "tokenizer.json: id {id} names both {existing:?} and {token:?}"
            )),
            _ => {
                *slot = Some(token.into());
                Ok(())
            }
        }
    }

    /// The tokens in id order, if every id up to the highest one names a token.
    fn finish(self) -> Result<Vec<Box<str>>, String> {
        let used = self
            .0
            .iter()
            .rposition(Option::is_some)
            .map_or(0, |i| i + 1);
        self.0
            .into_iter()
            .take(used)
            .enumerate()
            .map(|(id, t)| t.ok_or_else(|| format!("tokenizer.json: no token has id {id}")))
            .collect()
    }
}

#[derive(Deserialize)]
struct TokenizerFile {
    #[serde(default)]
    added_tokens: Vec<AddedTokenJson>,
    normalizer: Option<NormalizerJson>,
    pre_tokenizer: Option<TypeOnly>,
    model: ModelJson,
}

#[derive(Deserialize)]
struct AddedTokenJson {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default)]
    normalized: bool,
}

#[derive(Deserialize)]
struct NormalizerJson {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "yes")]
    clean_text: bool,
    #[serde(default = "yes")]
    handle_chinese_chars: bool,
    #[serde(default)]
    strip_accents: Option<bool>,
    #[serde(default = "yes")]
    lowercase: bool,
}

#[derive(Deserialize)]
struct TypeOnly {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct ModelJson {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "default_unk")]
    unk_token: String,
    #[serde(default = "default_prefix")]
    continuing_subword_prefix: String,
    #[serde(default = "default_max_chars")]
    max_input_chars_per_word: usize,
    vocab: HashMap<String, u32>,
}

fn yes() -> bool {
    true
}
fn default_unk() -> String {
    "[UNK]".into()
}
fn default_prefix() -> String {
    "##".into()
}
fn default_max_chars() -> usize {
    100
}
