//! The routes of the HTTP server: what a request's path is, the methods
//! it allows, and the permission it needs before its body is read.
//! Paths are matched exactly; ids are one percent-decoded path segment.

use super::http::Method;
use super::{auth, http_api, streamable, ui};
use crate::protocol::tools;
use crate::service::Permission;

/// The routes. Paths are matched exactly; ids are one path segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Route {
    Health,
    /// Protected resource metadata (RFC 9728): what follows
    /// [`auth::METADATA_PATH`] in the path.
    ResourceMetadata(String),
    /// Streamable HTTP ([`streamable`]).
    Mcp,
    SseOpen,
    SseMessage,
    Tools,
    Tool(String),
    /// `GET /v1/documents`: the newest-first list.
    Documents,
    Document(String),
    /// `GET /v1/documents/{id}/chunks`.
    Chunks(String),
    Original(String),
    /// `GET /v1/entities`: most mentioned, or matching `q`.
    Entities,
    Entity(String),
    /// `GET /v1/graph`: a neighbourhood.
    Graph,
    Communities,
    /// `GET /v1/sessions`: the caller's working-memory sessions.
    Sessions,
    /// `POST /v1/compact`: the caller's tenant compacted.
    Compact,
    Session(String),
    /// `POST /v1/uploads`: a file declared, an upload URL answered.
    Uploads,
    /// `PUT /v1/uploads/{ticket}`: a declared file's bytes (no token).
    Upload(String),
    /// The memory browser's page and assets ([`ui`]): what follows `/ui`.
    Ui(String),
}

/// What a path is, and the methods it allows.
pub(super) fn resolve(path: &str) -> Option<(Route, &'static [Method])> {
    use Method::*;
    let (route, methods): (Route, &'static [Method]) = match path {
        "/health" => (Route::Health, &[Get]),
        streamable::MCP_PATH => (Route::Mcp, &[Post, Get, Delete]),
        "/mcp/sse" => (Route::SseOpen, &[Get]),
        "/mcp/messages" | "/mcp/messages/" => (Route::SseMessage, &[Post]),
        "/v1/tools" => (Route::Tools, &[Get]),
        "/v1/ingest" => (Route::Tool(http_api::INGEST_TOOL.into()), &[Post]),
        "/v1/query" => (Route::Tool(http_api::QUERY_TOOL.into()), &[Post]),
        "/v1/status" => (Route::Tool(http_api::STATUS_TOOL.into()), &[Get]),
        "/v1/memory/write" => (Route::Tool(http_api::MEMORY_WRITE_TOOL.into()), &[Post]),
        "/v1/memory/read" => (Route::Tool(http_api::MEMORY_READ_TOOL.into()), &[Post]),
        "/v1/share" => (Route::Tool(http_api::SHARE_TOOL.into()), &[Post]),
        "/v1/documents" => (Route::Documents, &[Get]),
        "/v1/entities" => (Route::Entities, &[Get]),
        "/v1/graph" => (Route::Graph, &[Get]),
        "/v1/communities" => (Route::Communities, &[Get]),
        "/v1/sessions" => (Route::Sessions, &[Get]),
        "/v1/compact" => (Route::Compact, &[Post]),
        "/v1/uploads" => (Route::Uploads, &[Post]),
        _ => {
            if let Some(asset) = ui::asset_path(path) {
                return Some((Route::Ui(asset.to_string()), &[Get]));
            }
            if let Some(suffix) = path
                .strip_prefix(auth::METADATA_PATH)
                .filter(|s| s.is_empty() || s.starts_with('/'))
            {
                (Route::ResourceMetadata(suffix.to_string()), &[Get])
            } else if let Some(name) = single_segment(path, "/v1/tools/") {
                (Route::Tool(name), &[Post])
            } else if let Some(id) = single_segment(path, "/v1/documents/") {
                (Route::Document(id), &[Get, Delete, Patch])
            } else if let Some(id) = path
                .strip_suffix(ORIGINAL_SUFFIX)
                .and_then(|p| single_segment(p, "/v1/documents/"))
            {
                (Route::Original(id), &[Get])
            } else if let Some(id) = path
                .strip_suffix(CHUNKS_SUFFIX)
                .and_then(|p| single_segment(p, "/v1/documents/"))
            {
                (Route::Chunks(id), &[Get])
            } else if let Some(id) = single_segment(path, "/v1/entities/") {
                (Route::Entity(id), &[Get])
            } else if let Some(id) = single_segment(path, "/v1/sessions/") {
                (Route::Session(id), &[Get, Delete])
            } else if let Some(ticket) = single_segment(path, crate::service::UPLOAD_PATH) {
                (Route::Upload(ticket), &[Put])
            } else {
                return None;
            }
        }
    };
    Some((route, methods))
}

/// What follows a document's path to name its original.
const ORIGINAL_SUFFIX: &str = "/original";
/// What follows a document's path to name its chunks.
const CHUNKS_SUFFIX: &str = "/chunks";

/// The one non-empty segment after `prefix`, percent-decoded.
fn single_segment(path: &str, prefix: &str) -> Option<String> {
    let rest = path.strip_prefix(prefix)?;
    if rest.is_empty() || rest.contains('/') {
        return None;
    }
    crate::text::percent_decode(rest)
}

/// What a route needs beyond any permission, when it says so before its
/// body is read: a tool's permission (an unknown tool needs none: it is
/// 404), or query for reading documents, the graph and sessions. `None`
/// for the routes open to
/// any permission, MCP among them.
pub(super) fn route_permission(route: &Route, method: &Method) -> Option<Permission> {
    match route {
        Route::Tool(name) => tools::find(name).map(|t| t.permission),
        Route::Document(_) if *method == Method::Delete => {
            tools::find(http_api::FORGET_TOOL).map(|t| t.permission)
        }
        Route::Document(_) if *method == Method::Patch => {
            tools::find(http_api::UPDATE_TOOL).map(|t| t.permission)
        }
        Route::Session(_) if *method == Method::Delete => {
            tools::find(http_api::MEMORY_DELETE_TOOL).map(|t| t.permission)
        }
        Route::Documents
        | Route::Document(_)
        | Route::Original(_)
        | Route::Chunks(_)
        | Route::Entities
        | Route::Entity(_)
        | Route::Graph
        | Route::Communities
        | Route::Sessions
        | Route::Session(_) => Some(Permission::Query),
        Route::Compact => Some(Permission::Admin),
        Route::Uploads => tools::find(http_api::INGEST_TOOL).map(|t| t.permission),
        _ => None,
    }
}

/// Whether the anonymous caller ([`auth::anonymous`]) may use `route`
/// with `method`: the MCP endpoints, the tool table, reading tools, and
/// the reads of documents and the graph. Everything that writes, and
/// working-memory sessions (which would be one shared by every anonymous
/// client), is refused before the body is read.
pub(super) fn open_to_anonymous(route: &Route, method: &Method) -> bool {
    match route {
        Route::Mcp | Route::SseOpen | Route::SseMessage | Route::Tools => true,
        Route::Tool(name) => tools::find(name).is_some_and(tools::open_to_anonymous),
        Route::Documents
        | Route::Original(_)
        | Route::Chunks(_)
        | Route::Entities
        | Route::Entity(_)
        | Route::Graph
        | Route::Communities => true,
        Route::Document(_) => *method == Method::Get,
        Route::Sessions | Route::Session(_) | Route::Compact | Route::Uploads => false,
        // Answered before anyone is identified.
        Route::Health | Route::ResourceMetadata(_) | Route::Ui(_) | Route::Upload(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_resolve_with_their_methods() {
        assert_eq!(resolve("/health").unwrap().0, Route::Health);
        assert_eq!(resolve("/mcp/messages/").unwrap().0, Route::SseMessage);
        assert_eq!(
            resolve("/v1/tools/alayasiki_query").unwrap().0,
            Route::Tool("alayasiki_query".into())
        );
        assert_eq!(
            resolve("/v1/documents/doc_1%2F2").unwrap().0,
            Route::Document("doc_1/2".into())
        );
        assert!(resolve("/v1/documents/").is_none());
        assert_eq!(
            resolve("/v1/uploads/ab12").unwrap(),
            (Route::Upload("ab12".into()), &[Method::Put][..])
        );
        assert!(resolve("/v1/uploads/").is_none());
        assert!(resolve("/v1/uploads/a/b").is_none());
        assert!(resolve("/v1/documents/a/b").is_none());
        assert_eq!(
            resolve("/v1/documents/doc_1/original").unwrap(),
            (Route::Original("doc_1".into()), &[Method::Get][..])
        );
        assert!(resolve("/v1/documents//original").is_none());
        assert!(resolve("/v1/documents/a/b/original").is_none());
        assert!(resolve("/v1/documents/%zz").is_none());
        assert!(resolve("/nope").is_none());
        assert_eq!(resolve("/mcp/sse").unwrap().1, &[Method::Get]);
        assert_eq!(
            resolve("/.well-known/oauth-protected-resource").unwrap(),
            (Route::ResourceMetadata(String::new()), &[Method::Get][..])
        );
        assert_eq!(
            resolve("/.well-known/oauth-protected-resource/mcp")
                .unwrap()
                .0,
            Route::ResourceMetadata("/mcp".into())
        );
        assert!(resolve("/.well-known/oauth-protected-resourcex").is_none());
        assert_eq!(
            resolve("/v1/documents").unwrap(),
            (Route::Documents, &[Method::Get][..])
        );
        assert_eq!(resolve("/ui").unwrap().0, Route::Ui(String::new()));
        assert_eq!(
            resolve("/ui/app.js").unwrap().0,
            Route::Ui("/app.js".into())
        );
        assert!(resolve("/uix").is_none());
        assert_eq!(
            resolve("/v1/documents/doc_1/chunks").unwrap(),
            (Route::Chunks("doc_1".into()), &[Method::Get][..])
        );
        assert!(resolve("/v1/documents//chunks").is_none());
        assert_eq!(resolve("/v1/entities").unwrap().0, Route::Entities);
        assert_eq!(
            resolve("/v1/entities/ent_4").unwrap(),
            (Route::Entity("ent_4".into()), &[Method::Get][..])
        );
        assert!(resolve("/v1/entities/ent_4/x").is_none());
        assert_eq!(resolve("/v1/graph").unwrap().0, Route::Graph);
        assert_eq!(resolve("/v1/communities").unwrap().0, Route::Communities);
        assert_eq!(resolve("/v1/sessions").unwrap().0, Route::Sessions);
        assert_eq!(
            resolve("/v1/compact").unwrap(),
            (Route::Compact, &[Method::Post][..])
        );
        assert_eq!(
            resolve("/v1/sessions/s%201").unwrap().0,
            Route::Session("s 1".into())
        );
    }
}
