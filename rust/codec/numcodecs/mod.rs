//! numcodecs-compatible codecs (Zarr v2 compressors and filters), named
//! `numcodecs.<id>` as zarr-python names them in v3 metadata. Each codec's
//! configuration is the numcodecs config dict without `"id"` (an `"id"` equal
//! to the codec's is tolerated). Encoded bytes match numcodecs 0.16.
//!
//! Filters (array->array) work on the flattened chunk in its element order,
//! native byte order; the `bytes` codec after them sets the stored byte order,
//! so the byte order in a filter's numcodecs dtype (`"<i4"`, `">f8"`) is
//! irrelevant here.

pub mod astype;
pub mod base64;
pub mod bitround;
pub mod blosc;
pub mod bz2;
pub mod categorize;
pub mod checksum32;
pub mod delta;
pub mod fixedscaleoffset;
pub mod fletcher32;
pub mod gzip;
pub mod jenkins;
pub mod known;
pub mod lz4;
pub mod lzma;
pub(crate) mod numeric;
pub mod packbits;
pub mod pcodec;
pub mod quantize;
pub mod shuffle;
pub mod zfpy;
pub mod zlib;
pub mod zstd;

use serde_json::{Map, Value};

use super::config::{check_members, Members};
use super::ChunkSpec;
use crate::dtype::DataType;
use crate::error::{Error, Result};
use numeric::{Num, PyScalar};

/// `check_members` for a numcodecs codec, which may also repeat its `"id"`.
pub(crate) fn check_config(id: &str, config: &Map<String, Value>, allowed: &[&str]) -> Result<()> {
    let name = format!("numcodecs.{id}");
    if let Some(v) = config.get("id") {
        if v.as_str() != Some(id) {
            return Err(Error::metadata(format!(
                "codec '{name}': 'id' must be \"{id}\" if present, got {v}"
            )));
        }
    }
    let without_id: Map<String, Value> = config
        .iter()
        .filter(|(k, _)| k.as_str() != "id")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    check_members(&name, &without_id, allowed)
}

/// Parse a numpy dtype as numcodecs writes it: a type string such as `"<f8"`,
/// `">i4"`, `"|u1"`, `"|b1"`, `"f4"`, or a name such as `"float64"`, `"bool"`.
/// The byte order is accepted and ignored (see the module documentation).
pub(crate) fn parse_dtype(s: &str) -> Result<DataType> {
    let body = s.strip_prefix(['<', '>', '|', '=']).unwrap_or(s);
    let mut chars = body.chars();
    let typestr = match (chars.next(), chars.as_str().parse::<usize>()) {
        (Some(kind @ ('b' | 'i' | 'u' | 'f' | 'c')), Ok(size)) => {
            let name = match (kind, size) {
                ('b', 1) => "bool".to_string(),
                ('i', 1 | 2 | 4 | 8) => format!("int{}", size * 8),
                ('u', 1 | 2 | 4 | 8) => format!("uint{}", size * 8),
                ('f', 2 | 4 | 8) => format!("float{}", size * 8),
                ('c', 8 | 16) => format!("complex{}", size * 8),
                _ => {
                    return Err(Error::unsupported(format!(
                        "unsupported numpy data type '{s}'"
                    )))
                }
            };
            Some(name)
        }
        _ => None,
    };
    match typestr {
        Some(name) => DataType::from_name(&name),
        None if !body.starts_with('r') => DataType::from_name(body)
            .map_err(|_| Error::unsupported(format!("unsupported numpy data type '{s}'"))),
        None => Err(Error::unsupported(format!(
            "unsupported numpy data type '{s}'"
        ))),
    }
}

/// An optional numpy dtype member of a filter's configuration, as given (a
/// type string such as `"<i4"`; resolved by [`dtype_num`] when the codec is
/// built for a chunk). Null is absent.
pub(crate) fn dtype_member(
    id: &str,
    config: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(Error::metadata(format!(
            "codec 'numcodecs.{id}': '{key}' must be a numpy dtype string, got {v}"
        ))),
    }
}

/// A member numcodecs requires (it has no default): `value`, or an error
/// naming the member.
pub(crate) fn required<T: Clone>(id: &str, key: &str, value: &Option<T>) -> Result<T> {
    value
        .clone()
        .ok_or_else(|| Error::metadata(format!("codec 'numcodecs.{id}': '{key}' is required")))
}

/// A filter's numpy dtype member (from [`dtype_member`]) as the numeric type
/// it computes in; `default` when absent.
pub(crate) fn dtype_num(
    id: &str,
    key: &str,
    dtype: Option<&str>,
    default: Option<Num>,
) -> Result<Num> {
    let name = format!("numcodecs.{id}");
    match dtype {
        None => {
            default.ok_or_else(|| Error::metadata(format!("codec '{name}': '{key}' is required")))
        }
        Some(s) => {
            let dtype = parse_dtype(s).map_err(|e| e.context(format!("codec '{name}'")))?;
            Num::from_dtype(dtype).ok_or_else(|| {
                Error::unsupported(format!("codec '{name}': unsupported data type '{s}'"))
            })
        }
    }
}

/// The `dtype` and `astype` members of numcodecs' value filters (`Delta`,
/// `FixedScaleOffset`, `Quantize`): the type the filter views its input as
/// and the type it writes, which defaults to `dtype`.
pub(crate) struct TypePair {
    pub dtype: Option<String>,
    pub astype: Option<String>,
}

impl TypePair {
    pub fn parse(id: &str, config: &Map<String, Value>) -> Result<Self> {
        Ok(TypePair {
            dtype: dtype_member(id, config, "dtype")?,
            astype: dtype_member(id, config, "astype")?,
        })
    }

    /// As numcodecs' `get_config()` gives them: `dtype` is required there.
    pub fn members(&self, id: &str) -> Result<Members> {
        let dtype = required(id, "dtype", &self.dtype)?;
        let astype = self.astype.clone().unwrap_or_else(|| dtype.clone());
        Ok(vec![("dtype", dtype.into()), ("astype", astype.into())])
    }

    /// The numeric types for a chunk: `dtype` defaults to the chunk's (as
    /// zarr-python's `numcodecs.zarr3` fills it in) and must have its size.
    pub fn nums(&self, id: &str, spec: &ChunkSpec) -> Result<(Num, Num)> {
        let dtype = dtype_num(id, "dtype", self.dtype.as_deref(), spec_num(spec))?;
        check_decoded_size(id, "dtype", dtype, spec)?;
        let astype = dtype_num(id, "astype", self.astype.as_deref(), Some(dtype))?;
        Ok((dtype, astype))
    }
}

/// The numeric type of the chunk a filter receives, if it has one.
pub(crate) fn spec_num(spec: &ChunkSpec) -> Option<Num> {
    Num::from_dtype(spec.dtype)
}

/// Error unless a filter's decoded dtype has the chunk's element size (the
/// filter reads the chunk's elements as that dtype, as numcodecs views them).
pub(crate) fn check_decoded_size(id: &str, key: &str, num: Num, spec: &ChunkSpec) -> Result<()> {
    if num.size() != spec.dtype.size {
        return Err(Error::metadata(format!(
            "codec 'numcodecs.{id}': '{key}' has {} bytes per element but the chunk's data \
             type has {}",
            num.size(),
            spec.dtype.size
        )));
    }
    Ok(())
}

/// A required number member, keeping Python's int/float distinction (which
/// decides numpy's result type).
pub(crate) fn py_scalar_member(
    id: &str,
    config: &Map<String, Value>,
    key: &str,
) -> Result<PyScalar> {
    let name = format!("numcodecs.{id}");
    match config.get(key) {
        Some(Value::Number(n)) => Ok(if let Some(i) = n.as_i64() {
            PyScalar::Int(i128::from(i))
        } else if let Some(u) = n.as_u64() {
            PyScalar::Int(i128::from(u))
        } else {
            PyScalar::Float(n.as_f64().unwrap_or(f64::NAN))
        }),
        None | Some(Value::Null) => Err(Error::metadata(format!(
            "codec '{name}': '{key}' is required"
        ))),
        Some(v) => Err(Error::metadata(format!(
            "codec '{name}': '{key}' must be a number, got {v}"
        ))),
    }
}

/// The chunk spec after a filter from the chunk's elements to `to` elements:
/// same shape, the fill value encoded by `encode_fill` (one element in, one
/// out).
pub(crate) fn retyped_spec(
    spec: &ChunkSpec,
    to: Num,
    encode_fill: impl FnOnce(&[u8]) -> Vec<u8>,
) -> ChunkSpec {
    let mut fill = if spec.fill.len() == spec.dtype.size {
        encode_fill(&spec.fill)
    } else {
        Vec::new()
    };
    fill.resize(to.size(), 0);
    ChunkSpec {
        shape: spec.shape.clone(),
        dtype: to.dtype(),
        fill,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::codec::SizeBound::Unbounded;
    use crate::codec::{tests::spec, AnyCodec, ArrayToArrayCodec, BytesToBytesCodec, CodecChain};
    use crate::error::ErrorKind;
    use serde_json::json;

    /// Bytes from a hex string (reference vectors produced by numcodecs).
    pub fn hex(s: &str) -> Vec<u8> {
        let s: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        s.chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
            .collect()
    }

    /// The input of every compressor's reference vectors: numcodecs encoded
    /// `bytes((i * 7 % 251) for i in range(300)) + bytes(200)`.
    pub fn compressor_input() -> Vec<u8> {
        let mut d = crate::codec::tests::sample(300);
        d.extend_from_slice(&[0; 200]);
        d
    }

    /// Build a numcodecs codec through the factory.
    pub fn build_any(id: &str, config: Value, spec: &ChunkSpec) -> Result<AnyCodec> {
        crate::codec::registry::lookup(&format!("numcodecs.{id}"))
            .and_then(|c| c.build(config.as_object().expect("config object"), spec))
            .expect("a numcodecs codec")
    }

    /// Build an array->array numcodecs codec for 1-d chunks of `n` `dtype` elements.
    pub fn array_codec(
        id: &str,
        config: Value,
        dtype: &str,
        n: usize,
    ) -> Result<Box<dyn ArrayToArrayCodec>> {
        match build_any(id, config, &spec(&[n], dtype))? {
            AnyCodec::ArrayToArray(c) => Ok(c),
            _ => panic!("{id} is not an array->array codec"),
        }
    }

    /// Build a bytes->bytes numcodecs codec (chunk spec: 1000 bytes).
    pub fn bytes_codec(id: &str, config: Value) -> Result<Box<dyn BytesToBytesCodec>> {
        match build_any(id, config, &spec(&[1000], "uint8"))? {
            AnyCodec::BytesToBytes(c) => Ok(c),
            _ => panic!("{id} is not a bytes->bytes codec"),
        }
    }

    /// Truncations and bit flips of `enc` decode to an error or (for formats
    /// without integrity checks) to something, but never panic; truncations of
    /// compressed streams must be errors.
    pub fn assert_robust(c: &dyn BytesToBytesCodec, enc: &[u8], truncation_errs: bool) {
        for cut in [0, 1, 4, enc.len() / 2, enc.len().saturating_sub(1)] {
            if cut < enc.len() {
                let r = c.decode(enc[..cut].to_vec(), Unbounded);
                if truncation_errs {
                    assert!(r.is_err(), "cut {cut} of {}", enc.len());
                }
            }
        }
        for i in 0..enc.len().min(64) {
            let mut g = enc.to_vec();
            g[i] ^= 0xa5;
            let _ = c.decode(g, Unbounded);
        }
        let garbage: Vec<u8> = (0..300u32).map(|i| (i * 151 % 256) as u8).collect();
        let _ = c.decode(garbage, Unbounded);
    }

    #[test]
    fn dtype_strings() {
        let dt = |s: &str| parse_dtype(s).unwrap();
        assert_eq!(dt("<f8"), DataType::from_name("float64").unwrap());
        assert_eq!(dt(">i4"), DataType::from_name("int32").unwrap());
        assert_eq!(dt("|u1"), DataType::from_name("uint8").unwrap());
        assert_eq!(dt("|b1"), DataType::from_name("bool").unwrap());
        assert_eq!(dt("f2"), DataType::from_name("float16").unwrap());
        assert_eq!(dt("<c16"), DataType::from_name("complex128").unwrap());
        assert_eq!(dt("=u8"), DataType::from_name("uint64").unwrap());
        assert_eq!(dt("float32"), DataType::from_name("float32").unwrap());
        assert_eq!(dt("bool"), DataType::from_name("bool").unwrap());
        for bad in [
            "<f3", "<U4", "|S8", "<M8[ns]", "r16", "", "<", "x", "i", "<i16",
        ] {
            assert_eq!(
                parse_dtype(bad).unwrap_err().kind,
                ErrorKind::Unsupported,
                "{bad}"
            );
        }
    }

    #[test]
    fn unknown_ids_are_not_numcodecs() {
        let s = spec(&[4], "uint8");
        use crate::codec::registry::lookup;
        assert!(lookup("numcodecs.nope").is_none());
        assert!(lookup("zlib").is_none());
        assert!(lookup("numcodecs.pickle")
            .unwrap()
            .build(&Map::new(), &s)
            .is_none());
        let err =
            CodecChain::from_json(&json!(["bytes", {"name": "numcodecs.nope"}]), s).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unsupported);
        assert!(err.message.contains("unknown codec"));
    }

    #[test]
    fn id_member_is_tolerated_when_it_matches() {
        assert!(bytes_codec("zlib", json!({"id": "zlib", "level": 1})).is_ok());
        assert!(bytes_codec("zlib", json!({"id": "gzip", "level": 1})).is_err());
        assert!(bytes_codec("zlib", json!({"levle": 1})).is_err());
    }

    /// A v2-style pipeline written by numcodecs: filters [Delta('>i4')],
    /// compressor Zlib(1), dtype '>i4' is, in v3 terms, the chain
    /// [numcodecs.delta, bytes(big), numcodecs.zlib].
    #[test]
    fn chain_delta_bytes_big_zlib_matches_numcodecs() {
        // x = (np.arange(64) * 3 - 50).astype('>i4'); x[10] = 1000
        // Zlib(1).encode(Delta('>i4').encode(x)).hex()
        const ENC: &str = "7801fbffffff3906060666c298f9ffffff7fd809ab23c6acc1a306006ece\
                           0886";
        let mut x: Vec<i32> = (0..64).map(|i| i * 3 - 50).collect();
        x[10] = 1000;
        let data: Vec<u8> = x.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let s = spec(&[8, 8], "int32");
        let chain = CodecChain::from_json(
            &json!([
                {"name": "numcodecs.delta", "configuration": {"dtype": ">i4"}},
                {"name": "bytes", "configuration": {"endian": "big"}},
                {"name": "numcodecs.zlib", "configuration": {"level": 1}}
            ]),
            s,
        )
        .unwrap();
        assert_eq!(chain.decode(hex(ENC)).unwrap(), data);
        assert_eq!(chain.encode(data).unwrap(), hex(ENC));
    }

    /// A filter that changes the data type: blosc after it sees 1-byte
    /// elements (typesize 1, so shuffle -1 picks bit shuffle), as in numcodecs.
    #[test]
    fn chain_fixedscaleoffset_blosc_matches_numcodecs() {
        // x = np.linspace(1000, 1001, 24); f = FixedScaleOffset(offset=1000,
        // scale=100, dtype='<f8', astype='|u1')
        // Blosc('zstd', 5, shuffle=-1).encode(f.encode(x)).hex(), f.decode(f.encode(x))
        const ENC: &str = "020196011800000018000000280000000004090d11161a1e23272b303439\
                           3d41464a4e53575b6064";
        const DEC: &str = "0000000000408f40b81e85eb51408f401f85eb51b8408f40d7a3703d0a418f40\
                           8fc2f5285c418f40f6285c8fc2418f40ae47e17a14428f406666666666428f40\
                           cdcccccccc428f4085eb51b81e438f403d0ad7a370438f40a4703d0ad7438f40\
                           5c8fc2f528448f40c3f5285c8f448f407b14ae47e1448f403333333333458f40\
                           9a99999999458f4052b81e85eb458f400ad7a3703d468f40713d0ad7a3468f40\
                           295c8fc2f5468f40e17a14ae47478f4048e17a14ae478f400000000000488f40";
        let x: Vec<u8> = (0..24)
            .flat_map(|i| (1000.0 + f64::from(i) / 23.0).to_le_bytes())
            .collect();
        let chain = CodecChain::from_json(
            &json!([
                {"name": "numcodecs.fixedscaleoffset",
                 "configuration": {"offset": 1000, "scale": 100, "dtype": "<f8", "astype": "|u1"}},
                {"name": "bytes"},
                {"name": "numcodecs.blosc",
                 "configuration": {"cname": "zstd", "clevel": 5, "shuffle": -1, "blocksize": 0}}
            ]),
            spec(&[4, 6], "float64"),
        )
        .unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(chain.encode(x).unwrap(), hex(ENC));
            assert_eq!(chain.decode(hex(ENC)).unwrap(), hex(DEC));
        }
        let mut out = vec![0u8; 24 * 8];
        chain.decode_into(hex(ENC), &mut out).unwrap();
        assert!(chain.decode(hex(ENC)[..20].to_vec()).is_err());
    }
}
