//! The hierarchical resilient communicator (Legio's section 5): local
//! communicators of at most `k` ranks, a global communicator of their
//! masters, and the partially overlapped communicators (POVs) used only to
//! repair.
//!
//! # Structure
//!
//! Original rank `r` belongs to group `r / k`; a group's *local*
//! communicator holds its live members in rank order and its *master* is
//! its lowest live rank (local rank 0). The *global* communicator holds the
//! masters in group order. The *POV* of a group holds the group's members
//! and, last, the master of the next live group (its *bridge*).
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
//! The global stage moves every group's contribution to every master (an
//! allgather or a broadcast), so each master holds the stage's output,
//! which it keeps until the next operation: a master that replaces a dead
//! one after the global stage gets it from there.
//!
//! # Repair
//!
//! A failed non-master is repaired inside its group: a shrink of the local
//! communicator (the paper's `S(k)`). When a master fails, its group shrinks
//! its local communicator and its POV; the global communicator shrinks too,
//! and the new master (the lowest survivor of the group) joins it through
//! the POV's bridge (an intercommunicator between the global communicator
//! and the new master, merged). The POV whose bridge was the dead master is
//! rebuilt at the end of the next operation with the new master (its group
//! learns it through the bit of its next local agreement).
//!
//! # Limits
//!
//! - A second failure that hits a master repair (the bridge, or the new
//!   master, dying before the join completed) is reported as an error
//!   instead of being repaired; use the flat mode where that matters.
//! - A group whose master dies between the global stage and the hand-over
//!   of a contribution loses that contribution for that operation
//!   (reported in [`Outcome::missing`]); for a scatter whose root group's
//!   master dies that way, the operation is reported skipped.
//! - **The gap: a master that dies after the masters' agreement on a
//!   global stage and before its group's last stage of that operation.**
//!   The other masters have the output and go on; the group cannot tell
//!   this from a death before the agreement (where the masters wait for
//!   its new master), so it waits for its bridge, which comes only with
//!   the masters' next global stage. A program whose other ranks wait for
//!   that group through point-to-point before their next collective (a
//!   ring exchange right after an allreduce) deadlocks. Two separate
//!   agreements (the masters', the group's) cannot be made atomic: the fix
//!   needs one process in both with the masters' knowledge, a *deputy* per
//!   group in the global communicator that takes over with the output.
//!   The randomized test campaign therefore kills masters only between
//!   operations; non-masters anywhere.

use std::cell::RefCell;
use std::fmt;

use bytemuck::Pod;
use pertinax::{Comm, Op, Rank, Source, Status, Tag};
use serde::{Deserialize, Serialize};

use crate::p2p::{check_rank, survivors, P2p};
use crate::policy::Kind;
use crate::{Communicator, Config, Error, Outcome, Received};

/// Tag of the intercommunicator creations of a master repair.
const TAG_JOIN: Tag = Tag(7001);
/// Tag of the intercommunicator creations of a POV rebuild.
const TAG_REFRESH: Tag = Tag(7002);
/// Tag of a master's hand-over to the root in its group.
const TAG_ROOT: Tag = Tag(7003);
/// Agreement bit: the stage succeeded.
const OK: u32 = 1;
/// Agreement bit, cleared by a master: rebuild the group's POV at the end
/// of this operation.
const NO_REFRESH: u32 = 2;

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

/// What the masters know of the hierarchy (the same at every master).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Table {
    /// Master (original rank) of each group, `None` once the group is gone.
    master: Vec<Option<usize>>,
    /// The bridge (original rank) in each group's POV.
    bridge: Vec<Option<usize>>,
}

impl Table {
    /// The next live group after `g` (cyclic), other than `g`.
    fn succ(&self, g: usize) -> Option<usize> {
        let n = self.master.len();
        (1..n)
            .map(|d| (g + d) % n)
            .find(|&h| self.master[h].is_some())
    }

    /// Groups whose POV bridge is no longer the master of their successor.
    fn stale(&self) -> Vec<usize> {
        (0..self.master.len())
            .filter(|&p| self.master[p].is_some())
            // A group left alone has no bridge to rebuild.
            .filter(|&p| self.succ(p).is_some())
            .filter(|&p| self.bridge[p] != self.succ(p).and_then(|s| self.master[s]))
            .collect()
    }
}

/// The global communicator at a master.
#[derive(Clone, Debug)]
struct Global {
    comm: Comm,
    /// Group of each rank of `comm`.
    groups: Vec<usize>,
    table: Table,
}

impl Global {
    fn rank_of_group(&self, g: usize) -> Option<usize> {
        self.groups.iter().position(|&x| x == g)
    }
}

/// The global stage of an operation.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Stage {
    /// Only the agreement (barrier).
    Sync,
    /// Every master contributes a block of this many bytes; the output is
    /// one block per group, in group order (absent groups zero).
    Allgather(usize),
    /// The root group's master sends this many bytes.
    Bcast(usize, usize),
}

/// What a replacing master is told when it joins.
#[derive(Debug, Serialize, Deserialize)]
struct Join {
    /// The operation the global communicator is in.
    seq: u64,
    /// Its global stage.
    stage: Stage,
    /// Its shape.
    shape: Shape,
    /// The output of the operation before it.
    last: Option<(u64, Vec<u8>)>,
    /// Group of each rank of the global communicator before the join.
    groups: Vec<usize>,
    table: Table,
}

/// The shape of an operation: which groups have a local stage after the
/// global one (decides when a stale POV is rebuilt).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
enum Shape {
    /// Every group (barrier, allreduce, allgather, scatter).
    All,
    /// Every group but the root's (bcast).
    AllBut(usize),
    /// Only the root's group (reduce, gather).
    Only(usize),
}

impl Shape {
    fn post(self, g: usize) -> bool {
        match self {
            Shape::All => true,
            Shape::AllBut(r) => g != r,
            Shape::Only(r) => g == r,
        }
    }
}

#[derive(Debug)]
struct State {
    local: Sub,
    /// This group's POV (the members, then the bridge).
    pov: Sub,
    /// At a master that has joined: the global communicator.
    global: Option<Global>,
    /// At a master: the POV it is the bridge of.
    bridge_pov: Option<Sub>,
    /// At a new master that has not joined yet.
    join_pending: bool,
    failed: Vec<usize>,
    /// Operations completed.
    seq: u64,
    /// At a master: the global stage's output of the last operation.
    last: Option<(u64, Vec<u8>)>,
    /// In the root's group of a broadcast: the payload of that operation
    /// (every member has it after the first stage, so a new master that
    /// catches up sends it rather than nothing).
    held: Option<(u64, Vec<u8>)>,
    /// At a master: POV rebuilds due (group, at the end of operation).
    due: Vec<(usize, u64)>,
    /// At a member: its group's POV is rebuilt at the end of this
    /// operation.
    refresh_here: bool,
    local_repairs: u64,
    global_repairs: u64,
}

/// A resilient communicator organized as Legio's hierarchy. See the module
/// docs.
pub struct Hierarchical {
    size: usize,
    me: usize,
    k: usize,
    group: usize,
    /// Point-to-point traffic (never revoked nor shrunk).
    p2p: P2p,
    /// Every live rank at creation: communicator creations run on it.
    full: Comm,
    full_to_orig: Vec<usize>,
    /// This process alone (one side of the intercommunicators).
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

/// A second failure during a master repair.
fn unrepairable(what: &str) -> Error {
    Error::Internal(format!(
        "hierarchical mode: {what}; a second failure during a master repair is not repaired (use --resilient=flat)"
    ))
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

    /// Repairs so far: (local ones, global ones).
    pub fn repairs(&self) -> (u64, u64) {
        let st = self.st.borrow();
        (st.local_repairs, st.global_repairs)
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
                Ok(parts) => {
                    let a = full.agree_detailed(OK)?;
                    if a.flags == OK && a.failed.is_empty() {
                        let (local, pov, global, bridge_pov, solo) = parts;
                        let failed = (0..size).filter(|o| !full_to_orig.contains(o)).collect();
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
                                pov,
                                global,
                                bridge_pov,
                                join_pending: false,
                                failed,
                                seq: 0,
                                last: None,
                                held: None,
                                due: Vec::new(),
                                refresh_here: false,
                                local_repairs: 0,
                                global_repairs: 0,
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

    /// The communicators of the hierarchy, split from `full`.
    #[allow(clippy::type_complexity)]
    fn layout(
        full: &Comm,
        full_to_orig: &[usize],
        me: usize,
        k: usize,
    ) -> Result<(Sub, Sub, Option<Global>, Option<Sub>, Comm), Error> {
        let size_key = |o: usize| o as i32;
        let group = me / k;
        let missing = || internal("a split left this rank out");
        let mut groups: Vec<usize> = full_to_orig.iter().map(|o| o / k).collect();
        groups.dedup();
        let ngroups = full_to_orig
            .iter()
            .map(|o| o / k)
            .max()
            .map_or(0, |g| g + 1);
        let members = |g: usize| -> Vec<usize> {
            full_to_orig
                .iter()
                .copied()
                .filter(|o| o / k == g)
                .collect()
        };
        let local_comm = full
            .split(Some(group as u32), size_key(me))?
            .ok_or_else(missing)?;
        let local = Sub {
            comm: local_comm,
            to_orig: members(group),
        };
        let master = local.comm.rank().0 == 0;
        let gcomm = full.split(master.then_some(0), size_key(me))?;
        let idx = groups.iter().position(|&g| g == group).unwrap_or(0);
        let m = groups.len();
        let class = |i: usize| if m > 1 && i == m - 1 { 2 } else { i % 2 };
        let pred = (idx + m - 1) % m;
        let mut pov = None;
        let mut bridge_pov = None;
        let mut master_of = vec![None; ngroups];
        for &g in &groups {
            master_of[g] = members(g).first().copied();
        }
        let mut table = Table {
            master: master_of,
            bridge: vec![None; ngroups],
        };
        for i in 0..m {
            let s = (i + 1) % m;
            if s != i {
                table.bridge[groups[i]] = table.master[groups[s]];
            }
        }
        for j in 0..3 {
            let (color, key) = if class(idx) == j {
                (Some(group as u32), size_key(me))
            } else if master && m > 1 && class(pred) == j {
                (Some(groups[pred] as u32), (full_to_orig.len() + me) as i32)
            } else {
                (None, 0)
            };
            let c = full.split(color, key)?;
            if let Some(c) = c {
                if class(idx) == j {
                    let mut to_orig = members(group);
                    if let Some(b) = table.bridge[group] {
                        to_orig.push(b);
                    }
                    pov = Some(Sub { comm: c, to_orig });
                } else {
                    let mut to_orig = members(groups[pred]);
                    to_orig.push(me);
                    bridge_pov = Some(Sub { comm: c, to_orig });
                }
            }
        }
        let pov = pov.ok_or_else(missing)?;
        let global = gcomm.map(|comm| Global {
            comm,
            groups: groups.clone(),
            table,
        });
        let solo = full.split(Some(me as u32), 0)?.ok_or_else(missing)?;
        Ok((local, pov, global, bridge_pov, solo))
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

    /// Runs a stage on the local communicator until it succeeds at every
    /// member: `f` gets the local communicator (rank 0 is the master).
    fn local_stage<R>(&self, mut f: impl FnMut(&Sub) -> Result<R, Error>) -> Result<R, Error> {
        loop {
            let (l, flag) = {
                let st = self.st.borrow();
                let pending = st.local.comm.rank().0 == 0
                    && st
                        .due
                        .iter()
                        .any(|&(p, at)| p == self.group && at == st.seq);
                (st.local.clone(), if pending { 0 } else { NO_REFRESH })
            };
            let r = f(&l);
            let ok = if matches!(&r, Err(e) if e.is_fault()) {
                0
            } else {
                OK
            };
            let a = l.comm.agree_detailed(ok | flag)?;
            if a.flags & OK == OK && a.failed.is_empty() {
                if a.flags & NO_REFRESH == 0 {
                    self.st.borrow_mut().refresh_here = true;
                }
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
            self.repair_local()?;
        }
    }

    /// Shrinks the local communicator; if the master died, the POV too.
    fn repair_local(&self) -> Result<(), Error> {
        let l = self.st.borrow().local.clone();
        let _ = l.comm.revoke();
        let (comm, vals) = l.comm.shrink_gather(0)?;
        let alive = survivors(&l.to_orig, &vals);
        let master_died = vals.first().is_some_and(|v| v.is_none());
        let mut st = self.st.borrow_mut();
        st.local_repairs += 1;
        for (i, v) in vals.iter().enumerate() {
            if v.is_none() {
                st.failed.push(l.to_orig[i]);
            }
        }
        st.failed.sort_unstable();
        st.failed.dedup();
        let _ = l.comm.free();
        st.local = Sub {
            comm,
            to_orig: alive,
        };
        if master_died {
            let pov = st.pov.clone();
            drop(st);
            let (pcomm, pvals) = pov.comm.shrink_gather(0)?;
            let palive = survivors(&pov.to_orig, &pvals);
            let mut st = self.st.borrow_mut();
            st.pov = Sub {
                comm: pcomm,
                to_orig: palive,
            };
            if st.local.comm.rank().0 == 0 {
                st.join_pending = true;
                st.global = None;
                st.bridge_pov = None;
            }
            if trace() {
                eprintln!(
                    "hier[{}]: master died; local {:?} pov {:?} join {}",
                    self.me, st.local.to_orig, st.pov.to_orig, st.join_pending
                );
            }
        }
        Ok(())
    }

    /// A new master joins the global communicator through its POV's
    /// bridge; returns what the bridge told it.
    fn join(&self) -> Result<Join, Error> {
        let pov = self.st.borrow().pov.clone();
        if self.size <= self.k {
            // A single group: the new master is the global communicator.
            let seq = self.st.borrow().seq;
            let mut st = self.st.borrow_mut();
            st.global = Some(Global {
                comm: self.solo.dup()?,
                groups: vec![self.group],
                table: Table {
                    master: vec![Some(self.me)],
                    bridge: vec![None],
                },
            });
            st.join_pending = false;
            return Ok(Join {
                seq,
                stage: Stage::Sync,
                shape: Shape::All,
                last: None,
                groups: Vec::new(),
                table: Table {
                    master: vec![Some(self.me)],
                    bridge: vec![None],
                },
            });
        }
        let Some(bridge) = pov.to_orig.iter().position(|o| o / self.k != self.group) else {
            return Err(unrepairable(
                "the group's bridge to the global communicator failed",
            ));
        };
        if trace() {
            eprintln!(
                "hier[{}/{}]: joining through {bridge} of {:?}",
                self.me, self.size, pov.to_orig
            );
        }
        let inter = self
            .solo
            .intercomm_create(Rank(0), &pov.comm, Rank(bridge as i32), TAG_JOIN)
            .map_err(|e| unrepairable(&format!("join: {e}")))?;
        if trace() {
            eprintln!("hier[{}/{}]: intercomm made", self.me, self.size);
        }
        let (msg, _): (Join, Status) = inter
            .recv_value(Source::Any, TAG_JOIN)
            .map_err(|e| unrepairable(&format!("join message: {e}")))?;
        let merged = inter
            .merge(true)
            .map_err(|e| unrepairable(&format!("join merge: {e}")))?;
        let _ = inter.free();
        let mut groups = msg.groups.clone();
        groups.push(self.group);
        let mut table = msg.table.clone();
        // As every master does after the joins: who the masters are now.
        let mut all = vec![0u64; merged.size()];
        merged
            .allgather(&[self.me as u64], &mut all)
            .map_err(|e| unrepairable(&format!("table update: {e}")))?;
        for (r, &grp) in groups.iter().enumerate() {
            table.master[grp] = Some(all[r] as usize);
        }
        let due = due_list(&table, msg.seq, Some(msg.shape));
        let mut st = self.st.borrow_mut();
        st.global = Some(Global {
            comm: merged,
            groups,
            table,
        });
        st.join_pending = false;
        st.global_repairs += 1;
        st.due = due;
        if trace() {
            eprintln!(
                "hier[{}]: joined at op {} (mine {}), due {:?}",
                self.me, msg.seq, st.seq, st.due
            );
        }
        Ok(msg)
    }

    /// The global stage at a master: contributes `mine` (`None`: nothing
    /// for this operation), returns the output.
    fn global_stage(
        &self,
        stage: &Stage,
        shape: Shape,
        mine: Option<&[u8]>,
    ) -> Result<Vec<u8>, Error> {
        let seq = self.st.borrow().seq;
        if self.st.borrow().join_pending {
            let msg = self.join()?;
            self.catch_up(&msg, seq)?;
        }
        self.run_global(stage, mine, seq, shape, true)
    }

    /// After joining from operation `seq`: if the global communicator is
    /// one operation behind, take part in its global stage with nothing,
    /// and in the POV rebuilds due at its end.
    fn catch_up(&self, msg: &Join, seq: u64) -> Result<(), Error> {
        if msg.seq + 1 == seq {
            let held = self.st.borrow_mut().held.take();
            let mine = match (&msg.stage, held) {
                (Stage::Bcast(_, rg), Some((s, p))) if *rg == self.group && s == msg.seq => Some(p),
                _ => None,
            };
            self.run_global(&msg.stage, mine.as_deref(), msg.seq, msg.shape, true)?;
            // The other masters rebuild the POVs due at the end of that
            // operation before they come to this one.
            self.run_due(msg.seq)?;
            Ok(())
        } else if msg.seq == seq || msg.seq == seq + 1 {
            Ok(())
        } else {
            Err(internal(format!(
                "joined at operation {} from operation {seq}",
                msg.seq
            )))
        }
    }

    /// The output of this operation's global stage at a master that
    /// became master after it (its predecessor died holding it).
    fn fetch_output(&self, stage: &Stage, shape: Shape) -> Result<Vec<u8>, Error> {
        let seq = self.st.borrow().seq;
        if let Some((s, out)) = &self.st.borrow().last {
            if *s == seq {
                return Ok(out.clone());
            }
        }
        if !self.st.borrow().join_pending {
            return Err(internal("a master without this operation's output"));
        }
        let msg = self.join()?;
        if msg.seq == seq + 1 {
            return match msg.last {
                Some((s, out)) if s == seq => {
                    self.st.borrow_mut().last = Some((s, out.clone()));
                    Ok(out)
                }
                _ => Err(internal(format!(
                    "joined at operation {} without the output of {seq}",
                    msg.seq
                ))),
            };
        }
        self.catch_up(&msg, seq)?;
        self.run_global(stage, None, seq, shape, true)
    }

    /// Runs a global stage until it succeeds at every master.
    fn run_global(
        &self,
        stage: &Stage,
        mine: Option<&[u8]>,
        seq: u64,
        shape: Shape,
        keep: bool,
    ) -> Result<Vec<u8>, Error> {
        loop {
            let g = self
                .st
                .borrow()
                .global
                .clone()
                .ok_or_else(|| internal("a global stage at a non-master"))?;
            let r = self.global_once(&g, stage, mine);
            let ok = if matches!(&r, Err(e) if e.is_fault()) {
                0
            } else {
                OK
            };
            let a = g.comm.agree_detailed(ok)?;
            if a.flags & OK == OK && a.failed.is_empty() {
                let out = r?;
                if keep {
                    self.st.borrow_mut().last = Some((seq, out.clone()));
                }
                return Ok(out);
            }
            if let Err(e) = &r {
                if !e.is_fault() {
                    return r;
                }
            }
            if trace() {
                eprintln!(
                    "hier[{}/{}]: global stage of op {seq} failed",
                    self.me, self.size
                );
            }
            self.repair_global(stage, seq, shape)?;
        }
    }

    fn global_once(
        &self,
        g: &Global,
        stage: &Stage,
        mine: Option<&[u8]>,
    ) -> Result<Vec<u8>, Error> {
        let groups = g.table.master.len();
        match *stage {
            Stage::Sync => Ok(Vec::new()),
            Stage::Allgather(block) => {
                let zero = vec![0u8; block];
                let send = match mine {
                    Some(m) if m.len() == block => m,
                    Some(_) => return Err(internal("a global block of the wrong size")),
                    None => &zero,
                };
                let mut all = vec![0u8; g.comm.size() * block];
                g.comm.allgather(send, &mut all)?;
                let mut out = vec![0u8; groups * block];
                for (r, &grp) in g.groups.iter().enumerate() {
                    out[grp * block..(grp + 1) * block]
                        .copy_from_slice(&all[r * block..(r + 1) * block]);
                }
                Ok(out)
            }
            Stage::Bcast(len, root_group) => {
                let mut buf = vec![0u8; len];
                let root = match g.rank_of_group(root_group) {
                    Some(r) => r,
                    // The root group is gone: nothing to send (status 0).
                    None => return Ok(buf),
                };
                if g.comm.rank().index() == root {
                    if let Some(m) = mine {
                        if m.len() == len {
                            buf.copy_from_slice(m);
                        }
                    }
                }
                g.comm.bcast(&mut buf, root)?;
                Ok(buf)
            }
        }
    }

    /// Repairs the global communicator: shrink, then the groups that lost
    /// their master join through their POV's bridge.
    fn repair_global(&self, stage: &Stage, seq: u64, shape: Shape) -> Result<(), Error> {
        let g = self
            .st
            .borrow()
            .global
            .clone()
            .ok_or_else(|| internal("a global repair at a non-master"))?;
        let _ = g.comm.revoke();
        let (comm, vals) = g.comm.shrink_gather(self.group as u64)?;
        let _ = g.comm.free();
        let mut groups: Vec<usize> = vals.iter().flatten().map(|&v| v as usize).collect();
        let mut table = g.table.clone();
        let lost: Vec<usize> = g
            .groups
            .iter()
            .copied()
            .filter(|x| !groups.contains(x))
            .collect();
        {
            let mut st = self.st.borrow_mut();
            st.global_repairs += 1;
            for &x in &lost {
                if let Some(m) = table.master[x] {
                    st.failed.push(m);
                }
            }
            st.failed.sort_unstable();
            st.failed.dedup();
        }
        let mut comm = comm;
        for x in lost {
            table.master[x] = None;
            let bridge = table.bridge[x];
            let Some(b) = bridge.and_then(|b| {
                table
                    .master
                    .iter()
                    .position(|&m| m == Some(b))
                    .and_then(|bg| groups.iter().position(|&y| y == bg))
            }) else {
                // Its bridge died too: the group cannot come back.
                if trace() {
                    eprintln!(
                        "hier[{}/{}]: group {x} lost with its bridge",
                        self.me, self.size
                    );
                }
                continue;
            };
            let at_bridge = comm.rank().index() == b;
            // The bridge shrinks the group's POV with the group's
            // survivors and tells the masters whether anyone is left.
            let mut found = [0u8; 1];
            let mut pov = None;
            if at_bridge {
                let bp = self
                    .st
                    .borrow()
                    .bridge_pov
                    .clone()
                    .ok_or_else(|| internal("a bridge without its POV"))?;
                let (pc, pv) = bp.comm.shrink_gather(0)?;
                let palive = survivors(&bp.to_orig, &pv);
                found[0] = u8::from(palive.iter().any(|o| o / self.k == x));
                let sub = Sub {
                    comm: pc,
                    to_orig: palive,
                };
                self.st.borrow_mut().bridge_pov = Some(sub.clone());
                pov = Some(sub);
            }
            if trace() {
                eprintln!(
                    "hier[{}/{}]: group {x}: bridge {b} (me {at_bridge})",
                    self.me, self.size
                );
            }
            comm.bcast(&mut found, b)
                .map_err(|e| unrepairable(&format!("join announcement: {e}")))?;
            if trace() {
                eprintln!(
                    "hier[{}/{}]: group {x}: found {}",
                    self.me, self.size, found[0]
                );
            }
            if found[0] == 0 {
                continue;
            }
            let (peer, newm) = match &pov {
                Some(p) => (
                    p.comm.clone(),
                    p.to_orig.iter().position(|o| o / self.k == x),
                ),
                None => (comm.clone(), Some(0)),
            };
            let inter = comm
                .intercomm_create(
                    Rank(b as i32),
                    &peer,
                    Rank(newm.unwrap_or(0) as i32),
                    TAG_JOIN,
                )
                .map_err(|e| unrepairable(&format!("join: {e}")))?;
            if at_bridge {
                let last = self.st.borrow().last.clone();
                let msg = Join {
                    seq,
                    stage: stage.clone(),
                    shape,
                    last,
                    groups: groups.clone(),
                    table: table.clone(),
                };
                inter
                    .send_value(&msg, Rank(0), TAG_JOIN)
                    .map_err(|e| unrepairable(&format!("join message: {e}")))?;
            }
            let merged = inter
                .merge(false)
                .map_err(|e| unrepairable(&format!("join merge: {e}")))?;
            let _ = inter.free();
            let _ = comm.free();
            comm = merged;
            groups.push(x);
        }
        // Every master agrees on who the new masters are: the merged
        // communicator's members in order.
        let mut all = vec![0u64; comm.size()];
        comm.allgather(&[self.me as u64], &mut all)
            .map_err(|e| unrepairable(&format!("table update: {e}")))?;
        for (r, &grp) in groups.iter().enumerate() {
            table.master[grp] = Some(all[r] as usize);
        }
        let due = due_list(&table, seq, Some(shape));
        let mut st = self.st.borrow_mut();
        st.due = due;
        if trace() {
            eprintln!(
                "hier[{}]: global repaired at op {seq}: groups {groups:?} masters {:?} due {:?}",
                self.me, table.master, st.due
            );
        }
        st.global = Some(Global {
            comm,
            groups,
            table,
        });
        Ok(())
    }

    /// Rebuilds the POVs due at the end of this operation.
    fn end_op(&self) -> Result<(), Error> {
        let (seq, refresh_here, master) = {
            let mut st = self.st.borrow_mut();
            let r = std::mem::take(&mut st.refresh_here);
            (st.seq, r, st.local.comm.rank().0 == 0)
        };
        if master {
            self.run_due(seq)?;
        } else if refresh_here {
            self.refresh_member()?;
        }
        let mut st = self.st.borrow_mut();
        st.due.retain(|&(_, at)| at > seq);
        st.seq += 1;
        Ok(())
    }

    /// A master's part in the POV rebuilds due at the end of operation
    /// `seq`, in group order (the same order at every master).
    fn run_due(&self, seq: u64) -> Result<(), Error> {
        let mine: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            let m = st
                .due
                .iter()
                .filter(|&&(_, at)| at == seq)
                .map(|&(p, _)| p)
                .collect();
            st.due.retain(|&(_, at)| at != seq);
            m
        };
        for p in mine {
            self.refresh(p)?;
        }
        Ok(())
    }

    /// A master's part in rebuilding group `p`'s POV: as its master, or as
    /// its new bridge; the other masters update their table.
    fn refresh(&self, p: usize) -> Result<(), Error> {
        let g = self
            .st
            .borrow()
            .global
            .clone()
            .ok_or_else(|| internal("a refresh at a master outside the global communicator"))?;
        let succ = g.table.succ(p).and_then(|s| g.table.master[s]);
        let mp = g.table.master[p];
        let (Some(b), Some(mp)) = (succ, mp) else {
            return Ok(());
        };
        let rank_of = |o: usize| {
            g.table
                .master
                .iter()
                .position(|&m| m == Some(o))
                .and_then(|grp| g.rank_of_group(grp))
        };
        let fail = |e: pertinax::Error| unrepairable(&format!("POV rebuild: {e}"));
        if trace() {
            eprintln!(
                "hier[{}/{}]: POV of group {p}: master {mp}, bridge {b}",
                self.me, self.size
            );
        }
        if self.me == mp {
            let l = self.st.borrow().local.clone();
            let br = rank_of(b).ok_or_else(|| internal("bridge not in the global communicator"))?;
            let inter = l
                .comm
                .intercomm_create(Rank(0), &g.comm, Rank(br as i32), TAG_REFRESH)
                .map_err(fail)?;
            inter
                .send_value(&l.to_orig, Rank(0), TAG_REFRESH)
                .map_err(fail)?;
            let comm = inter.merge(false).map_err(fail)?;
            let _ = inter.free();
            let mut to_orig = l.to_orig.clone();
            to_orig.push(b);
            let mut st = self.st.borrow_mut();
            let _ = st.pov.comm.free();
            st.pov = Sub { comm, to_orig };
        } else if self.me == b {
            let mr =
                rank_of(mp).ok_or_else(|| internal("master not in the global communicator"))?;
            let inter = self
                .solo
                .intercomm_create(Rank(0), &g.comm, Rank(mr as i32), TAG_REFRESH)
                .map_err(fail)?;
            let (mut to_orig, _): (Vec<usize>, Status) =
                inter.recv_value(Rank(0), TAG_REFRESH).map_err(fail)?;
            let comm = inter.merge(true).map_err(fail)?;
            let _ = inter.free();
            to_orig.push(b);
            let mut st = self.st.borrow_mut();
            if let Some(old) = st.bridge_pov.take() {
                let _ = old.comm.free();
            }
            st.bridge_pov = Some(Sub { comm, to_orig });
        }
        let mut st = self.st.borrow_mut();
        if let Some(gl) = st.global.as_mut() {
            gl.table.bridge[p] = Some(b);
        }
        Ok(())
    }

    /// A non-master's part in rebuilding its group's POV.
    fn refresh_member(&self) -> Result<(), Error> {
        let l = self.st.borrow().local.clone();
        if trace() {
            eprintln!("hier[{}/{}]: rebuilding my group's POV", self.me, self.size);
        }
        let fail = |e: pertinax::Error| unrepairable(&format!("POV rebuild: {e}"));
        let inter = l
            .comm
            .intercomm_create(Rank(0), &l.comm, Rank(0), TAG_REFRESH)
            .map_err(fail)?;
        let comm = inter.merge(false).map_err(fail)?;
        let _ = inter.free();
        let mut to_orig = l.to_orig.clone();
        // The bridge is the last rank; members need only know that it is
        // not one of theirs.
        to_orig.push(usize::MAX);
        let mut st = self.st.borrow_mut();
        let _ = st.pov.comm.free();
        st.pov = Sub { comm, to_orig };
        Ok(())
    }

    /// Original rank → (group, position) bitmap helpers.
    fn group_members(&self, g: usize) -> std::ops::Range<usize> {
        g * self.k..((g + 1) * self.k).min(self.size)
    }
}

/// The POV rebuilds due after a repair at operation `seq`: a group with a
/// stage after the global one in this operation rebuilds at its end,
/// others at the end of the next one (`shape` `None`: the next one).
fn due_list(table: &Table, seq: u64, shape: Option<Shape>) -> Vec<(usize, u64)> {
    table
        .stale()
        .into_iter()
        .map(|p| {
            let at = match shape {
                Some(s) if s.post(p) => seq,
                _ => seq + 1,
            };
            (p, at)
        })
        .collect()
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
    /// first `nb` data bytes).
    fn reduce_local<T: Pod>(&self, send: &[T], op: &Op<T>) -> Result<Option<Vec<u8>>, Error> {
        let n = send.len();
        let nb = std::mem::size_of_val(send);
        self.local_stage(|l| {
            let mut part = vec![T::zeroed(); n];
            l.comm.reduce(send, &mut part, op, 0)?;
            if l.comm.rank().0 != 0 {
                return Ok(None);
            }
            let mut b = vec![0u8; reduced_len(self.k, nb)];
            b[0] = 1;
            for &o in &l.to_orig {
                b[1 + o - self.group * self.k] = 1;
            }
            b[1 + self.k..1 + self.k + nb].copy_from_slice(bytemuck::cast_slice(&part));
            Ok(Some(b))
        })
    }

    /// The first stage of gathers: every group gathers to its master.
    fn gather_local(&self, send: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let n = send.len();
        self.local_stage(|l| {
            if l.comm.rank().0 == 0 {
                let mut all = vec![0u8; l.comm.size() * n];
                l.comm.gather(send, &mut all, 0)?;
                Ok(Some(self.make_block(l, &all, n)))
            } else {
                l.comm.gather(send, &mut [], 0)?;
                Ok(None)
            }
        })
    }

    /// The global stage of the current master with `mine`, or `None` at a
    /// non-master.
    fn masters(
        &self,
        stage: &Stage,
        shape: Shape,
        mine: Option<&[u8]>,
    ) -> Result<Option<Vec<u8>>, Error> {
        if self.is_master() {
            Ok(Some(self.global_stage(stage, shape, mine)?))
        } else {
            Ok(None)
        }
    }

    /// The last stage: the master spreads `len` bytes of the global output
    /// (made by `make` from it) to its group.
    fn spread_local(
        &self,
        stage: &Stage,
        shape: Shape,
        out: Option<Vec<u8>>,
        len: usize,
        make: impl Fn(&[u8]) -> Result<Vec<u8>, Error>,
    ) -> Result<Vec<u8>, Error> {
        let mut out = out;
        self.local_stage(|l| {
            let mut buf = if l.comm.rank().0 == 0 {
                if out.is_none() {
                    out = Some(self.fetch_output(stage, shape)?);
                }
                let o = out.as_deref().unwrap_or(&[]);
                make(o)?
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
        stage: &Stage,
        shape: Shape,
        out: Option<Vec<u8>>,
        root: usize,
        make: impl Fn(&[u8]) -> Result<Vec<u8>, Error>,
    ) -> Result<Option<Vec<u8>>, Error> {
        let mut out = out;
        self.local_stage(|l| {
            let Some(rl) = l.rank_of(root) else {
                return Ok(None);
            };
            let me = l.comm.rank().index();
            if me == 0 {
                if out.is_none() {
                    out = Some(self.fetch_output(stage, shape)?);
                }
                let made = make(out.as_deref().unwrap_or(&[]))?;
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
        let shape = Shape::All;
        self.local_stage(|_| Ok(()))?;
        self.masters(&Stage::Sync, shape, None)?;
        self.local_stage(|l| {
            // A master that took over after the global stage makes sure
            // the masters' synchronization took place (it joins).
            if l.comm.rank().0 == 0 && self.st.borrow().join_pending {
                self.fetch_output(&Stage::Sync, shape)?;
            }
            Ok(())
        })?;
        self.end_op()?;
        Ok(Outcome::default())
    }

    fn bcast<T: Pod>(&self, buf: &mut [T], root: impl Into<Rank>) -> Result<Outcome, Error> {
        let root = self.check_rank(root.into())?;
        let rg = root / self.k;
        let len = 1 + std::mem::size_of_val(buf);
        let shape = Shape::AllBut(rg);
        let stage = Stage::Bcast(len, rg);
        let payload = if self.group == rg {
            let p = self.local_stage(|l| {
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
            let seq = self.st.borrow().seq;
            self.st.borrow_mut().held = Some((seq, p.clone()));
            self.masters(&stage, shape, Some(&p))?;
            p
        } else {
            let out = self.masters(&stage, shape, None)?;
            self.spread_local(&stage, shape, out, len, |o| Ok(o.to_vec()))?
        };
        self.end_op()?;
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
        let shape = Shape::Only(rg);
        let stage = Stage::Allgather(reduced_len(self.k, nb));
        let block = self.reduce_local(send, op)?;
        let out = self.masters(&stage, shape, block.as_deref())?;
        let got = if self.group == rg {
            self.hand_to_root(&stage, shape, out, root, |o| self.combine(o, n, op))?
        } else {
            None
        };
        self.end_op()?;
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
        let shape = Shape::All;
        let stage = Stage::Allgather(reduced_len(self.k, nb));
        let block = self.reduce_local(send, op)?;
        let out = self.masters(&stage, shape, block.as_deref())?;
        let r = self.spread_local(&stage, shape, out, self.size + nb, |o| {
            self.combine(o, n, op)
        })?;
        self.end_op()?;
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
        let shape = Shape::Only(rg);
        let stage = Stage::Allgather(block_len(self.k, nb));
        let block = self.gather_local(bytemuck::cast_slice(send))?;
        let out = self.masters(&stage, shape, block.as_deref())?;
        let got = if self.group == rg {
            self.hand_to_root(&stage, shape, out, root, |o| Ok(self.unblock(o, nb)))?
        } else {
            None
        };
        self.end_op()?;
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
        let shape = Shape::All;
        let stage = Stage::Bcast(len, rg);
        // The root hands its data to its master.
        let first = if self.group == rg {
            self.local_stage(|l| {
                let Some(rl) = l.rank_of(root) else {
                    return Ok(l.comm.rank().0 == 0).map(|m| m.then(|| vec![0u8; len]));
                };
                let me = l.comm.rank().index();
                let mine = || {
                    let mut p = vec![1u8; 1];
                    p.extend_from_slice(bytemuck::cast_slice(send));
                    p
                };
                if me == 0 && rl == 0 {
                    Ok(Some(mine()))
                } else if me == rl {
                    l.comm.send(&mine(), 0, TAG_ROOT)?;
                    Ok(None)
                } else if me == 0 {
                    let (v, _) = l.comm.recv_vec::<u8>(rl, TAG_ROOT)?;
                    Ok(Some(v))
                } else {
                    Ok(None)
                }
            })?
        } else {
            None
        };
        let out = self.masters(&stage, shape, first.as_deref())?;
        let status = std::cell::Cell::new(0u8);
        let mut out = out;
        self.local_stage(|l| {
            let mut st = [0u8; 1];
            let mut tmp = Vec::new();
            if l.comm.rank().0 == 0 {
                if out.is_none() {
                    out = Some(self.fetch_output(&stage, shape)?);
                }
                let o = out.as_deref().unwrap_or(&[]);
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
        self.end_op()?;
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
        let shape = Shape::All;
        let stage = Stage::Allgather(block_len(self.k, nb));
        let block = self.gather_local(bytemuck::cast_slice(send))?;
        let out = self.masters(&stage, shape, block.as_deref())?;
        let r = self.spread_local(&stage, shape, out, self.size + self.size * nb, |o| {
            Ok(self.unblock(o, nb))
        })?;
        self.end_op()?;
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
        // A hierarchical barrier first: a master failure that only its
        // group has seen is repaired before every rank meets on the full
        // communicator (its group would wait in the repair otherwise).
        Communicator::barrier(self)?;
        let (comm, vals) = self.full.shrink_gather(0)?;
        let map = survivors(&self.full_to_orig, &vals);
        self.end_op()?;
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
                self.end_op()?;
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
    fn the_stale_povs_are_those_whose_bridge_is_not_the_next_master() {
        let t = Table {
            master: vec![Some(0), Some(5), Some(6)],
            bridge: vec![Some(3), Some(6), Some(0)],
        };
        assert_eq!(t.stale(), vec![0]);
        let t = Table {
            master: vec![Some(0), None, Some(6)],
            bridge: vec![Some(3), Some(6), Some(0)],
        };
        assert_eq!(t.succ(0), Some(2));
        assert_eq!(t.stale(), vec![0]);
    }
}
