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
use crate::knowledge::calendar::{
    day_of, document_day, full_date_at, month_days, month_of, take_iso_dates, words, year_of,
};
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

/// Words after which a lone month name is a month ("in May").
const MONTH_CUES: &[&str] = &[
    "in", "during", "early", "late", "mid", "since", "until", "of", "by", "last", "next",
];

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
