//! Wall-clock time as stored (Unix milliseconds) and as shown (RFC 3339 UTC).
//!
//! In deterministic mode (`crate::config::Deterministic`) the clock is
//! fixed instead: it starts at a given time and moves only when the
//! protocol layer steps it, once per request, so a session's times are the
//! same on every run and every machine.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// The fixed clock of deterministic mode: now, and the step per request.
struct Fixed {
    now: AtomicI64,
    step: i64,
}

static FIXED: OnceLock<Fixed> = OnceLock::new();

/// Milliseconds since the Unix epoch (UTC).
pub fn now_ms() -> i64 {
    if let Some(fixed) = FIXED.get() {
        return fixed.now.load(Ordering::SeqCst);
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Fixes the clock at `start_ms`, to move `step_ms` at each [`step`].
/// Once per process, before anything reads the time; false if it was
/// fixed already.
pub fn fix(start_ms: i64, step_ms: i64) -> bool {
    FIXED
        .set(Fixed {
            now: AtomicI64::new(start_ms),
            step: step_ms,
        })
        .is_ok()
}

/// Whether the clock is fixed (deterministic mode).
pub fn is_fixed() -> bool {
    FIXED.get().is_some()
}

/// Moves a fixed clock one step on; does nothing to the real one.
pub fn step() {
    if let Some(fixed) = FIXED.get() {
        fixed.now.fetch_add(fixed.step, Ordering::SeqCst);
    }
}

/// Formats Unix milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
/// The last millisecond an RFC 3339 time can name, 9999-12-31T23:59:59.999Z:
/// times stored (a document's creation, its expiry) lie from 0 to this.
pub const LATEST_TIME_MS: i64 = 253_402_300_799_999;

pub fn rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A time bound as Unix ms: an RFC 3339 date-time with its offset, or a
/// bare date `YYYY-MM-DD` (UTC) meaning the whole day, so that as the end
/// of a range (`end`) a bare date reaches the next midnight. `None` for
/// anything else (surrounding white space included).
pub fn parse_time_bound(value: &str, end: bool) -> Option<i64> {
    if value.trim() != value {
        return None;
    }
    let ms = parse_rfc3339(value)?;
    let bare_date = !value.contains(['T', 't', ' ']);
    Some(if end && bare_date {
        ms + 86_400_000
    } else {
        ms
    })
}

/// Parses an RFC 3339 timestamp (`2026-12-01T09:30:00Z`, fractional
/// seconds and `±HH:MM` offsets allowed) or a plain date (`2026-12-01`,
/// midnight UTC) into Unix milliseconds.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let s = s.trim();
    let num = |t: &str| -> Option<i64> {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok())?
    };
    let (date, rest) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut d = date.splitn(3, '-');
    let (y, m, day) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    if !(1..=12).contains(&m) || day < 1 || day > days_in_month(y, m) || date.len() != 10 {
        return None;
    }
    let days = days_from_civil(y, m as u32, day as u32);
    let Some(rest) = rest else {
        return Some(days * 86_400_000);
    };
    let (clock, offset_ms) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else {
        let i = rest.rfind(['+', '-'])?;
        let (c, off) = rest.split_at(i);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        // An offset is two digits of hours (to 23) and two of minutes (to
        // 59): anything else is not RFC 3339, and a long one would
        // overflow the arithmetic below.
        let (oh, om) = off[1..].split_once(':')?;
        let (oh, om) = (
            num(oh).filter(|_| oh.len() == 2)?,
            num(om).filter(|_| om.len() == 2)?,
        );
        if oh > 23 || om > 59 {
            return None;
        }
        (c, sign * (oh * 3600 + om * 60) * 1000)
    };
    let (hms, frac) = match clock.split_once('.') {
        Some((a, b)) => (a, b),
        None => (clock, ""),
    };
    let mut t = hms.splitn(3, ':');
    let (h, min, sec) = (num(t.next()?)?, num(t.next()?)?, num(t.next()?)?);
    if h > 23 || min > 59 || sec > 60 || (!frac.is_empty() && num(frac).is_none()) {
        return None;
    }
    let millis = frac
        .chars()
        .chain("000".chars())
        .take(3)
        .collect::<String>()
        .parse::<i64>()
        .ok()?;
    Some(days * 86_400_000 + (h * 3600 + min * 60 + sec) * 1000 + millis - offset_ms)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (the
/// era-based algorithm: exact for every representable day).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_formats_and_common_variants() {
        for ms in [0, 951_782_400_123, 1_795_910_400_000, 1_795_987_654_321] {
            assert_eq!(parse_rfc3339(&rfc3339(ms)), Some(ms));
        }
        assert_eq!(parse_rfc3339("2026-11-29"), Some(1_795_910_400_000));
        assert_eq!(parse_rfc3339("2028-02-29"), Some(1_835_395_200_000));
        assert_eq!(
            parse_rfc3339("2026-11-29T02:00:00+02:00"),
            Some(1_795_910_400_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-28T22:00:00-02:00"),
            Some(1_795_910_400_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-29T23:59:00+23:59"),
            Some(1_795_910_400_000)
        );
        for bad in [
            "",
            "tomorrow",
            "2026-02-29",
            "2027-04-31",
            "2026-13-01",
            "2026-1-01",
            "2026-11-29T25:00:00Z",
            "2026-11-29T10:00:00",
            "2026-11-29T10:00:00+99:99",
            "2026-11-29T10:00:00+24:00",
            "2026-11-29T10:00:00+23:60",
            "2026-11-29T10:00:00+2:00",
            "2026-11-29T10:00:00+9223372036854775807:00",
            "2026-11-29T10:00:00-00:9223372036854775807",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339(1_795_910_400_000), "2026-11-29T00:00:00.000Z");
    }
}
