//! Rank program for the tests of `Comm::intercomm_create`:
//! `intercomm-ranks SCENARIO [ARGS]`. Every survivor prints
//! `OK SCENARIO rank=R ...` and exits 0 when its checks passed; a failed
//! check prints `FAIL ...` and exits 1. Ranks that the launcher kills at a
//! fault point (`--kill R@comm.intercomm.POINT#1`) never print.
//!
//! Scenarios:
//! - `basic LAYOUT`: two groups (see [`Layout`]) make an intercommunicator
//!   with a world communicator as peer; check the remote group, exchange
//!   messages across it, agree on it, merge it, and check an allreduce on
//!   the merged communicator.
//! - `fault LAYOUT`: the same creation while the launcher kills a rank;
//!   each survivor prints its outcome (`outcome=ok merge=...` or
//!   `outcome=KIND`), then every survivor shrinks the world and checks an
//!   allreduce on it (nobody is left stuck).
//! - `join`: the last rank alone against the others, a message across,
//!   then a merge, as `pertinax-resilient`'s hierarchical mode joins a new
//!   deputy (see [`join`]); run with a rank killed after committing.
//! - `repeat ITERS LAYOUT`: creation, merge and agreement in a loop until
//!   one fails (the launcher kills a rank at some time); every survivor
//!   prints where it stopped, then all shrink the world and check an
//!   allreduce on it.
//! - `revoked`: the first group revokes its communicator first: every
//!   member of both groups gets `Revoked`; a creation on fresh
//!   communicators works afterwards.
//! - `bad_args`: argument errors, at the leader and at its members.
//! - `overlap_same`: every rank is in both groups (the world with itself as
//!   remote leader): every rank gets `InvalidArgument`.
//! - `overlap_partial` (4 ranks): groups {0,1,2} and {2,3}; rank 2 calls the
//!   operation on both in turn. Every call fails with `InvalidArgument`;
//!   then a clean creation between {0,1} and {2,3} works.

use pertinax::{Comm, Error, Op, Rank, Tag, Universe};
use pertinax::{Communicator as _, CommunicatorExt as _};

use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::scenario::Intercomm;
use pertinax_tests::{check, e};

type R = Result<String, String>;

/// How the world is cut into the two groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// Ranks below n/2, and the others; leaders are rank 0 of each half.
    Halves,
    /// Rank 0 alone, and the others with their last rank as leader; the
    /// peer is a duplicate of the world.
    Uneven,
    /// Even and odd ranks, each led by its last rank.
    Interleaved,
}

/// One side of the creation, as a rank sees it.
struct Side {
    local: Comm,
    local_leader: Rank,
    peer: Comm,
    /// World rank of the other leader.
    remote_leader: usize,
    /// World ranks of the remote group, in its rank order.
    remote: Vec<usize>,
    /// Whether this group comes second in the merged communicator.
    high: bool,
}

fn layout(a: &[String]) -> Result<Layout, String> {
    match a.first().map(String::as_str) {
        Some("halves") | None => Ok(Layout::Halves),
        Some("uneven") => Ok(Layout::Uneven),
        Some("interleaved") => Ok(Layout::Interleaved),
        Some(other) => Err(format!("unknown layout {other:?}")),
    }
}

fn side(w: &Comm, l: Layout) -> Result<Side, String> {
    let (me, n) = (w.rank().index(), w.size());
    check!(n >= 2, "needs two ranks");
    // Group of a world rank: 0 or 1; group 0 comes first when merged.
    let group = |r: usize| -> u32 {
        match l {
            Layout::Halves => (r >= n / 2) as u32,
            Layout::Uneven => (r != 0) as u32,
            Layout::Interleaved => (r % 2) as u32,
        }
    };
    let mine = group(me);
    let members = |g: u32| (0..n).filter(|&r| group(r) == g).collect::<Vec<_>>();
    let (ours, theirs) = (members(mine), members(1 - mine));
    let leader_of = |g: &[usize]| match l {
        Layout::Halves => 0,
        Layout::Uneven | Layout::Interleaved => g.len() - 1,
    };
    let local = w.split(Some(mine), 0).map_err(e)?.ok_or("no color")?;
    check!(local.size() == ours.len(), "local size {}", local.size());
    let peer = match l {
        Layout::Uneven => w.dup().map_err(e)?,
        _ => w.clone(),
    };
    Ok(Side {
        local,
        local_leader: Rank(leader_of(&ours) as i32),
        peer,
        remote_leader: theirs[leader_of(&theirs)],
        remote: theirs,
        high: mine == 1,
    })
}

fn create(s: &Side, tag: i32) -> Result<Comm, Error> {
    s.local.intercomm_create(
        s.local_leader,
        &s.peer,
        Rank(s.remote_leader as i32),
        Tag(tag),
    )
}

/// Checks the remote group, messages both ways, an agreement, the merge
/// and an allreduce on the merged communicator.
fn exercise(w: &Comm, s: &Side, inter: &Comm) -> Result<(), String> {
    let (me, n) = (w.rank().index(), w.size());
    check!(inter.is_inter(), "not an intercommunicator");
    check!(
        inter.size() == s.local.size() && inter.rank() == s.local.rank(),
        "local part: rank {} of {}",
        inter.rank(),
        inter.size()
    );
    check!(
        inter.remote_size() == s.remote.len(),
        "remote size {}",
        inter.remote_size()
    );
    let rg = inter.remote_group().ok_or("no remote group")?;
    let ranks: Vec<Rank> = (0..rg.size()).map(Rank::from).collect();
    let in_world = rg.translate_ranks(&ranks, &w.group()).map_err(e)?;
    let want: Vec<Option<Rank>> = s.remote.iter().map(|&r| Some(Rank::from(r))).collect();
    check!(in_world == want, "remote group {in_world:?}, want {want:?}");
    // Every member sends one message to every remote member and takes one
    // from each (non-blocking sends: large messages must not deadlock).
    let lr = inter.rank().index() as u64;
    let m = inter.remote_size();
    let out: Vec<[u64; 3]> = (0..m).map(|r| [me as u64, r as u64, lr]).collect();
    pertinax::scope(|sc| -> Result<(), String> {
        let mut sends = Vec::with_capacity(m);
        for (r, b) in out.iter().enumerate() {
            sends.push(inter.isend(sc, b, r, 3).map_err(e)?);
        }
        for r in 0..m {
            let mut b = [0u64; 3];
            let st = inter.recv(&mut b, r, 3).map_err(e)?;
            check!(
                st.unwrap().source == Rank::from(r),
                "source {}",
                st.unwrap().source
            );
            check!(
                b == [s.remote[r] as u64, lr, r as u64],
                "from remote rank {r}: {b:?}"
            );
        }
        for q in sends {
            q.wait().map_err(e)?;
        }
        Ok(())
    })?;
    check!(
        inter.agree(5).map_err(e)? == 5,
        "agreement on the intercomm"
    );
    check!(
        inter.get_failed().map_err(e)?.size() == 0,
        "failures on a healthy intercomm"
    );
    let merged = inter.merge(s.high).map_err(e)?;
    check!(merged.size() == n, "merged size {}", merged.size());
    let want = if s.high {
        inter.remote_size() + inter.rank().index()
    } else {
        inter.rank().index()
    };
    check!(
        merged.rank().index() == want,
        "merged rank {} want {want}",
        merged.rank()
    );
    let mut sum = [0u64];
    merged
        .allreduce(&[me as u64 + 1], &mut sum, &Op::sum())
        .map_err(e)?;
    check!(
        sum[0] == (n * (n + 1) / 2) as u64,
        "allreduce on the merged comm: {}",
        sum[0]
    );
    merged.free().map_err(e)?;
    inter.free().map_err(e)?;
    Ok(())
}

fn basic(w: &Comm, a: &[String]) -> R {
    let s = side(w, layout(a)?)?;
    // Twice, to check that a second creation on the same communicators
    // does not meet leftovers of the first.
    for round in 0..2 {
        let inter = create(&s, 11 + round).map_err(e)?;
        exercise(w, &s, &inter)?;
    }
    Ok(format!("remote={}", s.remote.len()))
}

fn class(x: &Error) -> &'static str {
    match x {
        Error::ProcFailed { .. } => "PROC_FAILED",
        Error::ProcFailedPending { .. } => "PROC_FAILED_PENDING",
        Error::Revoked => "REVOKED",
        Error::InvalidArgument(_) => "INVALID_ARGUMENT",
        _ => "OTHER",
    }
}

/// Returns once every rank has left the set-up's collectives, so that a
/// rank killed afterwards cannot make them fail (a collective with a dead
/// member fails even at a rank that had every message it needed): a
/// barrier, then a message from every rank to every other one.
fn settle(w: &Comm) -> Result<(), String> {
    let (me, n) = (w.rank().index(), w.size());
    w.barrier().map_err(e)?;
    for r in (0..n).filter(|&r| r != me) {
        w.send(&[1u8], r, 77).map_err(e)?;
    }
    let mut t = [0u8; 1];
    for r in (0..n).filter(|&r| r != me) {
        w.recv(&mut t, r, 77).map_err(e)?;
    }
    Ok(())
}

fn fault(w: &Comm, a: &[String]) -> R {
    let s = side(w, layout(a)?)?;
    settle(w)?;
    let outcome = match create(&s, 21) {
        Ok(inter) => {
            let merge = match inter.merge(s.high) {
                Ok(m) => {
                    let mut sum = [0u64];
                    m.allreduce(&[1u64], &mut sum, &Op::sum()).map_err(e)?;
                    check!(sum[0] as usize == w.size(), "merged allreduce {}", sum[0]);
                    "ok"
                }
                Err(x) => class(&x),
            };
            format!("outcome=ok merge={merge}")
        }
        Err(x) => {
            check!(x.is_fault(), "not a fault error: {x}");
            format!("outcome={}", class(&x))
        }
    };
    // Nobody is left inside the creation: the survivors can agree.
    let survivors = w.shrink().map_err(e)?;
    let mut sum = [0u64];
    survivors
        .allreduce(&[1u64], &mut sum, &Op::sum())
        .map_err(e)?;
    Ok(format!("{outcome} survivors={}", sum[0]))
}

/// A join as the hierarchical flavour of `pertinax-resilient` makes one:
/// the last rank alone (its own split) against the others (led by their
/// rank 0), the world as peer; the others' leader sends a message across
/// and the lone rank receives it from any source, then both groups merge.
/// Every survivor calls the merge whatever its message did (a receive from
/// any source may fail as soon as any member of the remote group failed),
/// and prints `outcome=ok merge=... survivors=K p2p=...` (the merge's
/// outcome is uniform, the message's is not).
fn join(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let joiner = me == n - 1;
    let local = w
        .split(Some(joiner as u32), 0)
        .map_err(e)?
        .ok_or("not in a group")?;
    settle(w)?;
    let remote_leader = Rank(if joiner { 0 } else { n as i32 - 1 });
    let outcome = match local.intercomm_create(Rank(0), w, remote_leader, Tag(21)) {
        Ok(inter) => {
            let p2p = if joiner {
                inter
                    .recv_value::<u32>(pertinax::Source::Any, Tag(5))
                    .and_then(|got| {
                        let v = got.map(|(v, _)| v);
                        if v == Some(7) {
                            Ok(())
                        } else {
                            Err(Error::InvalidArgument(format!("got {v:?}")))
                        }
                    })
            } else if local.rank().index() == 0 {
                inter.send_value(&7u32, Rank(0), Tag(5)).map(drop)
            } else {
                Ok(())
            };
            let merge = match inter.merge(joiner) {
                Ok(m) => {
                    let mut sum = [0u64];
                    m.allreduce(&[1u64], &mut sum, &Op::sum()).map_err(e)?;
                    check!(sum[0] as usize == n, "merged allreduce {}", sum[0]);
                    "ok"
                }
                Err(x) => class(&x),
            };
            let p2p = p2p.as_ref().map_or_else(class, |_| "ok");
            check!(
                p2p != "OTHER" && p2p != "INVALID_ARGUMENT",
                "message: {p2p}"
            );
            (format!("outcome=ok merge={merge}"), p2p)
        }
        Err(x) => {
            check!(x.is_fault(), "not a fault error: {x}");
            (format!("outcome={}", class(&x)), "none")
        }
    };
    let survivors = w.shrink().map_err(e)?;
    let mut sum = [0u64];
    survivors
        .allreduce(&[1u64], &mut sum, &Op::sum())
        .map_err(e)?;
    Ok(format!(
        "{} survivors={} p2p={}",
        outcome.0, sum[0], outcome.1
    ))
}

/// Creations, merges and agreements in a loop until one fails (a rank is
/// killed at some time by the launcher). Each step has a uniform outcome,
/// so every survivor stops at the same iteration and step, which it prints
/// (`stop=ITERATION:STEP:KIND`, or `stop=none` after `ITERS` iterations);
/// then the survivors shrink the world and check an allreduce on it.
fn repeat(w: &Comm, a: &[String]) -> R {
    let iters = pertinax_tests::arg(a, 0, 1000);
    let s = side(w, layout(&a[1.min(a.len())..])?)?;
    settle(w)?;
    let mut stop = String::from("none");
    for i in 0..iters {
        let tag = (i % 1000) as i32;
        let inter = match create(&s, tag) {
            Ok(c) => c,
            Err(x) => {
                stop = format!("{i}:create:{}", class(&x));
                break;
            }
        };
        let merged = match inter.merge(s.high) {
            Ok(m) => m,
            Err(x) => {
                stop = format!("{i}:merge:{}", class(&x));
                break;
            }
        };
        match merged.agree(1) {
            Ok(1) => {}
            Ok(f) => return Err(format!("agreement gave {f}")),
            Err(x) => {
                stop = format!("{i}:agree:{}", class(&x));
                break;
            }
        }
        merged.free().map_err(e)?;
        inter.free().map_err(e)?;
    }
    let after = |x: Error| format!("after stop={stop}: {x}");
    let survivors = w.shrink().map_err(after)?;
    let mut sum = [0u64];
    survivors
        .allreduce(&[1u64], &mut sum, &Op::sum())
        .map_err(after)?;
    Ok(format!("stop={stop} survivors={}", sum[0]))
}

/// The first group revokes its communicator before the creation: every
/// member of both groups gets `Revoked`; the second group's communicator
/// still works for a creation with a third group made of the first
/// group's members (a fresh split).
fn revoked(w: &Comm, _a: &[String]) -> R {
    let s = side(w, Layout::Halves)?;
    if !s.high {
        s.local.revoke().map_err(e)?;
    }
    match create(&s, 4) {
        Err(Error::Revoked) => {}
        other => return Err(format!("creation with a revoked group: {other:?}")),
    }
    let s2 = side(w, Layout::Halves)?;
    let inter = create(&s2, 4).map_err(e)?;
    exercise(w, &s2, &inter)?;
    Ok(String::new())
}

/// Argument errors: a `local_leader` out of range (`InvalidRank` at
/// every member), a `remote_leader` out of range or an invalid tag (the
/// leader gets the exact error, its members `InvalidArgument`), and an
/// intercommunicator as the local group. The remote side never starts, so
/// nobody waits for it.
fn bad_args(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let r = w.intercomm_create(Rank(n as i32), w, Rank(0), Tag(1));
    check!(
        matches!(r, Err(Error::InvalidRank { .. })),
        "local leader out of range: {r:?}"
    );
    let r = w.intercomm_create(Rank(0), w, Rank(n as i32 + 5), Tag(1));
    match (me, &r) {
        (0, Err(Error::InvalidRank { .. })) | (1.., Err(Error::InvalidArgument(_))) => {}
        _ => return Err(format!("remote leader out of range: {r:?}")),
    }
    let r = w.intercomm_create(Rank(0), w, Rank(1), Tag(-3));
    match (me, &r) {
        (0, Err(Error::InvalidTag { .. })) | (1.., Err(Error::InvalidArgument(_))) => {}
        _ => return Err(format!("invalid tag: {r:?}")),
    }
    let s = side(w, Layout::Halves)?;
    let inter = create(&s, 2).map_err(e)?;
    let r = inter.intercomm_create(Rank(0), w, Rank(0), Tag(1));
    check!(
        matches!(r, Err(Error::InvalidArgument(_))),
        "an intercommunicator as the local group: {r:?}"
    );
    exercise(w, &s, &inter)?;
    Ok(String::new())
}

fn expect_overlap(r: Result<Comm, Error>, what: &str) -> Result<(), String> {
    match r {
        Err(Error::InvalidArgument(m)) if m.contains("overlap") => Ok(()),
        other => Err(format!("{what}: {other:?}")),
    }
}

fn overlap_same(w: &Comm, _a: &[String]) -> R {
    let r = w.intercomm_create(Rank(0), w, Rank(0), Tag(5));
    expect_overlap(r, "world with itself")?;
    // The world still works, and the leader can try again.
    w.barrier().map_err(e)?;
    let r = w.intercomm_create(Rank(0), w, Rank(0), Tag(5));
    expect_overlap(r, "again")?;
    Ok(String::new())
}

fn overlap_partial(w: &Comm, _a: &[String]) -> R {
    check!(w.size() == 4, "needs 4 ranks");
    let g = w.group();
    let ga = g.incl(&[Rank(0), Rank(1), Rank(2)]).map_err(e)?;
    let gb = g.incl(&[Rank(2), Rank(3)]).map_err(e)?;
    let a = w.create(&ga).map_err(e)?;
    let b = w.create(&gb).map_err(e)?;
    if let Some(a) = &a {
        let r = a.intercomm_create(Rank(0), w, Rank(3), Tag(9));
        expect_overlap(r, "group {0,1,2}")?;
    }
    if let Some(b) = &b {
        // Rank 3 leads {2,3} (its rank 1 there); rank 2 calls after its
        // call on {0,1,2} has failed.
        let r = b.intercomm_create(Rank(1), w, Rank(0), Tag(9));
        expect_overlap(r, "group {2,3}")?;
    }
    // A clean creation afterwards.
    let s = side(w, Layout::Halves)?;
    let inter = create(&s, 9).map_err(e)?;
    exercise(w, &s, &inter)?;
    Ok(format!("calls={}", a.is_some() as u32 + b.is_some() as u32))
}

fn main() {
    let sc = Scenario::<Intercomm>::from_args();
    let u: Universe = setup("init", pertinax::init());
    let w = u.world();
    let rest = sc.args();
    let r = match sc.scenario() {
        Intercomm::Basic => basic(&w, rest),
        Intercomm::Fault => fault(&w, rest),
        Intercomm::Join => join(&w, rest),
        Intercomm::Repeat => repeat(&w, rest),
        Intercomm::Revoked => revoked(&w, rest),
        Intercomm::BadArgs => bad_args(&w, rest),
        Intercomm::OverlapSame => overlap_same(&w, rest),
        Intercomm::OverlapPartial => overlap_partial(&w, rest),
    };
    report(sc.name(), w.rank().index(), r).or_exit();
    drop(u);
}
