use super::*;
use crate::codec::ChunkSpec;
use crate::dtype::DataType;
use crate::indexing::DimSelection;
use serde_json::json;

/// A batch of one uint16 chunk of 4 elements (fill 7), its region `a..b`
/// read into (written from) a buffer of `b - a` elements.
fn batch(a: u64, b: u64) -> Batch {
    let spec = ChunkSpec {
        shape: vec![4],
        dtype: DataType::from_name("uint16").unwrap(),
        fill: 7u16.to_ne_bytes().to_vec(),
    };
    let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    let chain = Arc::new(CodecChain::from_json(&codecs, spec).unwrap());
    let sl = |start, stop| DimSelection::Slice {
        start,
        stop,
        step: 1,
    };
    let n = (b - a) as usize;
    let region = ChunkRegion::boxed(&[sl(a, b)], &[Some(sl(0, b - a))], &[4], &[n]).unwrap();
    let tasks = vec![ChunkTask::new("c/0".into(), region)];
    Batch::new(chain, tasks, vec![n], DataCache::process(), Instant::now())
}

fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

#[test]
fn a_write_to_a_caller_store_waits_for_the_old_chunks_it_needs() {
    let WriteDone::Pending(pending) = batch(1, 3)
        .write(Chunks::Caller("py"), Input::Fixed(&u16s(&[1, 2])))
        .unwrap()
    else {
        panic!("a caller's store gets a pending write");
    };
    assert_eq!(pending.keys().collect::<Vec<_>>(), ["c/0"]);
    assert_eq!(pending.needs(), [true]);
    let new = pending
        .encode(vec![None], Input::Fixed(&u16s(&[1, 2])))
        .unwrap();
    assert_eq!(new[0].as_deref(), Some(&u16s(&[7, 1, 2, 7])[..]));
    // the same over the chunk in hand, then read back from it
    let WriteDone::Encoded(again) = batch(1, 3)
        .write(Chunks::Held(vec![None]), Input::Fixed(&u16s(&[1, 2])))
        .unwrap()
    else {
        panic!("chunks in hand are encoded");
    };
    assert_eq!(again, new);
    let mut out = vec![0u8; 8];
    let done = batch(0, 4)
        .read(Chunks::Held(again), Destination::Buffer(&mut out))
        .unwrap();
    assert!(matches!(done, ReadDone::Present(p) if p == [true]));
    assert_eq!(out, u16s(&[7, 1, 2, 7]));
    let done = batch(0, 4).read(Chunks::Caller("py"), Destination::Buffer(&mut out));
    assert!(matches!(done, Ok(ReadDone::Session(_))));
}

#[test]
fn buffers_and_lists_are_checked_against_the_data_type_and_shape() {
    let mut short = vec![0u8; 2];
    let err = batch(1, 3)
        .in_array("a")
        .read(Chunks::Held(vec![None]), Destination::Buffer(&mut short))
        .err()
        .unwrap();
    assert_eq!(
        err.message,
        "array 'a': the output buffer has 2 bytes, shape [2] needs 4"
    );
    assert!(batch(1, 3)
        .read(Chunks::Held(vec![None]), Destination::List)
        .is_err());
    let items = [b"x".to_vec(), b"y".to_vec()];
    assert!(batch(1, 3)
        .write(Chunks::Held(vec![None]), Input::Var(&items))
        .is_err());
    assert!(batch(1, 3)
        .write(Chunks::Held(vec![None]), Input::Scalar(&[1]))
        .is_err());
}

#[test]
fn memory_orders_are_c_or_f() {
    assert_eq!(MemoryOrder::parse("C").unwrap(), MemoryOrder::C);
    assert_eq!(MemoryOrder::parse("F").unwrap(), MemoryOrder::F);
    assert!(MemoryOrder::parse("K").is_err());
}
