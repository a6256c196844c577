//! Typed access to a tool's `arguments` object, with errors a model can act
//! on ("`top_k` must be an integer between 1 and 100").
//!
//! Unknown argument names are refused and the valid ones listed: a typo
//! like `topk` should fail loudly, not be silently ignored.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

#[derive(Clone, Copy)]
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// Wraps `map`, refusing names outside `allowed`.
    pub fn new(map: &'a Map<String, Value>, allowed: &[&str]) -> Result<Args<'a>> {
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(Error::invalid(format!(
                "unknown argument `{}`; valid arguments: {}",
                truncate(unknown, 64),
                allowed.join(", ")
            )));
        }
        Ok(Args { map })
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.get(key).is_some_and(|v| !v.is_null())
    }

    pub fn value(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn string(&self, key: &str) -> Result<Option<&'a str>> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(Error::invalid(format!("`{key}` must be a string"))),
        }
    }

    pub fn required_string(&self, key: &str) -> Result<&'a str> {
        self.string(key)?
            .ok_or_else(|| Error::invalid(format!("`{key}` is required")))
    }

    pub fn boolean(&self, key: &str) -> Result<Option<bool>> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(Error::invalid(format!("`{key}` must be true or false"))),
        }
    }

    /// An integer in `min..=max` (inclusive).
    pub fn integer(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>> {
        match self.value(key) {
            None => Ok(None),
            Some(v) => match whole_number(v) {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(Error::invalid(format!(
                    "`{key}` must be an integer between {min} and {max}"
                ))),
            },
        }
    }

    pub fn object(&self, key: &str) -> Result<Option<&'a Map<String, Value>>> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(Error::invalid(format!("`{key}` must be an object"))),
        }
    }

    /// One of `choices`.
    pub fn choice(&self, key: &str, choices: &[&str]) -> Result<Option<&'a str>> {
        match self.string(key) {
            Ok(Some(s)) if choices.contains(&s) => Ok(Some(s)),
            Ok(None) => Ok(None),
            _ => Err(Error::invalid(format!(
                "`{key}` must be one of: {}",
                choices.join(", ")
            ))),
        }
    }
}

/// `v` as a non-negative integer, as JSON Schema's `integer` type reads it:
/// a number with no fractional part, so `5.0` and `1e2` count, as the
/// schemas we publish promise.
pub(super) fn whole_number(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    // Below 2^64 every whole f64 converts exactly.
    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    v.as_f64()
        .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < TWO_POW_64)
        .map(|f| f as u64)
}

fn truncate(s: &str, max_chars: usize) -> String {
    s.chars().take(max_chars).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn unknown_arguments_are_named_with_the_valid_ones() {
        let m = map(json!({"topk": 3}));
        let err = Args::new(&m, &["query", "top_k"]).err().unwrap();
        assert!(err.client_message().contains("`topk`"));
        assert!(err.client_message().contains("top_k"));
    }

    #[test]
    fn integers_are_range_checked_at_both_edges() {
        let m = map(json!({"a": 1, "b": 100, "c": 0, "d": 101, "e": 2.5, "f": "3"}));
        let a = Args::new(&m, &["a", "b", "c", "d", "e", "f"]).unwrap();
        assert_eq!(a.integer("a", 1, 100).unwrap(), Some(1));
        assert_eq!(a.integer("b", 1, 100).unwrap(), Some(100));
        for k in ["c", "d", "e", "f"] {
            assert!(a.integer(k, 1, 100).is_err(), "{k}");
        }
    }

    #[test]
    fn whole_numbers_written_as_floats_are_integers() {
        let m = map(json!({"a": 5.0, "b": 1e2, "c": 100.5, "d": -1.0, "e": 1e300}));
        let a = Args::new(&m, &["a", "b", "c", "d", "e"]).unwrap();
        assert_eq!(a.integer("a", 1, 100).unwrap(), Some(5));
        assert_eq!(a.integer("b", 1, 100).unwrap(), Some(100));
        for k in ["c", "d", "e"] {
            assert!(a.integer(k, 0, u64::MAX).is_err(), "{k}");
        }
    }

    #[test]
    fn null_counts_as_absent() {
        let m = map(json!({"a": null}));
        let a = Args::new(&m, &["a"]).unwrap();
        assert_eq!(a.string("a").unwrap(), None);
    }
}
