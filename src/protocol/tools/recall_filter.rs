//! The `filter` and `include_history` arguments of a query: which stored
//! documents every lane draws from (`store::RecallFilter`).

use serde_json::{json, Map, Value};

use super::Args;
use crate::error::{Error, Result};
use crate::limits::{
    MAX_FILTER_FIELDS, MAX_FILTER_MEDIA_TYPE_BYTES, MAX_FILTER_TAGS, MAX_SOURCE_BYTES,
};
use crate::store::fields::MAX_FIELD_VALUE_BYTES;
use crate::store::{RecallFilter, SourceMatch, TagMatch};

/// Members of a `filter` object.
const MEMBERS: &[&str] = &[
    "source",
    "source_prefix",
    "media_type",
    "metadata",
    "tags",
    "tags_match",
    "since",
    "until",
];

/// Schema of the `filter` argument.
pub fn schema() -> Value {
    let time = |d: &str| {
        json!({"type": "string", "minLength": 10, "maxLength": 40, "description": format!(
            "{d} An RFC 3339 date (YYYY-MM-DD, UTC) or date-time with offset. A document's time \
             is the first full date in its metadata, else when it was stored."
        )})
    };
    json!({
        "type": "object",
        "description": "Search only stored documents that match every condition given; each \
    lane applies it before ranking. A working-memory session's notes are not filtered.",
        "properties": {
            "source": {"type": "string", "minLength": 1, "maxLength": MAX_SOURCE_BYTES,
                       "description": "Exactly this `source`."},
            "source_prefix": {"type": "string", "minLength": 1, "maxLength": MAX_SOURCE_BYTES,
                              "description": "A `source` starting with this (e.g. `notes/`)."},
            "media_type": {"type": "string", "minLength": 1, "maxLength": MAX_FILTER_MEDIA_TYPE_BYTES,
                           "description": "Exactly this media type (e.g. text/markdown)."},
            "metadata": {
                "type": "object",
                "maxProperties": MAX_FILTER_FIELDS,
                "additionalProperties": true,
                "description": format!("Top-level metadata members equal to these values (a \
    string, number or boolean; a list member matches when it holds the value). At most \
    {MAX_FILTER_FIELDS} (MAX_FILTER_FIELDS); values over {MAX_FIELD_VALUE_BYTES} bytes are not indexed.")
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": MAX_FIELD_VALUE_BYTES},
                "minItems": 1,
                "maxItems": MAX_FILTER_TAGS,
                "description": format!("Documents whose metadata `tags` list holds these (see \
    `tags_match`). At most {MAX_FILTER_TAGS} (MAX_FILTER_TAGS).")
            },
            "tags_match": {"type": "string", "enum": ["any", "all"],
                           "description": "any (default): at least one of `tags`; all: every one."},
            "since": time("Documents from this time on (inclusive)."),
            "until": time("Documents before this time (exclusive; a bare date includes that whole day).")
        },
        "additionalProperties": false
    })
}

/// Schema of the `include_history` argument.
pub fn include_history_schema() -> Value {
    json!({"type": "boolean", "description": "Also search versions that a newer version \
superseded (default false: current versions only)."})
}

/// The query's [`RecallFilter`] from its `filter` and `include_history`
/// arguments.
pub fn parse(args: &Args<'_>) -> Result<RecallFilter> {
    let mut filter = RecallFilter {
        include_history: args.boolean("include_history")?.unwrap_or(false),
        ..Default::default()
    };
    let Some(map) = args.object("filter")? else {
        return Ok(filter);
    };
    let f = Args::new(map, MEMBERS).map_err(|e| in_filter(&e))?;
    let bounded = |key: &str, max: usize| -> Result<Option<String>> {
        let Some(s) = f.string(key).map_err(|e| in_filter(&e))? else {
            return Ok(None);
        };
        if s.is_empty() || s.len() > max {
            return Err(Error::invalid(format!(
                "`filter.{key}` must be 1 to {max} bytes"
            )));
        }
        Ok(Some(s.to_string()))
    };
    filter.source = match (
        bounded("source", MAX_SOURCE_BYTES)?,
        bounded("source_prefix", MAX_SOURCE_BYTES)?,
    ) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid(
                "give `filter.source` (exact) or `filter.source_prefix`, not both",
            ))
        }
        (Some(s), None) => Some(SourceMatch::Exact(s)),
        (None, Some(p)) => Some(SourceMatch::Prefix(p)),
        (None, None) => None,
    };
    filter.media_type = bounded("media_type", MAX_FILTER_MEDIA_TYPE_BYTES)?;
    if let Some(fields) = f.object("metadata").map_err(|e| in_filter(&e))? {
        filter.fields = metadata(fields)?;
    }
    filter.tags = tags(&f)?;
    let time = |key: &str, end: bool| -> Result<Option<i64>> {
        let Some(s) = f.string(key).map_err(|e| in_filter(&e))? else {
            return Ok(None);
        };
        crate::clock::parse_time_bound(s, end)
            .map(Some)
            .ok_or_else(|| {
                Error::invalid(format!(
                "`filter.{key}` must be an RFC 3339 date (YYYY-MM-DD) or date-time with offset \
                 (YYYY-MM-DDTHH:MM:SSZ)"
            ))
            })
    };
    filter.since = time("since", false)?;
    filter.until = time("until", true)?;
    if let (Some(since), Some(until)) = (filter.since, filter.until) {
        if since >= until {
            return Err(Error::invalid(
                "`filter.since` must be before `filter.until`",
            ));
        }
    }
    Ok(filter)
}

/// An argument error inside `filter`, named as such.
fn in_filter(e: &Error) -> Error {
    match e {
        Error::InvalidInput(m) => Error::invalid(m.replacen('`', "`filter.", 1)),
        other => Error::invalid(other.to_string()),
    }
}

/// `metadata`'s pairs, each value as the store's fields hold it.
fn metadata(map: &Map<String, Value>) -> Result<Vec<(String, String)>> {
    if map.len() > MAX_FILTER_FIELDS {
        return Err(Error::LimitExceeded(format!(
            "`filter.metadata` has {} members; the limit is {MAX_FILTER_FIELDS} (MAX_FILTER_FIELDS)",
            map.len()
        )));
    }
    let mut out = Vec::with_capacity(map.len());
    for (key, value) in map {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => {
                return Err(Error::invalid(format!(
                    "`filter.metadata` values must be strings, numbers or booleans (`{}` is not)",
                    key.chars().take(64).collect::<String>()
                )))
            }
        };
        if key.is_empty() || key.len() > MAX_FIELD_VALUE_BYTES || text.len() > MAX_FIELD_VALUE_BYTES
        {
            return Err(Error::invalid(format!(
                "`filter.metadata` keys and values must be 1 to {MAX_FIELD_VALUE_BYTES} bytes \
                 (longer values are not indexed)"
            )));
        }
        out.push((key.clone(), text));
    }
    Ok(out)
}

/// `tags` and `tags_match`.
fn tags(f: &Args<'_>) -> Result<Option<TagMatch>> {
    let all = match f
        .choice("tags_match", &["any", "all"])
        .map_err(|e| in_filter(&e))?
    {
        Some("all") => true,
        Some(_) | None => false,
    };
    let Some(value) = f.value("tags") else {
        if f.has("tags_match") {
            return Err(Error::invalid("`filter.tags_match` needs `filter.tags`"));
        }
        return Ok(None);
    };
    let bad = || {
        Error::invalid(format!(
            "`filter.tags` must be a non-empty array of strings of 1 to {MAX_FIELD_VALUE_BYTES} bytes"
        ))
    };
    let items = value.as_array().filter(|a| !a.is_empty()).ok_or_else(bad)?;
    if items.len() > MAX_FILTER_TAGS {
        return Err(Error::LimitExceeded(format!(
            "`filter.tags` has {} tags; the limit is {MAX_FILTER_TAGS} (MAX_FILTER_TAGS)",
            items.len()
        )));
    }
    let mut tags = Vec::with_capacity(items.len());
    for item in items {
        let tag = item
            .as_str()
            .filter(|t| !t.is_empty() && t.len() <= MAX_FIELD_VALUE_BYTES)
            .ok_or_else(bad)?;
        if !tags.iter().any(|t: &String| t == tag) {
            tags.push(tag.to_string());
        }
    }
    Ok(Some(TagMatch { tags, all }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_json(v: Value) -> Result<RecallFilter> {
        let map = v.as_object().unwrap().clone();
        parse(&Args::new(&map, &["filter", "include_history"]).unwrap())
    }

    #[test]
    fn every_member_is_read() {
        let f = parse_json(json!({"include_history": true, "filter": {
            "source_prefix": "notes/", "media_type": "text/markdown",
            "metadata": {"project": "atlas", "priority": 2, "done": false},
            "tags": ["ops", "ops", "db"], "tags_match": "all",
            "since": "2026-11-30", "until": "2026-12-01"
        }}))
        .unwrap();
        assert!(f.include_history);
        assert_eq!(f.source, Some(SourceMatch::Prefix("notes/".into())));
        assert_eq!(f.media_type.as_deref(), Some("text/markdown"));
        let mut fields = f.fields.clone();
        fields.sort();
        assert_eq!(
            fields,
            [
                ("done".to_string(), "false".to_string()),
                ("priority".into(), "2".into()),
                ("project".into(), "atlas".into())
            ]
        );
        assert_eq!(
            f.tags,
            Some(TagMatch {
                tags: vec!["ops".into(), "db".into()],
                all: true
            })
        );
        let day = crate::clock::parse_rfc3339("2026-11-30").unwrap();
        assert_eq!(f.since, Some(day));
        // A bare `until` date includes that whole day.
        assert_eq!(f.until, Some(day + 2 * 86_400_000));
    }

    #[test]
    fn bad_filters_are_refused_with_the_member_named() {
        let err = |v: Value| parse_json(json!({ "filter": v })).unwrap_err().to_string();
        assert!(err(json!({"sorce": "x"})).contains("`filter.sorce`"));
        assert!(err(json!({"source": "a", "source_prefix": "b"})).contains("not both"));
        assert!(err(json!({"since": "yesterday"})).contains("`filter.since` must be an RFC 3339"));
        assert!(err(json!({"until": "2026-02-30"})).contains("`filter.until`"));
        assert!(err(json!({"since": "2026-12-02", "until": "2026-12-01"})).contains("before"));
        assert!(err(json!({"metadata": {"a": {"b": 1}}})).contains("strings, numbers or booleans"));
        assert!(err(json!({"tags": []})).contains("non-empty"));
        assert!(err(json!({"tags": [3]})).contains("non-empty"));
        assert!(err(json!({"tags_match": "all"})).contains("needs `filter.tags`"));
        assert!(err(json!({"tags": ["a"], "tags_match": "some"})).contains("`filter.tags_match`"));
        assert!(err(json!({"source": ""})).contains("1 to"));
        assert!(parse_json(json!({"filter": "runbook"})).is_err());
    }

    #[test]
    fn filter_limits_hold_at_their_edges() {
        let tags = |n: usize| json!({"filter": {"tags": (0..n).map(|i| format!("t{i}")).collect::<Vec<_>>()}});
        assert!(parse_json(tags(MAX_FILTER_TAGS)).is_ok());
        let e = parse_json(tags(MAX_FILTER_TAGS + 1)).unwrap_err();
        assert_eq!(e.code(), "limit_exceeded");
        let fields = |n: usize| {
            let m: Map<String, Value> = (0..n).map(|i| (format!("k{i}"), json!(i))).collect();
            json!({"filter": {"metadata": m}})
        };
        assert!(parse_json(fields(MAX_FILTER_FIELDS)).is_ok());
        assert_eq!(
            parse_json(fields(MAX_FILTER_FIELDS + 1))
                .unwrap_err()
                .code(),
            "limit_exceeded"
        );
        let value = |n: usize| json!({"filter": {"metadata": {"k": "v".repeat(n)}}});
        assert!(parse_json(value(MAX_FIELD_VALUE_BYTES)).is_ok());
        assert!(parse_json(value(MAX_FIELD_VALUE_BYTES + 1)).is_err());
        let source = |n: usize| json!({"filter": {"source": "s".repeat(n)}});
        assert!(parse_json(source(MAX_SOURCE_BYTES)).is_ok());
        assert!(parse_json(source(MAX_SOURCE_BYTES + 1)).is_err());
    }
}
