//! Reassembles words and lines from positioned runs of text.
//!
//! PDF content draws strings at positions; spaces between words and breaks
//! between lines are often not characters at all, only gaps and moves. Each
//! run is compared with where the previous one ended, measured along and
//! across the previous run's writing direction (so rotated and vertical text
//! work the same way), in units of the font size:
//! a move across the baseline starts a new line, a forward gap starts a new
//! word. Runs are kept in content-stream order, which for almost all
//! producers is reading order (columns come out one after the other).
//! A word hyphenated at the end of a line ("manip-" / "ulation") is rejoined
//! when the next line starts with a lowercase letter, and a line that starts
//! clearly further down than the previous line spacing starts a paragraph,
//! marked by a blank line.

/// A baseline shift larger than this (in font sizes) starts a new line.
/// Superscripts and subscripts move about a third of the size and stay on
/// the line.
const NEW_LINE_SHIFT: f64 = 0.5;
/// A forward gap larger than this (in font sizes) separates words. Kerning
/// stays well below it and the narrowest word spaces are above it.
pub(super) const WORD_GAP: f64 = 0.15;
/// A backward jump further than this (in font sizes) along the same baseline
/// means the text restarted to the left, like a new line.
const RESTART_JUMP: f64 = 1.0;
/// A baseline shift this many times the previous line's shift ends a
/// paragraph: a blank line is emitted. Body text pitch is ~1.2 font sizes;
/// paragraph spacing and headings add at least a third of that.
const PARAGRAPH_GAP: f64 = 1.3;
/// The same text drawn again within this distance (in font sizes) is a
/// "fake bold" overprint and is dropped.
const OVERPRINT_DISTANCE: f64 = 0.2;

/// A piece of text drawn in one go, in device space.
pub(super) struct Run<'a> {
    pub text: &'a str,
    pub start: (f64, f64),
    pub end: (f64, f64),
    /// Unit vector of the writing direction.
    pub dir: (f64, f64),
    /// Font size in device space.
    pub size: f64,
}

struct Previous {
    start: (f64, f64),
    end: (f64, f64),
    dir: (f64, f64),
    size: f64,
    /// Byte range of the previous run's text in the output.
    text: std::ops::Range<usize>,
}

/// Text of one page under construction.
pub(super) struct PageText {
    out: String,
    previous: Option<Previous>,
    /// Where the current line's first run starts: the reference for
    /// measuring line spacing (a superscript ending a line does not count).
    line_origin: Option<(f64, f64)>,
    /// How far down the last line started from the one before it.
    line_pitch: Option<f64>,
    limit: usize,
}

/// The text did not fit in the byte limit given to [`PageText::new`].
#[derive(Debug)]
pub(super) struct TextLimit;

impl PageText {
    pub(super) fn new(limit: usize) -> Self {
        PageText {
            out: String::new(),
            previous: None,
            line_origin: None,
            line_pitch: None,
            limit,
        }
    }

    pub(super) fn push(&mut self, run: &Run<'_>) -> Result<(), TextLimit> {
        if run.text.is_empty() || !all_finite(run) {
            return Ok(());
        }
        let mut text = run.text;
        if let Some(prev) = &self.previous {
            if self.is_overprint(prev, run) {
                return Ok(());
            }
            match separator(prev, run) {
                Separator::Line(parallel) => {
                    let shift = parallel.then(|| self.drop_from_line_origin(run)).flatten();
                    self.trim_trailing_spaces();
                    text = text.trim_start_matches(' ');
                    if self.ends_with_hyphenated_word() && text.starts_with(char::is_lowercase) {
                        // "manip-" + "ulation": rejoin the word split at the
                        // line end, as readers and search expect.
                        self.out.pop();
                    } else {
                        let paragraph = matches!(
                            (shift, self.line_pitch),
                            (Some(down), Some(pitch)) if down > PARAGRAPH_GAP * pitch
                        );
                        self.out.push_str(if paragraph { "\n\n" } else { "\n" });
                    }
                    // Only moves down the page measure the line pitch; a move
                    // up is a new column or cell, not a paragraph.
                    if let Some(down) = shift.filter(|d| *d > 0.0) {
                        self.line_pitch = Some(down);
                    }
                    self.line_origin = Some(run.start);
                }
                Separator::Word if !self.out.ends_with([' ', '\n']) && !text.starts_with(' ') => {
                    self.out.push(' ');
                }
                _ => {}
            }
        }
        if self.out.ends_with([' ', '\n']) || self.out.is_empty() {
            text = text.trim_start_matches(' ');
        }
        if self.out.len() + text.len() > self.limit {
            return Err(TextLimit);
        }
        if self.line_origin.is_none() {
            self.line_origin = Some(run.start);
        }
        let start = self.out.len();
        self.out.push_str(text);
        self.previous = Some(Previous {
            start: run.start,
            end: run.end,
            dir: run.dir,
            size: run.size,
            text: start..self.out.len(),
        });
        Ok(())
    }

    fn is_overprint(&self, prev: &Previous, run: &Run<'_>) -> bool {
        let size = prev.size.max(run.size).max(f64::MIN_POSITIVE);
        let distance = (run.start.0 - prev.start.0).hypot(run.start.1 - prev.start.1);
        distance < OVERPRINT_DISTANCE * size
            && self.out.get(prev.text.clone()) == Some(run.text.trim_start_matches(' '))
            && !prev.text.is_empty()
    }

    /// How far down the page `run` starts below the current line's origin,
    /// measured across its writing direction.
    fn drop_from_line_origin(&self, run: &Run<'_>) -> Option<f64> {
        let (x, y) = self.line_origin?;
        let (dx, dy) = (run.start.0 - x, run.start.1 - y);
        // Positive to the left of the writing direction is up the page.
        Some(dx * run.dir.1 - dy * run.dir.0)
    }

    /// True if the text ends with a letter followed by a hyphen.
    fn ends_with_hyphenated_word(&self) -> bool {
        let mut tail = self.out.chars().rev();
        matches!(
            (tail.next(), tail.next()),
            (Some('-' | '\u{2010}'), Some(c)) if c.is_alphabetic()
        )
    }

    fn trim_trailing_spaces(&mut self) {
        let kept = self.out.trim_end_matches(' ').len();
        self.out.truncate(kept);
    }

    /// The page's text: lines separated by `\n`, no trailing whitespace.
    pub(super) fn finish(mut self) -> String {
        let kept = self.out.trim_end().len();
        self.out.truncate(kept);
        self.out
    }
}

fn all_finite(run: &Run<'_>) -> bool {
    [
        run.start.0,
        run.start.1,
        run.end.0,
        run.end.1,
        run.dir.0,
        run.dir.1,
        run.size,
    ]
    .iter()
    .all(|v| v.is_finite())
}

enum Separator {
    None,
    Word,
    /// A new line; true if it runs parallel to the previous one, so that
    /// the distance between them means something.
    Line(bool),
}

fn separator(prev: &Previous, run: &Run<'_>) -> Separator {
    // Different writing directions (rotated text) never share a line.
    if (prev.dir.0 - run.dir.0).abs() > 0.1 || (prev.dir.1 - run.dir.1).abs() > 0.1 {
        return Separator::Line(false);
    }
    let size = prev.size.max(run.size).max(f64::MIN_POSITIVE);
    let (dx, dy) = (run.start.0 - prev.end.0, run.start.1 - prev.end.1);
    let along = dx * prev.dir.0 + dy * prev.dir.1;
    let across = dy * prev.dir.0 - dx * prev.dir.1;
    if across.abs() > NEW_LINE_SHIFT * size {
        Separator::Line(true)
    } else if along < -RESTART_JUMP * size {
        Separator::Line(false)
    } else if along > WORD_GAP * size {
        Separator::Word
    } else {
        Separator::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, x: f64, y: f64, width: f64) -> Run<'_> {
        Run {
            text,
            start: (x, y),
            end: (x + width, y),
            dir: (1.0, 0.0),
            size: 10.0,
        }
    }

    fn layout(runs: &[Run<'_>]) -> String {
        let mut page = PageText::new(usize::MAX);
        for r in runs {
            page.push(r).unwrap();
        }
        page.finish()
    }

    #[test]
    fn words_and_lines() {
        let text = layout(&[
            run("Hello", 0.0, 100.0, 25.0),
            run("world", 27.0, 100.0, 25.0), // 0.2 em gap: a word break
            run("s", 52.5, 100.0, 5.0),      // kerning-sized gap: same word
            run("Next", 0.0, 88.0, 20.0),    // down one line
            run("x", 21.0, 91.0, 4.0),       // superscript: same line
            run("line", 0.0, 76.0, 20.0),    // same pitch
            run("para", 0.0, 58.0, 20.0),    // 1.5 times the pitch
            run("next", 0.0, 46.0, 20.0),
        ]);
        assert_eq!(text, "Hello worlds\nNextx\nline\n\npara\nnext");
    }

    #[test]
    fn hyphenated_words_are_rejoined() {
        let text = layout(&[
            run("manip-", 0.0, 100.0, 30.0),
            run("ulation. Front-", 0.0, 88.0, 75.0),
            run("Cover 3-", 0.0, 76.0, 40.0),
            run("4", 0.0, 64.0, 5.0),
        ]);
        assert_eq!(text, "manipulation. Front-\nCover 3-\n4");
    }

    #[test]
    fn explicit_spaces_are_not_doubled() {
        let text = layout(&[
            run("a ", 0.0, 0.0, 8.0),
            run(" b", 20.0, 0.0, 8.0),
            run("  ", 40.0, 0.0, 5.0),
        ]);
        assert_eq!(text, "a b");
    }

    #[test]
    fn rotated_and_backward_text() {
        let mut up = run("up", 0.0, 0.0, 0.0);
        up.dir = (0.0, 1.0);
        up.end = (0.0, 10.0);
        let text = layout(&[
            run("left", 100.0, 0.0, 20.0),
            run("restart", 0.0, 0.0, 30.0),
            up,
        ]);
        assert_eq!(text, "left\nrestart\nup");
    }

    #[test]
    fn overprint_is_dropped() {
        let text = layout(&[
            run("Bold", 0.0, 0.0, 20.0),
            run("Bold", 0.5, 0.0, 20.0),
            run("x", 22.0, 0.0, 5.0),
        ]);
        assert_eq!(text, "Bold x");
    }

    #[test]
    fn limit_is_exact() {
        let mut page = PageText::new(5);
        assert!(page.push(&run("abcde", 0.0, 0.0, 25.0)).is_ok());
        assert!(page.push(&run("f", 25.0, 0.0, 5.0)).is_err());
        let mut page = PageText::new(4);
        assert!(page.push(&run("abcde", 0.0, 0.0, 25.0)).is_err());
    }

    #[test]
    fn non_finite_positions_are_ignored() {
        assert_eq!(
            layout(&[run("a", f64::NAN, 0.0, 1.0), run("b", 0.0, 0.0, 1.0)]),
            "b"
        );
    }
}
