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
const MAX_UPLOAD_BYTES: usize = 256 * 1024 * 1024;
/// `MAX_CONTENT_BYTES` (src/limits.rs): the largest single document.
const MAX_CONTENT_BYTES: usize = 4 * 1024 * 1024;
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
fn uploads_at_the_size_limit_are_declared_and_past_it_are_refused() {
    let dir = TempDir::new("upload-limit");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let at_limit =
        json!({"upload": {"filename": "huge.md", "size": MAX_UPLOAD_BYTES, "sha256": sha256(b"")}});
    let offer = api.call("POST", "/v1/uploads", &token, Some(&at_limit));
    assert_eq!(
        offer.status,
        200,
        "{}",
        String::from_utf8_lossy(&offer.body)
    );
    assert_eq!(offer.json()["max_bytes"], MAX_UPLOAD_BYTES);
    let over = json!({"upload": {"filename": "huge.md", "size": MAX_UPLOAD_BYTES + 1, "sha256": sha256(b"")}});
    let refused = api.call("POST", "/v1/uploads", &token, Some(&over));
    assert_eq!(refused.status, 413);
    assert_eq!(refused.code(), "limit_exceeded");
    assert!(refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("MAX_UPLOAD_BYTES"));

    // The largest single document is stored whole, not in parts.
    let bytes = markdown("Edgeworth", MAX_CONTENT_BYTES);
    let offer = declare(&api, &token, "big.md", &bytes, json!({})).json();
    let stored = put(api.addr, &path_of(&api, &offer), &bytes, bytes.len());
    assert_eq!(
        stored.status,
        200,
        "{}",
        String::from_utf8_lossy(&stored.body)
    );
    assert_eq!(stored.json()["bytes"], MAX_CONTENT_BYTES);
    assert_eq!(stored.json()["state"], "ready", "{}", stored.json());
    assert!(stored.json().get("parts").is_none(), "{}", stored.json());

    // A ticket for that size, sent one byte more.
    let offer = declare(&api, &token, "big2.md", &bytes, json!({})).json();
    let mut longer = bytes.clone();
    longer.push(b'.');
    let r = put(api.addr, &path_of(&api, &offer), &longer, longer.len());
    assert_eq!(r.status, 400);
    assert_eq!(r.code(), "size_mismatch");
    assert_eq!(document_count(&api, &token), 1);
    assert!(partial_files(dir.path()).is_empty());
}

/// Text of exactly `size` bytes in numbered lines, its last line naming
/// `last_words`.
fn long_text(size: usize, last_words: &str) -> Vec<u8> {
    let tail = format!("The {last_words} appendix closes the maintenance log.\n");
    let mut text = String::with_capacity(size);
    let mut n = 0u64;
    loop {
        let line = format!("Entry {n}: routine maintenance notes keep the service healthy.\n");
        if text.len() + line.len() + tail.len() > size {
            break;
        }
        text.push_str(&line);
        n += 1;
    }
    while text.len() + tail.len() < size {
        text.push('.');
    }
    text.push_str(&tail);
    text.into_bytes()
}

/// The documents of `source` the listing counts (ready ones).
fn ready_with_source(api: &Api, token: &str, source: &str) -> u64 {
    let r = api.call(
        "GET",
        &format!("/v1/documents?source={source}"),
        token,
        None,
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["total"].as_u64().expect("total")
}

/// Every document stored, whatever its state (`alayasiki_status`).
fn stored_documents(api: &Api, token: &str) -> u64 {
    let r = api.call("GET", "/v1/status", token, None);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()["documents"].as_u64().expect("documents")
}

/// The parts' originals, in order, joined.
fn joined_originals(api: &Api, token: &str, parts: &[Value]) -> Vec<u8> {
    let mut joined = Vec::new();
    for part in parts {
        let id = part["document_id"].as_str().unwrap();
        let original = api.call("GET", &format!("/v1/documents/{id}/original"), token, None);
        assert_eq!(original.status, 200);
        assert!(original.body.len() <= MAX_CONTENT_BYTES);
        joined.extend_from_slice(&original.body);
    }
    joined
}

#[test]
fn a_text_upload_larger_than_one_document_is_stored_as_parts_that_join_to_the_file() {
    let dir = TempDir::new("upload-parts");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let bytes = long_text(9 * 1024 * 1024, "Zebrafinch");
    let extra = json!({"metadata": {"team": "ops"}, "idempotency_key": "manual-v1"});
    let offer = declare(&api, &token, "manual.md", &bytes, extra.clone());
    assert_eq!(
        offer.status,
        200,
        "{}",
        String::from_utf8_lossy(&offer.body)
    );
    let stored = put(api.addr, &path_of(&api, &offer.json()), &bytes, bytes.len());
    assert_eq!(
        stored.status,
        200,
        "{}",
        String::from_utf8_lossy(&stored.body)
    );
    let receipt = stored.json();
    assert_eq!(receipt["state"], "ready", "{receipt}");
    assert_eq!(receipt["bytes"], bytes.len());
    assert_eq!(receipt["media_type"], "text/markdown");
    let parts = receipt["parts"].as_array().expect("parts").clone();
    assert_eq!(parts.len(), 3, "{receipt}");
    assert_eq!(receipt["document_id"], parts[0]["document_id"]);
    let part_bytes: u64 = parts.iter().map(|p| p["bytes"].as_u64().unwrap()).sum();
    assert_eq!(part_bytes, bytes.len() as u64, "{receipt}");

    for (i, part) in parts.iter().enumerate() {
        assert_eq!(part["part"], i + 1);
        assert_eq!(part["state"], "ready", "{part}");
        let id = part["document_id"].as_str().unwrap();
        let doc = api.call("GET", &format!("/v1/documents/{id}"), &token, None);
        assert_eq!(doc.status, 200);
        let doc = doc.json();
        assert_eq!(doc["source"], "manual.md", "the file name: {doc}");
        assert_eq!(doc["metadata"]["team"], "ops", "{doc}");
        let upload = &doc["metadata"]["upload"];
        assert_eq!(upload["sha256"], sha256(&bytes), "{doc}");
        assert_eq!(upload["filename"], "manual.md");
        assert_eq!(upload["part"], i + 1);
        assert_eq!(upload["parts"], 3);
        let title = doc["title"].as_str().unwrap();
        assert!(
            title.ends_with(&format!("(part {} of 3)", i + 1)),
            "{title}"
        );
    }
    assert_eq!(
        joined_originals(&api, &token, &parts),
        bytes,
        "byte for byte"
    );
    // Each part but the last ends a line.
    let first = api.call(
        "GET",
        &format!(
            "/v1/documents/{}/original",
            parts[0]["document_id"].as_str().unwrap()
        ),
        &token,
        None,
    );
    assert!(first.body.ends_with(b"\n") && first.body.len() > MAX_CONTENT_BYTES / 2);

    let found = api.call(
        "POST",
        "/v1/query",
        &token,
        Some(&json!({"query": "Zebrafinch appendix"})),
    );
    assert_eq!(
        found.json()["evidence"][0]["document_id"],
        parts[2]["document_id"],
        "{}",
        found.json()
    );

    // The key covers the whole upload: the same upload again replays it.
    let again = declare(&api, &token, "manual.md", &bytes, extra);
    let replayed = put(api.addr, &path_of(&api, &again.json()), &bytes, bytes.len());
    assert_eq!(
        replayed.status,
        200,
        "{}",
        String::from_utf8_lossy(&replayed.body)
    );
    assert_eq!(replayed.json()["idempotent_replay"], true);
    let ids = |parts: &Value| -> Vec<Value> {
        parts
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["document_id"].clone())
            .collect()
    };
    assert_eq!(ids(&replayed.json()["parts"]), ids(&receipt["parts"]));
    assert_eq!(document_count(&api, &token), 3);
    // ...and another request under it is a conflict.
    let other = json!({"content": "something else", "idempotency_key": "manual-v1"});
    let conflict = api.call("POST", "/v1/ingest", &token, Some(&other));
    assert_eq!(
        conflict.status,
        409,
        "{}",
        String::from_utf8_lossy(&conflict.body)
    );

    // Forgetting the source forgets every part.
    let forgotten = api.call(
        "POST",
        "/v1/tools/alayasiki_forget",
        &token,
        Some(&json!({"source": "manual.md"})),
    );
    assert_eq!(
        forgotten.status,
        200,
        "{}",
        String::from_utf8_lossy(&forgotten.body)
    );
    assert_eq!(document_count(&api, &token), 0);
    for part in &parts {
        let id = part["document_id"].as_str().unwrap();
        let gone = api.call("GET", &format!("/v1/documents/{id}/original"), &token, None);
        assert_eq!(gone.status, 404);
    }
    assert!(partial_files(dir.path()).is_empty());
}

#[test]
fn files_that_cannot_be_cut_are_refused_past_one_document() {
    let dir = TempDir::new("upload-binary");
    let api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let size = MAX_CONTENT_BYTES + 1;
    for (filename, media_type) in [
        ("manual.pdf", None),
        ("photo.txt", Some("image/png")),
        ("data.json", None),
    ] {
        let mut upload = json!({"filename": filename, "size": size, "sha256": sha256(b"")});
        if let Some(mt) = media_type {
            upload["media_type"] = json!(mt);
        }
        let r = api.call(
            "POST",
            "/v1/uploads",
            &token,
            Some(&json!({"upload": upload})),
        );
        assert_eq!(
            (r.status, r.code().as_str()),
            (413, "limit_exceeded"),
            "{filename}"
        );
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(message.contains("MAX_CONTENT_BYTES"), "{message}");
    }
    // At one document's size a PDF is still declared.
    let at = json!({"upload": {"filename": "manual.pdf", "size": MAX_CONTENT_BYTES, "sha256": sha256(b"")}});
    assert_eq!(
        api.call("POST", "/v1/uploads", &token, Some(&at)).status,
        200
    );

    // Declared as text, sent as bytes that are not: refused, nothing kept.
    let mut bytes = long_text(size, "Binarycheck");
    bytes[MAX_CONTENT_BYTES - 10] = 0xff;
    let offer = declare(&api, &token, "notes.txt", &bytes, json!({}));
    let r = put(api.addr, &path_of(&api, &offer.json()), &bytes, bytes.len());
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_input"));
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("UTF-8"));
    assert_eq!(document_count(&api, &token), 0);
    assert!(partial_files(dir.path()).is_empty());
}

#[test]
fn a_kill_while_parts_are_ingested_keeps_all_parts_or_none() {
    let dir = TempDir::new("upload-parts-kill");
    let mut api = Api::start(dir.path(), &[]);
    let token = admin("alice", "acme");
    let bytes = long_text(17 * 1024 * 1024, "Killdeer");
    let extra = json!({"idempotency_key": "killdeer"});
    let send = |api: &Api| {
        let path = path_of(
            api,
            &declare(api, &token, "log.txt", &bytes, extra.clone()).json(),
        );
        let mut stream = TcpStream::connect(api.addr).unwrap();
        let head = format!(
            "PUT {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n",
            api.host(),
            bytes.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&bytes).unwrap();
        stream
    };

    // Killed once some parts are indexed: the upload was acknowledged
    // whole (every part journalled), so every part is there after.
    let stream = send(&api);
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let ready = ready_with_source(&api, &token, "log.txt");
        if ready > 0 {
            assert!(ready < 5, "killed before every part was indexed");
            break;
        }
        assert!(Instant::now() < deadline, "no part was indexed");
        std::thread::sleep(Duration::from_millis(20));
    }
    api.signal("KILL");
    api.wait(TIMEOUT).expect("killed");
    drop(stream);
    let mut api = Api::start(dir.path(), &[]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while ready_with_source(&api, &token, "log.txt") < 5 {
        assert!(
            Instant::now() < deadline,
            "the journalled parts were not indexed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(document_count(&api, &token), 5);
    // Retried with a new ticket: the key finds every part.
    let mut retry = send(&api);
    let receipt = read_reply(&mut BufReader::new(&mut retry));
    assert_eq!(
        receipt.status,
        200,
        "{}",
        String::from_utf8_lossy(&receipt.body)
    );
    assert_eq!(receipt.json()["idempotent_replay"], true);
    let parts = receipt.json()["parts"].as_array().unwrap().clone();
    assert_eq!(joined_originals(&api, &token, &parts), bytes);

    // Killed as soon as the body is in, before or while the parts are
    // admitted: after the restart, all or none of them.
    let other = long_text(9 * 1024 * 1024, "Nightjar");
    let path = path_of(
        &api,
        &declare(&api, &token, "night.txt", &other, json!({"wait": false})).json(),
    );
    let mut stream = TcpStream::connect(api.addr).unwrap();
    let head = format!(
        "PUT {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n",
        api.host(),
        other.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&other).unwrap();
    let arrived = |dir: &Path| {
        std::fs::read_dir(dir.join("uploads"))
            .ok()
            .and_then(|mut e| e.next())
            .and_then(|e| e.ok())
            .and_then(|e| e.metadata().ok())
            .is_some_and(|m| m.len() == other.len() as u64)
    };
    let deadline = Instant::now() + TIMEOUT;
    while !arrived(dir.path()) {
        assert!(Instant::now() < deadline, "the body never arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
    api.signal("KILL");
    api.wait(TIMEOUT).expect("killed");
    drop(stream);
    let api = Api::start(dir.path(), &[]);
    let stored = stored_documents(&api, &token) - 5;
    assert!(stored == 0 || stored == 3, "{stored} of 3 parts stored");
    assert!(partial_files(dir.path()).is_empty());
    // A new ticket works either way.
    let path = path_of(
        &api,
        &declare(&api, &token, "night.txt", &other, json!({})).json(),
    );
    let r = put(api.addr, &path, &other, other.len());
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["parts"].as_array().unwrap().len(), 3);
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
