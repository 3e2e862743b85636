//! Caches that sit between the engine and the stores, every entry keyed by
//! the generation of the stored value it came from.
//!
//! The part map cache: the decoded map of every chunk read in part (a
//! shard's index, see [`crate::codec::partial`]), under the chunk's location
//! and the generation its read saw. Reading a part of a chunk whose map is
//! cached is one request, a range read conditional on that generation: a
//! local file is checked by `fstat` of the opened file before its positioned
//! read, an object by `If-Match` on the range read itself (a failed condition
//! means the chunk changed; its map is read again). A stale map is never
//! used. The cache is small and bounded ([`MAP_BYTES`]), whatever the data
//! cache's budget.
//!
//! The process id each cache was filled in is noted: a forked child starts
//! with empty caches.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::codec::PartMap;
use crate::store::Generation;

/// The most bytes the part map cache holds (entries and their keys).
pub const MAP_BYTES: usize = 32 * 1024 * 1024;

/// Bytes an entry costs beyond its key and value (the maps' own bookkeeping).
const ENTRY_OVERHEAD: usize = 96;

struct Slot<V> {
    tick: u64,
    generation: Generation,
    value: V,
    size: usize,
}

/// What a cache holds and how it was used, for `Array.info`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub entries: usize,
    pub bytes: usize,
    pub limit: usize,
    pub hits: u64,
    pub misses: u64,
}

/// A byte-budgeted least-recently-used map from keys to values with the
/// generation each was read at.
pub struct Lru<V> {
    map: HashMap<String, Slot<V>>,
    /// Keys by the tick of their last use, oldest first.
    order: BTreeMap<u64, String>,
    tick: u64,
    bytes: usize,
    limit: usize,
    hits: u64,
    misses: u64,
}

impl<V: Clone> Lru<V> {
    pub fn new(limit: usize) -> Self {
        Lru {
            map: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            bytes: 0,
            limit,
            hits: 0,
            misses: 0,
        }
    }

    fn touch(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// The value under `key` and its generation (made the most recently used);
    /// counted as a hit or a miss.
    pub fn get(&mut self, key: &str) -> Option<(Generation, V)> {
        let tick = self.touch();
        let Some(slot) = self.map.get_mut(key) else {
            self.misses += 1;
            return None;
        };
        self.hits += 1;
        let old = std::mem::replace(&mut slot.tick, tick);
        let found = (slot.generation.clone(), slot.value.clone());
        if let Some(k) = self.order.remove(&old) {
            self.order.insert(tick, k);
        }
        Some(found)
    }

    /// The value under `key` and its generation, neither used nor counted.
    pub fn peek(&self, key: &str) -> Option<(Generation, V)> {
        self.map
            .get(key)
            .map(|slot| (slot.generation.clone(), slot.value.clone()))
    }

    /// Put `value` (costing `size` bytes) under `key` at `generation`,
    /// evicting the least recently used entries to stay within the budget; a
    /// value larger than the whole budget is not kept.
    pub fn insert(&mut self, key: &str, generation: Generation, value: V, size: usize) {
        self.remove(key);
        let size = size + key.len() + ENTRY_OVERHEAD;
        if size > self.limit {
            return;
        }
        while self.bytes + size > self.limit {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some(slot) = self.map.remove(&oldest) {
                self.bytes -= slot.size;
            }
        }
        let tick = self.touch();
        self.order.insert(tick, key.to_string());
        self.map.insert(
            key.to_string(),
            Slot {
                tick,
                generation,
                value,
                size,
            },
        );
        self.bytes += size;
    }

    /// Forget `key`.
    pub fn remove(&mut self, key: &str) {
        if let Some(slot) = self.map.remove(key) {
            self.order.remove(&slot.tick);
            self.bytes -= slot.size;
        }
    }

    /// A new budget, entries beyond it evicted (least recently used first).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        while self.bytes > self.limit {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some(slot) = self.map.remove(&oldest) {
                self.bytes -= slot.size;
            }
        }
    }

    /// Forget everything (the counters too).
    pub fn clear(&mut self) {
        *self = Lru::new(self.limit);
    }

    pub fn stats(&self) -> Stats {
        Stats {
            entries: self.map.len(),
            bytes: self.bytes,
            limit: self.limit,
            hits: self.hits,
            misses: self.misses,
        }
    }
}

/// A cache shared by the whole process, emptied in a forked child.
pub struct Shared<V> {
    limit: AtomicUsize,
    state: Mutex<Option<(u32, Lru<V>)>>,
}

impl<V: Clone> Shared<V> {
    pub const fn new(limit: usize) -> Self {
        Shared {
            limit: AtomicUsize::new(limit),
            state: Mutex::new(None),
        }
    }

    /// The budget in bytes.
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    /// A new budget: entries beyond it go at once (least recently used first).
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
        self.with(|c| c.set_limit(limit));
    }

    /// Run `f` on this process's cache (a new one in a forked child).
    pub fn with<T>(&self, f: impl FnOnce(&mut Lru<V>) -> T) -> T {
        in_this_process(&self.state, || Lru::new(self.limit()), f)
    }
}

/// Run `f` on the state in `slot` made in this process: a forked child
/// finds its parent's (noted with the parent's id) and starts anew (`init`).
fn in_this_process<S, T>(
    slot: &Mutex<Option<(u32, S)>>,
    init: impl FnOnce() -> S,
    f: impl FnOnce(&mut S) -> T,
) -> T {
    let pid = std::process::id();
    let mut state = crate::fork::lock(slot);
    match &mut *state {
        Some((p, s)) if *p == pid => f(s),
        _ => f(&mut state.insert((pid, init())).1),
    }
}

/// The decoded part maps, by chunk location (and offset, for a chunk
/// nested in another).
static MAPS: Shared<Arc<PartMap>> = Shared::new(MAP_BYTES);

/// The cached map under `key`, with the generation of the chunk it was read from.
pub fn part_map(key: &str) -> Option<(Generation, Arc<PartMap>)> {
    MAPS.with(|c| c.get(key))
}

/// Remember the map of the chunk at `key`, read at `generation`.
pub fn remember_part_map(key: &str, generation: Generation, map: Arc<PartMap>) {
    let size = map.len() * std::mem::size_of::<Option<std::ops::Range<u64>>>();
    MAPS.with(|c| c.insert(key, generation, map, size));
}

/// Forget the map under `key` (its chunk changed).
pub fn forget_part_map(key: &str) {
    MAPS.with(|c| c.remove(key));
}

/// What the part map cache holds and how it was used.
pub fn part_map_stats() -> Stats {
    MAPS.with(|c| c.stats())
}

/// When a cached chunk is checked against the store before it is returned
/// (TensorStore's `recheck_cached_data`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Recheck {
    /// Every time (a `stat` of the file, a conditional request): never stale.
    Always,
    /// Never: a cached chunk is returned as it is.
    Never,
    /// When it was cached (or last checked) before the array was opened.
    Open,
    /// When it was last checked longer ago than this.
    Within(Duration),
}

impl Recheck {
    /// Whether a chunk last checked at `checked` is returned without a check
    /// now, by an array opened at `opened`.
    pub fn fresh(self, checked: Instant, opened: Instant, now: Instant) -> bool {
        match self {
            Recheck::Always => false,
            Recheck::Never => true,
            Recheck::Open => checked >= opened,
            Recheck::Within(bound) => now.saturating_duration_since(checked) <= bound,
        }
    }
}

/// What the data cache holds of a chunk (or of an inner chunk of a shard).
#[derive(Debug, Clone)]
pub enum ChunkData {
    /// No chunk is stored: the fill value.
    Missing,
    /// The chunk's decoded bytes.
    Decoded(Arc<Vec<u8>>),
    /// The chunk's encoded bytes, as this process wrote them: decoded (and
    /// kept decoded) when first read.
    Encoded(bytes::Bytes),
}

impl ChunkData {
    /// The bytes it costs.
    pub fn size(&self) -> usize {
        match self {
            ChunkData::Missing => 0,
            ChunkData::Decoded(d) => d.len(),
            ChunkData::Encoded(e) => e.len(),
        }
    }
}

/// A cached chunk and when it was last known to be the stored version.
#[derive(Debug, Clone)]
pub struct CachedChunk {
    pub data: ChunkData,
    pub checked: Instant,
    /// What decoded bytes are laid out as ([`DataCache::layout`]): a reader
    /// that decodes to another layout (an array's Fortran view, metadata
    /// that changed since) does not use them.
    pub layout: u64,
}

impl CachedChunk {
    /// Whether a reader decoding to `layout` can use this entry (encoded
    /// bytes and the fill value are the same for every reader).
    pub fn fits(&self, layout: u64) -> bool {
        !matches!(self.data, ChunkData::Decoded(_)) || self.layout == layout
    }
}

/// The key of inner chunk `pos` of the shard cached under `shard`.
pub fn part_key(shard: &str, pos: usize) -> String {
    format!("{shard}\u{1f}#{pos}")
}

/// A pool of cached chunks with a budget of its own (TensorStore's
/// `cache_pool`).
pub type ChunkPool = Shared<CachedChunk>;

/// The process's pool (`cache.bytes`); no budget (off) until configured.
static PROCESS_POOL: std::sync::LazyLock<Arc<ChunkPool>> =
    std::sync::LazyLock::new(|| Arc::new(Shared::new(0)));
/// When the process's cached chunks are checked (`cache.recheck`).
static RECHECK: Mutex<Recheck> = Mutex::new(Recheck::Always);

/// The process pool's budget in bytes (`cache.bytes`; 0: off) and when
/// chunks are checked where an array does not say (`cache.recheck`).
pub fn configure_chunks(bytes: usize, recheck: Recheck) {
    *crate::fork::lock(&RECHECK) = recheck;
    PROCESS_POOL.set_limit(bytes);
}

/// When cached chunks are checked where an array does not say.
pub fn chunk_recheck() -> Recheck {
    *crate::fork::lock(&RECHECK)
}

/// The most inner chunks a read of a shard reads ahead.
pub const MAX_READ_AHEAD: usize = 64;

/// Shards entries of the read-ahead history are kept for, at most.
const READ_AHEAD_SHARDS: usize = 4096;

/// Per shard, the last inner chunk a read reached (read ahead included) and
/// the window it read ahead.
type ReadAheadHistory = HashMap<String, (usize, usize)>;

/// The read-ahead history of this process (a forked child starts anew).
static READ_AHEAD: Mutex<Option<(u32, ReadAheadHistory)>> = Mutex::new(None);

/// How many inner chunks to read ahead after a read of inner chunks
/// `first..=last` of the shard at `shard`: none, unless this read continues
/// where the previous read of the shard ended; then one, and twice as many
/// each time the scan goes on (at most [`MAX_READ_AHEAD`]). The read is
/// noted as reaching `last` plus the window.
pub fn read_ahead_window(shard: &str, first: usize, last: usize) -> usize {
    in_this_process(&READ_AHEAD, HashMap::new, |map| {
        let window = match map.get(shard) {
            Some(&(end, previous)) if end.checked_add(1) == Some(first) => {
                (previous * 2).clamp(1, MAX_READ_AHEAD)
            }
            _ => 0,
        };
        if map.len() >= READ_AHEAD_SHARDS && !map.contains_key(shard) {
            map.clear();
        }
        map.insert(shard.to_string(), (last.saturating_add(window), window));
        window
    })
}

/// The data cache an array reads and writes through: a pool (the
/// process's, or one of its own, as a TensorStore spec's `cache_pool` gives
/// it) and when its chunks are checked (`None`: `cache.recheck`).
#[derive(Clone)]
pub struct DataCache {
    pool: Arc<ChunkPool>,
    recheck: Option<Recheck>,
    /// Told into every layout: an array's Fortran view decodes chunks to
    /// another layout than the array.
    salt: u64,
}

impl std::fmt::Debug for DataCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataCache")
            .field("limit", &self.pool.limit())
            .field("recheck", &self.recheck)
            .finish()
    }
}

impl Default for DataCache {
    fn default() -> Self {
        DataCache::process()
    }
}

impl DataCache {
    /// The process's pool, checked as `cache.recheck` says.
    pub fn process() -> Self {
        DataCache {
            pool: Arc::clone(&PROCESS_POOL),
            recheck: None,
            salt: 0,
        }
    }

    /// A pool of its own of `limit` bytes (0: nothing is cached).
    pub fn own(limit: usize, recheck: Option<Recheck>) -> Self {
        DataCache {
            pool: Arc::new(Shared::new(limit)),
            recheck,
            salt: 0,
        }
    }

    /// The same pool, checked as `recheck` says.
    pub fn with_recheck(&self, recheck: Option<Recheck>) -> Self {
        DataCache {
            pool: Arc::clone(&self.pool),
            recheck,
            salt: self.salt,
        }
    }

    /// The same pool and checks, for readers whose decoded chunks are laid
    /// out otherwise (`salt` told apart from 0).
    pub fn salted(&self, salt: u64) -> Self {
        DataCache {
            salt,
            ..self.clone()
        }
    }

    /// The layout of chunks of `spec` decoded by this cache's readers.
    pub fn layout(&self, spec: &crate::codec::ChunkSpec) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        (spec.dtype, &spec.shape, self.salt).hash(&mut h);
        h.finish()
    }

    /// The budget in bytes (0: off).
    pub fn budget(&self) -> usize {
        self.pool.limit()
    }

    /// When cached chunks are checked.
    pub fn recheck(&self) -> Recheck {
        self.recheck.unwrap_or_else(chunk_recheck)
    }

    /// The cached chunk under `key`, with the generation it was read at.
    pub fn chunk(&self, key: &str) -> Option<(Generation, CachedChunk)> {
        self.pool.with(|c| c.get(key))
    }

    /// Remember the chunk at `key`, read (or written) at `generation`.
    pub fn remember(&self, key: &str, generation: Generation, chunk: CachedChunk) {
        let size = chunk.data.size();
        self.pool.with(|c| c.insert(key, generation, chunk, size));
    }

    /// The cached chunk under `key` at generation `from`, if there is one,
    /// now known to be generation `to` as well (a write that merged into
    /// `from` and left this inner chunk as it was).
    pub fn retag(&self, key: &str, from: &Generation, to: Generation) {
        self.pool.with(|c| {
            if let Some((generation, chunk)) = c.peek(key) {
                if generation == *from {
                    let size = chunk.data.size();
                    c.insert(key, to, chunk, size);
                }
            }
        });
    }

    /// Whether the pool holds a chunk under `key` (neither used nor counted).
    pub fn holds(&self, key: &str) -> bool {
        self.pool.with(|c| c.peek(key).is_some())
    }

    /// Forget the chunk at `key`.
    pub fn forget(&self, key: &str) {
        self.pool.with(|c| c.remove(key));
    }

    /// What the pool holds and how it was used.
    pub fn stats(&self) -> Stats {
        self.pool.with(|c| c.stats())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(s: &str) -> Generation {
        Generation::Tag(s.to_string())
    }

    #[test]
    fn least_recently_used_entries_go_first_and_the_budget_holds() {
        let per = 100 + 1 + ENTRY_OVERHEAD;
        let mut lru: Lru<u32> = Lru::new(3 * per);
        for (i, k) in ["a", "b", "c"].iter().enumerate() {
            lru.insert(k, tag(k), i as u32, 100);
        }
        assert_eq!(lru.stats().bytes, 3 * per);
        assert_eq!(lru.get("a"), Some((tag("a"), 0)));
        lru.insert("d", tag("d"), 3, 100);
        assert!(lru.stats().bytes <= 3 * per);
        assert_eq!(lru.get("b"), None, "b was the least recently used");
        assert!(lru.get("a").is_some() && lru.get("c").is_some() && lru.get("d").is_some());
        lru.insert("a", tag("a2"), 9, 100);
        assert_eq!(lru.get("a"), Some((tag("a2"), 9)), "replaced");
        assert_eq!(lru.peek("a"), Some((tag("a2"), 9)), "peeked, not counted");
        assert_eq!(lru.peek("nothing"), None);
        assert_eq!(lru.stats().entries, 3);
        lru.insert("huge", tag("h"), 1, 10 * per);
        assert_eq!(lru.get("huge"), None, "larger than the budget: not kept");
        assert_eq!(lru.stats().entries, 3);
        lru.remove("a");
        assert_eq!(lru.stats().bytes, 2 * per);
        let s = lru.stats();
        assert_eq!((s.hits, s.misses), (5, 2));
        lru.clear();
        assert_eq!(
            lru.stats(),
            Stats {
                limit: 3 * per,
                ..Stats::default()
            }
        );
    }

    #[test]
    fn read_ahead_grows_along_a_scan_and_stops_when_it_jumps() {
        let shard = "test://read-ahead";
        assert_eq!(read_ahead_window(shard, 0, 0), 0, "a first read");
        assert_eq!(read_ahead_window(shard, 1, 1), 1, "it goes on: one ahead");
        assert_eq!(
            read_ahead_window(shard, 3, 3),
            2,
            "after 1 and 2: two ahead"
        );
        assert_eq!(read_ahead_window(shard, 6, 6), 4);
        assert_eq!(
            read_ahead_window(shard, 40, 40),
            0,
            "a jump reads nothing ahead"
        );
        assert_eq!(read_ahead_window(shard, 41, 41), 1);
        let mut window = 1;
        let mut next = 43;
        for _ in 0..10 {
            window = read_ahead_window(shard, next, next);
            next += window + 1;
        }
        assert_eq!(window, MAX_READ_AHEAD, "bounded");
    }

    #[test]
    fn recheck_modes() {
        let opened = Instant::now();
        let before = opened - Duration::from_secs(5);
        let now = opened + Duration::from_secs(1);
        assert!(!Recheck::Always.fresh(now, opened, now));
        assert!(Recheck::Never.fresh(before, opened, now));
        assert!(!Recheck::Open.fresh(before, opened, now));
        assert!(Recheck::Open.fresh(opened, opened, now));
        let bound = Recheck::Within(Duration::from_secs(2));
        assert!(bound.fresh(opened, opened, now));
        assert!(!bound.fresh(before, opened, now));
    }

    #[test]
    fn a_budget_made_smaller_evicts_at_once() {
        let mut lru: Lru<u8> = Lru::new(10_000);
        for k in 0..10 {
            lru.insert(&k.to_string(), tag("g"), 0, 900);
        }
        lru.set_limit(3_000);
        assert!(lru.stats().bytes <= 3_000 && lru.stats().entries == 3);
        assert!(lru.get("7").is_some() && lru.get("6").is_none());
    }

    #[test]
    fn a_forked_child_starts_empty() {
        static CACHE: Shared<u32> = Shared::new(1 << 20);
        CACHE.with(|c| c.insert("k", tag("1"), 7, 4));
        // SAFETY: the child only uses the cache (its lock is free: no
        // section runs during the fork) and exits without unwinding.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let empty = CACHE.with(|c| c.get("k").is_none() && c.stats().entries == 0);
            // SAFETY: `_exit` ends the child at once (no destructors run).
            unsafe { libc::_exit(if empty { 0 } else { 3 }) };
        }
        let mut status = 0;
        // SAFETY: waiting for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        assert_eq!(CACHE.with(|c| c.get("k")), Some((tag("1"), 7)));
    }
}
