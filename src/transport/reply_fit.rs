//! Fitting a JSON reply of the API under [`MAX_REPLY_BYTES`] by cutting its
//! long strings, so that whatever the memory accepted can be shown (and so
//! forgotten) from the memory browser, even when JSON escaping (quotes,
//! control characters) blows its text up past the cap.
//!
//! The strings a reply may lose the end of are named by the route; every
//! string cut gets a sibling flag `<field>_truncated: true`. When several
//! strings are long they are cut to one common length (the shortest ones
//! stay whole), so one huge note does not erase its neighbours.
//!
//! [`MAX_REPLY_BYTES`]: crate::limits::MAX_REPLY_BYTES

use serde_json::Value;

/// A string a reply may cut: the JSON pointer of the object holding it
/// (`""` for the top level) and its key.
pub type Cuttable = (String, &'static str);

/// Bytes a flag `,"<field>_truncated":true` adds beyond the field's name:
/// the comma, two pairs of quotes, the colon, `_truncated` and `true`.
const FLAG_OVERHEAD: usize = 1 + 4 + 1 + "_truncated".len() + "true".len();

/// `body` serialized, its `cuttable` strings cut (and flagged) as little as
/// makes it at most `max` bytes. When the rest of the reply alone is over
/// `max`, it is returned whole and the caller refuses it.
pub fn fit(body: &mut Value, cuttable: &[Cuttable], max: usize) -> Vec<u8> {
    let whole = body.to_string().into_bytes();
    if whole.len() <= max {
        return whole;
    }
    let lens: Vec<usize> = cuttable
        .iter()
        .map(|(object, field)| string_at(body, object, field).map_or(0, escaped_len))
        .collect();
    let flags: usize = cuttable.iter().map(|(_, f)| f.len() + FLAG_OVERHEAD).sum();
    let rest = whole.len() - lens.iter().sum::<usize>() + flags;
    let Some(budget) = max.checked_sub(rest) else {
        return whole;
    };
    let level = water_level(&lens, budget);
    for ((object, field), &len) in cuttable.iter().zip(&lens) {
        if len <= level {
            continue;
        }
        let Some(holder) = body.pointer_mut(object).and_then(Value::as_object_mut) else {
            continue;
        };
        let cut = holder[*field]
            .as_str()
            .map(|s| json_prefix(s, level).to_string());
        if let Some(cut) = cut {
            holder.insert((*field).to_string(), Value::String(cut));
            holder.insert(format!("{field}_truncated"), Value::Bool(true));
        }
    }
    body.to_string().into_bytes()
}

fn string_at<'a>(body: &'a Value, object: &str, field: &str) -> Option<&'a str> {
    body.pointer(object)?.get(field)?.as_str()
}

/// The largest length `level` with the sum of `min(len, level)` over `lens`
/// at most `budget` (`usize::MAX` when everything fits whole).
fn water_level(lens: &[usize], budget: usize) -> usize {
    let mut sorted = lens.to_vec();
    sorted.sort_unstable();
    let mut left = budget;
    for (i, &len) in sorted.iter().enumerate() {
        let sharing = sorted.len() - i;
        if len.saturating_mul(sharing) > left {
            return left / sharing;
        }
        left -= len;
    }
    usize::MAX
}

/// Bytes `c` takes in a JSON string.
fn escaped_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Bytes `text` takes in a JSON string, without the quotes.
fn escaped_len(text: &str) -> usize {
    text.chars().map(escaped_char_len).sum()
}

/// The longest prefix of `text` whose JSON escaping (without the quotes)
/// takes at most `max` bytes, cut at a character boundary.
fn json_prefix(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += escaped_char_len(c);
        if used > max {
            return &text[..i];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MAX: usize = 10_000;

    fn top_text() -> Vec<Cuttable> {
        vec![(String::new(), "text")]
    }

    #[test]
    fn one_string_too_long_is_cut_to_fit_just_under_the_cap() {
        for unit in ["\"", "\u{1}", "é", "a"] {
            let text = unit.repeat(MAX / unit.len() + 10);
            let mut body = json!({"document_id": "doc_x", "text": text, "text_truncated": false});
            let len = fit(&mut body, &top_text(), MAX).len();
            assert_eq!(len, body.to_string().len());
            assert!(len <= MAX, "{unit:?}: {len}");
            assert!(len > MAX - 40, "{unit:?}: cut too much ({len})");
            assert_eq!(body["text_truncated"], true);
            assert!(text.starts_with(body["text"].as_str().unwrap()));
        }
    }

    #[test]
    fn a_reply_that_fits_is_left_as_it_is() {
        let mut small = json!({"text": "short\u{1}\"", "text_truncated": false});
        assert_eq!(
            fit(&mut small, &top_text(), MAX),
            small.to_string().into_bytes()
        );
        assert_eq!(
            small,
            json!({"text": "short\u{1}\"", "text_truncated": false})
        );
        assert_eq!(
            escaped_len("short\u{1}\""),
            Value::String("short\u{1}\"".into()).to_string().len() - 2
        );
    }

    #[test]
    fn many_strings_are_cut_to_one_length_and_short_ones_stay_whole() {
        let long = "\u{2}".repeat(MAX);
        let mut body = json!({"notes": [
            {"text": "kept", "content": long},
            {"text": long, "content": "kept too"},
            {"text": "\"".repeat(MAX)},
        ]});
        let cuttable: Vec<Cuttable> = (0..3)
            .flat_map(|i| {
                [
                    (format!("/notes/{i}"), "text"),
                    (format!("/notes/{i}"), "content"),
                ]
            })
            .collect();
        let len = fit(&mut body, &cuttable, MAX).len();
        assert!(len <= MAX && len > MAX - 200, "{len}");
        assert_eq!(body["notes"][0]["text"], "kept");
        assert_eq!(body["notes"][1]["content"], "kept too");
        assert!(body["notes"][0].get("text_truncated").is_none());
        for (i, field) in [(0, "content"), (1, "text"), (2, "text")] {
            assert_eq!(
                body["notes"][i][format!("{field}_truncated")],
                true,
                "{i} {field}"
            );
        }
        // One common length: the escaped lengths of the cut strings differ
        // by less than one character's escaping.
        let cut: Vec<usize> = [(0, "content"), (1, "text"), (2, "text")]
            .iter()
            .map(|(i, f)| escaped_len(body["notes"][*i][*f].as_str().unwrap()))
            .collect();
        assert!(
            cut.iter().max().unwrap() - cut.iter().min().unwrap() < 6,
            "{cut:?}"
        );
    }

    #[test]
    fn a_reply_whose_other_parts_are_over_the_cap_is_returned_whole() {
        let mut body = json!({"nodes": "n".repeat(MAX), "text": "t".repeat(MAX)});
        let before = body.clone();
        assert!(fit(&mut body, &top_text(), MAX).len() > MAX);
        assert_eq!(body, before);
    }

    #[test]
    fn the_water_level_shares_the_budget() {
        assert_eq!(water_level(&[1, 2, 3], 100), usize::MAX);
        assert_eq!(water_level(&[1, 2, 3], 6), usize::MAX);
        assert_eq!(water_level(&[1, 10, 10], 11), 5);
        assert_eq!(water_level(&[100, 100], 0), 0);
        assert_eq!(water_level(&[usize::MAX, 1], 7), 6);
    }
}
