//! Locating a stream's bytes in the file and decoding them within budget.
//!
//! `/Length` is trusted only when `endstream` follows where it says the data
//! ends; otherwise the data runs to the next `endstream`. The positions of all
//! `endstream` keywords are found once per file, so recovering many broken
//! streams stays linear in the file size.

use std::cell::OnceCell;
use std::ops::Range;

use super::error::{LimitKind, PdfError};
use super::filters::{self, FilterError, FilterStep};
use super::lexer::find;
use super::limits::{too_large, Budget, Limits};
use super::object::{Dict, Object};
use super::parser::{endstream_follows, trim_stream_end};

/// Lazily built, sorted positions of every `endstream` in the file.
#[derive(Default)]
pub(super) struct EndstreamIndex {
    positions: OnceCell<Vec<usize>>,
}

impl EndstreamIndex {
    /// The first `endstream` at or after `pos`.
    fn next_after(&self, data: &[u8], pos: usize, max_entries: usize) -> Option<usize> {
        let positions = self.positions.get_or_init(|| {
            let mut found = Vec::new();
            let mut from = 0;
            while let Some(at) = find(data, b"endstream", from) {
                if found.len() == max_entries {
                    break;
                }
                found.push(at);
                from = at + 1;
            }
            found
        });
        let i = positions.partition_point(|&p| p < pos);
        positions.get(i).copied()
    }
}

/// The byte range of a stream's data that starts at `start`.
pub(super) fn stream_range(
    data: &[u8],
    start: usize,
    length: Option<usize>,
    index: &EndstreamIndex,
    limits: &Limits,
) -> Range<usize> {
    let start = start.min(data.len());
    if let Some(end) = length.and_then(|n| start.checked_add(n)) {
        if end <= data.len() && endstream_follows(data, end) {
            return start..end;
        }
    }
    let end = index
        .next_after(data, start, limits.max_objects)
        .unwrap_or(data.len());
    start..trim_stream_end(data, start, end)
}

/// Decodes raw stream bytes through the filters named in `dict`, charging the
/// output to `budget`. `resolve` resolves indirect filter names and
/// parameters. Returns `Ok(None)` for data that cannot be decoded (unsupported
/// filter, corrupt); exceeding a limit is an error.
pub(super) fn decode(
    raw: &[u8],
    dict: &Dict,
    resolve: &dyn Fn(&Object) -> Object,
    limits: &Limits,
    budget: &Budget,
) -> Result<Option<Vec<u8>>, PdfError> {
    let filter = dict.get(b"Filter").map(resolve).unwrap_or(Object::Null);
    let params = dict
        .get(b"DecodeParms")
        .map(resolve)
        .unwrap_or(Object::Null);
    let names: Vec<Object> = match &filter {
        Object::Name(_) => vec![filter.clone()],
        Object::Array(items) => items.iter().map(resolve).collect(),
        _ => Vec::new(),
    };
    let params: Vec<Object> = match &params {
        Object::Dict(_) => vec![params.clone()],
        Object::Array(items) => items.iter().map(resolve).collect(),
        _ => Vec::new(),
    };
    let chain: Vec<FilterStep<'_>> = names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            Some(FilterStep {
                name: name.as_name()?,
                params: params.get(i).and_then(Object::as_dict),
            })
        })
        .collect();
    let remaining = budget.decoded_remaining();
    let limit = limits.max_stream_decoded_bytes.min(remaining);
    match filters::decode(raw, &chain, limit) {
        Ok(out) => {
            budget.charge_decoded(out.len())?;
            Ok(Some(out))
        }
        Err(FilterError::TooLarge) if remaining < limits.max_stream_decoded_bytes => Err(
            too_large(LimitKind::DecodedBytes, limits.max_total_decoded_bytes),
        ),
        Err(FilterError::TooLarge) => Err(too_large(
            LimitKind::StreamBytes,
            limits.max_stream_decoded_bytes,
        )),
        Err(FilterError::Unsupported | FilterError::Corrupt) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn length_is_trusted_only_when_endstream_follows() {
        let data = b"stream\nABCDEF\nendstream";
        let index = EndstreamIndex::default();
        let limits = Limits::default();
        assert_eq!(stream_range(data, 7, Some(6), &index, &limits), 7..13);
        // Wrong, missing or absurd lengths fall back to the endstream search.
        assert_eq!(stream_range(data, 7, Some(3), &index, &limits), 7..13);
        assert_eq!(stream_range(data, 7, None, &index, &limits), 7..13);
        assert_eq!(
            stream_range(data, 7, Some(usize::MAX), &index, &limits),
            7..13
        );
        // No endstream at all: the data runs to the end of the file.
        let fresh = EndstreamIndex::default();
        assert_eq!(stream_range(b"stream\nAB", 7, None, &fresh, &limits), 7..9);
    }

    #[test]
    fn decode_charges_the_budget_and_names_the_limit() {
        let mut dict = Dict::new();
        dict.insert(Rc::from(&b"Filter"[..]), Object::name(b"ASCIIHexDecode"));
        let limits = Limits {
            max_stream_decoded_bytes: 4,
            max_total_decoded_bytes: 6,
            ..Limits::default()
        };
        let budget = Budget::new(&limits);
        let id = |o: &Object| o.clone();
        assert_eq!(
            decode(b"41424344", &dict, &id, &limits, &budget)
                .unwrap()
                .unwrap(),
            b"ABCD"
        );
        let stream_limit = decode(b"4142434445", &dict, &id, &limits, &budget).unwrap_err();
        assert!(matches!(stream_limit, PdfError::TooLarge(l) if l.kind == LimitKind::DecodedBytes));
        let fresh = Budget::new(&limits);
        let stream_limit = decode(b"4142434445", &dict, &id, &limits, &fresh).unwrap_err();
        assert!(matches!(stream_limit, PdfError::TooLarge(l) if l.kind == LimitKind::StreamBytes));
        dict = Dict::new();
        dict.insert(Rc::from(&b"Filter"[..]), Object::name(b"JBIG2Decode"));
        assert_eq!(decode(b"xx", &dict, &id, &limits, &fresh).unwrap(), None);
    }
}
