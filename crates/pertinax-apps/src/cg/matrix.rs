//! The matrix of CG, generated block by block as NPB's `makea` does:
//! every rank runs the whole random sequence and keeps the elements of
//! its block.
//!
//! The matrix is `sum_i size_i * v_i v_i^T + (rcond - shift) I`: `na`
//! random sparse vectors `v_i` (`sprnvc`: `nonzer` distinct positions and
//! values from NPB's generator, then element `i` set to 0.5 by `vecset`),
//! with `size_i` decreasing geometrically from 1 to `rcond`. The
//! elements are summed into rows in the reference's order (`sparse`), so
//! each row holds the same values in the same order as NPB's, and the
//! kernels add them up in that order.

use super::{Class, Layout};
use crate::ep::randlc;

/// The generator's seed (`tran`).
pub const TRAN: f64 = 314_159_265.0;

/// The generator's multiplier, 5^13 (`amult`).
pub const AMULT: f64 = 1_220_703_125.0;

/// A rank's block of the matrix in compressed sparse rows, with local
/// column indices (0 is the block's first column).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Csr {
    /// Row `j`'s elements are at `rowstr[j] .. rowstr[j + 1]`.
    pub rowstr: Vec<usize>,
    /// The local column of each element.
    pub colidx: Vec<u32>,
    /// The value of each element.
    pub a: Vec<f64>,
}

impl Csr {
    /// The number of rows.
    pub fn nrows(&self) -> usize {
        self.rowstr.len().saturating_sub(1)
    }

    /// The number of stored elements.
    pub fn nnz(&self) -> usize {
        self.a.len()
    }

    /// `w[j] = sum_k a[k] * p[colidx[k]]` over row `j`'s elements in
    /// order, for every row (the partition's matrix-vector product of
    /// `conj_grad`). `w` may be longer than the number of rows (the rest
    /// is left as it is).
    ///
    /// # Panics
    /// If `w` is shorter than the number of rows or `p` shorter than the
    /// block's columns.
    pub fn matvec(&self, p: &[f64], w: &mut [f64]) {
        for (j, out) in w.iter_mut().take(self.nrows()).enumerate() {
            let r = self.rowstr[j]..self.rowstr[j + 1];
            *out = self.a[r.clone()]
                .iter()
                .zip(&self.colidx[r])
                .fold(0.0, |sum, (a, &c)| sum + a * p[c as usize]);
        }
    }
}

/// The block of rank `layout.rank` of class `class`'s matrix (`makea`,
/// then the column indices made local as the main program does).
pub fn makea(class: Class, layout: &Layout) -> Csr {
    let n = class.na();
    let nonzer = class.nonzer();
    let rcond = class.rcond();
    let (rows, cols) = (&layout.rows, &layout.cols);
    // 1-based global index `g` in a 0-based range.
    let has = |r: &std::ops::Range<usize>, g: usize| r.contains(&(g - 1));

    // The main program draws one number (its `zeta = randlc(tran, amult)`)
    // before makea.
    let mut tran = TRAN;
    randlc(&mut tran, AMULT);

    let ratio = rcond.powf(1.0 / n as f64);
    let mut size = 1.0;
    let mut nn1 = 1;
    while nn1 < n {
        nn1 *= 2;
    }
    let mut mark = vec![false; n + 1];
    let mut v = Vec::with_capacity(nonzer + 1);
    let mut iv = Vec::with_capacity(nonzer + 1);
    // (local row, global 1-based column, value), in generation order.
    let mut triples: Vec<(u32, u32, f64)> = Vec::new();
    for iouter in 1..=n {
        sprnvc(n, nonzer, nn1, &mut tran, &mut v, &mut iv, &mut mark);
        vecset(&mut v, &mut iv, iouter, 0.5);
        for (&jcol, &vj) in iv.iter().zip(&v) {
            if has(cols, jcol) {
                let scale = size * vj;
                for (&irow, &vi) in iv.iter().zip(&v) {
                    if has(rows, irow) {
                        triples.push(((irow - 1 - rows.start) as u32, jcol as u32, vi * scale));
                    }
                }
            }
        }
        size *= ratio;
    }
    // rcond - shift on the diagonal bounds the smallest eigenvalue.
    for i in rows.clone() {
        if cols.contains(&i) {
            triples.push(((i - rows.start) as u32, i as u32 + 1, rcond - class.shift()));
        }
    }

    let mut m = sparse(n, rows.len(), &triples);
    let first = cols.start as u32 + 1;
    for c in &mut m.colidx {
        *c -= first;
    }
    m
}

/// A random sparse vector of `nz` distinct positions in `1..=n` and their
/// values (`sprnvc`): `v` and `iv` are overwritten. Positions are drawn
/// in `1..=nn1` (the power of two at or above `n`) and redrawn when above
/// `n`; `mark` is all false on entry and on return.
fn sprnvc(
    n: usize,
    nz: usize,
    nn1: usize,
    tran: &mut f64,
    v: &mut Vec<f64>,
    iv: &mut Vec<usize>,
    mark: &mut [bool],
) {
    v.clear();
    iv.clear();
    while v.len() < nz {
        let vecelt = randlc(tran, AMULT);
        let vecloc = randlc(tran, AMULT);
        // icnvrt: the integer part of nn1 * vecloc, in doubles.
        let i = (nn1 as f64 * vecloc) as usize + 1;
        if i > n || mark[i] {
            continue;
        }
        mark[i] = true;
        v.push(vecelt);
        iv.push(i);
    }
    for &i in iv.iter() {
        mark[i] = false;
    }
}

/// Sets position `i` of the sparse vector `(v, iv)` to `val`, appending it
/// if absent (`vecset`).
fn vecset(v: &mut Vec<f64>, iv: &mut Vec<usize>, i: usize, val: f64) {
    let mut set = false;
    for (x, &k) in v.iter_mut().zip(iv.iter()) {
        if k == i {
            *x = val;
            set = true;
        }
    }
    if !set {
        v.push(val);
        iv.push(i);
    }
}

/// The rows of a matrix from its triples with duplicates (`sparse`): the
/// triples are sorted by row (stable), then each row's duplicates are
/// added up in triple order; a row's columns come in the order of their
/// first nonzero partial sum, and zero sums are dropped. Columns stay
/// global and 1-based here.
fn sparse(n: usize, nrows: usize, triples: &[(u32, u32, f64)]) -> Csr {
    let mut start = vec![0usize; nrows + 1];
    for &(row, _, _) in triples {
        start[row as usize + 1] += 1;
    }
    for j in 1..=nrows {
        start[j] += start[j - 1];
    }
    let mut next = start.clone();
    let mut col = vec![0u32; triples.len()];
    let mut val = vec![0.0f64; triples.len()];
    for &(row, c, x) in triples {
        let k = &mut next[row as usize];
        col[*k] = c;
        val[*k] = x;
        *k += 1;
    }

    let mut x = vec![0.0f64; n + 1];
    let mut mark = vec![false; n + 1];
    let mut nzloc = Vec::new();
    let mut out = Csr {
        rowstr: Vec::with_capacity(nrows + 1),
        colidx: Vec::new(),
        a: Vec::new(),
    };
    out.rowstr.push(0);
    for j in 0..nrows {
        nzloc.clear();
        for k in start[j]..start[j + 1] {
            let i = col[k] as usize;
            x[i] += val[k];
            if !mark[i] && x[i] != 0.0 {
                mark[i] = true;
                nzloc.push(i);
            }
        }
        for &i in &nzloc {
            mark[i] = false;
            let xi = x[i];
            x[i] = 0.0;
            if xi != 0.0 {
                out.a.push(xi);
                out.colidx.push(i as u32);
            }
        }
        out.rowstr.push(out.a.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vecset_replaces_or_appends() {
        let (mut v, mut iv) = (vec![1.0, 2.0], vec![3, 5]);
        vecset(&mut v, &mut iv, 5, 0.5);
        assert_eq!((&v[..], &iv[..]), (&[1.0, 0.5][..], &[3, 5][..]));
        vecset(&mut v, &mut iv, 4, 0.5);
        assert_eq!((&v[..], &iv[..]), (&[1.0, 0.5, 0.5][..], &[3, 5, 4][..]));
    }

    #[test]
    fn sparse_adds_duplicates_in_order_and_drops_zeros() {
        // Row 0: col 2 (1 + 2), col 1 (5 - 5: dropped); row 1: col 3.
        let t = [
            (0, 2, 1.0),
            (1, 3, 4.0),
            (0, 1, 5.0),
            (0, 2, 2.0),
            (0, 1, -5.0),
        ];
        let m = sparse(3, 2, &t);
        assert_eq!(m.rowstr, vec![0, 1, 2]);
        assert_eq!(m.colidx, vec![2, 3]);
        assert_eq!(m.a, vec![3.0, 4.0]);
    }

    /// The blocks of a 2 x 4 grid hold exactly the elements of the whole
    /// matrix, in the same order within each row.
    #[test]
    fn blocks_partition_the_matrix() {
        let class = Class::S;
        let whole = makea(class, &Layout::new(class.na(), 0, 1).expect("layout"));
        let nprocs = 8;
        let mut nnz = 0;
        for r in 0..nprocs {
            let l = Layout::new(class.na(), r, nprocs).expect("layout");
            let b = makea(class, &l);
            nnz += b.nnz();
            for j in 0..b.nrows() {
                let g = l.rows.start + j;
                let mine: Vec<(usize, f64)> = (b.rowstr[j]..b.rowstr[j + 1])
                    .map(|k| (b.colidx[k] as usize + l.cols.start, b.a[k]))
                    .collect();
                let theirs: Vec<(usize, f64)> = (whole.rowstr[g]..whole.rowstr[g + 1])
                    .map(|k| (whole.colidx[k] as usize, whole.a[k]))
                    .filter(|(c, _)| l.cols.contains(c))
                    .collect();
                assert_eq!(mine, theirs, "rank {r} row {g}");
            }
        }
        assert_eq!(nnz, whole.nnz());
    }
}
