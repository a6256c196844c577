//! End-to-end behaviour on small hand-built PDFs, one feature per test.

use super::super::{extract_text, PdfError, PAGE_SEPARATOR};
use super::builder::{simple_pdf, simple_pdf_bytes, stream_object, text_page, PdfBuilder};

fn text_of(pdf: &[u8]) -> String {
    match extract_text(pdf) {
        Ok(t) => t.text,
        Err(e) => panic!("extraction failed: {e:?}"),
    }
}

/// A one-page document with `font` (a font dictionary) as `/F1`.
fn with_font(font: &str, content: &str) -> Vec<u8> {
    with_font_objects(|b| b.add(font), content)
}

/// Like [`with_font`], with a closure that adds the font (and any objects
/// it refers to) and returns its number.
fn with_font_objects(add_font: impl FnOnce(&mut PdfBuilder) -> u32, content: &str) -> Vec<u8> {
    let mut b = PdfBuilder::new();
    let font = add_font(&mut b);
    let stream = b.add_stream("", content.as_bytes());
    let page = b.add(&format!(
        "<< /Type /Page /Contents {stream} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>"
    ));
    b.build_pages(&[page])
}

/// A simple font whose glyphs are all 500/1000 wide.
const FIXED_FONT: &str =
    "<< /Type /Font /Subtype /TrueType /BaseFont /Test /FirstChar 0 /LastChar 255 \
    /Widths [256 {500}] /Encoding /WinAnsiEncoding >>";

fn fixed_font() -> String {
    FIXED_FONT.replace("256 {500}", &"500 ".repeat(256))
}

#[test]
fn pages_and_spans() {
    let pdf = simple_pdf(&[&text_page("Hello World"), "", &text_page("Third")]);
    let t = extract_text(&pdf).unwrap();
    assert_eq!(
        t.text,
        format!("Hello World{PAGE_SEPARATOR}{PAGE_SEPARATOR}Third")
    );
    let spans: Vec<_> = t
        .pages
        .iter()
        .map(|p| (p.number, &t.text[p.start..p.end]))
        .collect();
    assert_eq!(spans, [(1, "Hello World"), (2, ""), (3, "Third")]);
}

#[test]
fn line_operators() {
    let pdf = simple_pdf(&[
        "BT /F1 12 Tf 14 TL 72 720 Td (one) Tj T* (two) Tj (three) ' 0 -14 Td (four) Tj \
         1 0 0 1 72 600 Tm (five) Tj 2 1 (six) \" 0 -20 TD (seven) Tj T* (eight) Tj ET",
    ]);
    // Moving further down than the line spacing starts a paragraph.
    assert_eq!(
        text_of(&pdf),
        "one\ntwo\nthree\nfour\n\nfive\nsix\n\nseven\neight"
    );
}

#[test]
fn words_from_positions_and_tj_offsets() {
    let content = "BT /F1 10 Tf 0 0 Td [(Hello) -300 (World) -50 (s)] TJ 70 0 Td (far) Tj \
                   0 -12 Td [(A) 120 (V)] TJ ET";
    // At 10 pt every glyph is 5 wide. "Hello" ends at 25 and "World" starts
    // 3 later (0.3 em): a word break. The 0.05 em before "s" is kerning.
    // "far" starts 11.5 after "s" ends. The 1.2 overlap of "AV" is kerning.
    assert_eq!(
        text_of(&with_font(&fixed_font(), content)),
        "Hello Worlds far\nAV"
    );
}

#[test]
fn character_and_word_spacing() {
    // Tc of 3 at 10 pt opens 0.3 em between glyphs: Ghostscript's way of
    // writing "a b c". Tw widens only the space glyph.
    let content = "BT /F1 10 Tf 3 Tc (abc) Tj 0 Tc 0 -20 Td 20 Tw (x y) Tj 0 Tw 0 -20 Td 0.5 Tc (tight) Tj ET";
    assert_eq!(
        text_of(&with_font(&fixed_font(), content)),
        "a b c\nx y\ntight"
    );
}

#[test]
fn differences_and_glyph_names() {
    let font =
        "<< /Type /Font /Subtype /Type1 /BaseFont /X /Encoding << /BaseEncoding /WinAnsiEncoding \
                /Differences [65 /eacute /fi /afii10017 /uni03A9 /g77 /a.sc] >> >>";
    // Unknown names keep the base encoding's character ("g77" at 'E').
    assert_eq!(
        text_of(&with_font(font, "BT /F1 12 Tf (ABCDEF) Tj ET")),
        "éfiАΩEa"
    );
}

#[test]
fn base_encodings() {
    let standard = "<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>";
    assert_eq!(
        text_of(&with_font(standard, "BT /F1 12 Tf (It\\047s \\341) Tj ET")),
        "It’s Æ"
    );
    let mac = "<< /Type /Font /Subtype /Type1 /BaseFont /X /Encoding /MacRomanEncoding >>";
    assert_eq!(
        text_of(&with_font(mac, "BT /F1 12 Tf (caf\\216) Tj ET")),
        "café"
    );
    let win = "<< /Type /Font /Subtype /TrueType /BaseFont /X /Encoding /WinAnsiEncoding >>";
    assert_eq!(
        text_of(&with_font(win, "BT /F1 12 Tf (\\223\\200\\224) Tj ET")),
        "“€”"
    );
}

#[test]
fn to_unicode_overrides_encoding() {
    let cmap = b"begincmap 1 begincodespacerange <00> <FF> endcodespacerange \
        2 beginbfchar <41> <03B1> <42> <D835DC9C> endbfchar 1 beginbfrange <61> <63> <0058> endbfrange endcmap";
    let pdf = with_font_objects(
        |b| {
            let to_unicode = b.add_stream("", cmap);
            b.add(&format!(
                "<< /Type /Font /Subtype /TrueType /BaseFont /X /Encoding /WinAnsiEncoding /ToUnicode {to_unicode} 0 R >>"
            ))
        },
        "BT /F1 12 Tf (ABabcd) Tj ET",
    );
    // Codes the CMap lacks ('d') fall back to the encoding.
    assert_eq!(text_of(&pdf), "α𝒜XYZd");
}

#[test]
fn type0_identity_h_with_to_unicode_and_widths() {
    let cmap = b"begincmap 1 begincodespacerange <0000> <FFFF> endcodespacerange \
        1 beginbfrange <0001> <0003> [<65E5> <672C> <8A9E>] endbfrange \
        1 beginbfchar <0004> <0020> endbfchar 1 beginbfrange <0010> <0012> <0041> endbfrange endcmap";
    let font = |b: &mut PdfBuilder| {
        let to_unicode = b.add_flate_stream("", cmap);
        let cid =
            b.add("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /X /DW 1000 /W [16 18 500] >>");
        b.add(&format!(
            "<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H \
             /DescendantFonts [{cid} 0 R] /ToUnicode {to_unicode} 0 R >>"
        ))
    };
    // The 0.5-em glyphs 0x10..0x12 followed by a 0.5 em move: a new word.
    let content = "BT /F1 10 Tf <000100020003> Tj 0 -20 Td <001000110012> Tj 20 0 Td <0010> Tj ET";
    assert_eq!(text_of(&with_font_objects(font, content)), "日本語\nABC A");
}

#[test]
fn type0_predefined_ucs2_and_embedded_cmap() {
    let ucs2 = "<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /UniJIS-UCS2-H \
                /DescendantFonts [<< /Subtype /CIDFontType0 /DW 1000 >>] >>";
    assert_eq!(
        text_of(&with_font(ucs2, "BT /F1 12 Tf <65E5672C> Tj ET")),
        "日本"
    );

    let encoding = b"begincmap 2 begincodespacerange <00> <7F> <8000> <FFFF> endcodespacerange \
        1 begincidrange <20> <7E> 1 endcidrange endcmap";
    let to_unicode = b"begincmap 2 begincodespacerange <00> <7F> <8000> <FFFF> endcodespacerange \
        1 beginbfrange <41> <43> <0061> endbfrange 1 beginbfchar <8140> <3042> endbfchar endcmap";
    let pdf = with_font_objects(
        |b| {
            let enc = b.add_stream("/Type /CMap", encoding);
            let tu = b.add_stream("", to_unicode);
            b.add(&format!(
                "<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding {enc} 0 R /ToUnicode {tu} 0 R \
                 /DescendantFonts [<< /Subtype /CIDFontType0 /DW 500 >>] >>"
            ))
        },
        "BT /F1 12 Tf <41814042> Tj ET",
    );
    assert_eq!(text_of(&pdf), "aあb");
}

#[test]
fn embedded_type1_builtin_encoding() {
    // TeX's math fonts: no /Encoding, the program maps code 58 to "period".
    let program = b"%!PS-AdobeFont-1.0: CMMI10\n/Encoding 256 array\n\
        0 1 255 {1 index exch /.notdef put} for\ndup 58 /period put\ndup 65 /alpha put\n\
        readonly def\ncurrentfile eexec\n\x9b\x01";
    let pdf = with_font_objects(
        |b| {
            let file = b.add_flate_stream("/Length1 10 /Length2 2 /Length3 0", program);
            let descriptor = b.add(&format!(
                "<< /Type /FontDescriptor /FontName /CMMI10 /Flags 4 /FontFile {file} 0 R >>"
            ));
            b.add(&format!(
                "<< /Type /Font /Subtype /Type1 /BaseFont /CMMI10 /FontDescriptor {descriptor} 0 R >>"
            ))
        },
        "BT /F1 10 Tf (A:) Tj ET",
    );
    assert_eq!(text_of(&pdf), "α.");
}

#[test]
fn type3_font_matrix_scales_widths() {
    let font = "<< /Type /Font /Subtype /Type3 /FontMatrix [0.01 0 0 0.01 0 0] /FirstChar 97 /LastChar 98 \
                /Widths [50 50] /Encoding << /Differences [97 /a /b] >> /CharProcs << >> >>";
    // Widths 50 x 0.01 = 0.5 em: "ab" ends at 10 at 10 pt, "a" at 13 is a new word.
    let content = "BT /F1 10 Tf (ab) Tj 13 0 Td (a) Tj ET";
    assert_eq!(text_of(&with_font(font, content)), "ab a");
}

#[test]
fn form_xobjects_and_inherited_resources() {
    let mut b = PdfBuilder::new();
    let font = b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    let inner = b.add_stream(
        "/Type /XObject /Subtype /Form /BBox [0 0 100 100]",
        b"BT /F1 10 Tf (inner) Tj ET",
    );
    let form = b.add_stream(
        &format!(
            "/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Matrix [1 0 0 1 0 -50] \
                  /Resources << /XObject << /I {inner} 0 R >> /Font << /F1 {font} 0 R >> >>"
        ),
        b"BT /F1 10 Tf 0 0 Td (form) Tj ET /I Do",
    );
    let image = b.add_stream("/Type /XObject /Subtype /Image /Width 1 /Height 1", b"\xff");
    let content = b.add_stream("", b"BT /F1 10 Tf 0 100 Td (page) Tj ET /Fm Do /Im Do");
    let page = b.add(&format!("<< /Type /Page /Contents {content} 0 R >>"));
    let tree = b.add(&format!(
        "<< /Type /Pages /Kids [{page} 0 R] /Count 1 /Resources << /Font << /F1 {font} 0 R >> \
         /XObject << /Fm {form} 0 R /Im {image} 0 R >> >> >>"
    ));
    let catalog = b.add(&format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    assert_eq!(text_of(&b.build(catalog)), "page\nform\ninner");
}

#[test]
fn inline_images_are_skipped() {
    let content = b"BT /F1 12 Tf 72 720 Td (before) Tj ET BI /W 4 /H 1 /BPC 8 /CS /G ID \x00(EI)\xff) Tj\n EI \
                    BT /F1 12 Tf 72 700 Td (after) Tj ET";
    let pdf = simple_pdf_bytes(&[content]);
    // "(EI)" inside the data does not end the image early.
    assert_eq!(text_of(&pdf), "before\nafter");
}

#[test]
fn contents_arrays_may_split_tokens() {
    let mut b = PdfBuilder::new();
    let font = b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    let first = b.add_flate_stream("", b"BT /F1 12 Tf 72 720 Td (split");
    let second = b.add_stream("/Filter /ASCIIHexDecode", b"20746578742920546a204554>");
    let page = b.add(&format!(
        "<< /Type /Page /Contents [{first} 0 R {second} 0 R] /Resources << /Font << /F1 {font} 0 R >> >> >>"
    ));
    let pdf = b.build_pages(&[page]);
    // The string continues across the stream boundary; the newline that
    // joins the streams is a control code without a glyph.
    assert_eq!(text_of(&pdf), "split text");
}

#[test]
fn rotated_text_and_missing_fonts() {
    let content = "BT /F1 12 Tf 0 1 -1 0 100 100 Tm (up) Tj ( the side) Tj ET BT /Missing 12 Tf 1 0 0 1 0 0 Tm (fallback) Tj ET";
    assert_eq!(text_of(&simple_pdf(&[content])), "up the side\nfallback");
}

#[test]
fn strings_with_escapes() {
    let content = "BT /F1 12 Tf (a\\(b\\)\\\\c\\101\\t) Tj <44 45 4> Tj ET";
    assert_eq!(text_of(&simple_pdf(&[content])), "a(b)\\cADE@");
}

#[test]
fn errors() {
    assert!(matches!(
        extract_text(b"GIF89a"),
        Err(PdfError::Malformed(_))
    ));
    assert!(matches!(extract_text(b""), Err(PdfError::Malformed(_))));
    assert_eq!(
        extract_text(&simple_pdf(&["", "0 0 m 10 10 l S"])),
        Err(PdfError::NoText)
    );
    let mut b = PdfBuilder::new();
    let catalog = b.add("<< /Type /Catalog >>");
    assert!(matches!(
        extract_text(&b.build(catalog)),
        Err(PdfError::Malformed(_))
    ));
    let encrypted = b.build_with_trailer(&format!(
        "/Root {catalog} 0 R /Encrypt << /Filter /Standard >>"
    ));
    assert_eq!(extract_text(&encrypted), Err(PdfError::Encrypted));
}

#[test]
fn page_tree_cycles_and_duplicates() {
    let mut b = PdfBuilder::new();
    let font = b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    let tree = b.reserve();
    let content = b.add_stream("", text_page("once").as_bytes());
    let page = b.add(&format!(
        "<< /Type /Page /Parent {tree} 0 R /Contents {content} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>"
    ));
    let inner = b.add(&format!("<< /Type /Pages /Kids [{tree} 0 R {page} 0 R] >>"));
    b.set(
        tree,
        format!("<< /Type /Pages /Kids [{inner} 0 R {page} 0 R {tree} 0 R] /Count 1 >>").as_bytes(),
    );
    let catalog = b.add(&format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    let t = extract_text(&b.build(catalog)).unwrap();
    assert_eq!((t.text.as_str(), t.pages.len()), ("once", 1));
}

#[test]
fn stream_object_helper_is_well_formed() {
    let body = stream_object("/K 1", b"xy");
    assert_eq!(body, b"<< /K 1 /Length 2 >>\nstream\nxy\nendstream");
}
