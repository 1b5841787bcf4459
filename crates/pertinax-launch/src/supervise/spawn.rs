//! Spawn requests: choosing slots, publishing the answer, starting and
//! assigning processes.
//!
//! The protocol (see `ToLauncher::Spawn`): the launcher answers a request
//! from slot `s` in `s`'s `Publication`, *before* it starts or assigns
//! anything, and ignores a request from a slot whose death it has already
//! published. Every process of the job that reads the publication after
//! seeing `s` FAILED therefore sees the final answer: either the stamp is
//! there (and the processes exist or will), or it never will be.
//!
//! Status codes written in the publication: [`SPAWN_OK`], [`SPAWN_NO_ROOM`]
//! (not enough slots left), [`SPAWN_REFUSED`] (bad count, program that
//! cannot run, the job is ending).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::{Relaxed, Release};

use pertinax_os::process::ExitKind;
use pertinax_os::segment::{Segment, PUBLISH_MAX};
use pertinax_wire::ctrl::ToRank;

use super::{Proc, Started, Supervisor};
use crate::error::LaunchError;
use crate::report::{Cause, Role};
use crate::spec::resolve_program;

/// Publication status: the processes were started (or assigned)
/// ([`pertinax_wire::spawn::SpawnStatus::Ok`]).
pub const SPAWN_OK: u32 = pertinax_wire::spawn::OK;
/// Publication status: not enough slots left for the fresh processes
/// ([`pertinax_wire::spawn::SpawnStatus::NoRoom`]).
pub const SPAWN_NO_ROOM: u32 = pertinax_wire::spawn::NO_ROOM;
/// Publication status: the request was refused (count 0 or above
/// `PUBLISH_MAX`, a program that cannot be run, the job is ending)
/// ([`pertinax_wire::spawn::SpawnStatus::Refused`]).
pub const SPAWN_REFUSED: u32 = pertinax_wire::spawn::REFUSED;

/// A spawn request, as `ToLauncher::Spawn` carries it.
#[derive(Debug)]
pub(crate) struct Request {
    pub stamp: u64,
    pub program: Option<String>,
    pub args: Vec<String>,
    pub count: u32,
    pub use_spares: bool,
    pub payload: Vec<u8>,
    /// The ranks the processes take over (`replace_failed`), or empty.
    pub replaces: Vec<u32>,
}

/// A process to start for a spawn request.
#[derive(Debug)]
pub(crate) struct NewProc<'a> {
    /// Its slot (state and publication are written already).
    pub slot: u32,
    /// Its position in the request (its `PERTINAX_RANK`).
    pub index: u32,
    /// Number of processes of the request (its `PERTINAX_SIZE`).
    pub count: u32,
    /// The program (resolved path, name as requested) and its arguments;
    /// `None`: the job's program and arguments.
    pub program: Option<(&'a Path, &'a str, &'a [String])>,
    /// Value of `PERTINAX_CMA_ALL`.
    pub cma_all: bool,
    /// The rank it takes over (`replace_failed`), for its output tag.
    pub replaces: Option<u32>,
}

/// Starts processes while the job runs (the launcher; a fake in tests).
pub(crate) trait Starter {
    /// Starts `new` and its helper threads.
    ///
    /// # Errors
    /// When the process cannot be started.
    fn start(&self, new: &NewProc<'_>) -> Result<Started, LaunchError>;
}

/// The slots for `count` processes: `idle` spares first (those given, in
/// order), then fresh slots from `next_free`; `Err(status)` when the
/// request cannot be served (nothing is taken then).
pub(crate) fn choose_slots(
    count: u32,
    idle: &[u32],
    next_free: usize,
    capacity: usize,
) -> Result<Vec<u32>, u32> {
    let count = count as usize;
    if count == 0 || count > PUBLISH_MAX {
        return Err(SPAWN_REFUSED);
    }
    let taken = idle.len().min(count);
    let fresh = count - taken;
    if next_free + fresh > capacity {
        return Err(SPAWN_NO_ROOM);
    }
    Ok(idle[..taken]
        .iter()
        .copied()
        .chain((next_free..next_free + fresh).map(|s| s as u32))
        .collect())
}

/// Writes the answer to slot `s`'s request stamped `stamp`: the slots,
/// their count, the status, and the stamp last (release), so that a reader
/// that sees the stamp (acquire) sees the rest.
pub(crate) fn publish(seg: &Segment, s: usize, stamp: u64, slots: &[u32], status: u32) {
    let p = &seg.ft_block(s).publication;
    for (word, &slot) in p.slots.iter().zip(slots) {
        word.store(slot, Relaxed);
    }
    p.count.store(slots.len() as u32, Relaxed);
    p.status.store(status, Relaxed);
    p.stamp.store(stamp, Release);
}

impl Supervisor<'_> {
    /// Serves a spawn request from slot `s`.
    pub(super) fn spawn_request(&mut self, s: usize, req: Request) {
        // Its death was published: anyone who read the publication since
        // must keep seeing no answer.
        if self.procs[s].failed {
            return;
        }
        let resolved = match self.plan(&req) {
            Ok(plan) => plan,
            Err(status) => {
                publish(self.seg, s, req.stamp, &[], status);
                return;
            }
        };
        let (slots, program) = resolved;
        publish(self.seg, s, req.stamp, &slots, SPAWN_OK);
        let program = program.as_deref().zip(req.program.as_deref());
        for (index, &slot) in slots.iter().enumerate() {
            let assign = ToRank::Assign {
                slots: slots.clone(),
                index: index as u32,
                payload: req.payload.clone(),
            };
            let replaces = req.replaces.get(index).copied();
            let (parent, index) = (s as u32, index as u32);
            if let Some(spare) = self.procs.get_mut(slot as usize) {
                spare.role = Role::Spare { parent, index };
                // Named before it learns its rank from the assignment.
                spare.take_over(replaces, slot);
                spare.send_or_queue(assign);
            } else {
                let new = NewProc {
                    slot,
                    index,
                    count: req.count,
                    program: program.map(|(path, name)| (path, name, &req.args[..])),
                    cma_all: self.cma_all,
                    replaces,
                };
                self.start_fresh(&new, assign, Role::Spawned { parent, index });
            }
            self.procs[s].children.push(slot);
        }
    }

    /// The slots and the resolved program of a request, or the status of
    /// its refusal.
    fn plan(&self, req: &Request) -> Result<(Vec<u32>, Option<PathBuf>), u32> {
        if self.stop.is_some() || self.spare_end != super::SpareEnd::NotYet {
            return Err(SPAWN_REFUSED);
        }
        let program = match &req.program {
            Some(p) => Some(
                resolve_program(Path::new(p), std::env::var_os("PATH").as_deref())
                    .map_err(|_| SPAWN_REFUSED)?,
            ),
            None => None,
        };
        let idle: Vec<u32> = if req.use_spares {
            (0..self.procs.len())
                .filter(|&i| {
                    let p = &self.procs[i];
                    p.is_idle_spare() && p.is_live() && !p.failed
                })
                .map(|i| i as u32)
                .collect()
        } else {
            Vec::new()
        };
        let capacity = self.seg.layout().capacity();
        let slots = choose_slots(req.count, &idle, self.procs.len(), capacity)?;
        Ok((slots, program))
    }

    /// Starts the process of a fresh slot (the next one); one that cannot
    /// be started is published FAILED at once.
    fn start_fresh(&mut self, new: &NewProc<'_>, assign: ToRank, role: Role) {
        debug_assert_eq!(new.slot as usize, self.procs.len());
        match self.starter.start(new) {
            Ok(started) => {
                self.by_pid.insert(started.pid, new.slot);
                self.open_outputs += started.outputs;
                let mut p = Proc::new(started, role);
                // Its tag was named at the start.
                p.take_over(new.replaces, new.slot);
                p.pending.push(assign);
                self.procs.push(p);
            }
            Err(e) => {
                let at = self.start.elapsed();
                let mut p = Proc::blank(0, None, role);
                p.replaces = new.replaces;
                // As a shell reports a command it cannot run.
                p.exited = Some((ExitKind::Code(127), at));
                p.ctrl_closed = true;
                let error = match e {
                    LaunchError::Spawn { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                p.cause = Some(Cause::NotStarted { error });
                self.procs.push(p);
                let s = new.slot as usize;
                self.fail(s);
                self.decide(s);
            }
        }
    }
}
