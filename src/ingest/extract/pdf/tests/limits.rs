//! Every resource limit, exercised at its edge: the largest input within the
//! limit succeeds and one unit more fails with the right `TooLarge`. Limits
//! whose production value is cheap to reach are tested at that value; the
//! others through [`Limits`] fields scaled down.

use super::super::{
    extract_text, extract_text_with_limits, LimitKind, Limits, PdfError, MAX_NESTING_DEPTH,
    MAX_PAGES,
};
use super::builder::{simple_pdf, text_page, PdfBuilder};

fn limited(pdf: &[u8], limits: Limits) -> Result<String, PdfError> {
    extract_text_with_limits(pdf, &limits).map(|t| t.text)
}

fn exceeded(result: Result<String, PdfError>) -> Option<(LimitKind, usize)> {
    match result {
        Err(PdfError::TooLarge(limit)) => Some((limit.kind, limit.max)),
        _ => None,
    }
}

/// Asserts that `pdf` reads with one limit (set by `set`) at `at` and is
/// refused with `kind` at one less.
fn edge(pdf: &[u8], at: usize, kind: LimitKind, set: fn(&mut Limits, usize)) {
    assert!(with_limit(pdf, set, at).is_ok(), "{kind:?} at {at}");
    assert_eq!(exceeded(with_limit(pdf, set, at - 1)), Some((kind, at - 1)));
}

/// `pdf` read with one limit, set by `set` to `max`, and the others at
/// their defaults.
fn with_limit(pdf: &[u8], set: fn(&mut Limits, usize), max: usize) -> Result<String, PdfError> {
    let mut limits = Limits::default();
    set(&mut limits, max);
    limited(pdf, limits)
}

#[test]
fn input_bytes() {
    let pdf = simple_pdf(&[&text_page("x")]);
    let at = |max| {
        limited(
            &pdf,
            Limits {
                max_input_bytes: max,
                ..Limits::default()
            },
        )
    };
    assert!(at(pdf.len()).is_ok());
    assert_eq!(
        exceeded(at(pdf.len() - 1)),
        Some((LimitKind::InputBytes, pdf.len() - 1))
    );
}

/// A page whose flate content stream decodes to `content`.
fn flate_page(content: &[u8]) -> Vec<u8> {
    let mut b = PdfBuilder::new();
    let font = b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    let stream = b.add_flate_stream("", content);
    let page = b.add(&format!(
        "<< /Type /Page /Contents [{stream} 0 R {stream} 0 R] /Resources << /Font << /F1 {font} 0 R >> >> >>"
    ));
    b.build_pages(&[page])
}

#[test]
fn stream_and_total_decoded_bytes() {
    let content = text_page("decoded");
    let n = content.len();
    // The page draws the same stream twice: 2n decoded bytes in total.
    let pdf = flate_page(content.as_bytes());
    edge(&pdf, n, LimitKind::StreamBytes, |l, max| {
        l.max_stream_decoded_bytes = max
    });
    edge(&pdf, 2 * n, LimitKind::DecodedBytes, |l, max| {
        l.max_total_decoded_bytes = max
    });
}

#[test]
fn decompression_bomb_stops_at_the_stream_limit() {
    // 8 MiB of spaces in 8 KiB of deflate, against a 1 MiB limit.
    let pdf = flate_page(&vec![b' '; 8 << 20]);
    let limits = Limits {
        max_stream_decoded_bytes: 1 << 20,
        ..Limits::default()
    };
    assert_eq!(
        exceeded(limited(&pdf, limits)),
        Some((LimitKind::StreamBytes, 1 << 20))
    );
}

#[test]
fn objects() {
    let pdf = simple_pdf(&[&text_page("x")]);
    // simple_pdf writes five objects: catalog, tree, font, content, page.
    edge(&pdf, 5, LimitKind::Objects, |l, max| l.max_objects = max);
}

#[test]
fn pages_at_the_production_limit() {
    // MAX_PAGES pages share one content stream; one page more is refused
    // before any content is interpreted.
    let build = |count: usize| {
        let mut b = PdfBuilder::new();
        let font = b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
        let content = b.add_stream("", b"BT /F1 1 Tf (p) Tj ET");
        // Intermediate nodes of 100 kids each keep the arrays short.
        let mut kids = String::new();
        let mut remaining = count;
        while remaining > 0 {
            let here = remaining.min(100);
            let pages: Vec<u32> = (0..here)
                .map(|_| b.add(&format!("<< /Type /Page /Contents {content} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>")))
                .collect();
            let list: String = pages.iter().map(|p| format!("{p} 0 R ")).collect();
            let node = b.add(&format!("<< /Type /Pages /Kids [{list}] >>"));
            kids += &format!("{node} 0 R ");
            remaining -= here;
        }
        let tree = b.add(&format!("<< /Type /Pages /Kids [{kids}] /Count {count} >>"));
        let catalog = b.add(&format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
        b.build(catalog)
    };
    let at_limit = extract_text(&build(MAX_PAGES)).unwrap();
    assert_eq!(at_limit.pages.len(), MAX_PAGES);
    assert_eq!(
        exceeded(extract_text(&build(MAX_PAGES + 1)).map(|t| t.text)),
        Some((LimitKind::Pages, MAX_PAGES))
    );
}

#[test]
fn pages_scaled() {
    let pdf = simple_pdf(&[&text_page("a"), &text_page("b"), &text_page("c")]);
    let at = |max| {
        limited(
            &pdf,
            Limits {
                max_pages: max,
                ..Limits::default()
            },
        )
    };
    assert!(at(3).is_ok());
    assert_eq!(exceeded(at(2)), Some((LimitKind::Pages, 2)));
}

#[test]
fn text_bytes_including_page_separators() {
    let pdf = simple_pdf(&[&text_page("ab"), &text_page("cd")]);
    let text = extract_text(&pdf).unwrap().text;
    let at = |max| {
        limited(
            &pdf,
            Limits {
                max_text_bytes: max,
                ..Limits::default()
            },
        )
    };
    assert_eq!(at(text.len()).unwrap(), text);
    assert_eq!(
        exceeded(at(text.len() - 1)),
        Some((LimitKind::TextBytes, text.len() - 1))
    );
    // An empty last page adds only its separator, which alone is too much.
    let pdf = simple_pdf(&[&text_page("ab"), ""]);
    let at = |max| {
        limited(
            &pdf,
            Limits {
                max_text_bytes: max,
                ..Limits::default()
            },
        )
    };
    assert_eq!(at(5).unwrap(), "ab\n\x0c\n");
    assert_eq!(exceeded(at(4)), Some((LimitKind::TextBytes, 4)));
}

#[test]
fn interpreted_bytes_and_form_fan_out() {
    let content = text_page("w");
    // Each interpreted stream costs its length plus 64.
    let cost = content.len() + 64;
    let pdf = simple_pdf(&[&content]);
    let at = |max| {
        limited(
            &pdf,
            Limits {
                max_interpreted_bytes: max,
                ..Limits::default()
            },
        )
    };
    assert!(at(cost).is_ok());
    assert_eq!(exceeded(at(cost - 1)), Some((LimitKind::Work, cost - 1)));

    // Ten forms, each drawing the next ten times: 10^10 draws if unchecked.
    let mut b = PdfBuilder::new();
    let mut previous: Option<u32> = None;
    for _ in 0..10 {
        let body = match previous {
            Some(p) => (
                format!("/Type /XObject /Subtype /Form /Resources << /XObject << /N {p} 0 R >> >>"),
                "/N Do ".repeat(10),
            ),
            None => (
                "/Type /XObject /Subtype /Form".to_string(),
                "BT (leaf) Tj ET".to_string(),
            ),
        };
        previous = Some(b.add_stream(&body.0, body.1.as_bytes()));
    }
    let top = previous.unwrap_or_default();
    let content = b.add_stream("", b"/Top Do");
    let page = b.add(&format!(
        "<< /Type /Page /Contents {content} 0 R /Resources << /XObject << /Top {top} 0 R >> >> >>"
    ));
    let pdf = b.build_pages(&[page]);
    let limits = Limits {
        max_interpreted_bytes: 1 << 20,
        ..Limits::default()
    };
    assert_eq!(
        exceeded(limited(&pdf, limits)),
        Some((LimitKind::Work, 1 << 20))
    );
}

#[test]
fn page_content_bytes_joined_from_repeated_parts() {
    let content = text_page("joined");
    // The page joins the same stream twice, each part and a newline.
    let joined = 2 * (content.len() + 1);
    let pdf = flate_page(content.as_bytes());
    edge(&pdf, joined, LimitKind::PageContentBytes, |l, max| {
        l.max_page_content_bytes = max
    });
}

/// Pages sharing one `/Contents` array of many empty parts: every part
/// read costs work (64), however little it holds.
#[test]
fn every_part_of_a_pages_contents_costs_work() {
    let mut b = PdfBuilder::new();
    let empty = b.add_stream("", b"");
    let text = b.add_stream("", text_page("parts").as_bytes());
    let mut parts = format!("{text} 0 R");
    parts.push_str(&format!(" {empty} 0 R").repeat(999));
    let array = b.add(&format!("[{parts}]"));
    let font = b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    let pages: Vec<u32> = (0..10)
        .map(|_| {
            b.add(&format!(
                "<< /Type /Page /Contents {array} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>"
            ))
        })
        .collect();
    let pdf = b.build_pages(&pages);
    assert!(limited(&pdf, Limits::default()).is_ok());
    // Ten pages of a thousand parts: at least 640,000 of work.
    let limits = Limits {
        max_interpreted_bytes: 600_000,
        ..Limits::default()
    };
    assert_eq!(
        exceeded(limited(&pdf, limits)),
        Some((LimitKind::Work, 600_000))
    );
}

/// A font's widths cost work when it is loaded, and a font given inline
/// in a form's resources is loaded once however often the form is drawn.
#[test]
fn font_loading_costs_work_once_per_font() {
    let widths = vec!["500"; 10_000].join(" ");
    let font = format!(
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 0 /LastChar 9999 /Widths [{widths}] >>"
    );
    let mut b = PdfBuilder::new();
    let form = b.add_stream(
        &format!("/Type /XObject /Subtype /Form /Resources << /Font << /F1 {font} >> >>"),
        text_page("inline").as_bytes(),
    );
    let content = b.add_stream("", "/X Do ".repeat(200).as_bytes());
    let page = b.add(&format!(
        "<< /Type /Page /Contents {content} 0 R /Resources << /XObject << /X {form} 0 R >> >> >>"
    ));
    let pdf = b.build_pages(&[page]);
    // 200 draws of a short form and one load of 256 of the widths (at 128
    // each, 32,768): far under 200 loads (6,553,600).
    let work = |max| with_limit(&pdf, |l, m| l.max_interpreted_bytes = m, max);
    assert!(work(100_000).is_ok());
    assert_eq!(exceeded(work(30_000)), Some((LimitKind::Work, 30_000)));

    // Composite fonts sharing one descendant with a long nested /W: each
    // font charges every width it reads (30 fonts x 30,000 widths at 128).
    let mut b = PdfBuilder::new();
    let widths = vec!["500"; 30_000].join(" ");
    let descendant = b.add(&format!(
        "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /X /W [0 [{widths}]] >>"
    ));
    let fonts: Vec<String> = (0..30)
        .map(|i| {
            let f = b.add(&format!(
                "<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /DescendantFonts [{descendant} 0 R] >>"
            ));
            format!("/F{i} {f} 0 R")
        })
        .collect();
    let shows: String = (0..30)
        .map(|i| format!("BT /F{i} 12 Tf <0041> Tj ET\n"))
        .collect();
    let content = b.add_stream("", format!("BT /F0 12 Tf (x) Tj ET\n{shows}").as_bytes());
    let page = b.add(&format!(
        "<< /Type /Page /Contents {content} 0 R /Resources << /Font << {} >> >> >>",
        fonts.join(" ")
    ));
    let pdf = b.build_pages(&[page]);
    let all = 30 * 30_000 * 128;
    assert_eq!(
        exceeded(with_limit(
            &pdf,
            |l, m| l.max_interpreted_bytes = m,
            all - 1
        )),
        Some((LimitKind::Work, all - 1))
    );
}

#[test]
fn nesting_depth_at_the_production_limit() {
    // The page dictionary holds arrays nested so that the deepest one sits
    // `depth` levels down, counting the page dictionary itself. Too deep, the
    // page object is unreadable and the document has no pages.
    let page_at_depth = |depth: usize| {
        let deep = format!("{}{}", "[".repeat(depth - 1), "]".repeat(depth - 1));
        let mut b = PdfBuilder::new();
        let font = b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
        let content = b.add_stream("", text_page("deep").as_bytes());
        let page = b.add(&format!(
            "<< /Type /Page /Contents {content} 0 R /Resources << /Font << /F1 {font} 0 R >> >> /Deep {deep} >>"
        ));
        b.build_pages(&[page])
    };
    assert_eq!(
        extract_text(&page_at_depth(MAX_NESTING_DEPTH))
            .unwrap()
            .text,
        "deep"
    );
    assert!(matches!(
        extract_text(&page_at_depth(MAX_NESTING_DEPTH + 1)),
        Err(PdfError::Malformed(_))
    ));
    // Absurd depth neither recurses deeply nor breaks content streams.
    let content = format!("{} BT /F1 12 Tf (ok) Tj ET", "[".repeat(1_000_000));
    assert_eq!(extract_text(&simple_pdf(&[&content])).unwrap().text, "ok");
}

#[test]
fn structural_limits_terminate() {
    // Graphics state nested far beyond MAX_GSTATE_DEPTH, operands far beyond
    // MAX_OPERANDS, and a form drawing itself (MAX_FORM_DEPTH).
    let content = format!(
        "{} {} BT /F1 12 Tf 0 0 Td {} (still) Tj ET {}",
        "q ".repeat(100_000),
        "1 ".repeat(100_000),
        "9 ".repeat(10),
        "Q ".repeat(100_000)
    );
    assert_eq!(
        extract_text(&simple_pdf(&[&content])).unwrap().text,
        "still"
    );

    let mut b = PdfBuilder::new();
    let font = b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    let form = b.reserve();
    b.set(
        form,
        &super::builder::stream_object(
            &format!(
                "/Subtype /Form /Matrix [1 0 0 1 0 -20] \
                 /Resources << /XObject << /Me {form} 0 R >> /Font << /F1 {font} 0 R >> >>"
            ),
            b"BT /F1 12 Tf (me) Tj ET /Me Do",
        ),
    );
    let content = b.add_stream("", b"/Me Do");
    let page = b.add(&format!(
        "<< /Type /Page /Contents {content} 0 R /Resources << /XObject << /Me {form} 0 R >> >> >>"
    ));
    let pdf = b.build_pages(&[page]);
    let text = extract_text(&pdf).unwrap().text;
    assert_eq!(
        text.matches("me").count(),
        16,
        "drawn once per level of MAX_FORM_DEPTH"
    );
}

#[test]
fn reference_chains_and_prev_loops_terminate() {
    // /Root is object 1, which refers to 2, 2 to 3, ... a chain longer than
    // MAX_RESOLVE_DEPTH: it is abandoned, the recovery finds the catalog by
    // its /Type, and the catalog (having no pages) makes the file unusable.
    let mut b = PdfBuilder::new();
    for i in 1..=100 {
        b.add(&format!("{} 0 R", i + 1));
    }
    b.add("<< /Type /Catalog >>");
    assert!(matches!(
        extract_text(&b.build(1)),
        Err(PdfError::Malformed(_))
    ));

    // A /Prev chain pointing at itself.
    let pdf = simple_pdf(&[&text_page("loop")]);
    let xref = String::from_utf8_lossy(&pdf).rfind("xref\n0").unwrap_or(0);
    let looped = String::from_utf8_lossy(&pdf)
        .replace(" >>\nstartxref", &format!(" /Prev {xref} >>\nstartxref"));
    assert_eq!(extract_text(looped.as_bytes()).unwrap().text, "loop");
}

#[test]
fn huge_resource_dictionaries_stay_fast() {
    // 20,000 font names and 100,000 font switches: each lookup is linear in
    // the dictionary only the first time a name is seen in a stream.
    let mut b = PdfBuilder::new();
    let font = b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    let fonts: String = (0..20_000).map(|i| format!("/F{i} {font} 0 R ")).collect();
    let content = format!("BT {} (fast) Tj ET", "/F19999 12 Tf ".repeat(100_000));
    let stream = b.add_stream("", content.as_bytes());
    let page = b.add(&format!(
        "<< /Type /Page /Contents {stream} 0 R /Resources << /Font << {fonts} >> >> >>"
    ));
    let pdf = b.build_pages(&[page]);
    let started = std::time::Instant::now();
    assert_eq!(extract_text(&pdf).unwrap().text, "fast");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}
