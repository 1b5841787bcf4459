//! EP's problem classes and their official verification values.

use std::fmt;

/// The relative tolerance of EP's verification (`epsilon` in `ep.f`).
pub const TOLERANCE: f64 = 1e-8;

/// Log2 of the number of pairs in one batch (`MK` in the reference).
pub const MK: u32 = 16;

/// An EP problem class: `2^M` pairs of uniform random numbers.
///
/// The verification values are those of NPB 3.3's `ep.f` and `ep.c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// M = 24 (256 batches).
    S,
    /// M = 25 (512 batches).
    W,
    /// M = 28 (4,096 batches).
    A,
    /// M = 30 (16,384 batches).
    B,
    /// M = 32 (65,536 batches).
    C,
    /// M = 36 (2^20 batches).
    D,
    /// M = 40 (2^24 batches).
    E,
}

impl Class {
    /// Every class, smallest first.
    pub const ALL: [Class; 7] = [
        Class::S,
        Class::W,
        Class::A,
        Class::B,
        Class::C,
        Class::D,
        Class::E,
    ];

    /// The class named `name` (`"S"`, `"w"`, ...; case does not matter), or
    /// `None`.
    pub fn parse(name: &str) -> Option<Class> {
        Class::ALL
            .into_iter()
            .find(|c| name.eq_ignore_ascii_case(c.name()))
    }

    /// The class's one-letter name.
    pub fn name(self) -> &'static str {
        match self {
            Class::S => "S",
            Class::W => "W",
            Class::A => "A",
            Class::B => "B",
            Class::C => "C",
            Class::D => "D",
            Class::E => "E",
        }
    }

    /// Log2 of the number of pairs (`M` in the reference).
    pub fn m(self) -> u32 {
        match self {
            Class::S => 24,
            Class::W => 25,
            Class::A => 28,
            Class::B => 30,
            Class::C => 32,
            Class::D => 36,
            Class::E => 40,
        }
    }

    /// The number of batches of `2^16` pairs: `2^(M - 16)`.
    pub fn batches(self) -> u64 {
        1 << (self.m() - MK)
    }

    /// The number of pairs of uniform numbers, `2^M` (twice as many random
    /// numbers are generated).
    pub fn pairs(self) -> u64 {
        1 << self.m()
    }

    /// The official values of the sums `(sx, sy)` over the whole class.
    // The digits are written as in the reference, trailing zero included, so
    // that they can be compared with it at a glance.
    #[allow(clippy::excessive_precision)]
    pub fn reference_sums(self) -> (f64, f64) {
        match self {
            Class::S => (-3.247_834_652_034_740e3, -6.958_407_078_382_297e3),
            Class::W => (-2.863_319_731_645_753e3, -6.320_053_679_109_499e3),
            Class::A => (-4.295_875_165_629_892e3, -1.580_732_573_678_431e4),
            Class::B => (4.033_815_542_441_498e4, -2.660_669_192_809_235e4),
            Class::C => (4.764_367_927_995_374e4, -8.084_072_988_043_731e4),
            Class::D => (1.982_481_200_946_593e5, -1.020_596_636_361_769e5),
            Class::E => (-5.319_717_441_530e5, -3.688_834_557_731e5),
        }
    }

    /// Whether `sx` and `sy` match the official values within the relative
    /// [`TOLERANCE`], as the reference checks them (`|(s - ref) / ref|`).
    /// NaN never verifies.
    pub fn verify(self, sx: f64, sy: f64) -> bool {
        let (rx, ry) = self.reference_sums();
        ((sx - rx) / rx).abs() <= TOLERANCE && ((sy - ry) / ry).abs() <= TOLERANCE
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names() {
        for c in Class::ALL {
            assert_eq!(Class::parse(c.name()), Some(c));
            assert_eq!(Class::parse(&c.name().to_lowercase()), Some(c));
            assert_eq!(c.to_string(), c.name());
        }
        assert_eq!(Class::parse(""), None);
        assert_eq!(Class::parse("SS"), None);
        assert_eq!(Class::parse("F"), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(Class::S.batches(), 256);
        assert_eq!(Class::W.batches(), 512);
        assert_eq!(Class::A.batches(), 4096);
        assert_eq!(Class::B.batches(), 16384);
        assert_eq!(Class::C.batches(), 65536);
        assert_eq!(Class::S.pairs(), Class::S.batches() << MK);
    }

    #[test]
    fn verify_uses_the_relative_tolerance() {
        let (sx, sy) = Class::A.reference_sums();
        assert!(Class::A.verify(sx, sy));
        assert!(Class::A.verify(sx * (1.0 + 0.9e-8), sy * (1.0 - 0.9e-8)));
        assert!(!Class::A.verify(sx * (1.0 + 1.1e-8), sy));
        assert!(!Class::A.verify(sx, sy * (1.0 - 1.1e-8)));
        assert!(!Class::A.verify(f64::NAN, sy));
        assert!(!Class::B.verify(sx, sy));
    }
}
