//! numpy's numeric semantics, as far as the numcodecs filters need them: the
//! numeric data types, casts (`ndarray.astype`), element arithmetic in a given
//! type (integers wrap, float16 computes in float32 and rounds), type
//! promotion (`np.promote_types`) and NEP 50 "weak" Python scalars.
//!
//! Elements travel as [`Scalar`]s: integers as `i128` (holds every `i64` and
//! `u64`), floats as the `f64` holding the element's exact value, complex
//! numbers as two such floats. A scalar "in type `t`" is one that `t` can
//! store exactly (what [`Num::cast`] returns).

use half::f16;

use crate::dtype::{DataKind, DataType};
use crate::error::Result;

/// A numpy numeric data type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Num {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
    C64,
    C128,
}

/// One element's value (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Scalar {
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

/// A Python scalar from a codec configuration (`offset`, `scale`), which
/// numpy 2 treats as "weak": it takes the array's type where it can.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PyScalar {
    Int(i128),
    Float(f64),
}

impl Scalar {
    fn real(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) | Scalar::Complex(f, _) => f,
        }
    }
    pub(crate) fn int(self) -> i128 {
        match self {
            Scalar::Int(i) => i,
            // Only reached for values already cast to an integer type.
            Scalar::Float(f) | Scalar::Complex(f, _) => f as i128,
        }
    }
}

impl From<PyScalar> for Scalar {
    fn from(p: PyScalar) -> Scalar {
        match p {
            PyScalar::Int(i) => Scalar::Int(i),
            PyScalar::Float(f) => Scalar::Float(f),
        }
    }
}

/// x86-64 `cvttsd2si` to 32 bits: truncation, and `i32::MIN` for NaN or out of
/// range. numpy's float->int casts compile to it, so out-of-range values (an
/// undefined cast in C) come out as they do from numpy on x86-64.
fn cvtt32(f: f64) -> i32 {
    if f > -2_147_483_649.0 && f < 2_147_483_648.0 {
        f as i32
    } else {
        i32::MIN
    }
}

/// `cvttsd2si` to 64 bits.
fn cvtt64(f: f64) -> i64 {
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

impl Num {
    /// The numeric type of a core data type, if it has one.
    pub(crate) fn from_dtype(dtype: DataType) -> Option<Num> {
        use DataKind::*;
        Some(match (dtype.kind, dtype.size) {
            (Bool, 1) => Num::Bool,
            (Int, 1) => Num::I8,
            (Int, 2) => Num::I16,
            (Int, 4) => Num::I32,
            (Int, 8) => Num::I64,
            (UInt, 1) => Num::U8,
            (UInt, 2) => Num::U16,
            (UInt, 4) => Num::U32,
            (UInt, 8) => Num::U64,
            (Float, 2) => Num::F16,
            (Float, 4) => Num::F32,
            (Float, 8) => Num::F64,
            (Complex, 8) => Num::C64,
            (Complex, 16) => Num::C128,
            _ => return None,
        })
    }

    pub(crate) fn dtype(self) -> DataType {
        use DataKind::*;
        let (kind, size) = match self {
            Num::Bool => (Bool, 1),
            Num::I8 => (Int, 1),
            Num::I16 => (Int, 2),
            Num::I32 => (Int, 4),
            Num::I64 => (Int, 8),
            Num::U8 => (UInt, 1),
            Num::U16 => (UInt, 2),
            Num::U32 => (UInt, 4),
            Num::U64 => (UInt, 8),
            Num::F16 => (Float, 2),
            Num::F32 => (Float, 4),
            Num::F64 => (Float, 8),
            Num::C64 => (Complex, 8),
            Num::C128 => (Complex, 16),
        };
        DataType { kind, size }
    }

    /// The Zarr v3 name of this type.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Num::Bool => "bool",
            Num::I8 => "int8",
            Num::I16 => "int16",
            Num::I32 => "int32",
            Num::I64 => "int64",
            Num::U8 => "uint8",
            Num::U16 => "uint16",
            Num::U32 => "uint32",
            Num::U64 => "uint64",
            Num::F16 => "float16",
            Num::F32 => "float32",
            Num::F64 => "float64",
            Num::C64 => "complex64",
            Num::C128 => "complex128",
        }
    }

    pub(crate) fn size(self) -> usize {
        self.dtype().size
    }

    pub(crate) fn is_int(self) -> bool {
        matches!(
            self,
            Num::I8 | Num::I16 | Num::I32 | Num::I64 | Num::U8 | Num::U16 | Num::U32 | Num::U64
        )
    }

    pub(crate) fn is_signed(self) -> bool {
        matches!(self, Num::I8 | Num::I16 | Num::I32 | Num::I64)
    }

    pub(crate) fn is_float(self) -> bool {
        matches!(self, Num::F16 | Num::F32 | Num::F64)
    }

    pub(crate) fn is_complex(self) -> bool {
        matches!(self, Num::C64 | Num::C128)
    }

    /// Bits of an integer type (8 for bool).
    fn bits(self) -> u32 {
        self.size() as u32 * 8
    }

    /// The smallest and largest value of an integer type.
    pub(crate) fn int_range(self) -> (i128, i128) {
        let bits = self.bits();
        if self.is_signed() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        }
    }

    /// Reduce an integer modulo 2^bits into this integer type (two's complement).
    fn wrap(self, i: i128) -> i128 {
        let bits = self.bits();
        let m = i & ((1i128 << bits) - 1);
        if self.is_signed() && m >= 1i128 << (bits - 1) {
            m - (1i128 << bits)
        } else {
            m
        }
    }

    /// Read one element (native byte order) from the first `size()` bytes.
    pub(crate) fn load(self, b: &[u8]) -> Scalar {
        fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
            let mut a = [0u8; N];
            a.copy_from_slice(&b[..N]);
            a
        }
        match self {
            Num::Bool => Scalar::Int(i128::from(b[0] != 0)),
            Num::I8 => Scalar::Int(i128::from(b[0] as i8)),
            Num::I16 => Scalar::Int(i128::from(i16::from_ne_bytes(arr(b)))),
            Num::I32 => Scalar::Int(i128::from(i32::from_ne_bytes(arr(b)))),
            Num::I64 => Scalar::Int(i128::from(i64::from_ne_bytes(arr(b)))),
            Num::U8 => Scalar::Int(i128::from(b[0])),
            Num::U16 => Scalar::Int(i128::from(u16::from_ne_bytes(arr(b)))),
            Num::U32 => Scalar::Int(i128::from(u32::from_ne_bytes(arr(b)))),
            Num::U64 => Scalar::Int(i128::from(u64::from_ne_bytes(arr(b)))),
            Num::F16 => Scalar::Float(f16::from_ne_bytes(arr(b)).to_f64()),
            Num::F32 => Scalar::Float(f64::from(f32::from_ne_bytes(arr(b)))),
            Num::F64 => Scalar::Float(f64::from_ne_bytes(arr(b))),
            Num::C64 => Scalar::Complex(
                f64::from(f32::from_ne_bytes(arr(b))),
                f64::from(f32::from_ne_bytes(arr(&b[4..]))),
            ),
            Num::C128 => {
                Scalar::Complex(f64::from_ne_bytes(arr(b)), f64::from_ne_bytes(arr(&b[8..])))
            }
        }
    }

    /// Write `v` (a scalar in this type) into the first `size()` bytes.
    pub(crate) fn store(self, v: Scalar, out: &mut [u8]) {
        let n = self.size();
        let out = &mut out[..n];
        match self {
            Num::Bool | Num::I8 | Num::U8 => out[0] = v.int() as u8,
            Num::I16 | Num::U16 => out.copy_from_slice(&(v.int() as u16).to_ne_bytes()),
            Num::I32 | Num::U32 => out.copy_from_slice(&(v.int() as u32).to_ne_bytes()),
            Num::I64 | Num::U64 => out.copy_from_slice(&(v.int() as u64).to_ne_bytes()),
            Num::F16 => out.copy_from_slice(&f16::from_f64(v.real()).to_ne_bytes()),
            Num::F32 => out.copy_from_slice(&(v.real() as f32).to_ne_bytes()),
            Num::F64 => out.copy_from_slice(&v.real().to_ne_bytes()),
            Num::C64 | Num::C128 => {
                let (re, im) = match v {
                    Scalar::Complex(re, im) => (re, im),
                    other => (other.real(), 0.0),
                };
                let half = if self == Num::C64 { Num::F32 } else { Num::F64 };
                half.store(Scalar::Float(re), out);
                half.store(Scalar::Float(im), &mut out[n / 2..]);
            }
        }
    }

    /// Cast `v` to this type as `ndarray.astype` does (unsafe casting):
    /// integers wrap, floats round to nearest even, float->int truncates,
    /// complex->real keeps the real part, anything->bool is "not zero".
    pub(crate) fn cast(self, v: Scalar) -> Scalar {
        match self {
            Num::Bool => Scalar::Int(i128::from(match v {
                Scalar::Int(i) => i != 0,
                Scalar::Float(f) => f != 0.0,
                Scalar::Complex(re, im) => re != 0.0 || im != 0.0,
            })),
            Num::I8 | Num::I16 | Num::U8 | Num::U16 | Num::I32 | Num::U32 | Num::I64 | Num::U64 => {
                match v {
                    Scalar::Int(i) => Scalar::Int(self.wrap(i)),
                    Scalar::Float(f) | Scalar::Complex(f, _) => Scalar::Int(self.float_to_int(f)),
                }
            }
            Num::F16 => Scalar::Float(match v {
                Scalar::Int(i) => f16::from_f64(i as f64).to_f64(),
                Scalar::Float(f) | Scalar::Complex(f, _) => f16::from_f64(f).to_f64(),
            }),
            Num::F32 => Scalar::Float(match v {
                Scalar::Int(i) => f64::from(i as f32),
                Scalar::Float(f) | Scalar::Complex(f, _) => f64::from(f as f32),
            }),
            Num::F64 => Scalar::Float(match v {
                Scalar::Int(i) => i as f64,
                Scalar::Float(f) | Scalar::Complex(f, _) => f,
            }),
            Num::C64 | Num::C128 => {
                let part = if self == Num::C64 { Num::F32 } else { Num::F64 };
                let (re, im) = match v {
                    Scalar::Complex(re, im) => (Scalar::Float(re), Scalar::Float(im)),
                    other => (other, Scalar::Float(0.0)),
                };
                Scalar::Complex(part.cast(re).real(), part.cast(im).real())
            }
        }
    }

    /// float -> integer as numpy does on x86-64 (see [`cvtt32`]).
    fn float_to_int(self, f: f64) -> i128 {
        const P31: f64 = 2_147_483_648.0;
        const P63: f64 = 9_223_372_036_854_775_808.0;
        match self {
            Num::I8 | Num::I16 | Num::U8 | Num::U16 => self.wrap(i128::from(cvtt32(f))),
            Num::I32 => i128::from(cvtt32(f)),
            Num::U32 => i128::from(if f >= P31 {
                (cvtt32(f - P31) as u32) ^ 0x8000_0000
            } else {
                cvtt32(f) as u32
            }),
            Num::I64 => i128::from(cvtt64(f)),
            Num::U64 => i128::from(if f >= P63 {
                (cvtt64(f - P63) as u64) ^ (1 << 63)
            } else {
                cvtt64(f) as u64
            }),
            _ => 0,
        }
    }

    /// The component type of a complex type (itself otherwise).
    fn part(self) -> Num {
        match self {
            Num::C64 => Num::F32,
            Num::C128 => Num::F64,
            other => other,
        }
    }

    /// Apply a binary float operation in this float type's precision.
    fn float_op(self, a: f64, b: f64, op: fn(f64, f64) -> f64, op32: fn(f32, f32) -> f32) -> f64 {
        match self {
            // numpy's half loops compute in float32 and round the result.
            Num::F16 => f16::from_f32(op32(a as f32, b as f32)).to_f64(),
            Num::F32 => f64::from(op32(a as f32, b as f32)),
            _ => op(a, b),
        }
    }

    fn binary(
        self,
        a: Scalar,
        b: Scalar,
        iop: fn(i128, i128) -> i128,
        op: fn(f64, f64) -> f64,
        op32: fn(f32, f32) -> f32,
    ) -> Scalar {
        match (a, b) {
            (Scalar::Int(x), Scalar::Int(y)) if self.is_int() || self == Num::Bool => {
                Scalar::Int(self.wrap(iop(x, y)))
            }
            (Scalar::Complex(ar, ai), Scalar::Complex(br, bi)) => {
                let p = self.part();
                Scalar::Complex(p.float_op(ar, br, op, op32), p.float_op(ai, bi, op, op32))
            }
            _ => Scalar::Float(self.float_op(a.real(), b.real(), op, op32)),
        }
    }

    /// `a + b` in this type (both in this type).
    pub(crate) fn add(self, a: Scalar, b: Scalar) -> Scalar {
        self.binary(a, b, i128::wrapping_add, |x, y| x + y, |x, y| x + y)
    }

    /// `a - b` in this type.
    pub(crate) fn sub(self, a: Scalar, b: Scalar) -> Scalar {
        self.binary(a, b, i128::wrapping_sub, |x, y| x - y, |x, y| x - y)
    }

    /// `a * b` in this type (not for complex types).
    pub(crate) fn mul(self, a: Scalar, b: Scalar) -> Scalar {
        self.binary(a, b, i128::wrapping_mul, |x, y| x * y, |x, y| x * y)
    }

    /// `a / b` in this float type.
    pub(crate) fn div(self, a: Scalar, b: Scalar) -> Scalar {
        Scalar::Float(self.float_op(a.real(), b.real(), |x, y| x / y, |x, y| x / y))
    }

    /// `np.around(v)` (no decimals): round half to even for floats, identity
    /// for integers.
    pub(crate) fn rint(self, v: Scalar) -> Scalar {
        match v {
            Scalar::Float(f) => Scalar::Float(f.round_ties_even()),
            other => other,
        }
    }

    /// The smallest float type that holds every value of an integer type, as
    /// numpy promotes (int8/uint8 -> float16, 16 bits -> float32, else float64).
    fn float_for_int(self) -> Num {
        match self.size() {
            1 => Num::F16,
            2 => Num::F32,
            _ => Num::F64,
        }
    }

    /// `np.promote_types(self, other)` for the numeric types.
    pub(crate) fn promote(self, other: Num) -> Num {
        use Num::*;
        fn rank(n: Num) -> u8 {
            // Within a kind, larger types are "greater".
            n.size() as u8
        }
        let (a, b) = (self, other);
        if a == b {
            return a;
        }
        if a == Bool {
            return b;
        }
        if b == Bool {
            return a;
        }
        let larger = |x: Num, y: Num| if rank(x) >= rank(y) { x } else { y };
        match (a.is_int(), b.is_int()) {
            (true, true) => {
                if a.is_signed() == b.is_signed() {
                    return larger(a, b);
                }
                let (s, u) = if a.is_signed() { (a, b) } else { (b, a) };
                if rank(u) < rank(s) {
                    return s;
                }
                match u.size() {
                    1 => I16,
                    2 => I32,
                    4 => I64,
                    _ => F64,
                }
            }
            (true, false) | (false, true) => {
                let (i, f) = if a.is_int() { (a, b) } else { (b, a) };
                let fi = i.float_for_int();
                if f.is_complex() {
                    if fi == F64 {
                        C128
                    } else {
                        f
                    }
                } else {
                    larger(f, fi)
                }
            }
            (false, false) => {
                // float/complex mixes: the complex type whose part holds both.
                if a.is_complex() || b.is_complex() {
                    let part = larger(a.part(), b.part());
                    if part == F64 {
                        C128
                    } else {
                        C64
                    }
                } else {
                    larger(a, b)
                }
            }
        }
    }

    /// The result type of `array op python_scalar` (NEP 50): an integer array
    /// with a Python float gives float64, otherwise the array's type.
    pub(crate) fn with_py(self, p: PyScalar) -> Num {
        match p {
            PyScalar::Float(_) if self.is_int() || self == Num::Bool => Num::F64,
            _ => self,
        }
    }

    /// A Python scalar converted to this (the operation's) type, or `None`
    /// when a Python int does not fit this integer type (numpy's
    /// `OverflowError: Python integer ... out of bounds`).
    pub(crate) fn weak(self, p: PyScalar) -> Option<Scalar> {
        match p {
            PyScalar::Int(i) if self.is_int() => {
                let (lo, hi) = self.int_range();
                (lo..=hi).contains(&i).then_some(Scalar::Int(i))
            }
            other => Some(self.cast(other.into())),
        }
    }
}

/// Apply `f` to each element of `src` (type `from`), writing `to` elements.
pub(crate) fn map_elements(
    src: &[u8],
    from: Num,
    to: Num,
    mut f: impl FnMut(Scalar) -> Scalar,
) -> Result<Vec<u8>> {
    let (fs, ts) = (from.size(), to.size());
    let n = src.len() / fs;
    let mut out = crate::alloc::zeroed(n * ts)?;
    for (s, d) in src.chunks_exact(fs).zip(out.chunks_exact_mut(ts)) {
        to.store(f(from.load(s)), d);
    }
    Ok(out)
}

/// One element (a fill value) cast as [`cast_elements`] casts each.
pub(crate) fn cast_one(src: &[u8], from: Num, to: Num) -> Vec<u8> {
    if from == to {
        return src.to_vec();
    }
    let mut out = vec![0u8; to.size()];
    to.store(to.cast(from.load(src)), &mut out);
    out
}

/// `src.astype(to)`.
pub(crate) fn cast_elements(src: &[u8], from: Num, to: Num) -> Result<Vec<u8>> {
    if from == to {
        let mut out = crate::alloc::with_capacity(src.len())?;
        out.extend_from_slice(src);
        return Ok(out);
    }
    map_elements(src, from, to, |v| to.cast(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn casts(from: Num, to: Num, values: &[Scalar]) -> Vec<Scalar> {
        values.iter().map(|&v| to.cast(from.cast(v))).collect()
    }

    #[test]
    fn float_to_int_matches_numpy_on_x86_64() {
        // np.array([1e10, -1e10, nan, inf, 300.7, -300.7, -1.5, 70000.2, 3e9,
        //           -3e9, 1.8e19, 2**63, -0.9]).astype(t)
        let x: Vec<Scalar> = [
            1e10,
            -1e10,
            f64::NAN,
            f64::INFINITY,
            300.7,
            -300.7,
            -1.5,
            70000.2,
            3e9,
            -3e9,
            1.8e19,
            9_223_372_036_854_775_808.0, // 2**63
            -0.9,
        ]
        .iter()
        .map(|&f| Scalar::Float(f))
        .collect();
        let ints = |t: Num| -> Vec<i128> {
            casts(Num::F64, t, &x)
                .into_iter()
                .map(|s| match s {
                    Scalar::Int(i) => i,
                    _ => panic!(),
                })
                .collect()
        };
        assert_eq!(ints(Num::I8), [0, 0, 0, 0, 44, -44, -1, 112, 0, 0, 0, 0, 0]);
        assert_eq!(
            ints(Num::U16),
            [0, 0, 0, 0, 300, 65236, 65535, 4464, 0, 0, 0, 0, 0]
        );
        let m = i128::from(i32::MIN);
        assert_eq!(
            ints(Num::I32),
            [m, m, m, m, 300, -300, -1, 70000, m, m, m, m, 0]
        );
        assert_eq!(
            ints(Num::U32),
            [
                0, 2147483648, 2147483648, 0, 300, 4294966996, 4294967295, 70000, 3000000000,
                2147483648, 0, 0, 0
            ]
        );
        let m = i128::from(i64::MIN);
        assert_eq!(
            ints(Num::I64),
            [
                10000000000,
                -10000000000,
                m,
                m,
                300,
                -300,
                -1,
                70000,
                3000000000,
                -3000000000,
                m,
                m,
                0
            ]
        );
        assert_eq!(
            ints(Num::U64),
            [
                10000000000,
                18446744063709551616,
                9223372036854775808,
                0,
                300,
                18446744073709551316,
                18446744073709551615,
                70000,
                3000000000,
                18446744070709551616,
                18000000000000000000,
                9223372036854775808,
                0
            ]
        );
    }

    #[test]
    fn promotion_table() {
        use Num::*;
        let cases = [
            (I8, U8, I16),
            (U8, I16, I16),
            (U16, I16, I32),
            (U32, I8, I64),
            (U64, I64, F64),
            (I8, F16, F16),
            (I16, F16, F32),
            (U8, F32, F32),
            (I32, F32, F64),
            (F16, F64, F64),
            (Bool, I8, I8),
            (F64, C64, C128),
            (I16, C64, C64),
            (I64, C64, C128),
        ];
        for (a, b, r) in cases {
            assert_eq!(a.promote(b), r, "{a:?} {b:?}");
            assert_eq!(b.promote(a), r, "{b:?} {a:?}");
        }
    }

    #[test]
    fn arithmetic_wraps_and_rounds_in_type() {
        let i = Scalar::Int;
        assert_eq!(Num::U8.sub(i(5), i(7)), i(254));
        assert_eq!(Num::I16.mul(i(300), i(300)), i(24464));
        assert_eq!(Num::U64.mul(i(u64::MAX as i128), i(u64::MAX as i128)), i(1));
        // float16: 2048 + 1 rounds to 2048 (spacing 2).
        let f = Scalar::Float;
        assert_eq!(Num::F16.add(f(2048.0), f(1.0)), f(2048.0));
        assert_eq!(Num::F32.add(f(16777216.0), f(1.0)), f(16777216.0));
        assert_eq!(Num::F64.add(f(16777216.0), f(1.0)), f(16777217.0));
        assert_eq!(Num::F64.rint(f(2.5)), f(2.0));
        assert_eq!(Num::F64.rint(f(-3.5)), f(-4.0));
        assert_eq!(Num::I32.weak(PyScalar::Int(1 << 31)), None);
        assert_eq!(Num::U8.weak(PyScalar::Int(-1)), None);
        assert_eq!(
            Num::F32.weak(PyScalar::Float(0.1)),
            Some(f(f64::from(0.1f32)))
        );
        assert_eq!(Num::I8.with_py(PyScalar::Float(1.0)), Num::F64);
        assert_eq!(Num::F16.with_py(PyScalar::Float(1.0)), Num::F16);
    }

    #[test]
    fn load_store_round_trip() {
        for t in [
            Num::Bool,
            Num::I8,
            Num::I16,
            Num::I32,
            Num::I64,
            Num::U8,
            Num::U16,
            Num::U32,
            Num::U64,
            Num::F16,
            Num::F32,
            Num::F64,
            Num::C64,
            Num::C128,
        ] {
            assert_eq!(Num::from_dtype(t.dtype()), Some(t));
            let bytes: Vec<u8> = (0..t.size() as u8)
                .map(|b| b.wrapping_mul(37) | 1)
                .collect();
            let bytes = if t == Num::Bool { vec![1] } else { bytes };
            let mut out = vec![0u8; t.size()];
            t.store(t.load(&bytes), &mut out);
            assert_eq!(out, bytes, "{t:?}");
        }
        assert_eq!(
            cast_elements(&[1, 0, 2], Num::U8, Num::Bool).unwrap(),
            vec![1, 0, 1]
        );
        let c = cast_elements(&(-2.5f64).to_ne_bytes(), Num::F64, Num::C64).unwrap();
        assert_eq!(&c[..4], &(-2.5f32).to_ne_bytes());
        assert_eq!(&c[4..], &0f32.to_ne_bytes());
    }
}
