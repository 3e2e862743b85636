//! zarrox's own front door: an opened array (chunk grid, codec chain, store)
//! whose selections become chunk tasks for the engine.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::Value;

use crate::batch::{Batch, Chunks, Destination, MemoryOrder, ReadDone, WriteDone};
use crate::cache::DataCache;
use crate::codec::array_to_array::transpose::fortran_form;
use crate::codec::{ChunkSpec, CodecChain};
use crate::dtype::DataType;
use crate::engine::{self, ChunkRegion, ChunkTask, Input};
use crate::error::{Error, Result};
use crate::grid::{ChunkGrid, ChunkKeyEncoding};
use crate::indexing::{Plan, PlanKind, Selection};
use crate::store::{self, Store};

/// The normalized array description the Python layer hands over.
#[derive(Debug, Deserialize)]
struct CoreMetadata {
    shape: Vec<u64>,
    /// A regular grid's chunk shape (absent for a rectilinear grid).
    #[serde(default)]
    chunk_shape: Vec<usize>,
    /// A rectilinear grid's `chunk_shapes` (its v3 JSON form).
    #[serde(default)]
    chunk_shapes: Option<Value>,
    data_type: Value,
    codecs: Value,
    chunk_key_encoding: Value,
}

/// The store an array's chunks are in: one Rust reads and writes, or one the
/// caller reads and writes itself (named for messages).
#[derive(Debug, Clone)]
pub enum StoreRef {
    Rust(Arc<dyn Store>),
    Caller(String),
}

impl StoreRef {
    /// Where the chunks of a batch in this store are.
    pub fn chunks(&self) -> Chunks<'_> {
        match self {
            StoreRef::Rust(s) => Chunks::Store(s.as_ref()),
            StoreRef::Caller(name) => Chunks::Caller(name),
        }
    }
}

#[derive(Debug)]
pub struct ArrayCore {
    store: StoreRef,
    /// Node path inside the store, without leading or trailing `/`.
    path: String,
    shape: Vec<u64>,
    grid: ChunkGrid,
    key_encoding: ChunkKeyEncoding,
    /// The chain of the first chunk (of every chunk, on a regular grid).
    chain: Arc<CodecChain>,
    /// A rectilinear grid's `codecs` JSON and chains per chunk shape, built
    /// as chunks of each shape are first met.
    codecs: Value,
    chains: Mutex<HashMap<Vec<usize>, Arc<CodecChain>>>,
    write_empty_chunks: bool,
    /// When the array was opened (the chunk cache's recheck mode "open").
    opened: std::time::Instant,
    /// The data cache its reads and writes go through.
    cache: DataCache,
    /// Whether this is an array's [`fortran`](Self::fortran) view: grid
    /// coordinates are the stored chunks' coordinates reversed.
    reversed: bool,
    /// The array with its axes reversed, when its chunks are stored in
    /// Fortran order (see [`fortran`](Self::fortran)).
    fortran: Option<Box<ArrayCore>>,
}

impl ArrayCore {
    /// Open an array from its normalized metadata JSON and fill value bytes
    /// (one element, native byte order).
    pub fn new(
        store: StoreRef,
        path: &str,
        metadata_json: &str,
        fill: Vec<u8>,
        write_empty_chunks: bool,
    ) -> Result<Self> {
        let path = path.trim_matches('/').to_string();
        let at = |e: Error| e.context(format!("array '{path}'"));
        let meta: CoreMetadata = serde_json::from_str(metadata_json)
            .map_err(|e| at(Error::metadata(format!("invalid metadata: {e}"))))?;
        let grid = match &meta.chunk_shapes {
            Some(shapes) => ChunkGrid::rectilinear(shapes, &meta.shape).map_err(at)?,
            None => ChunkGrid::Regular(meta.chunk_shape.clone()),
        };
        if meta.shape.len() != grid.ndim() {
            return Err(at(Error::metadata(format!(
                "shape has {} dimensions but chunk shape has {}",
                meta.shape.len(),
                grid.ndim()
            ))));
        }
        if meta.chunk_shape.contains(&0) {
            return Err(at(Error::metadata("chunk shape must be positive")));
        }
        let first_shape = grid.chunk_shape(&vec![0; meta.shape.len()]).map_err(at)?;
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
            shape: first_shape.clone(),
            dtype,
            fill,
        };
        let chain = Arc::new(CodecChain::from_json(&meta.codecs, spec).map_err(at)?);
        let key_encoding = ChunkKeyEncoding::from_json(&meta.chunk_key_encoding).map_err(at)?;
        let mut core = Self::assemble(
            store,
            path,
            meta.shape,
            grid,
            key_encoding,
            chain,
            meta.codecs,
        );
        core.write_empty_chunks = write_empty_chunks;
        let fortran = core.fortran_view().map_err(core.at())?;
        core.fortran = fortran.map(Box::new);
        Ok(core)
    }

    /// This array with its axes reversed, when its chain begins with a
    /// `transpose` that reverses every axis (a Zarr v2 `order: "F"` array): a
    /// C-ordered read of the reversed selection from it fills the memory of
    /// the Fortran-ordered result, and a write takes a Fortran-ordered value
    /// the same way, with no chunk transposed (each chunk's bytes are already
    /// in that order). `None` for other arrays, 0-d and 1-d ones, and
    /// variable-length data.
    fn fortran_view(&self) -> Result<Option<ArrayCore>> {
        let Some((codecs, spec)) = fortran_form(&self.codecs, self.chain.spec()) else {
            return Ok(None);
        };
        let chain = Arc::new(CodecChain::from_json(&codecs, spec)?);
        let mut view = Self::assemble(
            self.store.clone(),
            self.path.clone(),
            self.shape.iter().rev().copied().collect(),
            self.grid.reversed(),
            self.key_encoding.clone(),
            chain,
            codecs,
        );
        view.write_empty_chunks = self.write_empty_chunks;
        view.reversed = true;
        // Its chunks decode to the array's axes reversed.
        view.cache = self.cache.salted(1);
        Ok(Some(view))
    }

    /// An array of these parts; `chain` is the codec chain of chunks of its
    /// first chunk's shape (the others' are built when met). Empty chunks are
    /// not written, the coordinates are not reversed, and there is no Fortran
    /// view: the callers set what differs.
    fn assemble(
        store: StoreRef,
        path: String,
        shape: Vec<u64>,
        grid: ChunkGrid,
        key_encoding: ChunkKeyEncoding,
        chain: Arc<CodecChain>,
        codecs: Value,
    ) -> ArrayCore {
        let first_shape = chain.spec().shape.clone();
        ArrayCore {
            store,
            path,
            shape,
            grid,
            key_encoding,
            chains: Mutex::new(HashMap::from([(first_shape, Arc::clone(&chain))])),
            chain,
            codecs,
            write_empty_chunks: false,
            opened: std::time::Instant::now(),
            cache: DataCache::process(),
            reversed: false,
            fortran: None,
        }
    }

    /// The array with its axes reversed when its chunks are stored in
    /// Fortran order (see [`fortran_view`](Self::fortran_view)).
    pub fn fortran(&self) -> Option<&ArrayCore> {
        self.fortran.as_deref()
    }

    /// This array reading and writing through `cache` (its Fortran view too).
    pub fn with_cache(mut self, cache: DataCache) -> Self {
        if let Some(view) = self.fortran.as_mut() {
            view.cache = cache.salted(1);
        }
        self.cache = cache;
        self
    }

    /// The data cache this array reads and writes through.
    pub fn cache(&self) -> &DataCache {
        &self.cache
    }

    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    pub fn data_type(&self) -> DataType {
        self.chain.spec().dtype
    }

    pub fn set_write_empty_chunks(&mut self, on: bool) {
        self.write_empty_chunks = on;
        if let Some(f) = &mut self.fortran {
            f.write_empty_chunks = on;
        }
    }

    /// Whether the caller reads and writes the chunks itself (sessions).
    pub fn caller_store(&self) -> bool {
        matches!(self.store, StoreRef::Caller(_))
    }

    /// The store key of the chunk at grid coordinates `coords`.
    pub fn chunk_key(&self, coords: &[u64]) -> String {
        let key = if self.reversed {
            let stored: Vec<u64> = coords.iter().rev().copied().collect();
            self.key_encoding.encode(&stored)
        } else {
            self.key_encoding.encode(coords)
        };
        if self.path.is_empty() {
            key
        } else {
            format!("{}/{key}", self.path)
        }
    }

    /// `Err` (a `MemoryError` naming the array) when an output of `nbytes`
    /// is more than the memory the process can have ([`crate::alloc::admit`]).
    pub fn admit_output(&self, nbytes: usize) -> Result<()> {
        crate::alloc::admit(nbytes).map_err(|e| self.at()(e.context("output")))
    }

    fn at(&self) -> impl Fn(Error) -> Error + '_ {
        move |e| e.in_array(&self.path)
    }

    /// The chain of the chunk at `coords` when chunks differ in shape (a
    /// rectilinear grid; `None` on a regular grid: the array's chain).
    fn own_chain(&self, coords: &[u64]) -> Result<Option<Arc<CodecChain>>> {
        if matches!(self.grid, ChunkGrid::Regular(_)) {
            return Ok(None);
        }
        let shape = self.grid.chunk_shape(coords)?;
        let mut chains = self.chains.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = chains.get(&shape) {
            return Ok(Some(Arc::clone(c)));
        }
        let spec = ChunkSpec {
            shape: shape.clone(),
            ..self.chain.spec().clone()
        };
        let chain = Arc::new(CodecChain::from_json(&self.codecs, spec)?);
        chains.insert(shape, Arc::clone(&chain));
        Ok(Some(chain))
    }

    /// The chain of the chunk at `coords`.
    pub(crate) fn chain_of(&self, coords: &[u64]) -> Result<Arc<CodecChain>> {
        Ok(self
            .own_chain(coords)?
            .unwrap_or_else(|| Arc::clone(&self.chain)))
    }

    /// A task for the chunk at `coords`, with its own chain where chunks
    /// differ in shape.
    fn task(&self, coords: &[u64], region: ChunkRegion) -> Result<ChunkTask> {
        let mut task = ChunkTask::new(self.chunk_key(coords), region);
        task.chain = self.own_chain(coords)?;
        Ok(task)
    }

    pub(crate) fn rust_store(&self) -> Result<&dyn Store> {
        match &self.store {
            StoreRef::Rust(s) => Ok(s.as_ref()),
            StoreRef::Caller(_) => Err(self.at()(Error::value(
                "internal error: the caller reads and writes this array's store",
            ))),
        }
    }

    /// The chunk tasks of a selection (one per chunk of the grid: a shard
    /// when the array is sharded; the engine reads inner chunks in part), and
    /// the selection's shape.
    pub fn tasks(&self, sel: &Selection) -> Result<(Vec<ChunkTask>, Vec<usize>)> {
        let plan = Plan::on_grid(sel, &self.shape, &self.grid).map_err(self.at())?;
        let out_shape = plan.out_shape.clone();
        let tasks = match plan.kind {
            PlanKind::Box(proj) => {
                let dims: Vec<Vec<Arc<crate::indexing::DimChunk>>> = proj
                    .dims
                    .into_iter()
                    .map(|d| d.into_iter().map(Arc::new).collect())
                    .collect();
                if out_shape.contains(&0) {
                    Vec::new()
                } else {
                    let mut combos: Vec<Vec<Arc<crate::indexing::DimChunk>>> = vec![Vec::new()];
                    for dim in &dims {
                        let mut next = Vec::with_capacity(combos.len() * dim.len());
                        for prefix in &combos {
                            for part in dim {
                                let mut p = prefix.clone();
                                p.push(Arc::clone(part));
                                next.push(p);
                            }
                        }
                        combos = next;
                    }
                    combos
                        .into_iter()
                        .map(|parts| {
                            let coords: Vec<u64> = parts.iter().map(|p| p.chunk).collect();
                            let region = match sel.buffer_strides() {
                                Some(strides) => ChunkRegion::laid_out(
                                    parts,
                                    out_shape.clone(),
                                    strides.to_vec(),
                                ),
                                None => ChunkRegion::from_parts(parts, out_shape.clone()),
                            };
                            self.task(&coords, region)
                        })
                        .collect::<Result<_>>()
                        .map_err(self.at())?
                }
            }
            PlanKind::Points(groups) => groups
                .into_iter()
                .map(|(coords, pairs)| self.task(&coords, ChunkRegion::Points(pairs)))
                .collect::<Result<_>>()
                .map_err(self.at())?,
        };
        Ok((tasks, out_shape))
    }

    /// The array and selection a call in `order` works on: the array's own,
    /// or (`F`) its Fortran view and the selection reversed, whose C-ordered
    /// buffer is the selection's Fortran-ordered one.
    fn target<'a>(
        &'a self,
        sel: &'a Selection,
        order: MemoryOrder,
    ) -> Result<(&'a ArrayCore, Cow<'a, Selection>)> {
        if order == MemoryOrder::C {
            return Ok((self, Cow::Borrowed(sel)));
        }
        let Some(view) = self.fortran() else {
            return Err(self.at()(Error::value(
                "memory order \"F\" needs an array whose chunks are stored in Fortran order",
            )));
        };
        match sel.reversed() {
            Some(reversed) => Ok((view, Cow::Owned(reversed))),
            None => Err(self.at()(Error::value(
                "memory order \"F\" needs an orthogonal selection",
            ))),
        }
    }

    /// The batch of the selection (of its Fortran view for `order` F, see
    /// [`fortran_view`](Self::fortran_view)), and the array it reads or writes.
    fn batch<'a>(
        &'a self,
        sel: &'a Selection,
        order: MemoryOrder,
    ) -> Result<(&'a ArrayCore, Batch)> {
        let (core, sel) = self.target(sel, order)?;
        let (tasks, shape) = core.tasks(&sel)?;
        let chain = Arc::clone(&core.chain);
        let batch = Batch::new(chain, tasks, shape, core.cache.clone(), core.opened)
            .write_empty(core.write_empty_chunks)
            .in_array(&core.path);
        Ok((core, batch))
    }

    /// The batch of a read or write of the selection (`order`, see
    /// [`read`](Self::read)) and the store its chunks are in: what an
    /// awaitable read or write owns ([`Batch::read_async`]).
    pub fn batch_of(&self, sel: &Selection, order: MemoryOrder) -> Result<(StoreRef, Batch)> {
        let (core, batch) = self.batch(sel, order)?;
        Ok((core.store.clone(), batch))
    }

    /// Read the selection into `into`: a buffer (`order`, the selection's
    /// shape, native byte order) of fixed-size elements, or a list of
    /// variable-length ones in selection order (C order). From a store the
    /// caller reads itself: the session that reads it.
    pub fn read(
        &self,
        sel: &Selection,
        into: Destination<'_>,
        order: MemoryOrder,
    ) -> Result<ReadDone> {
        let (core, batch) = self.batch(sel, order)?;
        batch.read(core.store.chunks(), into)
    }

    /// Write `value` to the selection: a buffer (`order`, the selection's
    /// shape, native byte order), variable-length elements in selection
    /// order, or one element for every selected element (as numpy broadcasts
    /// a scalar). To a store the caller writes itself: the write pending the
    /// old chunks it needs.
    pub fn write(
        &self,
        sel: &Selection,
        value: Input<'_>,
        order: MemoryOrder,
    ) -> Result<WriteDone> {
        let (core, batch) = self.batch(sel, order)?;
        batch.write(core.store.chunks(), value)
    }

    /// [`write`](Self::write), and the grid coordinates of the chunks whose
    /// every in-bounds element it wrote (a transaction's staging keeps them:
    /// such a chunk needs no check of which of its elements were written).
    pub fn write_covering(
        &self,
        sel: &Selection,
        value: Input<'_>,
        order: MemoryOrder,
    ) -> Result<(WriteDone, Vec<Vec<u64>>)> {
        let (core, batch) = self.batch(sel, order)?;
        let covered = batch
            .tasks()
            .iter()
            .filter(|t| t.complete || t.region.covers_chunk())
            .map(|t| t.key.clone())
            .collect();
        let done = batch.write(core.store.chunks(), value)?;
        let coords = core.chunk_coords(covered).into_iter().map(|(_, c)| c);
        Ok((done, coords.collect()))
    }

    /// The key prefix of this array's chunks (its node's path and a `/`).
    fn chunk_prefix(&self) -> String {
        if self.path.is_empty() {
            String::new()
        } else {
            format!("{}/", self.path)
        }
    }

    /// The stored chunk (or shard) keys of this array with their grid coordinates.
    pub fn stored_chunks(&self) -> Result<Vec<(String, Vec<u64>)>> {
        let store = self.rust_store()?;
        let keys = store::block_on(store, store.list_prefix(&self.chunk_prefix()))??;
        Ok(self.chunk_coords(keys))
    }

    /// Delete the chunks (shards) under `keys` (a shrinking resize), and
    /// what the data cache holds of them.
    pub fn delete_chunks(&self, keys: &[String]) -> Result<()> {
        let store = self.rust_store()?;
        for key in keys {
            store::block_on(store, store.delete(key))??;
            engine::cached::forget(&self.cache, &self.chain, store, key);
        }
        store.flush()
    }

    /// Those of `keys` that are chunk keys of this array, with their grid
    /// coordinates.
    pub fn chunk_coords(&self, keys: Vec<String>) -> Vec<(String, Vec<u64>)> {
        let prefix = self.chunk_prefix();
        let ndim = self.shape.len();
        keys.into_iter()
            .filter_map(|key| {
                let mut coords = self.key_encoding.decode(key.strip_prefix(&prefix)?, ndim)?;
                if self.reversed {
                    coords.reverse();
                }
                Some((key, coords))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
