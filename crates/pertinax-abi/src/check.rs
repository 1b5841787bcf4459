//! Argument checks shared by the calls (issue 32: bad input from C is an
//! error, never a crash). Each call checks every argument up front,
//! before it communicates or takes a shortcut (a peer `MPI_PROC_NULL`),
//! so a bad argument is the same error at every rank of a collective and
//! never leaves half an operation behind:
//!
//! - a communicator that is not live: `MPI_ERR_COMM` ([`comm`]);
//! - a datatype that is null, freed, invalid or not committed:
//!   `MPI_ERR_TYPE` ([`data`]);
//! - a negative count: `MPI_ERR_COUNT` ([`count`]);
//! - a NULL buffer with data in it (a count above 0 of a type of nonzero
//!   size): `MPI_ERR_BUFFER` ([`buffer`]). `MPI_BOTTOM` is NULL in
//!   MPICH's ABI: it is accepted with a derived datatype whose data lies at
//!   absolute addresses (its true lower bound at least [`LOWEST_ADDRESS`]);
//! - a destination outside `0..size` and not `MPI_PROC_NULL`, a source
//!   outside it and not `MPI_PROC_NULL` or `MPI_ANY_SOURCE`:
//!   `MPI_ERR_RANK` ([`dest`], [`source`]);
//! - a send's tag outside `0..=MPI_TAG_UB`, a receive's too unless
//!   `MPI_ANY_TAG`: `MPI_ERR_TAG` ([`send_tag`], [`recv_tag`]);
//! - a root outside `0..size`: `MPI_ERR_ROOT` ([`root`]).

use std::ffi::{c_int, c_void};

use pertinax::{Comm, Communicator, Rank};

use crate::consts::*;
use crate::datatype::{usable, Ty};

/// The lowest address `MPI_BOTTOM` (NULL) with an absolute-address
/// derived datatype may reach: Linux maps nothing in the first page.
pub(crate) const LOWEST_ADDRESS: isize = 4096;

/// The communicator of handle `comm`, or `MPI_ERR_COMM`.
pub(crate) fn comm(comm: c_int) -> Result<Comm, c_int> {
    crate::p2p::comm_of(comm)
}

/// A count: `MPI_ERR_COUNT` when negative.
pub(crate) fn count<T: TryInto<usize>>(count: T) -> Result<usize, c_int> {
    count.try_into().map_err(|_| MPI_ERR_COUNT)
}

/// `MPI_ERR_BUFFER` for a NULL `buf` holding data: `n` elements of `t`
/// with a nonzero size, unless `t` is derived with absolute addresses
/// (`MPI_BOTTOM`).
pub(crate) fn buffer(buf: *const c_void, n: usize, t: &Ty) -> Result<(), c_int> {
    if !buf.is_null() || n == 0 || t.size() == 0 {
        return Ok(());
    }
    match t {
        Ty::Derived(l) if l.true_lb >= LOWEST_ADDRESS => Ok(()),
        _ => Err(MPI_ERR_BUFFER),
    }
}

/// [`buffer`] for one part of a w-collective's buffer: data of `t` at
/// byte `disp` from a NULL `buf` (`MPI_BOTTOM`) must start at an address
/// (`disp` plus the type's true lower bound), else `MPI_ERR_BUFFER`.
pub(crate) fn part(buf: *const c_void, disp: isize, t: &Ty) -> Result<(), c_int> {
    if !buf.is_null() || t.size() == 0 {
        return Ok(());
    }
    let lb = match t {
        Ty::Derived(l) => l.true_lb,
        Ty::Plain(..) => 0,
    };
    if disp.saturating_add(lb) >= LOWEST_ADDRESS {
        Ok(())
    } else {
        Err(MPI_ERR_BUFFER)
    }
}

/// A buffer argument triple: the usable type, the count, and the buffer
/// checked against them.
pub(crate) fn data<T: TryInto<usize>>(
    buf: *const c_void,
    n: T,
    ty: c_int,
) -> Result<(Ty, usize), c_int> {
    let t = usable(ty)?;
    let n = count(n)?;
    buffer(buf, n, &t)?;
    Ok((t, n))
}

/// A point-to-point destination: a rank of `c` or `MPI_PROC_NULL`.
pub(crate) fn dest(c: &Comm, dest: c_int) -> Result<(), c_int> {
    // On an intercommunicator, a rank of the remote group.
    let peers = if c.is_inter() {
        c.remote_size()
    } else {
        Communicator::size(c)
    };
    if dest == MPI_PROC_NULL || usize::try_from(dest).is_ok_and(|r| r < peers) {
        Ok(())
    } else {
        Err(MPI_ERR_RANK)
    }
}

/// A point-to-point source: a rank of `c`, `MPI_PROC_NULL` or
/// `MPI_ANY_SOURCE`.
pub(crate) fn source(c: &Comm, src: c_int) -> Result<(), c_int> {
    if src == MPI_ANY_SOURCE {
        Ok(())
    } else {
        dest(c, src)
    }
}

fn in_range<C: Communicator + ?Sized>(c: &C, r: c_int) -> bool {
    usize::try_from(r).is_ok_and(|r| r < Communicator::size(c))
}

/// A send's tag: `0..=MPI_TAG_UB`.
pub(crate) fn send_tag(tag: c_int) -> Result<(), c_int> {
    if (0..=pertinax::TAG_UB).contains(&tag) {
        Ok(())
    } else {
        Err(MPI_ERR_TAG)
    }
}

/// A receive's (or probe's) tag: `0..=MPI_TAG_UB` or `MPI_ANY_TAG`.
pub(crate) fn recv_tag(tag: c_int) -> Result<(), c_int> {
    if tag == MPI_ANY_TAG {
        Ok(())
    } else {
        send_tag(tag)
    }
}

/// A collective's root: a rank of `c` (`MPI_ERR_ROOT`).
pub(crate) fn root<C: Communicator + ?Sized>(c: &C, root: c_int) -> Result<Rank, c_int> {
    if in_range(c, root) {
        Ok(Rank(root))
    } else {
        Err(MPI_ERR_ROOT)
    }
}

/// A send's arguments: the communicator, the type and the count.
pub(crate) fn send<T: TryInto<usize>>(
    buf: *const c_void,
    count: T,
    ty: c_int,
    to: c_int,
    tag: c_int,
    comm_h: c_int,
) -> Result<(Comm, Ty, usize), c_int> {
    let c = comm(comm_h)?;
    let (t, n) = data(buf, count, ty)?;
    dest(&c, to)?;
    send_tag(tag)?;
    Ok((c, t, n))
}

/// A receive's arguments: the communicator, the type and the count.
pub(crate) fn recv<T: TryInto<usize>>(
    buf: *const c_void,
    count: T,
    ty: c_int,
    from: c_int,
    tag: c_int,
    comm_h: c_int,
) -> Result<(Comm, Ty, usize), c_int> {
    let c = comm(comm_h)?;
    let (t, n) = data(buf, count, ty)?;
    source(&c, from)?;
    recv_tag(tag)?;
    Ok((c, t, n))
}

/// A probe's arguments: the communicator.
pub(crate) fn probe(from: c_int, tag: c_int, comm_h: c_int) -> Result<Comm, c_int> {
    let c = comm(comm_h)?;
    source(&c, from)?;
    recv_tag(tag)?;
    Ok(c)
}

/// Whether `h` is a live request: `MPI_REQUEST_NULL` is not.
pub(crate) fn live_request(h: c_int) -> bool {
    use crate::persist::{resolve, Resolved};
    match resolve(h) {
        Resolved::Plain(h) => crate::state::request_index(h)
            .and_then(|i| crate::state::with(|s| matches!(s.requests.get(i), Some(Some(_)))))
            .unwrap_or(false),
        Resolved::Active(_) | Resolved::Inactive(_) => true,
        Resolved::Invalid => false,
    }
}

/// An array of `count` requests (waits, tests, `MPI_Startall`): a
/// negative count is `MPI_ERR_COUNT`, a NULL array with entries
/// `MPI_ERR_ARG`, an entry neither `MPI_REQUEST_NULL` (when `null_ok`)
/// nor a live request `MPI_ERR_REQUEST`; the number of entries.
///
/// # Safety
/// `reqs` is null or holds `count` ints.
pub(crate) unsafe fn requests(
    count: c_int,
    reqs: *const c_int,
    null_ok: bool,
) -> Result<usize, c_int> {
    let n = self::count(count)?;
    if n == 0 {
        return Ok(0);
    }
    if reqs.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: by the caller's contract.
    let all = unsafe { std::slice::from_raw_parts(reqs, n) };
    for &h in all {
        if !(live_request(h) || (null_ok && h == MPI_REQUEST_NULL)) {
            return Err(MPI_ERR_REQUEST);
        }
    }
    Ok(n)
}

/// The input of a collective (unless `MPI_IN_PLACE`): [`data`].
pub(crate) fn input<T: TryInto<usize>>(buf: *const c_void, n: T, ty: c_int) -> Result<(), c_int> {
    if buf as usize == IN_PLACE {
        return Ok(());
    }
    data(buf, n, ty).map(drop)
}

/// A reduction's op on `ty`: `MPI_ERR_OP` for an invalid or freed op or
/// one that does not apply to the type.
pub(crate) fn op(op: c_int, ty: c_int) -> Result<(), c_int> {
    crate::reduce::operation(op, ty).map(drop)
}

/// Writes `v` through a C out-pointer, `MPI_ERR_ARG` for null.
///
/// # Safety
/// `p` is null or valid for a write of `T`.
pub(crate) unsafe fn out<T>(p: *mut T, v: T) -> Result<(), c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-null, and valid by the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}
