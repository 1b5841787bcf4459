//! Rank program for the tests of non-blocking requests under failures
//! (`tests/requests.rs`): `requests-ranks SCENARIO [ARGS]`. Every
//! survivor prints `OK SCENARIO rank=R ...` and exits 0 when its checks
//! passed; a failed check prints `FAIL ...` and exits 1. Victims are
//! killed by the launcher at the fault point `victim` (`--kill R@victim#1`,
//! or `:stop` with `--heartbeat`) or at random (`--fault-seed`).
//!
//! Scenarios:
//! - `waitall N late|early small|large`: the reproduction of issue 15
//!   (item 7). Rank 3 dies. Rank 2 posts an `irecv` from rank 1, which is
//!   itself blocked in a receive from rank 2, and an `isend` to rank 3;
//!   `wait_all` must return rank 3's failure at once (index 1), with the
//!   receive still pending. `early`: rank 3 is dead for 100 ms before the
//!   posts (the send fails at post). `late`: rank 3 dies after the posts,
//!   during the wait (a large send announced to it fails with it; a small
//!   one completes at its post, as MPI's eager sends do, so `late small`
//!   is not a failure case). Rank 2
//!   then revokes, which frees ranks 0 and 1; all survivors shrink.
//!   `waitall early small sendrecv`: the same with `CommunicatorExt::sendrecv`.
//! - `waitany wait|test`: rank 3 dies; rank 2 waits with `wait_any` (or
//!   `test_any`) over a receive from blocked rank 1, an any-source receive
//!   and a receive from rank 3: two failures reported one by one with
//!   their index, then the pending receive is cancelled.
//! - `cancel`: no failure; cancelling a pending receive ends its scope;
//!   dropping a pending receive cancels it; a later receive gets the
//!   message; sends and complete requests are not cancelled.
//! - `revoke`: every rank posts receives nobody answers and a large send
//!   nobody receives; rank 0 revokes; every pending request at every rank
//!   ends with `Revoked`.
//! - `stopped`: rank 3 is stopped (SIGSTOP) at `victim`; rank 2 waits
//!   with `wait_any` on it and on blocked rank 1 until the heartbeat
//!   monitor ends it.
//! - `campaign ROUNDS`: rounds of irecv/isend rings (named and any-source
//!   receives, mixed sizes, `wait_all` or `wait_any`), random kills by the
//!   launcher; on a fault, revoke; every round ends with an agreement and
//!   a shrink when needed. Prints `digest=` of the agreed outcome of every
//!   round and `dead=` of the agreed dead.

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::{Duration, Instant};

use pertinax::{Comm, Error, Rank, ANY_SOURCE};
use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::scenario::Requests;
use pertinax_tests::{arg, check, e};

type R = Result<String, String>;

fn class(x: &Error) -> &'static str {
    match x {
        Error::ProcFailed { .. } => "PROC_FAILED",
        Error::ProcFailedPending { .. } => "PENDING",
        Error::Revoked => "REVOKED",
        Error::Cancelled => "CANCELLED",
        _ => "OTHER",
    }
}

/// Blocks in a receive nobody answers until a revocation (or a failure)
/// ends it; returns the error's class.
fn blocked_recv(c: &Comm, from: usize) -> Result<&'static str, String> {
    let mut b = [0u8; 8];
    match c.recv(&mut b, from, 77) {
        Ok(_) => Err("a receive nobody answers completed".into()),
        Err(x) => Ok(class(&x)),
    }
}

/// Agrees, shrinks, and checks the shrunk communicator works.
fn recover(c: &Comm) -> Result<Comm, String> {
    let _ = c.agree_detailed(1).map_err(e)?;
    let s = c.shrink().map_err(e)?;
    s.barrier().map_err(e)?;
    Ok(s)
}

/// Rank 3's part: waits for rank 2's word, then reaches the fault point
/// where the launcher kills (or stops) it.
fn go_then_die(w: &Comm) -> Result<String, String> {
    let mut go = [0u8; 1];
    w.recv(&mut go, 2, 1).map_err(e)?;
    pertinax::fault_point("victim");
    Err("the victim survived".into())
}

/// Issue 15, item 7: a wait over requests returns a failure at once.
fn waitall(w: &Comm, a: &[String]) -> R {
    let late = a.first().map(String::as_str) == Some("late");
    let large = a.get(1).map(String::as_str) == Some("large");
    let me = w.rank().index();
    check!(w.size() == 4, "needs 4 ranks");
    let out = match me {
        3 => {
            // Dies when rank 2 says (no collective is in progress then).
            go_then_die(w)?;
            return Err("the victim survived".into());
        }
        2 => {
            if !late {
                w.send(&[1u8], 3, 1).map_err(e)?;
                // Busy (no library call) while rank 3 dies and the
                // launcher announces it.
                std::thread::sleep(Duration::from_millis(100));
            }
            let len = if large { 1 << 20 } else { 64 };
            let data = vec![7u8; len];
            let mut got = [0u8; 8];
            let t = Instant::now();
            if a.get(2).map(String::as_str) == Some("sendrecv") {
                // The blocking form: it returns the send's failure without
                // waiting for the receive.
                let r = w.sendrecv(&data, 3, 5, &mut got, 1, 5);
                let took = t.elapsed();
                check!(
                    matches!(r, Err(Error::ProcFailed { ref ranks }) if ranks == &[Rank(3)]),
                    "sendrecv: {r:?}"
                );
                check!(took < Duration::from_secs(5), "sendrecv took {took:?}");
                w.revoke().map_err(e)?;
                let s = recover(w)?;
                return Ok(format!("sendrecv=PROC_FAILED size={}", s.size()));
            }
            let r = pertinax::scope(|s| {
                let mut reqs = [
                    w.irecv(s, &mut got, 1, 5).map_err(e)?,
                    w.isend(s, &data, 3, 5).map_err(e)?,
                ];
                if late {
                    w.send(&[1u8], 3, 1).map_err(e)?;
                }
                let r = pertinax::wait_all(&mut reqs);
                let still = reqs[0].is_active() && reqs[0].test().map_err(e)?.is_none();
                Ok::<_, String>((r, still))
            })?;
            let (r, still) = r;
            let took = t.elapsed();
            let Err(we) = r else {
                return Err("wait_all returned Ok with rank 3 dead".into());
            };
            check!(
                we.index == 1
                    && matches!(we.error, Error::ProcFailed { ref ranks } if ranks == &[Rank(3)]),
                "wait_all: {we}"
            );
            check!(
                still,
                "the receive from blocked rank 1 is no longer pending"
            );
            check!(took < Duration::from_secs(5), "wait_all took {took:?}");
            w.revoke().map_err(e)?;
            format!("first={} index={} pending=1", class(&we.error), we.index)
        }
        1 => format!("blocked={}", blocked_recv(w, 2)?),
        _ => format!("blocked={}", blocked_recv(w, 1)?),
    };
    let s = recover(w)?;
    Ok(format!("{out} size={}", s.size()))
}

/// The next failure `wait_any` (or a `test_any` loop) reports.
fn next_failure(
    reqs: &mut [pertinax::PendingOp<'_>],
    test: bool,
) -> Result<pertinax::WaitError, String> {
    let r = if test {
        let t = Instant::now();
        loop {
            match pertinax::test_any(reqs) {
                Ok(None) => {
                    check!(
                        t.elapsed() < Duration::from_secs(20),
                        "test_any never failed"
                    );
                    std::thread::sleep(Duration::from_millis(1));
                }
                r => break r,
            }
        }
    } else {
        pertinax::wait_any(reqs)
    };
    match r {
        Err(we) => Ok(we),
        Ok(x) => Err(format!("wait_any/test_any: {x:?}")),
    }
}

/// wait_any / test_any with a dead peer, then cancel.
fn waitany(w: &Comm, a: &[String]) -> R {
    let test = a.first().map(String::as_str) == Some("test");
    let me = w.rank().index();
    check!(w.size() == 4, "needs 4 ranks");
    let out = match me {
        3 => go_then_die(w)?,
        2 => {
            let (mut b0, mut b1, mut b2) = ([0u8; 8], [0u8; 8], [0u8; 8]);
            pertinax::scope(|s| {
                let mut reqs = [
                    w.irecv(s, &mut b0, 1, 5).map_err(e)?,
                    w.irecv(s, &mut b1, ANY_SOURCE, 6).map_err(e)?,
                    w.irecv(s, &mut b2, 3, 7).map_err(e)?,
                ];
                w.send(&[1u8], 3, 1).map_err(e)?;
                let first = next_failure(&mut reqs, test)?;
                let second = next_failure(&mut reqs, test)?;
                let mut seen = [
                    (first.index, class(&first.error)),
                    (second.index, class(&second.error)),
                ];
                seen.sort_unstable();
                check!(
                    seen == [(1, "PENDING"), (2, "PROC_FAILED")],
                    "failures {seen:?}"
                );
                check!(
                    reqs[0].is_active() && !reqs[1].is_active() && !reqs[2].is_active(),
                    "activity"
                );
                check!(reqs[0].cancel().map_err(e)?, "cancel of a pending receive");
                let third = next_failure(&mut reqs, test)?;
                check!(
                    third.index == 0 && third.error == Error::Cancelled,
                    "after cancel: {third}"
                );
                check!(
                    pertinax::wait_any(&mut reqs)
                        .map_err(|x| e(x.into()))?
                        .is_none(),
                    "requests left"
                );
                Ok::<(), String>(())
            })?;
            w.revoke().map_err(e)?;
            "failures=PENDING,PROC_FAILED cancelled=1".to_string()
        }
        1 => format!("blocked={}", blocked_recv(w, 2)?),
        _ => format!("blocked={}", blocked_recv(w, 1)?),
    };
    let s = recover(w)?;
    Ok(format!("{out} size={}", s.size()))
}

/// Cancel without failures.
fn cancel(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    check!(n >= 2, "needs 2 ranks");
    if me == 0 {
        let mut got = [0u32; 4];
        // An explicit cancel: the scope ends although rank 1 sends nothing yet.
        pertinax::scope(|s| {
            let mut r = w.irecv(s, &mut got, 1, 9).map_err(e)?;
            check!(r.test().map_err(e)?.is_none(), "receive complete too early");
            check!(r.cancel().map_err(e)?, "cancel refused");
            check!(r.wait() == Err(Error::Cancelled), "cancelled wait");
            Ok::<(), String>(())
        })?;
        // A dropped pending receive is cancelled too.
        pertinax::scope(|s| {
            let _r = w.irecv(s, &mut got, 1, 9).map_err(e)?;
            Ok::<(), String>(())
        })?;
        check!(got == [0; 4], "a cancelled receive wrote {got:?}");
        w.send(&[1u8], 1, 1).map_err(e)?;
        // The message the cancelled receives would have matched is here
        // for this one.
        w.recv(&mut got, 1, 9).map_err(e)?;
        check!(got == [1, 2, 3, 4], "got {got:?}");
        // Not cancelled: a complete receive, a send.
        let big = vec![0u8; 1 << 20];
        pertinax::scope(|s| {
            let mut r = w.irecv(s, &mut got, 1, 10).map_err(e)?;
            // Wait by testing: `test` takes the result when complete.
            let st = loop {
                if let Some(st) = r.test().map_err(e)? {
                    break st;
                }
            };
            let len = st.status.map(|s| s.len);
            check!(len == Some(16), "len {len:?}");
            check!(
                r.cancel() == Err(Error::RequestInactive),
                "cancel of a taken request"
            );
            let mut q = w.isend(s, &big[..8], 1, 11).map_err(e)?;
            check!(!q.cancel().map_err(e)?, "an eager send was cancelled");
            q.wait().map_err(e)?;
            let mut q = w.isend(s, &big, 1, 12).map_err(e)?;
            check!(!q.cancel().map_err(e)?, "a rendezvous send was cancelled");
            q.wait().map_err(e)?;
            Ok::<(), String>(())
        })?;
        Ok(format!("cancelled=2 got={got:?}"))
    } else if me == 1 {
        let mut go = [0u8; 1];
        w.recv(&mut go, 0, 1).map_err(e)?;
        w.send(&[1u32, 2, 3, 4], 0, 9).map_err(e)?;
        w.send(&[5u32, 6, 7, 8], 0, 10).map_err(e)?;
        let mut small = [0u8; 8];
        w.recv(&mut small, 0, 11).map_err(e)?;
        let (big, _) = w
            .recv_vec::<u8>(0, 12)
            .map_err(e)?
            .expect("a plain receive is never skipped");
        check!(big.len() == 1 << 20, "big {}", big.len());
        Ok("sent".into())
    } else {
        Ok("idle".into())
    }
}

/// A revocation completes every pending request at every rank.
fn revoke(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let mut b0 = [0u8; 8];
    let mut b1 = [0u8; 8];
    let big = vec![3u8; 1 << 20];
    let small = [4u8; 8];
    w.barrier().map_err(e)?;
    let classes = pertinax::scope(|s| {
        let mut reqs = vec![
            w.irecv(s, &mut b0, (me + 1) % n, 5).map_err(e)?,
            w.irecv(s, &mut b1, ANY_SOURCE, 6).map_err(e)?,
            w.isend(s, &big, (me + 1) % n, 7).map_err(e)?,
            w.isend(s, &small, (me + 1) % n, 8).map_err(e)?,
        ];
        if me == 0 {
            std::thread::sleep(Duration::from_millis(50));
            w.revoke().map_err(e)?;
        }
        let mut classes = ["?"; 4];
        loop {
            match pertinax::wait_all(&mut reqs) {
                Ok(st) => {
                    // Only the eager send completes without the others.
                    check!(st.len() <= 1, "completed {st:?}");
                    if st.len() == 1 {
                        classes[3] = "OK";
                    }
                    break;
                }
                Err(we) => classes[we.index] = class(&we.error),
            }
        }
        Ok::<_, String>(classes)
    })?;
    // The small send completes at its post, unless this rank posts it
    // after the revocation arrived.
    check!(
        classes[..3] == ["REVOKED"; 3] && ["OK", "REVOKED"].contains(&classes[3]),
        "outcomes {classes:?}"
    );
    let s = recover(w)?;
    check!(s.size() == n, "size {}", s.size());
    Ok(format!("outcomes={}", classes[..3].join(",")))
}

/// A stopped rank ended by the heartbeat monitor.
fn stopped(w: &Comm, _a: &[String]) -> R {
    let me = w.rank().index();
    check!(w.size() == 4, "needs 4 ranks");
    let out = match me {
        3 => go_then_die(w)?,
        2 => {
            let (mut b0, mut b1) = ([0u8; 8], [0u8; 8]);
            let we = pertinax::scope(|s| {
                let mut reqs = [
                    w.irecv(s, &mut b0, 1, 5).map_err(e)?,
                    w.irecv(s, &mut b1, 3, 5).map_err(e)?,
                ];
                w.send(&[1u8], 3, 1).map_err(e)?;
                match pertinax::wait_any(&mut reqs) {
                    Err(we) => Ok(we),
                    Ok(x) => Err(format!("wait_any: {x:?}")),
                }
            })?;
            check!(
                we.index == 1 && matches!(we.error, Error::ProcFailed { .. }),
                "wait_any: {we}"
            );
            w.revoke().map_err(e)?;
            format!("first={} index={}", class(&we.error), we.index)
        }
        1 => format!("blocked={}", blocked_recv(w, 2)?),
        _ => format!("blocked={}", blocked_recv(w, 1)?),
    };
    let s = recover(w)?;
    Ok(format!("{out} size={}", s.size()))
}

/// FNV-1a over the agreed outcomes.
fn fnv(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x100_0000_01b3)
}

/// One round of the campaign on `c`: rings of non-blocking messages.
fn round(c: &Comm, world: &[usize], r: u64) -> Result<(), Error> {
    let (me, n) = (c.rank().index(), c.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let len = [8usize, 4096, 100_000, 1 << 20][(r % 4) as usize];
    let fill = |src: usize, len: usize| -> Vec<u8> {
        let mut v = vec![0u8; len];
        pertinax_tests::fill(&mut v, src, r);
        v
    };
    let to_right = fill(world[me], len);
    let to_left = fill(world[me] + 1000, 16);
    let mut from_left = vec![0u8; len];
    let mut from_right = vec![0u8; 16];
    let tag = (r % 1000) as i32;
    pertinax::scope(|s| -> Result<(), Error> {
        pertinax::fault_point("nb.post");
        let mut reqs = vec![
            c.irecv(s, &mut from_left, left, tag)?,
            // Any-source: only the right neighbour sends with this tag.
            c.irecv(s, &mut from_right, ANY_SOURCE, tag + 1000)?,
            c.isend(s, &to_right, right, tag)?,
            c.isend(s, &to_left, left, tag + 1000)?,
        ];
        pertinax::fault_point("nb.wait");
        let waited = wait_ring(&mut reqs, r, right);
        if matches!(&waited, Err(x) if x.is_fault()) {
            // Before leaving the scope (the recommended pattern): the
            // peers waiting on this rank return too.
            c.revoke()?;
        }
        waited
    })?;
    if from_left != fill(world[left], len) || from_right != fill(world[right] + 1000, 16) {
        return Err(Error::InvalidArgument(format!("round {r}: wrong data")));
    }
    Ok(())
}

/// Completes the requests of a round by `wait_all` or `wait_any`.
fn wait_ring(reqs: &mut [pertinax::PendingOp<'_>], r: u64, right: usize) -> Result<(), Error> {
    if r.is_multiple_of(2) {
        let st = pertinax::wait_all(reqs)?;
        let from = st[1].status.map(|s| s.source);
        if from != Some(Rank(right as i32)) {
            return Err(Error::InvalidArgument(format!(
                "any-source receive matched {from:?} (right is {right})"
            )));
        }
    } else {
        while let Some((i, st)) = pertinax::wait_any(reqs)? {
            pertinax::fault_point("nb.any");
            let from = st.status.map(|s| s.source);
            if i == 1 && from != Some(Rank(right as i32)) {
                return Err(Error::InvalidArgument(format!(
                    "any-source receive matched {from:?}"
                )));
            }
        }
    }
    Ok(())
}

/// The randomized campaign.
fn campaign(w: &Comm, a: &[String]) -> R {
    let rounds = arg(a, 0, 20);
    let mut c = w.clone();
    let mut digest = 0xcbf2_9ce4_8422_2325u64;
    let mut recoveries = 0;
    for r in 0..rounds {
        let all: Vec<Rank> = (0..c.size()).map(|x| Rank(x as i32)).collect();
        let world: Vec<usize> = c
            .group()
            .translate_ranks(&all, &w.group())
            .map_err(e)?
            .into_iter()
            .map(|x| x.map_or(usize::MAX, |x| x.index()))
            .collect();
        let res = round(&c, &world, r);
        if let Err(x) = &res {
            check!(x.is_fault(), "round {r}: {x}");
            c.revoke().map_err(e)?;
        }
        pertinax::fault_point("nb.agree");
        let d = c.agree_detailed(res.is_ok() as u32).map_err(e)?;
        let ok = d.flags == 1 && d.failed.is_empty();
        if !ok {
            c = c.shrink().map_err(e)?;
            recoveries += 1;
        }
        digest = fnv(fnv(fnv(digest, r), ok as u64), c.size() as u64);
    }
    let d = w.agree_detailed(1).map_err(e)?;
    let mut dead: Vec<usize> = d.failed.iter().map(|x| x.index()).collect();
    dead.sort_unstable();
    let dead: Vec<String> = dead.iter().map(|x| x.to_string()).collect();
    Ok(format!(
        "dead=[{}] recoveries={recoveries} size={} digest={digest:016x}",
        dead.join(","),
        c.size()
    ))
}

fn main() {
    let sc = Scenario::<Requests>::from_args();
    let u = setup("init", pertinax::init());
    let w = u.world();
    let rest = sc.args();
    let r = match sc.scenario() {
        Requests::Waitall => waitall(&w, rest),
        Requests::Waitany => waitany(&w, rest),
        Requests::Cancel => cancel(&w, rest),
        Requests::Revoke => revoke(&w, rest),
        Requests::Stopped => stopped(&w, rest),
        Requests::Campaign => campaign(&w, rest),
    };
    report(sc.name(), w.rank().index(), r).or_exit();
    drop(u);
}
