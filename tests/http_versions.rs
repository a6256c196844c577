//! Document versions through the real `alayasiki-api`: `PATCH
//! /v1/documents/{id}` stores a new version (`alayasiki_update`) with what
//! the body changes and the rest kept; `GET /v1/documents/{id}` of any
//! version names its successor and the chain; the list shows current
//! versions unless `include_history=true`; who may update, and what is
//! refused.

mod http_common;

use http_common::{admin, claims, sign, Api, TempDir};
use serde_json::{json, Value};

fn ok(api: &Api, method: &str, path: &str, token: &str, body: Option<&Value>) -> Value {
    let r = api.call(method, path, token, body);
    assert_eq!(
        r.status,
        200,
        "{method} {path}: {}",
        String::from_utf8_lossy(&r.body)
    );
    r.json()
}

fn ids(list: &Value) -> Vec<String> {
    list["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["document_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn patch_stores_a_new_version_and_get_shows_the_chain() {
    let dir = TempDir::new("http-versions");
    let api = Api::start(dir.path(), &[]);
    let token = admin("ada", "acme");
    let first = ok(
        &api,
        "POST",
        "/v1/ingest",
        &token,
        Some(
            &json!({"content": "# Backups\n\nThey run at 02:00.", "media_type": "text/markdown",
                     "source": "ops.md", "metadata": {"team": "ops"}, "provenance": "user"}),
        ),
    );
    let old = first["document_id"].as_str().unwrap().to_string();

    // Metadata only: content, title, source and provenance are kept.
    let meta = ok(
        &api,
        "PATCH",
        &format!("/v1/documents/{old}"),
        &token,
        Some(&json!({"metadata": {"team": "platform"}})),
    );
    let second = meta["document_id"].as_str().unwrap().to_string();
    assert_eq!(meta["supersedes"], json!([old]), "{meta}");
    let doc = ok(
        &api,
        "GET",
        &format!("/v1/documents/{second}"),
        &token,
        None,
    );
    assert_eq!(doc["metadata"], json!({"team": "platform"}), "{doc}");
    assert_eq!(doc["title"], "Backups");
    assert_eq!(doc["source"], "ops.md");
    assert_eq!(doc["provenance"], "user");
    assert_eq!(doc["media_type"], "text/markdown");
    assert_eq!(doc["text"], "# Backups\n\nThey run at 02:00.");

    // New content and title.
    let third = ok(
        &api,
        "PATCH",
        &format!("/v1/documents/{second}"),
        &token,
        Some(
            &json!({"content": "They run at 03:00.", "title": "Backups (new hour)",
                     "idempotency_key": "backups-3"}),
        ),
    )["document_id"]
        .as_str()
        .unwrap()
        .to_string();
    let was = ok(&api, "GET", &format!("/v1/documents/{old}"), &token, None);
    assert_eq!(was["superseded_by"], second.as_str(), "{was}");
    assert!(was["superseded_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(was["metadata"], json!({"team": "ops"}), "history is kept");
    let now = ok(&api, "GET", &format!("/v1/documents/{third}"), &token, None);
    assert!(now.get("superseded_by").is_none(), "{now}");
    assert_eq!(now["title"], "Backups (new hour)");
    // Bare text edits a Markdown note as Markdown.
    assert_eq!(now["media_type"], "text/markdown", "{now}");
    let chain: Vec<(&str, bool)> = now["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["document_id"].as_str().unwrap(),
                v["current"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        chain,
        vec![
            (old.as_str(), false),
            (second.as_str(), false),
            (third.as_str(), true)
        ]
    );
    assert_eq!(was["versions"], now["versions"]);

    // The list: current versions, or the whole history on request.
    let current = ok(&api, "GET", "/v1/documents", &token, None);
    assert_eq!(ids(&current), vec![third.clone()]);
    assert_eq!(current["total"], 1);
    let all = ok(
        &api,
        "GET",
        "/v1/documents?include_history=true",
        &token,
        None,
    );
    assert_eq!(ids(&all), vec![third.clone(), second.clone(), old.clone()]);
    assert_eq!(all["total"], 3);
    assert!(all["documents"][0]["superseded_at"].is_null());
    assert!(all["documents"][2]["superseded_at"].is_string());
    let r = api.call("GET", "/v1/documents?include_history=yes", &token, None);
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_input"));

    // A superseded version cannot be updated again (it names the current).
    let r = api.call(
        "PATCH",
        &format!("/v1/documents/{old}"),
        &token,
        Some(&json!({"content": "They run at 04:00."})),
    );
    assert_eq!(r.status, 409, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains(&third));
    // The id is the path's.
    let r = api.call(
        "PATCH",
        &format!("/v1/documents/{third}"),
        &token,
        Some(&json!({"document_id": old, "content": "x"})),
    );
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_input"));
    let r = api.call(
        "PATCH",
        "/v1/documents/doc_unknown",
        &token,
        Some(&json!({"content": "x"})),
    );
    assert_eq!((r.status, r.code().as_str()), (404, "not_found"));
    let r = api.call("PATCH", &format!("/v1/documents/{third}"), &token, None);
    assert_eq!(
        (r.status, r.code().as_str()),
        (400, "invalid_input"),
        "an update changes something"
    );

    // Updating needs the ingest permission; another tenant's id is unknown.
    let reader = sign(claims("rita", "acme", &["reader"], ""));
    let r = api.call(
        "PATCH",
        &format!("/v1/documents/{third}"),
        &reader,
        Some(&json!({"content": "x"})),
    );
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    let other = admin("olga", "globex");
    let r = api.call(
        "PATCH",
        &format!("/v1/documents/{third}"),
        &other,
        Some(&json!({"content": "x"})),
    );
    assert_eq!((r.status, r.code().as_str()), (404, "not_found"));

    // Deleting any version deletes them all.
    let gone = ok(
        &api,
        "DELETE",
        &format!("/v1/documents/{second}"),
        &token,
        None,
    );
    assert_eq!(gone["documents"], 3, "{gone}");
    let all = ok(
        &api,
        "GET",
        "/v1/documents?include_history=true",
        &token,
        None,
    );
    assert_eq!(all["total"], 0);
}
