//! EP's batches: uniform pairs, Marsaglia's polar method, sums and counts.

use std::iter::Sum;
use std::ops::{Add, AddAssign, Range};

use super::class::{Class, MK};
use super::rand::{power_of_two_power, skip, vranlc, A, SEED};

/// The number of square annuli counted (`NQ` in the reference).
pub const NQ: usize = 10;

/// Pairs in one batch, `2^16` (`NK` in the reference).
pub const NK: usize = 1 << MK;

/// What EP computes: the sums of the Gaussian deviates and how many pairs
/// fall in each square annulus.
///
/// `q[l]` counts the accepted pairs with `l <= max(|X|, |Y|) < l + 1`. The
/// counts are kept as `f64`, as in the reference (exact below 2^53), so that
/// the whole result is [`EpSums::LEN`] doubles that add up element-wise
/// across ranks ([`EpSums::to_array`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EpSums {
    /// The sum of the X deviates.
    pub sx: f64,
    /// The sum of the Y deviates.
    pub sy: f64,
    /// Accepted pairs per annulus.
    pub q: [f64; NQ],
}

impl EpSums {
    /// The number of doubles in [`EpSums::to_array`]: `sx`, `sy`, `q`.
    pub const LEN: usize = 2 + NQ;

    /// Adds `other`'s sums and counts to these.
    pub fn merge(&mut self, other: &EpSums) {
        self.sx += other.sx;
        self.sy += other.sy;
        for (a, b) in self.q.iter_mut().zip(&other.q) {
            *a += b;
        }
    }

    /// The number of accepted (Gaussian) pairs: the sum of the counts (`gc`
    /// in the reference).
    pub fn gaussian_pairs(&self) -> f64 {
        self.q.iter().sum()
    }

    /// Whether the sums match `class`'s official values
    /// ([`Class::verify`]).
    pub fn verify(&self, class: Class) -> bool {
        class.verify(self.sx, self.sy)
    }

    /// The sums as `[sx, sy, q[0], ..., q[9]]`, ready for an element-wise
    /// sum across ranks.
    pub fn to_array(&self) -> [f64; Self::LEN] {
        let mut a = [0.0; Self::LEN];
        a[0] = self.sx;
        a[1] = self.sy;
        a[2..].copy_from_slice(&self.q);
        a
    }

    /// The inverse of [`EpSums::to_array`].
    pub fn from_array(a: [f64; Self::LEN]) -> EpSums {
        let mut q = [0.0; NQ];
        q.copy_from_slice(&a[2..]);
        EpSums {
            sx: a[0],
            sy: a[1],
            q,
        }
    }
}

impl AddAssign<&EpSums> for EpSums {
    fn add_assign(&mut self, other: &EpSums) {
        self.merge(other);
    }
}

impl AddAssign for EpSums {
    fn add_assign(&mut self, other: EpSums) {
        self.merge(&other);
    }
}

impl Add for EpSums {
    type Output = EpSums;
    fn add(mut self, other: EpSums) -> EpSums {
        self.merge(&other);
        self
    }
}

impl Sum for EpSums {
    fn sum<I: Iterator<Item = EpSums>>(iter: I) -> EpSums {
        iter.fold(EpSums::default(), Add::add)
    }
}

impl<'a> Sum<&'a EpSums> for EpSums {
    fn sum<I: Iterator<Item = &'a EpSums>>(iter: I) -> EpSums {
        iter.fold(EpSums::default(), |mut acc, s| {
            acc.merge(s);
            acc
        })
    }
}

/// The sums of batch `k` alone. Batch `k` uses the `2 * NK` random numbers
/// that start `2 * NK * k` steps into EP's sequence, so any batch can be
/// computed anywhere, in any order.
pub fn batch(k: u64) -> EpSums {
    batches(k..k + 1)
}

/// The sums of batches `range`, accumulated in order into one running sum
/// as the reference does on one rank. Over a whole class this is the
/// serial reference's computation, operation for operation.
pub fn batches(range: Range<u64>) -> EpSums {
    // an = a^(2 * NK): the generator's stride from one batch to the next.
    let an = power_of_two_power(A, MK + 1);
    let mut x = vec![0.0; 2 * NK];
    let mut sums = EpSums::default();
    for k in range {
        let mut seed = skip(SEED, an, k);
        vranlc(&mut seed, A, &mut x);
        tally(&x, &mut sums);
    }
    sums
}

/// The batches of `class` that `rank` computes out of `n` ranks: contiguous
/// blocks, the first `batches % n` ranks taking one more, as in NPB's MPI
/// EP. Ranks beyond the number of batches get an empty range (the reference
/// refuses to run with more ranks than batches).
///
/// # Panics
///
/// If `n == 0` or `rank >= n`.
pub fn portion(class: Class, rank: usize, n: usize) -> Range<u64> {
    crate::split::block(class.batches(), rank, n)
}

/// Marsaglia's polar method on the pairs of `x`, added to `sums`.
fn tally(x: &[f64], sums: &mut EpSums) {
    for pair in x.chunks_exact(2) {
        let x1 = 2.0 * pair[0] - 1.0;
        let x2 = 2.0 * pair[1] - 1.0;
        let t1 = x1 * x1 + x2 * x2;
        if t1 <= 1.0 {
            let t2 = (-2.0 * t1.ln() / t1).sqrt();
            let t3 = x1 * t2;
            let t4 = x2 * t2;
            // Truncation, as the reference's assignment to an integer.
            let l = t3.abs().max(t4.abs()) as usize;
            // l < 10 unless t1 < e^-50, which the 2^-45 grid of x1 and x2
            // makes all but impossible; the reference would write past
            // its array, here such a pair is only left out of the counts.
            if let Some(count) = sums.q.get_mut(l) {
                *count += 1.0;
            }
            sums.sx += t3;
            sums.sy += t4;
        }
    }
}

#[cfg(test)]
mod tests;
