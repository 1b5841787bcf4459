//! The collectives MPI defines on intercommunicators, blocking and
//! non-blocking (`MPI_Ibarrier`, `MPI_Ibcast`, ... and the persistent
//! and large-count forms route here too): `Barrier`, `Bcast`, `Reduce`,
//! `Allreduce`, `Gather(v)`, `Scatter(v)`, `Allgather(v)`,
//! `Alltoall(v,w)` and `Reduce_scatter(_block)`, with `MPI_ROOT` and
//! `MPI_PROC_NULL`; packed datatypes only, no `MPI_IN_PLACE` (MPI allows
//! none on an intercommunicator).
//!
//! Each is one operation on the intercommunicator's shadow (`inter.rs`:
//! the merge of both groups): a barrier of the merge, or one exchange
//! (`LentCollective::Neighbor`) in which every process lists what it
//! sends to and receives from whom. A reduction is received whole: every
//! process of the reducing group sends its contribution to each process
//! that needs the result, which folds them in rank order when the
//! operation completes (`RecvBuf::folded`; `Reduce_scatter`: each keeps
//! its own block of the folded vector). So a non-blocking form is the
//! blocking one's exchange, started and registered as a request; the
//! blocking form waits for it.
//!
//! The first collective on an intercommunicator makes its shadow, which
//! blocks until every process of both groups has started one (a
//! non-blocking one too).

use std::ffi::{c_int, c_void};
use std::ops::Range;

use pertinax::{Comm, LentCollective, Rank};

use crate::consts::*;
use crate::datatype::{packed_size, RecvBuf, SendBuf, Ty, Typed};
use crate::errors::code_of;
use crate::inter::{shadow, Shadow};
use crate::reduce::operation;

/// The bytes of `count` packed elements of `ty`, and the element size.
fn bytes(count: usize, ty: c_int) -> Result<(usize, usize), c_int> {
    let el = packed_size(ty)?;
    Ok((count.checked_mul(el).ok_or(MPI_ERR_COUNT)?, el))
}

/// The byte type the plans move.
const BYTES: Ty = Ty::Plain(MPI_BYTE, 1);

/// `len` bytes of the program's buffer to send.
///
/// # Safety
/// MPI's contract: `p` holds them until the operation completes.
unsafe fn sbuf(p: *const c_void, len: usize) -> Result<SendBuf, c_int> {
    // SAFETY: forwarded.
    unsafe { SendBuf::new(p, len, &BYTES) }
}

/// `len` bytes of the program's buffer to receive into.
///
/// # Safety
/// MPI's contract: `p` holds them until the operation completes.
unsafe fn rbuf(p: *mut c_void, len: usize) -> Result<RecvBuf, c_int> {
    // SAFETY: forwarded.
    unsafe { RecvBuf::new(p, len, &BYTES) }
}

/// A whole collective: what the shadow's merge runs, over which buffers.
struct Plan {
    which: LentCollective,
    inp: Option<SendBuf>,
    out: RecvBuf,
}

impl Plan {
    /// One exchange: `sends` byte ranges of `inp` to merged ranks, `recvs`
    /// byte ranges of `out` from them.
    fn exchange(
        inp: Option<SendBuf>,
        out: RecvBuf,
        sends: Vec<(Rank, Range<usize>)>,
        recvs: Vec<(Rank, Range<usize>)>,
    ) -> Plan {
        Plan {
            which: LentCollective::Neighbor { sends, recvs },
            inp,
            out,
        }
    }

    /// An exchange with nothing to send or receive (a process at
    /// `MPI_PROC_NULL` still takes part).
    fn nothing() -> Plan {
        Plan::exchange(None, RecvBuf::empty(), Vec::new(), Vec::new())
    }

    /// Runs the plan on `s`'s merge: waits for it (`req` `None`), or
    /// registers its request under `comm`'s handle.
    fn launch(self, comm: c_int, s: &Shadow, req: Option<*mut c_int>) -> Result<(), c_int> {
        let Plan {
            which,
            inp,
            mut out,
        } = self;
        if let Some(r) = req {
            // SAFETY: MPI's contract keeps the program's buffers valid
            // until the request completes.
            return unsafe { crate::icoll::start_on(&s.merged, comm, which, inp, out, r) };
        }
        let (lent_in, keep) = match inp {
            Some(b) => {
                let (l, k) = b.lend();
                (Some(l), k)
            }
            None => (None, None),
        };
        let lent_out = out.lend();
        s.merged
            .icollective_lent(which, lent_in, lent_out)
            .and_then(|r| r.wait())
            .map_err(|e| code_of(&e))?;
        drop(keep);
        out.finish(usize::MAX);
        Ok(())
    }
}

/// Checks a collective's root: `MPI_ROOT`, `MPI_PROC_NULL` or a remote
/// rank.
fn check_root(c: &Comm, root: c_int) -> Result<(), c_int> {
    if root == MPI_ROOT || root == MPI_PROC_NULL || (0..c.remote_size() as c_int).contains(&root) {
        Ok(())
    } else {
        Err(MPI_ERR_ROOT)
    }
}

/// Runs `f` as call `what` (its fault point, its error handler) when
/// `comm` is an intercommunicator; `None` for an intracommunicator.
pub(crate) fn on_inter(
    comm: c_int,
    what: &str,
    f: impl FnOnce(&Comm) -> Result<(), c_int>,
) -> Option<c_int> {
    let c = crate::inter::inter_of(comm)?;
    Some(crate::p2p::call(comm, what, || f(&c)))
}

/// Every remote process of `s`, with the same byte range.
fn to_all(s: &Shadow, n: usize, range: Range<usize>) -> Vec<(Rank, Range<usize>)> {
    (0..n)
        .map(|q| (s.remote(q as i32), range.clone()))
        .collect()
}

/// Block `q` (of `len` bytes) from or to remote process `q`, for each.
fn blockwise(s: &Shadow, n: usize, len: usize) -> Vec<(Rank, Range<usize>)> {
    (0..n)
        .map(|q| (s.remote(q as i32), q * len..(q + 1) * len))
        .collect()
}

/// `MPI_Barrier`, `MPI_Ibarrier`.
pub(crate) fn barrier(comm: c_int, c: &Comm, req: Option<*mut c_int>) -> Result<(), c_int> {
    let s = shadow(comm, c)?;
    Plan {
        which: LentCollective::Barrier,
        inp: None,
        out: RecvBuf::empty(),
    }
    .launch(comm, &s, req)
}

/// `MPI_Bcast`, `MPI_Ibcast`: the root sends to every remote process.
///
/// # Safety
/// MPI's contract for the buffer.
pub(crate) unsafe fn bcast(
    buf: *mut c_void,
    count: usize,
    ty: c_int,
    root: c_int,
    comm: c_int,
    c: &Comm,
    req: Option<*mut c_int>,
) -> Result<(), c_int> {
    check_root(c, root)?;
    let (len, _) = bytes(count, ty)?;
    let s = shadow(comm, c)?;
    let plan = match root {
        MPI_PROC_NULL => Plan::nothing(),
        MPI_ROOT => {
            // SAFETY: MPI's contract: `buf` holds `count` elements.
            let inp = unsafe { sbuf(buf, len) }?;
            let to = to_all(&s, c.remote_size(), 0..len);
            Plan::exchange(Some(inp), RecvBuf::empty(), to, Vec::new())
        }
        r => {
            // SAFETY: as above.
            let out = unsafe { rbuf(buf, len) }?;
            Plan::exchange(None, out, Vec::new(), vec![(s.remote(r), 0..len)])
        }
    };
    plan.launch(comm, &s, req)
}

/// `MPI_Reduce`, `MPI_Ireduce`: the root folds the remote group's
/// contributions.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: usize,
    ty: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
    c: &Comm,
    req: Option<*mut c_int>,
) -> Result<(), c_int> {
    check_root(c, root)?;
    let (len, _) = bytes(count, ty)?;
    let o = operation(op, ty)?;
    let s = shadow(comm, c)?;
    let plan = match root {
        MPI_PROC_NULL => Plan::nothing(),
        MPI_ROOT => {
            let n = c.remote_size();
            // SAFETY: MPI's contract: `recvbuf` holds `count` elements.
            let out = unsafe { RecvBuf::folded(recvbuf, len, n, o, 0..len) }?;
            Plan::exchange(None, out, Vec::new(), blockwise(&s, n, len))
        }
        r => {
            if crate::coll::in_place(sendbuf) {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: `sendbuf` holds `count` elements.
            let inp = unsafe { sbuf(sendbuf, len) }?;
            let to = vec![(s.remote(r), 0..len)];
            Plan::exchange(Some(inp), RecvBuf::empty(), to, Vec::new())
        }
    };
    plan.launch(comm, &s, req)
}

/// `MPI_Allreduce`, `MPI_Iallreduce`: every process folds the remote
/// group's contributions.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: usize,
    ty: c_int,
    op: c_int,
    comm: c_int,
    c: &Comm,
    req: Option<*mut c_int>,
) -> Result<(), c_int> {
    if crate::coll::in_place(sendbuf) {
        return Err(MPI_ERR_ARG);
    }
    let (len, _) = bytes(count, ty)?;
    let o = operation(op, ty)?;
    let s = shadow(comm, c)?;
    let n = c.remote_size();
    // SAFETY: MPI's contract: both buffers hold `count` elements.
    let (inp, out) = unsafe {
        (
            sbuf(sendbuf, len)?,
            RecvBuf::folded(recvbuf, len, n, o, 0..len)?,
        )
    };
    Plan::exchange(Some(inp), out, to_all(&s, n, 0..len), blockwise(&s, n, len))
        .launch(comm, &s, req)
}

/// `MPI_Allgather`, `MPI_Iallgather` (`all_to_all` false) and
/// `MPI_Alltoall`, `MPI_Ialltoall`: part `q` of the receive buffer from
/// remote process `q`; the one part (alltoall: part `q`) to each.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all(
    all_to_all: bool,
    sendbuf: *const c_void,
    scount: usize,
    stype: c_int,
    recvbuf: *mut c_void,
    rcount: usize,
    rtype: c_int,
    comm: c_int,
    c: &Comm,
    req: Option<*mut c_int>,
) -> Result<(), c_int> {
    if crate::coll::in_place(sendbuf) {
        return Err(MPI_ERR_ARG);
    }
    let (sl, _) = bytes(scount, stype)?;
    let (rl, _) = bytes(rcount, rtype)?;
    let s = shadow(comm, c)?;
    let n = c.remote_size();
    let (to, inp_len) = if all_to_all {
        (blockwise(&s, n, sl), sl * n)
    } else {
        (to_all(&s, n, 0..sl), sl)
    };
    // SAFETY: MPI's contract: the buffers hold these parts.
    let (inp, out) = unsafe { (sbuf(sendbuf, inp_len)?, rbuf(recvbuf, rl * n)?) };
    Plan::exchange(Some(inp), out, to, blockwise(&s, n, rl)).launch(comm, &s, req)
}

/// `MPI_Gather` (`scatter` false) and `MPI_Scatter`, and their
/// non-blocking forms: [`rooted_v`] with the root's parts all of one size.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rooted(
    scatter: bool,
    sendbuf: *const c_void,
    scount: usize,
    stype: c_int,
    recvbuf: *mut c_void,
    rcount: usize,
    rtype: c_int,
    root: c_int,
    comm: c_int,
    c: &Comm,
    req: Option<*mut c_int>,
) -> Result<(), c_int> {
    let n = c.remote_size();
    let k = if scatter { scount } else { rcount };
    let vec = (root == MPI_ROOT).then(|| (vec![k; n], (0..n).map(|q| q * k).collect()));
    // SAFETY: forwarded.
    unsafe {
        if scatter {
            rooted_v(
                true,
                comm,
                root,
                sendbuf.cast_mut(),
                vec,
                stype,
                recvbuf,
                rcount,
                rtype,
                req,
            )
        } else {
            rooted_v(
                false,
                comm,
                root,
                recvbuf,
                vec,
                rtype,
                sendbuf.cast_mut(),
                scount,
                stype,
                req,
            )
        }
    }
}

/// The byte ranges of blocks of `counts[q]` packed elements of `el` bytes
/// at `displs[q]` elements.
fn ranges(counts: &[usize], displs: &[usize], el: usize) -> Result<Vec<Range<usize>>, c_int> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| {
            let at = d.checked_mul(el).ok_or(MPI_ERR_COUNT)?;
            Ok(at..at
                .checked_add(c.checked_mul(el).ok_or(MPI_ERR_COUNT)?)
                .ok_or(MPI_ERR_COUNT)?)
        })
        .collect()
}

/// How far `ranges` reach into a buffer.
fn reach(ranges: &[Range<usize>]) -> usize {
    ranges.iter().map(|r| r.end).max().unwrap_or(0)
}

/// `MPI_Gatherv` (`scatter` false) and `MPI_Scatterv`, and their
/// non-blocking forms: at `MPI_ROOT`, `vec` is the counts and
/// displacements per remote rank and `root_buf` the root's buffer; in
/// the remote group, `part`/`count` is the one part; nothing at
/// `MPI_PROC_NULL`.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rooted_v(
    scatter: bool,
    comm: c_int,
    root: c_int,
    root_buf: *mut c_void,
    vec: Option<(Vec<usize>, Vec<usize>)>,
    root_ty: c_int,
    part: *mut c_void,
    count: usize,
    ty: c_int,
    req: Option<*mut c_int>,
) -> Result<(), c_int> {
    let c = crate::p2p::comm_of(comm)?;
    check_root(&c, root)?;
    let s = shadow(comm, &c)?;
    let plan = match root {
        MPI_PROC_NULL => Plan::nothing(),
        MPI_ROOT => {
            let (counts, displs) = vec.ok_or(MPI_ERR_ARG)?;
            let blocks = ranges(&counts, &displs, packed_size(root_ty)?)?;
            let lists: Vec<_> = (0..blocks.len())
                .map(|q| s.remote(q as i32))
                .zip(blocks.iter().cloned())
                .collect();
            if scatter {
                // SAFETY: MPI's contract: the blocks lie in the buffer.
                let inp = unsafe { sbuf(root_buf, reach(&blocks)) }?;
                Plan::exchange(Some(inp), RecvBuf::empty(), lists, Vec::new())
            } else {
                // SAFETY: as above.
                let out = unsafe { rbuf(root_buf, reach(&blocks)) }?;
                Plan::exchange(None, out, Vec::new(), lists)
            }
        }
        r => {
            let (len, _) = bytes(count, ty)?;
            let peer = vec![(s.remote(r), 0..len)];
            if scatter {
                // SAFETY: MPI's contract: one part.
                let out = unsafe { rbuf(part, len) }?;
                Plan::exchange(None, out, Vec::new(), peer)
            } else {
                // SAFETY: as above.
                let inp = unsafe { sbuf(part, len) }?;
                Plan::exchange(Some(inp), RecvBuf::empty(), peer, Vec::new())
            }
        }
    };
    plan.launch(comm, &s, req)
}

/// `MPI_Allgatherv` (`send` one part for every remote rank) and
/// `MPI_Alltoallv`, and their non-blocking forms: every process sends to
/// and receives from every remote process; counts and displacements per
/// remote rank.
///
/// # Safety
/// MPI's contract for the buffers.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_v(
    comm: c_int,
    sendbuf: *const c_void,
    send: (Vec<usize>, Vec<usize>),
    sendtype: c_int,
    recvbuf: *mut c_void,
    recv: (Vec<usize>, Vec<usize>),
    recvtype: c_int,
    req: Option<*mut c_int>,
) -> Result<(), c_int> {
    // In bytes, with a type per block: the w-form.
    let typed = |(counts, displs): &(Vec<usize>, Vec<usize>), ty| {
        let t = crate::datatype::usable(ty)?;
        let el = packed_size(ty)?;
        counts
            .iter()
            .zip(displs)
            .map(|(&count, &d)| {
                let disp = d
                    .checked_mul(el)
                    .and_then(|b| isize::try_from(b).ok())
                    .ok_or(MPI_ERR_COUNT)?;
                Ok(Typed {
                    disp,
                    count,
                    ty: t.clone(),
                })
            })
            .collect::<Result<Vec<_>, c_int>>()
    };
    let (st, rt) = (typed(&send, sendtype)?, typed(&recv, recvtype)?);
    // SAFETY: the same contract, forwarded.
    unsafe { all_w(comm, sendbuf, &st, recvbuf, &rt, req) }
}

/// `MPI_Alltoallw` and `MPI_Ialltoallw`: part `q` of each side is `count`
/// elements of its type at its byte displacement, to and from remote rank
/// `q`.
///
/// # Safety
/// MPI's contract for the buffers.
pub(crate) unsafe fn all_w(
    comm: c_int,
    sendbuf: *const c_void,
    send: &[Typed],
    recvbuf: *mut c_void,
    recv: &[Typed],
    req: Option<*mut c_int>,
) -> Result<(), c_int> {
    if crate::coll::in_place(sendbuf) {
        return Err(MPI_ERR_ARG);
    }
    let spans = |parts: &[Typed]| {
        parts
            .iter()
            .map(|p| {
                if !p.ty.packed_like() {
                    return Err(MPI_ERR_UNSUPPORTED_OPERATION);
                }
                let at = usize::try_from(p.disp).map_err(|_| MPI_ERR_ARG)?;
                let len = p.count.checked_mul(p.ty.size()).ok_or(MPI_ERR_COUNT)?;
                Ok(at..at.checked_add(len).ok_or(MPI_ERR_COUNT)?)
            })
            .collect::<Result<Vec<_>, c_int>>()
    };
    let (sr, rr) = (spans(send)?, spans(recv)?);
    let c = crate::p2p::comm_of(comm)?;
    let s = shadow(comm, &c)?;
    // SAFETY: MPI's contract: the parts lie in the buffers.
    let (inp, out) = unsafe { (sbuf(sendbuf, reach(&sr))?, rbuf(recvbuf, reach(&rr))?) };
    let peers = |r: Vec<Range<usize>>| {
        r.into_iter()
            .enumerate()
            .map(|(q, r)| (s.remote(q as i32), r))
            .collect()
    };
    Plan::exchange(Some(inp), out, peers(sr), peers(rr)).launch(comm, &s, req)
}

/// `MPI_Reduce_scatter(_block)` and their non-blocking forms: the
/// reduction of the remote group's vectors (`sum(counts)` elements, the
/// same sum in both groups, as MPI requires), block `i` (of `counts[i]`
/// elements) to local rank `i`. Every process sends its whole vector to
/// each remote process, and keeps its block of the fold.
///
/// # Safety
/// MPI's contract for the buffers.
pub(crate) unsafe fn reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[usize],
    ty: c_int,
    op: c_int,
    comm: c_int,
    req: Option<*mut c_int>,
) -> Result<(), c_int> {
    if crate::coll::in_place(sendbuf) {
        return Err(MPI_ERR_ARG);
    }
    let c = crate::p2p::comm_of(comm)?;
    let o = operation(op, ty)?;
    let el = packed_size(ty)?;
    let total = counts
        .iter()
        .try_fold(0usize, |a, &k| a.checked_add(k))
        .ok_or(MPI_ERR_COUNT)?;
    let (len, _) = bytes(total, ty)?;
    let me = c.rank().index();
    let before: usize = counts.iter().take(me).sum();
    let mine = counts.get(me).copied().unwrap_or(0);
    let window = before * el..(before + mine) * el;
    let s = shadow(comm, &c)?;
    let n = c.remote_size();
    // SAFETY: MPI's contract: `sendbuf` holds the whole vector, `recvbuf`
    // this rank's block.
    let (inp, out) = unsafe {
        (
            sbuf(sendbuf, len)?,
            RecvBuf::folded(recvbuf, len, n, o, window)?,
        )
    };
    Plan::exchange(Some(inp), out, to_all(&s, n, 0..len), blockwise(&s, n, len))
        .launch(comm, &s, req)
}
