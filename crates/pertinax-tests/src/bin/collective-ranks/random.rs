//! The randomized scenarios built on [`one`]: `all` (every collective,
//! every root, random counts, element types and operations, on the world,
//! a split or the self communicator: [`plan`]), `large` (counts of more
//! than 1 MiB per call) and `noncomm` (user operations, commutative and
//! not, on every reducing collective and root).

use pertinax::Communicator as _;
use pertinax::{Comm, Universe, ValueIndex};
use pertinax_tests::{arg, check, e};
use pertinax_wire::rng::SplitMix64;

use super::coll::Coll::{Barrier, Bcast, Ibarrier, Ibcast};
use super::coll::{one, ALL};
use super::elem::{by_type, nops, Rec, NTYPES};
use super::input::sd;
use super::R;

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
pub(super) fn plan(c: &Comm, seed: u64) -> R {
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
pub(super) fn all(u: &Universe, a: &[String]) -> R {
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
            w.barrier().map_err(e).map(drop)
        }
        "self" => plan(&u.self_comm(), seed),
        other => Err(format!("unknown communicator {other}")),
    }
}

/// `large SEED`: every collective with more than 1 MiB per call (per rank
/// for the reductions and bcast, in total per rank for the others).
pub(super) fn large(u: &Universe, a: &[String]) -> R {
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
pub(super) fn noncomm(u: &Universe, a: &[String]) -> R {
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
