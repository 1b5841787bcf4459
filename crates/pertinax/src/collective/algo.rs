//! The algorithms, as schedule builders.
//!
//! Every builder works in bytes on buffer indices of a [`Builder`]; `elem`
//! is the element size where data is split or combined. Algorithms that
//! combine always put the operand from lower ranks on the left, so
//! non-commutative operations see rank order and every rank computes the
//! same bits in every run (each block of a result is computed once, by one
//! rank, in a fixed order, then copied).

use std::ops::Range;

use super::schedule::Builder;

/// Threshold (bytes) from which allreduce switches from recursive doubling
/// to reduce-scatter + allgather (Rabenseifner).
pub(crate) const ALLREDUCE_LARGE: usize = 32 << 10;
/// Threshold (bytes per block) from which allgather uses the ring.
pub(crate) const ALLGATHER_LARGE: usize = 8 << 10;
/// Threshold (bytes per block) from which alltoall goes pairwise.
pub(crate) const ALLTOALL_LARGE: usize = 16 << 10;

/// Offsets (in elements) of `parts` nearly equal blocks of `count`.
pub(crate) fn blocks(count: usize, parts: usize) -> Vec<usize> {
    let (q, r) = (count / parts, count % parts);
    let mut v = Vec::with_capacity(parts + 1);
    let mut at = 0;
    v.push(0);
    for i in 0..parts {
        at += q + usize::from(i < r);
        v.push(at);
    }
    v
}

fn bytes(r: Range<usize>, elem: usize) -> Range<usize> {
    r.start * elem..r.end * elem
}

/// Dissemination barrier: ⌈log2 n⌉ rounds of empty messages.
pub(crate) fn barrier(b: &mut Builder) {
    let (r, n) = (b.rank as usize, b.size as usize);
    let z = b.scratch(0);
    let mut d = 1;
    let mut k = 0;
    while d < n {
        b.round(k);
        b.send(((r + d) % n) as u32, z, 0..0);
        b.recv(((r + n - d) % n) as u32, z, 0..0);
        d <<= 1;
        k += 1;
    }
}

/// Binomial-tree broadcast of `len` bytes of `buf` from `root`.
pub(crate) fn bcast(b: &mut Builder, buf: usize, len: usize, root: u32) {
    let (n, r) = (b.size as usize, b.rank as usize);
    let v = (r + n - root as usize) % n;
    let real = |x: usize| ((x + root as usize) % n) as u32;
    // Receive from the parent: v minus its lowest set bit.
    let mut mask = 1;
    while mask < n {
        if v & mask != 0 {
            b.round(1);
            b.recv(real(v - mask), buf, 0..len);
            break;
        }
        mask <<= 1;
    }
    // Send to the children below that bit, farthest first.
    b.round(1);
    mask >>= 1;
    while mask > 0 {
        if v + mask < n {
            b.send(real(v + mask), buf, 0..len);
        }
        mask >>= 1;
    }
}

/// Binomial reduction to rank 0 in rank order, into `acc` (which holds
/// this rank's contribution on entry); `tmp` is scratch of `len` bytes.
/// Phases `base..base+⌈log2 n⌉`.
fn reduce_to_zero(b: &mut Builder, acc: usize, tmp: usize, len: usize, base: u32) {
    let (n, v) = (b.size as usize, b.rank as usize);
    let mut d = 1;
    let mut k = 0;
    while d < n {
        if v & d != 0 {
            b.round(base + k);
            b.send((v - d) as u32, acc, 0..len);
            return;
        }
        if v + d < n {
            b.round(base + k);
            b.recv((v + d) as u32, tmp, 0..len);
            b.combine(acc, 0..len, tmp, 0..len, true);
        }
        d <<= 1;
        k += 1;
    }
}

/// Reduce of `len` bytes (`count` elements of `elem` bytes) from `inp`
/// into `out` at `root` (`out` is only written at the root). Small vectors:
/// binomial tree to rank 0 in rank order, then to the root. Large ones: the
/// allreduce schedule (reduce-scatter, then allgather), whose result every
/// rank computes; the non-roots keep it in scratch.
pub(crate) fn reduce(b: &mut Builder, inp: usize, out: usize, len: usize, elem: usize, root: u32) {
    let count = len / elem.max(1);
    let n = b.size as usize;
    let p = 1usize << (usize::BITS - 1 - n.leading_zeros());
    if n > 1 && len >= ALLREDUCE_LARGE && count >= p {
        let dst = if b.rank == root { out } else { b.scratch(len) };
        allreduce(b, inp, dst, count, elem);
        return;
    }
    let r = b.rank;
    let acc = if r == 0 && root == 0 {
        out
    } else {
        b.scratch(len)
    };
    let tmp = b.scratch(len);
    b.round(0);
    if acc != inp {
        b.copy(inp, 0..len, acc, 0..len);
    }
    reduce_to_zero(b, acc, tmp, len, 1);
    if root != 0 {
        if r == 0 {
            b.round(100);
            b.send(root, acc, 0..len);
        } else if r == root {
            b.round(100);
            b.recv(0, out, 0..len);
        }
    }
}

/// Allreduce of `len` bytes (`count` elements of `elem` bytes) from `inp`
/// into `out` (`inp == out` for in place).
pub(crate) fn allreduce(b: &mut Builder, inp: usize, out: usize, count: usize, elem: usize) {
    let len = count * elem;
    let (n, r) = (b.size as usize, b.rank as usize);
    b.round(0);
    if inp != out {
        b.copy(inp, 0..len, out, 0..len);
    }
    if n == 1 {
        return;
    }
    let tmp = b.scratch(len);
    let p = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let rem = n - p;
    // Fold the first 2*rem ranks in pairs (even into odd, keeping order).
    let v: Option<usize> = if r < 2 * rem {
        b.round(1);
        if r % 2 == 0 {
            b.send((r + 1) as u32, out, 0..len);
            None
        } else {
            b.recv((r - 1) as u32, tmp, 0..len);
            b.combine(out, 0..len, tmp, 0..len, false);
            Some(r / 2)
        }
    } else {
        Some(r - rem)
    };
    let real = |v: usize| {
        if v < rem {
            (2 * v + 1) as u32
        } else {
            (v + rem) as u32
        }
    };
    if let Some(v) = v {
        let steps = p.trailing_zeros();
        if len < ALLREDUCE_LARGE || count < p {
            // Recursive doubling.
            for k in 0..steps {
                let pv = v ^ (1 << k);
                b.round(2 + k);
                b.send(real(pv), out, 0..len);
                b.recv(real(pv), tmp, 0..len);
                b.combine(out, 0..len, tmp, 0..len, pv > v);
            }
        } else {
            // Reduce-scatter by recursive halving (distance 1, 2, 4, ...),
            // then allgather by recursive doubling in reverse.
            let off = blocks(count, p);
            let span = |lo: usize, hi: usize| bytes(off[lo]..off[hi], elem);
            let (mut lo, mut hi) = (0usize, p);
            let mut history = Vec::new();
            for k in 0..steps {
                let d = 1usize << k;
                let pv = v ^ d;
                let mid = (lo + hi) / 2;
                history.push((lo, hi));
                let (keep, give) = if v & d == 0 {
                    ((lo, mid), (mid, hi))
                } else {
                    ((mid, hi), (lo, mid))
                };
                b.round(2 + k);
                b.send(real(pv), out, span(give.0, give.1));
                b.recv(real(pv), tmp, span(keep.0, keep.1));
                let kr = span(keep.0, keep.1);
                b.combine(out, kr.clone(), tmp, kr, pv > v);
                (lo, hi) = keep;
            }
            for k in (0..steps).rev() {
                let pv = v ^ (1 << k);
                let (plo, phi) = history[k as usize];
                let other = if lo == plo { (hi, phi) } else { (plo, lo) };
                b.round(40 + k);
                b.send(real(pv), out, span(lo, hi));
                b.recv(real(pv), out, span(other.0, other.1));
                (lo, hi) = (plo, phi);
            }
        }
    }
    if r < 2 * rem {
        b.round(99);
        if r % 2 == 1 {
            b.send((r - 1) as u32, out, 0..len);
        } else {
            b.recv((r + 1) as u32, out, 0..len);
        }
    }
}

/// Gathers variable blocks: rank `i` contributes `inp[0..lens[i]]`, which
/// lands at `out[offs[i]..offs[i] + lens[i]]` on the root. Every non-root
/// sends exactly one message, empty ones included, so that a root that
/// rejects its arguments can still drain what comes.
pub(crate) fn gatherv(
    b: &mut Builder,
    inp: usize,
    out: usize,
    lens: &[usize],
    offs: &[usize],
    root: u32,
) {
    let r = b.rank as usize;
    b.round(1);
    if r == root as usize {
        for (i, (&l, &o)) in lens.iter().zip(offs).enumerate() {
            if i == r {
                if inp != out || o != 0 {
                    b.copy(inp, 0..l, out, o..o + l);
                }
            } else {
                b.recv(i as u32, out, o..o + l);
            }
        }
    } else {
        b.send(root, inp, 0..lens[r]);
    }
}

/// Scatters variable blocks: `inp[offs[i]..offs[i] + lens[i]]` on the root
/// goes to `out[0..lens[i]]` on rank `i`. Every non-root receives exactly
/// one message, empty ones included.
pub(crate) fn scatterv(
    b: &mut Builder,
    inp: usize,
    out: usize,
    lens: &[usize],
    offs: &[usize],
    root: u32,
    phase: u32,
) {
    let r = b.rank as usize;
    b.round(phase);
    if r == root as usize {
        for (i, (&l, &o)) in lens.iter().zip(offs).enumerate() {
            if i == r {
                if inp != out || o != 0 {
                    b.copy(inp, o..o + l, out, 0..l);
                }
            } else {
                b.send(i as u32, inp, o..o + l);
            }
        }
    } else {
        b.recv(root, out, 0..lens[r]);
    }
}

/// Allgather of variable blocks into `out` (block `i` at `offs[i]`, of
/// `lens[i]` bytes). This rank's block comes from `inp[0..lens[me]]` (or is
/// already in place when `inp == out`).
pub(crate) fn allgatherv(b: &mut Builder, inp: usize, out: usize, lens: &[usize], offs: &[usize]) {
    let (n, r) = (b.size as usize, b.rank as usize);
    b.round(0);
    if inp != out {
        b.copy(inp, 0..lens[r], out, offs[r]..offs[r] + lens[r]);
    }
    // Recursive doubling sends runs of consecutive blocks: only for equal
    // blocks stored contiguously in rank order.
    let contiguous = (0..n).all(|i| lens[i] == lens[0] && offs[i] == i * lens[0]);
    if n.is_power_of_two() && contiguous && lens[0] < ALLGATHER_LARGE {
        // Recursive doubling: exchange ever larger aligned groups of blocks.
        let mut d = 1;
        let mut k = 0;
        while d < n {
            let pr = r ^ d;
            let mine = (r / d) * d;
            let theirs = (pr / d) * d;
            b.round(1 + k);
            b.send(
                pr as u32,
                out,
                offs[mine]..offs[mine + d - 1] + lens[mine + d - 1],
            );
            b.recv(
                pr as u32,
                out,
                offs[theirs]..offs[theirs + d - 1] + lens[theirs + d - 1],
            );
            d <<= 1;
            k += 1;
        }
        return;
    }
    // Ring: in step k, pass on the block received in step k - 1.
    let right = ((r + 1) % n) as u32;
    let left = ((r + n - 1) % n) as u32;
    for k in 0..n - 1 {
        let sb = (r + n - k) % n;
        let rb = (r + n - k - 1) % n;
        b.round(1 + k as u32);
        if lens[sb] > 0 {
            b.send(right, out, offs[sb]..offs[sb] + lens[sb]);
        }
        if lens[rb] > 0 {
            b.recv(left, out, offs[rb]..offs[rb] + lens[rb]);
        }
    }
}

/// All-to-all of variable blocks: `inp[soffs[i]..][..slens[i]]` goes to rank
/// `i`, which stores it at `out[roffs[me]..][..rlens[me]]`.
pub(crate) fn alltoallv(
    b: &mut Builder,
    inp: usize,
    out: usize,
    sl: &[usize],
    so: &[usize],
    rl: &[usize],
    ro: &[usize],
) {
    let (n, r) = (b.size as usize, b.rank as usize);
    b.round(0);
    b.copy(inp, so[r]..so[r] + sl[r], out, ro[r]..ro[r] + rl[r]);
    // Small blocks: every message in one round. Large: pairwise exchange,
    // one partner per round. Ranks may choose differently (the choice
    // depends on their own counts), so a message's tag depends only on the
    // partner's distance `k`, never on the choice.
    let pairwise = sl.iter().chain(rl).copied().max().unwrap_or(0) >= ALLTOALL_LARGE;
    if !pairwise {
        b.round(1);
    }
    for k in 1..n {
        let to = (r + k) % n;
        let from = (r + n - k) % n;
        if pairwise {
            b.round(k as u32);
        }
        if sl[to] > 0 {
            b.send_phase(to as u32, inp, so[to]..so[to] + sl[to], k as u32);
        }
        if rl[from] > 0 {
            b.recv_phase(from as u32, out, ro[from]..ro[from] + rl[from], k as u32);
        }
    }
}

/// Inclusive (`exclusive == false`) or exclusive prefix reduction of `len`
/// bytes (Hillis–Steele: ⌈log2 n⌉ rounds). For the exclusive scan, rank 0's
/// `out` is left untouched.
pub(crate) fn scan(b: &mut Builder, inp: usize, out: usize, len: usize, exclusive: bool) {
    let (n, r) = (b.size as usize, b.rank as usize);
    // `part`: reduction of the ranks [r - 2^k + 1, r] seen so far.
    let part = b.scratch(len);
    let tmp = b.scratch(len);
    b.round(0);
    b.copy(inp, 0..len, part, 0..len);
    if !exclusive && inp != out {
        b.copy(inp, 0..len, out, 0..len);
    }
    let mut d = 1;
    let mut k = 0;
    let mut have_out = !exclusive;
    while d < n {
        b.round(1 + k);
        if r + d < n {
            b.send((r + d) as u32, part, 0..len);
        }
        if r >= d {
            b.recv((r - d) as u32, tmp, 0..len);
            if have_out {
                b.combine(out, 0..len, tmp, 0..len, false);
            } else {
                b.copy(tmp, 0..len, out, 0..len);
                have_out = true;
            }
            b.combine(part, 0..len, tmp, 0..len, false);
        }
        d <<= 1;
        k += 1;
    }
}

/// Reduce-scatter: the reduction of every rank's `inp` (`total` bytes) is
/// cut into blocks (`lens`, `offs`) and block `i` lands in `out` on rank
/// `i`. Reduces to rank 0 in rank order, then scatters.
pub(crate) fn reduce_scatter(
    b: &mut Builder,
    inp: usize,
    out: usize,
    total: usize,
    lens: &[usize],
    offs: &[usize],
) {
    let acc = b.scratch(total);
    let tmp = b.scratch(total);
    b.round(0);
    b.copy(inp, 0..total, acc, 0..total);
    reduce_to_zero(b, acc, tmp, total, 1);
    scatterv(b, acc, out, lens, offs, 0, 100);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_everything() {
        assert_eq!(blocks(10, 4), vec![0, 3, 6, 8, 10]);
        assert_eq!(blocks(2, 4), vec![0, 1, 2, 2, 2]);
        assert_eq!(blocks(0, 3), vec![0, 0, 0, 0]);
    }
}
