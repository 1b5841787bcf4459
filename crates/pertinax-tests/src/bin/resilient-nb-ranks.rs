//! Rank program for the tests of non-blocking resilient collectives:
//! `resilient-nb-ranks SCENARIO [ARGS]`, run with `pertinax run --resilient`.
//!
//! `rounds ROUNDS BATCH`: each scope posts the requests of BATCH rounds
//! (per round: a bcast, an allreduce, an allgather, a reduce and a barrier,
//! roots rotating, one bcast in seven of 128 KiB), so that up to 5 × BATCH
//! requests are outstanding at once; then it computes (testing one
//! request), then waits: forward at ranks ≡ 0 (mod 3), in reverse at ranks
//! ≡ 1, with `wait_all` at ranks ≡ 2. Fault points: `nb.before.post` (per
//! round, before its requests), `nb.posted` (after each post),
//! `nb.compute` (per round, between post and wait), `nb.waited` (after
//! each wait), `nb.after.scope`. When the scope has ended, every result is
//! checked against the values of the ranks its outcome says contributed.
//! Each survivor prints `OK rounds rank=R failed=[..] digest=D`; the digest
//! covers every outcome and every result that is the same at every
//! survivor.
//!
//! `rules`: the errors and refusals (bad arguments, a blocking collective
//! or a second scope while requests are outstanding, `test` until done,
//! `RequestInactive`), no failure.
//!
//! `log`: under `--resilient-check log` a scope is refused.
//!
//! `early ROUNDS`: a rank returns from inside a scope with `?` after a
//! point-to-point `Error::Failed`; the others go on posting (see [`early`]).
//!
//! `stop`: rank 1 dies first; a bcast from it ends with `Error::Failed` at
//! every survivor under the default policy, and the allreduce posted with
//! it completes without rank 1.

use pertinax::{Op, Rank};
use pertinax_harness::{report, setup, Reported, Scenario, LEFT};
use pertinax_resilient::{
    Communicator, CommunicatorExt, Error, NbRequest, Outcome, Resilient, World,
};
use pertinax_tests::scenario::ResilientNb;
use pertinax_tests::{arg, check};

type R = Result<String, String>;

fn e(x: Error) -> String {
    format!("unexpected error: {x}")
}

fn point(name: &str) {
    pertinax::fault_point(name);
}

/// The value rank `r` contributes at element `i` of operation `op` in
/// round `k`.
fn val(r: usize, k: u64, op: u64, i: usize) -> u64 {
    (r as u64 + 1) * 1_000_003 + k * 7919 + op * 104_729 + i as u64 * 31
}

/// A running digest (FNV-1a over 64-bit words).
struct Digest(u64);

impl Digest {
    fn add(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn outcome(&mut self, o: &Outcome) {
        self.add(o.skipped.map_or(u64::MAX, |r| r.0 as u64));
        self.add(o.missing.len() as u64);
        for r in &o.missing {
            self.add(r.0 as u64);
        }
    }
}

/// Elements of a round's bcast.
fn bcast_len(k: u64) -> usize {
    if k % 7 == 3 {
        16 * 1024
    } else {
        1 + (k % 3) as usize
    }
}

const RED: usize = 3;
const GATHER: usize = 2;

/// One round's buffers (they outlive the scope that posts into them).
struct Round {
    k: u64,
    bcast: Vec<u64>,
    red_send: Vec<u64>,
    allred: Vec<u64>,
    gather_send: Vec<u64>,
    gathered: Vec<u64>,
    reduced: Vec<u64>,
}

impl Round {
    fn new(k: u64, me: usize, n: usize) -> Round {
        let root = k as usize % n;
        Round {
            k,
            bcast: (0..bcast_len(k))
                .map(|i| if me == root { val(root, k, 0, i) } else { 0 })
                .collect(),
            red_send: (0..RED).map(|i| val(me, k, 1, i)).collect(),
            allred: vec![0; RED],
            gather_send: (0..GATHER).map(|i| val(me, k, 2, i)).collect(),
            gathered: vec![u64::MAX; n * GATHER],
            reduced: vec![0; RED],
        }
    }
}

/// The sum over the contributors of `o` of element `i` of `op`.
fn sum(o: &Outcome, n: usize, k: u64, op: u64, i: usize) -> u64 {
    (0..n)
        .filter(|r| !o.missing.contains(&Rank(*r as i32)))
        .map(|r| val(r, k, op, i))
        .sum()
}

/// The five results of a round, checked and added to the digest.
fn check_round(
    w: &Resilient,
    r: &Round,
    outs: &mut [Option<Result<Outcome, Error>>],
    d: &mut Digest,
) -> Result<(), String> {
    let (n, me, k) = (w.size(), w.rank().index(), r.k);
    let take = |o: &mut Option<Result<Outcome, Error>>| {
        o.take()
            .ok_or_else(|| format!("round {k}: a request has no result"))
    };
    // bcast
    match take(&mut outs[0])? {
        Ok(o) => {
            if o.skipped.is_none() {
                let root = k as usize % n;
                for (i, &x) in r.bcast.iter().enumerate() {
                    check!(
                        x == val(root, k, 0, i),
                        "round {k} bcast[{i}] = {x}, want {} ({o:?})",
                        val(root, k, 0, i)
                    );
                }
                d.add(r.bcast[0]);
            }
            d.outcome(&o);
        }
        Err(Error::Failed { rank, .. }) => {
            check!(
                rank.index() == k as usize % n,
                "round {k}: bcast failed on rank {rank:?}"
            );
            d.add(0xdead_0000 + rank.0 as u64);
        }
        Err(x) => return Err(format!("round {k} bcast: {}", e(x))),
    }
    // allreduce
    let o = take(&mut outs[1])?.map_err(e)?;
    for (i, &x) in r.allred.iter().enumerate() {
        let want = sum(&o, n, k, 1, i);
        check!(
            x == want,
            "round {k} allreduce[{i}] = {x}, want {want} ({o:?})"
        );
        d.add(x);
    }
    d.outcome(&o);
    // allgather
    let o = take(&mut outs[2])?.map_err(e)?;
    for src in (0..n).filter(|s| !o.missing.contains(&Rank(*s as i32))) {
        for i in 0..GATHER {
            let x = r.gathered[src * GATHER + i];
            check!(
                x == val(src, k, 2, i),
                "round {k} allgather slot {src}[{i}] = {x}, want {} ({o:?})",
                val(src, k, 2, i)
            );
            d.add(x);
        }
    }
    d.outcome(&o);
    // reduce (the result only at its root)
    let root2 = (k as usize + 1) % n;
    let o = take(&mut outs[3])?.map_err(e)?;
    if me == root2 && o.skipped.is_none() {
        for (i, &x) in r.reduced.iter().enumerate() {
            let want = sum(&o, n, k, 1, i);
            check!(
                x == want,
                "round {k} reduce[{i}] = {x}, want {want} ({o:?})"
            );
        }
    }
    d.outcome(&o);
    // barrier
    let o = take(&mut outs[4])?.map_err(e)?;
    check!(o.is_complete(), "round {k} barrier: {o:?}");
    Ok(())
}

/// A little work between post and wait.
fn compute(seed: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

fn rounds(w: &Resilient, total: u64, batch: u64, d: &mut Digest) -> Result<(), String> {
    let (n, me) = (w.size(), w.rank().index());
    let batch = batch.max(1);
    let mut k0 = 0;
    let mut sink = 0u64;
    while k0 < total {
        let ks: Vec<u64> = (k0..total.min(k0 + batch)).collect();
        let mut rs: Vec<Round> = ks.iter().map(|&k| Round::new(k, me, n)).collect();
        let nreq = rs.len() * 5;
        let mut outs: Vec<Option<Result<Outcome, Error>>> = (0..nreq).map(|_| None).collect();
        let blocking_inside = (k0 / batch) % 2 == 1;
        let inner = w
            .scope(|s| -> Result<(), String> {
                let mut reqs: Vec<Option<NbRequest<'_>>> = Vec::with_capacity(nreq);
                for r in rs.iter_mut() {
                    let k = r.k;
                    let root = k as usize % n;
                    let root2 = (k as usize + 1) % n;
                    point("nb.before.post");
                    reqs.push(Some(s.ibcast(&mut r.bcast, root).map_err(e)?));
                    point("nb.posted");
                    reqs.push(Some(
                        s.iallreduce(&r.red_send, &mut r.allred, &Op::sum())
                            .map_err(e)?,
                    ));
                    point("nb.posted");
                    reqs.push(Some(
                        s.iallgather(&r.gather_send, &mut r.gathered).map_err(e)?,
                    ));
                    point("nb.posted");
                    let recv: &mut [u64] = if me == root2 { &mut r.reduced } else { &mut [] };
                    reqs.push(Some(
                        s.ireduce(&r.red_send, recv, &Op::sum(), root2).map_err(e)?,
                    ));
                    point("nb.posted");
                    reqs.push(Some(s.ibarrier().map_err(e)?));
                    point("nb.posted");
                }
                // Compute, testing one request now and then (a later one
                // at some ranks: it completes the earlier ones first).
                for (j, &k) in ks.iter().enumerate() {
                    point("nb.compute");
                    sink ^= compute(k ^ me as u64);
                    let t = (me * 7 + j * 3) % nreq;
                    if let Some(r) = reqs[t].as_mut() {
                        if let Some(o) =
                            r.test().map(|o| o.map(Ok)).unwrap_or_else(|x| Some(Err(x)))
                        {
                            outs[t] = Some(o);
                            reqs[t] = None;
                        }
                    }
                }
                match me % 3 {
                    0 => {
                        for (t, r) in reqs.iter_mut().enumerate() {
                            if let Some(r) = r.take() {
                                outs[t] = Some(r.wait());
                                point("nb.waited");
                            }
                        }
                    }
                    1 => {
                        for (t, r) in reqs.iter_mut().enumerate().rev() {
                            if let Some(r) = r.take() {
                                outs[t] = Some(r.wait());
                                point("nb.waited");
                            }
                        }
                    }
                    _ => {
                        let idx: Vec<usize> = (0..nreq).filter(|&t| reqs[t].is_some()).collect();
                        let mut live: Vec<NbRequest<'_>> =
                            reqs.iter_mut().filter_map(Option::take).collect();
                        // The core's wait_all: a failure returns at once with
                        // its index, the others stay to be waited for again.
                        loop {
                            let act: Vec<usize> =
                                (0..live.len()).filter(|&i| live[i].is_active()).collect();
                            match pertinax::wait_all(&mut live) {
                                Ok(done) => {
                                    for (i, c) in act.into_iter().zip(done) {
                                        outs[idx[i]] = Some(Ok(c.outcome));
                                    }
                                    break;
                                }
                                Err(we) => outs[idx[we.index]] = Some(Err(we.error)),
                            }
                        }
                        point("nb.waited");
                    }
                }
                if blocking_inside {
                    // Every request was waited for: blocking collectives
                    // are allowed again inside the scope.
                    let o = w.barrier().map_err(e)?;
                    check!(o.is_complete(), "barrier inside the scope: {o:?}");
                }
                Ok(())
            })
            .map_err(e)?;
        inner?;
        point("nb.after.scope");
        for (j, r) in rs.iter().enumerate() {
            check_round(w, r, &mut outs[j * 5..j * 5 + 5], d)?;
        }
        k0 += batch;
    }
    std::hint::black_box(sink);
    Ok(())
}

fn rules(w: &Resilient) -> Result<String, String> {
    let (n, me) = (w.size(), w.rank().index());
    let mut b = vec![if me == 1 { 77u64 } else { 0 }; 2];
    let mut spare = [0u64; 2];
    let mine = [me as u64 + 1];
    let mut total = [0u64];
    let mut all = vec![0u64; n];
    let mut short = vec![0u64; n - 1];
    let mut bad_recv = vec![0u64; 2];
    let mut got = [0u64];
    let inner = w
        .scope(|s| -> Result<(), String> {
            check!(
                matches!(
                    s.ibcast(&mut spare, n + 3),
                    Err(Error::Comm(pertinax::Error::InvalidRank { .. }))
                ),
                "bcast with a bad root"
            );
            check!(
                matches!(
                    s.iallgather(&mine, &mut short),
                    Err(Error::Comm(pertinax::Error::InvalidArgument(_)))
                ),
                "allgather with a short receive"
            );
            let r1 = s.ibcast(&mut b, 1).map_err(e)?;
            let mut r2 = s.iallreduce(&mine, &mut total, &Op::sum()).map_err(e)?;
            let r3 = s.iallgather(&mine, &mut all).map_err(e)?;
            check!(
                matches!(
                    w.barrier(),
                    Err(Error::Comm(pertinax::Error::InvalidArgument(_)))
                ),
                "a blocking collective while requests are outstanding"
            );
            check!(
                matches!(
                    w.scope(|_| ()),
                    Err(Error::Comm(pertinax::Error::InvalidArgument(_)))
                ),
                "a second scope"
            );
            // Testing the second request completes the first one.
            let o2 = loop {
                if let Some(o) = r2.test().map_err(e)? {
                    break o;
                }
            };
            check!(o2.is_complete(), "allreduce {o2:?}");
            check!(
                matches!(
                    r2.test(),
                    Err(Error::Comm(pertinax::Error::RequestInactive))
                ),
                "test after completion"
            );
            check!(r1.wait().map_err(e)?.is_complete(), "bcast");
            check!(r3.wait().map_err(e)?.is_complete(), "allgather");
            // Nothing outstanding: blocking collectives work again.
            w.barrier().map_err(e)?;
            // A reduce root whose receive is too long takes part and
            // reports it; the others complete normally.
            let recv: &mut [u64] = if me == 0 { &mut bad_recv } else { &mut [] };
            let r4 = s.ireduce(&mine, recv, &Op::sum(), 0).map_err(e)?;
            let r5 = s.ireduce(&mine, &mut got, &Op::max(), 0).map_err(e)?;
            let o4 = r4.wait();
            if me == 0 {
                check!(
                    matches!(o4, Err(Error::Comm(pertinax::Error::InvalidArgument(_)))),
                    "reduce with a bad receive at the root: {o4:?}"
                );
            } else {
                check!(o4.is_ok(), "reduce at a non-root: {o4:?}");
            }
            r5.wait().map_err(e)?;
            Ok(())
        })
        .map_err(e)?;
    inner?;
    check!(b == [77, 77], "bcast gave {b:?}");
    let want = (n * (n + 1) / 2) as u64;
    check!(total[0] == want, "allreduce gave {}", total[0]);
    check!(
        all.iter().enumerate().all(|(r, &x)| x == r as u64 + 1),
        "allgather gave {all:?}"
    );
    check!(
        bad_recv == [0, 0],
        "the bad receive was written: {bad_recv:?}"
    );
    if me == 0 {
        check!(got[0] == n as u64, "reduce max gave {}", got[0]);
    }
    Ok(format!("sum={}", total[0]))
}

fn stop(w: &Resilient) -> Result<String, String> {
    let (n, me) = (w.size(), w.rank().index());
    if me == 1 {
        let _ = pertinax_tests::kill_self();
    }
    let mut b = [0u64];
    let mine = [me as u64 + 1];
    let mut total = [0u64];
    let (ob, ot) = w
        .scope(|s| -> Result<_, String> {
            let rb = s.ibcast(&mut b, 1).map_err(e)?;
            let rt = s.iallreduce(&mine, &mut total, &Op::sum()).map_err(e)?;
            let ot = rt.wait();
            Ok((rb.wait(), ot))
        })
        .map_err(e)??;
    check!(
        matches!(ob, Err(Error::Failed { rank: Rank(1), .. })),
        "bcast from a dead root: {ob:?}"
    );
    let ot = ot.map_err(e)?;
    check!(ot.missing == [Rank(1)], "allreduce outcome {ot:?}");
    let want = (n * (n + 1) / 2 - 2) as u64;
    check!(total[0] == want, "allreduce gave {}, want {want}", total[0]);
    Ok(format!("sum={}", total[0]))
}

/// `early ROUNDS`: rank 3 dies (`--kill 3@nb.early.start#1`); inside a
/// scope, after a first allreduce, rank 0's `recv` from rank 3 ends with
/// `Error::Failed` (policy `recv=stop`) and rank 0 leaves the scope and the
/// program with `?`; the others post ROUNDS more allreduces and barriers in
/// the same scope, then a blocking allreduce, and must finish with ranks 0
/// and 3 reported failed and exact sums.
fn early(w: &Resilient, rounds: u64) -> Result<String, String> {
    let (n, me) = (w.size(), w.rank().index());
    point("nb.early.start");
    let mine = [me as u64 + 1];
    let mut first = [0u64];
    let mut sums = vec![[0u64]; rounds as usize];
    let mine_k: Vec<[u64; 1]> = (0..rounds).map(|k| [k * 100 + me as u64]).collect();
    let outcomes = w
        .scope(|s| -> Result<Vec<Outcome>, String> {
            let r = s.iallreduce(&mine, &mut first, &Op::sum()).map_err(e)?;
            let o = r.wait().map_err(e)?;
            if me == 0 {
                let mut b = [0u64];
                // The user's early return, inside the scope.
                w.recv(&mut b, 3, 5).map_err(|x| format!("{LEFT}{x}"))?;
                return Err("recv from the dead rank 3 succeeded".into());
            }
            let mut reqs = Vec::new();
            for (k, sum) in sums.iter_mut().enumerate() {
                reqs.push(s.iallreduce(&mine_k[k], sum, &Op::sum()).map_err(e)?);
                reqs.push(s.ibarrier().map_err(e)?);
            }
            let mut outs = vec![o];
            let done = pertinax::wait_all(&mut reqs).map_err(|w| e(w.error))?;
            outs.extend(done.into_iter().map(|c| c.outcome));
            Ok(outs)
        })
        .map_err(e)??;
    let mut all = [0u64];
    let o = w.allreduce(&mine, &mut all, &Op::sum()).map_err(e)?;
    let live = |r: usize, o: &Outcome| !o.missing.contains(&Rank(r as i32));
    let want =
        |o: &Outcome, v: &dyn Fn(usize) -> u64| (0..n).filter(|&r| live(r, o)).map(v).sum::<u64>();
    check!(
        all[0] == want(&o, &|r| r as u64 + 1),
        "allreduce {} ({o:?})",
        all[0]
    );
    check!(
        first[0] == want(&outcomes[0], &|r| r as u64 + 1),
        "first allreduce {} ({:?})",
        first[0],
        outcomes[0]
    );
    for (k, sum) in sums.iter().enumerate() {
        let o = &outcomes[1 + 2 * k];
        let v = want(o, &|r| k as u64 * 100 + r as u64);
        check!(sum[0] == v, "round {k}: {} want {v} ({o:?})", sum[0]);
    }
    let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
    Ok(format!("failed={failed:?} total={}", all[0]))
}

fn main() {
    let sc = Scenario::<ResilientNb>::from_args();
    let (scenario, rest) = (sc.name(), sc.args());
    let u = setup("init", pertinax::init());
    let w = setup("world", pertinax_resilient::world(&u));
    let me = w.rank().index();
    let r: R = (|| {
        let World::Resilient(res) = &w else {
            return Err("run with pertinax run --resilient".into());
        };
        let res: &Resilient = res;
        match sc.scenario() {
            ResilientNb::Rounds => {
                let mut d = Digest(0xcbf2_9ce4_8422_2325);
                rounds(res, arg(rest, 0, 12), arg(rest, 1, 3), &mut d)?;
                let failed: Vec<i32> = res.failed_ranks().iter().map(|r| r.0).collect();
                Ok(format!("failed={failed:?} digest={:016x}", d.0))
            }
            ResilientNb::Rules => rules(res),
            ResilientNb::Log => match res.scope(|_| ()) {
                Err(Error::Unsupported(_)) => Ok("refused".into()),
                other => Err(format!("a scope under the log check: {other:?}")),
            },
            ResilientNb::Stop => stop(res),
            ResilientNb::Early => early(res, arg(rest, 0, 10)),
        }
    })();
    let reported = report(scenario, me, r);
    drop(w);
    if reported == Reported::Failed {
        std::process::exit(1);
    }
}
