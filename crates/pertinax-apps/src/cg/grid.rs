//! The process grid of NPB's MPI CG and each rank's share of the matrix
//! and vectors (`setup_proc_info` and `setup_submatrix_info` of `cg.f`).
//!
//! The `nprocs` ranks (a power of two) form `nprows x npcols` with
//! `npcols = nprows` or `2 * nprows`; rank `me` is at row `me / npcols`,
//! column `me % npcols`. It holds the matrix block of its row block (rows)
//! and column block (columns), and the vectors of its column block.
//! Indices here are 0-based: `rows` and `cols` are global, the `Range`s
//! of [`ReduceStep`] and `send` are local to the row block.

use std::ops::Range;

use super::CgError;

/// The grid of `nprocs` ranks: `(nprows, npcols)`.
///
/// # Errors
/// [`CgError::NotPowerOfTwo`] unless `nprocs` is a power of two.
pub fn grid(nprocs: usize) -> Result<(usize, usize), CgError> {
    if !nprocs.is_power_of_two() {
        return Err(CgError::NotPowerOfTwo(nprocs));
    }
    let log2 = nprocs.trailing_zeros();
    let nprows = 1 << (log2 / 2);
    Ok((nprows, nprocs / nprows))
}

/// One step of the row reduction (the sum of the partial matrix-vector
/// products across a grid row, and the sum of a dot product's partial
/// sums): exchange with `partner`, at NPB's index `i` (`reduce_*(i)`), which
/// is also the message tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReduceStep {
    /// The exchange partner (`reduce_exch_proc(i)`), in the same grid row.
    pub partner: usize,
    /// NPB's 1-based step index, the tag of the step's messages.
    pub tag: i32,
    /// The local rows sent (`reduce_send_starts(i)`, `reduce_send_lengths(i)`).
    pub send: Range<usize>,
    /// The local rows received and added (`reduce_recv_starts(i)`,
    /// `reduce_recv_lengths(i)`).
    pub recv: Range<usize>,
}

/// A rank's place in the grid and its share of the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// This rank.
    pub rank: usize,
    /// The number of ranks.
    pub nprocs: usize,
    /// Rows of the grid.
    pub nprows: usize,
    /// Columns of the grid (`nprows` or `2 * nprows`).
    pub npcols: usize,
    /// This rank's grid row.
    pub proc_row: usize,
    /// This rank's grid column.
    pub proc_col: usize,
    /// The global rows of the matrix block (`firstrow - 1 .. lastrow`).
    pub rows: Range<usize>,
    /// The global columns of the matrix block and of the local vectors
    /// (`firstcol - 1 .. lastcol`).
    pub cols: Range<usize>,
    /// The local rows whose reduced sum this rank sends to its transpose
    /// partner (`send_start`, `send_len`).
    pub send: Range<usize>,
    /// The transpose partner (`exch_proc`; this rank itself on the
    /// diagonal, and on every rank of a 1 x 2 grid).
    pub exch_proc: usize,
    /// How many values the transpose partner sends here
    /// (`exch_recv_length`: the number of local columns).
    pub exch_recv_len: usize,
    /// The reduction schedule, NPB's `i = 1 ..= l2npcols` in order (the
    /// matrix-vector reduction runs it backwards).
    pub reduce: Vec<ReduceStep>,
}

impl Layout {
    /// Rank `rank`'s layout in a job of `nprocs` for a matrix of order `na`.
    ///
    /// # Errors
    /// [`CgError::NotPowerOfTwo`], [`CgError::InvalidRank`], and
    /// [`CgError::TooManyRanks`] when a rank would get fewer than one
    /// column.
    pub fn new(na: usize, rank: usize, nprocs: usize) -> Result<Layout, CgError> {
        let (nprows, npcols) = grid(nprocs)?;
        if rank >= nprocs {
            return Err(CgError::InvalidRank { rank, nprocs });
        }
        if na < 2 * npcols {
            return Err(CgError::TooManyRanks { na, nprocs });
        }
        let me = rank;
        let proc_row = me / npcols;
        let proc_col = me % npcols;
        let square = npcols == nprows;

        // 1-based, inclusive, as in cg.f.
        let (firstrow, lastrow, firstcol, lastcol);
        if na.is_multiple_of(npcols) {
            let col_size = na / npcols;
            firstcol = proc_col * col_size + 1;
            lastcol = firstcol - 1 + col_size;
            let row_size = na / nprows;
            firstrow = proc_row * row_size + 1;
            lastrow = firstrow - 1 + row_size;
        } else {
            (firstrow, lastrow) = block(na, nprows, proc_row);
            if square {
                (firstcol, lastcol) = block(na, npcols, proc_col);
            } else {
                // The block of the column pair, split in two halves.
                let (first, last) = block(na, npcols / 2, proc_col / 2);
                let col_size = last + 1 - first;
                if me.is_multiple_of(2) {
                    firstcol = first;
                    lastcol = first - 1 + (col_size - 1) / 2 + 1;
                } else {
                    firstcol = first + (col_size - 1) / 2 + 1;
                    lastcol = firstcol - 1 + col_size / 2;
                }
            }
        }
        let nrows = lastrow + 1 - firstrow;

        let (send_start, send_len) = if square {
            (1, nrows)
        } else if me.is_multiple_of(2) {
            (1, nrows.div_ceil(2))
        } else {
            (nrows.div_ceil(2) + 1, nrows / 2)
        };

        let exch_proc = if square {
            (me % nprows) * nprows + me / nprows
        } else {
            2 * ((me / 2 % nprows) * nprows + me / 2 / nprows) + me % 2
        };

        let l2npcols = npcols.trailing_zeros() as usize;
        let mut reduce = Vec::with_capacity(l2npcols);
        let mut div_factor = npcols;
        for i in 1..=l2npcols {
            let j = (proc_col + div_factor / 2) % div_factor + proc_col / div_factor * div_factor;
            let partner = proc_row * npcols + j;
            div_factor /= 2;
            let (s_start, s_len, r_len) = if square {
                (send_start, send_len, nrows)
            } else if i == l2npcols {
                let start = if me.is_multiple_of(2) {
                    send_start + send_len
                } else {
                    1
                };
                (start, nrows - send_len, send_len)
            } else {
                (send_start, send_len, send_len)
            };
            reduce.push(ReduceStep {
                partner,
                tag: i as i32,
                send: s_start - 1..s_start - 1 + s_len,
                recv: send_start - 1..send_start - 1 + r_len,
            });
        }

        Ok(Layout {
            rank,
            nprocs,
            nprows,
            npcols,
            proc_row,
            proc_col,
            rows: firstrow - 1..lastrow,
            cols: firstcol - 1..lastcol,
            send: send_start - 1..send_start - 1 + send_len,
            exch_proc,
            exch_recv_len: lastcol + 1 - firstcol,
            reduce,
        })
    }

    /// The number of local rows.
    pub fn nrows(&self) -> usize {
        self.rows.len()
    }

    /// The number of local columns (the length of the local vectors).
    pub fn ncols(&self) -> usize {
        self.cols.len()
    }

    /// The length of the scratch vectors that hold rows as well as columns
    /// (`w` and `q` of `conj_grad`).
    pub fn work_len(&self) -> usize {
        self.nrows().max(self.ncols())
    }
}

/// Block `k` of `n` items split into `parts` blocks, the first
/// `n % parts` one larger: 1-based `(first, last)`, as cg.f computes it.
fn block(n: usize, parts: usize, k: usize) -> (usize, usize) {
    let rem = n - n / parts * parts;
    let (size, first) = if k < rem {
        let size = n / parts + 1;
        (size, k * size + 1)
    } else {
        let size = n / parts;
        (size, rem * (size + 1) + (k - rem) * size + 1)
    };
    (first, first - 1 + size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids() {
        assert_eq!(grid(1), Ok((1, 1)));
        assert_eq!(grid(2), Ok((1, 2)));
        assert_eq!(grid(4), Ok((2, 2)));
        assert_eq!(grid(8), Ok((2, 4)));
        assert_eq!(grid(16), Ok((4, 4)));
        assert_eq!(grid(32), Ok((4, 8)));
        assert_eq!(grid(6), Err(CgError::NotPowerOfTwo(6)));
        assert_eq!(grid(0), Err(CgError::NotPowerOfTwo(0)));
        assert_eq!(
            Layout::new(1400, 4, 4),
            Err(CgError::InvalidRank { rank: 4, nprocs: 4 })
        );
        assert_eq!(
            Layout::new(7, 0, 8),
            Err(CgError::TooManyRanks { na: 7, nprocs: 8 })
        );
    }

    /// Every message has the length its receiver expects, the partners
    /// are mutual, the column blocks of a grid row tile the matrix, the
    /// row blocks of a grid column too, and the transpose delivers the
    /// rows a rank needs as its columns. Checked for even and uneven
    /// splits (1400 = 2^3 * 5^2 * 7, 1401 and 1403 odd).
    fn check(na: usize, nprocs: usize) {
        let all: Vec<Layout> = (0..nprocs)
            .map(|r| Layout::new(na, r, nprocs))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{na} on {nprocs}: {e}"));
        for l in &all {
            let ctx = format!("na {na} nprocs {nprocs} rank {}", l.rank);
            let t = &all[l.exch_proc];
            assert_eq!(t.exch_proc, l.rank, "{ctx}: transpose is mutual");
            assert_eq!(t.send.len(), l.exch_recv_len, "{ctx}: transpose length");
            let got = t.rows.start + t.send.start..t.rows.start + t.send.end;
            assert_eq!(got, l.cols, "{ctx}: transpose delivers my columns");
            assert_eq!(l.reduce.len(), l.npcols.trailing_zeros() as usize);
            for (i, s) in l.reduce.iter().enumerate() {
                let p = &all[s.partner];
                assert_eq!(p.proc_row, l.proc_row, "{ctx}: same grid row");
                assert_eq!(p.reduce[i].partner, l.rank, "{ctx}: step {i} mutual");
                assert_eq!(p.reduce[i].send.len(), s.recv.len(), "{ctx}: step {i}");
                assert_eq!(p.reduce[i].send, s.recv, "{ctx}: step {i} same rows");
                assert_eq!(p.rows, l.rows, "{ctx}: same row block");
                assert!(s.recv.start == l.send.start && s.recv.end <= l.work_len());
            }
            assert!(l.nrows() > 0 && l.ncols() > 0, "{ctx}");
        }
        for row in 0..all[0].nprows {
            let mut covered = 0;
            for l in all.iter().filter(|l| l.proc_row == row) {
                assert_eq!(l.cols.start, covered, "na {na} nprocs {nprocs}");
                covered = l.cols.end;
            }
            assert_eq!(covered, na);
        }
        for col in 0..all[0].npcols {
            let mut covered = 0;
            for l in all.iter().filter(|l| l.proc_col == col) {
                assert_eq!(l.rows.start, covered, "na {na} nprocs {nprocs}");
                covered = l.rows.end;
            }
            assert_eq!(covered, na);
        }
    }

    #[test]
    fn layouts_fit_together() {
        for na in [1400, 1401, 1403, 7000, 14000] {
            for nprocs in [1, 2, 4, 8, 16, 32, 64] {
                check(na, nprocs);
            }
        }
    }
}
