//! The N-body kernel of the offload paper's section 6.3 (figures 8 and 9).
//!
//! The bodies are split into `parts` contiguous blocks, one per process
//! (a booster, in the offload programs). One time step, at the process that
//! owns block `r`: the forces on its bodies are accumulated block by block
//! while the blocks travel around a ring (`remote = local`, then `parts`
//! times: [`forces`] of `remote` on `local`, pass `remote` to the right
//! neighbour and take the left neighbour's), so at ring step `s` it holds
//! block `(r - s) mod parts` ([`ring_block`]); then [`update`] moves its
//! bodies. [`simulate`] is the same computation in one process, in the same
//! order, so a distributed run that follows the ring gives bitwise the same
//! bodies.
//!
//! Softened gravity (G = 1, softening [`SOFTENING`]) with a leapfrog-like
//! update; the point is a deterministic, compute-bound kernel with the
//! paper's communication pattern, not an efficient N-body code (the paper
//! says the same of its own).

use pertinax_wire::rng::SplitMix64;
use serde::{Deserialize, Serialize};

use crate::split::block;

/// Softening length squared added to every squared distance, so two
/// bodies at the same place exert a finite force (and a body none on
/// itself).
pub const SOFTENING: f64 = 1e-3;

/// A block of bodies: positions, velocities and masses, by body.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bodies {
    /// Positions.
    pub pos: Vec<[f64; 3]>,
    /// Velocities.
    pub vel: Vec<[f64; 3]>,
    /// Masses.
    pub mass: Vec<f64>,
}

impl Bodies {
    /// The number of bodies.
    pub fn len(&self) -> usize {
        self.mass.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.mass.is_empty()
    }

    /// A digest of every bit of the block (FNV-1a over the values' bits),
    /// to compare runs bitwise in one line.
    pub fn digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let words = self
            .pos
            .iter()
            .chain(&self.vel)
            .flat_map(|v| v.iter())
            .chain(&self.mass);
        for x in words {
            for b in x.to_bits().to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    }
}

/// A body's initial state from its global index alone (a deterministic
/// hash, so every split of the same total starts from the same bodies).
fn body(i: u64) -> ([f64; 3], [f64; 3], f64) {
    let mut rng = SplitMix64::new(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d);
    let mut next = || rng.next_f64();
    let pos = [next() * 2.0 - 1.0, next() * 2.0 - 1.0, next() * 2.0 - 1.0];
    let vel = [
        (next() - 0.5) * 1e-2,
        (next() - 0.5) * 1e-2,
        (next() - 0.5) * 1e-2,
    ];
    let mass = 0.5 + next();
    (pos, vel, mass)
}

/// Block `part` of `total` bodies split into `parts` blocks, at the start.
///
/// # Panics
/// If `parts == 0` or `part >= parts`.
pub fn initial(total: u64, part: usize, parts: usize) -> Bodies {
    let mut b = Bodies::default();
    for i in block(total, part, parts) {
        let (p, v, m) = body(i);
        b.pos.push(p);
        b.vel.push(v);
        b.mass.push(m);
    }
    b
}

/// The block held at ring step `step` by the owner of block `part`:
/// `(part - step) mod parts` (each step passes to the right).
pub fn ring_block(part: usize, step: usize, parts: usize) -> usize {
    (part + parts - step % parts) % parts
}

/// Adds to `acc` (one entry per body of `local`) the accelerations that
/// the bodies of `remote` cause on the bodies of `local`.
///
/// # Panics
/// If `acc` and `local` differ in length.
pub fn forces(local: &Bodies, remote: &Bodies, acc: &mut [[f64; 3]]) {
    assert_eq!(acc.len(), local.len(), "one acceleration per local body");
    for (a, p) in acc.iter_mut().zip(&local.pos) {
        for (q, &m) in remote.pos.iter().zip(&remote.mass) {
            let d = [q[0] - p[0], q[1] - p[1], q[2] - p[2]];
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + SOFTENING;
            let inv = m / (r2 * r2.sqrt());
            a[0] += d[0] * inv;
            a[1] += d[1] * inv;
            a[2] += d[2] * inv;
        }
    }
}

/// Moves the bodies of `local` by one step `dt` under accelerations `acc`.
///
/// # Panics
/// If `acc` and `local` differ in length.
pub fn update(local: &mut Bodies, acc: &[[f64; 3]], dt: f64) {
    assert_eq!(acc.len(), local.len(), "one acceleration per local body");
    for ((p, v), a) in local.pos.iter_mut().zip(&mut local.vel).zip(acc) {
        for k in 0..3 {
            v[k] += a[k] * dt;
            p[k] += v[k] * dt;
        }
    }
}

/// One time step of every block, in one process, in the ring's order.
pub fn step(blocks: &mut [Bodies], dt: f64) {
    let parts = blocks.len();
    let accs: Vec<Vec<[f64; 3]>> = (0..parts)
        .map(|r| {
            let mut acc = vec![[0.0; 3]; blocks[r].len()];
            for s in 0..parts {
                forces(&blocks[r], &blocks[ring_block(r, s, parts)], &mut acc);
            }
            acc
        })
        .collect();
    for (b, acc) in blocks.iter_mut().zip(&accs) {
        update(b, acc, dt);
    }
}

/// `steps` time steps of `total` bodies split into `parts` blocks, in one
/// process: the reference a distributed run is compared with, bitwise.
///
/// # Panics
/// If `parts == 0`.
pub fn simulate(total: u64, parts: usize, steps: usize, dt: f64) -> Vec<Bodies> {
    let mut blocks: Vec<Bodies> = (0..parts).map(|r| initial(total, r, parts)).collect();
    for _ in 0..steps {
        step(&mut blocks, dt);
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blocks_tile_the_bodies_whatever_the_split() {
        let whole = initial(10, 0, 1);
        let parts: Vec<Bodies> = (0..3).map(|r| initial(10, r, 3)).collect();
        let joined: Vec<[f64; 3]> = parts.iter().flat_map(|b| b.pos.clone()).collect();
        assert_eq!(joined, whole.pos);
        assert_eq!(parts.iter().map(Bodies::len).sum::<usize>(), 10);
    }

    #[test]
    fn the_ring_visits_every_block_once_starting_with_its_own() {
        for parts in 1..6 {
            for r in 0..parts {
                let mut seen: Vec<usize> = (0..parts).map(|s| ring_block(r, s, parts)).collect();
                assert_eq!(seen[0], r);
                seen.sort_unstable();
                assert_eq!(seen, (0..parts).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn momentum_is_kept_by_the_pairwise_forces() {
        // Equal and opposite forces: the total momentum changes only by
        // rounding.
        let momentum = |bs: &[Bodies]| {
            let mut p = [0.0; 3];
            for b in bs {
                for (v, m) in b.vel.iter().zip(&b.mass) {
                    for k in 0..3 {
                        p[k] += v[k] * m;
                    }
                }
            }
            p
        };
        let before = momentum(&simulate(24, 3, 0, 0.01));
        let after = momentum(&simulate(24, 3, 5, 0.01));
        for k in 0..3 {
            assert!((before[k] - after[k]).abs() < 1e-9, "{before:?} {after:?}");
        }
    }

    #[test]
    fn bodies_move_and_the_digest_sees_every_bit() {
        let a = simulate(16, 2, 1, 0.01);
        let b = simulate(16, 2, 2, 0.01);
        assert_ne!(a[0].digest(), b[0].digest());
        let mut c = a[0].clone();
        c.mass[3] = f64::from_bits(c.mass[3].to_bits() ^ 1);
        assert_ne!(a[0].digest(), c.digest());
        assert_eq!(a, simulate(16, 2, 1, 0.01));
    }
}
