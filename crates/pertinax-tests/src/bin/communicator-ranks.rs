//! The rank side of `tests/communicator.rs`: every operation of the
//! `Communicator` trait, called through code written once against the
//! trait, on each kind of communicator, with the results checked against
//! what the plain `Comm` computes.
//!
//! - `plain`: the world as `&dyn Communicator`.
//! - `boxed`: a `dup_boxed` of it (a `Box<dyn Communicator>`).
//! - `guarded`: a `pertinax-propagate` guard over the world (which does
//!   not shrink: a new guard goes over the shrunk communicator).
//! - `resilient`: a `pertinax-resilient` communicator: the operations it
//!   repairs agree with the plain results; the others return
//!   `Unsupported` with a reason.
//!
//! Every rank prints `OK <scenario> rank=R` when its checks pass.

use pertinax::{Comm, Communicator, CommunicatorExt, Error, Op};
use pertinax_harness::{report, setup, Scenario};
use pertinax_propagate::Guarded;
use pertinax_resilient::Resilient;
use pertinax_tests::check;
use pertinax_tests::scenario::Communicator as Sc;

type R = Result<(), String>;

fn e(x: impl std::fmt::Display) -> String {
    x.to_string()
}

/// Rank `r`'s contribution: `k` elements.
fn mine(r: usize, k: usize) -> Vec<u64> {
    (0..k).map(|i| (r * 100 + i + 1) as u64).collect()
}

/// The operations every communicator has, written once.
fn basic<C: Communicator + ?Sized>(c: &C) -> R {
    let (me, n) = (c.rank().index(), c.size());
    // sendrecv around a ring.
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let mut got = [0u64; 3];
    let st = c
        .sendrecv(&mine(me, 3), right, 7, &mut got, left, 7)
        .map_err(e)?
        .ok_or("sendrecv skipped")?;
    check!(
        got[..] == mine(left, 3)[..],
        "sendrecv got {got:?} from {left}"
    );
    check!(st.source.index() == left && st.len == 24, "status {st:?}");
    // The basic collectives.
    let mut sum = [0u64; 2];
    c.allreduce(&mine(me, 2), &mut sum, &Op::sum()).map_err(e)?;
    let want: Vec<u64> = (0..2)
        .map(|i| (0..n).map(|r| mine(r, 2)[i]).sum())
        .collect();
    check!(sum[..] == want[..], "allreduce {sum:?}, want {want:?}");
    let mut all = vec![0u64; n];
    c.allgather(&[me as u64], &mut all).map_err(e)?;
    check!(
        all == (0..n as u64).collect::<Vec<_>>(),
        "allgather {all:?}"
    );
    // In place: a plain communicator's own forms, a decorator's provided
    // ones (over a copy).
    let mut sum = mine(me, 2);
    c.allreduce_in_place(&mut sum, &Op::sum()).map_err(e)?;
    check!(
        sum[..] == want[..],
        "allreduce_in_place {sum:?}, want {want:?}"
    );
    let mut red = mine(me, 2);
    c.reduce_in_place(&mut red, &Op::sum(), n - 1).map_err(e)?;
    if me == n - 1 {
        check!(
            red[..] == want[..],
            "reduce_in_place {red:?}, want {want:?}"
        );
    }
    let mut all = vec![0u64; n];
    all[me] = me as u64 * 3;
    c.allgather_in_place(&mut all).map_err(e)?;
    check!(
        all == (0..n as u64).map(|r| r * 3).collect::<Vec<_>>(),
        "allgather_in_place {all:?}"
    );
    // Messages whose length the receiver learns: a vector, a serde value.
    c.send(&mine(me, 5), right, 8).map_err(e)?;
    let (v, st) = c
        .recv_vec::<u64>(left, 8)
        .map_err(e)?
        .ok_or("recv_vec skipped")?;
    check!(
        v == mine(left, 5) && st.source.index() == left,
        "recv_vec got {v:?} ({st:?})"
    );
    c.send_value(&(me, format!("from {me}")), right, 9)
        .map_err(e)?;
    let ((from, text), _) = c
        .recv_value::<(usize, String)>(left, 9)
        .map_err(e)?
        .ok_or("recv_value skipped")?;
    check!(
        from == left && text == format!("from {left}"),
        "recv_value got ({from}, {text:?})"
    );
    Ok(())
}

/// The synchronous and buffered modes, around a ring.
fn modes<C: Communicator + ?Sized>(c: &C) -> R {
    let (me, n) = (c.rank().index(), c.size());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let out = mine(me, 4);
    let mut got = [0u64; 4];
    c.bsend(&out, right, 10).map_err(e)?;
    c.recv(&mut got, left, 10).map_err(e)?;
    check!(got[..] == mine(left, 4)[..], "bsend: got {got:?}");
    let mut got = [0u64; 4];
    pertinax::scope(|s| {
        let q = c.issend(s, &out, right, 11)?;
        c.recv(&mut got, left, 11)?;
        q.wait().map(drop)
    })
    .map_err(e)?;
    check!(got[..] == mine(left, 4)[..], "issend: got {got:?}");
    if n > 1 {
        // Even ranks send first: every synchronous send finds its receive.
        let mut got = [0u64; 4];
        if me % 2 == 0 {
            c.ssend(&out, right, 12).map_err(e)?;
            c.recv(&mut got, left, 12).map_err(e)?;
        } else {
            c.recv(&mut got, left, 12).map_err(e)?;
            c.ssend(&out, right, 12).map_err(e)?;
        }
        check!(got[..] == mine(left, 4)[..], "ssend: got {got:?}");
    }
    Ok(())
}

/// The operations beyond the basic ones, checked against the plain
/// world's results.
fn extended<C: Communicator + ?Sized>(c: &C, shrinks: bool) -> R {
    let (me, n) = (c.rank().index(), c.size());
    let x = mine(me, 2);
    let prefix = |upto: usize| -> Vec<u64> {
        (0..2)
            .map(|i| (0..upto).map(|r| mine(r, 2)[i]).sum())
            .collect()
    };
    let mut got = [0u64; 2];
    c.scan(&x, &mut got, &Op::sum()).map_err(e)?;
    check!(got[..] == prefix(me + 1)[..], "scan {got:?}");
    let mut got = [7u64; 2];
    c.exscan(&x, &mut got, &Op::sum()).map_err(e)?;
    let want = if me == 0 { vec![7, 7] } else { prefix(me) };
    check!(got[..] == want[..], "exscan {got:?}, want {want:?}");
    // reduce_scatter: rank i gets i + 1 elements of the sum.
    let counts: Vec<usize> = (0..n).map(|i| i + 1).collect();
    let total: usize = counts.iter().sum();
    let send: Vec<u64> = (0..total).map(|i| (me * 10 + i) as u64).collect();
    let mut got = vec![0u64; me + 1];
    c.reduce_scatter(&send, &mut got, &counts, &Op::sum())
        .map_err(e)?;
    let at: usize = counts[..me].iter().sum();
    let want: Vec<u64> = (at..at + me + 1)
        .map(|i| (0..n).map(|r| (r * 10 + i) as u64).sum())
        .collect();
    check!(got == want, "reduce_scatter {got:?}, want {want:?}");
    let mut got = [0u64; 1];
    let send: Vec<u64> = (0..n as u64).map(|i| i + me as u64).collect();
    c.reduce_scatter_block(&send, &mut got, &Op::max())
        .map_err(e)?;
    check!(
        got[0] == (me + n - 1) as u64,
        "reduce_scatter_block {got:?}"
    );
    // v-collectives: rank r contributes r + 1 elements, placed with a gap
    // of one element between blocks.
    let counts: Vec<usize> = (0..n).map(|r| r + 1).collect();
    let displs: Vec<usize> = (0..n).map(|r| r * (r + 1) / 2 + r).collect();
    let len = displs[n - 1] + counts[n - 1];
    let mut want = vec![0u64; len];
    for r in 0..n {
        want[displs[r]..displs[r] + counts[r]].copy_from_slice(&mine(r, r + 1));
    }
    let mut got = vec![0u64; len];
    c.allgatherv(&mine(me, me + 1), &mut got, &counts, &displs)
        .map_err(e)?;
    check!(got == want, "allgatherv {got:?}");
    let mut got = vec![0u64; if me == 0 { len } else { 0 }];
    c.gatherv(&mine(me, me + 1), &mut got, &counts, &displs, 0)
        .map_err(e)?;
    check!(me != 0 || got == want, "gatherv {got:?}");
    let mut part = vec![0u64; me + 1];
    let src = if me == 0 { want.clone() } else { Vec::new() };
    c.scatterv(&src, &counts, &displs, &mut part, 0)
        .map_err(e)?;
    check!(part == mine(me, me + 1), "scatterv {part:?}");
    // alltoallv: rank i sends j + 1 elements to rank j.
    let sc: Vec<usize> = (0..n).map(|j| j + 1).collect();
    let sd: Vec<usize> = sc
        .iter()
        .scan(0, |a, &k| Some(std::mem::replace(a, *a + k)))
        .collect();
    let send: Vec<u64> = (0..n)
        .flat_map(|j| (0..=j).map(move |k| (me * 1000 + j * 10 + k) as u64))
        .collect();
    let rc = vec![me + 1; n];
    let rd: Vec<usize> = (0..n).map(|i| i * (me + 1)).collect();
    let mut got = vec![0u64; n * (me + 1)];
    c.alltoallv(&send, &sc, &sd, &mut got, &rc, &rd)
        .map_err(e)?;
    let want: Vec<u64> = (0..n)
        .flat_map(|i| (0..=me).map(move |k| (i * 1000 + me * 10 + k) as u64))
        .collect();
    check!(got == want, "alltoallv {got:?}");
    // The non-blocking collectives, all in flight at once.
    let mut b = [0u32; 2];
    if me == 1 % n {
        b = [5, 6];
    }
    let (mut r1, mut r2, mut g, mut t) = ([0u64; 2], [0u64; 2], vec![0u64; n], vec![0u64; n]);
    let send_t: Vec<u64> = (0..n as u64).map(|j| me as u64 * 10 + j).collect();
    pertinax::scope(|s| -> R {
        let ops = vec![
            c.ibarrier(s).map_err(e)?,
            c.ibcast(s, &mut b, 1 % n).map_err(e)?,
            c.ireduce(s, &x, &mut r1, &Op::sum(), 0).map_err(e)?,
            c.iallreduce(s, &x, &mut r2, &Op::sum()).map_err(e)?,
            c.iallgather(s, &x[..1], &mut g).map_err(e)?,
            c.ialltoall(s, &send_t, &mut t).map_err(e)?,
        ];
        for (i, op) in ops.into_iter().enumerate() {
            op.wait()
                .map_err(|x| format!("non-blocking collective {i}: {x}"))?;
        }
        Ok(())
    })?;
    check!(b == [5, 6], "ibcast {b:?}");
    check!(me != 0 || r1[..] == prefix(n)[..], "ireduce {r1:?}");
    check!(r2[..] == prefix(n)[..], "iallreduce {r2:?}");
    check!(
        g == (0..n).map(|r| mine(r, 1)[0]).collect::<Vec<_>>(),
        "iallgather {g:?}"
    );
    check!(
        t == (0..n as u64)
            .map(|i| i * 10 + me as u64)
            .collect::<Vec<_>>(),
        "ialltoall {t:?}"
    );
    // ULFM, with nobody failed.
    // Rank 0's flags lack bit 0, so the AND is 0b110 at every rank.
    let flags = c.agree(0b110 | (me as u32 & 1)).map_err(e)?;
    check!(flags == 0b110, "agree gave {flags:#b}");
    modes(c)?;
    check!(c.ack_failed(usize::MAX).map_err(e)? == 0, "ack_failed");
    check!(c.failed_ranks().is_empty(), "failed {:?}", c.failed_ranks());
    match c.shrink_boxed() {
        Ok(s) => {
            check!(shrinks, "shrank");
            check!(s.size() == n && s.rank().index() == me, "shrink");
            basic(&*s)
        }
        Err(x) => {
            let why = x.to_string();
            check!(
                !shrinks && why.contains("unsupported: shrink"),
                "shrink: {why}"
            );
            Ok(())
        }
    }
}

/// The resilient communicator: what it repairs works; the rest is
/// `Unsupported` with a reason.
fn resilient(w: &Comm) -> R {
    let r = Resilient::new(w).map_err(e)?;
    basic(&r)?;
    let mut got = [0u64; 1];
    r.scan(&[1u64], &mut got, &Op::sum()).map_err(e)?;
    check!(
        got[0] == r.rank().0 as u64 + 1,
        "scan on a resilient communicator: {got:?}"
    );
    for (what, res) in [
        ("agree", r.agree(0).map(drop)),
        ("shrink", r.shrink_boxed().map(drop)),
        ("ssend", r.ssend(&[1u8], 0, 1).map(drop)),
        ("bsend", r.bsend(&[1u8], 0, 1).map(drop)),
    ] {
        match res {
            Err(pertinax_resilient::Error::Unsupported(why)) => {
                check!(why.contains(what) && why.contains(':'), "{what}: {why}");
            }
            other => return Err(format!("{what} on a resilient communicator: {other:?}")),
        }
    }
    Ok(())
}

fn main() {
    let sc = Scenario::<Sc>::from_args();
    let u = setup("init", pertinax::init());
    let w = u.world();
    let r: R = match sc.scenario() {
        Sc::Plain => {
            let c: &dyn Communicator<Error = Error> = &w;
            basic(c).and_then(|()| extended(c, true))
        }
        Sc::Boxed => w
            .dup_boxed()
            .map_err(e)
            .and_then(|b| basic(&b).and_then(|()| extended(&b, true))),
        Sc::Guarded => Guarded::<Comm>::over(&w, Ok)
            .map_err(e)
            .and_then(|g| basic(&g).and_then(|()| extended(&g, false))),
        Sc::Resilient => resilient(&w),
    };
    report(sc.name(), w.rank().index(), r.map(|()| String::new())).or_exit();
    setup("finalize", u.finalize());
}
