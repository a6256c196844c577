//! The service layer: what a caller can do with memory, independent of the
//! transport that carried the request.
//!
//! Every tool, HTTP route and CLI subcommand calls a [`Memory`] obtained
//! from [`MemoryService::for_caller`], bound to the caller's [`Principal`].

mod memory;
pub mod principal;
pub mod working_memory;

pub use crate::store::{
    DocumentFilter, DocumentOrder, DocumentSelector, Forgotten, Replaces, Version,
};
pub use memory::uploads::{Unclaimed, UploadDeclaration, UploadOffer, UploadTicket, UPLOAD_PATH};
pub use memory::{
    metadata_source, vector_spec, BrowserStatus, ChunkEntity, ChunkPage, ChunkView, CommunityRef,
    Content, EntityCard, EntityRef, EntityView, EvidenceView, ForgetReport, GraphEdgeView,
    GraphNode, GraphView, IngestReceipt, IngestRequest, Memory, MemoryService, Original,
    OwnerProcess, OwnerStatus, PreparedIngest, QueuedIngest, RelationView, Restore, ShareReceipt,
    ShareTarget, Status, UpdateRequest, ANONYMOUS_REFUSAL, FORGET_BATCH, FORGET_REPORT_ITEMS,
    STRANDED,
};
pub use principal::{MemoryAccess, MemoryGrant, Permission, Principal, Role, ANONYMOUS_SUBJECT};
pub use working_memory::{
    DeletedSession, MemoryWrite, PromoteReceipt, SessionListing, WriteReceipt,
};
