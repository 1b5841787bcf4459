//! Rank program for the fault-tolerance tests: `ulfm-ranks SCENARIO
//! [ARGS]`. Every survivor prints `OK SCENARIO rank=R ...` and exits 0 when
//! its checks passed; a failed check prints `FAIL ...` and exits 1. Ranks
//! that the scenario kills die by SIGKILL (they never print).
//!
//! The scenarios port the ULFM community's validation tests (see the
//! tests in `tests/ulfm.rs` for what each one checks).

use std::time::{Duration, Instant};

use pertinax::{Comm, Error, Op, Rank, Universe, ANY_SOURCE, ANY_TAG};
use pertinax_wire::rng::SplitMix64;

type R = Result<String, String>;

use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::scenario::Ulfm;
use pertinax_tests::{arg, check, e};

/// Dies at once, like a crash.
fn die() -> ! {
    let _ = pertinax_tests::kill_self();
    std::process::abort()
}

fn is_fault(r: &Result<(), Error>) -> bool {
    matches!(r, Err(e) if e.is_fault())
}

/// Sum of ones over `c`.
fn count(c: &Comm) -> Result<u64, Error> {
    let mut s = [0u64];
    c.allreduce(&[1u64], &mut s, &Op::sum())?;
    Ok(s[0])
}

/// 1 and 2: the last rank dies during a series of allreduces; every
/// survivor gets an error (no hang); a communicator split off earlier
/// without the dead rank still works. With `revoke`, the first survivor to
/// see the error revokes, one survivor computes for a while without calling
/// the library, and then all shrink and go on.
fn coll_kill(w: &Comm, a: &[String], revoke: bool) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let victim = n - 1;
    let low = w
        .split(Some((me < n / 2) as u32), 0)
        .map_err(e)?
        .ok_or("no color")?;
    let mut err = None;
    for i in 0..1000u64 {
        if me == victim && i == arg(a, 0, 5) {
            die();
        }
        let mut s = [0u64];
        match w.allreduce(&[i], &mut s, &Op::sum()) {
            Ok(()) => check!(s[0] == i * n as u64, "iteration {i}: sum {}", s[0]),
            Err(x) => {
                err = Some(x);
                break;
            }
        }
    }
    let err = err.ok_or("1000 allreduces succeeded although a rank died")?;
    check!(err.is_fault(), "not a fault error: {err}");
    if let Error::ProcFailed { ranks } = &err {
        check!(ranks == &[Rank(victim as i32)], "wrong ranks {ranks:?}");
    }
    if me < n / 2 {
        check!(count(&low).map_err(e)? == (n / 2) as u64, "low half broken");
    }
    if !revoke {
        // Without a revoke the world keeps failing the same way.
        let r = w.barrier();
        check!(is_fault(&r), "barrier after the failure: {r:?}");
        return Ok(format!("first={}", class(&err)));
    }
    w.revoke().map_err(e)?;
    if me == 1 {
        // Survivors computing for a long time outside the library.
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(300) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
    }
    let r = w.barrier();
    check!(
        matches!(r, Err(Error::Revoked)),
        "barrier on a revoked comm: {r:?}"
    );
    let s = w.shrink().map_err(e)?;
    check!(s.size() == n - 1, "shrunk size {}", s.size());
    check!(s.rank().index() == me, "rank changed to {}", s.rank());
    check!(
        count(&s).map_err(e)? == (n - 1) as u64,
        "allreduce on the shrunk comm"
    );
    Ok(format!("first={}", class(&err)))
}

fn class(e: &Error) -> &'static str {
    match e {
        Error::ProcFailed { .. } => "PROC_FAILED",
        Error::ProcFailedPending { .. } => "PROC_FAILED_PENDING",
        Error::Revoked => "REVOKED",
        _ => "OTHER",
    }
}

/// 3: any-source receives report `ProcFailedPending` while a failure is
/// unacknowledged, and work again after `ack_failed`.
fn anysource(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let victim = n - 1;
    if me == victim {
        die();
    }
    if me == 0 {
        let mut b = [0u64];
        // Nobody sends yet: the any-source receive can only end by the
        // failure.
        let r = w.recv(&mut b, ANY_SOURCE, ANY_TAG);
        match r {
            Err(Error::ProcFailedPending { ranks }) => {
                check!(ranks == [Rank(victim as i32)], "pending ranks {ranks:?}")
            }
            other => return Err(format!("any-source before ack: {other:?}")),
        }
        let r = w.recv(&mut b, victim, 0);
        check!(
            matches!(&r, Err(Error::ProcFailed { ranks }) if ranks == &[Rank(victim as i32)]),
            "named receive from the dead: {r:?}"
        );
        let acked = w.ack_failed(usize::MAX).map_err(e)?;
        check!(acked == 1, "acked {acked}");
        // Tell the others to send, then take one message from each.
        for r in 1..victim {
            w.send(&[0u64], r, 1).map_err(e)?;
        }
        let mut got = vec![false; n];
        for _ in 1..victim {
            let st = w.recv(&mut b, ANY_SOURCE, 2).map_err(e)?;
            check!(b[0] == st.source.0 as u64 * 10, "content {}", b[0]);
            got[st.source.index()] = true;
        }
        check!(got[1..victim].iter().all(|&g| g), "missing senders {got:?}");
    } else {
        let mut b = [0u64];
        w.recv(&mut b, 0, 1).map_err(e)?;
        w.send(&[me as u64 * 10], 0, 2).map_err(e)?;
    }
    Ok(String::new())
}

/// 4: a failure in one half leaves the other half's communicator
/// without any error at all.
fn insulation(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let upper = me >= n / 2;
    let half = w
        .split(Some(upper as u32), 0)
        .map_err(e)?
        .ok_or("no color")?;
    let victim = n - 1;
    // The split is a collective on the world: a victim dying as soon as its
    // own split returned could fail a lower rank's split still under way
    // (ULFM allows that). Each lower rank tells the victim its split ended.
    if !upper {
        w.send(&[1u8], victim, 4).map_err(e)?;
    }
    for i in 0..200u64 {
        if me == victim && i == 10 {
            let mut b = [0u8];
            for r in 0..n / 2 {
                w.recv(&mut b, r, 4).map_err(e)?;
            }
            die();
        }
        if upper {
            if half.barrier().is_err() {
                return Ok("upper-saw-failure".into());
            }
            continue;
        }
        check!(count(&half).map_err(e)? == (n / 2) as u64, "low half sum");
        let (k, hs) = (half.rank().index(), half.size());
        let mut b = [0u64];
        half.sendrecv(&[i], (k + 1) % hs, 3, &mut b, (k + hs - 1) % hs, 3)
            .map_err(e)?;
        check!(b[0] == i, "ring value");
    }
    check!(!upper, "the upper half never saw the failure");
    Ok("lower-clean".into())
}

/// 5: the acknowledged group has exactly as many members as the failures
/// observed, after each of two failures; acknowledgements are per
/// communicator.
fn acked(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let other = w.dup().map_err(e)?;
    let victims = [n - 1, n - 2];
    for (k, &v) in victims.iter().enumerate() {
        // The victim dies once every live rank told it to (point-to-point
        // keeps working between live ranks after a failure).
        if me == v {
            let mut b = [0u8];
            for r in (0..n).filter(|&r| r != v && !victims[..k].contains(&r)) {
                w.recv(&mut b, r, 9).map_err(e)?;
            }
            die();
        }
        w.send(&[1u8], v, 9).map_err(e)?;
        let t = Instant::now();
        loop {
            let f = w.get_failed().map_err(e)?;
            if f.size() == k + 1 {
                break;
            }
            check!(
                t.elapsed() < Duration::from_secs(10),
                "failure {k} never seen"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let before = w.get_acked().map_err(e)?.size();
        check!(before == k, "acked before {before}");
        let now = w.ack_failed(usize::MAX).map_err(e)?;
        check!(now == k + 1, "ack_failed returned {now}");
        let g = w.get_acked().map_err(e)?;
        check!(g.size() == k + 1, "acked group of {}", g.size());
        check!(
            other.get_failed().map_err(e)?.size() == k + 1,
            "failed on the dup"
        );
        check!(
            other.get_acked().map_err(e)?.size() == 0,
            "acks leak across comms"
        );
    }
    Ok(String::new())
}

/// 7: revoke then shrink, many times in a row (with one failure first).
fn revoke_shrink(w: &Comm, a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let reps = arg(a, 0, 100);
    if me == n - 1 {
        die();
    }
    let mut c = w.clone();
    for i in 0..reps {
        if me == (i as usize % (n - 1)) {
            c.revoke().map_err(e)?;
        }
        let r = c.barrier();
        check!(is_fault(&r), "rep {i}: barrier on the revoked comm: {r:?}");
        let s = c.shrink().map_err(e)?;
        check!(s.size() == n - 1, "rep {i}: size {}", s.size());
        check!(s.rank().index() == me, "rep {i}: rank {}", s.rank());
        check!(
            count(&s).map_err(e)? == (n - 1) as u64,
            "rep {i}: allreduce"
        );
        // Nobody revokes `s` before everyone is done with its allreduce
        // (an agreement is not cut by a revocation).
        s.agree(1).map_err(e)?;
        c.free().ok();
        c = s;
    }
    Ok(String::new())
}

/// 8: ranks kill themselves one at a time at random; each time the
/// survivors shrink; the last one finishes.
fn suicide(w: &Comm, a: &[String]) -> R {
    let me = w.rank().index();
    let mut rng = SplitMix64::new(arg(a, 0, 7));
    let mut c = w.clone();
    let mut round = 0;
    while c.size() > 1 {
        let victim = rng.below_mod(c.size() as u64) as usize;
        if c.rank().index() == victim {
            die();
        }
        // Detect, revoke, shrink.
        let mut r = Ok(());
        for _ in 0..1000 {
            r = c.barrier();
            if r.is_err() {
                break;
            }
        }
        check!(is_fault(&r), "round {round}: no error after a death: {r:?}");
        c.revoke().map_err(e)?;
        let s = c.shrink().map_err(e)?;
        check!(s.size() == c.size() - 1, "round {round}: size {}", s.size());
        c = s;
        round += 1;
    }
    Ok(format!("last world_rank={me} rounds={round}"))
}

/// 10: agreement with its participants dying in it. `ft.agree` fault
/// points (see the library) place the kills; the survivors check the
/// uniform outcome.
fn agree_kill(w: &Comm, a: &[String]) -> R {
    let n = w.size();
    let rounds = arg(a, 0, 20);
    let mut last = None;
    for i in 0..rounds {
        let flag = if (w.rank().index() as u64 + i).is_multiple_of(5) {
            0xff
        } else {
            0xfff
        };
        // Odd rounds are non-blocking (contribute, then test until done).
        let d = if i % 2 == 1 {
            let mut p = w.iagree(flag).map_err(e)?;
            if i == 1 {
                let r = w.agree(1);
                check!(
                    matches!(r, Err(Error::InvalidArgument(_))),
                    "a second agreement while one is pending: {r:?}"
                );
            }
            loop {
                if let Some(d) = p.test().map_err(e)? {
                    break d;
                }
            }
        } else {
            w.agree_detailed(flag).map_err(e)?
        };
        last = Some(d.clone());
        // Agreed flags are an AND of the contributions of a superset of the
        // survivors.
        check!(
            d.flags & !0xfff == 0 && d.flags & 0xff == 0xff,
            "flags {:x}",
            d.flags
        );
        check!(d.failed.len() < n, "everyone failed?");
    }
    let d = last.ok_or("no rounds")?;
    // Everybody reports its final view so the test compares them.
    let failed: Vec<i32> = d.failed.iter().map(|r| r.0).collect();
    Ok(format!("flags={:x} failed={failed:?}", d.flags))
}

/// 6 (intracommunicator): pending receives on a communicator are cut by a
/// revocation, even when the revoker dies in the middle of revoking (the
/// launcher kills rank 1 at its `ft.revoke.partial` fault point).
fn revoke_pending(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let c = w.dup().map_err(e)?;
    if me == 1 {
        std::thread::sleep(Duration::from_millis(100));
        c.revoke().map_err(e)?;
        // With the fault plan this process dies inside revoke.
        return Ok("revoker-survived".into());
    }
    // Everyone waits for a message nobody sends, from a live rank.
    let from = if me == 0 { 2 % n } else { 0 };
    let mut b = [0u64];
    let r = pertinax::scope(|s| {
        let q = c.irecv(s, &mut b, from, 99)?;
        q.wait().map(|_| ())
    });
    check!(matches!(r, Err(Error::Revoked)), "pending receive: {r:?}");
    check!(c.is_revoked(), "not revoked");
    let r = c.send(&[1u64], from, 5);
    check!(matches!(r, Err(Error::Revoked)), "send after revoke: {r:?}");
    let r = c.barrier();
    check!(
        matches!(r, Err(Error::Revoked)),
        "barrier after revoke: {r:?}"
    );
    // The world is not revoked.
    let s = w.shrink().map_err(e)?;
    check!(
        count(&s).map_err(e)? as usize == s.size(),
        "allreduce on the shrunk world"
    );
    Ok(format!("shrunk={}", s.size()))
}

/// 6 (intercommunicator): parents spawn children; everybody blocks in a
/// receive on the intercommunicator; one parent revokes it; every pending
/// receive on both sides ends with `Revoked`.
fn revoke_inter(u: &Universe, w: &Comm, a: &[String]) -> R {
    let me = w.rank().index();
    if let Some(parent) = u.parent() {
        // Child: block in a receive from parent 0 that never sends.
        let mut b = [0u64];
        parent.send(&[me as u64], 0, 1).map_err(e)?;
        let r = parent.recv(&mut b, 0, 99);
        check!(matches!(r, Err(Error::Revoked)), "child receive: {r:?}");
        check!(w.barrier().is_ok(), "the children's world is not revoked");
        return Ok("child".into());
    }
    let exe = std::env::current_exe().map_err(|x| x.to_string())?;
    let kids = arg(a, 0, 2) as usize;
    let inter = w
        .spawn(
            &exe.to_string_lossy(),
            &[Ulfm::RevokeInter.as_str()],
            kids,
            Rank(0),
        )
        .map_err(e)?;
    check!(
        inter.is_inter() && inter.remote_size() == kids,
        "intercomm shape"
    );
    if me == 0 {
        // Hear from every child, then revoke.
        let mut b = [0u64];
        for k in 0..kids {
            inter.recv(&mut b, k, 1).map_err(e)?;
        }
        std::thread::sleep(Duration::from_millis(50));
        inter.revoke().map_err(e)?;
        return Ok("revoker".into());
    }
    let mut b = [0u64];
    let r = inter.recv(&mut b, 0, 99);
    check!(matches!(r, Err(Error::Revoked)), "parent receive: {r:?}");
    Ok("parent".into())
}

/// Spawn + merge: the merged communicator orders parents first and works.
fn spawn_merge(u: &Universe, w: &Comm, a: &[String]) -> R {
    let kids = arg(a, 0, 2) as usize;
    let inter = match u.parent() {
        Some(p) => p,
        None => {
            let exe = std::env::current_exe().map_err(|x| x.to_string())?;
            w.spawn(
                &exe.to_string_lossy(),
                &[Ulfm::SpawnMerge.as_str(), &kids.to_string()],
                kids,
                Rank(0),
            )
            .map_err(e)?
        }
    };
    let child = u.parent().is_some();
    let m = inter.merge(child).map_err(e)?;
    let parents = if child { inter.remote_size() } else { w.size() };
    check!(m.size() == parents + kids, "merged size {}", m.size());
    let want = if child {
        parents + w.rank().index()
    } else {
        w.rank().index()
    };
    check!(
        m.rank().index() == want,
        "merged rank {} want {want}",
        m.rank()
    );
    check!(
        count(&m).map_err(e)? as usize == m.size(),
        "allreduce on the merged comm"
    );
    Ok(if child {
        "child".into()
    } else {
        "parent".into()
    })
}

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
fn replace(u: &Universe, w: &Comm, a: &[String]) -> R {
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
fn campaign(u: &Universe, w: &Comm, a: &[String]) -> R {
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
                return c.barrier();
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
fn mismatch(w: &Comm, a: &[String]) -> R {
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
fn finalized(u: &Universe, w: &Comm, a: &[String]) -> R {
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
