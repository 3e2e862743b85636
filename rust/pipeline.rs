//! zarr-python's front door: the codec chain of one kind of chunk (shape,
//! data type, fill value), and batches of chunks whose regions zarr-python
//! projected (its codec pipeline hands over, per chunk, the key, the region
//! inside the chunk and the matching region of the output or value). Each
//! batch is one call into the engine.
//!
//! Regions come from the caller, so they are checked: inside the chunk and
//! the buffer, and, for a fixed-size output that several threads write,
//! disjoint across chunks.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;

use crate::cache::DataCache;
use crate::codec::transpose::fortran_form;
use crate::codec::{ChunkSpec, CodecChain};
use crate::dtype::DataType;
use crate::engine::session::ReadSession;
use crate::engine::{
    self, check_batch, check_disjoint, ChunkRegion, ChunkTask, Input, OutView, Output,
};
use crate::error::{Error, Result};
use crate::store::Store;

#[derive(Debug)]
pub struct ChunkCodec {
    chain: Arc<CodecChain>,
    /// When the pipeline was made (the chunk cache's recheck mode "open").
    opened: std::time::Instant,
    /// The process's data cache (`cache.bytes`).
    cache: DataCache,
}

impl ChunkCodec {
    /// A chain from the v3 `codecs` JSON list (the core form) for chunks of `spec`.
    pub fn new(codecs: &Value, spec: ChunkSpec) -> Result<Self> {
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

    /// The codec of these chunks seen with their axes reversed, when the chain
    /// begins by reversing every axis (see [`fortran_form`]): a batch whose
    /// selections and buffer are reversed too decodes into (encodes from) a
    /// Fortran-ordered buffer with no chunk transposed.
    pub fn fortran(&self, codecs: &Value) -> Result<Option<Self>> {
        let Some((codecs, spec)) = fortran_form(codecs, self.spec()) else {
            return Ok(None);
        };
        let mut view = Self::new(&codecs, spec)?;
        // Its chunks decode to the array's axes reversed.
        view.cache = self.cache.salted(1);
        Ok(Some(view))
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

    /// Per task, whether a write must read the old chunk first (see
    /// [`ChunkTask::needs_old`]).
    pub fn needs_old(&self, tasks: &[ChunkTask]) -> Vec<bool> {
        tasks
            .iter()
            .map(|t| t.needs_old(t.chain(&self.chain)))
            .collect()
    }

    fn elements(&self, out: &Output<'_>) -> Result<usize> {
        let elem = self.spec().dtype.size;
        match out {
            Output::Fixed(view) => {
                if self.spec().dtype.is_var_len() {
                    return Err(Error::value(
                        "variable-length data is read into a list, not a buffer",
                    ));
                }
                if !view.len().is_multiple_of(elem) {
                    return Err(Error::value(format!(
                        "a buffer of {} bytes does not hold whole {elem}-byte elements",
                        view.len()
                    )));
                }
                Ok(view.len() / elem)
            }
            Output::Var(_) => {
                if !self.spec().dtype.is_var_len() {
                    return Err(Error::value(
                        "fixed-size data is read into a buffer, not a list",
                    ));
                }
                Ok(out.elements(elem))
            }
        }
    }

    /// Error unless the regions stay inside a buffer of `n` elements and,
    /// for a fixed-size output, write disjoint elements.
    fn check_output(&self, tasks: &[ChunkTask], fixed: bool, n: usize) -> Result<()> {
        if !fixed {
            return self.check_inside(tasks, n);
        }
        let regions: Vec<&ChunkRegion> = tasks.iter().map(|t| &t.region).collect();
        // A chunk read in part decodes its inner chunks on several threads: an
        // element named twice could be written by two at once.
        check_disjoint(&regions, &self.spec().shape, n, self.reads_in_part())
    }

    /// Error unless every element the regions name is inside a buffer of `n`.
    fn check_inside(&self, tasks: &[ChunkTask], n: usize) -> Result<()> {
        for t in tasks {
            let mut outside = false;
            t.region.for_each_run(&self.spec().shape, true, |_, o, k| {
                outside |= o.checked_add(k).is_none_or(|end| end > n)
            });
            if outside {
                return Err(Error::index(format!(
                    "chunk '{}': the region reaches outside the buffer of {n} elements",
                    t.key
                )));
            }
        }
        Ok(())
    }

    /// Read `tasks` from `store` into `out`; which chunks exist.
    pub fn read(
        &self,
        store: &dyn Store,
        tasks: &[ChunkTask],
        out: Output<'_>,
    ) -> Result<Vec<bool>> {
        let n = self.elements(&out)?;
        self.check_output(tasks, matches!(out, Output::Fixed(_)), n)?;
        engine::read_since(&self.chain, store, tasks, out, self.opened, &self.cache)
    }

    /// A read of `tasks` from a store the caller reads, into a buffer of `n`
    /// elements (fixed-size, or a list when `var`).
    pub fn read_session(
        &self,
        tasks: Vec<ChunkTask>,
        n: usize,
        store_name: &str,
    ) -> Result<ReadSession> {
        self.check_output(&tasks, !self.spec().dtype.is_var_len(), n)?;
        Ok(ReadSession::new(Arc::clone(&self.chain), tasks, store_name))
    }

    /// Decode chunks the caller has (`None`: missing) into `out`.
    pub fn decode(
        &self,
        tasks: &[ChunkTask],
        encoded: Vec<Option<Bytes>>,
        out: Output<'_>,
    ) -> Result<()> {
        let n = self.elements(&out)?;
        self.check_output(tasks, matches!(out, Output::Fixed(_)), n)?;
        engine::decode(&self.chain, tasks, encoded, out)
    }

    fn check_input(&self, value: &Input<'_>, n: usize) -> Result<()> {
        let (got, want) = match value {
            Input::Fixed(bytes) => (bytes.len(), n.checked_mul(self.spec().dtype.size)),
            Input::Var(items) => (items.len(), Some(n)),
            Input::Scalar(_) => return Ok(()),
        };
        if Some(got) != want {
            return Err(Error::value(format!(
                "the value buffer has {got} {}, its shape needs {}",
                if matches!(value, Input::Var(_)) {
                    "items"
                } else {
                    "bytes"
                },
                want.map_or("too many".to_string(), |w| w.to_string())
            )));
        }
        Ok(())
    }

    /// Read-modify-write `tasks` of `value` (a buffer of `n` elements, or one
    /// scalar) in `store`.
    pub fn write(
        &self,
        store: &dyn Store,
        tasks: &[ChunkTask],
        value: Input<'_>,
        n: usize,
        write_empty: bool,
    ) -> Result<()> {
        self.check_input(&value, n)?;
        if !matches!(value, Input::Scalar(_)) {
            self.check_inside(tasks, n)?;
        }
        engine::write_cached(&self.chain, store, tasks, value, write_empty, &self.cache)
    }

    /// The new encoded chunks after writing `tasks` of `value` over the `old`
    /// chunks (`None`: missing or not needed); `None` where a chunk is all
    /// fill value and `write_empty` is false.
    pub fn encode(
        &self,
        tasks: &[ChunkTask],
        old: Vec<Option<Bytes>>,
        value: Input<'_>,
        n: usize,
        write_empty: bool,
    ) -> Result<Vec<Option<Bytes>>> {
        self.check_input(&value, n)?;
        if !matches!(value, Input::Scalar(_)) {
            self.check_inside(tasks, n)?;
        }
        engine::encode(&self.chain, tasks, old, value, write_empty)
    }
}

/// Read into a fixed-size buffer.
pub fn read_into(
    codec: &ChunkCodec,
    store: &dyn Store,
    tasks: &[ChunkTask],
    out: &mut [u8],
) -> Result<Vec<bool>> {
    let view = OutView::new(out);
    codec.read(store, tasks, Output::Fixed(&view))
}

/// Read variable-length elements: a list of `n` values.
pub fn read_var(
    codec: &ChunkCodec,
    store: &dyn Store,
    tasks: &[ChunkTask],
    n: usize,
) -> Result<(Vec<Vec<u8>>, Vec<bool>)> {
    let list = Mutex::new(vec![Vec::new(); n]);
    let present = codec.read(store, tasks, Output::Var(&list))?;
    Ok((
        list.into_inner().unwrap_or_else(|p| p.into_inner()),
        present,
    ))
}

/// Decode into a fixed-size buffer.
pub fn decode_into(
    codec: &ChunkCodec,
    tasks: &[ChunkTask],
    encoded: Vec<Option<Bytes>>,
    out: &mut [u8],
) -> Result<()> {
    let view = OutView::new(out);
    codec.decode(tasks, encoded, Output::Fixed(&view))
}

/// Decode variable-length elements: a list of `n` values.
pub fn decode_var(
    codec: &ChunkCodec,
    tasks: &[ChunkTask],
    encoded: Vec<Option<Bytes>>,
    n: usize,
) -> Result<Vec<Vec<u8>>> {
    let list = Mutex::new(vec![Vec::new(); n]);
    codec.decode(tasks, encoded, Output::Var(&list))?;
    Ok(list.into_inner().unwrap_or_else(|p| p.into_inner()))
}

#[cfg(test)]
mod tests;
