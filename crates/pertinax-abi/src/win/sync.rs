//! Synchronization: fences (a barrier on the window's communicator),
//! passive target (`MPI_Win_lock`, `_lock_all`: the control segment's
//! locks; flushes: a memory fence, the copies being complete already),
//! and PSCW (`post`, `start`, `complete`, `wait`, `test`: zero-byte
//! messages on the window's communicator, "posted" from a target to each
//! origin of its group, "done" from an origin to each target of its).
//! Each window tracks its epochs ([`Epoch`]) so that an RMA call outside
//! one, or a mismatched call, is `MPI_ERR_RMA_SYNC`.

use std::ffi::c_int;
use std::sync::atomic::{fence, Ordering};

use super::{call, ok, out, shm, with};
use crate::consts::*;

/// The tag of a target's "posted" message.
const POSTED: c_int = 1;
/// The tag of an origin's "done" message.
const DONE: c_int = 2;

/// A passive-target lock this process holds on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    None,
    Shared,
    Exclusive,
    /// `MPI_MODE_NOCHECK`: an epoch without the lock.
    Unchecked,
}

/// The epochs open on a window at this process.
#[derive(Debug)]
pub(crate) struct Epoch {
    /// Between fences (the last one without `MPI_MODE_NOSUCCEED`).
    fence: bool,
    locks: Vec<Held>,
    nlocks: usize,
    /// `MPI_Win_lock_all` (`Some(checked)`).
    all: Option<bool>,
    /// The targets of `MPI_Win_start`.
    access: Option<Vec<usize>>,
    /// The origins of `MPI_Win_post` whose "done" is still to come.
    exposure: Option<Vec<usize>>,
}

impl Epoch {
    pub(crate) fn new(size: usize) -> Epoch {
        Epoch {
            fence: false,
            locks: vec![Held::None; size],
            nlocks: 0,
            all: None,
            access: None,
            exposure: None,
        }
    }

    /// Whether a passive-target epoch is open.
    pub(crate) fn locked(&self) -> bool {
        self.nlocks > 0 || self.all.is_some()
    }

    /// Whether an RMA call may address target `t`.
    pub(crate) fn may_access(&self, t: usize) -> bool {
        self.fence
            || self.all.is_some()
            || self.locks.get(t).is_some_and(|h| *h != Held::None)
            || self.access.as_ref().is_some_and(|a| a.contains(&t))
    }
}

/// A target rank of the window: `None` for `MPI_PROC_NULL`, else
/// `MPI_ERR_RANK` outside it.
pub(crate) fn target(rank: c_int, size: usize) -> Result<Option<usize>, c_int> {
    if rank == MPI_PROC_NULL {
        return Ok(None);
    }
    usize::try_from(rank)
        .ok()
        .filter(|&r| r < size)
        .map(Some)
        .ok_or(MPI_ERR_RANK)
}

crate::mpi! {
    /// `MPI_Win_fence`: collective; closes the epoch before and opens the
    /// next (none after `MPI_MODE_NOSUCCEED`).
    fn PMPI_Win_fence(assert: c_int, win: c_int) -> c_int as MPI_Win_fence {
        call(win, "MPI_Win_fence", |e| {
            let comm = with(e, |g| {
                let ep = &g.epoch;
                if ep.locked() || ep.access.is_some() || ep.exposure.is_some() {
                    return Err(MPI_ERR_RMA_SYNC);
                }
                Ok(g.comm)
            })?;
            fence(Ordering::SeqCst);
            super::barrier(comm)?;
            fence(Ordering::SeqCst);
            with(e, |g| {
                g.epoch.fence = assert & MPI_MODE_NOSUCCEED == 0;
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Win_lock`: takes target `rank`'s lock (not with
    /// `MPI_MODE_NOCHECK`).
    fn PMPI_Win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: c_int) -> c_int as MPI_Win_lock {
        call(win, "MPI_Win_lock", |e| {
            with(e, |g| {
                let exclusive = match lock_type {
                    MPI_LOCK_EXCLUSIVE => true,
                    MPI_LOCK_SHARED => false,
                    _ => return Err(MPI_ERR_LOCKTYPE),
                };
                let Some(t) = target(rank, g.size)? else {
                    return Ok(());
                };
                if g.epoch.all.is_some() || g.epoch.locks[t] != Held::None {
                    return Err(MPI_ERR_RMA_SYNC);
                }
                let held = if assert & MPI_MODE_NOCHECK != 0 {
                    Held::Unchecked
                } else {
                    shm::lock(&g.ctl, t, exclusive)?;
                    if exclusive { Held::Exclusive } else { Held::Shared }
                };
                g.epoch.locks[t] = held;
                g.epoch.nlocks += 1;
                fence(Ordering::SeqCst);
                Ok(())
            })
        })
    }
}

/// Releases this process's lock on target `t`.
fn release(g: &mut super::WinEntry, t: usize) -> Result<(), c_int> {
    let held = std::mem::replace(&mut g.epoch.locks[t], Held::None);
    if held == Held::None {
        return Err(MPI_ERR_RMA_SYNC);
    }
    g.epoch.nlocks -= 1;
    fence(Ordering::SeqCst);
    match held {
        Held::Shared => shm::unlock(&g.ctl, t, false),
        Held::Exclusive => shm::unlock(&g.ctl, t, true),
        _ => Ok(()),
    }
}

crate::mpi! {
    /// `MPI_Win_unlock`: the accesses to `rank` are complete; its lock
    /// goes.
    fn PMPI_Win_unlock(rank: c_int, win: c_int) -> c_int as MPI_Win_unlock {
        call(win, "MPI_Win_unlock", |e| {
            with(e, |g| match target(rank, g.size)? {
                Some(t) => release(g, t),
                None => Ok(()),
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Win_lock_all`: a shared lock on every target, taken in rank
    /// order (not with `MPI_MODE_NOCHECK`).
    fn PMPI_Win_lock_all(assert: c_int, win: c_int) -> c_int as MPI_Win_lock_all {
        call(win, "MPI_Win_lock_all", |e| {
            with(e, |g| {
                if g.epoch.locked() {
                    return Err(MPI_ERR_RMA_SYNC);
                }
                let checked = assert & MPI_MODE_NOCHECK == 0;
                if checked {
                    for t in 0..g.size {
                        if let Err(code) = shm::lock(&g.ctl, t, false) {
                            for u in 0..t {
                                let _ = shm::unlock(&g.ctl, u, false);
                            }
                            return Err(code);
                        }
                    }
                }
                g.epoch.all = Some(checked);
                fence(Ordering::SeqCst);
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Win_unlock_all`.
    fn PMPI_Win_unlock_all(win: c_int) -> c_int as MPI_Win_unlock_all {
        call(win, "MPI_Win_unlock_all", |e| {
            with(e, |g| {
                let checked = g.epoch.all.take().ok_or(MPI_ERR_RMA_SYNC)?;
                fence(Ordering::SeqCst);
                if checked {
                    for t in 0..g.size {
                        shm::unlock(&g.ctl, t, false)?;
                    }
                }
                Ok(())
            })
        })
    }
}

/// A flush: the copies are complete when the calls return; a memory
/// fence orders this process's loads and stores. `rank`: the target
/// (checked, and it must be locked), or none for the `_all` forms.
fn flush(win: c_int, what: &str, rank: Option<c_int>) -> c_int {
    call(win, what, |e| {
        with(e, |g| {
            let t = match rank {
                Some(r) => target(r, g.size)?,
                None => None,
            };
            let open = match t {
                Some(t) => g.epoch.all.is_some() || g.epoch.locks[t] != Held::None,
                None => g.epoch.locked(),
            };
            if !open && rank != Some(MPI_PROC_NULL) {
                return Err(MPI_ERR_RMA_SYNC);
            }
            fence(Ordering::SeqCst);
            Ok(())
        })
    })
}

crate::mpi! {
    /// `MPI_Win_flush`.
    fn PMPI_Win_flush(rank: c_int, win: c_int) -> c_int as MPI_Win_flush {
        flush(win, "MPI_Win_flush", Some(rank))
    }
}

crate::mpi! {
    /// `MPI_Win_flush_all`.
    fn PMPI_Win_flush_all(win: c_int) -> c_int as MPI_Win_flush_all {
        flush(win, "MPI_Win_flush_all", None)
    }
}

crate::mpi! {
    /// `MPI_Win_flush_local`.
    fn PMPI_Win_flush_local(rank: c_int, win: c_int) -> c_int as MPI_Win_flush_local {
        flush(win, "MPI_Win_flush_local", Some(rank))
    }
}

crate::mpi! {
    /// `MPI_Win_flush_local_all`.
    fn PMPI_Win_flush_local_all(win: c_int) -> c_int as MPI_Win_flush_local_all {
        flush(win, "MPI_Win_flush_local_all", None)
    }
}

crate::mpi! {
    /// `MPI_Win_sync`: a memory fence (the public and private copies are
    /// one: `MPI_WIN_UNIFIED`).
    fn PMPI_Win_sync(win: c_int) -> c_int as MPI_Win_sync {
        call(win, "MPI_Win_sync", |_| {
            fence(Ordering::SeqCst);
            Ok(())
        })
    }
}

/// The ranks in the window of the members of `group`
/// (`MPI_ERR_GROUP` for a process not in it).
fn ranks_of(win: c_int, group: c_int) -> Result<Vec<usize>, c_int> {
    let mut n = 0;
    // SAFETY: an int to write.
    ok(unsafe { crate::comm::PMPI_Group_size(group, &mut n) })?;
    let mut wg = MPI_GROUP_NULL;
    // SAFETY: an int to write.
    ok(unsafe { super::PMPI_Win_get_group(win, &mut wg) })?;
    let from: Vec<c_int> = (0..n).collect();
    let mut to = vec![0; from.len()];
    // SAFETY: `n` ranks in, `n` out.
    let rc = unsafe {
        crate::comm::PMPI_Group_translate_ranks(group, n, from.as_ptr(), wg, to.as_mut_ptr())
    };
    // SAFETY: the group just made.
    unsafe { crate::comm::PMPI_Group_free(&mut wg) };
    ok(rc)?;
    to.iter()
        .map(|&r| usize::try_from(r).map_err(|_| 8))
        .collect()
}

/// A zero-byte message with `tag` to `to` on `comm`.
fn send(comm: c_int, to: usize, tag: c_int) -> Result<(), c_int> {
    // SAFETY: no data.
    ok(unsafe { crate::p2p::PMPI_Send(std::ptr::null(), 0, MPI_BYTE, to as c_int, tag, comm) })
}

/// The zero-byte message with `tag` from `from` on `comm`.
fn recv(comm: c_int, from: usize, tag: c_int) -> Result<(), c_int> {
    // SAFETY: no data, no status.
    ok(unsafe {
        crate::p2p::PMPI_Recv(
            std::ptr::null_mut(),
            0,
            MPI_BYTE,
            from as c_int,
            tag,
            comm,
            MPI_STATUS_IGNORE,
        )
    })
}

crate::mpi! {
    /// `MPI_Win_post`: exposes the window to the origins of `group`
    /// (tells each).
    fn PMPI_Win_post(group: c_int, assert: c_int, win: c_int) -> c_int as MPI_Win_post {
        call(win, "MPI_Win_post", |e| {
            let ranks = ranks_of(win, group)?;
            let comm = with(e, |g| {
                if g.epoch.exposure.is_some() {
                    return Err(MPI_ERR_RMA_SYNC);
                }
                Ok(g.comm)
            })?;
            fence(Ordering::SeqCst);
            if assert & MPI_MODE_NOCHECK == 0 {
                for &r in &ranks {
                    send(comm, r, POSTED)?;
                }
            }
            with(e, |g| {
                g.epoch.exposure = Some(ranks);
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Win_start`: an access epoch to the targets of `group`, once
    /// each has posted.
    fn PMPI_Win_start(group: c_int, assert: c_int, win: c_int) -> c_int as MPI_Win_start {
        call(win, "MPI_Win_start", |e| {
            let ranks = ranks_of(win, group)?;
            let comm = with(e, |g| {
                if g.epoch.access.is_some() {
                    return Err(MPI_ERR_RMA_SYNC);
                }
                Ok(g.comm)
            })?;
            if assert & MPI_MODE_NOCHECK == 0 {
                for &r in &ranks {
                    recv(comm, r, POSTED)?;
                }
            }
            fence(Ordering::SeqCst);
            with(e, |g| {
                g.epoch.access = Some(ranks);
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Win_complete`: ends the access epoch; tells each target.
    fn PMPI_Win_complete(win: c_int) -> c_int as MPI_Win_complete {
        call(win, "MPI_Win_complete", |e| {
            let (comm, ranks) = with(e, |g| {
                let a = g.epoch.access.take().ok_or(MPI_ERR_RMA_SYNC)?;
                Ok((g.comm, a))
            })?;
            fence(Ordering::SeqCst);
            for r in ranks {
                send(comm, r, DONE)?;
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Win_wait`: ends the exposure epoch once every origin is done.
    fn PMPI_Win_wait(win: c_int) -> c_int as MPI_Win_wait {
        call(win, "MPI_Win_wait", |e| {
            let (comm, ranks) = with(e, |g| {
                let a = g.epoch.exposure.take().ok_or(MPI_ERR_RMA_SYNC)?;
                Ok((g.comm, a))
            })?;
            for r in ranks {
                recv(comm, r, DONE)?;
            }
            fence(Ordering::SeqCst);
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Win_test`: as `MPI_Win_wait` if every origin is done (flag
    /// true), else nothing (false).
    fn PMPI_Win_test(win: c_int, flag: *mut c_int) -> c_int as MPI_Win_test {
        call(win, "MPI_Win_test", |e| {
            let (comm, mut ranks) = with(e, |g| {
                let a = g.epoch.exposure.take().ok_or(MPI_ERR_RMA_SYNC)?;
                Ok((g.comm, a))
            })?;
            let mut err = Ok(());
            ranks.retain(|&r| {
                if err.is_err() {
                    return true;
                }
                let mut f = 0;
                // SAFETY: an int to write, no status.
                let rc = unsafe { crate::p2p::PMPI_Iprobe(r as c_int, DONE, comm, &mut f, MPI_STATUS_IGNORE) };
                if let Err(c) = ok(rc) {
                    err = Err(c);
                    return true;
                }
                if f == 0 {
                    return true;
                }
                err = recv(comm, r, DONE);
                err.is_err()
            });
            let done = ranks.is_empty();
            with(e, |g| {
                if !done {
                    g.epoch.exposure = Some(ranks);
                }
                Ok(())
            })?;
            err?;
            fence(Ordering::SeqCst);
            // SAFETY: MPI's contract.
            unsafe { out(flag, c_int::from(done)) }
        })
    }
}
