//! NPB's linear congruential generator, in NPB's double-precision arithmetic.
//!
//! `x_{k+1} = a * x_k (mod 2^46)`, with the product split into 23-bit halves
//! so that every intermediate value is an integer exactly representable in an
//! `f64`. The operations below are those of `randdp.c` / `randi8.f` of NPB
//! 3.x, in the same order, so the sequence is bit-identical to the
//! reference's. (Rust never contracts `a * b + c` into a fused multiply-add,
//! and every value here is an exact integer anyway.)

/// 2^-23.
const R23: f64 = 1.192_092_895_507_812_5e-7;
/// 2^-46.
const R46: f64 = R23 * R23;
/// 2^23.
const T23: f64 = 8_388_608.0;
/// 2^46.
const T46: f64 = T23 * T23;

/// The multiplier of EP's generator, 5^13.
pub const A: f64 = 1_220_703_125.0;

/// The seed of EP's generator.
pub const SEED: f64 = 271_828_183.0;

/// `x`'s integer part, as the reference's `(int)` casts and `aint` compute it
/// (every argument here is non-negative and below 2^24). A cast rather than
/// `f64::trunc`, which is a libm call on baseline x86-64.
#[inline(always)]
fn int(x: f64) -> f64 {
    x as i64 as f64
}

/// `a` split as `2^23 * a1 + a2`.
fn split(a: f64) -> (f64, f64) {
    let a1 = int(R23 * a);
    (a1, a - T23 * a1)
}

/// One step of the generator with `a` already split: returns the new `x`.
#[inline(always)]
fn step(x: f64, a1: f64, a2: f64) -> f64 {
    let x1 = int(R23 * x);
    let x2 = x - T23 * x1;
    let t1 = a1 * x2 + a2 * x1;
    let t2 = int(R23 * t1);
    let z = t1 - T23 * t2;
    let t3 = T23 * z + a2 * x2;
    let t4 = int(R46 * t3);
    t3 - T46 * t4
}

/// Advances `x` to `a * x (mod 2^46)` and returns the new `x` scaled to
/// `(0, 1)`: NPB's `randlc`.
///
/// `x` and `a` must be integers in `(0, 2^46)`; `a` is typically odd.
pub fn randlc(x: &mut f64, a: f64) -> f64 {
    let (a1, a2) = split(a);
    *x = step(*x, a1, a2);
    R46 * *x
}

/// Fills `y` with the next `y.len()` numbers of the sequence, scaled to
/// `(0, 1)`, and leaves `x` at the last one: NPB's `vranlc` with
/// `n = y.len()`.
pub fn vranlc(x: &mut f64, a: f64, y: &mut [f64]) {
    let (a1, a2) = split(a);
    let mut s = *x;
    for out in y {
        s = step(s, a1, a2);
        *out = R46 * s;
    }
    *x = s;
}

/// `a^(2^doublings) mod 2^46`, by repeated squaring with [`randlc`], as the
/// reference computes `an = a^(2*nk)`.
pub(crate) fn power_of_two_power(a: f64, doublings: u32) -> f64 {
    let mut t = a;
    for _ in 0..doublings {
        let a = t;
        randlc(&mut t, a);
    }
    t
}

/// `seed * an^k mod 2^46`: the generator state `k` strides of `an` ahead,
/// by binary exponentiation in the reference's order (the "find starting
/// seed" loop of `ep.f`).
pub(crate) fn skip(seed: f64, an: f64, mut k: u64) -> f64 {
    let mut t1 = seed;
    let mut t2 = an;
    loop {
        let half = k / 2;
        if k % 2 == 1 {
            randlc(&mut t1, t2);
        }
        if half == 0 {
            return t1;
        }
        let a = t2;
        randlc(&mut t2, a);
        k = half;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASK46: u64 = (1 << 46) - 1;

    /// The same generator in integers: exact by construction.
    fn mul_mod46(x: u64, a: u64) -> u64 {
        x.wrapping_mul(a) & MASK46
    }

    #[test]
    fn randlc_is_exact_multiplication_mod_2_46() {
        let a = A as u64;
        let mut xi = SEED as u64;
        let mut xf = SEED;
        for _ in 0..100_000 {
            xi = mul_mod46(xi, a);
            let r = randlc(&mut xf, A);
            assert_eq!(xf, xi as f64);
            assert_eq!(r, xi as f64 / (1u64 << 46) as f64);
        }
        // Squaring a large state (both halves non-zero) is exact too.
        let mut s = xf;
        randlc(&mut s, xf);
        assert_eq!(s, mul_mod46(xi, xi) as f64);
    }

    #[test]
    fn vranlc_continues_randlc() {
        let mut x = SEED;
        let mut y = vec![0.0; 1000];
        vranlc(&mut x, A, &mut y);
        let mut z = SEED;
        for &v in &y {
            assert_eq!(randlc(&mut z, A), v);
        }
        assert_eq!(x, z);
        // n = 0 leaves the state alone, as in the reference's warm-up call.
        vranlc(&mut x, A, &mut []);
        assert_eq!(x, z);
    }

    #[test]
    fn skip_equals_stepping() {
        // With a stride of a^(2^3) = a^8, skipping k strides is 8k steps.
        let an = power_of_two_power(A, 3);
        let mut x = SEED;
        for k in 0..50 {
            assert_eq!(skip(SEED, an, k), x, "k = {k}");
            let mut y = [0.0; 8];
            vranlc(&mut x, A, &mut y);
        }
    }
}
