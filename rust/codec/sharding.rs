//! The `sharding_indexed` codec: a shard holds inner chunks, each encoded with
//! the inner codec chain, and an index of (offset, nbytes) uint64 pairs, one per
//! inner chunk in C order, `2^64-1` twice for an empty chunk, at the start or end.
//!
//! As an array->bytes codec it encodes and decodes whole shards. It also lets
//! the engine work on single inner chunks (a codec capability: partial
//! decoding): the index's byte range and its decoding, each inner chunk's
//! position, and the assembly of a shard from encoded inner chunks.

use std::ops::Range;

use rayon::prelude::*;
use serde_json::{Map, Value};

use super::config::{check_members, choice_member};
use super::{check_len, name_and_config, ArrayToBytesCodec, ChunkSpec, CodecChain};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use crate::indexing::{block_parts, copy_selected, Layout};
use crate::store::ByteRange;

/// Marks an empty inner chunk in the index.
const EMPTY: u64 = u64::MAX;

/// Where each inner chunk's encoded bytes are inside a shard.
pub type ShardIndex = Vec<Option<Range<u64>>>;

#[derive(Debug)]
pub struct ShardingCodec {
    shard_spec: ChunkSpec,
    inner: CodecChain,
    index_chain: CodecChain,
    chunks_per_shard: Vec<usize>,
    index_at_end: bool,
    index_size: usize,
}

/// Index codecs must produce a fixed size: no compressors.
const FIXED_SIZE_INDEX_CODECS: [&str; 6] = [
    "bytes",
    "transpose",
    "crc32c",
    "numcodecs.crc32",
    "numcodecs.adler32",
    "numcodecs.crc32c",
];

/// The index codecs that add a 4-byte checksum (zarr-python 3.4.2 accepts
/// numcodecs' 32-bit checksums there too).
const CHECKSUM_INDEX_CODECS: [&str; 4] = [
    "crc32c",
    "numcodecs.crc32",
    "numcodecs.adler32",
    "numcodecs.crc32c",
];

impl ShardingCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        const C: &str = "sharding_indexed";
        check_members(
            C,
            config,
            &["chunk_shape", "codecs", "index_codecs", "index_location"],
        )?;
        let inner_shape: Vec<usize> = match config.get("chunk_shape") {
            Some(Value::Array(v)) => v
                .iter()
                .map(|x| {
                    x.as_u64()
                        .filter(|&n| n > 0)
                        .map(|n| n as usize)
                        .ok_or_else(|| {
                            Error::metadata(format!(
                                "codec '{C}': chunk_shape must hold positive integers, got {x}"
                            ))
                        })
                })
                .collect::<Result<_>>()?,
            _ => {
                return Err(Error::metadata(format!(
                    "codec '{C}': 'chunk_shape' is required"
                )))
            }
        };
        if inner_shape.len() != spec.shape.len()
            || inner_shape
                .iter()
                .zip(&spec.shape)
                .any(|(&i, &s)| s % i != 0)
        {
            return Err(Error::metadata(format!(
                "codec '{C}': inner chunk shape {inner_shape:?} must divide the shard shape {:?}",
                spec.shape
            )));
        }
        let chunks_per_shard: Vec<usize> = spec
            .shape
            .iter()
            .zip(&inner_shape)
            .map(|(s, i)| s / i)
            .collect();
        let inner_spec = ChunkSpec {
            shape: inner_shape,
            ..spec.clone()
        };
        let codecs = config
            .get("codecs")
            .ok_or_else(|| Error::metadata(format!("codec '{C}': 'codecs' is required")))?;
        let inner = CodecChain::from_json(codecs, inner_spec)
            .map_err(|e| e.context(format!("codec '{C}' inner codecs")))?;
        let default_index = serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]);
        let index_codecs = config.get("index_codecs").unwrap_or(&default_index);
        let mut checksums = 0;
        for c in index_codecs.as_array().into_iter().flatten() {
            let (name, _) = name_and_config(c)?;
            if !FIXED_SIZE_INDEX_CODECS.contains(&name) {
                return Err(Error::metadata(format!(
                    "codec '{C}': index codec '{name}' does not have a fixed encoded size"
                )));
            }
            checksums += usize::from(CHECKSUM_INDEX_CODECS.contains(&name));
        }
        let mut index_shape = chunks_per_shard.clone();
        index_shape.push(2);
        let index_spec = ChunkSpec {
            shape: index_shape,
            dtype: DataType::from_name("uint64")?,
            fill: EMPTY.to_ne_bytes().to_vec(),
        };
        let index_chain = CodecChain::from_json(index_codecs, index_spec)
            .map_err(|e| e.context(format!("codec '{C}' index codecs")))?;
        let index_at_end = choice_member(C, config, "index_location", &["start", "end"])?
            .unwrap_or("end")
            == "end";
        // bytes and transpose keep the index's 16 bytes per inner chunk, a checksum adds 4 (the
        // chain above checked that this size fits in a buffer; nothing is allocated here).
        let n: usize = chunks_per_shard.iter().product();
        let index_size = n * 16 + 4 * checksums;
        Ok(ShardingCodec {
            shard_spec: spec.clone(),
            inner,
            index_chain,
            chunks_per_shard,
            index_at_end,
            index_size,
        })
    }

    /// The codec chain of inner chunks.
    pub fn inner(&self) -> &CodecChain {
        &self.inner
    }

    pub fn inner_shape(&self) -> &[usize] {
        &self.inner.spec().shape
    }

    pub fn chunks_per_shard(&self) -> &[usize] {
        &self.chunks_per_shard
    }

    /// Number of inner chunks in a shard.
    pub fn num_inner(&self) -> usize {
        self.chunks_per_shard.iter().product()
    }

    /// Position in the index (C order) of the inner chunk at `coords` within its shard.
    pub fn inner_position(&self, coords: &[usize]) -> usize {
        coords
            .iter()
            .zip(&self.chunks_per_shard)
            .fold(0, |acc, (&c, &n)| acc * n + c)
    }

    /// Inner chunk coordinates (within the shard) of index position `pos`.
    fn inner_coords(&self, mut pos: usize) -> Vec<usize> {
        let mut coords = vec![0; self.chunks_per_shard.len()];
        for (c, &n) in coords.iter_mut().zip(&self.chunks_per_shard).rev() {
            *c = pos % n;
            pos /= n;
        }
        coords
    }

    /// The byte range of the index in a shard.
    pub fn index_range(&self) -> ByteRange {
        if self.index_at_end {
            ByteRange::Suffix(self.index_size as u64)
        } else {
            ByteRange::FromStart {
                offset: 0,
                length: Some(self.index_size as u64),
            }
        }
    }

    /// Decode and validate an encoded index. `shard_size` (when known) bounds the ranges.
    pub fn decode_index(&self, encoded: Vec<u8>, shard_size: Option<u64>) -> Result<ShardIndex> {
        check_len(encoded.len(), self.index_size).map_err(|e| e.context("shard index"))?;
        let raw = self
            .index_chain
            .decode(encoded)
            .map_err(|e| e.context("shard index"))?;
        let words: Vec<u64> = raw
            .chunks_exact(8)
            .map(|w| u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]))
            .collect();
        words
            .chunks_exact(2)
            .enumerate()
            .map(|(i, pair)| {
                let (offset, nbytes) = (pair[0], pair[1]);
                if offset == EMPTY && nbytes == EMPTY {
                    return Ok(None);
                }
                let end = offset.checked_add(nbytes);
                match (end, shard_size) {
                    (None, _) => Err(Error::corrupt(format!(
                        "shard index: inner chunk {i} has an invalid range ({offset}, {nbytes})"
                    ))),
                    (Some(end), Some(size)) if end > size => Err(Error::corrupt(format!(
                        "shard index: inner chunk {i} ends at byte {end}, the shard has {size}"
                    ))),
                    (Some(end), _) => Ok(Some(offset..end)),
                }
            })
            .collect()
    }

    /// Split a whole shard into its index.
    pub fn read_index(&self, shard: &[u8]) -> Result<ShardIndex> {
        if shard.len() < self.index_size {
            return Err(Error::corrupt(format!(
                "shard of {} bytes is shorter than its {}-byte index",
                shard.len(),
                self.index_size
            )));
        }
        let at = if self.index_at_end {
            shard.len() - self.index_size
        } else {
            0
        };
        self.decode_index(
            shard[at..at + self.index_size].to_vec(),
            Some(shard.len() as u64),
        )
    }

    /// A shard from the encoded inner chunks (one per index position, `None`
    /// for empty), or `None` if every inner chunk is empty.
    pub fn assemble<B: AsRef<[u8]>>(&self, chunks: &[Option<B>]) -> Result<Option<Vec<u8>>> {
        if chunks.iter().all(Option::is_none) {
            return Ok(None);
        }
        let data_len: usize = chunks.iter().flatten().map(|c| c.as_ref().len()).sum();
        let mut shard = Vec::with_capacity(data_len + self.index_size);
        let base = if self.index_at_end {
            0
        } else {
            self.index_size
        };
        shard.resize(base, 0);
        let mut index = Vec::with_capacity(chunks.len() * 16);
        for c in chunks {
            let (offset, nbytes) = match c {
                Some(bytes) => {
                    let bytes = bytes.as_ref();
                    let offset = shard.len() as u64;
                    shard.extend_from_slice(bytes);
                    (offset, bytes.len() as u64)
                }
                None => (EMPTY, EMPTY),
            };
            index.extend_from_slice(&offset.to_ne_bytes());
            index.extend_from_slice(&nbytes.to_ne_bytes());
        }
        let encoded_index = self.index_chain.encode(index)?;
        if self.index_at_end {
            shard.extend_from_slice(&encoded_index);
        } else {
            shard[..self.index_size].copy_from_slice(&encoded_index);
        }
        Ok(Some(shard))
    }

    /// Where inner chunk `pos` sits in the shard buffer.
    fn inner_block(&self, pos: usize) -> (Vec<usize>, &[usize]) {
        let shape = self.inner_shape();
        let origin = self
            .inner_coords(pos)
            .iter()
            .zip(shape)
            .map(|(c, s)| c * s)
            .collect();
        (origin, shape)
    }
}

/// Whole-shard encoding and decoding assemble fixed-size elements; arrays of
/// variable-length elements go through the array's inner-chunk paths instead.
fn whole_shard_supported(spec: &ChunkSpec) -> Result<()> {
    if spec.dtype.is_var_len() {
        return Err(Error::unsupported(
            "variable-length data in a sharding codec that is not the array's only codec",
        ));
    }
    Ok(())
}

impl ArrayToBytesCodec for ShardingCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        whole_shard_supported(&self.shard_spec)?;
        check_len(decoded.len(), self.shard_spec.nbytes())?;
        let spec = self.inner.spec();
        let chunks: Vec<Option<Vec<u8>>> = (0..self.num_inner())
            .into_par_iter()
            .map(|pos| {
                let (origin, shape) = self.inner_block(pos);
                let parts = block_parts(&origin, shape);
                let parts: Vec<_> = parts.iter().collect();
                let mut chunk = vec![0u8; spec.nbytes()];
                copy_selected(
                    &parts,
                    &decoded,
                    Layout::selection(&self.shard_spec.shape),
                    &mut chunk,
                    Layout::chunk(shape),
                    spec.dtype.size,
                );
                if spec.dtype.all_equal_fill(&chunk, &spec.fill) {
                    return Ok(None);
                }
                self.inner.encode(chunk).map(Some)
            })
            .collect::<Result<_>>()?;
        match self.assemble(&chunks)? {
            Some(shard) => Ok(shard),
            // An all-empty shard still needs its index when it must be stored.
            None => self.index_chain.encode(vec![0xff; self.num_inner() * 16]),
        }
    }

    fn decode(&self, encoded: Vec<u8>) -> Result<Vec<u8>> {
        whole_shard_supported(&self.shard_spec)?;
        let index = self.read_index(&encoded)?;
        let spec = self.inner.spec();
        let decoded: Vec<Option<Vec<u8>>> = index
            .par_iter()
            .map(|r| match r {
                None => Ok(None),
                Some(r) => self
                    .inner
                    .decode(encoded[r.start as usize..r.end as usize].to_vec())
                    .map(Some),
            })
            .collect::<Result<_>>()?;
        let mut shard = vec![0u8; self.shard_spec.nbytes()];
        crate::dtype::fill_pattern(&mut shard, &self.shard_spec.fill);
        for (pos, chunk) in decoded.iter().enumerate() {
            if let Some(chunk) = chunk {
                let (origin, shape) = self.inner_block(pos);
                let parts = block_parts(&origin, shape);
                let parts: Vec<_> = parts.iter().collect();
                copy_selected(
                    &parts,
                    chunk,
                    Layout::chunk(shape),
                    &mut shard,
                    Layout::selection(&self.shard_spec.shape),
                    spec.dtype.size,
                );
            }
        }
        Ok(shard)
    }

    fn as_sharding(&self) -> Option<&ShardingCodec> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{sample, spec};
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    fn codec(location: &str, shard: &[usize], inner: &[usize]) -> ShardingCodec {
        let cfg = json!({
            "chunk_shape": inner,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": location
        });
        ShardingCodec::from_config(cfg.as_object().unwrap(), &spec(shard, "uint16")).unwrap()
    }

    #[test]
    fn index_size_is_the_encoded_index_length() {
        let le = json!({"name": "bytes", "configuration": {"endian": "little"}});
        let be = json!({"name": "bytes", "configuration": {"endian": "big"}});
        let tr = json!({"name": "transpose", "configuration": {"order": [2, 0, 1]}});
        for index_codecs in [
            json!([le]),
            json!([be, "crc32c"]),
            json!([tr, le, "crc32c", {"name": "crc32c"}]),
            json!([le, {"name": "numcodecs.crc32", "configuration": {}}]),
            json!([le, {"name": "numcodecs.adler32", "configuration": {"location": "end"}}]),
            json!([le, {"name": "numcodecs.crc32c"}, "crc32c"]),
        ] {
            let cfg = json!({"chunk_shape": [2, 3], "codecs": [le], "index_codecs": index_codecs});
            let c = ShardingCodec::from_config(cfg.as_object().unwrap(), &spec(&[8, 6], "uint16"))
                .unwrap();
            let encoded = c
                .index_chain
                .encode(vec![0xff; c.num_inner() * 16])
                .unwrap();
            assert_eq!(c.index_size, encoded.len(), "{index_codecs}");
        }
    }

    #[test]
    fn whole_shard_round_trip_both_index_locations() {
        for location in ["start", "end"] {
            let c = codec(location, &[8, 6], &[4, 3]);
            assert_eq!(c.num_inner(), 4);
            assert_eq!(c.index_size, 4 * 16 + 4);
            let data = sample(8 * 6 * 2);
            let shard = c.encode(data.clone()).unwrap();
            assert_eq!(c.decode(shard.clone()).unwrap(), data);
            let index = c.read_index(&shard).unwrap();
            assert!(index.iter().all(Option::is_some));
            if location == "start" {
                assert_eq!(index[0].as_ref().unwrap().start, c.index_size as u64);
            } else {
                assert_eq!(index[0].as_ref().unwrap().start, 0);
            }
        }
    }

    #[test]
    fn empty_inner_chunks_are_left_out() {
        let c = codec("end", &[4, 4], &[2, 2]);
        let mut data = vec![0u8; 32];
        data[0] = 1; // only inner chunk 0 holds a non-fill value
        let shard = c.encode(data.clone()).unwrap();
        let index = c.read_index(&shard).unwrap();
        assert!(index[0].is_some() && index[1..].iter().all(Option::is_none));
        // The empty sentinel is 2^64-1 twice, little endian, followed by crc32c.
        let tail = &shard[shard.len() - 68..];
        assert_eq!(&tail[16..32], &[0xff; 16]);
        assert_eq!(c.decode(shard).unwrap(), data);
    }

    #[test]
    fn index_checksum_and_bounds_are_verified() {
        let c = codec("end", &[4], &[2]);
        let shard = c.encode(sample(8)).unwrap();
        let mut bad = shard.clone();
        let n = bad.len();
        bad[n - 10] ^= 1; // inside the index: the crc32c no longer matches
        assert_eq!(c.decode(bad).unwrap_err().kind, ErrorKind::Checksum);
        assert_eq!(
            c.decode(shard[..10].to_vec()).unwrap_err().kind,
            ErrorKind::Corrupt
        );
        // An index entry reaching past the end of the shard is corrupt, not a panic.
        let two = c
            .assemble(&[Some(vec![1, 2]), Some(vec![3, 4])])
            .unwrap()
            .unwrap();
        let mut raw = Vec::new();
        for (offset, nbytes) in [(0u64, 2u64), (1000, 2)] {
            raw.extend_from_slice(&offset.to_ne_bytes());
            raw.extend_from_slice(&nbytes.to_ne_bytes());
        }
        let mut forged = two[..4].to_vec();
        forged.extend_from_slice(&c.index_chain.encode(raw).unwrap());
        let err = c.decode(forged).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupt);
        assert!(
            err.message.contains("inner chunk 1 ends at byte 1002"),
            "{}",
            err.message
        );
    }

    #[test]
    fn configuration_is_validated() {
        let s = spec(&[8], "uint16");
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        let build = |cfg: Value| ShardingCodec::from_config(cfg.as_object().unwrap(), &s);
        assert!(build(json!({"chunk_shape": [3], "codecs": [bytes]})).is_err());
        assert!(build(json!({"chunk_shape": [2, 2], "codecs": [bytes]})).is_err());
        assert!(build(json!({"codecs": [bytes]})).is_err());
        assert!(build(json!({"chunk_shape": [2]})).is_err());
        assert!(build(json!({"chunk_shape": [2], "codecs": [bytes], "index_codecs": [bytes, {"name": "zstd"}]})).is_err());
        assert!(
            build(json!({"chunk_shape": [2], "codecs": [bytes], "index_location": "middle"}))
                .is_err()
        );
        assert!(build(json!({"chunk_shape": [2], "codecs": [bytes]})).is_ok());
    }

    #[test]
    fn nested_sharding_round_trips() {
        let inner_sharding = json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 2],
            "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_location": "start"}});
        let cfg = json!({"chunk_shape": [4, 4], "codecs": [inner_sharding],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]});
        let c =
            ShardingCodec::from_config(cfg.as_object().unwrap(), &spec(&[8, 8], "uint16")).unwrap();
        let data = sample(128);
        assert_eq!(c.decode(c.encode(data.clone()).unwrap()).unwrap(), data);
    }
}
