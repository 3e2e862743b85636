//! What zarrox's fuzz targets share: the codec chains they decode (from
//! `chains.json`, which `make_corpus.py` writes seed chunks for), the checks
//! every decode must pass, and an allocator that refuses what no input here
//! needs.
//!
//! The allocator refuses (returns null for) any single allocation above
//! [`ALLOCATION_LIMIT`], as an address-space limit would: a fallible
//! allocation then turns into zarrox's memory error, while an infallible one
//! (`vec![0; n]`, `Vec::with_capacity(n)`) aborts the process, which libFuzzer
//! reports as a crash with its input. Chunks here decode to at most a few KiB,
//! so only an allocation sized by a header's claim, not by the chunk, can
//! reach the limit.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::OnceLock;

use serde_json::Value;
use zarrox::codec::array_to_bytes::vlen::split_frame;
use zarrox::codec::{ChunkSpec, CodecChain};
use zarrox::dtype::{DataKind, DataType};

/// The largest allocation any target may make (decompression bombs in
/// variable-length chunks grow their buffer legitimately up to what the
/// input can expand to: a few hundred MiB at most for inputs of 4 KiB).
pub const ALLOCATION_LIMIT: usize = 1 << 30;

struct Limited;

// SAFETY: forwards every call to `System` unchanged, except that allocations
// above the limit fail (null), which callers of `alloc` must handle anyway.
unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded with the caller's valid layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded with the caller's valid layout.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded with the caller's pointer, layout and size.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Limited = Limited;

/// One codec chain of `chains.json`.
pub struct Entry {
    pub name: String,
    pub chain: CodecChain,
    /// Re-encoding a decoded chunk and decoding it again gives it back.
    pub lossless: bool,
}

const CHAINS: &str = include_str!("../chains.json");

fn build(group: &str) -> Vec<Entry> {
    let doc: Value = serde_json::from_str(CHAINS).expect("chains.json is JSON");
    doc[group]
        .as_array()
        .expect("a group of chains")
        .iter()
        .map(|e| {
            let dtype = DataType::from_name(e["dtype"].as_str().expect("dtype")).expect("dtype");
            let shape = e["shape"]
                .as_array()
                .expect("shape")
                .iter()
                .map(|n| n.as_u64().expect("extent") as usize)
                .collect();
            let spec = ChunkSpec {
                shape,
                dtype,
                fill: vec![0; dtype.size],
            };
            let name = e["name"].as_str().expect("name").to_string();
            let codecs = e.get("core_codecs").unwrap_or(&e["codecs"]);
            let chain = CodecChain::from_json(codecs, spec)
                .unwrap_or_else(|err| panic!("chain {name}: {err}"));
            Entry {
                name,
                chain,
                lossless: e["lossless"].as_bool().unwrap_or(false),
            }
        })
        .collect()
}

/// The chains of `group` ("v3", "numcodecs", "vlen").
pub fn entries(group: &str) -> &'static [Entry] {
    static V3: OnceLock<Vec<Entry>> = OnceLock::new();
    static NUMCODECS: OnceLock<Vec<Entry>> = OnceLock::new();
    static VLEN: OnceLock<Vec<Entry>> = OnceLock::new();
    let cell = match group {
        "v3" => &V3,
        "numcodecs" => &NUMCODECS,
        "vlen" => &VLEN,
        other => panic!("no group {other}"),
    };
    cell.get_or_init(|| build(group))
}

/// The entry an input's first byte picks, and the rest of the input.
pub fn pick<'a>(group: &str, data: &'a [u8]) -> Option<(&'static Entry, &'a [u8])> {
    let (&which, rest) = data.split_first()?;
    let all = entries(group);
    Some((&all[usize::from(which) % all.len()], rest))
}

/// Decode `chunk` with `entry`'s chain and check what every decode must give:
/// no panic and no allocation beyond the limit (by construction), the same
/// outcome from `decode` and `decode_into`, a result of the chunk's size (or a
/// frame of its element count), and for lossless chains the same chunk after
/// encoding it again.
pub fn check_decode(entry: &Entry, chunk: &[u8]) {
    let chain = &entry.chain;
    let spec = chain.spec();
    let decoded = chain.decode(chunk.to_vec());
    if spec.dtype.is_var_len() {
        if let Ok(frame) = &decoded {
            let utf8 = spec.dtype.kind == DataKind::String;
            split_frame(frame, spec.num_elements(), utf8)
                .unwrap_or_else(|e| panic!("{}: decoded an invalid frame: {e}", entry.name));
        }
    } else {
        let mut out = vec![0u8; spec.nbytes()];
        let into = chain.decode_into(chunk.to_vec(), &mut out);
        match (&decoded, &into) {
            (Ok(d), Ok(())) => assert!(d == &out, "{}: decode and decode_into differ", entry.name),
            (Err(_), Err(_)) => {}
            (d, i) => panic!(
                "{}: decode gave {:?}, decode_into {:?}",
                entry.name,
                d.as_ref().map(Vec::len),
                i
            ),
        }
        if let Ok(d) = &decoded {
            assert_eq!(d.len(), spec.nbytes(), "{}", entry.name);
        }
    }
    if let (Ok(d), true) = (decoded, entry.lossless) {
        let again = chain
            .encode(d.clone())
            .unwrap_or_else(|e| panic!("{}: cannot encode a decoded chunk: {e}", entry.name));
        let back = chain
            .decode(again)
            .unwrap_or_else(|e| panic!("{}: cannot decode its own encoding: {e}", entry.name));
        assert!(back == d, "{}: re-encoding changed the chunk", entry.name);
    }
}

/// The decode target of a group: the first byte picks the chain.
pub fn decode_target(group: &str, data: &[u8]) {
    if let Some((entry, chunk)) = pick(group, data) {
        check_decode(entry, chunk);
    }
}
