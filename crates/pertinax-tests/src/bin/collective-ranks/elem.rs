//! The element types under test and their operations: the operations
//! (`K`), and for each element type its operands and a sequential
//! reference for each operation ([`Elem`]): integers, floats (with IEEE
//! minimum/maximum), `ValueIndex` for minloc/maxloc, a user-defined record
//! with a commutative user operation, and the non-commutative user
//! operations on affine maps and 2×2 matrices. `by_type!` calls a generic
//! function for an element type given by its number.

use std::fmt::Debug;

use pertinax::bytemuck::{self, Pod, Zeroable};
use pertinax::{Op, ValueIndex};
use pertinax_wire::rng::SplitMix64;

/// The operations under test (one `Op` constructor each, plus user ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum K {
    Sum,
    Prod,
    Min,
    Max,
    Band,
    Bor,
    Bxor,
    Land,
    Lor,
    Lxor,
    MinLoc,
    MaxLoc,
    /// A commutative user operation.
    User,
    /// A non-commutative user operation.
    UserNc,
}

/// An element type with the operations it is tested with and a sequential
/// reference for each.
pub(super) trait Elem: Pod + Debug {
    const NAME: &'static str;
    const OPS: &'static [K];
    /// A random operand for `k`, chosen so that the reference is exact in
    /// any grouping.
    fn gen(r: &mut SplitMix64, k: K) -> Self;
    fn op(k: K) -> Op<Self>;
    /// The reference `a ⊕ b`.
    fn f(k: K, a: Self, b: Self) -> Self;
    /// Whether a result equals the reference.
    fn same(got: &Self, want: &Self) -> bool {
        bytemuck::bytes_of(got) == bytemuck::bytes_of(want)
    }
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const NAME: &'static str = stringify!($t);
            const OPS: &'static [K] = &[
                K::Sum, K::Prod, K::Min, K::Max, K::Band, K::Bor, K::Bxor,
                K::Land, K::Lor, K::Lxor, K::User,
            ];
            fn gen(r: &mut SplitMix64, k: K) -> Self {
                let x = r.next_u64();
                match k {
                    K::Band => (x | r.next_u64()) as $t,
                    K::Bor => (x & r.next_u64()) as $t,
                    K::Land | K::Lor | K::Lxor if x % 3 == 0 => 0,
                    K::Land | K::Lor | K::Lxor => ((x >> 8) as $t) | 1,
                    _ => x as $t,
                }
            }
            fn op(k: K) -> Op<Self> {
                match k {
                    K::Sum => Op::sum(),
                    K::Prod => Op::prod(),
                    K::Min => Op::min(),
                    K::Max => Op::max(),
                    K::Band => Op::band(),
                    K::Bor => Op::bor(),
                    K::Bxor => Op::bxor(),
                    K::Land => Op::land(),
                    K::Lor => Op::lor(),
                    K::Lxor => Op::lxor(),
                    _ => Op::user(|a: &$t, b: &$t| a.wrapping_add(*b).wrapping_add(1), true),
                }
            }
            fn f(k: K, a: Self, b: Self) -> Self {
                match k {
                    K::Sum => a.wrapping_add(b),
                    K::Prod => a.wrapping_mul(b),
                    K::Min => a.min(b),
                    K::Max => a.max(b),
                    K::Band => a & b,
                    K::Bor => a | b,
                    K::Bxor => a ^ b,
                    K::Land => <$t>::from(a != 0 && b != 0),
                    K::Lor => <$t>::from(a != 0 || b != 0),
                    K::Lxor => <$t>::from((a != 0) != (b != 0)),
                    _ => a.wrapping_add(b).wrapping_add(1),
                }
            }
        }
    )*};
}
ints!(u8, i32, u64);

/// IEEE 754-2019 `minimum` (`max == false`) or `maximum`: NaN propagates,
/// -0 is below +0.
fn ieee_minmax<F: Float>(a: F, b: F, max: bool) -> F {
    let (x, y) = (a.to_f64(), b.to_f64());
    if x.is_nan() || y.is_nan() {
        return F::of(f64::NAN);
    }
    if x != y {
        return if (x > y) == max { a } else { b };
    }
    // Equal values (maybe zeros of both signs): min prefers -0, max +0.
    if x.is_sign_negative() != max {
        a
    } else {
        b
    }
}

/// The float types.
pub(super) trait Float: Elem {
    const EPS: f64;
    fn of(x: f64) -> Self;
    fn to_f64(self) -> f64;
}

macro_rules! floats {
    ($($t:ident),*) => {$(
        impl Float for $t {
            const EPS: f64 = $t::EPSILON as f64;
            fn of(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
        impl Elem for $t {
            const NAME: &'static str = stringify!($t);
            const OPS: &'static [K] = &[K::Sum, K::Prod, K::Min, K::Max];
            fn gen(r: &mut SplitMix64, k: K) -> Self {
                match k {
                    // Multiples of 2^-10 below 2 in magnitude: sums of up to
                    // 2^10 of them are exact in any order.
                    K::Sum => (r.below_mod(4096) as i32 - 2048) as $t / 1024.0,
                    // Powers of two: products are exact in any order.
                    K::Prod => {
                        let m = [0.25, 0.5, 1.0, 2.0, 4.0][r.below_mod(5) as usize];
                        if r.below_mod(2) == 0 { m } else { -m }
                    }
                    _ => match r.below_mod(128) {
                        0 => $t::NAN,
                        1..=4 => 0.0,
                        5..=8 => -0.0,
                        9 => $t::INFINITY,
                        10 => $t::NEG_INFINITY,
                        11..=60 => r.below_mod(9) as $t - 4.0,
                        _ => ((r.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0) as $t,
                    },
                }
            }
            fn op(k: K) -> Op<Self> {
                match k {
                    K::Sum => Op::sum(),
                    K::Prod => Op::prod(),
                    K::Min => Op::min(),
                    _ => Op::max(),
                }
            }
            fn f(k: K, a: Self, b: Self) -> Self {
                match k {
                    K::Sum => a + b,
                    K::Prod => a * b,
                    K::Min => ieee_minmax(a, b, false),
                    _ => ieee_minmax(a, b, true),
                }
            }
            fn same(got: &Self, want: &Self) -> bool {
                if want.is_nan() {
                    got.is_nan()
                } else {
                    got.to_bits() == want.to_bits()
                }
            }
        }
    )*};
}
floats!(f32, f64);

/// `a` strictly wins over `b` under minloc (`max == false`) or maxloc, in
/// the documented order: NaN first, then -0 before +0 for min (+0 before
/// -0 for max).
fn wins(a: f64, b: f64, max: bool) -> bool {
    match (a.is_nan(), b.is_nan()) {
        (true, nb) => !nb,
        (false, true) => false,
        _ if max => a > b || (a == b && a.is_sign_positive() && b.is_sign_negative()),
        _ => a < b || (a == b && a.is_sign_negative() && b.is_sign_positive()),
    }
}

/// The reference minloc/maxloc: the winning value, else the smaller index.
fn pick<T: Copy>(a: ValueIndex<T>, b: ValueIndex<T>, w: impl Fn(T, T) -> bool) -> ValueIndex<T> {
    let (av, bv, ai, bi) = (a.value, b.value, a.index, b.index);
    if w(av, bv) {
        a
    } else if w(bv, av) || bi < ai {
        b
    } else {
        a
    }
}

impl Elem for ValueIndex<f64> {
    const NAME: &'static str = "ValueIndex<f64>";
    const OPS: &'static [K] = &[K::MinLoc, K::MaxLoc];
    fn gen(r: &mut SplitMix64, _k: K) -> Self {
        let v = match r.below_mod(64) {
            0 => f64::NAN,
            1..=6 => -0.0,
            7..=12 => 0.0,
            _ => r.below_mod(7) as f64 - 3.0,
        };
        ValueIndex::new(v, r.below_mod(8) as i32 - 2)
    }
    fn op(k: K) -> Op<Self> {
        if k == K::MinLoc {
            Op::minloc()
        } else {
            Op::maxloc()
        }
    }
    fn f(k: K, a: Self, b: Self) -> Self {
        let max = k == K::MaxLoc;
        pick(a, b, |x, y| wins(x, y, max))
    }
    fn same(got: &Self, want: &Self) -> bool {
        let (g, w) = (got.value, want.value);
        got.index == want.index
            && if w.is_nan() {
                g.is_nan()
            } else {
                g.to_bits() == w.to_bits()
            }
    }
}

impl Elem for ValueIndex<i32> {
    const NAME: &'static str = "ValueIndex<i32>";
    const OPS: &'static [K] = &[K::MinLoc, K::MaxLoc];
    fn gen(r: &mut SplitMix64, _k: K) -> Self {
        ValueIndex::new(r.below_mod(5) as i32 - 2, r.below_mod(6) as i32)
    }
    fn op(k: K) -> Op<Self> {
        if k == K::MinLoc {
            Op::minloc()
        } else {
            Op::maxloc()
        }
    }
    fn f(k: K, a: Self, b: Self) -> Self {
        if k == K::MinLoc {
            pick(a, b, |x, y| x < y)
        } else {
            pick(a, b, |x, y| x > y)
        }
    }
}

/// A user-defined element with a commutative user operation.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[bytemuck(crate = "pertinax::bytemuck")]
pub(super) struct Rec {
    lo: i32,
    hi: u32,
    sum: u64,
    x: u64,
}

fn rec_op(a: &Rec, b: &Rec) -> Rec {
    Rec {
        lo: a.lo.min(b.lo),
        hi: a.hi.max(b.hi),
        sum: a.sum.wrapping_add(b.sum),
        x: a.x ^ b.x,
    }
}

impl Elem for Rec {
    const NAME: &'static str = "Rec";
    const OPS: &'static [K] = &[K::User];
    fn gen(r: &mut SplitMix64, _k: K) -> Self {
        let x = r.next_u64();
        Rec {
            lo: x as i32,
            hi: (x >> 32) as u32,
            sum: r.next_u64(),
            x: r.next_u64(),
        }
    }
    fn op(_k: K) -> Op<Self> {
        Op::user(rec_op, true)
    }
    fn f(_k: K, a: Self, b: Self) -> Self {
        rec_op(&a, &b)
    }
}

/// Affine maps `x ↦ a·x + b` (mod 2^64) composed left to right: associative,
/// not commutative.
pub(super) fn affine(l: &[u64; 2], r: &[u64; 2]) -> [u64; 2] {
    [
        r[0].wrapping_mul(l[0]),
        r[0].wrapping_mul(l[1]).wrapping_add(r[1]),
    ]
}

impl Elem for [u64; 2] {
    const NAME: &'static str = "affine";
    const OPS: &'static [K] = &[K::UserNc];
    fn gen(r: &mut SplitMix64, _k: K) -> Self {
        [r.next_u64() | 1, r.next_u64()]
    }
    fn op(_k: K) -> Op<Self> {
        Op::user(affine, false)
    }
    fn f(_k: K, a: Self, b: Self) -> Self {
        affine(&a, &b)
    }
}

/// 2×2 matrix product (row-major) on small integers, exact in f64.
fn matmul(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
    ]
}

impl Elem for [f64; 4] {
    const NAME: &'static str = "matrix";
    const OPS: &'static [K] = &[K::UserNc];
    fn gen(r: &mut SplitMix64, _k: K) -> Self {
        let mut m = [0.0; 4];
        for x in &mut m {
            *x = [-1.0, 0.0, 1.0, 1.0, 2.0][r.below_mod(5) as usize];
        }
        m
    }
    fn op(_k: K) -> Op<Self> {
        Op::user(matmul, false)
    }
    fn f(_k: K, a: Self, b: Self) -> Self {
        matmul(&a, &b)
    }
    // Exact integers, but a zero's sign depends on the grouping.
    fn same(got: &Self, want: &Self) -> bool {
        got == want
    }
}

pub(super) const NTYPES: u64 = 10;

/// Calls `$f::<T>(args)` for the element type numbered `$t`.
macro_rules! by_type {
    ($t:expr, $f:ident($($a:expr),*)) => {
        match $t {
            0 => $f::<u8>($($a),*),
            1 => $f::<i32>($($a),*),
            2 => $f::<u64>($($a),*),
            3 => $f::<f32>($($a),*),
            4 => $f::<f64>($($a),*),
            5 => $f::<ValueIndex<f64>>($($a),*),
            6 => $f::<ValueIndex<i32>>($($a),*),
            7 => $f::<Rec>($($a),*),
            8 => $f::<[u64; 2]>($($a),*),
            _ => $f::<[f64; 4]>($($a),*),
        }
    };
}
pub(super) use by_type;

pub(super) fn nops<T: Elem>() -> usize {
    T::OPS.len()
}
