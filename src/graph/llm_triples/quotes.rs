//! Finding a proposal's quote and names in the passage it cites.

/// The byte span of `quote` in `text`: verbatim, else with every run of
/// whitespace in either taken as one space.
pub fn find_quote(text: &str, quote: &str) -> Option<(usize, usize)> {
    let quote = quote.trim();
    if quote.is_empty() {
        return None;
    }
    if let Some(i) = text.find(quote) {
        return Some((i, i + quote.len()));
    }
    let (hay, spans) = collapse_whitespace(text);
    let (needle, _) = collapse_whitespace(quote);
    let k = hay.find(&needle)?;
    Some((spans[k].0, spans[k + needle.len() - 1].1))
}

/// `text` with each run of whitespace replaced by one space, and for every
/// byte of the result the span of `text` it stands for.
fn collapse_whitespace(text: &str) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(text.len());
    let mut spans = Vec::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !d.is_whitespace() {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            out.push(' ');
            spans.push((i, end));
        } else {
            out.push(c);
            spans.extend(std::iter::repeat_n((i, i + c.len_utf8()), c.len_utf8()));
        }
    }
    (out, spans)
}

/// The first occurrence of `name` in `text`, ignoring case, that starts
/// and ends at word boundaries.
pub(super) fn find_name(text: &str, name: &str) -> Option<(usize, usize)> {
    let needle: Vec<char> = name.chars().collect();
    let first = *needle.first()?;
    let same = |a: char, b: char| a == b || a.to_lowercase().eq(b.to_lowercase());
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    for (i, c) in text.char_indices() {
        if !same(c, first) || word(text[..i].chars().next_back()) {
            continue;
        }
        let mut hay = text[i..].char_indices();
        let mut end = i;
        let matched = needle.iter().all(|&n| match hay.next() {
            Some((j, h)) if same(h, n) => {
                end = i + j + h.len_utf8();
                true
            }
            _ => false,
        });
        if matched && !word(text[end..].chars().next()) {
            return Some((i, end));
        }
    }
    None
}
