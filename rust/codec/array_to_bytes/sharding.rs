//! The `sharding_indexed` codec: a shard holds inner chunks, each encoded with
//! the inner codec chain, and an index of (offset, nbytes) uint64 pairs, one per
//! inner chunk in C order, `2^64-1` twice for an empty chunk, at the start or end.
//!
//! As an array->bytes codec it encodes and decodes whole shards. It is also a
//! [`PartialCodec`]: its parts are the inner chunks and its map the index
//! (the index's byte range and its decoding, which inner chunks a region
//! touches, and the assembly of a shard from encoded inner chunks).

use std::sync::OnceLock;

use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::codec::config::{check_members, choice_member, keys, Member, MemberType, Members};
use crate::codec::partial::{PartMap, PartialCodec};
use crate::codec::{check_len, ArrayToBytesCodec, ChunkSpec, CodecChain, SizeBound};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use crate::indexing::{block_parts, copy_selected, Layout};
use crate::store::ByteRange;

/// Marks an empty inner chunk in the index.
const EMPTY: u64 = u64::MAX;

#[derive(Debug)]
pub struct ShardingCodec {
    shard_spec: ChunkSpec,
    inner: CodecChain,
    index_chain: CodecChain,
    chunks_per_shard: Vec<usize>,
    index_at_end: bool,
    index_size: usize,
    /// The most bytes one encoded inner chunk may take: longer index entries
    /// are corrupt, before anything is fetched or allocated for them.
    inner_limit: u64,
    /// The order inner chunks are laid out in a written shard.
    subchunk_order: SubchunkOrder,
    write_order: OnceLock<Vec<usize>>,
}

/// The physical order of a shard's inner chunks on write: zarr-python 3.4's
/// `subchunk_write_order`, a setting of its codec object that metadata does
/// not store (the zarr-python pipeline passes it in the codec's
/// configuration as `subchunk_write_order`; readers follow the index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SubchunkOrder {
    /// zarr-python's default (see [`morton_order`]).
    Morton,
    /// C order ("lexicographic"; "unordered" is that too, as in zarr-python).
    Lexicographic,
    /// Fortran order: dimension 0 varies fastest.
    Colexicographic,
}

/// Where the shard index may be: `index_location`.
pub const INDEX_LOCATIONS: [&str; 2] = ["start", "end"];

/// zarr-python's `ShardingCodec(index_location="end")`.
pub const DEFAULT_INDEX_LOCATION: &str = "end";

/// zarr-python's default inner codecs: `(BytesCodec(endian="little"),)`.
pub fn default_codecs() -> Value {
    serde_json::json!([{"name": "bytes", "configuration": {"endian": "little"}}])
}

/// zarr-python's default index codecs: `(BytesCodec(endian="little"), Crc32cCodec())`.
pub fn default_index_codecs() -> Value {
    serde_json::json!([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "crc32c"}
    ])
}

/// The members of the document's configuration (the core also takes
/// `subchunk_write_order`, which zarr-python keeps out of the metadata).
pub const MEMBERS: &[Member] = &[
    Member::of("chunk_shape", MemberType::Shape).required(),
    Member::of("codecs", MemberType::Chain),
    Member::of("index_codecs", MemberType::Chain),
    Member::choice("index_location", &INDEX_LOCATIONS),
];

/// The members as TensorStore's partial chains take them: the inner chunk
/// shape may be left out (TensorStore then chooses it).
pub const TENSORSTORE_MEMBERS: &[Member] = &[
    Member::of("chunk_shape", MemberType::Shape),
    MEMBERS[1],
    MEMBERS[2],
    MEMBERS[3],
];

/// The complete configuration of a `sharding_indexed` codec: members checked,
/// the defaults of `codecs`, `index_codecs` and `index_location` filled in.
/// `chunk_shape` is required; it and the codec chains are passed on as given
/// (they are checked against the chunks when a chain is built).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    const C: &str = "sharding_indexed";
    check_members(C, config, &keys(MEMBERS))?;
    let chunk_shape = config
        .get("chunk_shape")
        .ok_or_else(|| Error::metadata(format!("codec '{C}': 'chunk_shape' is required")))?;
    let location = MEMBERS[3]
        .get_choice(C, config)?
        .unwrap_or(DEFAULT_INDEX_LOCATION);
    Ok(vec![
        ("chunk_shape", chunk_shape.clone()),
        (
            "codecs",
            config.get("codecs").cloned().unwrap_or_else(default_codecs),
        ),
        (
            "index_codecs",
            config
                .get("index_codecs")
                .cloned()
                .unwrap_or_else(default_index_codecs),
        ),
        ("index_location", location.into()),
    ])
}

/// The inner chunks a shard of `shard` holds along each dimension, or `None`
/// unless the inner chunk shape `inner` has the shard's dimensions and
/// divides it (the rule of `chunk_shape` against the chunks; the Python layer
/// asks it too).
pub fn chunks_per_shard<T>(shard: &[T], inner: &[T]) -> Option<Vec<T>>
where
    T: Copy + Default + PartialEq + std::ops::Rem<Output = T> + std::ops::Div<Output = T>,
{
    let zero = T::default();
    if shard.len() != inner.len() || inner.contains(&zero) {
        return None;
    }
    let divides = shard.iter().zip(inner).all(|(&s, &i)| s % i == zero);
    divides.then(|| shard.iter().zip(inner).map(|(&s, &i)| s / i).collect())
}

impl ShardingCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        const C: &str = "sharding_indexed";
        check_members(
            C,
            config,
            &[keys(MEMBERS), vec!["subchunk_write_order"]].concat(),
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
        let chunks_per_shard = chunks_per_shard(&spec.shape, &inner_shape).ok_or_else(|| {
            Error::metadata(format!(
                "codec '{C}': inner chunk shape {inner_shape:?} must divide the shard shape {:?}",
                spec.shape
            ))
        })?;
        let inner_spec = ChunkSpec {
            shape: inner_shape,
            ..spec.clone()
        };
        // The core takes complete configurations (see `complete_config`): the
        // inner codecs are required here.
        let codecs = config
            .get("codecs")
            .ok_or_else(|| Error::metadata(format!("codec '{C}': 'codecs' is required")))?;
        let inner = CodecChain::from_json(codecs, inner_spec)
            .map_err(|e| e.context(format!("codec '{C}' inner codecs")))?;
        let default_index = default_index_codecs();
        let index_codecs = config.get("index_codecs").unwrap_or(&default_index);
        let mut index_shape = chunks_per_shard.clone();
        index_shape.push(2);
        let index_spec = ChunkSpec {
            shape: index_shape,
            dtype: DataType::from_name("uint64")?,
            fill: EMPTY.to_ne_bytes().to_vec(),
        };
        let index_chain = CodecChain::from_json(index_codecs, index_spec)
            .map_err(|e| e.context(format!("codec '{C}' index codecs")))?;
        // The index is found by its size: every index codec must have a fixed encoded size
        // (the chain's encoded bound is then exact).
        let index_size = index_chain.encoded_bound().exact().ok_or_else(|| {
            Error::metadata(format!(
                "codec '{C}': the index codecs {index_codecs} do not have a fixed encoded size"
            ))
        })?;
        let index_at_end = MEMBERS[3]
            .get_choice(C, config)?
            .unwrap_or(DEFAULT_INDEX_LOCATION)
            == "end";
        let inner_limit = inner.encoded_bound().limit() as u64;
        let subchunk_order = match choice_member(
            C,
            config,
            "subchunk_write_order",
            &["morton", "lexicographic", "unordered", "colexicographic"],
        )? {
            None | Some("morton") => SubchunkOrder::Morton,
            Some("colexicographic") => SubchunkOrder::Colexicographic,
            Some(_) => SubchunkOrder::Lexicographic,
        };
        Ok(ShardingCodec {
            shard_spec: spec.clone(),
            inner,
            index_chain,
            chunks_per_shard,
            index_at_end,
            index_size,
            inner_limit,
            subchunk_order,
            write_order: OnceLock::new(),
        })
    }

    fn inner_shape(&self) -> &[usize] {
        &self.inner.spec().shape
    }

    /// Number of inner chunks in a shard.
    fn num_inner(&self) -> usize {
        self.chunks_per_shard.iter().product()
    }

    /// Position in the index (C order) of the inner chunk at `coords` within its shard.
    fn inner_position(&self, coords: &[usize]) -> usize {
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
    fn index_range(&self) -> ByteRange {
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
    fn decode_index(&self, encoded: Vec<u8>, shard_size: Option<u64>) -> Result<PartMap> {
        check_len(encoded.len(), self.index_size).map_err(|e| e.context("shard index"))?;
        let raw = self
            .index_chain
            .decode(encoded)
            .map_err(|e| e.context("shard index"))?;
        let word = |w: &[u8]| u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        let mut index = crate::alloc::with_capacity(raw.len() / 16)?;
        for (i, pair) in raw.chunks_exact(16).enumerate() {
            let (offset, nbytes) = (word(&pair[..8]), word(&pair[8..]));
            if offset == EMPTY && nbytes == EMPTY {
                index.push(None);
                continue;
            }
            if nbytes > self.inner_limit {
                return Err(Error::corrupt(format!(
                    "shard index: inner chunk {i} has {nbytes} bytes, more than the {} an \
                     encoded inner chunk can take",
                    self.inner_limit
                )));
            }
            let end = offset.checked_add(nbytes);
            index.push(Some(match (end, shard_size) {
                (None, _) => {
                    return Err(Error::corrupt(format!(
                        "shard index: inner chunk {i} has an invalid range ({offset}, {nbytes})"
                    )))
                }
                (Some(end), Some(size)) if end > size => {
                    return Err(Error::corrupt(format!(
                        "shard index: inner chunk {i} ends at byte {end}, the shard has {size}"
                    )))
                }
                (Some(end), _) => offset..end,
            }));
        }
        Ok(index)
    }

    /// Split a whole shard into its index.
    fn read_index(&self, shard: &[u8]) -> Result<PartMap> {
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
    fn assemble<B: AsRef<[u8]>>(&self, chunks: &[Option<B>]) -> Result<Option<Vec<u8>>> {
        if chunks.iter().all(Option::is_none) {
            return Ok(None);
        }
        let data_len: usize = chunks.iter().flatten().map(|c| c.as_ref().len()).sum();
        let mut shard = crate::alloc::with_capacity(data_len + self.index_size)?;
        let base = if self.index_at_end {
            0
        } else {
            self.index_size
        };
        shard.resize(base, 0);
        let mut index = crate::alloc::filled(0xffu8, chunks.len() * 16)?;
        for &pos in self.write_order() {
            let Some(bytes) = chunks.get(pos).and_then(Option::as_ref) else {
                continue;
            };
            let bytes = bytes.as_ref();
            let entry = &mut index[pos * 16..pos * 16 + 16];
            entry[..8].copy_from_slice(&(shard.len() as u64).to_ne_bytes());
            entry[8..].copy_from_slice(&(bytes.len() as u64).to_ne_bytes());
            shard.extend_from_slice(bytes);
        }
        let encoded_index = self.index_chain.encode(index)?;
        if self.index_at_end {
            shard.extend_from_slice(&encoded_index);
        } else {
            shard[..self.index_size].copy_from_slice(&encoded_index);
        }
        Ok(Some(shard))
    }

    /// Index positions in the order their bytes are written (see
    /// [`SubchunkOrder`]).
    fn write_order(&self) -> &[usize] {
        self.write_order.get_or_init(|| match self.subchunk_order {
            SubchunkOrder::Morton => morton_order(&self.chunks_per_shard),
            SubchunkOrder::Lexicographic => (0..self.num_inner()).collect(),
            SubchunkOrder::Colexicographic => colexicographic_order(&self.chunks_per_shard),
        })
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

/// The index positions (C order) of a grid of `shape` chunks visited with
/// dimension 0 varying fastest.
fn colexicographic_order(shape: &[usize]) -> Vec<usize> {
    let n: usize = shape.iter().product();
    let strides = crate::indexing::c_strides(shape);
    (0..n)
        .map(|mut f| {
            let mut pos = 0;
            for (&len, &stride) in shape.iter().zip(&strides) {
                pos += (f % len) * stride;
                f /= len;
            }
            pos
        })
        .collect()
}

/// The index positions (C order) of a grid of `shape` chunks in Morton (Z)
/// order, as zarr-python writes a shard's inner chunks: by the compressed
/// Morton code of their coordinates, which interleaves one bit of each
/// dimension at a time, dimension 0 lowest, leaving out a dimension once its
/// `ceil(log2(n))` bits are used up (so no code is wasted on coordinates
/// outside the grid).
fn morton_order(shape: &[usize]) -> Vec<usize> {
    let bits: Vec<u32> = shape
        .iter()
        .map(|&n| usize::BITS - n.saturating_sub(1).leading_zeros())
        .collect();
    let most = bits.iter().copied().max().unwrap_or(0);
    let total: usize = shape.iter().product();
    let mut coords = vec![0usize; shape.len()];
    let mut keyed: Vec<(u128, usize)> = Vec::with_capacity(total);
    for pos in 0..total {
        let mut rest = pos;
        for (c, &n) in coords.iter_mut().zip(shape).rev() {
            *c = rest % n;
            rest /= n;
        }
        let mut code = 0u128;
        let mut out_bit = 0;
        for bit in 0..most {
            for (d, &c) in coords.iter().enumerate() {
                if bit < bits[d] {
                    code |= (((c >> bit) & 1) as u128) << out_bit;
                    out_bit += 1;
                }
            }
        }
        keyed.push((code, pos));
    }
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, pos)| pos).collect()
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
        let each = |pos: usize| -> Result<Option<Vec<u8>>> {
            let (origin, shape) = self.inner_block(pos);
            let parts = block_parts(&origin, shape);
            let parts: Vec<_> = parts.iter().collect();
            let mut chunk = crate::alloc::zeroed(spec.nbytes())?;
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
        };
        // zarrox's pool, also when called from a thread outside it (a shard
        // encoded or decoded whole by a caller's thread): not rayon's global pool.
        let chunks: Vec<Option<Vec<u8>>> = crate::pool::install(|| {
            (0..self.num_inner())
                .into_par_iter()
                .map(each)
                .collect::<Result<_>>()
        })??;
        match self.assemble(&chunks)? {
            Some(shard) => Ok(shard),
            // An all-empty shard still needs its index when it must be stored.
            None => self
                .index_chain
                .encode(crate::alloc::filled(0xff, self.num_inner() * 16)?),
        }
    }

    /// The index and at most every inner chunk's largest encoding.
    fn encoded_bound(&self) -> SizeBound {
        match self.inner.encoded_bound() {
            SizeBound::Unbounded => SizeBound::Unbounded,
            inner => inner
                .limit()
                .checked_mul(self.num_inner())
                .and_then(|n| n.checked_add(self.index_size))
                .filter(|&n| n <= isize::MAX as usize)
                .map_or(SizeBound::Unbounded, SizeBound::AtMost),
        }
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        whole_shard_supported(&self.shard_spec)?;
        bound.check("sharding_indexed", self.shard_spec.nbytes())?;
        let index = self.read_index(&encoded)?;
        let spec = self.inner.spec();
        let decoded: Vec<Option<Vec<u8>>> = crate::pool::install(|| {
            index
                .par_iter()
                .map(|r| match r {
                    None => Ok(None),
                    Some(r) => self
                        .inner
                        .decode(encoded[r.start as usize..r.end as usize].to_vec())
                        .map(Some),
                })
                .collect::<Result<_>>()
        })??;
        let mut shard = crate::alloc::zeroed(self.shard_spec.nbytes())?;
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

    fn partial(&self) -> Option<&dyn PartialCodec> {
        Some(self)
    }
}

impl PartialCodec for ShardingCodec {
    fn part_chain(&self) -> &CodecChain {
        &self.inner
    }
    fn num_parts(&self) -> usize {
        self.num_inner()
    }
    fn part_name(&self, pos: usize) -> String {
        format!("inner chunk {pos}")
    }
    fn parts_of(
        &self,
        region: &crate::region::ChunkRegion,
    ) -> Vec<(usize, crate::region::ChunkRegion)> {
        region.split_grid(self.inner_shape(), &self.shard_spec.shape, |coords| {
            self.inner_position(coords)
        })
    }
    fn map_range(&self) -> ByteRange {
        self.index_range()
    }
    fn decode_map(&self, encoded: Vec<u8>, len: Option<u64>) -> Result<PartMap> {
        self.decode_index(encoded, len)
    }
    fn map_of(&self, encoded: &[u8]) -> Result<PartMap> {
        self.read_index(encoded)
    }
    fn assemble(&self, parts: &[Option<bytes::Bytes>]) -> Result<Option<Vec<u8>>> {
        ShardingCodec::assemble(self, parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::tests::{sample, spec};
    use crate::codec::SizeBound::Unbounded;
    use crate::error::ErrorKind;
    use serde_json::json;

    #[test]
    fn inner_chunks_divide_the_shard() {
        assert_eq!(chunks_per_shard(&[8, 6], &[2, 3]), Some(vec![4, 2]));
        assert_eq!(chunks_per_shard(&[0], &[5]), Some(vec![0]));
        assert_eq!(chunks_per_shard(&[8, 6], &[3, 3]), None);
        assert_eq!(chunks_per_shard(&[8, 6], &[2]), None);
        assert_eq!(chunks_per_shard(&[8], &[0]), None);
        assert_eq!(chunks_per_shard(&[1u128 << 70], &[1 << 69]), Some(vec![2]));
    }

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
        let checksum = |id: &str| json!({"name": format!("numcodecs.{id}"), "configuration": {}});
        for index_codecs in [
            json!([le]),
            json!([be, "crc32c"]),
            json!([tr, le, "crc32c", {"name": "crc32c"}]),
            json!([le, checksum("crc32")]),
            json!([be, checksum("adler32"), checksum("crc32c")]),
            json!([le, checksum("fletcher32"), "crc32c"]),
            json!([le, {"name": "numcodecs.jenkins_lookup3", "configuration": {"prefix": [1]}}]),
            json!([{"name": "cast_value", "configuration": {"data_type": "uint32",
                                                            "out_of_range": "wrap"}},
                   le, checksum("crc32")]),
            json!([{"name": "scale_offset", "configuration": {"offset": 1, "scale": 1}}, le]),
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
    fn subchunk_write_orders_are_zarr_pythons() {
        // zarr-python 3.4.2: [np.ravel_multi_index(c, (3, 2)) for c in
        // colexicographic_order_coords((3, 2))]
        assert_eq!(colexicographic_order(&[3, 2]), vec![0, 2, 4, 1, 3, 5]);
        assert_eq!(
            colexicographic_order(&[2, 2, 2]),
            vec![0, 4, 2, 6, 1, 5, 3, 7]
        );
        let le = json!({"name": "bytes", "configuration": {"endian": "little"}});
        let layout = |order: &str| {
            let cfg = json!({"chunk_shape": [4, 4], "codecs": [le],
                             "subchunk_write_order": order});
            let c = ShardingCodec::from_config(cfg.as_object().unwrap(), &spec(&[12, 8], "uint16"))
                .unwrap();
            let chunks: Vec<Option<Vec<u8>>> = (0..6u8).map(|i| Some(vec![i; 32])).collect();
            let shard = c.assemble(&chunks).unwrap().unwrap();
            (0..6).map(|i| shard[i * 32]).collect::<Vec<u8>>()
        };
        assert_eq!(layout("lexicographic"), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(layout("unordered"), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(layout("colexicographic"), vec![0, 2, 4, 1, 3, 5]);
        assert_eq!(
            layout("morton"),
            morton_order(&[3, 2])
                .iter()
                .map(|&p| p as u8)
                .collect::<Vec<_>>()
        );
        let cfg = json!({"chunk_shape": [4, 4], "codecs": [le], "subchunk_write_order": "zigzag"});
        assert!(
            ShardingCodec::from_config(cfg.as_object().unwrap(), &spec(&[12, 8], "uint16"))
                .is_err()
        );
    }

    #[test]
    fn morton_order_is_zarr_pythons() {
        // zarr.core.indexing.morton_order_coords((3, 4)) and ((2, 2, 2)), as C-order positions.
        let pos = |coords: &[(usize, usize)]| -> Vec<usize> {
            coords.iter().map(|&(r, c)| r * 4 + c).collect()
        };
        assert_eq!(
            morton_order(&[3, 4]),
            pos(&[
                (0, 0),
                (1, 0),
                (0, 1),
                (1, 1),
                (2, 0),
                (2, 1),
                (0, 2),
                (1, 2),
                (0, 3),
                (1, 3),
                (2, 2),
                (2, 3),
            ])
        );
        assert_eq!(morton_order(&[2, 2, 2]), vec![0, 4, 2, 6, 1, 5, 3, 7]);
        assert_eq!(morton_order(&[1, 5]), vec![0, 1, 2, 3, 4]);
        // [np.ravel_multi_index(c, shape) for c in morton_order_coords(shape)][:20]
        for (shape, first) in [
            (
                &[5, 3, 7][..],
                &[
                    0, 21, 7, 28, 1, 22, 8, 29, 42, 63, 49, 70, 43, 64, 50, 71, 14, 35, 15, 36,
                ][..],
            ),
            (
                &[33, 2],
                &[
                    0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15, 16, 18, 17, 19,
                ],
            ),
            (
                &[3, 1, 6],
                &[0, 6, 1, 7, 12, 13, 2, 8, 3, 9, 14, 15, 4, 10, 5, 11, 16, 17],
            ),
        ] {
            assert_eq!(&morton_order(shape)[..first.len()], first, "{shape:?}");
        }
        assert_eq!(morton_order(&[]), vec![0]);
        let mut all = morton_order(&[5, 3, 7]);
        all.sort_unstable();
        assert_eq!(all, (0..105).collect::<Vec<_>>());
    }

    #[test]
    fn inner_chunks_are_written_in_morton_order() {
        let c = codec("end", &[4, 4], &[2, 2]);
        let chunks: Vec<Option<Vec<u8>>> = (0..4u8).map(|i| Some(vec![i; 3])).collect();
        let shard = c.assemble(&chunks).unwrap().unwrap();
        // Positions 0, 2, 1, 3: coordinates (0,0), (1,0), (0,1), (1,1).
        assert_eq!(&shard[..12], &[0, 0, 0, 2, 2, 2, 1, 1, 1, 3, 3, 3]);
        let index = c.read_index(&shard).unwrap();
        assert_eq!(index, vec![Some(0..3), Some(6..9), Some(3..6), Some(9..12)]);
    }

    #[test]
    fn whole_shard_round_trip_both_index_locations() {
        for location in ["start", "end"] {
            let c = codec(location, &[8, 6], &[4, 3]);
            assert_eq!(c.num_inner(), 4);
            assert_eq!(c.index_size, 4 * 16 + 4);
            let data = sample(8 * 6 * 2);
            let shard = c.encode(data.clone()).unwrap();
            assert_eq!(c.decode(shard.clone(), Unbounded).unwrap(), data);
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
        assert_eq!(c.decode(shard, Unbounded).unwrap(), data);
    }

    #[test]
    fn index_checksum_and_bounds_are_verified() {
        let c = codec("end", &[4], &[2]);
        let shard = c.encode(sample(8)).unwrap();
        let mut bad = shard.clone();
        let n = bad.len();
        bad[n - 10] ^= 1; // inside the index: the crc32c no longer matches
        assert_eq!(
            c.decode(bad, Unbounded).unwrap_err().kind,
            ErrorKind::Checksum
        );
        assert_eq!(
            c.decode(shard[..10].to_vec(), Unbounded).unwrap_err().kind,
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
        let err = c.decode(forged, Unbounded).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupt);
        assert!(
            err.message.contains("inner chunk 1 ends at byte 1002"),
            "{}",
            err.message
        );
        // An entry longer than any encoding of an inner chunk is refused before
        // anything is read or allocated for it, even when the shard's size is unknown.
        let mut raw = Vec::new();
        for (offset, nbytes) in [(0u64, 2u64), (0, 1 << 40)] {
            raw.extend_from_slice(&offset.to_ne_bytes());
            raw.extend_from_slice(&nbytes.to_ne_bytes());
        }
        let index = c.index_chain.encode(raw).unwrap();
        let err = c.decode_index(index, None).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupt);
        assert!(
            err.message
                .contains("inner chunk 1 has 1099511627776 bytes, more than the"),
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
        for variable in [
            json!([bytes, {"name": "numcodecs.zlib", "configuration": {}}]),
            json!([{"name": "numcodecs.pcodec", "configuration": {}}]),
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [1, 2],
                    "codecs": [bytes]}}]),
        ] {
            let err =
                build(json!({"chunk_shape": [2], "codecs": [bytes], "index_codecs": variable}))
                    .unwrap_err();
            assert!(
                err.message.contains("fixed encoded size"),
                "{}",
                err.message
            );
        }
        assert!(
            build(json!({"chunk_shape": [2], "codecs": [bytes], "index_location": "middle"}))
                .is_err()
        );
        assert!(build(json!({"chunk_shape": [2], "codecs": [bytes]})).is_ok());
    }

    #[test]
    fn a_numcodecs_checksummed_index_is_verified() {
        let cfg = json!({
            "chunk_shape": [2],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "numcodecs.crc32", "configuration": {}}],
            "index_location": "start"
        });
        let c =
            ShardingCodec::from_config(cfg.as_object().unwrap(), &spec(&[6], "uint16")).unwrap();
        assert_eq!(c.index_size, 3 * 16 + 4);
        let data = sample(12);
        let shard = c.encode(data.clone()).unwrap();
        assert_eq!(c.decode(shard.clone(), Unbounded).unwrap(), data);
        let mut bad = shard;
        bad[10] ^= 1; // numcodecs' crc32 leads the index
        assert_eq!(
            c.decode(bad, Unbounded).unwrap_err().kind,
            ErrorKind::Checksum
        );
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
        assert_eq!(
            c.decode(c.encode(data.clone()).unwrap(), Unbounded)
                .unwrap(),
            data
        );
    }
}
