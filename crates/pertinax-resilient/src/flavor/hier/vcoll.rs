//! The collectives with per-rank counts or per-rank results on the
//! hierarchy (scan, exscan, reduce_scatter, gatherv, scatterv,
//! allgatherv), built on its own allgather, allreduce, gather and scatter:
//! they repair and repeat as those do, and their outcome is theirs, the
//! same at every survivor.
//!
//! The price is data: scan and exscan gather every rank's input at every
//! rank and reduce locally (in original rank order, over the ranks the
//! allgather's outcome does not list missing); reduce_scatter reduces the
//! whole vector everywhere and keeps this rank's block; the v-forms pad
//! every block to the largest one (gatherv and scatterv first agree on it
//! with an allreduce, since only the root knows every count).

use pertinax::{Communicator, CommunicatorExt, ErasedOp, Op, Rank};

use super::Hierarchical;
use crate::layout::{bad, layout, root_blocks};
use crate::{Error, Outcome};

/// Whether original rank `r` contributed to an operation with outcome `o`.
fn counted(o: &Outcome, r: usize) -> bool {
    !o.missing.contains(&Rank(r as i32))
}

/// Scan (`exclusive`: exscan) as an allgather of the inputs and a local
/// reduction in original rank order; the lowest survivor's exscan leaves
/// `recv` as it was.
pub(super) fn scan(
    h: &Hierarchical,
    send: &[u8],
    recv: &mut [u8],
    op: &ErasedOp,
    exclusive: bool,
) -> Result<Outcome, Error> {
    let e = op.elem_size().max(1);
    if !send.len().is_multiple_of(e) || recv.len() != send.len() {
        return Err(bad(
            if exclusive { "exscan" } else { "scan" },
            format!(
                "{} bytes to send and {} to receive, the same number of whole {e}-byte \
                 elements needed",
                send.len(),
                recv.len()
            ),
        ));
    }
    let n = send.len();
    let mut all = vec![0u8; h.size * n];
    let out = h.allgather_bytes(send, &mut all)?;
    let upto = if exclusive { h.me } else { h.me + 1 };
    let mut first = true;
    for o in (0..upto).filter(|&o| counted(&out, o)) {
        let x = &all[o * n..(o + 1) * n];
        if first {
            recv.copy_from_slice(x);
            first = false;
        } else {
            op.combine_bytes(recv, x, true)?;
        }
    }
    Ok(out)
}

/// Reduce-scatter as an allreduce of the whole vector, of which this rank
/// keeps its block (`counts` per original rank, in elements of `op`).
pub(super) fn reduce_scatter(
    h: &Hierarchical,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    op: &ErasedOp,
) -> Result<Outcome, Error> {
    let e = op.elem_size();
    let total = counts
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c.checked_mul(e)?));
    if counts.len() != h.size
        || total != Some(send.len())
        || recv.len() != counts[h.me].saturating_mul(e)
    {
        return Err(bad(
            "reduce_scatter",
            format!(
                "{} bytes to send and {} to receive with {} counts of {e}-byte elements for \
                 {} ranks (send: their sum; receive: this rank's count)",
                send.len(),
                recv.len(),
                counts.len(),
                h.size
            ),
        ));
    }
    let mut full = vec![0u8; send.len()];
    let out = h.allreduce_bytes(send, &mut full, op)?;
    let at: usize = counts[..h.me].iter().map(|c| c * e).sum();
    recv.copy_from_slice(&full[at..at + recv.len()]);
    Ok(out)
}

/// The largest of every live rank's `mine` (an allreduce).
fn largest(h: &Hierarchical, mine: usize) -> Result<usize, Error> {
    let mut m = [0u64];
    h.allreduce(&[mine as u64], &mut m, &Op::max())?;
    Ok(m[0] as usize)
}

/// Gatherv as a gather of blocks padded to the largest send; the missing
/// ranks' blocks of `recv` are left as they were.
#[allow(clippy::too_many_arguments)]
pub(super) fn gatherv(
    h: &Hierarchical,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    displs: &[usize],
    elem: usize,
    root: Rank,
) -> Result<Outcome, Error> {
    let r = h.check_rank(root)?;
    let blocks = root_blocks(
        "gatherv",
        h.size,
        h.me,
        r,
        counts,
        displs,
        recv.len(),
        "send",
        send.len(),
        elem,
    )?;
    let block = largest(h, send.len())?;
    let mut padded = send.to_vec();
    padded.resize(block, 0);
    let mut all = vec![0u8; if h.me == r { h.size * block } else { 0 }];
    let out = h.gather_bytes(&padded, &mut all, root)?;
    if h.me == r {
        for (o, b) in blocks.iter().enumerate().filter(|(o, _)| counted(&out, *o)) {
            let len = b.len().min(block);
            recv[b.start..b.start + len].copy_from_slice(&all[o * block..o * block + len]);
        }
    }
    Ok(out)
}

/// Scatterv as a scatter of blocks padded to the largest one.
#[allow(clippy::too_many_arguments)]
pub(super) fn scatterv(
    h: &Hierarchical,
    send: &[u8],
    counts: &[usize],
    displs: &[usize],
    recv: &mut [u8],
    elem: usize,
    root: Rank,
) -> Result<Outcome, Error> {
    let r = h.check_rank(root)?;
    let blocks = root_blocks(
        "scatterv",
        h.size,
        h.me,
        r,
        counts,
        displs,
        send.len(),
        "receive",
        recv.len(),
        elem,
    )?;
    let mine = blocks.iter().map(|b| b.len()).max().unwrap_or(0);
    let block = largest(h, mine.max(recv.len()))?;
    let mut padded = vec![0u8; if h.me == r { h.size * block } else { 0 }];
    for (o, b) in blocks.iter().enumerate() {
        padded[o * block..o * block + b.len()].copy_from_slice(&send[b.clone()]);
    }
    let mut got = vec![0u8; block];
    let out = h.scatter_bytes(&padded, &mut got, root)?;
    if out.skipped.is_none() {
        recv.copy_from_slice(&got[..recv.len()]);
    }
    Ok(out)
}

/// Allgatherv as an allgather of blocks padded to the largest count; the
/// missing ranks' blocks of `recv` are left as they were.
pub(super) fn allgatherv(
    h: &Hierarchical,
    send: &[u8],
    recv: &mut [u8],
    counts: &[usize],
    displs: &[usize],
    elem: usize,
) -> Result<Outcome, Error> {
    let blocks = layout("allgatherv", h.size, counts, displs, recv.len(), elem)?;
    if blocks[h.me].len() != send.len() {
        return Err(bad(
            "allgatherv",
            "this rank's count differs from its send length".into(),
        ));
    }
    let block = blocks.iter().map(|b| b.len()).max().unwrap_or(0);
    let mut padded = send.to_vec();
    padded.resize(block, 0);
    let mut all = vec![0u8; h.size * block];
    let out = h.allgather_bytes(&padded, &mut all)?;
    for (o, b) in blocks.iter().enumerate().filter(|(o, _)| counted(&out, *o)) {
        recv[b.clone()].copy_from_slice(&all[o * block..o * block + b.len()]);
    }
    Ok(out)
}
