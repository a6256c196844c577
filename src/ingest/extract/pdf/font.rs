//! Fonts as text extraction needs them: how a shown string splits into
//! character codes, the text of each code, and each code's advance width.
//!
//! Simple fonts (Type1, TrueType, Type3) use one-byte codes; their text comes
//! from `/ToUnicode` when it maps the code, else from `/Encoding`
//! (`/Differences` glyph names over a base encoding, which for embedded
//! Type 1 programs without one is the program's built-in encoding). Everything is resolved
//! into a 256-entry table at load time. Composite (Type0) fonts split strings
//! with their encoding CMap (Identity-H/V, predefined UCS-2/UTF-16 CMaps or
//! an embedded CMap) and take their text from `/ToUnicode`.

use std::collections::HashMap;

use super::cmap::CMap;
use super::document::Document;
use super::encoding::BaseEncoding;
use super::glyphs::glyph_text;
use super::object::{Dict, Object};
use super::type1::builtin_encoding;

/// One shown glyph: its text (possibly empty), its advance in text space
/// units (per unit of font size), and whether word spacing applies to it.
pub(super) struct Glyph<'t> {
    pub text: &'t str,
    pub advance: f64,
    pub word_space: bool,
}

pub(super) struct Font {
    kind: Kind,
    /// Vertical writing mode: glyphs advance downwards.
    pub vertical: bool,
}

enum Kind {
    Simple(Box<SimpleFont>),
    Composite(Box<CompositeFont>),
}

struct SimpleFont {
    text: Vec<String>,
    advance: Vec<f64>,
}

struct CompositeFont {
    codes: CodeScheme,
    to_unicode: Option<CMap>,
    default_width: f64,
    widths: HashMap<u32, f64>,
    /// `(first CID, last CID, width)` from the `c_first c_last w` form.
    width_ranges: Vec<(u32, u32, f64)>,
}

/// How a composite font's strings split into codes, and what a code means.
enum CodeScheme {
    /// Two-byte codes that are CIDs (Identity-H, Identity-V).
    Identity,
    /// Codes are UTF-16BE (predefined `Uni*-UCS2-*` / `Uni*-UTF16-*` CMaps).
    Utf16,
    /// An embedded CMap stream: its codespace and CID mappings.
    Embedded(CMap),
    /// A predefined CMap we have no table for: split codes with the
    /// `/ToUnicode` codespace if it has one, else as two bytes.
    Unknown,
}

impl Font {
    /// Builds the font from its dictionary. Never fails: what cannot be
    /// understood yields glyphs without text, which the caller skips.
    pub(super) fn load(doc: &Document<'_>, dict: &Dict) -> Font {
        let to_unicode = match doc.get(dict, b"ToUnicode") {
            Object::Stream(s) => doc.stream_data(&s).map(|d| CMap::parse(&d)),
            _ => None,
        }
        .filter(CMap::has_unicode);
        if doc.get(dict, b"Subtype").as_name() == Some(b"Type0") {
            load_composite(doc, dict, to_unicode)
        } else {
            load_simple(doc, dict, to_unicode)
        }
    }

    /// How many widths and encoding differences loading the font from
    /// `dict` reads and keeps (a simple font's `/Widths` up to its 256
    /// codes, every width of a composite font's `/W`, nested lists
    /// included): what loading costs beyond a constant, for the work budget.
    pub(super) fn weight(doc: &Document<'_>, dict: &Dict) -> usize {
        let len = |o: &Object| match o {
            Object::Array(items) => items.len(),
            _ => 0,
        };
        let differences = match doc.get(dict, b"Encoding") {
            Object::Dict(encoding) => len(&doc.get(&encoding, b"Differences")),
            _ => 0,
        };
        let cid_widths = match doc.get(dict, b"DescendantFonts") {
            Object::Array(fonts) => match fonts.first().map(|f| doc.resolve(f)) {
                Some(Object::Dict(d)) => match doc.get(&d, b"W") {
                    Object::Array(w) => w.iter().map(|item| len(&doc.resolve(item)).max(1)).sum(),
                    _ => 0,
                },
                _ => 0,
            },
            _ => 0,
        };
        len(&doc.get(dict, b"Widths")).min(256) + differences + cid_widths
    }

    /// Calls `f` for each glyph of the shown string `bytes`.
    pub(super) fn for_each_glyph(
        &self,
        bytes: &[u8],
        scratch: &mut String,
        mut f: impl FnMut(Glyph<'_>),
    ) {
        match &self.kind {
            Kind::Simple(font) => {
                for &code in bytes {
                    let i = usize::from(code);
                    f(Glyph {
                        text: &font.text[i],
                        advance: font.advance[i],
                        word_space: code == b' ',
                    });
                }
            }
            Kind::Composite(font) => {
                let mut rest = bytes;
                while !rest.is_empty() {
                    let (code, len) = font.next_code(rest);
                    rest = &rest[len.min(rest.len())..];
                    scratch.clear();
                    font.text(code, len, scratch);
                    let advance = if self.vertical { 1.0 } else { font.width(code) };
                    f(Glyph {
                        text: scratch,
                        advance,
                        word_space: len == 1 && code == 32,
                    });
                }
            }
        }
    }
}

fn load_simple(doc: &Document<'_>, dict: &Dict, to_unicode: Option<CMap>) -> Font {
    let subtype = doc.get(dict, b"Subtype");
    let descriptor = doc.get(dict, b"FontDescriptor");
    let descriptor = descriptor.as_dict();
    let base_font = doc.get(dict, b"BaseFont");
    // Drop a subset tag such as "ABCDEF+".
    let base_font = base_font.as_name().unwrap_or_default();
    let base_font = match base_font.iter().position(|&b| b == b'+') {
        Some(6) => &base_font[7..],
        _ => base_font,
    };
    let encoding = SimpleEncoding::load(
        doc,
        dict,
        subtype.as_name(),
        descriptor,
        base_font,
        to_unicode.as_ref(),
    );
    let text = (0..=255u8)
        .map(|code| {
            let mut out = String::new();
            let mut raw = String::new();
            let mapped = to_unicode
                .as_ref()
                .is_some_and(|cmap| cmap.unicode(u32::from(code), &mut raw))
                && normalize_into(&raw, &mut out);
            if !mapped {
                out.clear();
                if let Some(text) = encoding.text(code) {
                    normalize_into(&text, &mut out);
                }
            }
            out
        })
        .collect();
    let advance = simple_widths(doc, dict, subtype.as_name(), descriptor, base_font);
    Font {
        kind: Kind::Simple(Box::new(SimpleFont { text, advance })),
        vertical: false,
    }
}

/// A simple font's `/Encoding`: glyph names from `/Differences` or the
/// embedded program, over a base encoding.
struct SimpleEncoding {
    base: Option<BaseEncoding>,
    differences: Vec<Option<Vec<u8>>>,
    builtin: Option<Vec<Option<Vec<u8>>>>,
}

impl SimpleEncoding {
    fn load(
        doc: &Document<'_>,
        dict: &Dict,
        subtype: Option<&[u8]>,
        descriptor: Option<&Dict>,
        base_font: &[u8],
        to_unicode: Option<&CMap>,
    ) -> Self {
        let mut base = None;
        let mut differences: Vec<Option<Vec<u8>>> = vec![None; 256];
        match doc.get(dict, b"Encoding") {
            Object::Name(name) => base = BaseEncoding::from_name(&name),
            Object::Dict(enc) => {
                base = doc
                    .get(&enc, b"BaseEncoding")
                    .as_name()
                    .and_then(BaseEncoding::from_name);
                if let Object::Array(items) = doc.get(&enc, b"Differences") {
                    read_differences(doc, &items, &mut differences);
                }
            }
            _ => {}
        }
        let is_type1 = matches!(subtype, Some(b"Type1" | b"MMType1"));
        // Without an explicit base encoding an embedded Type 1 program's own
        // encoding applies. Only needed when no /ToUnicode speaks for the font.
        let builtin = match (base, is_type1, to_unicode, descriptor) {
            (None, true, None, Some(d)) => match doc.get(d, b"FontFile") {
                Object::Stream(program) => {
                    doc.stream_data(&program).and_then(|p| builtin_encoding(&p))
                }
                _ => None,
            },
            _ => None,
        };
        let flags = descriptor
            .and_then(|d| doc.get(d, b"Flags").as_int())
            .unwrap_or(0);
        let symbolic = flags & 4 != 0 && flags & 32 == 0;
        let base = base.or(match base_font {
            // Their built-in encodings are not Latin text; leave them unmapped.
            b"Symbol" | b"ZapfDingbats" => None,
            _ if is_type1 && !symbolic => Some(BaseEncoding::Standard),
            _ => Some(BaseEncoding::WinAnsi),
        });
        SimpleEncoding {
            base,
            differences,
            builtin,
        }
    }

    fn text(&self, code: u8) -> Option<String> {
        let i = usize::from(code);
        let name = self.differences[i]
            .as_deref()
            .or_else(|| self.builtin.as_ref()?[i].as_deref());
        // An unknown glyph name ("g12", "a65") falls back to the base
        // encoding: right for bitmap fonts that keep ASCII codes, and
        // harmless when the base has nothing at that code.
        name.and_then(glyph_text)
            .or_else(|| self.base?.char_for(code).map(String::from))
    }
}

/// `/Differences`: a code, then the names of consecutive codes from it.
fn read_differences(doc: &Document<'_>, items: &[Object], differences: &mut [Option<Vec<u8>>]) {
    let mut code: Option<usize> = None;
    for item in items {
        match doc.resolve(item) {
            Object::Int(n) => code = usize::try_from(n).ok(),
            Object::Name(glyph) => {
                if let Some(slot) = code.and_then(|c| differences.get_mut(c)) {
                    *slot = Some(glyph.to_vec());
                }
                code = code.map(|c| c.saturating_add(1));
            }
            _ => {}
        }
    }
}

/// Advance widths of codes 0..=255 in text space units per font size.
fn simple_widths(
    doc: &Document<'_>,
    dict: &Dict,
    subtype: Option<&[u8]>,
    descriptor: Option<&Dict>,
    base_font: &[u8],
) -> Vec<f64> {
    // Type 3 glyph widths are in glyph space, scaled by the FontMatrix.
    let scale = match (subtype, doc.get(dict, b"FontMatrix")) {
        (Some(b"Type3"), Object::Array(m)) => m.first().and_then(Object::as_f64).unwrap_or(0.001),
        _ => 0.001,
    };
    let missing = descriptor
        .and_then(|d| doc.get(d, b"MissingWidth").as_f64())
        .filter(|w| *w > 0.0);
    let first = doc.get(dict, b"FirstChar").as_int().unwrap_or(0);
    let widths = doc.get(dict, b"Widths");
    let widths = widths.as_array().unwrap_or_default();
    // Without /Widths (the standard 14 fonts), assume an average width.
    let fallback = match missing {
        None if widths.is_empty() && base_font.starts_with(b"Courier") => 0.6,
        None if widths.is_empty() => 0.5,
        _ => missing.unwrap_or(0.0) * scale,
    };
    (0..256i64)
        .map(|code| {
            code.checked_sub(first)
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| widths.get(i))
                .and_then(|w| doc.resolve(w).as_f64())
                .map_or(fallback, |w| w * scale)
        })
        .collect()
}

fn load_composite(doc: &Document<'_>, dict: &Dict, to_unicode: Option<CMap>) -> Font {
    let (codes, vertical) = match doc.get(dict, b"Encoding") {
        Object::Name(name) => {
            let vertical = name.ends_with(b"-V");
            let scheme = if name.starts_with(b"Identity-") {
                CodeScheme::Identity
            } else if contains(&name, b"UCS2") || contains(&name, b"UTF16") {
                CodeScheme::Utf16
            } else {
                CodeScheme::Unknown
            };
            (scheme, vertical)
        }
        Object::Stream(s) => {
            let vertical = doc.get(&s.dict, b"WMode").as_int() == Some(1);
            match doc.stream_data(&s) {
                Some(data) => (CodeScheme::Embedded(CMap::parse(&data)), vertical),
                None => (CodeScheme::Unknown, vertical),
            }
        }
        _ => (CodeScheme::Identity, false),
    };
    let descendant = match doc.get(dict, b"DescendantFonts") {
        Object::Array(a) => a.first().map(|d| doc.resolve(d)).unwrap_or(Object::Null),
        other => other,
    };
    let mut font = CompositeFont {
        codes,
        to_unicode,
        default_width: 1.0,
        widths: HashMap::new(),
        width_ranges: Vec::new(),
    };
    if let Some(desc) = descendant.as_dict() {
        if let Some(dw) = doc.get(desc, b"DW").as_f64() {
            font.default_width = dw / 1000.0;
        }
        if let Object::Array(w) = doc.get(desc, b"W") {
            font.read_widths(doc, &w);
        }
    }
    Font {
        kind: Kind::Composite(Box::new(font)),
        vertical,
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

impl CompositeFont {
    /// `/W`: `c [w1 w2 ...]` gives consecutive CIDs from c, and
    /// `c_first c_last w` gives one width to a range.
    fn read_widths(&mut self, doc: &Document<'_>, w: &[Object]) {
        let mut i = 0;
        while i < w.len() {
            let Some(first) = doc
                .resolve(&w[i])
                .as_int()
                .and_then(|c| u32::try_from(c).ok())
            else {
                i += 1;
                continue;
            };
            match w.get(i + 1).map(|o| doc.resolve(o)) {
                Some(Object::Array(list)) => {
                    for (i, width) in (0u32..).zip(list.iter()) {
                        let (Some(cid), Some(width)) =
                            (first.checked_add(i), doc.resolve(width).as_f64())
                        else {
                            continue;
                        };
                        self.widths.insert(cid, width / 1000.0);
                    }
                    i += 2;
                }
                Some(last) => {
                    let last = last.as_int().and_then(|c| u32::try_from(c).ok());
                    let width = w.get(i + 2).and_then(|o| doc.resolve(o).as_f64());
                    if let (Some(last), Some(width)) = (last, width) {
                        self.width_ranges.push((first, last, width / 1000.0));
                    }
                    i += 3;
                }
                None => break,
            }
        }
    }

    fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        let two = |bytes: &[u8]| match bytes {
            [a, b, ..] => (u32::from(*a) << 8 | u32::from(*b), 2),
            [a] => (u32::from(*a), 1),
            [] => (0, 1),
        };
        match &self.codes {
            CodeScheme::Identity => two(bytes),
            CodeScheme::Utf16 => match bytes {
                // A high surrogate takes its low surrogate along.
                [a @ 0xd8..=0xdb, b, c @ 0xdc..=0xdf, d, ..] => {
                    (u32::from_be_bytes([*a, *b, *c, *d]), 4)
                }
                _ => two(bytes),
            },
            CodeScheme::Embedded(cmap) => cmap.next_code(bytes),
            CodeScheme::Unknown => match &self.to_unicode {
                Some(cmap) if cmap.has_codespace() => cmap.next_code(bytes),
                _ => two(bytes),
            },
        }
    }

    fn text(&self, code: u32, len: usize, out: &mut String) {
        let mut raw = String::new();
        let mapped = self
            .to_unicode
            .as_ref()
            .is_some_and(|c| c.unicode(code, &mut raw));
        if !mapped {
            if let CodeScheme::Utf16 = self.codes {
                let bytes = code.to_be_bytes();
                raw = super::cmap::utf16be(&bytes[4 - len.min(4)..]);
            }
        }
        normalize_into(&raw, out);
    }

    fn width(&self, code: u32) -> f64 {
        let cid = match &self.codes {
            CodeScheme::Identity => Some(code),
            CodeScheme::Embedded(cmap) => cmap.cid(code),
            CodeScheme::Utf16 | CodeScheme::Unknown => None,
        };
        let Some(cid) = cid else {
            return self.default_width;
        };
        if let Some(&w) = self.widths.get(&cid) {
            return w;
        }
        self.width_ranges
            .iter()
            .find(|&&(first, last, _)| first <= cid && cid <= last)
            .map_or(self.default_width, |&(_, _, w)| w)
    }
}

/// Appends `text` to `out` in the form the index wants: ligatures spelled
/// out, no-break and other fixed-width spaces as plain spaces, a drawn soft
/// hyphen as "-", and control and invisible characters dropped. Returns
/// whether anything visible was appended.
pub(super) fn normalize_into(text: &str, out: &mut String) -> bool {
    let before = out.len();
    let mut visible = false;
    for c in text.chars() {
        let replacement = match c {
            '\t' | '\n' | '\r' | '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' => {
                " "
            }
            '\u{ad}' => "-",
            '\u{fb00}' => "ff",
            '\u{fb01}' => "fi",
            '\u{fb02}' => "fl",
            '\u{fb03}' => "ffi",
            '\u{fb04}' => "ffl",
            '\u{fb05}' | '\u{fb06}' => "st",
            '\u{200b}' | '\u{2060}' | '\u{feff}' | '\u{fffd}' => "",
            c if c.is_control() => "",
            c => {
                out.push(c);
                visible |= !c.is_whitespace();
                continue;
            }
        };
        out.push_str(replacement);
        visible |= !replacement.trim().is_empty();
    }
    // Whitespace alone still counts as a mapping (a space glyph).
    visible || out.len() > before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization() {
        let mut out = String::new();
        assert!(normalize_into(
            "\u{fb01}ne\u{a0}caf\u{e9}\u{ad}\u{feff}\u{1}",
            &mut out
        ));
        assert_eq!(out, "fine café-");
        let mut out = String::new();
        assert!(!normalize_into("\u{0}\u{fffd}", &mut out));
        assert!(out.is_empty());
        assert!(normalize_into(" ", &mut out));
    }
}
