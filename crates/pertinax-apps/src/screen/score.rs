//! A docking-like score: poses of a molecule in a fixed pocket, with a
//! Lennard-Jones-like pair term.
//!
//! Only additions, multiplications, divisions and comparisons on `f64`, no
//! transcendental functions: the score is the same on every IEEE-754
//! platform, not just on this one.

use pertinax_wire::rng::{mix, SplitMix64};

use super::molecule::Molecule;

/// Points of the target pocket.
pub const POCKET: usize = 32;

/// The squared distance below which the pair term stops growing, so that a
/// clash costs a lot but never overflows.
const R2_MIN: f64 = 0.5;

/// The pocket, as coordinates per axis (so the inner loop vectorizes).
struct Pocket {
    x: [f64; POCKET],
    y: [f64; POCKET],
    z: [f64; POCKET],
}

/// The target: [`POCKET`] points uniform in `[-3.5, 3.5)^3`, drawn at
/// compile time from a fixed seed.
static TARGET: Pocket = pocket(0x5EED_0F7A_26E7);

const fn pocket(seed: u64) -> Pocket {
    let mut rng = SplitMix64::new(seed);
    let mut p = Pocket {
        x: [0.0; POCKET],
        y: [0.0; POCKET],
        z: [0.0; POCKET],
    };
    let mut i = 0;
    while i < POCKET {
        p.x[i] = rng.next_f64() * 7.0 - 3.5;
        p.y[i] = rng.next_f64() * 7.0 - 3.5;
        p.z[i] = rng.next_f64() * 7.0 - 3.5;
        i += 1;
    }
    p
}

/// The 6 permutations of the axes.
const PERMUTATIONS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/// The docking score of `molecule`: higher is better.
///
/// Tries `work` poses (at least one), and returns minus the lowest
/// interaction energy found. Pose `p` is one of the 48 signed permutations
/// of the axes (a rotation or reflection of the rigid molecule) followed by
/// a shift in `[-1.5, 1.5)^3`, both a fixed function of `p`; pose 0 is the
/// molecule as stored. The energy of a pose is
/// `sum over atoms a and pocket points p of 4 (s^6 - s^3)`, with
/// `s = 1 / max(|a - p|^2, 0.5)`: attraction near unit distance, a bounded
/// penalty for clashes.
///
/// The cost is `work * ATOMS * POCKET` pair terms; scores of the same
/// molecule never decrease with `work` (the poses are a prefix of one fixed
/// sequence). The score is finite for every molecule, even one decoded from
/// arbitrary bytes: a NaN or infinite coordinate counts as a clash or as no
/// contact (`f64::max` ignores a NaN).
pub fn score(molecule: &Molecule, work: u32) -> f64 {
    let atoms = molecule.atoms.map(|a| a.map(f64::from));
    let mut best = f64::INFINITY;
    for p in 0..work.max(1) {
        let placed = pose(p).apply(&atoms);
        let e = energy(&placed);
        best = best.min(e);
    }
    -best
}

/// One placement of a rigid molecule.
struct Pose {
    axes: [usize; 3],
    signs: [f64; 3],
    shift: [f64; 3],
}

impl Pose {
    fn apply<const N: usize>(&self, atoms: &[[f64; 3]; N]) -> [[f64; 3]; N] {
        atoms.map(|a| {
            let mut out = [0.0; 3];
            for d in 0..3 {
                out[d] = self.signs[d] * a[self.axes[d]] + self.shift[d];
            }
            out
        })
    }
}

fn pose(p: u32) -> Pose {
    if p == 0 {
        return Pose {
            axes: [0, 1, 2],
            signs: [1.0; 3],
            shift: [0.0; 3],
        };
    }
    let orientation = p as usize % 48;
    let sign = |bit: usize| {
        if (orientation / 6) & bit == 0 {
            1.0
        } else {
            -1.0
        }
    };
    let mut rng = SplitMix64::new(mix(u64::from(p) ^ 0x0B17_1E5C_0DE5_EED5));
    let mut shift = [0.0; 3];
    for s in &mut shift {
        *s = rng.next_f64() * 3.0 - 1.5;
    }
    Pose {
        axes: PERMUTATIONS[orientation % 6],
        signs: [sign(1), sign(2), sign(4)],
        shift,
    }
}

/// The interaction energy of placed atoms with the pocket.
fn energy(atoms: &[[f64; 3]]) -> f64 {
    let mut e = 0.0;
    for a in atoms {
        let mut sum = 0.0;
        for i in 0..POCKET {
            let dx = a[0] - TARGET.x[i];
            let dy = a[1] - TARGET.y[i];
            let dz = a[2] - TARGET.z[i];
            let s = 1.0 / (dx * dx + dy * dy + dz * dz).max(R2_MIN);
            let s3 = s * s * s;
            sum += s3 * s3 - s3;
        }
        e += 4.0 * sum;
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pocket_is_in_its_box() {
        for c in TARGET.x.iter().chain(&TARGET.y).chain(&TARGET.z) {
            assert!((-3.5..3.5).contains(c));
        }
        // Not all the same point.
        assert!(TARGET.x.iter().any(|&x| x != TARGET.x[0]));
    }

    #[test]
    fn score_is_deterministic_and_finite() {
        for i in 0..50 {
            let m = Molecule::generate(3, i);
            let s = score(&m, 8);
            assert!(s.is_finite(), "molecule {i}: {s}");
            assert_eq!(s.to_bits(), score(&m, 8).to_bits());
        }
    }

    #[test]
    fn more_work_never_scores_lower() {
        let m = Molecule::generate(3, 11);
        let scores: Vec<f64> = (0..100).map(|w| score(&m, w)).collect();
        assert_eq!(scores[0], scores[1], "work 0 means one pose");
        assert!(scores.windows(2).all(|w| w[1] >= w[0]));
        assert!(scores[99] > scores[1], "some pose beats the stored one");
    }

    #[test]
    fn poses_are_signed_permutations() {
        let atoms = [[1.0, 2.0, 3.0]];
        for p in 0..96 {
            let pose = pose(p);
            let [moved] = pose.apply(&atoms);
            let mut back: Vec<f64> = (0..3)
                .map(|d| ((moved[d] - pose.shift[d]) * pose.signs[d]).abs())
                .collect();
            back.sort_by(f64::total_cmp);
            let off = back.iter().zip([1.0, 2.0, 3.0]).map(|(b, e)| (b - e).abs());
            assert!(off.fold(0.0, f64::max) < 1e-12, "pose {p}: {back:?}");
            assert!(pose.shift.iter().all(|s| (-1.5..1.5).contains(s)));
        }
    }

    #[test]
    fn any_record_scores_finite() {
        let mut m = Molecule::generate(3, 0);
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX] {
            m.atoms[1] = [bad, 0.0, -bad];
            assert!(score(&m, 3).is_finite(), "{bad}");
        }
    }
}
