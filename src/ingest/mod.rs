//! Ingestion: from stored originals to searchable chunks.
//!
//! - [`media`]: which media types are accepted and how a type is decided.
//! - [`extract`]: original bytes → extracted text (plain, Markdown, JSON,
//!   PDF with its pages; images and audio from their metadata hints).
//! - [`chunk`]: extracted text → chunks with byte-accurate spans.
//! - [`content_key`](mod@content_key): what makes two documents the same
//!   content.
//! - [`front_matter`]: a Markdown file's YAML front matter (its title, and
//!   where the text after it starts).
//! - [`worker`]: the thread that runs journal jobs and commits their
//!   results, and the hand-off of work already prepared by the caller.
//! - [`upkeep`]: the thread that purges expired documents and rebuilds
//!   community summaries.
//! - [`enrich`]: the thread that adds the optional LLM's triples to indexed
//!   documents' graphs (only when LLM extraction is configured).
//! - [`summarize`]: the thread that adds the optional LLM's summaries to
//!   stored community snapshots (only when LLM summaries are configured).
//!
//! Nothing here talks to clients; errors carry client-safe messages because
//! a failed job's reason is shown in its document's status.

mod attempts;
mod batch;
pub mod chunk;
mod commit;
mod content_key;
pub mod enrich;
pub mod extract;
pub mod front_matter;
pub mod gather;
pub mod handoff;
pub mod media;
pub mod summarize;
pub mod upkeep;
pub mod worker;

use serde_json::{Map, Value};

use crate::embed::Embedder;
use crate::graph::declared;
use crate::graph::llm_triples::Passage;
use crate::store::NewChunk;
pub use content_key::content_key;
use extract::Page;
use media::MediaKind;

/// A document made ready for indexing: its extracted text and chunks.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The extracted text, or `None` when it is the original itself (plain
    /// text and Markdown), so it is not stored twice.
    pub text: Option<String>,
    pub chunks: Vec<NewChunk>,
    /// One vector per chunk; `None` if the embedder failed (the chunks are
    /// then stored for keyword search and embedded later).
    pub vectors: Option<Vec<Vec<f32>>>,
    /// Entities, mentions and relations the chunks contain.
    pub graph: crate::graph::fragment::Fragment,
    /// The facts the document's metadata declares that its text supports
    /// (see [`crate::graph::declared`]); recorded before `graph`.
    pub declared: crate::graph::fragment::Fragment,
    /// `graph`'s names as a read snapshot of the store resolved them: set
    /// by the ingestion worker while the writer is busy with an earlier
    /// batch (see `store::name_hints`), else `None`.
    pub names: Option<crate::store::NameHints>,
    /// The pages of a paginated document (PDF), else empty.
    pub pages: Vec<Page>,
    /// The page number of each chunk when `pages` is not empty.
    pub chunk_pages: Vec<u32>,
}

impl Prepared {
    /// The parts the store writes when the document's job completes.
    pub fn indexed(&self) -> crate::store::IndexedDocument<'_> {
        crate::store::IndexedDocument {
            text: self.text.as_deref(),
            chunks: &self.chunks,
            vectors: self.vectors.as_deref(),
            graph: &self.graph,
            declared: &self.declared,
            names: self.names.as_ref(),
        }
    }

    /// Bytes held in memory (for budgeting work handed between threads).
    pub fn weight(&self) -> usize {
        let vectors = self
            .vectors
            .as_ref()
            .map_or(0, |v| v.iter().map(|x| x.len() * 4).sum());
        self.text.as_ref().map_or(0, String::len)
            + self.chunks.iter().map(|c| c.text.len() + 32).sum::<usize>()
            + vectors
    }
}

/// Extracts, chunks and embeds `bytes` of the given kind. The same function
/// runs when an ingest is received and when the journal replays a job, so
/// both paths index identically. Only content problems are errors; an
/// embedder failure leaves `vectors` empty (logged) so the document is
/// still stored and searchable by keyword.
pub fn prepare(
    kind: MediaKind,
    bytes: &[u8],
    embedder: &dyn Embedder,
) -> Result<Prepared, extract::ExtractError> {
    prepare_described(kind, bytes, &Map::new(), embedder)
}

/// [`prepare`] for a document with metadata, which is where images and
/// audio find their text (see [`extract::described`]).
pub fn prepare_described(
    kind: MediaKind,
    bytes: &[u8],
    metadata: &Map<String, Value>,
    embedder: &dyn Embedder,
) -> Result<Prepared, extract::ExtractError> {
    let declaration = declared::parse(metadata).map_err(extract::ExtractError)?;
    let extracted = extract::extract(kind, bytes, metadata)?;
    let text = extracted.text;
    let (chunks, chunk_pages) = if extracted.pages.is_empty() {
        (chunk::chunk(&text, kind), Vec::new())
    } else {
        chunk::chunk_pages(&text, &extracted.pages)
    };
    let vectors = embed_chunks(&chunks, embedder);
    let graph = crate::graph::fragment::from_chunks(&chunks);
    let declared = declaration
        .map(|d| declared_fragment(&d, &chunks))
        .unwrap_or_default();
    let text = (text.as_bytes() != bytes).then_some(text);
    Ok(Prepared {
        text,
        chunks,
        vectors,
        graph,
        declared,
        names: None,
        pages: extracted.pages,
        chunk_pages,
    })
}

/// The fragment of a document's declared graph over its chunks; what its
/// text does not support is dropped and logged.
fn declared_fragment(
    declaration: &declared::Declaration,
    chunks: &[NewChunk],
) -> crate::graph::fragment::Fragment {
    let passages = Passage::of_chunks(chunks.iter().map(|c| (c.start, c.text.as_str())));
    let (fragment, g) = declared::fragment(declaration, &passages);
    let dropped = g.triples.unquoted + g.triples.unresolved + g.entities_unnamed;
    if dropped > 0 {
        log::info!(
            "declared graph: {} triple(s) and {} entit(y/ies) kept; {} triple(s) whose evidence \
             is not in the text, {} naming what the text does not, {} entit(y/ies) it does \
             not name",
            g.triples.accepted,
            g.entities,
            g.triples.unquoted,
            g.triples.unresolved,
            g.entities_unnamed
        );
    }
    fragment
}

/// Weight of a chunk's context in its vector, relative to its own text.
pub const CONTEXT_VECTOR_WEIGHT: f32 = 0.5;

/// One vector per chunk: its text's embedding, plus its context's scaled by
/// [`CONTEXT_VECTOR_WEIGHT`], normalized. `None` (logged) if the embedder
/// failed.
pub fn embed_chunks(chunks: &[NewChunk], embedder: &dyn Embedder) -> Option<Vec<Vec<f32>>> {
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let mut vectors = embed_texts(&texts, embedder)?;
    let with_context: Vec<usize> = (0..chunks.len())
        .filter(|&i| !chunks[i].context.is_empty())
        .collect();
    if !with_context.is_empty() {
        let contexts: Vec<&str> = with_context
            .iter()
            .map(|&i| chunks[i].context.as_str())
            .collect();
        let context_vectors = embed_texts(&contexts, embedder)?;
        for (&i, c) in with_context.iter().zip(&context_vectors) {
            mix_into(&mut vectors[i], c);
        }
    }
    Some(vectors)
}

/// `v = normalize(v + CONTEXT_VECTOR_WEIGHT * context)`.
pub fn mix_into(v: &mut [f32], context: &[f32]) {
    for (x, c) in v.iter_mut().zip(context) {
        *x += CONTEXT_VECTOR_WEIGHT * c;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Vectors for texts, or `None` (logged) if the embedder failed.
pub fn embed_texts(texts: &[&str], embedder: &dyn Embedder) -> Option<Vec<Vec<f32>>> {
    if texts.is_empty() {
        return Some(Vec::new());
    }
    match embedder.embed_batch(texts) {
        Ok(v) => Some(v),
        Err(e) => {
            log::warn!("embedding failed; stored for keyword search, will embed later: {e}");
            None
        }
    }
}
