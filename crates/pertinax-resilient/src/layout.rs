//! The per-rank layouts of the collectives with counts and displacements
//! (gatherv, scatterv, allgatherv, alltoallv), given per original rank,
//! shared by the flat and the hierarchical communicators.

use std::ops::Range;

use pertinax::Rank;

use crate::Error;

/// An invalid argument of operation `what`.
pub(crate) fn bad(what: &str, msg: String) -> Error {
    pertinax::Error::InvalidArgument(format!("{what}: {msg}")).into()
}

/// Each original rank's byte range in a buffer of `len` bytes, from its
/// count and displacement in `elem`-byte elements.
///
/// # Errors
/// `InvalidArgument` unless there is one count and one displacement per
/// rank and every block lies inside the buffer.
pub(crate) fn layout(
    what: &str,
    size: usize,
    counts: &[usize],
    displs: &[usize],
    len: usize,
    elem: usize,
) -> Result<Vec<Range<usize>>, Error> {
    if counts.len() != size || displs.len() != size {
        return Err(bad(
            what,
            format!(
                "{} counts and {} displacements for {size} ranks",
                counts.len(),
                displs.len()
            ),
        ));
    }
    counts
        .iter()
        .zip(displs)
        .enumerate()
        .map(|(r, (&c, &d))| {
            let at = d.checked_mul(elem);
            let end = at
                .zip(c.checked_mul(elem))
                .and_then(|(a, n)| a.checked_add(n));
            match (at, end) {
                (Some(a), Some(e)) if e <= len => Ok(a..e),
                _ => Err(bad(
                    what,
                    format!(
                        "rank {r}'s {c} elements of {elem} bytes at element {d} do not fit \
                         {len} bytes"
                    ),
                )),
            }
        })
        .collect()
}

/// A gatherv's or scatterv's blocks at the root (`me == root`): [`layout`]
/// of its `len`-byte buffer, checked that the root's own block is
/// `own_len` bytes (its `own` buffer: "send" or "receive"); empty
/// elsewhere (only the root's counts are significant).
///
/// # Errors
/// As [`layout`], and `InvalidArgument` when the root's block and its own
/// buffer differ.
#[allow(clippy::too_many_arguments)]
pub(crate) fn root_blocks(
    what: &str,
    size: usize,
    me: usize,
    root: usize,
    counts: &[usize],
    displs: &[usize],
    len: usize,
    own: &str,
    own_len: usize,
    elem: usize,
) -> Result<Vec<Range<usize>>, Error> {
    if me != root {
        return Ok(Vec::new());
    }
    let b = layout(what, size, counts, displs, len, elem)?;
    if b[root].len() != own_len {
        return Err(bad(
            what,
            format!("the root's count differs from its {own} length"),
        ));
    }
    Ok(b)
}

/// Puts back, from `saved`, the blocks of the ranks in `missing` (an
/// attempt that failed may have written them before the repeat left those
/// ranks out).
pub(crate) fn restore(recv: &mut [u8], saved: &[u8], blocks: &[Range<usize>], missing: &[Rank]) {
    for r in missing {
        if let Some(b) = blocks.get(r.index()) {
            recv[b.clone()].copy_from_slice(&saved[b.clone()]);
        }
    }
}
