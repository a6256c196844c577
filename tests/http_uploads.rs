//! Upload tickets through the real `alayasiki-api`: a file declared (over
//! MCP or `POST /v1/uploads`), then sent with one tokenless `PUT` to the
//! URL the declaration answered. Whatever goes wrong with an upload (its
//! size, digest, ticket, expiry, or a kill while it arrives), nothing of
//! it is stored and no temporary file is left.

mod http_common;

use http_common::*;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::{BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// `MAX_UPLOAD_BYTES` (src/limits.rs).
const MAX_UPLOAD_BYTES: usize = 4 * 1024 * 1024;
/// `MAX_OPEN_UPLOAD_TICKETS` (src/limits.rs).
const MAX_OPEN_UPLOAD_TICKETS: usize = 64;

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A Markdown file of exactly `size` bytes that says `marker`.
fn markdown(marker: &str, size: usize) -> Vec<u8> {
    let mut text = format!("# {marker}\n\nThe {marker} runbook says backups run nightly.\n");
    let line = "Routine maintenance notes keep the service healthy and observable.\n";
    while text.len() + line.len() <= size {
        text.push_str(line);
    }
    while text.len() < size {
        text.push('.');
    }
    text.into_bytes()
}

/// Declares `bytes` over the JSON API as `filename`; the answer.
fn declare(api: &Api, token: &str, filename: &str, bytes: &[u8], extra: Value) -> Reply {
    let mut body = json!({
        "upload": {"filename": filename, "size": bytes.len(), "sha256": sha256(bytes)}
    });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    api.call("POST", "/v1/uploads", token, Some(&body))
}

/// The path of an upload URL on this server.
fn path_of(api: &Api, offer: &Value) -> String {
    let url = offer["upload_url"].as_str().expect("upload_url");
    let prefix = format!("http://{}", api.host());
    url.strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{url} is not on {prefix}"))
        .to_string()
}

/// A tokenless `PUT` of `body` declaring `length`.
fn put(addr: SocketAddr, path: &str, body: &[u8], length: usize) -> Reply {
    let headers = vec![
        (
            "Content-Type".to_string(),
            "application/octet-stream".to_string(),
        ),
        ("Content-Length".to_string(), length.to_string()),
    ];
    request(addr, "PUT", path, &headers, Some(body))
}

/// Sends `bytes` as they are and reads the reply.
fn raw(addr: SocketAddr, bytes: &[u8], close_write: bool) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    stream.write_all(bytes).unwrap();
    if close_write {
        stream.shutdown(Shutdown::Write).unwrap();
    }
    read_reply(&mut BufReader::new(stream))
}

fn document_count(api: &Api, token: &str) -> u64 {
    let r = api.call("GET", "/v1/documents", token, None);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["total"].as_u64().expect("total")
}

/// Files left in the data directory's upload folder.
fn partial_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("uploads"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_declared_file_is_put_then_found_and_its_url_is_used_up() {
    let dir = TempDir::new("upload-basic");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let bytes = markdown("Zanzibar", 20_000);
    let declared = declare(
        &api,
        &token,
        "runbook.md",
        &bytes,
        json!({"source": "wiki/runbook", "metadata": {"team": "ops"}}),
    );
    assert_eq!(
        declared.status,
        200,
        "{}",
        String::from_utf8_lossy(&declared.body)
    );
    let offer = declared.json();
    assert_eq!(offer["method"], "PUT");
    assert_eq!(offer["size"], bytes.len());
    assert_eq!(offer["max_bytes"], MAX_UPLOAD_BYTES);
    assert!(
        offer["expires_at"].as_str().unwrap().ends_with('Z'),
        "{offer}"
    );
    let path = path_of(&api, &offer);
    let ticket = path.strip_prefix("/v1/uploads/").unwrap();
    assert_eq!(ticket.len(), 64, "a 256-bit ticket in hex: {ticket}");
    assert_eq!(
        document_count(&api, &token),
        0,
        "a declaration stores nothing"
    );

    let stored = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!(
        stored.status,
        200,
        "{}",
        String::from_utf8_lossy(&stored.body)
    );
    let receipt = stored.json();
    assert_eq!(receipt["state"], "ready", "{receipt}");
    assert_eq!(receipt["media_type"], "text/markdown");
    assert_eq!(receipt["bytes"], bytes.len());
    let doc = receipt["document_id"].as_str().unwrap();

    let found = api.call(
        "POST",
        "/v1/query",
        &token,
        Some(&json!({"query": "Zanzibar runbook backups"})),
    );
    let evidence = &found.json()["evidence"][0];
    assert_eq!(evidence["document_id"], doc, "{}", found.json());
    let original = api.call(
        "GET",
        &format!("/v1/documents/{doc}/original"),
        &token,
        None,
    );
    assert_eq!(original.body, bytes, "the exact bytes are the original");
    let listed = api
        .call("GET", &format!("/v1/documents/{doc}"), &token, None)
        .json();
    assert_eq!(listed["source"], "wiki/runbook", "{listed}");
    assert_eq!(listed["metadata"]["team"], "ops", "{listed}");

    let again = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!(again.status, 404);
    assert_eq!(again.code(), "unknown_upload");
    assert_eq!(document_count(&api, &token), 1);
    // The document is the declarer's: another tenant does not see it.
    assert_eq!(document_count(&api, &admin("bob", "other")), 0);
}

#[test]
fn the_ingest_tool_over_mcp_answers_an_upload_url() {
    let dir = TempDir::new("upload-mcp");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let mut sse = Sse::open(api.addr, &token);
    sse.initialize();
    let bytes = markdown("Quillfeather", 3000);
    let (is_error, offer) = sse.call(
        "alayasiki_ingest",
        json!({"upload": {"filename": "notes.md", "size": bytes.len(), "sha256": sha256(&bytes)}}),
    );
    assert!(!is_error, "{offer}");
    let path = path_of(&api, &offer);
    let stored = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!(
        stored.status,
        200,
        "{}",
        String::from_utf8_lossy(&stored.body)
    );
    let (_, found) = sse.call("alayasiki_query", json!({"query": "Quillfeather runbook"}));
    assert_eq!(
        found["evidence"][0]["document_id"],
        stored.json()["document_id"],
        "{found}"
    );
    let (is_error, both) = sse.call(
        "alayasiki_ingest",
        json!({"content": "x", "upload": {"filename": "a.md", "size": 1, "sha256": sha256(b"x")}}),
    );
    assert!(is_error, "content and upload together are refused: {both}");
    sse.close();
}

#[test]
fn uploads_at_the_size_limit_land_and_past_it_are_refused() {
    let dir = TempDir::new("upload-limit");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let bytes = markdown("Edgeworth", MAX_UPLOAD_BYTES);
    let offer = declare(&api, &token, "big.md", &bytes, json!({})).json();
    let stored = put(api.addr, &path_of(&api, &offer), &bytes, bytes.len());
    assert_eq!(
        stored.status,
        200,
        "{}",
        String::from_utf8_lossy(&stored.body)
    );
    assert_eq!(stored.json()["bytes"], MAX_UPLOAD_BYTES);
    assert_eq!(stored.json()["state"], "ready", "{}", stored.json());

    let over = json!({"upload": {"filename": "big.md", "size": MAX_UPLOAD_BYTES + 1, "sha256": sha256(b"")}});
    let refused = api.call("POST", "/v1/uploads", &token, Some(&over));
    assert_eq!(refused.status, 413);
    assert_eq!(refused.code(), "limit_exceeded");
    assert!(refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("MAX_UPLOAD_BYTES"));

    // A ticket for the limit, sent one byte more.
    let offer = declare(&api, &token, "big2.md", &bytes, json!({})).json();
    let mut longer = bytes.clone();
    longer.push(b'.');
    let r = put(api.addr, &path_of(&api, &offer), &longer, longer.len());
    assert_eq!(r.status, 400);
    assert_eq!(r.code(), "size_mismatch");
    assert_eq!(document_count(&api, &token), 1);
    assert!(partial_files(dir.path()).is_empty());
}

#[test]
fn wrong_sizes_digests_and_tickets_store_nothing() {
    let dir = TempDir::new("upload-wrong");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let bytes = markdown("Wrongway", 50_000);
    let fresh = |api: &Api| path_of(api, &declare(api, &token, "w.md", &bytes, json!({})).json());

    // Content-Length shorter, then longer, than declared.
    let r = put(api.addr, &fresh(&api), &bytes[1..], bytes.len() - 1);
    assert_eq!((r.status, r.code().as_str()), (400, "size_mismatch"));
    let mut longer = bytes.clone();
    longer.push(b'!');
    let r = put(api.addr, &fresh(&api), &longer, longer.len());
    assert_eq!((r.status, r.code().as_str()), (400, "size_mismatch"));

    // The declared length, but the body ends short.
    let path = fresh(&api);
    let mut short = format!(
        "PUT {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n",
        api.host(),
        bytes.len()
    )
    .into_bytes();
    short.extend_from_slice(&bytes[..bytes.len() / 2]);
    let r = raw(api.addr, &short, true);
    assert_eq!((r.status, r.code().as_str()), (400, "incomplete_body"));
    // Used up although it failed.
    let r = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!((r.status, r.code().as_str()), (404, "unknown_upload"));

    // The right size, other bytes.
    let mut other = bytes.clone();
    other[10] ^= 1;
    let path = fresh(&api);
    let r = put(api.addr, &path, &other, other.len());
    assert_eq!((r.status, r.code().as_str()), (400, "digest_mismatch"));
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(
        !message.contains(&dir.path().display().to_string()),
        "{message}"
    );
    let r = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!(r.status, 404, "a refused upload's ticket is gone");

    // No length: chunked, or none at all.
    let path = fresh(&api);
    let chunked = format!(
        "PUT {path} HTTP/1.1\r\nHost: {}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        api.host()
    );
    let r = raw(api.addr, chunked.as_bytes(), false);
    assert_eq!((r.status, r.code().as_str()), (411, "length_required"));
    let bare = format!("PUT {path} HTTP/1.1\r\nHost: {}\r\n\r\n", api.host());
    let r = raw(api.addr, bare.as_bytes(), false);
    assert_eq!((r.status, r.code().as_str()), (411, "length_required"));
    // A refusal before the ticket is claimed leaves it usable.
    let r = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let doc = r.json()["document_id"].as_str().unwrap().to_string();
    let forgotten = api.call("DELETE", &format!("/v1/documents/{doc}"), &token, None);
    assert_eq!(forgotten.status, 200);

    // Random and missing tickets.
    let random = format!("/v1/uploads/{}", "ab".repeat(32));
    let r = put(api.addr, &random, &bytes, bytes.len());
    assert_eq!((r.status, r.code().as_str()), (404, "unknown_upload"));
    let r = put(api.addr, "/v1/uploads/", &bytes, bytes.len());
    assert_eq!(r.status, 404);

    assert_eq!(document_count(&api, &token), 0);
    assert!(
        partial_files(dir.path()).is_empty(),
        "{:?}",
        partial_files(dir.path())
    );
}

#[test]
fn an_expired_ticket_is_refused_and_stores_nothing() {
    let dir = TempDir::new("upload-expired");
    let api = Api::start(dir.path(), &[("ALAYASIKI_UPLOAD_TTL_SECS", "1")]);
    let token = admin("alice", "acme");
    let bytes = markdown("Lateness", 2000);
    let path = path_of(
        &api,
        &declare(&api, &token, "l.md", &bytes, json!({})).json(),
    );
    std::thread::sleep(Duration::from_millis(1300));
    let r = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!((r.status, r.code().as_str()), (410, "upload_expired"));
    let r = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!(r.status, 404);
    assert_eq!(document_count(&api, &token), 0);
}

#[test]
fn a_flood_of_declarations_is_refused_past_the_tenant_cap() {
    let dir = TempDir::new("upload-flood");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let bytes = markdown("Flood", 100);
    for i in 0..MAX_OPEN_UPLOAD_TICKETS {
        let r = declare(&api, &token, &format!("{i}.md"), &bytes, json!({}));
        assert_eq!(r.status, 200, "declaration {i}");
    }
    let r = declare(&api, &token, "one-more.md", &bytes, json!({}));
    assert_eq!((r.status, r.code().as_str()), (413, "limit_exceeded"));
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("MAX_OPEN_UPLOAD_TICKETS"));
    let other = declare(&api, &admin("bob", "other"), "b.md", &bytes, json!({}));
    assert_eq!(other.status, 200, "another tenant has its own tickets");
}

#[test]
fn concurrent_uploads_all_land_and_one_ticket_admits_one_put() {
    let dir = TempDir::new("upload-concurrent");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let files: Vec<Vec<u8>> = (0..6)
        .map(|i| markdown(&format!("Parallel{i}"), 200_000 + i))
        .collect();
    let paths: Vec<String> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            path_of(
                &api,
                &declare(&api, &token, &format!("{i}.md"), f, json!({})).json(),
            )
        })
        .collect();
    let addr = api.addr;
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .iter()
            .zip(&paths)
            .map(|(f, p)| s.spawn(move || put(addr, p, f, f.len()).status))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(statuses, vec![200; 6]);
    assert_eq!(document_count(&api, &token), 6);

    let bytes = markdown("Contended", 300_000);
    let path = path_of(
        &api,
        &declare(&api, &token, "c.md", &bytes, json!({})).json(),
    );
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| put(addr, &path, &bytes, bytes.len()).status);
        let b = s.spawn(|| put(addr, &path, &bytes, bytes.len()).status);
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut seen = [a, b];
    seen.sort();
    assert_eq!(seen, [200, 404], "exactly one PUT proceeds");
    assert_eq!(document_count(&api, &token), 7);
}

#[test]
fn a_kill_mid_upload_stores_nothing_and_leaves_no_temporary_file() {
    let dir = TempDir::new("upload-kill");
    let mut api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let bytes = markdown("Interrupted", 1_000_000);
    let path = path_of(
        &api,
        &declare(&api, &token, "i.md", &bytes, json!({})).json(),
    );
    let mut stream = TcpStream::connect(api.addr).unwrap();
    let head = format!(
        "PUT {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n",
        api.host(),
        bytes.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&bytes[..bytes.len() / 2]).unwrap();
    // The slow client has sent half: the server holds a partial file.
    let deadline = Instant::now() + TIMEOUT;
    while partial_files(dir.path()).is_empty() {
        assert!(Instant::now() < deadline, "no partial upload appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    api.signal("KILL");
    api.wait(TIMEOUT).expect("killed");
    drop(stream);
    assert_eq!(partial_files(dir.path()).len(), 1, "the kill left its file");

    let api = Api::start(dir.path(), &[]);
    assert!(partial_files(dir.path()).is_empty(), "removed at start");
    assert_eq!(document_count(&api, &token), 0);
    let r = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!(r.status, 404, "a restart invalidates tickets");
    let path = path_of(
        &api,
        &declare(&api, &token, "i.md", &bytes, json!({})).json(),
    );
    let r = put(api.addr, &path, &bytes, bytes.len());
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(document_count(&api, &token), 1);
}
