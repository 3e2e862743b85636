//! The `reshape` codec of the zarr-extensions registry: gives the chunk a new
//! shape with the same elements in the same (C) order, so the bytes do not
//! change; only the codecs after it see another shape.
//!
//! `shape` lists the output dimensions, each a positive size, `-1` (at most
//! once: whatever makes the element counts agree) or a list of input
//! dimensions whose sizes multiply to it. Input dimensions listed must
//! increase strictly over the whole list and line up with the output: the
//! output dimensions before one must hold exactly the input dimensions before
//! its first, and those after it the input dimensions after its last.

use serde_json::{Map, Value};

use crate::codec::config::{check_members, Members};
use crate::codec::{ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

const NAME: &str = "reshape";

/// The stored configuration: `shape`, required, as given (the metadata layer
/// checks it against the chunks, as the codec does when it is built).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    check_members(NAME, config, &["shape"])?;
    let shape = config
        .get("shape")
        .ok_or_else(|| err("'shape' is required"))?;
    Ok(vec![("shape", shape.clone())])
}

#[derive(Debug)]
pub struct ReshapeCodec {
    decoded: ChunkSpec,
    encoded: ChunkSpec,
}

/// One entry of `shape`.
enum Dim {
    Size(usize),
    Auto,
    Inputs(Vec<usize>),
}

fn err(msg: impl std::fmt::Display) -> Error {
    Error::metadata(format!("codec '{NAME}': {msg}"))
}

fn product(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |p, &d| p.checked_mul(d))
}

/// The chunk shape `reshape` with the configuration member `shape` encodes
/// chunks of `input` to: the codec's rule, which the metadata layer asks too
/// (`_core.reshape_output_shape`). With `input` unknown (`None`), the entries
/// are checked alone (against `ndim` input dimensions when known) and `None`
/// comes back. Messages name no codec: callers say where the shape is.
pub fn output_shape(
    shape: Option<&Value>,
    input: Option<&[usize]>,
    ndim: Option<usize>,
) -> Result<Option<Vec<usize>>> {
    let ndim = input.map(<[usize]>::len).or(ndim);
    let items = match shape {
        Some(Value::Array(items)) => items,
        Some(v) => return Err(Error::metadata(format!("shape must be a list, got {v}"))),
        None => return Err(Error::metadata("'shape' is required")),
    };
    let dims: Vec<Dim> = items
        .iter()
        .map(|item| match item {
            Value::Number(n) if n.as_i64() == Some(-1) => Ok(Dim::Auto),
            Value::Number(n) => n
                .as_u64()
                .filter(|&s| s > 0)
                .and_then(|s| usize::try_from(s).ok())
                .map(Dim::Size)
                .ok_or_else(|| Error::metadata(format!("sizes must be positive or -1, got {n}"))),
            Value::Array(list) => list
                .iter()
                .map(|d| {
                    d.as_u64()
                        .and_then(|d| usize::try_from(d).ok())
                        .filter(|&d| ndim.is_none_or(|n| d < n))
                        .ok_or_else(|| {
                            Error::metadata(match ndim {
                                Some(n) => {
                                    format!(
                                        "{d} is not an input dimension of a {n}-dimensional chunk"
                                    )
                                }
                                None => format!("{d} is not an input dimension"),
                            })
                        })
                })
                .collect::<Result<Vec<_>>>()
                .map(Dim::Inputs),
            other => Err(Error::metadata(format!(
                "each shape entry must be an integer or a list of input dimensions, got {other}"
            ))),
        })
        .collect::<Result<_>>()?;
    let listed: Vec<usize> = dims
        .iter()
        .filter_map(|d| match d {
            Dim::Inputs(list) => Some(list.iter().copied()),
            _ => None,
        })
        .flatten()
        .collect();
    if listed.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::metadata(format!(
            "the input dimensions listed must increase strictly, got {listed:?}"
        )));
    }
    if dims.iter().filter(|d| matches!(d, Dim::Auto)).count() > 1 {
        return Err(Error::metadata("-1 may appear at most once"));
    }
    let Some(input) = input else {
        return Ok(None);
    };
    let total = product(input).ok_or_else(|| Error::metadata("the chunk is too large"))?;
    let mut shape: Vec<Option<usize>> = dims
        .iter()
        .map(|d| match d {
            Dim::Size(s) => Some(*s),
            Dim::Auto => None,
            Dim::Inputs(list) => list
                .iter()
                .try_fold(1usize, |p, &i| p.checked_mul(input[i])),
        })
        .collect();
    let known = shape
        .iter()
        .flatten()
        .try_fold(1usize, |p, &s| p.checked_mul(s));
    if let Some(auto) = shape.iter_mut().find(|s| s.is_none()) {
        *auto = known
            .filter(|&k| k > 0 && total % k == 0)
            .map(|k| total / k);
    }
    let shape: Vec<usize> = shape
        .into_iter()
        .collect::<Option<_>>()
        .filter(|s: &Vec<usize>| product(s) == Some(total))
        .ok_or_else(|| {
            Error::metadata(format!(
                "shape {} does not hold the {total} elements of a {input:?} chunk",
                Value::Array(items.clone())
            ))
        })?;
    for (i, d) in dims.iter().enumerate() {
        let Dim::Inputs(list) = d else { continue };
        let (Some(&first), Some(&last)) = (list.first(), list.last()) else {
            continue;
        };
        if product(&shape[..i]) != product(&input[..first])
            || product(&shape[i + 1..]) != product(&input[last + 1..])
        {
            return Err(Error::metadata(format!(
                "output dimension {i} (input dimensions {list:?}) does not line up with \
                 the input shape {input:?}: the output shape would be {shape:?}"
            )));
        }
    }
    Ok(Some(shape))
}

impl ReshapeCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_members(NAME, config, &["shape"])?;
        let shape = output_shape(config.get("shape"), Some(&spec.shape), None)
            .map_err(|e| e.context(format!("codec '{NAME}'")))?
            .ok_or_else(|| err("no output shape"))?;
        Ok(ReshapeCodec {
            decoded: spec.clone(),
            encoded: ChunkSpec {
                shape,
                ..spec.clone()
            },
        })
    }
}

impl ArrayToArrayCodec for ReshapeCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        Ok(decoded)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        // The same bytes in another shape (a vlen frame for variable-length elements).
        if !self.decoded.dtype.is_var_len() {
            crate::codec::check_len(encoded.len(), self.decoded.nbytes())?;
        }
        bound.check(NAME, encoded.len())?;
        Ok(encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::tests::{sample, spec};
    use crate::codec::CodecChain;
    use serde_json::json;

    fn shape_of(input: &[usize], shape: Value) -> Result<Vec<usize>> {
        let cfg = json!({ "shape": shape });
        ReshapeCodec::from_config(cfg.as_object().unwrap(), &spec(input, "uint8"))
            .map(|c| c.encoded_spec().shape.clone())
    }

    #[test]
    fn output_shapes() {
        let input = [100, 50, 64, 3];
        assert_eq!(
            shape_of(&input, json!([[0, 1], [2], 3])).unwrap(),
            vec![5000, 64, 3]
        );
        assert_eq!(shape_of(&input, json!([-1])).unwrap(), vec![960_000]);
        assert_eq!(
            shape_of(&input, json!([[0, 1], 10, [3]])).unwrap_err().kind,
            crate::error::ErrorKind::Metadata
        );
        assert_eq!(
            shape_of(&input, json!([[0, 1], -1, [3]])).unwrap(),
            vec![5000, 64, 3]
        );
        assert_eq!(
            shape_of(&input, json!([100, -1, 3])).unwrap(),
            vec![100, 3200, 3]
        );
        assert_eq!(shape_of(&input, json!([[], -1])).unwrap(), vec![1, 960_000]);
    }

    #[test]
    fn invalid_shapes_are_errors() {
        let input = [100, 50, 64, 3];
        for bad in [
            json!([[1], [0]]),
            json!([[1, 0], 10, [3, 4]]),
            json!([[0, 1], 10, [3, 4]]),
            json!([-1, -1]),
            json!([7, -1]),
            json!([0, -1]),
            json!([-2]),
            json!([1000]),
            json!(["a"]),
            json!({"a": 1}),
            json!([[0], [2], [3]]),
        ] {
            assert!(shape_of(&input, bad.clone()).is_err(), "{bad}");
        }
        let cfg = json!({"shape": [-1], "order": 1});
        assert!(ReshapeCodec::from_config(cfg.as_object().unwrap(), &spec(&[4], "uint8")).is_err());
    }

    #[test]
    fn later_codecs_see_the_new_shape() {
        let chain = CodecChain::from_json(
            &json!([
                {"name": "reshape", "configuration": {"shape": [[0, 1], 3]}},
                {"name": "transpose", "configuration": {"order": [1, 0]}},
                {"name": "bytes", "configuration": {"endian": "little"}}
            ]),
            spec(&[2, 2, 3], "uint8"),
        )
        .unwrap();
        let data = sample(12);
        let enc = chain.encode(data.clone()).unwrap();
        // A 4x3 matrix transposed.
        let want: Vec<u8> = (0..3)
            .flat_map(|c| (0..4).map(move |r| (r, c)))
            .map(|(r, c)| data[r * 3 + c])
            .collect();
        assert_eq!(enc, want);
        assert_eq!(chain.decode(enc.clone()).unwrap(), data);
        assert!(
            chain.decode(enc[..11].to_vec()).is_err(),
            "a short chunk is an error"
        );
        // A transpose with the chunk's own dimensionality no longer fits.
        assert!(CodecChain::from_json(
            &json!([{"name": "reshape", "configuration": {"shape": [-1]}},
                    {"name": "transpose", "configuration": {"order": [1, 0]}},
                    {"name": "bytes"}]),
            spec(&[2, 2], "uint8"),
        )
        .is_err());
    }
}
