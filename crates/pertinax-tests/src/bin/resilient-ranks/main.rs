//! Rank program for the resilient-communicator tests: `resilient-ranks
//! SCENARIO [ARGS]`, run with `PERTINAX_RESILIENT` set (or `--resilient`).
//!
//! `ops ROUNDS [full|coll]`: every round runs bcast, reduce, allreduce, gather,
//! scatter, allgather, a point-to-point ring and a barrier (roots rotate),
//! with fault points between them (`res.before.OP`, `res.after.OP`), and
//! every few rounds a dup and a split. Every result is checked against the
//! values of the ranks the outcome says contributed. Each survivor prints
//! `OK ops rank=R failed=[..] digest=D`; the digest covers every result and
//! outcome that must be the same at every survivor, so the test can check
//! that nobody was left behind with different data.
//!
//! `vops ROUNDS [agree|log|hier]`: the collectives with per-rank counts or
//! per-rank results (see `vops.rs`).
//!
//! `stop`: a bcast from a root that is killed first must end with
//! `Error::Failed` under the default policy (stop).
//!
//! `early ROUNDS`: rank 3 dies (`--kill 3@res.early.start#1`); rank 0's
//! `recv` from it ends with `Error::Failed` (policy `recv=stop`) and rank 0
//! returns at once with `?` (prints `LEFT`, drops the communicator and
//! finalizes); the others run ROUNDS allreduces and barriers and must
//! finish with both ranks reported failed (issue 15, item 1).
//!
//! `anysrc`: rank 0 receives from any source a message that only rank 2
//! sends (fault point `res.anysrc.send` before it); killed there, rank 2
//! must be reported by the `recv` policy (stop: `Error::Failed` naming it;
//! ignore: a skipped receive), once: after a barrier every live rank sends
//! again and rank 0's any-source receives get them all (issue 15, item 2).
//!
//! `p2p ROUNDS`: per round an allreduce (in the digest), a pair exchange
//! (ranks 2i and 2i+1, named receives: under `recv=stop` a rank whose
//! partner died returns with `?` and prints `LEFT`), a barrier, and an any-source
//! collection at rank k mod N (every failure it reports must be a dead
//! rank; stop is handled, not returned). Fault points `res.p2p.*`.

use pertinax::{Op, Rank};
use pertinax_harness::{report, setup, Reported, Scenario, LEFT};
use pertinax_resilient::{Communicator, CommunicatorExt, Decided, Error, Outcome, SharedFile};
use pertinax_tests::scenario::Resilient;
use pertinax_tests::{arg, check};

mod vops;

type R = Result<String, String>;

fn e(x: Error) -> String {
    format!("unexpected error: {x}")
}

/// An expected `Error::Failed` of a point-to-point operation, returned
/// early; any other error is unexpected.
fn left(x: Error) -> String {
    match x {
        Error::Failed {
            decided: Decided::Locally,
            ..
        } => format!("{LEFT}{x}"),
        x => e(x),
    }
}

/// The value rank `r` contributes in round `k` for operation `op`.
fn val(r: usize, k: u64, op: u64) -> u64 {
    (r as u64 + 1) * 1_000_003 + k * 7919 + op * 104_729
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

fn point(name: &str) {
    pertinax::fault_point(name);
}

/// Checks a reduction or allreduce result: the sum over every rank not in
/// `missing`.
fn check_sum(got: u64, o: &Outcome, n: usize, k: u64, op: u64, what: &str) -> Result<(), String> {
    let want: u64 = (0..n)
        .filter(|r| !o.missing.contains(&Rank(*r as i32)))
        .map(|r| val(r, k, op))
        .sum();
    check!(
        got == want,
        "round {k} {what}: got {got}, want {want} ({o:?})"
    );
    Ok(())
}

/// Checks a sum over the ranks not in `missing`, rank `r` contributing
/// `v(r)`.
fn check_sum_of(
    got: u64,
    o: &Outcome,
    n: usize,
    v: impl Fn(usize) -> u64,
    k: u64,
) -> Result<(), String> {
    let want: u64 = (0..n)
        .filter(|r| !o.missing.contains(&Rank(*r as i32)))
        .map(v)
        .sum();
    check!(got == want, "round {k}: sum {got}, want {want} ({o:?})");
    Ok(())
}

/// The `p2p` scenario (see the module documentation).
fn p2p<C: Communicator<Error = Error>>(w: &C, rounds: u64, d: &mut Digest) -> Result<(), String> {
    let n = w.size();
    let me = w.rank().index();
    for k in 0..rounds {
        point("res.p2p.round");
        let mut s = [0u64];
        let o = w
            .allreduce(&[val(me, k, 7)], &mut s, &Op::sum())
            .map_err(e)?;
        check_sum_of(s[0], &o, n, |r| val(r, k, 7), k)?;
        check_dead(w, &o, k, "allreduce")?;
        d.outcome(&o);
        d.add(s[0]);

        // Pair exchange, named: a dead partner goes to the recv policy;
        // under stop the error is returned with `?`.
        let partner = me ^ 1;
        if partner < n {
            point("res.p2p.pair");
            w.send(&[val(me, k, 8)], partner, 8).map_err(e)?;
            let mut b = [0u64];
            if let Some(st) = w.recv(&mut b, partner, 8).map_err(left)? {
                check!(
                    b[0] == val(partner, k, 8) && st.source.index() == partner,
                    "round {k} pair got {} from {:?}",
                    b[0],
                    st.source
                );
            } else {
                check!(
                    w.failed_ranks().contains(&Rank(partner as i32)),
                    "round {k}: a receive from the live partner {partner} was skipped"
                );
            }
        }

        // A collective after the pair exchange: a rank that left there is
        // failed for every survivor once it has completed (an any-source
        // receive is woken by failures only, not by a rank that left).
        let o = w.barrier().map_err(e)?;
        d.outcome(&o);

        // Any-source collection at rank k mod n.
        let c = (k as usize) % n;
        let tag = 100 + k as i32;
        point("res.p2p.any");
        if me != c {
            w.send(&[val(me, k, 9)], c, tag).map_err(e)?;
            continue;
        }
        let mut got = vec![false; n];
        loop {
            let gone = w.failed_ranks();
            if (0..n).all(|r| r == me || got[r] || gone.contains(&Rank(r as i32))) {
                break;
            }
            let mut b = [0u64];
            match w.recv(&mut b, pertinax::Source::Any, tag) {
                Ok(Some(st)) => {
                    let s = st.source.index();
                    check!(
                        b[0] == val(s, k, 9) && !got[s],
                        "round {k} any-source got {} from {s}",
                        b[0]
                    );
                    got[s] = true;
                }
                Ok(None) => {}
                Err(Error::Failed {
                    rank,
                    decided: Decided::Locally,
                    ..
                }) => check!(
                    w.failed_ranks().contains(&rank),
                    "round {k}: any-source Failed names the live rank {rank:?}"
                ),
                Err(x) => return Err(e(x)),
            }
        }
    }
    Ok(())
}

/// The `nbp2p` scenario: each round an all-to-all at original positions
/// (the missing blocks must be dead ranks'; every other block checked),
/// then a pair exchange (rank ^ 1) through the trait's non-blocking
/// `isend`/`irecv` inside a core scope: a dead partner's requests complete
/// skipped by the policy (run under `send=ignore,recv=ignore`), a live one's
/// data is checked; then a barrier. Fault point `res.nb.round` at the start
/// of each round.
fn nbp2p<C: Communicator<Error = Error>>(w: &C, rounds: u64, d: &mut Digest) -> Result<(), String> {
    let n = w.size();
    let me = w.rank().index();
    for k in 0..rounds {
        point("res.nb.round");
        let send: Vec<u64> = (0..n).map(|j| val(me, k, 20 + j as u64)).collect();
        let mut recv = vec![0u64; n];
        let o = w.alltoall(&send, &mut recv).map_err(e)?;
        check_dead(w, &o, k, "alltoall")?;
        for (i, &got) in recv.iter().enumerate() {
            if !o.missing.contains(&Rank(i as i32)) {
                check!(
                    got == val(i, k, 20 + me as u64),
                    "round {k}: alltoall block {i} is {got} ({o})"
                );
            }
        }
        d.outcome(&o);

        let partner = me ^ 1;
        if partner < n {
            let mine = [val(me, k, 8)];
            let mut b = [0u64];
            let (r, q) = pertinax::scope(|s| {
                let r = w.irecv(s, &mut b, partner, 8)?;
                let q = w.isend(s, &mine, partner, 8)?;
                Ok::<_, Error>((r.wait(), q.wait()))
            })
            .map_err(e)?;
            let (r, q) = (r.map_err(e)?, q.map_err(e)?);
            match r.status {
                Some(st) => check!(
                    b[0] == val(partner, k, 8)
                        && st.source.index() == partner
                        && r.outcome.is_complete(),
                    "round {k}: pair got {} from {:?} ({})",
                    b[0],
                    st.source,
                    r.outcome
                ),
                None => check!(
                    r.outcome.skipped == Some(Rank(partner as i32))
                        && w.failed_ranks().contains(&Rank(partner as i32)),
                    "round {k}: a receive from the live partner {partner} was skipped ({})",
                    r.outcome
                ),
            }
            check!(
                q.outcome.skipped.is_none() || w.failed_ranks().contains(&Rank(partner as i32)),
                "round {k}: a send to the live partner {partner} was skipped"
            );
        }
        let o = w.barrier().map_err(e)?;
        d.outcome(&o);
    }
    Ok(())
}

/// Checks that every rank `o` reports missing is dead (known failed at
/// this rank): a survivor's contribution is never dropped.
fn check_dead<C: Communicator<Error = Error>>(
    w: &C,
    o: &Outcome,
    k: u64,
    what: &str,
) -> Result<(), String> {
    let failed = w.failed_ranks();
    let alive: Vec<&Rank> = o.missing.iter().filter(|r| !failed.contains(r)).collect();
    check!(
        alive.is_empty(),
        "round {k} {what}: live ranks {alive:?} reported missing ({o:?}, failed {failed:?})"
    );
    Ok(())
}

/// Checks a gathered array: contributors' slots hold their values (the
/// missing ranks' slots are unspecified).
fn check_slots(got: &[u64], o: &Outcome, k: u64, op: u64, what: &str) -> Result<(), String> {
    for (r, &g) in got.iter().enumerate() {
        if !o.missing.contains(&Rank(r as i32)) {
            let want = val(r, k, op);
            check!(
                g == want,
                "round {k} {what}: slot {r} holds {g}, want {want} ({o:?})"
            );
        }
    }
    Ok(())
}

fn ops<C: Communicator<Error = Error>>(
    w: &C,
    rounds: u64,
    full: bool,
    d: &mut Digest,
) -> Result<(), String> {
    let n = w.size();
    let me = w.rank().index();
    for k in 0..rounds {
        let root = (k as usize) % n;
        point("res.round");

        // bcast
        point("res.before.bcast");
        let mut b = [if me == root { val(root, k, 0) } else { 0 }];
        let o = w.bcast(&mut b, root).map_err(e)?;
        if o.skipped.is_none() {
            check!(b[0] == val(root, k, 0), "round {k} bcast got {}", b[0]);
        }
        d.outcome(&o);
        d.add(if o.skipped.is_none() { b[0] } else { 0 });
        point("res.after.bcast");

        // reduce (root's result only)
        point("res.before.reduce");
        let mut s = [0u64];
        let o = w
            .reduce(&[val(me, k, 1)], &mut s, &Op::sum(), root)
            .map_err(e)?;
        if me == root && o.skipped.is_none() {
            check_sum(s[0], &o, n, k, 1, "reduce")?;
            check_dead(w, &o, k, "reduce")?;
        }
        point("res.after.reduce");

        // allreduce
        point("res.before.allreduce");
        let mut s = [0u64];
        let o = w
            .allreduce(&[val(me, k, 2)], &mut s, &Op::sum())
            .map_err(e)?;
        check_sum(s[0], &o, n, k, 2, "allreduce")?;
        check_dead(w, &o, k, "allreduce")?;
        d.outcome(&o);
        d.add(s[0]);
        point("res.after.allreduce");

        // gather
        point("res.before.gather");
        let mut g = vec![u64::MAX; if me == root { n } else { 0 }];
        let o = w.gather(&[val(me, k, 3)], &mut g, root).map_err(e)?;
        if me == root && o.skipped.is_none() {
            check_slots(&g, &o, k, 3, "gather")?;
            check_dead(w, &o, k, "gather")?;
        }
        point("res.after.gather");

        // scatter
        point("res.before.scatter");
        let src: Vec<u64> = if me == root {
            (0..n).map(|r| val(r, k, 4)).collect()
        } else {
            Vec::new()
        };
        let mut one = [0u64];
        let o = w.scatter(&src, &mut one, root).map_err(e)?;
        if o.skipped.is_none() {
            check!(one[0] == val(me, k, 4), "round {k} scatter got {}", one[0]);
        }
        point("res.after.scatter");

        // allgather
        point("res.before.allgather");
        let mut g = vec![u64::MAX; n];
        let o = w.allgather(&[val(me, k, 5)], &mut g).map_err(e)?;
        check_slots(&g, &o, k, 5, "allgather")?;
        check_dead(w, &o, k, "allgather")?;
        d.outcome(&o);
        for (r, x) in g.iter().enumerate() {
            if !o.missing.contains(&Rank(r as i32)) {
                d.add(*x);
            }
        }
        point("res.after.allgather");

        // point-to-point ring
        point("res.before.ring");
        if full {
            let right = (me + 1) % n;
            let left = (me + n - 1) % n;
            w.send(&[val(me, k, 6)], right, 6).map_err(e)?;
            let mut r = [0u64];
            if let Some(st) = w.recv(&mut r, left, 6).map_err(e)? {
                check!(
                    r[0] == val(left, k, 6) && st.source == Rank(left as i32),
                    "round {k} ring got {} from {:?}",
                    r[0],
                    st.source
                );
            }
        }
        point("res.after.ring");

        // barrier
        point("res.before.barrier");
        w.barrier().map_err(e)?;
        point("res.after.barrier");

        if full && k % 5 == 4 {
            point("res.before.dup");
            let c = w.dup().map_err(e)?;
            check!(c.size() == n && c.rank() == w.rank(), "dup numbering");
            let mut s = [0u64];
            let o = c.allreduce(&[1], &mut s, &Op::sum()).map_err(e)?;
            check!(
                s[0] as usize == n - o.missing.len(),
                "dup allreduce {} with {o:?}",
                s[0]
            );
            point("res.before.split");
            let half = w
                .split(Some(me as u32 % 2), 0)
                .map_err(e)?
                .ok_or("split gave no communicator")?;
            let mut s = [0u64];
            let o = half.allreduce(&[1], &mut s, &Op::sum()).map_err(e)?;
            check!(
                s[0] as usize == half.size() - o.missing.len(),
                "split allreduce {} with {o:?}",
                s[0]
            );
            point("res.after.split");
        }
    }
    Ok(())
}

fn main() {
    let sc = Scenario::<Resilient>::from_args();
    let (scenario, rest) = (sc.name(), sc.args());
    let u = setup("init", pertinax::init());
    let w = setup("world", pertinax_resilient::world(&u));
    let me = w.rank().index();
    let r: R = (|| {
        match sc.scenario() {
            Resilient::Ops => {
                check!(w.is_resilient(), "run with PERTINAX_RESILIENT");
                let mut d = Digest(0xcbf2_9ce4_8422_2325);
                // `coll`: collectives on the world only (no point-to-point, no
                // other communicator), the pattern `--resilient-check log` is
                // made for.
                let full = rest.get(1).map(String::as_str) != Some("coll");
                ops(&w, arg(rest, 0, 20), full, &mut d)?;
                // Every survivor writes its rank at its original offset.
                let path = std::env::var("RESPROG_FILE").unwrap_or_default();
                if !path.is_empty() {
                    let f = SharedFile::create(&w, &path).map_err(e)?;
                    f.write_at(&(me as u64).to_le_bytes(), me as u64 * 8)
                        .map_err(e)?;
                    w.barrier().map_err(e)?;
                    let bytes = std::fs::read(&path).map_err(|x| x.to_string())?;
                    let failed = w.failed_ranks();
                    for r in (0..w.size()).filter(|r| !failed.contains(&Rank(*r as i32))) {
                        let at = bytes.get(r * 8..r * 8 + 8).ok_or("file too short")?;
                        check!(
                            at == (r as u64).to_le_bytes(),
                            "file: rank {r}'s part is {at:?}"
                        );
                    }
                }
                let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
                Ok(format!("failed={failed:?} digest={:016x}", d.0))
            }
            Resilient::Vops => {
                check!(w.is_resilient(), "run with PERTINAX_RESILIENT");
                let mut d = Digest(0xcbf2_9ce4_8422_2325);
                let mode = rest.get(1).map_or("agree", String::as_str);
                vops::vops(&w, arg(rest, 0, 10), mode, &mut d)?;
                let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
                Ok(format!("failed={failed:?} digest={:016x}", d.0))
            }
            Resilient::Nbp2p => {
                let mut d = Digest(0xcbf2_9ce4_8422_2325);
                nbp2p(&w, arg(rest, 0, 12), &mut d)?;
                let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
                Ok(format!("failed={failed:?} digest={:016x}", d.0))
            }
            Resilient::Stop => {
                // Rank 1 dies; then a bcast from it must stop everywhere.
                if me == 1 {
                    let _ = pertinax_tests::kill_self();
                }
                let mut s = [0u64];
                // The allreduce repairs around the dead rank.
                w.allreduce(&[1u64], &mut s, &Op::sum()).map_err(e)?;
                let mut b = [0u64];
                match w.bcast(&mut b, 1) {
                    Err(Error::Failed { rank: Rank(1), .. }) => {}
                    other => return Err(format!("bcast from a dead root: {other:?}")),
                }
                Ok(format!("sum={}", s[0]))
            }
            Resilient::Early => {
                point("res.early.start");
                if me == 0 {
                    let mut b = [0u64];
                    // The user's early return: the error leaves through `?`.
                    w.recv(&mut b, 3, 5).map_err(left)?;
                    return Err("recv from the dead rank 3 succeeded".into());
                }
                if me == 3 {
                    w.send(&[1u64], 0, 5).map_err(e)?;
                }
                let rounds = arg(rest, 0, 20);
                let mut total = 0;
                for k in 0..rounds {
                    let mut s = [0u64];
                    let o = w
                        .allreduce(&[k + me as u64], &mut s, &Op::sum())
                        .map_err(e)?;
                    check_sum_of(s[0], &o, w.size(), |r| k + r as u64, k)?;
                    total += s[0];
                    w.barrier().map_err(e)?;
                }
                let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
                Ok(format!("failed={failed:?} total={total}"))
            }
            Resilient::Anysrc => {
                // Rank 2 is the only sender of tag 9; every rank but 0 sends a
                // tag-10 message after the barrier.
                if me != 0 {
                    if me == 2 {
                        point("res.anysrc.send");
                        w.send(&[val(me, 0, 9)], 0, 9).map_err(e)?;
                    }
                    w.barrier().map_err(e)?;
                    w.send(&[val(me, 1, 9)], 0, 10).map_err(e)?;
                    let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
                    return Ok(format!("failed={failed:?}"));
                }
                // Failures reported by any-source receives (each once).
                let reported = std::cell::RefCell::new(Vec::<String>::new());
                let recv_any = |b: &mut [u64], tag: i32| -> Result<Option<usize>, String> {
                    match w.recv(b, pertinax::Source::Any, tag) {
                        Ok(Some(st)) => Ok(Some(st.source.index())),
                        Ok(None) => {
                            reported.borrow_mut().push("skipped".into());
                            Ok(None)
                        }
                        Err(Error::Failed {
                            kind: pertinax_resilient::Kind::Recv,
                            rank,
                            decided: Decided::Locally,
                        }) => {
                            check!(
                                w.failed_ranks().contains(&rank),
                                "Failed names {rank:?}, which is not dead"
                            );
                            reported.borrow_mut().push(format!("stopped={}", rank.0));
                            Ok(None)
                        }
                        Err(x) => Err(e(x)),
                    }
                };
                let mut b = [0u64];
                let got = recv_any(&mut b, 9)?;
                if let Some(s) = got {
                    check!(s == 2 && b[0] == val(2, 0, 9), "tag 9 from {s}: {}", b[0]);
                }
                let first = reported.borrow().len();
                w.barrier().map_err(e)?;
                // A reported failure is not reported again: the receives of
                // the live senders' messages wait as usual.
                let live = w.size() - w.failed_ranks().len() - 1;
                for _ in 0..live {
                    let mut b = [0u64];
                    let s = recv_any(&mut b, 10)?.ok_or("a failure was reported twice")?;
                    check!(b[0] == val(s, 1, 9), "second round from {s}: {}", b[0]);
                }
                let reported = reported.into_inner();
                check!(
                    reported.len() == first,
                    "a failure was reported twice: {reported:?}"
                );
                let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
                Ok(format!(
                    "failed={failed:?} got={got:?} reported=[{}]",
                    reported.join(",")
                ))
            }
            Resilient::P2p => {
                let mut d = Digest(0xcbf2_9ce4_8422_2325);
                p2p(&w, arg(rest, 0, 12), &mut d)?;
                let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
                Ok(format!("failed={failed:?} digest={:016x}", d.0))
            }
            // Per-operation cost: `bench ITERS` times 1-byte bcast, reduce,
            // allreduce and barrier; rank 0 prints µs per call.
            Resilient::Bench => {
                let iters = arg(rest, 0, 2000) as usize;
                let mut t = Vec::new();
                for which in 0..4 {
                    let mut b = [0u8];
                    let mut s = [0u8];
                    w.barrier().map_err(e)?;
                    let t0 = std::time::Instant::now();
                    for _ in 0..iters {
                        match which {
                            0 => w.bcast(&mut b, 0).map(|_| ()),
                            1 => w.reduce(&[1u8], &mut s, &Op::bor(), 0).map(|_| ()),
                            2 => w.allreduce(&[1u8], &mut s, &Op::bor()).map(|_| ()),
                            _ => w.barrier().map(|_| ()),
                        }
                        .map_err(e)?;
                    }
                    t.push(t0.elapsed().as_secs_f64() * 1e6 / iters as f64);
                }
                Ok(format!(
                    "bcast_us={:.2} reduce_us={:.2} allreduce_us={:.2} barrier_us={:.2}",
                    t[0], t[1], t[2], t[3]
                ))
            }
        }
    })();
    match report(scenario, me, r) {
        Reported::Ok => {
            // Under `--resilient-check log` a rank must not leave while a
            // survivor may need it to replay a collective.
            if let Err(x) = w.finish() {
                println!("FAIL {scenario} rank={me}: finish: {x}");
                std::process::exit(1);
            }
        }
        // An error the program returns with `?` (a user's early return):
        // the communicator is dropped, the runtime finalized.
        Reported::Left => drop(w),
        Reported::Failed => {
            drop(w);
            drop(u);
            std::process::exit(1);
        }
    }
    drop(u);
}
