//! NPB CG's distributed kernel over any communicator: one outer iteration
//! ([`iterate`]) with the MPI version's exchanges, point to point.
//!
//! Per inner step of `conj_grad` (25 per outer iteration), a rank
//!
//! 1. multiplies its matrix block by its part of `p`, then sums the
//!    partial products of its grid row by recursive halving: at each of
//!    the `log2(npcols)` reduce steps, last to first, it swaps a piece of
//!    the vector with that step's partner and adds what it got
//!    ([`ReduceStep`](pertinax_apps::cg::ReduceStep));
//! 2. swaps the sums with its transpose partner (`exch_proc`, itself on
//!    the diagonal), which gives it `q = A p` on its own columns;
//! 3. sums the dot products `p.q` and `r.r` over the same reduce
//!    partners, first to last (a butterfly: every rank of the grid row
//!    gets bitwise the same sum), in place of an allreduce.
//!
//! After the 25 steps, the residual `||x - A z||` (one more product and
//! sum), then `x.z` and `z.z` (one more sum) give zeta and the next `x`.
//! Each exchange is an `irecv` and an `isend` to the same partner inside
//! one [`pertinax::scope`], as `cg.f` pairs `mpi_irecv` with `mpi_send`;
//! the tags are `cg.f`'s (a reduce step's index, 1 for the transpose).
//! No collective is used.
//!
//! A failure is returned as the communicator reports it (`?` out of the
//! iteration, its scratch vectors dropped); what to do about it (revoke,
//! roll back) is the caller's.
//!
//! # Fault points
//!
//! `cg.iter` at the start of each outer iteration, `cg.step` at the start
//! of each inner step (25 per iteration).

use pertinax::{Communicator, CommunicatorExt, Error};
use pertinax_apps::cg::{self, CgError, Class, Csr, Layout, CGITMAX};
use serde::{Deserialize, Serialize};

/// What a rank needs to run CG: its place in the grid and its block of
/// the matrix. Built once, read by every iteration.
#[derive(Clone, Debug)]
pub struct Problem {
    /// The class.
    pub class: Class,
    /// The rank's place in the grid and its partners.
    pub layout: Layout,
    /// The rank's block of the matrix, local column indices.
    pub matrix: Csr,
}

impl Problem {
    /// Rank `rank`'s share of class `class` on `nprocs` ranks (generates
    /// its matrix block: the whole random sequence, about 0.1 s for class
    /// A).
    ///
    /// # Errors
    /// The layout's errors: `nprocs` not a power of two, `rank` outside.
    pub fn new(class: Class, rank: usize, nprocs: usize) -> Result<Problem, CgError> {
        let layout = Layout::new(class.na(), rank, nprocs)?;
        let matrix = cg::makea(class, &layout);
        Ok(Problem {
            class,
            layout,
            matrix,
        })
    }
}

/// What one outer iteration hands the next: the rank's part of `x`, and
/// what the iteration found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// The iterate, on the rank's columns.
    pub x: Vec<f64>,
    /// The eigenvalue estimate of the last iteration (0 before the first).
    pub zeta: f64,
    /// The last iteration's residual norm `||x - A z||` (0 before the
    /// first).
    pub rnorm: f64,
}

impl State {
    /// `x = (1, ..., 1)`, as NPB starts (its untimed warm-up iteration,
    /// whose result it discards, is not run).
    pub fn initial(p: &Problem) -> State {
        State {
            x: vec![1.0; p.layout.ncols()],
            zeta: 0.0,
            rnorm: 0.0,
        }
    }
}

/// The scratch vectors of `conj_grad` (NPB's names). `z` and `p` hold the
/// rank's columns; `q`, `r` and `w` also hold pieces of its rows.
struct Vectors {
    z: Vec<f64>,
    p: Vec<f64>,
    q: Vec<f64>,
    r: Vec<f64>,
    w: Vec<f64>,
}

/// One outer iteration of NPB CG: `conj_grad` (25 inner steps and the
/// residual), then `x.z` and `z.z` summed over the grid row, zeta and the
/// new `x`. `it` is the iteration's number (unused by the arithmetic).
/// The scratch vectors are made here and dropped at the end: nothing but
/// `st` carries over to the next iteration.
///
/// Every rank of the job must call it with the same `it`, as each of its
/// exchanges has a partner waiting.
///
/// # Errors
/// The first error of an exchange (a failed partner, a revoked
/// communicator); `st` is then unchanged.
pub fn iterate<C: Communicator<Error = Error> + ?Sized>(
    c: &C,
    p: &Problem,
    st: &mut State,
    it: u64,
) -> Result<(), Error> {
    let _ = it;
    pertinax::fault_point("cg.iter");
    let l = &p.layout;
    let (n, work) = (l.ncols(), l.work_len());
    let mut v = Vectors {
        z: vec![0.0; n],
        p: vec![0.0; n],
        q: vec![0.0; work],
        r: vec![0.0; work],
        w: vec![0.0; work],
    };
    let rnorm = conj_grad(c, p, &st.x, &mut v)?;
    let [xz, zz] = row_sum(c, l, [cg::dot(&st.x, &v.z), cg::dot(&v.z, &v.z)])?;
    st.zeta = cg::normalize(p.class, xz, zz, &v.z, &mut st.x);
    st.rnorm = rnorm;
    Ok(())
}

/// `conj_grad`: 25 CG steps on `A z = x` from `z = 0`, leaving `z` in
/// `v.z`; returns `||x - A z||`.
fn conj_grad<C: Communicator<Error = Error> + ?Sized>(
    c: &C,
    pb: &Problem,
    x: &[f64],
    v: &mut Vectors,
) -> Result<f64, Error> {
    let l = &pb.layout;
    let n = l.ncols();
    let Vectors { z, p, q, r, w } = v;
    r[..n].copy_from_slice(x);
    p.copy_from_slice(&r[..n]);
    let [mut rho] = row_sum(c, l, [cg::dot(&r[..n], &r[..n])])?;
    for _ in 0..CGITMAX {
        pertinax::fault_point("cg.step");
        product(c, pb, p, w, q)?;
        let [d] = row_sum(c, l, [cg::dot(p, &q[..n])])?;
        let alpha = rho / d;
        let rho0 = rho;
        cg::step_zr(alpha, p, &q[..n], z, &mut r[..n]);
        [rho] = row_sum(c, l, [cg::dot(&r[..n], &r[..n])])?;
        cg::step_p(rho / rho0, &r[..n], p);
    }
    // r = A z, then ||x - r||.
    product(c, pb, z, w, r)?;
    let [d] = row_sum(c, l, [cg::dist2(x, &r[..n])])?;
    Ok(d.sqrt())
}

/// `out[..ncols] = A v` on this rank's columns: the block's product into
/// `w`, summed across the grid row (reduce steps last to first, `out` as
/// the receive buffer), then swapped with the transpose partner.
fn product<C: Communicator<Error = Error> + ?Sized>(
    c: &C,
    pb: &Problem,
    v: &[f64],
    w: &mut [f64],
    out: &mut [f64],
) -> Result<(), Error> {
    let l = &pb.layout;
    pb.matrix.matvec(v, w);
    for s in l.reduce.iter().rev() {
        exchange(
            c,
            s.partner,
            s.tag,
            &w[s.send.clone()],
            &mut out[s.recv.clone()],
        )?;
        for (w, o) in w[s.recv.clone()].iter_mut().zip(&out[s.recv.clone()]) {
            *w += o;
        }
    }
    let len = l.exch_recv_len;
    if l.reduce.is_empty() {
        out[..len].copy_from_slice(&w[..len]);
    } else {
        exchange(c, l.exch_proc, 1, &w[l.send.clone()], &mut out[..len])?;
    }
    Ok(())
}

/// Sums `vals` over the grid row: at each reduce step, first to last,
/// swaps the running sums with the step's partner and adds (cg.f's
/// replacement for an allreduce).
fn row_sum<C: Communicator<Error = Error> + ?Sized, const N: usize>(
    c: &C,
    l: &Layout,
    mut vals: [f64; N],
) -> Result<[f64; N], Error> {
    for s in &l.reduce {
        let mut got = [0.0; N];
        exchange(c, s.partner, s.tag, &vals, &mut got)?;
        for (v, g) in vals.iter_mut().zip(got) {
            *v += g;
        }
    }
    Ok(vals)
}

/// Sends `send` to `partner` and receives `recv` from it, with `tag`: the
/// receive is posted first, as cg.f does. A receive that fails returns at
/// once (the send is let go with the scope).
fn exchange<C: Communicator<Error = Error> + ?Sized>(
    c: &C,
    partner: usize,
    tag: i32,
    send: &[f64],
    recv: &mut [f64],
) -> Result<(), Error> {
    pertinax::scope(|s| {
        let r = c.irecv(s, recv, partner, tag)?;
        let q = c.isend(s, send, partner, tag)?;
        r.wait()?;
        q.wait()?;
        Ok(())
    })
}
