use super::*;
use crate::engine::session::ReadSession;
use crate::engine::{OutView, Output};
use crate::indexing::DimSelection;
use crate::store::{ByteRange, MemoryStore, OpenValue};
use async_trait::async_trait;
use bytes::Bytes;
use serde_json::json;

fn run<T>(f: impl std::future::Future<Output = T>) -> T {
    futures::executor::block_on(f)
}

fn keys(store: &dyn Store, prefix: &str) -> Vec<String> {
    run(store.list_prefix(prefix)).unwrap()
}

fn put(store: &dyn Store, key: &str, value: &[u8]) {
    run(store.set(key, Bytes::copy_from_slice(value))).unwrap()
}

fn array_of(store: Arc<dyn Store>, meta: Value, fill: Vec<u8>) -> ArrayCore {
    ArrayCore::new(StoreRef::Rust(store), "a", &meta.to_string(), fill, false).unwrap()
}

fn array(store: Arc<dyn Store>, shape: &[u64], chunks: &[usize], codecs: Value) -> ArrayCore {
    let meta = json!({
        "shape": shape, "chunk_shape": chunks, "data_type": "uint16",
        "codecs": codecs, "chunk_key_encoding": {"name": "default", "separator": "/"}
    });
    array_of(store, meta, 7u16.to_ne_bytes().to_vec())
}

fn sl(start: u64, stop: u64) -> DimSelection {
    DimSelection::Slice {
        start,
        stop,
        step: 1,
    }
}

fn all(shape: &[u64]) -> Selection {
    Selection::Orthogonal(shape.iter().map(|&s| sl(0, s)).collect())
}

fn as_u16(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect()
}

fn u16s(v: impl IntoIterator<Item = u16>) -> Vec<u8> {
    v.into_iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// Reads and writes of C-ordered buffers and lists, from and to a store Rust
/// reads and writes.
trait Io {
    fn read_c(&self, sel: &Selection, out: &mut [u8]) -> Result<()>;
    fn read_list(&self, sel: &Selection) -> Result<Vec<Vec<u8>>>;
    fn write_c(&self, sel: &Selection, value: Input<'_>) -> Result<()>;
}

impl Io for ArrayCore {
    fn read_c(&self, sel: &Selection, out: &mut [u8]) -> Result<()> {
        match self.read(sel, Destination::Buffer(out), MemoryOrder::C)? {
            ReadDone::Present(_) => Ok(()),
            _ => Err(Error::value("a session is needed")),
        }
    }

    fn read_list(&self, sel: &Selection) -> Result<Vec<Vec<u8>>> {
        match self.read(sel, Destination::List, MemoryOrder::C)? {
            ReadDone::Values(values, _) => Ok(values),
            _ => Err(Error::value("a session is needed")),
        }
    }

    fn write_c(&self, sel: &Selection, value: Input<'_>) -> Result<()> {
        match self.write(sel, value, MemoryOrder::C)? {
            WriteDone::Written => Ok(()),
            _ => Err(Error::value("the caller writes this store")),
        }
    }
}

/// The session reading `sel` of an array whose store the caller reads, into
/// a buffer of `nbytes`.
fn session(a: &ArrayCore, sel: &Selection, nbytes: usize) -> ReadSession {
    match a.read(
        sel,
        Destination::Buffer(&mut vec![0; nbytes]),
        MemoryOrder::C,
    ) {
        Ok(ReadDone::Session(session)) => session,
        _ => panic!("a read of a store the caller reads is a session"),
    }
}

#[test]
fn write_read_round_trip_with_edges_and_fill() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]);
    let a = array(Arc::clone(&store), &[10, 7], &[4, 3], codecs);
    let mut out = vec![0u8; 140];
    a.read_c(&all(&[10, 7]), &mut out).unwrap();
    assert!(as_u16(&out).iter().all(|&v| v == 7));
    let value = u16s(0..70);
    a.write_c(&all(&[10, 7]), Input::Fixed(&value)).unwrap();
    assert_eq!(keys(&*store, "a/c/").len(), 9);
    a.read_c(&all(&[10, 7]), &mut out).unwrap();
    assert_eq!(out, value);
    // Strided read of rows 1,4,7 and column 5.
    let sel = Selection::Orthogonal(vec![
        DimSelection::Slice {
            start: 1,
            stop: 10,
            step: 3,
        },
        sl(5, 6),
    ]);
    let mut part = vec![0u8; 6];
    a.read_c(&sel, &mut part).unwrap();
    assert_eq!(as_u16(&part), vec![12, 33, 54]);
    // Writing fill value everywhere deletes the chunks.
    let fill = u16s(std::iter::repeat_n(7, 70));
    a.write_c(&all(&[10, 7]), Input::Fixed(&fill)).unwrap();
    assert!(keys(&*store, "a/c/").is_empty());
}

#[test]
fn partial_write_keeps_the_rest_of_the_chunk() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = array(
        store,
        &[6],
        &[4],
        json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
    );
    let sel = Selection::Orthogonal(vec![DimSelection::Indices(vec![5, 1])]);
    a.write_c(&sel, Input::Fixed(&[1, 0, 2, 0])).unwrap();
    let mut out = vec![0u8; 12];
    a.read_c(&all(&[6]), &mut out).unwrap();
    assert_eq!(
        as_u16(&out),
        vec![
            7,
            u16::from_ne_bytes([2, 0]),
            7,
            7,
            7,
            u16::from_ne_bytes([1, 0])
        ]
    );
}

#[test]
fn errors_name_array_and_chunk() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = array(
        Arc::clone(&store),
        &[4],
        &[4],
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, "crc32c"]),
    );
    put(&*store, "a/c/0", b"garbage!!");
    let mut out = vec![0u8; 8];
    let err = a.read_c(&all(&[4]), &mut out).unwrap_err();
    assert_eq!(err.kind, crate::error::ErrorKind::Checksum);
    assert!(
        err.message.starts_with("array 'a', chunk 'a/c/0': crc32c"),
        "{}",
        err.message
    );
    let mut wrong = vec![0u8; 7];
    assert_eq!(
        a.read_c(&all(&[4]), &mut wrong).unwrap_err().kind,
        crate::error::ErrorKind::Value
    );
}

#[test]
fn zero_dimensional() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = array(
        Arc::clone(&store),
        &[],
        &[],
        json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
    );
    a.write_c(
        &Selection::Orthogonal(vec![]),
        Input::Fixed(&9u16.to_ne_bytes()),
    )
    .unwrap();
    assert!(run(store.exists("a/c")).unwrap());
    let mut out = vec![0u8; 2];
    a.read_c(&Selection::Orthogonal(vec![]), &mut out).unwrap();
    assert_eq!(as_u16(&out), vec![9]);
}

/// A memory store that counts read requests and the bytes they return.
#[derive(Debug, Default)]
struct CountingStore {
    inner: MemoryStore,
    counts: Arc<ReadCounts>,
}

#[derive(Debug, Default)]
struct ReadCounts {
    requests: std::sync::atomic::AtomicUsize,
    bytes: std::sync::atomic::AtomicUsize,
}

impl ReadCounts {
    fn count(&self, requests: usize, bytes: usize) {
        use std::sync::atomic::Ordering::SeqCst;
        self.requests.fetch_add(requests, SeqCst);
        self.bytes.fetch_add(bytes, SeqCst);
    }
}

impl CountingStore {
    fn take(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::SeqCst;
        let c = &self.counts;
        (c.requests.swap(0, SeqCst), c.bytes.swap(0, SeqCst))
    }
}

/// An opened value whose range reads are counted, one request per range.
struct CountingValue<'a>(Box<dyn OpenValue + 'a>, Arc<ReadCounts>);

#[async_trait]
impl OpenValue for CountingValue<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        let v = self.0.read_ranges(ranges).await?;
        let bytes = v.iter().flatten().map(Bytes::len).sum();
        self.1.count(ranges.len(), bytes);
        Ok(v)
    }
}

#[async_trait]
impl Store for CountingStore {
    fn location(&self, key: &str) -> String {
        self.inner.location(key)
    }
    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        let v = self.inner.get(key).await?;
        self.counts.count(1, v.as_ref().map_or(0, Bytes::len));
        Ok(v)
    }
    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        Ok(Box::new(CountingValue(
            self.inner.open(key)?,
            Arc::clone(&self.counts),
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

fn sharded_codecs(inner: &[usize], location: &str) -> Value {
    json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": location}}])
}

fn sharded(
    store: Arc<dyn Store>,
    shape: &[u64],
    shard: &[usize],
    inner: &[usize],
    location: &str,
) -> ArrayCore {
    array(store, shape, shard, sharded_codecs(inner, location))
}

#[test]
fn sharded_round_trip_with_edge_shards() {
    for location in ["start", "end"] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let a = sharded(Arc::clone(&store), &[10, 9], &[4, 6], &[2, 3], location);
        let value = u16s((0..90u16).map(|v| v + 100));
        a.write_c(&all(&[10, 9]), Input::Fixed(&value)).unwrap();
        assert_eq!(keys(&*store, "a/c/").len(), 6); // 3 x 2 shards
        let mut out = vec![0u8; 180];
        a.read_c(&all(&[10, 9]), &mut out).unwrap();
        assert_eq!(out, value);
        // Partial write into one inner chunk keeps its neighbours.
        let sel = Selection::Orthogonal(vec![sl(5, 6), sl(4, 5)]);
        a.write_c(&sel, Input::Fixed(&1u16.to_ne_bytes())).unwrap();
        a.read_c(&all(&[10, 9]), &mut out).unwrap();
        let got = as_u16(&out);
        for (i, v) in got.iter().enumerate() {
            let want = if i == 5 * 9 + 4 { 1 } else { i as u16 + 100 };
            assert_eq!(*v, want, "element {i} ({location})");
        }
    }
}

#[test]
fn one_inner_chunk_reads_index_and_that_chunk_only() {
    let counting = Arc::new(CountingStore::default());
    let store: Arc<dyn Store> = counting.clone();
    // One 64x64 shard of 8x8 inner chunks (64 of them), raw uint16.
    let a = sharded(Arc::clone(&store), &[64, 64], &[64, 64], &[8, 8], "end");
    let value = u16s(0..4096u16);
    a.write_c(&all(&[64, 64]), Input::Fixed(&value)).unwrap();
    counting.take();
    let sel = Selection::Orthogonal(vec![sl(17, 20), sl(40, 41)]);
    let mut out = vec![0u8; 6];
    a.read_c(&sel, &mut out).unwrap();
    assert_eq!(as_u16(&out), vec![17 * 64 + 40, 18 * 64 + 40, 19 * 64 + 40]);
    let index_size = 64 * 16 + 4;
    let chunk_size = 8 * 8 * 2;
    assert_eq!(counting.take(), (2, index_size + chunk_size));
    // The whole shard from a store that answers at once: its index, then its
    // inner chunks in batches of up to 256 KiB (here one).
    let mut whole = vec![0u8; 8192];
    a.read_c(&all(&[64, 64]), &mut whole).unwrap();
    assert_eq!(whole, value);
    let (calls, bytes) = counting.take();
    assert_eq!((calls, bytes), (2, index_size + 64 * chunk_size));
    // Two inner chunks next to each other in the shard (zarr-python's Morton order puts
    // (1, 0) right after (0, 0)): the index and those two, coalesced.
    let sel = Selection::Orthogonal(vec![sl(0, 16), sl(0, 8)]);
    let mut two = vec![0u8; 256];
    a.read_c(&sel, &mut two).unwrap();
    assert_eq!(counting.take(), (2, index_size + 2 * chunk_size));
}

#[test]
fn shrunk_arrays_keep_shard_cells_beyond_their_shape_as_zarr_python() {
    // zarr-python 3.4: a write over a shard's part inside a shrunk array keeps
    // the inner chunks, and cells, past the new end (they come back when the
    // array grows), while an unsharded edge chunk is replaced without reading
    // it (its cells past the end become the fill value).
    for inner in [1usize, 2, 4] {
        let counting = Arc::new(CountingStore::default());
        let store: Arc<dyn Store> = counting.clone();
        sharded(Arc::clone(&store), &[4], &[4], &[inner], "end")
            .write_c(&all(&[4]), Input::Fixed(&u16s([1, 2, 3, 4])))
            .unwrap();
        assert_eq!(
            counting.take().0,
            0,
            "a write over the whole shard reads nothing"
        );
        sharded(Arc::clone(&store), &[2], &[4], &[inner], "end")
            .write_c(&all(&[2]), Input::Fixed(&u16s([9, 9])))
            .unwrap();
        assert_eq!(counting.take().0, 1, "the edge shard is read first");
        let mut out = vec![0u8; 8];
        sharded(Arc::clone(&store), &[4], &[4], &[inner], "end")
            .read_c(&all(&[4]), &mut out)
            .unwrap();
        assert_eq!(as_u16(&out), vec![9, 9, 3, 4], "inner chunks of {inner}");
    }
    let counting = Arc::new(CountingStore::default());
    let store: Arc<dyn Store> = counting.clone();
    let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    array(Arc::clone(&store), &[4], &[4], codecs.clone())
        .write_c(&all(&[4]), Input::Fixed(&u16s([1, 2, 3, 4])))
        .unwrap();
    array(Arc::clone(&store), &[2], &[4], codecs.clone())
        .write_c(&all(&[2]), Input::Fixed(&u16s([9, 9])))
        .unwrap();
    assert_eq!(counting.take().0, 0, "a covered edge chunk is not read");
    let mut out = vec![0u8; 8];
    array(Arc::clone(&store), &[4], &[4], codecs)
        .read_c(&all(&[4]), &mut out)
        .unwrap();
    assert_eq!(as_u16(&out), vec![9, 9, 7, 7]);
}

#[test]
fn missing_shards_and_empty_inner_chunks_read_as_fill() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = sharded(Arc::clone(&store), &[8], &[4], &[2], "end");
    let first = Selection::Orthogonal(vec![sl(0, 1)]);
    a.write_c(&first, Input::Fixed(&3u16.to_ne_bytes()))
        .unwrap();
    assert_eq!(keys(&*store, "a/"), vec!["a/c/0"]);
    let mut out = vec![0u8; 16];
    a.read_c(&all(&[8]), &mut out).unwrap();
    assert_eq!(as_u16(&out), vec![3, 7, 7, 7, 7, 7, 7, 7]);
    // Part of the shard: its index says inner chunk 1 is empty.
    let mut part = vec![0u8; 4];
    a.read_c(&Selection::Orthogonal(vec![sl(1, 3)]), &mut part)
        .unwrap();
    assert_eq!(as_u16(&part), vec![7, 7]);
    // Writing the fill value back empties the shard, which is then deleted.
    a.write_c(&first, Input::Fixed(&7u16.to_ne_bytes()))
        .unwrap();
    assert!(keys(&*store, "a/").is_empty());
}

#[test]
fn point_selections_on_plain_and_sharded_arrays() {
    let plain_codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    for sharded_layout in [false, true] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let a = if sharded_layout {
            sharded(Arc::clone(&store), &[6, 5], &[4, 4], &[2, 2], "end")
        } else {
            array(Arc::clone(&store), &[6, 5], &[2, 2], plain_codecs.clone())
        };
        let value = u16s(0..30u16);
        a.write_c(&all(&[6, 5]), Input::Fixed(&value)).unwrap();
        // (5,4), (0,0), (3,1), (5,4)
        let points = Selection::Points(vec![5, 4, 0, 0, 3, 1, 5, 4]);
        let mut out = vec![0u8; 8];
        a.read_c(&points, &mut out).unwrap();
        assert_eq!(as_u16(&out), vec![29, 0, 16, 29]);
        // Repeated points: the last value wins, as in numpy.
        let new = u16s([100u16, 101, 102, 103]);
        a.write_c(&points, Input::Fixed(&new)).unwrap();
        let mut whole = vec![0u8; 60];
        a.read_c(&all(&[6, 5]), &mut whole).unwrap();
        let got = as_u16(&whole);
        assert_eq!((got[29], got[0], got[16], got[1]), (103, 101, 102, 1));
    }
}

#[test]
fn variable_length_strings_plain_and_sharded() {
    let vlen = json!({"name": "vlen-utf8"});
    let zstd = json!({"name": "zstd", "configuration": {"level": 1}});
    let layouts = [
        (vec![2usize], json!([vlen.clone(), zstd.clone()])),
        (
            vec![4usize],
            json!([{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2], "codecs": [vlen, zstd],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]),
        ),
    ];
    for (chunks, codecs) in layouts {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let meta = json!({"shape": [6], "chunk_shape": chunks, "data_type": "string",
            "codecs": codecs, "chunk_key_encoding": {"name": "default"}});
        let a = ArrayCore::new(
            StoreRef::Rust(Arc::clone(&store)),
            "s",
            &meta.to_string(),
            b"-".to_vec(),
            false,
        )
        .unwrap();
        let sel = Selection::Orthogonal(vec![DimSelection::Indices(vec![4, 1])]);
        let items = [b"four".to_vec(), "\u{e9}t\u{e9}".as_bytes().to_vec()];
        a.write_c(&sel, Input::Var(&items)).unwrap();
        let got = a.read_list(&all(&[6])).unwrap();
        let want: Vec<Vec<u8>> = ["-", "\u{e9}t\u{e9}", "-", "-", "four", "-"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            a.read_list(&Selection::Points(vec![4, 4, 0])).unwrap(),
            vec![want[4].clone(), want[4].clone(), want[0].clone()]
        );
        // Writing the fill value back removes what was stored.
        a.write_c(&sel, Input::Var(&[b"-".to_vec(), b"-".to_vec()]))
            .unwrap();
        assert!(keys(&*store, "s/").is_empty());
        // Fixed-size calls are refused on variable-length arrays.
        assert_eq!(
            a.read_c(&all(&[6]), &mut [0u8; 6]).unwrap_err().kind,
            crate::error::ErrorKind::Value
        );
    }
}

#[test]
fn uncompressed_chunks_read_straight_into_the_output() {
    let dir = std::env::temp_dir().join(format!("zarrox-direct-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store: Arc<dyn Store> = Arc::new(crate::store::FilesystemStore::new(&dir));
    let raw = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    // Chunks of whole rows: each lands contiguously in the output.
    let a = array(Arc::clone(&store), &[6, 4], &[2, 4], raw);
    let value = u16s(0..24u16);
    a.write_c(&all(&[6, 4]), Input::Fixed(&value)).unwrap();
    run(store.delete("a/c/1/0")).unwrap();
    let mut out = vec![0u8; 48];
    a.read_c(&all(&[6, 4]), &mut out).unwrap();
    let mut expected = as_u16(&value);
    expected[8..16].iter_mut().for_each(|v| *v = 7); // the missing chunk: fill
    assert_eq!(as_u16(&out), expected);
    // A stored chunk of the wrong size is still a corrupt-chunk error.
    put(&*store, "a/c/2/0", &[1, 2, 3]);
    let err = a.read_c(&all(&[6, 4]), &mut out).unwrap_err();
    assert_eq!(err.kind, crate::error::ErrorKind::Corrupt);
    assert!(err.message.contains("chunk 'a/c/2/0'"), "{}", err.message);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A shard of inner shards, read one element at a time, fetches the outer
/// index, the inner shard's index and one innermost chunk: three ranges.
#[test]
fn nested_shards_are_read_in_part() {
    let counting = Arc::new(CountingStore::default());
    let store: Arc<dyn Store> = counting.clone();
    let inner_shard = json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_location": "start"}});
    let codecs = json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 4], "codecs": [inner_shard],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]);
    let a = array(Arc::clone(&store), &[16, 16], &[16, 16], codecs);
    let value = u16s(0..256u16);
    a.write_c(&all(&[16, 16]), Input::Fixed(&value)).unwrap();
    counting.take();
    let mut one = vec![0u8; 2];
    a.read_c(&Selection::Orthogonal(vec![sl(9, 10), sl(6, 7)]), &mut one)
        .unwrap();
    assert_eq!(as_u16(&one), vec![9 * 16 + 6]);
    let (requests, bytes) = counting.take();
    assert_eq!(requests, 3);
    assert!(bytes < 400, "{bytes} bytes read for one element");
    let mut whole = vec![0u8; 512];
    a.read_c(&all(&[16, 16]), &mut whole).unwrap();
    assert_eq!(whole, value);
}

/// Sharding after a transpose: a region is mapped through the transpose and
/// only the inner chunks it touches are read.
#[test]
fn shards_behind_a_transpose_are_read_in_part() {
    let counting = Arc::new(CountingStore::default());
    let store: Arc<dyn Store> = counting.clone();
    let mut codecs = vec![json!({"name": "transpose", "configuration": {"order": [1, 0]}})];
    codecs.extend(
        sharded_codecs(&[2, 4], "end")
            .as_array()
            .unwrap()
            .iter()
            .cloned(),
    );
    // 4x8 array, one 4x8 chunk; transposed it is 8x4, in inner chunks of 2x4.
    let a = array(Arc::clone(&store), &[4, 8], &[4, 8], Value::Array(codecs));
    let value = u16s(0..32u16);
    a.write_c(&all(&[4, 8]), Input::Fixed(&value)).unwrap();
    counting.take();
    // Column 5: encoded row 5, in inner chunk 2 of 4.
    let mut col = vec![0u8; 8];
    a.read_c(&Selection::Orthogonal(vec![sl(0, 4), sl(5, 6)]), &mut col)
        .unwrap();
    assert_eq!(as_u16(&col), vec![5, 13, 21, 29]);
    assert_eq!(counting.take(), (2, 4 * 16 + 4 + 2 * 4 * 2));
    let pts = Selection::Points(vec![3, 7, 0, 1]);
    let mut two = vec![0u8; 4];
    a.read_c(&pts, &mut two).unwrap();
    assert_eq!(as_u16(&two), vec![31, 1]);
    let mut whole = vec![0u8; 64];
    a.read_c(&all(&[4, 8]), &mut whole).unwrap();
    assert_eq!(whole, value);
}

/// A caller-driven read: requests come out in rounds, answers go in once.
/// An array of 8 uint16 (fill 7) in one shard of inner chunks of 2, read
/// through a caller-driven store, and the store the caller answers from,
/// holding that shard with the values 10..18 (written through a Rust store).
fn caller_array_over_one_shard() -> (MemoryStore, ArrayCore) {
    let backing = MemoryStore::new();
    let written: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let writer = sharded(Arc::clone(&written), &[8], &[8], &[2], "end");
    let value = u16s(10..18u16);
    writer.write_c(&all(&[8]), Input::Fixed(&value)).unwrap();
    let encoded = run(written.get("a/c/0")).unwrap().unwrap();
    run(backing.set("a/c/0", encoded)).unwrap();
    let meta = json!({"shape": [8], "chunk_shape": [8], "data_type": "uint16",
        "codecs": sharded_codecs(&[2], "end"), "chunk_key_encoding": {"name": "default"}});
    let a = ArrayCore::new(
        StoreRef::Caller("py://x".into()),
        "a",
        &meta.to_string(),
        7u16.to_ne_bytes().to_vec(),
        false,
    )
    .unwrap();
    (backing, a)
}

#[test]
fn caller_sessions_read_in_rounds() {
    let (backing, a) = caller_array_over_one_shard();
    assert!(
        a.read_c(&all(&[8]), &mut [0u8; 16]).is_err(),
        "a session is needed"
    );
    // the selection's 2 elements
    assert!(a
        .read(&all(&[8]), Destination::Buffer(&mut [0; 4]), MemoryOrder::C)
        .is_err());
    let mut session = session(&a, &Selection::Orthogonal(vec![sl(3, 5)]), 4);
    let mut out = vec![0u8; 4];
    let mut rounds = 0;
    loop {
        let view = OutView::new(&mut out);
        let requests = session.step(Output::Fixed(&view)).unwrap();
        if requests.is_empty() {
            break;
        }
        rounds += 1;
        for r in requests {
            let crate::store::caller::Op::Get(range) = r.op else {
                panic!("a read asks for bytes only");
            };
            let got = match range {
                None => run(backing.get(&r.key)).unwrap(),
                Some(rg) => run(backing.get_ranges(&r.key, &[rg]))
                    .unwrap()
                    .map(|mut v| v.remove(0)),
            };
            session.answer(r.id, Ok(got)).unwrap();
        }
    }
    assert!(session.done());
    assert_eq!(rounds, 2, "the index, then the two inner chunks");
    assert_eq!(as_u16(&out), vec![13, 14]);
    assert_eq!(session.present(), vec![true]);
}

#[test]
fn a_shard_that_vanishes_after_its_index_reads_as_fill() {
    // As zarr-python: when the inner chunks' bytes are gone (the shard was
    // deleted after its index was read), they read as the fill value.
    let (backing, a) = caller_array_over_one_shard();
    let mut session = session(&a, &Selection::Orthogonal(vec![sl(1, 5)]), 8);
    let mut out = vec![0u8; 8];
    let mut rounds = 0;
    loop {
        let view = OutView::new(&mut out);
        let requests = session.step(Output::Fixed(&view)).unwrap();
        if requests.is_empty() {
            break;
        }
        rounds += 1;
        for r in requests {
            let crate::store::caller::Op::Get(Some(rg)) = r.op else {
                panic!("a partial shard read asks for byte ranges");
            };
            if rounds == 2 {
                // the index was there; the shard is gone now
                run(backing.delete("a/c/0")).unwrap();
            }
            let got = run(backing.get_ranges(&r.key, &[rg]))
                .unwrap()
                .map(|mut v| v.remove(0));
            session.answer(r.id, Ok(got)).unwrap();
        }
    }
    assert_eq!(rounds, 2, "the index, then the inner chunks");
    assert_eq!(as_u16(&out), vec![7, 7, 7, 7]);
    assert_eq!(session.present(), vec![false]);
}

#[test]
fn the_floors_decode_and_encode_every_stored_chunk_and_inner_chunk() {
    let zstd = json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]);
    let inner_zstd = json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 4], "codecs": zstd,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]);
    for (codecs, chunks) in [(zstd.clone(), [4, 4]), (inner_zstd, [8, 8])] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let a = array(Arc::clone(&store), &[12, 12], &chunks, codecs);
        // the last row of chunks stays all fill value: not stored
        let value = u16s((0..96).map(|i| (i * 37 % 1000) as u16));
        a.write_c(
            &Selection::Orthogonal(vec![sl(0, 8), sl(0, 12)]),
            Input::Fixed(&value),
        )
        .unwrap();
        let (n, decoded) = crate::floors::decode_stored_chunks(&a).unwrap();
        assert_eq!((n, decoded), (6, 6 * 32));
        let (n, encoded, seconds) = crate::floors::encode_floor(&a, 3).unwrap();
        assert_eq!((n, seconds.len()), (6, 3));
        // zstd is deterministic: re-encoding gives the stored bytes again
        let stored = keys(&*store, "a/c/");
        let stored_bytes: usize = stored
            .iter()
            .map(|k| run(store.get(k)).unwrap().unwrap().len())
            .sum();
        let inner_total = if chunks == [8, 8] {
            // 2 shards of the 2 x 2 grid stored, each with its inner chunks and
            // a 16-byte index entry per position (+ 4 bytes of crc32c)
            assert_eq!(stored.len(), 2);
            stored_bytes - 2 * (4 * 16 + 4)
        } else {
            assert_eq!(stored.len(), 6);
            stored_bytes
        };
        assert_eq!(encoded, inner_total);
    }
}

/// The Fortran view of an array whose chain begins by reversing every axis:
/// a C-ordered read of the reversed selection from it is the Fortran-ordered
/// result, writes through it store what the array's own writes store, and
/// chunk keys keep the stored coordinates' order.
#[test]
fn the_fortran_view_reads_and_writes_the_transposed_array() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let codecs = json!([
        {"name": "transpose", "configuration": {"order": [2, 1, 0]}},
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 1}}
    ]);
    let shape = [5u64, 4, 3];
    let a = array(Arc::clone(&store), &shape, &[2, 3, 2], codecs.clone());
    let view = a
        .fortran()
        .expect("a chain that reverses every axis has a view");
    assert_eq!(view.shape(), &[3, 4, 5]);
    assert!(view.fortran().is_none());
    assert_eq!(view.chunk_key(&[1, 0, 2]), a.chunk_key(&[2, 0, 1]));
    let values: Vec<u16> = (0..60).collect();
    a.write_c(&all(&shape), Input::Fixed(&u16s(values.clone())))
        .unwrap();
    // element (i, j, k) of the C-ordered array is element (k, j, i) of the view
    let mut out = vec![0u8; 120];
    view.read_c(&all(&[3, 4, 5]), &mut out).unwrap();
    let got = as_u16(&out);
    for (i, j, k) in grid_points(5, 4, 3) {
        assert_eq!(got[k * 20 + j * 5 + i], values[i * 12 + j * 3 + k]);
    }
    // a selection reversed reads the same elements
    let sel = Selection::Orthogonal(vec![sl(1, 4), DimSelection::Indices(vec![3, 0]), sl(2, 3)]);
    let mut c = vec![0u8; 3 * 2 * 2];
    a.read_c(&sel, &mut c).unwrap();
    let mut f = vec![0u8; 3 * 2 * 2];
    view.read_c(&sel.reversed().unwrap(), &mut f).unwrap();
    let (c, f) = (as_u16(&c), as_u16(&f));
    for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)] {
        assert_eq!(f[j * 3 + i], c[i * 2 + j]);
    }
    // the view's writes store the bytes the array's own writes store
    let other: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let b = array(Arc::clone(&other), &shape, &[2, 3, 2], codecs);
    b.fortran()
        .unwrap()
        .write_c(&all(&[3, 4, 5]), Input::Fixed(&out))
        .unwrap();
    let stored = keys(store.as_ref(), "a/");
    assert_eq!(stored, keys(other.as_ref(), "a/"));
    assert_eq!(stored.len(), 3 * 2 * 2);
    for key in stored {
        assert_eq!(
            run(store.get(&key)).unwrap(),
            run(other.get(&key)).unwrap(),
            "{key}"
        );
    }
    assert!(Selection::Points(vec![0, 1, 2]).reversed().is_none());
}

fn grid_points(a: usize, b: usize, c: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    (0..a).flat_map(move |i| (0..b).flat_map(move |j| (0..c).map(move |k| (i, j, k))))
}

#[test]
fn arrays_without_fortran_chunks_have_no_view() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let t = |order: Value| json!({"name": "transpose", "configuration": {"order": order}});
    let plain = array(Arc::clone(&store), &[4, 4], &[2, 2], json!([bytes]));
    assert!(plain.fortran().is_none());
    let partial = array(
        Arc::clone(&store),
        &[4, 4, 4],
        &[2, 2, 2],
        json!([t(json!([0, 2, 1])), bytes]),
    );
    assert!(partial.fortran().is_none());
    let one_d = array(
        Arc::clone(&store),
        &[4],
        &[2],
        json!([t(json!([0])), bytes]),
    );
    assert!(one_d.fortran().is_none());
    let two_d = array(store, &[4, 6], &[2, 3], json!([t(json!([1, 0])), bytes]));
    assert_eq!(
        two_d.fortran().map(|v| v.shape().to_vec()),
        Some(vec![6, 4])
    );
}

/// A fuzz finding: variable-length elements have no fixed size, so the check
/// that a chunk fits in a buffer passed any shape, and a chunk of more than
/// 2^64 elements overflowed a count (a panic) instead of being refused.
#[test]
fn chunks_of_more_elements_than_a_buffer_holds_are_refused_for_every_type() {
    for data_type in ["string", "bytes", "uint8"] {
        let meta = json!({
            "shape": [1, 1], "chunk_shape": [444444444444444446u64, 50], "data_type": data_type,
            "codecs": [
                {"name": "transpose", "configuration": {"order": [1, 0]}},
                if data_type == "uint8" { json!({"name": "bytes"}) } else { json!({"name": format!("vlen-{}", if data_type == "string" { "utf8" } else { "bytes" })}) },
            ],
            "chunk_key_encoding": {"name": "default", "separator": "/"}
        });
        let fill = if data_type == "uint8" {
            vec![0]
        } else {
            vec![]
        };
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let err = ArrayCore::new(StoreRef::Rust(store), "a", &meta.to_string(), fill, true)
            .expect_err(data_type);
        assert_eq!(
            err.kind,
            crate::error::ErrorKind::Unsupported,
            "{data_type}"
        );
        assert!(
            err.message.contains("a buffer can hold"),
            "{data_type}: {}",
            err.message
        );
    }
}
