//! The codec chain of Zarr v3: array->array codecs, exactly one array->bytes
//! codec, then bytes->bytes codecs. One file per codec; this module holds the
//! three traits, the factory that builds codecs from JSON and [`CodecChain`].

pub mod array_to_array;
pub mod array_to_bytes;
pub mod bytes_to_bytes;
pub mod chain_rules;
pub mod chain_spec;
pub mod checksum;
pub mod complete;
pub mod config;
pub mod numcodecs;
pub mod partial;
pub mod registry;
pub(crate) mod typed;

use std::fmt::Debug;
use std::io::Read;

use ::bytes::Bytes;
use serde_json::{Map, Value};

use crate::dtype::DataType;
use crate::error::{Error, Result};
use crate::region::ChunkRegion;
pub use partial::{PartMap, PartialCodec, PartialRead};

/// The decoded representation a codec works on: the chunk's shape, data type
/// and fill value (one element, native byte order). Buffers are C order, native
/// byte order, `num_elements() * dtype.size` bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkSpec {
    pub shape: Vec<usize>,
    pub dtype: DataType,
    pub fill: Vec<u8>,
}

impl ChunkSpec {
    pub fn num_elements(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn nbytes(&self) -> usize {
        self.num_elements() * self.dtype.size
    }
}

/// What a decoder may produce: what the chain knows of its output's size.
/// Decoders never allocate beyond [`SizeBound::limit`], whatever a header in
/// the stored bytes claims, and refuse output beyond it as corrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeBound {
    /// Exactly this many bytes (a fixed-size chunk, or the encoding of one by a
    /// fixed-size codec); anything else is corrupt.
    Exact(usize),
    /// At most this many bytes (what a compressor writes for a bounded input).
    AtMost(usize),
    /// Bounded by memory only (variable-length chunks): buffers grow as output
    /// arrives, fallibly, and never on a header's word alone.
    Unbounded,
}

impl SizeBound {
    /// The most bytes allowed.
    pub fn limit(self) -> usize {
        match self {
            SizeBound::Exact(n) | SizeBound::AtMost(n) => n,
            SizeBound::Unbounded => isize::MAX as usize,
        }
    }

    pub fn exact(self) -> Option<usize> {
        match self {
            SizeBound::Exact(n) => Some(n),
            _ => None,
        }
    }

    /// Error unless `n` decoded bytes satisfy the bound.
    pub fn check(self, codec: &str, n: usize) -> Result<()> {
        match self {
            SizeBound::Exact(e) if n != e => Err(Error::corrupt(format!(
                "{codec}: decoded {n} bytes, expected {e}"
            ))),
            _ if n > self.limit() => Err(self.exceeded(codec)),
            _ => Ok(()),
        }
    }

    /// The size a header in the encoded bytes declares, once checked against
    /// the bound (before anything is allocated for it).
    pub fn check_declared(self, codec: &str, declared: u64) -> Result<usize> {
        let n = usize::try_from(declared).unwrap_or(usize::MAX);
        match self {
            SizeBound::Exact(e) if n != e => Err(Error::corrupt(format!(
                "{codec}: header declares {declared} decoded bytes, expected {e}"
            ))),
            _ if n > self.limit() => Err(Error::corrupt(format!(
                "{codec}: header declares {declared} decoded bytes, more than the {} \
                 this chunk can hold",
                self.limit()
            ))),
            _ => Ok(n),
        }
    }

    /// The error for output that went past the bound.
    pub fn exceeded(self, codec: &str) -> Error {
        Error::corrupt(match self {
            SizeBound::Exact(e) => format!("{codec}: decoded more than the expected {e} bytes"),
            _ => format!(
                "{codec}: decoded more than the {} bytes this chunk can hold",
                self.limit()
            ),
        })
    }

    /// The bound after a codec that adds exactly `n` bytes (checksums).
    pub fn plus(self, n: usize) -> SizeBound {
        match self {
            SizeBound::Exact(e) => e
                .checked_add(n)
                .map_or(SizeBound::Unbounded, SizeBound::Exact),
            SizeBound::AtMost(m) => m
                .checked_add(n)
                .map_or(SizeBound::Unbounded, SizeBound::AtMost),
            SizeBound::Unbounded => SizeBound::Unbounded,
        }
    }

    /// The bound after a compressor whose encoding of `n` bytes takes at most
    /// `worst(n)` bytes (`None`: more than a buffer can hold).
    pub fn compressed(self, worst: impl FnOnce(usize) -> Option<usize>) -> SizeBound {
        match self {
            SizeBound::Exact(n) | SizeBound::AtMost(n) => worst(n)
                .filter(|&w| w <= isize::MAX as usize)
                .map_or(SizeBound::Unbounded, SizeBound::AtMost),
            SizeBound::Unbounded => SizeBound::Unbounded,
        }
    }
}

/// The most bytes a compressed encoding of some input may take: `worst`, its
/// format's worst case for incompressible input as the reference encoder
/// writes it, plus an eighth and 64 KiB for what other encoders may add
/// (smaller stored blocks, flushes, gzip file names and comments, zstd
/// skippable frames, several members). `None` on overflow.
pub fn with_slack(worst: Option<usize>) -> Option<usize> {
    let worst = worst?;
    worst.checked_add(worst / 8)?.checked_add(64 << 10)
}

/// Read everything `reader` decodes into a buffer grown within `bound` (see
/// [`make_room`]); `err` maps the reader's errors.
pub fn read_bounded(
    mut reader: impl Read,
    bound: SizeBound,
    codec: &str,
    err: impl Fn(std::io::Error) -> Error,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        make_room(&mut out, bound, codec)?;
        let spare = out.capacity() - out.len();
        // At most `spare` bytes: the reader appends into the spare capacity and
        // the vector never grows here.
        let n = (&mut reader)
            .take(spare as u64)
            .read_to_end(&mut out)
            .map_err(&err)?;
        if n < spare {
            bound.check(codec, out.len())?;
            return Ok(out);
        }
    }
}

/// Make room in `out` for more decoded bytes, within `bound`: all of an exact
/// size at once, else doubling; capacity stops one byte past the limit, so a
/// decoder writing into spare capacity cannot go further and
/// [`SizeBound::check`] catches the one byte too many. Allocation is fallible.
/// An error when `out` is already full at that size.
pub fn make_room(out: &mut Vec<u8>, bound: SizeBound, codec: &str) -> Result<()> {
    if out.len() < out.capacity() {
        return Ok(());
    }
    let cap = bound.limit().saturating_add(1);
    if out.len() >= cap {
        return Err(bound.exceeded(codec));
    }
    let room = cap - out.len();
    let more = match bound {
        SizeBound::Exact(_) => room,
        _ => out.capacity().max(64 << 10).min(room),
    };
    crate::alloc::reserve(out, more)
}

/// Codecs that turn one array into another (transpose).
pub trait ArrayToArrayCodec: Send + Sync + Debug {
    /// The representation this codec produces on encode.
    fn encoded_spec(&self) -> &ChunkSpec;
    /// Whether this codec only moves elements (transpose), so that a region
    /// of its decoded array maps onto its encoded one
    /// ([`encoded_region`](Self::encoded_region)) and what follows can be
    /// read in part (see [`partial`]).
    fn maps_regions(&self) -> bool {
        false
    }
    /// The region of the encoded array that holds `region` of the decoded
    /// one; `None` from codecs that do not [`maps_regions`](Self::maps_regions).
    fn encoded_region(&self, _region: &ChunkRegion) -> Option<ChunkRegion> {
        None
    }
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>>;
    /// Decode; `bound` is the decoded chunk's size (exact for fixed-size
    /// data types, [`SizeBound::Unbounded`] for a variable-length frame).
    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>>;
}

/// Codecs that serialize an array to bytes (bytes, packbits, sharding, vlen).
pub trait ArrayToBytesCodec: Send + Sync + Debug {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>>;
    /// Decode; `bound` is the decoded chunk's size (exact for fixed-size data
    /// types, [`SizeBound::Unbounded`] for a variable-length frame).
    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>>;
    /// What this codec's encoded bytes may take (the bound on what the
    /// bytes->bytes codecs after it decode to).
    fn encoded_bound(&self) -> SizeBound;
    /// True when encoded and decoded bytes are identical (native byte order),
    /// which lets the chain decode straight into the caller's buffer.
    fn is_identity(&self) -> bool {
        false
    }
    /// This codec's ability to decode and encode its chunk in part (a
    /// shard's inner chunks), if it has it (see [`partial`]).
    fn partial(&self) -> Option<&dyn PartialCodec> {
        None
    }
}

/// Codecs from bytes to bytes (compressors, checksums).
pub trait BytesToBytesCodec: Send + Sync + Debug {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>>;
    /// Decode at most (or exactly) what `bound` allows: more output is a
    /// corrupt chunk, never a larger allocation.
    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>>;
    /// Decode into `out`, whose length is the exact decoded size. Compressors
    /// that know the size override this to skip a copy.
    fn decode_into(&self, encoded: Vec<u8>, out: &mut [u8]) -> Result<()> {
        let decoded = self.decode(encoded, SizeBound::Exact(out.len()))?;
        check_len(decoded.len(), out.len())?;
        out.copy_from_slice(&decoded);
        Ok(())
    }
    /// The bound on this codec's encoded bytes for input within `decoded`: the
    /// largest encoding any encoder of its format writes.
    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound;
    /// `decode` of stored bytes that may be a slice of a buffer shared with
    /// other chunks (the inner chunks of one shard read). Compressors, which
    /// only read their input, override this to decode the bytes where they
    /// are; the default takes them as an owned buffer (a copy when shared).
    fn decode_stored(&self, encoded: Bytes, bound: SizeBound) -> Result<Vec<u8>> {
        self.decode(Vec::from(encoded), bound)
    }
    /// `decode_into` of stored bytes that may be shared (see `decode_stored`).
    fn decode_stored_into(&self, encoded: Bytes, out: &mut [u8]) -> Result<()> {
        self.decode_into(Vec::from(encoded), out)
    }
}

/// The four decode methods of a [`BytesToBytesCodec`] that reads its input
/// where it is (a compressor): each calls the implementing module's
/// `decode_slice(&[u8], SizeBound)` or `decode_slice_into(&[u8], &mut [u8])`,
/// so owned bytes and slices of a shared buffer decode alike, with no copy.
macro_rules! decode_in_place {
    () => {
        fn decode(
            &self,
            encoded: Vec<u8>,
            bound: $crate::codec::SizeBound,
        ) -> $crate::error::Result<Vec<u8>> {
            decode_slice(&encoded, bound)
        }

        fn decode_into(&self, encoded: Vec<u8>, out: &mut [u8]) -> $crate::error::Result<()> {
            decode_slice_into(&encoded, out)
        }

        fn decode_stored(
            &self,
            encoded: ::bytes::Bytes,
            bound: $crate::codec::SizeBound,
        ) -> $crate::error::Result<Vec<u8>> {
            decode_slice(&encoded, bound)
        }

        fn decode_stored_into(
            &self,
            encoded: ::bytes::Bytes,
            out: &mut [u8],
        ) -> $crate::error::Result<()> {
            decode_slice_into(&encoded, out)
        }
    };
}
pub(crate) use decode_in_place;

/// Error unless a decoded buffer has the expected length.
pub fn check_len(got: usize, expected: usize) -> Result<()> {
    if got != expected {
        return Err(Error::corrupt(format!(
            "decoded {got} bytes, expected {expected}"
        )));
    }
    Ok(())
}

/// A validated chain: array->array*, array->bytes, bytes->bytes*.
#[derive(Debug)]
pub struct CodecChain {
    spec: ChunkSpec,
    array_to_array: Vec<Box<dyn ArrayToArrayCodec>>,
    array_to_bytes: Box<dyn ArrayToBytesCodec>,
    bytes_to_bytes: Vec<Box<dyn BytesToBytesCodec>>,
    bounds: Bounds,
}

/// What each codec of a chain may decode to, computed once from the chunk
/// spec: the decoded sizes of fixed-size chunks, and from the innermost
/// bytes->bytes codec outwards, each codec's largest encoding of what the
/// codec inside it may produce.
#[derive(Debug)]
struct Bounds {
    /// Per array->array codec (in chain order), the size of its decoded array.
    array_to_array: Vec<SizeBound>,
    /// What the array->bytes codec decodes to.
    array_to_bytes: SizeBound,
    /// Per bytes->bytes codec (in chain order), what it decodes to.
    bytes_to_bytes: Vec<SizeBound>,
    /// The chain's encoded bytes.
    encoded: SizeBound,
}

impl Bounds {
    fn new(
        specs: &[ChunkSpec],
        array_to_bytes: &dyn ArrayToBytesCodec,
        bytes_to_bytes: &[Box<dyn BytesToBytesCodec>],
    ) -> Bounds {
        let decoded = |s: &ChunkSpec| {
            if s.dtype.is_var_len() {
                SizeBound::Unbounded
            } else {
                SizeBound::Exact(s.nbytes())
            }
        };
        let mut encoded = array_to_bytes.encoded_bound();
        let bytes_to_bytes = bytes_to_bytes
            .iter()
            .map(|c| {
                let inner = encoded;
                encoded = c.encoded_bound(inner);
                inner
            })
            .collect();
        let (last, before) = specs.split_last().expect("the chunk spec comes first");
        Bounds {
            array_to_array: before.iter().map(decoded).collect(),
            array_to_bytes: decoded(last),
            bytes_to_bytes,
            encoded,
        }
    }
}

pub(crate) enum AnyCodec {
    ArrayToArray(Box<dyn ArrayToArrayCodec>),
    ArrayToBytes(Box<dyn ArrayToBytesCodec>),
    BytesToBytes(Box<dyn BytesToBytesCodec>),
}

impl AnyCodec {
    fn kind(&self) -> registry::Kind {
        match self {
            AnyCodec::ArrayToArray(_) => registry::Kind::ArrayToArray,
            AnyCodec::ArrayToBytes(_) => registry::Kind::ArrayToBytes,
            AnyCodec::BytesToBytes(_) => registry::Kind::BytesToBytes,
        }
    }
}

/// Split one codec's JSON (`{"name":..., "configuration":{...}}` or a bare name).
pub(crate) fn name_and_config(codec: &Value) -> Result<(&str, Map<String, Value>)> {
    match codec {
        Value::String(name) => Ok((name, Map::new())),
        Value::Object(obj) => {
            let name = obj
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::metadata(format!("codec without a name: {codec}")))?;
            for key in obj.keys() {
                if key != "name" && key != "configuration" && key != "must_understand" {
                    return Err(Error::metadata(format!(
                        "codec '{name}': unexpected member '{key}'"
                    )));
                }
            }
            let config = match obj.get("configuration") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(c)) => c.clone(),
                Some(other) => {
                    return Err(Error::metadata(format!(
                        "codec '{name}': configuration must be an object, got {other}"
                    )))
                }
            };
            Ok((name, config))
        }
        other => Err(Error::metadata(format!(
            "a codec must be an object or a name, got {other}"
        ))),
    }
}

/// Build one codec for chunks of `spec`, as its registry entry says.
fn build_codec(codec: &Value, spec: &ChunkSpec) -> Result<AnyCodec> {
    let (name, config) = name_and_config(codec)?;
    registry::lookup(name)
        .and_then(|entry| entry.build(&config, spec))
        .unwrap_or_else(|| Err(Error::unsupported(format!("unknown codec '{name}'"))))
}

/// The error of a chain (`list`) whose codecs are out of order.
fn order_error(problem: registry::OrderProblem, list: &[Value]) -> Error {
    use registry::OrderProblem::*;
    Error::metadata(match problem {
        NoArrayToBytes => "codecs must contain exactly one array->bytes codec, found none".into(),
        SeveralArrayToBytes => {
            "codecs must contain exactly one array->bytes codec, found two".into()
        }
        ArrayToArrayAfter(i) => format!(
            "array->array codec {} must come before the array->bytes codec",
            list[i]
        ),
        BytesToBytesBefore(i) => format!(
            "bytes->bytes codec {} must come after the array->bytes codec",
            list[i]
        ),
    })
}

impl CodecChain {
    /// Build and validate a chain from the `codecs` JSON list for chunks of `spec`.
    pub fn from_json(codecs: &Value, spec: ChunkSpec) -> Result<CodecChain> {
        // Every size below is computed with plain usize arithmetic, and a buffer can hold
        // at most isize::MAX bytes: refuse larger chunks here rather than wrap or panic.
        // Variable-length elements (size 0 here) count one byte each: their element
        // count must fit as well.
        let fits = spec
            .shape
            .iter()
            .try_fold(spec.dtype.size.max(1), |n, &s| n.checked_mul(s))
            .is_some_and(|n| n <= isize::MAX as usize);
        if !fits {
            let (shape, max) = (&spec.shape, isize::MAX);
            return Err(Error::unsupported(if spec.dtype.is_var_len() {
                format!(
                    "chunks of shape {shape:?} have more elements than the {max} a buffer can hold"
                )
            } else {
                format!(
                    "chunks of shape {shape:?} with {} byte(s) per element are larger than the \
                     {max} bytes a buffer can hold",
                    spec.dtype.size
                )
            }));
        }
        let list = codecs
            .as_array()
            .ok_or_else(|| Error::metadata("codecs must be a list"))?;
        let mut built = Vec::with_capacity(list.len());
        let mut current = spec.clone();
        // The decoded spec of each array->array codec, then the array->bytes codec's.
        let mut specs = vec![spec.clone()];
        for codec in list {
            let c = build_codec(codec, &current)?;
            if let AnyCodec::ArrayToArray(c) = &c {
                current = c.encoded_spec().clone();
                specs.push(current.clone());
            }
            built.push(c);
        }
        let kinds: Vec<registry::Kind> = built.iter().map(AnyCodec::kind).collect();
        if let Some(problem) = registry::check_order(&kinds) {
            return Err(order_error(problem, list));
        }
        let mut array_to_array = Vec::new();
        let mut array_to_bytes = None;
        let mut bytes_to_bytes = Vec::new();
        for c in built {
            match c {
                AnyCodec::ArrayToArray(c) => array_to_array.push(c),
                AnyCodec::ArrayToBytes(c) => array_to_bytes = Some(c),
                AnyCodec::BytesToBytes(c) => bytes_to_bytes.push(c),
            }
        }
        let array_to_bytes = array_to_bytes
            .ok_or_else(|| order_error(registry::OrderProblem::NoArrayToBytes, list))?;
        let bounds = Bounds::new(&specs, array_to_bytes.as_ref(), &bytes_to_bytes);
        Ok(CodecChain {
            spec,
            array_to_array,
            array_to_bytes,
            bytes_to_bytes,
            bounds,
        })
    }

    /// The decoded chunk representation.
    pub fn spec(&self) -> &ChunkSpec {
        &self.spec
    }

    /// Whether stored bytes are the decoded chunk itself (native-order `bytes`
    /// alone), so they can be read straight into the output.
    pub fn is_passthrough(&self) -> bool {
        self.array_to_array.is_empty()
            && self.bytes_to_bytes.is_empty()
            && self.array_to_bytes.is_identity()
            && !self.spec.dtype.is_var_len()
    }

    /// The partial codec when it is the whole chain, so that its parts can
    /// be written one by one (a lone sharding codec: see [`partial`]).
    pub fn parts(&self) -> Option<&dyn PartialCodec> {
        if self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty() {
            self.array_to_bytes.partial()
        } else {
            None
        }
    }

    /// How a region of a chunk can be read without its whole encoded bytes:
    /// when the chain is array->array codecs that map regions (transposes),
    /// then a partial codec, and no bytes->bytes codec (the map is then read,
    /// and only the parts needed, by byte range).
    pub fn partial(&self) -> Option<PartialRead<'_>> {
        PartialRead::of(self)
    }

    /// Encode a decoded chunk (C order, native byte order).
    pub fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let fixed = !self.spec.dtype.is_var_len();
        check_len(
            decoded.len(),
            if fixed {
                self.spec.nbytes()
            } else {
                decoded.len()
            },
        )
        .map_err(|_| {
            Error::value(format!(
                "chunk buffer has {} bytes, expected {}",
                decoded.len(),
                self.spec.nbytes()
            ))
        })?;
        let mut data = decoded;
        for c in &self.array_to_array {
            data = c.encode(data)?;
        }
        data = self.array_to_bytes.encode(data)?;
        for c in &self.bytes_to_bytes {
            data = c.encode(data)?;
        }
        Ok(data)
    }

    /// The most bytes an encoded chunk of this chain may take (sharding bounds
    /// a shard by its inner chunks').
    pub fn encoded_bound(&self) -> SizeBound {
        self.bounds.encoded
    }

    /// Decode stored bytes into a new buffer of the decoded chunk. No codec
    /// allocates more than its step of the chain can produce.
    pub fn decode(&self, encoded: Vec<u8>) -> Result<Vec<u8>> {
        self.decode_from(Stored::Owned(encoded))
    }

    /// `decode` of stored bytes that may be a slice of a buffer shared with
    /// other chunks (an inner chunk of a shard read in batches, or of a whole
    /// shard): the outermost compressor decodes them where they are, with no
    /// copy into an owned buffer first.
    pub fn decode_stored(&self, encoded: Bytes) -> Result<Vec<u8>> {
        self.decode_from(Stored::Shared(encoded))
    }

    fn decode_from(&self, encoded: Stored) -> Result<Vec<u8>> {
        let mut steps = self
            .bytes_to_bytes
            .iter()
            .zip(&self.bounds.bytes_to_bytes)
            .rev();
        let mut data = match steps.next() {
            Some((outermost, &bound)) => encoded.decode_by(outermost.as_ref(), bound)?,
            None => encoded.into_vec(),
        };
        for (c, &bound) in steps {
            data = c.decode(data, bound)?;
        }
        data = self
            .array_to_bytes
            .decode(data, self.bounds.array_to_bytes)?;
        for (c, &bound) in self
            .array_to_array
            .iter()
            .zip(&self.bounds.array_to_array)
            .rev()
        {
            data = c.decode(data, bound)?;
        }
        if !self.spec.dtype.is_var_len() {
            check_len(data.len(), self.spec.nbytes())?;
        }
        Ok(data)
    }

    /// Decode stored bytes into `out` (exactly `spec().nbytes()` long), with no
    /// intermediate copy when the chain is compressors over native-order bytes.
    pub fn decode_into(&self, encoded: Vec<u8>, out: &mut [u8]) -> Result<()> {
        self.decode_into_from(Stored::Owned(encoded), out)
    }

    /// `decode_into` of stored bytes that may be shared (see `decode_stored`).
    pub fn decode_stored_into(&self, encoded: Bytes, out: &mut [u8]) -> Result<()> {
        self.decode_into_from(Stored::Shared(encoded), out)
    }

    fn decode_into_from(&self, encoded: Stored, out: &mut [u8]) -> Result<()> {
        check_len(out.len(), self.spec.nbytes())?;
        if !(self.array_to_array.is_empty() && self.array_to_bytes.is_identity()) {
            let decoded = self.decode_from(encoded)?;
            out.copy_from_slice(&decoded);
            return Ok(());
        }
        let Some((innermost, outer)) = self.bytes_to_bytes.split_first() else {
            let data = encoded.as_slice();
            check_len(data.len(), out.len())?;
            out.copy_from_slice(data);
            return Ok(());
        };
        let mut steps = outer.iter().zip(&self.bounds.bytes_to_bytes[1..]).rev();
        let Some((outermost, &bound)) = steps.next() else {
            return encoded.decode_into_by(innermost.as_ref(), out);
        };
        let mut data = encoded.decode_by(outermost.as_ref(), bound)?;
        for (c, &bound) in steps {
            data = c.decode(data, bound)?;
        }
        innermost.decode_into(data, out)
    }
}

/// Stored bytes on their way into a chain: owned, or possibly a slice of a
/// buffer shared with other chunks, which the outermost codec takes as it is
/// (`BytesToBytesCodec::decode_stored`).
enum Stored {
    Owned(Vec<u8>),
    Shared(Bytes),
}

impl Stored {
    fn as_slice(&self) -> &[u8] {
        match self {
            Stored::Owned(v) => v,
            Stored::Shared(b) => b,
        }
    }

    fn into_vec(self) -> Vec<u8> {
        match self {
            Stored::Owned(v) => v,
            Stored::Shared(b) => Vec::from(b),
        }
    }

    fn decode_by(self, codec: &dyn BytesToBytesCodec, bound: SizeBound) -> Result<Vec<u8>> {
        match self {
            Stored::Owned(v) => codec.decode(v, bound),
            Stored::Shared(b) => codec.decode_stored(b, bound),
        }
    }

    fn decode_into_by(self, codec: &dyn BytesToBytesCodec, out: &mut [u8]) -> Result<()> {
        match self {
            Stored::Owned(v) => codec.decode_into(v, out),
            Stored::Shared(b) => codec.decode_stored_into(b, out),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::codec::bytes_to_bytes::{gzip, zstd};
    use serde_json::json;

    pub fn spec(shape: &[usize], dtype: &str) -> ChunkSpec {
        let dtype = DataType::from_name(dtype).unwrap();
        ChunkSpec {
            shape: shape.to_vec(),
            dtype,
            fill: vec![0; dtype.size],
        }
    }

    pub fn sample(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn chain_round_trip_every_codec() {
        let s = spec(&[4, 5, 6], "uint16");
        let codecs = json!([
            {"name": "transpose", "configuration": {"order": [2, 0, 1]}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "bitshuffle", "typesize": 2, "blocksize": 0}},
            {"name": "zstd", "configuration": {"level": 3, "checksum": true}},
            {"name": "gzip", "configuration": {"level": 1}},
            "crc32c"
        ]);
        let chain = CodecChain::from_json(&codecs, s.clone()).unwrap();
        let data = sample(s.nbytes());
        let enc = chain.encode(data.clone()).unwrap();
        assert_eq!(chain.decode(enc.clone()).unwrap(), data);
        let mut out = vec![0u8; s.nbytes()];
        chain.decode_into(enc, &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn decode_into_fast_path() {
        let s = spec(&[100], "float64");
        let chain = CodecChain::from_json(
            &json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 0, "checksum": false}}]),
            s.clone(),
        )
        .unwrap();
        let data = sample(800);
        let enc = chain.encode(data.clone()).unwrap();
        let mut out = vec![0u8; 800];
        chain.decode_into(enc, &mut out).unwrap();
        assert_eq!(out, data);
    }

    /// Stored bytes that are a slice of a larger shared buffer (inner chunks
    /// of one shard read) decode as an owned copy of them does, for every
    /// compressor alone (decoded where they are), for two compressors, and for
    /// chains whose outermost codec needs its input owned; corrupt slices are
    /// errors.
    #[test]
    fn stored_slices_of_a_shared_buffer_decode_as_owned_bytes() {
        let s = spec(&[10, 30], "uint32");
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        let chains = [
            json!([bytes, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
            json!([bytes, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]),
            json!([bytes, {"name": "gzip", "configuration": {"level": 1}}]),
            json!([bytes, {"name": "numcodecs.zstd", "configuration": {"level": 1}}]),
            json!([bytes, {"name": "numcodecs.gzip", "configuration": {"level": 1}}]),
            json!([bytes, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}, "crc32c"]),
            json!([bytes, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}, {"name": "gzip", "configuration": {"level": 1}}]),
            json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, bytes, {"name": "gzip", "configuration": {"level": 1}}]),
            json!([bytes]),
        ];
        for codecs in chains {
            let chain = CodecChain::from_json(&codecs, s.clone()).unwrap();
            let a = sample(s.nbytes());
            let b: Vec<u8> = a.iter().rev().copied().collect();
            let (ea, eb) = (
                chain.encode(a.clone()).unwrap(),
                chain.encode(b.clone()).unwrap(),
            );
            // One buffer holding both encoded chunks, as a shard batch does.
            let shared = Bytes::from([ea.clone(), eb.clone()].concat());
            let (sa, sb) = (shared.slice(..ea.len()), shared.slice(ea.len()..));
            assert_eq!(chain.decode_stored(sa.clone()).unwrap(), a, "{codecs}");
            assert_eq!(chain.decode_stored(sb.clone()).unwrap(), b, "{codecs}");
            let mut out = vec![0u8; s.nbytes()];
            chain.decode_stored_into(sb, &mut out).unwrap();
            assert_eq!(out, b, "{codecs}");
            if codecs.as_array().unwrap().len() > 1 {
                let cut = shared.slice(..ea.len() - 1);
                assert!(chain.decode_stored(cut.clone()).is_err(), "{codecs}");
                assert!(chain.decode_stored_into(cut, &mut out).is_err(), "{codecs}");
            }
        }
    }

    #[test]
    fn chain_validation() {
        let s = spec(&[4], "int32");
        let err = |v: Value| CodecChain::from_json(&v, s.clone()).unwrap_err();
        assert!(err(json!([])).message.contains("found none"));
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        assert!(err(json!([bytes, bytes])).message.contains("found two"));
        assert!(err(json!(["gzip", bytes]))
            .message
            .contains("must come after"));
        assert!(
            err(json!([bytes, {"name": "transpose", "configuration": {"order": [0]}}]))
                .message
                .contains("must come before")
        );
        assert_eq!(
            err(json!([{"name": "nope"}])).kind,
            crate::error::ErrorKind::Unsupported
        );
        assert!(
            err(json!([{"name": "bytes", "configuration": {"endian": "little"}, "x": 1}]))
                .message
                .contains("unexpected member 'x'")
        );
        assert!(err(json!({"a": 1})).message.contains("must be a list"));
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let s = spec(&[64], "uint32");
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        for codecs in [
            json!([bytes]),
            json!([bytes, "gzip"]),
            json!([bytes, "zstd"]),
            json!([bytes, "blosc"]),
            json!([bytes, "crc32c"]),
        ] {
            let chain = CodecChain::from_json(&codecs, s.clone()).unwrap();
            let enc = chain.encode(sample(256)).unwrap();
            for cut in [0, 1, enc.len() / 2, enc.len() - 1] {
                assert!(
                    chain.decode(enc[..cut].to_vec()).is_err(),
                    "{codecs} cut {cut}"
                );
            }
            let mut garbage = enc.clone();
            for b in garbage.iter_mut() {
                *b ^= 0x5a;
            }
            // Garbage must give an error or (for raw bytes) different data, never a panic.
            let _ = chain.decode(garbage);
        }
    }

    fn bytes_to_bytes(codec: Value) -> Box<dyn BytesToBytesCodec> {
        match build_codec(&codec, &spec(&[1 << 20], "uint8")).unwrap() {
            AnyCodec::BytesToBytes(c) => c,
            _ => panic!("{codec} is not a bytes->bytes codec"),
        }
    }

    /// A 16-byte zstd frame declaring `size` decoded bytes (single segment,
    /// 8-byte content size), holding one empty raw block.
    pub fn zstd_frame_claiming(size: u64) -> Vec<u8> {
        let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
        f.extend_from_slice(&size.to_le_bytes());
        f.extend_from_slice(&[1, 0, 0]);
        f
    }

    /// A 16-byte blosc header (version 2, byte shuffle, typesize 1) declaring `size` bytes.
    pub fn blosc_header_claiming(size: u32) -> Vec<u8> {
        let mut h = vec![2, 1, 1, 1];
        for v in [size, 1 << 16, 16] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        h
    }

    /// One zlib stream of `copies` full-flushed segments of `segment` zero bytes
    /// (never finished): a bomb for a decoder of one stream.
    fn zlib_bomb(segment: usize, copies: usize) -> Vec<u8> {
        use flate2::{Compress, Compression, FlushCompress};
        let zeros = vec![0u8; segment];
        let mut c = Compress::new(Compression::best(), true);
        let mut piece = || {
            let start = c.total_in();
            let mut v = Vec::with_capacity(segment);
            while c.total_in() - start < segment as u64 || v.is_empty() {
                let done = (c.total_in() - start) as usize;
                c.compress_vec(&zeros[done..], &mut v, FlushCompress::Full)
                    .unwrap();
            }
            v
        };
        let (first, second, third) = (piece(), piece(), piece());
        assert_eq!(second, third, "full-flushed segments repeat");
        [first, second.repeat(copies - 1)].concat()
    }

    #[test]
    fn size_bounds() {
        use SizeBound::*;
        assert_eq!((Exact(5).limit(), AtMost(7).limit()), (5, 7));
        assert_eq!(Unbounded.limit(), isize::MAX as usize);
        assert!(Exact(5).check("c", 5).is_ok() && Exact(5).check("c", 4).is_err());
        assert!(AtMost(5).check("c", 0).is_ok() && AtMost(5).check("c", 6).is_err());
        assert!(Unbounded.check("c", 1 << 40).is_ok());
        assert_eq!(Exact(5).check_declared("c", 5).unwrap(), 5);
        let err = Exact(5).check_declared("zstd", 1 << 34).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Corrupt);
        assert_eq!(
            err.message,
            "zstd: header declares 17179869184 decoded bytes, expected 5"
        );
        assert!(AtMost(5).check_declared("c", 6).is_err());
        assert!(Unbounded.check_declared("c", u64::MAX).is_err());
        assert_eq!(Exact(5).plus(4), Exact(9));
        assert_eq!(AtMost(5).plus(4), AtMost(9));
        assert_eq!(Exact(usize::MAX).plus(4), Unbounded);
        assert_eq!(Exact(100).compressed(|n| Some(2 * n)), AtMost(200));
        assert_eq!(Exact(100).compressed(|_| None), Unbounded);
        assert_eq!(Unbounded.compressed(Some), Unbounded);
        assert_eq!(with_slack(Some(800)), Some(800 + 100 + 65536));
        assert_eq!(with_slack(Some(usize::MAX)), None);
    }

    #[test]
    fn room_grows_within_the_bound() {
        let mut out = Vec::new();
        make_room(&mut out, SizeBound::Exact(10), "c").unwrap();
        assert_eq!(out.capacity(), 11, "an exact size at once, one byte over");
        out.resize(11, 0);
        assert!(make_room(&mut out, SizeBound::Exact(10), "c").is_err());
        let mut out = Vec::new();
        let mut caps = Vec::new();
        while make_room(&mut out, SizeBound::AtMost(300_000), "c").is_ok() {
            caps.push(out.capacity());
            out.resize(out.capacity(), 0);
        }
        assert_eq!(caps, [65536, 131072, 262144, 300_001]);
        let err = make_room(&mut out, SizeBound::AtMost(300_000), "gzip").unwrap_err();
        assert_eq!(
            err.message,
            "gzip: decoded more than the 300000 bytes this chunk can hold"
        );
    }

    #[test]
    fn reading_a_stream_stays_within_the_bound() {
        use crate::alloc::tracking::largest_allocation;
        let data = sample(100_000);
        let io = |e: std::io::Error| Error::corrupt(e.to_string());
        for (bound, fits) in [
            (SizeBound::Exact(100_000), true),
            (SizeBound::AtMost(150_000), true),
            (SizeBound::AtMost(100_000), true),
            (SizeBound::Unbounded, true),
            (SizeBound::AtMost(99_999), false),
            (SizeBound::Exact(100_001), false),
        ] {
            let (got, largest) = largest_allocation(|| read_bounded(&data[..], bound, "c", io));
            match got {
                Ok(out) => {
                    assert!(fits, "{bound:?}");
                    assert_eq!(out, data);
                    assert!(
                        out.capacity() <= bound.limit().saturating_add(1),
                        "{bound:?}"
                    );
                }
                Err(e) => assert!(!fits && e.kind == crate::error::ErrorKind::Corrupt),
            }
            // Never more than the bound, nor (unbounded) more than twice the output.
            assert!(
                largest <= 200_000.min(bound.limit() + 1),
                "{bound:?}: {largest}"
            );
        }
    }

    #[test]
    fn chain_bounds_follow_each_codecs_largest_encoding() {
        let s = spec(&[1000], "uint16");
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        let chain = CodecChain::from_json(
            &json!([{"name": "transpose", "configuration": {"order": [0]}}, bytes, "crc32c", "zstd", "gzip", "crc32c"]),
            s,
        )
        .unwrap();
        let b = &chain.bounds;
        assert_eq!(b.array_to_array, [SizeBound::Exact(2000)]);
        assert_eq!(b.array_to_bytes, SizeBound::Exact(2000));
        let zstd_worst = zstd::encoded_bound(SizeBound::Exact(2004));
        assert_eq!(
            b.bytes_to_bytes,
            [
                SizeBound::Exact(2000),
                SizeBound::Exact(2004),
                zstd_worst,
                gzip::encoded_bound(zstd_worst),
            ]
        );
        assert_eq!(b.encoded, gzip::encoded_bound(zstd_worst).plus(4));
        assert!(matches!(zstd_worst, SizeBound::AtMost(n) if (2004..80_000).contains(&n)));
        // Variable-length chunks have no bound but memory.
        let strings = CodecChain::from_json(
            &json!(["vlen-utf8", "gzip", "crc32c"]),
            spec(&[10], "string"),
        )
        .unwrap();
        assert_eq!(strings.bounds.array_to_bytes, SizeBound::Unbounded);
        assert_eq!(
            strings.bounds.bytes_to_bytes,
            [SizeBound::Unbounded, SizeBound::Unbounded]
        );
        // Every encoding of a real chunk is within the bound.
        let data = sample(2000);
        let enc = chain.encode(data.clone()).unwrap();
        assert!(enc.len() <= b.encoded.limit());
        assert_eq!(chain.decode(enc).unwrap(), data);
    }

    /// Hostile inputs for every compressor: headers claiming far more than the
    /// chunk and bombs (concatenated members and streams of zeros decoding to
    /// 256 MiB) must be corrupt for a 1000-byte chunk, and nothing near their
    /// claims may be allocated.
    #[test]
    fn decoders_never_allocate_past_their_bound() {
        use crate::alloc::tracking::largest_allocation;
        let member = |codec: &Value| {
            bytes_to_bytes(codec.clone())
                .encode(vec![0; 8 << 20])
                .unwrap()
        };
        let bombs: Vec<(Value, Vec<u8>)> = [
            json!({"name": "gzip", "configuration": {"level": 9}}),
            json!({"name": "zstd", "configuration": {"level": 3}}),
            json!({"name": "numcodecs.gzip", "configuration": {"level": 9}}),
            json!({"name": "numcodecs.zstd"}),
            json!({"name": "numcodecs.bz2", "configuration": {"level": 1}}),
            json!({"name": "numcodecs.lzma", "configuration": {"preset": 1}}),
        ]
        .into_iter()
        .map(|c| {
            let bomb = member(&c).repeat(32);
            (c, bomb)
        })
        .chain([
            (json!({"name": "numcodecs.zlib"}), zlib_bomb(8 << 20, 32)),
            (json!({"name": "zstd"}), zstd_frame_claiming(1 << 34)),
            (
                json!({"name": "numcodecs.zstd"}),
                zstd_frame_claiming(1 << 34),
            ),
            (
                json!({"name": "blosc"}),
                blosc_header_claiming((1 << 31) - 17),
            ),
            (
                json!({"name": "numcodecs.blosc"}),
                blosc_header_claiming((1 << 31) - 17),
            ),
            (json!({"name": "numcodecs.lz4"}), {
                let mut b = member(&json!({"name": "numcodecs.lz4"}));
                let claim = 255 * (b.len() as u32 - 4);
                b[..4].copy_from_slice(&claim.to_le_bytes());
                b
            }),
        ])
        .collect();
        for (codec, bomb) in &bombs {
            let c = bytes_to_bytes(codec.clone());
            for bound in [SizeBound::Exact(1000), SizeBound::AtMost(1000)] {
                let input = bomb.clone();
                let (got, largest) = largest_allocation(|| c.decode(input, bound));
                let err = got.unwrap_err();
                assert_eq!(
                    err.kind,
                    crate::error::ErrorKind::Corrupt,
                    "{codec} {bound:?}: {}",
                    err.message
                );
                // Decoder state (bzip2's block, an lzma dictionary) aside, nothing
                // near the 256 MiB (or more) the input claims.
                assert!(
                    largest < 8 << 20,
                    "{codec} {bound:?}: allocated {largest} bytes"
                );
            }
            let mut out = vec![0u8; 1000];
            let (got, largest) = largest_allocation(|| c.decode_into(bomb.clone(), &mut out));
            assert!(got.is_err(), "{codec}");
            assert!(
                largest < 8 << 20 || largest == bomb.len(),
                "{codec}: allocated {largest} bytes"
            );
        }
        // Without a bound, a header is still no reason to allocate what it claims.
        for (codec, claim) in [
            (json!({"name": "zstd"}), zstd_frame_claiming(1 << 34)),
            (
                json!({"name": "numcodecs.zstd"}),
                zstd_frame_claiming(1 << 34),
            ),
            (
                json!({"name": "blosc"}),
                blosc_header_claiming((1 << 31) - 17),
            ),
        ] {
            let c = bytes_to_bytes(codec.clone());
            let (got, largest) = largest_allocation(|| c.decode(claim, SizeBound::Unbounded));
            assert_eq!(
                got.unwrap_err().kind,
                crate::error::ErrorKind::Corrupt,
                "{codec}"
            );
            assert!(largest < 1 << 20, "{codec}: allocated {largest} bytes");
        }
    }

    #[test]
    fn every_codec_decodes_its_own_output_within_its_bound() {
        let data: Vec<u8> = sample(1 << 16).iter().map(|b| b % 7).collect();
        for codec in [
            json!("gzip"),
            json!("zstd"),
            json!("blosc"),
            json!("crc32c"),
            json!("numcodecs.zlib"),
            json!("numcodecs.gzip"),
            json!("numcodecs.bz2"),
            json!("numcodecs.lzma"),
            json!("numcodecs.zstd"),
            json!("numcodecs.lz4"),
            json!("numcodecs.blosc"),
            json!("numcodecs.shuffle"),
            json!("numcodecs.crc32"),
            json!("numcodecs.adler32"),
            json!("numcodecs.fletcher32"),
            json!("numcodecs.jenkins_lookup3"),
        ] {
            let c = bytes_to_bytes(codec.clone());
            for input in [data.clone(), sample(5000), Vec::new()] {
                let n = input.len();
                let enc = c.encode(input.clone()).unwrap();
                let bound = c.encoded_bound(SizeBound::Exact(n));
                assert!(
                    enc.len() <= bound.limit(),
                    "{codec}: {} > {bound:?}",
                    enc.len()
                );
                for b in [
                    SizeBound::Exact(n),
                    SizeBound::AtMost(n),
                    SizeBound::Unbounded,
                ] {
                    assert_eq!(c.decode(enc.clone(), b).unwrap(), input, "{codec} {b:?}");
                }
                if n > 0 {
                    for b in [SizeBound::Exact(n - 1), SizeBound::AtMost(n - 1)] {
                        let err = c.decode(enc.clone(), b).unwrap_err();
                        assert!(
                            matches!(err.kind, crate::error::ErrorKind::Corrupt),
                            "{codec} {b:?}: {err:?}"
                        );
                    }
                }
            }
        }
    }
}
