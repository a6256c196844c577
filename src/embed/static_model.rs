//! Static (model2vec) text embeddings: token lookup, mean pooling, L2 normalization.
//!
//! Owns the embedding of a text with a distilled static model: one vector per vocabulary
//! token, loaded from a safetensors file, and a text's vector is the normalized mean of
//! its tokens' vectors. It reproduces the Python `model2vec` `StaticModel.encode` (0.10)
//! step for step, so vectors match the reference the model was evaluated with:
//!
//! 1. the text is cut to its first `512 * median token length` chars (model2vec's cheap
//!    guard before tokenizing; the median is over the vocabulary's token lengths);
//! 2. tokenized without special tokens and truncated to the first 512 tokens;
//! 3. `[UNK]` ids are dropped (after truncation: unknown words still use up the budget);
//!    other special tokens written literally in the text (e.g. `[PAD]`) are kept, as
//!    model2vec keeps them;
//! 4. the rows of the remaining ids are averaged and the mean is L2-normalized.
//!
//! Rows are dequantized on the fly: int8 rows are summed exactly in `i32` (model2vec's
//! int8 files store no scale, and a common scale cancels in the normalization), float16
//! rows are widened to `f32` once at load.
//!
//! It must never panic on any text, and never return a non-finite vector.

use sha2::{Digest, Sha256};

use super::safetensors::{Dtype, SafeTensors};
use super::tokenizer::Tokenizer;

/// Name of the embedding matrix in a model2vec safetensors file.
const EMBEDDINGS_TENSOR: &str = "embeddings";
/// model2vec's default (and the built-in model's configured) `max_length`, in tokens.
const MAX_TOKENS: usize = 512;
/// Rows of int8 values an i16 sum holds without overflow: 256 * -128 = i16::MIN and
/// 256 * 127 < i16::MAX.
const I16_SAFE_ROWS: usize = 256;
/// Hex digits of the content hash kept in [`StaticModel::id`].
const ID_HASH_HEX_DIGITS: usize = 12;

/// A loaded static embedding model. Immutable; share it across threads.
pub struct StaticModel {
    tokenizer: Tokenizer,
    rows: Rows,
    dim: usize,
    dtype: Dtype,
    /// Chars of a text looked at: `MAX_TOKENS * median token length`.
    max_chars: usize,
    id: String,
}

/// A summary: the rows are megabytes.
impl std::fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticModel")
            .field("id", &self.id)
            .field("dim", &self.dim)
            .field("dtype", &self.dtype)
            .field("tokenizer", &self.tokenizer)
            .finish_non_exhaustive()
    }
}

/// The embedding matrix, row-major, one row per token id.
enum Rows {
    I8(Vec<i8>),
    /// float16 and float32 files, widened once at load.
    F32(Vec<f32>),
}

/// Buffers reused across the texts of a batch.
struct Scratch {
    ids: Vec<u32>,
    sum_i16: Vec<i16>,
    sum_i32: Vec<i32>,
    sum_f32: Vec<f32>,
}

impl StaticModel {
    /// Loads a model from the bytes of its `model.safetensors` (an `embeddings` tensor of
    /// shape `[vocab, dim]`, int8, float16 or float32) and `tokenizer.json`.
    ///
    /// `name` starts the model's [`id`](Self::id), e.g. `m2v-minilm-256-int8`.
    pub fn from_bytes(
        name: &str,
        safetensors: &[u8],
        tokenizer_json: &[u8],
    ) -> Result<StaticModel, String> {
        let tokenizer = Tokenizer::from_json(tokenizer_json)?;
        let file = SafeTensors::parse(safetensors)?;
        if let Some(other) = file.names().find(|n| *n != EMBEDDINGS_TENSOR) {
            // model2vec's vocabulary-quantized models add "weights" and "mapping" tensors,
            // which this pooling does not apply.
            return Err(format!("model.safetensors: unsupported tensor {other:?}"));
        }
        let tensor = file
            .tensor(EMBEDDINGS_TENSOR)
            .ok_or("model.safetensors: no \"embeddings\" tensor")?;
        let (vocab, dim) = match tensor.shape[..] {
            [vocab, dim] if vocab > 0 && dim > 0 => (vocab, dim),
            _ => {
                return Err(format!(
                    "model.safetensors: embeddings shape {:?} is not [vocab, dim]",
                    tensor.shape
                ))
            }
        };
        if vocab != tokenizer.vocab_size() {
            return Err(format!(
                "model has {vocab} rows but the tokenizer {} tokens",
                tokenizer.vocab_size()
            ));
        }
        let rows = match tensor.dtype {
            Dtype::I8 => Rows::I8(tensor.to_i8().unwrap_or_default()),
            Dtype::F16 | Dtype::F32 => {
                let values = tensor.to_f32();
                if values.iter().any(|v| !v.is_finite()) {
                    return Err("model.safetensors: non-finite embedding values".into());
                }
                Rows::F32(values)
            }
        };
        let mut hash = Sha256::new();
        hash.update(safetensors);
        hash.update(tokenizer_json);
        let hex: String = hash
            .finalize()
            .iter()
            .flat_map(|b| [b >> 4, b & 0xF])
            .take(ID_HASH_HEX_DIGITS)
            .map(|nibble| char::from_digit(u32::from(nibble), 16).unwrap_or('0'))
            .collect();
        Ok(StaticModel {
            max_chars: MAX_TOKENS.saturating_mul(median_token_chars(&tokenizer)),
            tokenizer,
            rows,
            dim,
            dtype: tensor.dtype,
            id: format!("{name}@{hex}"),
        })
    }

    /// Dimensions of every vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Stable identity of the model: `<name>@<first 12 hex digits of the SHA-256 of the
    /// safetensors bytes followed by the tokenizer.json bytes>`. Vectors from models with
    /// different ids must not be compared.
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// Element type of the stored rows.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The model's tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The token ids whose rows make up `text`'s embedding (truncated, unknowns dropped).
    pub fn pooled_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        self.pooled_ids_into(text, &mut ids);
        ids
    }

    /// The unit-length embedding of `text`.
    ///
    /// A text with no known token (empty, only whitespace or control characters, only
    /// words outside the vocabulary) has no direction: its embedding is the zero vector,
    /// whose cosine with anything is 0. Callers that need to can test for it with
    /// `v.iter().all(|&x| x == 0.0)`.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_with(text, &mut self.scratch())
    }

    /// [`embed`](Self::embed) for each text, in order, reusing buffers between texts.
    pub fn embed_batch(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        let mut scratch = self.scratch();
        texts
            .iter()
            .map(|t| self.embed_with(t, &mut scratch))
            .collect()
    }

    fn scratch(&self) -> Scratch {
        Scratch {
            ids: Vec::new(),
            sum_i16: vec![0; self.dim],
            sum_i32: vec![0; self.dim],
            sum_f32: vec![0.0; self.dim],
        }
    }

    fn pooled_ids_into(&self, text: &str, ids: &mut Vec<u32>) {
        let text = match text.char_indices().nth(self.max_chars) {
            Some((cut, _)) => &text[..cut],
            None => text,
        };
        self.tokenizer.encode_into(text, MAX_TOKENS, ids);
        let unk = self.tokenizer.unk_id();
        ids.retain(|&id| id != unk);
    }

    fn embed_with(&self, text: &str, scratch: &mut Scratch) -> Vec<f32> {
        self.pooled_ids_into(text, &mut scratch.ids);
        let mut out = vec![0.0f32; self.dim];
        if scratch.ids.is_empty() {
            return out;
        }
        match &self.rows {
            Rows::I8(rows) => {
                // Exact integer sums. Rows are added into i16 lanes (twice as many per
                // vector instruction as i32) for up to I16_SAFE_ROWS rows at a time, which
                // cannot overflow, then folded into i32.
                let (wide, narrow) = (&mut scratch.sum_i32, &mut scratch.sum_i16);
                wide.fill(0);
                for chunk in scratch.ids.chunks(I16_SAFE_ROWS) {
                    narrow.fill(0);
                    for &id in chunk {
                        if let Some(row) =
                            rows.get(id as usize * self.dim..(id as usize + 1) * self.dim)
                        {
                            narrow
                                .iter_mut()
                                .zip(row)
                                .for_each(|(s, &x)| *s += i16::from(x));
                        }
                    }
                    wide.iter_mut()
                        .zip(narrow.iter())
                        .for_each(|(w, &n)| *w += i32::from(n));
                }
                out.iter_mut()
                    .zip(wide.iter())
                    .for_each(|(o, &s)| *o = s as f32);
            }
            Rows::F32(rows) => {
                let sum = &mut scratch.sum_f32;
                sum.fill(0.0);
                for &id in &scratch.ids {
                    if let Some(row) =
                        rows.get(id as usize * self.dim..(id as usize + 1) * self.dim)
                    {
                        sum.iter_mut().zip(row).for_each(|(s, &x)| *s += x);
                    }
                }
                out.copy_from_slice(sum);
            }
        }
        // The mean's 1/n would cancel in the normalization: normalize the sum directly.
        // In f64, so sums of large rows cannot overflow the squares.
        let norm = out
            .iter()
            .map(|&x| f64::from(x) * f64::from(x))
            .sum::<f64>()
            .sqrt();
        if norm > 0.0 && norm.is_finite() {
            let scale = (1.0 / norm) as f32;
            out.iter_mut().for_each(|x| *x *= scale);
        } else {
            out.fill(0.0);
        }
        out
    }
}

/// model2vec's `median_token_length`: `int(np.median([len(t) for t in tokens]))`, the
/// length in chars (continuation pieces with their `##`), over all token ids.
fn median_token_chars(tokenizer: &Tokenizer) -> usize {
    let mut lengths: Vec<usize> = (0..tokenizer.vocab_size())
        .filter_map(|id| tokenizer.token(u32::try_from(id).ok()?))
        .map(|t| t.chars().count())
        .collect();
    lengths.sort_unstable();
    let n = lengths.len();
    match n {
        0 => 0,
        // The mean of the two middle lengths, truncated as int() does.
        _ if n.is_multiple_of(2) => (lengths[n / 2 - 1] + lengths[n / 2]) / 2,
        _ => lengths[n / 2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{builtin, BUILTIN_NAME};

    /// A model with `rows` (one per token of `vocab`, `dim` values each) stored as `dtype`.
    fn tiny_model(
        vocab: &[&str],
        rows: &[f32],
        dim: usize,
        dtype: Dtype,
    ) -> Result<StaticModel, String> {
        let data: Vec<u8> = match dtype {
            Dtype::I8 => rows.iter().map(|&x| x as i8 as u8).collect(),
            // Test rows are small integers and halves: exact in float16 (sign, 5-bit
            // exponent, 10-bit mantissa), built by hand here.
            Dtype::F16 => rows
                .iter()
                .flat_map(|&x| f32_to_f16_exact(x).to_le_bytes())
                .collect(),
            Dtype::F32 => rows.iter().flat_map(|&x| x.to_le_bytes()).collect(),
        };
        let header = format!(
            r#"{{"embeddings":{{"dtype":"{}","shape":[{},{dim}],"data_offsets":[0,{}]}}}}"#,
            match dtype {
                Dtype::I8 => "I8",
                Dtype::F16 => "F16",
                Dtype::F32 => "F32",
            },
            rows.len() / dim,
            data.len()
        );
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(header.as_bytes());
        file.extend_from_slice(&data);
        let entries: Vec<String> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| format!("\"{t}\":{i}"))
            .collect();
        let tokenizer = format!(
            r#"{{"added_tokens":[],"normalizer":{{"type":"BertNormalizer"}},"pre_tokenizer":{{"type":"BertPreTokenizer"}},
                "model":{{"type":"WordPiece","vocab":{{{}}}}}}}"#,
            entries.join(",")
        );
        StaticModel::from_bytes("tiny", &file, tokenizer.as_bytes())
    }

    fn f32_to_f16_exact(x: f32) -> u16 {
        (0u16..=0xFFFF)
            .find(|&h| {
                crate::embed::safetensors::f16_to_f32(h) == x
                    && (h & 0x8000 != 0) == x.is_sign_negative()
            })
            .expect("value exact in float16")
    }

    const VOCAB: &[&str] = &["[PAD]", "[UNK]", "red", "blue", "sky"];
    const ROWS: &[f32] = &[0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 4.0, -2.0, 2.0];

    fn norm(v: &[f32]) -> f32 {
        v.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    #[test]
    fn embedding_is_the_normalized_mean_of_token_rows_for_every_dtype() {
        for dtype in [Dtype::I8, Dtype::F16, Dtype::F32] {
            let model = tiny_model(VOCAB, ROWS, 2, dtype).unwrap();
            assert_eq!(model.dim(), 2);
            assert_eq!(model.dtype(), dtype);
            // red (3, 0) + blue (0, 4) = (3, 4), length 5.
            assert_eq!(model.embed("Red blue"), [0.6, 0.8], "{dtype:?}");
            // Repeats count: 2 * red + blue = (6, 4).
            let v = model.embed("red red blue");
            assert!(
                (v[0] - 6.0 / 52f32.sqrt()).abs() < 1e-6
                    && (v[1] - 4.0 / 52f32.sqrt()).abs() < 1e-6
            );
        }
    }

    #[test]
    fn unknown_words_are_ignored_and_texts_without_known_tokens_embed_to_zero() {
        let model = tiny_model(VOCAB, ROWS, 2, Dtype::I8).unwrap();
        assert_eq!(model.embed("red zebra"), model.embed("red"));
        assert_eq!(model.pooled_ids("red zebra [UNK]"), [2]);
        for text in ["", "   ", "\u{0}\u{7}", "zebra", "[UNK]"] {
            assert_eq!(model.embed(text), [0.0, 0.0], "{text:?}");
        }
        // A token whose row is zero has no direction either.
        assert_eq!(model.embed("[PAD]"), [0.0, 0.0]);
    }

    #[test]
    fn unknown_words_use_up_the_token_budget_before_they_are_dropped() {
        let model = tiny_model(VOCAB, ROWS, 2, Dtype::I8).unwrap();
        // "z" is not in the vocabulary; short words keep the text under the char cut.
        let text = format!("{}red", "z ".repeat(MAX_TOKENS));
        assert!(model.pooled_ids(&text).is_empty());
        let text = format!("{}red", "z ".repeat(MAX_TOKENS - 1));
        assert_eq!(model.pooled_ids(&text), [2]);
    }

    #[test]
    fn mismatched_or_unsupported_model_files_are_rejected() {
        // Five vocabulary tokens, four rows.
        assert!(tiny_model(VOCAB, &ROWS[..8], 2, Dtype::I8).is_err());
        assert!(tiny_model(VOCAB, &[f32::NAN; 10], 2, Dtype::F32).is_err());
        assert!(StaticModel::from_bytes("x", b"", b"{}").is_err());
        let model = tiny_model(VOCAB, ROWS, 2, Dtype::I8);
        assert!(model.is_ok());
    }

    #[test]
    fn builtin_model_has_a_stable_id_and_unit_vectors() {
        let model = builtin().unwrap();
        assert_eq!(model.dim(), 256);
        assert_eq!(model.dtype(), Dtype::I8);
        let id = model.id();
        let (name, hash) = id.split_once('@').unwrap();
        assert_eq!(name, BUILTIN_NAME);
        assert_eq!(hash.len(), ID_HASH_HEX_DIGITS);
        assert!(hash
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(
            model.max_chars,
            512 * 6,
            "model2vec's median token length is 6 chars"
        );
        let long = "the cat sat on the mat ".repeat(10_000);
        for text in ["hello", "The cat sat on the mat.", "東京", long.as_str()] {
            let shown = &text[..text.len().min(40)];
            assert!((norm(&model.embed(text)) - 1.0).abs() < 1e-5, "{shown:?}");
        }
        // A single word past the length limit is unknown: no direction.
        assert!(model.embed(&"x".repeat(100_000)).iter().all(|&x| x == 0.0));
    }

    #[test]
    fn related_texts_are_closer_than_unrelated_ones() {
        let model = builtin().unwrap();
        let v = model.embed_batch(&[
            "I adopted a puppy last week",
            "We got a new dog",
            "The stock market fell sharply",
        ]);
        let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!(cos(&v[0], &v[1]) > cos(&v[0], &v[2]) + 0.1);
    }

    // ---- measurements (not timed tests): run with
    // `cargo test --release --lib -- --ignored --nocapture measure_`

    /// Texts of up to `max_chars` from the parity fixture: realistic mixed input that is
    /// not cut short (longer texts would flatter the figure).
    fn fixture_texts(max_chars: usize) -> Vec<String> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/embedding_parity.jsonl"
        );
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v["text"].as_str().map(str::to_string))
            .filter(|t| t.chars().count() <= max_chars)
            .collect()
    }

    /// LoCoMo conversations: (turn ids, turn texts "<speaker>: <text>", questions as
    /// (question, evidence ids)) for categories 1-4. None when the data is absent.
    #[allow(clippy::type_complexity)]
    fn locomo() -> Option<Vec<(Vec<String>, Vec<String>, Vec<(String, Vec<String>)>)>> {
        let dir = std::env::var("ALAYASIKI_LOCOMO_DIR")
            .unwrap_or_else(|_| "/work/shared/eval/locomo-dev".into());
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .collect();
        files.sort();
        let mut out = Vec::new();
        for file in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "json"))
        {
            let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
            let obj = doc.as_object()?;
            let (mut ids, mut texts) = (Vec::new(), Vec::new());
            let mut sessions: Vec<(u32, &Vec<serde_json::Value>)> = obj
                .iter()
                .filter_map(|(k, v)| {
                    Some((k.strip_prefix("session_")?.parse().ok()?, v.as_array()?))
                })
                .collect();
            sessions.sort_by_key(|s| s.0);
            for turn in sessions.iter().flat_map(|s| s.1.iter()) {
                ids.push(turn["dia_id"].as_str()?.to_string());
                texts.push(format!(
                    "{}: {}",
                    turn["speaker"].as_str()?,
                    turn["text"].as_str()?
                ));
            }
            let questions = obj["qa"]
                .as_array()?
                .iter()
                .filter(|q| matches!(q["category"].as_u64(), Some(1..=4)))
                .filter_map(|q| {
                    let evidence: Vec<String> = q["evidence"]
                        .as_array()?
                        .iter()
                        .filter_map(|e| Some(e.as_str()?.to_string()))
                        .collect();
                    (!evidence.is_empty())
                        .then(|| (q["question"].as_str().unwrap_or("").to_string(), evidence))
                })
                .collect();
            out.push((ids, texts, questions));
        }
        Some(out)
    }

    #[test]
    #[ignore = "measurement; run in release"]
    fn measure_embedding_throughput() {
        let model = builtin().unwrap();
        let mut corpora = vec![(
            "parity fixture texts under the char cut",
            fixture_texts(model.max_chars),
        )];
        if let Some(convs) = locomo() {
            corpora.push((
                "LoCoMo dialog turns",
                convs.into_iter().flat_map(|c| c.1).collect(),
            ));
        }
        for (name, texts) in corpora {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let bytes: usize = refs.iter().map(|t| t.len()).sum();
            let rounds = (64_000_000 / bytes.max(1)).max(1);
            let start = std::time::Instant::now();
            let mut checksum = 0.0f32;
            for _ in 0..rounds {
                checksum += model.embed_batch(&refs).iter().map(|v| v[0]).sum::<f32>();
            }
            let secs = start.elapsed().as_secs_f64();
            let mb = (bytes * rounds) as f64 / 1e6;
            println!(
                "{name}: {} texts, {:.1} MB in {secs:.2} s = {:.1} MB/s, {:.0} texts/s on one thread (checksum {checksum:.3})",
                refs.len(),
                mb,
                mb / secs,
                (refs.len() * rounds) as f64 / secs
            );
        }
    }

    #[test]
    #[ignore = "measurement; needs the LoCoMo data (skips without it)"]
    fn measure_locomo_recall() {
        let Some(convs) = locomo() else {
            println!("LoCoMo data not found: skipped");
            return;
        };
        let mut models = vec![("built-in (int8)".to_string(), builtin().unwrap())];
        let dir = std::env::var("ALAYASIKI_FLOAT16_MODEL_DIR")
            .unwrap_or_else(|_| "/work/shared/models/m2v-minilm-256".into());
        let float16 = std::fs::read(format!("{dir}/model.safetensors"))
            .ok()
            .zip(std::fs::read(format!("{dir}/tokenizer.json")).ok())
            .map(|(m, t)| StaticModel::from_bytes("float16", &m, &t).unwrap());
        if let Some(m) = &float16 {
            models.push((format!("float16 from {dir}"), m));
        }
        for (name, model) in models {
            let (mut r5, mut r10, mut n) = (0.0, 0.0, 0usize);
            for (ids, texts, questions) in &convs {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                let turns = model.embed_batch(&refs);
                for (question, evidence) in questions {
                    let q = model.embed(question);
                    let mut order: Vec<(usize, f32)> = turns
                        .iter()
                        .map(|t| t.iter().zip(&q).map(|(a, b)| a * b).sum())
                        .enumerate()
                        .collect();
                    // Stable: equal scores keep document order.
                    order.sort_by(|a, b| b.1.total_cmp(&a.1));
                    let hits = |k: usize| {
                        evidence
                            .iter()
                            .filter(|e| order.iter().take(k).any(|&(i, _)| &ids[i] == *e))
                            .count() as f64
                            / evidence.len() as f64
                    };
                    r5 += hits(5);
                    r10 += hits(10);
                    n += 1;
                }
            }
            println!(
                "{name}: {n} questions, recall@5 {:.4}, recall@10 {:.4}",
                r5 / n as f64,
                r10 / n as f64
            );
        }
    }
}
