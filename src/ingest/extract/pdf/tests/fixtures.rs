//! The real-world PDFs in `fixtures/pdf/` (see its README for how each was
//! made) against their expected text.
//!
//! Comparison is per page and whitespace-normalized: every run of
//! whitespace becomes one space and ends are trimmed, so line-breaking
//! details do not matter but word boundaries and word order do. The expected
//! files hold the pages separated by form feeds, as the extractor does.

use super::super::{extract_text, PdfError, PdfText, PAGE_SEPARATOR};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/fixtures/pdf/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Checks the page spans and returns the normalized text of each page.
fn pages(result: &PdfText) -> Vec<String> {
    let mut previous_end = None;
    for (i, span) in result.pages.iter().enumerate() {
        assert_eq!(span.number as usize, i + 1);
        match previous_end {
            None => assert_eq!(span.start, 0),
            Some(end) => assert_eq!(&result.text[end..span.start], PAGE_SEPARATOR),
        }
        assert!(span.start <= span.end && span.end <= result.text.len());
        assert!(!result.text[span.start..span.end].contains('\x0c'));
        previous_end = Some(span.end);
    }
    assert_eq!(result.pages.last().map(|p| p.end), Some(result.text.len()));
    result
        .pages
        .iter()
        .map(|p| normalize(&result.text[p.start..p.end]))
        .collect()
}

fn check(name: &str, page_count: usize) {
    let result =
        extract_text(&fixture(&format!("{name}.pdf"))).unwrap_or_else(|e| panic!("{name}: {e}"));
    let expected = String::from_utf8(fixture(&format!("{name}.expected.txt"))).unwrap_or_default();
    let expected: Vec<String> = expected.split('\x0c').map(normalize).collect();
    let actual = pages(&result);
    assert_eq!(actual.len(), page_count, "{name}: page count");
    assert_eq!(actual, expected, "{name}: text");
}

#[test]
fn libreoffice_report_three_pages_with_table() {
    check("libreoffice-report", 3);
    let text = extract_text(&fixture("libreoffice-report.pdf"))
        .unwrap()
        .text;
    // Table rows stay on their lines, cells in order.
    assert!(text.contains("\nStone and gravel 150 610\n"));
    // Paragraphs are separated by blank lines.
    assert!(text.contains("ends with a table.\n\n1. Soil and Water\nThe garden sits"));
    assert!(text.contains("café, naïve, Zürich, São Paulo and Ærøskøbing"));
}

#[test]
fn libreoffice_scripts_non_latin() {
    check("libreoffice-scripts", 1);
}

#[test]
fn groff_two_columns_via_ghostscript() {
    check("groff-columns", 2);
    let text = extract_text(&fixture("groff-columns.pdf")).unwrap().text;
    // The left column's last paragraph continues at the top of the right
    // column (a line break, not a paragraph break), and the whole left
    // column comes first.
    assert!(text.contains("boundaries from the\ndistance between glyphs.\n\n3. Right column"));
}

#[test]
fn cairo_cid_font_identity_h() {
    check("cairo-cjk", 1);
}

#[test]
fn qpdf_object_streams_match_the_original() {
    check("qpdf-objstm", 3);
    let original = extract_text(&fixture("libreoffice-report.pdf")).unwrap();
    assert_eq!(extract_text(&fixture("qpdf-objstm.pdf")).unwrap(), original);
}

#[test]
fn encrypted_is_refused() {
    assert_eq!(
        extract_text(&fixture("encrypted.pdf")),
        Err(PdfError::Encrypted)
    );
}

#[test]
fn image_only_has_no_text() {
    assert_eq!(
        extract_text(&fixture("image-only.pdf")),
        Err(PdfError::NoText)
    );
}
