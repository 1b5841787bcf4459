//! A rank program of `pertinax-checkpoint` under kills:
//! `checkpoint-ranks ITERS EVERY WORDS DIR [resume]` (`DIR` `-` for memory
//! only; `resume`: every rank starts with a restore, from the files of an
//! earlier job in `DIR`).
//!
//! Each rank's state is `WORDS` 64-bit words. Every iteration (fault
//! point `iter`) exchanges a digest of the state with both neighbours and
//! mixes the rank, the iteration and the two digests into every word, so
//! the states depend on each other. Every `EVERY` iterations (and at
//! iteration 0 and `ITERS`) comes a sync point: a coordinated checkpoint
//! (`Checkpointer::checkpoint`, whose fault point `ckpt` comes before the
//! buddy copy); a rank whose iterations met a fault takes part with
//! `Checkpointer::abandon`. On a fault every rank revokes, calls
//! `replace_failed`, and restores (`restore(fresh)`, `fresh` for a
//! replacement's first restore; `ckpt.restore` is the library's fault
//! point there), then rolls back to the restored iteration; a failure
//! during the restore starts another recovery. Nothing committed yet
//! (`NoCheckpoint`) means starting over from the initial state
//! (`from_scratch=` counts it).
//!
//! At the end every rank compares its state with the one a sequential
//! simulation of every rank computes, and prints `OK ckpt rank=R
//! role=... recoveries=N restored=[..] from_scratch=N held=OWN/BUDDY
//! digest=..`. A restore that finds
//! the state lost (`Error::Lost`) ends the rank with `LEFT ckpt rank=R:
//! checkpoint lost: ...` (the same message at every rank).

use pertinax::CommunicatorExt as _;
use std::path::PathBuf;

use pertinax::{Comm, Error, Role, Universe};
use pertinax_checkpoint::{Checkpointer, Config, Error as CkptError};
use pertinax_harness::{report, setup, LEFT};
use pertinax_tests::arg;

/// The state of `rank` before the first iteration.
fn initial(rank: usize, words: usize) -> Vec<u64> {
    (0..words as u64)
        .map(|i| (rank as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i)
        .collect()
}

fn digest(s: &[u64]) -> u64 {
    s.iter().fold(0xCBF2_9CE4_8422_2325, |h, &w| {
        (h ^ w).wrapping_mul(0x100_0000_01B3)
    })
}

/// Iteration `it` of `rank`, given its neighbours' digests before it.
fn update(s: &mut [u64], rank: usize, it: u64, left: u64, right: u64) {
    for (i, w) in s.iter_mut().enumerate() {
        *w = w.rotate_left(7)
            ^ it.wrapping_mul(0x2545_F491_4F6C_DD1D)
            ^ rank as u64
            ^ left.wrapping_mul(i as u64 + 1)
            ^ right.rotate_left((i % 63) as u32);
    }
}

/// Every rank's state after `iters` iterations, computed sequentially.
fn simulate(n: usize, words: usize, iters: u64) -> Vec<Vec<u64>> {
    let mut all: Vec<Vec<u64>> = (0..n).map(|r| initial(r, words)).collect();
    for it in 1..=iters {
        let d: Vec<u64> = all.iter().map(|s| digest(s)).collect();
        for (r, s) in all.iter_mut().enumerate() {
            update(s, r, it, d[(r + n - 1) % n], d[(r + 1) % n]);
        }
    }
    all
}

/// Iterations after `it` up to `to`.
fn segment(c: &Comm, s: &mut [u64], it: &mut u64, to: u64) -> Result<(), Error> {
    let (me, n) = (c.rank().index(), c.size());
    let (prev, next) = ((me + n - 1) % n, (me + 1) % n);
    while *it < to {
        pertinax::fault_point("iter");
        let d = [digest(s)];
        let (mut left, mut right) = ([d[0]], [d[0]]);
        if n > 1 {
            c.sendrecv(&d, next, 1, &mut left, prev, 1)?;
            c.sendrecv(&d, prev, 2, &mut right, next, 2)?;
        }
        *it += 1;
        update(s, me, *it, left[0], right[0]);
    }
    Ok(())
}

fn bytes(s: &[u64]) -> Vec<u8> {
    s.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn words_of(b: &[u8], words: usize) -> Result<Vec<u64>, String> {
    if b.len() != words * 8 {
        return Err(format!("restored {} bytes, want {}", b.len(), words * 8));
    }
    Ok(b.chunks_exact(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect())
}

fn run(u: &Universe, a: &[String]) -> Result<String, String> {
    let iters = arg(a, 0, 60);
    let every = arg(a, 1, 10).max(1);
    let words = arg(a, 2, 512) as usize;
    let dir = a.get(3).filter(|d| d.as_str() != "-").map(PathBuf::from);
    let mut comm = u.world();
    let (me, n) = (comm.rank().index(), comm.size());
    let config = Config { keep: 2, dir };
    let mut ck = Checkpointer::new(&comm, config).map_err(|e| e.to_string())?;
    let mut state = initial(me, words);
    let mut it = 0u64;
    let mut restored: Vec<u64> = Vec::new();
    let mut recoveries = 0u32;
    // A replacement restores first (the survivors do, after their
    // replace_failed); it lost its memory, on its first restore only.
    let resume = a.get(4).is_some_and(|r| r == "resume");
    let mut fresh = resume || matches!(u.role(), Role::Replacement { .. });
    let mut restoring = fresh;
    let mut from_scratch = 0u32;
    loop {
        let fault = if restoring {
            let r = ck.restore(&comm, fresh);
            fresh = false;
            match r {
                Ok((v, b)) => {
                    state = words_of(&b, words)?;
                    it = v;
                    restored.push(v);
                    restoring = false;
                    continue;
                }
                Err(CkptError::NoCheckpoint) => {
                    // Nothing was committed: start over.
                    state = initial(me, words);
                    it = 0;
                    from_scratch += 1;
                    restoring = false;
                    continue;
                }
                Err(e) if e.is_fault() => true,
                Err(e @ CkptError::Lost { .. }) => return Err(format!("{LEFT}{e}")),
                Err(e) => return Err(format!("restore: {e}")),
            }
        } else {
            // The next sync point: 0 until something is committed.
            let to = match ck.latest() {
                None => 0,
                Some(_) => (it + every).min(iters),
            };
            let c = match segment(&comm, &mut state, &mut it, to) {
                Ok(()) => ck.checkpoint(&comm, to, &bytes(&state)),
                Err(e) if e.is_fault() => Err(ck.abandon(&comm, to)),
                Err(e) => return Err(format!("iteration {it}: {e}")),
            };
            match c {
                Ok(()) if to == iters => break,
                Ok(()) => false,
                Err(e) if e.is_fault() => true,
                Err(e) => return Err(format!("checkpoint {to}: {e}")),
            }
        };
        if fault {
            let _ = comm.revoke();
            let r = comm
                .replace_failed()
                .map_err(|e| format!("replace_failed: {e}"))?;
            comm = r.comm;
            recoveries += 1;
            restoring = true;
        }
    }
    let want = &simulate(n, words, iters)[me];
    if state != *want {
        let i = state.iter().zip(want).position(|(x, y)| x != y);
        return Err(format!(
            "state differs from the fault-free one (first word {i:?}), restored {restored:?}"
        ));
    }
    let how = std::env::var(pertinax_wire::env::ROLE).unwrap_or_default();
    let role = match u.role() {
        Role::Original => "original".to_string(),
        _ => format!("replacement({how})"),
    };
    let held = ck.held();
    Ok(format!(
        "role={role} recoveries={recoveries} restored={restored:?} from_scratch={from_scratch} \
         held={:?}/{:?} digest={:016x}",
        held.own,
        held.buddy,
        digest(&state)
    ))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let u = setup("ckpt init", pertinax::init());
    let rank = u.world().rank().index();
    report("ckpt", rank, run(&u, &args)).or_exit();
    drop(u);
}
