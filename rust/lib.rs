//! zarrox's core: chunk indexing, the codec chain and stores, run in parallel.
//! The Python layer (`python/zarrox`) decides what to read or write; this
//! crate does the work, one call per batch of chunks.

pub mod alloc;
pub mod array;
pub mod batch;
pub mod cache;
pub mod codec;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod floors;
pub mod fork;
pub mod grid;
pub mod indexing;
pub mod members;
pub mod order;
pub mod pipeline;
pub mod pool;
pub mod region;
pub mod selection;
pub mod store;

#[cfg(feature = "python")]
mod python;
