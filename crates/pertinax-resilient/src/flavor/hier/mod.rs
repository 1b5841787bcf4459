//! The hierarchical resilient communicator (Legio's section 5): local
//! communicators of at most `k` ranks and a global communicator that
//! connects them, each repaired on its own.
//!
//! # Structure
//!
//! Original rank `r` belongs to group `r / k`; a group's *local*
//! communicator holds its live members in rank order. Its *master* is its
//! lowest live rank (local rank 0), its *deputy* the next one (local rank
//! 1). The *global* communicator holds every group's master and deputy.
//!
//! # Operations
//!
//! Every collective runs in stages on these communicators, each stage
//! followed by an agreement on its communicator (Legio's check): a stage
//! that failed anywhere, or during which a member died (or left the
//! program early), is repaired and repeated by every member of that
//! communicator. The classes of the paper:
//!
//! - one-to-all (bcast, scatter): the root's local communicator, then the
//!   global one, then every local one (the root's too: no group leaves an
//!   operation before its global stage succeeded);
//! - all-to-one (reduce, gather): every local communicator, then the global
//!   one, then the root's local one;
//! - all-to-all (barrier, allreduce, allgather): local, global, local;
//! - scan, exscan, reduce_scatter, gatherv, scatterv, allgatherv: built on
//!   allgather, allreduce, gather and scatter (`vcoll.rs`); alltoall and
//!   alltoallv are not offered;
//! - one-to-one (send, receive): on a point-to-point communicator of every
//!   rank, never repaired, as in the flat mode (the library's own
//!   messages, calls, pushed outputs and the rescue's queries, go on a
//!   communicator of their own, the *library's communicator*, also of
//!   every rank and never repaired, made at creation: a user's receive
//!   matching any tag never takes them);
//! - communicator creation (dup, split): on a communicator of every rank,
//!   shrunk at each creation.
//!
//! In the global stage each group's *head* (its first member in the
//! global communicator: the master) contributes the group's block; the
//! deputy contributes nothing but receives the whole output, as the
//! masters do. Every operation ends, at the members of the global
//! communicator, with a *confirmation*: an agreement of the global
//! communicator after their part of their group's last stage and before
//! that stage's agreement, and a second one after it (see "Several
//! failures in one group"), so that no group can need another group's
//! help once that group's global members have returned from the
//! operation, and no member returns from an operation before its master
//! (or deputy) confirmed it.
//!
//! # Leaving
//!
//! Dropping a `Hierarchical` is local: nothing is sent and nobody is
//! waited for, so a rank may return early (an error returned with `?`)
//! while the others go on with collectives and point-to-point. The others
//! see it as failed at their next collective once it has ended (a stage
//! that fails revokes its communicator before its agreement, which frees
//! the members still inside it; an agreement or a shrink leaves an ended
//! member out), and an outcome's missing ranks join
//! [`Communicator::failed_ranks`]. [`Hierarchical::finish`] is the
//! collective end (a barrier).
//!
//! # Outcomes
//!
//! Every collective's outcome is the same at every survivor, as in the
//! flat mode: the outcome comes from data every survivor gets from the
//! same agreed stage. A broadcast's or a scatter's root fate is decided in
//! the root group's first stage and carried by the global stage's data; a
//! reduce's or a gather's presence map (who contributed) comes from the
//! global stage's output and the last stage spreads it to every group (not
//! only the root's), so the root's fate (it contributed, or the policy
//! answers for it) and `Outcome::missing` are the same at every survivor.
//! A scatter's `missing` is empty (every survivor gets its slot; the dead
//! ranks' slots went nowhere; `failed_ranks` lists what this rank knows).
//! Point-to-point outcomes are this rank's own (`Decided::Locally`).
//!
//! # Repair
//!
//! A failed member that is neither master nor deputy is repaired inside
//! its group: a shrink of the local communicator (the paper's `S(k)`).
//! When a master or a deputy fails, the global communicator shrinks too
//! (at its next stage). The survivor of the two is then the group's head;
//! a master that died holding the stage's output leaves it at its deputy,
//! which becomes the master and goes on with no need of the other groups.
//! Every member receives, in the group's first stage, a copy of the
//! group's contribution (a reduction's partial, a gather's block, a
//! broadcast's or a scatter's data), so whichever member is the group's
//! head when the global stage runs contributes it: a master's death (or
//! its deputy's with it) never drops its group's survivors from an
//! operation.
//! The group elects a new deputy (its new local rank 1), which joins the
//! global communicator at the first global stage after the election: the
//! head asks for it through the bit of that stage's agreement, the global
//! communicator shrinks with the requests as shrink values, the head calls
//! the deputy (a [`Hello`] on the library's communicator), every
//! member of the global communicator builds an intercommunicator with it
//! (the head leads, the library's communicator is the peer), merges
//! it, and the stage runs again with the deputy in it.
//!
//! Every member of a group knows when its deputy joins (the first global
//! stage after the repair that elected it), so every member decides alike
//! whether the group still has a member in the global communicator.
//!
//! ## Several failures in one group
//!
//! A group that loses every global member (master and deputy together,
//! the head while its new deputy joins, three members at once, ...) is
//! repaired like any other: its local shrink makes its lowest survivor the
//! master, which every member knows is outside the global communicator,
//! and before the stage runs again that master waits for a call. On the
//! other side, the global communicator's shrink shows a group with no
//! member left: its rank 0 calls the group's members in rank order (a
//! [`Hello`], then an intercommunicator of the whole global communicator
//! with the callee, whose outcome the core makes uniform); a creation that
//! fails while the agreement that follows sees no failure in the global
//! communicator means the callee is dead, and the next member is called.
//! The first live member (the group's new master) answers, gets the global
//! communicator's membership and its last global output, and merges; its
//! group then elects a deputy, which joins at the next global stage as
//! above. A group whose members are all dead is recorded as gone and never
//! called again. A stage in which *every* group with survivors loses every
//! global member (dead or left the program early) leaves nobody to call:
//! the new masters find it out together and the lowest of them founds a
//! new global communicator and calls the others in (the rescue,
//! `rescue.rs`; a group whose survivors are the only ranks that have not
//! ended is the case with one group). A failure during any join (the
//! joining rank, its caller, another member) fails the join uniformly:
//! the global communicator in every survivor's state is the last one built,
//! and the stage's next agreement repairs it again (a deputy that died
//! while joining is dropped, a caller that died makes the callee wait for
//! the next call, from its group's new head or the new rank 0).
//!
//! Where the new master is when the global communicator calls it decides
//! what it needs: in the group's first stage, nothing (it contributes its
//! copy of the group's contribution when the stage runs); in the last
//! stage while the global communicator still repeats that operation's
//! global stage (the deaths came before its agreement), it runs that stage
//! with its copy.
//!
//! The deaths may also come after the global stage's agreement and before
//! the group's last stage ends: the group's new master then needs the
//! output of a stage the others have finished. The operation's
//! confirmation closes that window inside the operation: the members of
//! the global communicator agree once more after their parts of their
//! groups' last stages, before those stages' agreements (a part that
//! failed fails the confirmation, and every group runs its last stage
//! again), and once more after those agreements (a group whose global
//! members died between the two waits in its last stage); in either, a
//! group whose global members all died before they confirmed
//! shows up missing in the shrink that follows, and the new rank 0 pushes
//! the operation's global output to each of that group's members (in
//! buffered sends of small chunks, so the push never waits for its
//! receivers; stale pushes are dropped by operation number). The new
//! master takes it, finishes its last stage, and is called into the
//! global communicator first thing at the next global stage (or earlier,
//! by a repair; a call that overtakes the push carries the caller's last
//! output, that same one). If the group had finished its last stage
//! before the deaths, the push is stale and the group notices the deaths
//! in its next operation's first stage, where its new master waits for
//! that call. So every group finishes every operation without any other
//! group's next collective, and dropping needs no collective.
//!
//! ## Deviation from the paper
//!
//! Legio joins a new master through a partially overlapped communicator
//! (POV) of the group and the next group's master. A group cannot tell a
//! master that died before the masters' agreement on a global stage (the
//! other masters wait for the new one) from one that died after it (they
//! have gone on): with POVs the second case deadlocks a program whose
//! other ranks wait for that group through point-to-point. Here the deputy
//! holds the output in both cases, so neither waits; a group that loses
//! both its global members is called back by the global communicator at
//! its next repair (the POV's role, with any live member of the group, not
//! only a fixed neighbour's master), and if they died after the global
//! agreement the operation's confirmation pushes the output to the group
//! before anyone returns. The price: a global communicator twice as large
//! (masters and deputies), hence a dearer global agreement and shrink; a
//! local broadcast of the group's contribution in the first stage of
//! every rooted or all-to-all operation; a last local stage in the root's
//! group of a broadcast too (the paper's one-to-all ends with the other
//! groups); two more agreements of the global communicator per operation
//! (the confirmation); and a join (an intercommunicator and a merge) in
//! every repair that elects a new deputy; the join dominates such a repair
//! (BENCHMARKS.md, runs R4 and R6, measured before the confirmation).
//! Dropping the communicator is local, where the paper's `MPI_Comm_free`
//! is a collective of the library. The paper has no answer when every
//! group loses its global members at once (its POVs need a live master
//! next door); the rescue (`rescue.rs`) is this library's.
//!
//! # Fault points (for tests)
//!
//! `res.hier.global` (a member of the global communicator entering an
//! operation's global stage), `res.hier.global.sent` (after its part of
//! an attempt of that stage's collective, before the stage's agreement),
//! `res.hier.global.done` (after the stage's agreement succeeded, before
//! the group's last stage), `res.hier.confirm` (entering the operation's
//! confirmation, after the group's last stage) and `res.hier.join.msg` (a
//! member of the global communicator about to send a joining rank its
//! join message).
//!
//! # Joins
//!
//! Every member of the global communicator sends the joining rank the
//! join message (the same everywhere) before its part of the merge, so a
//! joiner whose merge succeeded has one even if its leader died before
//! sending (the joiner acknowledges the failures an any-source receive
//! reports and receives again).
//!
//! # Limits
//!
//! - The rescue's choice between ending an operation from what the groups
//!   kept and running it again (`rescue.rs`) assumes that a member of the
//!   global communicator whose part of its group's last stage succeeded
//!   leaves that stage's data at every member of its group (its
//!   collective's sends reached them, or reach them from live members):
//!   true of the native backend's collectives; a backend that could lose
//!   a message a dead master had sent would make the re-run the choice,
//!   as before.
//! - Communicator creations (`dup`, `split`) run on a communicator of
//!   every rank: a rank that stopped calling collectives blocks them
//!   (one that ended does not).
//! - An any-source receive is woken by failures, not by a rank that left
//!   early (as in the flat mode).

use std::cell::RefCell;
use std::fmt;
use std::time::{Duration, Instant};

use pertinax::{Comm, Rank, Source, Status, Tag};
use serde::{Deserialize, Serialize};

use crate::p2p::{check_rank, survivors, P2p};
use crate::policy::Kind;
use crate::{Communicator, Config, Error, Outcome, Received};
use state::{
    Global, Hello, Join, Push, Stage, State, Sub, Work, KEPT, NO_JOIN, OK, PUSH_CHUNK, RERUN,
    RESPREAD, RUN, TAG_HELLO, TAG_JOIN, TAG_PROBE, TAG_ROOT,
};

/// The knobs of the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HierConfig {
    /// Maximum size of a local communicator; `None`: from the paper's
    /// equation 4 ([`default_k`]).
    pub k: Option<usize>,
    /// Communicators smaller than this stay flat.
    pub threshold: usize,
}

impl Default for HierConfig {
    fn default() -> Self {
        HierConfig {
            k: None,
            threshold: DEFAULT_THRESHOLD,
        }
    }
}

/// The size from which the hierarchy is used by default: the paper finds
/// it cheaper than the flat repair for `s > 11` under a linear shrink cost.
pub const DEFAULT_THRESHOLD: usize = 12;

/// The local size `k` for a communicator of `s` ranks: the `k >= 2` whose
/// `k(k² − 2)/2` (the paper's equation 4, linear shrink cost) is closest
/// to `s`.
pub fn default_k(s: usize) -> usize {
    let f = |k: usize| (k * (k * k - 2)) as f64 / 2.0;
    let mut best = 2;
    for k in 2..=64 {
        if (f(k) - s as f64).abs() < (f(best) - s as f64).abs() {
            best = k;
        }
        if f(k) > s as f64 {
            break;
        }
    }
    best
}

/// A resilient communicator organized as Legio's hierarchy. See the module
/// docs.
pub struct Hierarchical {
    size: usize,
    me: usize,
    k: usize,
    group: usize,
    /// Point-to-point traffic (never revoked nor shrunk); also the peer
    /// communicator of the joins.
    p2p: P2p,
    /// Every live rank at creation: communicator creations run on it.
    full: Comm,
    full_to_orig: Vec<usize>,
    /// This process alone (the joining side of the intercommunicators).
    solo: Comm,
    /// The library's own messages (calls, pushed outputs, the rescue's
    /// queries and answers) and the peer communicator of the joins: every
    /// live rank at creation, never revoked nor shrunk, apart from the
    /// point-to-point communicator so that a user's receive matching any
    /// tag never takes them.
    ctl: Comm,
    /// The original ranks of `ctl`'s ranks, in rank order.
    ctl_to_orig: Vec<usize>,
    st: RefCell<State>,
    cfg: Config,
}

impl fmt::Debug for Hierarchical {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hierarchical")
            .field("size", &self.size)
            .field("rank", &self.me)
            .field("k", &self.k)
            .field("group", &self.group)
            .finish()
    }
}

fn trace() -> bool {
    std::env::var_os(pertinax_wire::env::RESILIENT_TRACE).is_some()
}

fn internal(msg: impl Into<String>) -> Error {
    Error::Internal(msg.into())
}

/// A failure the hierarchy does not repair (see "Limits" in the module
/// docs): a process failure of the original ranks `ranks`, as the core
/// reports it (never [`Error::Internal`]).
fn unrepairable(ranks: Vec<usize>) -> Error {
    Error::Comm(pertinax::Error::ProcFailed {
        ranks: ranks.into_iter().map(|o| Rank(o as i32)).collect(),
    })
}

/// The position of a local stage: before (`post` false) or after the
/// global stage of operation `seq`.
fn position(seq: u64, post: bool) -> u64 {
    2 * seq + u64::from(post)
}

/// The operation at whose global stage a deputy elected at `pos` joins.
fn join_op(pos: u64) -> u64 {
    pos.div_ceil(2)
}

/// Whether a deputy elected for the global stage of operation `j` has
/// joined by position `pos`.
fn joined_by(j: u64, pos: u64) -> bool {
    pos > 2 * j
}

/// A join request in a shrink value: the group, and the new deputy + 1
/// (0: none).
fn encode_join(group: usize, elect: Option<usize>) -> u64 {
    group as u64 | elect.map_or(0, |e| (e as u64 + 1) << 32)
}

fn decode_join(v: u64) -> (usize, Option<usize>) {
    let e = v >> 32;
    (
        (v & 0xffff_ffff) as usize,
        (e != 0).then(|| (e - 1) as usize),
    )
}

impl Hierarchical {
    /// Makes `comm` hierarchical-resilient with `cfg` (collective). The
    /// local size is `hier.k` or [`default_k`].
    ///
    /// # Errors
    /// [`Error::Policy`] for the log check (not available in this mode) or
    /// `k < 2`; communication errors.
    pub fn with_config(comm: &Comm, cfg: Config, hier: HierConfig) -> Result<Hierarchical, Error> {
        if cfg.check == crate::Check::Log {
            return Err(Error::Policy(
                "the log check is not available in hierarchical mode (use agree)".into(),
            ));
        }
        let k = hier.k.unwrap_or_else(|| default_k(comm.size()));
        if k < 2 {
            return Err(Error::Policy(format!("local size k={k}: at least 2")));
        }
        let map: Vec<usize> = (0..comm.size()).collect();
        Hierarchical::build(comm, &map, comm.size(), comm.group(), k, cfg)
    }

    /// The local size.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Whether this rank is its group's master now.
    pub fn is_master(&self) -> bool {
        self.st.borrow().local.comm.rank().0 == 0
    }

    /// Whether this rank is its group's deputy now (local rank 1, joined
    /// or about to join the global communicator).
    pub fn is_deputy(&self) -> bool {
        self.st.borrow().local.comm.rank().0 == 1
    }

    /// Repairs so far: (local ones, global ones).
    pub fn repairs(&self) -> (u64, u64) {
        let st = self.st.borrow();
        (st.local_repairs, st.global_repairs)
    }

    /// Time this rank has spent repairing so far: the shrinks of its local
    /// and global communicators and the joins of new deputies (the Legio
    /// paper's repair procedure). Neither the failure's detection nor the
    /// repeated stage is in it.
    pub fn repair_time(&self) -> Duration {
        self.st.borrow().repair_time
    }

    /// Runs repair step `f`, adding its time to [`Hierarchical::repair_time`].
    fn timed<R>(&self, f: impl FnOnce() -> Result<R, Error>) -> Result<R, Error> {
        let t0 = Instant::now();
        let r = f();
        self.st.borrow_mut().repair_time += t0.elapsed();
        r
    }

    /// Collectives completed.
    pub fn operations(&self) -> u64 {
        self.st.borrow().seq
    }

    fn build(
        base: &Comm,
        base_to_orig: &[usize],
        size: usize,
        orig: pertinax::Group,
        k: usize,
        cfg: Config,
    ) -> Result<Hierarchical, Error> {
        let p2p = P2p::new(base, base_to_orig, size, orig)?;
        let me = p2p.me();
        let group = me / k;
        loop {
            let (full, v) = p2p.comm().shrink_gather(0)?;
            let full_to_orig = survivors(p2p.to_orig(), &v);
            match Hierarchical::layout(&full, &full_to_orig, (me, size), k) {
                Ok((local, global, solo, ctl)) => {
                    let a = full.agree_detailed(OK)?;
                    if a.flags == OK && stage::intact(&a) {
                        let failed = (0..size).filter(|o| !full_to_orig.contains(o)).collect();
                        let gmembers = local.to_orig.iter().take(2).copied().collect();
                        let mut ctl_to_orig = full_to_orig.clone();
                        ctl_to_orig.sort_unstable();
                        return Ok(Hierarchical {
                            size,
                            me,
                            k,
                            group,
                            p2p,
                            full,
                            full_to_orig,
                            solo,
                            ctl,
                            ctl_to_orig,
                            st: RefCell::new(State {
                                local,
                                global,
                                gmembers,
                                elect: None,
                                failed,
                                rejoin: false,
                                cur: Vec::new(),
                                late_out: None,
                                last: None,
                                joined_at: 0,
                                confirmed: None,
                                settled: None,
                                kept_all: None,
                                respread: None,
                                rerun: None,
                                waiting_post: false,
                                pushed: Default::default(),
                                seq: 0,
                                wakes: 0,
                                rounds: 0,
                                local_repairs: 0,
                                global_repairs: 0,
                                repair_time: Duration::ZERO,
                            }),
                            cfg,
                        });
                    }
                }
                Err(e) if e.is_fault() => {
                    let _ = full.agree_detailed(0);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The communicators of the hierarchy, split from `full`: the local
    /// one, the global one (at the first two members of each group) and
    /// this process alone.
    fn layout(
        full: &Comm,
        full_to_orig: &[usize],
        (me, size): (usize, usize),
        k: usize,
    ) -> Result<(Sub, Option<Global>, Comm, Comm), Error> {
        let key = |o: usize| o as i32;
        let group = me / k;
        let missing = || internal("a split left this rank out");
        let local_comm = full
            .split(Some(group as u32), key(me))?
            .ok_or_else(missing)?;
        let local = Sub {
            comm: local_comm,
            to_orig: full_to_orig
                .iter()
                .copied()
                .filter(|o| o / k == group)
                .collect(),
        };
        // The first two live members of every group, in rank order (the
        // order of the split's keys).
        let mut members = Vec::new();
        for &o in full_to_orig {
            if members.iter().filter(|&&(g, _)| g == o / k).count() < 2 {
                members.push((o / k, o));
            }
        }
        let global = local.comm.rank().0 < 2;
        let gcomm = full.split(global.then_some(0), key(me))?;
        let solo = full.split(Some(me as u32), 0)?.ok_or_else(missing)?;
        // Every rank, in original rank order.
        let ctl = full.split(Some(0), key(me))?.ok_or_else(missing)?;
        let gone = (0..size.div_ceil(k))
            .filter(|&g| !members.iter().any(|&(x, _)| x == g))
            .collect();
        Ok((
            local,
            gcomm.map(|comm| Global {
                comm,
                members,
                gone,
            }),
            solo,
            ctl,
        ))
    }

    fn check_rank(&self, r: Rank) -> Result<usize, Error> {
        check_rank(r, self.size)
    }

    fn gone(&self, kind: Kind, rank: usize) -> Result<Outcome, Error> {
        self.cfg.policy.answer(kind, rank)
    }

    /// The number of groups.
    fn groups(&self) -> usize {
        self.size.div_ceil(self.k)
    }

    /// The rank of original rank `o` in the library's communicator
    /// (`ctl`), if it was alive at creation.
    fn ctl_rank(&self, o: usize) -> Option<usize> {
        self.ctl_to_orig.binary_search(&o).ok()
    }

    /// [`Self::ctl_rank`], or the process failure of `o`.
    fn ctl_rank_or_failed(&self, o: usize) -> Result<Rank, Error> {
        self.ctl_rank(o)
            .map(|r| Rank(r as i32))
            .ok_or_else(|| unrepairable(vec![o]))
    }

    /// Ends an operation, after its last stage: the confirmation at the
    /// members of the global communicator ([`Self::confirm`]).
    fn end_op(&self) -> Result<(), Error> {
        let seq = self.st.borrow().seq;
        self.confirm(seq)?;
        if trace() {
            eprintln!("hier[{}/{}]: op {seq} done", self.me, self.size);
        }
        let mut st = self.st.borrow_mut();
        st.seq += 1;
        st.late_out = None;
        let done = st.seq;
        st.pushed.retain(|&(s, _), _| s >= done);
        Ok(())
    }

    /// Original rank → (group, position) bitmap helpers.
    fn group_members(&self, g: usize) -> std::ops::Range<usize> {
        g * self.k..((g + 1) * self.k).min(self.size)
    }
}

impl Hierarchical {
    /// Ends this rank's use of the communicator, collectively: a barrier
    /// of the survivors, then the local release of [`Drop`] (see
    /// [`crate::Resilient::finish`]). Dropping alone is enough: every
    /// operation is confirmed before it returns.
    ///
    /// # Errors
    /// The barrier's; the communicator is released in every case.
    pub fn finish(self) -> Result<Outcome, Error> {
        Communicator::barrier(&self)
    }
}

impl Drop for Hierarchical {
    /// Local only, as [`crate::Resilient`]'s: the communicators are
    /// released, nothing is sent and nobody is waited for, so a rank may
    /// leave early (an error returned with `?`) while the others go on.
    /// No group can be waiting for this rank's help: every operation ends
    /// with a confirmation of the global communicator (module docs). The
    /// others see a rank that dropped the communicator and ended as failed
    /// at their next collective.
    fn drop(&mut self) {
        let st = self.st.get_mut();
        let _ = st.local.comm.free();
        if let Some(g) = st.global.take() {
            let _ = g.comm.free();
        }
        let _ = self.full.free();
        let _ = self.solo.free();
        let _ = self.ctl.free();
        let _ = self.p2p.comm().free();
    }
}

mod coll;
mod data;
mod join;
mod rescue;
mod split;
mod stage;
mod state;
mod vcoll;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_k_follows_equation_4() {
        assert_eq!(default_k(4), 2);
        assert_eq!(default_k(8), 3);
        assert_eq!(default_k(16), 3);
        assert_eq!(default_k(32), 4);
        assert_eq!(default_k(64), 5);
    }

    #[test]
    fn a_deputy_joins_at_the_first_global_stage_after_its_election() {
        // Elected in the first stage of operation 3: joins in its global
        // stage, so it is in by the last stage of operation 3.
        let j = join_op(position(3, false));
        assert_eq!(j, 3);
        assert!(!joined_by(j, position(3, false)));
        assert!(joined_by(j, position(3, true)));
        // Elected in the last stage of operation 3: joins in operation 4.
        let j = join_op(position(3, true));
        assert_eq!(j, 4);
        assert!(!joined_by(j, position(4, false)));
        assert!(joined_by(j, position(4, true)));
    }

    #[test]
    fn a_join_request_survives_the_shrink_value() {
        assert_eq!(decode_join(encode_join(7, None)), (7, None));
        assert_eq!(decode_join(encode_join(7, Some(0))), (7, Some(0)));
        assert_eq!(decode_join(encode_join(0, Some(1023))), (0, Some(1023)));
    }
}
