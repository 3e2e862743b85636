//! Array -> bytes codecs: each serialises a chunk's elements into bytes (fixed
//! size, variable length, bit-packed) or, as sharding, into a shard of inner chunks.

pub mod bytes;
pub mod packbits;
pub mod sharding;
pub mod vlen;
