//! `POST /v1/compact` through the real `alayasiki-api`: one tenant's
//! compactions are paced (`COMPACT_INTERVAL`), another tenant's are not
//! held up by them.

mod http_common;

use http_common::*;
use serde_json::{json, Value};

/// `COMPACT_INTERVAL`, in seconds.
const COMPACT_INTERVAL_SECS: u64 = 30;

fn ingest(api: &Api, token: &str, text: &str, source: &str) -> String {
    let r = api.call(
        "POST",
        "/v1/ingest",
        token,
        Some(&json!({"Text": {"content": text, "source": source}})),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["state"], "ready");
    r.json()["document_id"].as_str().unwrap().to_string()
}

/// Two notes stored (from sources of their own, so forgetting one
/// re-embeds nothing) and the first forgotten: a compaction has one slot
/// to drop.
fn forget_one(api: &Api, token: &str, word: &str) {
    let first = ingest(
        api,
        token,
        &format!("The {word} ferry left pier four at dawn."),
        "ferry",
    );
    ingest(
        api,
        token,
        &format!("The {word} lighthouse was painted in May."),
        "lighthouse",
    );
    let gone = api.call("DELETE", &format!("/v1/documents/{first}"), token, None);
    assert_eq!(gone.status, 200, "{}", String::from_utf8_lossy(&gone.body));
}

fn compact(api: &Api, token: &str) -> Reply {
    api.call("POST", "/v1/compact", token, Some(&json!({})))
}

#[test]
fn a_tenants_second_compaction_within_the_interval_gets_429_and_another_tenant_is_served() {
    let dir = TempDir::new("compact-pace");
    let api = Api::start(dir.path(), &[]);
    let a = admin("ops", "tenant-a");
    let b = admin("ops", "tenant-b");
    forget_one(&api, &a, "red");
    forget_one(&api, &b, "blue");

    let first = compact(&api, &a);
    assert_eq!(
        first.status,
        200,
        "{}",
        String::from_utf8_lossy(&first.body)
    );
    let rows = |r: &Reply| -> (Value, Value) {
        let j = r.json();
        (
            j["vector_rows_before"].clone(),
            j["vector_rows_after"].clone(),
        )
    };
    assert_eq!(rows(&first), (json!(2), json!(1)));

    // The same tenant at once, by the same admin or another: too soon,
    // with the seconds left of the interval, and nothing done.
    for token in [&a, &admin("ops-2", "tenant-a")] {
        let again = compact(&api, token);
        assert_eq!(
            again.status,
            429,
            "{}",
            String::from_utf8_lossy(&again.body)
        );
        assert_eq!(again.code(), "compaction_too_soon");
        let wait: u64 = again
            .header("Retry-After")
            .expect("Retry-After")
            .parse()
            .unwrap();
        assert!(
            (COMPACT_INTERVAL_SECS - 5..=COMPACT_INTERVAL_SECS).contains(&wait),
            "Retry-After: {wait}"
        );
    }

    // Another tenant is paced on its own.
    let other = compact(&api, &b);
    assert_eq!(
        other.status,
        200,
        "{}",
        String::from_utf8_lossy(&other.body)
    );
    assert_eq!(rows(&other), (json!(2), json!(1)));

    // Tenant A still serves: what it kept is found after its compaction.
    let q = api.call(
        "POST",
        "/v1/query",
        &a,
        Some(&json!({"query": "lighthouse painted", "mode": "evidence"})),
    );
    assert_eq!(q.status, 200);
    let text = q.json()["evidence"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("red lighthouse"), "{text}");
}
