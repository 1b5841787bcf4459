//! The ports of the ULFM community's validation tests (numbered as they
//! are): errors instead of hangs in collectives with a dying rank (with
//! and without revoke), any-source receives and acknowledgement,
//! insulation of a communicator without the dead, the acknowledged group,
//! revoke of intra- and intercommunicators with pending receives, revoke
//! then shrink in a loop, ranks killing themselves, agreement with dying
//! participants, and spawn then merge.

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::{Duration, Instant};

use pertinax::{Comm, Error, Op, Rank, Universe, ANY_SOURCE, ANY_TAG};
use pertinax_tests::scenario::Ulfm;
use pertinax_tests::{arg, check, e};
use pertinax_wire::rng::SplitMix64;

use super::{count, die, is_fault, R};

/// 1 and 2: the last rank dies during a series of allreduces; every
/// survivor gets an error (no hang); a communicator split off earlier
/// without the dead rank still works. With `revoke`, the first survivor to
/// see the error revokes, one survivor computes for a while without calling
/// the library, and then all shrink and go on.
pub(super) fn coll_kill(w: &Comm, a: &[String], revoke: bool) -> R {
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
            Ok(_) => check!(s[0] == i * n as u64, "iteration {i}: sum {}", s[0]),
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
pub(super) fn anysource(w: &Comm, _a: &[String]) -> R {
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
            check!(b[0] == st.unwrap().source.0 as u64 * 10, "content {}", b[0]);
            got[st.unwrap().source.index()] = true;
        }
        check!(got[1..victim].iter().all(|&g| g), "missing senders {got:?}");
    } else {
        let mut b = [0u64];
        w.recv(&mut b, 0, 1).map_err(e)?;
        w.send(&[me as u64 * 10], 0, 2).map_err(e)?;
    }
    Ok(String::new())
}

/// 3b: a message that arrived before its sender died is received: a
/// probe reports it, and the receive from the source the probe named
/// takes it (Open MPI's `MPI_Recv` refuses a dead source even then; see
/// `pertinax-mpi-sys/checks/recv_from_dead.c`), after which a receive
/// from the dead fails. Rank 0 probes by source `a[0]` (`any` or
/// `named`) once it knows of the death.
pub(super) fn sent_before_death(w: &Comm, a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let victim = n - 1;
    let any = a.first().map(String::as_str) != Some("named");
    if me == victim {
        w.send(&[42u64, 43], 0, 6).map_err(e)?;
        w.send_value(&(7u32, String::from("late")), 0, 7)
            .map_err(e)?;
        die();
    }
    if me != 0 {
        return Ok(String::new());
    }
    let t0 = Instant::now();
    while w.get_failed().map_err(e)?.size() == 0 {
        check!(
            t0.elapsed() < Duration::from_secs(20),
            "the death never known"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    w.ack_failed(usize::MAX).map_err(e)?;
    let src = if any { ANY_SOURCE } else { victim.into() };
    let st = w
        .probe(src, pertinax::Tag(6).into())
        .map_err(e)?
        .ok_or("a skipped probe")?;
    check!(st.source.index() == victim && st.len == 16, "probed {st:?}");
    let mut b = [0u64; 2];
    w.recv(&mut b, st.source, 6).map_err(e)?;
    check!(b == [42, 43], "received {b:?}");
    let (v, _) = w
        .recv_value::<(u32, String)>(src, 7)
        .map_err(e)?
        .ok_or("a skipped receive")?;
    check!(v == (7, "late".to_string()), "received {v:?}");
    let r = w.recv(&mut b, victim, 6);
    check!(
        matches!(&r, Err(Error::ProcFailed { ranks }) if ranks == &[Rank(victim as i32)]),
        "a receive from the dead with nothing sent: {r:?}"
    );
    Ok(String::new())
}

/// 4: a failure in one half leaves the other half's communicator
/// without any error at all.
pub(super) fn insulation(w: &Comm, _a: &[String]) -> R {
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
pub(super) fn acked(w: &Comm, _a: &[String]) -> R {
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
pub(super) fn revoke_shrink(w: &Comm, a: &[String]) -> R {
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
pub(super) fn suicide(w: &Comm, a: &[String]) -> R {
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
            r = c.barrier().map(drop);
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
pub(super) fn agree_kill(w: &Comm, a: &[String]) -> R {
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
pub(super) fn revoke_pending(w: &Comm, _a: &[String]) -> R {
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
pub(super) fn revoke_inter(u: &Universe, w: &Comm, a: &[String]) -> R {
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
pub(super) fn spawn_merge(u: &Universe, w: &Comm, a: &[String]) -> R {
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
