//! The per-chunk work of the engine: decode a chunk's bytes into its region
//! of the output, and encode a chunk after writing a region of the value
//! over its old contents.

use std::borrow::Cow;
use std::sync::OnceLock;

use bytes::Bytes;
use rayon::prelude::*;

use super::buffer::{Input, Output};
use super::region::ChunkRegion;
use crate::codec::array_to_bytes::vlen::{build_frame, split_frame};
use crate::codec::{ChunkSpec, CodecChain};
use crate::dtype::{fill_pattern, DataKind};
use crate::error::{Error, Result};
use crate::indexing::{copy_run, extend_run};

/// Decode one chunk (or the fill value when `encoded` is None) into its
/// region of the output.
pub fn decode_region(
    chain: &CodecChain,
    region: &ChunkRegion,
    encoded: Option<Bytes>,
    out: Output<'_>,
) -> Result<()> {
    let view = match out {
        Output::Fixed(view) => view,
        Output::Var(list) => return decode_var_region(chain, region, encoded, list),
    };
    let spec = chain.spec();
    let elem = spec.dtype.size;
    let mut result = Ok(());
    let Some(encoded) = encoded else {
        let mut pattern = Vec::new();
        region.for_each_run(&spec.shape, true, |_, t, n| {
            if pattern.len() < n * elem {
                pattern.resize(n * elem, 0);
                fill_pattern(&mut pattern, &spec.fill);
            }
            if result.is_ok() {
                result = view.write(t * elem, &pattern[..n * elem]);
            }
        });
        return result;
    };
    if let Some(offset) = region.contiguous_offset(&spec.shape) {
        // SAFETY: this chunk's region of the output is exactly these bytes,
        // and the regions of one read are disjoint (see `OutView`).
        let dst = unsafe { view.slice(offset * elem, spec.nbytes())? };
        return chain.decode_stored_into(encoded, dst);
    }
    let decoded = chain.decode_stored(encoded)?;
    region.for_each_run(&spec.shape, true, |f, t, n| {
        if result.is_ok() {
            result = view.write(t * elem, &decoded[f * elem..(f + n) * elem]);
        }
    });
    result
}

/// `decode_region` for variable-length elements.
fn decode_var_region(
    chain: &CodecChain,
    region: &ChunkRegion,
    encoded: Option<Bytes>,
    out: &std::sync::Mutex<Vec<Vec<u8>>>,
) -> Result<()> {
    let spec = chain.spec();
    let mut placed: Vec<(usize, Vec<u8>)> = Vec::new();
    match encoded {
        None => region.for_each_run(&spec.shape, true, |_, t, n| {
            placed.extend((t..t + n).map(|i| (i, spec.fill.clone())));
        }),
        Some(encoded) => {
            let frame = chain.decode_stored(encoded)?;
            let utf8 = spec.dtype.kind == DataKind::String;
            let ranges = split_frame(&frame, spec.num_elements(), utf8)?;
            region.for_each_run(&spec.shape, true, |f, t, n| {
                placed.extend((0..n).map(|k| (t + k, frame[ranges[f + k].clone()].to_vec())));
            });
        }
    }
    let mut list = out.lock().unwrap_or_else(|p| p.into_inner());
    for (i, item) in placed {
        let slot = list
            .get_mut(i)
            .ok_or_else(|| Error::value("internal error: element outside the output list"))?;
        *slot = item;
    }
    Ok(())
}

/// The new encoded chunk after writing the selected part of `value` over
/// `existing` (or the fill value); `None` when it is all fill value and
/// empty chunks are not written (`write_empty` false).
fn encode_plain(
    chain: &CodecChain,
    region: &ChunkRegion,
    existing: Option<Bytes>,
    value: Input<'_>,
    write_empty: bool,
) -> Result<Option<Vec<u8>>> {
    let spec = chain.spec();
    if spec.dtype.is_var_len() {
        return encode_var(chain, region, existing, value, write_empty);
    }
    let elem = spec.dtype.size;
    let full = match (&existing, value) {
        (None, Input::Fixed(value)) if region.covers_full_chunk(&spec.shape) => {
            gather_full_chunk(spec, region, value)
        }
        _ => None,
    };
    let mut chunk = match (full, existing) {
        (Some(chunk), _) => return finish_chunk(chain, chunk, write_empty),
        (None, Some(encoded)) => chain.decode_stored(encoded)?,
        (None, None) => {
            let mut buf = crate::alloc::zeroed(spec.nbytes())?;
            fill_pattern(&mut buf, &spec.fill);
            buf
        }
    };
    match value {
        Input::Fixed(value) => region.for_each_run(&spec.shape, false, |f, t, n| {
            copy_run(
                &mut chunk[t * elem..(t + n) * elem],
                &value[f * elem..(f + n) * elem],
            );
        }),
        Input::Scalar(one) => {
            if one.len() != elem {
                return Err(Error::value(format!(
                    "a scalar value has {} bytes, the data type has {elem}",
                    one.len()
                )));
            }
            region.for_each_run(&spec.shape, false, |_, t, n| {
                fill_pattern(&mut chunk[t * elem..(t + n) * elem], one);
            });
        }
        Input::Var(_) => {
            return Err(Error::value(
                "fixed-size data is written from a buffer, not a list of values",
            ))
        }
    }
    finish_chunk(chain, chunk, write_empty)
}

/// The chunk encoded, or `None` when it is all fill value and empty chunks
/// are not written.
fn finish_chunk(chain: &CodecChain, chunk: Vec<u8>, write_empty: bool) -> Result<Option<Vec<u8>>> {
    let spec = chain.spec();
    if !write_empty && spec.dtype.all_equal_fill(&chunk, &spec.fill) {
        return Ok(None);
    }
    chain.encode(chunk).map(Some)
}

/// A chunk the write covers entirely, built by appending the value's runs in
/// chunk order (never filled first); `None` if the runs do not come in that
/// order, for the general path to do.
fn gather_full_chunk(spec: &ChunkSpec, region: &ChunkRegion, value: &[u8]) -> Option<Vec<u8>> {
    let elem = spec.dtype.size;
    let mut chunk = crate::alloc::with_capacity(spec.nbytes()).ok()?;
    let mut in_order = true;
    region.for_each_run(&spec.shape, false, |f, t, n| {
        if in_order && t * elem == chunk.len() {
            extend_run(&mut chunk, &value[f * elem..(f + n) * elem]);
        } else {
            in_order = false;
        }
    });
    (in_order && chunk.len() == spec.nbytes()).then_some(chunk)
}

/// `encode_plain` for variable-length elements.
fn encode_var(
    chain: &CodecChain,
    region: &ChunkRegion,
    existing: Option<Bytes>,
    value: Input<'_>,
    write_empty: bool,
) -> Result<Option<Vec<u8>>> {
    let spec = chain.spec();
    let n = spec.num_elements();
    let mut elems: Vec<Vec<u8>> = match existing {
        Some(encoded) => {
            let frame = chain.decode_stored(encoded)?;
            let utf8 = spec.dtype.kind == DataKind::String;
            split_frame(&frame, n, utf8)?
                .into_iter()
                .map(|r| frame[r].to_vec())
                .collect()
        }
        None => crate::alloc::filled(spec.fill.clone(), n)?,
    };
    match value {
        Input::Var(items) => region.for_each_run(&spec.shape, false, |f, t, k| {
            elems[t..t + k].clone_from_slice(&items[f..f + k]);
        }),
        Input::Scalar(one) => region.for_each_run(&spec.shape, false, |_, t, k| {
            elems[t..t + k].iter_mut().for_each(|e| *e = one.to_vec());
        }),
        Input::Fixed(_) => {
            return Err(Error::value(
                "variable-length data is written from a list of values, not a buffer",
            ))
        }
    }
    if !write_empty && elems.iter().all(|e| *e == spec.fill) {
        return Ok(None);
    }
    chain
        .encode(build_frame(elems.iter().map(Vec::as_slice))?)
        .map(Some)
}

/// The new encoded chunk of a scalar write over a whole chunk, once computed:
/// it is the same for every such chunk (or inner chunk) of the write.
#[derive(Default)]
pub struct ScalarMemo(OnceLock<Option<Bytes>>);

/// One chunk's new bytes after writing `region` of `value` over `existing`
/// (`None`: missing, or not needed: callers pass the old chunk only where
/// [`super::ChunkTask::needs_old`] says the write needs it):
/// `None` when the chunk ends up all fill value and `write_empty` is false.
/// A chunk of a lone partial codec (a shard) is updated part by part: only
/// the parts the region touches are decoded and encoded again.
///
/// The blocks this makes come from the allocator that keeps freed memory for
/// reuse ([`crate::alloc::reusing`]).
pub fn encode_region(
    chain: &CodecChain,
    region: &ChunkRegion,
    existing: Option<Bytes>,
    value: Input<'_>,
    write_empty: bool,
    memo: &ScalarMemo,
) -> Result<Option<Bytes>> {
    if matches!(region, ChunkRegion::Empty) {
        return Ok(existing);
    }
    crate::alloc::reusing(|| match chain.parts() {
        None => encode_memo(chain, region, existing, value, write_empty, memo).map(Cow::into_owned),
        Some(codec) => {
            // Parts the region leaves alone, past the array's end included,
            // keep their bytes.
            let mut chunks: Vec<Option<Bytes>> = crate::alloc::filled(None, codec.num_parts())?;
            if let Some(old) = existing {
                let map = codec.map_of(&old)?;
                for (slot, range) in chunks.iter_mut().zip(map) {
                    *slot = range.map(|r| old.slice(r.start as usize..r.end as usize));
                }
            }
            let members = codec.parts_of(region);
            let each = |(pos, part_region): &(usize, ChunkRegion)| {
                crate::alloc::reusing(|| {
                    let old = if part_region.covers_chunk() {
                        None
                    } else {
                        chunks[*pos].clone()
                    };
                    let part = codec.part_chain();
                    encode_memo(part, part_region, old, value, write_empty, memo)
                        .map(|new| (*pos, new.into_owned()))
                        .map_err(|e| e.context(codec.part_name(*pos)))
                })
            };
            // On the pool even when the shard is the call's only chunk (encoded
            // on the calling thread): not on rayon's global pool.
            let updates: Vec<(usize, Option<Bytes>)> =
                crate::pool::install(|| members.par_iter().map(each).collect::<Result<_>>())??;
            for (pos, new) in updates {
                chunks[pos] = new;
            }
            Ok(codec.assemble(&chunks)?.map(Bytes::from))
        }
    })
}

/// `encode_plain`, computing the result for a scalar over a whole chunk only
/// once per write (`memo`), since every such chunk encodes to the same bytes.
fn encode_memo<'m>(
    chain: &CodecChain,
    region: &ChunkRegion,
    existing: Option<Bytes>,
    value: Input<'_>,
    write_empty: bool,
    memo: &'m ScalarMemo,
) -> Result<Cow<'m, Option<Bytes>>> {
    let whole = matches!(value, Input::Scalar(_)) && region.covers_full_chunk(&chain.spec().shape);
    let encode = |existing| {
        encode_plain(chain, region, existing, value, write_empty).map(|o| o.map(Bytes::from))
    };
    if !whole {
        return encode(existing).map(Cow::Owned);
    }
    if let Some(done) = memo.0.get() {
        return Ok(Cow::Borrowed(done));
    }
    let new = encode(None)?;
    Ok(Cow::Borrowed(memo.0.get_or_init(|| new)))
}

/// The chunk of all fill values, encoded (written where a store cannot
/// delete a chunk that became empty).
pub fn encode_fill(chain: &CodecChain) -> Result<Bytes> {
    let spec = chain.spec();
    if spec.dtype.is_var_len() {
        let n = spec.num_elements();
        let frame = build_frame(std::iter::repeat_n(spec.fill.as_slice(), n))?;
        return chain.encode(frame).map(Bytes::from);
    }
    let mut buf = crate::alloc::zeroed(spec.nbytes())?;
    fill_pattern(&mut buf, &spec.fill);
    chain.encode(buf).map(Bytes::from)
}
