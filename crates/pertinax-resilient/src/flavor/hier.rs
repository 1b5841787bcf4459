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
//! that failed anywhere, or during which a member died, is repaired and
//! repeated by every member of that communicator. The classes of the paper:
//!
//! - one-to-all (bcast, scatter): the root's local communicator, then the
//!   global one, then every other local one;
//! - all-to-one (reduce, gather): every local communicator, then the global
//!   one, then the root's local one;
//! - all-to-all (barrier, allreduce, allgather): local, global, local;
//! - one-to-one (send, receive): on a point-to-point communicator of every
//!   rank, never repaired, as in the flat mode;
//! - communicator creation (dup, split): on a communicator of every rank,
//!   shrunk at each creation.
//!
//! In the global stage each group's *head* (its first member in the
//! global communicator: the master) contributes the group's block; the
//! deputy contributes nothing but receives the whole output, as the
//! masters do.
//!
//! # Repair
//!
//! A failed member that is neither master nor deputy is repaired inside
//! its group: a shrink of the local communicator (the paper's `S(k)`).
//! When a master or a deputy fails, the global communicator shrinks too
//! (at its next stage). The survivor of the two is then the group's head;
//! a master that died holding the stage's output leaves it at its deputy,
//! which becomes the master and goes on with no need of the other groups.
//! Likewise the deputy receives, in the group's first stage, a copy of the
//! group's contribution (a reduction's partial, a gather's block, a
//! scatter's data; a broadcast's payload is held by every member of the
//! root's group) and contributes it if it takes over before the global
//! stage ends: a master's death never drops its group's survivors from an
//! operation.
//! The group elects a new deputy (its new local rank 1), which joins the
//! global communicator at the first global stage after the election: the
//! head asks for it through the bit of that stage's agreement, every
//! member of the global communicator then builds an intercommunicator with
//! the new deputy (the head leads it, the point-to-point communicator is
//! the peer), merges it, and the stage runs again with the deputy in it.
//!
//! Every member of a group knows when its deputy joins (the first global
//! stage after the repair that elected it), so every member decides alike
//! whether the group still has a member in the global communicator.
//!
//! ## Deviation from the paper
//!
//! Legio joins a new master through a partially overlapped communicator
//! (POV) of the group and the next group's master. A group cannot tell a
//! master that died before the masters' agreement on a global stage (the
//! other masters wait for the new one) from one that died after it (they
//! have gone on): with POVs the second case deadlocks a program whose
//! other ranks wait for that group through point-to-point. The deputy
//! holds the output in both cases, so neither waits. The price is a global
//! communicator twice as large (masters and deputies), hence a dearer
//! global agreement and shrink, and a join (an intercommunicator and a
//! merge, rounds of messages through the leaders) in every repair that
//! elects a new deputy; the join dominates such a repair (BENCHMARKS.md,
//! run R4).
//!
//! # Fault points (for tests)
//!
//! `res.hier.global` (a member of the global communicator entering an
//! operation's global stage) and `res.hier.global.sent` (after its part of
//! an attempt of that stage's collective, before the stage's agreement).
//!
//! # Limits
//!
//! - A group survives one failure of its two global members at a time:
//!   the loss of the other one before the new deputy joined (one global
//!   stage), or a failure during the join itself, is reported to the ranks
//!   that see it as an error instead of being repaired; use the flat mode
//!   where that matters.

use std::cell::RefCell;
use std::fmt;
use std::time::{Duration, Instant};

use bytemuck::Pod;
use pertinax::{Comm, Op, Rank, Source, Status, Tag};
use serde::{Deserialize, Serialize};

use crate::p2p::{check_rank, survivors, P2p};
use crate::policy::Kind;
use crate::{Communicator, Config, Error, Outcome, Received};

/// Tag of the intercommunicator creations of a deputy's join.
const TAG_JOIN: Tag = Tag(7001);
/// Tag of a master's hand-over to the root in its group.
const TAG_ROOT: Tag = Tag(7003);
/// Tag of the copy of the group's contribution that its deputy keeps.
const TAG_COPY: Tag = Tag(7004);
/// Agreement bit: the stage succeeded.
const OK: u32 = 1;
/// Agreement bit of a global stage, cleared by a head whose group's new
/// deputy joins at this stage.
const NO_JOIN: u32 = 2;

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

/// A communicator with the original rank of each of its ranks.
#[derive(Clone, Debug)]
struct Sub {
    comm: Comm,
    to_orig: Vec<usize>,
}

impl Sub {
    fn rank_of(&self, orig: usize) -> Option<usize> {
        self.to_orig.iter().position(|&o| o == orig)
    }
}

/// The global communicator at a master or a deputy.
#[derive(Clone, Debug)]
struct Global {
    comm: Comm,
    /// (group, original rank) of each rank of `comm`: the same at every
    /// member. A group's first member is its head (its master).
    members: Vec<(usize, usize)>,
}

impl Global {
    /// The rank of group `g`'s head.
    fn head(&self, g: usize) -> Option<usize> {
        self.members.iter().position(|&(x, _)| x == g)
    }

    /// Whether rank `r` is its group's head.
    fn is_head(&self, r: usize) -> bool {
        self.members
            .get(r)
            .is_some_and(|&(g, _)| self.head(g) == Some(r))
    }
}

/// The global stage of an operation.
#[derive(Clone, Debug)]
enum Stage {
    /// Only the agreement (barrier).
    Sync,
    /// Every head contributes a block of this many bytes; the output is
    /// one block per group, in group order (absent groups zero).
    Allgather(usize),
    /// The root group's head sends this many bytes.
    Bcast(usize, usize),
}

/// What the head tells its new deputy when it joins.
#[derive(Debug, Serialize, Deserialize)]
struct Join {
    /// The operation the global communicator is in.
    seq: u64,
    /// (group, original rank) of each rank of the global communicator
    /// before the join.
    members: Vec<(usize, usize)>,
    /// The joins after this one in the same repair: (group, new deputy).
    later: Vec<(usize, usize)>,
}

#[derive(Debug)]
struct State {
    local: Sub,
    /// At a master or a deputy that has joined: the global communicator.
    global: Option<Global>,
    /// The members of this group in the global communicator, as the group
    /// knows them (original ranks).
    gmembers: Vec<usize>,
    /// The elected deputy that has not joined yet, and the operation at
    /// whose global stage it joins.
    elect: Option<(usize, u64)>,
    failed: Vec<usize>,
    /// Operations completed.
    seq: u64,
    local_repairs: u64,
    global_repairs: u64,
    /// Time spent in repairs (see [`Hierarchical::repair_time`]).
    repair_time: Duration,
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
    std::env::var_os("PERTINAX_RESILIENT_TRACE").is_some()
}

fn internal(msg: impl Into<String>) -> Error {
    Error::Internal(msg.into())
}

/// A second failure of a group's global members, or one during a join.
fn unrepairable(what: &str) -> Error {
    Error::Internal(format!(
        "hierarchical mode: {what}; a second failure of a group's master and deputy before the new deputy joined is not repaired (use --resilient=flat)"
    ))
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
        Hierarchical::build(comm, &map, comm.size(), k, cfg)
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
        k: usize,
        cfg: Config,
    ) -> Result<Hierarchical, Error> {
        let p2p = P2p::new(base, base_to_orig, size)?;
        let me = p2p.me();
        let group = me / k;
        loop {
            let (full, v) = p2p.comm().shrink_gather(0)?;
            let full_to_orig = survivors(p2p.to_orig(), &v);
            match Hierarchical::layout(&full, &full_to_orig, me, k) {
                Ok((local, global, solo)) => {
                    let a = full.agree_detailed(OK)?;
                    if a.flags == OK && a.failed.is_empty() {
                        let failed = (0..size).filter(|o| !full_to_orig.contains(o)).collect();
                        let gmembers = local.to_orig.iter().take(2).copied().collect();
                        return Ok(Hierarchical {
                            size,
                            me,
                            k,
                            group,
                            p2p,
                            full,
                            full_to_orig,
                            solo,
                            st: RefCell::new(State {
                                local,
                                global,
                                gmembers,
                                elect: None,
                                failed,
                                seq: 0,
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
        me: usize,
        k: usize,
    ) -> Result<(Sub, Option<Global>, Comm), Error> {
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
        Ok((local, gcomm.map(|comm| Global { comm, members }), solo))
    }

    fn check_rank(&self, r: Rank) -> Result<usize, Error> {
        check_rank(r, self.size)
    }

    fn gone(&self, kind: Kind, rank: usize) -> Result<Outcome, Error> {
        self.cfg.policy.answer(kind, rank)
    }

    fn known_failed(&self) -> Vec<Rank> {
        Communicator::failed_ranks(self)
    }

    /// The number of groups.
    fn groups(&self) -> usize {
        self.size.div_ceil(self.k)
    }

    /// The rank of original rank `o` in the point-to-point communicator.
    fn p2p_rank(&self, o: usize) -> Result<Rank, Error> {
        self.p2p
            .rank_of(o)
            .map(|r| Rank(r as i32))
            .ok_or_else(|| unrepairable(&format!("rank {o} is gone")))
    }

    /// Runs a stage on the local communicator until it succeeds at every
    /// member: `f` gets the local communicator (rank 0 is the master).
    /// `post`: the stage comes after the operation's global stage.
    fn local_stage<R>(
        &self,
        post: bool,
        mut f: impl FnMut(&Sub) -> Result<R, Error>,
    ) -> Result<R, Error> {
        loop {
            let l = self.st.borrow().local.clone();
            let r = f(&l);
            let ok = if matches!(&r, Err(e) if e.is_fault()) {
                // A member may wait for this one inside the stage (the
                // deputy for its copy of the block, a master for the
                // root's data): the revocation ends that wait, and the
                // agreement still runs on the revoked communicator.
                let _ = l.comm.revoke();
                0
            } else {
                OK
            };
            let a = l.comm.agree_detailed(ok)?;
            if a.flags & OK == OK && a.failed.is_empty() {
                return r;
            }
            if let Err(e) = &r {
                if !e.is_fault() {
                    return r;
                }
            }
            if trace() {
                eprintln!(
                    "hier[{}/{}]: local stage failed, repairing",
                    self.me, self.size
                );
            }
            self.timed(|| self.repair_local(post))?;
        }
    }

    /// Shrinks the local communicator and elects a new deputy if the
    /// group lost one of its global members.
    ///
    /// # Errors
    /// The group has no member in the global communicator any more (its
    /// master and its deputy died before a new deputy joined).
    fn repair_local(&self, post: bool) -> Result<(), Error> {
        let l = self.st.borrow().local.clone();
        let _ = l.comm.revoke();
        let (comm, vals) = l.comm.shrink_gather(0)?;
        let alive = survivors(&l.to_orig, &vals);
        let _ = l.comm.free();
        let mut st = self.st.borrow_mut();
        st.local_repairs += 1;
        for (i, v) in vals.iter().enumerate() {
            if v.is_none() {
                st.failed.push(l.to_orig[i]);
            }
        }
        st.failed.sort_unstable();
        st.failed.dedup();
        st.local = Sub {
            comm,
            to_orig: alive.clone(),
        };
        let pos = position(st.seq, post);
        if let Some((e, j)) = st.elect {
            if joined_by(j, pos) {
                st.gmembers.push(e);
                st.elect = None;
            }
        }
        st.gmembers.retain(|o| alive.contains(o));
        st.gmembers.dedup();
        if st.elect.is_some_and(|(e, _)| !alive.contains(&e)) {
            st.elect = None;
        }
        if !alive.first().is_some_and(|m| st.gmembers.contains(m)) {
            return Err(unrepairable(&format!(
                "group {} lost its master and its deputy",
                self.group
            )));
        }
        if let Some(&d) = alive.get(1) {
            if !st.gmembers.contains(&d) && st.elect.map(|(e, _)| e) != Some(d) {
                st.elect = Some((d, join_op(pos)));
            }
        }
        if trace() {
            eprintln!(
                "hier[{}]: local {:?} global {:?} elect {:?} at op {} post {post}",
                self.me, st.local.to_orig, st.gmembers, st.elect, st.seq
            );
        }
        Ok(())
    }

    /// The global stage of this operation at a member of the global
    /// communicator (joining it first if this rank is the deputy elected
    /// for it), with `mine` the group's contribution if this rank is its
    /// head; `None` at the others.
    fn masters(&self, stage: &Stage, mine: Option<&[u8]>) -> Result<Option<Vec<u8>>, Error> {
        let (seq, joining) = {
            let st = self.st.borrow();
            (
                st.seq,
                st.global.is_none() && st.elect == Some((self.me, st.seq)),
            )
        };
        if joining {
            self.timed(|| self.join(seq))?;
        }
        if self.st.borrow().global.is_none() {
            return Ok(None);
        }
        self.run_global(stage, mine, seq).map(Some)
    }

    /// The new deputy joins the global communicator at operation `seq`,
    /// led by its group's head.
    fn join(&self, seq: u64) -> Result<(), Error> {
        let head = self.st.borrow().local.to_orig[0];
        let fail = |e: pertinax::Error| unrepairable(&format!("join: {e}"));
        if trace() {
            eprintln!("hier[{}/{}]: joining through {head}", self.me, self.size);
        }
        let inter = self
            .solo
            .intercomm_create(Rank(0), self.p2p.comm(), self.p2p_rank(head)?, TAG_JOIN)
            .map_err(fail)?;
        let (msg, _): (Join, Status) = inter.recv_value(Source::Any, TAG_JOIN).map_err(fail)?;
        let merged = inter.merge(true).map_err(fail)?;
        let _ = inter.free();
        if msg.seq != seq {
            return Err(internal(format!(
                "a deputy joined at operation {} from operation {seq}",
                msg.seq
            )));
        }
        let mut members = msg.members;
        members.push((self.group, self.me));
        {
            let mut st = self.st.borrow_mut();
            st.gmembers.push(self.me);
            st.elect = None;
            st.global_repairs += 1;
        }
        self.accept_joins(merged, members, &msg.later, seq)
    }

    /// Runs a global stage until it succeeds at every member of the global
    /// communicator and no deputy is waiting to join.
    fn run_global(&self, stage: &Stage, mine: Option<&[u8]>, seq: u64) -> Result<Vec<u8>, Error> {
        // Tests kill a master here: after its group's first stage, before
        // its contribution to the global stage.
        pertinax::fault_point("res.hier.global");
        loop {
            let g = self
                .st
                .borrow()
                .global
                .clone()
                .ok_or_else(|| internal("a global stage outside the global communicator"))?;
            let r = self.global_once(&g, stage, mine);
            pertinax::fault_point("res.hier.global.sent");
            let ok = if matches!(&r, Err(e) if e.is_fault()) {
                0
            } else {
                OK
            };
            let ask = self.join_request(seq);
            let a = g
                .comm
                .agree_detailed(ok | if ask.is_some() { 0 } else { NO_JOIN })?;
            if a.flags & (OK | NO_JOIN) == OK | NO_JOIN && a.failed.is_empty() {
                return r;
            }
            if let Err(e) = &r {
                if !e.is_fault() {
                    return r;
                }
            }
            if trace() {
                eprintln!(
                    "hier[{}/{}]: global stage of op {seq}: repair (flags {}, failed {:?})",
                    self.me, self.size, a.flags, a.failed
                );
            }
            self.timed(|| self.repair_global(seq, ask))?;
        }
    }

    /// At a group's head: the deputy that joins at this operation's global
    /// stage.
    fn join_request(&self, seq: u64) -> Option<usize> {
        let st = self.st.borrow();
        if st.local.comm.rank().0 != 0 {
            return None;
        }
        st.elect
            .filter(|&(e, j)| j == seq && !st.gmembers.contains(&e))
            .map(|(e, _)| e)
    }

    fn global_once(
        &self,
        g: &Global,
        stage: &Stage,
        mine: Option<&[u8]>,
    ) -> Result<Vec<u8>, Error> {
        let me = g.comm.rank().index();
        match *stage {
            Stage::Sync => Ok(Vec::new()),
            Stage::Allgather(block) => {
                let heads: Vec<usize> = (0..g.members.len()).filter(|&r| g.is_head(r)).collect();
                let counts: Vec<usize> = (0..g.members.len())
                    .map(|r| if heads.contains(&r) { block } else { 0 })
                    .collect();
                let displs: Vec<usize> = counts
                    .iter()
                    .scan(0, |at, &c| {
                        let d = *at;
                        *at += c;
                        Some(d)
                    })
                    .collect();
                let zero = vec![0u8; block];
                let send: &[u8] = if !heads.contains(&me) {
                    &[]
                } else {
                    match mine {
                        Some(m) if m.len() == block => m,
                        Some(_) => return Err(internal("a global block of the wrong size")),
                        // A head that took over without the group's block
                        // (its master died with it): the group is absent.
                        None => &zero,
                    }
                };
                let mut all = vec![0u8; heads.len() * block];
                g.comm.allgatherv(send, &mut all, &counts, &displs)?;
                let mut out = vec![0u8; self.groups() * block];
                for (i, &r) in heads.iter().enumerate() {
                    let grp = g.members[r].0;
                    out[grp * block..(grp + 1) * block]
                        .copy_from_slice(&all[i * block..(i + 1) * block]);
                }
                Ok(out)
            }
            Stage::Bcast(len, root_group) => {
                let mut buf = vec![0u8; len];
                let Some(root) = g.head(root_group) else {
                    // The root group is gone: nothing to send (status 0).
                    return Ok(buf);
                };
                if me == root {
                    if let Some(m) = mine.filter(|m| m.len() == len) {
                        buf.copy_from_slice(m);
                    }
                }
                g.comm.bcast(&mut buf, root)?;
                Ok(buf)
            }
        }
    }

    /// Repairs the global communicator: shrink, then the new deputies
    /// asked for join.
    fn repair_global(&self, seq: u64, ask: Option<usize>) -> Result<(), Error> {
        let g = self
            .st
            .borrow()
            .global
            .clone()
            .ok_or_else(|| internal("a global repair outside the global communicator"))?;
        let _ = g.comm.revoke();
        let (comm, vals) = g.comm.shrink_gather(encode_join(self.group, ask))?;
        let _ = g.comm.free();
        let mut members = Vec::new();
        let mut joins = Vec::new();
        {
            let mut st = self.st.borrow_mut();
            st.global_repairs += 1;
            for (m, v) in g.members.iter().zip(&vals) {
                match v {
                    Some(v) => {
                        members.push(*m);
                        if let (grp, Some(e)) = decode_join(*v) {
                            joins.push((grp, e));
                        }
                    }
                    None => st.failed.push(m.1),
                }
            }
            st.failed.sort_unstable();
            st.failed.dedup();
        }
        joins.sort_unstable();
        if trace() {
            eprintln!(
                "hier[{}/{}]: global shrunk at op {seq}: {members:?}, joins {joins:?}",
                self.me, self.size
            );
        }
        self.accept_joins(comm, members, &joins, seq)
    }

    /// The members of the global communicator `comm` take in the new
    /// deputies of `joins`, in order, each led by its group's head.
    fn accept_joins(
        &self,
        mut comm: Comm,
        mut members: Vec<(usize, usize)>,
        joins: &[(usize, usize)],
        seq: u64,
    ) -> Result<(), Error> {
        let fail = |e: pertinax::Error| unrepairable(&format!("join: {e}"));
        for (i, &(grp, e)) in joins.iter().enumerate() {
            let head = members
                .iter()
                .position(|&(x, _)| x == grp)
                .ok_or_else(|| internal("a join asked for by no head"))?;
            let at_head = comm.rank().index() == head;
            let inter = comm
                .intercomm_create(
                    Rank(head as i32),
                    self.p2p.comm(),
                    self.p2p_rank(e)?,
                    TAG_JOIN,
                )
                .map_err(fail)?;
            if at_head {
                let msg = Join {
                    seq,
                    members: members.clone(),
                    later: joins[i + 1..].to_vec(),
                };
                inter.send_value(&msg, Rank(0), TAG_JOIN).map_err(fail)?;
            }
            let merged = inter.merge(false).map_err(fail)?;
            let _ = inter.free();
            let _ = comm.free();
            comm = merged;
            members.push((grp, e));
            if at_head {
                let mut st = self.st.borrow_mut();
                st.gmembers.push(e);
                st.elect = None;
            }
        }
        self.st.borrow_mut().global = Some(Global { comm, members });
        Ok(())
    }

    /// Ends an operation.
    fn end_op(&self) {
        self.st.borrow_mut().seq += 1;
    }

    /// Original rank → (group, position) bitmap helpers.
    fn group_members(&self, g: usize) -> std::ops::Range<usize> {
        g * self.k..((g + 1) * self.k).min(self.size)
    }
}

/// A gathered block: `[present][k presence bytes][k × n bytes]`.
fn block_len(k: usize, n: usize) -> usize {
    1 + k + k * n
}

/// A reduced block: `[present][k presence bytes][the group's partial, n
/// bytes]`.
fn reduced_len(k: usize, n: usize) -> usize {
    1 + k + n
}

impl Hierarchical {
    /// The master's block of its group's data (`data` in local rank order,
    /// `n` bytes each).
    fn make_block(&self, l: &Sub, data: &[u8], n: usize) -> Vec<u8> {
        let mut b = vec![0u8; block_len(self.k, n)];
        b[0] = 1;
        let base = self.group * self.k;
        for (i, &o) in l.to_orig.iter().enumerate() {
            let j = o - base;
            b[1 + j] = 1;
            b[1 + self.k + j * n..1 + self.k + (j + 1) * n]
                .copy_from_slice(&data[i * n..(i + 1) * n]);
        }
        b
    }

    /// Spreads the global output of blocks into `[size presence][size × n]`.
    fn unblock(&self, out: &[u8], n: usize) -> Vec<u8> {
        let bl = block_len(self.k, n);
        let mut r = vec![0u8; self.size + self.size * n];
        for (g, b) in out.chunks_exact(bl).enumerate() {
            if b[0] == 0 {
                continue;
            }
            for (j, o) in self.group_members(g).enumerate() {
                if b[1 + j] == 1 {
                    r[o] = 1;
                    r[self.size + o * n..self.size + (o + 1) * n]
                        .copy_from_slice(&b[1 + self.k + j * n..1 + self.k + (j + 1) * n]);
                }
            }
        }
        r
    }

    fn missing_of(&self, presence: &[u8]) -> Vec<Rank> {
        (0..self.size)
            .filter(|&o| presence[o] == 0)
            .map(|o| Rank(o as i32))
            .collect()
    }

    /// Combines the present groups' partial reductions in group order into
    /// `[size presence][result]`.
    fn combine<T: Pod>(&self, out: &[u8], n: usize, op: &Op<T>) -> Result<Vec<u8>, Error> {
        let nb = n * std::mem::size_of::<T>();
        let bl = reduced_len(self.k, nb);
        let mut presence = vec![0u8; self.size];
        let mut acc: Option<Vec<T>> = None;
        for (g, b) in out.chunks_exact(bl).enumerate() {
            if b[0] == 0 {
                continue;
            }
            for (j, o) in self.group_members(g).enumerate() {
                presence[o] = b[1 + j];
            }
            let mut part = vec![T::zeroed(); n];
            bytemuck::cast_slice_mut::<T, u8>(&mut part)
                .copy_from_slice(&b[1 + self.k..1 + self.k + nb]);
            match acc.as_mut() {
                None => acc = Some(part),
                Some(a) => op.combine(a, &part, true)?,
            }
        }
        let mut r = presence;
        match acc {
            Some(a) => r.extend_from_slice(bytemuck::cast_slice(&a)),
            None => r.resize(self.size + nb, 0),
        }
        Ok(r)
    }

    /// The first stage of reductions: every group reduces to its master;
    /// the master's block is `[1][presence][partial]` (the partial in the
    /// first `nb` data bytes). The deputy keeps a copy ([`Self::to_deputy`]).
    fn reduce_local<T: Pod>(&self, send: &[T], op: &Op<T>) -> Result<Option<Vec<u8>>, Error> {
        let n = send.len();
        let nb = std::mem::size_of_val(send);
        self.local_stage(false, |l| {
            let mut part = vec![T::zeroed(); n];
            l.comm.reduce(send, &mut part, op, 0)?;
            let block = (l.comm.rank().0 == 0).then(|| {
                let mut b = vec![0u8; reduced_len(self.k, nb)];
                b[0] = 1;
                for &o in &l.to_orig {
                    b[1 + o - self.group * self.k] = 1;
                }
                b[1 + self.k..1 + self.k + nb].copy_from_slice(bytemuck::cast_slice(&part));
                b
            });
            Self::to_deputy(l, block)
        })
    }

    /// The first stage of gathers: every group gathers to its master, and
    /// the deputy keeps a copy of the block ([`Self::to_deputy`]).
    fn gather_local(&self, send: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let n = send.len();
        self.local_stage(false, |l| {
            let block = if l.comm.rank().0 == 0 {
                let mut all = vec![0u8; l.comm.size() * n];
                l.comm.gather(send, &mut all, 0)?;
                Some(self.make_block(l, &all, n))
            } else {
                l.comm.gather(send, &mut [], 0)?;
                None
            };
            Self::to_deputy(l, block)
        })
    }

    /// Inside a group's first stage: the master (holding `block`) sends a
    /// copy of its group's contribution to the deputy, so that a master
    /// dying after this stage and before the end of the global one leaves
    /// it to the deputy, which contributes it when it takes over (the
    /// group's survivors are never dropped for that). `block` is `Some` at
    /// the master only. Returns the block at the master and the deputy,
    /// `None` at the others.
    fn to_deputy(l: &Sub, block: Option<Vec<u8>>) -> Result<Option<Vec<u8>>, Error> {
        match block {
            Some(b) => {
                if l.comm.size() > 1 {
                    l.comm.send(&b, 1, TAG_COPY)?;
                }
                Ok(Some(b))
            }
            None if l.comm.rank().0 == 1 => Ok(Some(l.comm.recv_vec::<u8>(0, TAG_COPY)?.0)),
            None => Ok(None),
        }
    }

    /// The post-global stage's output at the master: this rank's output of
    /// the global stage (a master is always in the global communicator:
    /// `repair_local` reports the group lost otherwise).
    fn output(out: Option<&[u8]>) -> Result<&[u8], Error> {
        out.ok_or_else(|| internal("a master without the global stage's output"))
    }

    /// The last stage: the master spreads `len` bytes of the global output
    /// (made by `make` from it) to its group.
    fn spread_local(
        &self,
        out: Option<Vec<u8>>,
        len: usize,
        make: impl Fn(&[u8]) -> Result<Vec<u8>, Error>,
    ) -> Result<Vec<u8>, Error> {
        self.local_stage(true, |l| {
            let mut buf = if l.comm.rank().0 == 0 {
                make(Self::output(out.as_deref())?)?
            } else {
                vec![0u8; len]
            };
            if buf.len() != len {
                return Err(internal("a spread of the wrong size"));
            }
            l.comm.bcast(&mut buf, 0)?;
            Ok(buf)
        })
    }

    /// The last stage of rooted operations: the master hands `made` from
    /// the global output to the root (in its group).
    fn hand_to_root(
        &self,
        out: Option<Vec<u8>>,
        root: usize,
        make: impl Fn(&[u8]) -> Result<Vec<u8>, Error>,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.local_stage(true, |l| {
            let Some(rl) = l.rank_of(root) else {
                return Ok(None);
            };
            let me = l.comm.rank().index();
            if me == 0 {
                let made = make(Self::output(out.as_deref())?)?;
                if rl == 0 {
                    return Ok(Some(made));
                }
                l.comm.send(&made, rl, TAG_ROOT)?;
                Ok(None)
            } else if me == rl {
                let (v, _) = l.comm.recv_vec::<u8>(0, TAG_ROOT)?;
                Ok(Some(v))
            } else {
                Ok(None)
            }
        })
    }
}

impl Drop for Hierarchical {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = Communicator::barrier(self);
        }
    }
}

impl Communicator for Hierarchical {
    fn rank(&self) -> Rank {
        Rank(self.me as i32)
    }

    fn size(&self) -> usize {
        self.size
    }

    fn failed_ranks(&self) -> Vec<Rank> {
        self.p2p.failed(self.st.borrow().failed.clone())
    }

    fn barrier(&self) -> Result<Outcome, Error> {
        self.local_stage(false, |_| Ok(()))?;
        self.masters(&Stage::Sync, None)?;
        self.local_stage(true, |_| Ok(()))?;
        self.end_op();
        Ok(Outcome::default())
    }

    fn bcast<T: Pod>(&self, buf: &mut [T], root: impl Into<Rank>) -> Result<Outcome, Error> {
        let root = self.check_rank(root.into())?;
        let rg = root / self.k;
        let len = 1 + std::mem::size_of_val(buf);
        let stage = Stage::Bcast(len, rg);
        let payload = if self.group == rg {
            let p = self.local_stage(false, |l| {
                let mut p = vec![0u8; len];
                let Some(rl) = l.rank_of(root) else {
                    return Ok(p);
                };
                if rl == l.comm.rank().index() {
                    p[0] = 1;
                    p[1..].copy_from_slice(bytemuck::cast_slice(buf));
                }
                l.comm.bcast(&mut p, rl)?;
                Ok(p)
            })?;
            // Every member holds the payload: a deputy that took over
            // from a master dead in the global stage sends it.
            self.masters(&stage, Some(&p))?;
            p
        } else {
            let out = self.masters(&stage, None)?;
            self.spread_local(out, len, |o| Ok(o.to_vec()))?
        };
        self.end_op();
        if payload[0] == 1 {
            bytemuck::cast_slice_mut(buf).copy_from_slice(&payload[1..]);
            Ok(Outcome::default())
        } else {
            self.gone(Kind::Bcast, root)
        }
    }

    fn reduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error> {
        let root = self.check_rank(root.into())?;
        if self.me == root && recv.len() != send.len() {
            return Err(pertinax::Error::InvalidArgument(format!(
                "reduce: receive holds {} elements, {} needed",
                recv.len(),
                send.len()
            ))
            .into());
        }
        let rg = root / self.k;
        let n = send.len();
        let nb = std::mem::size_of_val(send);
        let stage = Stage::Allgather(reduced_len(self.k, nb));
        let block = self.reduce_local(send, op)?;
        let out = self.masters(&stage, block.as_deref())?;
        let got = if self.group == rg {
            self.hand_to_root(out, root, |o| self.combine(o, n, op))?
        } else {
            None
        };
        self.end_op();
        match got {
            Some(r) => {
                bytemuck::cast_slice_mut(recv).copy_from_slice(&r[self.size..]);
                Ok(Outcome {
                    skipped: None,
                    missing: self.missing_of(&r[..self.size]),
                })
            }
            None if self.me == root => Err(internal("the root got no result")),
            None if self.known_failed().contains(&Rank(root as i32)) => {
                self.gone(Kind::Reduce, root)
            }
            None => Ok(Outcome {
                skipped: None,
                missing: self.known_failed(),
            }),
        }
    }

    fn allreduce<T: Pod>(&self, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<Outcome, Error> {
        if recv.len() != send.len() {
            return Err(pertinax::Error::InvalidArgument(format!(
                "allreduce: receive holds {} elements, {} needed",
                recv.len(),
                send.len()
            ))
            .into());
        }
        let n = send.len();
        let nb = std::mem::size_of_val(send);
        let stage = Stage::Allgather(reduced_len(self.k, nb));
        let block = self.reduce_local(send, op)?;
        let out = self.masters(&stage, block.as_deref())?;
        let r = self.spread_local(out, self.size + nb, |o| self.combine(o, n, op))?;
        self.end_op();
        bytemuck::cast_slice_mut(recv).copy_from_slice(&r[self.size..]);
        Ok(Outcome {
            skipped: None,
            missing: self.missing_of(&r[..self.size]),
        })
    }

    fn gather<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error> {
        let root = self.check_rank(root.into())?;
        let n = send.len();
        if self.me == root && recv.len() != self.size * n {
            return Err(pertinax::Error::InvalidArgument(format!(
                "gather: receive holds {} elements, {} × {n} needed",
                recv.len(),
                self.size
            ))
            .into());
        }
        let rg = root / self.k;
        let nb = std::mem::size_of_val(send);
        let stage = Stage::Allgather(block_len(self.k, nb));
        let block = self.gather_local(bytemuck::cast_slice(send))?;
        let out = self.masters(&stage, block.as_deref())?;
        let got = if self.group == rg {
            self.hand_to_root(out, root, |o| Ok(self.unblock(o, nb)))?
        } else {
            None
        };
        self.end_op();
        match got {
            Some(r) => {
                let dst: &mut [u8] = bytemuck::cast_slice_mut(recv);
                for o in 0..self.size {
                    if r[o] == 1 {
                        dst[o * nb..(o + 1) * nb]
                            .copy_from_slice(&r[self.size + o * nb..self.size + (o + 1) * nb]);
                    }
                }
                Ok(Outcome {
                    skipped: None,
                    missing: self.missing_of(&r[..self.size]),
                })
            }
            None if self.me == root => Err(internal("the root got no result")),
            None if self.known_failed().contains(&Rank(root as i32)) => {
                self.gone(Kind::Gather, root)
            }
            None => Ok(Outcome {
                skipped: None,
                missing: self.known_failed(),
            }),
        }
    }

    fn scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error> {
        let root = self.check_rank(root.into())?;
        let n = recv.len();
        if self.me == root && send.len() != self.size * n {
            return Err(pertinax::Error::InvalidArgument(format!(
                "scatter: send holds {} elements, {} × {n} needed",
                send.len(),
                self.size
            ))
            .into());
        }
        let rg = root / self.k;
        let nb = std::mem::size_of_val(recv);
        let len = 1 + self.size * nb;
        let stage = Stage::Bcast(len, rg);
        // The root hands its data to its master.
        let first = if self.group == rg {
            // The root hands its data to its master and its deputy (which
            // sends it if the master dies before the global stage ends).
            self.local_stage(false, |l| {
                let me = l.comm.rank().index();
                let Some(rl) = l.rank_of(root) else {
                    return Ok((me <= 1).then(|| vec![0u8; len]));
                };
                if me == rl {
                    let mut p = vec![1u8; 1];
                    p.extend_from_slice(bytemuck::cast_slice(send));
                    for to in (0..l.comm.size().min(2)).filter(|&x| x != rl) {
                        l.comm.send(&p, to, TAG_ROOT)?;
                    }
                    Ok((me <= 1).then_some(p))
                } else if me <= 1 {
                    let (v, _) = l.comm.recv_vec::<u8>(rl, TAG_ROOT)?;
                    Ok(Some(v))
                } else {
                    Ok(None)
                }
            })?
        } else {
            None
        };
        let out = self.masters(&stage, first.as_deref())?;
        let status = std::cell::Cell::new(0u8);
        self.local_stage(true, |l| {
            let mut st = [0u8; 1];
            let mut tmp = Vec::new();
            if l.comm.rank().0 == 0 {
                let o = Self::output(out.as_deref())?;
                if o.len() != len {
                    return Err(internal("a scatter output of the wrong size"));
                }
                st[0] = o[0];
                for &orig in &l.to_orig {
                    tmp.extend_from_slice(&o[1 + orig * nb..1 + (orig + 1) * nb]);
                }
            }
            l.comm.bcast(&mut st, 0)?;
            status.set(st[0]);
            if st[0] == 1 {
                let dst: &mut [u8] = bytemuck::cast_slice_mut(recv);
                if l.comm.rank().0 == 0 {
                    l.comm.scatter(&tmp, dst, 0)?;
                } else {
                    l.comm.scatter(&[], dst, 0)?;
                }
            }
            Ok(())
        })?;
        self.end_op();
        if status.get() == 1 {
            Ok(Outcome {
                skipped: None,
                missing: self.known_failed(),
            })
        } else {
            self.gone(Kind::Scatter, root)
        }
    }

    fn allgather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Error> {
        let n = send.len();
        if recv.len() != self.size * n {
            return Err(pertinax::Error::InvalidArgument(format!(
                "allgather: receive holds {} elements, {} × {n} needed",
                recv.len(),
                self.size
            ))
            .into());
        }
        let nb = std::mem::size_of_val(send);
        let stage = Stage::Allgather(block_len(self.k, nb));
        let block = self.gather_local(bytemuck::cast_slice(send))?;
        let out = self.masters(&stage, block.as_deref())?;
        let r = self.spread_local(out, self.size + self.size * nb, |o| Ok(self.unblock(o, nb)))?;
        self.end_op();
        let dst: &mut [u8] = bytemuck::cast_slice_mut(recv);
        for o in 0..self.size {
            if r[o] == 1 {
                dst[o * nb..(o + 1) * nb]
                    .copy_from_slice(&r[self.size + o * nb..self.size + (o + 1) * nb]);
            }
        }
        Ok(Outcome {
            skipped: None,
            missing: self.missing_of(&r[..self.size]),
        })
    }

    fn send<T: Pod>(&self, buf: &[T], dest: impl Into<Rank>, tag: i32) -> Result<Outcome, Error> {
        self.p2p.send(&self.cfg.policy, buf, dest.into(), tag)
    }

    fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        src: impl Into<Source>,
        tag: i32,
    ) -> Result<Received, Error> {
        self.p2p.recv(&self.cfg.policy, buf, src.into(), tag)
    }

    /// A new hierarchical communicator with the same ranks (collective,
    /// on every live rank; completes despite failures).
    fn dup(&self) -> Result<Self, Error> {
        // A hierarchical barrier first: every rank has left the stages of
        // the operations before (a group repairing would not answer the
        // shrink of the full communicator otherwise).
        Communicator::barrier(self)?;
        let (comm, vals) = self.full.shrink_gather(0)?;
        let map = survivors(&self.full_to_orig, &vals);
        Hierarchical::build(&comm, &map, self.size, self.k, self.cfg.clone())
    }

    /// Splits the live ranks; every new communicator is hierarchical with
    /// the same `k` (collective; completes despite failures).
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Error> {
        // See `dup`.
        Communicator::barrier(self)?;
        loop {
            let (comm, _) = self.full.shrink_gather(0)?;
            let r = comm.split(color, key);
            let ok = u32::from(!matches!(&r, Err(e) if e.is_fault()));
            let a = comm.agree_detailed(ok)?;
            if a.flags == 1 {
                return match r? {
                    Some(c) => {
                        let ids: Vec<usize> = (0..c.size()).collect();
                        Ok(Some(Hierarchical::build(
                            &c,
                            &ids,
                            c.size(),
                            self.k,
                            self.cfg.clone(),
                        )?))
                    }
                    None => Ok(None),
                };
            }
            if let Ok(Some(c)) = r {
                let _ = c.free();
            }
            let _ = comm.free();
        }
    }
}

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
