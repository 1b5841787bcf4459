//! Inputs and comparisons: operands and random bytes as a function of
//! (call seed, rank, block), so that every rank recomputes what every other
//! rank contributed; sentinels and per-rank backdrops of receive buffers;
//! exact comparisons with the reference; random placements of blocks for
//! the v-collectives; and completing a non-blocking request by waiting or
//! polling.

use std::fmt::Debug;
use std::time::{SystemTime, UNIX_EPOCH};

use pertinax::bytemuck::{self, Pod};
use pertinax::PendingOp;
use pertinax_tests::check;
use pertinax_wire::rng::SplitMix64;

use super::elem::{Elem, K};
use super::R;

/// A seed for `(seed, a, b)`.
pub(super) fn sd(seed: u64, a: usize, b: usize) -> u64 {
    SplitMix64::new(
        seed ^ (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (b as u64)
                .wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
                .rotate_left(29),
    )
    .next_u64()
}

/// `len` operands of `k` from stream `(cs, a, b)`.
pub(super) fn gen<T: Elem>(cs: u64, a: usize, b: usize, len: usize, k: K) -> Vec<T> {
    let mut r = SplitMix64::new(sd(cs, a, b));
    (0..len).map(|_| T::gen(&mut r, k)).collect()
}

/// `len` elements of random bytes from stream `(cs, a, b)`.
pub(super) fn raw<T: Pod>(cs: u64, a: usize, b: usize, len: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); len];
    let mut r = SplitMix64::new(sd(cs, a, b) ^ 0x5EED);
    for c in bytemuck::cast_slice_mut::<T, u8>(&mut v).chunks_mut(8) {
        c.copy_from_slice(&r.next_u64().to_le_bytes()[..c.len()]);
    }
    v
}

/// `len` elements of a byte pattern that no call writes by chance.
pub(super) fn sentinel<T: Pod>(len: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); len];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).fill(0xA5);
    v
}

/// Compares results with the reference (`Elem::same`).
pub(super) fn cmp<T: Elem>(got: &[T], want: &[T]) -> R {
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
pub(super) fn cmp_raw<T: Pod + Debug>(got: &[T], want: &[T]) -> R {
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
pub(super) fn layout(seed: u64, counts: &[usize]) -> (Vec<usize>, usize) {
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
pub(super) fn backdrop<T: Pod>(rank: usize, len: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); len];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).fill(0x5A ^ (rank as u8).wrapping_mul(37));
    v
}

/// `base` with `blocks[i]` placed at `displs[i]`.
pub(super) fn placed<T: Pod>(mut base: Vec<T>, displs: &[usize], blocks: &[Vec<T>]) -> Vec<T> {
    let want = &mut base;
    for (d, b) in displs.iter().zip(blocks) {
        want[*d..*d + b.len()].copy_from_slice(b);
    }
    base
}

/// Waits for `r`, or polls it with `test` when `spin`.
pub(super) fn complete(mut r: PendingOp<'_>, spin: bool) -> pertinax::Result<()> {
    if !spin {
        return r.wait().map(|_| ());
    }
    while r.test()?.is_none() {
        std::thread::yield_now();
    }
    Ok(())
}

pub(super) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}
