//! The codec chain of Zarr v3: array->array codecs, exactly one array->bytes
//! codec, then bytes->bytes codecs. One file per codec; this module holds the
//! three traits, the factory that builds codecs from JSON and [`CodecChain`].

pub mod bitround;
pub mod blosc;
pub mod bytes;
pub mod cast_value;
pub mod config;
pub mod crc32c;
pub mod gzip;
pub mod numcodecs;
pub mod packbits;
pub mod reshape;
pub mod scale_offset;
pub mod sharding;
pub mod transpose;
pub(crate) mod typed;
pub mod vlen;
pub mod zstd;

use std::fmt::Debug;

use serde_json::{Map, Value};

use crate::dtype::DataType;
use crate::error::{Error, Result};

/// The decoded representation a codec works on: the chunk's shape, data type
/// and fill value (one element, native byte order). Buffers are C order, native
/// byte order, `num_elements() * dtype.size` bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkSpec {
    pub shape: Vec<usize>,
    pub dtype: DataType,
    pub fill: Vec<u8>,
}

impl ChunkSpec {
    pub fn num_elements(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn nbytes(&self) -> usize {
        self.num_elements() * self.dtype.size
    }
}

/// Codecs that turn one array into another (transpose).
pub trait ArrayToArrayCodec: Send + Sync + Debug {
    /// The representation this codec produces on encode.
    fn encoded_spec(&self) -> &ChunkSpec;
    /// For a codec that only permutes dimensions: `order[i]` is the decoded
    /// dimension that becomes encoded dimension `i`. A region of the decoded
    /// chunk then maps onto the encoded one, so what follows can be read in part.
    fn transpose_order(&self) -> Option<&[usize]> {
        None
    }
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>>;
    fn decode(&self, encoded: Vec<u8>) -> Result<Vec<u8>>;
}

/// Codecs that serialize an array to bytes (bytes; later sharding, vlen).
pub trait ArrayToBytesCodec: Send + Sync + Debug {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>>;
    /// Returns exactly the decoded spec's `nbytes()` bytes.
    fn decode(&self, encoded: Vec<u8>) -> Result<Vec<u8>>;
    /// True when encoded and decoded bytes are identical (native byte order),
    /// which lets the chain decode straight into the caller's buffer.
    fn is_identity(&self) -> bool {
        false
    }
    /// The sharding codec, for the array's inner-chunk read and write paths.
    fn as_sharding(&self) -> Option<&sharding::ShardingCodec> {
        None
    }
    /// The size of every encoding, when it does not depend on the values
    /// (`bytes`); `None` for variable-size codecs.
    fn fixed_encoded_size(&self) -> Option<usize> {
        None
    }
}

/// Codecs from bytes to bytes (compressors, checksums).
pub trait BytesToBytesCodec: Send + Sync + Debug {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>>;
    fn decode(&self, encoded: Vec<u8>) -> Result<Vec<u8>>;
    /// Decode into `out`, whose length is the exact decoded size. Compressors
    /// that know the size override this to skip a copy.
    fn decode_into(&self, encoded: Vec<u8>, out: &mut [u8]) -> Result<()> {
        let decoded = self.decode(encoded)?;
        check_len(decoded.len(), out.len())?;
        out.copy_from_slice(&decoded);
        Ok(())
    }
    /// The bytes every encoding adds, when that does not depend on the input
    /// (checksums: 4); `None` for variable-size codecs (compressors).
    fn fixed_size_overhead(&self) -> Option<usize> {
        None
    }
}

/// Error unless a decoded buffer has the expected length.
pub fn check_len(got: usize, expected: usize) -> Result<()> {
    if got != expected {
        return Err(Error::corrupt(format!(
            "decoded {got} bytes, expected {expected}"
        )));
    }
    Ok(())
}

/// How a chain reads a region of a chunk in part (see [`CodecChain::partial`]).
#[derive(Debug)]
pub struct PartialRead<'c> {
    /// The transposes, outermost first: each one's order and the chunk shape
    /// it permutes.
    pub transposes: Vec<(&'c [usize], &'c [usize])>,
    /// The sharding codec that follows them.
    pub sharding: &'c sharding::ShardingCodec,
}

/// A validated chain: array->array*, array->bytes, bytes->bytes*.
#[derive(Debug)]
pub struct CodecChain {
    spec: ChunkSpec,
    array_to_array: Vec<Box<dyn ArrayToArrayCodec>>,
    array_to_bytes: Box<dyn ArrayToBytesCodec>,
    bytes_to_bytes: Vec<Box<dyn BytesToBytesCodec>>,
}

pub(crate) enum AnyCodec {
    ArrayToArray(Box<dyn ArrayToArrayCodec>),
    ArrayToBytes(Box<dyn ArrayToBytesCodec>),
    BytesToBytes(Box<dyn BytesToBytesCodec>),
}

/// Split one codec's JSON (`{"name":..., "configuration":{...}}` or a bare name).
pub(crate) fn name_and_config(codec: &Value) -> Result<(&str, Map<String, Value>)> {
    match codec {
        Value::String(name) => Ok((name, Map::new())),
        Value::Object(obj) => {
            let name = obj
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::metadata(format!("codec without a name: {codec}")))?;
            for key in obj.keys() {
                if key != "name" && key != "configuration" && key != "must_understand" {
                    return Err(Error::metadata(format!(
                        "codec '{name}': unexpected member '{key}'"
                    )));
                }
            }
            let config = match obj.get("configuration") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(c)) => c.clone(),
                Some(other) => {
                    return Err(Error::metadata(format!(
                        "codec '{name}': configuration must be an object, got {other}"
                    )))
                }
            };
            Ok((name, config))
        }
        other => Err(Error::metadata(format!(
            "a codec must be an object or a name, got {other}"
        ))),
    }
}

fn build_codec(codec: &Value, spec: &ChunkSpec) -> Result<AnyCodec> {
    let (name, config) = name_and_config(codec)?;
    let built = match name {
        "transpose" => AnyCodec::ArrayToArray(Box::new(transpose::TransposeCodec::from_config(
            &config, spec,
        )?)),
        "bytes" => AnyCodec::ArrayToBytes(Box::new(bytes::BytesCodec::from_config(&config, spec)?)),
        "packbits" => AnyCodec::ArrayToBytes(Box::new(packbits::PackbitsCodec::from_config(
            &config, spec,
        )?)),
        "vlen-utf8" => AnyCodec::ArrayToBytes(Box::new(vlen::VlenCodec::from_config(
            "vlen-utf8",
            &config,
            spec,
        )?)),
        "vlen-bytes" => AnyCodec::ArrayToBytes(Box::new(vlen::VlenCodec::from_config(
            "vlen-bytes",
            &config,
            spec,
        )?)),
        "sharding_indexed" => AnyCodec::ArrayToBytes(Box::new(
            sharding::ShardingCodec::from_config(&config, spec)?,
        )),
        "bitround" => AnyCodec::ArrayToArray(Box::new(bitround::BitroundCodec::from_config(
            &config, spec,
        )?)),
        "cast_value" => AnyCodec::ArrayToArray(Box::new(cast_value::CastValueCodec::from_config(
            &config, spec,
        )?)),
        "reshape" => {
            AnyCodec::ArrayToArray(Box::new(reshape::ReshapeCodec::from_config(&config, spec)?))
        }
        "scale_offset" => AnyCodec::ArrayToArray(Box::new(
            scale_offset::ScaleOffsetCodec::from_config(&config, spec)?,
        )),
        "gzip" => AnyCodec::BytesToBytes(Box::new(gzip::GzipCodec::from_config(&config)?)),
        "zstd" => AnyCodec::BytesToBytes(Box::new(zstd::ZstdCodec::from_config(&config)?)),
        "blosc" => AnyCodec::BytesToBytes(Box::new(blosc::BloscCodec::from_config(&config, spec)?)),
        "crc32c" => AnyCodec::BytesToBytes(Box::new(crc32c::Crc32cCodec::from_config(&config)?)),
        other => match numcodecs::build(other, &config, spec) {
            Some(built) => built?,
            None => return Err(Error::unsupported(format!("unknown codec '{other}'"))),
        },
    };
    Ok(built)
}

impl CodecChain {
    /// Build and validate a chain from the `codecs` JSON list for chunks of `spec`.
    pub fn from_json(codecs: &Value, spec: ChunkSpec) -> Result<CodecChain> {
        // Every size below is computed with plain usize arithmetic, and a buffer can hold
        // at most isize::MAX bytes: refuse larger chunks here rather than wrap or panic.
        let fits = spec
            .shape
            .iter()
            .try_fold(spec.dtype.size, |n, &s| n.checked_mul(s))
            .is_some_and(|n| n <= isize::MAX as usize);
        if !fits {
            return Err(Error::unsupported(format!(
                "chunks of shape {:?} with {} byte(s) per element are larger than the \
                 {} bytes a buffer can hold",
                spec.shape,
                spec.dtype.size,
                isize::MAX
            )));
        }
        let list = codecs
            .as_array()
            .ok_or_else(|| Error::metadata("codecs must be a list"))?;
        let mut array_to_array = Vec::new();
        let mut array_to_bytes: Option<Box<dyn ArrayToBytesCodec>> = None;
        let mut bytes_to_bytes = Vec::new();
        let mut current = spec.clone();
        for codec in list {
            match build_codec(codec, &current)? {
                AnyCodec::ArrayToArray(c) => {
                    if array_to_bytes.is_some() {
                        return Err(Error::metadata(format!(
                            "array->array codec {codec} must come before the array->bytes codec"
                        )));
                    }
                    current = c.encoded_spec().clone();
                    array_to_array.push(c);
                }
                AnyCodec::ArrayToBytes(c) => {
                    if array_to_bytes.is_some() {
                        return Err(Error::metadata(
                            "codecs must contain exactly one array->bytes codec, found two",
                        ));
                    }
                    array_to_bytes = Some(c);
                }
                AnyCodec::BytesToBytes(c) => {
                    if array_to_bytes.is_none() {
                        return Err(Error::metadata(format!(
                            "bytes->bytes codec {codec} must come after the array->bytes codec"
                        )));
                    }
                    bytes_to_bytes.push(c);
                }
            }
        }
        let array_to_bytes = array_to_bytes.ok_or_else(|| {
            Error::metadata("codecs must contain exactly one array->bytes codec, found none")
        })?;
        Ok(CodecChain {
            spec,
            array_to_array,
            array_to_bytes,
            bytes_to_bytes,
        })
    }

    /// The size of every encoded chunk, when every codec has a fixed encoded
    /// size (what a shard index needs); `None` otherwise.
    pub fn fixed_encoded_size(&self) -> Option<usize> {
        self.bytes_to_bytes
            .iter()
            .try_fold(self.array_to_bytes.fixed_encoded_size()?, |n, c| {
                n.checked_add(c.fixed_size_overhead()?)
            })
    }

    /// The decoded chunk representation.
    pub fn spec(&self) -> &ChunkSpec {
        &self.spec
    }

    /// Whether stored bytes are the decoded chunk itself (native-order `bytes`
    /// alone), so they can be read straight into the output.
    pub fn is_passthrough(&self) -> bool {
        self.array_to_array.is_empty()
            && self.bytes_to_bytes.is_empty()
            && self.array_to_bytes.is_identity()
            && !self.spec.dtype.is_var_len()
    }

    /// The sharding codec when it is the whole chain, so that inner chunks can
    /// be read and written one by one.
    pub fn sharding(&self) -> Option<&sharding::ShardingCodec> {
        if self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty() {
            self.array_to_bytes.as_sharding()
        } else {
            None
        }
    }

    /// How a region of a chunk can be read without its whole encoded bytes:
    /// when the chain is transposes, then a sharding codec, and no
    /// bytes->bytes codec (the sharding codec then reads its index and only
    /// the inner chunks needed, by byte range).
    pub fn partial(&self) -> Option<PartialRead<'_>> {
        if !self.bytes_to_bytes.is_empty() {
            return None;
        }
        let sharding = self.array_to_bytes.as_sharding()?;
        let mut transposes = Vec::with_capacity(self.array_to_array.len());
        let mut shape: &[usize] = &self.spec.shape;
        for c in &self.array_to_array {
            transposes.push((c.transpose_order()?, shape));
            shape = &c.encoded_spec().shape;
        }
        Some(PartialRead {
            transposes,
            sharding,
        })
    }

    /// Encode a decoded chunk (C order, native byte order).
    pub fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let fixed = !self.spec.dtype.is_var_len();
        check_len(
            decoded.len(),
            if fixed {
                self.spec.nbytes()
            } else {
                decoded.len()
            },
        )
        .map_err(|_| {
            Error::value(format!(
                "chunk buffer has {} bytes, expected {}",
                decoded.len(),
                self.spec.nbytes()
            ))
        })?;
        let mut data = decoded;
        for c in &self.array_to_array {
            data = c.encode(data)?;
        }
        data = self.array_to_bytes.encode(data)?;
        for c in &self.bytes_to_bytes {
            data = c.encode(data)?;
        }
        Ok(data)
    }

    /// Decode stored bytes into a new buffer of the decoded chunk.
    pub fn decode(&self, encoded: Vec<u8>) -> Result<Vec<u8>> {
        let mut data = encoded;
        for c in self.bytes_to_bytes.iter().rev() {
            data = c.decode(data)?;
        }
        data = self.array_to_bytes.decode(data)?;
        for c in self.array_to_array.iter().rev() {
            data = c.decode(data)?;
        }
        if !self.spec.dtype.is_var_len() {
            check_len(data.len(), self.spec.nbytes())?;
        }
        Ok(data)
    }

    /// Decode stored bytes into `out` (exactly `spec().nbytes()` long), with no
    /// intermediate copy when the chain is compressors over native-order bytes.
    pub fn decode_into(&self, encoded: Vec<u8>, out: &mut [u8]) -> Result<()> {
        check_len(out.len(), self.spec.nbytes())?;
        if self.array_to_array.is_empty() && self.array_to_bytes.is_identity() {
            let mut data = encoded;
            match self.bytes_to_bytes.split_first() {
                None => {
                    check_len(data.len(), out.len())?;
                    out.copy_from_slice(&data);
                }
                Some((innermost, outer)) => {
                    for c in outer.iter().rev() {
                        data = c.decode(data)?;
                    }
                    innermost.decode_into(data, out)?;
                }
            }
            return Ok(());
        }
        let decoded = self.decode(encoded)?;
        out.copy_from_slice(&decoded);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub fn spec(shape: &[usize], dtype: &str) -> ChunkSpec {
        let dtype = DataType::from_name(dtype).unwrap();
        ChunkSpec {
            shape: shape.to_vec(),
            dtype,
            fill: vec![0; dtype.size],
        }
    }

    pub fn sample(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn chain_round_trip_every_codec() {
        let s = spec(&[4, 5, 6], "uint16");
        let codecs = json!([
            {"name": "transpose", "configuration": {"order": [2, 0, 1]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "bitshuffle", "typesize": 2, "blocksize": 0}},
            {"name": "zstd", "configuration": {"level": 3, "checksum": true}},
            {"name": "gzip", "configuration": {"level": 1}},
            "crc32c"
        ]);
        let chain = CodecChain::from_json(&codecs, s.clone()).unwrap();
        let data = sample(s.nbytes());
        let enc = chain.encode(data.clone()).unwrap();
        assert_eq!(chain.decode(enc.clone()).unwrap(), data);
        let mut out = vec![0u8; s.nbytes()];
        chain.decode_into(enc, &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn decode_into_fast_path() {
        let s = spec(&[100], "float64");
        let chain = CodecChain::from_json(
            &json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 0, "checksum": false}}]),
            s.clone(),
        )
        .unwrap();
        let data = sample(800);
        let enc = chain.encode(data.clone()).unwrap();
        let mut out = vec![0u8; 800];
        chain.decode_into(enc, &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn chain_validation() {
        let s = spec(&[4], "int32");
        let err = |v: Value| CodecChain::from_json(&v, s.clone()).unwrap_err();
        assert!(err(json!([])).message.contains("found none"));
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        assert!(err(json!([bytes, bytes])).message.contains("found two"));
        assert!(err(json!(["gzip", bytes]))
            .message
            .contains("must come after"));
        assert!(
            err(json!([bytes, {"name": "transpose", "configuration": {"order": [0]}}]))
                .message
                .contains("must come before")
        );
        assert_eq!(
            err(json!([{"name": "nope"}])).kind,
            crate::error::ErrorKind::Unsupported
        );
        assert!(
            err(json!([{"name": "bytes", "configuration": {"endian": "little"}, "x": 1}]))
                .message
                .contains("unexpected member 'x'")
        );
        assert!(err(json!({"a": 1})).message.contains("must be a list"));
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let s = spec(&[64], "uint32");
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        for codecs in [
            json!([bytes]),
            json!([bytes, "gzip"]),
            json!([bytes, "zstd"]),
            json!([bytes, "blosc"]),
            json!([bytes, "crc32c"]),
        ] {
            let chain = CodecChain::from_json(&codecs, s.clone()).unwrap();
            let enc = chain.encode(sample(256)).unwrap();
            for cut in [0, 1, enc.len() / 2, enc.len() - 1] {
                assert!(
                    chain.decode(enc[..cut].to_vec()).is_err(),
                    "{codecs} cut {cut}"
                );
            }
            let mut garbage = enc.clone();
            for b in garbage.iter_mut() {
                *b ^= 0x5a;
            }
            // Garbage must give an error or (for raw bytes) different data, never a panic.
            let _ = chain.decode(garbage);
        }
    }
}
