//! Every operation on every type against a scalar reference, through the
//! typed path and the byte path (aligned and unaligned).

use std::fmt::Debug;
use std::mem::size_of;

use bytemuck::Pod;

use super::{Op, ValueIndex};
use crate::error::Error;

/// The seeded generator every test of the project draws from.
type Gen = pertinax_wire::rng::SplitMix64;

/// Random values of a type, with its edge cases mixed in.
trait Sample: Pod + Debug {
    fn sample(g: &mut Gen) -> Self;
    /// Bitwise equal, except that any two NaNs are the same.
    fn same(a: Self, b: Self) -> bool;
}

macro_rules! int_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn sample(g: &mut Gen) -> Self {
                let r = g.next_u64();
                match r % 8 {
                    0 => <$t>::MIN,
                    1 => <$t>::MAX,
                    2 => 0,
                    3 => (r >> 8) as $t % 4, // small values: ties, logical 0/1
                    _ => ((u128::from(g.next_u64()) << 64) | u128::from(r)) as $t,
                }
            }
            fn same(a: Self, b: Self) -> bool {
                a == b
            }
        }
    )*};
}
int_sample!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

macro_rules! float_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn sample(g: &mut Gen) -> Self {
                let r = g.next_u64();
                match r % 16 {
                    0 => <$t>::NAN,
                    1 => -<$t>::NAN,
                    2 => <$t>::INFINITY,
                    3 => <$t>::NEG_INFINITY,
                    4 => 0.0,
                    5 => -0.0,
                    6 => ((r >> 8) % 4) as $t, // small values: ties
                    _ => ((r >> 11) as f64 / (1u64 << 53) as f64 * 2e6 - 1e6) as $t,
                }
            }
            fn same(a: Self, b: Self) -> bool {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
        }
    )*};
}
float_sample!(f32, f64);

impl<T: Sample> Sample for ValueIndex<T> {
    fn sample(g: &mut Gen) -> Self {
        ValueIndex::new(T::sample(g), (g.next_u64() % 4) as i32)
    }
    fn same(a: Self, b: Self) -> bool {
        T::same(a.value(), b.value()) && a.index() == b.index()
    }
}

impl<T: Sample, const N: usize> Sample for [T; N]
where
    [T; N]: Pod,
{
    fn sample(g: &mut Gen) -> Self {
        std::array::from_fn(|_| T::sample(g))
    }
    fn same(a: Self, b: Self) -> bool {
        a.iter().zip(&b).all(|(&x, &y)| T::same(x, y))
    }
}

fn all_same<T: Sample>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| T::same(x, y))
}

/// `bytes` copied into a fresh buffer at byte offset `offset`.
fn at_offset(bytes: &[u8], offset: usize) -> Vec<u8> {
    let mut v = vec![0u8; offset + bytes.len()];
    v[offset..].copy_from_slice(bytes);
    v
}

/// Checks `op` against `reference(left, right)` on random data of several
/// lengths, in both operand orders, through `Op::combine` and through the
/// erased byte path with both buffers aligned and misaligned by 1 byte.
fn check<T: Sample>(op: Op<T>, reference: impl Fn(T, T) -> T) {
    let mut g = Gen::new(size_of::<T>() as u64 * 7919);
    let erased = op.erase();
    assert_eq!(erased.elem_size(), size_of::<T>());
    assert_eq!(erased.is_commutative(), op.is_commutative());
    for len in [0, 1, 3, 17, 64, 1000, 4099] {
        let acc0: Vec<T> = (0..len).map(|_| T::sample(&mut g)).collect();
        let rhs: Vec<T> = (0..len).map(|_| T::sample(&mut g)).collect();
        for acc_is_left in [true, false] {
            let expected: Vec<T> = acc0
                .iter()
                .zip(&rhs)
                .map(|(&a, &b)| {
                    if acc_is_left {
                        reference(a, b)
                    } else {
                        reference(b, a)
                    }
                })
                .collect();
            let mut acc = acc0.clone();
            op.combine(&mut acc, &rhs, acc_is_left).unwrap();
            assert!(
                all_same(&acc, &expected),
                "{op:?} len {len} acc_is_left {acc_is_left}:\n got {acc:?}\nwant {expected:?}\n acc {acc0:?}\n rhs {rhs:?}"
            );
            let rhs_bytes: &[u8] = bytemuck::cast_slice(&rhs);
            for (acc_off, rhs_off) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let mut acc_buf = at_offset(bytemuck::cast_slice(&acc0), acc_off);
                let rhs_buf = at_offset(rhs_bytes, rhs_off);
                erased
                    .combine_bytes(&mut acc_buf[acc_off..], &rhs_buf[rhs_off..], acc_is_left)
                    .unwrap();
                let got: Vec<T> = acc_buf[acc_off..]
                    .chunks_exact(size_of::<T>().max(1))
                    .map(bytemuck::pod_read_unaligned)
                    .collect();
                assert!(
                    all_same(&got, &acc),
                    "{op:?} len {len} acc_is_left {acc_is_left} offsets {acc_off}/{rhs_off}"
                );
            }
        }
    }
}

/// Reference `min`/`max` for floats, written without the implementation's
/// bit tricks: NaN propagates, -0 < +0.
macro_rules! float_ref {
    ($t:ty) => {{
        fn min(a: $t, b: $t) -> $t {
            if a.is_nan() || b.is_nan() {
                <$t>::NAN
            } else if a == 0.0 && b == 0.0 {
                if a.is_sign_negative() {
                    a
                } else {
                    b
                }
            } else if a < b {
                a
            } else {
                b
            }
        }
        fn max(a: $t, b: $t) -> $t {
            if a.is_nan() || b.is_nan() {
                <$t>::NAN
            } else if a == 0.0 && b == 0.0 {
                if a.is_sign_positive() {
                    a
                } else {
                    b
                }
            } else if a > b {
                a
            } else {
                b
            }
        }
        (min as fn($t, $t) -> $t, max as fn($t, $t) -> $t)
    }};
}

/// A ranking key for floats in `minloc` (smaller ranks first): NaN, then
/// -inf .. -0 < +0 .. +inf. For `maxloc` the numbers reverse; NaN stays
/// first.
fn float_rank(x: f64, for_max: bool) -> (u8, i128) {
    if x.is_nan() {
        return (0, 0);
    }
    // `f64::total_cmp`'s key: monotonic in x, with -0 < +0.
    let bits = x.to_bits() as i64;
    let key = i128::from(bits ^ (((bits >> 63) as u64) >> 1) as i64);
    (1, if for_max { -key } else { key })
}

/// Reference `minloc`/`maxloc` for integers.
fn int_loc_ref<T: Copy + Ord>(
    for_max: bool,
) -> impl Fn(ValueIndex<T>, ValueIndex<T>) -> ValueIndex<T> {
    move |a, b| {
        let (va, vb) = (a.value(), b.value());
        let b_wins = if for_max { vb > va } else { vb < va };
        if b_wins || (va == vb && b.index() < a.index()) {
            b
        } else {
            a
        }
    }
}

/// Reference `minloc`/`maxloc` on a ranking key: smaller key wins, then
/// smaller index, then the left operand.
fn loc_ref<T: Copy>(
    key: impl Fn(T) -> (u8, i128),
) -> impl Fn(ValueIndex<T>, ValueIndex<T>) -> ValueIndex<T> {
    move |a, b| {
        let ka = (key(a.value()), a.index());
        let kb = (key(b.value()), b.index());
        if kb < ka {
            b
        } else {
            a
        }
    }
}

macro_rules! int_tests {
    ($($name:ident: $t:ty),*) => {$(
        #[test]
        fn $name() {
            check(Op::<$t>::sum(), <$t>::wrapping_add);
            check(Op::<$t>::prod(), <$t>::wrapping_mul);
            check(Op::<$t>::min(), |a, b| std::cmp::min(a, b));
            check(Op::<$t>::max(), |a, b| std::cmp::max(a, b));
            check(Op::<$t>::band(), |a, b| a & b);
            check(Op::<$t>::bor(), |a, b| a | b);
            check(Op::<$t>::bxor(), |a, b| a ^ b);
            check(Op::<$t>::land(), |a, b| <$t>::from(a != 0 && b != 0));
            check(Op::<$t>::lor(), |a, b| <$t>::from(a != 0 || b != 0));
            check(Op::<$t>::lxor(), |a, b| <$t>::from((a != 0) != (b != 0)));
            check(Op::<ValueIndex<$t>>::minloc(), int_loc_ref(false));
            check(Op::<ValueIndex<$t>>::maxloc(), int_loc_ref(true));
        }
    )*};
}

int_tests!(
    ops_i8: i8, ops_i16: i16, ops_i32: i32, ops_i64: i64, ops_i128: i128, ops_isize: isize,
    ops_u8: u8, ops_u16: u16, ops_u32: u32, ops_u64: u64, ops_u128: u128, ops_usize: usize
);

#[test]
fn ops_f32() {
    let (min, max) = float_ref!(f32);
    check(Op::<f32>::sum(), |a, b| a + b);
    check(Op::<f32>::prod(), |a, b| a * b);
    check(Op::<f32>::min(), min);
    check(Op::<f32>::max(), max);
    check(
        Op::<ValueIndex<f32>>::minloc(),
        loc_ref(|v: f32| float_rank(f64::from(v), false)),
    );
    check(
        Op::<ValueIndex<f32>>::maxloc(),
        loc_ref(|v: f32| float_rank(f64::from(v), true)),
    );
}

#[test]
fn ops_f64() {
    let (min, max) = float_ref!(f64);
    check(Op::<f64>::sum(), |a, b| a + b);
    check(Op::<f64>::prod(), |a, b| a * b);
    check(Op::<f64>::min(), min);
    check(Op::<f64>::max(), max);
    check(
        Op::<ValueIndex<f64>>::minloc(),
        loc_ref(|v: f64| float_rank(v, false)),
    );
    check(
        Op::<ValueIndex<f64>>::maxloc(),
        loc_ref(|v: f64| float_rank(v, true)),
    );
}

/// 2x2 row-major matrix product: associative, not commutative.
fn matmul(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
    ]
}

#[test]
fn user_op_keeps_operand_order() {
    let op = Op::user(matmul, false);
    assert!(!op.is_commutative());
    let a = [1.0, 2.0, 3.0, 4.0];
    let b = [0.0, 1.0, 1.0, 0.0];
    assert_ne!(matmul(&a, &b), matmul(&b, &a));
    check(op.clone(), |x, y| matmul(&x, &y));

    let mut acc = [a];
    op.combine(&mut acc, &[b], true).unwrap();
    assert_eq!(acc, [[2.0, 1.0, 4.0, 3.0]]); // a·b swaps columns
    let mut acc = [a];
    op.combine(&mut acc, &[b], false).unwrap();
    assert_eq!(acc, [[3.0, 4.0, 1.0, 2.0]]); // b·a swaps rows
}

#[test]
fn user_op_concatenation_in_u64() {
    // Decimal-digit concatenation: "12" ⊕ "345" = "12345".
    let concat = Op::<u64>::user(|a, b| a * 10u64.pow(b.to_string().len() as u32) + b, false);
    let mut acc = [12u64, 7];
    concat.combine(&mut acc, &[345, 8], true).unwrap();
    assert_eq!(acc, [12345, 78]);
    let mut acc = [12u64, 7];
    concat.combine(&mut acc, &[345, 8], false).unwrap();
    assert_eq!(acc, [34512, 87]);
    // Reducing ranks 0..4 left to right, as a collective in rank order does.
    let mut acc = [1u64];
    for x in 2..=4 {
        concat.combine(&mut acc, &[x], true).unwrap();
    }
    assert_eq!(acc, [1234]);
    assert!(Op::<u64>::user(|a, b| a ^ b, true).is_commutative());
    assert!(Op::<u64>::sum().is_commutative());
}

#[test]
fn length_mismatch_is_invalid_argument() {
    let mut acc = [1.0f64, 2.0];
    let err = Op::<f64>::sum().combine(&mut acc, &[1.0], true);
    assert!(matches!(err, Err(Error::InvalidArgument(_))), "{err:?}");
    assert_eq!(acc, [1.0, 2.0]);
    let err = Op::<f64>::user(|a, b| a - b, false).combine(&mut acc, &[1.0; 3], true);
    assert!(matches!(err, Err(Error::InvalidArgument(_))), "{err:?}");

    let erased = Op::<f64>::sum().erase();
    let mut bytes = [0u8; 16];
    let err = erased.combine_bytes(&mut bytes, &[0u8; 8], true);
    assert!(matches!(err, Err(Error::InvalidArgument(_))), "{err:?}");
    let err = erased.combine_bytes(&mut bytes[..12], &[0u8; 12], true);
    assert!(matches!(err, Err(Error::InvalidArgument(_))), "{err:?}");
    assert!(erased.combine_bytes(&mut [], &[], true).is_ok());

    let unit = Op::<()>::user(|_, _| (), true).erase();
    assert!(unit.combine_bytes(&mut [], &[], true).is_ok());
    let err = unit.combine_bytes(&mut [0u8], &[0u8], true);
    assert!(matches!(err, Err(Error::InvalidArgument(_))), "{err:?}");
}

#[test]
fn loc_ties_take_the_smaller_index() {
    fn vi<T: Copy>(value: T, index: i32) -> ValueIndex<T> {
        ValueIndex::new(value, index)
    }
    for acc_is_left in [true, false] {
        let mut acc = [vi(5i32, 3), vi(5, 1), vi(2, 9), vi(-1, 4)];
        let rhs = [vi(5i32, 1), vi(5, 3), vi(3, 0), vi(-1, 4)];
        Op::minloc().combine(&mut acc, &rhs, acc_is_left).unwrap();
        assert_eq!(acc, [vi(5, 1), vi(5, 1), vi(2, 9), vi(-1, 4)]);

        let mut acc = [vi(5i32, 3), vi(5, 1), vi(2, 9), vi(-1, 4)];
        Op::maxloc().combine(&mut acc, &rhs, acc_is_left).unwrap();
        assert_eq!(acc, [vi(5, 1), vi(5, 1), vi(3, 0), vi(-1, 4)]);

        // Floats: NaN wins both ways; -0 is the smaller zero.
        let mut acc = [vi(f64::NAN, 7), vi(-0.0, 5), vi(1.0, 2)];
        let rhs = [vi(f64::NEG_INFINITY, 0), vi(0.0, 1), vi(f64::NAN, 8)];
        Op::minloc().combine(&mut acc, &rhs, acc_is_left).unwrap();
        assert!(acc[0].value().is_nan() && acc[0].index() == 7);
        assert_eq!(acc[1].value().to_bits(), (-0.0f64).to_bits());
        assert_eq!(acc[1].index(), 5);
        assert!(acc[2].value().is_nan() && acc[2].index() == 8);

        let mut acc = [vi(f64::NAN, 7), vi(-0.0, 5), vi(f64::NAN, 2)];
        let rhs = [vi(f64::INFINITY, 0), vi(0.0, 1), vi(f64::NAN, 1)];
        Op::maxloc().combine(&mut acc, &rhs, acc_is_left).unwrap();
        assert!(acc[0].value().is_nan() && acc[0].index() == 7);
        assert_eq!(acc[1].value().to_bits(), 0.0f64.to_bits());
        assert_eq!(acc[1].index(), 1);
        assert!(acc[2].value().is_nan() && acc[2].index() == 1);
    }
}

#[test]
fn integer_overflow_wraps() {
    let mut acc = [i32::MAX, i32::MIN, 7];
    Op::sum().combine(&mut acc, &[1, -1, 0], true).unwrap();
    assert_eq!(acc, [i32::MIN, i32::MAX, 7]);
    let mut acc = [200u8, 16];
    Op::prod().combine(&mut acc, &[2, 16], true).unwrap();
    assert_eq!(acc, [144, 0]);
    let mut acc = [i64::MIN];
    Op::prod().combine(&mut acc, &[-1], true).unwrap();
    assert_eq!(acc, [i64::MIN]);
    let mut acc = [u128::MAX];
    Op::sum().combine(&mut acc, &[2], true).unwrap();
    assert_eq!(acc, [1]);
}

#[test]
fn float_min_max_propagate_nan_and_order_zeros() {
    let nan = f64::NAN;
    let mut acc = [nan, 1.0, -0.0, 0.0, f64::NEG_INFINITY];
    Op::min()
        .combine(&mut acc, &[1.0, nan, 0.0, -0.0, 0.0], true)
        .unwrap();
    assert!(acc[0].is_nan() && acc[1].is_nan());
    assert_eq!(acc[2].to_bits(), (-0.0f64).to_bits());
    assert_eq!(acc[3].to_bits(), (-0.0f64).to_bits());
    assert_eq!(acc[4], f64::NEG_INFINITY);

    let mut acc = [nan, 1.0f32 as f64, -0.0, 0.0, f64::INFINITY];
    Op::max()
        .combine(&mut acc, &[1.0, nan, 0.0, -0.0, 0.0], true)
        .unwrap();
    assert!(acc[0].is_nan() && acc[1].is_nan());
    assert_eq!(acc[2].to_bits(), 0.0f64.to_bits());
    assert_eq!(acc[3].to_bits(), 0.0f64.to_bits());
    assert_eq!(acc[4], f64::INFINITY);
}

#[test]
fn float_min_max_do_not_depend_on_order() {
    // With NaN propagating and -0 < +0, min and max are commutative and
    // associative: every grouping and order gives the same value.
    let mut g = Gen::new(42);
    for _ in 0..2000 {
        let [a, b, c] = [0; 3].map(|_| f64::sample(&mut g));
        for op in [Op::<f64>::min(), Op::max()] {
            let f = |x: f64, y: f64| {
                let mut acc = [x];
                op.combine(&mut acc, &[y], true).unwrap();
                acc[0]
            };
            let v = f(f(a, b), c);
            for w in [f(a, f(b, c)), f(f(b, a), c), f(c, f(a, b)), f(f(c, b), a)] {
                assert!(f64::same(v, w), "{op:?} {a} {b} {c}: {v} vs {w}");
            }
        }
    }
}

#[test]
fn logical_results_are_one_or_zero() {
    let mut acc = [5i16, 0, -3, 0];
    Op::land().combine(&mut acc, &[-7, 9, 0, 0], true).unwrap();
    assert_eq!(acc, [1, 0, 0, 0]);
    let mut acc = [5i16, 0, -3, 0];
    Op::lor().combine(&mut acc, &[-7, 9, 0, 0], true).unwrap();
    assert_eq!(acc, [1, 1, 1, 0]);
    let mut acc = [5i16, 0, -3, 0];
    Op::lxor().combine(&mut acc, &[-7, 9, 0, 0], true).unwrap();
    assert_eq!(acc, [0, 1, 1, 0]);
}

#[test]
fn value_index_has_no_padding() {
    assert_eq!(size_of::<ValueIndex<i8>>(), 5);
    assert_eq!(size_of::<ValueIndex<f64>>(), 12);
    assert_eq!(size_of::<ValueIndex<u128>>(), 20);
    assert_eq!(std::mem::align_of::<ValueIndex<f64>>(), 1);
    let pair = ValueIndex::new(1.5f64, 3);
    let bytes: &[u8] = bytemuck::bytes_of(&pair);
    assert_eq!(&bytes[..8], &1.5f64.to_ne_bytes());
    assert_eq!(&bytes[8..], &3i32.to_ne_bytes());
}

#[test]
fn large_unaligned_user_op_matches_aligned() {
    // Spans several scratch chunks, with a user function.
    let op = Op::<f64>::user(|a, b| a * 0.5 + b, false);
    let n = 3 * 4096 / 8 + 5;
    let mut g = Gen::new(9);
    let acc0: Vec<f64> = (0..n).map(|_| (g.next_u64() % 1000) as f64).collect();
    let rhs: Vec<f64> = (0..n).map(|_| (g.next_u64() % 1000) as f64).collect();
    let mut want = acc0.clone();
    op.combine(&mut want, &rhs, false).unwrap();
    for offset in 1..8 {
        let mut acc = at_offset(bytemuck::cast_slice(&acc0), offset);
        op.erase()
            .combine_bytes(&mut acc[offset..], bytemuck::cast_slice(&rhs), false)
            .unwrap();
        let got: Vec<f64> = acc[offset..]
            .chunks_exact(8)
            .map(bytemuck::pod_read_unaligned)
            .collect();
        assert_eq!(got, want, "offset {offset}");
    }
}
