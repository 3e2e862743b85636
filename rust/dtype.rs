//! Data types as the Rust core sees them: a kind and a size in bytes. Element
//! values are opaque bytes here; only byte order (which components of an
//! element to reverse), NaN-aware fill comparison and variable length depend
//! on the kind.

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::Value;

use crate::error::{Error, Result};

/// The largest element: numpy's item sizes are C ints, and the fill value
/// (one element) comes from numpy.
pub const MAX_ELEMENT_SIZE: usize = i32::MAX as usize;

/// Float formats whose NaNs compare equal when checking for the fill value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatFormat {
    Float16,
    BFloat16,
    Float32,
    Float64,
}

impl FloatFormat {
    pub(crate) fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "float16" => FloatFormat::Float16,
            "bfloat16" => FloatFormat::BFloat16,
            "float32" => FloatFormat::Float32,
            "float64" => FloatFormat::Float64,
            other => return Err(Error::metadata(format!("unknown float format '{other}'"))),
        })
    }

    pub(crate) fn size(self) -> usize {
        match self {
            FloatFormat::Float16 | FloatFormat::BFloat16 => 2,
            FloatFormat::Float32 => 4,
            FloatFormat::Float64 => 8,
        }
    }

    /// Whether a native-endian value of this format is NaN.
    fn is_nan(self, b: &[u8]) -> bool {
        match (self, b.len()) {
            (FloatFormat::Float16, 2) => {
                let v = u16::from_ne_bytes([b[0], b[1]]);
                (v & 0x7c00) == 0x7c00 && (v & 0x03ff) != 0
            }
            (FloatFormat::BFloat16, 2) => {
                let v = u16::from_ne_bytes([b[0], b[1]]);
                (v & 0x7f80) == 0x7f80 && (v & 0x007f) != 0
            }
            (FloatFormat::Float32, 4) => f32::from_ne_bytes([b[0], b[1], b[2], b[3]]).is_nan(),
            (FloatFormat::Float64, 8) => {
                f64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]).is_nan()
            }
            _ => false,
        }
    }
}

/// Where byte order and NaNs live inside one element of an extension type.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// (offset, length) of each component that byte order applies to.
    pub swap: Vec<(usize, usize)>,
    /// (offset, format) of each float component.
    pub floats: Vec<(usize, FloatFormat)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataKind {
    Bool,
    Int,
    UInt,
    Float,
    Complex,
    /// `r<N>`: raw bits, never byte-swapped.
    Raw,
    /// A fixed-size extension type (bfloat16, float8, datetime64, fixed-length
    /// strings, structs, ...), described by its layout.
    Composite(&'static Layout),
    /// Variable-length UTF-8 strings.
    String,
    /// Variable-length byte strings.
    Bytes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataType {
    pub kind: DataKind,
    /// Size of one element in bytes (0 for variable-length types).
    pub size: usize,
}

/// Layouts are interned: each distinct one is allocated once per process.
fn intern(layout: Layout) -> &'static Layout {
    static LAYOUTS: Mutex<Option<HashSet<&'static Layout>>> = Mutex::new(None);
    let mut guard = LAYOUTS.lock().unwrap_or_else(|p| p.into_inner());
    let set = guard.get_or_insert_with(HashSet::new);
    if let Some(existing) = set.get(&layout) {
        return existing;
    }
    let leaked: &'static Layout = Box::leak(Box::new(layout));
    set.insert(leaked);
    leaked
}

fn usize_pair(v: &Value, what: &str) -> Result<(usize, usize)> {
    let pair = v.as_array().filter(|a| a.len() == 2);
    let int = |x: &Value| x.as_u64().and_then(|n| usize::try_from(n).ok());
    match pair.map(|a| (int(&a[0]), int(&a[1]))) {
        Some((Some(a), Some(b))) => Ok((a, b)),
        _ => Err(Error::metadata(format!(
            "data type {what}: expected [offset, length], got {v}"
        ))),
    }
}

impl DataType {
    /// Parse a Zarr v3 core data type name (`int16`, `float32`, `r24`, ...), or
    /// `string` / `bytes` for the variable-length types.
    pub fn from_name(name: &str) -> Result<DataType> {
        use DataKind::*;
        let (kind, size) = match name {
            "bool" => (Bool, 1),
            "int8" => (Int, 1),
            "int16" => (Int, 2),
            "int32" => (Int, 4),
            "int64" => (Int, 8),
            "uint8" => (UInt, 1),
            "uint16" => (UInt, 2),
            "uint32" => (UInt, 4),
            "uint64" => (UInt, 8),
            "float16" => (Float, 2),
            "float32" => (Float, 4),
            "float64" => (Float, 8),
            "complex64" => (Complex, 8),
            "complex128" => (Complex, 16),
            "string" => (String, 0),
            "bytes" => (Bytes, 0),
            _ => {
                if let Some(bits) = name.strip_prefix('r') {
                    let bits: usize = bits
                        .parse()
                        .map_err(|_| Error::unsupported(format!("unknown data type '{name}'")))?;
                    if bits == 0 || !bits.is_multiple_of(8) || bits / 8 > MAX_ELEMENT_SIZE {
                        return Err(Error::metadata(format!(
                            "raw data type '{name}': bits must be a positive multiple of 8, \
                             at most {MAX_ELEMENT_SIZE} bytes"
                        )));
                    }
                    (Raw, bits / 8)
                } else {
                    return Err(Error::unsupported(format!("unknown data type '{name}'")));
                }
            }
        };
        Ok(DataType { kind, size })
    }

    /// Parse the core description: a name, or for fixed-size extension types
    /// `{"size": N, "swap": [[offset, length], ...], "floats": [[offset, format], ...]}`.
    pub fn from_json(v: &Value) -> Result<DataType> {
        let obj = match v {
            Value::String(name) => return Self::from_name(name),
            Value::Object(obj) => obj,
            other => return Err(Error::metadata(format!("invalid data type {other}"))),
        };
        let size = obj
            .get("size")
            .and_then(Value::as_u64)
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| s > 0 && s <= MAX_ELEMENT_SIZE)
            .ok_or_else(|| {
                Error::metadata(format!(
                    "data type {v}: needs a size from 1 to {MAX_ELEMENT_SIZE} bytes"
                ))
            })?;
        let list = |key: &str| {
            obj.get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let swap = list("swap")
            .iter()
            .map(|p| usize_pair(p, "swap"))
            .collect::<Result<Vec<_>>>()?;
        let floats = list("floats")
            .iter()
            .map(|p| {
                let pair = p.as_array().filter(|a| a.len() == 2);
                let offset = |x: &Value| x.as_u64().and_then(|n| usize::try_from(n).ok());
                match pair.map(|a| (offset(&a[0]), a[1].as_str())) {
                    Some((Some(off), Some(fmt))) => Ok((off, FloatFormat::from_name(fmt)?)),
                    _ => Err(Error::metadata(format!(
                        "data type floats: expected [offset, format], got {p}"
                    ))),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let fits = swap
            .iter()
            .all(|&(o, l)| l > 0 && o.checked_add(l).is_some_and(|e| e <= size))
            && floats
                .iter()
                .all(|&(o, f)| o.checked_add(f.size()).is_some_and(|e| e <= size));
        if !fits {
            return Err(Error::metadata(format!(
                "data type {v}: components outside the element"
            )));
        }
        Ok(DataType {
            kind: DataKind::Composite(intern(Layout { swap, floats })),
            size,
        })
    }

    /// Whether elements have a variable length (strings, bytes).
    pub fn is_var_len(&self) -> bool {
        matches!(self.kind, DataKind::String | DataKind::Bytes)
    }

    /// The unit that byte swapping reverses for homogeneous types: the whole
    /// element, each half of a complex number, or 1 (nothing to swap).
    pub fn swap_unit(&self) -> usize {
        match self.kind {
            DataKind::Complex => self.size / 2,
            DataKind::Int | DataKind::UInt | DataKind::Float => self.size,
            _ => 1,
        }
    }

    /// Whether stored byte order matters for this type.
    pub fn needs_swap(&self) -> bool {
        match self.kind {
            DataKind::Composite(layout) => layout.swap.iter().any(|&(_, l)| l > 1),
            _ => self.swap_unit() > 1,
        }
    }

    /// Reverse the byte order of every component of every element in `data`.
    pub fn swap_bytes(&self, data: &mut [u8]) {
        match self.kind {
            DataKind::Composite(layout) => {
                for elem in data.chunks_exact_mut(self.size) {
                    for &(o, l) in &layout.swap {
                        elem[o..o + l].reverse();
                    }
                }
            }
            _ => {
                let unit = self.swap_unit();
                if unit > 1 {
                    for group in data.chunks_exact_mut(unit) {
                        group.reverse();
                    }
                }
            }
        }
    }

    /// (offset, format) of the float components of one element.
    fn float_components(&self) -> Vec<(usize, FloatFormat)> {
        let fmt = |size| match size {
            2 => Some(FloatFormat::Float16),
            4 => Some(FloatFormat::Float32),
            8 => Some(FloatFormat::Float64),
            _ => None,
        };
        match self.kind {
            DataKind::Float => fmt(self.size).map(|f| vec![(0, f)]).unwrap_or_default(),
            DataKind::Complex => fmt(self.size / 2)
                .map(|f| vec![(0, f), (self.size / 2, f)])
                .unwrap_or_default(),
            DataKind::Composite(layout) => layout.floats.clone(),
            _ => Vec::new(),
        }
    }

    /// Whether every element of `data` equals `fill` (one element's bytes).
    /// Float components compare NaN equal to any NaN, as zarr-python does.
    pub fn all_equal_fill(&self, data: &[u8], fill: &[u8]) -> bool {
        debug_assert_eq!(fill.len(), self.size);
        let nan_floats: Vec<(usize, FloatFormat)> = self
            .float_components()
            .into_iter()
            .filter(|&(o, f)| f.is_nan(&fill[o..o + f.size()]))
            .collect();
        if nan_floats.is_empty() {
            return all_equal_pattern(data, fill);
        }
        // Bytes outside the NaN components must match exactly.
        let mut exact = vec![true; self.size];
        for &(o, f) in &nan_floats {
            exact[o..o + f.size()].iter_mut().for_each(|e| *e = false);
        }
        data.chunks_exact(self.size).all(|elem| {
            nan_floats
                .iter()
                .all(|&(o, f)| f.is_nan(&elem[o..o + f.size()]))
                && elem
                    .iter()
                    .zip(fill)
                    .zip(&exact)
                    .all(|((a, b), &must)| !must || a == b)
        })
    }
}

/// Whether `data` is `pattern` repeated.
pub fn all_equal_pattern(data: &[u8], pattern: &[u8]) -> bool {
    if pattern.is_empty() {
        return data.is_empty();
    }
    if pattern.iter().all(|&b| b == pattern[0]) {
        // One repeated byte: compare 8 bytes at a time (this runs on every written chunk).
        let b = pattern[0];
        let word = [b; 8];
        let mut words = data.chunks_exact(8);
        return words.all(|w| w == word) && words.remainder().iter().all(|&x| x == b);
    }
    data.chunks_exact(pattern.len()).all(|c| c == pattern)
}

/// Fill `out` with `pattern` repeated (`out.len()` a multiple of the pattern's).
pub fn fill_pattern(out: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        return;
    }
    if pattern.iter().all(|&b| b == pattern[0]) {
        out.fill(pattern[0]);
    } else {
        for c in out.chunks_exact_mut(pattern.len()) {
            c.copy_from_slice(pattern);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names() {
        assert_eq!(DataType::from_name("uint16").unwrap().size, 2);
        assert_eq!(DataType::from_name("complex128").unwrap().swap_unit(), 8);
        assert_eq!(DataType::from_name("r24").unwrap().size, 3);
        assert!(!DataType::from_name("r24").unwrap().needs_swap());
        assert!(DataType::from_name("string").unwrap().is_var_len());
        assert_eq!(
            DataType::from_name("r7").unwrap_err().kind,
            crate::error::ErrorKind::Metadata
        );
        assert_eq!(
            DataType::from_name("float128").unwrap_err().kind,
            crate::error::ErrorKind::Unsupported
        );
    }

    #[test]
    fn fill_comparison_nan_aware() {
        let dt = DataType::from_name("float32").unwrap();
        let fill = f32::NAN.to_ne_bytes();
        let other_nan = f32::from_bits(0x7fc0_0001).to_ne_bytes();
        let data: Vec<u8> = [fill, other_nan].concat();
        assert!(dt.all_equal_fill(&data, &fill));
        let data2: Vec<u8> = [fill, 1.0f32.to_ne_bytes()].concat();
        assert!(!dt.all_equal_fill(&data2, &fill));
        let zero = 0u32.to_ne_bytes();
        assert!(dt.all_equal_fill(&[0u8; 13 * 4], &zero));
        assert!(!dt.all_equal_fill(&[0, 0, 0, 0, 0, 0, 0, 1], &zero));
        // complex: NaN only in the imaginary part of the fill
        let c = DataType::from_name("complex64").unwrap();
        let cfill = [1.0f32.to_ne_bytes(), f32::NAN.to_ne_bytes()].concat();
        let cdata = [1.0f32.to_ne_bytes(), other_nan].concat();
        assert!(c.all_equal_fill(&cdata, &cfill));
        let cdata2 = [2.0f32.to_ne_bytes(), other_nan].concat();
        assert!(!c.all_equal_fill(&cdata2, &cfill));
    }

    #[test]
    fn composite_layouts() {
        let bf16 =
            DataType::from_json(&json!({"size": 2, "swap": [[0, 2]], "floats": [[0, "bfloat16"]]}))
                .unwrap();
        assert!(bf16.needs_swap());
        let nan = 0x7fc0u16.to_ne_bytes();
        let other_nan = 0x7f81u16.to_ne_bytes();
        let inf = 0x7f80u16.to_ne_bytes();
        assert!(bf16.all_equal_fill(&[nan, other_nan].concat(), &nan));
        assert!(!bf16.all_equal_fill(&[nan, inf].concat(), &nan));
        // The same layout is interned once.
        let again =
            DataType::from_json(&json!({"size": 2, "swap": [[0, 2]], "floats": [[0, "bfloat16"]]}))
                .unwrap();
        match (bf16.kind, again.kind) {
            (DataKind::Composite(a), DataKind::Composite(b)) => assert!(std::ptr::eq(a, b)),
            _ => unreachable!(),
        }
        // A struct {a: int16, b: uint8, c: float32}: swap a and c only.
        let st = DataType::from_json(
            &json!({"size": 7, "swap": [[0, 2], [3, 4]], "floats": [[3, "float32"]]}),
        )
        .unwrap();
        let mut elem = vec![1, 2, 9, 3, 4, 5, 6];
        st.swap_bytes(&mut elem);
        assert_eq!(elem, vec![2, 1, 9, 6, 5, 4, 3]);
        assert!(DataType::from_json(&json!({"size": 2, "swap": [[1, 2]]})).is_err());
        assert!(DataType::from_json(&json!({"size": 0})).is_err());
        assert!(DataType::from_json(&json!({"size": u64::MAX})).is_err());
        // Found by the metadata fuzz target: a 20 GB element (numpy's limit is 2^31 - 1).
        assert!(DataType::from_json(&json!({"size": 20_000_000_000u64})).is_err());
        assert!(DataType::from_json(&json!({"size": i32::MAX})).is_ok());
        assert!(DataType::from_name("r17179869184").is_err());
        assert!(DataType::from_json(&json!({"size": 4, "swap": [[u64::MAX, 2]]})).is_err());
        assert!(DataType::from_json(&json!({"size": 4, "floats": [[0, "float8"]]})).is_err());
        assert!(DataType::from_json(&json!(7)).is_err());
    }

    #[test]
    fn pattern_fill() {
        let mut out = [0u8; 6];
        fill_pattern(&mut out, &[1, 2]);
        assert_eq!(out, [1, 2, 1, 2, 1, 2]);
        assert!(all_equal_pattern(&out, &[1, 2]));
    }
}
