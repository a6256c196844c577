//! Whether text shows a reader anything: the rule behind refusing tenant
//! and subject names that only look blank ([`crate::config::validate_identity`]).
//!
//! Two identities that render the same cannot be told apart in an audit
//! trail, a log line or a token's claims, and one that renders as nothing
//! looks like no identity at all. So a name must hold at least one
//! character that is visible on its own. Whitespace, format characters
//! (zero-width space, joiners, direction marks, the byte-order mark, tag
//! characters), default-ignorable code points (Hangul fillers, variation
//! selectors), combining marks (an accent alone combines with nothing) and
//! blank glyphs (U+2800 BRAILLE PATTERN BLANK) do not count; the table of
//! them is generated ([`tables`]), since the standard library has no
//! Unicode categories and the design card no Unicode dependency.
//!
//! Such characters are still allowed *beside* visible ones ("e" and
//! U+0301 is "é"; a joiner inside an emoji sequence): this decides only
//! whether anything shows at all.

mod tables;

use tables::NO_GLYPH;

/// True when `c` shows nothing on its own: whitespace, a format or
/// default-ignorable code point, a combining mark, or a blank glyph.
pub fn shows_nothing(c: char) -> bool {
    if c.is_whitespace() {
        return true;
    }
    let c = c as u32;
    NO_GLYPH
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// True when `text` holds at least one character a reader can see.
pub fn has_visible_character(text: &str) -> bool {
    text.chars().any(|c| !shows_nothing(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_disjoint() {
        assert!(NO_GLYPH.iter().all(|(lo, hi)| lo <= hi));
        assert!(NO_GLYPH.windows(2).all(|w| w[0].1 < w[1].0));
    }

    #[test]
    fn names_that_render_as_nothing_have_no_visible_character() {
        for blank in [
            "",
            " \t",
            "\u{0301}", // a combining acute accent alone
            "\u{2800}", // braille pattern blank
            "\u{200B}\u{200C}\u{200D}\u{200E}\u{200F}",
            "\u{2060}\u{2061}\u{2062}\u{2063}\u{2064}",
            "\u{FEFF}",
            "\u{3164}",                   // Hangul filler
            "\u{115F}\u{1160}\u{FFA0}",   // Hangul choseong / jungseong / halfwidth fillers
            "\u{FE0F}\u{E0100}",          // variation selectors
            "\u{034F}",                   // combining grapheme joiner
            "\u{E0041}\u{E007F}",         // tag characters
            "\u{20DD}",                   // an enclosing circle alone
            "\u{0903}",                   // a spacing vowel sign alone
            "\u{00AD}\u{180E}\u{061C}",   // soft hyphen, Mongolian vowel separator, ALM
            "\u{3000}\u{00A0}\u{2028}",   // ideographic space, no-break space, line separator
            "\u{0600}\u{110BD}\u{13430}", // format characters once hand-listed
        ] {
            assert!(!has_visible_character(blank), "{blank:?}");
        }
    }

    #[test]
    fn visible_text_with_invisible_characters_beside_it_is_visible() {
        for name in [
            "a",
            "e\u{0301}",
            "agent\u{200B}1",
            "\u{2800}x",
            "日本語",
            "🦀",
            "👩\u{200D}💻",
            "\u{2801}", // a braille pattern with a dot
            "_",
        ] {
            assert!(has_visible_character(name), "{name:?}");
        }
    }
}
