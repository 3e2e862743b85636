//! An opened array: chunk grid + codec chain + store, and the batch read and
//! write that fan out over chunks on the thread pool.

use std::sync::Arc;

use rayon::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use crate::codec::{ChunkSpec, CodecChain};
use crate::dtype::{fill_pattern, DataType};
use crate::error::{Error, Result};
use crate::grid::ChunkKeyEncoding;
use crate::indexing::{copy_selected, for_each_run, DimChunk, DimSelection, Layout, Projection};
use crate::pool::pool;
use crate::store::Store;

/// The normalized array description the Python layer hands over.
#[derive(Debug, Deserialize)]
struct CoreMetadata {
    shape: Vec<u64>,
    chunk_shape: Vec<usize>,
    data_type: String,
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
struct SharedOut {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the pointer comes from a `&mut [u8]` that outlives the parallel
// section (`ArrayCore::read` borrows it for its whole duration). Each output
// element belongs to exactly one chunk's region, because the projection
// partitions every dimension's output indices among the chunks, so the
// threads write disjoint bytes; every write is bounds-checked against `len`.
unsafe impl Send for SharedOut {}
unsafe impl Sync for SharedOut {}

impl SharedOut {
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
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(offset), src.len()) };
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
        let dtype = DataType::from_name(&meta.data_type).map_err(at)?;
        if fill.len() != dtype.size {
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

    fn check_buffer(&self, proj: &Projection, len: usize, what: &str) -> Result<()> {
        let want = proj.out_shape.iter().product::<usize>() * self.elem();
        if len != want {
            return Err(Error::value(format!(
                "array '{}': {what} buffer has {len} bytes, the selection needs {want}",
                self.path
            )));
        }
        Ok(())
    }

    /// Read the selection into `out` (C order, selection shape, native byte order).
    pub fn read(&self, sel: &[DimSelection], out: &mut [u8]) -> Result<()> {
        let proj = Projection::new(sel, &self.shape, &self.chunk_shape)
            .map_err(|e| e.context(format!("array '{}'", self.path)))?;
        self.check_buffer(&proj, out.len(), "output")?;
        let shared = SharedOut {
            ptr: out.as_mut_ptr(),
            len: out.len(),
        };
        let chunks = proj.chunks();
        pool()?.install(|| {
            chunks
                .par_iter()
                .try_for_each(|which| self.read_chunk_into(&proj, &proj.parts(which), shared))
        })
    }

    /// Where a whole chunk lands as one contiguous run of the output, if it does.
    fn direct_offset(&self, proj: &Projection, parts: &[&DimChunk]) -> Option<usize> {
        let full = parts
            .iter()
            .zip(&self.chunk_shape)
            .all(|(p, &c)| p.covers_chunk && p.src.len() == c);
        let rows_span_output = parts
            .iter()
            .zip(&proj.out_shape)
            .skip(1)
            .all(|(p, &n)| p.dst.len() == n);
        if !(full && rows_span_output) {
            return None;
        }
        let row: usize = proj.out_shape.iter().skip(1).product();
        Some(parts.first().map_or(0, |p| p.dst[0] * row) * self.elem())
    }

    fn read_chunk_into(
        &self,
        proj: &Projection,
        parts: &[&DimChunk],
        out: SharedOut,
    ) -> Result<()> {
        let coords: Vec<u64> = parts.iter().map(|p| p.chunk).collect();
        let key = self.chunk_key(&coords);
        let ctx = self.in_chunk(&key);
        let elem = self.elem();
        let chunk_shape = &self.chain.spec().shape;
        let Some(encoded) = self.store.get(&key).map_err(&ctx)? else {
            let fill = &self.chain.spec().fill;
            let mut result = Ok(());
            let mut pattern = Vec::new();
            for_each_run(
                parts,
                Layout::chunk(chunk_shape),
                Layout::selection(&proj.out_shape),
                |_, t, n| {
                    if pattern.len() < n * elem {
                        pattern.resize(n * elem, 0);
                        fill_pattern(&mut pattern, fill);
                    }
                    if result.is_ok() {
                        result = out.write(t * elem, &pattern[..n * elem]);
                    }
                },
            );
            return result;
        };
        if let Some(offset) = self.direct_offset(proj, parts) {
            // SAFETY: this chunk's output region is exactly these bytes, and
            // regions of different chunks are disjoint (see `SharedOut`).
            let dst = unsafe { out.slice(offset, self.chain.spec().nbytes())? };
            return self.chain.decode_into(encoded, dst).map_err(&ctx);
        }
        let decoded = self.chain.decode(encoded).map_err(&ctx)?;
        let mut result = Ok(());
        for_each_run(
            parts,
            Layout::chunk(chunk_shape),
            Layout::selection(&proj.out_shape),
            |f, t, n| {
                if result.is_ok() {
                    result = out.write(t * elem, &decoded[f * elem..(f + n) * elem]);
                }
            },
        );
        result
    }

    /// Write `value` (C order, selection shape, native byte order) to the selection.
    pub fn write(&self, sel: &[DimSelection], value: &[u8]) -> Result<()> {
        let proj = Projection::new(sel, &self.shape, &self.chunk_shape)
            .map_err(|e| e.context(format!("array '{}'", self.path)))?;
        self.check_buffer(&proj, value.len(), "value")?;
        let chunks = proj.chunks();
        pool()?.install(|| {
            chunks
                .par_iter()
                .try_for_each(|which| self.write_chunk_from(&proj, &proj.parts(which), value))
        })
    }

    fn write_chunk_from(&self, proj: &Projection, parts: &[&DimChunk], value: &[u8]) -> Result<()> {
        let coords: Vec<u64> = parts.iter().map(|p| p.chunk).collect();
        let key = self.chunk_key(&coords);
        let ctx = self.in_chunk(&key);
        let spec = self.chain.spec();
        let complete = parts.iter().all(|p| p.covers_chunk);
        let existing = if complete {
            None
        } else {
            self.store.get(&key).map_err(&ctx)?
        };
        let mut chunk = match existing {
            Some(encoded) => self.chain.decode(encoded).map_err(&ctx)?,
            None => {
                let mut buf = vec![0u8; spec.nbytes()];
                fill_pattern(&mut buf, &spec.fill);
                buf
            }
        };
        copy_selected(
            parts,
            value,
            Layout::selection(&proj.out_shape),
            &mut chunk,
            Layout::chunk(&spec.shape),
            spec.dtype.size,
        );
        if !self.write_empty_chunks && spec.dtype.all_equal_fill(&chunk, &spec.fill) {
            return self.store.delete(&key).map_err(&ctx);
        }
        let encoded = self.chain.encode(chunk).map_err(&ctx)?;
        self.store.set(&key, &encoded).map_err(&ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn all(shape: &[u64]) -> Vec<DimSelection> {
        shape
            .iter()
            .map(|&s| DimSelection::Slice {
                start: 0,
                stop: s,
                step: 1,
            })
            .collect()
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
        let sel = vec![
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
        ];
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
        let sel = vec![DimSelection::Indices(vec![5, 1])];
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
        a.write(&[], &9u16.to_ne_bytes()).unwrap();
        assert!(store.exists("a/c").unwrap());
        let mut out = vec![0u8; 2];
        a.read(&[], &mut out).unwrap();
        assert_eq!(as_u16(&out), vec![9]);
    }
}
