//! Byte offsets in UTF-8 text rounded to character boundaries, for code
//! that cuts text at a byte budget (chunks, windows, sources), and the
//! percent-decoding shared by URL paths, query strings and resource URIs.
//! The standard library's `str::floor_char_boundary` is newer than this
//! crate's `rust-version`.

/// The largest character boundary of `text` not after `i` (at most its
/// length).
pub fn floor_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary of `text` not before `i` (at most its
/// length).
pub fn ceil_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The last `max` bytes of `text` (fewer, to start on a character
/// boundary): how a neighbour's end becomes a chunk's context.
pub fn tail(text: &str, max: usize) -> &str {
    &text[ceil_char_boundary(text, text.len().saturating_sub(max))..]
}

/// `s` with every `%XX` escape decoded; `None` for a malformed escape or
/// bytes that are not UTF-8. `+` is left as it is (only forms mean a
/// space by it).
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_round_to_the_nearest_boundary_on_their_side() {
        let t = "aé€b"; // a: 0, é: 1..3, €: 3..6, b: 6
        let floors: Vec<usize> = (0..=8).map(|i| floor_char_boundary(t, i)).collect();
        assert_eq!(floors, [0, 1, 1, 3, 3, 3, 6, 7, 7]);
        let ceils: Vec<usize> = (0..=8).map(|i| ceil_char_boundary(t, i)).collect();
        assert_eq!(ceils, [0, 1, 3, 3, 6, 6, 6, 7, 7]);
        assert_eq!(tail(t, 4), "€b");
        assert_eq!(tail(t, 5), "€b");
        assert_eq!(tail(t, 6), "é€b");
        assert_eq!(tail(t, 99), t);
    }
}
