//! The one seeded generator of pertinax: SplitMix64 (Steele, Lea and
//! Flood, 2014). Tiny and fully specified, so a seed gives the same stream
//! on every machine, in every process and with every version of the
//! dependencies: the seeded fault schedule ([`crate::kill::RandomFaults`]),
//! the applications' generated data and the tests' scenarios rely on it.
//!
//! ```
//! use pertinax_wire::rng::SplitMix64;
//!
//! let mut r = SplitMix64::new(7);
//! let x = r.below(10);
//! assert!(x < 10);
//! assert_eq!(SplitMix64::new(7).below(10), x);
//! assert!((0.0..1.0).contains(&r.next_f64()));
//! ```

/// SplitMix64's increment: 2⁶⁴ divided by the golden ratio, made odd.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function: a bijective mix of the 64 bits of `z`
/// (also a good hash of an integer).
pub const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A SplitMix64 generator: its state is one `u64`, its stream a function of
/// the seed alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed` (every value is a good seed).
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub const fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// Uniform in `0..bound`, without modulo bias (Lemire's multiply and
    /// reject: usually one draw, rarely more).
    ///
    /// # Panics
    /// If `bound` is 0.
    pub const fn below(&mut self, bound: u64) -> u64 {
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let m = self.next_u64() as u128 * bound as u128;
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// `next_u64() % bound`: one draw, slightly biased towards small values
    /// when `bound` is not a power of two. Prefer [`SplitMix64::below`];
    /// this one keeps the streams that the tests' seeded scenarios (and the
    /// screening's molecule names) were drawn with, so that a recorded seed
    /// still means the same run.
    ///
    /// # Panics
    /// If `bound` is 0.
    pub const fn below_mod(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// Uniform in `[0, 1)`: the top 53 bits of [`SplitMix64::next_u64`],
    /// so a multiple of 2⁻⁵³.
    pub const fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_splitmix64() {
        // The reference outputs of splitmix64.c for seeds 0 and 1234567.
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let mut r = SplitMix64::new(1_234_567);
        assert_eq!(
            [r.next_u64(), r.next_u64(), r.next_u64()],
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423
            ]
        );
    }

    #[test]
    fn mix_is_the_output_function() {
        assert_eq!(mix(GAMMA), 0xe220_a839_7b1d_cdaf);
        assert_eq!(mix(0), 0);
    }

    #[test]
    fn below_is_uniform_enough() {
        let mut r = SplitMix64::new(9);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[r.below(3) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn below_and_below_mod_are_pinned() {
        // Pinned: the fault schedule and the tests' scenarios are drawn
        // with these.
        let mut r = SplitMix64::new(42);
        assert_eq!(
            [(); 6].map(|_| r.below(1000)),
            [741, 159, 278, 344, 38, 868]
        );
        let mut r = SplitMix64::new(42);
        assert_eq!(
            [(); 6].map(|_| r.below_mod(1000)),
            [413, 291, 858, 764, 250, 62]
        );
    }

    #[test]
    fn next_f64_is_the_top_53_bits() {
        let mut a = SplitMix64::new(5);
        let mut b = a.clone();
        for _ in 0..1000 {
            let x = a.next_f64();
            assert!((0.0..1.0).contains(&x));
            assert_eq!(x, (b.next_u64() >> 11) as f64 * 2f64.powi(-53));
        }
    }

    #[test]
    fn works_at_compile_time() {
        const FIRST: u64 = SplitMix64::new(0).next_u64();
        assert_eq!(FIRST, 0xe220_a839_7b1d_cdaf);
    }
}
