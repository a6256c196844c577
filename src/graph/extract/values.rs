//! Dates, times and quantities.
//!
//! Owns recognizing value mentions in a token stream and giving each a
//! canonical key, so that "8 May, 2023", "May 8, 2023" and "2023-05-08" all
//! key as `2023-05-08`, "1:56 pm" keys as `13:56`, and "10MB" / "10 MB" key
//! as `10 mb`. Relative expressions ("yesterday", "last Tuesday", "three
//! years ago") key as their lowercased words: resolving them needs the
//! document's own timestamp, which this pure extractor does not have.
//!
//! Must never: read past the token slice, treat a bare number as a value
//! without a unit or a date context, or allocate more than the key.

use super::lexicon::{
    self, DURATION_UNITS, MULTIPLIERS, NUMBER_WORDS, RELATIVE_PERIODS, UNITS, WEEKDAYS,
    YEAR_PREPOSITIONS,
};
use super::tokens::{Shape, Token};

/// Earliest and latest plausible calendar year for a bare four-digit number.
const YEAR_RANGE: std::ops::RangeInclusive<u32> = 1000..=2999;

/// What kind of value was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ValueKind {
    Date,
    Quantity,
}

/// A matched value: tokens `[start, end)` of the slice and its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ValueMatch {
    pub end: usize,
    pub key: String,
    pub kind: ValueKind,
}

/// Tries every value pattern at token `i`.
pub(super) fn match_value(toks: &[Token], i: usize) -> Option<ValueMatch> {
    date_at(toks, i)
        .or_else(|| version_at(toks, i))
        .or_else(|| quantity_at(toks, i))
}

/// Words that make a dotted number near them a version ("version 2.4",
/// "upgraded to 2.0").
const VERSION_CONTEXT: &[&str] = &[
    "version",
    "release",
    "upgraded",
    "updated",
    "bumped",
    "downgraded",
    "upgrade",
    "update",
];

/// How many tokens back [`VERSION_CONTEXT`] is looked for.
const VERSION_CONTEXT_TOKENS: usize = 6;

/// A version number: dotted digits ("2.4", "3.0.1", "v1.8") with a
/// version word shortly before it (or a `v` of its own). Keyed without
/// the `v`.
fn version_at(toks: &[Token], i: usize) -> Option<ValueMatch> {
    let t = toks.get(i)?;
    let text = t.text.trim_end_matches('.');
    let digits = text.strip_prefix(['v', 'V']).unwrap_or(text);
    let dotted = digits.contains('.')
        && digits
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !dotted {
        return None;
    }
    let prefixed = digits.len() < text.len();
    let context = toks[i.saturating_sub(VERSION_CONTEXT_TOKENS)..i]
        .iter()
        .any(|w| VERSION_CONTEXT.contains(&w.text.to_ascii_lowercase().as_str()));
    (prefixed || context).then(|| ValueMatch {
        end: i + 1,
        key: digits.to_string(),
        kind: ValueKind::Quantity,
    })
}

fn text_is(t: Option<&Token>, word: &str) -> bool {
    t.is_some_and(|t| t.text.eq_ignore_ascii_case(word))
}

fn starts_upper(t: &Token) -> bool {
    t.text.chars().next().is_some_and(char::is_uppercase)
}

/// A month name written with a capital ("May", "Sept").
fn month(t: Option<&Token>) -> Option<u8> {
    let t = t?;
    if !starts_upper(t) {
        return None;
    }
    lexicon::month_number(t.text.trim_end_matches('.'))
}

/// Day of month, allowing ordinals ("8", "8th").
fn day(t: Option<&Token>) -> Option<u32> {
    let t = t?;
    if t.shape != Shape::Number {
        return None;
    }
    let digits = t.text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &t.text[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") || digits.len() > 2 {
        return None;
    }
    let d: u32 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some(d)
}

/// A four-digit year.
fn year(t: Option<&Token>) -> Option<u32> {
    let t = t?;
    if t.shape != Shape::Number || t.text.len() != 4 {
        return None;
    }
    let y: u32 = t.text.parse().ok()?;
    YEAR_RANGE.contains(&y).then_some(y)
}

/// After an optional comma at `j`, a year; returns (year, index after it).
fn optional_year(toks: &[Token], j: usize) -> Option<(u32, usize)> {
    let k = if toks.get(j).is_some_and(|t| t.is_punct(',')) {
        j + 1
    } else {
        j
    };
    year(toks.get(k)).map(|y| (y, k + 1))
}

fn date_key(y: Option<u32>, m: u8, d: Option<u32>) -> String {
    match (y, d) {
        (Some(y), Some(d)) => format!("{y:04}-{m:02}-{d:02}"),
        (Some(y), None) => format!("{y:04}-{m:02}"),
        (None, Some(d)) => format!("--{m:02}-{d:02}"),
        (None, None) => format!("--{m:02}"),
    }
}

fn lower_words(toks: &[Token], from: usize, to: usize) -> String {
    let mut key = String::new();
    for t in &toks[from..to] {
        if !key.is_empty() {
            key.push(' ');
        }
        key.extend(t.text.chars().map(lexicon::fold));
    }
    key
}

fn date(end: usize, key: String) -> Option<ValueMatch> {
    Some(ValueMatch {
        end,
        key,
        kind: ValueKind::Date,
    })
}

fn date_at(toks: &[Token], i: usize) -> Option<ValueMatch> {
    let t = toks.get(i)?;
    let prev = i.checked_sub(1).and_then(|p| toks.get(p));
    match t.shape {
        Shape::IsoDate => return date(i + 1, t.text[..10].to_string()),
        Shape::Time => return time_at(toks, i),
        _ => {}
    }
    // Day first: "8 May, 2023", "8th of May".
    if let Some(d) = day(Some(t)) {
        let m_at = if text_is(toks.get(i + 1), "of") {
            i + 2
        } else {
            i + 1
        };
        if let Some(m) = month(toks.get(m_at)) {
            return match optional_year(toks, m_at + 1) {
                Some((y, end)) => date(end, date_key(Some(y), m, Some(d))),
                None => date(m_at + 1, date_key(None, m, Some(d))),
            };
        }
        if let Some(m) = meridiem(toks.get(i + 1)) {
            let h = d;
            if h <= 12 {
                return date(i + 2, clock_key(h, 0, m));
            }
        }
    }
    // Month first: "May 8", "November 9, 2004", "March 2024".
    if let Some(m) = month(Some(t)) {
        if let Some(d) = day(toks.get(i + 1)) {
            return match optional_year(toks, i + 2) {
                Some((y, end)) => date(end, date_key(Some(y), m, Some(d))),
                None => date(i + 2, date_key(None, m, Some(d))),
            };
        }
        if let Some(y) = year(toks.get(i + 1)) {
            return date(i + 2, date_key(Some(y), m, None));
        }
        let full_name = t.text.len() > 3 && !t.text.ends_with('.');
        let cued = prev.is_some_and(|p| p.shape == Shape::Lower && p.is_in(YEAR_PREPOSITIONS));
        if full_name && cued && !t.text.eq_ignore_ascii_case("may") {
            return date(i + 1, date_key(None, m, None));
        }
    }
    // "last Tuesday", "next week", "this year".
    let is = |w: &str| t.text.eq_ignore_ascii_case(w);
    if ["last", "next", "this", "past", "coming"]
        .into_iter()
        .any(is)
    {
        if let Some(n) = toks.get(i + 1) {
            // After "last"/"next"/"this" a weekday is a date even in
            // lowercase chat ("last sunday").
            let weekday = n.is_in(WEEKDAYS);
            if weekday || (n.shape == Shape::Lower && n.is_in(RELATIVE_PERIODS)) {
                return date(i + 2, lower_words(toks, i, i + 2));
            }
        }
    }
    if starts_upper(t) && t.is_in(WEEKDAYS) {
        return date(i + 1, lower_words(toks, i, i + 1));
    }
    if ["yesterday", "today", "tomorrow", "tonight"]
        .into_iter()
        .any(is)
    {
        return date(i + 1, t.text.to_ascii_lowercase());
    }
    // "three years ago", "2 weeks ago".
    let counted = t.shape == Shape::Number && t.text.bytes().all(|b| b.is_ascii_digit())
        || (t.shape == Shape::Lower && t.is_in(NUMBER_WORDS));
    if counted
        && toks.get(i + 1).is_some_and(|u| u.is_in(DURATION_UNITS))
        && text_is(toks.get(i + 2), "ago")
    {
        return date(i + 3, lower_words(toks, i, i + 3));
    }
    // Quarters: "Q3", "Q3 2024".
    if t.shape == Shape::Upper && matches!(t.text, "Q1" | "Q2" | "Q3" | "Q4") {
        let q = t.text.to_ascii_lowercase();
        return match year(toks.get(i + 1)) {
            Some(y) => date(i + 2, format!("{y:04}-{q}")),
            None => date(i + 1, q),
        };
    }
    // Bare years after a cue word or inside parentheses: "in 1911", "(2021)".
    if let Some(y) = year(Some(t)) {
        let cued = prev.is_some_and(|p| {
            (p.shape == Shape::Lower || p.shape == Shape::Cap) && p.is_in(YEAR_PREPOSITIONS)
                || p.is_punct('(')
        });
        if cued {
            return date(i + 1, format!("{y:04}"));
        }
    }
    // Decades: "the 1990s".
    if t.shape == Shape::Number && t.text.len() == 5 && t.text.ends_with('s') {
        if let Some(Ok(y)) = t.text.get(..4).map(str::parse::<u32>) {
            if YEAR_RANGE.contains(&y) && y % 10 == 0 {
                return date(i + 1, t.text.to_string());
            }
        }
    }
    None
}

/// "am"/"pm"/"a.m."/"p.m." as a separate token; returns true for pm.
fn meridiem(t: Option<&Token>) -> Option<bool> {
    let t = t?;
    match t.text.to_ascii_lowercase().trim_end_matches('.') {
        "am" | "a.m" => Some(false),
        "pm" | "p.m" => Some(true),
        _ => None,
    }
}

fn clock_key(h: u32, m: u32, pm: bool) -> String {
    let h = match (h, pm) {
        (12, false) => 0,
        (12, true) => 12,
        (h, true) => h + 12,
        (h, false) => h,
    };
    format!("{h:02}:{m:02}")
}

/// A clock time token, optionally followed by am/pm.
fn time_at(toks: &[Token], i: usize) -> Option<ValueMatch> {
    let t = toks.get(i)?;
    let lower = t.text.to_ascii_lowercase();
    let (body, glued) = match (lower.strip_suffix("am"), lower.strip_suffix("pm")) {
        (Some(b), _) => (b, Some(false)),
        (_, Some(b)) => (b, Some(true)),
        _ => (lower.as_str(), None),
    };
    let mut parts = body.split(':');
    let h: u32 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    if m > 59 || h > 24 {
        return None;
    }
    let (pm, end) = match glued {
        Some(pm) => (Some(pm), i + 1),
        None => match meridiem(toks.get(i + 1)) {
            Some(pm) => (Some(pm), i + 2),
            None => (None, i + 1),
        },
    };
    let key = match pm {
        Some(pm) if (1..=12).contains(&h) => clock_key(h, m, pm),
        _ => format!("{h:02}:{m:02}"),
    };
    date(end, key)
}

fn is_currency_code(w: &str) -> bool {
    matches!(
        w.to_ascii_lowercase().as_str(),
        "usd" | "eur" | "gbp" | "jpy" | "cny" | "inr" | "chf" | "cad" | "aud"
    )
}

/// Money, percentages and numbers with units.
fn quantity_at(toks: &[Token], i: usize) -> Option<ValueMatch> {
    let t = toks.get(i)?;
    let quantity = |end: usize| {
        let mut key = String::new();
        for tok in &toks[i..end] {
            // A unit that is also an abbreviation keeps the sentence's final
            // period ("200 ms."); the key must not.
            let text: String = tok
                .text
                .trim_end_matches('.')
                .chars()
                .filter(|c| *c != ',')
                .map(lexicon::fold)
                .collect();
            // Split a glued unit: "10mb" -> "10 mb".
            let split = text
                .find(|c: char| c.is_alphabetic())
                .filter(|&at| at > 0 && text[..at].ends_with(|c: char| c.is_ascii_digit()));
            if !key.is_empty() {
                key.push(' ');
            }
            match split {
                Some(at) if !text.starts_with(|c: char| !c.is_ascii_digit()) => {
                    key.push_str(&text[..at]);
                    key.push(' ');
                    key.push_str(&text[at..]);
                }
                _ => key.push_str(&text),
            }
        }
        Some(ValueMatch {
            end,
            key,
            kind: ValueKind::Quantity,
        })
    };
    let next = toks.get(i + 1);
    let with_multiplier = |j: usize| {
        if toks
            .get(j)
            .is_some_and(|m| m.shape == Shape::Lower && m.is_in(MULTIPLIERS))
        {
            j + 1
        } else {
            j
        }
    };
    if t.shape == Shape::Number {
        let money = !t.text.starts_with(|c: char| c.is_ascii_digit());
        let digits_end = t
            .text
            .find(|c: char| c.is_alphabetic() || c == '%')
            .unwrap_or(t.text.len());
        let suffix = &t.text[digits_end..];
        if money {
            return quantity(with_multiplier(i + 1));
        }
        if suffix == "%" {
            return quantity(i + 1);
        }
        if !suffix.is_empty() {
            let glued_unit = lexicon::contains(UNITS, suffix) || suffix.eq_ignore_ascii_case("m");
            return if glued_unit { quantity(i + 1) } else { None };
        }
        let j = with_multiplier(i + 1);
        if let Some(u) = toks.get(j) {
            let unit = u.text.chars().count() > 1
                && !u.text.eq_ignore_ascii_case("x")
                && (u.is_in(UNITS) || is_currency_code(u.text));
            if unit && !(u.shape == Shape::Cap && !is_currency_code(u.text) && u.text.len() > 3) {
                // "3 hours 41 minutes": consecutive duration parts are one value.
                let mut end = j + 1;
                while u.is_in(DURATION_UNITS)
                    && toks.get(end).is_some_and(|n| n.shape == Shape::Number)
                    && toks.get(end + 1).is_some_and(|n| n.is_in(DURATION_UNITS))
                {
                    end += 2;
                }
                return quantity(end);
            }
        }
        return None;
    }
    // "two years", "three weeks" (spelled-out durations; "a" is too common).
    if t.shape == Shape::Lower
        && !matches!(t.text, "a" | "an")
        && t.is_in(NUMBER_WORDS)
        && next.is_some_and(|u| u.is_in(DURATION_UNITS))
    {
        return quantity(i + 2);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokenize;
    use super::*;

    fn first_value(text: &str) -> Option<(String, String, ValueKind)> {
        let mut toks = Vec::new();
        tokenize(text, 0, text.len(), true, &mut toks);
        (0..toks.len()).find_map(|i| {
            match_value(&toks, i).map(|m| {
                let surface = text[toks[i].start..toks[m.end - 1].end].to_string();
                (surface, m.key, m.kind)
            })
        })
    }

    fn key(text: &str) -> String {
        first_value(text).map(|(_, k, _)| k).unwrap_or_default()
    }

    #[test]
    fn absolute_dates_share_one_canonical_key() {
        assert_eq!(key("on 8 May, 2023 we met"), "2023-05-08");
        assert_eq!(key("on May 8, 2023 we met"), "2023-05-08");
        assert_eq!(key("on 2023-05-08 we met"), "2023-05-08");
        assert_eq!(key("in March 2024"), "2024-03");
        assert_eq!(key("by May 15."), "--05-15");
        assert_eq!(key("born in 1867"), "1867");
    }

    #[test]
    fn clock_times_key_in_24_hours() {
        assert_eq!(key("[1:56 pm on 8 May]"), "13:56");
        assert_eq!(key("before 5 pm"), "17:00");
        assert_eq!(key("at 10:30am"), "10:30");
    }

    #[test]
    fn relative_dates_keep_their_words() {
        assert_eq!(key("we met last Tuesday"), "last tuesday");
        assert_eq!(key("I went yesterday"), "yesterday");
        assert_eq!(key("moved three years ago"), "three years ago");
        assert_eq!(key("see you next week"), "next week");
    }

    #[test]
    fn quantities_need_a_unit_currency_or_percent() {
        assert_eq!(first_value("paid $30 million").unwrap().0, "$30 million");
        assert_eq!(key("grew 20% fast"), "20%");
        assert_eq!(key("runs at 3.5 GHz"), "3.5 ghz");
        assert_eq!(key("has 10MB left"), "10 mb");
        assert_eq!(key("it took 200 ms."), "200 ms");
        assert_eq!(key("has 10 MB left"), "10 mb");
        assert_eq!(key("for two years"), "two years");
        assert_eq!(first_value("we hired 300 people"), None);
        assert_eq!(first_value("the May release"), None);
    }
}
