//! Transparent resilience for unchanged programs (`pertinax run
//! --resilient`): `MPI_COMM_WORLD`, and every communicator made from it
//! by `MPI_Comm_dup` and `MPI_Comm_split`, is a `pertinax-resilient`
//! communicator, so collectives and point-to-point continue with the
//! survivors under the launcher's policies, as for Rust programs
//! (`pertinax_resilient::world`). `MPI_COMM_SELF` stays plain.
//!
//! - At `MPI_Init` ([`start`]), [`pertinax_resilient::world`] reads the
//!   launcher's settings; when it gives a resilient world, the world is
//!   kept here (an `Rc`) and the switch [`ON`] is set. Without
//!   `--resilient` nothing else changes: every hook below is one test of
//!   that switch.
//! - The calls that have a resilient form go through the
//!   [`Communicator`] trait on the resilient communicator: the blocking
//!   point-to-point calls here (send, receive, sendrecv, probe, iprobe),
//!   `MPI_Isend` and `MPI_Irecv` in `resilient_req.rs`,
//!   the blocking collectives through [`on_comm!`](crate::on_comm) in
//!   their own files (the same buffer handling for both kinds), rank,
//!   size, dup, split and free. Every other call that needs the
//!   communicator (`p2p::comm_of`) gets `MPI_ERR_UNSUPPORTED_OPERATION`
//!   on a resilient one: never a plain operation that would hang or see
//!   a failure the program does not expect.
//! - Ranks are stable and `MPI_Comm_size` is the size the communicator
//!   was made with, failed ranks included (the paper's meaning).
//! - Errors: a failure the policy does not hide (`stop`) is
//!   `MPIX_ERR_PROC_FAILED` ([`Class`]); a receive or probe the policy
//!   skipped (`ignore`) succeeds with the status of a receive from
//!   `MPI_PROC_NULL` (source `MPI_PROC_NULL`, tag `MPI_ANY_TAG`, count 0),
//!   its buffer untouched.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use pertinax::{Communicator, Outcome, Rank, Source, Status, Tag, TagMatch, ANY_SOURCE, ANY_TAG};
use pertinax_resilient::{Error, World};

use crate::consts::*;
use crate::datatype::{RecvBuf, SendBuf};
use crate::errors::code_of;
use crate::p2p::{call, empty, put_status, status};
use crate::serial::Serial;
use crate::state;

/// A resilient communicator as the calls use it.
pub(crate) type Res = Rc<dyn Communicator<Error = Error>>;

/// Set at `MPI_Init` when the world is resilient; never cleared (after
/// `MPI_Finalize` the table is empty).
static ON: AtomicBool = AtomicBool::new(false);

/// The resilient communicators by communicator table index (see
/// `state::comm_index`), and the world itself (for its collective end).
struct Table {
    comms: Vec<Option<Res>>,
    world: Option<Rc<World>>,
}

static TABLE: Serial<RefCell<Table>> = Serial::new(RefCell::new(Table {
    comms: Vec::new(),
    world: None,
}));

/// An MPI error class of an error.
pub(crate) trait Class {
    /// The class.
    fn class(&self) -> c_int;
}

impl Class for pertinax::Error {
    fn class(&self) -> c_int {
        code_of(self)
    }
}

impl Class for Error {
    fn class(&self) -> c_int {
        match self {
            Error::Comm(e) => code_of(e),
            // The policy says stop: the failure is the program's to see.
            Error::Failed { .. } => MPIX_ERR_PROC_FAILED,
            Error::Policy(_) => MPI_ERR_ARG,
            Error::Io { .. } => MPI_ERR_IO,
            Error::Unsupported(_) => MPI_ERR_UNSUPPORTED_OPERATION,
            Error::Internal(_) => MPI_ERR_INTERN,
        }
    }
}

/// The world of `MPI_Init`: `Some` when the launcher asked for resilience
/// (collective, as `pertinax_resilient::world`); `Err` with a message for
/// a bad configuration.
pub(crate) fn start(universe: &pertinax::Universe) -> Result<Option<World>, String> {
    // Without the launcher's variable there is nothing to read.
    if std::env::var_os(pertinax_wire::env::RESILIENT).is_none() {
        return Ok(None);
    }
    match pertinax_resilient::world(universe) {
        Ok(w) if w.is_resilient() => Ok(Some(w)),
        Ok(_) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Makes `world` `MPI_COMM_WORLD`'s communicator (after `state::install`).
pub(crate) fn install(world: World) {
    let w = Rc::new(world);
    let dynw: Res = w.clone();
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        t.comms = vec![Some(dynw)];
        t.world = Some(w);
    });
    ON.store(true, Ordering::Release);
}

/// Whether resilience is on (one load: the hooks' only cost without it).
#[inline(always)]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The resilient communicator of handle `h`, if it is one.
#[inline(always)]
pub(crate) fn lookup(h: c_int) -> Option<Res> {
    if !on() {
        return None;
    }
    find(h)
}

#[cold]
fn find(h: c_int) -> Option<Res> {
    let i = state::comm_index(h)?;
    TABLE.with(|t| t.try_borrow().ok()?.comms.get(i)?.clone())
}

/// Whether handle `h` is a resilient communicator (so that the plain
/// calls refuse it).
#[inline(always)]
pub(crate) fn refused(h: c_int) -> bool {
    on() && find(h).is_some()
}

/// Forgets communicator `h` (`MPI_Comm_free`); whether it was resilient.
pub(crate) fn forget(h: c_int) -> bool {
    if !on() {
        return false;
    }
    let Some(i) = state::comm_index(h) else {
        return false;
    };
    TABLE
        .with(|t| t.borrow_mut().comms.get_mut(i).and_then(Option::take))
        .is_some()
}

/// `MPI_Finalize`'s part: the derived communicators are dropped (local),
/// then the world ends collectively (`World::finish`: a barrier over the
/// survivors, which the log check needs when ranks leave at different
/// times).
pub(crate) fn finish() -> Result<(), c_int> {
    if !on() {
        return Ok(());
    }
    crate::resilient_icoll::clear();
    let w = TABLE.with(|t| {
        let mut t = t.borrow_mut();
        t.comms.clear();
        t.world.take()
    });
    let Some(w) = w else { return Ok(()) };
    match Rc::try_unwrap(w) {
        Ok(w) => w.finish().map(drop).map_err(|e| e.class()),
        // Still borrowed by a call in progress (a callback): no barrier.
        Err(_) => Ok(()),
    }
}

/// Registers `made` (a communicator `MPI_Comm_dup` or `MPI_Comm_split`
/// made from resilient `parent`) and writes its handle to `out`. Its
/// plain entry holds a duplicate of `MPI_COMM_SELF` (freed with it), so
/// that the calls that only read the entry (names, attributes, error
/// handlers) work; the calls that communicate find it here.
fn register(parent: c_int, made: Option<Res>, out: *mut c_int) -> Result<(), c_int> {
    let h = match made {
        None => MPI_COMM_NULL,
        Some(r) => {
            let local = state::with(|s| s.comm(MPI_COMM_SELF))
                .flatten()
                .ok_or(MPI_ERR_OTHER)?
                .dup()
                .map_err(|e| code_of(&e))?;
            let h = state::with(|s| {
                let eh = state::comm_index(parent)
                    .and_then(|i| s.comms.get(i)?.as_ref())
                    .map_or(MPI_ERRORS_ARE_FATAL, |e| e.errhandler);
                s.add_comm(local, eh)
            })
            .ok_or(MPI_ERR_OTHER)?;
            let i = state::comm_index(h).ok_or(MPI_ERR_INTERN)?;
            TABLE.with(|t| {
                let mut t = t.borrow_mut();
                if t.comms.len() <= i {
                    t.comms.resize(i + 1, None);
                }
                t.comms[i] = Some(r);
            });
            h
        }
    };
    // SAFETY: `out` was checked non-null by the caller; MPI's contract
    // makes it writable.
    unsafe { *out = h };
    Ok(())
}

/// `MPI_Comm_rank`, `MPI_Comm_size` on a resilient communicator: the
/// stable rank, and the size it was made with.
pub(crate) fn rank_size(comm: c_int, out: *mut c_int, size: bool) -> Option<c_int> {
    let r = lookup(comm)?;
    let v = if size { r.size() as c_int } else { r.rank().0 };
    let what = if size {
        "MPI_Comm_size"
    } else {
        "MPI_Comm_rank"
    };
    // SAFETY: MPI's contract: null or writable.
    Some(unsafe { crate::put(out, v, comm, what) })
}

/// `MPI_Comm_dup` on a resilient communicator: a resilient duplicate.
pub(crate) fn dup(comm: c_int, out: *mut c_int) -> Option<c_int> {
    let r = lookup(comm)?;
    crate::resilient_icoll::flush(&r);
    Some(call(comm, "MPI_Comm_dup", || {
        if out.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let d = r.dup_boxed().map_err(|e| e.class())?;
        register(comm, Some(Rc::from(d)), out)
    }))
}

/// `MPI_Comm_split` on a resilient communicator: resilient parts.
pub(crate) fn split(comm: c_int, color: c_int, key: c_int, out: *mut c_int) -> Option<c_int> {
    let r = lookup(comm)?;
    crate::resilient_icoll::flush(&r);
    Some(call(comm, "MPI_Comm_split", || {
        if out.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let color = match color {
            MPI_UNDEFINED => None,
            c => Some(u32::try_from(c).map_err(|_| MPI_ERR_ARG)?),
        };
        let made = r.split_boxed(color, key).map_err(|e| e.class())?;
        register(comm, made.map(Rc::from), out)
    }))
}

/// A point-to-point peer of `r`: a rank in `0..size` (the failed ones
/// too: ranks are stable), `MPI_PROC_NULL`, or (`any`) `MPI_ANY_SOURCE`.
pub(crate) fn peer(r: &Res, p: c_int, any: bool) -> Result<(), c_int> {
    if p == MPI_PROC_NULL
        || (any && p == MPI_ANY_SOURCE)
        || usize::try_from(p).is_ok_and(|p| p < r.size())
    {
        Ok(())
    } else {
        Err(MPI_ERR_RANK)
    }
}

pub(crate) fn source(src: c_int) -> Source {
    if src == MPI_ANY_SOURCE {
        ANY_SOURCE
    } else {
        Source::from(Rank(src))
    }
}

pub(crate) fn tag_match(tag: c_int) -> TagMatch {
    if tag == MPI_ANY_TAG {
        ANY_TAG
    } else {
        TagMatch::from(Tag(tag))
    }
}

/// The C status of a receive or probe: the message's, or (skipped by the
/// policy) a receive from `MPI_PROC_NULL`'s.
pub(crate) fn of(st: Option<Status>) -> MpiStatus {
    match st {
        Some(s) => status(s.source.0, s.tag.0, s.len, MPI_SUCCESS),
        None => empty(),
    }
}

/// `MPI_Send` on a resilient communicator (a failed destination: the
/// `send` policy).
pub(crate) fn send(
    buf: *const c_void,
    count: c_int,
    ty: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> Option<c_int> {
    let r = lookup(comm)?;
    Some(call(comm, "MPI_Send", || {
        let (t, n) = crate::check::data(buf, count, ty)?;
        peer(&r, dest, false)?;
        crate::check::send_tag(tag)?;
        if dest == MPI_PROC_NULL {
            return Ok(());
        }
        // SAFETY: MPI's contract: `buf` holds `count` elements of `ty`.
        let data = unsafe { SendBuf::new(buf, n, &t) }?;
        r.send_bytes(data.bytes(), Rank(dest), Tag(tag))
            .map(drop)
            .map_err(|e| e.class())
    }))
}

/// `MPI_Recv` on a resilient communicator (a failed source: the `recv`
/// policy; skipped, the status is a receive from `MPI_PROC_NULL`'s).
#[allow(clippy::too_many_arguments)]
pub(crate) fn recv(
    buf: *mut c_void,
    count: c_int,
    ty: c_int,
    src: c_int,
    tag: c_int,
    comm: c_int,
    st: *mut MpiStatus,
) -> Option<c_int> {
    let r = lookup(comm)?;
    Some(call(comm, "MPI_Recv", || {
        let (t, n) = crate::check::data(buf, count, ty)?;
        peer(&r, src, true)?;
        crate::check::recv_tag(tag)?;
        if src == MPI_PROC_NULL {
            // SAFETY: MPI's contract for `st`.
            unsafe { put_status(st, empty()) };
            return Ok(());
        }
        // SAFETY: MPI's contract: `buf` holds `count` elements of `ty`.
        let mut data = unsafe { RecvBuf::new(buf, n, &t) }?;
        let got = r
            .recv_bytes(data.bytes_mut(), t.recv_elem(), source(src), tag_match(tag))
            .map_err(|e| e.class())?;
        if let Some(s) = &got {
            data.finish(s.len);
        }
        // SAFETY: MPI's contract for `st`.
        unsafe { put_status(st, of(got)) };
        Ok(())
    }))
}

/// `MPI_Sendrecv` on a resilient communicator: both at once (the trait's
/// `sendrecv_bytes`), each side under its policy.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    src: c_int,
    recvtag: c_int,
    comm: c_int,
    st: *mut MpiStatus,
) -> Option<c_int> {
    let r = lookup(comm)?;
    Some(call(comm, "MPI_Sendrecv", || {
        let (stype, sn) = crate::check::data(sendbuf, sendcount, sendtype)?;
        let (rtype, rn) = crate::check::data(recvbuf, recvcount, recvtype)?;
        peer(&r, dest, false)?;
        peer(&r, src, true)?;
        crate::check::send_tag(sendtag)?;
        crate::check::recv_tag(recvtag)?;
        // SAFETY: MPI's contract: `sendbuf` holds `sendcount` elements.
        let out = unsafe { SendBuf::new(sendbuf, sn, &stype) }?;
        // SAFETY: MPI's contract: `recvbuf` holds `recvcount` elements.
        let mut into = unsafe { RecvBuf::new(recvbuf, rn, &rtype) }?;
        let got = match (dest == MPI_PROC_NULL, src == MPI_PROC_NULL) {
            (true, true) => None,
            (false, true) => {
                r.send_bytes(out.bytes(), Rank(dest), Tag(sendtag))
                    .map_err(|e| e.class())?;
                None
            }
            (true, false) => r
                .recv_bytes(
                    into.bytes_mut(),
                    rtype.recv_elem(),
                    source(src),
                    tag_match(recvtag),
                )
                .map_err(|e| e.class())?,
            (false, false) => r
                .sendrecv_bytes(
                    out.bytes(),
                    Rank(dest),
                    Tag(sendtag),
                    into.bytes_mut(),
                    rtype.recv_elem(),
                    source(src),
                    tag_match(recvtag),
                )
                .map_err(|e| e.class())?,
        };
        if let Some(s) = &got {
            into.finish(s.len);
        }
        // SAFETY: MPI's contract for `st`.
        unsafe { put_status(st, of(got)) };
        Ok(())
    }))
}

/// `MPI_Probe` (`block`) and `MPI_Iprobe` on a resilient communicator.
pub(crate) fn probe(
    src: c_int,
    tag: c_int,
    comm: c_int,
    flag: *mut c_int,
    st: *mut MpiStatus,
    block: bool,
) -> Option<c_int> {
    let r = lookup(comm)?;
    let what = if block { "MPI_Probe" } else { "MPI_Iprobe" };
    Some(call(comm, what, || {
        peer(&r, src, true)?;
        crate::check::recv_tag(tag)?;
        if !block && flag.is_null() {
            return Err(MPI_ERR_ARG);
        }
        let found = if src == MPI_PROC_NULL {
            Some(empty())
        } else if block {
            // Skipped by the policy: as a probe of MPI_PROC_NULL.
            Some(of(r
                .probe(source(src), tag_match(tag))
                .map_err(|e| e.class())?))
        } else {
            r.iprobe(source(src), tag_match(tag))
                .map_err(|e| e.class())?
                .map(|s| of(Some(s)))
        };
        // SAFETY: MPI's contract for `flag` (checked non-null when
        // written) and `st`.
        unsafe {
            if !block {
                *flag = c_int::from(found.is_some());
            }
            if let Some(s) = found {
                put_status(st, s);
            }
        }
        Ok(())
    }))
}

/// A collective's result as the call's: `Ok` (with or without the failed
/// ranks' parts: the outcome is the resilient layer's to report, the
/// program sees MPI's success), or the error's class.
pub(crate) fn done<E: Class>(r: Result<Outcome, E>) -> Result<(), c_int> {
    r.map(drop).map_err(|e| e.class())
}

/// Runs `$body` with `$c` bound to the communicator of handle `$h`: the
/// resilient one (a `&dyn Communicator<Error = pertinax_resilient::Error>`)
/// when `pertinax run --resilient` made it one, else the plain one
/// (`p2p::entry_comm`, whose `MPI_ERR_COMM` the enclosing closure
/// returns).
/// The body is compiled for each: the plain path is today's.
#[macro_export]
#[doc(hidden)]
macro_rules! on_comm {
    ($h:expr, |$c:ident| $body:block) => {
        match $crate::resilient::lookup($h) {
            None => {
                // Not resilient: the entry's communicator, without
                // `comm_of`'s second test of the switch.
                let $c = &$crate::p2p::entry_comm($h)?;
                $body
            }
            Some(r) => {
                // Collectives started before it run first, in order.
                $crate::resilient_icoll::flush(&r);
                let $c = &*r;
                $body
            }
        }
    };
}
