//! A tiny PDF writer for tests: numbered objects, streams with a correct
//! `/Length`, and a classic cross-reference table, so each test states only
//! the objects it is about.

use miniz_oxide::deflate::compress_to_vec_zlib;

pub(super) struct PdfBuilder {
    objects: Vec<Vec<u8>>,
}

impl PdfBuilder {
    pub(super) fn new() -> Self {
        PdfBuilder {
            objects: Vec::new(),
        }
    }

    /// Reserves the next object number (to be filled with [`Self::set`]).
    pub(super) fn reserve(&mut self) -> u32 {
        self.objects.push(b"null".to_vec());
        self.objects.len() as u32
    }

    pub(super) fn set(&mut self, num: u32, body: &[u8]) {
        self.objects[num as usize - 1] = body.to_vec();
    }

    pub(super) fn add(&mut self, body: &str) -> u32 {
        self.add_bytes(body.as_bytes())
    }

    pub(super) fn add_bytes(&mut self, body: &[u8]) -> u32 {
        let num = self.reserve();
        self.set(num, body);
        num
    }

    /// Adds a stream with `dict` entries (without `<< >>`) and `data`.
    pub(super) fn add_stream(&mut self, dict: &str, data: &[u8]) -> u32 {
        self.add_bytes(&stream_object(dict, data))
    }

    /// Adds a FlateDecode stream.
    pub(super) fn add_flate_stream(&mut self, dict: &str, data: &[u8]) -> u32 {
        let packed = compress_to_vec_zlib(data, 6);
        self.add_stream(&format!("{dict} /Filter /FlateDecode"), &packed)
    }

    /// The file: header, objects, xref table, trailer with `/Root root`.
    pub(super) fn build(&self, root: u32) -> Vec<u8> {
        self.build_with_trailer(&format!("/Root {root} 0 R"))
    }

    /// The file of a one-level page tree over `pages` and its catalog.
    pub(super) fn build_pages(&mut self, pages: &[u32]) -> Vec<u8> {
        let kids: Vec<String> = pages.iter().map(|p| format!("{p} 0 R")).collect();
        let tree = self.add(&format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        ));
        let catalog = self.add(&format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
        self.build(catalog)
    }

    pub(super) fn build_with_trailer(&self, trailer: &str) -> Vec<u8> {
        let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in self.objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
            out.extend_from_slice(body);
            out.extend_from_slice(b"\nendobj\n");
        }
        let xref = out.len();
        out.extend_from_slice(
            format!("xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1).as_bytes(),
        );
        for off in offsets {
            out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
        }
        let size = self.objects.len() + 1;
        out.extend_from_slice(
            format!("trailer\n<< /Size {size} {trailer} >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
        );
        out
    }
}

pub(super) fn stream_object(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut body = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    body.extend_from_slice(data);
    body.extend_from_slice(b"\nendstream");
    body
}

/// A document whose pages each draw one content stream with font `/F1`
/// (Helvetica, WinAnsiEncoding, no widths) available as resource.
pub(super) fn simple_pdf(pages: &[&str]) -> Vec<u8> {
    let pages: Vec<&[u8]> = pages.iter().map(|p| p.as_bytes()).collect();
    simple_pdf_bytes(&pages)
}

/// [`simple_pdf`] with binary content streams.
pub(super) fn simple_pdf_bytes(pages: &[&[u8]]) -> Vec<u8> {
    let mut b = PdfBuilder::new();
    let catalog = b.reserve();
    let tree = b.reserve();
    let font =
        b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
    let mut kids = String::new();
    for content in pages {
        let stream = b.add_stream("", content);
        let page = b.add(&format!(
            "<< /Type /Page /Parent {tree} 0 R /Contents {stream} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>"
        ));
        kids += &format!("{page} 0 R ");
    }
    b.set(
        catalog,
        format!("<< /Type /Catalog /Pages {tree} 0 R >>").as_bytes(),
    );
    b.set(
        tree,
        format!("<< /Type /Pages /Kids [{kids}] /Count {} >>", pages.len()).as_bytes(),
    );
    b.build(catalog)
}

/// A page drawing `text` with `/F1` at 12 points.
pub(super) fn text_page(text: &str) -> String {
    format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET")
}
