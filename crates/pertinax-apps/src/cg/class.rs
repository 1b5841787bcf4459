//! CG's problem classes, their parameters and official verification values.

use std::fmt;
use std::str::FromStr;

use super::CgError;

/// NPB's verification tolerance (`epsilon` in `cg.f`): the relative error
/// of zeta, `|zeta - reference| / reference`.
pub const TOLERANCE: f64 = 1e-10;

/// A CG problem class (NPB 3.x): the matrix order, its nonzeros per
/// generated vector, the eigenvalue shift and the number of outer
/// iterations. Only the classes this port runs are here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// na = 1,400, nonzer = 7, shift = 10.
    S,
    /// na = 7,000, nonzer = 8, shift = 12.
    W,
    /// na = 14,000, nonzer = 11, shift = 20.
    A,
}

impl Class {
    /// Every class, smallest first.
    pub const ALL: [Class; 3] = [Class::S, Class::W, Class::A];

    /// The class's one-letter name.
    pub fn name(self) -> &'static str {
        match self {
            Class::S => "S",
            Class::W => "W",
            Class::A => "A",
        }
    }

    /// The matrix order (`na`).
    pub fn na(self) -> usize {
        match self {
            Class::S => 1400,
            Class::W => 7000,
            Class::A => 14000,
        }
    }

    /// Nonzeros of each random sparse vector the matrix is built from
    /// (`nonzer`).
    pub fn nonzer(self) -> usize {
        match self {
            Class::S => 7,
            Class::W => 8,
            Class::A => 11,
        }
    }

    /// The eigenvalue shift (`shift`).
    pub fn shift(self) -> f64 {
        match self {
            Class::S => 10.0,
            Class::W => 12.0,
            Class::A => 20.0,
        }
    }

    /// The number of outer (inverse power) iterations (`niter`).
    pub fn niter(self) -> u64 {
        15
    }

    /// The condition number the generator aims at (`rcond`).
    pub fn rcond(self) -> f64 {
        0.1
    }

    /// The official zeta after [`Class::niter`] iterations.
    // Written with the reference's digits.
    #[allow(clippy::excessive_precision)]
    pub fn zeta_reference(self) -> f64 {
        match self {
            Class::S => 8.597_177_507_864_8,
            Class::W => 10.362_595_087_124,
            Class::A => 17.130_235_054_029,
        }
    }

    /// Whether `zeta` passes NPB's verification: relative error at most
    /// [`TOLERANCE`]. NaN never verifies.
    pub fn verify(self, zeta: f64) -> bool {
        let r = self.zeta_reference();
        ((zeta - r) / r).abs() <= TOLERANCE
    }
}

impl FromStr for Class {
    type Err = CgError;

    /// `"S"`, `"W"` or `"A"` (case does not matter).
    fn from_str(s: &str) -> Result<Class, CgError> {
        Class::ALL
            .into_iter()
            .find(|c| s.eq_ignore_ascii_case(c.name()))
            .ok_or_else(|| CgError::UnknownClass(s.to_string()))
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
            assert_eq!(c.name().parse::<Class>().ok(), Some(c));
            assert_eq!(c.name().to_lowercase().parse::<Class>().ok(), Some(c));
            assert_eq!(c.to_string(), c.name());
        }
        for bad in ["", "B", "SS", "x"] {
            let e = bad.parse::<Class>().err().map(|e| e.to_string());
            assert!(
                e.as_deref().is_some_and(|m| m.contains("S, W or A")),
                "{bad:?}: {e:?}"
            );
        }
    }

    #[test]
    fn verification_is_relative() {
        let r = Class::A.zeta_reference();
        assert!(Class::A.verify(r));
        assert!(Class::A.verify(r * (1.0 + 0.9e-10)));
        assert!(!Class::A.verify(r * (1.0 + 1.1e-10)));
        assert!(!Class::A.verify(f64::NAN));
    }
}
