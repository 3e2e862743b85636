//! The `bitround` codec of the zarr-extensions registry (as zarrs, its author,
//! implements it): rounds floats to `keepbits` mantissa bits and integers to
//! `keepbits` bits from their most significant set bit, round half to even on
//! the bit pattern, which makes data more compressible. Decoding is the
//! identity.
//!
//! Core configuration (the Python metadata layer derives it from the data
//! type): `keepbits`, `component_size` (bytes of each rounded word: the
//! element, or each half of a complex number) and `mantissa_bits` (null for
//! integer types, which round from their highest set bit).
//!
//! [`round_words`] is also `numcodecs.bitround`'s core; that codec wraps
//! where this one saturates (only bit patterns next to all-ones differ).

use serde_json::{Map, Value};

use crate::codec::config::{check_members, int_member, keys, Member, Members};
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

const NAME: &str = "bitround";

/// The bits of the mantissa bitround rounds, per float format (`None`: a
/// format it does not round).
pub fn mantissa_bits(float_format: &str) -> Option<u32> {
    match float_format {
        "float16" => Some(10),
        "bfloat16" => Some(7),
        "float32" => Some(23),
        "float64" => Some(52),
        _ => None,
    }
}

/// The stored configuration's members: `keepbits`, required (numcodecs'
/// `BitRound` takes the same).
pub const MEMBERS: &[Member] = &[Member::int("keepbits", 0, u32::MAX as i64).required()];

/// `keepbits`, which the codec (`codec`: its name) requires.
pub(crate) fn keepbits(codec: &str, config: &Map<String, Value>) -> Result<u32> {
    let keepbits = MEMBERS[0]
        .get_int(codec, config)?
        .ok_or_else(|| Error::metadata(format!("codec '{codec}': 'keepbits' is required")))?;
    Ok(keepbits as u32)
}

/// The stored configuration: `keepbits` alone (the metadata layer derives
/// `component_size` and `mantissa_bits` of the core configuration from the
/// data type).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    check_members(NAME, config, &keys(MEMBERS))?;
    Ok(vec![("keepbits", keepbits(NAME, config)?.into())])
}

/// What to do when rounding up carries past the word's highest bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carry {
    /// Stay at all ones (zarrs).
    Saturate,
    /// Wrap around (numpy unsigned arithmetic, as numcodecs computes).
    Wrap,
}

/// Round `x`, a `width`-bit word, to `keepbits` of its low `maxbits` bits.
fn round_word(x: u64, width: u32, keepbits: u32, maxbits: u32, carry: Carry) -> u64 {
    if keepbits >= maxbits {
        return x;
    }
    let maskbits = maxbits - keepbits;
    let all = u128::MAX >> (128 - width);
    let x = u128::from(x);
    let half_quantum1 = (1u128 << (maskbits - 1)) - 1;
    let mut sum = x + ((x >> maskbits) & 1) + half_quantum1;
    if sum > all {
        sum = match carry {
            Carry::Saturate => all,
            Carry::Wrap => sum & all,
        };
    }
    let mask = all & !((1u128 << maskbits) - 1);
    (sum & mask) as u64
}

/// Round each `size`-byte word of `data` (native byte order) to `keepbits`:
/// bits of a `mantissa_bits`-bit mantissa, or (`None`) bits from the word's
/// highest set bit.
pub(crate) fn round_words(
    data: &mut [u8],
    size: usize,
    keepbits: u32,
    mantissa_bits: Option<u32>,
    carry: Carry,
) {
    let width = 8 * size as u32;
    let maxbits = |x: u64| mantissa_bits.unwrap_or(64 - x.leading_zeros());
    macro_rules! each {
        ($t:ty) => {
            for w in data.chunks_exact_mut(size) {
                let x = u64::from(<$t>::from_ne_bytes(w.try_into().unwrap_or_default()));
                let y = round_word(x, width, keepbits, maxbits(x), carry) as $t;
                w.copy_from_slice(&y.to_ne_bytes());
            }
        };
    }
    match size {
        1 => each!(u8),
        2 => each!(u16),
        4 => each!(u32),
        _ => each!(u64),
    }
}

/// Rounding of `component_size`-byte words in place (this codec's, and
/// `numcodecs.bitround`'s with [`Carry::Wrap`]).
#[derive(Debug)]
pub struct BitroundCodec {
    /// The codec's name, for messages.
    name: &'static str,
    keepbits: u32,
    component_size: usize,
    mantissa_bits: Option<u32>,
    carry: Carry,
    spec: ChunkSpec,
}

impl BitroundCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_members(
            NAME,
            config,
            &["keepbits", "component_size", "mantissa_bits"],
        )?;
        let keepbits = keepbits(NAME, config)?;
        let component_size = int_member(NAME, config, "component_size", 0, 8)?.ok_or_else(|| {
            Error::metadata(format!("codec '{NAME}': 'component_size' is required"))
        })? as usize;
        let mantissa_bits = int_member(NAME, config, "mantissa_bits", 1, 52)?.map(|b| b as u32);
        let fits = matches!(component_size, 1 | 2 | 4 | 8)
            && spec.dtype.size > 0
            && spec.dtype.size.is_multiple_of(component_size)
            && mantissa_bits.is_none_or(|m| (m as usize) < 8 * component_size);
        if !fits {
            return Err(Error::unsupported(format!(
                "codec '{NAME}': cannot round words of {component_size} byte(s) in elements \
                 of {} byte(s)",
                spec.dtype.size
            )));
        }
        Ok(BitroundCodec {
            name: NAME,
            keepbits,
            component_size,
            mantissa_bits,
            carry: Carry::Saturate,
            spec: spec.clone(),
        })
    }

    /// `numcodecs.bitround` (`name`): elements of `spec` rounded to
    /// `keepbits` of their `mantissa_bits`, wrapping on overflow as numpy's
    /// unsigned arithmetic does.
    pub(crate) fn wrapping(
        name: &'static str,
        keepbits: u32,
        mantissa_bits: u32,
        spec: &ChunkSpec,
    ) -> Self {
        BitroundCodec {
            name,
            keepbits,
            component_size: spec.dtype.size,
            mantissa_bits: Some(mantissa_bits),
            carry: Carry::Wrap,
            spec: spec.clone(),
        }
    }
}

impl ArrayToArrayCodec for BitroundCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.spec
    }

    fn encode(&self, mut decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.spec.nbytes())?;
        round_words(
            &mut decoded,
            self.component_size,
            self.keepbits,
            self.mantissa_bits,
            self.carry,
        );
        Ok(decoded)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.spec.nbytes())?;
        bound.check(self.name, encoded.len())?;
        Ok(encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::tests::spec;
    use serde_json::json;

    fn codec(dtype: &str, n: usize, config: Value) -> Result<BitroundCodec> {
        BitroundCodec::from_config(config.as_object().unwrap(), &spec(&[n], dtype))
    }

    #[test]
    fn integers_round_from_their_highest_set_bit() {
        let c = codec("uint16", 6, json!({"keepbits": 3, "component_size": 2})).unwrap();
        let x: Vec<u8> = [0u16, 7, 9, 0b1011_0000, 0b1010_1000, 0xffff]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let got: Vec<u16> = c
            .encode(x)
            .unwrap()
            .chunks_exact(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect();
        // 9 = 0b1001 -> 0b1000 (tie to even), 0b1011_0000 -> 0b1100_0000,
        // 0b1010_1000 -> 0b1010_0000 (tie, even), 0xffff saturates before the mask.
        assert_eq!(got, vec![0, 7, 8, 0b1100_0000, 0b1010_0000, 0xe000]);
        // Signed integers round their two's complement bit pattern.
        let c = codec("int8", 2, json!({"keepbits": 2, "component_size": 1})).unwrap();
        assert_eq!(c.encode(vec![0x35, 0xc1]).unwrap(), vec![0x30, 0xc0]);
    }

    #[test]
    fn floats_round_their_mantissa_as_numcodecs_does() {
        // numcodecs.BitRound(5) on float32 1.5, pi, -1e-3: see numcodecs/bitround.rs.
        let c = codec(
            "float32",
            3,
            json!({"keepbits": 5, "component_size": 4, "mantissa_bits": 23}),
        )
        .unwrap();
        let x: Vec<u8> = [1.5f32, std::f32::consts::PI, -1e-3]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let got = c.encode(x).unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(
                got,
                crate::codec::numcodecs::tests::hex("0000c03f00004840000084ba")
            );
        }
        // A complex number rounds both halves; keepbits beyond the mantissa is a no-op.
        let c = codec(
            "complex64",
            1,
            json!({"keepbits": 30, "component_size": 4, "mantissa_bits": 23}),
        )
        .unwrap();
        assert_eq!(c.encode(vec![7; 8]).unwrap(), vec![7; 8]);
    }

    #[test]
    fn wrap_and_saturate_differ_only_at_all_ones() {
        for carry in [Carry::Wrap, Carry::Saturate] {
            assert_eq!(round_word(0x3fff, 16, 9, 10, carry), 0x4000);
            assert_eq!(round_word(0x3fff, 16, 10, 10, carry), 0x3fff);
        }
        assert_eq!(round_word(0xffff, 16, 0, 10, Carry::Saturate), 0xfc00);
        assert_eq!(round_word(0xffff, 16, 0, 10, Carry::Wrap), 0);
        assert_eq!(round_word(u64::MAX, 64, 0, 64, Carry::Saturate), 0);
        assert_eq!(round_word(1 << 62, 64, 1, 63, Carry::Wrap), 1 << 62);
    }

    #[test]
    fn configuration_is_checked() {
        assert!(codec("float32", 2, json!({"component_size": 4})).is_err());
        assert!(codec("float32", 2, json!({"keepbits": 1, "component_size": 3})).is_err());
        assert!(codec("float16", 2, json!({"keepbits": 1, "component_size": 4})).is_err());
        assert!(codec(
            "float16",
            2,
            json!({"keepbits": 1, "component_size": 2, "mantissa_bits": 16})
        )
        .is_err());
        assert!(codec(
            "int8",
            2,
            json!({"keepbits": 1, "component_size": 1, "x": 0})
        )
        .is_err());
        let c = codec("int8", 2, json!({"keepbits": 1, "component_size": 1})).unwrap();
        assert!(c.encode(vec![1; 3]).is_err());
        assert_eq!(
            c.decode(vec![5, 6], SizeBound::Exact(2)).unwrap(),
            vec![5, 6]
        );
    }
}
