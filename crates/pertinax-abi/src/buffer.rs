//! The buffers of buffered sends: the process's (`MPI_Buffer_attach`,
//! `MPI_Buffer_detach`, MPI 4.1's `MPI_Buffer_flush`,
//! `MPI_Buffer_iflush`) and a communicator's (MPI 4.1's
//! `MPI_Comm_attach_buffer`, `MPI_Comm_detach_buffer`,
//! `MPI_Comm_flush_buffer`, `MPI_Comm_iflush_buffer`), with their `_c`
//! forms. A buffered send on a communicator uses the communicator's
//! buffer if one is attached, else the process's ([`room`]).
//!
//! pertinax copies a buffered message itself and sends it in the
//! background, so the program's buffer is never written: it only bounds
//! what one buffered send may carry (the message and
//! `MPI_BSEND_OVERHEAD`). `MPI_BUFFER_AUTOMATIC` attached sets no bound.
//! The messages are on their way as soon as the send returns, so a
//! detach or a flush has nothing to wait for, and an `iflush`'s request
//! is complete at once. Detaching an `MPI_BUFFER_AUTOMATIC` buffer gives
//! back `MPI_BUFFER_AUTOMATIC` and size 0.
//!
//! Errors: attaching a second buffer where one is attached, or a negative
//! size, and detaching where none is, are `MPI_ERR_BUFFER`; the `int`
//! detach of a buffer larger than `INT_MAX` bytes is `MPI_ERR_COUNT` (the
//! buffer stays attached). A communicator's buffer is dropped with the
//! communicator (`MPI_Comm_free`). The sessions' buffers are not here.

use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void};

use crate::consts::*;
use crate::errors::raise;
use crate::info::{with_table, PerComm};
use crate::large::MPI_Count;
use crate::p2p::{entry_comm, null_status};
use crate::serial::Serial;
use crate::state::{self, ReqEntry};

/// `MPI_BSEND_OVERHEAD`: what MPI programs add per message.
pub(crate) const BSEND_OVERHEAD: usize = MPI_BSEND_OVERHEAD as usize;

/// An attached buffer: its address and size in bytes.
#[derive(Debug, Clone, Copy)]
struct Attached {
    addr: *mut c_void,
    size: MPI_Count,
}

impl Attached {
    /// The largest message one buffered send may carry through it.
    fn room(self) -> usize {
        if self.addr == MPI_BUFFER_AUTOMATIC {
            usize::MAX
        } else {
            usize::try_from(self.size)
                .unwrap_or(0)
                .saturating_sub(BSEND_OVERHEAD)
        }
    }
}

/// The process's buffer.
static PROCESS: Serial<Cell<Option<Attached>>> = Serial::new(Cell::new(None));
/// The communicators' buffers.
static COMMS: Serial<RefCell<PerComm<Attached>>> = Serial::new(RefCell::new(PerComm::new()));

/// The largest message a buffered send on `comm` may carry: bounded by
/// the communicator's buffer, else its session's (a communicator made
/// from a session's group), else the process's; 0 with none.
pub(crate) fn room(comm: c_int) -> usize {
    if let Some(own) = with_table(&COMMS, |t| t.get(comm).copied()).ok().flatten() {
        return own.room();
    }
    if let Some(n) = crate::session::bsend_room(comm) {
        return n.saturating_sub(if n == usize::MAX { 0 } else { BSEND_OVERHEAD });
    }
    PROCESS.with(Cell::get).map_or(0, Attached::room)
}

/// A buffer `addr` of `size` bytes, or `MPI_ERR_BUFFER` for a negative
/// size.
fn checked(addr: *mut c_void, size: MPI_Count) -> Result<Attached, c_int> {
    if size < 0 && addr != MPI_BUFFER_AUTOMATIC {
        return Err(MPI_ERR_BUFFER);
    }
    let size = if addr == MPI_BUFFER_AUTOMATIC {
        0
    } else {
        size
    };
    Ok(Attached { addr, size })
}

/// Attaches the process's buffer.
fn attach(addr: *mut c_void, size: MPI_Count) -> Result<(), c_int> {
    let b = checked(addr, size)?;
    if PROCESS.with(Cell::get).is_some() {
        return Err(MPI_ERR_BUFFER);
    }
    PROCESS.with(|p| p.set(Some(b)));
    Ok(())
}

/// Attaches `comm`'s buffer.
fn comm_attach(comm: c_int, addr: *mut c_void, size: MPI_Count) -> Result<(), c_int> {
    let c = entry_comm(comm)?;
    let b = checked(addr, size)?;
    with_table(&COMMS, |t| {
        if t.get(comm).is_some() {
            return Err(MPI_ERR_BUFFER);
        }
        t.set(comm, &c, b);
        Ok(())
    })?
}

/// Writes a detached buffer to the program's `void **` and size, unless
/// the size does not fit `S` (then `MPI_ERR_COUNT`, before anything is
/// written).
///
/// # Safety
/// `addr` is null or a writable `void **`; `size` null or writable.
unsafe fn put<S: TryFrom<MPI_Count>>(
    b: Attached,
    addr: *mut c_void,
    size: *mut S,
) -> Result<(), c_int> {
    if addr.is_null() || size.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let n = S::try_from(b.size).map_err(|_| MPI_ERR_COUNT)?;
    // SAFETY: checked non-null; MPI's contract: `addr` is a `void **`.
    unsafe {
        *addr.cast::<*mut c_void>() = b.addr;
        *size = n;
    }
    Ok(())
}

/// Detaches the process's buffer into the program's `addr` and `size`.
///
/// # Safety
/// As [`put`].
unsafe fn detach<S: TryFrom<MPI_Count>>(addr: *mut c_void, size: *mut S) -> Result<(), c_int> {
    let b = PROCESS.with(Cell::get).ok_or(MPI_ERR_BUFFER)?;
    // SAFETY: by the caller's contract.
    unsafe { put(b, addr, size) }?;
    PROCESS.with(|p| p.set(None));
    Ok(())
}

/// Detaches `comm`'s buffer into the program's `addr` and `size`.
///
/// # Safety
/// As [`put`].
unsafe fn comm_detach<S: TryFrom<MPI_Count>>(
    comm: c_int,
    addr: *mut c_void,
    size: *mut S,
) -> Result<(), c_int> {
    entry_comm(comm)?;
    let b = with_table(&COMMS, |t| t.get(comm).copied())?.ok_or(MPI_ERR_BUFFER)?;
    // SAFETY: by the caller's contract.
    unsafe { put(b, addr, size) }?;
    with_table(&COMMS, |t| t.remove(comm))
}

/// Writes a request that is complete already (an `iflush`'s).
fn done_request(req: *mut c_int) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let h = state::with(|s| {
        REQUEST_DIRECT | state::insert(&mut s.requests, ReqEntry::Done(null_status())) as c_int
    })
    .ok_or(MPI_ERR_OTHER)?;
    // SAFETY: checked non-null; writable by MPI's contract.
    unsafe { *req = h };
    Ok(())
}

/// The result of `r` through `comm`'s error handler.
fn done(comm: c_int, what: &str, r: Result<(), c_int>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(code) => raise(comm, what, code),
    }
}

crate::mpi! {
    /// `MPI_Buffer_attach`: the process's buffer (`MPI_BUFFER_AUTOMATIC`:
    /// no bound).
    fn PMPI_Buffer_attach(buf: *mut c_void, size: c_int) -> c_int as MPI_Buffer_attach {
        done(MPI_COMM_WORLD, "MPI_Buffer_attach", attach(buf, size.into()))
    }
}

crate::mpi! {
    /// `MPI_Buffer_attach_c`.
    fn PMPI_Buffer_attach_c(buf: *mut c_void, size: MPI_Count) -> c_int as MPI_Buffer_attach_c {
        done(MPI_COMM_WORLD, "MPI_Buffer_attach_c", attach(buf, size))
    }
}

crate::mpi! {
    /// `MPI_Buffer_detach`: gives the process's buffer back (`void **` and
    /// size).
    fn PMPI_Buffer_detach(buf: *mut c_void, size: *mut c_int) -> c_int as MPI_Buffer_detach {
        // SAFETY: MPI's contract for the out-arguments.
        done(MPI_COMM_WORLD, "MPI_Buffer_detach", unsafe { detach(buf, size) })
    }
}

crate::mpi! {
    /// `MPI_Buffer_detach_c`.
    fn PMPI_Buffer_detach_c(buf: *mut c_void, size: *mut MPI_Count) -> c_int as MPI_Buffer_detach_c {
        // SAFETY: MPI's contract for the out-arguments.
        done(MPI_COMM_WORLD, "MPI_Buffer_detach_c", unsafe { detach(buf, size) })
    }
}

crate::mpi! {
    /// `MPI_Buffer_flush`: the buffered messages are on their way already.
    fn PMPI_Buffer_flush() -> c_int as MPI_Buffer_flush {
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Buffer_iflush`: a request complete at once.
    fn PMPI_Buffer_iflush(req: *mut c_int) -> c_int as MPI_Buffer_iflush {
        done(MPI_COMM_WORLD, "MPI_Buffer_iflush", done_request(req))
    }
}

crate::mpi! {
    /// `MPI_Comm_attach_buffer`: `comm`'s buffer, used by its buffered
    /// sends instead of the process's.
    fn PMPI_Comm_attach_buffer(comm: c_int, buf: *mut c_void, size: c_int) -> c_int as MPI_Comm_attach_buffer {
        done(comm, "MPI_Comm_attach_buffer", comm_attach(comm, buf, size.into()))
    }
}

crate::mpi! {
    /// `MPI_Comm_attach_buffer_c`.
    fn PMPI_Comm_attach_buffer_c(comm: c_int, buf: *mut c_void, size: MPI_Count) -> c_int as MPI_Comm_attach_buffer_c {
        done(comm, "MPI_Comm_attach_buffer_c", comm_attach(comm, buf, size))
    }
}

crate::mpi! {
    /// `MPI_Comm_detach_buffer`: gives `comm`'s buffer back.
    fn PMPI_Comm_detach_buffer(comm: c_int, buf: *mut c_void, size: *mut c_int) -> c_int as MPI_Comm_detach_buffer {
        // SAFETY: MPI's contract for the out-arguments.
        done(comm, "MPI_Comm_detach_buffer", unsafe { comm_detach(comm, buf, size) })
    }
}

crate::mpi! {
    /// `MPI_Comm_detach_buffer_c`.
    fn PMPI_Comm_detach_buffer_c(comm: c_int, buf: *mut c_void, size: *mut MPI_Count) -> c_int as MPI_Comm_detach_buffer_c {
        // SAFETY: MPI's contract for the out-arguments.
        done(comm, "MPI_Comm_detach_buffer_c", unsafe { comm_detach(comm, buf, size) })
    }
}

crate::mpi! {
    /// `MPI_Comm_flush_buffer`: `comm`'s buffered messages are on their
    /// way already.
    fn PMPI_Comm_flush_buffer(comm: c_int) -> c_int as MPI_Comm_flush_buffer {
        done(comm, "MPI_Comm_flush_buffer", entry_comm(comm).map(drop))
    }
}

crate::mpi! {
    /// `MPI_Comm_iflush_buffer`: a request complete at once.
    fn PMPI_Comm_iflush_buffer(comm: c_int, req: *mut c_int) -> c_int as MPI_Comm_iflush_buffer {
        done(comm, "MPI_Comm_iflush_buffer", entry_comm(comm).and_then(|_| done_request(req)))
    }
}
