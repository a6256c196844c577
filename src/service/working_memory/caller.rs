//! What a caller does with working memory, through [`Memory`]: write, read,
//! search, merge into a query, promote, inspect.
//!
//! Every method binds the caller's [`Owner`] from its principal and checks
//! its permission first; none takes an owner from the request. Writing and
//! promoting need the ingest permission, reading the query permission.

use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

use super::note;
use super::search;
use super::session_graph::{EdgeInput, NodeInput, Note, SessionId, SessionSnapshot};
use super::{DeletedSession, Owner, SessionListing, WorkingMemoryStatus};
use crate::clock::rfc3339;
use crate::error::Result;
use crate::ids;
use crate::ingest::media::MediaKind;
use crate::limits::DEFAULT_BUDGET_CHARS;
use crate::query::{self, terms, LaneSet, Origin, QueryOutcome, QuerySpec, ResultMode, SearchMode};
use crate::service::{Content, IngestRequest, Memory, Permission};

/// A write to a session.
#[derive(Debug, Clone)]
pub struct MemoryWrite {
    pub session_id: String,
    /// The note's content; `None` for a write of nodes and edges only.
    pub content: Option<Content>,
    pub metadata: Map<String, Value>,
    pub nodes: Vec<NodeInput>,
    pub edges: Vec<EdgeInput>,
}

/// What a write stored.
#[derive(Debug, Clone, Serialize)]
pub struct WriteReceipt {
    pub session_id: String,
    /// The write's position in the session.
    pub seq: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Searchable passages of the note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks: Option<usize>,
    /// Lanes that can find the note: `keyword`, plus `vector` unless
    /// embedding failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub search_lanes: Vec<&'static str>,
    pub nodes: usize,
    pub edges: usize,
    /// Bytes counted against the shared budget (see README, Working memory).
    pub bytes_charged: usize,
    pub expires_at: String,
}

/// What a promotion wrote.
#[derive(Debug, Clone, Serialize)]
pub struct PromoteReceipt {
    pub session_id: String,
    pub notes: usize,
    /// Documents stored by this call.
    pub stored: usize,
    /// Notes already promoted earlier (their documents were returned).
    pub replayed: usize,
    pub documents: Vec<PromotedNote>,
    /// Nodes and edges stay in the session: persistent memory has no
    /// explicit graph.
    pub nodes_not_promoted: usize,
    pub edges_not_promoted: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PromotedNote {
    pub note_id: String,
    pub document_id: String,
    pub state: String,
    pub idempotent_replay: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Memory<'_> {
    fn owner(&self) -> Owner {
        Owner::of(self.principal())
    }

    /// Writes a note and/or graph elements to the caller's session,
    /// creating it on first write. Prepared and checked first; admitted
    /// (charged and stored) under the registry lock; then embedded. An
    /// embedding failure leaves the note findable by keyword and its charge
    /// in place.
    pub fn memory_write(&self, req: MemoryWrite) -> Result<WriteReceipt> {
        self.require_write(Permission::Ingest)?;
        let id = SessionId::parse(&req.session_id)?;
        let draft = note::prepare(req.content, req.metadata, req.nodes, req.edges)?;
        let nodes = draft.graph.nodes.len();
        let edges = draft.graph.edges.len();
        let bytes_charged = draft.charge.bytes();
        let wm = self.service().working_memory();
        let admission = wm.admit(&self.owner(), &id, draft)?;
        let mut receipt = WriteReceipt {
            session_id: id.as_str().to_string(),
            seq: admission.seq,
            note_id: None,
            media_type: None,
            chunks: None,
            search_lanes: Vec::new(),
            nodes,
            edges,
            bytes_charged,
            expires_at: rfc3339(admission.expires_at_ms),
        };
        if let Some((note, passages)) = admission.note {
            receipt.search_lanes.push("keyword");
            if self.embed_note(&note, &passages) {
                receipt.search_lanes.push("vector");
            }
            receipt.note_id = Some(note.id.clone());
            receipt.media_type = Some(note.media_type.clone());
            receipt.chunks = Some(note.chunks.len());
        }
        Ok(receipt)
    }

    /// Embeds an admitted note's passages, outside the registry lock. False
    /// (logged) if the embedder failed or panicked.
    fn embed_note(&self, note: &Note, passages: &[crate::store::NewChunk]) -> bool {
        let embedder = self.service().embedder();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::ingest::embed_chunks(passages, embedder)
        }));
        match outcome {
            Ok(Some(vectors)) if vectors.len() == note.chunks.len() => {
                note.vectors.set(vectors).is_ok()
            }
            Ok(_) => false,
            Err(_) => {
                log::error!("embedding a working-memory note panicked");
                false
            }
        }
    }

    /// The caller's session as stored (notes in write order, nodes, edges,
    /// times).
    pub fn memory_session(&self, session_id: &str) -> Result<SessionSnapshot> {
        self.refuse_anonymous()?;
        self.require(Permission::Query)?;
        self.own_session(session_id)
    }

    /// [`Memory::memory_session`], where a malformed id, which can name
    /// no session, is not found like any other id this caller has none for.
    pub fn find_memory_session(&self, session_id: &str) -> Result<SessionSnapshot> {
        match self.memory_session(session_id) {
            Err(crate::error::Error::InvalidInput(_)) => {
                Err(super::unknown_session_named(session_id))
            }
            found => found,
        }
    }

    /// The caller's session; permission is the calling method's business.
    fn own_session(&self, session_id: &str) -> Result<SessionSnapshot> {
        let id = SessionId::parse(session_id)?;
        self.service().working_memory().snapshot(&self.owner(), &id)
    }

    /// Ranked evidence from the caller's session only.
    pub fn memory_search(&self, session_id: &str, question: &str, top_k: usize) -> Result<Value> {
        let snapshot = self.memory_session(session_id)?;
        let spec = QuerySpec {
            text: question.to_string(),
            search_mode: SearchMode::Local,
            mode: ResultMode::Evidence,
            top_k,
            budget_chars: DEFAULT_BUDGET_CHARS as usize,
            lanes: LaneSet::ALL,
            session_id: Some(session_id.to_string()),
            filter: Default::default(),
            as_of: None,
        };
        let terms = terms::analyze(question);
        let (fused, lane_errors) = self.session_candidates(&snapshot, &spec, &terms);
        let fused = fused
            .into_iter()
            .map(|f| query::fuse::Fused {
                origin: Some(Origin::Session),
                ..f
            })
            .collect();
        let outcome = query::finish(
            &spec,
            query::Candidates {
                terms,
                ignored_terms: Vec::new(),
                fused,
                lane_errors,
                relations: Default::default(),
                facts: Default::default(),
                search_mode: query::ModeReport {
                    requested: query::SearchMode::Local,
                    ran: query::SearchMode::Local,
                    reason: "the session's notes, by keyword and meaning".into(),
                },
                communities: Vec::new(),
                explain: query::modes::Explain::new(&[]),
            },
        );
        let mut value = json!({
            "session_id": snapshot.id.as_str(),
            "query": question,
            "terms": outcome.terms,
            "evidence": outcome.evidence,
            "budget": outcome.budget,
        });
        if !outcome.lane_errors.is_empty() {
            value["lane_errors"] = json!(outcome.lane_errors);
        }
        Ok(value)
    }

    fn session_candidates(
        &self,
        snapshot: &SessionSnapshot,
        spec: &QuerySpec,
        terms: &[String],
    ) -> (Vec<query::fuse::Fused>, BTreeMap<&'static str, String>) {
        search::candidates(
            &snapshot.notes,
            &spec.text,
            terms,
            self.service().embedder(),
            spec.lanes,
            self.service().settings().ranking_depth(spec.top_k),
            self.service().fusion(),
        )
    }

    /// A query over persistent memory merged with the caller's session
    /// (`spec.session_id`); an unknown session fails the query before the
    /// store is read.
    pub(in crate::service) fn query_with_session(
        &self,
        spec: &QuerySpec,
        session_id: &str,
    ) -> Result<QueryOutcome> {
        let snapshot = self.memory_session(session_id)?;
        let service = self.service();
        let reader = service
            .store()
            .reader_seeing(&self.principal().tenant, &self.principal().sight())?;
        let memory = query::candidates(&reader, spec, service.embedder(), service.settings())?;
        let (session, errors) = self.session_candidates(&snapshot, spec, &memory.terms);
        Ok(query::finish(spec, query::merge(memory, session, errors)))
    }

    /// Copies the session's notes into persistent memory as documents, one
    /// per note, through the normal ingest path. Idempotent: each note's
    /// key is derived from the owner, session, seq and content, so a second
    /// promotion stores nothing new and returns the same documents. Stops
    /// at the first failure (documents stored so far stay; promoting again
    /// continues where it stopped).
    pub fn memory_promote(&self, session_id: &str, wait: bool) -> Result<PromoteReceipt> {
        self.require_write(Permission::Ingest)?;
        let snapshot = self.own_session(session_id)?;
        let subject = self.owner().subject().to_string();
        let mut documents = Vec::with_capacity(snapshot.notes.len());
        for note in &snapshot.notes {
            let receipt = self.ingest(promotion_request(&subject, &snapshot.id, note, wait))?;
            documents.push(PromotedNote {
                note_id: note.id.clone(),
                document_id: receipt.document_id,
                state: receipt.state,
                idempotent_replay: receipt.idempotent_replay,
                error: receipt.error,
            });
        }
        let replayed = documents.iter().filter(|d| d.idempotent_replay).count();
        Ok(PromoteReceipt {
            session_id: snapshot.id.as_str().to_string(),
            notes: snapshot.notes.len(),
            stored: documents.len() - replayed,
            replayed,
            documents,
            nodes_not_promoted: snapshot.nodes.len(),
            edges_not_promoted: snapshot.edges.len(),
        })
    }

    /// Deletes the caller's session before it expires, releasing what it
    /// was charged at once (another identity's session is unknown here).
    pub fn memory_delete(&self, session_id: &str) -> Result<DeletedSession> {
        self.require_write(Permission::Ingest)?;
        let id = SessionId::parse(session_id)?;
        let deleted = self.service().working_memory().delete(&self.owner(), &id)?;
        log::info!(
            "working-memory session deleted: {} note(s), {} byte(s) released",
            deleted.notes,
            deleted.bytes_released
        );
        Ok(deleted)
    }

    /// The caller's live sessions (never another identity's).
    pub fn memory_sessions(&self) -> Result<Vec<SessionListing>> {
        self.refuse_anonymous()?;
        self.require(Permission::Query)?;
        Ok(self.service().working_memory().listing(&self.owner()))
    }

    /// The caller's sessions and the limits, for `alayasiki_status`.
    pub fn memory_status(&self) -> WorkingMemoryStatus {
        self.service().working_memory().status(&self.owner())
    }
}

/// The ingest request that promotes one note. Text notes keep their type
/// and original content; described files become their description as
/// plain text (the file's name, if any, titles the document). All notes
/// of a session share one source, so the indexer gives each note the end
/// of the previous one as context, as for any series of documents.
fn promotion_request(subject: &str, session: &SessionId, note: &Note, wait: bool) -> IngestRequest {
    // Notes are text (plain, Markdown, JSON) or files described by their
    // metadata (images, audio): anything not text is stored as its
    // description.
    let described = !matches!(
        crate::ingest::media::from_media_type(&note.media_type),
        Some(MediaKind::PlainText | MediaKind::Markdown | MediaKind::Json)
    );
    let (media_type, body) = if described {
        ("text/plain".to_string(), note.text.clone())
    } else {
        (
            note.media_type.clone(),
            note.original.clone().unwrap_or_else(|| note.text.clone()),
        )
    };
    let digest = ids::sha256_hex(
        json!([
            subject,
            session.as_str(),
            note.seq,
            media_type,
            body,
            note.metadata
        ])
        .to_string()
        .as_bytes(),
    );
    let key = format!("wm:{}:{}:{}", session.as_str(), note.seq, &digest[..16]);
    let filename = note.file.as_ref().and_then(|f| f.filename.clone());
    let content = match filename {
        Some(filename) => Content::File {
            filename: Some(filename),
            mime_type: Some(media_type),
            bytes: body.into_bytes(),
        },
        None => Content::Text {
            text: body,
            media_type: Some(media_type),
        },
    };
    IngestRequest {
        expires_at: None,
        content,
        metadata: note.metadata.clone(),
        idempotency_key: Some(key),
        // A note whose metadata names a source keeps it (ingest reads it
        // from there); the others are known by the session they came from.
        source: crate::service::metadata_source(&note.metadata)
            .is_none()
            .then(|| format!("working-memory:{}", session.as_str())),
        provenance: None,
        wait,
        allow_duplicate: false,
        replaces: Default::default(),
        title: None,
        scopes: Vec::new(),
    }
}
