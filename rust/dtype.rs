//! Data types as the Rust core sees them: a kind and a size in bytes. Element
//! values are opaque bytes here; only byte order, the unit of byte swapping and
//! the "is this the fill value" test depend on the kind.

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataKind {
    Bool,
    Int,
    UInt,
    Float,
    Complex,
    /// `r<N>`: raw bits, never byte-swapped.
    Raw,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataType {
    pub kind: DataKind,
    /// Size of one element in bytes.
    pub size: usize,
}

impl DataType {
    /// Parse a Zarr v3 core data type name (`int16`, `float32`, `r24`, ...).
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
            _ => {
                if let Some(bits) = name.strip_prefix('r') {
                    let bits: usize = bits
                        .parse()
                        .map_err(|_| Error::unsupported(format!("unknown data type '{name}'")))?;
                    if bits == 0 || !bits.is_multiple_of(8) {
                        return Err(Error::metadata(format!(
                            "raw data type '{name}': bits must be a positive multiple of 8"
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

    /// The unit that byte swapping reverses: the whole element, each half of a
    /// complex number, or nothing (1) for single bytes and raw bits.
    pub fn swap_unit(&self) -> usize {
        match self.kind {
            DataKind::Complex => self.size / 2,
            DataKind::Raw | DataKind::Bool => 1,
            _ => self.size,
        }
    }

    /// Whether every element of `data` equals `fill` (one element's bytes).
    /// Floats compare NaN equal to any NaN, as zarr-python does.
    pub fn all_equal_fill(&self, data: &[u8], fill: &[u8]) -> bool {
        debug_assert_eq!(fill.len(), self.size);
        if self.kind == DataKind::Float || self.kind == DataKind::Complex {
            let unit = self.swap_unit();
            let fill_nan: Vec<bool> = fill.chunks_exact(unit).map(is_nan).collect();
            if fill_nan.iter().any(|&n| n) {
                return data.chunks_exact(self.size).all(|elem| {
                    elem.chunks_exact(unit)
                        .zip(fill.chunks_exact(unit))
                        .zip(&fill_nan)
                        .all(|((e, f), &fnan)| if fnan { is_nan(e) } else { e == f })
                });
            }
        }
        all_equal_pattern(data, fill)
    }
}

/// Whether a native-endian float of 2, 4 or 8 bytes is NaN.
fn is_nan(bytes: &[u8]) -> bool {
    match bytes.len() {
        2 => {
            let v = u16::from_ne_bytes([bytes[0], bytes[1]]);
            (v & 0x7c00) == 0x7c00 && (v & 0x03ff) != 0
        }
        4 => f32::from_ne_bytes(bytes.try_into().unwrap_or([0; 4])).is_nan(),
        8 => f64::from_ne_bytes(bytes.try_into().unwrap_or([0; 8])).is_nan(),
        _ => false,
    }
}

/// Whether `data` is `pattern` repeated.
pub fn all_equal_pattern(data: &[u8], pattern: &[u8]) -> bool {
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

    #[test]
    fn names() {
        assert_eq!(DataType::from_name("uint16").unwrap().size, 2);
        assert_eq!(DataType::from_name("complex128").unwrap().swap_unit(), 8);
        assert_eq!(DataType::from_name("r24").unwrap().size, 3);
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
    }

    #[test]
    fn pattern_fill() {
        let mut out = [0u8; 6];
        fill_pattern(&mut out, &[1, 2]);
        assert_eq!(out, [1, 2, 1, 2, 1, 2]);
        assert!(all_equal_pattern(&out, &[1, 2]));
    }
}
