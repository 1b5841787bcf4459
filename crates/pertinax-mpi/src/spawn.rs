//! Process ids across MPI worlds, intercommunicators, and dynamic
//! processes (`MPI_Comm_spawn`) for the MPI backend.
//!
//! # Process ids
//!
//! A process id is `(world << 20) | rank`: `rank` its rank in its own
//! `MPI_COMM_WORLD`, `world` 0 for the processes started by `mpirun`, and
//! for processes started by `MPI_Comm_spawn` the job number Open MPI gave
//! their world (the `N` of `PMIX_NAMESPACE=<prterun-...>@N`, unique in the
//! job and never 0). So the original processes keep process id = world
//! rank. A process turns a list of process ids into an MPI group
//! ([`Procs::group_of`]) from the groups it knows: its own world's, and
//! the remote groups of the spawn intercommunicators it took part in,
//! whose members' ids it learnt by an allgather on that intercommunicator.
//! Communicators over such groups are made by
//! `MPI_Comm_create_from_group`, so they may span several worlds, when no
//! parent communicator holds them: in Open MPI 5.0.11 that call never
//! returns, or crashes, when a member of the group is dead, so every
//! communicator that has a parent is split from it instead (dup, split,
//! create, merge: [`crate::backend::OwnCommunicators::derive`]; a spawn's: from its merge;
//! a shrink's: `MPIX_Comm_shrink`; a spawn's first step: split from the
//! spawning communicator). What is left made from a group: an
//! intercommunicator over a peer communicator, and a communicator whose
//! parent's MPI communicators could not be made.
//!
//! # Intercommunicators
//!
//! A pertinax intercommunicator starts as an intracommunicator of both
//! groups, the group with the lower first process id first
//! (`MPI_Comm_create_from_group`; the tag names the context and both
//! groups' first members): that one is its fourth communicator, which
//! carries the agreement and the failure knowledge (`MPIX_Comm_get_failed`
//! / `ack_failed`) of both groups. Each group splits off its own part
//! (`MPI_Comm_split`), and `MPI_Intercomm_create` over the whole makes the
//! point-to-point intercommunicator, duplicated for the collective and
//! recovery contexts. (Not `MPI_Intercomm_create_from_groups`: in Open MPI
//! 5.0.11 `MPIX_Comm_revoke` of the intercommunicators it makes does not
//! reach every member.)
//!
//! # Spawn
//!
//! The member that asks ([`crate::backend::Backend::request_processes`]) only
//! records its request; every member then calls
//! [`crate::backend::Backend::await_processes`], which is collective: the members
//! make a communicator with the asker first (`MPI_Comm_split` of the
//! spawning communicator; `MPI_Comm_create_from_group` over their process
//! ids only if that one's MPI communicators could not be made) and call
//! `MPI_Comm_spawn` on it with errors
//! returned (a failed spawn, e.g. a program that cannot be run, is
//! `SpawnFailed` at every member). Then the asker broadcasts the start-up
//! assignment over the new intercommunicator (the fault plan and world
//! 0's job number in front, for [`super::tell`]), both sides allgather
//! their process ids on it, and every parent-child pair exchanges a byte
//! ([`sys::Comm::connect_remote`]: Open MPI tells a process of another
//! job's death only through their connection, made at their first
//! message). A new process finds all that in
//! [`world_start`] (`MPI_Comm_get_parent`). Both sides then merge it
//! (`MPI_Intercomm_merge`) and disconnect it: the communicator the core
//! makes next over exactly those processes (the intercommunicator of
//! [`crate::Comm::spawn`], the restored communicator of `replace_failed`)
//! is split from the merge (`MPI_Comm_split`, which returns an error when
//! a member fails), not made from a group. `replace_failed` spawns on the
//! survivors' communicator `MPIX_Comm_shrink` made
//! ([`crate::backend::OwnCommunicators::live_members`]), so a member that died after the
//! agreement is replaced too, never waited for. A failure during the spawn
//! (a member, or the new processes before the set-up) is `SpawnFailed`
//! at the members that see it, not necessarily at all of them (unlike the
//! native backend, whose answer is uniform); `replace_failed` can be
//! called again.
//!
//! # Finalize
//!
//! Open MPI's `MPI_Finalize` disconnects every communicator still held
//! that spans several worlds, with a handshake with its other members; if
//! those have freed theirs (or ended), it waits forever. So the backend
//! frees every communicator before `MPI_Finalize` (newest first).
//!
//! Open MPI 5's agreement (ERA) names an agreement by the low 16 bits of
//! the communicator's context id, which are the same (0) for every
//! communicator `MPI_Comm_create_from_group` makes: agreements on two such
//! communicators over different groups collided (`ftagree:agreement (ERA)
//! removing old agreement (0.0).1 from history, due to cycling of
//! identifiers`), a member answered from the other's history and the rest
//! waited (hangs after spawn and merge, and in `MPI_Finalize`'s shrink).
//! So an intercommunicator's agreements run on a duplicate of the
//! communicator of both groups, whose identifier is its own; checked with
//! C programs against Open MPI 5.0.11, and by `.ci/mpi-spawn` (no warning
//! left).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use pertinax_mpi_sys as sys;

use super::comms::same_members;
use super::{dups, error_of, CommState, Mpi, Trio};
use crate::backend::{Peers, ProcRequest};
use crate::error::{Error, Result};

/// Bits of a process id that hold the rank in its world.
pub(super) const RANK_BITS: u32 = 20;

/// The process id of rank `rank` of world `world`.
pub(super) fn pid(world: u32, rank: u32) -> u32 {
    (world << RANK_BITS) | (rank & ((1 << RANK_BITS) - 1))
}

/// The job number of this process's world from `PMIX_NAMESPACE`
/// (`...@N`), if there is one.
fn namespace_job() -> Option<u32> {
    super::tell::own_namespace().map(|(_, n)| n)
}

/// The processes this one can name: its world, and those met through
/// spawn intercommunicators.
#[derive(Debug)]
pub(super) struct Procs {
    /// This process's world number.
    pub(super) world: u32,
    /// The group of `MPI_COMM_WORLD`.
    world_group: sys::Group,
    /// Other processes: process id → (a group holding it, its rank there).
    others: RefCell<HashMap<u32, (sys::Group, i32)>>,
}

impl Procs {
    pub(super) fn new(world: u32) -> Result<Procs> {
        let world_group = sys::Comm::world()
            .group()
            .map_err(|c| Error::Bootstrap(format!("MPI world group: {c}")))?;
        Ok(Procs {
            world,
            world_group,
            others: RefCell::new(HashMap::new()),
        })
    }

    /// Records that the members of `group` (in rank order) have process
    /// ids `pids`.
    fn learn(&self, group: sys::Group, pids: &[u32]) {
        let mut o = self.others.borrow_mut();
        for (i, &p) in pids.iter().enumerate() {
            if p >> RANK_BITS != self.world {
                o.insert(p, (group, i as i32));
            }
        }
        if !o.is_empty() {
            // Processes of another job among this one's communicators:
            // it tells them of deaths from now on.
            super::tell::met_another_job(self.world, None);
        }
    }

    /// The MPI group of the processes `pids`, in that order.
    ///
    /// # Errors
    /// `Transport` for a process id this process never learnt, or the
    /// MPI's error.
    pub(super) fn group_of(&self, pids: &[u32]) -> Result<sys::Group> {
        let o = self.others.borrow();
        let members = pids
            .iter()
            .map(|&p| {
                if p >> RANK_BITS == self.world {
                    Ok((self.world_group, (p & ((1 << RANK_BITS) - 1)) as i32))
                } else {
                    o.get(&p).copied().ok_or_else(|| {
                        Error::Transport(format!(
                            "MPI: process id {p} (world {}, rank {}) is unknown to this process",
                            p >> RANK_BITS,
                            p & ((1 << RANK_BITS) - 1)
                        ))
                    })
                }
            })
            .collect::<Result<Vec<_>>>()?;
        sys::Group::build(&members).map_err(|c| error_of(c, None, None))
    }
}

/// A request recorded by the asker until the members spawn together.
#[derive(Debug)]
pub(super) struct Pending {
    program: Option<(String, Vec<String>)>,
    count: usize,
    payload: Vec<u8>,
}

/// The spawn status every member reads for an `MPI_Comm_spawn` that
/// failed (see `pertinax_wire::spawn`).
fn refused() -> u32 {
    pertinax_wire::spawn::SpawnStatus::Refused.code()
}

impl Mpi {
    /// The communicators of the intercommunicator `ctx` between `local`
    /// (where this process is `rank`) and `remote`.
    pub(super) fn make_inter(
        &self,
        ctx: u32,
        rank: u32,
        local: &Peers,
        remote: &Peers,
    ) -> Result<Trio> {
        let err = |c: sys::Code| error_of(c, None, None);
        let (Some(&l0), Some(&r0)) = (local.first(), remote.first()) else {
            return Err(Error::InvalidArgument(
                "an intercommunicator needs two non-empty groups".into(),
            ));
        };
        // Both groups, the one with the lower first process id first.
        let high = l0 > r0;
        let (nl, nr) = (local.len() as u32, remote.len() as u32);
        let (all, me_all): (Vec<u32>, u32) = if high {
            (
                remote.iter().chain(local.iter()).copied().collect(),
                nr + rank,
            )
        } else {
            (local.iter().chain(remote.iter()).copied().collect(), rank)
        };
        let tag = format!(
            "pertinax-inter:{ctx}:{}:{}:{}",
            l0.min(r0),
            l0.max(r0),
            all.len()
        );
        let both = match self.take_joined(&all, me_all) {
            // A spawn's intercommunicator: split from the spawn's merge.
            Some(b) => b?,
            None => {
                let mut g = self.procs.group_of(&all)?;
                let both = sys::Comm::from_group(g, &tag).map_err(err);
                let _ = g.free();
                both?
            }
        };
        both.errors_return().map_err(err)?;
        let mut mine = both.split(i32::from(high), rank as i32).map_err(err)?;
        let remote_leader = if high { 0 } else { nl as i32 };
        let base = mine.intercomm_create(0, both, remote_leader, 7);
        let _ = mine.free();
        let mut base = base.map_err(err)?;
        // The agreements run on a duplicate of `both`, never on `both`
        // itself: Open MPI 5's agreement (ERA) names an agreement by the
        // low bits of the communicator's context id, which are the same
        // (0) for every communicator MPI_Comm_create_from_group makes, so
        // the agreements of two such communicators over different groups
        // collide ("removing old agreement (0.0).N from history, due to
        // cycling of identifiers"): a member answered from the other
        // communicator's history while the rest waited forever (the
        // hierarchical mode's second join in one stage hung). A duplicate
        // gets an identifier of its own.
        let made = dups([base, base, both]);
        let mut both = both;
        let _ = both.free();
        let [coll, rec, agr] = match made {
            Ok(d) => d,
            Err(e) => {
                let _ = base.free();
                return Err(e);
            }
        };
        let order = (0..nl + nr)
            .map(|i| match (high, i < nl) {
                (false, _) => i,
                (true, true) => nr + i,
                (true, false) => i - nl,
            })
            .collect();
        Ok(Trio {
            comms: [base, coll, rec, agr],
            rank,
            members: local.clone(),
            remote: Some(remote.clone()),
            all,
            me_all,
            order,
            acked: std::cell::Cell::new(0),
        })
    }

    /// Records the asker's request (see the module documentation).
    pub(super) fn record_request(&self, r: ProcRequest<'_>) -> Result<()> {
        let program = r
            .program
            .map(|(p, a)| (p.to_string(), a.iter().map(|s| (*s).to_string()).collect()));
        self.requests.borrow_mut().insert(
            r.stamp,
            Pending {
                program,
                count: r.count,
                payload: r.payload,
            },
        );
        Ok(())
    }

    /// The members' collective spawn (see the module documentation): the
    /// new processes' ids, or the refusal's status.
    pub(super) fn spawn_among(
        &self,
        asker: u32,
        stamp: u64,
        among: &[u32],
        parent: &CommState,
    ) -> Option<std::result::Result<Vec<u32>, u32>> {
        if !among.contains(&asker) {
            return None;
        }
        let order: Vec<u32> = std::iter::once(asker)
            .chain(among.iter().copied().filter(|&p| p != asker))
            .collect();
        let me = self.me;
        let pending = if me == asker {
            self.requests.borrow_mut().remove(&stamp)
        } else {
            None
        };
        let (cmd, args, count, mut payload) = match pending {
            Some(p) => {
                let (cmd, args) = match p.program {
                    Some(pa) => pa,
                    None => own_program(),
                };
                (cmd, args, p.count, p.payload)
            }
            None => (String::new(), Vec::new(), 0, Vec::new()),
        };
        // The survivors' communicator `live_members` made, when the spawn is
        // among exactly them with the asker first (`replace_failed`): made
        // by `MPIX_Comm_shrink`, it holds no member known dead, over which
        // `MPI_Comm_create_from_group` would never return or crash.
        let survivors = self.survivors.take().and_then(|(ids, c)| {
            if ids == order {
                Some(c)
            } else {
                let mut c = c;
                let _ = c.free();
                None
            }
        });
        // Else the spawning communicator, when the spawn is among all its
        // members (`Comm::spawn`): split from it, with the asker first
        // (`MPI_Comm_split` returns an error when a member fails).
        let whole = |t: &&Rc<Trio>| t.remote.is_none() && same_members(&t.members, &order);
        let spawning = parent.trio.as_ref().ok().filter(whole);
        let (comm, made) = if let Some(c) = survivors {
            (c, true)
        } else if order.len() == 1 {
            (sys::Comm::self_(), false)
        } else if let Some(t) = spawning {
            let key = order.iter().position(|&p| p == me).unwrap_or(0);
            match t.comms[1].split(0, key as i32) {
                Ok(c) => (c, true),
                Err(_) => return Some(Err(refused())),
            }
        } else {
            let tag = format!("pertinax-spawn:{stamp}:{asker}:{}", order.len());
            match self.procs.group_of(&order).and_then(|mut g| {
                let c = sys::Comm::from_group(g, &tag).map_err(|c| error_of(c, None, None));
                let _ = g.free();
                c
            }) {
                Ok(c) => (c, true),
                Err(_) => return Some(Err(refused())),
            }
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // Bounds the spawn and its set-up below, up to the connections:
        // after a failure Open MPI at times never completes them.
        let bound = super::watchdog::spawn_guard();
        let spawned = comm.spawn(&cmd, &args, count, 0);
        if made {
            let mut c = comm;
            let _ = c.free();
        }
        let inter = match spawned {
            Ok(i) => i,
            Err(_) => return Some(Err(refused())),
        };
        if me == asker {
            crate::inject::fault_point("ft.spawn.started");
        }
        let _ = inter.errors_return();
        // The assignment: its length, then its bytes, from the asker.
        let root = if me == asker {
            sys::root()
        } else {
            sys::proc_null()
        };
        // The asker's fault plan goes first: Open MPI does not hand
        // `mpirun -x` variables to spawned processes, and a plan given to
        // the job must reach them as it does under `pertinax run` (and
        // their own spawns too: a spawned asker hands on what it inherited).
        if me == asker {
            payload = frame_faults(
                super::tell::origin_job(self.procs.world),
                crate::inject::job_plan(),
                payload,
            );
        }
        let mut len = (payload.len() as u64).to_le_bytes();
        // (The other members' buffers are not read, but Open MPI refuses
        // an empty one.)
        if me != asker {
            payload = vec![0];
        }
        if inter.bcast(&mut len, root).is_err() || inter.bcast(&mut payload, root).is_err() {
            return given_up(inter);
        }
        let n = match inter.remote_size() {
            Ok(n) => usize::try_from(n).unwrap_or(0),
            Err(_) => return given_up(inter),
        };
        let mut kids = vec![0u32; n];
        if inter.allgather_u32(me, &mut kids).is_err() {
            return given_up(inter);
        }
        match inter.remote_group() {
            Ok(g) => self.procs.learn(g, &kids),
            Err(_) => return given_up(inter),
        }
        // Every parent-child pair connected while all are alive (see
        // `sys::Comm::connect_remote`): else Open MPI never tells a
        // parent of a child's death, nor a child of a parent's, when the
        // two had exchanged nothing yet.
        if inter.connect_remote().is_err() {
            return given_up(inter);
        }
        drop(bound);
        // Parents first, then the new processes (see `Child::joined`).
        let ids = order.iter().chain(&kids).copied().collect();
        let merged = inter.merge(false).ok();
        if let Some((_, mut old)) = self.joined.replace(merged.map(|m| (ids, m))) {
            let _ = old.free();
        }
        // Else the children wait for it in `MPI_Finalize`, after the
        // parents have gone.
        let mut inter = inter;
        let _ = inter.disconnect();
        Some(Ok(kids))
    }
}

/// The tag of the parents' notice that they gave a spawn up, on its
/// intercommunicator (the connections' bytes use tag 0).
const GIVEN_UP_TAG: i32 = 1;

/// A spawn given up after its intercommunicator was made: revoked, so
/// that the new processes, still in their set-up, end at once
/// ([`orphaned`]) instead of at their bound (Open MPI does not tell them
/// of a parent's death before they are connected to it). A notice goes
/// first ([`GIVEN_UP_TAG`], see [`sys::Comm::notify_remote`]): Open MPI
/// drops the revoke at a new process still in `MPI_Init`, and the notice
/// makes that process revoke the communicator itself once it has it.
fn given_up(inter: sys::Comm) -> Option<std::result::Result<Vec<u32>, u32>> {
    let _ = inter.notify_remote(GIVEN_UP_TAG, std::time::Duration::from_secs(2));
    let _ = inter.revoke();
    Some(Err(refused()))
}

/// The start-up payload with what the parents hand on in front: world
/// 0's job number (4 bytes, little-endian; `u32::MAX` if unknown: see
/// [`super::tell`]), then the fault plan (`PERTINAX_FAULTS`): its length
/// (4 bytes; `u32::MAX` for none), then its bytes.
fn frame_faults(origin: Option<u32>, faults: Option<String>, payload: Vec<u8>) -> Vec<u8> {
    let f = faults.unwrap_or_default();
    let len = if f.is_empty() {
        u32::MAX
    } else {
        u32::try_from(f.len()).unwrap_or(u32::MAX)
    };
    let f = if len == u32::MAX { "" } else { f.as_str() };
    let mut out = Vec::with_capacity(8 + f.len() + payload.len());
    out.extend_from_slice(&origin.unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(f.as_bytes());
    out.extend_from_slice(&payload);
    out
}

/// What [`frame_faults`] framed: world 0's job number, the plan, and the
/// payload; `None` if malformed.
type Unframed = (Option<u32>, Option<String>, Vec<u8>);

/// [`frame_faults`] undone; `None` if malformed.
fn unframe_faults(mut framed: Vec<u8>) -> Option<Unframed> {
    let origin = u32::from_le_bytes(framed.get(..4)?.try_into().ok()?);
    let origin = (origin != u32::MAX).then_some(origin);
    let len = u32::from_le_bytes(framed.get(4..8)?.try_into().ok()?);
    if len == u32::MAX {
        return Some((origin, None, framed.split_off(8)));
    }
    let end = 8 + usize::try_from(len).ok()?;
    let plan = String::from_utf8(framed.get(8..end)?.to_vec()).ok()?;
    Some((origin, Some(plan), framed.split_off(end)))
}

/// The program this process runs and its arguments (for replacements).
fn own_program() -> (String, Vec<String>) {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .or_else(|_| std::env::args().next().ok_or(()))
        .unwrap_or_default();
    (exe, std::env::args().skip(1).collect())
}

/// A spawned process's assignment bytes and its parents' process ids.
type Assignment = (Vec<u8>, Vec<u32>);

/// What a process started by `MPI_Comm_spawn` learns from its parents.
pub(super) struct Child {
    /// Its world's process ids, and the assignment's bytes.
    pub(super) pids: Vec<u32>,
    pub(super) payload: Vec<u8>,
    /// The merge of the spawn's intercommunicator (parents, then this
    /// world) and its members' process ids: the communicator the
    /// assignment makes of exactly them (`replace_failed`'s restored
    /// communicator, a spawn's intercommunicator) is split from it, not
    /// made from a group (see the module documentation).
    pub(super) joined: Option<(Vec<u32>, sys::Comm)>,
}

/// The processes this one can name and, for a process started by
/// `MPI_Comm_spawn`, its world's process ids and its assignment (see the
/// module documentation).
///
/// # Errors
/// `Bootstrap` when the parents' data cannot be read, or a spawned world
/// has no job number to name its processes by.
pub(super) fn world_start(rank: u32, size: u32) -> Result<(Procs, Option<Child>)> {
    let boot = |what: &str, c: sys::Code| {
        if matches!(
            c.kind(),
            sys::Kind::ProcFailed | sys::Kind::ProcFailedPending | sys::Kind::Revoked
        ) {
            orphaned(what, c)
        }
        Error::Bootstrap(format!("MPI spawned process {what}: {c}"))
    };
    let parent = sys::parent().map_err(|c| boot("parent", c))?;
    if parent.is_null() {
        return Ok((Procs::new(0)?, None));
    }
    parent.errors_return().map_err(|c| boot("errhandler", c))?;
    let world = match namespace_job() {
        Some(n) if n > 0 && n < (1 << (32 - RANK_BITS)) => n,
        _ => {
            return Err(Error::Bootstrap(
                "MPI spawned process: PMIX_NAMESPACE has no `@N` job number to name this world's processes by"
                    .into(),
            ))
        }
    };
    let procs = Procs::new(world)?;
    // The parents' notice that they gave the spawn up (see `given_up`):
    // when it comes, this process revokes the communicator itself, which
    // ends the set-up call it waits in. Looked for in MPI's progress while
    // the calls below block (Open MPI's hook) and before each of them.
    let notice = RefCell::new(
        sys::Op::recv(
            sys::RecvData::Owned(Box::new([0u8])),
            sys::any_source(),
            GIVEN_UP_TAG,
            parent,
        )
        .ok(),
    );
    let look = || {
        // Busy when MPI's progress runs this from inside its own test.
        let Ok(mut n) = notice.try_borrow_mut() else {
            return false;
        };
        let seen = matches!(n.as_mut().map(sys::Op::test), Some(Ok(Some(_)) | Err(_)));
        if seen {
            n.take();
            drop(n);
            let _ = parent.revoke();
        }
        seen
    };
    // Each step's error is dealt with (`boot`) once the hook and the
    // notice are gone.
    let set_up = || -> std::result::Result<Assignment, (&str, sys::Code)> {
        look();
        let mut len = [0u8; 8];
        parent.bcast(&mut len, 0).map_err(|c| ("assignment", c))?;
        // An assignment too long for this process is a failed set-up.
        let len = usize::try_from(u64::from_le_bytes(len))
            .map_err(|_| ("assignment's length", sys::Code(-1)))?;
        let mut payload = vec![0u8; len];
        look();
        parent
            .bcast(&mut payload, 0)
            .map_err(|c| ("assignment", c))?;
        let n = parent.remote_size().map_err(|c| ("parents", c))?;
        let mut parents = vec![0u32; usize::try_from(n).unwrap_or(0)];
        look();
        parent
            .allgather_u32(pid(world, rank), &mut parents)
            .map_err(|c| ("parents' ids", c))?;
        // The parents' `connect_remote` (see `spawn_among`).
        look();
        parent
            .connect_remote()
            .map_err(|c| ("connection to the parents", c))?;
        Ok((payload, parents))
    };
    let set_up = sys::with_progress(&look, set_up);
    // Connected to every parent now: Open MPI reports a parent's death.
    if let Some(mut op) = notice.borrow_mut().take() {
        let _ = op.cancel();
    }
    let (payload, parents) = set_up.map_err(|(what, c)| boot(what, c))?;
    let (origin, faults, payload) = unframe_faults(payload)
        .ok_or_else(|| Error::Bootstrap("MPI spawned process: malformed assignment".into()))?;
    // Connected to processes of another job (its parents): it tells them
    // of deaths from now on.
    super::tell::met_another_job(world, origin);
    if let Some(f) = faults {
        crate::inject::inherit(f);
    }
    let g = parent.remote_group().map_err(|c| boot("parents", c))?;
    procs.learn(g, &parents);
    let pids: Vec<u32> = (0..size).map(|r| pid(world, r)).collect();
    let joined = parent
        .merge(true)
        .ok()
        .map(|m| (parents.iter().chain(&pids).copied().collect(), m));
    let mut parent = parent;
    let _ = parent.disconnect();
    let child = Child {
        pids,
        payload,
        joined,
    };
    Ok((procs, Some(child)))
}

/// Ends a spawned process whose parents failed during its set-up (`what`
/// failed with `c`): they have given the spawn up (`SpawnFailed`, or dead),
/// so it has no assignment and nothing to do. It finalizes (bounded) and
/// ends quietly with 0, as
/// under `pertinax run` a process whose requester failed is started with
/// the launcher's copy of its assignment or, with `--on-parent-failure
/// end`, killed; never an `init` error for a process no one waits for.
fn orphaned(what: &str, c: sys::Code) -> ! {
    eprintln!(
        "pertinax: a spawned process: its parents failed before its set-up ended ({what}: {c}); \
         it has nothing to do and ends (exit code 0)"
    );
    // Finalized (bounded), so that Open MPI's launcher does not take the
    // end for an abnormal termination.
    let _ = super::finalize::finalize();
    pertinax_os::process::exit_now(0)
}

#[cfg(test)]
mod tests {
    use super::{frame_faults, unframe_faults};

    #[test]
    fn the_fault_plan_travels_in_front_of_the_assignment() {
        let p = vec![1u8, 2, 3];
        let f = frame_faults(Some(1), Some("task@2".into()), p.clone());
        assert_eq!(
            unframe_faults(f),
            Some((Some(1), Some("task@2".into()), p.clone()))
        );
        assert_eq!(
            unframe_faults(frame_faults(None, None, p.clone())),
            Some((None, None, p.clone()))
        );
        assert_eq!(
            unframe_faults(frame_faults(Some(7), Some(String::new()), p.clone())),
            Some((Some(7), None, p))
        );
        assert_eq!(unframe_faults(vec![1, 0, 0, 0, 9, 0, 0, 0, b'x']), None);
        assert_eq!(unframe_faults(vec![1, 2]), None);
        assert_eq!(unframe_faults(vec![1, 0, 0, 0, 1, 2]), None);
    }
}
