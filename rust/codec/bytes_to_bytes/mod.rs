//! Bytes -> bytes codecs: compressors and checksums over a chunk's bytes.

pub mod blosc;
pub(crate) mod blosc_sys;
pub mod crc32c;
pub mod gzip;
pub mod zstd;
