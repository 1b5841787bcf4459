//! The MPI communicators of a pertinax communicator (see "Mapping" in the
//! crate documentation): made over a group, split from a parent or from
//! the last spawn's merge, shrunk by `MPIX_Comm_shrink`, and the
//! duplicates beside the point-to-point one ([`dups`]).

use std::cell::Cell;
use std::rc::Rc;

use pertinax_mpi_sys as sys;

use super::{error_of, CommState, Mpi, Trio};
use crate::backend::{Backend, Peers};
use crate::error::{Error, Result};
use crate::types::Rank;

/// `MPIX_Comm_shrink` of `old`'s recovery communicator, repeated
/// while the result holds a member that `agreed` (by position in `old`)
/// says failed: one whose death a survivor saw but no survivor that took
/// part in the shrink knew of yet. Every survivor gets the same result
/// from `MPIX_Comm_shrink` and passes the same `agreed`, so all loop
/// alike. Returns the communicator, its members' positions in `old` and
/// this process's rank in it.
pub(super) fn shrink_live(old: &Trio, agreed: &[bool]) -> Result<(sys::Comm, Vec<usize>, u32)> {
    let err = |c: sys::Code| error_of(c, None, None);
    let t0 = std::time::Instant::now();
    // The shrink waits for every member that MPI believes alive: the
    // processes of other jobs learn of the deaths known here first.
    old.failed_pids();
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
pub(super) fn dups<const N: usize>(of: [sys::Comm; N]) -> Result<[sys::Comm; N]> {
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

/// Whether two lists of process ids hold the same processes, in any order.
pub(super) fn same_members(a: &[u32], b: &[u32]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

impl Mpi {
    /// The communicator of `peers` (this process at `rank`) split from the
    /// last spawn's merged intercommunicator, if they are its members
    /// (`MPI_Comm_split` returns an error when a member fails, where
    /// `MPI_Comm_create_from_group` would not return); `None` otherwise.
    /// The merged communicator is freed either way once it matched.
    pub(super) fn take_joined(&self, peers: &[u32], rank: u32) -> Option<Result<sys::Comm>> {
        let mut joined = self.joined.borrow_mut();
        let (ids, _) = joined.as_ref()?;
        if !same_members(ids, peers) {
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
    pub(super) fn install(&self, ctx: u32, trio: Result<Trio>) -> CommState {
        self.use_ctx(ctx);
        self.last.clear();
        let trio = trio.map(Rc::new);
        self.comms.borrow_mut().insert(ctx, trio.clone());
        CommState { trio }
    }

    /// The communicators of the shrink of `old` (`MPIX_Comm_shrink`, not
    /// `MPI_Comm_create_from_group` over the agreed survivors: in Open MPI
    /// 5.0.11 a `MPI_Comm_create_from_group` that a process failure
    /// interrupts never returns, or crashes every member without the
    /// guard of `pertinax_mpi_sys::arm_revoke_guard`), and the
    /// members' positions in `old` (see [`shrink_live`]).
    pub(super) fn shrink_trio(&self, old: &Trio, agreed: &[bool]) -> Result<(Trio, Vec<usize>)> {
        let (base, at, rank) = shrink_live(old, agreed)?;
        let members: Peers = old.ids_at(&at).into();
        let trio = self.trio_over(base, rank, &members)?;
        Ok((trio, at))
    }

    /// The communicators of a new pertinax communicator of `peers` (process
    /// ids, see `spawn`) with context `ctx`.
    pub(super) fn make_trio(&self, ctx: u32, rank: u32, peers: &Peers) -> Result<Trio> {
        let err = |c: sys::Code| error_of(c, None, None);
        let base = if ctx == 0 {
            return self.world_trio(rank, peers);
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

    /// The world's communicators, each a duplicate of a transient
    /// `MPI_Comm_create_group` of `MPI_COMM_WORLD` that is freed at once.
    ///
    /// Not duplicates of `MPI_COMM_WORLD` itself: in Open MPI 5.0.x an
    /// `MPI_Comm_dup` allocates its context with a non-blocking allreduce
    /// (libnbc) on the parent, which registers libnbc's progress function
    /// with `opal_progress` until that parent is freed, so every later
    /// MPI call of the run (each `MPI_Recv` of a ping-pong) would pay for
    /// it: 161 instructions a round trip more inside `MPI_Recv` than a C
    /// program that never duplicates (callgrind). `MPI_Comm_create_group`
    /// allocates its context with point-to-point messages, and the
    /// duplicates' parent is gone once they exist, so no communicator
    /// pertinax made keeps the callback registered. A program that
    /// duplicates a communicator itself pays for it, as in C.
    fn world_trio(&self, rank: u32, peers: &Peers) -> Result<Trio> {
        let err = |c: sys::Code| error_of(c, None, None);
        let world = sys::Comm::world();
        let n = world.size().map_err(err)?;
        let all: Vec<i32> = (0..n).collect();
        let mut t = world.create_group(&all, WORLD_TAG).map_err(err)?;
        let made = t.errors_return().map_err(err).and_then(|()| {
            if self.own_coll {
                dups([t; 3]).map(|[base, rec, agr]| [base, base, rec, agr])
            } else {
                dups([t; 4])
            }
        });
        let _ = t.free();
        Ok(Trio::over(made?, rank, peers))
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
    pub(super) fn trio_over(&self, base: sys::Comm, rank: u32, peers: &Peers) -> Result<Trio> {
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
        Ok(Trio::over([base, coll, rec, agr], rank, peers))
    }
}

/// The tag of the world's transient `MPI_Comm_create_group` (any tag
/// works: no other creation runs on the world at start).
const WORLD_TAG: i32 = 0x7074;

impl Trio {
    /// An intracommunicator's trio of `comms` (point-to-point, collective,
    /// recovery, agreement), this process at `rank` of `peers`.
    fn over(comms: [sys::Comm; 4], rank: u32, peers: &Peers) -> Trio {
        Trio {
            comms,
            rank,
            members: peers.clone(),
            remote: None,
            all: peers.to_vec(),
            me_all: rank,
            order: (0..peers.len() as u32).collect(),
            acked: Cell::new(0),
        }
    }
}
