//! An opened array: chunk grid + codec chain + store, and the batch read and
//! write that fan out over chunks on the thread pool.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use crate::codec::sharding::ShardingCodec;
use crate::codec::vlen::{build_frame, split_frame};
use crate::codec::{ChunkSpec, CodecChain};
use crate::dtype::{fill_pattern, DataKind, DataType};
use crate::error::{Error, Result};
use crate::grid::ChunkKeyEncoding;
use crate::indexing::{copy_run, extend_run, Plan, Region, Selection};
use crate::pool::pool;
use crate::store::{ReadInto, Store};

/// The normalized array description the Python layer hands over.
#[derive(Debug, Deserialize)]
struct CoreMetadata {
    shape: Vec<u64>,
    chunk_shape: Vec<usize>,
    data_type: Value,
    codecs: Value,
    chunk_key_encoding: Value,
}

#[derive(Debug)]
pub struct ArrayCore {
    store: Arc<dyn Store>,
    /// Node path inside the store, without leading or trailing `/`.
    path: String,
    shape: Vec<u64>,
    chunk_shape: Vec<usize>,
    key_encoding: ChunkKeyEncoding,
    chain: CodecChain,
    write_empty_chunks: bool,
}

/// The caller's output buffer, shared by the worker threads.
#[derive(Clone, Copy)]
pub(crate) struct SharedOut {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the pointer comes from a `&mut [u8]` that outlives the parallel
// section (`ArrayCore::read` and the batch reads of `crate::batch` borrow it
// for their whole duration). Each output element belongs to exactly one
// chunk's region: the projection partitions every dimension's output indices
// among the chunks, and `crate::batch` checks that the regions a caller hands
// over do not overlap; so the threads write disjoint bytes. Every write is
// bounds-checked against `len`.
unsafe impl Send for SharedOut {}
unsafe impl Sync for SharedOut {}

impl SharedOut {
    /// Share `buf` with the worker threads; the caller keeps it borrowed for
    /// as long as the threads use it.
    pub(crate) fn new(buf: &mut [u8]) -> Self {
        SharedOut {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
        }
    }

    fn check(&self, offset: usize, n: usize) -> Result<()> {
        if offset.checked_add(n).is_none_or(|end| end > self.len) {
            return Err(Error::value(
                "internal error: write outside the output buffer",
            ));
        }
        Ok(())
    }

    fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.check(offset, src.len())?;
        // SAFETY: in bounds (checked above); disjoint from other threads' writes
        // (see the Send/Sync comment); `src` is a different allocation.
        unsafe { copy_row(src.as_ptr(), self.ptr.add(offset), src.len()) };
        Ok(())
    }

    /// The bytes `[offset, offset + n)` as a slice.
    ///
    /// # Safety
    /// No other thread may access these bytes while the slice lives.
    unsafe fn slice<'a>(self, offset: usize, n: usize) -> Result<&'a mut [u8]> {
        self.check(offset, n)?;
        Ok(std::slice::from_raw_parts_mut(self.ptr.add(offset), n))
    }
}

/// Copy `n` bytes from `src` to `dst`. Rows of a few common sizes (a chunk
/// row of 8 to 128 two- to eight-byte elements) are copied inline: placing a
/// decoded chunk is one such copy per row, and a call into `memcpy` per row
/// costs more than the copy.
///
/// # Safety
/// `src` must be valid for reads and `dst` for writes of `n` bytes, and the
/// two ranges must not overlap.
#[inline(always)]
unsafe fn copy_row(src: *const u8, dst: *mut u8, n: usize) {
    #[inline(always)]
    unsafe fn fixed<const N: usize>(src: *const u8, dst: *mut u8) {
        // SAFETY: the caller's contract, with n == N; unaligned access is allowed.
        unsafe {
            dst.cast::<[u8; N]>()
                .write_unaligned(src.cast::<[u8; N]>().read_unaligned())
        }
    }
    // SAFETY: the caller's contract; each arm copies exactly `n` bytes.
    unsafe {
        match n {
            16 => fixed::<16>(src, dst),
            32 => fixed::<32>(src, dst),
            64 => fixed::<64>(src, dst),
            128 => fixed::<128>(src, dst),
            256 => fixed::<256>(src, dst),
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

/// Where a read puts elements: the caller's fixed-size buffer, or a list of
/// variable-length elements in selection order.
#[derive(Clone, Copy)]
pub(crate) enum Output<'a> {
    Fixed(SharedOut),
    Var(&'a Mutex<Vec<Vec<u8>>>),
}

/// What a write takes elements from, in selection order.
#[derive(Clone, Copy)]
pub enum Input<'a> {
    Fixed(&'a [u8]),
    Var(&'a [Vec<u8>]),
    /// One element (fixed-size bytes, or one variable-length value) written
    /// to every selected element, as numpy broadcasts a scalar.
    Scalar(&'a [u8]),
}

impl ArrayCore {
    /// Open an array from its normalized metadata JSON and fill value bytes
    /// (one element, native byte order).
    pub fn new(
        store: Arc<dyn Store>,
        path: &str,
        metadata_json: &str,
        fill: Vec<u8>,
        write_empty_chunks: bool,
    ) -> Result<Self> {
        let path = path.trim_matches('/').to_string();
        let at = |e: Error| e.context(format!("array '{path}'"));
        let meta: CoreMetadata = serde_json::from_str(metadata_json)
            .map_err(|e| at(Error::metadata(format!("invalid metadata: {e}"))))?;
        if meta.shape.len() != meta.chunk_shape.len() {
            return Err(at(Error::metadata(format!(
                "shape has {} dimensions but chunk shape has {}",
                meta.shape.len(),
                meta.chunk_shape.len()
            ))));
        }
        if meta.chunk_shape.contains(&0) {
            return Err(at(Error::metadata("chunk shape must be positive")));
        }
        let dtype = DataType::from_json(&meta.data_type).map_err(at)?;
        if !dtype.is_var_len() && fill.len() != dtype.size {
            return Err(at(Error::metadata(format!(
                "fill value has {} bytes, data type {} has {}",
                fill.len(),
                meta.data_type,
                dtype.size
            ))));
        }
        let spec = ChunkSpec {
            shape: meta.chunk_shape.clone(),
            dtype,
            fill,
        };
        let chain = CodecChain::from_json(&meta.codecs, spec).map_err(at)?;
        let key_encoding = ChunkKeyEncoding::from_json(&meta.chunk_key_encoding).map_err(at)?;
        Ok(ArrayCore {
            store,
            path,
            shape: meta.shape,
            chunk_shape: meta.chunk_shape,
            key_encoding,
            chain,
            write_empty_chunks,
        })
    }

    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    pub fn data_type(&self) -> DataType {
        self.chain.spec().dtype
    }

    pub fn set_write_empty_chunks(&mut self, on: bool) {
        self.write_empty_chunks = on;
    }

    /// The store key of the chunk at grid coordinates `coords`.
    pub fn chunk_key(&self, coords: &[u64]) -> String {
        let key = self.key_encoding.encode(coords);
        if self.path.is_empty() {
            key
        } else {
            format!("{}/{key}", self.path)
        }
    }

    fn in_chunk(&self, key: &str) -> impl Fn(Error) -> Error + '_ {
        let prefix = format!("array '{}', chunk '{key}'", self.path);
        move |e| e.context(&prefix)
    }

    fn elem(&self) -> usize {
        self.chain.spec().dtype.size
    }

    fn check_buffer(&self, plan: &Plan, len: usize, what: &str) -> Result<()> {
        let want = plan.out_shape.iter().product::<usize>() * self.elem();
        if len != want {
            return Err(Error::value(format!(
                "array '{}': {what} buffer has {len} bytes, the selection needs {want}",
                self.path
            )));
        }
        Ok(())
    }

    /// The chunk shape the read and write paths work on: inner chunks when the
    /// chain is a lone sharding codec, else the grid's chunks.
    fn work_chunk_shape(&self) -> &[usize] {
        match self.chain.sharding() {
            Some(sh) => sh.inner_shape(),
            None => &self.chunk_shape,
        }
    }

    fn plan(&self, sel: &Selection) -> Result<Plan> {
        Plan::new(sel, &self.shape, self.work_chunk_shape())
            .map_err(|e| e.context(format!("array '{}'", self.path)))
    }

    fn check_kind(&self, var_len: bool) -> Result<()> {
        if self.chain.spec().dtype.is_var_len() != var_len {
            return Err(Error::value(format!(
                "array '{}': {} data needs the {} read and write calls",
                self.path,
                if var_len {
                    "fixed-size"
                } else {
                    "variable-length"
                },
                if var_len { "buffer" } else { "variable-length" },
            )));
        }
        Ok(())
    }

    /// Read the selection into `out` (C order, selection shape, native byte order).
    pub fn read(&self, sel: &Selection, out: &mut [u8]) -> Result<()> {
        self.check_kind(false)?;
        let plan = self.plan(sel)?;
        self.check_buffer(&plan, out.len(), "output")?;
        self.read_with(&plan, Output::Fixed(SharedOut::new(out)))
    }

    /// Read the selection of a variable-length array: its elements' bytes in
    /// selection order (C order).
    pub fn read_var(&self, sel: &Selection) -> Result<Vec<Vec<u8>>> {
        self.check_kind(true)?;
        let plan = self.plan(sel)?;
        let n: usize = plan.out_shape.iter().product();
        let out = Mutex::new(vec![Vec::new(); n]);
        self.read_with(&plan, Output::Var(&out))?;
        Ok(out.into_inner().unwrap_or_else(|p| p.into_inner()))
    }

    fn read_with(&self, plan: &Plan, out: Output<'_>) -> Result<()> {
        let work = plan.work();
        let out_shape = &plan.out_shape;
        let read_one = |(coords, region): &(Vec<u64>, Region<'_>)| {
            let key = self.chunk_key(coords);
            let ctx = self.in_chunk(&key);
            if self
                .read_straight_into(&key, out_shape, region, out)
                .map_err(&ctx)?
            {
                return Ok(());
            }
            let encoded = self.store.get(&key).map_err(&ctx)?;
            place_chunk(&self.chain, out_shape, region, encoded, out).map_err(&ctx)
        };
        if work.len() == 1 {
            // One chunk (or inner chunk): handing it to a worker thread costs
            // more than it saves.
            return match self.chain.sharding() {
                None => read_one(&work[0]),
                Some(sh) => {
                    let (shard, members) = &group_by_shard(sh, &work)[0];
                    self.read_shard(sh, out_shape, shard, members, out)
                }
            };
        }
        pool()?.install(|| match self.chain.sharding() {
            None => work.par_iter().try_for_each(read_one),
            Some(sh) => group_by_shard(sh, &work)
                .par_iter()
                .try_for_each(|(shard, members)| {
                    self.read_shard(sh, out_shape, shard, members, out)
                }),
        })
    }

    /// Uncompressed chunks that land whole and contiguous in the output are
    /// read from the store straight into it. True when that was done (or the
    /// chunk is missing and its region was filled); false to take the normal
    /// path (other chains, other regions, a stored size that is wrong: the
    /// normal path reports that).
    fn read_straight_into(
        &self,
        key: &str,
        out_shape: &[usize],
        region: &Region<'_>,
        out: Output<'_>,
    ) -> Result<bool> {
        let Output::Fixed(shared) = out else {
            return Ok(false);
        };
        let spec = self.chain.spec();
        if !self.chain.is_passthrough() {
            return Ok(false);
        }
        let Some(offset) = direct_offset(out_shape, region, &spec.shape) else {
            return Ok(false);
        };
        // SAFETY: this chunk's output region is exactly these bytes, and regions
        // of different chunks are disjoint (see `SharedOut`); the slice is gone
        // before anything else touches the region.
        let dst = unsafe { shared.slice(offset * spec.dtype.size, spec.nbytes())? };
        match self.store.read_into(key, dst)? {
            ReadInto::Read => Ok(true),
            ReadInto::Missing => {
                place_chunk(&self.chain, out_shape, region, None, out)?;
                Ok(true)
            }
            ReadInto::OtherSize => Ok(false),
        }
    }

    fn read_shard(
        &self,
        sh: &ShardingCodec,
        out_shape: &[usize],
        shard: &[u64],
        members: &ShardMembers<'_, '_>,
        out: Output<'_>,
    ) -> Result<()> {
        let key = self.chunk_key(shard);
        sh.read_members(self.store.as_ref(), &key, members, |region, bytes| {
            place_chunk(sh.inner(), out_shape, region, bytes, out)
        })
        .map_err(self.in_chunk(&key))?;
        Ok(())
    }

    /// Write `value` (C order, selection shape, native byte order) to the selection.
    pub fn write(&self, sel: &Selection, value: &[u8]) -> Result<()> {
        self.check_kind(false)?;
        let plan = self.plan(sel)?;
        self.check_buffer(&plan, value.len(), "value")?;
        self.write_with(&plan, Input::Fixed(value))
    }

    /// Write variable-length elements (selection order) to the selection.
    pub fn write_var(&self, sel: &Selection, items: &[Vec<u8>]) -> Result<()> {
        self.check_kind(true)?;
        let plan = self.plan(sel)?;
        let n: usize = plan.out_shape.iter().product();
        if items.len() != n {
            return Err(Error::value(format!(
                "array '{}': {} values given, the selection has {n} elements",
                self.path,
                items.len()
            )));
        }
        self.write_with(&plan, Input::Var(items))
    }

    /// Write one element to every selected element, as numpy broadcasts a
    /// scalar: `one` is its bytes (native byte order) for fixed-size data, the
    /// value's bytes (UTF-8 for strings) for variable-length data.
    pub fn write_scalar(&self, sel: &Selection, one: &[u8]) -> Result<()> {
        let dtype = self.chain.spec().dtype;
        if !dtype.is_var_len() && one.len() != dtype.size {
            return Err(Error::value(format!(
                "array '{}': a scalar value has {} bytes, the data type has {}",
                self.path,
                one.len(),
                dtype.size
            )));
        }
        let plan = self.plan(sel)?;
        self.write_with(&plan, Input::Scalar(one))
    }

    fn write_with(&self, plan: &Plan, value: Input<'_>) -> Result<()> {
        let work = plan.work();
        let out_shape = &plan.out_shape;
        let memo = OnceLock::new();
        pool()?.install(|| match self.chain.sharding() {
            None => work.par_iter().try_for_each(|(coords, region)| {
                let key = self.chunk_key(coords);
                let ctx = self.in_chunk(&key);
                let existing = if region.covers_chunk() {
                    None
                } else {
                    self.store.get(&key).map_err(&ctx)?
                };
                match update_chunk_memo(
                    &memo,
                    &self.chain,
                    out_shape,
                    region,
                    existing,
                    value,
                    self.write_empty_chunks,
                )
                .map_err(&ctx)?
                .as_ref()
                {
                    Some(encoded) => self.store.set(&key, encoded),
                    None => self.store.delete(&key),
                }
                .map_err(&ctx)
            }),
            Some(sh) => group_by_shard(sh, &work)
                .par_iter()
                .try_for_each(|(shard, members)| {
                    self.write_shard(sh, out_shape, shard, members, value, &memo)
                }),
        })
    }

    fn write_shard(
        &self,
        sh: &ShardingCodec,
        out_shape: &[usize],
        shard: &[u64],
        members: &ShardMembers<'_, '_>,
        value: Input<'_>,
        memo: &FullChunkMemo,
    ) -> Result<()> {
        let key = self.chunk_key(shard);
        let ctx = self.in_chunk(&key);
        // As zarr-python's sharding codec: a shard is replaced without reading it only
        // when the write covers every inner chunk entirely, the parts beyond the array's
        // shape included; otherwise the inner chunks (and cells) a shrinking resize left
        // beyond the shape are kept, and come back when the array grows.
        let inner_shape = sh.inner_shape();
        let complete = members.len() == sh.num_inner()
            && members
                .iter()
                .all(|(_, r)| r.covers_full_chunk(inner_shape));
        let mut chunks: Vec<Option<Vec<u8>>> = vec![None; sh.num_inner()];
        if !complete {
            if let Some(old) = self.store.get(&key).map_err(&ctx)? {
                let index = sh.read_index(&old).map_err(&ctx)?;
                for (slot, range) in chunks.iter_mut().zip(index) {
                    *slot = range.map(|r| old[r.start as usize..r.end as usize].to_vec());
                }
            }
        }
        let updates: Vec<(usize, Option<Vec<u8>>)> = members
            .par_iter()
            .map(|(pos, region)| {
                let existing = if region.covers_full_chunk(inner_shape) {
                    None
                } else {
                    chunks[*pos].clone()
                };
                update_chunk_memo(
                    memo,
                    sh.inner(),
                    out_shape,
                    region,
                    existing,
                    value,
                    self.write_empty_chunks,
                )
                .map(|new| (*pos, new.into_owned()))
                .map_err(|e| e.context(format!("inner chunk {pos}")))
                .map_err(&ctx)
            })
            .collect::<Result<_>>()?;
        for (pos, new) in updates {
            chunks[pos] = new;
        }
        match sh.assemble(&chunks).map_err(&ctx)? {
            Some(bytes) => self.store.set(&key, &bytes),
            None => self.store.delete(&key),
        }
        .map_err(&ctx)
    }

    /// The decode floor: fetch and decode every stored chunk on the pool with
    /// no scattering into an output (inner chunks one by one for a lone
    /// sharding codec). Returns (chunks decoded, decoded bytes); read-all
    /// cannot be much faster than this.
    pub fn decode_stored_chunks(&self) -> Result<(usize, usize)> {
        let keys = self.stored_chunks()?;
        pool()?.install(|| {
            let counts: Vec<(usize, usize)> = keys
                .par_iter()
                .map(|(key, _)| {
                    let ctx = self.in_chunk(key);
                    let Some(encoded) = self.store.get(key).map_err(&ctx)? else {
                        return Ok((0, 0));
                    };
                    match self.chain.sharding() {
                        None => {
                            let decoded = self.chain.decode(encoded).map_err(&ctx)?;
                            Ok((1, decoded.len()))
                        }
                        Some(sh) => {
                            let index = sh.read_index(&encoded).map_err(&ctx)?;
                            let sizes: Vec<usize> = index
                                .par_iter()
                                .flatten()
                                .map(|r| {
                                    let bytes = encoded[r.start as usize..r.end as usize].to_vec();
                                    sh.inner().decode(bytes).map(|d| d.len()).map_err(&ctx)
                                })
                                .collect::<Result<_>>()?;
                            Ok((sizes.len(), sizes.iter().sum()))
                        }
                    }
                })
                .collect::<Result<_>>()?;
            Ok(counts
                .iter()
                .fold((0, 0), |(n, b), (cn, cb)| (n + cn, b + cb)))
        })
    }

    /// The stored chunk (or shard) keys of this array with their grid coordinates.
    pub fn stored_chunks(&self) -> Result<Vec<(String, Vec<u64>)>> {
        let prefix = if self.path.is_empty() {
            String::new()
        } else {
            format!("{}/", self.path)
        };
        let ndim = self.shape.len();
        Ok(self
            .store
            .list_prefix(&prefix)?
            .into_iter()
            .filter_map(|key| {
                let coords = self.key_encoding.decode(&key[prefix.len()..], ndim)?;
                Some((key, coords))
            })
            .collect())
    }
}

/// Where a whole chunk lands as one contiguous run of the output (an element
/// offset), if it does.
fn direct_offset(out_shape: &[usize], region: &Region<'_>, chunk_shape: &[usize]) -> Option<usize> {
    let Region::Box(parts) = region else {
        return None;
    };
    let full = parts
        .iter()
        .zip(chunk_shape)
        .all(|(p, &c)| p.covers_chunk && p.src.len() == c);
    let rows_span_output = parts
        .iter()
        .zip(out_shape)
        .skip(1)
        .all(|(p, &n)| p.dst.len() == n);
    if !(full && rows_span_output) {
        return None;
    }
    let row: usize = out_shape.iter().skip(1).product();
    Some(parts.first().map_or(0, |p| p.dst[0] * row))
}

/// Decode one chunk (or the fill value when `encoded` is None) into its
/// region of the output.
pub(crate) fn place_chunk(
    chain: &CodecChain,
    out_shape: &[usize],
    region: &Region<'_>,
    encoded: Option<Vec<u8>>,
    out: Output<'_>,
) -> Result<()> {
    let out = match out {
        Output::Fixed(shared) => shared,
        Output::Var(list) => return place_var_chunk(chain, out_shape, region, encoded, list),
    };
    let spec = chain.spec();
    let elem = spec.dtype.size;
    let mut result = Ok(());
    let Some(encoded) = encoded else {
        let mut pattern = Vec::new();
        region.for_each_run(&spec.shape, out_shape, true, |_, t, n| {
            if pattern.len() < n * elem {
                pattern.resize(n * elem, 0);
                fill_pattern(&mut pattern, &spec.fill);
            }
            if result.is_ok() {
                result = out.write(t * elem, &pattern[..n * elem]);
            }
        });
        return result;
    };
    if let Some(offset) = direct_offset(out_shape, region, &spec.shape) {
        // SAFETY: this chunk's output region is exactly these bytes, and
        // regions of different chunks are disjoint (see `SharedOut`).
        let dst = unsafe { out.slice(offset * elem, spec.nbytes())? };
        return chain.decode_into(encoded, dst);
    }
    let decoded = chain.decode(encoded)?;
    region.for_each_run(&spec.shape, out_shape, true, |f, t, n| {
        if result.is_ok() {
            result = out.write(t * elem, &decoded[f * elem..(f + n) * elem]);
        }
    });
    result
}

/// `place_chunk` for variable-length elements.
fn place_var_chunk(
    chain: &CodecChain,
    out_shape: &[usize],
    region: &Region<'_>,
    encoded: Option<Vec<u8>>,
    out: &Mutex<Vec<Vec<u8>>>,
) -> Result<()> {
    let spec = chain.spec();
    let mut placed: Vec<(usize, Vec<u8>)> = Vec::new();
    match encoded {
        None => region.for_each_run(&spec.shape, out_shape, true, |_, t, n| {
            placed.extend((t..t + n).map(|i| (i, spec.fill.clone())));
        }),
        Some(encoded) => {
            let frame = chain.decode(encoded)?;
            let utf8 = spec.dtype.kind == DataKind::String;
            let ranges = split_frame(&frame, spec.num_elements(), utf8)?;
            region.for_each_run(&spec.shape, out_shape, true, |f, t, n| {
                placed.extend((0..n).map(|k| (t + k, frame[ranges[f + k].clone()].to_vec())));
            });
        }
    }
    let mut list = out.lock().unwrap_or_else(|p| p.into_inner());
    for (i, item) in placed {
        if let Some(slot) = list.get_mut(i) {
            *slot = item;
        }
    }
    Ok(())
}

/// The new encoded chunk after writing the selected part of `value` over
/// `existing` (or the fill value); `None` when it is all fill value and
/// empty chunks are not written (`write_empty` false).
pub(crate) fn update_chunk(
    chain: &CodecChain,
    out_shape: &[usize],
    region: &Region<'_>,
    existing: Option<Vec<u8>>,
    value: Input<'_>,
    write_empty: bool,
) -> Result<Option<Vec<u8>>> {
    let spec = chain.spec();
    if spec.dtype.is_var_len() {
        return update_var_chunk(chain, out_shape, region, existing, value, write_empty);
    }
    let elem = spec.dtype.size;
    let full = match (&existing, value) {
        (None, Input::Fixed(value)) if region.covers_full_chunk(&spec.shape) => {
            gather_full_chunk(spec, out_shape, region, value)
        }
        _ => None,
    };
    let mut chunk = match (full, existing) {
        (Some(chunk), _) => return finish_chunk(chain, chunk, write_empty),
        (None, Some(encoded)) => chain.decode(encoded)?,
        (None, None) => {
            let mut buf = vec![0u8; spec.nbytes()];
            fill_pattern(&mut buf, &spec.fill);
            buf
        }
    };
    match value {
        Input::Fixed(value) => region.for_each_run(&spec.shape, out_shape, false, |f, t, n| {
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
            region.for_each_run(&spec.shape, out_shape, false, |_, t, n| {
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
fn gather_full_chunk(
    spec: &ChunkSpec,
    out_shape: &[usize],
    region: &Region<'_>,
    value: &[u8],
) -> Option<Vec<u8>> {
    let elem = spec.dtype.size;
    let mut chunk = Vec::with_capacity(spec.nbytes());
    let mut in_order = true;
    region.for_each_run(&spec.shape, out_shape, false, |f, t, n| {
        if in_order && t * elem == chunk.len() {
            extend_run(&mut chunk, &value[f * elem..(f + n) * elem]);
        } else {
            in_order = false;
        }
    });
    (in_order && chunk.len() == spec.nbytes()).then_some(chunk)
}

/// The new encoded chunk of a scalar write over a whole chunk, once computed:
/// it is the same for every such chunk of the write.
pub(crate) type FullChunkMemo = OnceLock<Option<Vec<u8>>>;

/// `update_chunk`, computing the result for a scalar over a whole chunk only
/// once per write (`memo`), since every such chunk encodes to the same bytes.
pub(crate) fn update_chunk_memo<'m>(
    memo: &'m FullChunkMemo,
    chain: &CodecChain,
    out_shape: &[usize],
    region: &Region<'_>,
    existing: Option<Vec<u8>>,
    value: Input<'_>,
    write_empty: bool,
) -> Result<Cow<'m, Option<Vec<u8>>>> {
    let whole = matches!(value, Input::Scalar(_)) && region.covers_full_chunk(&chain.spec().shape);
    if !whole {
        return update_chunk(chain, out_shape, region, existing, value, write_empty)
            .map(Cow::Owned);
    }
    if let Some(done) = memo.get() {
        return Ok(Cow::Borrowed(done));
    }
    let new = update_chunk(chain, out_shape, region, None, value, write_empty)?;
    Ok(Cow::Borrowed(memo.get_or_init(|| new)))
}

/// `update_chunk` for variable-length elements.
fn update_var_chunk(
    chain: &CodecChain,
    out_shape: &[usize],
    region: &Region<'_>,
    existing: Option<Vec<u8>>,
    value: Input<'_>,
    write_empty: bool,
) -> Result<Option<Vec<u8>>> {
    let spec = chain.spec();
    let n = spec.num_elements();
    let mut elems: Vec<Vec<u8>> = match existing {
        Some(encoded) => {
            let frame = chain.decode(encoded)?;
            let utf8 = spec.dtype.kind == DataKind::String;
            split_frame(&frame, n, utf8)?
                .into_iter()
                .map(|r| frame[r].to_vec())
                .collect()
        }
        None => vec![spec.fill.clone(); n],
    };
    match value {
        Input::Var(items) => region.for_each_run(&spec.shape, out_shape, false, |f, t, k| {
            elems[t..t + k].clone_from_slice(&items[f..f + k]);
        }),
        Input::Scalar(one) => region.for_each_run(&spec.shape, out_shape, false, |_, t, k| {
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

/// The inner chunks of one shard a selection touches: (index position in the
/// shard, the chunk's region).
type ShardMembers<'w, 'p> = Vec<(usize, &'w Region<'p>)>;

/// Chunk work grouped by shard: (shard coordinates, its inner chunks).
fn group_by_shard<'w, 'p>(
    sh: &ShardingCodec,
    work: &'w [(Vec<u64>, Region<'p>)],
) -> Vec<(Vec<u64>, ShardMembers<'w, 'p>)> {
    let cps = sh.chunks_per_shard();
    let mut shards: BTreeMap<Vec<u64>, ShardMembers<'w, 'p>> = BTreeMap::new();
    for (coords, region) in work {
        let shard: Vec<u64> = coords
            .iter()
            .zip(cps)
            .map(|(&c, &n)| c / n as u64)
            .collect();
        let inner: Vec<usize> = coords
            .iter()
            .zip(cps)
            .map(|(&c, &n)| (c % n as u64) as usize)
            .collect();
        shards
            .entry(shard)
            .or_default()
            .push((sh.inner_position(&inner), region));
    }
    shards.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexing::DimSelection;
    use crate::store::MemoryStore;
    use serde_json::json;

    fn array(store: Arc<dyn Store>, shape: &[u64], chunks: &[usize], codecs: Value) -> ArrayCore {
        let meta = json!({
            "shape": shape, "chunk_shape": chunks, "data_type": "uint16",
            "codecs": codecs, "chunk_key_encoding": {"name": "default", "separator": "/"}
        });
        ArrayCore::new(
            store,
            "a",
            &meta.to_string(),
            7u16.to_ne_bytes().to_vec(),
            false,
        )
        .unwrap()
    }

    fn all(shape: &[u64]) -> Selection {
        Selection::Orthogonal(
            shape
                .iter()
                .map(|&s| DimSelection::Slice {
                    start: 0,
                    stop: s,
                    step: 1,
                })
                .collect(),
        )
    }

    fn as_u16(b: &[u8]) -> Vec<u16> {
        b.chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect()
    }

    #[test]
    fn write_read_round_trip_with_edges_and_fill() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]);
        let a = array(Arc::clone(&store), &[10, 7], &[4, 3], codecs);
        let mut out = vec![0u8; 140];
        a.read(&all(&[10, 7]), &mut out).unwrap();
        assert!(as_u16(&out).iter().all(|&v| v == 7));
        let value: Vec<u8> = (0..70u16).flat_map(|v| v.to_ne_bytes()).collect();
        a.write(&all(&[10, 7]), &value).unwrap();
        assert_eq!(store.list_prefix("a/c/").unwrap().len(), 9);
        a.read(&all(&[10, 7]), &mut out).unwrap();
        assert_eq!(out, value);
        // Strided read of rows 1,4,7 and column 5.
        let sel = Selection::Orthogonal(vec![
            DimSelection::Slice {
                start: 1,
                stop: 10,
                step: 3,
            },
            DimSelection::Slice {
                start: 5,
                stop: 6,
                step: 1,
            },
        ]);
        let mut part = vec![0u8; 6];
        a.read(&sel, &mut part).unwrap();
        assert_eq!(as_u16(&part), vec![12, 33, 54]);
        // Writing fill value everywhere deletes the chunks.
        let fill: Vec<u8> = (0..70).flat_map(|_| 7u16.to_ne_bytes()).collect();
        a.write(&all(&[10, 7]), &fill).unwrap();
        assert!(store.list_prefix("a/c/").unwrap().is_empty());
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
        a.write(&sel, &[1, 0, 2, 0].map(u8::from))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut out = vec![0u8; 12];
        a.read(&all(&[6]), &mut out).unwrap();
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
        store.set("a/c/0", b"garbage!!").unwrap();
        let mut out = vec![0u8; 8];
        let err = a.read(&all(&[4]), &mut out).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Checksum);
        assert!(
            err.message.starts_with("array 'a', chunk 'a/c/0': crc32c"),
            "{}",
            err.message
        );
        let mut wrong = vec![0u8; 7];
        assert_eq!(
            a.read(&all(&[4]), &mut wrong).unwrap_err().kind,
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
        a.write(&Selection::Orthogonal(vec![]), &9u16.to_ne_bytes())
            .unwrap();
        assert!(store.exists("a/c").unwrap());
        let mut out = vec![0u8; 2];
        a.read(&Selection::Orthogonal(vec![]), &mut out).unwrap();
        assert_eq!(as_u16(&out), vec![9]);
    }

    /// A memory store that counts read calls and the bytes they return.
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

    /// An opened value whose range reads are counted.
    struct CountingValue<'a>(Box<dyn crate::store::OpenValue + 'a>, Arc<ReadCounts>);

    impl crate::store::OpenValue for CountingValue<'_> {
        fn read_ranges(&self, ranges: &[crate::store::ByteRange]) -> Result<Vec<Vec<u8>>> {
            let v = self.0.read_ranges(ranges)?;
            self.1.count(1, v.iter().map(Vec::len).sum());
            Ok(v)
        }
    }

    impl Store for CountingStore {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
            let v = self.inner.get(key)?;
            self.counts.count(1, v.as_ref().map_or(0, Vec::len));
            Ok(v)
        }
        fn open(&self, key: &str) -> Result<Option<Box<dyn crate::store::OpenValue + '_>>> {
            Ok(self.inner.open(key)?.map(|v| {
                Box::new(CountingValue(v, Arc::clone(&self.counts)))
                    as Box<dyn crate::store::OpenValue + '_>
            }))
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<()> {
            self.inner.set(key, value)
        }
        fn delete(&self, key: &str) -> Result<()> {
            self.inner.delete(key)
        }
        fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
            self.inner.list_prefix(prefix)
        }
        fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
            self.inner.list_dir(prefix)
        }
    }

    fn sharded(
        store: Arc<dyn Store>,
        shape: &[u64],
        shard: &[usize],
        inner: &[usize],
        location: &str,
    ) -> ArrayCore {
        array(
            store,
            shape,
            shard,
            json!([{"name": "sharding_indexed", "configuration": {
                "chunk_shape": inner,
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": location}}]),
        )
    }

    #[test]
    fn sharded_round_trip_with_edge_shards() {
        for location in ["start", "end"] {
            let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
            let a = sharded(Arc::clone(&store), &[10, 9], &[4, 6], &[2, 3], location);
            let value: Vec<u8> = (0..90u16).flat_map(|v| (v + 100).to_ne_bytes()).collect();
            a.write(&all(&[10, 9]), &value).unwrap();
            assert_eq!(store.list_prefix("a/c/").unwrap().len(), 6); // 3 x 2 shards
            let mut out = vec![0u8; 180];
            a.read(&all(&[10, 9]), &mut out).unwrap();
            assert_eq!(out, value);
            // Partial write into one inner chunk keeps its neighbours.
            let sel = Selection::Orthogonal(vec![
                DimSelection::Slice {
                    start: 5,
                    stop: 6,
                    step: 1,
                },
                DimSelection::Slice {
                    start: 4,
                    stop: 5,
                    step: 1,
                },
            ]);
            a.write(&sel, &1u16.to_ne_bytes()).unwrap();
            a.read(&all(&[10, 9]), &mut out).unwrap();
            let got = as_u16(&out);
            for (i, v) in got.iter().enumerate() {
                let want = if i == 5 * 9 + 4 { 1 } else { i as u16 + 100 };
                assert_eq!(*v, want, "element {i} ({location})");
            }
        }
    }

    #[test]
    fn shrunk_sharded_array_keeps_cells_beyond_its_shape() {
        // zarr-python 3.4's sharding semantics: a write covering a shard's part inside a
        // shrunk array keeps the inner chunks, and the cells, beyond the new shape.
        for inner in [1usize, 2, 4] {
            let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
            let value: Vec<u8> = [1u16, 2, 3, 4]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect();
            sharded(Arc::clone(&store), &[4], &[4], &[inner], "end")
                .write(&all(&[4]), &value)
                .unwrap();
            let nines: Vec<u8> = [9u16, 9].iter().flat_map(|v| v.to_ne_bytes()).collect();
            sharded(Arc::clone(&store), &[2], &[4], &[inner], "end")
                .write(&all(&[2]), &nines)
                .unwrap();
            let mut out = vec![0u8; 8];
            sharded(Arc::clone(&store), &[4], &[4], &[inner], "end")
                .read(&all(&[4]), &mut out)
                .unwrap();
            assert_eq!(as_u16(&out), vec![9, 9, 3, 4], "inner chunks of {inner}");
        }
        // An unsharded chunk is replaced: its cells beyond the shape become the fill value.
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
        let value: Vec<u8> = [1u16, 2, 3, 4]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        array(Arc::clone(&store), &[4], &[4], codecs.clone())
            .write(&all(&[4]), &value)
            .unwrap();
        let nines: Vec<u8> = [9u16, 9].iter().flat_map(|v| v.to_ne_bytes()).collect();
        array(Arc::clone(&store), &[2], &[4], codecs.clone())
            .write(&all(&[2]), &nines)
            .unwrap();
        let mut out = vec![0u8; 8];
        array(Arc::clone(&store), &[4], &[4], codecs)
            .read(&all(&[4]), &mut out)
            .unwrap();
        assert_eq!(as_u16(&out), vec![9, 9, 7, 7]);
    }

    #[test]
    fn one_inner_chunk_reads_index_and_that_chunk_only() {
        let counting = Arc::new(CountingStore::default());
        let store: Arc<dyn Store> = counting.clone();
        // One 64x64 shard of 8x8 inner chunks (64 of them), raw uint16.
        let a = sharded(Arc::clone(&store), &[64, 64], &[64, 64], &[8, 8], "end");
        let value: Vec<u8> = (0..4096u16).flat_map(|v| v.to_ne_bytes()).collect();
        a.write(&all(&[64, 64]), &value).unwrap();
        counting.take();
        let sel = Selection::Orthogonal(vec![
            DimSelection::Slice {
                start: 17,
                stop: 20,
                step: 1,
            },
            DimSelection::Slice {
                start: 40,
                stop: 41,
                step: 1,
            },
        ]);
        let mut out = vec![0u8; 6];
        a.read(&sel, &mut out).unwrap();
        assert_eq!(as_u16(&out), vec![17 * 64 + 40, 18 * 64 + 40, 19 * 64 + 40]);
        let index_size = 64 * 16 + 4;
        let chunk_size = 8 * 8 * 2;
        assert_eq!(counting.take(), (2, index_size + chunk_size));
        // The whole shard: the index, then every chunk once, in batches.
        let mut whole = vec![0u8; 8192];
        a.read(&all(&[64, 64]), &mut whole).unwrap();
        assert_eq!(whole, value);
        let (calls, bytes) = counting.take();
        assert_eq!(bytes, index_size + 64 * chunk_size);
        assert!((2..=65).contains(&calls), "{calls} store calls");
        // Two neighbouring inner chunks: the index and those two.
        let sel = Selection::Orthogonal(vec![
            DimSelection::Slice {
                start: 0,
                stop: 8,
                step: 1,
            },
            DimSelection::Slice {
                start: 0,
                stop: 16,
                step: 1,
            },
        ]);
        let mut two = vec![0u8; 256];
        a.read(&sel, &mut two).unwrap();
        let (calls, bytes) = counting.take();
        assert_eq!(bytes, index_size + 2 * chunk_size);
        assert!((2..=3).contains(&calls), "{calls} store calls");
    }

    #[test]
    fn missing_shards_and_empty_inner_chunks_read_as_fill() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let a = sharded(Arc::clone(&store), &[8], &[4], &[2], "end");
        a.write(
            &Selection::Orthogonal(vec![DimSelection::Slice {
                start: 0,
                stop: 1,
                step: 1,
            }]),
            &3u16.to_ne_bytes(),
        )
        .unwrap();
        assert_eq!(store.list_prefix("a/").unwrap(), vec!["a/c/0"]);
        let mut out = vec![0u8; 16];
        a.read(&all(&[8]), &mut out).unwrap();
        assert_eq!(as_u16(&out), vec![3, 7, 7, 7, 7, 7, 7, 7]);
        // Writing the fill value back empties the shard, which is then deleted.
        a.write(
            &Selection::Orthogonal(vec![DimSelection::Slice {
                start: 0,
                stop: 1,
                step: 1,
            }]),
            &7u16.to_ne_bytes(),
        )
        .unwrap();
        assert!(store.list_prefix("a/").unwrap().is_empty());
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
            let value: Vec<u8> = (0..30u16).flat_map(|v| v.to_ne_bytes()).collect();
            a.write(&all(&[6, 5]), &value).unwrap();
            // (5,4), (0,0), (3,1), (5,4)
            let points = Selection::Points(vec![5, 4, 0, 0, 3, 1, 5, 4]);
            let mut out = vec![0u8; 8];
            a.read(&points, &mut out).unwrap();
            assert_eq!(as_u16(&out), vec![29, 0, 16, 29]);
            // Repeated points: the last value wins, as in numpy.
            let new: Vec<u8> = [100u16, 101, 102, 103]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect();
            a.write(&points, &new).unwrap();
            let mut whole = vec![0u8; 60];
            a.read(&all(&[6, 5]), &mut whole).unwrap();
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
                Arc::clone(&store),
                "s",
                &meta.to_string(),
                b"-".to_vec(),
                false,
            )
            .unwrap();
            let sel = Selection::Orthogonal(vec![DimSelection::Indices(vec![4, 1])]);
            a.write_var(
                &sel,
                &[b"four".to_vec(), "\u{e9}t\u{e9}".as_bytes().to_vec()],
            )
            .unwrap();
            let got = a.read_var(&all(&[6])).unwrap();
            let want: Vec<Vec<u8>> = ["-", "\u{e9}t\u{e9}", "-", "-", "four", "-"]
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect();
            assert_eq!(got, want);
            assert_eq!(
                a.read_var(&Selection::Points(vec![4, 4, 0])).unwrap(),
                vec![want[4].clone(), want[4].clone(), want[0].clone()]
            );
            // Writing the fill value back removes what was stored.
            a.write_var(&sel, &[b"-".to_vec(), b"-".to_vec()]).unwrap();
            assert!(store.list_prefix("s/").unwrap().is_empty());
            // Fixed-size calls are refused on variable-length arrays.
            assert_eq!(
                a.read(&all(&[6]), &mut [0u8; 6]).unwrap_err().kind,
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
        let value: Vec<u8> = (0..24u16).flat_map(|v| v.to_ne_bytes()).collect();
        a.write(&all(&[6, 4]), &value).unwrap();
        store.delete("a/c/1/0").unwrap();
        let mut out = vec![0u8; 48];
        a.read(&all(&[6, 4]), &mut out).unwrap();
        let mut expected = as_u16(&value);
        expected[8..16].iter_mut().for_each(|v| *v = 7); // the missing chunk: fill
        assert_eq!(as_u16(&out), expected);
        // A stored chunk of the wrong size is still a corrupt-chunk error.
        store.set("a/c/2/0", &[1, 2, 3]).unwrap();
        let err = a.read(&all(&[6, 4]), &mut out).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Corrupt);
        assert!(err.message.contains("chunk 'a/c/2/0'"), "{}", err.message);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
