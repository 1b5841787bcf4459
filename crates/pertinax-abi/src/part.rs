//! Partitioned point-to-point (MPI 4): `MPI_Psend_init`, `MPI_Precv_init`,
//! `MPI_Pready`, `MPI_Pready_range`, `MPI_Pready_list`, `MPI_Parrived`.
//!
//! Both inits make persistent requests (`persist.rs`) for one message of
//! `partitions * count` elements. A receive's start is an `MPI_Irecv` of
//! the whole buffer. A send's start begins nothing: its operation is
//! [`persist::DEFERRED`] until the last of its partitions is marked ready,
//! which starts an `MPI_Isend` of the whole buffer (so a test before then
//! says not done; a wait is `MPI_ERR_REQUEST`, since it could never end).
//! `MPI_Parrived` says a partition arrived once the whole message has
//! (MPI allows it: a partition may be reported late, never early); on an
//! inactive request it says arrived.
//!
//! Matching: the message travels on the communicator with the init's tag,
//! like the persistent sends and receives, so a partitioned message can
//! match an ordinary receive of the same source and tag (MPI keeps the
//! two apart; pertinax has no hidden context to send on without a
//! collective call). `MPI_ANY_SOURCE` and `MPI_ANY_TAG` are refused
//! (`MPI_ERR_RANK`, `MPI_ERR_TAG`), as MPI says; the info is not read.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::rc::Rc;

use crate::consts::*;
use crate::errors::raise;
use crate::large::MPI_Count;
use crate::p2p::call;
use crate::persist::{self, Resolved, Starter, DEFERRED};
use crate::serial::Serial;

/// A partitioned send: its partitions' ready flags and what sends the
/// whole message.
struct Send {
    ready: Vec<bool>,
    send: Starter,
}

/// A partitioned request: its number of partitions, and a send's state.
struct Part {
    partitions: usize,
    send: Option<Rc<RefCell<Send>>>,
}

/// Partitioned requests by their persistent request's handle.
static PARTS: Serial<RefCell<Vec<(c_int, Part)>>> = Serial::new(RefCell::new(Vec::new()));

/// Records partitioned request `h` (in place of a freed one it reuses
/// the handle of).
fn add(h: c_int, part: Part) {
    PARTS.with(|t| {
        let mut t = t.borrow_mut();
        t.retain(|(k, _)| *k != h);
        t.push((h, part));
    });
}

/// The number of partitions of request `h`, and a send's state.
fn part(h: c_int) -> Option<(usize, Option<Rc<RefCell<Send>>>)> {
    PARTS.with(|t| {
        t.borrow()
            .iter()
            .find(|(k, _)| *k == h)
            .map(|(_, p)| (p.partitions, p.send.clone()))
    })
}

/// The whole message's element count (`MPI_ERR_ARG` for fewer than one
/// partition, `MPI_ERR_COUNT` for a negative or too large count).
fn total(partitions: c_int, count: MPI_Count) -> Result<c_int, c_int> {
    if partitions < 1 {
        return Err(MPI_ERR_ARG);
    }
    if count < 0 {
        return Err(MPI_ERR_COUNT);
    }
    MPI_Count::from(partitions)
        .checked_mul(count)
        .and_then(|n| c_int::try_from(n).ok())
        .ok_or(MPI_ERR_COUNT)
}

crate::mpi! {
    /// `MPI_Psend_init` (see the module's documentation).
    fn PMPI_Psend_init(buf: *const c_void, partitions: c_int, count: MPI_Count, ty: c_int, dest: c_int, tag: c_int, comm: c_int, _info: c_int, request: *mut c_int) -> c_int as MPI_Psend_init {
        call(comm, "MPI_Psend_init", || {
            let n = total(partitions, count)?;
            let (_, t, k) = crate::check::send(buf, n, ty, dest, tag, comm)?;
            t.bytes(k)?;
            let send: Starter = Rc::new(move |r| {
                // SAFETY: MPI's contract: the init's buffer stays valid
                // while the request lives.
                unsafe { crate::p2p::PMPI_Isend(buf, n, ty, dest, tag, comm, r) }
            });
            let state = Rc::new(RefCell::new(Send { ready: vec![false; partitions as usize], send }));
            let at_start = state.clone();
            let start: Starter = Rc::new(move |r| {
                at_start.borrow_mut().ready.iter_mut().for_each(|f| *f = false);
                // SAFETY: the persistent request's own slot.
                unsafe { *r = DEFERRED };
                MPI_SUCCESS
            });
            persist::register(comm, start, request)?;
            // SAFETY: `register` wrote the handle.
            let h = unsafe { *request };
            add(h, Part { partitions: partitions as usize, send: Some(state) });
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Precv_init` (see the module's documentation).
    fn PMPI_Precv_init(buf: *mut c_void, partitions: c_int, count: MPI_Count, ty: c_int, source: c_int, tag: c_int, comm: c_int, _info: c_int, request: *mut c_int) -> c_int as MPI_Precv_init {
        call(comm, "MPI_Precv_init", || {
            if source == MPI_ANY_SOURCE {
                return Err(MPI_ERR_RANK);
            }
            if tag == MPI_ANY_TAG {
                return Err(MPI_ERR_TAG);
            }
            let n = total(partitions, count)?;
            let (_, t, k) = crate::check::recv(buf, n, ty, source, tag, comm)?;
            t.bytes(k)?;
            let start: Starter = Rc::new(move |r| {
                // SAFETY: MPI's contract: the init's buffer stays valid
                // while the request lives.
                unsafe { crate::p2p::PMPI_Irecv(buf, n, ty, source, tag, comm, r) }
            });
            persist::register(comm, start, request)?;
            // SAFETY: `register` wrote the handle.
            add(unsafe { *request }, Part { partitions: partitions as usize, send: None });
            Ok(())
        })
    }
}

/// Marks `partitions` of send request `h` ready; the last one starts the
/// send. `MPI_ERR_REQUEST` unless `h` is a started partitioned send;
/// `MPI_ERR_ARG` for a partition out of range or ready already.
fn ready(h: c_int, partitions: impl IntoIterator<Item = c_int>) -> Result<(), (c_int, c_int)> {
    let world = |code| (MPI_COMM_WORLD, code);
    let comm = match persist::resolve(h) {
        Resolved::Active(DEFERRED) => persist_comm(h),
        Resolved::Active(_) | Resolved::Inactive(_) => {
            return Err((persist_comm(h), MPI_ERR_REQUEST))
        }
        Resolved::Plain(_) | Resolved::Invalid => return Err(world(MPI_ERR_REQUEST)),
    };
    let state = part(h)
        .and_then(|(_, s)| s)
        .ok_or((comm, MPI_ERR_REQUEST))?;
    let send = {
        let mut s = state.borrow_mut();
        for p in partitions {
            let f = usize::try_from(p)
                .ok()
                .and_then(|p| s.ready.get_mut(p))
                .filter(|f| !**f)
                .ok_or((comm, MPI_ERR_ARG))?;
            *f = true;
        }
        s.ready.iter().all(|&f| f).then(|| s.send.clone())
    };
    if let Some(send) = send {
        let mut r = MPI_REQUEST_NULL;
        // No borrow is held: the send calls MPI.
        let rc = send(&mut r);
        if rc != MPI_SUCCESS {
            return Err((comm, rc));
        }
        persist::set_active(h, r);
    }
    Ok(())
}

/// The communicator of persistent request `h` (the world's for none).
fn persist_comm(h: c_int) -> c_int {
    match persist::resolve(h) {
        Resolved::Inactive(c) => c,
        _ => persist::comm(h).unwrap_or(MPI_COMM_WORLD),
    }
}

crate::mpi! {
    /// `MPI_Pready`: partition `partition` of send request `request` is
    /// ready (the last one starts the send).
    fn PMPI_Pready(partition: c_int, request: c_int) -> c_int as MPI_Pready {
        match ready(request, [partition]) {
            Ok(()) => MPI_SUCCESS,
            Err((comm, code)) => raise(comm, "MPI_Pready", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Pready_range`: partitions `low` to `high` (inclusive).
    fn PMPI_Pready_range(low: c_int, high: c_int, request: c_int) -> c_int as MPI_Pready_range {
        if low > high {
            return raise(persist_comm(request), "MPI_Pready_range", MPI_ERR_ARG);
        }
        match ready(request, low..=high) {
            Ok(()) => MPI_SUCCESS,
            Err((comm, code)) => raise(comm, "MPI_Pready_range", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Pready_list`: the `length` partitions listed.
    fn PMPI_Pready_list(length: c_int, partitions: *const c_int, request: c_int) -> c_int as MPI_Pready_list {
        let list = match usize::try_from(length) {
            Ok(0) => &[][..],
            Ok(n) if !partitions.is_null() => {
                // SAFETY: MPI's contract: `partitions` holds `length` ints.
                unsafe { std::slice::from_raw_parts(partitions, n) }
            }
            _ => return raise(persist_comm(request), "MPI_Pready_list", MPI_ERR_ARG),
        };
        match ready(request, list.iter().copied()) {
            Ok(()) => MPI_SUCCESS,
            Err((comm, code)) => raise(comm, "MPI_Pready_list", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Parrived`: whether partition `partition` of receive request
    /// `request` arrived (once the whole message has; at once for an
    /// inactive request). `MPI_ERR_REQUEST` unless `request` is a
    /// partitioned receive; `MPI_ERR_ARG` for a partition out of range.
    fn PMPI_Parrived(request: c_int, partition: c_int, flag: *mut c_int) -> c_int as MPI_Parrived {
        let comm = persist_comm(request);
        let Some((n, None)) = part(request) else {
            return raise(comm, "MPI_Parrived", MPI_ERR_REQUEST);
        };
        if flag.is_null() || !usize::try_from(partition).is_ok_and(|p| p < n) {
            return raise(comm, "MPI_Parrived", MPI_ERR_ARG);
        }
        let arrived = match persist::resolve(request) {
            Resolved::Inactive(_) => true,
            Resolved::Active(DEFERRED) => false,
            Resolved::Active(_) => {
                crate::p2p::progress(request);
                crate::p2p::is_done(request)
            }
            Resolved::Plain(_) | Resolved::Invalid => return raise(MPI_COMM_WORLD, "MPI_Parrived", MPI_ERR_REQUEST),
        };
        // SAFETY: checked non-null; writable by MPI's contract.
        unsafe { *flag = c_int::from(arrived) };
        MPI_SUCCESS
    }
}
