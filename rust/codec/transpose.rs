//! The `transpose` codec: permutes the dimensions of a chunk.

use serde_json::{Map, Value};

use super::config::check_members;
use super::{check_len, ArrayToArrayCodec, ChunkSpec};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct TransposeCodec {
    /// `order[i]` is the decoded dimension that becomes encoded dimension `i`.
    order: Vec<usize>,
    decoded: ChunkSpec,
    encoded: ChunkSpec,
}

impl TransposeCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_members("transpose", config, &["order"])?;
        if spec.dtype.is_var_len() {
            return Err(Error::unsupported(
                "codec 'transpose' on a variable-length data type is not supported",
            ));
        }
        let ndim = spec.shape.len();
        let order: Vec<usize> = match config.get("order") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_u64().map(|n| n as usize).ok_or_else(|| {
                        Error::metadata(format!(
                            "codec 'transpose': order must hold integers, got {v}"
                        ))
                    })
                })
                .collect::<Result<_>>()?,
            // Early drafts and zarr-python 2 wrote "C" / "F".
            Some(Value::String(s)) if s == "C" => (0..ndim).collect(),
            Some(Value::String(s)) if s == "F" => (0..ndim).rev().collect(),
            Some(v) => {
                return Err(Error::metadata(format!(
                    "codec 'transpose': order must be a list, got {v}"
                )))
            }
            None => return Err(Error::metadata("codec 'transpose': 'order' is required")),
        };
        let mut seen = vec![false; ndim];
        if order.len() != ndim
            || !order
                .iter()
                .all(|&d| d < ndim && !std::mem::replace(&mut seen[d], true))
        {
            return Err(Error::metadata(format!(
                "codec 'transpose': order {order:?} is not a permutation of 0..{ndim}"
            )));
        }
        let encoded = ChunkSpec {
            shape: order.iter().map(|&d| spec.shape[d]).collect(),
            ..spec.clone()
        };
        Ok(TransposeCodec {
            order,
            decoded: spec.clone(),
            encoded,
        })
    }
}

/// C-order strides in elements.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Write `dst` (shape `dst_shape`, C order) where `dst[i_0..i_n] = src[j]` with
/// `j[perm[k]] = i_k`, i.e. dimension `k` of `dst` walks dimension `perm[k]` of `src`.
fn permute(src: &[u8], src_shape: &[usize], perm: &[usize], elem: usize) -> Vec<u8> {
    let n = src_shape.len();
    let src_strides = strides(src_shape);
    let dst_shape: Vec<usize> = perm.iter().map(|&d| src_shape[d]).collect();
    // Stride in src (elements) of each dst dimension.
    let walk: Vec<usize> = perm.iter().map(|&d| src_strides[d]).collect();
    let total: usize = dst_shape.iter().product();
    let mut dst = vec![0u8; total * elem];
    if total == 0 {
        return dst;
    }
    if n == 0 {
        dst.copy_from_slice(&src[..elem]);
        return dst;
    }
    let inner = dst_shape[n - 1];
    let inner_walk = walk[n - 1];
    let mut idx = vec![0usize; n - 1];
    let mut out = 0usize;
    loop {
        let base: usize = idx.iter().zip(&walk).map(|(i, w)| i * w).sum();
        for k in 0..inner {
            let s = (base + k * inner_walk) * elem;
            dst[out..out + elem].copy_from_slice(&src[s..s + elem]);
            out += elem;
        }
        // Advance the odometer over the outer dimensions.
        let mut d = n - 1;
        loop {
            if d == 0 {
                return dst;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < dst_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl ArrayToArrayCodec for TransposeCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.decoded.nbytes())?;
        Ok(permute(
            &decoded,
            &self.decoded.shape,
            &self.order,
            self.decoded.dtype.size,
        ))
    }
    fn decode(&self, encoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.encoded.nbytes())?;
        let mut inverse = vec![0; self.order.len()];
        for (i, &d) in self.order.iter().enumerate() {
            inverse[d] = i;
        }
        Ok(permute(
            &encoded,
            &self.encoded.shape,
            &inverse,
            self.decoded.dtype.size,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::*;
    use serde_json::json;

    fn codec(order: Value, shape: &[usize]) -> Result<TransposeCodec> {
        TransposeCodec::from_config(
            json!({ "order": order }).as_object().unwrap(),
            &spec(shape, "uint8"),
        )
    }

    #[test]
    fn transpose_2d() {
        let c = codec(json!([1, 0]), &[2, 3]).unwrap();
        // [[0,1,2],[3,4,5]] -> [[0,3],[1,4],[2,5]]
        let enc = c.encode(vec![0, 1, 2, 3, 4, 5]).unwrap();
        assert_eq!(enc, vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(c.encoded_spec().shape, vec![3, 2]);
        assert_eq!(c.decode(enc).unwrap(), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn transpose_3d_matches_definition() {
        let shape = [2, 3, 4];
        let c = codec(json!([2, 0, 1]), &shape).unwrap();
        let data: Vec<u8> = (0..24).collect();
        let enc = c.encode(data.clone()).unwrap();
        // encoded[k, i, j] == decoded[i, j, k]
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    assert_eq!(enc[k * 6 + i * 3 + j], data[i * 12 + j * 4 + k]);
                }
            }
        }
        assert_eq!(c.decode(enc).unwrap(), data);
    }

    #[test]
    fn bad_orders() {
        assert!(codec(json!([0, 0]), &[2, 2]).is_err());
        assert!(codec(json!([0]), &[2, 2]).is_err());
        assert!(codec(json!([0, 2]), &[2, 2]).is_err());
        assert!(codec(json!("X"), &[2, 2]).is_err());
        assert_eq!(codec(json!("F"), &[2, 3]).unwrap().order, vec![1, 0]);
    }
}
