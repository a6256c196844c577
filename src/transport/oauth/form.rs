//! `application/x-www-form-urlencoded`: the token endpoint's bodies, the
//! consent form, and the query strings of the redirects the facade builds.

/// The pairs of a form body or query string, percent-decoded (`+` is a
/// space). `None` if a value is not percent-encoded UTF-8.
pub fn parse(text: &str) -> Option<Vec<(String, String)>> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| crate::text::percent_decode(&s.replace('+', " "));
            Some((decode(name)?, decode(value)?))
        })
        .collect()
}

/// The value of `name`, if the form holds it exactly once (a repeated
/// parameter is refused: RFC 6749 §3.1).
pub fn single<'a>(pairs: &'a [(String, String)], name: &str) -> Result<Option<&'a str>, String> {
    let mut found = pairs.iter().filter(|(n, _)| n == name);
    match (found.next(), found.next()) {
        (None, _) => Ok(None),
        (Some((_, v)), None) => Ok(Some(v.as_str())),
        (Some(_), Some(_)) => Err(format!("the parameter {name} is given more than once")),
    }
}

/// `s` percent-encoded for a form value or query component.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `pairs` as a form body / query string.
pub fn build(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(n, v)| format!("{}={}", encode(n), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `base` with `pairs` added to its query (after `?`, or `&` if it has
/// one already).
pub fn with_query(base: &str, pairs: &[(&str, &str)]) -> String {
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{}", build(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_round_trip_and_refuse_repeats() {
        let body = build(&[
            ("redirect_uri", "http://127.0.0.1:5/cb?x=1&y"),
            ("a b", "+"),
        ]);
        let pairs = parse(&body).unwrap();
        assert_eq!(
            single(&pairs, "redirect_uri").unwrap(),
            Some("http://127.0.0.1:5/cb?x=1&y")
        );
        assert_eq!(single(&pairs, "a b").unwrap(), Some("+"));
        assert!(single(&parse("a=1&a=2").unwrap(), "a").is_err());
        assert_eq!(parse("a=%zz"), None);
        assert_eq!(
            with_query("https://x/cb?k=v", &[("code", "c")]),
            "https://x/cb?k=v&code=c"
        );
    }
}
