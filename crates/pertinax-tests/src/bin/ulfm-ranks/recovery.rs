//! The recovery scenarios: non-shrinking recovery with buddy copies
//! (`replace`), the randomized campaign of kills under shrinking or
//! replacing recovery, mismatched recovery calls, and a rank that
//! finalizes early (not failed).

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::Duration;

use pertinax::{Comm, Error, Op, Rank, Universe};
use pertinax_tests::{arg, check, e};

use super::{count, die, R};

/// The value rank `r` holds after step `s` (from `x` before it).
fn next_value(x: u64, r: usize, s: u64) -> u64 {
    x.wrapping_mul(6364136223846793005)
        .wrapping_add((r as u64) << 32 | s)
}

/// Every rank's value after `steps` steps.
fn values_after(n: usize, steps: u64) -> Vec<u64> {
    (0..n)
        .map(|r| (0..steps).fold(r as u64 + 1, |x, s| next_value(x, r, s)))
        .collect()
}

/// Per-rank state of the buddy-checkpoint scenario: the value and the
/// left neighbour's value, after the last two committed steps.
#[derive(Clone, Copy, Debug)]
struct Kept {
    step: u64,
    x: u64,
    left: u64,
}

/// 9: non-shrinking recovery with buddy copies: every rank advances a
/// value and keeps a copy of its left neighbour's; when a rank dies, the
/// survivors replace it (spare or new process), the new process reloads
/// its value from its right neighbour's copy and its own copy from its
/// left neighbour, and the job goes on to a verified result.
pub(super) fn replace(u: &Universe, w: &Comm, a: &[String]) -> R {
    let steps = arg(a, 0, 40);
    let mut c = w.clone();
    let n = c.size();
    let me = c.rank().index();
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    // kept[0] is the last committed step, kept[1] the one before.
    let mut kept = [Kept {
        step: 0,
        x: me as u64 + 1,
        left: left as u64 + 1,
    }; 2];
    let mut recoveries = 0;
    let mut replaced: Vec<usize> = Vec::new();
    let mut replacement = matches!(u.role(), pertinax::Role::Replacement { .. });
    loop {
        if replacement || recoveries > 0 {
            // Roll back to the lowest committed step anyone has.
            let mine = if replacement { u64::MAX } else { kept[0].step };
            let mut m = [0u64];
            c.allreduce(&[mine], &mut m, &Op::min()).map_err(e)?;
            let m = m[0];
            if replacement {
                kept[0].step = m;
            } else {
                let k = if kept[0].step == m { kept[0] } else { kept[1] };
                check!(k.step == m, "no state for step {m}: {kept:?}");
                kept = [k, k];
            }
            // My right neighbour gives my value back (a replacement sends
            // nothing useful to its left: that one checks nothing), then my
            // left neighbour gives me its own (the copy I keep).
            let mut g0 = [0u64];
            c.sendrecv(&[kept[0].left], left, 7, &mut g0, right, 7)
                .map_err(e)?;
            if replacement {
                kept[0].x = g0[0];
            }
            let mut g1 = [0u64];
            c.sendrecv(&[kept[0].x], right, 8, &mut g1, left, 8)
                .map_err(e)?;
            if replacement {
                kept[0].left = g1[0];
                kept[1] = kept[0];
                replacement = false;
            } else {
                check!(
                    replaced.contains(&right) || g0[0] == kept[0].x,
                    "my right neighbour's copy of my value differs: {} vs {:?} (replaced {replaced:?})", g0[0], kept[0]
                );
                check!(
                    replaced.contains(&left) || g1[0] == kept[0].left,
                    "my left neighbour's value differs from my copy"
                );
            }
        }
        // Each step ends with an agreement on whether everyone did it, so
        // that all survivors commit the same steps and call the same
        // recovery operations in the same order.
        let mut recover = false;
        while kept[0].step < steps {
            let s = kept[0].step;
            pertinax::fault_point("step");
            let x = next_value(kept[0].x, me, s);
            let mut l = [0u64];
            let mut sum = [0u64];
            let r = c
                .sendrecv(&[x], right, 1, &mut l, left, 1)
                .and_then(|_| c.allreduce(&[x], &mut sum, &Op::sum()));
            if let Err(x) = &r {
                check!(x.is_fault(), "not a fault: {x}");
                // Free the others from their pending operations.
                c.revoke().map_err(e)?;
            }
            let d = c.agree_detailed(r.is_ok() as u32).map_err(e)?;
            if d.flags != 1 || !d.failed.is_empty() {
                recover = true;
                break;
            }
            let want = values_after(n, s + 1)
                .iter()
                .fold(0u64, |a, v| a.wrapping_add(*v));
            check!(sum[0] == want, "step {s}: wrong sum");
            kept = [
                Kept {
                    step: s + 1,
                    x,
                    left: l[0],
                },
                kept[0],
            ];
        }
        if !recover {
            break;
        }
        let r = c.replace_failed().map_err(e)?;
        check!(
            r.comm.size() == n && r.comm.rank().index() == me,
            "restored shape"
        );
        replaced = r.replaced.iter().map(|x| x.index()).collect();
        c = r.comm;
        recoveries += 1;
    }
    check!(kept[0].x == values_after(n, steps)[me], "final value");
    Ok(format!("recoveries={recoveries} role={:?}", u.role()))
}

/// The randomized campaign's program: point-to-point, collectives and
/// recovery under seeded random kills (from `pertinax run --fault-seed`).
/// Recovery alternates between shrinking and, when `replace` is given,
/// replacing. Every survivor ends with the list of dead world ranks it
/// agrees on, for the test to compare.
pub(super) fn campaign(u: &Universe, w: &Comm, a: &[String]) -> R {
    let steps = arg(a, 0, 30);
    let replace_mode = a.get(1).map(String::as_str) == Some("replace");
    let mut c = w.clone();
    let world_of = |c: &Comm| -> Result<Vec<usize>, Error> {
        if replace_mode {
            // Non-shrinking: ranks keep their numbers.
            return Ok((0..c.size()).collect());
        }
        let all: Vec<Rank> = (0..c.size()).map(|r| Rank(r as i32)).collect();
        Ok(c.group()
            .translate_ranks(&all, &w.group())?
            .into_iter()
            .map(|r| r.map_or(usize::MAX, |r| r.index()))
            .collect())
    };
    let original = u.role() == pertinax::Role::Original;
    let mut s = 0u64;
    let mut recoveries = 0;
    let mut replaced: Vec<usize> = Vec::new();
    // A replacement learns the step from the survivors' values (they pass
    // it to `replace_failed_with`); rank 0 (never killed) also broadcasts
    // it after every replacement, and everyone checks the two agree.
    let mut sync = !original;
    let mut told: Option<u64> = None;
    if let pertinax::Role::Replacement {
        rank,
        replaced: with,
        values,
        ..
    } = u.role()
    {
        if !with.contains(&rank) {
            return Err(format!("replacement of {rank} told replaced={with:?}"));
        }
        let v: Vec<u64> = values.iter().flatten().copied().collect();
        if v.is_empty() || v.windows(2).any(|p| p[0] != p[1]) {
            return Err(format!("replacement told values {values:?}"));
        }
        s = v[0];
        told = Some(s);
    }
    // Step `steps` is the way out: only the synchronization.
    while s <= steps {
        pertinax::fault_point("step");
        let n = c.size();
        let me = c.rank().index();
        let r: Result<(), Error> = (|| {
            if sync {
                let mut b = [s];
                c.bcast(&mut b, 0)?;
                if b[0] != s {
                    return Err(Error::InvalidArgument(format!(
                        "rank 0 is at step {} but the replacement was told {s}",
                        b[0]
                    )));
                }
                told = None;
            }
            if s == steps {
                return c.barrier().map(drop);
            }
            // A ring exchange of a step-dependent message of mixed size.
            let len = [8usize, 4096, 100_000][(s % 3) as usize];
            let sbuf = vec![(s as u8) ^ (me as u8); len];
            let mut rbuf = vec![0u8; len];
            pertinax::fault_point("p2p");
            c.sendrecv(&sbuf, (me + 1) % n, 3, &mut rbuf, (me + n - 1) % n, 3)?;
            if rbuf
                .iter()
                .any(|&b| b != (s as u8) ^ (((me + n - 1) % n) as u8))
            {
                return Err(Error::InvalidArgument("ring content".into()));
            }
            pertinax::fault_point("coll");
            let mut sum = [0u64];
            let wr = world_of(&c)?;
            c.allreduce(&[(wr[me] as u64 + 1) * (s + 1)], &mut sum, &Op::sum())?;
            let want: u64 = wr.iter().map(|&x| (x as u64 + 1) * (s + 1)).sum();
            if sum[0] != want {
                return Err(Error::InvalidArgument(format!(
                    "step {s}: sum {} want {want}",
                    sum[0]
                )));
            }
            let mut b = vec![0u64; 64];
            if me == 0 {
                b.iter_mut()
                    .enumerate()
                    .for_each(|(i, v)| *v = s * 1000 + i as u64);
            }
            c.bcast(&mut b, 0)?;
            if b.iter().enumerate().any(|(i, &v)| v != s * 1000 + i as u64) {
                return Err(Error::InvalidArgument("bcast content".into()));
            }
            Ok(())
        })();
        if let Err(x) = &r {
            if !x.is_fault() {
                return Err(format!("step {s}: {x}"));
            }
            // Free the others from their pending operations.
            c.revoke().map_err(e)?;
        }
        // Everybody agrees on whether the step was done everywhere (an
        // agreement is not cut by the revocation), so all survivors take
        // the same path.
        pertinax::fault_point("agree");
        let d = c.agree_detailed(r.is_ok() as u32).map_err(e)?;
        if d.flags == 1 && d.failed.is_empty() {
            s += 1;
            sync = false;
        } else if replace_mode {
            let r = c.replace_failed_with(s).map_err(e)?;
            // Every contributor passed the same step (they agreed on every
            // step so far).
            if r.values.iter().flatten().any(|&v| v != s) {
                return Err(format!("step {s}: values {:?}", r.values));
            }
            replaced.extend(r.replaced.iter().map(|x| x.index()));
            c = r.comm;
            sync = true;
            recoveries += 1;
        } else {
            c = c.shrink().map_err(e)?;
            recoveries += 1;
        }
    }
    if !original {
        if let Some(t) = told {
            return Err(format!("told step {t} but never checked"));
        }
        return Ok(format!("replacement rank={}", c.rank()));
    }
    let mut dead: Vec<usize> = if replace_mode {
        replaced
    } else {
        // Agree on the dead: every failure known anywhere.
        let d = w.agree_detailed(1).map_err(e)?;
        d.failed.iter().map(|r| r.index()).collect()
    };
    dead.sort_unstable();
    let dead: Vec<String> = dead.iter().map(|r| r.to_string()).collect();
    Ok(format!(
        "dead=[{}] recoveries={recoveries} size={}",
        dead.join(","),
        c.size()
    ))
}

/// Mismatched recovery calls: the last rank dies, then rank 0 calls
/// `agree_detailed` where the others call `replace_failed` (with `shrink`,
/// rank 0 calls `shrink`). Every survivor must get `RecoveryMismatch`
/// naming the other call, nothing may be started, and the next matching
/// call (an agreement) works and names the dead rank.
pub(super) fn mismatch(w: &Comm, a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let other = a.first().map(String::as_str).unwrap_or("agree");
    if me == n - 1 {
        die();
    }
    // Wait until the death is known here, so that nobody's call is made
    // before it (the decision does not depend on it; the test's does).
    while w.get_failed().map_err(e)?.size() == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (r, mine, theirs) = if me == 0 {
        match other {
            "shrink" => (
                w.shrink().map(|_| ()),
                pertinax::RecoveryCall::Shrink,
                pertinax::RecoveryCall::ReplaceFailed,
            ),
            _ => (
                w.agree_detailed(1).map(|_| ()),
                pertinax::RecoveryCall::Agree,
                pertinax::RecoveryCall::ReplaceFailed,
            ),
        }
    } else {
        let theirs = if other == "shrink" {
            pertinax::RecoveryCall::Shrink
        } else {
            pertinax::RecoveryCall::Agree
        };
        (
            w.replace_failed().map(|_| ()),
            pertinax::RecoveryCall::ReplaceFailed,
            theirs,
        )
    };
    let want_rank = if me == 0 { 1 } else { 0 };
    check!(
        matches!(&r, Err(Error::RecoveryMismatch { expected, found, rank })
            if *expected == mine && *found == theirs && rank.index() == want_rank),
        "mismatched call returned {r:?}"
    );
    let msg = r.err().map(|x| x.to_string()).unwrap_or_default();
    // Back in step: the next calls match.
    let d = w.agree_detailed(1).map_err(e)?;
    check!(
        d.failed == [Rank(n as i32 - 1)] && d.flags == 1,
        "agreement after the mismatch: {d:?}"
    );
    Ok(format!("mismatch-detected: {msg}"))
}

/// A rank that finalizes early is not failed: the last rank ends
/// normally; the others see it in `Agreement::finalized` and not in
/// `failed` nor `get_failed`, `replace_failed` replaces nobody (the
/// finalized rank keeps its place), and `shrink` leaves it out. With
/// `kill`, rank 1 is also killed, and only rank 1 is replaced.
pub(super) fn finalized(u: &Universe, w: &Comm, a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let kill = a.first().map(String::as_str) == Some("kill");
    if let pertinax::Role::Replacement { rank, replaced, .. } = u.role() {
        check!(replaced == [rank], "replacement told {replaced:?}");
        let d = w.agree_detailed(1).map_err(e)?;
        check!(
            d.finalized == [Rank(n as i32 - 1)],
            "replacement's view: {d:?}"
        );
        return Ok(format!("replacement finalized={:?}", d.finalized));
    }
    if me == n - 1 {
        return Ok("finished-early".into());
    }
    if kill && me == 1 {
        die();
    }
    let d = w.agree_detailed(1).map_err(e)?;
    let dead: Vec<Rank> = if kill { vec![Rank(1)] } else { vec![] };
    check!(
        d.finalized == [Rank(n as i32 - 1)] && d.failed == dead && d.flags == 1,
        "agreement: {d:?}"
    );
    let failed = w.get_failed().map_err(e)?;
    check!(
        failed.size() == dead.len(),
        "get_failed lists {} ranks",
        failed.size()
    );
    let r = w.replace_failed_with(me as u64 + 10).map_err(e)?;
    check!(r.replaced == dead, "replaced {:?}", r.replaced);
    check!(
        r.values[n - 1].is_none() && r.values[0] == Some(10),
        "values {:?}",
        r.values
    );
    let d = r.comm.agree_detailed(1).map_err(e)?;
    check!(
        d.finalized == [Rank(n as i32 - 1)] && d.failed.is_empty(),
        "restored communicator: {d:?}"
    );
    let s = w.shrink().map_err(e)?;
    check!(
        s.size() == n - 1 - dead.len(),
        "shrunk to {} ranks",
        s.size()
    );
    check!(
        count(&s).map_err(e)? as usize == s.size(),
        "allreduce on the shrunk communicator"
    );
    Ok(format!(
        "finalized={:?} failed={:?} replaced={:?}",
        d.finalized, dead, r.replaced
    ))
}
