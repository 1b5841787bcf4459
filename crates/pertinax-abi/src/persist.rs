//! Persistent requests: `MPI_Send_init`, `Bsend_init`, `Ssend_init`,
//! `Rsend_init`, `Recv_init`, the MPI-4 persistent collectives
//! (`Barrier_init`, `Bcast_init`, `Reduce_init`, `Allreduce_init`,
//! `Gather_init`, `Scatter_init`, `Allgather_init`, `Alltoall_init`, the
//! v-forms, scans and reduce-scatters; `Alltoallw_init` is in `wcoll.rs`,
//! the neighbourhood ones in `neighbor.rs`, on [`coll_init`]), and
//! `MPI_Start` / `MPI_Startall`.
//!
//! A persistent request is kept here, under handles of its own
//! (`PERSIST_DIRECT | index`), with what starts it: each `MPI_Start` runs
//! the matching non-blocking call (`MPI_Isend`, `MPI_Issend`,
//! `MPI_Irecv`, `MPI_Ibcast`, ...) on the arguments given at init, and
//! the request it makes is the persistent one's active operation. The
//! waits and tests ([`finish`] in `p2p/complete.rs`) complete that operation and
//! leave the handle valid and inactive ([`released`]); an inactive one
//! completes at once with an empty status, and counts as a null handle in
//! `Waitany`, `Testany`, `Waitsome`, `Testsome` ([`inactive`]).
//! `MPI_Request_free` of an inactive one frees it; of an active one lets
//! the operation go on and frees the handle.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::rc::Rc;

use crate::check;
use crate::consts::*;
use crate::errors::raise;
use crate::large::MPI_Count;
use crate::p2p::{call, comm_of, null_status, Finished};
use crate::serial::Serial;
use crate::state::{self, ReqEntry};

/// The handles of persistent requests: a prefix no other request has.
const PERSIST_DIRECT: c_int = REQUEST_DIRECT | 0x0200_0000;
const INDEX: c_int = 0x01ff_ffff;

/// The active operation of a request whose operation does not begin at
/// its start (a partitioned send waits for its partitions, see
/// `part.rs`): not yet complete, and never a handle of the request table.
pub(crate) const DEFERRED: c_int = 0x2c00_0001;

/// What starts one operation: writes the request it made.
pub(crate) type Starter = Rc<dyn Fn(*mut c_int) -> c_int>;

struct Persistent {
    start: Starter,
    comm: c_int,
    /// The request of the operation started last, until it completes.
    active: Option<c_int>,
}

static TABLE: Serial<RefCell<Vec<Option<Persistent>>>> = Serial::new(RefCell::new(Vec::new()));

/// The table index of a persistent request's handle.
fn index(h: c_int) -> Option<usize> {
    (h & !INDEX == PERSIST_DIRECT).then_some((h & INDEX) as usize)
}

/// Whether `h` is a persistent request's handle.
pub(crate) fn is_persistent(h: c_int) -> bool {
    index(h).is_some()
}

/// What a completed request's handle becomes: `MPI_REQUEST_NULL`, but a
/// persistent request keeps its handle (now inactive).
pub(crate) fn released(h: c_int) -> c_int {
    if is_persistent(h) {
        h
    } else {
        MPI_REQUEST_NULL
    }
}

/// Whether `h` is an inactive persistent request (treated as a null
/// handle by the calls that wait for any or some).
pub(crate) fn inactive(h: c_int) -> bool {
    index(h).is_some_and(|i| {
        TABLE.with(|t| matches!(t.borrow().get(i), Some(Some(p)) if p.active.is_none()))
    })
}

/// What a handle stands for.
pub(crate) enum Resolved {
    /// Not a persistent request: the handle itself.
    Plain(c_int),
    /// A persistent request with an operation under way: its request.
    Active(c_int),
    /// An inactive persistent request.
    Inactive(c_int),
    /// A persistent handle that is not (or no longer) valid.
    Invalid,
}

/// Resolves `h`.
pub(crate) fn resolve(h: c_int) -> Resolved {
    let Some(i) = index(h) else {
        return Resolved::Plain(h);
    };
    TABLE.with(|t| match t.borrow().get(i) {
        Some(Some(p)) => match p.active {
            Some(a) => Resolved::Active(a),
            None => Resolved::Inactive(p.comm),
        },
        _ => Resolved::Invalid,
    })
}

/// [`crate::p2p::finish`] for a persistent request (`None` for any other
/// handle): an inactive one finishes at once with an empty status; an
/// active one finishes with its operation, and is inactive then.
pub(crate) fn finish(h: c_int, block: bool) -> Option<Result<Option<Finished>, c_int>> {
    let i = index(h)?;
    Some(match resolve(h) {
        Resolved::Inactive(comm) => Ok(Some(Finished {
            status: null_status(),
            comm,
        })),
        // Nothing to wait for yet: a wait could never end (the program
        // is erroneous), a test says not done.
        Resolved::Active(DEFERRED) if block => Err(MPI_ERR_REQUEST),
        Resolved::Active(DEFERRED) => Ok(None),
        Resolved::Active(a) => {
            let r = crate::p2p::finish(a, block);
            if let Ok(Some(f)) = &r {
                let comm = TABLE.with(|t| {
                    let mut t = t.borrow_mut();
                    let p = t.get_mut(i).and_then(Option::as_mut);
                    p.map(|p| {
                        p.active = None;
                        p.comm
                    })
                });
                // An operation that failed before it began (a dead peer
                // known at its start) has the world's handler; the
                // persistent request knows its communicator.
                return Some(Ok(Some(Finished {
                    status: f.status,
                    comm: comm.unwrap_or(f.comm),
                })));
            }
            r
        }
        Resolved::Plain(_) | Resolved::Invalid => Err(MPI_ERR_REQUEST),
    })
}

/// `MPI_Request_free` of a persistent request (`None` for any other
/// handle): an active operation goes on, its request released.
pub(crate) fn free(h: c_int) -> Option<Result<(), c_int>> {
    let i = index(h)?;
    let p = TABLE.with(|t| t.borrow_mut().get_mut(i).and_then(Option::take));
    Some(match p {
        Some(p) => {
            if let Some(a) = p.active {
                if let Some(j) = state::request_index(a) {
                    // Its drop lets the operation go on.
                    drop(state::with(|s| {
                        s.requests.get_mut(j).and_then(Option::take)
                    }));
                }
            }
            Ok(())
        }
        None => Err(MPI_ERR_REQUEST),
    })
}

/// The communicator of persistent request `h`.
pub(crate) fn comm(h: c_int) -> Option<c_int> {
    let i = index(h)?;
    TABLE.with(|t| t.borrow().get(i).and_then(Option::as_ref).map(|p| p.comm))
}

/// Makes `a` the active operation of persistent request `h` (which a
/// deferred start left [`DEFERRED`]).
pub(crate) fn set_active(h: c_int, a: c_int) {
    if let Some(i) = index(h) {
        TABLE.with(|t| {
            if let Some(Some(p)) = t.borrow_mut().get_mut(i) {
                p.active = Some(a);
            }
        });
    }
}

/// Registers a persistent request; writes its handle to `req`.
pub(crate) fn register(comm: c_int, start: Starter, req: *mut c_int) -> Result<(), c_int> {
    if req.is_null() {
        return Err(MPI_ERR_ARG);
    }
    comm_of(comm)?;
    let i = TABLE.with(|t| {
        state::insert(
            &mut t.borrow_mut(),
            Persistent {
                start,
                comm,
                active: None,
            },
        )
    });
    if i > INDEX as usize {
        return Err(MPI_ERR_INTERN);
    }
    // SAFETY: checked non-null.
    unsafe { *req = PERSIST_DIRECT | i as c_int };
    Ok(())
}

/// Starts persistent request `h`.
fn start(h: c_int) -> Result<(), (c_int, c_int)> {
    let Some(i) = index(h) else {
        return Err((MPI_COMM_WORLD, MPI_ERR_REQUEST));
    };
    let Some((s, comm, active)) = TABLE.with(|t| {
        t.borrow()
            .get(i)
            .and_then(Option::as_ref)
            .map(|p| (p.start.clone(), p.comm, p.active))
    }) else {
        return Err((MPI_COMM_WORLD, MPI_ERR_REQUEST));
    };
    if active.is_some() {
        return Err((comm, MPI_ERR_REQUEST));
    }
    let mut r = MPI_REQUEST_NULL;
    // No borrow of the table is held: the start calls MPI.
    let rc = s(&mut r);
    if rc != MPI_SUCCESS {
        return Err((comm, rc));
    }
    TABLE.with(|t| {
        if let Some(Some(p)) = t.borrow_mut().get_mut(i) {
            p.active = Some(r);
        }
    });
    Ok(())
}

crate::mpi! {
    /// `MPI_Start`.
    fn PMPI_Start(req: *mut c_int) -> c_int as MPI_Start {
        if req.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Start", MPI_ERR_REQUEST);
        }
        // SAFETY: checked non-null; MPI's contract makes it readable.
        match start(unsafe { *req }) {
            Ok(()) => MPI_SUCCESS,
            Err((comm, code)) => raise(comm, "MPI_Start", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Startall`: in order; the first that cannot start stops it.
    fn PMPI_Startall(count: c_int, reqs: *mut c_int) -> c_int as MPI_Startall {
        // SAFETY: MPI's contract: `reqs` holds `count` handles.
        let n = match unsafe { crate::check::requests(count, reqs, false) } {
            Ok(n) => n,
            Err(code) => return raise(MPI_COMM_WORLD, "MPI_Startall", code),
        };
        if n > 0 && reqs.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Startall", MPI_ERR_ARG);
        }
        for i in 0..n {
            // SAFETY: MPI's contract: `reqs` holds `count` handles.
            if let Err((comm, code)) = start(unsafe { *reqs.add(i) }) {
                return raise(comm, "MPI_Startall", code);
            }
        }
        MPI_SUCCESS
    }
}

/// A completed request carrying `st` (the active operation of a
/// persistent buffered send, done when it starts).
fn done_request(st: MpiStatus, out: *mut c_int) -> c_int {
    match state::with(|s| {
        REQUEST_DIRECT | state::insert(&mut s.requests, ReqEntry::Done(st)) as c_int
    }) {
        Some(h) => {
            // SAFETY: `out` is the starter's own request slot.
            unsafe { *out = h };
            MPI_SUCCESS
        }
        None => MPI_ERR_OTHER,
    }
}

/// The point-to-point persistent inits, checked as their starts will be.
///
/// # Safety
/// MPI's contract: the buffer stays valid while the request lives.
#[allow(clippy::too_many_arguments)]
unsafe fn p2p_init(
    what: &str,
    buf: *mut c_void,
    count: MPI_Count,
    ty: c_int,
    peer: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
    mode: Mode,
) -> c_int {
    call(comm, what, || {
        let count = c_int::try_from(count).map_err(|_| MPI_ERR_COUNT)?;
        let (_, t, n) = if mode == Mode::Recv {
            crate::check::recv(buf, count, ty, peer, tag, comm)?
        } else {
            crate::check::send(buf, count, ty, peer, tag, comm)?
        };
        t.bytes(n)?;
        let s: Starter = match mode {
            Mode::Standard => Rc::new(move |r| {
                // SAFETY: MPI's contract: the init's buffer stays valid
                // while the request lives.
                unsafe { crate::p2p::PMPI_Isend(buf, count, ty, peer, tag, comm, r) }
            }),
            Mode::Sync => Rc::new(move |r| {
                // SAFETY: MPI's contract: the init's buffer stays valid
                // while the request lives.
                unsafe { crate::modes::PMPI_Issend(buf, count, ty, peer, tag, comm, r) }
            }),
            Mode::Recv => Rc::new(move |r| {
                // SAFETY: MPI's contract: the init's buffer stays valid
                // while the request lives.
                unsafe { crate::p2p::PMPI_Irecv(buf, count, ty, peer, tag, comm, r) }
            }),
            Mode::Buffered => Rc::new(move |r| {
                // SAFETY: as above: the init's buffer.
                let rc = unsafe { crate::modes::PMPI_Bsend(buf, count, ty, peer, tag, comm) };
                if rc != MPI_SUCCESS {
                    return rc;
                }
                done_request(
                    crate::p2p::status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS),
                    r,
                )
            }),
        };
        register(comm, s, req)
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Standard,
    Buffered,
    Sync,
    Recv,
}

macro_rules! p2p_inits {
    ($cnt:ty, $($p:ident $m:ident => $mode:expr;)*) => {$(
        crate::mpi! {
            #[doc = concat!("`", stringify!($m), "`.")]
            fn $p(buf: *mut c_void, count: $cnt, ty: c_int, peer: c_int, tag: c_int, comm: c_int, req: *mut c_int) -> c_int as $m {
                // SAFETY: MPI's contract, forwarded.
                unsafe { p2p_init(stringify!($m), buf, count.into(), ty, peer, tag, comm, req, $mode) }
            }
        }
    )*};
}

p2p_inits! { c_int,
    PMPI_Send_init MPI_Send_init => Mode::Standard;
    PMPI_Rsend_init MPI_Rsend_init => Mode::Standard;
    PMPI_Bsend_init MPI_Bsend_init => Mode::Buffered;
    PMPI_Ssend_init MPI_Ssend_init => Mode::Sync;
    PMPI_Recv_init MPI_Recv_init => Mode::Recv;
}

p2p_inits! { MPI_Count,
    PMPI_Send_init_c MPI_Send_init_c => Mode::Standard;
    PMPI_Rsend_init_c MPI_Rsend_init_c => Mode::Standard;
    PMPI_Bsend_init_c MPI_Bsend_init_c => Mode::Buffered;
    PMPI_Ssend_init_c MPI_Ssend_init_c => Mode::Sync;
    PMPI_Recv_init_c MPI_Recv_init_c => Mode::Recv;
}

/// Registers a persistent collective whose start is `s`, once `checked`
/// (its arguments, as the start will find them) holds.
pub(crate) fn coll_init(
    what: &str,
    comm: c_int,
    req: *mut c_int,
    checked: Result<(), c_int>,
    s: Starter,
) -> c_int {
    call(comm, what, || {
        checked?;
        register(comm, s, req)
    })
}

/// The arguments of a persistent collective's init, checked as its
/// start's non-blocking collective will (so a bad one fails the init,
/// at every rank): `root` (if any) and the buffers `(buf, count, type,
/// significant here)`.
fn coll_args(
    comm: c_int,
    root: Option<c_int>,
    bufs: &[(*const c_void, c_int, c_int, bool)],
) -> Result<(), c_int> {
    let c = check::comm(comm)?;
    if c.is_inter() {
        // A root is MPI_ROOT, MPI_PROC_NULL or a remote rank; the buffers
        // are checked at each start (`intercoll.rs`).
        return match root {
            Some(r)
                if r != MPI_ROOT
                    && r != MPI_PROC_NULL
                    && !(0..c.remote_size() as c_int).contains(&r) =>
            {
                Err(MPI_ERR_ROOT)
            }
            _ => Ok(()),
        };
    }
    let at_root = match root {
        Some(r) => c.rank() == check::root(&c, r)?,
        None => true,
    };
    for &(buf, n, ty, significant) in bufs {
        if significant || at_root {
            check::input(buf, n, ty)?;
        }
    }
    Ok(())
}

fn int(n: MPI_Count) -> c_int {
    // A count past `int` makes the start fail with MPI_ERR_COUNT.
    c_int::try_from(n).unwrap_or(-1)
}

macro_rules! coll_inits {
    ($cnt:ty, $pb:ident $b:ident, $pr:ident $r:ident, $par:ident $ar:ident,
     $pg:ident $g:ident, $ps:ident $s:ident, $pag:ident $ag:ident, $pa:ident $a:ident) => {
        crate::mpi! {
            #[doc = concat!("`", stringify!($b), "`: each start is an `MPI_Ibcast`.")]
            fn $pb(buf: *mut c_void, count: $cnt, ty: c_int, root: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $b {
                let count = int(count.into());
                // SAFETY: MPI's contract on the init's buffers, forwarded.
                coll_init(stringify!($b), comm, req, coll_args(comm, Some(root), &[(buf, count, ty, true)]), Rc::new(move |r| unsafe { crate::icoll::PMPI_Ibcast(buf, count, ty, root, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($r), "`: each start is an `MPI_Ireduce`.")]
            fn $pr(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, root: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $r {
                let count = int(count.into());
                // SAFETY: as above.
                coll_init(stringify!($r), comm, req, coll_args(comm, Some(root), &[(sendbuf, count, ty, true)]).and_then(|_| check::op(op, ty)), Rc::new(move |r| unsafe { crate::icoll::PMPI_Ireduce(sendbuf, recvbuf, count, ty, op, root, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ar), "`: each start is an `MPI_Iallreduce`.")]
            fn $par(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $ar {
                let count = int(count.into());
                // SAFETY: as above.
                coll_init(stringify!($ar), comm, req, coll_args(comm, None, &[(sendbuf, count, ty, true), (recvbuf, count, ty, true)]).and_then(|_| check::op(op, ty)), Rc::new(move |r| unsafe { crate::icoll::PMPI_Iallreduce(sendbuf, recvbuf, count, ty, op, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($g), "`: each start is an `MPI_Igather`.")]
            fn $pg(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, root: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $g {
                let (scount, rcount) = (int(scount.into()), int(rcount.into()));
                // SAFETY: as above.
                coll_init(stringify!($g), comm, req, coll_args(comm, Some(root), &[(sendbuf, scount, stype, true), (recvbuf, rcount, rtype, false)]), Rc::new(move |r| unsafe { crate::ivcoll::PMPI_Igather(sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($s), "`: each start is an `MPI_Iscatter`.")]
            fn $ps(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, root: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $s {
                let (scount, rcount) = (int(scount.into()), int(rcount.into()));
                // SAFETY: as above.
                coll_init(stringify!($s), comm, req, coll_args(comm, Some(root), &[(recvbuf, rcount, rtype, true), (sendbuf, scount, stype, false)]), Rc::new(move |r| unsafe { crate::ivcoll::PMPI_Iscatter(sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ag), "`: each start is an `MPI_Iallgather`.")]
            fn $pag(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $ag {
                let (scount, rcount) = (int(scount.into()), int(rcount.into()));
                // SAFETY: as above.
                coll_init(stringify!($ag), comm, req, coll_args(comm, None, &[(sendbuf, scount, stype, true), (recvbuf, rcount, rtype, true)]), Rc::new(move |r| unsafe { crate::icoll::PMPI_Iallgather(sendbuf, scount, stype, recvbuf, rcount, rtype, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($a), "`: each start is an `MPI_Ialltoall`.")]
            fn $pa(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $a {
                let (scount, rcount) = (int(scount.into()), int(rcount.into()));
                // SAFETY: as above.
                coll_init(stringify!($a), comm, req, coll_args(comm, None, &[(sendbuf, scount, stype, true), (recvbuf, rcount, rtype, true)]), Rc::new(move |r| unsafe { crate::icoll::PMPI_Ialltoall(sendbuf, scount, stype, recvbuf, rcount, rtype, comm, r) }))
            }
        }
    };
}

coll_inits!(c_int, PMPI_Bcast_init MPI_Bcast_init, PMPI_Reduce_init MPI_Reduce_init,
    PMPI_Allreduce_init MPI_Allreduce_init, PMPI_Gather_init MPI_Gather_init,
    PMPI_Scatter_init MPI_Scatter_init, PMPI_Allgather_init MPI_Allgather_init,
    PMPI_Alltoall_init MPI_Alltoall_init);
coll_inits!(MPI_Count, PMPI_Bcast_init_c MPI_Bcast_init_c, PMPI_Reduce_init_c MPI_Reduce_init_c,
    PMPI_Allreduce_init_c MPI_Allreduce_init_c, PMPI_Gather_init_c MPI_Gather_init_c,
    PMPI_Scatter_init_c MPI_Scatter_init_c, PMPI_Allgather_init_c MPI_Allgather_init_c,
    PMPI_Alltoall_init_c MPI_Alltoall_init_c);

crate::mpi! {
    /// `MPI_Barrier_init`: each start is an `MPI_Ibarrier`.
    fn PMPI_Barrier_init(comm: c_int, _info: c_int, req: *mut c_int) -> c_int as MPI_Barrier_init {
        // SAFETY: no buffers.
        coll_init("MPI_Barrier_init", comm, req, coll_args(comm, None, &[]), Rc::new(move |r| unsafe { crate::icoll::PMPI_Ibarrier(comm, r) }))
    }
}

/// A copy of a C array of `n` values made at init (`None` for a null
/// pointer: an argument not significant on this rank).
///
/// # Safety
/// `p` null or holding `n` values.
pub(crate) unsafe fn kept<T: Copy>(p: *const T, n: usize) -> Option<Rc<[T]>> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null, holding `n` values by the caller's contract.
    Some(unsafe { std::slice::from_raw_parts(p, n) }.into())
}

/// Where a kept array is (null for `None`).
pub(crate) fn at<T>(v: &Option<Rc<[T]>>) -> *const T {
    v.as_ref().map_or(std::ptr::null(), |v| v.as_ptr())
}

/// The size of `comm` (0 for an invalid one: the init reports it).
fn size_of(comm: c_int) -> usize {
    comm_of(comm).map_or(0, |c| c.size())
}

/// The length of a v-form's per-process arrays: the remote group's size
/// on an intercommunicator, else the size.
fn peers_of(comm: c_int) -> usize {
    crate::inter::remote_size(comm).unwrap_or_else(|| size_of(comm))
}

macro_rules! more_coll_inits {
    ($cnt:ty, $disp:ty, $pgv:ident $gv:ident => $igv:path, $psv:ident $sv:ident => $isv:path,
     $pagv:ident $agv:ident => $iagv:path, $pav:ident $av:ident => $iav:path,
     $psc:ident $sc:ident => $isc:path, $pex:ident $ex:ident => $iex:path,
     $prs:ident $rs:ident => $irs:path, $prsb:ident $rsb:ident => $irsb:path) => {
        crate::mpi! {
            #[doc = concat!("`", stringify!($gv), "`: each start is an `", stringify!($igv), "` (the arrays are copied at init).")]
            fn $pgv(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, displs: *const $disp, rtype: c_int, root: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $gv {
                let n = peers_of(comm);
                // SAFETY: MPI's contract: non-null arrays hold `size` entries.
                let (rc, d) = unsafe { (kept(rcounts, n), kept(displs, n)) };
                // SAFETY: MPI's contract on the init's buffers, forwarded.
                coll_init(stringify!($gv), comm, req, coll_args(comm, Some(root), &[]), Rc::new(move |r| unsafe { $igv(sendbuf, scount, stype, recvbuf, at(&rc), at(&d), rtype, root, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($sv), "`: each start is an `", stringify!($isv), "` (the arrays are copied at init).")]
            fn $psv(sendbuf: *const c_void, scounts: *const $cnt, displs: *const $disp, stype: c_int, recvbuf: *mut c_void, rcount: $cnt, rtype: c_int, root: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $sv {
                let n = peers_of(comm);
                // SAFETY: MPI's contract: non-null arrays hold `size` entries.
                let (sc, d) = unsafe { (kept(scounts, n), kept(displs, n)) };
                // SAFETY: as above.
                coll_init(stringify!($sv), comm, req, coll_args(comm, Some(root), &[]), Rc::new(move |r| unsafe { $isv(sendbuf, at(&sc), at(&d), stype, recvbuf, rcount, rtype, root, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($agv), "`: each start is an `", stringify!($iagv), "` (the arrays are copied at init).")]
            fn $pagv(sendbuf: *const c_void, scount: $cnt, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, displs: *const $disp, rtype: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $agv {
                let n = peers_of(comm);
                // SAFETY: MPI's contract: the arrays hold `size` entries.
                let (rc, d) = unsafe { (kept(rcounts, n), kept(displs, n)) };
                // SAFETY: as above.
                coll_init(stringify!($agv), comm, req, coll_args(comm, None, &[]), Rc::new(move |r| unsafe { $iagv(sendbuf, scount, stype, recvbuf, at(&rc), at(&d), rtype, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($av), "`: each start is an `", stringify!($iav), "` (the arrays are copied at init).")]
            fn $pav(sendbuf: *const c_void, scounts: *const $cnt, sdispls: *const $disp, stype: c_int, recvbuf: *mut c_void, rcounts: *const $cnt, rdispls: *const $disp, rtype: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $av {
                let n = peers_of(comm);
                let send = if crate::coll::in_place(sendbuf) {
                    (None, None)
                } else {
                    // SAFETY: MPI's contract: the arrays hold `size` entries.
                    unsafe { (kept(scounts, n), kept(sdispls, n)) }
                };
                // SAFETY: as above.
                let recv = unsafe { (kept(rcounts, n), kept(rdispls, n)) };
                // SAFETY: as above.
                coll_init(stringify!($av), comm, req, coll_args(comm, None, &[]), Rc::new(move |r| unsafe { $iav(sendbuf, at(&send.0), at(&send.1), stype, recvbuf, at(&recv.0), at(&recv.1), rtype, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($sc), "`: each start is an `", stringify!($isc), "`.")]
            fn $psc(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $sc {
                // SAFETY: as above.
                coll_init(stringify!($sc), comm, req, coll_args(comm, None, &[]).and_then(|_| check::op(op, ty)), Rc::new(move |r| unsafe { $isc(sendbuf, recvbuf, count, ty, op, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($ex), "`: each start is an `", stringify!($iex), "`.")]
            fn $pex(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $ex {
                // SAFETY: as above.
                coll_init(stringify!($ex), comm, req, coll_args(comm, None, &[]).and_then(|_| check::op(op, ty)), Rc::new(move |r| unsafe { $iex(sendbuf, recvbuf, count, ty, op, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($rs), "`: each start is an `", stringify!($irs), "` (the counts are copied at init).")]
            fn $prs(sendbuf: *const c_void, recvbuf: *mut c_void, counts: *const $cnt, ty: c_int, op: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $rs {
                let n = size_of(comm);
                // SAFETY: MPI's contract: `counts` holds `size` entries.
                let k = unsafe { kept(counts, n) };
                // SAFETY: as above.
                coll_init(stringify!($rs), comm, req, coll_args(comm, None, &[]).and_then(|_| check::op(op, ty)), Rc::new(move |r| unsafe { $irs(sendbuf, recvbuf, at(&k), ty, op, comm, r) }))
            }
        }
        crate::mpi! {
            #[doc = concat!("`", stringify!($rsb), "`: each start is an `", stringify!($irsb), "`.")]
            fn $prsb(sendbuf: *const c_void, recvbuf: *mut c_void, count: $cnt, ty: c_int, op: c_int, comm: c_int, _info: c_int, req: *mut c_int) -> c_int as $rsb {
                // SAFETY: as above.
                coll_init(stringify!($rsb), comm, req, coll_args(comm, None, &[]).and_then(|_| check::op(op, ty)), Rc::new(move |r| unsafe { $irsb(sendbuf, recvbuf, count, ty, op, comm, r) }))
            }
        }
    };
}

use crate::ivcoll as iv;
use crate::MPI_Aint;

more_coll_inits!(c_int, c_int,
    PMPI_Gatherv_init MPI_Gatherv_init => iv::PMPI_Igatherv,
    PMPI_Scatterv_init MPI_Scatterv_init => iv::PMPI_Iscatterv,
    PMPI_Allgatherv_init MPI_Allgatherv_init => iv::PMPI_Iallgatherv,
    PMPI_Alltoallv_init MPI_Alltoallv_init => iv::PMPI_Ialltoallv,
    PMPI_Scan_init MPI_Scan_init => iv::PMPI_Iscan,
    PMPI_Exscan_init MPI_Exscan_init => iv::PMPI_Iexscan,
    PMPI_Reduce_scatter_init MPI_Reduce_scatter_init => iv::PMPI_Ireduce_scatter,
    PMPI_Reduce_scatter_block_init MPI_Reduce_scatter_block_init => iv::PMPI_Ireduce_scatter_block);
more_coll_inits!(MPI_Count, MPI_Aint,
    PMPI_Gatherv_init_c MPI_Gatherv_init_c => iv::PMPI_Igatherv_c,
    PMPI_Scatterv_init_c MPI_Scatterv_init_c => iv::PMPI_Iscatterv_c,
    PMPI_Allgatherv_init_c MPI_Allgatherv_init_c => iv::PMPI_Iallgatherv_c,
    PMPI_Alltoallv_init_c MPI_Alltoallv_init_c => iv::PMPI_Ialltoallv_c,
    PMPI_Scan_init_c MPI_Scan_init_c => iv::PMPI_Iscan_c,
    PMPI_Exscan_init_c MPI_Exscan_init_c => iv::PMPI_Iexscan_c,
    PMPI_Reduce_scatter_init_c MPI_Reduce_scatter_init_c => iv::PMPI_Ireduce_scatter_c,
    PMPI_Reduce_scatter_block_init_c MPI_Reduce_scatter_block_init_c => iv::PMPI_Ireduce_scatter_block_c);
