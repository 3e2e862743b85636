//! The `transpose` codec: permutes the dimensions of a chunk.
//!
//! Variable-length elements (strings, bytes) travel through the chain as a
//! vlen frame (see [`crate::codec::array_to_bytes::vlen`]) of the elements in C order; the codec
//! reorders the frame's elements the same way it reorders fixed-size ones, so
//! the vlen codec after it stores them in the transposed order. This is what
//! Zarr v2 F-order object arrays are (zarr-python 2.18 and 3.1 store their
//! elements in Fortran order) and what the v3 spec asks of `transpose` before
//! `vlen-utf8` / `vlen-bytes`.

use serde_json::{Map, Value};

use crate::codec::array_to_bytes::vlen::{build_frame, split_frame};
use crate::codec::config::{check_members, keys, Member, MemberType, Members};
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};
use crate::region::ChunkRegion;

#[derive(Debug)]
pub struct TransposeCodec {
    /// `order[i]` is the decoded dimension that becomes encoded dimension `i`.
    order: Vec<usize>,
    decoded: ChunkSpec,
    encoded: ChunkSpec,
}

/// The configuration's members: `order`, a permutation of the dimensions.
pub const MEMBERS: &[Member] = &[Member::of("order", MemberType::Order).required()];

/// The complete configuration: `order` (required), as given (it is checked
/// against the chunks when the codec is built).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    check_members("transpose", config, &keys(MEMBERS))?;
    let order = config
        .get("order")
        .ok_or_else(|| Error::metadata("codec 'transpose': 'order' is required"))?;
    Ok(vec![("order", order.clone())])
}

/// Whether `order` is a permutation of `0..ndim` (the rule of `order`
/// against the chunks; the Python layer asks it too).
pub fn is_permutation(order: &[usize], ndim: usize) -> bool {
    if order.len() != ndim {
        return false;
    }
    let mut seen = vec![false; ndim];
    order
        .iter()
        .all(|&d| d < ndim && !std::mem::replace(&mut seen[d], true))
}

impl TransposeCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        let given = complete_config(config)?;
        let ndim = spec.shape.len();
        let order: Vec<usize> = match given.first().map_or(&Value::Null, |(_, v)| v) {
            Value::Array(items) => items
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
            Value::String(s) if s == "C" => (0..ndim).collect(),
            Value::String(s) if s == "F" => (0..ndim).rev().collect(),
            v => {
                return Err(Error::metadata(format!(
                    "codec 'transpose': order must be a list, got {v}"
                )))
            }
        };
        if !is_permutation(&order, ndim) {
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

/// Whether the codec JSON `codec` is a `transpose` that reverses every axis
/// of a chunk of `spec` (a Zarr v2 `order: "F"` chunk; `order: [n-1, ..., 0]`
/// in v3): a chunk whose bytes are in Fortran order.
pub fn reverses_axes(codec: &Value, spec: &ChunkSpec) -> bool {
    let n = spec.shape.len();
    codec.get("name").and_then(Value::as_str) == Some("transpose")
        && codec
            .get("configuration")
            .and_then(Value::as_object)
            .and_then(|config| TransposeCodec::from_config(config, spec).ok())
            .is_some_and(|t| t.order.iter().copied().eq((0..n).rev()))
}

/// Chunks of `spec` whose `codecs` begin by reversing every axis (see
/// [`reverses_axes`]) seen with their axes reversed: the rest of the chain and
/// the reversed chunk spec. Such a chunk's decoded bytes, read before that
/// transpose, are the Fortran-ordered chunk, so a Fortran-ordered buffer takes
/// them with no transposing. `None` for other chains, chunks of fewer than two
/// dimensions, and variable-length elements.
pub fn fortran_form(codecs: &Value, spec: &ChunkSpec) -> Option<(Value, ChunkSpec)> {
    let (first, rest) = codecs.as_array()?.split_first()?;
    if spec.shape.len() < 2 || spec.dtype.is_var_len() || !reverses_axes(first, spec) {
        return None;
    }
    let reversed = ChunkSpec {
        shape: spec.shape.iter().rev().copied().collect(),
        ..spec.clone()
    };
    Some((Value::Array(rest.to_vec()), reversed))
}

/// C-order strides in elements.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Calls `visit` with, for each element of the permuted array (see [`permute`]) in
/// C order, the index of the element of `src` it comes from.
fn walk_permuted(src_shape: &[usize], perm: &[usize], mut visit: impl FnMut(usize)) {
    let n = src_shape.len();
    let src_strides = strides(src_shape);
    let dst_shape: Vec<usize> = perm.iter().map(|&d| src_shape[d]).collect();
    // Stride in src (elements) of each dst dimension.
    let walk: Vec<usize> = perm.iter().map(|&d| src_strides[d]).collect();
    if dst_shape.contains(&0) {
        return;
    }
    if n == 0 {
        visit(0);
        return;
    }
    let inner = dst_shape[n - 1];
    let inner_walk = walk[n - 1];
    let mut idx = vec![0usize; n - 1];
    loop {
        // Offsets into `src` are below its element count, which a buffer holds:
        // they cannot overflow, and this hot loop does without overflow checks.
        let mut at = idx
            .iter()
            .zip(&walk)
            .fold(0usize, |acc, (&i, &w)| acc.wrapping_add(i.wrapping_mul(w)));
        for _ in 0..inner {
            visit(at);
            at = at.wrapping_add(inner_walk);
        }
        // Advance the odometer over the outer dimensions.
        let mut d = n - 1;
        loop {
            if d == 0 {
                return;
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

/// [`permute`] for a vlen frame of the elements of `src_shape` (C order).
fn permute_frame(frame: &[u8], src_shape: &[usize], perm: &[usize]) -> Result<Vec<u8>> {
    let n: usize = src_shape.iter().product();
    let ranges = split_frame(frame, n, false).map_err(|e| e.context("transpose"))?;
    let mut order = crate::alloc::with_capacity(n)?;
    walk_permuted(src_shape, perm, |i| order.push(i));
    build_frame(order.iter().map(|&i| &frame[ranges[i].clone()]))
}

/// Write `dst` (shape `dst_shape`, C order) where `dst[i_0..i_n] = src[j]` with
/// `j[perm[k]] = i_k`, i.e. dimension `k` of `dst` walks dimension `perm[k]` of `src`.
fn permute(src: &[u8], src_shape: &[usize], perm: &[usize], elem: usize) -> Result<Vec<u8>> {
    let total: usize = src_shape.iter().product();
    let mut dst = crate::alloc::zeroed(total * elem)?;
    if elem == 0 {
        return Ok(dst);
    }
    let mut slots = dst.chunks_exact_mut(elem);
    walk_permuted(src_shape, perm, |i| {
        if let Some(slot) = slots.next() {
            // `i` is an element of `src`: `i * elem` is below its length.
            slot.copy_from_slice(&src[i.wrapping_mul(elem)..][..elem]);
        }
    });
    Ok(dst)
}

impl ArrayToArrayCodec for TransposeCodec {
    fn maps_regions(&self) -> bool {
        true
    }
    fn encoded_region(&self, region: &ChunkRegion) -> Option<ChunkRegion> {
        Some(region.transposed(&self.order, &self.decoded.shape))
    }
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        if self.decoded.dtype.is_var_len() {
            return permute_frame(&decoded, &self.decoded.shape, &self.order);
        }
        check_len(decoded.len(), self.decoded.nbytes())?;
        permute(
            &decoded,
            &self.decoded.shape,
            &self.order,
            self.decoded.dtype.size,
        )
    }
    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        // A permutation keeps the size: the output is the input's.
        bound.check("transpose", encoded.len())?;
        let mut inverse = vec![0; self.order.len()];
        for (i, &d) in self.order.iter().enumerate() {
            inverse[d] = i;
        }
        if self.decoded.dtype.is_var_len() {
            return permute_frame(&encoded, &self.encoded.shape, &inverse);
        }
        check_len(encoded.len(), self.encoded.nbytes())?;
        permute(
            &encoded,
            &self.encoded.shape,
            &inverse,
            self.decoded.dtype.size,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::tests::spec;
    use crate::codec::SizeBound::Unbounded;
    use serde_json::json;

    #[test]
    fn permutations() {
        assert!(is_permutation(&[2, 0, 1], 3));
        assert!(is_permutation(&[], 0));
        assert!(!is_permutation(&[0, 0], 2));
        assert!(!is_permutation(&[0, 1], 3));
        assert!(!is_permutation(&[0, 3, 1], 3));
        // the length first: a huge dimension count allocates nothing
        assert!(!is_permutation(&[0], usize::MAX));
        assert_eq!(
            complete_config(&Map::new()).unwrap_err().message,
            "codec 'transpose': 'order' is required"
        );
    }

    fn codec(order: Value, shape: &[usize]) -> Result<TransposeCodec> {
        TransposeCodec::from_config(
            json!({ "order": order }).as_object().unwrap(),
            &spec(shape, "uint8"),
        )
    }

    #[test]
    fn only_a_transpose_reversing_every_axis_reverses_axes() {
        let t = |order: Value| json!({"name": "transpose", "configuration": {"order": order}});
        let s3 = spec(&[2, 3, 4], "uint8");
        assert!(reverses_axes(&t(json!([2, 1, 0])), &s3));
        assert!(reverses_axes(&t(json!("F")), &s3));
        assert!(!reverses_axes(&t(json!([0, 1, 2])), &s3));
        assert!(!reverses_axes(&t(json!([2, 0, 1])), &s3));
        assert!(!reverses_axes(&t(json!("C")), &s3));
        // malformed or other codecs: not a reversal (the chain reports the error)
        assert!(!reverses_axes(&t(json!([1, 0])), &s3));
        assert!(!reverses_axes(&t(json!([2, 2, 0])), &s3));
        assert!(!reverses_axes(&json!({"name": "transpose"}), &s3));
        assert!(!reverses_axes(
            &json!({"name": "bytes", "configuration": {"order": [2, 1, 0]}}),
            &s3
        ));
        assert!(reverses_axes(&t(json!([1, 0])), &spec(&[5, 6], "uint8")));
    }

    #[test]
    fn transpose_2d() {
        let c = codec(json!([1, 0]), &[2, 3]).unwrap();
        // [[0,1,2],[3,4,5]] -> [[0,3],[1,4],[2,5]]
        let enc = c.encode(vec![0, 1, 2, 3, 4, 5]).unwrap();
        assert_eq!(enc, vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(c.encoded_spec().shape, vec![3, 2]);
        assert_eq!(c.decode(enc, Unbounded).unwrap(), vec![0, 1, 2, 3, 4, 5]);
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
        assert_eq!(c.decode(enc, Unbounded).unwrap(), data);
    }

    fn frame_items(frame: &[u8], n: usize) -> Vec<String> {
        split_frame(frame, n, true)
            .unwrap()
            .into_iter()
            .map(|r| String::from_utf8(frame[r].to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn variable_length_elements_are_reordered_in_their_frame() {
        // Zarr v2 F order of a (2, 3) chunk of strings: zarr-python 2.18 and 3.1
        // store [["a","bb","ccc"],["dddd","e","ff"]] as a, dddd, bb, e, ccc, ff.
        let c = TransposeCodec::from_config(
            json!({ "order": [1, 0] }).as_object().unwrap(),
            &spec(&[2, 3], "string"),
        )
        .unwrap();
        let items = ["a", "bb", "ccc", "dddd", "e", "ff"];
        let frame = build_frame(items.iter().map(|s| s.as_bytes())).unwrap();
        let enc = c.encode(frame.clone()).unwrap();
        assert_eq!(frame_items(&enc, 6), ["a", "dddd", "bb", "e", "ccc", "ff"]);
        assert_eq!(c.decode(enc, Unbounded).unwrap(), frame);
        // A frame with the wrong number of elements is an error, not a panic.
        assert!(c
            .decode(frame[..frame.len() - 6].to_vec(), Unbounded)
            .is_err());
    }

    #[test]
    fn variable_length_3d_matches_fixed_size() {
        let shape = [2, 3, 4];
        let order = json!([2, 0, 1]);
        let fixed = codec(order.clone(), &shape).unwrap();
        let var = TransposeCodec::from_config(
            json!({ "order": order }).as_object().unwrap(),
            &spec(&shape, "bytes"),
        )
        .unwrap();
        let data: Vec<u8> = (0..24).collect();
        let items: Vec<String> = data.iter().map(|i| "x".repeat(*i as usize)).collect();
        let frame = build_frame(items.iter().map(|s| s.as_bytes())).unwrap();
        let enc = var.encode(frame.clone()).unwrap();
        let lengths: Vec<u8> = frame_items(&enc, 24)
            .iter()
            .map(|s| s.len() as u8)
            .collect();
        assert_eq!(lengths, fixed.encode(data).unwrap());
        assert_eq!(var.decode(enc, Unbounded).unwrap(), frame);
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
