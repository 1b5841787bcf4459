//! Rank program for the fault-tolerance tests: `ulfm-ranks SCENARIO
//! [ARGS]`. Every survivor prints `OK SCENARIO rank=R ...` and exits 0 when
//! its checks passed; a failed check prints `FAIL ...` and exits 1. Ranks
//! that the scenario kills die by SIGKILL (they never print).
//!
//! The scenarios port the ULFM community's validation tests (see the
//! tests in `tests/ulfm.rs` for what each one checks): those ports are
//! in `validation.rs`, the recovery scenarios in `recovery.rs`, and the
//! others here.

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::Instant;

use pertinax::{Comm, Error, Op, Rank, Universe};

type R = Result<String, String>;

use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::scenario::Ulfm;
use pertinax_tests::{arg, check, e};

mod recovery;
mod validation;

use recovery::{campaign, finalized, mismatch, replace};
use validation::{
    acked, agree_kill, anysource, coll_kill, insulation, revoke_inter, revoke_pending,
    revoke_shrink, sent_before_death, spawn_merge, suicide,
};

/// Dies at once, like a crash.
fn die() -> ! {
    let _ = pertinax_tests::kill_self();
    std::process::abort()
}

fn is_fault<T>(r: &Result<T, Error>) -> bool {
    matches!(r, Err(e) if e.is_fault())
}

/// Sum of ones over `c`.
fn count(c: &Comm) -> Result<u64, Error> {
    let mut s = [0u64];
    c.allreduce(&[1u64], &mut s, &Op::sum())?;
    Ok(s[0])
}

/// A rank stops calling the library (stuck in a loop of its own) or is
/// stopped by a signal; the heartbeat monitor kills it, and the others,
/// blocked in an allreduce, get the failure, shrink and go on.
fn stuck(w: &Comm, a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let spin = a.first().map(String::as_str) == Some("spin");
    for i in 0..1_000_000u64 {
        pertinax::fault_point("step");
        if spin && me == n - 1 && i == 5 {
            let mut x = 0u64;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        if let Err(x) = count(w) {
            check!(x.is_fault(), "not a fault: {x}");
            w.revoke().map_err(e)?;
            let s = w.shrink().map_err(e)?;
            check!(s.size() == n - 1, "shrunk to {}", s.size());
            check!(
                count(&s).map_err(e)? as usize == n - 1,
                "allreduce on the shrunk comm"
            );
            return Ok(format!("detected at iteration {i}"));
        }
    }
    Err("never detected".into())
}

/// Failure isolation between process groups: parents spawn children;
/// with `child`, a child dies and the parents' world is untouched; with
/// `parent`, the spawning parent dies and the children either continue
/// (they see `ProcFailed` on the intercommunicator) or are ended by the
/// launcher (`--on-parent-failure end`).
fn groups(u: &Universe, w: &Comm, a: &[String]) -> R {
    let who = a.first().cloned().unwrap_or_default();
    if let Some(parent) = u.parent() {
        let me = w.rank().index();
        let mut b = [0u64];
        if who == "child" {
            if me == 0 {
                die();
            }
            parent.recv(&mut b, 0, 1).map_err(e)?;
            check!(b[0] == 1, "released with {}", b[0]);
            return Ok("child-released".into());
        }
        let r = parent.recv(&mut b, 0, 1);
        check!(
            matches!(&r, Err(Error::ProcFailed { ranks }) if ranks == &[Rank(0)]),
            "child waiting for parent 0: {r:?}"
        );
        return Ok("orphan-continued".into());
    }
    let exe = std::env::current_exe().map_err(|x| x.to_string())?;
    let inter = w
        .spawn(
            &exe.to_string_lossy(),
            &[Ulfm::Groups.as_str(), &who],
            2,
            Rank(0),
        )
        .map_err(e)?;
    if who == "parent" {
        if w.rank().index() == 0 {
            die();
        }
        return Ok("parent".into());
    }
    // A child dies: the parents see it on the intercommunicator only.
    let mut b = [0u64];
    let r = inter.recv(&mut b, 0, 5);
    check!(
        matches!(&r, Err(Error::ProcFailed { ranks }) if ranks == &[Rank(0)]),
        "receive from the dead child: {r:?}"
    );
    if w.rank().index() == 0 {
        // Release the surviving child.
        let r = inter.send(&[1u64], 1, 1);
        check!(r.is_ok(), "send to the live child: {r:?}");
    }
    check!(
        count(w).map_err(e)? as usize == w.size(),
        "the parents' world"
    );
    Ok("parent-unharmed".into())
}

/// Rough timings of the healthy agreement and shrink (the benchmark
/// program measures them properly): mean microseconds, max over ranks.
fn ft_timing(w: &Comm, a: &[String]) -> R {
    let reps = arg(a, 0, 200);
    for _ in 0..5 {
        w.agree(1).map_err(e)?;
    }
    w.barrier().map_err(e)?;
    let t = Instant::now();
    for _ in 0..reps {
        w.agree(1).map_err(e)?;
    }
    let agree = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    let mut sh = 0.0;
    for _ in 0..10 {
        w.barrier().map_err(e)?;
        let t = Instant::now();
        let s = w.shrink().map_err(e)?;
        sh += t.elapsed().as_secs_f64() * 1e6 / 10.0;
        s.free().map_err(e)?;
    }
    let mut m = [0f64; 2];
    w.allreduce(&[agree, sh], &mut m, &Op::max()).map_err(e)?;
    Ok(format!("agree_us={:.1} shrink_us={:.1}", m[0], m[1]))
}

/// An `iagree` returns before the others contributed: rank 0 starts one
/// and tests it (undecided: rank 1 has not contributed), then lets rank 1
/// in with a message; the others contribute at once. A blocking `iagree`
/// would leave rank 0 waiting for rank 1, which waits for rank 0's message.
fn iagree_returns_at_once(w: &Comm, _a: &[String]) -> R {
    let me = w.rank().index();
    let flag = 0xf0 | me as u32;
    let d = match me {
        0 => {
            let mut p = w.iagree(flag).map_err(e)?;
            let early = p.test().map_err(e)?;
            check!(
                early.is_none(),
                "decided before rank 1 contributed: {early:?}"
            );
            w.send(&[1u8], 1, 5).map_err(e)?;
            loop {
                if let Some(d) = p.test().map_err(e)? {
                    break d;
                }
            }
        }
        1 => {
            let mut b = [0u8];
            w.recv(&mut b, 0, 5).map_err(e)?;
            w.agree_detailed(flag).map_err(e)?
        }
        _ => w.agree_detailed(flag).map_err(e)?,
    };
    check!(d.flags == 0xf0 && d.failed.is_empty(), "agreed {d:?}");
    Ok(format!("flags={:x}", d.flags))
}

fn main() {
    let sc = Scenario::<Ulfm>::from_args();
    let u: Universe = setup("init", pertinax::init());
    let w = u.world();
    let rest = sc.args();
    let r = match sc.scenario() {
        Ulfm::CollKill => coll_kill(&w, rest, false),
        Ulfm::CollKillRevoke => coll_kill(&w, rest, true),
        Ulfm::Anysource => anysource(&w, rest),
        Ulfm::SentBeforeDeath => sent_before_death(&w, rest),
        Ulfm::IagreeAtOnce => iagree_returns_at_once(&w, rest),
        Ulfm::Insulation => insulation(&w, rest),
        Ulfm::Acked => acked(&w, rest),
        Ulfm::RevokeShrink => revoke_shrink(&w, rest),
        Ulfm::Suicide => suicide(&w, rest),
        Ulfm::AgreeKill => agree_kill(&w, rest),
        Ulfm::RevokePending => revoke_pending(&w, rest),
        Ulfm::RevokeInter => revoke_inter(&u, &w, rest),
        Ulfm::SpawnMerge => spawn_merge(&u, &w, rest),
        Ulfm::Replace => replace(&u, &w, rest),
        Ulfm::Campaign => campaign(&u, &w, rest),
        Ulfm::FtTiming => ft_timing(&w, rest),
        Ulfm::Stuck => stuck(&w, rest),
        Ulfm::Groups => groups(&u, &w, rest),
        Ulfm::Mismatch => mismatch(&w, rest),
        Ulfm::Finalized => finalized(&u, &w, rest),
    };
    report(sc.name(), w.rank().index(), r).or_exit();
    drop(u);
}
