//! Shards: the first byte picks a sharding chain of chains.json's "v3" group,
//! the rest is the shard. Its index is decoded (with and without the shard's
//! size), then regions of it are read the ways the engine reads them: from
//! bytes in hand and from a store that answers at once (index first, then
//! only the inner chunks a region touches, coalesced and batched; nested
//! shards in part as well). Whenever the whole shard decodes, every region
//! read in part must succeed and hold the same elements.
#![no_main]

use zarrox::codec::CodecChain;
use zarrox::engine::{self, ChunkRegion, ChunkTask, OutView, Output};
use zarrox::indexing::DimSelection;
use zarrox::store::{now, Bytes, MemoryStore, Store};

/// A region of a chunk of `shape` and the flat chunk index of each element
/// of its (C-order) buffer.
fn regions(shape: &[usize]) -> Vec<(ChunkRegion, Vec<usize>)> {
    let n: usize = shape.iter().product();
    let boxed = |ranges: Vec<(usize, usize)>| {
        let chunk: Vec<DimSelection> = ranges
            .iter()
            .map(|&(a, b)| DimSelection::Slice {
                start: a as u64,
                stop: b as u64,
                step: 1,
            })
            .collect();
        let buffer_shape: Vec<usize> = ranges.iter().map(|&(a, b)| b - a).collect();
        let buffer: Vec<Option<DimSelection>> = buffer_shape
            .iter()
            .map(|&len| {
                Some(DimSelection::Slice {
                    start: 0,
                    stop: len as u64,
                    step: 1,
                })
            })
            .collect();
        let region = ChunkRegion::boxed(&chunk, &buffer, shape, &buffer_shape).expect("a box");
        // The chunk's flat index of every buffer element, in buffer order.
        let mut flat = vec![0usize];
        for (d, &(a, b)) in ranges.iter().enumerate() {
            let stride: usize = shape[d + 1..].iter().product();
            flat = flat
                .iter()
                .flat_map(|&f| (a..b).map(move |i| f + i * stride))
                .collect();
        }
        (region, flat)
    };
    let first = boxed(shape.iter().map(|_| (0, 1)).collect());
    let corner = boxed(shape.iter().map(|&s| (s / 2, s)).collect());
    let whole = boxed(shape.iter().map(|&s| (0, s)).collect());
    let ends = [n - 1, 0];
    let points = ChunkRegion::points(&ends.map(|i| i as u64), Some(&[0, 1]), shape, &[ends.len()])
        .expect("points");
    vec![first, corner, whole, (points, ends.to_vec())]
}

/// Read `region` of the chunk with `read`; the output, or the error.
fn read_region(
    elem: usize,
    region: &ChunkRegion,
    len: usize,
    read: impl FnOnce(&[ChunkTask], Output<'_>) -> zarrox::error::Result<()>,
) -> zarrox::error::Result<Vec<u8>> {
    let mut out = vec![0u8; len * elem];
    let view = OutView::new(&mut out);
    let task = ChunkTask::new("s".to_string(), region.clone());
    read(&[task], Output::Fixed(&view))?;
    Ok(out)
}

fn check_reads(chain: &CodecChain, shard: &[u8], whole: Option<&[u8]>) {
    let spec = chain.spec();
    let elem = spec.dtype.size;
    let store = MemoryStore::new();
    now(store.set("s", Bytes::copy_from_slice(shard)))
        .expect("a memory store answers at once")
        .expect("a memory store takes any value");
    for (region, flat) in regions(&spec.shape) {
        let held = read_region(elem, &region, flat.len(), |tasks, out| {
            engine::decode(chain, tasks, vec![Some(Bytes::copy_from_slice(shard))], out)
        });
        let stored = read_region(elem, &region, flat.len(), |tasks, out| {
            engine::read(chain, &store, tasks, out).map(|_| ())
        });
        let Some(whole) = whole else {
            continue;
        };
        let expected: Vec<u8> = flat
            .iter()
            .flat_map(|&i| whole[i * elem..(i + 1) * elem].iter().copied())
            .collect();
        for (how, got) in [("held", held), ("stored", stored)] {
            match got {
                Ok(got) => assert!(got == expected, "{how} {region:?}: other elements"),
                Err(e) => panic!("{how} {region:?}: the whole shard decodes, the region not: {e}"),
            }
        }
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&which, shard)) = data.split_first() else {
        return;
    };
    let sharded: Vec<_> = zarrox_fuzz::entries("v3")
        .iter()
        .filter(|e| e.chain.parts().is_some())
        .collect();
    let entry = sharded[usize::from(which) % sharded.len()];
    let sh = entry.chain.parts().expect("a sharding chain");
    zarrox_fuzz::check_decode(entry, shard);
    let n = sh.num_parts();
    if let Ok(index) = sh.map_of(shard) {
        assert_eq!(index.len(), n);
        for r in index.iter().flatten() {
            assert!(r.start <= r.end && r.end <= shard.len() as u64);
        }
    }
    // The index alone, as a range read finds it (the shard's size unknown).
    if let Ok((start, end)) = sh.map_range().resolve(shard.len() as u64) {
        let bytes = shard[start as usize..end as usize].to_vec();
        if let Ok(index) = sh.decode_map(bytes, None) {
            assert_eq!(index.len(), n);
        }
    }
    let whole = entry.chain.decode(shard.to_vec()).ok();
    check_reads(&entry.chain, shard, whole.as_deref());
});
