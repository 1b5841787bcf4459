//! The block split shared by both applications.

use std::ops::Range;

/// Items `[start, end)` of `total` that belong to `rank` out of `n` ranks.
///
/// Contiguous blocks in rank order; the first `total % n` ranks take one item
/// more. This is the split of NPB's MPI EP (`np`, `no_large_nodes`,
/// `k_offset` in `ep.f`). Ranks beyond `total` get an empty range.
///
/// # Panics
///
/// If `n == 0` or `rank >= n`.
pub(crate) fn block(total: u64, rank: usize, n: usize) -> Range<u64> {
    assert!(n > 0, "cannot split work among 0 ranks");
    assert!(rank < n, "rank {rank} out of range for {n} ranks");
    let (rank, n) = (rank as u64, n as u64);
    let base = total / n;
    let large = total % n;
    let start = rank * base + rank.min(large);
    let len = base + u64::from(rank < large);
    start..start + len
}

#[cfg(test)]
mod tests {
    use super::block;

    /// The blocks of every rank tile `0..total` in order, differ in length by
    /// at most one, and the longer ones come first.
    fn check_tiling(total: u64, n: usize) {
        let blocks: Vec<_> = (0..n).map(|r| block(total, r, n)).collect();
        let mut next = 0;
        for b in &blocks {
            assert_eq!(b.start, next, "total {total}, n {n}: {blocks:?}");
            next = b.end;
        }
        assert_eq!(next, total);
        let lens: Vec<u64> = blocks.iter().map(|b| b.end - b.start).collect();
        assert!(lens.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
    }

    #[test]
    fn blocks_tile_the_work() {
        for total in [0, 1, 5, 16, 17, 256, 1000, 1 << 20] {
            for n in 1..=20 {
                check_tiling(total, n);
            }
        }
    }

    #[test]
    fn remainder_goes_to_first_ranks() {
        assert_eq!(block(10, 0, 4), 0..3);
        assert_eq!(block(10, 1, 4), 3..6);
        assert_eq!(block(10, 2, 4), 6..8);
        assert_eq!(block(10, 3, 4), 8..10);
        assert_eq!(block(2, 3, 4), 2..2);
    }
}
