//! Stored chunks through the v3 core codecs (bytes, transpose, gzip, zstd,
//! blosc, crc32c, packbits, sharding_indexed): the first byte picks a chain of
//! chains.json's "v3" group, the rest is the chunk.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zarrox_fuzz::decode_target("v3", data));
