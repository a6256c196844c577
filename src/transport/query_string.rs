//! The JSON API's query strings: `name=value` pairs, percent-decoded, and
//! the checks the read routes share (a `limit` within its bounds).
//!
//! A route matches the names it knows and refuses any other, so a typo is a
//! 400 rather than a silently ignored filter.

/// The query string's `(name, value)` pairs, values percent-decoded. A `+`
/// is a space (as forms send it), but in the time bounds `since` and
/// `until`, whose RFC 3339 offsets use it and hold no spaces.
pub(super) fn query_pairs(query: &str) -> Result<Vec<(&str, String)>, String> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, raw) = pair.split_once('=').unwrap_or((pair, ""));
            let raw = if matches!(name, "since" | "until") {
                raw.to_string()
            } else {
                raw.replace('+', " ")
            };
            let value = crate::text::percent_decode(&raw)
                .ok_or_else(|| format!("the value of {name:?} is not percent-encoded UTF-8"))?;
            Ok((name, value))
        })
        .collect()
}

/// A whole number from 1 to `max`, or why not.
pub(super) fn limit_param(value: &str, max: usize) -> Result<usize, String> {
    value
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| format!("limit must be a whole number from 1 to {max}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_decoded_and_plus_is_a_space_but_in_time_bounds() {
        let pairs = query_pairs("q=a+b%2Fc&since=2026-12-01T10:00:00+02:00&flag").unwrap();
        assert_eq!(
            pairs,
            vec![
                ("q", "a b/c".to_string()),
                ("since", "2026-12-01T10:00:00+02:00".to_string()),
                ("flag", String::new()),
            ]
        );
        assert!(query_pairs("q=%zz").is_err());
        assert!(query_pairs("q=%FF").is_err(), "not UTF-8");
    }

    #[test]
    fn limits_run_from_one_to_their_maximum() {
        assert_eq!(limit_param("1", 5), Ok(1));
        assert_eq!(limit_param("5", 5), Ok(5));
        for bad in ["0", "6", "-1", "x", ""] {
            assert!(limit_param(bad, 5).is_err(), "{bad}");
        }
    }
}
