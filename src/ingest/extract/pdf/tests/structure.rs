//! File structure end to end: cross-reference streams and object streams,
//! incremental updates, and recovery from broken cross-references.

use miniz_oxide::deflate::compress_to_vec_zlib;

use super::super::extract_text;
use super::builder::{simple_pdf, text_page};

/// Position of the last `needle` in `hay` (binary-safe).
fn rfind(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .rposition(|w| w == needle)
        .unwrap_or(0)
}

fn text_of(pdf: &[u8]) -> String {
    match extract_text(pdf) {
        Ok(t) => t.text,
        Err(e) => panic!("extraction failed: {e:?}"),
    }
}

/// A PDF 1.5 file: catalog, page tree, page and font live in an object
/// stream; the content stream is a top-level object; the cross-reference
/// stream uses /W [1 2 1] rows under the PNG "Up" predictor.
fn objstm_pdf(text: &str) -> Vec<u8> {
    let inner: [(u32, &str); 4] = [
        (1, "<< /Type /Catalog /Pages 2 0 R >>"),
        (2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        (3, "<< /Type /Page /Parent 2 0 R /Contents 5 0 R /Resources << /Font << /F1 4 0 R >> >> >>"),
        (4, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
    ];
    let mut header = String::new();
    let mut bodies = String::new();
    for (num, body) in inner {
        header += &format!("{num} {} ", bodies.len());
        bodies += body;
        bodies.push('\n');
    }
    let objstm_data = format!("{header}{bodies}");
    let packed = compress_to_vec_zlib(objstm_data.as_bytes(), 6);

    let mut out = b"%PDF-1.5\n".to_vec();
    let objstm_offset = out.len();
    out.extend(
        format!(
            "6 0 obj\n<< /Type /ObjStm /N 4 /First {} /Filter /FlateDecode /Length {} >>\nstream\n",
            header.len(),
            packed.len()
        )
        .bytes(),
    );
    out.extend(&packed);
    out.extend(b"\nendstream\nendobj\n");
    let content = text_page(text);
    let content_offset = out.len();
    out.extend(
        format!(
            "5 0 obj\n<< /Length {} >>\nstream\n{content}\nendstream\nendobj\n",
            content.len()
        )
        .bytes(),
    );

    // Rows for objects 0..=7: free, four compressed, content, objstm, xref.
    let xref_offset = out.len();
    let rows: Vec<[u8; 4]> = vec![
        [0, 0, 0, 255],
        [2, 0, 6, 0],
        [2, 0, 6, 1],
        [2, 0, 6, 2],
        [2, 0, 6, 3],
        [1, (content_offset >> 8) as u8, content_offset as u8, 0],
        [1, (objstm_offset >> 8) as u8, objstm_offset as u8, 0],
        [1, (xref_offset >> 8) as u8, xref_offset as u8, 0],
    ];
    // PNG "Up" predictor: each row is the byte-wise difference from the
    // previous one, preceded by the filter type 2.
    let mut predicted = Vec::new();
    let mut previous = [0u8; 4];
    for row in rows {
        predicted.push(2);
        predicted.extend(row.iter().zip(previous).map(|(b, p)| b.wrapping_sub(p)));
        previous = row;
    }
    let packed = compress_to_vec_zlib(&predicted, 6);
    out.extend(
        format!(
            "7 0 obj\n<< /Type /XRef /Size 8 /W [1 2 1] /Root 1 0 R /Filter /FlateDecode \
             /DecodeParms << /Predictor 12 /Columns 4 >> /Length {} >>\nstream\n",
            packed.len()
        )
        .bytes(),
    );
    out.extend(&packed);
    out.extend(format!("\nendstream\nendobj\nstartxref\n{xref_offset}\n%%EOF\n").bytes());
    out
}

#[test]
fn xref_stream_with_predictor_and_object_stream() {
    assert_eq!(
        text_of(&objstm_pdf("compressed objects")),
        "compressed objects"
    );
}

#[test]
fn object_streams_are_recovered_without_xref() {
    // Break the startxref offset: the scan must find the object stream and
    // the objects inside it, and the catalog among them.
    let pdf = objstm_pdf("recovered");
    let at = rfind(&pdf, b"startxref\n") + "startxref\n".len();
    let mut broken = pdf[..at].to_vec();
    broken.extend(b"1\n%%EOF\n");
    assert_eq!(text_of(&broken), "recovered");
    // Without the cross-reference stream at all (and so without a trailer).
    let xref = rfind(&pdf, b"7 0 obj");
    assert_eq!(text_of(&pdf[..xref]), "recovered");
}

#[test]
fn incremental_update_replaces_content() {
    let original = simple_pdf(&[&text_page("old text")]);
    let text = String::from_utf8_lossy(&original).into_owned();
    let prev = text.rfind("xref\n0").unwrap_or(0);
    // simple_pdf numbers: 1 catalog, 2 tree, 3 font, 4 content, 5 page.
    let mut updated = original.clone();
    let new_content = text_page("new text");
    let offset = updated.len();
    updated.extend(
        format!(
            "4 0 obj\n<< /Length {} >>\nstream\n{new_content}\nendstream\nendobj\n",
            new_content.len()
        )
        .bytes(),
    );
    let xref = updated.len();
    updated.extend(
        format!("xref\n4 1\n{offset:010} 00000 n \ntrailer\n<< /Size 6 /Prev {prev} >>\nstartxref\n{xref}\n%%EOF\n").bytes(),
    );
    assert_eq!(text_of(&original), "old text");
    assert_eq!(text_of(&updated), "new text");
}

#[test]
fn damaged_cross_references_are_recovered() {
    let pdf = simple_pdf(&[&text_page("survives")]);
    let text = String::from_utf8_lossy(&pdf).into_owned();
    // No xref table and no trailer at all.
    let xref = text.rfind("xref\n0").unwrap_or(0);
    assert_eq!(text_of(&pdf[..xref]), "survives");
    // All offsets shifted by junk before the header.
    let mut shifted = b"garbage before the header\n".to_vec();
    shifted.extend(&pdf);
    assert_eq!(text_of(&shifted), "survives");
    // Offsets in the table that point at the wrong objects.
    let scrambled = text.replace(" 00000 n \n0", " 00000 n \n1");
    assert_eq!(text_of(scrambled.as_bytes()), "survives");
    // A wrong stream /Length is corrected by finding endstream.
    let length = format!("/Length {}", text_page("survives").len());
    let wrong_length = text.replacen(&length, "/Length 3", 1);
    assert_eq!(text_of(wrong_length.as_bytes()), "survives");
    // Truncated in the middle of the last object.
    let page_end = text.rfind("endobj\nxref").unwrap_or(0);
    assert!(extract_text(&pdf[..page_end - 10]).is_ok());
}
