//! Shards: the first byte picks a sharding chain of chains.json's "v3" group,
//! the rest is the shard. Its index is decoded (with and without the shard's
//! size), then inner chunks are read the three ways the array reads them
//! (whole shard, ranges by index, batched ranges) and each decoded.
#![no_main]

use zarrox::store::memory::MemoryStore;
use zarrox::store::Store;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&which, shard)) = data.split_first() else {
        return;
    };
    let sharded: Vec<_> = zarrox_fuzz::entries("v3")
        .iter()
        .filter(|e| e.chain.sharding().is_some())
        .collect();
    let entry = sharded[usize::from(which) % sharded.len()];
    let sh = entry.chain.sharding().expect("a sharding chain");
    zarrox_fuzz::check_decode(entry, shard);
    let n = sh.num_inner();
    if let Ok(index) = sh.read_index(shard) {
        assert_eq!(index.len(), n);
        for r in index.iter().flatten() {
            assert!(r.start <= r.end && r.end <= shard.len() as u64);
        }
    }
    let store = MemoryStore::new();
    store.set("s", shard).expect("memory store");
    let decode = |bytes: Option<Vec<u8>>| {
        if let Some(b) = bytes {
            let _ = sh.inner().decode(b);
        }
    };
    for wanted in [vec![0], vec![n - 1, 0], (0..n).collect::<Vec<_>>()] {
        if let Ok(Some(chunks)) = sh.fetch(&store, "s", &wanted) {
            for i in 0..wanted.len() {
                if let Ok(bytes) = chunks.take(i) {
                    decode(bytes);
                }
            }
        }
        let _ = sh.read_inner_batched(&store, "s", &wanted, 16, |_, bytes| {
            decode(bytes);
            Ok(())
        });
    }
});
