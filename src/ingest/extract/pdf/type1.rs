//! The built-in encoding of an embedded Type 1 font program (`/FontFile`).
//!
//! Simple fonts without an explicit base encoding use their program's own
//! encoding; TeX's math and symbol fonts rely on it (CMMI10 draws the period
//! at code 58, where StandardEncoding has the colon). The encoding sits in
//! the program's cleartext part as `dup <code> /<glyph> put` entries, before
//! the `eexec`-encrypted part, so no decryption is needed.

use super::lexer::{find, Lexer, Token};

/// Glyph names by code, or `None` when the program uses StandardEncoding or
/// has no readable encoding.
pub(super) fn builtin_encoding(program: &[u8]) -> Option<Vec<Option<Vec<u8>>>> {
    let cleartext = &program[..find(program, b"eexec", 0).unwrap_or(program.len())];
    let at = find(cleartext, b"/Encoding", 0)?;
    let mut lexer = Lexer::at(cleartext, at + b"/Encoding".len());
    let mut names: Vec<Option<Vec<u8>>> = vec![None; 256];
    let mut found = false;
    // A sliding window over the last four tokens recognizes the entries.
    let mut window: [Option<Token<'_>>; 4] = [None, None, None, None];
    while let Some(token) = lexer.next_token() {
        match token {
            Token::Keyword(b"StandardEncoding") if !found => return None,
            Token::Keyword(b"readonly" | b"def") if found => break,
            _ => {}
        }
        window.rotate_left(1);
        window[3] = Some(token);
        if let [Some(Token::Keyword(b"dup")), Some(Token::Int(code)), Some(Token::Name(name)), Some(Token::Keyword(b"put"))] =
            &window
        {
            if let Some(slot) = usize::try_from(*code).ok().and_then(|c| names.get_mut(c)) {
                *slot = Some(name.to_vec());
                found = true;
            }
        }
    }
    found.then_some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_dup_put_entries() {
        let program = b"%!PS-AdobeFont-1.0: CMMI10\n/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\n\
            dup 58 /period put\ndup 59 /comma put\nreadonly def\ncurrentfile eexec\n\x80\x81 dup 60 /x put";
        let names = builtin_encoding(program).unwrap();
        assert_eq!(names[58].as_deref(), Some(&b"period"[..]));
        assert_eq!(names[59].as_deref(), Some(&b"comma"[..]));
        assert_eq!(names[60], None);
    }

    #[test]
    fn standard_or_missing() {
        assert!(builtin_encoding(b"/Encoding StandardEncoding def currentfile eexec").is_none());
        assert!(builtin_encoding(b"no encoding here").is_none());
        assert!(builtin_encoding(b"/Encoding 256 array dup 999 /x put readonly def").is_none());
    }
}
