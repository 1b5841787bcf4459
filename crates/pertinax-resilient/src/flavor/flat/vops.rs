//! The collectives of [`Resilient`] with per-rank counts or per-rank
//! results: scan, exscan, reduce_scatter, gatherv, scatterv, allgatherv
//! and alltoallv, on the survivors at original positions.
//!
//! Counts and displacements are given per original rank, as the program
//! sees the communicator; each attempt maps them to the members of the
//! collective communicator (the survivors, in original order) and runs the
//! core's operation there, so the failed ranks' blocks are neither sent
//! nor written. A receive buffer whose blocks belong to ranks that may die
//! during the operation is copied first (`gatherv` at the root,
//! `allgatherv`, `alltoallv`): an attempt that fails may already have
//! written a dying rank's block, which is put back as it was once the
//! outcome lists that rank missing.

use pertinax::{Communicator, ErasedOp, Rank};

use super::ops::check_reduce;
use super::{Check, Resilient, State};
use crate::layout::{bad, layout, restore, root_blocks};
use crate::policy::Kind;
use crate::replay::{keep, rerun, Serve, What};
use crate::{Error, Outcome};

/// `v`, given per original rank, for the members of the collective
/// communicator.
fn on_cur(st: &State, v: &[usize]) -> Vec<usize> {
    st.cur_to_orig.iter().map(|&o| v[o]).collect()
}

/// The outcome of an operation over the members of the collective
/// communicator now.
fn over_survivors(st: &State) -> Outcome {
    Outcome {
        skipped: None,
        missing: st.missing(),
    }
}

/// Scan or exscan (`before`: `recv` as it was before the call) on the
/// survivors. An exscan goes through a scratch buffer, and the lowest
/// survivor's `recv` is put back as it was before the call: an earlier
/// attempt, at which a lower rank was still alive, may have written it
/// (also one that completed here, redone because the rank died before the
/// attempt was agreed).
fn scan_on(
    st: &State,
    send: &[u8],
    recv: &mut [u8],
    op: &ErasedOp,
    before: Option<&[u8]>,
) -> Result<Outcome, Error> {
    if let Some(before) = before {
        let mut tmp = vec![0u8; recv.len()];
        Communicator::exscan_bytes(&st.cur, send, &mut tmp, op)?;
        if st.cur.rank().index() > 0 {
            recv.copy_from_slice(&tmp);
        } else {
            recv.copy_from_slice(before);
        }
    } else {
        Communicator::scan_bytes(&st.cur, send, recv, op)?;
    }
    Ok(over_survivors(st))
}

/// Reduce-scatter on the survivors: the failed ranks' blocks of `send`
/// (`counts` per original rank, in elements of `op`) are left out.
fn reduce_scatter_on(
    st: &State,
    size: usize,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    op: &ErasedOp,
) -> Result<Outcome, Error> {
    if st.whole(size) {
        Communicator::reduce_scatter_bytes(&st.cur, send, recv, counts, op)?;
        return Ok(Outcome::default());
    }
    let e = op.elem_size();
    let mut at = Vec::with_capacity(size);
    let mut off = 0;
    for &c in counts {
        at.push(off);
        off += c * e;
    }
    let mut tmp = Vec::new();
    for &o in &st.cur_to_orig {
        tmp.extend_from_slice(&send[at[o]..at[o] + counts[o] * e]);
    }
    Communicator::reduce_scatter_bytes(&st.cur, &tmp, recv, &on_cur(st, counts), op)?;
    Ok(over_survivors(st))
}

/// Gatherv to original rank `root` on the survivors (`recv`, `counts`
/// and `displs` are used at the root only).
#[allow(clippy::too_many_arguments)]
fn gatherv_on(
    st: &State,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    displs: &[usize],
    elem: usize,
    root: usize,
) -> Result<Outcome, Error> {
    let rc =
        st.orig_to_cur[root].ok_or_else(|| Error::Internal("gatherv with a failed root".into()))?;
    let r = Rank(rc as i32);
    if st.cur.rank().index() != rc {
        Communicator::gatherv_bytes(&st.cur, send, &mut [], &[], &[], elem, r)?;
        return Ok(Outcome::default());
    }
    let (c, d) = (on_cur(st, counts), on_cur(st, displs));
    Communicator::gatherv_bytes(&st.cur, send, recv, &c, &d, elem, r)?;
    Ok(over_survivors(st))
}

/// Scatterv from original rank `root` on the survivors (`send`, `counts`
/// and `displs` are used at the root only).
#[allow(clippy::too_many_arguments)]
fn scatterv_on(
    st: &State,
    send: &[u8],
    counts: &[usize],
    displs: &[usize],
    recv: &mut [u8],
    elem: usize,
    root: usize,
) -> Result<Outcome, Error> {
    let rc = st.orig_to_cur[root]
        .ok_or_else(|| Error::Internal("scatterv with a failed root".into()))?;
    let r = Rank(rc as i32);
    if st.cur.rank().index() != rc {
        Communicator::scatterv_bytes(&st.cur, &[], &[], &[], recv, elem, r)?;
        return Ok(Outcome::default());
    }
    let (c, d) = (on_cur(st, counts), on_cur(st, displs));
    Communicator::scatterv_bytes(&st.cur, send, &c, &d, recv, elem, r)?;
    Ok(over_survivors(st))
}

/// Allgatherv on the survivors.
fn allgatherv_on(
    st: &State,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    displs: &[usize],
    elem: usize,
) -> Result<Outcome, Error> {
    let (c, d) = (on_cur(st, counts), on_cur(st, displs));
    Communicator::allgatherv_bytes(&st.cur, send, recv, &c, &d, elem)?;
    Ok(over_survivors(st))
}

/// The send and receive layouts of an alltoallv, per original rank.
struct Vlayout<'a> {
    scounts: &'a [usize],
    sdispls: &'a [usize],
    rcounts: &'a [usize],
    rdispls: &'a [usize],
    elem: usize,
}

/// Alltoallv on the survivors.
fn alltoallv_on(st: &State, send: &[u8], recv: &mut [u8], l: &Vlayout) -> Result<Outcome, Error> {
    let (sc, sd) = (on_cur(st, l.scounts), on_cur(st, l.sdispls));
    let (rc, rd) = (on_cur(st, l.rcounts), on_cur(st, l.rdispls));
    Communicator::alltoallv_bytes(&st.cur, send, &sc, &sd, recv, &rc, &rd, l.elem)?;
    Ok(over_survivors(st))
}

/// [`Communicator::scan_bytes`] (`exclusive`: exscan) of a [`Resilient`]:
/// the reduction, in original rank order, over the survivors at (exscan:
/// before) this rank; the lowest survivor's exscan leaves `recv` as it
/// was. Logged for a replay as a re-run ([`What::Each`]).
pub(super) fn scan(
    r: &Resilient,
    send: &[u8],
    recv: &mut [u8],
    op: &ErasedOp,
    exclusive: bool,
) -> Result<Outcome, Error> {
    check_reduce(send, Some(recv), op)?;
    let before = exclusive.then(|| recv.to_vec());
    let out = r.each(|st| scan_on(st, send, recv, op, before.as_deref()))?;
    // Every rank sends as many bytes: the same weight everywhere.
    r.record(What::Each, false, send.len(), |arena| {
        let op = op.clone();
        rerun(
            arena,
            send,
            Box::new(move |st: &State, input: &[u8]| {
                let mut sink = vec![0u8; input.len()];
                let before = exclusive.then(|| vec![0u8; input.len()]);
                scan_on(st, input, &mut sink, &op, before.as_deref()).map(|_| ())
            }),
        )
    })?;
    Ok(out)
}

/// [`Communicator::reduce_scatter_bytes`] of a [`Resilient`]: `counts`
/// per original rank; the reduction over the survivors, each survivor
/// getting its block. Logged for a replay as a re-run ([`What::Each`]).
pub(super) fn reduce_scatter(
    r: &Resilient,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    op: &ErasedOp,
) -> Result<Outcome, Error> {
    let size = r.size;
    let e = op.elem_size();
    let total = counts
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c.checked_mul(e)?));
    if counts.len() != size
        || total != Some(send.len())
        || recv.len() != counts[r.me].saturating_mul(e)
    {
        return Err(bad(
            "reduce_scatter",
            format!(
                "{} bytes to send and {} to receive with {} counts of {e}-byte elements for \
                 {size} ranks (send: their sum; receive: this rank's count)",
                send.len(),
                recv.len(),
                counts.len()
            ),
        ));
    }
    let out = r.each(|st| reduce_scatter_on(st, size, send, recv, counts, op))?;
    r.record(What::Each, false, send.len(), |arena| {
        let (op, counts, n) = (op.clone(), counts.to_vec(), recv.len());
        rerun(
            arena,
            send,
            Box::new(move |st: &State, input: &[u8]| {
                let mut sink = vec![0u8; n];
                reduce_scatter_on(st, size, input, &mut sink, &counts, &op).map(|_| ())
            }),
        )
    })?;
    Ok(out)
}

/// [`Communicator::gatherv_bytes`] of a [`Resilient`]: as gather (the
/// gather policy for a failed root), with counts and displacements per
/// original rank; the failed ranks' blocks of `recv` stay as they were.
#[allow(clippy::too_many_arguments)]
pub(super) fn gatherv(
    r: &Resilient,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    displs: &[usize],
    elem: usize,
    root: Rank,
) -> Result<Outcome, Error> {
    let root = r.check_rank(root)?;
    let blocks = root_blocks(
        "gatherv",
        r.size,
        r.me,
        root,
        counts,
        displs,
        recv.len(),
        "send",
        send.len(),
        elem,
    )?;
    let saved = if r.me == root {
        recv.to_vec()
    } else {
        Vec::new()
    };
    let out = r.rooted(What::Rooted(root), Kind::Gather, root, |st| {
        gatherv_on(st, send, recv, counts, displs, elem, root)
    })?;
    restore(recv, &saved, &blocks, &out.missing);
    // Only the root knows every count: no byte weight (the count of
    // operations still bounds the log).
    r.record(What::Rooted(root), false, 0, |arena| {
        rerun(
            arena,
            send,
            Box::new(move |st: &State, input: &[u8]| {
                // Only non-roots replay (a root that finished needs
                // nothing, and a root that did not runs it itself).
                gatherv_on(st, input, &mut [], &[], &[], elem, root).map(|_| ())
            }),
        )
    })?;
    Ok(out)
}

/// [`Communicator::scatterv_bytes`] of a [`Resilient`]: as scatter (the
/// scatter policy for a failed root), with counts and displacements per
/// original rank.
#[allow(clippy::too_many_arguments)]
pub(super) fn scatterv(
    r: &Resilient,
    send: &[u8],
    counts: &[usize],
    displs: &[usize],
    recv: &mut [u8],
    elem: usize,
    root: Rank,
) -> Result<Outcome, Error> {
    let root = r.check_rank(root)?;
    let at_root = r.me == root;
    root_blocks(
        "scatterv",
        r.size,
        r.me,
        root,
        counts,
        displs,
        send.len(),
        "receive",
        recv.len(),
        elem,
    )?;
    let out = r.rooted(What::Scatter(root), Kind::Scatter, root, |st| {
        scatterv_on(st, send, counts, displs, recv, elem, root)
    })?;
    // Only the root knows every count: no byte weight.
    r.record(What::Scatter(root), false, 0, |arena| {
        let (input, counts, displs): (&[u8], Vec<usize>, Vec<usize>) = if at_root {
            (send, counts.to_vec(), displs.to_vec())
        } else {
            (&[], Vec::new(), Vec::new())
        };
        let n = recv.len();
        rerun(
            arena,
            input,
            Box::new(move |st: &State, input: &[u8]| {
                let mut sink = vec![0u8; n];
                scatterv_on(st, input, &counts, &displs, &mut sink, elem, root).map(|_| ())
            }),
        )
    })?;
    Ok(out)
}

/// [`Communicator::allgatherv_bytes`] of a [`Resilient`]: as allgather,
/// with counts and displacements per original rank; the failed ranks'
/// blocks of `recv` stay as they were. Logged as its result (the blocks,
/// packed in rank order).
pub(super) fn allgatherv(
    r: &Resilient,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    displs: &[usize],
    elem: usize,
) -> Result<Outcome, Error> {
    let blocks = layout("allgatherv", r.size, counts, displs, recv.len(), elem)?;
    if blocks[r.me].len() != send.len() {
        return Err(bad(
            "allgatherv",
            "this rank's count differs from its send length".into(),
        ));
    }
    let packed_len: usize = blocks.iter().map(|b| b.len()).sum();
    let saved = recv.to_vec();
    let out = r.drive(What::Spread, |st, plan| match plan {
        None => allgatherv_on(st, send, recv, counts, displs, elem),
        Some(p) => {
            // A laggard under the log check: the packed blocks of a rank
            // that completed it; the blocks it had are unpacked.
            let mut packed = vec![0u8; packed_len];
            let out = r.take_spread(st, p, &mut packed)?;
            if out.skipped.is_none() {
                let mut at = 0;
                for (o, b) in blocks.iter().enumerate() {
                    if !out.missing.contains(&Rank(o as i32)) {
                        recv[b.clone()].copy_from_slice(&packed[at..at + b.len()]);
                    }
                    at += b.len();
                }
            }
            Ok(out)
        }
    })?;
    restore(recv, &saved, &blocks, &out.missing);
    // Completion anywhere means every rank entered it when every rank
    // sends something; the counts are the same everywhere, so is `sync`.
    let sync = counts.iter().all(|&c| c > 0);
    r.record(What::Spread, sync, packed_len, |arena| {
        let mut packed = Vec::with_capacity(packed_len);
        for b in &blocks {
            packed.extend_from_slice(&recv[b.clone()]);
        }
        keep(arena, &packed, &out)
    })?;
    Ok(out)
}

/// [`Communicator::alltoallv_bytes`] of a [`Resilient`]: as alltoall, with
/// counts and displacements per original rank; the failed ranks' blocks
/// of `recv` stay as they were. Only under [`Check::Agree`]
/// ([`Error::Unsupported`] under the log check, as alltoall).
#[allow(clippy::too_many_arguments)]
pub(super) fn alltoallv(
    r: &Resilient,
    send: &[u8],
    scounts: &[usize],
    sdispls: &[usize],
    recv: &mut [u8],
    rcounts: &[usize],
    rdispls: &[usize],
    elem: usize,
) -> Result<Outcome, Error> {
    if r.cfg.check == Check::Log {
        return Err(Error::Unsupported(
            "alltoallv under the log check (each rank's result differs: nothing to replay, as \
             for alltoall)"
                .into(),
        ));
    }
    let size = r.size;
    let sb = layout("alltoallv (send)", size, scounts, sdispls, send.len(), elem)?;
    let rb = layout(
        "alltoallv (receive)",
        size,
        rcounts,
        rdispls,
        recv.len(),
        elem,
    )?;
    if sb[r.me].len() != rb[r.me].len() {
        return Err(bad(
            "alltoallv",
            "the block to self differs in send and receive counts".into(),
        ));
    }
    let l = Vlayout {
        scounts,
        sdispls,
        rcounts,
        rdispls,
        elem,
    };
    let saved = recv.to_vec();
    let out = r.drive(What::Barrier, |st, plan| match plan {
        None => alltoallv_on(st, send, recv, &l),
        Some(_) => Ok(Outcome::default()),
    })?;
    restore(recv, &saved, &rb, &out.missing);
    r.record(What::Barrier, true, 0, |_| Serve::Nothing)?;
    Ok(out)
}
