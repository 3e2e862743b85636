//! Decoding and encoding a chunk in part: a capability of codecs, which the
//! chain composes.
//!
//! An array->bytes codec whose encoded chunk is a set of parts, each encoded
//! on its own and found through a map stored at a known byte range (the
//! sharding codec: inner chunks and the shard index), implements
//! [`PartialCodec`]. Array->array codecs that only move elements (transpose)
//! map a region of their decoded array onto their encoded one
//! ([`super::ArrayToArrayCodec::encoded_region`]). A chain of such
//! array->array codecs, then a partial codec, and no bytes->bytes codec reads
//! a region by reading the map and then the byte ranges of the parts the
//! region touches ([`PartialRead`]): the engine asks for byte ranges and
//! parts, and knows nothing of what codec lays them out.

use std::fmt::Debug;
use std::ops::Range;

use bytes::Bytes;

use super::{ArrayToArrayCodec, CodecChain};
use crate::error::Result;
use crate::region::ChunkRegion;
use crate::store::ByteRange;

/// Where each part of an encoded chunk is: its byte range in the encoded
/// chunk, `None` for a part that is not stored (the fill value).
pub type PartMap = Vec<Option<Range<u64>>>;

/// A codec whose encoded chunk is made of parts encoded on their own (the
/// chain of [`part_chain`](Self::part_chain)) and a map of where they are.
pub trait PartialCodec: Send + Sync + Debug {
    /// The chain that encodes and decodes each part.
    fn part_chain(&self) -> &CodecChain;
    /// How many parts an encoded chunk has (the map's length).
    fn num_parts(&self) -> usize;
    /// What errors call part `pos` ("inner chunk 3").
    fn part_name(&self, pos: usize) -> String;
    /// The parts `region` (of this codec's decoded chunk) touches, with the
    /// region inside each: (the part's position in the map, its region).
    fn parts_of(&self, region: &ChunkRegion) -> Vec<(usize, ChunkRegion)>;
    /// Where the map is in an encoded chunk.
    fn map_range(&self) -> ByteRange;
    /// The map from the bytes at [`map_range`](Self::map_range); `len`, the
    /// encoded chunk's length when known, bounds the ranges.
    fn decode_map(&self, encoded: Vec<u8>, len: Option<u64>) -> Result<PartMap>;
    /// The map of a whole encoded chunk.
    fn map_of(&self, encoded: &[u8]) -> Result<PartMap>;
    /// An encoded chunk from its encoded parts (one per position of the map,
    /// `None` for parts not stored), or `None` when no part is stored.
    fn assemble(&self, parts: &[Option<Bytes>]) -> Result<Option<Vec<u8>>>;
}

/// How a chain reads a region of a chunk in part (see
/// [`CodecChain::partial`]): the array->array codecs that map the region,
/// outermost first, then the partial codec.
#[derive(Debug)]
pub struct PartialRead<'c> {
    steps: Vec<&'c dyn ArrayToArrayCodec>,
    codec: &'c dyn PartialCodec,
}

impl<'c> PartialRead<'c> {
    /// A chain's partial read: when every array->array codec maps regions,
    /// the array->bytes codec is partial, and no bytes->bytes codec follows.
    pub(super) fn of(chain: &'c CodecChain) -> Option<Self> {
        if !chain.bytes_to_bytes.is_empty() {
            return None;
        }
        let codec = chain.array_to_bytes.partial()?;
        let steps: Vec<&dyn ArrayToArrayCodec> =
            chain.array_to_array.iter().map(|c| c.as_ref()).collect();
        if !steps.iter().all(|c| c.maps_regions()) {
            return None;
        }
        Some(PartialRead { steps, codec })
    }

    /// The codec that decodes the parts.
    pub fn codec(&self) -> &'c dyn PartialCodec {
        self.codec
    }

    /// Whether no array->array codec comes first: a region of the chunk is
    /// a region of the partial codec's decoded chunk as it is.
    pub fn direct(&self) -> bool {
        self.steps.is_empty()
    }

    /// The parts of the map `region` of the chain's decoded chunk touches,
    /// with the region inside each (see [`PartialCodec::parts_of`]).
    pub fn parts_of(&self, region: &ChunkRegion) -> Vec<(usize, ChunkRegion)> {
        let mut mapped = std::borrow::Cow::Borrowed(region);
        for step in &self.steps {
            if let Some(next) = step.encoded_region(&mapped) {
                mapped = std::borrow::Cow::Owned(next);
            }
        }
        self.codec.parts_of(&mapped)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::spec;
    use super::*;

    fn sharding(inner: &[usize]) -> serde_json::Value {
        json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": inner, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}})
    }

    /// The (part, element in the part) of every point of `region`'s parts.
    fn placed(read: &PartialRead<'_>, region: &ChunkRegion) -> Vec<(usize, usize, usize)> {
        let mut got: Vec<(usize, usize, usize)> = read
            .parts_of(region)
            .into_iter()
            .flat_map(|(pos, r)| {
                let ChunkRegion::Points(p) = r else {
                    panic!("points stay points: {r:?}");
                };
                p.into_iter().map(move |(c, b)| (b, pos, c))
            })
            .collect();
        got.sort();
        got
    }

    #[test]
    fn a_chain_reads_in_part_through_codecs_that_map_regions() {
        // A 4x6 chunk, transposed to 6x4, sharded into 3x2 inner chunks (2x2 of them).
        let codecs = json!([
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            sharding(&[3, 2])
        ]);
        let chain = CodecChain::from_json(&codecs, spec(&[4, 6], "uint8")).unwrap();
        let read = chain
            .partial()
            .expect("transpose then sharding reads in part");
        assert!(!read.direct());
        assert_eq!(read.codec().num_parts(), 4);
        assert_eq!(read.codec().part_name(3), "inner chunk 3");
        // Element (r, c) of the decoded chunk is element (c, r) of the
        // transposed one: inner chunk (c / 3, r / 2), at (c % 3, r % 2).
        let points: Vec<(usize, usize)> = (0..24).map(|i| (i, i)).collect();
        let want: Vec<(usize, usize, usize)> = (0..24)
            .map(|i| {
                let (r, c) = (i / 6, i % 6);
                (i, (c / 3) * 2 + r / 2, (c % 3) * 2 + r % 2)
            })
            .collect();
        assert_eq!(placed(&read, &ChunkRegion::Points(points)), want);
        // No array->array codec: the region is the partial codec's as it is.
        let plain =
            CodecChain::from_json(&json!([sharding(&[2, 3])]), spec(&[4, 6], "uint8")).unwrap();
        let direct = plain.partial().unwrap();
        assert!(direct.direct());
        assert!(
            plain.parts().is_some(),
            "a lone partial codec writes in part"
        );
        assert!(chain.parts().is_none(), "behind a transpose it does not");
        let one = ChunkRegion::Points(vec![(3 * 6 + 5, 0)]);
        assert_eq!(placed(&direct, &one), vec![(0, 3, 5)]);
    }

    #[test]
    fn chains_that_cannot_read_in_part_say_so() {
        let s = || spec(&[8], "uint16");
        let after = json!([sharding(&[4]), {"name": "crc32c"}]);
        let chain = CodecChain::from_json(&after, s()).unwrap();
        assert!(
            chain.partial().is_none(),
            "a bytes->bytes codec after the shards"
        );
        assert!(chain.parts().is_none());
        let not_mapping = json!([
            {"name": "scale_offset", "configuration": {"offset": 10, "scale": 2}},
            sharding(&[4])
        ]);
        let chain = CodecChain::from_json(&not_mapping, spec(&[8], "int32")).unwrap();
        assert!(
            chain.partial().is_none(),
            "an array->array codec that changes values"
        );
        let plain = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
        assert!(CodecChain::from_json(&plain, s())
            .unwrap()
            .partial()
            .is_none());
    }
}
