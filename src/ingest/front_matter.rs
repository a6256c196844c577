//! YAML front matter: the `---` block some Markdown files open with
//! (static site generators, note apps). It is metadata, not the text's
//! first line: a display title comes from its `title:` key, and the text
//! a reader is shown as a snippet starts after it.
//!
//! Only what a title and a snippet need is read: the block's extent and a
//! top-level `title:` scalar. Nothing else of YAML is interpreted.

/// The block's opening line, and one of the two lines that close it.
const FENCE: &str = "---";
/// YAML's end-of-document marker, which also closes front matter.
const END: &str = "...";

/// Front matter at the very start of `text`: `(block, rest)` where `block`
/// is the lines between the fences and `rest` the text after the closing
/// fence. `None` when `text` does not open with `---` on a line of its own
/// or the block is never closed (then it is ordinary text, a rule or a
/// title underline).
pub fn split(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end() != FENCE {
        return None;
    }
    let body = &text[first_end + 1..];
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        let bare = line.trim_end();
        if bare == FENCE || bare == END {
            return Some((&body[..at], &body[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

/// The `title:` of `text`'s front matter, when it has one that is a plain
/// or quoted scalar on one line (a block scalar or an empty value is no
/// title).
pub fn title(text: &str) -> Option<String> {
    let (block, _) = split(text)?;
    block.lines().find_map(|line| {
        let value = line.strip_prefix("title:")?.trim();
        let value = unquote(value);
        let bare = value.trim();
        let block_scalar = bare.starts_with('|') || bare.starts_with('>');
        (!bare.is_empty() && !block_scalar).then(|| bare.to_string())
    })
}

/// The text after the front matter, or all of `text` when it has none.
pub fn body(text: &str) -> &str {
    split(text).map_or(text, |(_, rest)| rest)
}

/// A scalar without the quotes around it (and without a trailing comment
/// when unquoted).
fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q) {
            return inner.rfind(q).map_or(inner, |end| &inner[..end]);
        }
    }
    value.split(" #").next().unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_read_plain_or_quoted() {
        assert_eq!(
            title("---\ntitle: Zstd tests\nlayout: page\n---\n# Heading\n").as_deref(),
            Some("Zstd tests")
        );
        assert_eq!(
            title("---\nauthor: x\ntitle: \"Quoted: yes\"\n...\nbody").as_deref(),
            Some("Quoted: yes")
        );
        assert_eq!(
            title("---\ntitle: 'single'\n---\n").as_deref(),
            Some("single")
        );
        assert_eq!(
            title("---\ntitle: plain # note\n---\n").as_deref(),
            Some("plain")
        );
    }

    #[test]
    fn no_block_or_no_usable_title_gives_none() {
        assert_eq!(title("# Just a heading\n---\n"), None);
        assert_eq!(title("---\ntitle: never closed\n"), None);
        assert_eq!(title("---\ntitle: |\n  long\n---\n"), None);
        assert_eq!(title("---\ntitle:\n---\n"), None);
        assert_eq!(title("---\n  title: nested\n---\n"), None);
        assert_eq!(title("---"), None);
    }

    #[test]
    fn the_body_starts_after_the_closing_fence() {
        assert_eq!(body("---\na: 1\n---\nText here"), "Text here");
        assert_eq!(body("\u{feff}---\r\na: 1\r\n---\r\nText"), "Text");
        assert_eq!(body("Text\n---\nmore"), "Text\n---\nmore");
    }
}
