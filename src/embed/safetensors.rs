//! A minimal reader for the safetensors format (only what static embedding models need).
//!
//! Owns parsing and validating a safetensors buffer: an 8-byte little-endian header
//! length, a JSON header naming each tensor's dtype, shape and `data_offsets`, then the
//! tensor bytes. Only `I8`, `F16` and `F32` tensors are supported.
//!
//! The bytes may be hostile (a corrupted or crafted model file): it must never panic,
//! read out of bounds, overflow, or allocate more than the buffer justifies. Every length
//! and offset is checked before use, the tensors must tile the data area exactly as the
//! format requires, and values are decoded from bytes with `from_le_bytes`, so there is no
//! `unsafe` and no alignment assumption.

use std::collections::BTreeMap;

use serde_json::Value;

/// Bytes of the little-endian header length that starts the file.
const LEN_PREFIX: usize = 8;
/// The format's own cap on the JSON header (100 MB); anything bigger is not a model file.
const MAX_HEADER_LEN: u64 = 100 * 1024 * 1024;
/// The header key holding free-form string metadata rather than a tensor.
const METADATA_KEY: &str = "__metadata__";

/// Element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    I8,
    F16,
    F32,
}

impl Dtype {
    fn parse(name: &str) -> Option<Dtype> {
        match name {
            "I8" => Some(Dtype::I8),
            "F16" => Some(Dtype::F16),
            "F32" => Some(Dtype::F32),
            _ => None,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::I8 => 1,
            Dtype::F16 => 2,
            Dtype::F32 => 4,
        }
    }

    /// Name as written in the header and in model ids (`int8`, `float16`, `float32`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::I8 => "int8",
            Dtype::F16 => "float16",
            Dtype::F32 => "float32",
        }
    }
}

/// One tensor, borrowing its bytes from the file buffer.
#[derive(Debug, Clone)]
pub struct Tensor<'a> {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    /// Exactly `shape.product() * dtype.size()` little-endian bytes.
    pub data: &'a [u8],
}

impl Tensor<'_> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len() / self.dtype.size()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The elements as `f32` (int8 values as they are, float16 widened exactly).
    pub fn to_f32(&self) -> Vec<f32> {
        match self.dtype {
            Dtype::I8 => self.data.iter().map(|&b| f32::from(b as i8)).collect(),
            Dtype::F16 => self
                .data
                .chunks_exact(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
            Dtype::F32 => self
                .data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        }
    }

    /// The elements of an `I8` tensor; `None` for other dtypes.
    pub fn to_i8(&self) -> Option<Vec<i8>> {
        (self.dtype == Dtype::I8).then(|| self.data.iter().map(|&b| b as i8).collect())
    }
}

/// A parsed safetensors buffer.
#[derive(Debug)]
pub struct SafeTensors<'a> {
    tensors: BTreeMap<String, Tensor<'a>>,
    metadata: BTreeMap<String, String>,
}

impl<'a> SafeTensors<'a> {
    /// Parses and validates `bytes`; tensors borrow from it.
    pub fn parse(bytes: &'a [u8]) -> Result<SafeTensors<'a>, String> {
        let prefix: [u8; LEN_PREFIX] = bytes
            .get(..LEN_PREFIX)
            .and_then(|p| p.try_into().ok())
            .ok_or("safetensors: file shorter than its header length")?;
        let header_len = u64::from_le_bytes(prefix);
        if header_len > MAX_HEADER_LEN {
            return Err(format!(
                "safetensors: header of {header_len} bytes is too large"
            ));
        }
        let rest = &bytes[LEN_PREFIX..];
        // header_len <= MAX_HEADER_LEN, so it fits in usize on every supported target.
        let header_len =
            usize::try_from(header_len).map_err(|_| "safetensors: header too large")?;
        if header_len > rest.len() {
            return Err("safetensors: header runs past the end of the file".into());
        }
        let (header, data) = rest.split_at(header_len);
        let header: serde_json::Map<String, Value> =
            serde_json::from_slice(header).map_err(|e| format!("safetensors: header: {e}"))?;

        let mut tensors = BTreeMap::new();
        let mut metadata = BTreeMap::new();
        let mut spans = Vec::with_capacity(header.len());
        for (name, entry) in header {
            if name == METADATA_KEY {
                metadata = parse_metadata(&entry)?;
                continue;
            }
            let (tensor, span) = parse_tensor(&name, &entry, data)?;
            spans.push(span);
            tensors.insert(name, tensor);
        }
        // The format requires the tensors to cover the data area exactly, in some order,
        // without gaps or overlaps: anything else is a damaged or crafted file.
        spans.sort_unstable();
        let mut expected = 0;
        for (begin, end) in spans {
            if begin != expected {
                return Err("safetensors: tensors overlap or leave a gap".into());
            }
            expected = end;
        }
        if expected != data.len() {
            return Err("safetensors: data area has bytes no tensor owns".into());
        }
        Ok(SafeTensors { tensors, metadata })
    }

    /// The tensor called `name`, if present.
    pub fn tensor(&self, name: &str) -> Option<&Tensor<'a>> {
        self.tensors.get(name)
    }

    /// Tensor names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    /// The header's `__metadata__` strings (empty when absent).
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }
}

fn parse_metadata(entry: &Value) -> Result<BTreeMap<String, String>, String> {
    let map = entry
        .as_object()
        .ok_or("safetensors: __metadata__ is not an object")?;
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            _ => Err(format!("safetensors: metadata value {k:?} is not a string")),
        })
        .collect()
}

/// One header entry: the tensor and the (begin, end) span it owns in `data`.
fn parse_tensor<'a>(
    name: &str,
    entry: &Value,
    data: &'a [u8],
) -> Result<(Tensor<'a>, (usize, usize)), String> {
    let bad = |what: &str| format!("safetensors: tensor {name:?}: {what}");
    let dtype_name = entry
        .get("dtype")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no dtype"))?;
    let dtype =
        Dtype::parse(dtype_name).ok_or_else(|| bad(&format!("unsupported dtype {dtype_name}")))?;
    let shape = entry
        .get("shape")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no shape"))?
        .iter()
        .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| bad("shape is not a list of sizes"))?;
    let offsets = entry
        .get("data_offsets")
        .and_then(Value::as_array)
        .filter(|o| o.len() == 2)
        .ok_or_else(|| bad("data_offsets is not [begin, end]"))?;
    let offset = |i: usize| offsets[i].as_u64().and_then(|o| usize::try_from(o).ok());
    let (begin, end) = offset(0)
        .zip(offset(1))
        .ok_or_else(|| bad("data_offsets are not sizes"))?;
    if begin > end || end > data.len() {
        return Err(bad("data_offsets out of bounds"));
    }
    let bytes = shape
        .iter()
        .try_fold(dtype.size(), |n, &d| n.checked_mul(d))
        .ok_or_else(|| bad("shape overflows"))?;
    if bytes != end - begin {
        return Err(bad("shape and data_offsets disagree"));
    }
    Ok((
        Tensor {
            dtype,
            shape,
            data: &data[begin..end],
        },
        (begin, end),
    ))
}

/// IEEE 754 binary16 to binary32. Exact: every float16 value is a float32 value.
pub fn f16_to_f32(bits: u16) -> f32 {
    const EXP_MASK: u16 = 0x7C00;
    const MANT_MASK: u16 = 0x03FF;
    /// float32 exponent bias (127) minus float16's (15).
    const BIAS_DELTA: u32 = 112;
    /// float16's smallest subnormal, 2^-24.
    const SUBNORMAL_UNIT: f32 = 1.0 / 16_777_216.0;

    let negative = bits & 0x8000 != 0;
    let exp = (bits & EXP_MASK) >> 10;
    let mant = u32::from(bits & MANT_MASK);
    let magnitude = match exp {
        // Zero and subnormals: mant * 2^-24, exact in float32.
        0 => mant as f32 * SUBNORMAL_UNIT,
        // Infinity and NaN (payload kept in the top mantissa bits).
        0x1F => f32::from_bits(0x7F80_0000 | (mant << 13)),
        _ => f32::from_bits(((u32::from(exp) + BIAS_DELTA) << 23) | (mant << 13)),
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a safetensors buffer from a header JSON string and a data area.
    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_tensors_of_every_supported_dtype() {
        let mut data = vec![0xFFu8, 0x01]; // i8: -1, 1
        data.extend_from_slice(&0x3C00u16.to_le_bytes()); // f16 1.0
        data.extend_from_slice(&(-2.5f32).to_le_bytes());
        let header = r#"{"__metadata__":{"format":"np"},
            "a":{"dtype":"I8","shape":[2],"data_offsets":[0,2]},
            "b":{"dtype":"F16","shape":[1,1],"data_offsets":[2,4]},
            "c":{"dtype":"F32","shape":[],"data_offsets":[4,8]}}"#;
        let bytes = file(header, &data);
        let st = SafeTensors::parse(&bytes).unwrap();
        assert_eq!(st.names().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(st.tensor("a").unwrap().to_i8().unwrap(), [-1, 1]);
        assert_eq!(st.tensor("a").unwrap().to_f32(), [-1.0, 1.0]);
        assert_eq!(st.tensor("b").unwrap().shape, [1, 1]);
        assert_eq!(st.tensor("b").unwrap().to_f32(), [1.0]);
        assert_eq!(st.tensor("c").unwrap().to_f32(), [-2.5]);
        assert_eq!(st.metadata()["format"], "np");
        assert!(st.tensor("d").is_none());
    }

    #[test]
    fn header_may_be_padded_with_spaces() {
        let bytes = file(
            r#"{"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}    "#,
            &[7],
        );
        assert_eq!(
            SafeTensors::parse(&bytes)
                .unwrap()
                .tensor("a")
                .unwrap()
                .to_i8()
                .unwrap(),
            [7]
        );
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        let t = |dtype: &str, shape: &str, offsets: &str| {
            format!(r#"{{"a":{{"dtype":"{dtype}","shape":{shape},"data_offsets":{offsets}}}}}"#)
        };
        let cases: Vec<Vec<u8>> = vec![
            vec![],
            vec![1, 2, 3],
            u64::MAX.to_le_bytes().to_vec(),
            (1u64 << 40).to_le_bytes().to_vec(),
            file("{", &[]),
            file("[]", &[]),
            file("{}", &[0]),                          // data nobody owns
            file(&t("I8", "[2]", "[0,2]"), &[0]),      // runs past the end
            file(&t("I8", "[3]", "[0,2]"), &[0, 0]),   // shape disagrees
            file(&t("F32", "[1]", "[0,2]"), &[0, 0]),  // dtype size disagrees
            file(&t("BF16", "[1]", "[0,2]"), &[0, 0]), // unsupported dtype
            file(&t("I8", "[-1]", "[0,1]"), &[0]),     // negative dim
            file(&t("I8", "[1]", "[1,0]"), &[0]),      // reversed offsets
            file(&t("I8", "[1]", "[0]"), &[0]),        // one offset
            file(
                &t("I8", "[4294967296,4294967296,4294967296]", "[0,1]"),
                &[0],
            ), // overflow
            file(
                &t("I8", "[1]", "[18446744073709551615,18446744073709551615]"),
                &[0],
            ),
            file(
                r#"{"a":{"dtype":"I8","shape":[2],"data_offsets":[0,2]},
                    "b":{"dtype":"I8","shape":[2],"data_offsets":[1,3]}}"#,
                &[0, 0, 0],
            ), // overlap
            file(r#"{"__metadata__":{"k":1}}"#, &[]),
        ];
        for (i, bytes) in cases.iter().enumerate() {
            assert!(SafeTensors::parse(bytes).is_err(), "case {i} was accepted");
        }
    }

    #[test]
    fn every_truncation_of_a_valid_file_is_rejected_cleanly() {
        let bytes = file(
            r#"{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#,
            &[0, 60, 0, 188],
        );
        assert!(SafeTensors::parse(&bytes).is_ok());
        for len in 0..bytes.len() {
            assert!(
                SafeTensors::parse(&bytes[..len]).is_err(),
                "prefix of {len} bytes accepted"
            );
        }
    }

    #[test]
    fn float16_conversion_is_exact_for_special_and_boundary_values() {
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert!(f16_to_f32(0x8000).is_sign_negative() && f16_to_f32(0x8000) == 0.0);
        assert_eq!(f16_to_f32(0x3C00), 1.0);
        assert_eq!(f16_to_f32(0xC000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95); // nearest float16 to 1/3
        assert_eq!(f16_to_f32(0x7BFF), 65504.0); // largest finite
        assert_eq!(f16_to_f32(0x0400), 1.0 / 16_384.0); // smallest normal, 2^-14
        assert_eq!(f16_to_f32(0x0001), 1.0 / 16_777_216.0); // smallest subnormal, 2^-24
        assert_eq!(f16_to_f32(0x03FF), 1023.0 / 16_777_216.0); // largest subnormal
        assert_eq!(f16_to_f32(0x7C00), f32::INFINITY);
        assert_eq!(f16_to_f32(0xFC00), f32::NEG_INFINITY);
        assert!(f16_to_f32(0x7E00).is_nan());
    }

    #[test]
    fn float16_conversion_is_monotonic_and_halves_are_symmetric() {
        let mut previous = f32::NEG_INFINITY;
        for bits in 0x0000u16..0x7C00 {
            let v = f16_to_f32(bits);
            assert!(v > previous || bits == 0, "not increasing at {bits:#06x}");
            assert_eq!(f16_to_f32(bits | 0x8000), -v);
            previous = v;
        }
    }
}
