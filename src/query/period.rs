//! The periods a question names: "in January 2022", "on 3 June, 2023",
//! "in 2021", "in the summer of 2022", "by July 10, 2022", "since March
//! 2023", "last year".
//!
//! Only calendar expressions are read: a day and month with or without a
//! year, a month with a year, an ISO date, a bare year, a season with a
//! year, and a month after a cue word ("in May"). A period without a year
//! matches that month (and day) of any year. "between X and Y" is the days
//! from X to Y (a day without a year takes Y's). A bound word before an
//! expression opens it: "before" and "earlier than" end the period the day
//! before it starts, "by" and "until" where it ends, "since" starts it
//! where it starts and "after" the day after it ends; "the week before
//! 16 November" is not a bound but that day (what a conversation says
//! about the week before, it says on the day).
//!
//! Relative phrases ("last year", "this month", "last summer", "two weeks
//! ago", "yesterday") count from a reference day, and only in a question
//! that names no calendar date: with one, "last week" is relative to it
//! and the period around that date already holds it.
//!
//! Seasons are the northern hemisphere's meteorological ones: spring is
//! March to May, summer June to August, autumn (fall) September to
//! November, winter December to February (the winter of 2022 starts in
//! December 2022).

use crate::clock::{civil_from_days, days_from_civil};
use crate::knowledge::calendar::{
    day_of, full_date_at, iso_dates, month_days, month_of, words, year_of, ISO_DATE_BYTES,
};

/// Most periods read from one question.
pub const MAX_PERIODS: usize = 4;
/// The first day of a period open at its start ("before May 2023").
pub const OPEN_START: i64 = i64::MIN;
/// The last day of a period open at its end ("since May 2023").
pub const OPEN_END: i64 = i64::MAX;

/// A period a question names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// Days since 1970-01-01, inclusive; [`OPEN_START`] or [`OPEN_END`]
    /// for an open bound.
    Days { first: i64, last: i64 },
    /// A month (1-12) and optionally a day in it, in any year.
    Yearless { month: u32, day: Option<u32> },
}

impl Period {
    fn days(first: i64, last: i64) -> Period {
        Period::Days { first, last }
    }

    /// Whether a document dated `day` (days since 1970-01-01) falls in the
    /// period widened by `before` days at its start and `after` at its end.
    pub fn admits(&self, day: i64, before: i64, after: i64) -> bool {
        match *self {
            Period::Days { first, last } => {
                day >= first.saturating_sub(before) && day <= last.saturating_add(after)
            }
            Period::Yearless { month, day: d } => {
                // The same period in the document's year, or the year before
                // (a December period for a January document).
                let (y, _, _) = civil_from_days(day);
                [y, y - 1].into_iter().any(|year| {
                    let (first, last) = match d {
                        Some(d) => {
                            let x = days_from_civil(year, month, d);
                            (x, x)
                        }
                        None => month_days(year, month),
                    };
                    day >= first - before && day <= last + after
                })
            }
        }
    }

    /// The period opened by `bound`; a period without a year stays as it is
    /// (it has no one place in time to bound).
    fn bounded(self, bound: Bound) -> Period {
        let Period::Days { first, last } = self else {
            return self;
        };
        match bound {
            Bound::Before => Period::days(OPEN_START, first.saturating_sub(1)),
            Bound::By => Period::days(OPEN_START, last),
            Bound::Since => Period::days(first, OPEN_END),
            Bound::After => Period::days(last.saturating_add(1), OPEN_END),
        }
    }
}

/// A word (or two) before an expression that makes it a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// "before", "earlier than", "prior to": up to the day before it.
    Before,
    /// "by", "until", "till": up to its last day.
    By,
    /// "since": from its first day.
    Since,
    /// "after", "later than": from the day after it.
    After,
}

/// A word of the question, or an ISO date that stood there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Word(&'a str),
    Date(i64),
}

fn tokens(question: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut at = 0;
    for (start, day) in iso_dates(question) {
        out.extend(words(&question[at..start]).into_iter().map(Token::Word));
        out.push(Token::Date(day));
        at = start + ISO_DATE_BYTES;
    }
    out.extend(words(&question[at..]).into_iter().map(Token::Word));
    out
}

/// What a question says about time, before relative phrases are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The calendar periods it names.
    periods: Vec<Period>,
    /// Its relative phrases (each with the bound before it, if any),
    /// counted from a reference day when the question names no calendar
    /// date.
    relative: Vec<(Relative, Option<Bound>)>,
    /// The words of the phrases read (lower case): within the period they
    /// name, they no longer tell chunks apart.
    words: Vec<String>,
}

impl Reading {
    /// The words of the time phrases read ("may", "2023"; "last", "month").
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Whether resolving needs a reference day.
    pub fn needs_reference(&self) -> bool {
        self.periods.is_empty() && !self.relative.is_empty()
    }

    /// The periods, relative phrases counted from `reference` (days since
    /// 1970-01-01; `None`: they name no period).
    pub fn resolve(self, reference: Option<i64>) -> Vec<Period> {
        if !self.needs_reference() {
            return self.periods;
        }
        let Some(today) = reference else {
            return Vec::new();
        };
        self.relative
            .into_iter()
            .map(|(r, bound)| {
                let p = r.resolve(today);
                bound.map_or(p, |b| p.bounded(b))
            })
            .take(MAX_PERIODS)
            .collect()
    }
}

/// The periods a question names, relative phrases counted from
/// `reference` (see [`read`]).
pub fn question_periods(question: &str, reference: Option<i64>) -> Vec<Period> {
    read(question).resolve(reference)
}

/// Words after which a lone month name is a month ("in May").
const MONTH_CUES: &[&str] = &[
    "in", "during", "early", "late", "mid", "since", "until", "of", "by", "last", "next",
];

/// Words before "before" or "after" that make it an offset from a date
/// ("the week before 16 November"), not a bound.
const OFFSET_UNITS: &[&str] = &[
    "day",
    "days",
    "night",
    "nights",
    "week",
    "weeks",
    "weekend",
    "weekends",
    "month",
    "months",
    "year",
    "years",
    "morning",
    "evening",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Reads what a question says about time: at most [`MAX_PERIODS`]
/// calendar periods and relative phrases.
pub fn read(question: &str) -> Reading {
    let t = tokens(question);
    let word = |k: usize| match t.get(k) {
        Some(Token::Word(w)) => Some(*w),
        _ => None,
    };
    let mut periods = Vec::new();
    let mut relative = Vec::new();
    let mut read_words = Vec::new();
    let mut took = |from: usize, to: usize| {
        for token in t.iter().take(to).skip(from) {
            if let Token::Word(w) = token {
                read_words.push(w.to_lowercase());
            }
        }
    };
    let mut i = 0;
    while i < t.len() && periods.len() < MAX_PERIODS {
        let bound = bound_before(&t, i);
        if let Some((p, n)) = calendar_at(&t, i) {
            // "between X and Y": the days from X to Y.
            let between = i > 0 && word(i - 1).is_some_and(|w| w.eq_ignore_ascii_case("between"));
            let and = word(i + n).is_some_and(|w| w.eq_ignore_ascii_case("and"));
            if between && and {
                if let Some((q, m)) = calendar_at(&t, i + n + 1) {
                    if let Some(span) = span(p, q) {
                        periods.push(span);
                        took(i, i + n + 1 + m);
                        i += n + 1 + m;
                        continue;
                    }
                }
            }
            periods.push(bound.map_or(p, |b| p.bounded(b)));
            took(i, i + n);
            i += n;
            continue;
        }
        if let Some((r, n)) = relative_at(&t, i) {
            relative.push((r, bound));
            took(i, i + n);
            i += n;
            continue;
        }
        i += 1;
    }
    relative.truncate(MAX_PERIODS);
    Reading {
        periods,
        relative,
        words: read_words,
    }
}

/// The days from `from` to `to`; a day without a year takes the year of
/// the other end. `None` unless both ends have a day or a year.
fn span(from: Period, to: Period) -> Option<Period> {
    let with_year = |p: Period, year: i64| match p {
        Period::Yearless {
            month,
            day: Some(d),
        } => {
            let x = days_from_civil(year, month, d);
            Period::days(x, x)
        }
        Period::Yearless { month, day: None } => {
            let (a, b) = month_days(year, month);
            Period::days(a, b)
        }
        p => p,
    };
    let year = |p: Period| match p {
        Period::Days { first, .. } => Some(civil_from_days(first).0),
        Period::Yearless { .. } => None,
    };
    let (from, to) = match (year(from), year(to)) {
        (Some(_), Some(_)) => (from, to),
        (None, Some(y)) => (with_year(from, y), to),
        (Some(y), None) => (from, with_year(to, y)),
        (None, None) => return None,
    };
    match (from, to) {
        (Period::Days { first, .. }, Period::Days { last, .. }) if first <= last => {
            Some(Period::days(first, last))
        }
        _ => None,
    }
}

/// The bound the words before token `i` make of an expression there.
fn bound_before(t: &[Token<'_>], i: usize) -> Option<Bound> {
    let lower = |k: usize| match t.get(k) {
        Some(Token::Word(w)) => Some(w.to_lowercase()),
        _ => None,
    };
    let prev = lower(i.checked_sub(1)?)?;
    let before_prev = i.checked_sub(2).and_then(lower);
    let offset = before_prev
        .as_deref()
        .is_some_and(|w| OFFSET_UNITS.contains(&w));
    match (before_prev.as_deref(), prev.as_str()) {
        (Some("earlier"), "than") | (Some("prior"), "to") => Some(Bound::Before),
        (Some("later"), "than") => Some(Bound::After),
        (_, "before") if !offset => Some(Bound::Before),
        (_, "after") if !offset => Some(Bound::After),
        (_, "by" | "until" | "till") => Some(Bound::By),
        (_, "since") => Some(Bound::Since),
        _ => None,
    }
}

/// Seasons: the name and the month it starts in (each lasts three).
const SEASONS: &[(&str, u32)] = &[
    ("spring", 3),
    ("summer", 6),
    ("autumn", 9),
    ("fall", 9),
    ("winter", 12),
];

fn season_of(word: &str) -> Option<u32> {
    let w = word.to_lowercase();
    SEASONS.iter().find(|(s, _)| *s == w).map(|(_, m)| *m)
}

/// The three months of the season starting in month `start` of `year`.
fn season_days(year: i64, start: u32) -> Period {
    let (first, _) = month_days(year, start);
    let (end_year, end_month) = if start + 2 > 12 {
        (year + 1, start + 2 - 12)
    } else {
        (year, start + 2)
    };
    Period::days(first, month_days(end_year, end_month).1)
}

/// A calendar expression at token `i`, and how many tokens it took.
fn calendar_at(t: &[Token<'_>], i: usize) -> Option<(Period, usize)> {
    let w: Vec<&str> = t[i..]
        .iter()
        .map_while(|x| match x {
            Token::Word(w) => Some(*w),
            Token::Date(_) => None,
        })
        .collect();
    if let Some(Token::Date(d)) = t.get(i) {
        return Some((Period::days(*d, *d), 1));
    }
    let first = *w.first()?;
    if let Some((day, n)) = full_date_at(&w, 0) {
        return Some((Period::days(day, day), n));
    }
    let next = w.get(1).copied();
    // "8 May" / "May 8" without a year.
    if let (Some(d), Some(m)) = (day_of(first), next.and_then(month_of)) {
        return Some((
            Period::Yearless {
                month: m,
                day: Some(d),
            },
            2,
        ));
    }
    if let Some(m) = month_of(first) {
        if let Some(y) = next.and_then(year_of) {
            let (a, b) = month_days(y, m);
            return Some((Period::days(a, b), 2));
        }
        if let Some(d) = next.and_then(day_of) {
            return Some((
                Period::Yearless {
                    month: m,
                    day: Some(d),
                },
                2,
            ));
        }
        // A lone month name only when capitalized ("May", not "may") and
        // after a cue word.
        let capital = first.starts_with(|c: char| c.is_uppercase());
        let cue = i
            .checked_sub(1)
            .and_then(|p| match t[p] {
                Token::Word(w) => Some(w.to_lowercase()),
                Token::Date(_) => None,
            })
            .is_some_and(|p| MONTH_CUES.contains(&p.as_str()));
        if capital && cue {
            return Some((
                Period::Yearless {
                    month: m,
                    day: None,
                },
                1,
            ));
        }
    }
    // "summer 2021", "summer of 2022".
    if let Some(start) = season_of(first) {
        let of = next.is_some_and(|n| n.eq_ignore_ascii_case("of"));
        let at = if of { 2 } else { 1 };
        if let Some(y) = w.get(at).copied().and_then(year_of) {
            return Some((season_days(y, start), at + 1));
        }
    }
    let y = year_of(first)?;
    Some((
        Period::days(days_from_civil(y, 1, 1), days_from_civil(y, 12, 31)),
        1,
    ))
}

/// A relative phrase: a unit of time some steps back from the reference
/// day (0: the one holding it; 1: the one before; -1: the one after).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relative {
    Days(i64),
    Weeks(i64),
    Months(i64),
    Years(i64),
    /// The most recent season starting in this month that has begun by the
    /// reference day, `back` more before it.
    Season {
        start: u32,
        back: i64,
    },
}

/// Number words a relative phrase counts with ("two weeks ago").
const NUMBERS: &[&str] = &[
    "a", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

fn count_of(word: &str) -> Option<i64> {
    let w = word.to_lowercase();
    if let Some(n) = NUMBERS.iter().position(|x| *x == w) {
        return Some(n.max(1) as i64);
    }
    if w == "an" {
        return Some(1);
    }
    w.parse::<i64>().ok().filter(|n| (1..=99).contains(n))
}

/// A relative phrase at token `i`, and how many tokens it took.
fn relative_at(t: &[Token<'_>], i: usize) -> Option<(Relative, usize)> {
    let lower = |k: usize| match t.get(k) {
        Some(Token::Word(w)) => Some(w.to_lowercase()),
        _ => None,
    };
    let first = lower(i)?;
    match first.as_str() {
        "yesterday" => return Some((Relative::Days(1), 1)),
        "today" => return Some((Relative::Days(0), 1)),
        "last" | "this" | "next" => {
            let back = match first.as_str() {
                "last" => 1,
                "this" => 0,
                _ => -1,
            };
            let unit = lower(i + 1)?;
            let r = match unit.as_str() {
                "week" => Relative::Weeks(back),
                "month" => Relative::Months(back),
                "year" => Relative::Years(back),
                u => Relative::Season {
                    start: season_of(u)?,
                    back,
                },
            };
            return Some((r, 2));
        }
        _ => {}
    }
    // "two weeks ago".
    let n = count_of(&first)?;
    let unit = lower(i + 1)?;
    if lower(i + 2).as_deref() != Some("ago") {
        return None;
    }
    let r = match unit.trim_end_matches('s') {
        "day" => Relative::Days(n),
        "week" => Relative::Weeks(n),
        "month" => Relative::Months(n),
        "year" => Relative::Years(n),
        _ => return None,
    };
    Some((r, 3))
}

impl Relative {
    /// The period this phrase names, counted from `today`.
    fn resolve(self, today: i64) -> Period {
        let (year, month, _) = civil_from_days(today);
        match self {
            Relative::Days(n) => Period::days(today - n, today - n),
            Relative::Weeks(n) => {
                // Weeks start on Monday; 1970-01-01 was a Thursday.
                let monday = today - (today + 3).rem_euclid(7) - 7 * n;
                Period::days(monday, monday + 6)
            }
            Relative::Months(n) => {
                let index = year * 12 + i64::from(month) - 1 - n;
                let (a, b) = month_days(index.div_euclid(12), index.rem_euclid(12) as u32 + 1);
                Period::days(a, b)
            }
            Relative::Years(n) => Period::days(
                days_from_civil(year - n, 1, 1),
                days_from_civil(year - n, 12, 31),
            ),
            Relative::Season { start, back } => {
                // The latest season of this kind that has begun by today.
                let begun = if days_from_civil(year, start, 1) <= today {
                    year
                } else {
                    year - 1
                };
                let latest = season_days(begun, start);
                let last = match latest {
                    Period::Days { last, .. } => last,
                    Period::Yearless { .. } => unreachable!("a season has a year"),
                };
                // "this summer" is the latest; "last summer" too once it
                // is over, said in the middle of one the one before.
                let back = if back == 1 && last < today { 0 } else { back };
                season_days(begun - back, start)
            }
        }
    }
}

#[cfg(test)]
mod tests;
