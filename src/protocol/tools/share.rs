//! `alayasiki_share`: grant documents the caller sees into a memory scope
//! it may write, so callers of that scope see them too.
//!
//! A grant, not a copy: the document stays one document (forgetting it
//! forgets it in every scope). The sharing itself is `Memory::share`,
//! shared with the HTTP API (`POST /v1/share`).

use serde_json::{json, Map, Value};

use super::output::{integer, list, record, string};
use super::schema::{label, object};
use super::{Args, Tool};
use crate::error::{Error, Result};
use crate::limits::{MAX_MEMORY_SCOPE_NAME_BYTES, MAX_SHARE_DOCUMENTS, MAX_SOURCE_BYTES};
use crate::service::{Memory, Permission, ShareTarget};
use crate::store::DocumentFilter;

pub static TOOL: Tool = Tool {
    name: "alayasiki_share",
    description: "Share documents into a memory scope (a team's or a project's part of this \
memory), so that everyone whose token grants that scope sees them in queries, lists and reads. \
Name the documents by `document_ids`, or give a `filter` (`source`, `media_type`); the caller \
must see each document and be allowed to write the `scope`. A grant, not a copy: the document \
keeps its id and forgetting it removes it from every scope. Sharing a document already in the \
scope changes nothing.",
    input_schema: schema,
    output_schema,
    permission: Permission::Ingest,
    mutates: true,
    call: |memory, args| {
        let (target, scope) = parse(args)?;
        Ok(serde_json::to_value(memory_share(
            memory, &target, &scope,
        )?)?)
    },
};

fn memory_share(
    memory: &Memory<'_>,
    target: &ShareTarget,
    scope: &str,
) -> Result<crate::service::ShareReceipt> {
    memory.share(target, scope)
}

const ARGS: &[&str] = &["document_ids", "filter", "scope"];

fn schema() -> Value {
    object(
        Some("Give `scope` and exactly one of `document_ids` or `filter`."),
        json!({
            "document_ids": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": MAX_SOURCE_BYTES},
                "minItems": 1,
                "maxItems": MAX_SHARE_DOCUMENTS,
                "description": format!("Ids of the documents to share (at most {MAX_SHARE_DOCUMENTS}, MAX_SHARE_DOCUMENTS).")
            },
            "filter": object(
                Some(&format!("The current documents to share: every one matching all that is given (at most {MAX_SHARE_DOCUMENTS} may match).")),
                json!({
                    "source": label("Documents whose `source` is exactly this.", MAX_SOURCE_BYTES),
                    "media_type": label("Documents of this media type.", 255)
                }),
                &[],
            ),
            "scope": label(&format!("The memory scope to share into: a-z, 0-9, '.', '_', '-' (at most {MAX_MEMORY_SCOPE_NAME_BYTES} bytes)."), MAX_MEMORY_SCOPE_NAME_BYTES)
        }),
        &["scope"],
    )
}

fn output_schema() -> Value {
    record(
        "What was shared.",
        json!({
            "scope": string("The memory scope shared into."),
            "shared": list("Documents granted into the scope now.", string("A document id.")),
            "already_shared": list("Documents that were in the scope already (their first grant stands).", string("A document id.")),
            "granted_by": string("The subject that shared them."),
            "granted_at": integer("When (Unix milliseconds).", 0)
        }),
        &[
            "scope",
            "shared",
            "already_shared",
            "granted_by",
            "granted_at",
        ],
    )
}

/// Parses `alayasiki_share` arguments (also the HTTP API's share body).
pub fn parse(map: &Map<String, Value>) -> Result<(ShareTarget, String)> {
    let args = Args::new(map, ARGS)?;
    let scope = args.required_string("scope")?.to_string();
    let target = match (args.value("document_ids"), args.object("filter")?) {
        (Some(ids), None) => {
            let ids = ids
                .as_array()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| Error::invalid("`document_ids` must be a non-empty list of ids"))?;
            if ids.len() > MAX_SHARE_DOCUMENTS {
                return Err(Error::LimitExceeded(format!(
                    "`document_ids` names {} documents; at most {MAX_SHARE_DOCUMENTS} per share \
                     (MAX_SHARE_DOCUMENTS)",
                    ids.len()
                )));
            }
            ShareTarget::Documents(
                ids.iter()
                    .map(|v| {
                        v.as_str().map(str::to_string).ok_or_else(|| {
                            Error::invalid("`document_ids` must be a list of document ids")
                        })
                    })
                    .collect::<Result<_>>()?,
            )
        }
        (None, Some(filter)) => {
            let f = Args::new(filter, &["source", "media_type"])?;
            let source = f.string("source")?.map(str::to_string);
            let media_type = f.string("media_type")?.map(str::to_string);
            if source.is_none() && media_type.is_none() {
                return Err(Error::invalid(
                    "`filter` needs `source` or `media_type` (sharing everything at once is not \
                     offered)",
                ));
            }
            ShareTarget::Filter(DocumentFilter {
                source,
                media_type,
                ..Default::default()
            })
        }
        _ => {
            return Err(Error::invalid(
                "give exactly one of `document_ids` or `filter`",
            ))
        }
    };
    Ok((target, scope))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_json(v: Value) -> Result<(ShareTarget, String)> {
        parse(v.as_object().unwrap())
    }

    #[test]
    fn one_target_and_a_scope_are_required_and_the_count_is_bounded() {
        assert!(parse_json(json!({"document_ids": ["d"], "scope": "team-a"})).is_ok());
        assert!(parse_json(json!({"filter": {"source": "s"}, "scope": "team-a"})).is_ok());
        assert!(parse_json(json!({"document_ids": ["d"]})).is_err());
        assert!(parse_json(json!({"scope": "team-a"})).is_err());
        assert!(parse_json(json!({"filter": {}, "scope": "a"})).is_err());
        let ids = |n: usize| (0..n).map(|i| format!("d{i}")).collect::<Vec<_>>();
        assert!(
            parse_json(json!({"document_ids": ids(MAX_SHARE_DOCUMENTS), "scope": "a"})).is_ok()
        );
        assert!(matches!(
            parse_json(json!({"document_ids": ids(MAX_SHARE_DOCUMENTS + 1), "scope": "a"})),
            Err(Error::LimitExceeded(_))
        ));
    }
}
