//! Non-blocking point-to-point on a resilient communicator (`pertinax run
//! --resilient`): `MPI_Isend` and `MPI_Irecv` through the
//! [`Communicator`](pertinax::Communicator) trait's `isend_bytes` and
//! `irecv_bytes`, whose [`PendingOp`] the request table keeps ([`Req`],
//! `ReqEntry::Resilient`); every wait and test completes it. The
//! non-blocking collectives are in `resilient_icoll.rs`.
//!
//! - The program's buffers are lent for the program's life (a
//!   [`Scope::forever`]): MPI's contract keeps them valid until the
//!   request completes. A packed copy (a derived datatype, an
//!   `MPI_IN_PLACE` input) or a temporary to unpack lives in the request.
//! - Outcomes as for the blocking calls: a failure the policy hides
//!   completes the request normally (a skipped receive's status is a
//!   receive from `MPI_PROC_NULL`'s), one it does not is
//!   `MPIX_ERR_PROC_FAILED` in the request's status.
//! - A request the program frees is kept until it completes (the
//!   resilient layer's repair needs its progress).

use std::cell::Cell;
use std::ffi::{c_int, c_void};

use pertinax::{Pending, PendingOp, Rank, Scope, Tag};
use pertinax_resilient::Error;

use crate::consts::*;
use crate::datatype::{RecvBuf, SendBuf};
use crate::p2p::{empty, status};
use crate::resilient::{of, peer, source, tag_match, Class, Res};
use crate::serial::Serial;
use crate::state::{self, ReqEntry};

/// A pending operation of a resilient communicator, with what it reads
/// and writes.
pub(crate) struct Req {
    /// Dropped first: it holds the buffers below.
    op: PendingOp<'static, Error>,
    /// The communicator's handle (its error handler).
    pub(crate) comm: c_int,
    /// A receive (its status is the message's).
    recv: bool,
    /// The input, when it is a copy.
    _send: Option<SendBuf>,
    /// The output (finished when the operation completes).
    out: Option<RecvBuf>,
}

impl std::fmt::Debug for Req {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Req")
            .field("comm", &self.comm)
            .field("recv", &self.recv)
            .finish_non_exhaustive()
    }
}

impl Req {
    /// Its status once complete (the error class in it when it failed);
    /// `None` while pending, unless `block`, which waits.
    pub(crate) fn poll(&mut self, block: bool) -> Option<MpiStatus> {
        if !block && !self.op.is_done() {
            return None;
        }
        Some(match self.op.take() {
            Ok(done) => {
                let len = done.status.as_ref().map_or(usize::MAX, |s| s.len);
                if let Some(out) = self.out.take() {
                    out.finish(if self.recv { len } else { usize::MAX });
                }
                if self.recv {
                    of(done.status)
                } else {
                    status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS)
                }
            }
            Err(e) => status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, e.class()),
        })
    }

    /// `MPI_Cancel`: whether the operation was withdrawn.
    pub(crate) fn cancel(&mut self) -> Result<bool, c_int> {
        self.op.cancel().map_err(|e| e.class())
    }
}

/// The scope every resilient request lends in (made once).
static SCOPE: Serial<Cell<Option<&'static Scope<'static, 'static>>>> = Serial::new(Cell::new(None));

fn scope() -> &'static Scope<'static, 'static> {
    SCOPE.with(|s| {
        *s.get().get_or_insert_with(|| {
            let made = Scope::forever();
            s.set(Some(made));
            made
        })
    })
}

/// The bytes of `b`, for the program's life.
///
/// # Safety
/// MPI's contract (or the request that keeps `b`) keeps them valid and
/// unwritten until the operation completes.
unsafe fn forever(b: &SendBuf) -> &'static [u8] {
    let d = b.bytes();
    if d.is_empty() {
        return &[];
    }
    // SAFETY: by the caller's contract.
    unsafe { std::slice::from_raw_parts(d.as_ptr(), d.len()) }
}

/// The bytes of `b` to write, for the program's life.
///
/// # Safety
/// As [`forever`], and nothing else touches them meanwhile.
unsafe fn forever_mut(b: &mut RecvBuf) -> &'static mut [u8] {
    let d = b.bytes_mut();
    if d.is_empty() {
        return &mut [];
    }
    // SAFETY: by the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(d.as_mut_ptr(), d.len()) }
}

/// Registers `e` and writes its handle to `req` (checked non-null).
fn register(e: ReqEntry, req: *mut c_int) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let h = state::with(|s| REQUEST_DIRECT | state::insert(&mut s.requests, e) as c_int)
        .ok_or(MPI_ERR_OTHER)?;
    // SAFETY: checked non-null; MPI's contract makes it writable.
    unsafe { *req = h };
    Ok(())
}

/// Registers a started operation.
pub(crate) fn keep(
    op: Result<PendingOp<'static, Error>, Error>,
    comm: c_int,
    recv: bool,
    send: Option<SendBuf>,
    out: Option<RecvBuf>,
    req: *mut c_int,
) -> Result<(), c_int> {
    let op = op.map_err(|e| e.class())?;
    let r = Req {
        op,
        comm,
        recv,
        _send: send,
        out,
    };
    register(ReqEntry::Resilient(Box::new(r)), req)
}

/// `MPI_Isend` on a resilient communicator.
///
/// # Safety
/// MPI's contract for the buffer.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn isend(
    r: &Res,
    buf: *const c_void,
    count: c_int,
    ty: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let (t, n) = crate::check::data(buf, count, ty)?;
    peer(r, dest, false)?;
    crate::check::send_tag(tag)?;
    if dest == MPI_PROC_NULL {
        return register(ReqEntry::Done(empty()), req);
    }
    // SAFETY: MPI's contract: `buf` holds `count` elements until the
    // request completes.
    let data = unsafe { SendBuf::new(buf, n, &t) }?;
    // SAFETY: as above; a packed copy lives in the request.
    let bytes = unsafe { forever(&data) };
    let op = r.isend_bytes(scope(), bytes, Rank(dest), Tag(tag));
    keep(op, comm, false, Some(data), None, req)
}

/// `MPI_Irecv` on a resilient communicator.
///
/// # Safety
/// MPI's contract for the buffer.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn irecv(
    r: &Res,
    buf: *mut c_void,
    count: c_int,
    ty: c_int,
    src: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> Result<(), c_int> {
    let (t, n) = crate::check::data(buf, count, ty)?;
    peer(r, src, true)?;
    crate::check::recv_tag(tag)?;
    if src == MPI_PROC_NULL {
        return register(ReqEntry::Done(empty()), req);
    }
    // SAFETY: MPI's contract: `buf` holds `count` elements, untouched
    // until the request completes.
    let mut into = unsafe { RecvBuf::new(buf, n, &t) }?;
    // SAFETY: as above; a temporary lives in the request.
    let bytes = unsafe { forever_mut(&mut into) };
    let op = r.irecv_bytes(scope(), bytes, t.recv_elem(), source(src), tag_match(tag));
    keep(op, comm, true, None, Some(into), req)
}
