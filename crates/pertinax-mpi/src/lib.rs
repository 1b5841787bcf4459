//! The MPI backend (cargo feature `mpi`): pertinax over an MPI with the
//! ULFM extension (Open MPI 5 started with `mpirun --with-ft ulfm`, or
//! `srun --mpi=pmix`), through `pertinax-mpi-sys`.
//!
//! Chosen at start-up ([`chosen`]): `PERTINAX_BACKEND=mpi|native`, else
//! the environment of an MPI launcher (Open MPI's `OMPI_COMM_WORLD_SIZE`,
//! PMIx's `PMIX_RANK`, Slurm's `SLURM_PROCID` with PMI/PMIx variables),
//! unless `pertinax run` started the process.
//!
//! # Mapping
//!
//! - Process ids are `(world << 20) | rank`: for the processes `mpirun`
//!   started (world 0) their ranks of `MPI_COMM_WORLD`; spawned worlds
//!   are numbered by Open MPI's job number (see [`spawn`]).
//! - A communicator (context `ctx`, a multiple of 4) is four MPI
//!   communicators with `MPI_ERRORS_RETURN`: `ctx` (point-to-point),
//!   `ctx + 1` (collectives), `ctx + 2` (recovery traffic, never revoked);
//!   with MPI's own collectives (the default) `ctx + 1` is the same MPI
//!   communicator as `ctx`, since MPI never matches a collective with a
//!   point-to-point message ([`Mpi::trio_over`]).
//!   The world's are duplicates of `MPI_COMM_WORLD`, the self
//!   communicator's of `MPI_COMM_SELF`; any other is made in
//!   [`Backend::attach`] by `MPI_Comm_create_from_group` over the group
//!   of its members' process ids (collective over its members only, who
//!   may belong to several worlds; `MPI_Comm_create_group` over the world
//!   fails once any process of the world failed), then used through
//!   duplicates only (Open MPI 5.0.11's revoke never reaches a member
//!   whose local index for such a communicator differs). But a
//!   communicator with a parent is made from it, since
//!   `MPI_Comm_create_from_group` over a group with a dead member never
//!   returns or crashes: dup, split, create and merge split the parent's
//!   collective communicator (`MPI_Comm_split`, [`Backend::derive`]), a
//!   shrink is `MPIX_Comm_shrink` ([`Backend::shrink_attach`]), a spawn's
//!   communicators are split from the merge of its intercommunicator (see
//!   [`spawn`]). Tokens
//!   are not needed (always 0). A fourth communicator (`ctx + 3`) carries
//!   the agreement's own messages. The ones beside the point-to-point one
//!   are `MPI_Comm_dup`s made one after the other ([`dups`]), not
//!   `MPI_Comm_idup`s started together: those overlap, but Open MPI 5.0.11
//!   aborts every survivor when a member is dead
//!   (`pertinax-mpi-sys/checks/idup.c`). Intercommunicators, spawn,
//!   `merge` and `replace_failed`: see [`spawn`].
//! - Sends are `MPI_Isend` of bytes on the context's MPI communicator
//!   with the communicator's ranks (`send_eager` copies and lets go).
//!   Receives are matched here, not posted to MPI: on every progress round
//!   the unmatched receives, in posting order, each `MPI_Improbe` a
//!   message from MPI (MPI's own order: arrival, non-overtaking) and
//!   receive it with `MPI_Imrecv`. A message too long for the buffer (or
//!   not whole elements) is consumed all the same, into a scratch buffer,
//!   and fails the receive with `Truncated` / `LengthNotMultiple`, as
//!   MPI's `MPI_ERR_TRUNCATE` does. Requests are a slab of
//!   MPI requests that own their buffers ([`pertinax_mpi_sys::Op`]); a
//!   schedule's shared cell is staged through an owned copy.
//! - Fast paths ([`fast`]): while no receive waits to be matched here and
//!   no task runs, a blocking named-source receive is `MPI_Mprobe` +
//!   `MPI_Mrecv` in one shim call (see there), a
//!   blocking send of at most 1 KiB is `MPI_Send`, and waiting for a send
//!   or a named-source receive is `MPI_Wait`: no request, copy or progress
//!   round of this backend's own.
//! - Collectives are MPI's own (`coll.rs`: `MPI_Allreduce` /
//!   `MPI_Iallreduce`, ... on the collective communicator `ctx + 1`, behind
//!   the same request keys; built-in operations as MPI's, user operations
//!   through `MPI_Op_create`). Tasks (the portable schedules) are still
//!   advanced on every progress round through [`TaskIo`], for a caller
//!   that starts one; the collective layer does not.
//! - Error classes: `MPIX_ERR_PROC_FAILED` → `ProcFailed` (for an
//!   any-source receive: `ProcFailedPending`),
//!   `MPIX_ERR_PROC_FAILED_PENDING` → `ProcFailedPending`,
//!   `MPIX_ERR_REVOKED` → `Revoked`.
//! - Revoke: `MPIX_Comm_revoke` of the point-to-point and collective
//!   communicators; failure knowledge: `MPIX_Comm_get_failed` /
//!   `MPIX_Comm_ack_failed` on the point-to-point communicator (on an
//!   intercommunicator: on the communicator of both groups).
//! - Agreement (four words and a kind per member, uniform records; see
//!   [`agree`]): `contribute` starts it on the agreement's communicator
//!   (`ctx + 3`) and returns; `poll_agreement` and every progress round
//!   advance it. A *fast round*, one `MPIX_Comm_iagree` of a word holding
//!   the record when it is small (an `agree` with flags below 2²³, or
//!   another call whose only word is its context proposal, such as a
//!   `shrink` that gathers no value), decides a healthy agreement by
//!   itself; else
//!   every member sends its record to every other, and once every receive
//!   ended, the members run `MPIX_Comm_iagree` (a fault-tolerant AND, 32
//!   members per round) on the set of members every survivor heard from;
//!   those read `Contributed`, the others `Failed`, the same everywhere.
//!   So `iagree` returns at once; a blocking agreement with nothing else
//!   of the backend's pending waits in `MPI_Wait` on the fast round
//!   (`Backend::block_on_agreement`), as C's `MPIX_Comm_agree` does.
//!   `Finalized` is never read. On an intercommunicator
//!   the agreement's communicator is a duplicate of the communicator of
//!   both groups (see [`spawn`]: Open MPI 5's ERA names an agreement by
//!   the low bits of the communicator's context id, the same for every
//!   communicator `MPI_Comm_create_from_group` makes).
//!
//! # Not yet (each answers `Unsupported` naming it, never a panic)
//!
//! Spares (`replace_failed` always spawns new processes), single-copy;
//! collectives on intercommunicators (the portable core has none
//! either). (An injected death is reported by
//! the rank itself on stderr, in the native launcher's words.)
//! Fault plans are read from the environment as on the native backend;
//! `mpirun -x PERTINAX_FAULTS=3@chunk#6` (the `--kill` grammar) or `-x
//! PERTINAX_FAULT_SEED=SEED[:COUNT[:MAX_HIT]]` give one plan to the whole
//! job, and each rank keeps its own shots (`crate::inject`).
#![cfg(feature = "mpi")]

pub(crate) use pertinax_backend as backend;
pub(crate) use pertinax_backend::{error, inject, op, types, wait};

mod agree;
mod coll;
mod fast;
mod finalize;
mod report;

mod spawn;
mod watchdog;

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use pertinax_mpi_sys::{self as sys, Kind, Op, RecvData, SendData};

use crate::backend::{
    Backend, MatchSpec, Peers, ProcRequest, Record, RecvBuf, ReqKey, SendBuf, Started, Task,
    TaskIo, Token,
};
use crate::error::{Error, RecoveryCall, Result};
use crate::types::{Rank, Status, Tag};
use crate::wait::{Backoff, Step, WaitPolicy};

/// The variable that picks the backend.
pub(crate) const BACKEND_VAR: &str = pertinax_wire::env::BACKEND;

/// Whether this process runs on MPI (see the module documentation).
///
/// # Errors
/// `Bootstrap` for a `PERTINAX_BACKEND` that is neither `native` nor `mpi`.
pub fn chosen() -> Result<bool> {
    match std::env::var(BACKEND_VAR).as_deref().map(str::trim) {
        Ok("mpi") => return Ok(true),
        Ok("native") => return Ok(false),
        Ok("") | Err(_) => {}
        Ok(other) => {
            return Err(Error::Bootstrap(format!(
                "{BACKEND_VAR}={other}: expected `native` or `mpi`"
            )))
        }
    }
    let has = |v: &str| std::env::var_os(v).is_some();
    // `pertinax run` started us: native, whatever else is around.
    if has(pertinax_wire::env::SHM_FD) || has(pertinax_wire::env::CTRL_FD) {
        return Ok(false);
    }
    let ompi = has("OMPI_COMM_WORLD_SIZE") || has("PMIX_RANK");
    let slurm = has("SLURM_PROCID") && (has("PMI_RANK") || has("PMI_FD") || has("PMIX_RANK"));
    Ok(ompi || slurm)
}

/// The MPI communicators of one pertinax communicator.
#[derive(Debug)]
struct Trio {
    /// Point-to-point, collective, recovery, and the agreement's own
    /// traffic (contexts `ctx` to `ctx + 3`). With MPI's own collectives
    /// the collective one is the point-to-point one (see
    /// [`Mpi::trio_over`]; intercommunicators keep four).
    comms: [sys::Comm; 4],
    /// This process's rank.
    rank: u32,
    /// The members' process ids.
    members: Peers,
    /// For an intercommunicator, the remote group's process ids.
    remote: Option<Peers>,
    /// The process ids by rank in `comms[3]` (the agreement's
    /// communicator: for an intercommunicator the merge of both groups),
    /// this process's rank there, and each member's rank there (group,
    /// then remote group).
    all: Vec<u32>,
    me_all: u32,
    order: Vec<u32>,
    /// How many of `MPIX_Comm_get_failed`'s list are acknowledged.
    acked: Cell<usize>,
}

impl Trio {
    /// The process ids of the members at positions `at`.
    fn ids_at(&self, at: &[usize]) -> Vec<u32> {
        at.iter()
            .map(|&i| self.members.get(i).copied().unwrap_or(u32::MAX))
            .collect()
    }

    /// Frees the MPI communicators, each once (with MPI's own collectives
    /// the collective one is the point-to-point one, see
    /// [`Mpi::trio_over`]).
    fn free(&self) {
        for (i, c) in self.comms.iter().enumerate() {
            if !self.comms[..i].contains(c) {
                let mut c = *c;
                let _ = c.free();
            }
        }
    }

    /// The communicator whose failure knowledge is the communicator's
    /// (both groups for an intercommunicator); its ranks name `all`.
    fn knowledge(&self) -> sys::Comm {
        if self.remote.is_some() {
            self.comms[3]
        } else {
            self.comms[0]
        }
    }
}

/// What the MPI backend keeps per communicator.
#[derive(Debug)]
pub struct CommState {
    /// The MPI communicators, or why they could not be made.
    trio: std::result::Result<Rc<Trio>, Error>,
}

/// A request in the slab.
#[derive(Debug)]
enum Slot {
    Free,
    Send {
        op: Op<SendData>,
        dest_rank: u32,
        forgotten: bool,
    },
    Recv {
        op: Op<RecvData>,
        /// A schedule's cell to copy into once received.
        part: Option<(crate::backend::Cell, std::ops::Range<usize>)>,
        elem: usize,
        ctx: u32,
        /// The source rank asked for, if one.
        src: Option<u32>,
        forgotten: bool,
    },
    /// A receive not matched yet: matched by this backend (matched probe
    /// in posting order), so that a message too long for it stays for a
    /// later receive.
    Posted {
        spec: MatchSpec,
        data: RecvData,
        part: Option<(crate::backend::Cell, std::ops::Range<usize>)>,
        elem: usize,
        forgotten: bool,
    },
    /// A task (a collective schedule) advanced on every progress round;
    /// `None` while it is being advanced.
    Task(Option<Box<dyn Task>>),
    /// One of MPI's own collectives (`coll.rs`).
    Coll {
        run: Box<coll::Running>,
        forgotten: bool,
    },
    Done(Result<Status>),
}

/// The MPI backend of this process.
#[derive(Debug)]
pub struct Mpi {
    /// By context (a multiple of 4): the communicators, or why they
    /// could not be made.
    comms: RefCell<BTreeMap<u32, std::result::Result<Rc<Trio>, Error>>>,
    /// Unmatched receives (slab indices) in posting order.
    posted: RefCell<std::collections::VecDeque<u32>>,
    /// Agreements started and not yet read: (context, sequence) → the
    /// agreement (`agree.rs`).
    agreed: RefCell<agree::Agreements>,
    slab: RefCell<Vec<(u32, Slot)>>,
    free: RefCell<Vec<u32>>,
    next_ctx: Cell<u32>,
    /// Tasks in the slab not finished yet (see [`fast`]).
    tasks: Cell<u32>,
    /// The last context looked up by [`Mpi::comm`] (its multiple of 4),
    /// its communicators and this process's rank: every hot call looks one
    /// up, and a hash lookup costs a tenth of a small message. Cleared by
    /// `attach` and `release`.
    last: Cell<Option<(u32, [sys::Comm; 4], u32)>>,
    policy: WaitPolicy,
    /// MPI's own collectives (else the portable schedules; see
    /// `pertinax_wire::env::MPI_COLLECTIVES`).
    own_coll: bool,
    /// This process's id.
    me: u32,
    /// The processes this one can name (see `spawn`).
    procs: spawn::Procs,
    /// Requests for processes recorded by their asker, by stamp.
    requests: RefCell<HashMap<u64, spawn::Pending>>,
    /// The survivors' communicator [`Backend::live_members`] made last
    /// (by `MPIX_Comm_shrink`) and its members' process ids: the next
    /// collective spawn among exactly them runs on it.
    survivors: RefCell<Option<(Vec<u32>, sys::Comm)>>,
    /// The merge of the last spawn's intercommunicator (parents, then the
    /// new processes) and its members' process ids: the next communicator
    /// made over exactly them is split from it (see [`spawn`]).
    joined: RefCell<Option<(Vec<u32>, sys::Comm)>>,
}

/// The error of an MPI code on communicator `comm` (for `ProcFailed`:
/// `peer` if the operation named one, else the failed members known).
fn error_of(code: sys::Code, comm: Option<sys::Comm>, peer: Option<u32>) -> Error {
    let failed = || -> Vec<Rank> {
        match (peer, comm) {
            (Some(p), _) => vec![Rank(p as i32)],
            (None, Some(c)) => c
                .get_failed()
                .map(|v| v.into_iter().map(Rank).collect())
                .unwrap_or_default(),
            (None, None) => Vec::new(),
        }
    };
    match code.kind() {
        Kind::ProcFailed => Error::ProcFailed { ranks: failed() },
        Kind::ProcFailedPending => Error::ProcFailedPending {
            ranks: comm
                .and_then(|c| c.get_failed().ok())
                .unwrap_or_default()
                .into_iter()
                .map(Rank)
                .collect(),
        },
        Kind::Revoked => Error::Revoked,
        Kind::Truncated => Error::Truncated {
            sent: 0,
            capacity: 0,
        },
        // Open MPI's non-blocking collectives (libnbc) abort their schedule
        // with `MPI_ERR_OTHER` when a peer's request fails: the
        // communicator's state says why.
        Kind::Other => match comm {
            Some(c) if c.is_revoked().unwrap_or(false) => Error::Revoked,
            Some(_) if !failed().is_empty() => Error::ProcFailed { ranks: failed() },
            _ => Error::Transport(format!("MPI: {code}")),
        },
    }
}

/// [`error_of`] for a receive or probe from `src` (`None`: any source):
/// ULFM fails a blocking any-source receive or probe with
/// `MPIX_ERR_PROC_FAILED` once a failure is not acknowledged, where the
/// backend contract (and the native backend) says `ProcFailedPending`: the
/// failure may not be the awaited sender's, and acknowledging it lets the
/// receive go on.
fn recv_error_of(code: sys::Code, comm: Option<sys::Comm>, src: Option<u32>) -> Error {
    match error_of(code, comm, src) {
        Error::ProcFailed { ranks } if src.is_none() => Error::ProcFailedPending { ranks },
        other => other,
    }
}

/// A 32-hex-digit job id, the same at every rank (from the PMIx
/// namespace, or the Slurm job).
fn job_id() -> String {
    // Spawned worlds have their own namespace (`<base>@N`): the job is
    // the base.
    let ns = std::env::var("PMIX_NAMESPACE")
        .map(|n| n.rsplit_once('@').map_or(n.clone(), |(b, _)| b.to_string()))
        .or_else(|_| std::env::var("SLURM_JOB_ID").map(|j| format!("slurm-{j}")))
        .unwrap_or_else(|_| "mpi".to_string());
    let h = |seed: u64| {
        ns.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    format!(
        "{:016x}{:016x}",
        h(0xcbf2_9ce4_8422_2325),
        h(0x8422_2325_cbf2_9ce4)
    )
}

/// Starts MPI (`MPI_Init_thread`, `MPI_ERRORS_RETURN` on the world).
///
/// # Errors
/// `Bootstrap` if MPI cannot start.
pub fn start() -> Result<Started<Mpi>> {
    let boot = |what: &str, c: sys::Code| Error::Bootstrap(format!("MPI {what}: {c}"));
    if !sys::initialized() {
        let _bound = watchdog::init_guard();
        sys::init_thread(sys::Threads::Funneled).map_err(|c| boot("init", c))?;
    }
    let w = sys::Comm::world();
    w.errors_return().map_err(|c| boot("errhandler", c))?;
    sys::Comm::self_()
        .errors_return()
        .map_err(|c| boot("errhandler", c))?;
    let rank = w.rank().map_err(|c| boot("rank", c))?;
    let size = w.size().map_err(|c| boot("size", c))?;
    let (rank, size) = (rank.max(0) as usize, size.max(1) as usize);
    let (procs, child) = spawn::world_start(rank as u32, size as u32)?;
    let me = spawn::pid(procs.world, rank as u32);
    let joined = child.as_ref().and_then(|c| c.joined.clone());
    let assigned = match child {
        None => None,
        Some(c) => {
            let a: crate::backend::Assignment = postcard::from_bytes(&c.payload).map_err(|e| {
                Error::Bootstrap(format!("MPI spawned process: its assignment: {e}"))
            })?;
            Some((c.pids, rank, a))
        }
    };
    // The wait policy counts the ranks on this node against its CPUs: not
    // the world (spread over nodes), and not this process's mask (mpirun
    // binds each rank to a core by default, which would make every rank
    // count itself oversubscribed and yield on every wait).
    let local = ["OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_LOCAL_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok())
        .unwrap_or(size);
    let cpus = pertinax_os::machine_cpus();
    Ok(Started {
        backend: Mpi {
            comms: RefCell::new(BTreeMap::new()),
            agreed: RefCell::new(agree::Agreements::default()),
            posted: RefCell::new(std::collections::VecDeque::new()),
            slab: RefCell::new(Vec::new()),
            free: RefCell::new(Vec::new()),
            next_ctx: Cell::new(8),
            tasks: Cell::new(0),
            last: Cell::new(None),
            policy: WaitPolicy::for_job(local, cpus),
            own_coll: std::env::var(pertinax_wire::env::MPI_COLLECTIVES)
                .map_or(true, |v| v != "portable"),
            me,
            procs,
            requests: RefCell::new(HashMap::new()),
            survivors: RefCell::new(None),
            joined: RefCell::new(joined),
        },
        rank,
        size,
        job_id: job_id(),
        me,
        assigned,
    })
}

impl Mpi {
    /// The communicators of context `ctx`.
    fn trio(&self, ctx: u32) -> Result<Rc<Trio>> {
        match self.comms.borrow().get(&(ctx & !3)) {
            Some(Ok(t)) => Ok(t.clone()),
            Some(Err(e)) => Err(e.clone()),
            None => Err(Error::CommFreed),
        }
    }

    /// The MPI communicator of context `ctx` (any of its four).
    fn comm(&self, ctx: u32) -> Option<(sys::Comm, u32)> {
        let base = ctx & !3;
        let (comms, rank) = match self.last.get() {
            Some((b, comms, rank)) if b == base => (comms, rank),
            _ => {
                let t = self.trio(ctx).ok()?;
                self.last.set(Some((base, t.comms, t.rank)));
                (t.comms, t.rank)
            }
        };
        comms.get((ctx & 3) as usize).map(|&c| (c, rank))
    }

    fn insert(&self, s: Slot) -> ReqKey {
        let mut slab = self.slab.borrow_mut();
        if let Some(idx) = self.free.borrow_mut().pop() {
            let e = &mut slab[idx as usize];
            e.0 = e.0.wrapping_add(1);
            e.1 = s;
            return ReqKey { idx, gen: e.0 };
        }
        slab.push((0, s));
        ReqKey {
            idx: (slab.len() - 1) as u32,
            gen: 0,
        }
    }

    /// A request already complete with `r`.
    fn done(&self, r: Result<Status>) -> ReqKey {
        self.insert(Slot::Done(r))
    }

    /// Moves a pending request to `Done` if MPI completed it; true if it
    /// did. A forgotten request that completes is freed.
    fn poll(&self, idx: u32) -> bool {
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(idx as usize) else {
            return false;
        };
        let (result, forgotten) = match &mut e.1 {
            Slot::Send {
                op,
                dest_rank,
                forgotten,
            } => {
                let r = match op.test() {
                    Ok(None) => return false,
                    Ok(Some((st, _data))) if st.error != 0 => {
                        Err(error_of(sys::Code(st.error), None, Some(*dest_rank)))
                    }
                    Ok(Some(_)) => Ok(Status {
                        source: Rank(0),
                        tag: Tag(0),
                        len: 0,
                    }),
                    Err(c) => {
                        let _ = op.wait();
                        Err(error_of(c, None, Some(*dest_rank)))
                    }
                };
                (r, *forgotten)
            }
            Slot::Recv {
                op,
                part,
                elem,
                ctx,
                src,
                forgotten,
            } => {
                let comm = self.comm(*ctx).map(|c| c.0);
                let r = match op.test() {
                    Ok(None) => return false,
                    Ok(Some((st, data))) => received(st, data, part.take(), *elem, comm, *src),
                    Err(c) => {
                        // ULFM leaves an any-source receive pending on
                        // MPIX_ERR_PROC_FAILED_PENDING; pertinax ends it:
                        // cancel, and wait until MPI gives the buffer back.
                        let _ = op.cancel();
                        let _ = op.wait();
                        Err(recv_error_of(c, comm, *src))
                    }
                };
                (r, *forgotten)
            }
            Slot::Task(t) => {
                let Some(mut task) = t.take() else {
                    return false;
                };
                drop(slab);
                let (moved, out) = task.advance(&mut Io(self));
                let mut slab = self.slab.borrow_mut();
                let Some(e) = slab.get_mut(idx as usize) else {
                    return moved;
                };
                e.1 = match out {
                    Some(r) => {
                        self.tasks.set(self.tasks.get().saturating_sub(1));
                        Slot::Done(r)
                    }
                    None => Slot::Task(Some(task)),
                };
                return moved;
            }
            Slot::Coll { run, forgotten } => match run.test() {
                None => return false,
                Some(r) => (r, *forgotten),
            },
            Slot::Posted { .. } => {
                drop(slab);
                return self.match_posted();
            }
            Slot::Free | Slot::Done(_) => return false,
        };
        if forgotten {
            e.1 = Slot::Free;
            drop(slab);
            self.free.borrow_mut().push(idx);
        } else {
            e.1 = Slot::Done(result);
        }
        true
    }
}

/// The outcome of a completed receive.
fn received(
    st: sys::Status,
    mut data: RecvData,
    part: Option<(crate::backend::Cell, std::ops::Range<usize>)>,
    elem: usize,
    comm: Option<sys::Comm>,
    src: Option<u32>,
) -> Result<Status> {
    let capacity = match &data {
        RecvData::Lent(b) => b.len(),
        RecvData::Owned(b) => b.len(),
    };
    if st.cancelled != 0 {
        return Err(Error::Cancelled);
    }
    if st.error != 0 {
        let code = sys::Code(st.error);
        if code.kind() == Kind::Truncated {
            // Open MPI's status counts what was sent; the standard
            // leaves it open, so never report less than one byte over.
            return Err(Error::Truncated {
                sent: usize::try_from(st.bytes).unwrap_or(0).max(capacity + 1),
                capacity,
            });
        }
        return Err(recv_error_of(code, comm, src));
    }
    let len = usize::try_from(st.bytes).unwrap_or(0);
    if elem > 1 && len % elem != 0 {
        return Err(Error::LengthNotMultiple { len, elem });
    }
    if let (Some((cell, range)), RecvData::Owned(b)) = (part, &mut data) {
        let n = len.min(range.len());
        let mut s = cell.borrow_mut();
        if let Some(dst) = s.bytes_mut().get_mut(range.start..range.start + n) {
            dst.copy_from_slice(&b[..n]);
        }
    }
    Ok(Status {
        source: Rank(st.source),
        tag: Tag(st.tag),
        len,
    })
}

/// `MPIX_Comm_shrink` of `old`'s recovery communicator, repeated
/// while the result holds a member that `agreed` (by position in `old`)
/// says failed: one whose death a survivor saw but no survivor that took
/// part in the shrink knew of yet. Every survivor gets the same result
/// from `MPIX_Comm_shrink` and passes the same `agreed`, so all loop
/// alike. Returns the communicator, its members' positions in `old` and
/// this process's rank in it.
fn shrink_live(old: &Trio, agreed: &[bool]) -> Result<(sys::Comm, Vec<usize>, u32)> {
    let err = |c: sys::Code| error_of(c, None, None);
    let t0 = std::time::Instant::now();
    // On the recovery communicator: never revoked, and no other collective
    // runs there (a member still in a split on the others must not meet
    // this shrink).
    let mut from = old.comms[2];
    let mut made: Option<sys::Comm> = None;
    loop {
        let shrunk = from.shrink();
        if let Some(mut m) = made.take() {
            let _ = m.free();
        }
        let mut base = shrunk.map_err(err)?;
        let read = (|| {
            base.errors_return()?;
            let n = base.size()?;
            let at = old.comms[2].translate_from(base, &(0..n).collect::<Vec<_>>())?;
            Ok((at, base.rank()?))
        })();
        let (at, rank) = match read {
            Ok(r) => r,
            Err(c) => {
                let _ = base.free();
                return Err(err(c));
            }
        };
        let at: Vec<usize> = at
            .iter()
            .map(|&r| usize::try_from(r).unwrap_or(usize::MAX))
            .collect();
        let dead: Vec<Rank> = at
            .iter()
            .filter(|&&i| !agreed.get(i).copied().unwrap_or(false))
            .map(|&i| Rank(i as i32))
            .collect();
        if dead.is_empty() {
            return Ok((base, at, rank as u32));
        }
        if t0.elapsed() > std::time::Duration::from_secs(10) {
            let _ = base.free();
            return Err(Error::ProcFailed { ranks: dead });
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        from = base;
        made = Some(base);
    }
}

/// A duplicate of each of `of` (`MPI_Comm_dup`, with `MPI_ERRORS_RETURN`
/// inherited), in that order: the one place the backend makes the extra
/// communicators of a pertinax communicator ([`Mpi::trio_over`],
/// `make_inter`). On an error (ULFM: a member failed) the duplicates
/// already made are freed and the error is returned.
///
/// One after the other, each a collective context allocation about as
/// costly as `MPIX_Comm_shrink`, not `MPI_Comm_idup` started together: in
/// Open MPI 5.0.11 concurrent `MPI_Comm_idup`s are faster (three of a
/// communicator of 4 or 16 members in 15–47% of the time of three
/// `MPI_Comm_dup`), but when a member is dead every survivor aborts
/// in `MPI_Waitall` (`free(): invalid pointer` in libmpi's progress), and a
/// single one fails with `MPI_ERR_INTERN` instead of
/// `MPIX_ERR_PROC_FAILED` (`pertinax-mpi-sys/checks/idup.c`).
fn dups<const N: usize>(of: [sys::Comm; N]) -> Result<[sys::Comm; N]> {
    let mut made = [sys::Comm::null(); N];
    for (i, parent) in of.into_iter().enumerate() {
        match parent.dup() {
            Ok(c) => made[i] = c,
            Err(code) => {
                for c in &mut made[..i] {
                    let _ = c.free();
                }
                return Err(error_of(code, None, None));
            }
        }
    }
    Ok(made)
}

impl Mpi {
    /// The communicator of `peers` (this process at `rank`) split from the
    /// last spawn's merged intercommunicator, if they are its members
    /// (`MPI_Comm_split` returns an error when a member fails, where
    /// `MPI_Comm_create_from_group` would not return); `None` otherwise.
    /// The merged communicator is freed either way once it matched.
    fn take_joined(&self, peers: &[u32], rank: u32) -> Option<Result<sys::Comm>> {
        let mut joined = self.joined.borrow_mut();
        let (ids, _) = joined.as_ref()?;
        let (mut a, mut b) = (ids.clone(), peers.to_vec());
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return None;
        }
        let (_, mut merged) = joined.take()?;
        let made = merged
            .split(0, rank as i32)
            .map_err(|c| error_of(c, None, None));
        let _ = merged.free();
        Some(made)
    }

    /// Makes `trio` the communicators of context `ctx`.
    fn install(&self, ctx: u32, trio: Result<Trio>) -> CommState {
        self.use_ctx(ctx);
        self.last.set(None);
        let trio = trio.map(Rc::new);
        self.comms.borrow_mut().insert(ctx, trio.clone());
        CommState { trio }
    }

    /// The communicators of the shrink of `old` (`MPIX_Comm_shrink`, not
    /// `MPI_Comm_create_from_group` over the agreed survivors: Open MPI
    /// 5.0.11 crashes every member of a `MPI_Comm_create_from_group` that
    /// a process failure interrupts, with a segmentation fault in
    /// `ompi_comm_revoke_local` under `ompi_comm_activate`), and the
    /// members' positions in `old` (see [`shrink_live`]).
    fn shrink_trio(&self, old: &Trio, agreed: &[bool]) -> Result<(Trio, Vec<usize>)> {
        let (base, at, rank) = shrink_live(old, agreed)?;
        let members: Peers = old.ids_at(&at).into();
        let trio = self.trio_over(base, rank, &members)?;
        Ok((trio, at))
    }

    /// The communicators of a new pertinax communicator of `peers` (process
    /// ids, see `spawn`) with context `ctx`.
    fn make_trio(&self, ctx: u32, rank: u32, peers: &Peers) -> Result<Trio> {
        let err = |c: sys::Code| error_of(c, None, None);
        let base = if ctx == 0 {
            sys::Comm::world().dup().map_err(err)?
        } else if peers.len() == 1 {
            sys::Comm::self_().dup().map_err(err)?
        } else {
            // Not MPI_Comm_create_group over the world: ULFM refuses it once
            // any process of the world failed, even over a group of survivors;
            // and the members may belong to several worlds (spawn).
            // The tag names the creation: its context (agreed by the members)
            // and its first member (disjoint groups of one split share a
            // context).
            if let Some(base) = self.take_joined(peers, rank) {
                return self.trio_over(base?, rank, peers);
            }
            let tag = format!("pertinax:{ctx}:{}:{}", peers[0], peers.len());
            let mut g = self.procs.group_of(peers)?;
            let c = sys::Comm::from_group(g, &tag).map_err(err);
            let _ = g.free();
            // Used through a duplicate only: in Open MPI 5.0.11 a
            // communicator made by MPI_Comm_create_from_group has
            // process-local identifiers that ULFM's revoke and agreement
            // do not handle (checked with C programs): `MPIX_Comm_revoke`
            // never reaches a member whose local index for it differs (its
            // receives are never interrupted, and a revocation can land
            // elsewhere), and agreements of two such communicators collide.
            // Its duplicates behave.
            let mut made = c?;
            let base = made.dup().map_err(err);
            let _ = made.free();
            base?
        };
        self.trio_over(base, rank, peers)
    }

    /// The communicators of a pertinax communicator whose point-to-point
    /// communicator is `base` (the others are its duplicates, see
    /// [`dups`]). `base` is this call's: freed on an error.
    ///
    /// With MPI's own collectives (the default), the collective
    /// communicator is `base` itself: nothing but MPI's collectives and
    /// `MPI_Comm_split` runs on it then, and MPI never matches those with
    /// point-to-point messages, so a separate context buys nothing and
    /// costs a duplicate (a context allocation about as costly as
    /// `MPIX_Comm_shrink`) at every creation and shrink. The portable
    /// schedules (`PERTINAX_MPI_COLLECTIVES=portable`) send point-to-point
    /// messages with the user's tag range on `ctx + 1`, so they keep their
    /// own.
    fn trio_over(&self, base: sys::Comm, rank: u32, peers: &Peers) -> Result<Trio> {
        let made = base
            .errors_return()
            .map_err(|c| error_of(c, None, None))
            .and_then(|()| {
                if self.own_coll {
                    dups([base; 2]).map(|[rec, agr]| [base, rec, agr])
                } else {
                    dups([base; 3])
                }
            });
        let [coll, rec, agr] = match made {
            Ok(d) => d,
            Err(e) => {
                let mut base = base;
                let _ = base.free();
                return Err(e);
            }
        };
        Ok(Trio {
            comms: [base, coll, rec, agr],
            rank,
            members: peers.clone(),
            remote: None,
            all: peers.to_vec(),
            me_all: rank,
            order: (0..peers.len() as u32).collect(),
            acked: Cell::new(0),
        })
    }
}

impl Mpi {
    /// The MPI communicator of point-to-point context `ctx`, or why there is
    /// none (freed, or the error its creation left).
    fn p2p_comm(&self, ctx: u32) -> Result<sys::Comm> {
        self.comm(ctx)
            .map(|(c, _)| c)
            .ok_or_else(|| self.trio(ctx).err().unwrap_or(Error::CommFreed))
    }

    /// Sends a copy of `data` in a send MPI completes in the background
    /// (its request forgotten): the data is out of `data` at once.
    fn send_copy(&self, comm: sys::Comm, dest_rank: u32, tag: i32, data: &[u8]) -> Result<()> {
        let op = Op::send(SendData::Owned(data.into()), dest_rank as i32, tag, comm)
            .map_err(|c| error_of(c, Some(comm), Some(dest_rank)))?;
        self.insert(Slot::Send {
            op,
            dest_rank,
            forgotten: true,
        });
        Ok(())
    }

    /// The error of an unmatched receive on context `ctx` from `src`
    /// (`None`: any source) because of failed processes, checked on every
    /// 64th call (a failed list costs more than a probe): `ProcFailed` when
    /// `src` failed or, on a collective context, any member did;
    /// `ProcFailedPending` for any source when a failure is not
    /// acknowledged.
    fn dead_source(&self, ctx: u32, src: Option<u32>) -> Option<Error> {
        thread_local! {
            static EMPTY_POLLS: Cell<u32> = const { Cell::new(0) };
        }
        let n = EMPTY_POLLS.with(|c| {
            let n = c.get().wrapping_add(1);
            c.set(n);
            n
        });
        if !n.is_multiple_of(64) {
            return None;
        }
        let t = self.trio(ctx).ok()?;
        let (comm, _) = self.comm(ctx)?;
        let failed = comm.get_failed().ok()?;
        // A collective's schedule waits for peers that may wait for the
        // dead: on the collective communicator, any failed member fails it,
        // as on the native backend.
        if ctx & 3 == 1 && !failed.is_empty() {
            return Some(Error::ProcFailed {
                ranks: failed.into_iter().map(Rank).collect(),
            });
        }
        match src {
            Some(s) => {
                failed
                    .iter()
                    .any(|&r| u32::try_from(r) == Ok(s))
                    .then(|| Error::ProcFailed {
                        ranks: vec![Rank(s as i32)],
                    })
            }
            None => (failed.len() > t.acked.get()).then(|| Error::ProcFailedPending {
                ranks: failed.into_iter().map(Rank).collect(),
            }),
        }
    }

    /// Matches the unmatched receives in posting order: each asks MPI for
    /// a message (`MPI_Improbe`). A message taken from MPI goes to the
    /// *first* unmatched receive that matches it (it may have arrived after
    /// an earlier receive found nothing: MPI would have given it to that
    /// one) and is received (`MPI_Imrecv`); one that does not fit is
    /// consumed all the same and fails its receive (`Truncated` /
    /// `LengthNotMultiple`). True if any receive matched.
    fn match_posted(&self) -> bool {
        if self.posted.borrow().is_empty() {
            return false;
        }
        let order: Vec<u32> = self.posted.borrow().iter().copied().collect();
        let mut moved = false;
        for idx in order {
            let spec = match self.slab.borrow().get(idx as usize).map(|e| &e.1) {
                Some(Slot::Posted { spec, .. }) => *spec,
                _ => continue,
            };
            let Some((comm, _)) = self.comm(spec.ctx) else {
                let err = self.trio(spec.ctx).err().unwrap_or(Error::CommFreed);
                self.settle(idx, Err(err));
                moved = true;
                continue;
            };
            let src = spec.src.map_or_else(sys::any_source, |s| s as i32);
            let tag = spec.tag.unwrap_or_else(sys::any_tag);
            match sys::improbe(src, tag, comm) {
                Ok(None) => {
                    // Open MPI's probe does not fail for a dead source:
                    // look at the failed list now and then.
                    if let Some(err) = self.dead_source(spec.ctx, spec.src) {
                        self.settle(idx, Err(err));
                        moved = true;
                    }
                }
                Ok(Some((msg, st))) => {
                    // The first unmatched receive it matches (at latest
                    // this one).
                    let target = self
                        .posted
                        .borrow()
                        .iter()
                        .copied()
                        .find(|&k| {
                            matches!(
                                self.slab.borrow().get(k as usize).map(|e| &e.1),
                                Some(Slot::Posted { spec: s, .. })
                                    if s.matches(spec.ctx, st.source as u32, st.tag)
                            )
                        })
                        .unwrap_or(idx);
                    self.deliver(target, msg, st);
                    moved = true;
                }
                Err(c) => {
                    self.settle(idx, Err(recv_error_of(c, Some(comm), spec.src)));
                    moved = true;
                }
            }
        }
        moved
    }

    /// Ends the unmatched receive `idx` with `r` (freeing it if it was
    /// forgotten).
    fn settle(&self, idx: u32, r: Result<Status>) {
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(idx as usize) else {
            return;
        };
        let forgotten = matches!(
            e.1,
            Slot::Posted {
                forgotten: true,
                ..
            }
        );
        e.1 = if forgotten { Slot::Free } else { Slot::Done(r) };
        drop(slab);
        self.unpost(idx, forgotten);
    }

    /// Gives matched message `msg` to the unmatched receive `idx`:
    /// received if it fits, else consumed into a scratch buffer (a request
    /// nobody waits for) while the receive fails.
    fn deliver(&self, idx: u32, msg: sys::Message, st: sys::Status) {
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(idx as usize) else {
            return;
        };
        let Slot::Posted {
            spec,
            data,
            elem,
            forgotten,
            ..
        } = &e.1
        else {
            drop(slab);
            self.sink(msg, st);
            return;
        };
        let (spec, elem, forgotten) = (*spec, *elem, *forgotten);
        let len = usize::try_from(st.bytes).unwrap_or(0);
        let capacity = match data {
            RecvData::Lent(b) => b.len(),
            RecvData::Owned(b) => b.len(),
        };
        let refusal = if len > capacity {
            Some(Error::Truncated {
                sent: len,
                capacity,
            })
        } else if elem > 1 && len % elem != 0 {
            Some(Error::LengthNotMultiple { len, elem })
        } else {
            None
        };
        if let Some(err) = refusal {
            drop(slab);
            self.sink(msg, st);
            self.settle(idx, Err(err));
            return;
        }
        let Slot::Posted { data, part, .. } = std::mem::replace(&mut e.1, Slot::Free) else {
            return;
        };
        let comm = self.comm(spec.ctx).map(|c| c.0);
        e.1 = match Op::mrecv(data, msg) {
            Ok(op) => Slot::Recv {
                op,
                part,
                elem,
                ctx: spec.ctx,
                src: spec.src,
                forgotten,
            },
            Err(_) if forgotten => Slot::Free,
            Err((c, _)) => Slot::Done(Err(recv_error_of(c, comm, spec.src))),
        };
        let freed = matches!(e.1, Slot::Free);
        drop(slab);
        self.unpost(idx, freed);
    }

    /// Receives matched message `msg` into a scratch buffer nobody reads
    /// (a refused message is consumed, as MPI consumes it).
    fn sink(&self, msg: sys::Message, st: sys::Status) {
        let len = usize::try_from(st.bytes).unwrap_or(0);
        if let Ok(op) = Op::mrecv(RecvData::Owned(vec![0; len].into()), msg) {
            let slot = Slot::Recv {
                op,
                part: None,
                elem: 1,
                ctx: 0,
                src: None,
                forgotten: true,
            };
            self.insert(slot);
        }
    }

    /// Removes a receive from the unmatched ones (and its slot, if it was
    /// forgotten and is now free).
    fn unpost(&self, idx: u32, freed: bool) {
        self.posted.borrow_mut().retain(|&i| i != idx);
        if freed {
            self.free.borrow_mut().push(idx);
        }
    }

    /// The slot of a live key, if it is one.
    fn live(&self, k: ReqKey) -> bool {
        self.slab
            .borrow()
            .get(k.idx as usize)
            .is_some_and(|e| e.0 == k.gen && !matches!(e.1, Slot::Free))
    }
}

impl Backend for Mpi {
    type CommState = CommState;

    fn progress(&self) -> bool {
        let mut moved = self.match_posted();
        // Every agreement under way, not only the one waited for: a member
        // may contribute and then wait for something else (a revoker of a
        // resilient communicator contributes its `iagree` and goes on to
        // its guard's shrink), and the others' agreement needs its next
        // step (its `MPIX_Comm_iagree` once its records are in).
        if let Ok(mut agreed) = self.agreed.try_borrow_mut() {
            for a in agreed.values_mut().filter(|a| a.running()) {
                moved |= a.poll().is_some();
            }
        }
        let n = self.slab.borrow().len();
        for i in 0..n as u32 {
            let posted = matches!(
                self.slab.borrow().get(i as usize).map(|e| &e.1),
                Some(Slot::Posted { .. })
            );
            if !posted {
                moved |= self.poll(i);
            }
        }
        moved
    }

    fn idle(&self, b: &mut Backoff) {
        match b.next(&self.policy) {
            Step::Spin => std::hint::spin_loop(),
            Step::Yield => pertinax_os::yield_cpu(),
            Step::Sleep => std::thread::sleep(std::time::Duration::from_micros(20)),
        }
    }

    fn eager_limit(&self) -> usize {
        // Sends of at most this many bytes are copied (`send_eager`).
        4096
    }

    fn single_copy(&self) -> bool {
        false
    }

    fn finalize(&self) -> Result<()> {
        let n = self.slab.borrow().len();
        for i in 0..n {
            let mut slab = self.slab.borrow_mut();
            let Some(e) = slab.get_mut(i) else { break };
            match &mut e.1 {
                Slot::Recv { op, .. } => {
                    let _ = op.cancel();
                    let _ = op.wait();
                    e.1 = Slot::Done(Err(Error::Finalized));
                }
                Slot::Send { op, .. } => {
                    let _ = op.wait();
                    e.1 = Slot::Done(Err(Error::Finalized));
                }
                Slot::Task(_) | Slot::Posted { .. } | Slot::Coll { .. } => {
                    e.1 = Slot::Done(Err(Error::Finalized));
                }
                Slot::Free | Slot::Done(_) => {}
            }
        }
        self.posted.borrow_mut().clear();
        self.tasks.set(0);
        if sys::finalized() {
            return Ok(());
        }
        // Free every communicator still held: Open MPI's `MPI_Finalize`
        // disconnects those that span several worlds (spawn) with a
        // handshake with their other members, which waits forever when the
        // other side has freed theirs or gone (Open MPI 5.0.11).
        // Agreements nobody waited for to the end: let go (see `release`).
        for (_, a) in self.agreed.borrow_mut().take() {
            if a.running() {
                std::mem::forget(a);
            }
        }
        for (_, mut c) in [self.joined.take(), self.survivors.take()]
            .into_iter()
            .flatten()
        {
            let _ = c.free();
        }
        // Newest first: the same order at every process.
        let mut comms: Vec<_> = std::mem::take(&mut *self.comms.borrow_mut())
            .into_iter()
            .collect();
        comms.sort_unstable_by_key(|(ctx, _)| std::cmp::Reverse(*ctx));
        for t in comms.into_iter().filter_map(|(_, t)| t.ok()) {
            t.free();
        }
        finalize::finalize()
    }

    fn abort(&self, code: i32, _message: &str) {
        sys::abort(sys::Comm::world(), code);
    }

    fn report_injection(&self, point: &str, hit: u64, signal: i32) {
        report::report_injection(point, hit, signal);
    }

    fn flush(&self) {
        self.progress();
    }

    // ---- communicators ----------------------------------------------------

    fn next_ctx(&self) -> u32 {
        self.next_ctx.get()
    }

    fn use_ctx(&self, ctx: u32) {
        self.next_ctx.set(self.next_ctx.get().max(ctx + 4));
    }

    fn reserve(&self) -> Result<Token> {
        Ok(0)
    }

    fn unreserve(&self, _t: Token) {}

    fn token_from(&self, w: u32) -> Option<Token> {
        Token::try_from(w).ok()
    }

    fn attach(
        &self,
        ctx: u32,
        rank: u32,
        peers: &Peers,
        _tokens: &[Token],
        remote: Option<(&Peers, &[Token])>,
    ) -> CommState {
        let trio = match remote {
            Some((r, _)) => self.make_inter(ctx, rank, peers, r),
            None => self.make_trio(ctx, rank, peers),
        };
        self.install(ctx, trio)
    }

    fn derive(
        &self,
        parent: &CommState,
        ctx: u32,
        mine: Option<crate::backend::Derived<'_>>,
    ) -> Option<CommState> {
        let p = match &parent.trio {
            Ok(t) => t,
            // A broken parent: from the group.
            Err(_) => return mine.map(|d| self.attach(ctx, d.rank, d.peers, d.tokens, None)),
        };
        // `MPI_Comm_split` over the parent, which returns an error when a
        // process fails during it (`MPI_Comm_create_from_group` and
        // `MPI_Comm_create_group` over a group with a dead process never
        // return or crash, in Open MPI 5.0.11).
        let (color, key) = match mine {
            Some(d) => (i32::try_from(d.color).unwrap_or(i32::MAX), d.rank as i32),
            None => (sys::undefined(), 0),
        };
        // On the collective communicator: a revocation (a repair) ends it;
        // for an intercommunicator (merge), on the communicator of both
        // groups (its agreements', which have ended: the merge's decided).
        let on = if p.remote.is_some() {
            p.comms[3]
        } else {
            p.comms[1]
        };
        let made = on.split(color, key);
        let Some(d) = mine else {
            if let Ok(mut c) = made {
                if !c.is_null() {
                    let _ = c.free();
                }
            }
            return None;
        };
        let trio = made
            .map_err(|c| error_of(c, None, None))
            .and_then(|base| self.trio_over(base, d.rank, d.peers));
        Some(self.install(ctx, trio))
    }

    fn live_members(&self, st: &CommState, agreed: &[bool]) -> Option<Result<Vec<usize>>> {
        let old = match &st.trio {
            Ok(t) if t.remote.is_none() => t,
            _ => return None,
        };
        let made = shrink_live(old, agreed).map(|(comm, at, _)| {
            let ids = old.ids_at(&at);
            if let Some((_, mut c)) = self.survivors.replace(Some((ids, comm))) {
                let _ = c.free();
            }
            at
        });
        Some(made)
    }

    fn shrink_attach(
        &self,
        old: &CommState,
        ctx: u32,
        agreed: &[bool],
    ) -> Option<Result<crate::backend::Shrunk<CommState>>> {
        let old = match &old.trio {
            Ok(t) if t.remote.is_none() => t,
            // No MPI communicator to shrink: the agreed survivors, as usual.
            _ => return None,
        };
        Some(
            self.shrink_trio(old, agreed)
                .map(|(t, at)| crate::backend::Shrunk {
                    rank: t.rank,
                    at,
                    st: self.install(ctx, Ok(t)),
                }),
        )
    }

    fn release(&self, ctx: u32, st: &CommState) {
        let Ok(mut comms) = self.comms.try_borrow_mut() else {
            return;
        };
        self.last.set(None);
        comms.remove(&ctx);
        // Its agreements still under way (a revoker's, that nobody waits
        // for) are never advanced again: their next step would start an
        // `MPIX_Comm_iagree` on a freed communicator. Their requests may
        // still be written to by MPI, and dropping a running `iagree`
        // waits for the others, so they are let go without a drop.
        if let Ok(mut agreed) = self.agreed.try_borrow_mut() {
            let keys: Vec<(u32, u32)> = agreed
                .iter()
                .map(|(k, _)| *k)
                .filter(|k| k.0 == ctx)
                .collect();
            for k in keys {
                if let Some(a) = agreed.remove(&k) {
                    if a.running() {
                        std::mem::forget(a);
                    }
                }
            }
        }
        if let Ok(t) = &st.trio {
            if !sys::finalized() {
                t.free();
            }
        }
    }

    // ---- point-to-point ---------------------------------------------------

    fn send_eager(
        &self,
        _dest: usize,
        dest_rank: u32,
        ctx: u32,
        _src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        let comm = self.p2p_comm(ctx)?;
        if let Some(r) = self.send_fast(comm, dest_rank, tag, data) {
            return r;
        }
        self.send_copy(comm, dest_rank, tag, data)
    }

    fn bsend(
        &self,
        _dest: usize,
        dest_rank: u32,
        ctx: u32,
        _src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        // A copy in a send MPI completes in the background, whatever its
        // size (not `send_fast`'s blocking `MPI_Send`, which may wait for
        // the receiver when MPI's eager limit is lower).
        let comm = self.p2p_comm(ctx)?;
        self.send_copy(comm, dest_rank, tag, data)
    }

    fn isend(
        &self,
        _dest: usize,
        dest_rank: u32,
        ctx: u32,
        _src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        let comm = match self.p2p_comm(ctx) {
            Ok(c) => c,
            Err(e) => return Ok(self.done(Err(e))),
        };
        let data = match buf {
            SendBuf::Lent(l) => SendData::Lent(l),
            SendBuf::Part(c, r) => {
                let bytes = c.borrow_mut().bytes().get(r).map(Box::<[u8]>::from);
                SendData::Owned(bytes.unwrap_or_default())
            }
        };
        Ok(match Op::send(data, dest_rank as i32, tag, comm) {
            Ok(op) => self.insert(Slot::Send {
                op,
                dest_rank,
                forgotten: false,
            }),
            Err(c) => self.done(Err(error_of(c, Some(comm), Some(dest_rank)))),
        })
    }

    fn irecv(&self, spec: MatchSpec, _peers: Peers, buf: RecvBuf, elem: usize) -> ReqKey {
        let (data, part) = match buf {
            RecvBuf::Lent(l) => (RecvData::Lent(l), None),
            RecvBuf::Part(c, r) => (
                RecvData::Owned(vec![0u8; r.len()].into_boxed_slice()),
                Some((c, r)),
            ),
        };
        let k = self.insert(Slot::Posted {
            spec,
            data,
            part,
            elem,
            forgotten: false,
        });
        self.posted.borrow_mut().push_back(k.idx);
        self.match_posted();
        k
    }

    fn recv(&self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> Result<Status> {
        match self.recv_fast(&spec, buf, elem) {
            Ok(r) => r,
            Err(buf) => {
                let k = self.irecv(spec, peers, buf, elem);
                self.wait(k)
            }
        }
    }

    fn find(&self, spec: &MatchSpec) -> Option<Status> {
        let (comm, _) = self.comm(spec.ctx)?;
        let src = spec.src.map_or_else(sys::any_source, |s| s as i32);
        let tag = spec.tag.unwrap_or_else(sys::any_tag);
        sys::iprobe(src, tag, comm).ok().flatten().map(|st| Status {
            source: Rank(st.source),
            tag: Tag(st.tag),
            len: usize::try_from(st.bytes).unwrap_or(0),
        })
    }

    fn probe_doomed(&self, spec: &MatchSpec, _peers: &[u32]) -> Option<Error> {
        let comm = match self.comm(spec.ctx) {
            Some((c, _)) => c,
            None => return Some(self.trio(spec.ctx).err().unwrap_or(Error::CommFreed)),
        };
        let src = spec.src.map_or_else(sys::any_source, |s| s as i32);
        let tag = spec.tag.unwrap_or_else(sys::any_tag);
        sys::iprobe(src, tag, comm)
            .err()
            .map(|c| recv_error_of(c, Some(comm), spec.src))
    }

    // ---- requests ---------------------------------------------------------

    fn take(&self, k: ReqKey) -> Result<Option<Result<Status>>> {
        if !self.live(k) {
            return Err(Error::RequestInactive);
        }
        self.poll(k.idx);
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(k.idx as usize) else {
            return Err(Error::RequestInactive);
        };
        if !matches!(e.1, Slot::Done(_)) {
            return Ok(None);
        }
        let Slot::Done(r) = std::mem::replace(&mut e.1, Slot::Free) else {
            return Ok(None);
        };
        drop(slab);
        self.free.borrow_mut().push(k.idx);
        Ok(Some(r))
    }

    fn wait(&self, k: ReqKey) -> Result<Status> {
        if let Some(r) = self.wait_fast(k) {
            return r;
        }
        if let Some(r) = self.wait_own_coll(k) {
            return r;
        }
        let mut b = Backoff::default();
        loop {
            match self.take(k)? {
                Some(r) => return r,
                None => {
                    if !self.progress() {
                        self.idle(&mut b);
                    }
                }
            }
        }
    }

    fn cancel(&self, k: ReqKey) -> Result<bool> {
        if !self.live(k) {
            return Err(Error::RequestInactive);
        }
        let mut slab = self.slab.borrow_mut();
        let Some(e) = slab.get_mut(k.idx as usize) else {
            return Err(Error::RequestInactive);
        };
        if matches!(e.1, Slot::Posted { .. }) {
            e.1 = Slot::Done(Err(Error::Cancelled));
            drop(slab);
            self.unpost(k.idx, false);
            return Ok(true);
        }
        let Slot::Recv {
            op,
            part,
            elem,
            ctx,
            src,
            ..
        } = &mut e.1
        else {
            return Ok(false);
        };
        let _ = op.cancel();
        let Some((st, data)) = op.wait() else {
            return Ok(false);
        };
        let cancelled = st.cancelled != 0;
        let comm = self.comm(*ctx).map(|c| c.0);
        let r = received(st, data, part.take(), *elem, comm, *src);
        e.1 = Slot::Done(r);
        Ok(cancelled)
    }

    fn forget(&self, k: ReqKey) {
        if !self.live(k) {
            return;
        }
        // A task that is dropped runs to its end (its requests hold lent
        // buffers); its outcome is then thrown away.
        let task_done = matches!(
            self.slab.borrow().get(k.idx as usize).map(|e| &e.1),
            Some(Slot::Task(_))
        );
        if task_done {
            let mut b = Backoff::default();
            while !self.is_done(k) {
                if !self.progress() {
                    self.idle(&mut b);
                }
            }
        }
        let Ok(mut slab) = self.slab.try_borrow_mut() else {
            return;
        };
        let Some(e) = slab.get_mut(k.idx as usize) else {
            return;
        };
        match &mut e.1 {
            Slot::Send { forgotten, .. }
            | Slot::Recv { forgotten, .. }
            | Slot::Coll { forgotten, .. }
            | Slot::Posted { forgotten, .. } => *forgotten = true,
            Slot::Done(_) => {
                e.1 = Slot::Free;
                drop(slab);
                self.free.borrow_mut().push(k.idx);
            }
            Slot::Free | Slot::Task(_) => {}
        }
    }

    fn is_done(&self, k: ReqKey) -> bool {
        if !self.live(k) {
            return true;
        }
        self.poll(k.idx);
        self.slab
            .borrow()
            .get(k.idx as usize)
            .is_none_or(|e| matches!(e.1, Slot::Done(_)))
    }

    fn request_failed(&self, k: ReqKey) -> bool {
        self.live(k)
            && self
                .slab
                .borrow()
                .get(k.idx as usize)
                .is_some_and(|e| matches!(e.1, Slot::Done(Err(_))))
    }

    fn start_task(&self, t: Box<dyn Task>) -> ReqKey {
        self.tasks.set(self.tasks.get() + 1);
        let k = self.insert(Slot::Task(Some(t)));
        self.poll(k.idx);
        k
    }

    fn capabilities(&self) -> crate::backend::Capabilities {
        crate::backend::Capabilities {
            own_collectives: self.own_coll,
            // A point-to-point call on a revoked communicator returns
            // `MPIX_ERR_REVOKED` (ULFM checks it before the peer's state;
            // mapped to `Revoked`); asking `MPIX_Comm_is_revoked` before
            // each one cost 0.02-0.03 us of a 0.25 us half round trip.
            // (Collectives keep the check: MPI's return
            // `MPIX_ERR_PROC_FAILED` first.)
            calls_check_revocation: true,
            words_agree_cheaply: false,
        }
    }

    fn start_coll(&self, c: crate::backend::Coll) -> Result<ReqKey> {
        self.start_own_coll(c)
    }

    // ---- failures and revocation -----------------------------------------

    fn revoke(&self, ctx: u32) {
        if let Ok(t) = self.trio(ctx) {
            let _ = t.comms[0].revoke();
            // A revoker killed here has revoked half of the communicator:
            // the others must still all learn of it.
            crate::inject::fault_point("ft.revoke.partial");
            if t.comms[1] != t.comms[0] {
                let _ = t.comms[1].revoke();
            }
        }
    }

    fn is_revoked(&self, ctx: u32) -> bool {
        self.comm(ctx)
            .is_some_and(|(c, _)| c.is_revoked().unwrap_or(false))
    }

    fn failed_among(&self, st: &CommState) -> Vec<u32> {
        let Ok(t) = &st.trio else {
            return Vec::new();
        };
        // Open MPI learns of failures in its progress engine: a probe on
        // the recovery communicator (never revoked, consumes nothing) lets
        // a process that only polls its failed list see them.
        let _ = sys::iprobe(sys::any_source(), sys::any_tag(), t.comms[2]);
        t.knowledge()
            .get_failed()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| t.all.get(usize::try_from(r).ok()?).copied())
            .collect()
    }

    fn ack_failed(&self, _ctx: u32, st: &CommState, n: usize) -> usize {
        let Ok(t) = &st.trio else {
            return 0;
        };
        // Open MPI refuses (MPI_ERR_ARG) to acknowledge more than the
        // communicator's size: "all" is the size (both groups for an
        // intercommunicator).
        let n = i32::try_from(n.min(t.all.len())).unwrap_or(i32::MAX);
        let acked = t.knowledge().ack_failed(n).unwrap_or(0);
        let acked = usize::try_from(acked).unwrap_or(0);
        t.acked.set(t.acked.get().max(acked));
        acked
    }

    fn acked(&self, ctx: u32) -> Vec<u32> {
        let Ok(t) = self.trio(ctx) else {
            return Vec::new();
        };
        t.knowledge()
            .get_failed()
            .unwrap_or_default()
            .into_iter()
            .take(t.acked.get())
            .filter_map(|r| t.all.get(usize::try_from(r).ok()?).copied())
            .collect()
    }

    // ---- agreement --------------------------------------------------------

    fn next_agree_seq(&self, seq: u32) -> u32 {
        seq.wrapping_add(1)
    }

    fn contribute(&self, ctx: u32, seq: u32, call: RecoveryCall, words: [u32; 4], st: &CommState) {
        let a = match &st.trio {
            Ok(t) => {
                let mine = [
                    u32::from(call.code()),
                    words[0],
                    words[1],
                    words[2],
                    words[3],
                ];
                agree::Agreement::start(t, seq, mine)
            }
            Err(_) => agree::Agreement::Done(Vec::new()),
        };
        self.agreed.borrow_mut().insert((ctx, seq), a);
    }

    fn block_on_agreement(&self, ctx: u32, seq: u32) {
        // Only when nothing else of this backend's waits for progress: no
        // task, no receive to match, no other agreement under way.
        if self.tasks.get() != 0 || !self.posted.borrow().is_empty() {
            return;
        }
        let Ok(mut agreed) = self.agreed.try_borrow_mut() else {
            return;
        };
        if agreed.iter().any(|(k, a)| *k != (ctx, seq) && a.running()) {
            return;
        }
        if let Some(a) = agreed.get_mut(&(ctx, seq)) {
            a.block_on_fast_round();
        }
    }

    fn poll_agreement(
        &self,
        ctx: u32,
        seq: u32,
        _st: &CommState,
        got: &mut [Option<Record>],
    ) -> bool {
        let mut agreed = self.agreed.borrow_mut();
        let Some(a) = agreed.get_mut(&(ctx, seq)) else {
            return false;
        };
        let Some(recs) = a.poll() else {
            return false;
        };
        for (i, g) in got.iter_mut().enumerate() {
            if g.is_none() {
                *g = Some(recs.get(i).copied().unwrap_or(Record::Failed));
            }
        }
        agreed.remove(&(ctx, seq));
        true
    }

    fn member_id(&self, st: &CommState, i: usize) -> u32 {
        match &st.trio {
            Ok(t) => t
                .members
                .get(i)
                .or_else(|| t.remote.as_ref()?.get(i.checked_sub(t.members.len())?))
                .copied()
                .unwrap_or(u32::MAX),
            Err(_) => u32::MAX,
        }
    }

    // ---- spawn ------------------------------------------------------------

    fn spawn_max(&self) -> usize {
        // The ranks a world's process ids can hold.
        (1 << spawn::RANK_BITS) - 1
    }

    fn request_stamp(&self, ctx: u32, attempt: u32) -> u64 {
        (u64::from(ctx) << 32) | u64::from(attempt)
    }

    fn request_processes(&self, r: ProcRequest<'_>) -> Result<()> {
        self.record_request(r)
    }

    fn await_processes(
        &self,
        asker: usize,
        stamp: u64,
        among: &[u32],
    ) -> Option<Result<Vec<u32>, u32>> {
        self.spawn_among(asker as u32, stamp, among)
    }
}

/// The backend seen from inside a task's progress round.
struct Io<'a>(&'a Mpi);

impl TaskIo for Io<'_> {
    fn isend(
        &mut self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        self.0.isend(dest, dest_rank, ctx, src, tag, buf)
    }

    fn irecv(&mut self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> ReqKey {
        self.0.irecv(spec, peers, buf, elem)
    }

    fn is_done(&self, k: ReqKey) -> bool {
        self.0.is_done(k)
    }

    fn take(&mut self, k: ReqKey) -> Result<Option<Result<Status>>> {
        self.0.take(k)
    }

    fn abandon(&mut self, k: ReqKey) {
        let _ = self.0.cancel(k);
        self.0.forget(k);
    }
}
