//! Telling the other jobs of a death, once this process shares a
//! communicator with one.
//!
//! Open MPI 5.0.11 with PRRTE 3 reports a death only to the dead
//! process's own job. A process of another job (a spawn's children, or
//! their parents) learns of it only when their TCP connection breaks, and
//! at times it never does: then its `MPIX_Comm_agree` waits for the dead
//! process forever while the other members have returned, and its
//! receives from it never end (`pertinax-mpi-sys/checks/spawned_agree_death.c`:
//! a replacement never connected to the victim; the MPI replace
//! campaign's hang of run 1617, `bench-results/2026-12-01/replace-hang/`). So a
//! process that knows of a death tells the whole session through PMIx
//! ([`sys::tell_failed`]), and Open MPI's own handler marks the process
//! failed at every process that did not know yet, as if PRRTE had
//! reported it.
//!
//! Every process that learns of a death tells once per dead process, and
//! only once it has met a process of another job (a spawn): a job
//! without spawns never tells anything. The dead process's PMIx name
//! comes from its process id ([`super::spawn`]): world `w > 0` is job
//! `<prefix>@w` of the launcher's session, world 0 the job `mpirun`
//! started, whose namespace a spawned process receives with its
//! assignment ([`origin_job`]).

use std::cell::RefCell;
use std::collections::HashSet;

use pertinax_mpi_sys as sys;

use super::spawn::RANK_BITS;

/// What this process knows to tell.
#[derive(Debug, Default)]
struct Teller {
    /// Whether it met a process of another job.
    mixed: bool,
    /// Its own world number (see [`super::spawn`]).
    world: u32,
    /// The job number of world 0 (the `N` of its `...@N` namespace).
    origin: Option<u32>,
    /// The process ids it told of.
    told: HashSet<u32>,
}

thread_local! {
    // The MPI backend runs on one thread (its state is `Rc`), as the
    // process's PMIx identity is one.
    static TELLER: RefCell<Teller> = RefCell::new(Teller::default());
}

/// This process's namespace (`PMIX_NAMESPACE`), split at its last `@`:
/// the session's prefix and this process's job number.
pub(super) fn own_namespace() -> Option<(String, u32)> {
    let ns = std::env::var("PMIX_NAMESPACE").ok()?;
    let (prefix, n) = ns.rsplit_once('@')?;
    Some((prefix.to_string(), n.parse().ok()?))
}

/// World 0's job number, for a spawned process's assignment: this
/// process's own job number if `mpirun` started it (`own_world` 0), else
/// the one its own assignment named; `None` if unknown.
pub(super) fn origin_job(own_world: u32) -> Option<u32> {
    if own_world == 0 {
        return own_namespace().map(|(_, n)| n);
    }
    TELLER.with(|t| t.borrow().origin)
}

/// Records that this process (of world `world`) now shares a
/// communicator with a process of another job; `origin` is world 0's job
/// number if this process learnt it (a spawned process, from its
/// assignment).
pub(super) fn met_another_job(world: u32, origin: Option<u32>) {
    TELLER.with(|t| {
        let mut t = t.borrow_mut();
        t.mixed = true;
        t.world = world;
        if origin.is_some() {
            t.origin = origin;
        }
    });
}

/// The PMIx namespace and rank of process id `pid`, seen from a process
/// of world `own_world` whose namespace is `prefix@own_job`, when world 0
/// is job `origin`.
fn pmix_name(
    pid: u32,
    (prefix, own_job): (&str, u32),
    own_world: u32,
    origin: Option<u32>,
) -> Option<(String, u32)> {
    let world = pid >> RANK_BITS;
    let job = match (world, own_world) {
        (0, 0) => own_job,
        (0, _) => origin?,
        (w, _) => w,
    };
    Some((format!("{prefix}@{job}"), pid & ((1 << RANK_BITS) - 1)))
}

/// Tells the session of the deaths of `pids` this process has not told
/// of yet (nothing before it met another job). Best effort: a process PMIx cannot name, or a
/// notice PMIx refuses, is not told again (the connection's break may
/// still tell).
pub(super) fn spread(pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    TELLER.with(|t| {
        let Ok(mut t) = t.try_borrow_mut() else {
            return;
        };
        if !t.mixed {
            return;
        }
        let Some((prefix, own_job)) = own_namespace() else {
            return;
        };
        let (origin, own_world) = (t.origin, t.world);
        for &p in pids {
            if !t.told.insert(p) {
                continue;
            }
            if let Some((ns, rank)) = pmix_name(p, (&prefix, own_job), own_world, origin) {
                // Refused: nothing more to do (see above).
                let _ = sys::tell_failed(&ns, rank);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{pmix_name, RANK_BITS};

    #[test]
    fn a_process_id_names_its_job_in_the_session() {
        let own = ("prterun-vm-1", 1);
        // Seen from world 0 (job 1): world 0 is this job, world 3 job 3.
        assert_eq!(
            pmix_name(5, own, 0, None),
            Some(("prterun-vm-1@1".into(), 5))
        );
        let spawned = (3 << RANK_BITS) | 2;
        assert_eq!(
            pmix_name(spawned, own, 0, None),
            Some(("prterun-vm-1@3".into(), 2))
        );
        // Seen from a spawned world (job 3): world 0 is the origin it was
        // told, unknown without it.
        let child = ("prterun-vm-1", 3);
        assert_eq!(
            pmix_name(4, child, 3, Some(1)),
            Some(("prterun-vm-1@1".into(), 4))
        );
        assert_eq!(pmix_name(4, child, 3, None), None);
    }
}
