use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;

use super::*;
use crate::codec::ChunkSpec;
use crate::dtype::DataType;
use crate::error::ErrorKind;
use crate::indexing::{project_dim, DimSelection};
use crate::store::{ByteRange, Generation, MemoryStore, OpenValue};

fn run<T>(f: impl Future<Output = T>) -> T {
    futures::executor::block_on(f)
}

fn chain(shape: &[usize], codecs: serde_json::Value) -> CodecChain {
    let spec = ChunkSpec {
        shape: shape.to_vec(),
        dtype: DataType::from_name("uint16").unwrap(),
        fill: 7u16.to_ne_bytes().to_vec(),
    };
    CodecChain::from_json(&codecs, spec).unwrap()
}

fn zstd_chain(n: usize) -> CodecChain {
    chain(
        &[n],
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]),
    )
}

fn shard_chain(n: usize, inner: usize) -> CodecChain {
    chain(
        &[n],
        json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [inner],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]),
    )
}

/// Tasks reading `n` chunks of `len` elements of a 1-d array, each into its
/// own part of the output.
fn whole_chunks(n: usize, len: usize) -> Vec<ChunkTask> {
    let extent = (n * len) as u64;
    project_dim(
        &DimSelection::Slice {
            start: 0,
            stop: extent,
            step: 1,
        },
        extent,
        len,
    )
    .into_iter()
    .map(|part| {
        let key = format!("c/{}", part.chunk);
        ChunkTask::new(
            key,
            ChunkRegion::from_parts(vec![Arc::new(part)], vec![n * len]),
        )
    })
    .collect()
}

fn as_u16(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect()
}

fn u16s(v: impl IntoIterator<Item = u16>) -> Vec<u8> {
    v.into_iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// A memory store behind a network: every request waits `delay` on the I/O
/// runtime; counts the requests in flight at once.
#[derive(Debug, Default)]
struct SlowStore {
    inner: MemoryStore,
    delay: Duration,
    in_flight: AtomicUsize,
    most: AtomicUsize,
    fail_key: Mutex<Option<String>>,
}

impl SlowStore {
    async fn wait(&self, key: &str) -> Result<()> {
        let now = self.in_flight.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(now, SeqCst);
        tokio::time::sleep(self.delay).await;
        self.in_flight.fetch_sub(1, SeqCst);
        if self.fail_key.lock().unwrap().as_deref() == Some(key) {
            return Err(Error::store(format!("GET slow://{key}: 503 Slow Down")));
        }
        Ok(())
    }
}

struct SlowValue<'a> {
    store: &'a SlowStore,
    key: String,
}

#[async_trait]
impl OpenValue for SlowValue<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        self.store.wait(&self.key).await?;
        self.store.inner.get_ranges(&self.key, ranges).await
    }
}

#[async_trait]
impl Store for SlowStore {
    fn io_mode(&self) -> IoMode {
        IoMode::Concurrent
    }
    fn location(&self, key: &str) -> String {
        format!("slow://{key}")
    }
    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.wait(key).await?;
        self.inner.get(key).await
    }
    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        Ok(Box::new(SlowValue {
            store: self,
            key: key.to_string(),
        }))
    }
    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.wait(key).await?;
        self.inner.set(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.wait(key).await?;
        self.inner.delete(key).await
    }
    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list_prefix(prefix).await
    }
    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        self.inner.list_dir(prefix).await
    }
}

#[test]
fn object_store_requests_in_flight_do_not_depend_on_threads() {
    crate::pool::set_num_threads(2);
    let store = SlowStore {
        delay: Duration::from_millis(30),
        ..SlowStore::default()
    };
    let c = zstd_chain(16);
    let tasks = whole_chunks(48, 16);
    let value = u16s(0..768u16);
    write(&c, &store, &tasks, Input::Fixed(&value), false).unwrap();
    assert!(
        store.most.swap(0, SeqCst) > 8,
        "writes: many requests in flight"
    );
    let mut out = vec![0u8; value.len()];
    let view = OutView::new(&mut out);
    let present = read(&c, &store, &tasks, Output::Fixed(&view)).unwrap();
    assert_eq!(present, vec![true; 48]);
    assert_eq!(out, value);
    assert!(
        store.most.load(SeqCst) > 8,
        "reads: {}",
        store.most.load(SeqCst)
    );
    // An error names the chunk and keeps the store's URL.
    *store.fail_key.lock().unwrap() = Some("c/17".into());
    let view = OutView::new(&mut out);
    let err = read(&c, &store, &tasks, Output::Fixed(&view)).unwrap_err();
    assert_eq!(err.message, "chunk 'c/17': GET slow://c/17: 503 Slow Down");
    crate::pool::set_num_threads(0);
}

#[test]
fn object_store_shards_are_read_in_part() {
    let store = SlowStore {
        delay: Duration::from_millis(1),
        ..SlowStore::default()
    };
    let c = shard_chain(64, 8);
    let all = whole_chunks(1, 64);
    let value = u16s(0..64u16);
    write(&c, &store, &all, Input::Fixed(&value), false).unwrap();
    // Elements 9 and 50: two inner chunks far apart.
    let part = |i: usize| Arc::new(crate::indexing::DimChunk::new(0, vec![i], vec![0], 64));
    let tasks = vec![ChunkTask::new(
        "c/0".into(),
        ChunkRegion::from_parts(vec![part(9)], vec![1]),
    )];
    let mut one = vec![0u8; 2];
    let view = OutView::new(&mut one);
    read(&c, &store, &tasks, Output::Fixed(&view)).unwrap();
    assert_eq!(as_u16(&one), vec![9]);
    let pts = vec![ChunkTask::new(
        "c/0".into(),
        ChunkRegion::Points(vec![(50, 0), (9, 1)]),
    )];
    let mut two = vec![0u8; 4];
    let view = OutView::new(&mut two);
    read(&c, &store, &pts, Output::Fixed(&view)).unwrap();
    assert_eq!(as_u16(&two), vec![50, 9]);
}

#[test]
fn edge_writes_keep_a_shards_inner_chunks_past_the_end() {
    // A 4-element chunk of an array shrunk to 2 elements; the write covers
    // the chunk's part inside the array. As zarr-python 3.4: a lone sharding
    // codec keeps the inner chunks (and cells) past the end, which come back
    // when the array grows; a plain chunk is replaced without being read.
    let edge = || {
        let part = Arc::new(crate::indexing::DimChunk::new(0, vec![0, 1], vec![0, 1], 2));
        vec![ChunkTask::new(
            "c/0".into(),
            ChunkRegion::from_parts(vec![part], vec![2]),
        )]
    };
    let full = whole_chunks(1, 4);
    for (c, kept) in [
        (shard_chain(4, 1), true),
        (shard_chain(4, 2), true),
        (shard_chain(4, 4), true),
        (zstd_chain(4), false),
    ] {
        let store = MemoryStore::new();
        write(&c, &store, &full, Input::Fixed(&u16s([1, 2, 3, 4])), false).unwrap();
        let old = run(store.get("c/0")).unwrap();
        assert_eq!(edge()[0].needs_old(&c), kept);
        assert!(!full[0].needs_old(&c), "a whole-chunk write reads nothing");
        write(&c, &store, &edge(), Input::Fixed(&u16s([9, 9])), false).unwrap();
        let mut out = vec![0u8; 8];
        let view = OutView::new(&mut out);
        read(&c, &store, &full, Output::Fixed(&view)).unwrap();
        let want = if kept { [9, 9, 3, 4] } else { [9, 9, 7, 7] };
        assert_eq!(as_u16(&out), want);
        // A caller-driven write (encode over the old bytes) stores the same.
        let new = encode(&c, &edge(), vec![old], Input::Fixed(&u16s([9, 9])), false).unwrap();
        assert_eq!(new[0], run(store.get("c/0")).unwrap());
    }
}

/// A filesystem store whose opened values let a writer replace the key right
/// after their first read (`next`), or (`vanish`) find the value gone from
/// their second read on.
#[derive(Debug)]
struct RacingStore {
    inner: crate::store::FilesystemStore,
    next: Mutex<Option<Vec<u8>>>,
    vanish: bool,
}

struct RacingValue<'a>(
    Box<dyn OpenValue + 'a>,
    &'a RacingStore,
    String,
    AtomicUsize,
);

#[async_trait]
impl OpenValue for RacingValue<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        if self.1.vanish && self.3.fetch_add(1, SeqCst) > 0 {
            return Ok(None);
        }
        let got = self.0.read_ranges(ranges).await?;
        let next = self.1.next.lock().unwrap().take();
        if let Some(next) = next {
            self.1.inner.set(&self.2, Bytes::from(next)).await?;
        }
        Ok(got)
    }
}

#[async_trait]
impl Store for RacingStore {
    fn location(&self, key: &str) -> String {
        self.inner.location(key)
    }
    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.inner.get(key).await
    }
    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        Ok(Box::new(RacingValue(
            self.inner.open(key)?,
            self,
            key.to_string(),
            AtomicUsize::new(0),
        )))
    }
    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.inner.set(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(key).await
    }
    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list_prefix(prefix).await
    }
    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        self.inner.list_dir(prefix).await
    }
}

#[test]
fn a_shard_rewritten_during_a_read_is_read_as_one_version() {
    let dir = std::env::temp_dir().join(format!("zarrox-racing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = RacingStore {
        inner: crate::store::FilesystemStore::new(&dir),
        next: Mutex::new(None),
        vanish: false,
    };
    let c = shard_chain(8, 2);
    let all = whole_chunks(1, 8);
    write(&c, &store, &all, Input::Fixed(&u16s(0..8u16)), false).unwrap();
    let old_shard = run(store.get("c/0")).unwrap().unwrap();
    write(&c, &store, &all, Input::Fixed(&u16s(100..108u16)), false).unwrap();
    let new_shard = run(store.get("c/0")).unwrap().unwrap();
    run(store.set("c/0", old_shard)).unwrap();
    *store.next.lock().unwrap() = Some(new_shard.to_vec());
    // Elements 1 and 6: the index, then inner chunks 0 and 3.
    let tasks = vec![ChunkTask::new(
        "c/0".into(),
        ChunkRegion::Points(vec![(1, 0), (6, 1)]),
    )];
    let mut out = vec![0u8; 4];
    let view = OutView::new(&mut out);
    read(&c, &store, &tasks, Output::Fixed(&view)).unwrap();
    assert_eq!(as_u16(&out), vec![1, 6], "the old version, whole");
    assert!(store.next.lock().unwrap().is_none(), "the writer ran");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn truncated_shards_and_short_indexes_are_corrupt() {
    let store = MemoryStore::new();
    let c = shard_chain(8, 2);
    let all = whole_chunks(1, 8);
    write(&c, &store, &all, Input::Fixed(&u16s(0..8u16)), false).unwrap();
    let shard = run(store.get("c/0")).unwrap().unwrap();
    let part = vec![ChunkTask::new(
        "c/0".into(),
        ChunkRegion::Points(vec![(1, 0)]),
    )];
    for cut in [shard.len() - 3, 10] {
        run(store.set("c/0", shard.slice(..cut))).unwrap();
        let mut out = vec![0u8; 2];
        let view = OutView::new(&mut out);
        let err = read(&c, &store, &part, Output::Fixed(&view)).unwrap_err();
        assert!(
            matches!(
                err.kind,
                crate::error::ErrorKind::Corrupt | crate::error::ErrorKind::Checksum
            ),
            "cut {cut}: {err}"
        );
        assert!(err.message.starts_with("chunk 'c/0'"), "{err}");
    }
}

#[test]
fn stores_that_cannot_delete_get_the_fill_chunk_instead() {
    let path = std::env::temp_dir().join(format!("zarrox-engine-{}.zip", std::process::id()));
    let store = crate::store::ZipStore::open(&path, "w").unwrap();
    let c = zstd_chain(4);
    let tasks = whole_chunks(2, 4);
    write(
        &c,
        &store,
        &tasks[..1],
        Input::Fixed(&u16s([1, 2, 3, 4])),
        false,
    )
    .unwrap();
    // Chunk 0 exists, chunk 1 does not: all fill writes chunk 0's fill, nothing for chunk 1.
    write(
        &c,
        &store,
        &tasks,
        Input::Scalar(&7u16.to_ne_bytes()),
        false,
    )
    .unwrap();
    assert_eq!(run(store.list_prefix("")).unwrap(), vec!["c/0"]);
    let mut out = vec![0u8; 16];
    let view = OutView::new(&mut out);
    read(&c, &store, &tasks, Output::Fixed(&view)).unwrap();
    assert_eq!(as_u16(&out), vec![7; 8]);
    drop(store);
    std::fs::remove_file(&path).unwrap();
}

/// Inner chunks of shards of 4 inner chunks of 8 uint16 (zstd inside),
/// alone or as the inner chunks of shards of 16 elements (nested).
fn zstd_shard_chains() -> (CodecChain, CodecChain) {
    let le = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let inner = json!([le, {"name": "zstd", "configuration": {"level": 1}}]);
    let flat = json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8], "codecs": inner, "index_codecs": [le]}});
    let nested = json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [16], "codecs": [flat], "index_codecs": [le, {"name": "crc32c"}]}}]);
    (chain(&[32], json!([flat])), chain(&[32], nested))
}

/// A shard of `sh` whose inner chunks hold `first..`, but inner chunk `bad`
/// is `bytes`.
fn forged_shard(
    sh: &dyn crate::codec::PartialCodec,
    first: u16,
    bad: Option<(usize, Vec<u8>)>,
) -> Vec<u8> {
    let len = sh.part_chain().spec().num_elements() as u16;
    let mut chunks: Vec<Option<Bytes>> = (0..sh.num_parts() as u16)
        .map(|i| {
            let start = first + i * len;
            Some(Bytes::from(
                sh.part_chain().encode(u16s(start..start + len)).unwrap(),
            ))
        })
        .collect();
    if let Some((pos, bytes)) = bad {
        chunks[pos] = Some(Bytes::from(bytes));
    }
    sh.assemble(&chunks).unwrap().unwrap()
}

#[test]
fn hostile_inner_chunks_read_in_part_decode_within_their_size() {
    use crate::alloc::tracking::largest_allocation;
    use crate::codec::tests::zstd_frame_claiming;
    let bomb = zstd_frame_claiming(1 << 34);
    let (flat, nested) = zstd_shard_chains();
    let sh = flat.parts().unwrap();
    let flat_shard = forged_shard(sh, 0, Some((1, bomb.clone())));
    // Nested: inner shard 0 holds the bomb as its inner chunk 1 (elements 8..16).
    let outer = nested.parts().unwrap();
    let inner_sh = outer.part_chain().parts().unwrap();
    let nested_shard = forged_shard(
        outer,
        0,
        Some((0, forged_shard(inner_sh, 0, Some((1, bomb))))),
    );
    let point = |i: usize| {
        vec![ChunkTask::new(
            "c/0".into(),
            ChunkRegion::Points(vec![(i, 0)]),
        )]
    };
    for (c, shard, label) in [
        (&flat, flat_shard, "inner chunk 1"),
        (&nested, nested_shard, "inner chunk 0, inner chunk 1"),
    ] {
        let store = MemoryStore::new();
        run(store.set("c/0", Bytes::from(shard.clone()))).unwrap();
        let mut out = vec![0u8; 2];
        let view = OutView::new(&mut out);
        // Element 9 is in the bomb: read from a store and from bytes in hand,
        // the index, then that inner chunk alone.
        let (stored, largest) =
            largest_allocation(|| read(c, &store, &point(9), Output::Fixed(&view)));
        let (held, largest_held) = largest_allocation(|| {
            decode(
                c,
                &point(9),
                vec![Some(Bytes::from(shard.clone()))],
                Output::Fixed(&view),
            )
        });
        for (err, largest) in [
            (stored.unwrap_err(), largest),
            (held.unwrap_err(), largest_held),
        ] {
            assert_eq!(
                err.kind,
                crate::error::ErrorKind::Corrupt,
                "{}",
                err.message
            );
            assert!(
                err.message
                    .starts_with(&format!("chunk 'c/0': {label}: zstd: "))
                    && err.message.contains("17179869184"),
                "{}",
                err.message
            );
            assert!(largest < 1 << 20, "{label}: allocated {largest} bytes");
        }
        // The other inner chunks read; the whole shard not: it holds the bomb.
        for i in [3, 30] {
            let mut one = vec![0u8; 2];
            let view = OutView::new(&mut one);
            read(c, &store, &point(i), Output::Fixed(&view)).unwrap();
            assert_eq!(as_u16(&one), vec![i as u16]);
        }
        let mut all = vec![0u8; 64];
        let view = OutView::new(&mut all);
        let err = read(c, &store, &whole_chunks(1, 32), Output::Fixed(&view)).unwrap_err();
        assert_eq!(
            err.kind,
            crate::error::ErrorKind::Corrupt,
            "{}",
            err.message
        );
    }
}

#[test]
fn a_shard_index_entry_longer_than_an_inner_chunk_can_encode_to_is_not_fetched() {
    let (flat, _) = zstd_shard_chains();
    let sh = flat.parts().unwrap();
    let mut shard = forged_shard(sh, 0, None);
    // Inner chunk 2 claims 2^40 bytes (index at the end, little endian).
    let at = shard.len() - sh.num_parts() * 16 + 2 * 16 + 8;
    shard[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let task = vec![ChunkTask::new(
        "c/0".into(),
        ChunkRegion::Points(vec![(1, 0)]),
    )];
    let mut out = vec![0u8; 2];
    let view = OutView::new(&mut out);
    let err = decode(
        &flat,
        &task,
        vec![Some(Bytes::from(shard))],
        Output::Fixed(&view),
    )
    .unwrap_err();
    assert_eq!(err.kind, crate::error::ErrorKind::Corrupt);
    assert!(
        err.message
            .starts_with("chunk 'c/0': shard index: inner chunk 2 has 1099511627776 bytes"),
        "{}",
        err.message
    );
}

#[test]
fn a_chunk_too_large_to_allocate_is_a_memory_error_naming_it() {
    // 2^62 bytes: more than any address space holds, so refused even where
    // memory is overcommitted.
    let c = chain(
        &[1 << 61],
        json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
    );
    let store = MemoryStore::new();
    let task = vec![ChunkTask::new(
        "c/0".into(),
        ChunkRegion::Points(vec![(5, 0)]),
    )];
    let err = write(&c, &store, &task, Input::Fixed(&u16s([1])), false).unwrap_err();
    assert_eq!(err.kind, crate::error::ErrorKind::Memory);
    assert_eq!(
        err.message,
        format!("chunk 'c/0': cannot allocate {} bytes", 1u64 << 62)
    );
}

#[test]
fn a_shard_read_in_many_batches_is_whole_or_the_fill_value_once_gone() {
    // 16 inner chunks of 64 KiB: batches of at most READ_BATCH_BYTES, read
    // and decoded on the pool in parallel.
    let dir = std::env::temp_dir().join(format!("zarrox-vanishing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut store = RacingStore {
        inner: crate::store::FilesystemStore::new(&dir),
        next: Mutex::new(None),
        vanish: false,
    };
    let inner = 32 * 1024;
    let n = 16 * inner;
    let c = shard_chain(n, inner);
    let all = whole_chunks(1, n);
    let values = u16s((0..n).map(|i| (i % 65_000) as u16));
    write(&c, &store, &all, Input::Fixed(&values), false).unwrap();
    let batches = (n * 2) as u64 / fetch::READ_BATCH_BYTES;
    assert!(batches >= 4, "{batches} batches");
    let mut out = vec![0u8; n * 2];
    let view = OutView::new(&mut out);
    let present = read(&c, &store, &all, Output::Fixed(&view)).unwrap();
    assert_eq!(present, vec![true]);
    assert!(out == values, "every batch in its place");
    // The shard is gone once its index has been read: every inner chunk
    // reads as the fill value, and the chunk as missing.
    store.vanish = true;
    let mut out = vec![0u8; n * 2];
    let view = OutView::new(&mut out);
    let present = read(&c, &store, &all, Output::Fixed(&view)).unwrap();
    assert_eq!(present, vec![false]);
    assert!(as_u16(&out).iter().all(|&v| v == 7), "the fill value");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A write another writer makes into the store's memory.
type Rival = Box<dyn FnOnce(&MemoryStore) + Send>;

/// A memory store where a rival writer commits right after a versioned read,
/// once per queued rival (a write that merges then loses the race).
#[derive(Default)]
struct Interleaved {
    inner: MemoryStore,
    rivals: Mutex<Vec<Rival>>,
    versioned_reads: AtomicUsize,
}

impl std::fmt::Debug for Interleaved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Interleaved")
    }
}

#[async_trait]
impl Store for Interleaved {
    fn location(&self, key: &str) -> String {
        self.inner.location(key)
    }
    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.inner.get(key).await
    }
    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        self.inner.open(key)
    }
    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.inner.set(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(key).await
    }
    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list_prefix(prefix).await
    }
    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        self.inner.list_dir(prefix).await
    }
    async fn conditional_writes(&self) -> Result<bool> {
        Ok(true)
    }
    fn conditional_deletes(&self) -> bool {
        true
    }
    async fn get_versioned(&self, key: &str) -> Result<crate::store::Versioned> {
        self.versioned_reads.fetch_add(1, SeqCst);
        let read = self.inner.get_versioned(key).await;
        let rival = self.rivals.lock().unwrap().pop();
        if let Some(rival) = rival {
            rival(&self.inner);
        }
        read
    }
    async fn set_if(
        &self,
        key: &str,
        value: Bytes,
        expected: &Generation,
    ) -> Result<Option<Generation>> {
        self.inner.set_if(key, value, expected).await
    }
    async fn generation(&self, key: &str) -> Result<Generation> {
        self.inner.generation(key).await
    }
    async fn delete_if(&self, key: &str, expected: &Generation) -> Result<bool> {
        self.inner.delete_if(key, expected).await
    }
}

/// A task writing elements `start..stop` of a one-chunk array of `n` elements.
fn part_of_chunk(n: usize, start: u64, stop: u64) -> ChunkTask {
    let parts = project_dim(
        &DimSelection::Slice {
            start,
            stop,
            step: 1,
        },
        n as u64,
        n,
    );
    let region = ChunkRegion::from_parts(
        parts.into_iter().map(Arc::new).collect(),
        vec![(stop - start) as usize],
    );
    ChunkTask::new("c/0".into(), region)
}

fn read_all(c: &CodecChain, store: &dyn Store, n: usize) -> Vec<u16> {
    let mut out = vec![0u8; 2 * n];
    let view = OutView::new(&mut out);
    read(c, store, &whole_chunks(1, n), Output::Fixed(&view)).unwrap();
    as_u16(&out)
}

#[test]
fn a_merge_that_loses_a_race_merges_again_and_keeps_both_writes() {
    // An inner chunk of a shard, and a part of an unsharded compressed chunk.
    let sharded: fn() -> CodecChain = || shard_chain(8, 2);
    let compressed: fn() -> CodecChain = || zstd_chain(8);
    for make in [sharded, compressed] {
        let c = make();
        let store = Interleaved::default();
        write(
            &c,
            &store,
            &whole_chunks(1, 8),
            Input::Fixed(&u16s(0..8)),
            false,
        )
        .unwrap();
        assert_eq!(
            store.versioned_reads.load(SeqCst),
            0,
            "a whole write reads nothing"
        );
        // Two rivals commit: after the first read and after the second.
        for (start, values) in [(6u64, [106u16, 107]), (4, [104, 105])] {
            store.rivals.lock().unwrap().push(Box::new(move |inner| {
                let c = make();
                let task = part_of_chunk(8, start, start + 2);
                write(&c, inner, &[task], Input::Fixed(&u16s(values)), false).unwrap();
            }));
        }
        let mine = part_of_chunk(8, 0, 2);
        write(&c, &store, &[mine], Input::Fixed(&u16s([100, 101])), false).unwrap();
        assert!(store.rivals.lock().unwrap().is_empty(), "both rivals ran");
        assert_eq!(
            store.versioned_reads.load(SeqCst),
            3,
            "read, lost twice, read again"
        );
        assert_eq!(
            read_all(&c, &store, 8),
            vec![100, 101, 2, 3, 104, 105, 106, 107]
        );
    }
}

#[test]
fn a_merge_that_always_loses_is_a_conflict_error_and_writes_nothing() {
    let c = zstd_chain(8);
    let store = Interleaved::default();
    write(
        &c,
        &store,
        &whole_chunks(1, 8),
        Input::Fixed(&u16s(0..8)),
        false,
    )
    .unwrap();
    for i in 0..commit::MAX_ATTEMPTS {
        store.rivals.lock().unwrap().push(Box::new(move |inner| {
            let c = zstd_chain(8);
            let v = 1000 + i as u16;
            let task = part_of_chunk(8, 7, 8);
            write(&c, inner, &[task], Input::Fixed(&u16s([v])), false).unwrap();
        }));
    }
    let err = write(
        &c,
        &store,
        &[part_of_chunk(8, 0, 1)],
        Input::Fixed(&u16s([9])),
        false,
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict);
    assert!(
        err.message
            .starts_with("chunk 'c/0': 'memory://c/0' was changed by other writers"),
        "{err}"
    );
    let values = read_all(&c, &store, 8);
    assert_eq!(values[0], 0, "nothing of the failed write landed");
}

#[test]
fn a_merge_to_all_fill_deletes_on_condition() {
    let c = zstd_chain(4);
    let store = Interleaved::default();
    write(
        &c,
        &store,
        &whole_chunks(1, 4),
        Input::Fixed(&u16s([7, 7, 1, 7])),
        false,
    )
    .unwrap();
    store.rivals.lock().unwrap().push(Box::new(move |inner| {
        let c = zstd_chain(4);
        write(
            &c,
            inner,
            &[part_of_chunk(4, 0, 1)],
            Input::Fixed(&u16s([5])),
            false,
        )
        .unwrap();
    }));
    // Element 2 back to the fill value (7): the chunk would be all fill, but
    // the rival's element 0 arrived meanwhile, so it stays.
    write(
        &c,
        &store,
        &[part_of_chunk(4, 2, 3)],
        Input::Fixed(&u16s([7])),
        false,
    )
    .unwrap();
    assert_eq!(read_all(&c, &store, 4), vec![5, 7, 7, 7]);
    write(
        &c,
        &store,
        &[part_of_chunk(4, 0, 1)],
        Input::Fixed(&u16s([7])),
        false,
    )
    .unwrap();
    assert_eq!(run(store.get("c/0")).unwrap(), None, "all fill: deleted");
}

/// A memory store on the network whose first `changes` opened values report
/// that they changed while being read (an object store's ETag moved).
#[derive(Debug, Default)]
struct Changing {
    inner: MemoryStore,
    changes: AtomicUsize,
}

struct ChangingValue<'a>(Box<dyn OpenValue + 'a>, &'a Changing);

#[async_trait]
impl OpenValue for ChangingValue<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        let left = self.1.changes.load(SeqCst);
        if left > 0 {
            self.1.changes.store(left - 1, SeqCst);
            return Err(Error::new(
                ErrorKind::Changed,
                "changed while it was being read",
            ));
        }
        self.0.read_ranges(ranges).await
    }
}

#[async_trait]
impl Store for Changing {
    fn io_mode(&self) -> IoMode {
        IoMode::Concurrent
    }
    fn location(&self, key: &str) -> String {
        self.inner.location(key)
    }
    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.inner.get(key).await
    }
    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        Ok(Box::new(ChangingValue(self.inner.open(key)?, self)))
    }
    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.inner.set(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(key).await
    }
    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list_prefix(prefix).await
    }
    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        self.inner.list_dir(prefix).await
    }
}

#[test]
fn a_shard_that_changes_while_it_is_read_is_read_again() {
    let c = shard_chain(8, 2);
    let store = Changing::default();
    write(
        &c,
        &store,
        &whole_chunks(1, 8),
        Input::Fixed(&u16s(0..8)),
        false,
    )
    .unwrap();
    let tasks = vec![ChunkTask::new(
        "c/0".into(),
        ChunkRegion::Points(vec![(1, 0), (6, 1)]),
    )];
    store.changes.store(3, SeqCst);
    let mut out = vec![0u8; 4];
    let view = OutView::new(&mut out);
    read(&c, &store, &tasks, Output::Fixed(&view)).unwrap();
    assert_eq!(as_u16(&out), vec![1, 6]);
    // Two tries by range, then the whole shard in one request (its values
    // unchanged here: the store only says it changed).
    assert_eq!(store.changes.load(SeqCst), 1);
    // One that keeps changing is still read: whole, after the tries by range.
    store.changes.store(1000, SeqCst);
    let mut again = vec![0u8; 4];
    let view = OutView::new(&mut again);
    read(&c, &store, &tasks, Output::Fixed(&view)).unwrap();
    assert_eq!(as_u16(&again), vec![1, 6]);
    assert_eq!(store.changes.load(SeqCst), 1000 - 2);
}

/// A [`Versioning`] store over memory on the network whose values a rival
/// rewrites after every range read of an opened value: with version `k`
/// every element of the shard is `k`. The reader's map is then always of an
/// older version than the parts it reads next.
struct Rewriting {
    versioning: Versioning,
    /// The encoded shard of each version (`versions[k - 1]`: every element
    /// `100 + k`).
    versions: Vec<Bytes>,
    version: AtomicUsize,
    gets: AtomicUsize,
    /// The coalescing gap the store says it has (what makes a shard "small").
    gap: u64,
}

impl std::fmt::Debug for Rewriting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rewriting")
    }
}

impl Rewriting {
    fn new(gap: u64) -> Self {
        let scratch = MemoryStore::default();
        let c = shard_chain(64, 8);
        let all = whole_chunks(1, 64);
        let versions = (1..=32u16)
            .map(|k| {
                write(
                    &c,
                    &scratch,
                    &all,
                    Input::Fixed(&u16s([100 + k; 64])),
                    false,
                )
                .unwrap();
                run(scratch.get("c/0")).unwrap().unwrap()
            })
            .collect();
        Rewriting {
            versioning: Versioning {
                inner: Box::new(MemoryStore::default()),
                concurrent: true,
                reads: AtomicUsize::new(0),
            },
            versions,
            version: AtomicUsize::new(0),
            gets: AtomicUsize::new(0),
            gap,
        }
    }

    /// Store the next version of `c/0` (64 elements in inner chunks of 8).
    async fn rewrite(&self) {
        let k = self.version.fetch_add(1, SeqCst) % self.versions.len();
        let next = self.versions[k].clone();
        self.versioning.inner.set("c/0", next).await.unwrap();
    }
}

struct RewritingValue<'a>(Box<dyn OpenValue + 'a>, &'a Rewriting);

#[async_trait]
impl OpenValue for RewritingValue<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        let read = self.0.read_ranges(ranges).await;
        self.1.rewrite().await;
        read
    }
    fn generation(&self) -> Option<Generation> {
        self.0.generation()
    }
    async fn pin(&self, expected: &Generation) -> Result<bool> {
        self.0.pin(expected).await
    }
}

#[async_trait]
impl Store for Rewriting {
    fn io_mode(&self) -> IoMode {
        IoMode::Concurrent
    }
    fn coalesce_gap(&self) -> u64 {
        self.gap
    }
    fn location(&self, key: &str) -> String {
        // Its own: the index cache is the process's, keyed by location.
        format!("rewriting-{:p}://{key}", self)
    }
    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.gets.fetch_add(1, SeqCst);
        self.versioning.get(key).await
    }
    async fn get_versioned(&self, key: &str) -> Result<crate::store::Versioned> {
        self.gets.fetch_add(1, SeqCst);
        self.versioning.inner.get_versioned(key).await
    }
    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        Ok(Box::new(RewritingValue(self.versioning.open(key)?, self)))
    }
    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.versioning.set(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.versioning.delete(key).await
    }
    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.versioning.list_prefix(prefix).await
    }
    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        self.versioning.list_dir(prefix).await
    }
    async fn generation(&self, key: &str) -> Result<Generation> {
        self.versioning.inner.generation(key).await
    }
}

#[test]
fn a_shard_rewritten_between_every_two_requests_is_read_whole_at_one_version() {
    // Inner chunks 1, 3 and 6: the map, then three parts by range.
    let tasks = vec![ChunkTask::new(
        "c/0".into(),
        ChunkRegion::Points(vec![(9, 0), (30, 1), (50, 2)]),
    )];
    let read_once = |store: &Rewriting| {
        let mut out = vec![0u8; 6];
        let view = OutView::new(&mut out);
        let c = shard_chain(64, 8);
        let reads = store.versioning.reads.load(SeqCst);
        let gets = store.gets.load(SeqCst);
        let present = read(&c, store, &tasks, Output::Fixed(&view)).unwrap();
        assert_eq!(present, vec![true]);
        let values = as_u16(&out);
        assert!(
            values.iter().all(|v| *v == values[0]),
            "a mix of versions: {values:?}"
        );
        (
            values[0],
            store.versioning.reads.load(SeqCst) - reads,
            store.gets.load(SeqCst) - gets,
        )
    };
    // A large shard (by the store's gap): two tries by range (the map, the
    // parts refused; the second try's map from the index cache, its parts
    // refused), then one request for the whole shard.
    let large = Rewriting::new(0);
    run(large.rewrite());
    let (value, reads, gets) = read_once(&large);
    assert_eq!((reads, gets), (3, 1));
    // Written after the read's last range request, before its whole read:
    // the whole read sees the newest version.
    assert_eq!(value as usize - 100, large.version.load(SeqCst));
    // A small one: read whole at the first change.
    let small = Rewriting::new(64 * 1024);
    run(small.rewrite());
    let (value, reads, gets) = read_once(&small);
    assert_eq!((reads, gets), (2, 1));
    assert_eq!(value as usize - 100, small.version.load(SeqCst));
    // Through the data cache (its parts then remembered at the version read
    // whole) the same, and a second read from the cache agrees with the store.
    let cache = crate::cache::DataCache::own(1 << 20, Some(crate::cache::Recheck::Always));
    let c = shard_chain(64, 8);
    for _ in 0..3 {
        let mut out = vec![0u8; 6];
        let view = OutView::new(&mut out);
        let opened = std::time::Instant::now();
        read_since(&c, &large, &tasks, Output::Fixed(&view), opened, &cache).unwrap();
        let values = as_u16(&out);
        assert!(
            values.iter().all(|v| *v == values[0]),
            "a mix of versions: {values:?}"
        );
    }
}

/// A store that counts the range reads of its opened values and keeps its
/// values' versions as an object store does: an opened value pins the
/// version of its first answer (or the one it is pinned to), and a read of
/// another version (or of a value gone since) is [`ErrorKind::Changed`].
/// `local`: it answers at once and its opened values are local files.
#[derive(Debug)]
struct Versioning {
    inner: Box<dyn Store>,
    concurrent: bool,
    reads: AtomicUsize,
}

struct VersioningValue<'a> {
    store: &'a Versioning,
    key: String,
    /// A local file's opened value (pins by `fstat`), or none.
    file: Option<Box<dyn OpenValue + 'a>>,
    pinned: Mutex<Option<Generation>>,
}

#[async_trait]
impl OpenValue for VersioningValue<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        self.store.reads.fetch_add(1, SeqCst);
        if let Some(f) = &self.file {
            return f.read_ranges(ranges).await;
        }
        let now = self.store.inner.get_versioned(&self.key).await?;
        let mut pinned = self.pinned.lock().unwrap();
        match &*pinned {
            Some(g) if *g != now.generation => {
                return Err(Error::new(ErrorKind::Changed, "412 Precondition Failed"))
            }
            _ => *pinned = Some(now.generation.clone()),
        }
        now.value
            .map(|v| crate::store::slice_ranges(&v, ranges))
            .transpose()
    }
    fn generation(&self) -> Option<Generation> {
        match &self.file {
            Some(f) => f.generation(),
            None => self.pinned.lock().unwrap().clone(),
        }
    }
    async fn pin(&self, expected: &Generation) -> Result<bool> {
        if let Some(f) = &self.file {
            return f.pin(expected).await;
        }
        let mut pinned = self.pinned.lock().unwrap();
        Ok(match &*pinned {
            None => {
                *pinned = Some(expected.clone());
                true
            }
            Some(g) => g == expected,
        })
    }
}

#[async_trait]
impl Store for Versioning {
    fn io_mode(&self) -> IoMode {
        if self.concurrent {
            IoMode::Concurrent
        } else {
            IoMode::Blocking
        }
    }
    fn location(&self, key: &str) -> String {
        self.inner.location(key)
    }
    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.inner.get(key).await
    }
    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        Ok(Box::new(VersioningValue {
            store: self,
            key: key.to_string(),
            file: (!self.concurrent)
                .then(|| self.inner.open(key))
                .transpose()?,
            pinned: Mutex::new(None),
        }))
    }
    async fn get_versioned(&self, key: &str) -> Result<crate::store::Versioned> {
        self.inner.get_versioned(key).await
    }
    async fn generation(&self, key: &str) -> Result<Generation> {
        self.inner.generation(key).await
    }
    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.inner.set(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(key).await
    }
    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list_prefix(prefix).await
    }
    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        self.inner.list_dir(prefix).await
    }
}

#[test]
fn a_cached_shard_index_makes_one_read_per_inner_chunk_and_is_never_stale() {
    let dir = std::env::temp_dir().join(format!("zarrox-index-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let stores = [
        Versioning {
            inner: Box::new(crate::store::FilesystemStore::new(&dir)),
            concurrent: false,
            reads: AtomicUsize::new(0),
        },
        Versioning {
            inner: Box::new(MemoryStore::default()),
            concurrent: true,
            reads: AtomicUsize::new(0),
        },
    ];
    for store in &stores {
        let c = shard_chain(64, 8);
        let all = whole_chunks(1, 64);
        write(&c, store, &all, Input::Fixed(&u16s(0..64u16)), false).unwrap();
        let element = |i: usize| -> (u16, usize) {
            let part = Arc::new(crate::indexing::DimChunk::new(0, vec![i], vec![0], 64));
            let tasks = vec![ChunkTask::new(
                "c/0".into(),
                ChunkRegion::from_parts(vec![part], vec![1]),
            )];
            let mut one = vec![0u8; 2];
            let view = OutView::new(&mut one);
            let before = store.reads.load(SeqCst);
            read(&c, store, &tasks, Output::Fixed(&view)).unwrap();
            (as_u16(&one)[0], store.reads.load(SeqCst) - before)
        };
        let name = format!("concurrent: {}", store.concurrent);
        assert_eq!(
            element(9),
            (9, 2),
            "{name}: the index, then the inner chunk"
        );
        assert_eq!(element(50), (50, 1), "{name}: the inner chunk only");
        assert_eq!(element(10), (10, 1), "{name}");
        // Rewritten behind the cache: the new values at once.
        write(&c, store, &all, Input::Fixed(&u16s(100..164u16)), false).unwrap();
        let (value, reads) = element(50);
        assert_eq!(value, 150, "{name}: never a stale index");
        // A local file's fstat finds the change before reading; an object's
        // conditional read fails (412), and the shard, small, is read whole
        // (not counted here: no opened value reads it), its index cached.
        let expected = if store.concurrent { 1 } else { 2 };
        assert_eq!(reads, expected, "{name}");
        assert_eq!(element(51), (151, 1), "{name}: cached again");
        // Gone behind the cache: the fill value.
        run(store.delete("c/0")).unwrap();
        assert_eq!(
            element(52).0,
            7,
            "{name}: a deleted shard is the fill value"
        );
    }
    let stats = crate::cache::part_map_stats();
    assert!(stats.hits >= 6 && stats.bytes <= stats.limit, "{stats:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
