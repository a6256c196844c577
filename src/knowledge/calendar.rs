//! Calendar dates written in text: ISO dates, "8 May 2023", "May 8, 2023",
//! months and years, and the day a document is about. Pure functions,
//! shared by the store (a document's `observed_at`) and the query's time
//! lane.

pub(crate) fn month_days(year: i64, month: u32) -> (i64, i64) {
    let first = crate::clock::days_from_civil(year, month, 1);
    let next = if month == 12 {
        crate::clock::days_from_civil(year + 1, 1, 1)
    } else {
        crate::clock::days_from_civil(year, month + 1, 1)
    };
    (first, next - 1)
}

const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A month name or its usual abbreviation ("Sept", "Dec"); `May` only in
/// full.
pub(crate) fn month_of(word: &str) -> Option<u32> {
    let w = word.to_lowercase();
    let w = w.trim_end_matches('.');
    MONTHS
        .iter()
        .position(|m| *m == w || (w.len() >= 3 && m.len() > 3 && m.starts_with(w)))
        .map(|i| i as u32 + 1)
}

pub(crate) fn day_of(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if digits.is_empty()
        || digits.len() > 2
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || !matches!(suffix, "" | "st" | "nd" | "rd" | "th")
    {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

pub(crate) fn year_of(word: &str) -> Option<i64> {
    if word.len() != 4 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse().ok().filter(|y| (1900..=2199).contains(y))
}

/// Words of `text` (runs of letters and digits), with their original case.
pub(crate) fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

/// A full date at word `i`: "8 May 2023" or "May 8 2023".
/// Returns the day and the words it took.
pub(crate) fn full_date_at(w: &[&str], i: usize) -> Option<(i64, usize)> {
    let at = |k: usize| w.get(i + k).copied();
    let (m, d) = match (at(0).and_then(day_of), at(1).and_then(month_of)) {
        (Some(d), Some(m)) => (m, d),
        _ => match (at(0).and_then(month_of), at(1).and_then(day_of)) {
            (Some(m), Some(d)) => (m, d),
            _ => return None,
        },
    };
    let y = at(2).and_then(year_of)?;
    Some((crate::clock::days_from_civil(y, m, d), 3))
}

/// ISO dates (`2023-11-16`, also inside a timestamp) in `text`, and the
/// text with them blanked out.
pub(crate) fn take_iso_dates(text: &str) -> (Vec<i64>, String) {
    let found = iso_dates(text);
    let mut rest = text.as_bytes().to_vec();
    for (at, _) in &found {
        rest[*at..*at + ISO_DATE_BYTES].fill(b' ');
    }
    // Only ASCII bytes were replaced, by ASCII.
    (
        found.into_iter().map(|(_, d)| d).collect(),
        String::from_utf8(rest).unwrap_or_default(),
    )
}

/// Bytes of an ISO date (`2023-11-16`).
pub(crate) const ISO_DATE_BYTES: usize = 10;

/// ISO dates in `text`: where each starts (a byte offset) and its day.
pub(crate) fn iso_dates(text: &str) -> Vec<(usize, i64)> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    let mut i = 0;
    while i + 10 <= b.len() {
        let w = &b[i..i + 10];
        let bounded = (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b.get(i + 10).is_none_or(|c| !c.is_ascii_digit());
        if bounded
            && digits(&w[..4])
            && w[4] == b'-'
            && digits(&w[5..7])
            && w[7] == b'-'
            && digits(&w[8..])
        {
            let num = |s: &[u8]| {
                std::str::from_utf8(s)
                    .ok()
                    .and_then(|s| s.parse::<u32>().ok())
            };
            if let (Some(y), Some(m), Some(d)) = (num(&w[..4]), num(&w[5..7]), num(&w[8..])) {
                if (1..=12).contains(&m)
                    && (1..=31).contains(&d)
                    && year_of(&y.to_string()).is_some()
                {
                    found.push((i, crate::clock::days_from_civil(i64::from(y), m, d)));
                    i += ISO_DATE_BYTES;
                    continue;
                }
            }
        }
        i += 1;
    }
    found
}

/// The first full date in `text` (days since 1970-01-01): an ISO date
/// first, else a written one.
pub fn first_date(text: &str) -> Option<i64> {
    let (iso, rest) = take_iso_dates(text);
    if let Some(d) = iso.first() {
        return Some(*d);
    }
    let w = words(&rest);
    (0..w.len()).find_map(|i| full_date_at(&w, i).map(|(d, _)| d))
}

/// The day a document's metadata dates it to: the first full date among
/// its string values (in the order stored), if any.
pub fn metadata_day(metadata: &str) -> Option<i64> {
    match serde_json::from_str::<serde_json::Value>(metadata).ok()? {
        serde_json::Value::Object(map) => map.values().find_map(|v| match v {
            serde_json::Value::String(s) => first_date(s),
            _ => None,
        }),
        _ => None,
    }
}

/// The day a document is about: [`metadata_day`], else the day it was
/// stored (`created_at`, milliseconds since 1970).
pub fn document_day(metadata: &str, created_at_ms: i64) -> i64 {
    metadata_day(metadata).unwrap_or_else(|| created_at_ms.div_euclid(86_400_000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::days_from_civil as day;

    #[test]
    fn a_document_is_dated_by_its_metadata_else_when_it_was_stored() {
        assert_eq!(
            document_day(r#"{"speaker": "Jo", "when": "1:56 pm on 8 May, 2023"}"#, 0),
            day(2023, 5, 8)
        );
        assert_eq!(
            document_day(r#"{"date": "2024-02-29T10:00:00Z"}"#, 0),
            day(2024, 2, 29)
        );
        assert_eq!(
            document_day(r#"{"n": 3}"#, day(2020, 1, 2) * 86_400_000 + 5),
            day(2020, 1, 2)
        );
    }
}
