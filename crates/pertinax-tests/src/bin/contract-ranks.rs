//! The rank side of the backend contract tests (`tests/contract.rs`): one
//! scenario per promise of the contract (`pertinax::backend`, see
//! ARCHITECTURE.md "The backend contract"), written only against the public
//! API, so that every backend must pass them unchanged.
//!
//! Every rank prints `OK <scenario> rank=R <facts>` when its checks pass,
//! or `FAIL <scenario> rank=R: <why>` and exits 1.
//!
//! - `order`: posted receives match in posting order; a receive searches
//!   earlier arrivals in arrival order; messages from one sender on one
//!   communicator never overtake each other, across eager and large
//!   messages and across tags.
//! - `anysource`: any-source (and any-tag) receives get every message once,
//!   each sender's messages in order, with the right status.
//! - `truncation`: a message too long for the buffer, or not a whole number
//!   of elements, fails the receive and is consumed, as in MPI: the next
//!   receive gets the next message (small and large, blocking and posted).
//! - `revoke`: a revocation by one rank ends the others' pending receives
//!   with `Revoked`, later operations fail with it, and agree and shrink
//!   still work on the revoked communicator.
//! - `agree`: an agreement during which the launcher kills a rank (at
//!   `ft.agree.enter` or `ft.agree.contributed`); every survivor prints the
//!   outcome, which the test compares (uniform, and exact: a member killed
//!   after contributing counts as a contributor).
//! - `shrink`: a rank dies; survivors' receives from it fail with
//!   `ProcFailed`, then shrink gives the same communicator of survivors at
//!   every one, on which an allreduce works.
//! - `ssend`: a synchronous send (empty, small, large; blocking and not)
//!   does not complete before the receiver posts its receive, and does
//!   once it has.
//! - `ssend_dead`: a synchronous send to a rank that dies without
//!   receiving fails with `ProcFailed` (blocking and not), no hang.

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::Duration;

use pertinax::{Comm, Error, Op, Rank, Universe, ANY_SOURCE, ANY_TAG};
use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::check;
use pertinax_tests::scenario::Contract;

type R = Result<String, String>;

fn e(x: Error) -> String {
    x.to_string()
}

/// A message of `len` bytes whose contents say who sent it and its number.
fn pattern(from: usize, seq: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (from as u32 * 131 + seq * 17 + i as u32) as u8)
        .collect()
}

fn order(u: &Universe, w: &Comm) -> R {
    let (me, n) = (w.rank().index(), w.size());
    check!(n >= 2, "needs 2 ranks");
    let big = 4 * u.eager_limit() + 123;
    let sizes = [8usize, big, 0, 16, big, 3];
    if me == 0 {
        // Wait until rank 1 has posted its two any-tag receives.
        let mut go = [0u8];
        w.recv(&mut go, 1, 1).map_err(e)?;
        w.send(&[10u8], 1, 2).map_err(e)?;
        w.send(&[20u8], 1, 3).map_err(e)?;
        // Same tag, eager and large mixed: must arrive in sending order.
        for (i, &len) in sizes.iter().enumerate() {
            w.send(&pattern(0, i as u32, len), 1, 4).map_err(e)?;
        }
        // Two tags interleaved: a receive by tag skips the other tag and
        // each tag's messages stay in order.
        for i in 0..6u32 {
            w.send(&[i], 1, 5 + (i % 2) as i32).map_err(e)?;
        }
        w.barrier().map_err(e)?;
        Ok("sent".into())
    } else if me == 1 {
        let (mut a, mut b) = ([0u8], [0u8]);
        let got = pertinax::scope(|s| {
            // Posted in this order before anything is sent: the first
            // posted receive gets the first message.
            let ra = w.irecv(s, &mut a, 0, ANY_TAG)?;
            let rb = w.irecv(s, &mut b, 0, ANY_TAG)?;
            w.send(&[1u8], 0, 1)?;
            let st = pertinax::wait_all(&mut [ra, rb])?;
            let tag = |c: &pertinax::Completion| c.status.map(|s| s.tag.0);
            Ok::<_, Error>((tag(&st[0]), tag(&st[1])))
        })
        .map_err(e)?;
        check!(
            (a[0], b[0]) == (10, 20) && got == (Some(2), Some(3)),
            "posted receives matched out of order: {:?} tags {got:?}",
            (a[0], b[0])
        );
        let mut buf = vec![0u8; big];
        for (i, &len) in sizes.iter().enumerate() {
            let st = w.recv(&mut buf, 0, 4).map_err(e)?;
            check!(
                st.unwrap().len == len && buf[..len] == pattern(0, i as u32, len)[..],
                "message {i} on tag 4: got {} bytes, expected {len} (overtaken)",
                st.unwrap().len
            );
        }
        // Tag 6 first: its messages (1, 3, 5) in order, then tag 5's.
        let mut x = [0u32];
        for want in [1u32, 3, 5, 0, 2, 4] {
            let tag = 5 + (want % 2) as i32;
            w.recv(&mut x, 0, tag).map_err(e)?;
            check!(x[0] == want, "tag {tag}: got {} expected {want}", x[0]);
        }
        w.barrier().map_err(e)?;
        Ok("in-order".into())
    } else {
        w.barrier().map_err(e)?;
        Ok("idle".into())
    }
}

fn anysource(w: &Comm) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let k = 50u32;
    if me != 0 {
        for i in 0..k {
            w.send(&[me as u32, i], 0, 7 + (i % 3) as i32).map_err(e)?;
        }
        w.barrier().map_err(e)?;
        return Ok("sent".into());
    }
    let mut next = vec![0u32; n];
    let mut m = [0u32; 2];
    for _ in 0..(n as u32 - 1) * k {
        let st = w.recv(&mut m, ANY_SOURCE, ANY_TAG).map_err(e)?;
        let src = st.unwrap().source.index();
        check!(
            src == m[0] as usize
                && st.unwrap().len == 8
                && st.unwrap().tag.0 == 7 + (m[1] % 3) as i32,
            "status {st:?} for message {m:?}"
        );
        check!(
            m[1] == next[src],
            "from {src}: got message {} expected {}",
            m[1],
            next[src]
        );
        next[src] += 1;
    }
    check!(
        next.iter().skip(1).all(|&c| c == k),
        "counts per sender {next:?}"
    );
    // Nothing left over.
    check!(
        w.iprobe(ANY_SOURCE, ANY_TAG).map_err(e)?.is_none(),
        "a message left over"
    );
    w.barrier().map_err(e)?;
    Ok(format!("received={}", (n as u32 - 1) * k))
}

/// MPI's receive semantics: a receive into a buffer too short for the
/// message (or not a whole number of elements) consumes it and fails; the
/// next receive gets the next message. Eager and rendezvous sizes, and the
/// MPI backend's envelope sizes (1,024 bytes travel as themselves, 1,025
/// and up as an envelope and a payload; a 5,000-byte message into a buffer
/// longer than an envelope; envelopes into buffers of 8 and 0 bytes), on the blocking path (the message arrives
/// first) and on a receive posted before the message arrives. Then
/// messages sized by probe and received whole (`recv_vec`), a probe asked
/// twice, an any-tag receive after a probe for a named tag, and messages
/// to itself.
fn truncation(u: &Universe, w: &Comm) -> R {
    let me = w.rank().index();
    let big = 3 * u.eager_limit() + 5;
    let blocking = [
        (3, 16usize, 8usize),
        (5, big, big / 2),
        (8, 1025, 1024),
        (9, 5000, 2000),
        (16, 100_000, 8),
        (17, 2000, 0),
    ];
    let posted = [
        (6, 16, 8),
        (7, big, big / 2),
        (10, 1025, 1024),
        (11, 5000, 2000),
    ];
    let sized = [(12, 1024usize), (13, 1025), (14, 70_000), (15, 3)];
    if me == 0 {
        for &(tag, len, _) in &blocking {
            w.send(&pattern(0, 1, len), 1, tag).map_err(e)?;
            w.send(&pattern(0, 2, len), 1, tag).map_err(e)?;
        }
        w.send(&pattern(0, 1, 6), 1, 4).map_err(e)?;
        w.send(&pattern(0, 2, 6), 1, 4).map_err(e)?;
        // Rank 1 posts its receives first.
        w.barrier().map_err(e)?;
        for &(tag, len, _) in &posted {
            w.send(&pattern(0, 1, len), 1, tag).map_err(e)?;
            w.send(&pattern(0, 2, len), 1, tag).map_err(e)?;
        }
        w.barrier().map_err(e)?;
        // Buffered: rank 1 probes tag 15 before it receives 14.
        for &(tag, len) in &sized {
            w.bsend(&pattern(0, 3, len), 1, tag).map_err(e)?;
        }
        w.barrier().map_err(e)?;
        return Ok("sent".into());
    }
    if me != 1 {
        for _ in 0..3 {
            w.barrier().map_err(e)?;
        }
        return Ok("idle".into());
    }
    let next = |tag: i32, len: usize| -> Result<(), String> {
        let mut all = vec![0u8; len];
        let st = w.recv(&mut all, 0, tag).map_err(e)?;
        check!(
            st.unwrap().len == len && all == pattern(0, 2, len),
            "tag {tag}: the receive after the refused one did not get the next message"
        );
        Ok(())
    };
    for &(tag, len, cap) in &blocking {
        let mut short = vec![0u8; cap];
        let r = w.recv(&mut short, 0, tag);
        check!(
            r == Err(Error::Truncated {
                sent: len,
                capacity: cap
            }),
            "tag {tag}, {len} bytes into {cap}: {r:?}"
        );
        next(tag, len)?;
    }
    let mut words = [0u32; 4];
    let r = w.recv(&mut words, 0, 4);
    check!(
        matches!(r, Err(Error::LengthNotMultiple { len: 6, elem: 4 })),
        "6 bytes into u32: {r:?}"
    );
    next(4, 6)?;
    let mut shorts: Vec<Vec<u8>> = posted.iter().map(|c| vec![0u8; c.2]).collect();
    pertinax::scope(|s| -> Result<(), String> {
        let mut reqs = Vec::new();
        for (b, &(tag, _, _)) in shorts.iter_mut().zip(&posted) {
            reqs.push(w.irecv(s, b.as_mut_slice(), 0, tag).map_err(e)?);
        }
        w.barrier().map_err(e)?;
        for (q, &(tag, len, cap)) in reqs.into_iter().zip(&posted) {
            let r = q.wait();
            check!(
                r == Err(Error::Truncated {
                    sent: len,
                    capacity: cap
                }),
                "posted receive, tag {tag}, {len} bytes into {cap}: {r:?}"
            );
            next(tag, len)?;
        }
        Ok(())
    })?;
    w.barrier().map_err(e)?;
    // Sized by probe: tags 12 and 13 whole; 14 probed twice (the same
    // length both times) and received by any tag once 15, sent after it,
    // was probed by name.
    for &(tag, len) in &sized[..2] {
        let (v, st) = w
            .recv_vec::<u8>(0, tag)
            .map_err(e)?
            .expect("a plain receive is never skipped");
        check!(
            st.len == len && v == pattern(0, 3, len),
            "recv_vec, tag {tag}: {} bytes",
            v.len()
        );
    }
    let (tag, len) = sized[2];
    for _ in 0..2 {
        let got = w
            .probe(Rank(0).into(), tag.into())
            .map_err(e)?
            .map(|st| st.len);
        check!(got == Some(len), "probe, tag {tag}: {got:?} bytes");
    }
    let st = w.probe(Rank(0).into(), sized[3].0.into()).map_err(e)?;
    check!(
        st.map(|st| st.len) == Some(sized[3].1),
        "probe, tag {}: {st:?}",
        sized[3].0
    );
    for &(tag, len) in &sized[2..] {
        let mut all = vec![0u8; len];
        let st = w.recv(&mut all, 0, ANY_TAG).map_err(e)?;
        check!(
            st.unwrap().tag.0 == tag && st.unwrap().len == len && all == pattern(0, 3, len),
            "any-tag receive after probes: {st:?}, expected tag {tag}"
        );
    }
    // To itself: a blocking send up to the eager limit (1,000 bytes at
    // most: Open MPI's `self` transport sends eagerly only up to 1 KiB with
    // its header) and a buffered one past 1 KiB (an envelope and a payload
    // on MPI) return before their receives are posted.
    for (tag, len) in [(16, u.eager_limit().min(1000)), (17, 5000)] {
        let m = pattern(1, 5, len);
        if len <= 1000 {
            w.send(&m, 1, tag).map_err(e)?;
        } else {
            w.bsend(&m, 1, tag).map_err(e)?;
        }
        let (v, st) = w
            .recv_vec::<u8>(1, tag)
            .map_err(e)?
            .expect("a plain receive is never skipped");
        check!(st.len == len && v == m, "to itself, tag {tag}: {st:?}");
    }
    check!(
        w.iprobe(Rank(0).into(), ANY_TAG).map_err(e)?.is_none(),
        "a message left over"
    );
    w.barrier().map_err(e)?;
    Ok("consumed".into())
}

fn revoke(w: &Comm) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let c = w.dup().map_err(e)?;
    c.barrier().map_err(e)?;
    if me == 0 {
        std::thread::sleep(Duration::from_millis(100));
        c.revoke().map_err(e)?;
    } else {
        // Nobody sends this: only the revocation ends it.
        let mut b = [0u64];
        let r = c.recv(&mut b, 0, 99);
        check!(r == Err(Error::Revoked), "pending receive: {r:?}");
    }
    check!(c.is_revoked(), "not revoked here");
    let r = c.send(&[1u8], (me + 1) % n, 1);
    check!(r == Err(Error::Revoked), "send after revoke: {r:?}");
    let r = c.barrier();
    check!(r == Err(Error::Revoked), "collective after revoke: {r:?}");
    // Recovery calls still work, and the world is untouched.
    let flags = c.agree(0b101 | (me as u32 & 1) << 1).map_err(e)?;
    let s = c.shrink().map_err(e)?;
    check!(
        s.size() == n && s.rank().index() == me,
        "shrink of a revoked comm"
    );
    let mut sum = [0u64];
    s.allreduce(&[me as u64], &mut sum, &Op::sum()).map_err(e)?;
    w.barrier().map_err(e)?;
    Ok(format!("flags={flags:b} sum={}", sum[0]))
}

/// `mask`: the flags' bits in use (all 32, or the 23 low ones, which the
/// MPI backend's fast round carries).
fn agree(w: &Comm, mask: u32) -> R {
    let me = w.rank().index();
    // No barrier first: a collective is not uniform, so a barrier the
    // victim completed could fail at others, which would then leave.
    // Every rank clears its own bit: the outcome tells exactly who
    // contributed (the launcher kills one rank inside the agreement).
    let d = w.agree_detailed(mask & !(1u32 << me)).map_err(e)?;
    let failed: Vec<i32> = d.failed.iter().map(|r| r.0).collect();
    Ok(format!(
        "flags={:x} failed={failed:?} finalized={}",
        d.flags,
        d.finalized.len()
    ))
}

fn shrink(w: &Comm) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let victim = n - 1;
    // No barrier first (see `agree`).
    if me == victim {
        pertinax::fault_point("contract.victim");
        return Err("the victim survived its kill".into());
    }
    let mut b = [0u8];
    let r = w.recv(&mut b, victim, 1);
    check!(
        r == Err(Error::ProcFailed {
            ranks: vec![Rank(victim as i32)]
        }),
        "receive from the dead rank: {r:?}"
    );
    let s = w.shrink().map_err(e)?;
    check!(
        s.size() == n - 1 && s.rank().index() == me,
        "shrunk size {} rank {}",
        s.size(),
        s.rank().0
    );
    let mut sum = [0u64];
    s.allreduce(&[me as u64 + 1], &mut sum, &Op::sum())
        .map_err(e)?;
    check!(
        sum[0] == ((n - 1) * n / 2) as u64,
        "allreduce on the shrunk communicator: {}",
        sum[0]
    );
    Ok(format!("size={} sum={}", s.size(), sum[0]))
}

/// Rank 0 synchronous-sends to rank 1, which posts its receives only
/// after a go-ahead (or a pause): no send completes before.
fn ssend(u: &Universe, w: &Comm) -> R {
    let (me, n) = (w.rank().index(), w.size());
    check!(n >= 2, "needs 2 ranks");
    let big = 2 * u.eager_limit() + 5;
    let sizes = [0usize, 8, big];
    if me == 0 {
        for (i, &len) in sizes.iter().enumerate() {
            let data = pattern(0, i as u32, len);
            let early = pertinax::scope(|s| {
                let mut r = w.issend(s, &data, 1, 10 + i as i32)?;
                // The receiver waits for the go-ahead: tests for a while
                // must all say pending.
                let t = std::time::Instant::now();
                let mut early = false;
                while t.elapsed() < Duration::from_millis(150) {
                    early |= r.test()?.is_some();
                    if early {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                w.send(&[1u8], 1, 1)?;
                if !early {
                    r.wait()?;
                }
                Ok::<_, Error>(early)
            })
            .map_err(e)?;
            check!(
                !early,
                "issend of {len} B completed before its receive was posted"
            );
        }
        // Blocking: returns only after the receiver's pause.
        for (i, &len) in sizes.iter().enumerate() {
            let t = std::time::Instant::now();
            w.ssend(&pattern(0, 9 + i as u32, len), 1, 20).map_err(e)?;
            let took = t.elapsed();
            check!(
                took >= Duration::from_millis(100),
                "ssend of {len} B returned after {took:?}, before the receive"
            );
        }
        w.barrier().map_err(e)?;
        Ok("synchronous".into())
    } else if me == 1 {
        for (i, &len) in sizes.iter().enumerate() {
            let mut go = [0u8];
            w.recv(&mut go, 0, 1).map_err(e)?;
            let mut got = vec![0u8; len];
            let st = w.recv(&mut got, 0, 10 + i as i32).map_err(e)?;
            check!(
                st.unwrap().len == len && got == pattern(0, i as u32, len),
                "issend data of {len} B"
            );
        }
        for (i, &len) in sizes.iter().enumerate() {
            std::thread::sleep(Duration::from_millis(150));
            let mut got = vec![0u8; len];
            w.recv(&mut got, 0, 20).map_err(e)?;
            check!(
                got == pattern(0, 9 + i as u32, len),
                "ssend data of {len} B"
            );
        }
        w.barrier().map_err(e)?;
        Ok("received".into())
    } else {
        w.barrier().map_err(e)?;
        Ok("idle".into())
    }
}

/// The last rank dies at its fault point without receiving: synchronous
/// sends to it fail with `ProcFailed`.
fn ssend_dead(u: &Universe, w: &Comm) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let victim = n - 1;
    if me == victim {
        pertinax::fault_point("contract.victim");
        return Err("the victim survived its kill".into());
    }
    let dead: Result<(), Error> = Err(Error::ProcFailed {
        ranks: vec![Rank(victim as i32)],
    });
    for len in [8usize, 2 * u.eager_limit() + 5] {
        let data = vec![7u8; len];
        let r = w.ssend(&data, victim, 1).map(drop);
        check!(r == dead, "ssend of {len} B to the dead: {r:?}");
        let r = pertinax::scope(|s| w.issend(s, &data, victim, 2)?.wait());
        check!(r.map(drop) == dead, "issend of {len} B to the dead");
    }
    Ok("failed".into())
}

fn main() {
    let sc = Scenario::<Contract>::from_args();
    let u: Universe = setup("init", pertinax::init());
    let w = u.world();
    let r = match sc.scenario() {
        Contract::Order => order(&u, &w),
        Contract::Anysource => anysource(&w),
        Contract::Truncation => truncation(&u, &w),
        Contract::Revoke => revoke(&w),
        Contract::Agree => agree(&w, u32::MAX),
        Contract::AgreeSmall => agree(&w, (1 << 23) - 1),
        Contract::Shrink => shrink(&w),
        Contract::Ssend => ssend(&u, &w),
        Contract::SsendDead => ssend_dead(&u, &w),
    };
    report(sc.name(), w.rank().index(), r).or_exit();
    drop(u);
}
