//! Rank program for the hierarchical tests under any policy:
//! `resilient-hier-ranks outcomes ROUNDS [ring|noring|any|exit] [R,R,...@C]`,
//! run with `--resilient=hier`.
//!
//! Every round runs bcast, reduce, allreduce, gather, scatter, allgather,
//! a point-to-point ring and a barrier, roots rotating, with fault points
//! between them (`res.before.OP`, `res.after.OP`). The ring: `ring` (the
//! default) sends to the right neighbour and receives from the left one by
//! name; `any` receives with `ANY_SOURCE` and `ANY_TAG` (a failure the receive reports
//! instead, `Err(Failed)` or `Ok(None)`, is accepted; an `Err(Failed)` must
//! name a dead rank); `exit` is the named ring where a rank whose send or
//! receive fails with `Error::Failed` (policy `stop`) returns at once with
//! `?` while the others go on (it prints `OK` with `left=ROUND`; its
//! neighbour then fails to receive from it, and so on); `noring`: none.
//! `R,R,...@C`: ranks `R` return early with `?` (as `exit` does, `left=`)
//! before their collective number `C` (0: the first bcast), whatever
//! happened.
//! Every collective's outcome goes into a digest, an error under a `stop`
//! policy included (which must be `Error::Failed` decided for everyone):
//! a collective's outcome must be the same at every survivor. Every result
//! is checked against the values of the ranks the outcome says
//! contributed, and every rank reported missing must be dead. The ring's
//! outcome is local (a point-to-point decision) and stays out of the
//! digest. Each rank that ends prints `OK outcomes rank=R failed=[..]
//! errors=E [left=K] trail=T digest=D`: `trail` lists (the low 16 bits of)
//! the digest after each collective it completed (a rank that left early
//! completed fewer), `digest` is the last.

use pertinax::{Op, Rank};
use pertinax_harness::{report, setup, Reported, Scenario};
use pertinax_resilient::{Communicator, CommunicatorExt, Decided, Error, Outcome};
use pertinax_tests::scenario::ResilientHier;
use pertinax_tests::{arg, check};

type R = Result<String, String>;

fn val(r: usize, k: u64, op: u64) -> u64 {
    (r as u64 + 1) * 1_000_003 + k * 7919 + op * 104_729
}

struct Digest(u64, u64, Vec<u64>);

/// The prefix of an early return (`exit` ring).
const LEFT: &str = "left: ";

impl Digest {
    /// Marks the end of a collective in the trail.
    fn mark(&mut self) {
        self.2.push(self.0);
    }

    fn add(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    /// Digests a collective's outcome; `Ok(Some(o))` when the result must
    /// be checked.
    fn coll(&mut self, r: Result<Outcome, Error>, what: &str) -> Result<Option<Outcome>, String> {
        match r {
            Ok(o) => {
                self.add(0);
                self.add(o.skipped.map_or(u64::MAX, |r| r.0 as u64));
                self.add(o.missing.len() as u64);
                for r in &o.missing {
                    self.add(r.0 as u64);
                }
                Ok(Some(o))
            }
            Err(Error::Failed {
                kind,
                rank,
                decided,
            }) => {
                check!(
                    decided == Decided::Everyone,
                    "{what}: a collective's failure decided {decided}"
                );
                self.1 += 1;
                self.add(1);
                self.add(kind as u64);
                self.add(rank.0 as u64);
                Ok(None)
            }
            Err(x) => Err(format!("{what}: unexpected error: {x}")),
        }
    }
}

fn point(name: &str) {
    pertinax::fault_point(name);
}

fn check_dead<C: Communicator<Error = Error>>(
    w: &C,
    o: &Outcome,
    what: &str,
) -> Result<(), String> {
    let failed = w.failed_ranks();
    let alive: Vec<&Rank> = o.missing.iter().filter(|r| !failed.contains(r)).collect();
    check!(
        alive.is_empty(),
        "{what}: live ranks {alive:?} reported missing ({o:?}, failed {failed:?})"
    );
    Ok(())
}

fn sum_of(o: &Outcome, n: usize, k: u64, op: u64) -> u64 {
    (0..n)
        .filter(|r| !o.missing.contains(&Rank(*r as i32)))
        .map(|r| val(r, k, op))
        .sum()
}

/// The ranks that return early with `?` and the number of collectives
/// they complete first (`R,R,...@C`).
type Leave = Option<(Vec<usize>, usize)>;

fn parse_leave(a: Option<&String>) -> Result<Leave, String> {
    let Some(a) = a else { return Ok(None) };
    let bad = || format!("bad leave {a:?}: R,R,...@C");
    let (rs, at) = a.split_once('@').ok_or_else(bad)?;
    let ranks = rs
        .split(',')
        .map(|r| r.parse().map_err(|_| bad()))
        .collect::<Result<Vec<usize>, String>>()?;
    Ok(Some((ranks, at.parse().map_err(|_| bad())?)))
}

/// The ring between the collectives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ring {
    None,
    Named,
    Any,
    Exit,
}

fn outcomes<C: Communicator<Error = Error>>(
    w: &C,
    rounds: u64,
    ring: Ring,
    leave: &Leave,
    d: &mut Digest,
) -> Result<(), String> {
    let n = w.size();
    let me = w.rank().index();
    // The fault point before a collective, and the early return a
    // `leave` argument asks of this rank there.
    let before = |d: &Digest, name: &str| -> Result<(), String> {
        point(name);
        match leave {
            Some((ranks, at)) if ranks.contains(&me) && d.2.len() == *at => {
                Err(format!("{LEFT}before collective {at} ({name})"))
            }
            _ => Ok(()),
        }
    };
    for k in 0..rounds {
        let root = (k as usize * 5 + 3) % n;
        let what = |op: &str| format!("round {k} {op} (root {root})");

        before(d, "res.before.bcast")?;
        let mut b = [if me == root { val(root, k, 0) } else { 0 }];
        if let Some(o) = d.coll(w.bcast(&mut b, root), &what("bcast"))? {
            if o.skipped.is_none() {
                check!(b[0] == val(root, k, 0), "{}: got {}", what("bcast"), b[0]);
                d.add(b[0]);
            }
        }
        d.mark();
        point("res.after.bcast");

        before(d, "res.before.reduce")?;
        let mut s = [0u64];
        let r = w.reduce(&[val(me, k, 1)], &mut s, &Op::sum(), root);
        if let Some(o) = d.coll(r, &what("reduce"))? {
            check_dead(w, &o, &what("reduce"))?;
            if me == root && o.skipped.is_none() {
                let want = sum_of(&o, n, k, 1);
                check!(s[0] == want, "{}: {} want {want}", what("reduce"), s[0]);
            }
        }
        d.mark();
        point("res.after.reduce");

        before(d, "res.before.allreduce")?;
        let mut s = [0u64];
        let r = w.allreduce(&[val(me, k, 2)], &mut s, &Op::sum());
        if let Some(o) = d.coll(r, &what("allreduce"))? {
            check_dead(w, &o, &what("allreduce"))?;
            let want = sum_of(&o, n, k, 2);
            check!(s[0] == want, "{}: {} want {want}", what("allreduce"), s[0]);
            d.add(s[0]);
        }
        d.mark();
        point("res.after.allreduce");

        before(d, "res.before.gather")?;
        let mut g = vec![u64::MAX; if me == root { n } else { 0 }];
        if let Some(o) = d.coll(w.gather(&[val(me, k, 3)], &mut g, root), &what("gather"))? {
            check_dead(w, &o, &what("gather"))?;
            if me == root && o.skipped.is_none() {
                for (r, &x) in g.iter().enumerate() {
                    if !o.missing.contains(&Rank(r as i32)) {
                        check!(x == val(r, k, 3), "{}: slot {r} {x}", what("gather"));
                    }
                }
            }
        }
        d.mark();
        point("res.after.gather");

        before(d, "res.before.scatter")?;
        let src: Vec<u64> = if me == root {
            (0..n).map(|r| val(r, k, 4)).collect()
        } else {
            Vec::new()
        };
        let mut one = [0u64];
        if let Some(o) = d.coll(w.scatter(&src, &mut one, root), &what("scatter"))? {
            if o.skipped.is_none() {
                check!(one[0] == val(me, k, 4), "{}: {}", what("scatter"), one[0]);
            }
        }
        d.mark();
        point("res.after.scatter");

        before(d, "res.before.allgather")?;
        let mut g = vec![u64::MAX; n];
        if let Some(o) = d.coll(w.allgather(&[val(me, k, 5)], &mut g), &what("allgather"))? {
            check_dead(w, &o, &what("allgather"))?;
            for (r, &x) in g.iter().enumerate() {
                if !o.missing.contains(&Rank(r as i32)) {
                    check!(x == val(r, k, 5), "{}: slot {r} {x}", what("allgather"));
                    d.add(x);
                }
            }
        }
        d.mark();
        point("res.after.allgather");

        // The ring: a dead neighbour's failure is this rank's decision.
        point("res.before.ring");
        if ring != Ring::None {
            let (right, left) = ((me + 1) % n, (me + n - 1) % n);
            let tag = 100 + k as i32;
            match w.send(&[val(me, k, 6)], right, tag) {
                Ok(_) => {}
                Err(x @ Error::Failed { .. }) if ring == Ring::Exit => {
                    return Err(format!("{LEFT}round {k} ring send: {x}"))
                }
                Err(Error::Failed { .. }) => {}
                Err(x) => return Err(format!("round {k} ring send: {x}")),
            }
            let mut r = [0u64];
            // An any-source receive reports each failure once and then
            // waits again: do not wait for a neighbour known dead.
            let skip = ring == Ring::Any && w.failed_ranks().contains(&Rank(left as i32));
            let src = if ring == Ring::Any {
                pertinax::Source::Any
            } else {
                pertinax::Source::Rank(Rank(left as i32))
            };
            // `any` matches any tag too: only the left neighbour's ring
            // messages may arrive (the library's own messages never come
            // on the point-to-point communicator).
            let tm: pertinax::TagMatch = if ring == Ring::Any {
                pertinax::ANY_TAG
            } else {
                tag.into()
            };
            let mut got = if skip {
                Ok(None)
            } else {
                w.recv(&mut r, src, tm)
            };
            // A ring message of an earlier round that a receive reporting
            // a failure left behind: the next one.
            while let Ok(Some(st)) = &got {
                let earlier = (100..tag).contains(&st.tag.0) && st.source == Rank(left as i32);
                if !(ring == Ring::Any && earlier) {
                    break;
                }
                got = w.recv(&mut r, src, tm);
            }
            match got {
                // Only the left neighbour sends this tag here.
                Ok(Some(st)) => check!(
                    r[0] == val(left, k, 6) && st.source == Rank(left as i32) && st.tag.0 == tag,
                    "round {k} ring got {} from {:?} tag {:?}",
                    r[0],
                    st.source,
                    st.tag
                ),
                Ok(None) => {
                    let failed = w.failed_ranks();
                    check!(
                        ring == Ring::Any || failed.contains(&Rank(left as i32)),
                        "round {k}: a receive from the live rank {left} was skipped"
                    );
                }
                Err(x @ Error::Failed { .. }) if ring == Ring::Exit => {
                    return Err(format!("{LEFT}round {k} ring recv: {x}"))
                }
                Err(Error::Failed { rank, .. }) => {
                    let failed = w.failed_ranks();
                    check!(
                        failed.contains(&rank),
                        "round {k}: a receive reported the live rank {rank:?} failed"
                    );
                }
                Err(x) => return Err(format!("round {k} ring recv: {x}")),
            }
        }
        point("res.after.ring");

        before(d, "res.before.barrier")?;
        d.coll(w.barrier(), &what("barrier"))?;
        d.mark();
        point("res.after.barrier");
    }
    Ok(())
}

fn main() {
    let sc = Scenario::<ResilientHier>::from_args();
    let (scenario, rest) = (sc.name(), sc.args());
    let u = setup("init", pertinax::init());
    let w = setup("world", pertinax_resilient::world(&u));
    let me = w.rank().index();
    let r: R = (|| {
        match sc.scenario() {
            ResilientHier::Outcomes => {
                check!(w.is_resilient(), "run with --resilient=hier");
                let mut d = Digest(0xcbf2_9ce4_8422_2325, 0, Vec::new());
                let ring = match rest.get(1).map(String::as_str) {
                    None | Some("ring") => Ring::Named,
                    Some("noring") => Ring::None,
                    Some("any") => Ring::Any,
                    Some("exit") => Ring::Exit,
                    Some(other) => return Err(format!("unknown ring {other:?}")),
                };
                let leave = parse_leave(rest.get(2))?;
                let left = match outcomes(&w, arg(rest, 0, 10), ring, &leave, &mut d) {
                    Ok(()) => String::new(),
                    // The early return: this rank stops here, the others go on.
                    Err(m) if m.starts_with(LEFT) => format!("left={} ", d.2.len() / 7),
                    Err(m) => return Err(m),
                };
                let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
                let trail: Vec<String> =
                    d.2.iter().map(|x| format!("{:04x}", x & 0xffff)).collect();
                Ok(format!(
                    "failed={failed:?} errors={} {left}trail={} digest={:016x}",
                    d.1,
                    trail.join(","),
                    d.0
                ))
            }
        }
    })();
    let reported = report(scenario, me, r);
    drop(w);
    if reported == Reported::Failed {
        std::process::exit(1);
    }
}
