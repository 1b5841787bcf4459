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
//!   The world's are duplicates of a transient `MPI_Comm_create_group`
//!   of `MPI_COMM_WORLD`, freed at once (so that no parent keeps libnbc's
//!   progress function registered: `Mpi::world_trio`), the self
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
//!   collective communicator (`MPI_Comm_split`, [`OwnCommunicators::derive`](crate::backend::OwnCommunicators::derive)), a
//!   shrink is `MPIX_Comm_shrink` ([`OwnCommunicators::shrink_attach`](crate::backend::OwnCommunicators::shrink_attach)), a spawn's
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
//!   with the communicator's ranks (`send_eager` copies and lets go). A
//!   message longer than 1 KiB ([`pertinax_mpi_sys::SMALL`]) goes as an
//!   envelope announcing its length, then the payload: so no receive ever
//!   hands MPI a buffer shorter than what it matches, and Open MPI 5.0.x's
//!   single copy cannot overrun a truncated receive
//!   (`pertinax-mpi-sys/checks/truncate.c`).
//!   Unmatched receives are matched here, not posted to MPI: on every
//!   progress round they, in posting order, each `MPI_Improbe` a
//!   message from MPI (MPI's own order: arrival, non-overtaking) and
//!   receive it with `MPI_Imrecv` (an envelope: `MPI_Mrecv`, then the
//!   payload's `MPI_Irecv` at once). A message too long for the buffer (or
//!   not whole elements) is consumed all the same, into a scratch buffer,
//!   and fails the receive with `Truncated` / `LengthNotMultiple`, as
//!   MPI's `MPI_ERR_TRUNCATE` does. Requests are a slab of
//!   MPI requests that own their buffers ([`pertinax_mpi_sys::Op`]); a
//!   schedule's shared cell is staged through an owned copy.
//! - Fast paths ([`fast`]): while no receive waits to be matched here and
//!   no task runs, a blocking named-source receive is `MPI_Recv` (and a
//!   second one for an envelope's payload) in one shim call (see there), a
//!   blocking send of at most 1 KiB is `MPI_Send`, and waiting for a send
//!   or a named-source receive is `MPI_Wait`: no request, copy or progress
//!   round of this backend's own.
//! - Collectives are MPI's own (`coll.rs`: `MPI_Allreduce` for a blocking
//!   call, `MPI_Iallreduce` behind a request key for a non-blocking one,
//!   ... on the collective communicator `ctx + 1`; built-in operations as
//!   MPI's, user operations through `MPI_Op_create`). Inside a blocking
//!   one, MPI's progress runs this backend's progress round while anything
//!   of its own is pending ([`sys::with_progress`]). Tasks (the portable schedules) are still
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
//!   So `iagree` returns at once. A blocking agreement on a communicator
//!   of one job, with nothing else of the backend's pending, makes its
//!   fast round one blocking `MPIX_Comm_agree`, as a C program does
//!   (on a communicator of several jobs the fast round is polled and
//!   stops gating the full rounds once a record arrives: see
//!   [`agree`], "A member left behind"; `OwnAgreement::agree_now`;
//!   with a fault planned at this process, `MPIX_Comm_iagree` and
//!   `MPI_Wait`, `OwnAgreement::block_on_agreement`, so that
//!   `ft.agree.contributed` falls between them), and gets an agreement
//!   the fast round decided back from it whole (no record per member).
//!   `Finalized` is never read. On an intercommunicator
//!   the agreement's communicator is a duplicate of the communicator of
//!   both groups (see [`spawn`]: Open MPI 5's ERA names an agreement by
//!   the low bits of the communicator's context id, the same for every
//!   communicator `MPI_Comm_create_from_group` makes).
//!
//! # Not yet (each answers `Unsupported` naming it, never a panic)
//!
//! Spares (`replace_failed` always spawns new processes), single-copy,
//! name publishing (`NameService`: `MPI_Publish_name` is not bound);
//! collectives on intercommunicators (the portable core has none
//! either). (An injected death is reported by
//! the rank itself on stderr, in the native launcher's words.)
//! Fault plans are read from the environment as on the native backend;
//! `mpirun -x PERTINAX_FAULTS=3@chunk#6` (the `--kill` grammar) or `-x
//! PERTINAX_FAULT_SEED=SEED[:COUNT[:MAX_HIT]]` give one plan to the whole
//! job, and each rank keeps its own shots (`crate::inject`).
#![cfg(feature = "mpi")]
// A backend's documentation is its internals' map: the module docs name
// the private functions the mapping is built of.
#![allow(rustdoc::private_intra_doc_links)]

pub(crate) use pertinax_backend as backend;
pub(crate) use pertinax_backend::{error, inject, op, types, wait};

mod agree;
mod coll;
mod comms;
mod contract;
mod fast;
mod finalize;
mod p2p;
mod report;

mod spawn;
mod tell;
mod watchdog;

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use pertinax_mpi_sys::{self as sys, Kind, Op, RecvData, SendData};

use crate::backend::{
    Backend, MatchSpec, Peers, RecvBuf, ReqKey, SendBuf, StartBound, Started, Task, TaskIo,
};
use crate::error::{Error, Result};
use crate::types::{Rank, Status, Tag};
use crate::wait::WaitPolicy;

use comms::dups;
use p2p::received;

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

    /// Whether the members belong to more than one job (a spawn's
    /// processes and their parents): Open MPI may then leave a member
    /// uninformed of a death (see [`tell`]).
    fn mixed(&self) -> bool {
        let world = |p: &u32| p >> spawn::RANK_BITS;
        self.all
            .first()
            .is_some_and(|w0| self.all.iter().any(|p| world(p) != world(w0)))
    }

    /// The process ids of the members MPI knows failed, told to the
    /// processes of other jobs that may not know ([`tell`]).
    fn failed_pids(&self) -> Vec<u32> {
        let pids: Vec<u32> = self
            .knowledge()
            .get_failed()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| self.all.get(usize::try_from(r).ok()?).copied())
            .collect();
        tell::spread(&pids);
        pids
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
        /// The context it was sent on (its communicator stays unfreed
        /// while it is pending, see `Mpi::unfreed`).
        ctx: u32,
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

/// The last context [`Mpi::comm`] looked up: its multiple of 4
/// (`u32::MAX`: none), its communicators and this process's rank, in cells
/// of their own so that a hit reads two words.
#[derive(Debug)]
struct Last {
    base: Cell<u32>,
    comms: [Cell<sys::Comm>; 4],
    rank: Cell<u32>,
}

impl Default for Last {
    fn default() -> Last {
        let null = sys::Comm::null();
        Last {
            base: Cell::new(u32::MAX),
            comms: [null, null, null, null].map(Cell::new),
            rank: Cell::new(0),
        }
    }
}

impl Last {
    fn set(&self, base: u32, t: &Trio) {
        for (c, &m) in self.comms.iter().zip(&t.comms) {
            c.set(m);
        }
        self.rank.set(t.rank);
        self.base.set(base);
    }

    /// Forgets the context (its communicators may be freed).
    fn clear(&self) {
        self.base.set(u32::MAX);
    }
}

/// The MPI backend of this process.
#[derive(Debug)]
pub struct Mpi {
    /// By context (a multiple of 4): the communicators, or why they
    /// could not be made.
    comms: RefCell<BTreeMap<u32, std::result::Result<Rc<Trio>, Error>>>,
    /// Unmatched receives (slab indices) in posting order.
    posted: RefCell<std::collections::VecDeque<u32>>,
    /// Envelopes probes received, whose payloads are still in MPI
    /// (`p2p.rs`).
    taken: RefCell<Vec<p2p::Taken>>,
    /// Communicators released while a send on them was pending: freed
    /// once their sends are done (`Mpi::free_unfreed`). Under Open MPI
    /// 5.0.11 `MPI_Comm_free` of an intercommunicator with a send still
    /// pending lost the message or crashed the process when the receiver
    /// died (measured: 5 failures in 10 runs of `offload`'s
    /// `boosters_killed_at_shutdown_lose_nothing` freeing at once, 0 in 8
    /// deferred).
    unfreed: RefCell<Vec<(u32, Rc<Trio>)>>,
    /// Agreements started and not yet read: (context, sequence) → the
    /// agreement (`agree.rs`).
    agreed: RefCell<agree::Agreements>,
    slab: RefCell<Vec<(u32, Slot)>>,
    free: RefCell<Vec<u32>>,
    next_ctx: Cell<u32>,
    /// Tasks in the slab not finished yet (see [`fast`]).
    tasks: Cell<u32>,
    /// False only while the backend is known quiet ([`Mpi::quiet`]): set
    /// by [`Mpi::stir`] whenever a task, a posted receive, a taken
    /// envelope or an agreement is added, cleared by `quiet` once it
    /// found none left. One load on every fast call instead of four.
    stirred: Cell<bool>,
    /// The last context looked up by [`Mpi::comm`] (its multiple of 4),
    /// its communicators and this process's rank: every hot call looks one
    /// up, and a hash lookup costs a tenth of a small message. Cleared by
    /// `attach` and `release`.
    last: Last,
    policy: WaitPolicy,
    /// MPI's own collectives (else the portable schedules; see
    /// `pertinax_wire::env::MPI_COLLECTIVES`).
    own_coll: bool,
    /// MPI's progress can run this backend's ([`sys::has_progress_hook`]), so
    /// blocking collectives are MPI's blocking calls ([`coll`]).
    hook: bool,
    /// This process's id.
    me: u32,
    /// The processes this one can name (see `spawn`).
    procs: spawn::Procs,
    /// Requests for processes recorded by their asker, by stamp.
    requests: RefCell<HashMap<u64, spawn::Pending>>,
    /// The survivors' communicator [`OwnCommunicators::live_members`](crate::backend::OwnCommunicators::live_members) made last
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
    // A spawned process's start is bounded, up to the end of `init` (the
    // runtime holds the bound until the process has joined its
    // communicators, which the parents make with it).
    let bound = watchdog::init_guard();
    if !sys::initialized() {
        sys::init_thread(sys::Threads::Funneled).map_err(|c| boot("init", c))?;
        sys::arm_revoke_guard();
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
            taken: RefCell::new(Vec::new()),
            unfreed: RefCell::new(Vec::new()),
            slab: RefCell::new(Vec::new()),
            free: RefCell::new(Vec::new()),
            next_ctx: Cell::new(8),
            tasks: Cell::new(0),
            stirred: Cell::new(false),
            last: Last::default(),
            policy: WaitPolicy::for_job(local, cpus),
            own_coll: std::env::var(pertinax_wire::env::MPI_COLLECTIVES)
                .map_or(true, |v| v != "portable"),
            hook: sys::has_progress_hook(),
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
        bound: bound.map(|b| StartBound(Box::new(b))),
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
    #[inline(always)]
    fn comm(&self, ctx: u32) -> Option<(sys::Comm, u32)> {
        if self.last.base.get() != ctx & !3 {
            return self.comm_miss(ctx);
        }
        Some((
            self.last.comms[(ctx & 3) as usize].get(),
            self.last.rank.get(),
        ))
    }

    /// Why context `ctx` has no MPI communicator (freed, or its creation
    /// failed).
    #[cold]
    #[inline(never)]
    fn comm_error(&self, ctx: u32) -> Error {
        self.trio(ctx).err().unwrap_or(Error::CommFreed)
    }

    /// Whether context `ctx` is an intracommunicator's.
    #[cold]
    #[inline(never)]
    fn intra(&self, ctx: u32) -> bool {
        self.trio(ctx).is_ok_and(|t| t.remote.is_none())
    }

    /// [`Mpi::comm`] for a context other than the last one.
    #[cold]
    #[inline(never)]
    fn comm_miss(&self, ctx: u32) -> Option<(sys::Comm, u32)> {
        let t = self.trio(ctx).ok()?;
        self.last.set(ctx & !3, &t);
        Some((t.comms[(ctx & 3) as usize], t.rank))
    }

    /// Whether a send on context `ctx`'s communicators (a multiple of 4)
    /// is still pending.
    fn sending_on(&self, ctx: u32) -> bool {
        self.slab
            .borrow()
            .iter()
            .any(|e| matches!(&e.1, Slot::Send { ctx: c, .. } if c & !3 == ctx))
    }

    /// Frees the released communicators whose sends are all done (see
    /// [`Mpi::unfreed`]).
    fn free_unfreed(&self) {
        let Ok(mut unfreed) = self.unfreed.try_borrow_mut() else {
            return;
        };
        unfreed.retain(|(ctx, t)| {
            let keep = self.sending_on(*ctx);
            if !keep {
                t.free();
            }
            keep
        });
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
                ..
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
