//! Stored chunks through the numcodecs codecs (Zarr v2 compressors, filters
//! and checksums, as `numcodecs.<id>`): the first byte picks a chain of
//! chains.json's "numcodecs" group, the rest is the chunk.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| zarrox_fuzz::decode_target("numcodecs", data));
