//! Time in questions and documents: the periods a question names ("in
//! January 2022", "on 3 June, 2023", "the week before 16 November 2023") and
//! the day a document is about.
//!
//! A document's day is the first full date among the string values of its
//! metadata (a conversation turn stored with the date of its session, a note
//! with the day it was taken), else the day it was stored. What a document
//! says happened usually happened shortly before it was written ("last
//! week", "yesterday"), so a period matches documents from
//! [`DAYS_BEFORE`] days before it to [`DAYS_AFTER`] days after it.
//!
//! Only explicit calendar expressions are read: a day and month with or
//! without a year, a month with a year, an ISO date, a bare year, and a
//! month after a cue word ("in May"). A period without a year matches that
//! month (and day) of any year. Relative expressions in questions ("last
//! week") name no period and are ignored.

use super::fuse::{fuse, Fusion, Lane};
use crate::store::ChunkHit;

/// Documents dated up to this many days before a named period match it.
pub const DAYS_BEFORE: i64 = 3;
/// Documents dated up to this many days after a named period match it.
pub const DAYS_AFTER: i64 = 14;
/// Candidates per requested result ranked by the keyword lane when the
/// question names a period; of these and the vector lane's, those dated in
/// it form the time lane.
pub const CANDIDATES_PER_RESULT: usize = 10;
/// Most periods read from one question.
pub const MAX_PERIODS: usize = 4;

/// A period a question names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// Days since 1970-01-01, inclusive.
    Days { first: i64, last: i64 },
    /// A month (1-12) and optionally a day in it, in any year.
    Yearless { month: u32, day: Option<u32> },
}

impl Period {
    /// Whether a document dated `day` (days since 1970-01-01) falls in the
    /// period, widened by [`DAYS_BEFORE`] and [`DAYS_AFTER`].
    pub fn admits(&self, day: i64, before: i64, after: i64) -> bool {
        match *self {
            Period::Days { first, last } => day >= first - before && day <= last + after,
            Period::Yearless { month, day: d } => {
                // The same period in the document's year, or the year before
                // (a December period for a January document).
                let (y, _, _) = crate::clock::civil_from_days(day);
                [y, y - 1].into_iter().any(|year| {
                    let (first, last) = match d {
                        Some(d) => {
                            let x = crate::clock::days_from_civil(year, month, d);
                            (x, x)
                        }
                        None => month_days(year, month),
                    };
                    day >= first - before && day <= last + after
                })
            }
        }
    }
}

fn month_days(year: i64, month: u32) -> (i64, i64) {
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

/// Words after which a lone month name is a month ("in May").
const MONTH_CUES: &[&str] = &[
    "in", "during", "early", "late", "mid", "since", "until", "of", "by", "last", "next",
];

/// A month name or its usual abbreviation ("Sept", "Dec"); `May` only in
/// full.
fn month_of(word: &str) -> Option<u32> {
    let w = word.to_lowercase();
    let w = w.trim_end_matches('.');
    MONTHS
        .iter()
        .position(|m| *m == w || (w.len() >= 3 && m.len() > 3 && m.starts_with(w)))
        .map(|i| i as u32 + 1)
}

fn day_of(word: &str) -> Option<u32> {
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

fn year_of(word: &str) -> Option<i64> {
    if word.len() != 4 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse().ok().filter(|y| (1900..=2199).contains(y))
}

/// Words of `text` (runs of letters and digits), with their original case.
fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

/// A full date at word `i`: "8 May 2023" or "May 8 2023".
/// Returns the day and the words it took.
fn full_date_at(w: &[&str], i: usize) -> Option<(i64, usize)> {
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

/// The time lane: of the candidates fused from the wider pools `wide`, those
/// dated in one of `periods`, scored by that fused relevance. `None` when
/// no pool was widened or no candidate is dated in a period.
pub fn lane(wide: Vec<Lane>, periods: &[Period], weight: f64, fusion: Fusion) -> Option<Lane> {
    if wide.is_empty() {
        return None;
    }
    let hits: Vec<ChunkHit> = fuse(wide, fusion)
        .into_iter()
        .filter(|f| {
            let day = document_day(&f.hit.metadata, f.hit.created_at);
            periods
                .iter()
                .any(|p| p.admits(day, DAYS_BEFORE, DAYS_AFTER))
        })
        .map(|f| ChunkHit {
            bm25: -f.score,
            ..f.hit
        })
        .collect();
    (!hits.is_empty()).then_some(Lane {
        name: "time",
        weight,
        hits,
    })
}

/// ISO dates (`2023-11-16`, also inside a timestamp) in `text`, and the
/// text with them blanked out.
fn take_iso_dates(text: &str) -> (Vec<i64>, String) {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut rest = b.to_vec();
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
                    found.push(crate::clock::days_from_civil(i64::from(y), m, d));
                    rest[i..i + 10].fill(b' ');
                    i += 10;
                    continue;
                }
            }
        }
        i += 1;
    }
    // Only ASCII bytes were replaced, by ASCII.
    (found, String::from_utf8(rest).unwrap_or_default())
}

/// The periods a question names, at most [`MAX_PERIODS`].
pub fn question_periods(question: &str) -> Vec<Period> {
    let (iso, rest) = take_iso_dates(question);
    let w = words(&rest);
    let mut out: Vec<Period> = iso
        .into_iter()
        .map(|d| Period::Days { first: d, last: d })
        .collect();
    let mut i = 0;
    while i < w.len() && out.len() < MAX_PERIODS {
        if let Some((day, n)) = full_date_at(&w, i) {
            out.push(Period::Days {
                first: day,
                last: day,
            });
            i += n;
            continue;
        }
        // A lone month name only when capitalized ("May", not "may").
        let capital = w[i].starts_with(|c: char| c.is_uppercase());
        let next = w.get(i + 1).copied();
        let prev = i.checked_sub(1).map(|p| w[p].to_lowercase());
        // "8 May" / "May 8" without a year.
        if let (Some(d), Some(m)) = (day_of(w[i]), next.and_then(month_of)) {
            out.push(Period::Yearless {
                month: m,
                day: Some(d),
            });
            i += 2;
            continue;
        }
        if let Some(m) = month_of(w[i]) {
            if let Some(y) = next.and_then(year_of) {
                let (first, last) = month_days(y, m);
                out.push(Period::Days { first, last });
                i += 2;
                continue;
            }
            if let Some(d) = next.and_then(day_of) {
                out.push(Period::Yearless {
                    month: m,
                    day: Some(d),
                });
                i += 2;
                continue;
            }
            if capital && prev.is_some_and(|p| MONTH_CUES.contains(&p.as_str())) {
                out.push(Period::Yearless {
                    month: m,
                    day: None,
                });
                i += 1;
                continue;
            }
        }
        if let Some(y) = year_of(w[i]) {
            out.push(Period::Days {
                first: crate::clock::days_from_civil(y, 1, 1),
                last: crate::clock::days_from_civil(y, 12, 31),
            });
        }
        i += 1;
    }
    out
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

/// The day a document is about: the first full date among its metadata's
/// string values (in the order stored), else the day it was stored
/// (`created_at`, milliseconds since 1970).
pub fn document_day(metadata: &str, created_at_ms: i64) -> i64 {
    let from_metadata = serde_json::from_str::<serde_json::Value>(metadata)
        .ok()
        .and_then(|v| match v {
            serde_json::Value::Object(map) => map.values().find_map(|v| match v {
                serde_json::Value::String(s) => first_date(s),
                _ => None,
            }),
            _ => None,
        });
    from_metadata.unwrap_or_else(|| created_at_ms.div_euclid(86_400_000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::days_from_civil as day;

    #[test]
    fn questions_name_days_months_and_years() {
        assert_eq!(
            question_periods("What did Jo accomplish in January 2022?"),
            [Period::Days {
                first: day(2022, 1, 1),
                last: day(2022, 1, 31)
            }]
        );
        assert_eq!(
            question_periods("What was mentioned on 3 June, 2023 and on July 7th, 2023?"),
            [
                Period::Days {
                    first: day(2023, 6, 3),
                    last: day(2023, 6, 3)
                },
                Period::Days {
                    first: day(2023, 7, 7),
                    last: day(2023, 7, 7)
                }
            ]
        );
        assert_eq!(
            question_periods("Where was she in the week before 2023-11-16?"),
            [Period::Days {
                first: day(2023, 11, 16),
                last: day(2023, 11, 16)
            }]
        );
        assert_eq!(
            question_periods("Which spot did he visit in May, and what in 2021?"),
            [
                Period::Yearless {
                    month: 5,
                    day: None
                },
                Period::Days {
                    first: day(2021, 1, 1),
                    last: day(2021, 12, 31)
                }
            ]
        );
        assert_eq!(
            question_periods("Where was he between August 11 and August 15?"),
            [
                Period::Yearless {
                    month: 8,
                    day: Some(11)
                },
                Period::Yearless {
                    month: 8,
                    day: Some(15)
                }
            ]
        );
    }

    #[test]
    fn words_that_only_look_like_dates_name_no_period() {
        assert!(question_periods("May I ask what she said last week?").is_empty());
        assert!(question_periods("How many of the 30 photos did he march with?").is_empty());
        assert!(question_periods("What did the 12345 code mean?").is_empty());
    }

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

    #[test]
    fn periods_admit_documents_written_shortly_after_them() {
        let jan = question_periods("in January 2022")[0];
        assert!(jan.admits(day(2022, 1, 15), DAYS_BEFORE, DAYS_AFTER));
        assert!(jan.admits(day(2022, 2, 10), DAYS_BEFORE, DAYS_AFTER));
        assert!(!jan.admits(day(2022, 3, 1), DAYS_BEFORE, DAYS_AFTER));
        assert!(!jan.admits(day(2021, 12, 20), DAYS_BEFORE, DAYS_AFTER));
        let may = question_periods("in May")[0];
        assert!(may.admits(day(2019, 5, 30), DAYS_BEFORE, DAYS_AFTER));
        assert!(!may.admits(day(2019, 7, 30), DAYS_BEFORE, DAYS_AFTER));
    }
}
