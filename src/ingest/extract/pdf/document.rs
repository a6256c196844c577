//! The document: the file's bytes plus cross-reference data, with lazy,
//! cached loading of indirect objects (top-level and inside object streams)
//! and decoding of streams within the document's budget.
//!
//! Damage is handled by degrading, not failing: an object that cannot be
//! found where the cross-reference says is looked up again in a one-time
//! recovery scan of the whole file. Only exceeded limits are fatal; they are
//! recorded ("sticky") and surfaced by [`Document::check`], which keeps the
//! many object accessors free of error plumbing.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::error::PdfError;
use super::lexer::find;
use super::limits::{Budget, Limits, MAX_RESOLVE_DEPTH};
use super::object::{Dict, ObjRef, Object, Stream};
use super::parser::Parser;
use super::stream::{self, EndstreamIndex};
use super::xref::{self, Entry, Reader, Scan, XrefTable};

/// The decoded contents of an object stream (`/Type /ObjStm`).
struct ObjStm {
    data: Vec<u8>,
    /// `(object number, offset of its text in data)`, offsets from `/First`.
    entries: Vec<(u32, usize)>,
}

/// What the recovery scan found, plus hints located by byte patterns.
struct Recovery {
    scan: Scan,
    /// Objects inside object streams found by the scan.
    compressed: HashMap<u32, Entry>,
    /// Object numbers whose text contains `/Catalog`.
    catalogs: Vec<u32>,
    /// Dictionaries of cross-reference streams (they double as trailers).
    xref_dicts: Vec<Dict>,
}

pub(super) struct Document<'a> {
    data: &'a [u8],
    pub limits: Limits,
    pub budget: Budget,
    ends: EndstreamIndex,
    xref: XrefTable,
    trailer: Dict,
    cache: RefCell<HashMap<u32, Object>>,
    objstms: RefCell<HashMap<u32, Option<Rc<ObjStm>>>>,
    recovery: OnceCell<Recovery>,
    /// Set while the recovery data is built: loads then must not ask for it.
    recovering: Cell<bool>,
    depth: Cell<usize>,
    fatal: RefCell<Option<PdfError>>,
}

impl<'a> Document<'a> {
    /// Reads the file structure. Fails for non-PDFs, encrypted documents and
    /// exceeded limits; everything else is recovered from lazily.
    pub(super) fn open(data: &'a [u8], limits: &Limits) -> Result<Self, PdfError> {
        if find(&data[..data.len().min(1024)], b"%PDF-", 0).is_none() {
            return Err(PdfError::Malformed("not a PDF file".into()));
        }
        let budget = Budget::new(limits);
        let ends = EndstreamIndex::default();
        let reader = Reader {
            data,
            limits,
            budget: &budget,
            ends: &ends,
        };
        let xref = xref::read(&reader)?.unwrap_or_default();
        let mut doc = Document {
            data,
            limits: limits.clone(),
            budget,
            ends,
            xref,
            trailer: Dict::new(),
            cache: RefCell::default(),
            objstms: RefCell::default(),
            recovery: OnceCell::new(),
            recovering: Cell::new(false),
            depth: Cell::new(0),
            fatal: RefCell::new(None),
        };
        if doc.xref.trailer.contains(b"Encrypt") {
            return Err(PdfError::Encrypted);
        }
        doc.trailer = if doc.xref.trailer.contains(b"Root") {
            doc.xref.trailer.clone()
        } else {
            let recovery = doc.recovery();
            let candidates = recovery.scan.trailers.iter().chain(&recovery.xref_dicts);
            if candidates.clone().any(|t| t.contains(b"Encrypt")) {
                return Err(PdfError::Encrypted);
            }
            // Later ones are newer, so search from the end.
            candidates
                .rev()
                .find(|t| t.contains(b"Root"))
                .cloned()
                .unwrap_or_default()
        };
        if doc.trailer.contains(b"Encrypt") {
            return Err(PdfError::Encrypted);
        }
        doc.check()?;
        Ok(doc)
    }

    /// The first fatal error (an exceeded limit) met so far, if any.
    pub(super) fn check(&self) -> Result<(), PdfError> {
        match &*self.fatal.borrow() {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn fail(&self, error: PdfError) {
        let mut fatal = self.fatal.borrow_mut();
        if fatal.is_none() {
            *fatal = Some(error);
        }
    }

    fn failed(&self) -> bool {
        self.fatal.borrow().is_some()
    }

    /// Follows indirect references until a direct object.
    pub(super) fn resolve(&self, obj: &Object) -> Object {
        let mut current = obj.clone();
        for _ in 0..MAX_RESOLVE_DEPTH {
            match current {
                Object::Ref(r) => current = self.load(r),
                direct => return direct,
            }
        }
        Object::Null
    }

    /// `dict[key]`, resolved; `Null` when absent.
    pub(super) fn get(&self, dict: &Dict, key: &[u8]) -> Object {
        dict.get(key).map_or(Object::Null, |o| self.resolve(o))
    }

    /// Loads indirect object `r` (generation numbers are not checked: stale
    /// generations in damaged files point at the right object more often
    /// than not).
    pub(super) fn load(&self, r: ObjRef) -> Object {
        if let Some(obj) = self.cache.borrow().get(&r.num) {
            return obj.clone();
        }
        if self.depth.get() >= MAX_RESOLVE_DEPTH || self.failed() {
            return Object::Null;
        }
        // Null while loading: an object that needs itself (say, as its own
        // stream /Length) gets null instead of recursing.
        self.cache.borrow_mut().insert(r.num, Object::Null);
        self.depth.set(self.depth.get() + 1);
        let obj = self.load_uncached(r.num);
        self.depth.set(self.depth.get() - 1);
        self.cache.borrow_mut().insert(r.num, obj.clone());
        obj
    }

    fn load_uncached(&self, num: u32) -> Object {
        let entry = self.xref.entries.get(&num).copied();
        if let Some(obj) = entry.and_then(|e| self.load_entry(num, e)) {
            return obj;
        }
        // Missing or wrong in the cross-reference data: ask the recovery scan.
        if self.recovering.get() {
            return Object::Null;
        }
        let recovery = self.recovery();
        let found = recovery
            .scan
            .objects
            .get(&num)
            .map(|&off| Entry::Offset(off));
        for candidate in [found, recovery.compressed.get(&num).copied()]
            .into_iter()
            .flatten()
        {
            if Some(candidate) != entry {
                if let Some(obj) = self.load_entry(num, candidate) {
                    return obj;
                }
            }
        }
        Object::Null
    }

    fn load_entry(&self, num: u32, entry: Entry) -> Option<Object> {
        match entry {
            Entry::Offset(offset) => self.parse_top_level(num, offset, true),
            Entry::Compressed { stream, index } => {
                let objstm = self.objstm(stream)?;
                let &(_, offset) = match objstm.entries.get(index as usize) {
                    Some(e @ &(n, _)) if n == num => e,
                    _ => objstm.entries.iter().find(|(n, _)| *n == num)?,
                };
                let mut parser = Parser::new(&objstm.data, offset, self.limits.max_nesting_depth);
                parser.parse_object().ok()
            }
        }
    }

    /// Parses `num gen obj ...` at `offset`. With `resolve_length` false an
    /// indirect `/Length` is ignored (used while building the recovery data,
    /// which must not recurse into object loading).
    fn parse_top_level(&self, num: u32, offset: usize, resolve_length: bool) -> Option<Object> {
        let mut parser = Parser::new(self.data, offset, self.limits.max_nesting_depth);
        let ind = parser.parse_indirect()?;
        if ind.id.num != num {
            return None;
        }
        let (Object::Dict(dict), Some(start)) = (&ind.object, ind.stream_start) else {
            return Some(ind.object);
        };
        let length = match dict.get(b"Length") {
            Some(Object::Ref(r)) if resolve_length => self.load(*r).as_usize(),
            Some(direct) => direct.as_usize(),
            None => None,
        };
        let range = stream::stream_range(self.data, start, length, &self.ends, &self.limits);
        Some(Object::Stream(Rc::new(Stream {
            dict: (**dict).clone(),
            data: range,
        })))
    }

    /// Decodes a stream's data; `None` if it cannot be decoded. Exceeding a
    /// limit is recorded as fatal.
    pub(super) fn stream_data(&self, stream: &Stream) -> Option<Vec<u8>> {
        if self.failed() {
            return None;
        }
        let raw = &self.data[stream.data.clone()];
        let resolve = |o: &Object| self.resolve(o);
        match stream::decode(raw, &stream.dict, &resolve, &self.limits, &self.budget) {
            Ok(data) => data,
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    fn objstm(&self, num: u32) -> Option<Rc<ObjStm>> {
        if let Some(cached) = self.objstms.borrow().get(&num) {
            return cached.clone();
        }
        // Mark as in progress so a self-referencing stream fails fast.
        self.objstms.borrow_mut().insert(num, None);
        let parsed = self.parse_objstm(num).map(Rc::new);
        self.objstms.borrow_mut().insert(num, parsed.clone());
        parsed
    }

    fn parse_objstm(&self, num: u32) -> Option<ObjStm> {
        let obj = self.load(ObjRef { num, gen: 0 });
        let stream = obj.as_stream()?;
        let n = self.get(&stream.dict, b"N").as_usize()?;
        let first = self.get(&stream.dict, b"First").as_usize()?;
        let data = self.stream_data(stream)?;
        let mut parser = Parser::new(&data, 0, 1);
        let mut entries = Vec::new();
        while entries.len() < n && parser.pos() < first {
            let (Ok(Object::Int(obj_num)), Ok(Object::Int(offset))) =
                (parser.parse_object(), parser.parse_object())
            else {
                break;
            };
            let (Ok(obj_num), Ok(offset)) = (u32::try_from(obj_num), usize::try_from(offset))
            else {
                break;
            };
            entries.push((obj_num, first.saturating_add(offset)));
        }
        Some(ObjStm { data, entries })
    }

    /// The recovery data, built on first use.
    fn recovery(&self) -> &Recovery {
        self.recovery.get_or_init(|| {
            self.recovering.set(true);
            let recovery = self.build_recovery();
            self.recovering.set(false);
            recovery
        })
    }

    fn build_recovery(&self) -> Recovery {
        let scan = xref::scan(self.data, &self.limits).unwrap_or_else(|e| {
            self.fail(e);
            Scan::default()
        });
        let mut offsets: Vec<(usize, u32)> = scan.objects.iter().map(|(&n, &o)| (o, n)).collect();
        offsets.sort_unstable();
        // The object whose text contains byte position `pos`.
        let enclosing = |pos: usize| {
            let i = offsets.partition_point(|&(o, _)| o <= pos);
            i.checked_sub(1).map(|i| offsets[i].1)
        };
        let with_pattern = |pattern: &[u8]| {
            let mut nums = Vec::new();
            let mut from = 0;
            while let Some(at) = find(self.data, pattern, from) {
                from = at + pattern.len();
                nums.extend(enclosing(at));
            }
            nums.dedup();
            nums
        };
        let mut compressed = HashMap::new();
        // Later object streams are newer (incremental updates): they go first.
        for num in with_pattern(b"/ObjStm").into_iter().rev() {
            if let Some(objstm) = self.objstm_during_recovery(&scan, num) {
                for (index, &(inner, _)) in (0u32..).zip(&objstm.entries) {
                    compressed
                        .entry(inner)
                        .or_insert(Entry::Compressed { stream: num, index });
                }
            }
        }
        let xref_dicts = with_pattern(b"/XRef")
            .into_iter()
            .filter_map(|num| {
                let obj = self.parse_top_level(num, *scan.objects.get(&num)?, false)?;
                obj.as_dict().filter(|d| d.has_type(b"XRef")).cloned()
            })
            .collect();
        let catalogs = with_pattern(b"/Catalog");
        Recovery {
            scan,
            compressed,
            catalogs,
            xref_dicts,
        }
    }

    /// Parses an object stream found by the scan without consulting the
    /// (still being built) recovery data.
    fn objstm_during_recovery(&self, scan: &Scan, num: u32) -> Option<Rc<ObjStm>> {
        if let Some(cached) = self.objstms.borrow().get(&num) {
            return cached.clone();
        }
        let obj = self.parse_top_level(num, *scan.objects.get(&num)?, false)?;
        let stream = obj.as_stream()?;
        if !stream.dict.has_type(b"ObjStm") {
            return None;
        }
        self.cache.borrow_mut().insert(num, obj.clone());
        self.objstm(num)
    }

    /// The document catalog (`/Root`), found through the trailer or, failing
    /// that, among the recovered objects.
    pub(super) fn catalog(&self) -> Option<Rc<Dict>> {
        if let Object::Dict(d) = self.get(&self.trailer, b"Root") {
            return Some(d);
        }
        let recovery = self.recovery();
        let mut compressed: Vec<u32> = recovery.compressed.keys().copied().collect();
        compressed.sort_unstable();
        for &num in recovery.catalogs.iter().rev().chain(&compressed) {
            if let Object::Dict(d) = self.load(ObjRef { num, gen: 0 }) {
                if d.has_type(b"Catalog") {
                    return Some(d);
                }
            }
        }
        None
    }

    /// Every object number known from the cross-reference data or the
    /// recovery scan, ascending. Used to find pages when the tree is broken.
    pub(super) fn all_object_numbers(&self) -> Vec<u32> {
        let recovery = self.recovery();
        let mut nums: Vec<u32> = self
            .xref
            .entries
            .keys()
            .chain(recovery.scan.objects.keys())
            .chain(recovery.compressed.keys())
            .copied()
            .collect();
        nums.sort_unstable();
        nums.dedup();
        nums
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(data: &[u8]) -> Result<Document<'_>, PdfError> {
        Document::open(data, &Limits::default())
    }

    /// A one-section file: `head` (objects) then an xref table whose
    /// entries are `offsets`, and a trailer.
    fn with_xref(head: &str, offsets: &[usize], trailer: &str) -> Vec<u8> {
        let mut out = format!("{head}xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1);
        for off in offsets {
            out += &format!("{off:010} 00000 n \n");
        }
        out += &format!("trailer {trailer}\nstartxref\n{}\n%%EOF", head.len());
        out.into_bytes()
    }

    #[test]
    fn rejects_non_pdf_and_encrypted() {
        assert!(matches!(open(b"hello"), Err(PdfError::Malformed(_))));
        let encrypted = with_xref(
            "%PDF-1.4\n1 0 obj <</Type/Catalog>> endobj\n",
            &[9],
            "<</Root 1 0 R/Encrypt 2 0 R>>",
        );
        assert_eq!(open(&encrypted).err(), Some(PdfError::Encrypted));
        // Without usable xref, the recovered trailer still reveals /Encrypt.
        let broken = b"%PDF-1.4\n1 0 obj <</Type/Catalog>> endobj\ntrailer <</Root 1 0 R/Encrypt 2 0 R>>\n%%EOF";
        assert_eq!(open(broken).err(), Some(PdfError::Encrypted));
    }

    #[test]
    fn recovers_objects_with_wrong_offsets() {
        let data = with_xref(
            "%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n2 0 obj [1 2 3] endobj\n",
            &[3, 3],
            "<</Root 1 0 R>>",
        );
        let doc = open(&data).unwrap();
        let catalog = doc.catalog().unwrap();
        assert_eq!(
            doc.get(&catalog, b"Pages").as_array().map(<[_]>::len),
            Some(3)
        );
    }

    #[test]
    fn reference_cycles_resolve_to_null() {
        let data = b"%PDF-1.4\n1 0 obj 2 0 R endobj\n2 0 obj 1 0 R endobj\ntrailer <</Root 1 0 R>>";
        let doc = open(data).unwrap();
        assert_eq!(
            doc.resolve(&Object::Ref(ObjRef { num: 1, gen: 0 })),
            Object::Null
        );
    }

    #[test]
    fn indirect_length_and_self_reference() {
        let data = b"%PDF-1.4\n1 0 obj <</Length 2 0 R>> stream\nabcdef\nendstream endobj\n2 0 obj 6 endobj\n3 0 obj <</Length 3 0 R>> stream\nxyz\nendstream endobj\ntrailer <</Root 9 0 R>>";
        let doc = open(data).unwrap();
        let s = doc.load(ObjRef { num: 1, gen: 0 });
        assert_eq!(doc.stream_data(s.as_stream().unwrap()).unwrap(), b"abcdef");
        let s = doc.load(ObjRef { num: 3, gen: 0 });
        assert_eq!(doc.stream_data(s.as_stream().unwrap()).unwrap(), b"xyz");
    }
}
