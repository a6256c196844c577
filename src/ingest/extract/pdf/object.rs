//! The PDF object model: the eight basic object types plus indirect
//! references, and small typed accessors.
//!
//! Compound values are reference counted so objects can be cloned out of the
//! document's cache cheaply. A stream's data is not copied: it is a byte range
//! of the file, decoded on demand by the document.

use std::ops::Range;
use std::rc::Rc;

/// An indirect object's identity: `num gen R`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct ObjRef {
    pub num: u32,
    pub gen: u16,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Object {
    Null,
    Bool(bool),
    Int(i64),
    Real(f64),
    Str(Rc<[u8]>),
    Name(Rc<[u8]>),
    Array(Rc<[Object]>),
    Dict(Rc<Dict>),
    Stream(Rc<Stream>),
    Ref(ObjRef),
}

/// A dictionary; keys are names without the `/`. Order is kept, and the first
/// of duplicate keys wins.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Dict {
    entries: Vec<(Rc<[u8]>, Object)>,
}

/// A stream: its dictionary and where its raw (still encoded) bytes are in the
/// file.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Stream {
    pub dict: Dict,
    pub data: Range<usize>,
}

impl Dict {
    pub(super) fn new() -> Self {
        Dict::default()
    }

    pub(super) fn insert(&mut self, key: Rc<[u8]>, value: Object) {
        self.entries.push((key, value));
    }

    pub(super) fn get(&self, key: &[u8]) -> Option<&Object> {
        self.entries
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| v)
    }

    pub(super) fn contains(&self, key: &[u8]) -> bool {
        self.get(key).is_some()
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The value of `key` if it is a name.
    pub(super) fn name(&self, key: &[u8]) -> Option<&[u8]> {
        self.get(key).and_then(Object::as_name)
    }

    /// True if `/Type` (or `/Subtype`) is the given name.
    pub(super) fn has_type(&self, ty: &[u8]) -> bool {
        self.name(b"Type") == Some(ty)
    }
}

impl Object {
    #[cfg(test)]
    pub(super) fn name(bytes: &[u8]) -> Object {
        Object::Name(Rc::from(bytes))
    }

    pub(super) fn as_int(&self) -> Option<i64> {
        match *self {
            Object::Int(i) => Some(i),
            // Some writers emit "612.0" where an integer is required.
            Object::Real(r) if r.fract() == 0.0 && r.abs() < 9e15 => Some(r as i64),
            _ => None,
        }
    }

    /// The value as a non-negative size or offset.
    pub(super) fn as_usize(&self) -> Option<usize> {
        self.as_int().and_then(|i| usize::try_from(i).ok())
    }

    pub(super) fn as_f64(&self) -> Option<f64> {
        match *self {
            Object::Int(i) => Some(i as f64),
            Object::Real(r) => Some(r),
            _ => None,
        }
    }

    pub(super) fn as_name(&self) -> Option<&[u8]> {
        match self {
            Object::Name(n) => Some(n),
            _ => None,
        }
    }

    pub(super) fn as_array(&self) -> Option<&[Object]> {
        match self {
            Object::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The dictionary of a dictionary or of a stream.
    pub(super) fn as_dict(&self) -> Option<&Dict> {
        match self {
            Object::Dict(d) => Some(d),
            Object::Stream(s) => Some(&s.dict),
            _ => None,
        }
    }

    pub(super) fn as_stream(&self) -> Option<&Rc<Stream>> {
        match self {
            Object::Stream(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn as_ref(&self) -> Option<ObjRef> {
        match *self {
            Object::Ref(r) => Some(r),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors() {
        let mut d = Dict::new();
        d.insert(Rc::from(&b"Type"[..]), Object::name(b"Page"));
        d.insert(Rc::from(&b"N"[..]), Object::Real(3.0));
        d.insert(Rc::from(&b"N"[..]), Object::Int(9));
        assert!(d.has_type(b"Page"));
        assert_eq!(d.get(b"N").and_then(Object::as_int), Some(3));
        assert_eq!(Object::Real(2.5).as_int(), None);
        assert_eq!(Object::Int(-1).as_usize(), None);
        assert_eq!(Object::Int(4).as_f64(), Some(4.0));
        assert_eq!(d.len(), 3);
        assert!(!d.contains(b"Kids"));
    }
}
