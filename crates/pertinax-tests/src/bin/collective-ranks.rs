//! Rank program for the collective tests: `collective-ranks SCENARIO [ARGS]`.
//!
//! Every collective is compared with a sequential reference. Inputs are a
//! function of (call seed, rank, block), so every rank recomputes what
//! every other rank contributed and checks its own result exactly:
//! integer and user operations bit for bit, floats with inputs chosen so
//! that any grouping is exact (dyadic sums, power-of-two products,
//! min/max with NaN and signed zeros). The `fp` scenario uses full
//! precision floats instead and checks closeness to the rank-order
//! reference plus bitwise agreement across ranks, variants and runs.
//!
//! Prints `OK SCENARIO rank=R` when every check passed; prints the first
//! failed check and exits 1 otherwise.
//!
//! Scenarios:
//! - `all SEED [world|split|self]`: every collective, every root, random
//!   counts, element types and operations (see [`plan`]).
//! - `large SEED`: the same with counts of more than 1 MiB per call.
//! - `noncomm SEED`: user operations (commutative and not) on every
//!   reducing collective, every root, counts up to the large-message paths.
//! - `fp SEED JITTER_US`: full-precision float reductions; prints
//!   `HASH rank=R H` over every result's bits.
//! - `overlap SEED ITERS`: non-blocking collectives outstanding at once on
//!   four communicators, mixed with point-to-point messages and blocking
//!   collectives.
//! - `longrun COUNT SEED`: back-to-back small collectives, each checked.
//! - `badargs`: typed errors for bad roots and lengths, zero counts, the
//!   self communicator, a freed communicator.
//! - `mismatch BYTES less|more`: ranks disagree with the root on a bcast
//!   count.
//! - `allreduce COUNT`: one allreduce of COUNT u64.
//! - `agv reversed|gaps|zeros`: allgatherv with equal counts and
//!   displacements out of rank order or with gaps.
//! - `skew BYTES`: alltoallv where only the block from rank 0 to rank 1
//!   is large.

use std::fmt::Debug;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pertinax::bytemuck::{self, Pod, Zeroable};
use pertinax::{Comm, Error, Op, Rank, Request, Universe, ValueIndex};
use pertinax_wire::rng::SplitMix64;

type R = Result<(), String>;

use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::scenario::Collective;
use pertinax_tests::{arg, check, e};

// ---- element types and operations ----------------------------------------

/// The operations under test (one `Op` constructor each, plus user ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum K {
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
trait Elem: Pod + Debug {
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
trait Float: Elem {
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
struct Rec {
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
fn affine(l: &[u64; 2], r: &[u64; 2]) -> [u64; 2] {
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

const NTYPES: u64 = 10;

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

fn nops<T: Elem>() -> usize {
    T::OPS.len()
}

// ---- inputs and comparisons ------------------------------------------------

/// A seed for `(seed, a, b)`.
fn sd(seed: u64, a: usize, b: usize) -> u64 {
    SplitMix64::new(
        seed ^ (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (b as u64)
                .wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
                .rotate_left(29),
    )
    .next_u64()
}

/// `len` operands of `k` from stream `(cs, a, b)`.
fn gen<T: Elem>(cs: u64, a: usize, b: usize, len: usize, k: K) -> Vec<T> {
    let mut r = SplitMix64::new(sd(cs, a, b));
    (0..len).map(|_| T::gen(&mut r, k)).collect()
}

/// `len` elements of random bytes from stream `(cs, a, b)`.
fn raw<T: Pod>(cs: u64, a: usize, b: usize, len: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); len];
    let mut r = SplitMix64::new(sd(cs, a, b) ^ 0x5EED);
    for c in bytemuck::cast_slice_mut::<T, u8>(&mut v).chunks_mut(8) {
        c.copy_from_slice(&r.next_u64().to_le_bytes()[..c.len()]);
    }
    v
}

/// `len` elements of a byte pattern that no call writes by chance.
fn sentinel<T: Pod>(len: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); len];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).fill(0xA5);
    v
}

/// Compares results with the reference (`Elem::same`).
fn cmp<T: Elem>(got: &[T], want: &[T]) -> R {
    check!(
        got.len() == want.len(),
        "{} elements, expected {}",
        got.len(),
        want.len()
    );
    match got.iter().zip(want).position(|(g, w)| !T::same(g, w)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "element {i} of {}: got {:?}, expected {:?}",
            got.len(),
            got[i],
            want[i]
        )),
    }
}

/// Compares bytes (data movement, untouched buffers).
fn cmp_raw<T: Pod + Debug>(got: &[T], want: &[T]) -> R {
    check!(
        got.len() == want.len(),
        "{} elements, expected {}",
        got.len(),
        want.len()
    );
    let (g, w) = (
        bytemuck::cast_slice::<T, u8>(got),
        bytemuck::cast_slice::<T, u8>(want),
    );
    match g.iter().zip(w).position(|(a, b)| a != b) {
        None => Ok(()),
        Some(b) => {
            let i = b / std::mem::size_of::<T>().max(1);
            Err(format!(
                "element {i} of {} (byte {b}): got {:?}, expected {:?}",
                got.len(),
                got[i],
                want[i]
            ))
        }
    }
}

/// A random placement of blocks of `counts` (a permutation with gaps):
/// displacements and the buffer length.
fn layout(seed: u64, counts: &[usize]) -> (Vec<usize>, usize) {
    let mut r = SplitMix64::new(seed);
    let mut order: Vec<usize> = (0..counts.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, r.below_mod(i as u64 + 1) as usize);
    }
    let mut displs = vec![0; counts.len()];
    let mut at = 0;
    for i in order {
        at += r.below_mod(3) as usize;
        displs[i] = at;
        at += counts[i];
    }
    (displs, at + r.below_mod(2) as usize)
}

/// `len` elements of a byte pattern particular to `rank`: the background
/// of a receive buffer, which must stay as it is wherever no block lands
/// (and differs between ranks, so that copying a sender's gaps shows).
fn backdrop<T: Pod>(rank: usize, len: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); len];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).fill(0x5A ^ (rank as u8).wrapping_mul(37));
    v
}

/// `base` with `blocks[i]` placed at `displs[i]`.
fn placed<T: Pod>(mut base: Vec<T>, displs: &[usize], blocks: &[Vec<T>]) -> Vec<T> {
    let want = &mut base;
    for (d, b) in displs.iter().zip(blocks) {
        want[*d..*d + b.len()].copy_from_slice(b);
    }
    base
}

/// Waits for `r`, or polls it with `test` when `spin`.
fn complete(mut r: Request<'_>, spin: bool) -> pertinax::Result<()> {
    if !spin {
        return r.wait().map(|_| ());
    }
    while r.test()?.is_none() {
        std::thread::yield_now();
    }
    Ok(())
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

// ---- one collective against the reference ----------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Coll {
    Barrier,
    Ibarrier,
    Bcast,
    Ibcast,
    Reduce,
    ReduceInPlace,
    Ireduce,
    Allreduce,
    AllreduceInPlace,
    Iallreduce,
    Scan,
    Exscan,
    ReduceScatter,
    ReduceScatterBlock,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    AllgatherInPlace,
    Iallgather,
    Allgatherv,
    Alltoall,
    Ialltoall,
    Alltoallv,
}
use Coll::*;

const ALL: [Coll; 25] = [
    Barrier,
    Ibarrier,
    Bcast,
    Ibcast,
    Reduce,
    ReduceInPlace,
    Ireduce,
    Allreduce,
    AllreduceInPlace,
    Iallreduce,
    Scan,
    Exscan,
    ReduceScatter,
    ReduceScatterBlock,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    AllgatherInPlace,
    Iallgather,
    Allgatherv,
    Alltoall,
    Ialltoall,
    Alltoallv,
];

impl Coll {
    fn rooted(self) -> bool {
        matches!(
            self,
            Bcast
                | Ibcast
                | Reduce
                | ReduceInPlace
                | Ireduce
                | Gather
                | Gatherv
                | Scatter
                | Scatterv
        )
    }
    fn reducing(self) -> bool {
        matches!(
            self,
            Reduce
                | ReduceInPlace
                | Ireduce
                | Allreduce
                | AllreduceInPlace
                | Iallreduce
                | Scan
                | Exscan
                | ReduceScatter
                | ReduceScatterBlock
        )
    }
}

/// One call of `coll` on `c` with element type `t` (operation number `kp`
/// for reductions), `count` elements (per block for gathers, scatters and
/// all-to-alls), `root`; `cs` seeds the inputs.
fn one(c: &Comm, coll: Coll, t: u64, kp: u64, count: usize, root: usize, cs: u64) -> R {
    if coll.reducing() {
        by_type!(t, red(c, coll, kp, count, root, cs))
    } else {
        by_type!(t, mov(c, coll, count, root, cs))
    }
}

/// A reducing collective against the sequential rank-order reference.
fn red<T: Elem>(c: &Comm, coll: Coll, kp: u64, count: usize, root: usize, cs: u64) -> R {
    let (n, me) = (c.size(), c.rank().index());
    let k = T::OPS[(kp % T::OPS.len() as u64) as usize];
    let op = T::op(k);
    let spin = cs & 2 != 0;
    let ctx = format!(
        "{coll:?}<{}> {k:?} n={n} count={count} root={root} seed={cs:#x}",
        T::NAME
    );
    let fail = |m: String| format!("{ctx}: {m}");
    let ee = |x: Error| fail(e(x));
    let counts: Vec<usize> = match coll {
        ReduceScatter => {
            let mut r = SplitMix64::new(sd(cs, 1, 1));
            (0..n)
                .map(|_| r.below_mod((2 * count / n + 2) as u64) as usize)
                .collect()
        }
        ReduceScatterBlock => vec![count.div_ceil(n); n],
        _ => Vec::new(),
    };
    let len = if counts.is_empty() {
        count
    } else {
        counts.iter().sum()
    };
    let input = |r: usize| gen::<T>(cs, r, 0, len, k);
    // x0 ⊕ x1 ⊕ ... ⊕ x(upto-1), left to right.
    let fold = |upto: usize| -> Vec<T> {
        let mut acc = input(0);
        for r in 1..upto {
            for (a, x) in acc.iter_mut().zip(input(r)) {
                *a = T::f(k, *a, x);
            }
        }
        acc
    };
    let mine = input(me);
    match coll {
        Reduce | Ireduce => {
            // Elsewhere than at the root, recv is ignored: pass an empty
            // one or a full one that must stay untouched.
            let mut out = if me == root || cs & 1 != 0 {
                sentinel::<T>(len)
            } else {
                Vec::new()
            };
            if coll == Reduce {
                c.reduce(&mine, &mut out, &op, root)
            } else {
                pertinax::scope(|s| complete(c.ireduce(s, &mine, &mut out, &op, root)?, spin))
            }
            .map_err(ee)?;
            if me == root {
                cmp(&out, &fold(n)).map_err(fail)
            } else {
                cmp_raw(&out, &sentinel(out.len())).map_err(fail)
            }
        }
        ReduceInPlace => {
            let mut buf = mine.clone();
            c.reduce_in_place(&mut buf, &op, root).map_err(ee)?;
            if me == root {
                cmp(&buf, &fold(n)).map_err(fail)?;
            }
            Ok(())
        }
        Allreduce | AllreduceInPlace | Iallreduce => {
            let mut out = sentinel::<T>(len);
            match coll {
                Allreduce => c.allreduce(&mine, &mut out, &op),
                AllreduceInPlace => {
                    out.copy_from_slice(&mine);
                    c.allreduce_in_place(&mut out, &op)
                }
                _ => pertinax::scope(|s| complete(c.iallreduce(s, &mine, &mut out, &op)?, spin)),
            }
            .map_err(ee)?;
            cmp(&out, &fold(n)).map_err(fail)
        }
        Scan => {
            let mut out = sentinel::<T>(len);
            c.scan(&mine, &mut out, &op).map_err(ee)?;
            cmp(&out, &fold(me + 1)).map_err(fail)
        }
        Exscan => {
            let mut out = sentinel::<T>(len);
            c.exscan(&mine, &mut out, &op).map_err(ee)?;
            if me == 0 {
                cmp_raw(&out, &sentinel(len)).map_err(fail)
            } else {
                cmp(&out, &fold(me)).map_err(fail)
            }
        }
        ReduceScatter | ReduceScatterBlock => {
            let off: usize = counts[..me].iter().sum();
            let mut out = sentinel::<T>(counts[me]);
            if coll == ReduceScatter {
                c.reduce_scatter(&mine, &mut out, &counts, &op)
            } else {
                c.reduce_scatter_block(&mine, &mut out, &op)
            }
            .map_err(ee)?;
            cmp(&out, &fold(n)[off..off + counts[me]]).map_err(fail)
        }
        _ => Err(fail("not a reduction".into())),
    }
}

/// A data-movement collective (or barrier) against the reference.
fn mov<T: Elem>(c: &Comm, coll: Coll, count: usize, root: usize, cs: u64) -> R {
    let (n, me) = (c.size(), c.rank().index());
    let spin = cs & 2 != 0;
    let ctx = format!(
        "{coll:?}<{}> n={n} count={count} root={root} seed={cs:#x}",
        T::NAME
    );
    let fail = |m: String| format!("{ctx}: {m}");
    let ee = |x: Error| fail(e(x));
    // Block of data that rank `src` holds for `dst`.
    let blk = |src: usize, dst: usize, len: usize| raw::<T>(cs, src, dst, len);
    let rand_counts = |salt: usize| -> Vec<usize> {
        let mut r = SplitMix64::new(sd(cs, salt, 2));
        (0..n)
            .map(|_| r.below_mod(count as u64 + 1) as usize)
            .collect()
    };
    match coll {
        Barrier | Ibarrier => {
            // One rank enters late; nobody may leave before it entered.
            if (cs >> 8) as usize % n == me {
                std::thread::sleep(Duration::from_millis(2));
            }
            let enter = now_ns();
            if coll == Barrier {
                c.barrier()
            } else {
                pertinax::scope(|s| complete(c.ibarrier(s)?, spin))
            }
            .map_err(ee)?;
            let exit = now_ns();
            let mut all = vec![0u64; 2 * n];
            c.allgather(&[enter, exit], &mut all).map_err(ee)?;
            let last_in = all.iter().step_by(2).max().copied().unwrap_or(0);
            let first_out = all.iter().skip(1).step_by(2).min().copied().unwrap_or(0);
            check!(
                last_in <= first_out,
                "{ctx}: a rank left at {first_out} before the last entered at {last_in}"
            );
            Ok(())
        }
        Bcast | Ibcast => {
            let want = blk(root, 0, count);
            let mut buf = if me == root {
                want.clone()
            } else {
                sentinel(count)
            };
            if coll == Bcast {
                c.bcast(&mut buf, root)
            } else {
                pertinax::scope(|s| complete(c.ibcast(s, &mut buf, root)?, spin))
            }
            .map_err(ee)?;
            cmp_raw(&buf, &want).map_err(fail)
        }
        Gather => {
            let mine = blk(me, 0, count);
            let mut out = if me == root || cs & 1 != 0 {
                sentinel(n * count)
            } else {
                Vec::new()
            };
            c.gather(&mine, &mut out, root).map_err(ee)?;
            let want: Vec<T> = if me == root {
                (0..n).flat_map(|r| blk(r, 0, count)).collect()
            } else {
                sentinel(out.len())
            };
            cmp_raw(&out, &want).map_err(fail)
        }
        Gatherv => {
            let cnt = rand_counts(3);
            let (displs, len) = layout(sd(cs, 4, 4), &cnt);
            let mine = blk(me, 0, cnt[me]);
            let mut out = if me == root {
                backdrop(me, len)
            } else {
                Vec::new()
            };
            c.gatherv(&mine, &mut out, &cnt, &displs, root)
                .map_err(ee)?;
            if me == root {
                let blocks: Vec<Vec<T>> = (0..n).map(|r| blk(r, 0, cnt[r])).collect();
                cmp_raw(&out, &placed(backdrop(me, len), &displs, &blocks)).map_err(fail)?;
            }
            Ok(())
        }
        Scatter => {
            let all = blk(root, 0, n * count);
            let send = if me == root { all.clone() } else { Vec::new() };
            let mut out = sentinel(count);
            c.scatter(&send, &mut out, root).map_err(ee)?;
            cmp_raw(&out, &all[me * count..(me + 1) * count]).map_err(fail)
        }
        Scatterv => {
            // Blocks may overlap in the send buffer.
            let cnt = rand_counts(5);
            let mut r = SplitMix64::new(sd(cs, 6, 6));
            let len = cnt.iter().sum::<usize>() / 2 + cnt.iter().max().unwrap_or(&0) + 2;
            let displs: Vec<usize> = cnt
                .iter()
                .map(|&k| r.below_mod((len - k + 1) as u64) as usize)
                .collect();
            let all = blk(root, 0, len);
            let send = if me == root { all.clone() } else { Vec::new() };
            let mut out = sentinel(cnt[me]);
            c.scatterv(&send, &cnt, &displs, &mut out, root)
                .map_err(ee)?;
            cmp_raw(&out, &all[displs[me]..displs[me] + cnt[me]]).map_err(fail)
        }
        Allgather | AllgatherInPlace | Iallgather => {
            let want: Vec<T> = (0..n).flat_map(|r| blk(r, 0, count)).collect();
            let mine = blk(me, 0, count);
            let mut out = sentinel(n * count);
            match coll {
                Allgather => c.allgather(&mine, &mut out),
                AllgatherInPlace => {
                    out[me * count..(me + 1) * count].copy_from_slice(&mine);
                    c.allgather_in_place(&mut out)
                }
                _ => pertinax::scope(|s| complete(c.iallgather(s, &mine, &mut out)?, spin)),
            }
            .map_err(ee)?;
            cmp_raw(&out, &want).map_err(fail)
        }
        Allgatherv => {
            let cnt = rand_counts(7);
            let (displs, len) = layout(sd(cs, 8, 8), &cnt);
            let mine = blk(me, 0, cnt[me]);
            let mut out = backdrop(me, len);
            c.allgatherv(&mine, &mut out, &cnt, &displs).map_err(ee)?;
            let blocks: Vec<Vec<T>> = (0..n).map(|r| blk(r, 0, cnt[r])).collect();
            cmp_raw(&out, &placed(backdrop(me, len), &displs, &blocks)).map_err(fail)
        }
        Alltoall | Ialltoall => {
            let send: Vec<T> = (0..n).flat_map(|j| blk(me, j, count)).collect();
            let mut out = sentinel(n * count);
            if coll == Alltoall {
                c.alltoall(&send, &mut out)
            } else {
                pertinax::scope(|s| complete(c.ialltoall(s, &send, &mut out)?, spin))
            }
            .map_err(ee)?;
            let want: Vec<T> = (0..n).flat_map(|j| blk(j, me, count)).collect();
            cmp_raw(&out, &want).map_err(fail)
        }
        Alltoallv => {
            let cnt = |i: usize, j: usize| {
                SplitMix64::new(sd(cs ^ 0xA11, i, j)).below_mod(count as u64 + 1) as usize
            };
            let sc: Vec<usize> = (0..n).map(|j| cnt(me, j)).collect();
            let rc: Vec<usize> = (0..n).map(|i| cnt(i, me)).collect();
            let (sdis, slen) = layout(sd(cs, 9, me), &sc);
            let (rdis, rlen) = layout(sd(cs, 10, me), &rc);
            let sblocks: Vec<Vec<T>> = (0..n).map(|j| blk(me, j, sc[j])).collect();
            let send = placed(backdrop(n + me, slen), &sdis, &sblocks);
            let mut out = backdrop(me, rlen);
            c.alltoallv(&send, &sc, &sdis, &mut out, &rc, &rdis)
                .map_err(ee)?;
            let rblocks: Vec<Vec<T>> = (0..n).map(|i| blk(i, me, rc[i])).collect();
            cmp_raw(&out, &placed(backdrop(me, rlen), &rdis, &rblocks)).map_err(fail)
        }
        _ => Err(fail("not a data-movement collective".into())),
    }
}

// ---- scenarios ---------------------------------------------------------------

const COUNTS: [usize; 8] = [0, 1, 2, 3, 7, 100, 1000, 4099];

fn pick_count(p: &mut SplitMix64) -> usize {
    if p.below_mod(40) == 0 {
        9000
    } else {
        COUNTS[p.below_mod(COUNTS.len() as u64) as usize]
    }
}

/// The plan of `all` on one communicator (the same on each of its ranks):
/// every collective with every root twice with a random element type,
/// operation and count; then every reducing collective with every element
/// type and every one of its operations.
fn plan(c: &Comm, seed: u64) -> R {
    let n = c.size();
    let mut p = SplitMix64::new(sd(seed, n, 0));
    let mut call = 0;
    let mut next = || {
        call += 1;
        sd(seed, call, n)
    };
    for coll in ALL {
        let roots = if coll.rooted() { n } else { 1 };
        for root in 0..roots {
            for _ in 0..2 {
                let t = p.below_mod(NTYPES);
                let (kp, count) = (p.next_u64(), pick_count(&mut p));
                one(c, coll, t, kp, count, root, next())?;
            }
        }
    }
    for t in 0..NTYPES {
        for kp in 0..by_type!(t, nops()) as u64 {
            for coll in ALL.into_iter().filter(|c| c.reducing()) {
                let root = p.below_mod(n as u64) as usize;
                one(c, coll, t, kp, pick_count(&mut p), root, next())?;
            }
        }
    }
    Ok(())
}

/// `all SEED [world|split|self]`: [`plan`] on the world, on the
/// communicators of a three-way split with reversed keys, or on the self
/// communicator.
fn all(u: &Universe, a: &[String]) -> R {
    let seed = arg(a, 0, 1);
    let w = u.world();
    match a.get(1).map(String::as_str).unwrap_or("world") {
        "world" => plan(&w, seed),
        "split" => {
            let me = w.rank().index();
            let c = w
                .split(Some((me % 3) as u32), -(me as i32))
                .map_err(e)?
                .ok_or("split gave no communicator")?;
            let members: Vec<usize> = (0..w.size()).filter(|r| r % 3 == me % 3).rev().collect();
            check!(
                c.size() == members.len() && members[c.rank().index()] == me,
                "split: size {} rank {}",
                c.size(),
                c.rank()
            );
            plan(&c, seed)?;
            w.barrier().map_err(e)
        }
        "self" => plan(&u.self_comm(), seed),
        other => Err(format!("unknown communicator {other}")),
    }
}

/// `large SEED`: every collective with more than 1 MiB per call (per rank
/// for the reductions and bcast, in total per rank for the others).
fn large(u: &Universe, a: &[String]) -> R {
    let seed = arg(a, 0, 1);
    let w = u.world();
    let n = w.size();
    let mut call = 0;
    // (type, count): u64, f64, ValueIndex<f64> (12 B, unaligned), affine,
    // u8; each over 1 MiB.
    for (t, count) in [
        (2, 140_000),
        (4, 140_000),
        (5, 95_000),
        (8, 70_000),
        (0, 1_100_000),
    ] {
        for coll in ALL.into_iter().filter(|c| c.reducing()) {
            call += 1;
            one(&w, coll, t, call as u64, count, call % n, sd(seed, call, 0))?;
        }
    }
    for (t, total) in [(2, 140_000), (5, 95_000)] {
        for coll in ALL
            .into_iter()
            .filter(|c| !c.reducing() && !matches!(c, Barrier | Ibarrier))
        {
            call += 1;
            let count = if matches!(coll, Bcast | Ibcast) {
                total
            } else {
                total / n + 1
            };
            one(&w, coll, t, 0, count, call % n, sd(seed, call, 0))?;
        }
    }
    Ok(())
}

/// `noncomm SEED`: user operations on every reducing collective, every
/// root, counts up to the large-message algorithms.
fn noncomm(u: &Universe, a: &[String]) -> R {
    let seed = arg(a, 0, 1);
    let w = u.world();
    let n = w.size();
    let mut call = 0;
    // i32 with its user op (index 10 of its ops), Rec, affine, matrix.
    for (t, kp) in [(1, 10), (7, 0), (8, 0), (9, 0)] {
        for count in [1, 5, 3000, 20_000] {
            for coll in ALL.into_iter().filter(|c| c.reducing()) {
                let roots = if coll.rooted() { n } else { 1 };
                for root in 0..roots {
                    call += 1;
                    one(&w, coll, t, kp, count, root, sd(seed, call, 1))?;
                }
            }
        }
    }
    Ok(())
}

/// FNV-1a over result bytes.
struct Fnv(u64);

impl Fnv {
    fn add<T: Pod>(&mut self, v: &[T]) {
        for &b in bytemuck::cast_slice::<T, u8>(v) {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// Full-precision float reductions of one type, operation and count.
fn fp_case<T: Float>(
    w: &Comm,
    k: K,
    count: usize,
    cs: u64,
    jitter: &mut dyn FnMut(),
    h: &mut Fnv,
) -> R {
    let (n, me) = (w.size(), w.rank().index());
    let ctx = format!("fp<{}> {k:?} n={n} count={count} seed={cs:#x}", T::NAME);
    let fail = |m: String| format!("{ctx}: {m}");
    let ee = |x: Error| fail(e(x));
    let op = T::op(k);
    let input = |r: usize, len: usize| -> Vec<T> {
        let mut g = SplitMix64::new(sd(cs, r, 0));
        (0..len)
            .map(|_| {
                let u = (g.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                T::of(if k == K::Sum {
                    (u - 0.5) * 2f64.powi(g.below_mod(16) as i32 - 8)
                } else {
                    1.0 + (u - 0.5) / 8.0
                })
            })
            .collect()
    };
    // The rank-order reference and the error bound of any grouping.
    let reference = |lo: usize, hi: usize, len: usize| -> (Vec<T>, Vec<f64>) {
        let mut acc = input(lo, len);
        let mut mag: Vec<f64> = acc.iter().map(|x| x.to_f64().abs()).collect();
        for r in lo + 1..hi {
            for ((a, m), x) in acc.iter_mut().zip(&mut mag).zip(input(r, len)) {
                *a = T::f(k, *a, x);
                if k == K::Sum {
                    *m += x.to_f64().abs();
                }
            }
        }
        if k == K::Prod {
            mag = acc.iter().map(|x| x.to_f64().abs()).collect();
        }
        (acc, mag)
    };
    let close = |what: &str, got: &[T], (want, mag): &(Vec<T>, Vec<f64>)| -> R {
        let tol = 4.0 * n as f64 * T::EPS;
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let (g, w) = (g.to_f64(), w.to_f64());
            // `<=` so that a NaN fails.
            let ok = (g - w).abs() <= tol * mag[i] + f64::MIN_POSITIVE;
            check!(
                ok,
                "{ctx}: {what}: element {i}: {g:e}, rank-order reference {w:e}"
            );
        }
        Ok(())
    };
    let mine = input(me, count);
    let want = reference(0, n, count);
    // Allreduce: every variant, repeated, on every rank: one bit pattern.
    let mut first = vec![T::zeroed(); count];
    jitter();
    w.allreduce(&mine, &mut first, &op).map_err(ee)?;
    close("allreduce", &first, &want)?;
    for variant in 0..3 {
        let mut again = vec![T::zeroed(); count];
        jitter();
        match variant {
            0 => w.allreduce(&mine, &mut again, &op),
            1 => {
                again.copy_from_slice(&mine);
                w.allreduce_in_place(&mut again, &op)
            }
            _ => pertinax::scope(|s| w.iallreduce(s, &mine, &mut again, &op)?.wait().map(|_| ())),
        }
        .map_err(ee)?;
        cmp_raw(&again, &first)
            .map_err(|m| fail(format!("allreduce variant {variant} differs: {m}")))?;
    }
    let mut everyone = vec![T::zeroed(); n * count];
    w.allgather(&first, &mut everyone).map_err(ee)?;
    for r in 0..n {
        cmp_raw(&everyone[r * count..(r + 1) * count], &first)
            .map_err(|m| fail(format!("allreduce on rank {r} differs from rank {me}: {m}")))?;
    }
    h.add(&first);
    // Reduce to every root: the same bits at every root.
    let mut at_root = vec![T::zeroed(); count];
    for root in 0..n {
        let mut out = if me == root {
            vec![T::zeroed(); count]
        } else {
            Vec::new()
        };
        jitter();
        w.reduce(&mine, &mut out, &op, root).map_err(ee)?;
        if me == root {
            close("reduce", &out, &want)?;
            at_root = out;
        }
    }
    w.allgather(&at_root, &mut everyone).map_err(ee)?;
    for r in 0..n {
        cmp_raw(&everyone[r * count..(r + 1) * count], &at_root)
            .map_err(|m| fail(format!("reduce to root {r} differs from root {me}: {m}")))?;
    }
    h.add(&at_root);
    // Scan and exscan, twice each.
    for exclusive in [false, true] {
        let mut outs = [vec![T::zeroed(); count], vec![T::zeroed(); count]];
        for out in &mut outs {
            jitter();
            if exclusive {
                w.exscan(&mine, out, &op)
            } else {
                w.scan(&mine, out, &op)
            }
            .map_err(ee)?;
        }
        cmp_raw(&outs[1], &outs[0]).map_err(|m| fail(format!("repeated scan differs: {m}")))?;
        let hi = if exclusive { me } else { me + 1 };
        if hi > 0 {
            close("scan", &outs[0], &reference(0, hi, count))?;
        }
        h.add(&outs[0]);
    }
    // Reduce-scatter of blocks of count/n (at least 1).
    let b = count.div_ceil(n);
    let send = input(me, n * b);
    let whole = reference(0, n, n * b);
    let mut outs = [vec![T::zeroed(); b], vec![T::zeroed(); b]];
    for out in &mut outs {
        jitter();
        w.reduce_scatter_block(&send, out, &op).map_err(ee)?;
    }
    cmp_raw(&outs[1], &outs[0])
        .map_err(|m| fail(format!("repeated reduce_scatter differs: {m}")))?;
    let part = (
        whole.0[me * b..(me + 1) * b].to_vec(),
        whole.1[me * b..(me + 1) * b].to_vec(),
    );
    close("reduce_scatter_block", &outs[0], &part)?;
    h.add(&outs[0]);
    Ok(())
}

/// `fp SEED JITTER_US`: full-precision float sums and products; ranks sleep
/// up to JITTER_US before each call (seeded by the clock, so timing differs
/// between runs). Prints `HASH rank=R H` over the results' bits.
fn fp(u: &Universe, a: &[String]) -> R {
    let (seed, jit) = (arg(a, 0, 1), arg(a, 1, 0));
    let w = u.world();
    let me = w.rank().index();
    let mut jr = SplitMix64::new(now_ns() ^ me as u64);
    let mut jitter = || {
        if jit > 0 {
            std::thread::sleep(Duration::from_micros(jr.below_mod(jit + 1)));
        }
    };
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    let mut call = 0;
    for k in [K::Sum, K::Prod] {
        for count in [1, 3, 100, 5000, 20_000] {
            call += 1;
            fp_case::<f32>(&w, k, count, sd(seed, call, 2), &mut jitter, &mut h)?;
        }
        for count in [1, 2, 4099, 70_000] {
            call += 1;
            fp_case::<f64>(&w, k, count, sd(seed, call, 3), &mut jitter, &mut h)?;
        }
    }
    println!("HASH rank={me} {:016x}", h.0);
    Ok(())
}

/// Checks that `c` holds exactly `members` (world ranks, in rank order)
/// and that this process, world rank `me`, has its place among them.
fn check_members(c: &Comm, members: &[usize], me: usize, what: &str) -> R {
    check!(
        c.size() == members.len() && members.get(c.rank().index()) == Some(&me),
        "{what}: size {} rank {} for members {members:?}",
        c.size(),
        c.rank()
    );
    Ok(())
}

/// `overlap SEED ITERS`: each iteration starts nine non-blocking
/// collectives on four communicators (world, a dup, a split in halves, a
/// split in thirds with reversed keys; two or three on each), plus a
/// point-to-point exchange. Each rank starts them in its own random order
/// (keeping the order per communicator, as MPI requires), runs a blocking
/// allreduce and bcast while they are in flight, and completes them in its
/// own way (wait_all, wait_any, test_any, or one by one in reverse); then
/// every result is checked.
fn overlap(u: &Universe, a: &[String]) -> R {
    let (seed, iters) = (arg(a, 0, 1), arg(a, 1, 50));
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let d = w.dup().map_err(e)?;
    let h = w
        .split(Some((me % 2) as u32), me as i32)
        .map_err(e)?
        .ok_or("no half")?;
    let t = w
        .split(Some((me % 3) as u32), -(me as i32))
        .map_err(e)?
        .ok_or("no third")?;
    let hm: Vec<usize> = (0..n).filter(|r| r % 2 == me % 2).collect();
    let tm: Vec<usize> = (0..n).filter(|r| r % 3 == me % 3).rev().collect();
    check_members(&h, &hm, me, "half")?;
    check_members(&t, &tm, me, "third")?;
    let tr = t.rank().index();
    let mut mine = SplitMix64::new(sd(seed, me, 77));
    let counts = [0usize, 1, 5, 300, 5000];
    for it in 0..iters as usize {
        let cs = sd(seed, it, 5);
        let mut p = SplitMix64::new(cs);
        let mut cnt = || counts[p.below_mod(counts.len() as u64) as usize];
        let (ca, cb, cc, cd, ce, cg, ch, cq, cp) = (
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
        );
        let (rb, re) = ((cs >> 8) as usize % n, (cs >> 16) as usize % n);
        let rq = (cs >> 24) as usize % t.size();
        let ctx = format!("overlap iteration {it} seed {cs:#x}");
        // Inputs (by world rank) and output buffers.
        let a_in = gen::<u64>(cs, me, 1, ca, K::Sum);
        let mut a_out = sentinel::<u64>(ca);
        let mut b_buf = if me == rb {
            raw::<Rec>(cs, rb, 2, cb)
        } else {
            sentinel(cb)
        };
        let c_in = raw::<i32>(cs, me, 3, cc);
        let mut c_out = sentinel::<i32>(hm.len() * cc);
        let d_in: Vec<u8> = tm
            .iter()
            .flat_map(|&j| raw::<u8>(cs, me, 100 + j, cd))
            .collect();
        let mut d_out = sentinel::<u8>(tm.len() * cd);
        let e_in = gen::<[u64; 2]>(cs, me, 5, ce, K::UserNc);
        let mut e_out = if me == re {
            sentinel::<[u64; 2]>(ce)
        } else {
            Vec::new()
        };
        let g_in = gen::<[f64; 4]>(cs, me, 7, cg, K::UserNc);
        let mut g_out = sentinel::<[f64; 4]>(cg);
        let h_in = gen::<ValueIndex<f64>>(cs, me, 8, ch, K::MinLoc);
        let mut h_out = sentinel::<ValueIndex<f64>>(ch);
        let mut q_buf = if tr == rq {
            raw::<f64>(cs, tm[rq], 10, cq)
        } else {
            sentinel(cq)
        };
        let p_in = raw::<u8>(cs, me, 9, cp);
        let mut p_out = sentinel::<u8>(cp);
        let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
        // Start order: the four communicators' queues interleaved at random.
        let mut queues: Vec<Vec<u8>> = vec![
            vec![b'A', b'F', b'G', b'S', b'R'],
            vec![b'B', b'E'],
            vec![b'C', b'H'],
            vec![b'D', b'Q'],
        ];
        let mut order = Vec::new();
        while queues.iter().any(|q| !q.is_empty()) {
            let live: Vec<usize> = (0..4).filter(|&i| !queues[i].is_empty()).collect();
            let q = live[mine.below_mod(live.len() as u64) as usize];
            order.push(queues[q].remove(0));
        }
        let mode = mine.below_mod(4);
        pertinax::scope(|s| -> R {
            let mut slots = (
                Some(&mut a_out),
                Some(&mut b_buf),
                Some(&mut c_out),
                Some(&mut d_out),
                Some(&mut e_out),
                Some(&mut g_out),
                Some(&mut h_out),
                Some(&mut q_buf),
                Some(&mut p_out),
            );
            let mut reqs: Vec<Request<'_>> = Vec::new();
            for &op in &order {
                let miss = || format!("{ctx}: operation {} started twice", op as char);
                let r = match op {
                    b'A' => w.iallreduce(s, &a_in, slots.0.take().ok_or_else(miss)?, &Op::sum()),
                    b'B' => d.ibcast(s, slots.1.take().ok_or_else(miss)?, rb),
                    b'C' => h.iallgather(s, &c_in, slots.2.take().ok_or_else(miss)?),
                    b'D' => t.ialltoall(s, &d_in, slots.3.take().ok_or_else(miss)?),
                    b'E' => d.ireduce(
                        s,
                        &e_in,
                        slots.4.take().ok_or_else(miss)?,
                        &<[u64; 2]>::op(K::UserNc),
                        re,
                    ),
                    b'F' => w.ibarrier(s),
                    b'G' => w.iallreduce(
                        s,
                        &g_in,
                        slots.5.take().ok_or_else(miss)?,
                        &<[f64; 4]>::op(K::UserNc),
                    ),
                    b'H' => h.iallreduce(s, &h_in, slots.6.take().ok_or_else(miss)?, &Op::minloc()),
                    b'Q' => t.ibcast(s, slots.7.take().ok_or_else(miss)?, rq),
                    b'S' => w.isend(s, &p_in, next, (it % 1000) as i32),
                    _ => w.irecv(
                        s,
                        slots.8.take().ok_or_else(miss)?,
                        prev,
                        (it % 1000) as i32,
                    ),
                }
                .map_err(|x| format!("{ctx}: starting {}: {}", op as char, e(x)))?;
                reqs.push(r);
            }
            // Blocking collectives while all that is in flight, on two of
            // the same communicators (after the non-blocking ones on every
            // rank, so in the same order everywhere).
            let mut sum = [0u64; 3];
            w.allreduce(&[it as u64, me as u64, 1], &mut sum, &Op::sum())
                .map_err(|x| format!("{ctx}: blocking allreduce: {}", e(x)))?;
            let tri = (n * (n - 1) / 2) as u64;
            check!(
                sum == [(it * n) as u64, tri, n as u64],
                "{ctx}: blocking allreduce in flight gave {sum:?}"
            );
            let mut x = [if me == rb { cs } else { 0 }];
            d.bcast(&mut x, rb)
                .map_err(|x| format!("{ctx}: blocking bcast: {}", e(x)))?;
            check!(
                x[0] == cs,
                "{ctx}: blocking bcast in flight gave {:#x}",
                x[0]
            );
            let done = |x: Error| format!("{ctx}: completion mode {mode}: {}", e(x));
            match mode {
                0 => {
                    pertinax::wait_all(&mut reqs).map_err(|x| done(x.into()))?;
                }
                1 => {
                    while pertinax::wait_any(&mut reqs)
                        .map_err(|x| done(x.into()))?
                        .is_some()
                    {}
                }
                2 => {
                    let mut left = reqs.len();
                    while left > 0 {
                        if pertinax::test_any(&mut reqs)
                            .map_err(|x| done(x.into()))?
                            .is_some()
                        {
                            left -= 1;
                        } else {
                            std::thread::yield_now();
                        }
                    }
                }
                _ => {
                    while let Some(r) = reqs.pop() {
                        r.wait().map_err(done)?;
                    }
                }
            }
            Ok(())
        })?;
        let ctx = &ctx;
        let f = |what: &'static str| move |m: String| format!("{ctx}: {what}: {m}");
        let world: Vec<usize> = (0..n).collect();
        cmp(&a_out, &ref_fold::<u64>(cs, &world, 1, ca, K::Sum)).map_err(f("world iallreduce"))?;
        cmp_raw(&b_buf, &raw::<Rec>(cs, rb, 2, cb)).map_err(f("dup ibcast"))?;
        let want_c: Vec<i32> = hm.iter().flat_map(|&r| raw::<i32>(cs, r, 3, cc)).collect();
        cmp_raw(&c_out, &want_c).map_err(f("half iallgather"))?;
        let want_d: Vec<u8> = tm
            .iter()
            .flat_map(|&j| raw::<u8>(cs, j, 100 + me, cd))
            .collect();
        cmp_raw(&d_out, &want_d).map_err(f("third ialltoall"))?;
        if me == re {
            let want = ref_fold::<[u64; 2]>(cs, &world, 5, ce, K::UserNc);
            cmp(&e_out, &want).map_err(f("dup ireduce (affine)"))?;
        }
        cmp(&g_out, &ref_fold::<[f64; 4]>(cs, &world, 7, cg, K::UserNc))
            .map_err(f("world iallreduce (matrix)"))?;
        cmp(
            &h_out,
            &ref_fold::<ValueIndex<f64>>(cs, &hm, 8, ch, K::MinLoc),
        )
        .map_err(f("half iallreduce (minloc)"))?;
        cmp_raw(&q_buf, &raw::<f64>(cs, tm[rq], 10, cq)).map_err(f("third ibcast"))?;
        cmp_raw(&p_out, &raw::<u8>(cs, prev, 9, cp)).map_err(f("point-to-point"))?;
    }
    w.barrier().map_err(e)
}

/// Rank-order fold of `gen::<T>(cs, r, stream, len, k)` over `ranks`.
fn ref_fold<T: Elem>(cs: u64, ranks: &[usize], stream: usize, len: usize, k: K) -> Vec<T> {
    let mut acc: Option<Vec<T>> = None;
    for &r in ranks {
        let x = gen::<T>(cs, r, stream, len, k);
        acc = Some(match acc {
            None => x,
            Some(mut a) => {
                for (p, q) in a.iter_mut().zip(x) {
                    *p = T::f(k, *p, q);
                }
                a
            }
        });
    }
    acc.unwrap_or_default()
}

/// `longrun COUNT SEED`: COUNT small collectives back to back, alternating
/// between the world and a dup, each checked.
fn longrun(u: &Universe, a: &[String]) -> R {
    let (count, seed) = (arg(a, 0, 20_000), arg(a, 1, 1));
    let w = u.world();
    let d = w.dup().map_err(e)?;
    let mix = |i: u64, r: usize, j: usize| sd(seed ^ i.wrapping_mul(0x1_0000_0001), r, j);
    for i in 0..count {
        let c = if i % 3 == 2 { &d } else { &w };
        let (n, me) = (c.size(), c.rank().index());
        let root = (i as usize / 7) % n;
        let m = (i % 4) as usize;
        let fail = |m: String| format!("call {i} ({}): {m}", i % 10);
        let ee = |x: Error| fail(e(x));
        match i % 10 {
            0 => {
                let mine: Vec<u64> = (0..m).map(|j| mix(i, me, j)).collect();
                let mut out = vec![0u64; m];
                c.allreduce(&mine, &mut out, &Op::sum()).map_err(ee)?;
                let want: Vec<u64> = (0..m)
                    .map(|j| (0..n).fold(0u64, |s, r| s.wrapping_add(mix(i, r, j))))
                    .collect();
                check!(
                    out == want,
                    "{}",
                    fail(format!("allreduce {out:?} != {want:?}"))
                );
            }
            1 => {
                let want: Vec<u32> = (0..m).map(|j| mix(i, root, j) as u32).collect();
                let mut buf = if me == root { want.clone() } else { vec![0; m] };
                c.bcast(&mut buf, root).map_err(ee)?;
                check!(
                    buf == want,
                    "{}",
                    fail(format!("bcast {buf:?} != {want:?}"))
                );
            }
            2 => c.barrier().map_err(ee)?,
            3 => {
                let mine = [mix(i, me, 0)];
                let mut out = [0u64];
                c.reduce(
                    &mine,
                    if me == root { &mut out[..] } else { &mut [] },
                    &Op::max(),
                    root,
                )
                .map_err(ee)?;
                let want = (0..n).map(|r| mix(i, r, 0)).max().unwrap_or(0);
                check!(
                    me != root || out[0] == want,
                    "{}",
                    fail(format!("reduce {out:?} != {want}"))
                );
            }
            4 => {
                let mut out = vec![0u16; n];
                c.allgather(&[mix(i, me, 0) as u16], &mut out).map_err(ee)?;
                let want: Vec<u16> = (0..n).map(|r| mix(i, r, 0) as u16).collect();
                check!(out == want, "{}", fail(format!("allgather {out:?}")));
            }
            5 => {
                let send: Vec<u8> = (0..n).map(|j| mix(i, me, j) as u8).collect();
                let mut out = vec![0u8; n];
                c.alltoall(&send, &mut out).map_err(ee)?;
                let want: Vec<u8> = (0..n).map(|j| mix(i, j, me) as u8).collect();
                check!(
                    out == want,
                    "{}",
                    fail(format!("alltoall {out:?} != {want:?}"))
                );
            }
            6 => {
                let x = |r: usize| [mix(i, r, 0) | 1, mix(i, r, 1)];
                let op = <[u64; 2]>::op(K::UserNc);
                let mut out = [[0u64; 2]];
                c.scan(&[x(me)], &mut out, &op).map_err(ee)?;
                let want = (1..=me).fold(x(0), |acc, r| affine(&acc, &x(r)));
                check!(out[0] == want, "{}", fail("scan (affine)".into()));
                let mut ex = [[7u64; 2]];
                c.exscan(&[x(me)], &mut ex, &op).map_err(ee)?;
                let want = if me == 0 {
                    [7, 7]
                } else {
                    (1..me).fold(x(0), |acc, r| affine(&acc, &x(r)))
                };
                check!(ex[0] == want, "{}", fail("exscan (affine)".into()));
            }
            7 => {
                let mine = [mix(i, me, 0)];
                let mut sum = [0u64];
                let mut b = if me == root { [mix(i, root, 1)] } else { [0] };
                pertinax::scope(|s| -> pertinax::Result<()> {
                    let mut reqs = vec![
                        c.iallreduce(s, &mine, &mut sum, &Op::bxor())?,
                        c.ibcast(s, &mut b, root)?,
                        c.ibarrier(s)?,
                    ];
                    pertinax::wait_all(&mut reqs)
                        .map(|_| ())
                        .map_err(Into::into)
                })
                .map_err(ee)?;
                let want = (0..n).fold(0, |x, r| x ^ mix(i, r, 0));
                check!(
                    sum[0] == want && b[0] == mix(i, root, 1),
                    "{}",
                    fail("overlapped trio".into())
                );
            }
            8 => {
                let send: Vec<u32> = (0..n * m).map(|j| mix(i, me, j) as u32).collect();
                let mut out = vec![0u32; m];
                c.reduce_scatter_block(&send, &mut out, &Op::bxor())
                    .map_err(ee)?;
                let want: Vec<u32> = (0..m)
                    .map(|j| (0..n).fold(0, |x, r| x ^ mix(i, r, me * m + j) as u32))
                    .collect();
                check!(
                    out == want,
                    "{}",
                    fail(format!("reduce_scatter_block {out:?} != {want:?}"))
                );
            }
            _ => {
                let mut all = if me == root {
                    vec![0i64; n]
                } else {
                    Vec::new()
                };
                c.gather(&[mix(i, me, 0) as i64], &mut all, root)
                    .map_err(ee)?;
                let send: Vec<i64> = if me == root {
                    all.iter().rev().copied().collect()
                } else {
                    Vec::new()
                };
                let mut got = [0i64];
                c.scatter(&send, &mut got, root).map_err(ee)?;
                check!(
                    got[0] == mix(i, n - 1 - me, 0) as i64,
                    "{}",
                    fail("gather then scatter".into())
                );
            }
        }
    }
    w.barrier().map_err(e)
}

/// `badargs`: consistent bad arguments give typed errors on every rank
/// without communication (a checked allreduce after each proves that the
/// ranks still agree); zero counts, the self communicator and a freed
/// communicator.
fn badargs(u: &Universe, _a: &[String]) -> R {
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let mut step = 0u64;
    let mut sync = |what: &str| -> R {
        step += 1;
        let mut o = [0u64];
        w.allreduce(&[step], &mut o, &Op::sum())
            .map_err(|x| format!("after {what}: {}", e(x)))?;
        check!(
            o[0] == step * n as u64,
            "after {what}: ranks out of step ({})",
            o[0]
        );
        Ok(())
    };
    let rank_err = |bad: i32, what: &str, r: pertinax::Result<()>| -> R {
        match r {
            Err(Error::InvalidRank { rank, size }) if rank == Rank(bad) && size == n => Ok(()),
            other => Err(format!(
                "{what} with root {bad}: expected InvalidRank, got {other:?}"
            )),
        }
    };
    let arg_err = |what: &str, r: pertinax::Result<()>| -> R {
        match r {
            Err(Error::InvalidArgument(_)) => Ok(()),
            other => Err(format!("{what}: expected InvalidArgument, got {other:?}")),
        }
    };
    let nb = |r: pertinax::Result<Request<'_>>| r.and_then(|q| q.wait()).map(|_| ());
    for bad in [n as i32, n as i32 + 5, -1, i32::MIN, i32::MAX] {
        let root = Rank(bad);
        let (x, mut o, mut b) = ([1u32; 4], [0u32; 4], [2u32; 4]);
        let mut big = vec![0u32; 4 * n];
        rank_err(bad, "bcast", w.bcast(&mut b, root))?;
        rank_err(
            bad,
            "ibcast",
            pertinax::scope(|s| nb(w.ibcast(s, &mut b, root))),
        )?;
        rank_err(bad, "reduce", w.reduce(&x, &mut o, &Op::sum(), root))?;
        rank_err(
            bad,
            "reduce_in_place",
            w.reduce_in_place(&mut b, &Op::sum(), root),
        )?;
        rank_err(
            bad,
            "ireduce",
            pertinax::scope(|s| nb(w.ireduce(s, &x, &mut o, &Op::sum(), root))),
        )?;
        rank_err(bad, "gather", w.gather(&x, &mut big, root))?;
        rank_err(
            bad,
            "gatherv",
            w.gatherv(
                &x,
                &mut big,
                &vec![4; n],
                &(0..n).map(|i| 4 * i).collect::<Vec<_>>(),
                root,
            ),
        )?;
        rank_err(bad, "scatter", w.scatter(&big, &mut o, root))?;
        rank_err(
            bad,
            "scatterv",
            w.scatterv(
                &big,
                &vec![4; n],
                &(0..n).map(|i| 4 * i).collect::<Vec<_>>(),
                &mut o,
                root,
            ),
        )?;
        sync("bad roots")?;
    }
    let op = Op::<u32>::sum();
    let (x3, mut o4) = ([1u32; 3], [0u32; 4]);
    arg_err("allreduce 3 into 4", w.allreduce(&x3, &mut o4, &op))?;
    arg_err(
        "iallreduce 3 into 4",
        pertinax::scope(|s| nb(w.iallreduce(s, &x3, &mut o4, &op))),
    )?;
    arg_err("scan 3 into 4", w.scan(&x3, &mut o4, &op))?;
    arg_err("exscan 3 into 4", w.exscan(&x3, &mut o4, &op))?;
    sync("reduction lengths")?;
    let mut odd = vec![0u32; 2 * n + 1];
    arg_err("allgather", w.allgather(&[1u32, 2], &mut odd))?;
    arg_err(
        "iallgather",
        pertinax::scope(|s| nb(w.iallgather(s, &[1u32, 2], &mut odd))),
    )?;
    if n > 1 {
        arg_err("allgather_in_place", w.allgather_in_place(&mut odd))?;
        let send = vec![0u32; 2 * n + 1];
        arg_err("alltoall of a non-multiple", w.alltoall(&send, &mut odd))?;
    }
    let send = vec![0u32; 2 * n];
    arg_err("alltoall with unequal buffers", w.alltoall(&send, &mut odd))?;
    arg_err(
        "ialltoall with unequal buffers",
        pertinax::scope(|s| nb(w.ialltoall(s, &send, &mut odd))),
    )?;
    sync("gather/alltoall lengths")?;
    let mut one = [0u32; 1];
    arg_err(
        "reduce_scatter with n+1 counts",
        w.reduce_scatter(&send, &mut one, &vec![1; n + 1], &op),
    )?;
    arg_err(
        "reduce_scatter with send != sum of counts",
        w.reduce_scatter(&send, &mut one, &vec![1; n], &op),
    )?;
    arg_err(
        "reduce_scatter with recv != my count",
        w.reduce_scatter(&send, &mut odd, &vec![2; n], &op),
    )?;
    arg_err(
        "reduce_scatter_block with send != n*recv",
        w.reduce_scatter_block(&odd, &mut one, &op),
    )?;
    sync("reduce_scatter lengths")?;
    let cnt = vec![2usize; n];
    let dis: Vec<usize> = (0..n).map(|i| 2 * i).collect();
    let mut recv = vec![0u32; 2 * n];
    arg_err(
        "allgatherv with n+1 counts",
        w.allgatherv(
            &[1u32, 2],
            &mut recv,
            &vec![2; n + 1],
            &(0..=n).collect::<Vec<_>>(),
        ),
    )?;
    arg_err(
        "allgatherv with a block past the end",
        w.allgatherv(
            &[1u32, 2],
            &mut recv,
            &cnt,
            &dis.iter().map(|d| d + 1).collect::<Vec<_>>(),
        ),
    )?;
    arg_err(
        "allgatherv with my count != send",
        w.allgatherv(&[1u32, 2, 3], &mut recv, &cnt, &dis),
    )?;
    arg_err(
        "alltoallv with n-1 counts",
        w.alltoallv(&send, &cnt[1..], &dis[1..], &mut recv, &cnt, &dis),
    )?;
    arg_err(
        "alltoallv with a send block past the end",
        w.alltoallv(&send[1..], &cnt, &dis, &mut recv, &cnt, &dis),
    )?;
    arg_err(
        "alltoallv with a receive block past the end",
        w.alltoallv(&send, &cnt, &dis, &mut recv[1..], &cnt, &dis),
    )?;
    let mut rc = cnt.clone();
    rc[me] = 1;
    arg_err(
        "alltoallv with self block 2 vs 1",
        w.alltoallv(&send, &cnt, &dis, &mut recv, &rc, &dis),
    )?;
    sync("v-collective layouts")?;
    // Zero counts.
    let (z, mut zo) = ([0u64; 0], [0u64; 0]);
    let zc = vec![0usize; n];
    w.bcast(&mut zo, n - 1).map_err(e)?;
    w.reduce(&z, &mut zo, &Op::sum(), 0).map_err(e)?;
    w.allreduce(&z, &mut zo, &Op::sum()).map_err(e)?;
    w.allreduce_in_place(&mut zo, &Op::max()).map_err(e)?;
    w.scan(&z, &mut zo, &Op::sum()).map_err(e)?;
    w.exscan(&z, &mut zo, &Op::sum()).map_err(e)?;
    w.reduce_scatter(&z, &mut zo, &zc, &Op::sum()).map_err(e)?;
    w.reduce_scatter_block(&z, &mut zo, &Op::sum()).map_err(e)?;
    w.gather(&z, &mut zo, 0).map_err(e)?;
    w.gatherv(&z, &mut zo, &zc, &zc, n - 1).map_err(e)?;
    w.scatter(&z, &mut zo, 0).map_err(e)?;
    w.scatterv(&z, &zc, &zc, &mut zo, n - 1).map_err(e)?;
    w.allgather(&z, &mut zo).map_err(e)?;
    w.allgather_in_place(&mut zo).map_err(e)?;
    w.allgatherv(&z, &mut zo, &zc, &zc).map_err(e)?;
    w.alltoall(&z, &mut zo).map_err(e)?;
    w.alltoallv(&z, &zc, &zc, &mut zo, &zc, &zc).map_err(e)?;
    pertinax::scope(|s| -> pertinax::Result<()> {
        let mut reqs = vec![w.ibarrier(s)?];
        pertinax::wait_all(&mut reqs)
            .map(|_| ())
            .map_err(Into::into)
    })
    .map_err(e)?;
    sync("zero counts")?;
    // The self communicator: everything, and its own bad root.
    let me_only = u.self_comm();
    check!(
        me_only.size() == 1 && me_only.rank() == Rank(0),
        "self comm shape"
    );
    plan(&me_only, 99 + me as u64)?;
    let r = me_only.bcast(&mut [1u8], 1);
    check!(
        matches!(
            r,
            Err(Error::InvalidRank {
                rank: Rank(1),
                size: 1
            })
        ),
        "bcast on self with root 1: {r:?}"
    );
    // A freed communicator.
    let d = w.dup().map_err(e)?;
    d.free().map_err(e)?;
    let mut o = [0u32];
    for (what, r) in [
        ("barrier", d.barrier()),
        ("allreduce", d.allreduce(&[1u32], &mut o, &op)),
        ("bcast", d.bcast(&mut o, 0)),
        ("ibarrier", pertinax::scope(|s| nb(d.ibarrier(s)))),
    ] {
        check!(
            matches!(r, Err(Error::CommFreed)),
            "{what} on a freed communicator: {r:?}"
        );
    }
    sync("freed communicator")
}

/// `mismatch BYTES less|more`: the root broadcasts BYTES, the other ranks
/// expect half as many (`less`) or twice as many (`more`). Run on at most
/// three ranks, so that every other rank receives from the root. The
/// receivers report `InvalidArgument` (as documented); the root succeeds;
/// afterwards the communicator still works.
fn mismatch(u: &Universe, a: &[String]) -> R {
    let bytes = arg(a, 0, 64) as usize;
    let less = a.get(1).map(String::as_str) != Some("more");
    let w = u.world();
    let me = w.rank().index();
    check!(
        w.size() <= 3,
        "mismatch needs every rank to be a child of the root"
    );
    let theirs = if less { bytes / 2 } else { bytes * 2 };
    let mut buf = vec![7u8; if me == 0 { bytes } else { theirs }];
    let r = w.bcast(&mut buf, 0);
    // A wrong error kind is reported at the end: first see whether the
    // root finishes and the communicator still works.
    let mut kind = Ok(());
    if me == 0 {
        check!(r.is_ok(), "root sent {bytes} bytes: got {r:?}");
    } else if !matches!(r, Err(Error::InvalidArgument(_))) {
        let m = format!(
            "root sent {bytes} bytes, rank {me} expected {theirs}: got {r:?}, expected InvalidArgument"
        );
        eprintln!("rank {me}: {m} (checking the rest before failing)");
        kind = Err(m);
    }
    let mut o = [0u64];
    w.allreduce(&[1u64], &mut o, &Op::sum()).map_err(e)?;
    check!(
        o[0] == w.size() as u64,
        "allreduce after the mismatch gave {}",
        o[0]
    );
    kind
}

/// `allreduce COUNT`: one blocking allreduce of COUNT u64 (sum), checked.
fn allreduce(u: &Universe, a: &[String]) -> R {
    let count = arg(a, 0, 1024) as usize;
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let mine: Vec<u64> = (0..count).map(|i| (i * n + me) as u64).collect();
    let mut out = vec![0u64; count];
    w.allreduce(&mine, &mut out, &Op::sum()).map_err(e)?;
    let tri = (n * (n - 1) / 2) as u64;
    let ok = out
        .iter()
        .enumerate()
        .all(|(i, &x)| x == (i * n * n) as u64 + tri);
    check!(ok, "allreduce of {count} u64 on {n} ranks: wrong sums");
    Ok(())
}

/// `agv reversed|gaps|zeros`: allgatherv of one u32 per rank (none for
/// `zeros`) with blocks in reverse rank order (`reversed`, `zeros`) or in
/// rank order with a one-element gap after each (`gaps`); the rest of the
/// receive buffer holds a pattern of this rank that must stay untouched.
fn agv(u: &Universe, a: &[String]) -> R {
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let how = a.first().map(String::as_str).unwrap_or("reversed");
    let (count, displs): (usize, Vec<usize>) = match how {
        "gaps" => (1, (0..n).map(|i| 2 * i).collect()),
        "zeros" => (0, (0..n).map(|i| 2 * (n - 1 - i)).collect()),
        _ => (1, (0..n).map(|i| n - 1 - i).collect()),
    };
    let len = 2 * n;
    let mut out = vec![0xEE00 + me as u32; len];
    let counts = vec![count; n];
    let mine = vec![1000 + me as u32; count];
    w.allgatherv(&mine, &mut out, &counts, &displs).map_err(e)?;
    let mut want = vec![0xEE00 + me as u32; len];
    for (r, &d) in displs.iter().enumerate() {
        want[d..d + count].fill(1000 + r as u32);
    }
    check!(
        out == want,
        "allgatherv ({how}) with counts {counts:?} displs {displs:?}: got {out:x?}, expected {want:x?}"
    );
    Ok(())
}

/// `skew BYTES`: alltoallv in which rank 0 sends BYTES to rank 1 and every
/// other block is one byte.
fn skew(u: &Universe, a: &[String]) -> R {
    let bytes = arg(a, 0, 20_000) as usize;
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let cnt = |i: usize, j: usize| if i == 0 && j == 1 { bytes } else { 1 };
    let sc: Vec<usize> = (0..n).map(|j| cnt(me, j)).collect();
    let rc: Vec<usize> = (0..n).map(|i| cnt(i, me)).collect();
    let disp = |c: &[usize]| {
        c.iter()
            .scan(0, |a, &x| Some(std::mem::replace(a, *a + x)))
            .collect::<Vec<_>>()
    };
    let (sd_, rd) = (disp(&sc), disp(&rc));
    let send: Vec<u8> = (0..n)
        .flat_map(|j| vec![(me * 16 + j) as u8; sc[j]])
        .collect();
    let mut recv = vec![0u8; rc.iter().sum()];
    w.alltoallv(&send, &sc, &sd_, &mut recv, &rc, &rd)
        .map_err(e)?;
    let want: Vec<u8> = (0..n)
        .flat_map(|i| vec![(i * 16 + me) as u8; rc[i]])
        .collect();
    check!(
        recv == want,
        "alltoallv with one {bytes}-byte block: wrong data"
    );
    Ok(())
}

fn main() {
    let sc = Scenario::<Collective>::from_args();
    let u = setup("init", pertinax::init());
    let w = u.world();
    let a = sc.args();
    let r: R = match sc.scenario() {
        Collective::All => all(&u, a),
        Collective::Large => large(&u, a),
        Collective::Noncomm => noncomm(&u, a),
        Collective::Fp => fp(&u, a),
        Collective::Overlap => overlap(&u, a),
        Collective::Longrun => longrun(&u, a),
        Collective::Badargs => badargs(&u, a),
        Collective::Mismatch => mismatch(&u, a),
        Collective::Skew => skew(&u, a),
        Collective::Agv => agv(&u, a),
        Collective::Allreduce => allreduce(&u, a),
    };
    report(sc.name(), w.rank().index(), r.map(|()| String::new())).or_exit();
    setup("finalize", u.finalize());
}
