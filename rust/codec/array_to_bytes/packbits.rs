//! The `packbits` codec: each component of each element is stored as the bits
//! `first_bit..=last_bit` of its `bits`-wide value, elements in C order, bits
//! least significant first, the sequence padded with zero bits to whole bytes
//! (the padding count optionally in a first or last byte). Decoding shifts the
//! bits back and sign-extends (signed integers) or zero-extends within `bits`.

use serde_json::{Map, Value};

use crate::codec::config::{bool_member, check_members, choice_member, int_member, Members};
use crate::codec::{ArrayToBytesCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Padding {
    None,
    FirstByte,
    LastByte,
}

/// The `padding_encoding` values: the spec's names, then the registry
/// schema's spellings of two of them.
const PADDINGS: [(&str, &str, Padding); 5] = [
    ("none", "none", Padding::None),
    ("first_byte", "first_byte", Padding::FirstByte),
    ("last_byte", "last_byte", Padding::LastByte),
    ("start_byte", "first_byte", Padding::FirstByte),
    ("end_byte", "last_byte", Padding::LastByte),
];

/// zarr-python's `PackBits(padding_encoding="none")`.
pub const DEFAULT_PADDING: &str = "none";

/// `padding_encoding`: its spec name and meaning ([`DEFAULT_PADDING`] when absent).
fn padding(config: &Map<String, Value>) -> Result<(&'static str, Padding)> {
    let names: Vec<&str> = PADDINGS.iter().map(|p| p.0).collect();
    let given = choice_member("packbits", config, "padding_encoding", &names)?;
    let given = given.unwrap_or(DEFAULT_PADDING);
    let (_, name, padding) = PADDINGS
        .into_iter()
        .find(|p| p.0 == given)
        .expect("a checked choice");
    Ok((name, padding))
}

/// The complete `padding_encoding` of a document's `packbits` configuration
/// (`first_bit`/`last_bit`, or the registry's `start_bit`/`end_bit`, are
/// checked against the data type by the metadata layer).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    check_members(
        "packbits",
        config,
        &[
            "padding_encoding",
            "first_bit",
            "last_bit",
            "start_bit",
            "end_bit",
        ],
    )?;
    Ok(vec![("padding_encoding", padding(config)?.0.into())])
}

#[derive(Debug)]
pub struct PackbitsCodec {
    padding: Padding,
    first_bit: u32,
    /// Bits kept per component.
    kept: u32,
    /// Logical width of a component (4 for int4, 16 for bfloat16, ...).
    bits: u32,
    signed: bool,
    /// Bytes one component takes in memory.
    component_bytes: usize,
    /// Components in the chunk (elements x components per element).
    components: usize,
}

impl PackbitsCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        const C: &str = "packbits";
        check_members(
            C,
            config,
            &[
                "padding_encoding",
                "first_bit",
                "last_bit",
                "bits",
                "components",
                "signed",
            ],
        )?;
        let (_, padding) = padding(config)?;
        let per_element = int_member(C, config, "components", 1, 2)?.unwrap_or(1) as usize;
        if spec.dtype.is_var_len() || !spec.dtype.size.is_multiple_of(per_element) {
            return Err(Error::metadata(format!(
                "codec '{C}' does not support this data type"
            )));
        }
        let component_bytes = spec.dtype.size / per_element;
        if component_bytes > 8 {
            return Err(Error::metadata(format!(
                "codec '{C}': components wider than 64 bits"
            )));
        }
        let storage_bits = (component_bytes * 8) as i64;
        let bits = int_member(C, config, "bits", 1, storage_bits)?.unwrap_or(storage_bits) as u32;
        let first_bit =
            int_member(C, config, "first_bit", 0, i64::from(bits) - 1)?.unwrap_or(0) as u32;
        let last_bit = int_member(
            C,
            config,
            "last_bit",
            i64::from(first_bit),
            i64::from(bits) - 1,
        )?
        .unwrap_or(i64::from(bits) - 1) as u32;
        Ok(PackbitsCodec {
            padding,
            first_bit,
            kept: last_bit - first_bit + 1,
            bits,
            signed: bool_member(C, config, "signed")?.unwrap_or(false),
            component_bytes,
            components: spec.num_elements() * per_element,
        })
    }

    fn packed_len(&self) -> (usize, u8) {
        let total_bits = self.components * self.kept as usize;
        let bytes = total_bits.div_ceil(8);
        (bytes, (bytes * 8 - total_bits) as u8)
    }

    /// The encoded length: the packed bits and the padding byte if any.
    fn encoded_len(&self) -> usize {
        self.packed_len().0 + usize::from(self.padding != Padding::None)
    }

    fn mask(width: u32) -> u64 {
        if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        }
    }

    fn read_component(&self, b: &[u8]) -> u64 {
        let mut buf = [0u8; 8];
        if cfg!(target_endian = "little") {
            buf[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(buf)
        } else {
            buf[8 - b.len()..].copy_from_slice(b);
            u64::from_be_bytes(buf)
        }
    }

    fn write_component(&self, v: u64, out: &mut [u8]) {
        let n = out.len();
        if cfg!(target_endian = "little") {
            out.copy_from_slice(&v.to_le_bytes()[..n]);
        } else {
            out.copy_from_slice(&v.to_be_bytes()[8 - n..]);
        }
    }
}

impl ArrayToBytesCodec for PackbitsCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let (nbytes, pad) = self.packed_len();
        let mut packed = crate::alloc::zeroed(nbytes)?;
        let keep = Self::mask(self.kept);
        let mut bit = 0usize;
        for comp in decoded.chunks_exact(self.component_bytes) {
            let v = (self.read_component(comp) >> self.first_bit) & keep;
            for j in 0..self.kept as usize {
                if (v >> j) & 1 == 1 {
                    packed[(bit + j) / 8] |= 1 << ((bit + j) % 8);
                }
            }
            bit += self.kept as usize;
        }
        Ok(match self.padding {
            Padding::None => packed,
            Padding::FirstByte => [vec![pad], packed].concat(),
            Padding::LastByte => {
                packed.push(pad);
                packed
            }
        })
    }

    fn encoded_bound(&self) -> SizeBound {
        SizeBound::Exact(self.encoded_len())
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        let (nbytes, pad) = self.packed_len();
        let with_pad = self.encoded_len();
        if encoded.len() != with_pad {
            return Err(Error::corrupt(format!(
                "packbits: {} bytes, expected {with_pad}",
                encoded.len()
            )));
        }
        let (stored_pad, packed) = match self.padding {
            Padding::None => (pad, &encoded[..]),
            Padding::FirstByte => (encoded[0], &encoded[1..]),
            Padding::LastByte => (encoded[nbytes], &encoded[..nbytes]),
        };
        if stored_pad != pad {
            return Err(Error::corrupt(format!(
                "packbits: {stored_pad} padding bits recorded, expected {pad}"
            )));
        }
        let decoded = self.components * self.component_bytes;
        bound.check("packbits", decoded)?;
        let mut out = crate::alloc::zeroed(decoded)?;
        let width = Self::mask(self.bits);
        let top = self.first_bit + self.kept - 1;
        let mut bit = 0usize;
        for comp in out.chunks_exact_mut(self.component_bytes) {
            let mut v = 0u64;
            for j in 0..self.kept as usize {
                let b = bit + j;
                v |= u64::from((packed[b / 8] >> (b % 8)) & 1) << j;
            }
            v <<= self.first_bit;
            if self.signed && (v >> top) & 1 == 1 {
                v |= !Self::mask(top + 1);
            }
            self.write_component(v & width, comp);
            bit += self.kept as usize;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::SizeBound::Unbounded;
    use crate::dtype::DataType;
    use serde_json::json;

    fn codec(cfg: Value, dtype: DataType, n: usize) -> PackbitsCodec {
        let spec = ChunkSpec {
            shape: vec![n],
            dtype,
            fill: vec![0; dtype.size],
        };
        PackbitsCodec::from_config(cfg.as_object().unwrap(), &spec).unwrap()
    }

    fn one_byte() -> DataType {
        DataType::from_json(&json!({"size": 1})).unwrap()
    }

    #[test]
    fn int4_packs_two_per_byte_and_sign_extends() {
        // ml_dtypes int4 values -2, -8, 7 are the bytes 0x0e, 0x08, 0x07.
        let c = codec(json!({"bits": 4, "signed": true}), one_byte(), 3);
        let enc = c.encode(vec![0x0e, 0x08, 0x07]).unwrap();
        assert_eq!(enc, vec![0x8e, 0x07]);
        assert_eq!(c.decode(enc, Unbounded).unwrap(), vec![0x0e, 0x08, 0x07]);
    }

    #[test]
    fn bool_bits_and_padding_bytes() {
        let b = DataType::from_name("bool").unwrap();
        for (padding, expected) in [
            ("none", vec![0b0000_0101]),
            ("first_byte", vec![5, 0b0000_0101]),
            ("last_byte", vec![0b0000_0101, 5]),
        ] {
            let c = codec(json!({"bits": 1, "padding_encoding": padding}), b, 3);
            let enc = c.encode(vec![1, 0, 1]).unwrap();
            assert_eq!(enc, expected, "{padding}");
            assert_eq!(c.decode(enc, Unbounded).unwrap(), vec![1, 0, 1]);
        }
        let c = codec(json!({"bits": 1, "padding_encoding": "first_byte"}), b, 3);
        assert!(c.decode(vec![4, 5], Unbounded).is_err()); // wrong padding count
        assert!(c.decode(vec![5], Unbounded).is_err()); // too short
    }

    #[test]
    fn bit_ranges_of_wider_types() {
        // Keep bits 4..=11 of uint16 values; decoding puts them back in place.
        let u16t = DataType::from_name("uint16").unwrap();
        let c = codec(json!({"first_bit": 4, "last_bit": 11}), u16t, 2);
        let values: Vec<u8> = [0x0abcu16, 0xf123]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let enc = c.encode(values).unwrap();
        assert_eq!(enc, vec![0xab, 0x12]);
        let back: Vec<u16> = c
            .decode(enc, Unbounded)
            .unwrap()
            .chunks_exact(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(back, vec![0x0ab0, 0x0120]);
        // Signed: the top kept bit is extended.
        let i16t = DataType::from_name("int16").unwrap();
        let c = codec(json!({"last_bit": 3, "signed": true}), i16t, 1);
        let back = c
            .decode(c.encode((-3i16).to_ne_bytes().to_vec()).unwrap(), Unbounded)
            .unwrap();
        assert_eq!(i16::from_ne_bytes([back[0], back[1]]), -3);
    }

    #[test]
    fn configuration_is_checked() {
        let spec = ChunkSpec {
            shape: vec![2],
            dtype: one_byte(),
            fill: vec![0],
        };
        let build = |cfg: Value| PackbitsCodec::from_config(cfg.as_object().unwrap(), &spec);
        assert!(build(json!({"bits": 9})).is_err());
        assert!(build(json!({"bits": 4, "first_bit": 3, "last_bit": 2})).is_err());
        assert!(build(json!({"bits": 4, "last_bit": 4})).is_err());
        assert!(build(json!({"padding_encoding": "middle"})).is_err());
    }
}
