//! The content-stream interpreter: runs a page's operators, tracking just the
//! graphics and text state that positions text (CTM, text matrices, font,
//! spacing), and hands each shown string to the layout as a positioned run.
//! Form XObjects are followed; paths, images and colours are ignored, and
//! inline image data is skipped without being tokenized.

use std::collections::HashMap;
use std::rc::Rc;

use super::document::Document;
use super::error::{LimitKind, PdfError};
use super::font::Font;
use super::layout::{PageText, Run, WORD_GAP};
use super::lexer::{find, is_delimiter, is_whitespace};
use super::limits::{too_large, MAX_FORM_DEPTH, MAX_GSTATE_DEPTH, MAX_OPERANDS};
use super::matrix::Matrix;
use super::object::{Dict, Object};
use super::pages::Page;
use super::parser::Parser;

/// Work charged for drawing a form, on top of its length, and for each
/// part of a page's `/Contents`, so that drawing an empty form (or reading
/// an empty part) many times still uses up the work budget.
const FORM_OVERHEAD: usize = 64;

/// Work charged for each width or encoding difference a font's loading
/// reads and keeps ([`Font::weight`]), so that many fonts with huge width
/// tables use up the work budget like content does. It is about what an
/// entry of a kept width table costs in memory, so the budget bounds the
/// memory fonts take too (8 million widths at most).
const FONT_ITEM_COST: usize = 128;

#[derive(Clone)]
struct GraphicsState {
    ctm: Matrix,
    font: Option<Rc<Font>>,
    font_size: f64,
    char_spacing: f64,
    word_spacing: f64,
    /// `Tz` / 100.
    horizontal_scale: f64,
    leading: f64,
    rise: f64,
}

impl GraphicsState {
    fn new(ctm: Matrix) -> Self {
        GraphicsState {
            ctm,
            font: None,
            font_size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            horizontal_scale: 1.0,
            leading: 0.0,
            rise: 0.0,
        }
    }
}

/// The text matrix and text line matrix of the current `BT` ... `ET`.
struct TextPosition {
    tm: Matrix,
    line: Matrix,
}

impl TextPosition {
    fn new() -> Self {
        TextPosition {
            tm: Matrix::IDENTITY,
            line: Matrix::IDENTITY,
        }
    }

    fn move_line(&mut self, tx: f64, ty: f64) {
        self.line.pre_translate(tx, ty);
        self.tm = self.line;
    }
}

/// A form XObject ready to draw.
struct Form {
    content: Rc<[u8]>,
    resources: Option<Rc<Dict>>,
    matrix: Matrix,
}

/// Resource names already looked up while running one content stream.
/// Resource dictionaries can be huge and `Tf`/`Do` frequent; this keeps each
/// lookup constant-time after the first.
#[derive(Default)]
struct NameCache {
    fonts: HashMap<Vec<u8>, Rc<Font>>,
    forms: HashMap<Vec<u8>, Option<Rc<Form>>>,
}

/// Runs content streams; caches fonts and decoded forms across pages.
pub(super) struct Interpreter<'d, 'a> {
    doc: &'d Document<'a>,
    fonts: HashMap<u32, Rc<Font>>,
    /// Fonts given inline (a dictionary, not a reference) in a resource
    /// dictionary, by the address of that dictionary, which the entry
    /// keeps alive so that the address stays its own: a form drawn again
    /// finds them loaded.
    inline_fonts: HashMap<usize, (Rc<Dict>, Rc<Font>)>,
    /// Used when a font is missing from the resources: better readable
    /// Latin text than none.
    fallback_font: Rc<Font>,
    forms: HashMap<u32, Option<Rc<Form>>>,
    scratch: String,
    run_text: String,
}

impl<'d, 'a> Interpreter<'d, 'a> {
    pub(super) fn new(doc: &'d Document<'a>) -> Self {
        Interpreter {
            doc,
            fonts: HashMap::new(),
            inline_fonts: HashMap::new(),
            fallback_font: Rc::new(Font::load(doc, &Dict::new())),
            forms: HashMap::new(),
            scratch: String::new(),
            run_text: String::new(),
        }
    }

    /// The text of `page`, at most `limit` bytes.
    pub(super) fn page_text(&mut self, page: &Page, limit: usize) -> Result<String, PdfError> {
        let content = self.page_content(page)?;
        let mut sink = PageText::new(limit);
        let state = GraphicsState::new(Matrix::IDENTITY);
        self.run(&content, page.resources.as_deref(), state, 0, &mut sink)?;
        self.doc.check()?;
        Ok(sink.finish())
    }

    /// `/Contents` is a stream or an array of streams whose concatenation is
    /// the content (a token may even straddle two of them). Each part read
    /// is charged to the work budget (pages may share one long array), and
    /// the joined content is bounded by `max_page_content_bytes`.
    fn page_content(&self, page: &Page) -> Result<Vec<u8>, PdfError> {
        Ok(match self.doc.get(&page.dict, b"Contents") {
            Object::Stream(s) => self.doc.stream_data(&s).unwrap_or_default(),
            Object::Array(parts) => {
                let max = self.doc.limits.max_page_content_bytes;
                let mut content = Vec::new();
                for part in parts.iter() {
                    self.doc.budget.charge_interpreted(FORM_OVERHEAD)?;
                    if let Object::Stream(s) = self.doc.resolve(part) {
                        let data = self.doc.stream_data(&s).unwrap_or_default();
                        if content.len() + data.len() + 1 > max {
                            return Err(too_large(LimitKind::PageContentBytes, max));
                        }
                        content.extend(data);
                        content.push(b'\n');
                    }
                }
                content
            }
            _ => Vec::new(),
        })
    }

    fn run(
        &mut self,
        content: &[u8],
        resources: Option<&Dict>,
        mut state: GraphicsState,
        depth: usize,
        sink: &mut PageText,
    ) -> Result<(), PdfError> {
        self.doc
            .budget
            .charge_interpreted(content.len().saturating_add(FORM_OVERHEAD))?;
        let mut saved: Vec<GraphicsState> = Vec::new();
        let mut unsaved_q = 0usize; // `q` beyond the stack limit, to match `Q`
        let mut text = TextPosition::new();
        let mut operands: Vec<Object> = Vec::new();
        let mut names = NameCache::default();
        let mut parser = Parser::for_content(content, self.doc.limits.max_nesting_depth);
        while let Some(item) = parser.parse_operand_or_keyword() {
            let op = match item {
                Ok(operand) => {
                    if operands.len() < MAX_OPERANDS {
                        operands.push(operand);
                    }
                    continue;
                }
                Err(op) => op,
            };
            let s = &mut state;
            match op {
                b"q" if saved.len() < MAX_GSTATE_DEPTH => saved.push(s.clone()),
                b"q" => unsaved_q += 1,
                b"Q" if unsaved_q > 0 => unsaved_q -= 1,
                b"Q" => {
                    if let Some(previous) = saved.pop() {
                        *s = previous;
                    }
                }
                b"cm" => {
                    if let Some(m) = matrix(&operands) {
                        s.ctm = m.then(&s.ctm);
                    }
                }
                b"BT" => text = TextPosition::new(),
                b"Tf" => {
                    if let [.., Object::Name(name), size] = &operands[..] {
                        s.font = Some(self.font(&mut names, resources, name)?);
                        s.font_size = size.as_f64().unwrap_or(0.0);
                    }
                }
                b"Tc" => s.char_spacing = number(&operands).unwrap_or(s.char_spacing),
                b"Tw" => s.word_spacing = number(&operands).unwrap_or(s.word_spacing),
                b"Tz" => {
                    s.horizontal_scale = number(&operands).map_or(s.horizontal_scale, |z| z / 100.0)
                }
                b"TL" => s.leading = number(&operands).unwrap_or(s.leading),
                b"Ts" => s.rise = number(&operands).unwrap_or(s.rise),
                b"Td" | b"TD" => {
                    if let [.., tx, ty] = &operands[..] {
                        let (tx, ty) = (tx.as_f64().unwrap_or(0.0), ty.as_f64().unwrap_or(0.0));
                        if op == b"TD" {
                            s.leading = -ty;
                        }
                        text.move_line(tx, ty);
                    }
                }
                b"Tm" => {
                    if let Some(m) = matrix(&operands) {
                        text.line = m;
                        text.tm = m;
                    }
                }
                b"T*" => text.move_line(0.0, -s.leading),
                b"Tj" | b"'" | b"\"" => {
                    if op == b"\"" {
                        if let [aw, ac, _] = &operands[operands.len().saturating_sub(3)..] {
                            s.word_spacing = aw.as_f64().unwrap_or(s.word_spacing);
                            s.char_spacing = ac.as_f64().unwrap_or(s.char_spacing);
                        }
                    }
                    if op != b"Tj" {
                        text.move_line(0.0, -s.leading);
                    }
                    if let Some(Object::Str(bytes)) = operands.last() {
                        self.show(bytes, s, &mut text, sink)?;
                    }
                }
                b"TJ" => {
                    if let Some(Object::Array(items)) = operands.last() {
                        for item in items.iter() {
                            match item {
                                Object::Str(bytes) => self.show(bytes, s, &mut text, sink)?,
                                _ => adjust(item.as_f64().unwrap_or(0.0), s, &mut text),
                            }
                        }
                    }
                }
                b"Do" => {
                    if let Some(Object::Name(name)) = operands.last() {
                        if let Some(form) = self.form(&mut names, resources, name) {
                            self.draw_form(&form, resources, s, depth, sink)?;
                        }
                    }
                }
                b"ID" => skip_inline_image(&mut parser),
                _ => {}
            }
            operands.clear();
        }
        Ok(())
    }

    /// Shows one string: advances the text matrix glyph by glyph and emits
    /// the string's text as runs. A string is split where character or word
    /// spacing opens a word-sized gap between two glyphs: some writers
    /// (Ghostscript among them) draw "y c" as `(yc)` with a large `Tc`.
    fn show(
        &mut self,
        bytes: &[u8],
        s: &GraphicsState,
        text: &mut TextPosition,
        sink: &mut PageText,
    ) -> Result<(), PdfError> {
        let font = s.font.clone().unwrap_or_else(|| self.fallback_font.clone());
        let split_gap = WORD_GAP * s.font_size.abs();
        let max_text = self.doc.limits.max_text_bytes;
        let run_text = &mut self.run_text;
        run_text.clear();
        let mut run_start = text.tm;
        let mut run_end = text.tm;
        let mut gap = 0.0;
        let mut result = Ok(());
        font.for_each_glyph(bytes, &mut self.scratch, |glyph| {
            if gap > split_gap && !run_text.is_empty() && result.is_ok() {
                result = emit(
                    sink,
                    run_text,
                    &run_start,
                    &run_end,
                    s,
                    font.vertical,
                    max_text,
                );
                run_text.clear();
            }
            if run_text.is_empty() {
                run_start = text.tm;
            }
            run_text.push_str(glyph.text);
            let width = glyph.advance * s.font_size;
            let spacing = s.char_spacing
                + if glyph.word_space {
                    s.word_spacing
                } else {
                    0.0
                };
            if font.vertical {
                text.tm.pre_translate(0.0, -width);
                run_end = text.tm;
                text.tm.pre_translate(0.0, spacing);
            } else {
                text.tm.pre_translate(width * s.horizontal_scale, 0.0);
                run_end = text.tm;
                text.tm.pre_translate(spacing * s.horizontal_scale, 0.0);
                gap = spacing * s.horizontal_scale;
            }
        });
        result?;
        emit(
            sink,
            run_text,
            &run_start,
            &run_end,
            s,
            font.vertical,
            max_text,
        )
    }

    /// The font `name` of `resources`; unknown names get the fallback font.
    fn font(
        &mut self,
        names: &mut NameCache,
        resources: Option<&Dict>,
        name: &[u8],
    ) -> Result<Rc<Font>, PdfError> {
        if let Some(font) = names.fonts.get(name) {
            return Ok(font.clone());
        }
        let font = self.load_font(resources, name)?;
        names.fonts.insert(name.to_vec(), font.clone());
        Ok(font)
    }

    /// Loads a font, once per font object (or inline dictionary), its
    /// loading charged to the work budget.
    fn load_font(&mut self, resources: Option<&Dict>, name: &[u8]) -> Result<Rc<Font>, PdfError> {
        let fonts = resources.map(|r| self.doc.get(r, b"Font"));
        let Some(entry) = fonts
            .as_ref()
            .and_then(Object::as_dict)
            .and_then(|f| f.get(name))
        else {
            return Ok(self.fallback_font.clone());
        };
        if let Some(font) = entry.as_ref().and_then(|r| self.fonts.get(&r.num)) {
            return Ok(font.clone());
        }
        let inline = match entry {
            Object::Dict(d) => Some(d.clone()),
            _ => None,
        };
        if let Some((_, font)) = inline
            .as_ref()
            .and_then(|d| self.inline_fonts.get(&address(d)))
        {
            return Ok(font.clone());
        }
        let font = match self.doc.resolve(entry) {
            Object::Dict(dict) => {
                let weight = Font::weight(self.doc, &dict);
                self.doc
                    .budget
                    .charge_interpreted(weight.saturating_mul(FONT_ITEM_COST))?;
                Rc::new(Font::load(self.doc, &dict))
            }
            _ => self.fallback_font.clone(),
        };
        if let Some(r) = entry.as_ref() {
            self.fonts.insert(r.num, font.clone());
        }
        if let Some(d) = inline {
            self.inline_fonts.insert(address(&d), (d, font.clone()));
        }
        Ok(font)
    }

    /// The form XObject `name` of `resources`, if it is one.
    fn form(
        &mut self,
        names: &mut NameCache,
        resources: Option<&Dict>,
        name: &[u8],
    ) -> Option<Rc<Form>> {
        if let Some(form) = names.forms.get(name) {
            return form.clone();
        }
        let form = self.find_form(resources, name);
        names.forms.insert(name.to_vec(), form.clone());
        form
    }

    /// Looks up and loads a form, once per form object.
    fn find_form(&mut self, resources: Option<&Dict>, name: &[u8]) -> Option<Rc<Form>> {
        let xobjects = resources.map(|r| self.doc.get(r, b"XObject"));
        let entry = xobjects.as_ref().and_then(Object::as_dict)?.get(name)?;
        if let Some(cached) = entry.as_ref().and_then(|r| self.forms.get(&r.num)) {
            return cached.clone();
        }
        let form = self.load_form(entry);
        if let Some(r) = entry.as_ref() {
            self.forms.insert(r.num, form.clone());
        }
        form
    }

    fn load_form(&self, entry: &Object) -> Option<Rc<Form>> {
        let Object::Stream(stream) = self.doc.resolve(entry) else {
            return None;
        };
        if self.doc.get(&stream.dict, b"Subtype").as_name() != Some(b"Form") {
            return None; // images and PostScript XObjects have no text
        }
        let content = Rc::from(self.doc.stream_data(&stream)?);
        let resources = match self.doc.get(&stream.dict, b"Resources") {
            Object::Dict(d) => Some(d),
            _ => None,
        };
        let matrix = match self.doc.get(&stream.dict, b"Matrix") {
            Object::Array(m) => {
                let values: Vec<f64> = m.iter().filter_map(Object::as_f64).collect();
                Matrix::from_slice(&values).unwrap_or(Matrix::IDENTITY)
            }
            _ => Matrix::IDENTITY,
        };
        Some(Rc::new(Form {
            content,
            resources,
            matrix,
        }))
    }

    /// `Do` for a form XObject: run its content with its matrix and
    /// resources (falling back to the caller's, as old files expect).
    fn draw_form(
        &mut self,
        form: &Form,
        resources: Option<&Dict>,
        s: &GraphicsState,
        depth: usize,
        sink: &mut PageText,
    ) -> Result<(), PdfError> {
        if depth >= MAX_FORM_DEPTH {
            return Ok(());
        }
        let mut state = s.clone();
        state.ctm = form.matrix.then(&s.ctm);
        let resources = form.resources.as_deref().or(resources);
        self.run(&form.content, resources, state, depth + 1, sink)
    }
}

/// The address of a dictionary's allocation: its identity while it is kept.
fn address(dict: &Rc<Dict>) -> usize {
    Rc::as_ptr(dict) as usize
}

/// Hands one run, drawn from text-space `start` to `end` (the matrices
/// at its first glyph and after its last glyph), to the layout.
fn emit(
    sink: &mut PageText,
    text: &str,
    start: &Matrix,
    end: &Matrix,
    s: &GraphicsState,
    vertical: bool,
    max_text: usize,
) -> Result<(), PdfError> {
    let start_device = start.then(&s.ctm);
    let (vx, vy) = start_device.apply_vector(0.0, s.font_size);
    let (dx, dy) = if vertical {
        start_device.apply_vector(0.0, -1.0)
    } else {
        start_device.apply_vector(1.0, 0.0)
    };
    let length = dx.hypot(dy);
    let dir = if length > 0.0 {
        (dx / length, dy / length)
    } else {
        (1.0, 0.0)
    };
    let run = Run {
        text,
        start: start_device.apply(0.0, s.rise),
        end: end.then(&s.ctm).apply(0.0, s.rise),
        dir,
        size: vx.hypot(vy),
    };
    sink.push(&run)
        .map_err(|_| too_large(LimitKind::TextBytes, max_text))
}

/// A number in a `TJ` array moves the next glyph back by thousandths of
/// the font size.
fn adjust(amount: f64, s: &GraphicsState, text: &mut TextPosition) {
    let shift = -amount / 1000.0 * s.font_size;
    if s.font.as_ref().is_some_and(|f| f.vertical) {
        text.tm.pre_translate(0.0, shift);
    } else {
        text.tm.pre_translate(shift * s.horizontal_scale, 0.0);
    }
}

/// The last operand as a number.
fn number(operands: &[Object]) -> Option<f64> {
    operands.last().and_then(Object::as_f64)
}

/// The last six operands as a matrix.
fn matrix(operands: &[Object]) -> Option<Matrix> {
    let values: Vec<f64> = operands[operands.len().checked_sub(6)?..]
        .iter()
        .filter_map(Object::as_f64)
        .collect();
    Matrix::from_slice(&values)
}

/// After `ID`, skips the binary image data up to `EI`. The data is not
/// tokenizable, so the end is found by its delimiters: whitespace before
/// `EI` and whitespace (or the end) after it.
fn skip_inline_image(parser: &mut Parser<'_>) {
    let lexer = parser.lexer();
    let data = lexer.data();
    let mut from = lexer.pos() + 1;
    while let Some(at) = find(data, b"EI", from) {
        let before = at > 0 && is_whitespace(data[at - 1]);
        let after = data
            .get(at + 2)
            .is_none_or(|&b| is_whitespace(b) || is_delimiter(b));
        if before && after {
            lexer.set_pos(at + 2);
            return;
        }
        from = at + 1;
    }
    lexer.set_pos(data.len());
}
