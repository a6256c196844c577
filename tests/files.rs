//! Files through the real binary: PDF ingestion with page numbers in
//! evidence, images and audio described by metadata hints, type detection
//! (declared type, magic number, extension), originals read back exactly
//! through `alayasiki://documents/{id}/original`, and corruption reported
//! instead of wrong bytes.

mod common;

use common::*;
use rusqlite::Connection;
use serde_json::{json, Value};

fn ingest_file(s: &mut Server, file: Value) -> (bool, Value) {
    s.call("alayasiki_ingest", json!({ "File": file }))
}

fn read_resource(s: &mut Server, uri: &str) -> Value {
    s.request("resources/read", json!({ "uri": uri }))
}

#[test]
fn pdf_uploads_are_extracted_and_cite_their_page() {
    let dir = TempDir::new("pdf");
    let mut s = Server::ready(dir.path());
    let pdf = fixture_bytes("pdf/libreoffice-report.pdf");
    let (is_error, r) = ingest_file(
        &mut s,
        json!({"filename": "report.pdf", "content": b64(&pdf), "source": "garden"}),
    );
    assert!(!is_error, "{r}");
    assert_eq!(r["state"], "ready", "{r}");
    assert_eq!(r["media_type"], "application/pdf");
    assert_eq!(r["bytes"], pdf.len());
    let id = r["document_id"].as_str().unwrap().to_string();

    // The expected text of each page is found on that page.
    let expected = String::from_utf8(fixture_bytes("pdf/libreoffice-report.expected.txt")).unwrap();
    let pages: Vec<&str> = expected.split("\n\x0c\n").collect();
    assert_eq!(pages.len(), 3);
    let q = s.ok(
        "alayasiki_query",
        json!({"query": "Ærøskøbing", "mode": "evidence", "lanes": ["keyword"]}),
    );
    let top = &q["evidence"][0];
    assert_eq!(top["document_id"], id.as_str());
    assert_eq!(top["page"], 1, "{top}");
    let last_words = pages[2]
        .split_whitespace()
        .rev()
        .take(3)
        .collect::<Vec<_>>();
    let q = s.ok(
        "alayasiki_query",
        json!({"query": last_words.join(" "), "mode": "evidence", "lanes": ["keyword"]}),
    );
    assert_eq!(q["evidence"][0]["page"], 3, "{q}");

    // The document resource is the extracted text; the original is the PDF.
    let text = read_resource(&mut s, &format!("alayasiki://documents/{id}"));
    let text = text["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("Ærøskøbing"));
    let original = read_resource(&mut s, &format!("alayasiki://documents/{id}/original"));
    let content = &original["result"]["contents"][0];
    assert_eq!(content["mimeType"], "application/pdf");
    assert!(content.get("text").is_none());
    assert_eq!(content["blob"].as_str().unwrap(), b64(&pdf));
}

#[test]
fn encrypted_and_scanned_pdfs_say_why() {
    let dir = TempDir::new("pdfbad");
    let mut s = Server::ready(dir.path());
    for (file, needle) in [
        ("pdf/encrypted.pdf", "the PDF is encrypted"),
        ("pdf/image-only.pdf", "no extractable text"),
    ] {
        let (is_error, msg) = ingest_file(
            &mut s,
            json!({"content": b64(&fixture_bytes(file)), "mime_type": "application/pdf"}),
        );
        assert!(is_error, "{file} accepted");
        let msg = msg.as_str().unwrap();
        assert!(msg.starts_with("invalid_input: "), "{msg}");
        assert!(msg.contains(needle), "{file}: {msg}");
    }
    assert_eq!(s.ok("alayasiki_status", json!({}))["documents"], 0);
}

/// The first bytes of real files of each kind (magic numbers); the rest is
/// filler, which is all the memory needs of them.
fn media_bytes(magic: &[u8]) -> Vec<u8> {
    let mut b = magic.to_vec();
    b.extend((0..200u8).map(|i| i.wrapping_mul(37)));
    b
}

#[test]
fn a_message_is_found_by_the_caption_of_the_photo_sent_with_it() {
    let dir = TempDir::new("caption");
    let mut s = Server::ready(dir.path());
    let message = "Mel: Look what I made this weekend!";
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": message, "source": "chat/session_4", "metadata": {
            "caption": "a photo of a blue ceramic bowl on a pottery wheel",
            "transcript": 7, "speaker": "Mel"}}),
    );
    let id = r["document_id"].as_str().unwrap().to_string();

    // The caption's words find it, and the evidence shows where they came from.
    let q = s.query("ceramic bowl pottery");
    let top = &q["evidence"][0];
    assert_eq!(top["document_id"], id.as_str(), "{q}");
    assert_eq!(
        top["text"],
        "Mel: Look what I made this weekend!\n\ncaption: a photo of a blue ceramic bowl on a pottery wheel"
    );

    // The message itself is kept as it was sent; a hint that is not a
    // string describes nothing and is left in the metadata.
    let original = read_resource(&mut s, &format!("alayasiki://documents/{id}/original"));
    assert_eq!(original["result"]["contents"][0]["text"], message);
    assert_eq!(top["metadata"]["transcript"], 7);
}

#[test]
fn images_and_audio_are_found_by_their_descriptions() {
    let dir = TempDir::new("media");
    let mut s = Server::ready(dir.path());
    let png = media_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let (is_error, r) = ingest_file(
        &mut s,
        json!({"content": b64(&png), "metadata": {
            "caption": "A red lighthouse on a basalt cliff at dusk",
            "ocr_text": "KEEP OFF THE ROCKS", "author": "Ana"}}),
    );
    assert!(!is_error, "{r}");
    assert_eq!(r["media_type"], "image/png");
    let png_id = r["document_id"].as_str().unwrap().to_string();
    let wav = media_bytes(b"RIFF\x24\0\0\0WAVEfmt ");
    let (is_error, r) = ingest_file(
        &mut s,
        json!({"filename": "standup.wav", "content": b64(&wav), "metadata": {
            "transcript": "We agreed to ship the quarterly gazetteer on Friday."}}),
    );
    assert!(!is_error, "{r}");
    assert_eq!(r["media_type"], "audio/wav");

    let q = s.query("lighthouse basalt");
    let top = &q["evidence"][0];
    assert_eq!(top["document_id"], png_id.as_str());
    assert_eq!(
        top["text"],
        "caption: A red lighthouse on a basalt cliff at dusk\n\nocr_text: KEEP OFF THE ROCKS"
    );
    assert_eq!(top["metadata"]["author"], "Ana");
    let q = s.query("when does the gazetteer ship");
    assert!(q["evidence"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("transcript: We agreed"));

    // The image itself is kept byte for byte.
    let original = read_resource(&mut s, &format!("alayasiki://documents/{png_id}/original"));
    let content = &original["result"]["contents"][0];
    assert_eq!(content["mimeType"], "image/png");
    assert_eq!(content["blob"].as_str().unwrap(), b64(&png));

    // Without a description there is nothing to search: refused, saying how.
    let (is_error, msg) = ingest_file(
        &mut s,
        json!({"content": b64(&media_bytes(b"\xff\xd8\xff\xe0")), "metadata": {"author": "x"}}),
    );
    assert!(is_error);
    let msg = msg.as_str().unwrap();
    assert!(msg.contains("image/jpeg holds no text"), "{msg}");
    for hint in [
        "caption",
        "alt_text",
        "ocr_text",
        "description",
        "transcript",
    ] {
        assert!(msg.contains(hint), "{msg}");
    }
}

#[test]
fn type_comes_from_mime_type_then_magic_then_extension() {
    let dir = TempDir::new("types");
    let mut s = Server::ready(dir.path());
    let pdf = fixture_bytes("pdf/libreoffice-scripts.pdf");
    let cases = [
        // Magic number beats a misleading extension.
        (
            json!({"filename": "notes.txt", "content": b64(&pdf)}),
            "application/pdf",
        ),
        // Extension decides between text types.
        (
            json!({"filename": "a.md", "content": b64(b"# Title\n\nBody")}),
            "text/markdown",
        ),
        // Bytes decide when there is no name.
        (
            json!({"content": b64(br#"{"k": "v"}"#)}),
            "application/json",
        ),
        (json!({"content": b64(b"plain words")}), "text/plain"),
        // A declared type wins (and its aliases are understood).
        (
            json!({"filename": "a.md", "mime_type": "text/x-markdown", "content": b64(b"x y")}),
            "text/markdown",
        ),
        (
            json!({"mime_type": "audio/x-wav", "content": b64(b"anything"),
                "metadata": {"description": "a recording"}}),
            "audio/wav",
        ),
    ];
    for (file, want) in cases {
        let (is_error, r) = ingest_file(&mut s, file.clone());
        assert!(!is_error, "{file} -> {r}");
        assert_eq!(r["media_type"], want, "{file}");
    }
    // Unknown types are refused with the supported list.
    for file in [
        json!({"filename": "a.zip", "content": b64(b"PK\x03\x04\x14\0\0\0\x08\0\xff\xfe")}),
        json!({"mime_type": "application/zip", "content": b64(b"PK")}),
    ] {
        let (is_error, msg) = ingest_file(&mut s, file.clone());
        assert!(is_error, "{file} accepted");
        let msg = msg.as_str().unwrap();
        assert!(
            msg.contains("text/plain, text/markdown, application/json, application/pdf, image/png"),
            "{msg}"
        );
        assert!(msg.contains("audio/mpeg"), "{msg}");
    }
}

#[test]
fn text_originals_read_back_as_text_with_their_type() {
    let dir = TempDir::new("textorig");
    let mut s = Server::ready(dir.path());
    let md = "# Plan\n\nShip on *Friday*.\r\n";
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": md, "media_type": "text/markdown"}),
    );
    let id = r["document_id"].as_str().unwrap();
    let original = read_resource(&mut s, &format!("alayasiki://documents/{id}/original"));
    let content = &original["result"]["contents"][0];
    assert_eq!(content["mimeType"], "text/markdown");
    assert_eq!(content["text"], md);
    assert!(content.get("blob").is_none());
    // JSON originals are the JSON, not its flattened text.
    let r = s.ok(
        "alayasiki_ingest",
        json!({"content": "{\"a\": [1, 2]}", "media_type": "application/json"}),
    );
    let id = r["document_id"].as_str().unwrap();
    let original = read_resource(&mut s, &format!("alayasiki://documents/{id}/original"));
    assert_eq!(original["result"]["contents"][0]["text"], "{\"a\": [1, 2]}");
    // Unknown and foreign ids read as not found.
    let missing = read_resource(
        &mut s,
        "alayasiki://documents/doc_ffffffffffffffffffffffff/original",
    );
    assert_eq!(missing["error"]["code"], -32002);
}

#[test]
fn originals_are_not_shared_across_tenants() {
    let dir = TempDir::new("origtenant");
    let id = {
        let mut a = Server::start_with(dir.path(), &[("ALAYASIKI_MCP_TENANT", "a")]);
        a.initialize();
        let r = a.ok("alayasiki_ingest", json!({"content": "tenant a secret"}));
        let id = r["document_id"].as_str().unwrap().to_string();
        a.close();
        id
    };
    let mut b = Server::start_with(dir.path(), &[("ALAYASIKI_MCP_TENANT", "b")]);
    b.initialize();
    let r = read_resource(&mut b, &format!("alayasiki://documents/{id}/original"));
    assert_eq!(r["error"]["code"], -32002, "{r}");
}

#[test]
fn a_corrupted_original_is_reported_not_returned() {
    let dir = TempDir::new("corrupt");
    let id = {
        let mut s = Server::ready(dir.path());
        let r = s.ok(
            "alayasiki_ingest",
            json!({"File": {"filename": "n.txt", "content": b64(b"the original words")}}),
        );
        let id = r["document_id"].as_str().unwrap().to_string();
        s.close();
        id
    };
    {
        let conn = Connection::open(dir.path().join("memory.db")).unwrap();
        let changed = conn
            .execute(
                "UPDATE originals SET bytes = CAST('the 0riginal words' AS BLOB)",
                [],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }
    let mut s = Server::ready(dir.path());
    let r = read_resource(&mut s, &format!("alayasiki://documents/{id}/original"));
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("is corrupted"), "{r}");
    assert!(message.contains("SHA-256"), "{r}");
    assert!(
        !r.to_string().contains("0riginal"),
        "damaged bytes leaked: {r}"
    );
}
