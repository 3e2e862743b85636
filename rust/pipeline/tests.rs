use super::*;
use crate::batch::{Chunks, Destination, ReadDone, WriteDone};
use crate::dtype::DataType;
use crate::engine::session::ReadSession;
use crate::engine::Input;
use crate::indexing::DimSelection;
use crate::store::{MemoryStore, Store};
use bytes::Bytes;
use serde_json::json;

/// The batches of the calls the tests make, over a buffer of `n` elements.
trait Calls {
    fn codec(&self) -> &ChunkCodec;

    fn encode_with(
        &self,
        tasks: &[ChunkTask],
        old: Vec<Option<Bytes>>,
        value: Input<'_>,
        n: usize,
        write_empty: bool,
    ) -> Result<Vec<Option<Bytes>>> {
        let batch = self.codec().batch(tasks.to_vec(), vec![n]);
        match batch
            .write_empty(write_empty)
            .write(Chunks::Held(old), value)?
        {
            WriteDone::Encoded(new) => Ok(new),
            _ => panic!("chunks in hand are encoded"),
        }
    }

    fn write_to(
        &self,
        store: &dyn Store,
        tasks: &[ChunkTask],
        value: Input<'_>,
        n: usize,
        write_empty: bool,
    ) -> Result<()> {
        let batch = self.codec().batch(tasks.to_vec(), vec![n]);
        batch
            .write_empty(write_empty)
            .write(Chunks::Store(store), value)
            .map(|_| ())
    }

    fn read_session(&self, tasks: Vec<ChunkTask>, n: usize, name: &str) -> Result<ReadSession> {
        let dtype = self.codec().spec().dtype;
        let mut buf = vec![0; n * dtype.size];
        let into = if dtype.is_var_len() {
            Destination::List
        } else {
            Destination::Buffer(&mut buf)
        };
        match self
            .codec()
            .batch(tasks, vec![n])
            .read(Chunks::Caller(name), into)?
        {
            ReadDone::Session(session) => Ok(session),
            _ => panic!("a store the caller reads is read by a session"),
        }
    }
}

impl Calls for ChunkCodec {
    fn codec(&self) -> &ChunkCodec {
        self
    }
}

fn read_into(
    c: &ChunkCodec,
    store: &dyn Store,
    tasks: &[ChunkTask],
    out: &mut [u8],
) -> Result<Vec<bool>> {
    let n = out.len() / 2;
    match c
        .batch(tasks.to_vec(), vec![n])
        .read(Chunks::Store(store), Destination::Buffer(out))?
    {
        ReadDone::Present(present) => Ok(present),
        _ => panic!("a buffer read says which chunks exist"),
    }
}

fn decode_into(
    c: &ChunkCodec,
    tasks: &[ChunkTask],
    encoded: Vec<Option<Bytes>>,
    out: &mut [u8],
) -> Result<()> {
    let n = out.len() / 2;
    c.batch(tasks.to_vec(), vec![n])
        .read(Chunks::Held(encoded), Destination::Buffer(out))
        .map(|_| ())
}

fn decode_var(
    c: &ChunkCodec,
    tasks: &[ChunkTask],
    encoded: Vec<Option<Bytes>>,
    n: usize,
) -> Result<Vec<Vec<u8>>> {
    match c
        .batch(tasks.to_vec(), vec![n])
        .read(Chunks::Held(encoded), Destination::List)?
    {
        ReadDone::Values(values, _) => Ok(values),
        _ => panic!("a list read gives the values"),
    }
}

fn sl(start: u64, stop: u64) -> DimSelection {
    DimSelection::Slice {
        start,
        stop,
        step: 1,
    }
}

fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn as_u16(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect()
}

/// uint16 chunks of `shape`, fill 7, with `codecs`.
fn codec(shape: &[usize], codecs: Value) -> ChunkCodec {
    let spec = ChunkSpec {
        shape: shape.to_vec(),
        dtype: DataType::from_name("uint16").unwrap(),
        fill: 7u16.to_ne_bytes().to_vec(),
    };
    ChunkCodec::new(&codecs, spec).unwrap()
}

fn plain(shape: &[usize]) -> ChunkCodec {
    codec(
        shape,
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]),
    )
}

fn sharded(shard: &[usize], inner: &[usize]) -> ChunkCodec {
    codec(
        shard,
        json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": inner,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]),
    )
}

fn tasks(regions: &[ChunkRegion]) -> Vec<ChunkTask> {
    let keys = (0..regions.len()).map(|i| format!("c/{i}")).collect();
    ChunkCodec::tasks(keys, regions.to_vec(), None).unwrap()
}

fn bytes(v: Vec<Option<Bytes>>) -> Vec<Option<Bytes>> {
    v
}

/// A whole 2x3 chunk into a 2x6 buffer at column `col`.
fn block(col: u64) -> ChunkRegion {
    ChunkRegion::boxed(
        &[sl(0, 2), sl(0, 3)],
        &[Some(sl(0, 2)), Some(sl(col, col + 3))],
        &[2, 3],
        &[2, 6],
    )
    .unwrap()
}

#[test]
fn encode_then_decode_regions_with_fill_for_missing_chunks() {
    let c = plain(&[2, 3]);
    let value = u16s(&[0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15]);
    let encoded = c
        .encode_with(
            &tasks(&[block(0), block(3)]),
            vec![None, None],
            Input::Fixed(&value),
            12,
            false,
        )
        .unwrap();
    let mut out = vec![0u8; 24];
    decode_into(
        &c,
        &tasks(&[block(0), block(3)]),
        vec![encoded[1].clone(), None],
        &mut out,
    )
    .unwrap();
    assert_eq!(as_u16(&out), vec![10, 11, 12, 7, 7, 7, 13, 14, 15, 7, 7, 7]);
    // A dropped dimension (an integer index): row 1 of chunk 0 into a 1-d buffer.
    let row = ChunkRegion::boxed(
        &[sl(1, 2), sl(0, 3)],
        &[None, Some(sl(0, 3))],
        &[2, 3],
        &[3],
    )
    .unwrap();
    let mut three = vec![0u8; 6];
    decode_into(&c, &tasks(&[row]), vec![encoded[0].clone()], &mut three).unwrap();
    assert_eq!(as_u16(&three), vec![3, 4, 5]);
    // Points, in any order, repeats allowed.
    let pts = ChunkRegion::points(&[5, 0, 5], Some(&[0, 1, 2]), &[2, 3], &[3]).unwrap();
    decode_into(&c, &tasks(&[pts]), vec![encoded[0].clone()], &mut three).unwrap();
    assert_eq!(as_u16(&three), vec![5, 0, 5]);
}

#[test]
fn overlapping_output_regions_are_refused() {
    let c = plain(&[2, 3]);
    let mut out = vec![0u8; 24];
    let err = decode_into(
        &c,
        &tasks(&[block(0), block(0)]),
        vec![None, None],
        &mut out,
    )
    .unwrap_err();
    assert_eq!(err.kind, crate::error::ErrorKind::Index);
    // Disjoint regions that share a bitmap word are fine.
    decode_into(
        &c,
        &tasks(&[block(0), block(3)]),
        vec![None, None],
        &mut out,
    )
    .unwrap();
    // The same element twice inside one chunk's region is allowed (numpy semantics).
    let pts = ChunkRegion::points(&[0, 1], Some(&[4, 4]), &[2, 3], &[2, 6]).unwrap();
    decode_into(&c, &tasks(&[pts]), vec![None], &mut out).unwrap();
    let mut odd = vec![0u8; 5];
    assert!(decode_into(&c, &tasks(&[block(0)]), vec![None], &mut odd).is_err());
    // A caller-driven read checks its regions before any byte is fetched.
    assert!(c
        .read_session(tasks(&[block(0), block(0)]), 12, "py")
        .is_err());
}

#[test]
fn scalar_writes_and_empty_chunks() {
    let c = plain(&[2, 3]);
    let all = ChunkRegion::chunk_only(&[sl(0, 2), sl(0, 3)], &[2, 3]).unwrap();
    let nine = 9u16.to_ne_bytes();
    let enc = c
        .encode_with(
            &tasks(std::slice::from_ref(&all)),
            vec![None],
            Input::Scalar(&nine),
            0,
            false,
        )
        .unwrap();
    let mut out = vec![0u8; 12];
    let whole = ChunkRegion::boxed(
        &[sl(0, 2), sl(0, 3)],
        &[Some(sl(0, 2)), Some(sl(0, 3))],
        &[2, 3],
        &[2, 3],
    )
    .unwrap();
    decode_into(
        &c,
        &tasks(std::slice::from_ref(&whole)),
        enc.clone(),
        &mut out,
    )
    .unwrap();
    assert_eq!(as_u16(&out), vec![9; 6]);
    // Writing the fill value everywhere: the chunk is to be deleted, unless write_empty.
    let seven = 7u16.to_ne_bytes();
    let gone = c
        .encode_with(
            &tasks(std::slice::from_ref(&all)),
            enc.clone(),
            Input::Scalar(&seven),
            0,
            false,
        )
        .unwrap();
    assert_eq!(gone, bytes(vec![None]));
    let kept = c
        .encode_with(&tasks(&[all]), enc, Input::Scalar(&seven), 0, true)
        .unwrap();
    assert!(kept[0].is_some());
    assert!(c
        .encode_with(&tasks(&[whole]), vec![None], Input::Fixed(&[0; 4]), 6, true)
        .is_err());
}

#[test]
fn sharded_reads_and_partial_writes() {
    let store = MemoryStore::new();
    let c = sharded(&[4, 6], &[2, 3]);
    let value: Vec<u16> = (0..24).collect();
    let whole = |n: u64, m: u64| {
        ChunkRegion::boxed(
            &[sl(0, 4), sl(0, 6)],
            &[Some(sl(0, n)), Some(sl(0, m))],
            &[4, 6],
            &[n as usize, m as usize],
        )
        .unwrap()
    };
    let complete = ChunkCodec::tasks(vec!["c/0".into()], vec![whole(4, 6)], Some(&[true])).unwrap();
    c.write_to(&store, &complete, Input::Fixed(&u16s(&value)), 24, false)
        .unwrap();
    // One element of inner chunk (1, 1): rows 2..4, columns 3..6.
    let one = ChunkRegion::boxed(
        &[sl(3, 4), sl(4, 5)],
        &[None, Some(sl(0, 1))],
        &[4, 6],
        &[1],
    )
    .unwrap();
    let mut out = vec![0u8; 2];
    let two = ChunkCodec::tasks(
        vec!["c/0".into(), "c/1".into()],
        vec![one.clone(), one.clone()],
        None,
    )
    .unwrap();
    assert!(
        read_into(&c, &store, &two, &mut out).is_err(),
        "overlapping regions"
    );
    let present = read_into(&c, &store, &tasks(std::slice::from_ref(&one)), &mut out).unwrap();
    assert_eq!((present, as_u16(&out)), (vec![true], vec![22]));
    // A partial write keeps the other inner chunks; a missing shard reads as fill.
    c.write_to(
        &store,
        &tasks(std::slice::from_ref(&one)),
        Input::Scalar(&1u16.to_ne_bytes()),
        0,
        false,
    )
    .unwrap();
    let mut all = vec![0u8; 48];
    read_into(&c, &store, &tasks(&[whole(4, 6)]), &mut all).unwrap();
    let mut want = value.clone();
    want[22] = 1;
    assert_eq!(as_u16(&all), want);
    let mut missing = vec![0u8; 48];
    let nothing = ChunkCodec::tasks(vec!["nothing".into()], vec![whole(4, 6)], None).unwrap();
    let present = read_into(&c, &store, &nothing, &mut missing).unwrap();
    assert_eq!((present, as_u16(&missing)), (vec![false], vec![7; 24]));
    // Decoding the shard's bytes gives the same.
    let shard = futures::executor::block_on(store.get("c/0")).unwrap();
    let mut again = vec![0u8; 48];
    decode_into(&c, &tasks(&[whole(4, 6)]), vec![shard], &mut again).unwrap();
    assert_eq!(again, all);
    // Writing the fill value over everything deletes the shard.
    c.write_to(
        &store,
        &complete,
        Input::Scalar(&7u16.to_ne_bytes()),
        0,
        false,
    )
    .unwrap();
    assert!(futures::executor::block_on(store.get("c/0"))
        .unwrap()
        .is_none());
}

#[test]
fn sharded_chunks_refuse_an_output_element_named_twice() {
    // Points 0 and 23 are in different inner chunks, decoded by different threads:
    // writing both to output element 0 would be a data race, so it is refused.
    let c = sharded(&[4, 6], &[2, 3]);
    let pts = ChunkRegion::points(&[0, 23], Some(&[0, 0]), &[4, 6], &[2]).unwrap();
    let mut out = vec![0u8; 4];
    let err =
        decode_into(&c, &tasks(std::slice::from_ref(&pts)), vec![None], &mut out).unwrap_err();
    assert_eq!(err.kind, crate::error::ErrorKind::Index);
    assert!(c.read_session(tasks(&[pts]), 2, "py").is_err());
    // The same in a chunk decoded whole is numpy's last-one-wins, on one thread.
    let p = plain(&[4, 6]);
    let pts = ChunkRegion::points(&[0, 23], Some(&[0, 0]), &[4, 6], &[2]).unwrap();
    decode_into(&p, &tasks(&[pts]), vec![None], &mut out).unwrap();
}

#[test]
fn sharded_points_split_by_inner_chunk() {
    let c = sharded(&[4, 6], &[2, 3]);
    let value: Vec<u16> = (100..124).collect();
    let all = ChunkRegion::chunk_only(&[sl(0, 4), sl(0, 6)], &[4, 6]).unwrap();
    let enc = c
        .encode_with(
            &tasks(&[all]),
            vec![None],
            Input::Fixed(&u16s(&value)),
            24,
            false,
        )
        .unwrap();
    // Points across all four inner chunks, out of order.
    let pts = ChunkRegion::points(&[23, 0, 9, 14], Some(&[0, 1, 2, 3]), &[4, 6], &[4]).unwrap();
    let mut out = vec![0u8; 8];
    decode_into(&c, &tasks(&[pts]), enc, &mut out).unwrap();
    assert_eq!(as_u16(&out), vec![123, 100, 109, 114]);
}

#[test]
fn variable_length_strings() {
    let spec = ChunkSpec {
        shape: vec![3],
        dtype: DataType::from_name("string").unwrap(),
        fill: b"-".to_vec(),
    };
    let c = ChunkCodec::new(
        &json!([{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1}}]),
        spec,
    )
    .unwrap();
    let region = |a: u64, b: u64| {
        ChunkRegion::boxed(
            &[sl(a, b)],
            &[Some(sl(0, b - a))],
            &[3],
            &[(b - a) as usize],
        )
        .unwrap()
    };
    let items = vec![b"x".to_vec(), "\u{e9}".as_bytes().to_vec()];
    let enc = c
        .encode_with(
            &tasks(&[region(1, 3)]),
            vec![None],
            Input::Var(&items),
            2,
            false,
        )
        .unwrap();
    let got = decode_var(&c, &tasks(&[region(0, 3)]), enc.clone(), 3).unwrap();
    assert_eq!(
        got,
        vec![b"-".to_vec(), b"x".to_vec(), "\u{e9}".as_bytes().to_vec()]
    );
    let star = c
        .encode_with(&tasks(&[region(0, 1)]), enc, Input::Scalar(b"*"), 0, false)
        .unwrap();
    let got = decode_var(&c, &tasks(&[region(0, 2)]), star, 2).unwrap();
    assert_eq!(got, vec![b"*".to_vec(), b"x".to_vec()]);
    let mut buf = vec![0u8; 6];
    assert!(decode_into(&c, &tasks(&[region(0, 3)]), vec![None], &mut buf).is_err());
}

#[test]
fn writes_whose_regions_reach_outside_the_value_are_refused() {
    // block(3) names columns 3..6 of a 2x6 value: a value of 2x3 elements is too small
    let c = plain(&[2, 3]);
    let small = u16s(&[1, 2, 3, 4, 5, 6]);
    let err = c
        .encode_with(
            &tasks(&[block(3)]),
            vec![None],
            Input::Fixed(&small),
            6,
            true,
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("chunk 'c/0': the region reaches outside the buffer of 6 elements"),
        "{err}"
    );
    let store = MemoryStore::new();
    let err = c
        .write_to(
            &store,
            &tasks(&[block(0), block(3)]),
            Input::Fixed(&small),
            6,
            true,
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("outside the buffer of 6 elements"),
        "{err}"
    );
    assert!(crate::store::now(store.list_prefix(""))
        .unwrap()
        .unwrap()
        .is_empty());
    // the same regions over a value of the right size write
    let whole = u16s(&[0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15]);
    c.write_to(
        &store,
        &tasks(&[block(0), block(3)]),
        Input::Fixed(&whole),
        12,
        true,
    )
    .unwrap();
}

#[test]
fn hostile_chunks_decode_within_their_size() {
    use crate::alloc::tracking::largest_allocation;
    use crate::codec::tests::zstd_frame_claiming;
    // A 16-byte zstd frame declaring 16 GiB for a chunk of 12 bytes, held and stored.
    let c = plain(&[2, 3]);
    let bomb = Bytes::from(zstd_frame_claiming(1 << 34));
    let store = MemoryStore::new();
    crate::store::now(store.set("c/0", bomb.clone()))
        .unwrap()
        .unwrap();
    let mut out = vec![0u8; 24];
    let (held, largest_held) = largest_allocation(|| {
        decode_into(&c, &tasks(&[block(0)]), vec![Some(bomb.clone())], &mut out)
    });
    let (stored, largest) =
        largest_allocation(|| read_into(&c, &store, &tasks(&[block(0)]), &mut out));
    for (err, largest) in [
        (held.unwrap_err(), largest_held),
        (stored.unwrap_err(), largest),
    ] {
        assert_eq!(err.kind, crate::error::ErrorKind::Corrupt);
        assert_eq!(
            err.message,
            "chunk 'c/0': zstd: header declares 17179869184 decoded bytes, expected 12"
        );
        assert!(largest < 1 << 20, "allocated {largest} bytes");
    }
}

#[test]
fn the_fortran_view_encodes_a_fortran_ordered_value_as_the_chain_does() {
    let transposed = json!([
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "little"}}
    ]);
    let c = codec(&[2, 3], transposed.clone());
    let view = c
        .fortran()
        .expect("the chain begins by reversing every axis");
    assert_eq!(view.spec().shape, [3, 2]);
    assert!(plain(&[2, 3]).fortran().is_none());
    assert!(codec(&[6], transposed_1d()).fortran().is_none());
    // A 2x3 value, C-ordered for the chain, Fortran-ordered (its 3x2 transpose
    // C-ordered) for the view, whose region is the chunk's reversed.
    let c_order = u16s(&[0, 1, 2, 10, 11, 12]);
    let f_order = u16s(&[0, 10, 1, 11, 2, 12]);
    let whole = |shape: [usize; 2]| {
        let r = ChunkRegion::boxed(
            &[sl(0, shape[0] as u64), sl(0, shape[1] as u64)],
            &[Some(sl(0, shape[0] as u64)), Some(sl(0, shape[1] as u64))],
            &shape,
            &shape,
        )
        .unwrap();
        ChunkCodec::tasks(vec!["c/0".into()], vec![r], None).unwrap()
    };
    let encode = |codec: &ChunkCodec, shape: [usize; 2], value: &[u8]| {
        let batch = codec.batch(whole(shape), shape.to_vec());
        match batch.write(Chunks::Held(vec![None]), Input::Fixed(value)) {
            Ok(WriteDone::Encoded(new)) => new,
            _ => panic!("chunks in hand are encoded"),
        }
    };
    assert_eq!(encode(&c, [2, 3], &c_order), encode(view, [3, 2], &f_order));
}

fn transposed_1d() -> Value {
    json!([
        {"name": "transpose", "configuration": {"order": [0]}},
        {"name": "bytes", "configuration": {"endian": "little"}}
    ])
}

#[test]
fn batches_in_fortran_order_run_on_the_view_with_regions_reversed() {
    let transposed = json!([
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "little"}}
    ]);
    let c = codec(&[2, 3], transposed);
    // A 2x6 buffer, Fortran-ordered: element (r, col) at col * 2 + r. Chunk 0
    // fills columns 0..3, chunk 1 columns 3..6.
    let value: Vec<u16> = (0..12).collect();
    let f_order = u16s(&value);
    let (batch, runs_in) = c.batch_in(tasks(&[block(0), block(3)]), vec![2, 6], MemoryOrder::F);
    assert_eq!(
        runs_in,
        MemoryOrder::F,
        "boxes of chunks stored in Fortran order"
    );
    let new = match batch.write(Chunks::Held(vec![None, None]), Input::Fixed(&f_order)) {
        Ok(WriteDone::Encoded(new)) => new,
        _ => panic!("chunks in hand are encoded"),
    };
    // Each chunk's bytes are its part of the buffer's memory as it is (the
    // chain stores the chunk transposed: Fortran order).
    assert_eq!(new[0].as_deref(), Some(&f_order[..12]));
    assert_eq!(new[1].as_deref(), Some(&f_order[12..]));
    // The same chunks written from the C-ordered value through the chain.
    let c_value: Vec<u16> = (0..2)
        .flat_map(|r| (0..6).map(move |col| col * 2 + r))
        .collect();
    let (c_batch, runs_in) = c.batch_in(tasks(&[block(0), block(3)]), vec![2, 6], MemoryOrder::C);
    assert_eq!(runs_in, MemoryOrder::C);
    match c_batch.write(
        Chunks::Held(vec![None, None]),
        Input::Fixed(&u16s(&c_value)),
    ) {
        Ok(WriteDone::Encoded(same)) => assert_eq!(same, new),
        _ => panic!("chunks in hand are encoded"),
    }
    // Not in that order: points, and chunks stored in C order.
    let points = ChunkRegion::Points(vec![(0, 0), (5, 1)]);
    let (_, runs_in) = c.batch_in(tasks(&[points]), vec![2], MemoryOrder::F);
    assert_eq!(runs_in, MemoryOrder::C, "points");
    let (_, runs_in) = plain(&[2, 3]).batch_in(tasks(&[block(0)]), vec![2, 6], MemoryOrder::F);
    assert_eq!(runs_in, MemoryOrder::C, "chunks stored in C order");
}
