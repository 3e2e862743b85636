//! zarr-python's front door: the codec chain of one kind of chunk (shape,
//! data type, fill value), and batches of chunks whose regions zarr-python
//! projected (its codec pipeline hands over, per chunk, the key, the region
//! inside the chunk and the matching region of the output or value). Each
//! batch is one call into the engine, through [`crate::batch`].
//!
//! Regions come from the caller, so they are checked: inside the chunk here,
//! and inside the buffer and, for a fixed-size output that several threads
//! write, disjoint across chunks by the batch.

use std::sync::Arc;

use serde_json::Value;

use crate::batch::{Batch, MemoryOrder};
use crate::cache::DataCache;
use crate::codec::array_to_array::transpose::fortran_form;
use crate::codec::{ChunkSpec, CodecChain};
use crate::dtype::DataType;
use crate::engine::{check_batch, ChunkRegion, ChunkTask};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct ChunkCodec {
    chain: Arc<CodecChain>,
    /// When the pipeline was made (the chunk cache's recheck mode "open").
    opened: std::time::Instant,
    /// The process's data cache (`cache.bytes`).
    cache: DataCache,
    /// These chunks seen with their axes reversed, when they are stored in
    /// Fortran order (see [`fortran`](Self::fortran)); built with the codec.
    fortran: Option<Box<ChunkCodec>>,
}

impl ChunkCodec {
    /// A chain from the v3 `codecs` JSON list (the core form) for chunks of
    /// `spec`, with its [`fortran`](Self::fortran) view when there is one.
    pub fn new(codecs: &Value, spec: ChunkSpec) -> Result<Self> {
        let mut codec = Self::plain(codecs, spec)?;
        if let Some((codecs, spec)) = fortran_form(codecs, codec.spec()) {
            let mut view = Self::plain(&codecs, spec)?;
            // Its chunks decode to the array's axes reversed.
            view.cache = codec.cache.salted(1);
            codec.fortran = Some(Box::new(view));
        }
        Ok(codec)
    }

    /// [`ChunkCodec::new`] without the Fortran view.
    fn plain(codecs: &Value, spec: ChunkSpec) -> Result<Self> {
        if spec.shape.contains(&0) {
            return Err(Error::metadata("chunk shape must be positive"));
        }
        if !spec.dtype.is_var_len() && spec.fill.len() != spec.dtype.size {
            return Err(Error::metadata(format!(
                "fill value has {} bytes, the data type has {}",
                spec.fill.len(),
                spec.dtype.size
            )));
        }
        Ok(ChunkCodec {
            chain: Arc::new(CodecChain::from_json(codecs, spec)?),
            opened: std::time::Instant::now(),
            cache: DataCache::process(),
            fortran: None,
        })
    }

    /// [`ChunkCodec::new`] from JSON text: the v3 `codecs` list (core form)
    /// and the core data type, with the fill value's bytes (native order).
    pub fn from_json_text(
        codecs: &str,
        shape: Vec<usize>,
        data_type: &str,
        fill: Vec<u8>,
    ) -> Result<Self> {
        let parse = |s: &str, what: &str| {
            serde_json::from_str::<Value>(s)
                .map_err(|e| Error::metadata(format!("invalid {what} JSON: {e}")))
        };
        let dtype = DataType::from_json(&parse(data_type, "data type")?)?;
        let spec = ChunkSpec { shape, dtype, fill };
        Self::new(&parse(codecs, "codecs")?, spec)
    }

    /// These chunks seen with their axes reversed, when the chain begins by
    /// reversing every axis (see [`fortran_form`]; a Zarr v2 `order: "F"`
    /// array): a batch of it whose regions and buffer shape are reversed
    /// decodes into (encodes from) the memory of a Fortran-ordered buffer with
    /// no chunk transposed (see [`batch_in`](Self::batch_in)). `None` for
    /// other chains, chunks of fewer than two dimensions and variable-length
    /// elements.
    pub fn fortran(&self) -> Option<&ChunkCodec> {
        self.fortran.as_deref()
    }

    pub fn spec(&self) -> &ChunkSpec {
        self.chain.spec()
    }

    /// Whether chunks are read in part (shards, possibly behind transposes).
    pub fn reads_in_part(&self) -> bool {
        self.chain.partial().is_some()
    }

    /// Whether writes update chunks inner chunk by inner chunk (a lone
    /// sharding codec), reading the old shard unless a write covers all of it
    /// (see [`ChunkTask::needs_old`]).
    pub fn writes_in_part(&self) -> bool {
        self.chain.parts().is_some()
    }

    /// The tasks of a batch: one key and region per chunk, and (writes) which
    /// regions the caller knows to cover their chunk.
    pub fn tasks(
        keys: Vec<String>,
        regions: Vec<ChunkRegion>,
        complete: Option<&[bool]>,
    ) -> Result<Vec<ChunkTask>> {
        check_batch(keys.len(), regions.len())?;
        if let Some(c) = complete {
            check_batch(c.len(), regions.len())?;
        }
        Ok(keys
            .into_iter()
            .zip(regions)
            .enumerate()
            .map(|(i, (key, region))| ChunkTask {
                key,
                region,
                complete: complete.is_some_and(|c| c[i]),
                chain: None,
            })
            .collect())
    }

    /// The batch of `tasks` over a buffer (an output, or a value) of `shape`:
    /// its regions are checked, as they come from the caller.
    pub fn batch(&self, tasks: Vec<ChunkTask>, shape: Vec<usize>) -> Batch {
        let chain = Arc::clone(&self.chain);
        Batch::new(chain, tasks, shape, self.cache.clone(), self.opened).checked()
    }

    /// The batch of `tasks` (their regions over a C-ordered buffer of
    /// `shape`) over a buffer of that shape in `order`. For "F", when these
    /// chunks are stored in Fortran order and every region is a box: the
    /// batch of the [`fortran`](Self::fortran) view with every region and the
    /// shape reversed, which reads into (writes from) the Fortran-ordered
    /// buffer's memory with no chunk transposed. Returns the batch and the
    /// order it runs in: C when it cannot run in the order asked (points, a
    /// broadcast value, chunks stored in C order), for the caller to read
    /// into or write from a C-ordered buffer instead.
    pub fn batch_in(
        &self,
        tasks: Vec<ChunkTask>,
        shape: Vec<usize>,
        order: MemoryOrder,
    ) -> (Batch, MemoryOrder) {
        let in_c = |tasks, shape| (self.batch(tasks, shape), MemoryOrder::C);
        let Some(view) = self.fortran().filter(|_| order == MemoryOrder::F) else {
            return in_c(tasks, shape);
        };
        let reversed: Option<Vec<ChunkRegion>> = tasks
            .iter()
            .map(|t| t.region.reversed_for_fortran())
            .collect();
        let Some(reversed) = reversed else {
            return in_c(tasks, shape);
        };
        let tasks = tasks
            .into_iter()
            .zip(reversed)
            .map(|(t, region)| ChunkTask { region, ..t })
            .collect();
        let shape = shape.into_iter().rev().collect();
        (view.batch(tasks, shape), MemoryOrder::F)
    }
}

#[cfg(test)]
mod tests;
