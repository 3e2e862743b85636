//! Memory orders: an array's elements in Fortran order rewritten in C order,
//! on the worker threads. The Python layer hands the core C-ordered buffers,
//! so an F-ordered array given to a write, or an F-ordered result of a read
//! (v2 arrays with `"order": "F"`), goes through here instead of numpy's
//! single-threaded strided copy.
//!
//! Reversing every axis swaps the first and the last: for each position of
//! the middle axes, the (first, last) plane is a 2-d transpose, done in
//! square tiles so that both sides are read and written in cache lines. The
//! output is split among the threads by ranges of its first axis, which are
//! contiguous, disjoint slabs.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::pool;

/// Elements along each side of a tile.
const TILE: usize = 32;

/// Write into `dst` the elements of an array of `shape` whose `elem`-byte
/// elements `src` holds in Fortran order, in C order. The same call turns a
/// C-ordered array of `shape` into a Fortran-ordered one when given the shape
/// reversed.
pub fn fortran_to_c(src: &[u8], dst: &mut [u8], shape: &[usize], elem: usize) -> Result<()> {
    let nbytes = shape
        .iter()
        .try_fold(elem, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| Error::value(format!("an array of shape {shape:?} is too large")))?;
    if src.len() != nbytes || dst.len() != nbytes {
        return Err(Error::value(format!(
            "an array of shape {shape:?} and {elem}-byte elements has {nbytes} bytes, \
             got {} and {}",
            src.len(),
            dst.len()
        )));
    }
    let n = shape.len();
    if nbytes == 0 {
        return Ok(());
    }
    if n < 2 || shape.iter().filter(|&&d| d > 1).count() < 2 {
        // At most one axis longer than 1: both orders are the same bytes.
        dst.copy_from_slice(src);
        return Ok(());
    }
    match elem {
        1 => swap::<1>(src, dst, shape),
        2 => swap::<2>(src, dst, shape),
        4 => swap::<4>(src, dst, shape),
        8 => swap::<8>(src, dst, shape),
        16 => swap::<16>(src, dst, shape),
        _ => swap_dyn(src, dst, shape, elem),
    }
}

/// Strides in elements: `(C order, Fortran order)` of each axis.
fn strides(shape: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let n = shape.len();
    let mut c = vec![1; n];
    for d in (0..n - 1).rev() {
        c[d] = c[d + 1] * shape[d + 1];
    }
    let mut f = vec![1; n];
    for d in 1..n {
        f[d] = f[d - 1] * shape[d - 1];
    }
    (c, f)
}

/// Calls `plane(c_base, f_base)` with the C-order and Fortran-order offsets
/// (in elements) of every position of the middle axes (all but the first and
/// the last), in C order.
fn each_middle(shape: &[usize], c: &[usize], f: &[usize], mut plane: impl FnMut(usize, usize)) {
    let n = shape.len();
    let middle = &shape[1..n - 1];
    let mut idx = vec![0usize; middle.len()];
    loop {
        let (cb, fb) = idx.iter().enumerate().fold((0, 0), |(cb, fb), (k, &i)| {
            (cb + i * c[k + 1], fb + i * f[k + 1])
        });
        plane(cb, fb);
        let mut k = middle.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < middle[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// [`fortran_to_c`] for `N`-byte elements, at least two axes.
fn swap<const N: usize>(src: &[u8], dst: &mut [u8], shape: &[usize]) -> Result<()> {
    let n = shape.len();
    let (c, f) = strides(shape);
    let (rows, cols) = (shape[0], shape[n - 1]);
    // Output slabs of TILE rows of the first axis, each its own task.
    let slab = TILE * c[0] * N;
    let work = |(t, out): (usize, &mut [u8])| {
        let r0 = t * TILE;
        let r1 = (r0 + TILE).min(rows);
        let step = f[n - 1];
        each_middle(shape, &c, &f, |cb, fb| {
            for k0 in (0..cols).step_by(TILE) {
                let k1 = (k0 + TILE).min(cols);
                for r in r0..r1 {
                    // Elements (r, middle, k0..k1): contiguous in `out`, `step`
                    // elements apart in `src`; both ranges lie inside their
                    // buffers, whose sizes were checked against `shape`.
                    let row = (r - r0) * c[0] + cb;
                    let to = out[(row + k0) * N..(row + k1) * N].chunks_exact_mut(N);
                    let from = src[(fb + r + k0 * step) * N..].chunks(N).step_by(step);
                    for (d, s) in to.zip(from) {
                        d.copy_from_slice(s);
                    }
                }
            }
        });
    };
    pool::install(|| dst.par_chunks_mut(slab).enumerate().for_each(work))?;
    Ok(())
}

/// [`swap`] for element sizes without a specialisation.
fn swap_dyn(src: &[u8], dst: &mut [u8], shape: &[usize], elem: usize) -> Result<()> {
    let n = shape.len();
    let (c, f) = strides(shape);
    let (rows, cols) = (shape[0], shape[n - 1]);
    let slab = TILE * c[0] * elem;
    let work = |(t, out): (usize, &mut [u8])| {
        let r0 = t * TILE;
        let r1 = (r0 + TILE).min(rows);
        each_middle(shape, &c, &f, |cb, fb| {
            for r in r0..r1 {
                let row = (r - r0) * c[0] + cb;
                for k in 0..cols {
                    let d = (row + k) * elem;
                    let s = (fb + r + k * f[n - 1]) * elem;
                    out[d..d + elem].copy_from_slice(&src[s..s + elem]);
                }
            }
        });
    };
    pool::install(|| dst.par_chunks_mut(slab).enumerate().for_each(work))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C-order bytes of an array of `shape` whose element at C-order
    /// position `i` is `f(multi-index)`, `elem` bytes each (little-endian
    /// counter, then zeros).
    fn fill(shape: &[usize], elem: usize, fortran: bool) -> Vec<u8> {
        let total: usize = shape.iter().product();
        let mut out = vec![0u8; total * elem];
        for i in 0..total {
            // the multi-index of C position i
            let mut rest = i;
            let mut idx = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                idx[d] = rest % shape[d];
                rest /= shape[d];
            }
            // where that element lives in the requested order
            let at = if fortran {
                let mut at = 0;
                for d in (0..shape.len()).rev() {
                    at = at * shape[d] + idx[d];
                }
                at
            } else {
                i
            };
            let value = (i as u64).to_le_bytes();
            let n = elem.min(8);
            out[at * elem..at * elem + n].copy_from_slice(&value[..n]);
        }
        out
    }

    #[test]
    fn fortran_order_becomes_c_order() {
        for shape in [
            vec![3, 5],
            vec![1, 7],
            vec![40, 33],
            vec![2, 3, 4],
            vec![33, 2, 65],
            vec![5, 1, 1, 3],
            vec![2, 3, 2, 3, 2],
            vec![7],
        ] {
            for elem in [1, 2, 3, 4, 8, 16] {
                let f = fill(&shape, elem, true);
                let want = fill(&shape, elem, false);
                let mut got = vec![0u8; want.len()];
                fortran_to_c(&f, &mut got, &shape, elem).unwrap();
                assert!(got == want, "shape {shape:?}, {elem}-byte elements");
                // the reversed shape takes C order back to Fortran order
                let rev: Vec<usize> = shape.iter().rev().copied().collect();
                let mut back = vec![0u8; want.len()];
                fortran_to_c(&want, &mut back, &rev, elem).unwrap();
                assert!(back == f, "back: shape {shape:?}, {elem}-byte elements");
            }
        }
    }

    #[test]
    fn sizes_that_do_not_match_the_shape_are_errors() {
        let mut dst = vec![0u8; 12];
        let e = fortran_to_c(&[0u8; 12], &mut dst, &[2, 3], 4).unwrap_err();
        assert!(e.message.contains("has 24 bytes"), "{}", e.message);
        assert!(fortran_to_c(&[0u8; 24], &mut dst, &[2, 3], 4).is_err());
        let e = fortran_to_c(&[], &mut [], &[usize::MAX, 3], 2).unwrap_err();
        assert!(e.message.contains("too large"), "{}", e.message);
        fortran_to_c(&[], &mut [], &[0, 3], 2).unwrap();
    }
}
