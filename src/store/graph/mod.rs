//! Storage of the knowledge graph: entities (resolved by key, alias and,
//! across documents, by name through `store::resolution`), their
//! mentions, relations with per-provenance evidence counts and Beta
//! confidence, supersession of functional facts, and graph versions.
//!
//! Split by what each part owns:
//! - [`record`]: writing one document's graph fragment (entities,
//!   mentions, relations, evidence, supersession).
//! - [`forget`]: removing one document's contributions again, bringing
//!   back the facts it had superseded; [`forget_names`]: the names only
//!   it gave an entity that outlives it.
//! - [`facts`]: facts that change: the statements of a single-valued
//!   fact and which of them holds, by document time.
//! - [`evidence`]: a relation's evidence counters and the Beta confidence
//!   computed from them.
//! - [`numbering`]: entity and relation keys numbered within their
//!   tenant, and the ids a tenant knows them by.
//! - [`read`]: the graph queries of a [`TenantReader`](super::TenantReader).
//! - [`browse`]: the memory browser's reads (entities, one entity's
//!   relations and evidence, neighbourhoods).

mod browse;
mod evidence;
mod facts;
mod forget;
mod forget_names;
mod numbering;
mod read;
mod record;

pub use browse::{EntityDetail, EntityRelation, GraphEdge, RelationEvidence};
pub use facts::{FactStatement, MAX_FACT_STATEMENTS};
pub use read::{EntityRow, RelationRow};
