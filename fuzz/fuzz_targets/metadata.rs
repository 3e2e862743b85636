//! The Rust side of array metadata: the normalized description the Python
//! layer hands to Rust for every format (shape, chunk shape, data type,
//! codecs, chunk key encoding; JSON text), opened as an array over an empty
//! memory store; when it opens, a corner of it is written and read back.
//! Then every JSON value in the document is tried as a data type, a codec
//! list (`CodecChain::from_json`) and a chunk key encoding, whose keys must
//! decode back to their coordinates.
#![no_main]

use std::sync::Arc;

use serde_json::Value;
use zarrox::array::{ArrayCore, StoreRef};
use zarrox::batch::{Destination, MemoryOrder, ReadDone};
use zarrox::codec::{ChunkSpec, CodecChain};
use zarrox::dtype::DataType;
use zarrox::engine::Input;
use zarrox::grid::ChunkKeyEncoding;
use zarrox::indexing::{DimSelection, Selection};
use zarrox::store::MemoryStore;

/// Write then read the first two elements along each dimension, when the
/// chunks are small enough to do so quickly or too large to be allocated
/// at all (which must then be a memory error, not an abort).
fn exercise(a: &ArrayCore, chunk_bytes: Option<usize>) {
    let small = chunk_bytes.is_some_and(|n| n <= 16 << 20);
    let refused = chunk_bytes.is_none_or(|n| n > zarrox_fuzz::ALLOCATION_LIMIT);
    if !small && !refused {
        return;
    }
    let dims: Vec<DimSelection> = a
        .shape()
        .iter()
        .map(|&s| DimSelection::Slice {
            start: 0,
            stop: s.min(2),
            step: 1,
        })
        .collect();
    let n: usize = dims.iter().map(DimSelection::len).product();
    let sel = Selection::Orthogonal(dims);
    let dtype = a.data_type();
    if dtype.is_var_len() {
        let items: Vec<Vec<u8>> = (0..n).map(|i| vec![b'a' + (i % 26) as u8; i % 5]).collect();
        if a.write(&sel, Input::Var(&items), MemoryOrder::C).is_ok() {
            let read = a.read(&sel, Destination::List, MemoryOrder::C);
            let ReadDone::Values(values, _) = read.expect("read back") else {
                panic!("a list read gives the values");
            };
            assert_eq!(values, items);
        }
    } else {
        let value: Vec<u8> = (0..n * dtype.size).map(|i| (i * 37 % 251) as u8).collect();
        if a.write(&sel, Input::Fixed(&value), MemoryOrder::C).is_ok() {
            let mut out = vec![0u8; value.len()];
            let into = Destination::Buffer(&mut out);
            a.read(&sel, into, MemoryOrder::C).expect("read back");
        }
    }
}

fn walk(v: &Value, f: &mut impl FnMut(&Value)) {
    f(v);
    match v {
        Value::Array(items) => items.iter().for_each(|x| walk(x, f)),
        Value::Object(map) => map.values().for_each(|x| walk(x, f)),
        _ => {}
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let dtype = DataType::from_json(&doc["data_type"]).ok();
    // The fill value is one element, which the Python layer (numpy) provides.
    let Ok(fill) = zarrox::alloc::zeroed(dtype.map_or(0, |d| d.size)) else {
        return;
    };
    let store = StoreRef::Rust(Arc::new(MemoryStore::new()));
    if let Ok(a) = ArrayCore::new(store, "a", text, fill, true) {
        let chunk_bytes = doc["chunk_shape"].as_array().and_then(|c| {
            c.iter().try_fold(dtype?.size.max(1), |n, x| {
                n.checked_mul(usize::try_from(x.as_u64()?).ok()?)
            })
        });
        exercise(&a, chunk_bytes);
    }
    let specs: Vec<ChunkSpec> = ["uint16", "string", "bool"]
        .iter()
        .map(|name| {
            let dtype = DataType::from_name(name).expect("a core type");
            ChunkSpec {
                shape: vec![4, 2],
                dtype,
                fill: vec![0; dtype.size],
            }
        })
        .collect();
    walk(&doc, &mut |v| {
        let _ = DataType::from_json(v);
        for spec in &specs {
            let _ = CodecChain::from_json(v, spec.clone());
        }
        if let Ok(encoding) = ChunkKeyEncoding::from_json(v) {
            for coords in [vec![], vec![0], vec![7, 0, 12], vec![u64::MAX, 1]] {
                let key = encoding.encode(&coords);
                assert_eq!(encoding.decode(&key, coords.len()), Some(coords), "{key}");
            }
        }
    });
});
