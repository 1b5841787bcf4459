//! Process topologies: `MPI_Dims_create` and Cartesian topologies
//! (`MPI_Cart_create`, `_get`, `_rank`, `_coords`, `_shift`, `_sub`,
//! `_map`, `MPI_Cartdim_get`, `MPI_Topo_test`).
//!
//! A Cartesian communicator is an ordinary communicator (a split of the
//! old one: its first `prod(dims)` ranks, in their order; `reorder` is
//! ignored, as MPI allows) with its grid kept here, per handle (see
//! `info::PerComm` for how a freed handle's entry goes stale). Ranks are
//! laid out row-major: the last dimension varies fastest. Like
//! `MPI_Comm_split`, a creation's outcome is uniform under failures
//! (`comm::uniform`).
//!
//! `MPI_Dims_create` gives MPICH's answers: of the factorisations of the
//! free part into non-increasing factors it takes the one whose largest
//! and smallest factors differ least, then the one with the largest
//! smallest factor, then the first in lexicographic order (checked
//! against MPICH 5 for every `nnodes` up to 2000 at 2 to 6 dimensions).
//!
//! Error classes follow MPICH's: `MPI_ERR_TOPOLOGY` for a communicator
//! without a Cartesian topology, `MPI_ERR_DIMS` for a dimension of 0 or
//! less or `nnodes` that the fixed dimensions do not divide,
//! `MPI_ERR_ARG` for a grid larger than the communicator, a negative
//! count, a coordinate outside a non-periodic dimension or a direction
//! outside the grid.
//!
//! Graph and distributed-graph topologies are in `graph`, the
//! neighbourhood collectives in `neighbor` (which asks
//! [`cart_neighbors`] for a grid's neighbours). `MPI_Comm_dup` copies
//! the topology (`copy_cart`, through `graph::copy_topology`).

use std::cell::RefCell;
use std::ffi::c_int;

use crate::comm::{register, uniform};
use crate::consts::*;
use crate::errors::code_of;
use crate::info::{out, with_table, PerComm};
use crate::p2p::{call, comm_of};
use crate::serial::Serial;

pub const MPI_GRAPH: c_int = 1;
pub const MPI_CART: c_int = 2;
pub const MPI_DIST_GRAPH: c_int = 3;
pub const MPI_ERR_TOPOLOGY: c_int = 10;
pub const MPI_ERR_DIMS: c_int = 11;

/// A Cartesian grid.
#[derive(Debug, Clone)]
struct Cart {
    dims: Vec<i32>,
    periods: Vec<bool>,
}

impl Cart {
    /// The coordinates of `rank` (row-major).
    fn coords(&self, rank: i32) -> Vec<i32> {
        let mut c = vec![0; self.dims.len()];
        let mut r = rank;
        for (x, &d) in c.iter_mut().zip(&self.dims).rev() {
            *x = r % d;
            r /= d;
        }
        c
    }

    /// The rank at `coords`, each in range.
    fn rank(&self, coords: &[i32]) -> i32 {
        coords
            .iter()
            .zip(&self.dims)
            .fold(0, |r, (&x, &d)| r * d + x)
    }
}

/// The grids of Cartesian communicators.
static CARTS: Serial<RefCell<PerComm<Cart>>> = Serial::new(RefCell::new(PerComm::new()));

/// `n` ints from C; `MPI_ERR_ARG` for null when `n > 0`.
///
/// # Safety
/// `p` is null or holds `n` ints.
unsafe fn ints(p: *const c_int, n: usize) -> Result<Vec<i32>, c_int> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-null, and holds `n` ints by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

/// Writes `v` to the C array `p`; `MPI_ERR_ARG` for null when `v` is not
/// empty.
///
/// # Safety
/// `p` is null or holds `v.len()` ints.
unsafe fn put_ints(p: *mut c_int, v: &[i32]) -> Result<(), c_int> {
    if v.is_empty() {
        return Ok(());
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-null, and holds `v.len()` ints by the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, v.len()) };
    Ok(())
}

/// A grid from C's `ndims`, `dims` and `periods`: `MPI_ERR_ARG` for a
/// negative `ndims`, `MPI_ERR_DIMS` for a dimension below 1, `too_big` if
/// it has more than `size` processes.
///
/// # Safety
/// `dims` and `periods` are null or hold `ndims` ints.
unsafe fn grid(
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    size: usize,
    too_big: c_int,
) -> Result<Cart, c_int> {
    let n = usize::try_from(ndims).map_err(|_| MPI_ERR_ARG)?;
    // SAFETY: by the caller's contract.
    let (dims, periods) = unsafe { (ints(dims, n)?, ints(periods, n)?) };
    if dims.iter().any(|&d| d < 1) {
        return Err(MPI_ERR_DIMS);
    }
    let mut total: usize = 1;
    for &d in &dims {
        total = total
            .checked_mul(d as usize)
            .filter(|&t| t <= size)
            .ok_or(too_big)?;
    }
    Ok(Cart {
        dims,
        periods: periods.iter().map(|&p| p != 0).collect(),
    })
}

/// The number of processes of a grid (at most the communicator's size,
/// checked by [`grid`]).
fn procs(dims: &[i32]) -> i32 {
    dims.iter().product()
}

/// The grid of communicator `comm` (`MPI_ERR_TOPOLOGY` if it has none).
fn cart_of(comm: c_int) -> Result<Cart, c_int> {
    comm_of(comm)?;
    with_table(&CARTS, |t| t.get(comm).cloned())?.ok_or(MPI_ERR_TOPOLOGY)
}

/// The neighbours of this process (rank `me`) in `comm`'s grid, if it
/// has one, in the order of MPI's neighbourhood collectives: for each
/// dimension, the source then the destination of a shift by 1
/// (`MPI_PROC_NULL` past the edge of a non-periodic dimension).
pub(crate) fn cart_neighbors(comm: c_int, me: i32) -> Result<Option<Vec<i32>>, c_int> {
    let Some(cart) = with_table(&CARTS, |t| t.get(comm).cloned())? else {
        return Ok(None);
    };
    let at = cart.coords(me);
    let mut n = Vec::with_capacity(2 * cart.dims.len());
    for (dir, (&d, &periodic)) in cart.dims.iter().zip(&cart.periods).enumerate() {
        for step in [-1, 1] {
            let x = at[dir] + step;
            let x = if periodic { x.rem_euclid(d) } else { x };
            n.push(if (0..d).contains(&x) {
                let mut c = at.clone();
                c[dir] = x;
                cart.rank(&c)
            } else {
                MPI_PROC_NULL
            });
        }
    }
    Ok(Some(n))
}

/// Gives `to` (a duplicate of `from`) `from`'s grid, if it has one.
pub(crate) fn copy_cart(from: c_int, to: c_int) -> Result<(), c_int> {
    if let Some(cart) = with_table(&CARTS, |t| t.get(from).cloned())? {
        let c = comm_of(to)?;
        with_table(&CARTS, |t| t.set(to, &c, cart))?;
    }
    Ok(())
}

/// Registers `made` (if this process is in it) with grid `cart`, writing
/// its handle (or `MPI_COMM_NULL`) to `newcomm`.
///
/// # Safety
/// `newcomm` is null or writable.
unsafe fn register_cart(
    parent: c_int,
    made: Option<pertinax::Comm>,
    cart: Cart,
    newcomm: *mut c_int,
) -> Result<(), c_int> {
    let witness = made.clone();
    // SAFETY: by the caller's contract.
    unsafe { register(parent, made, newcomm)? };
    if let Some(c) = witness {
        // SAFETY: `register` wrote it.
        let h = unsafe { *newcomm };
        with_table(&CARTS, |t| t.set(h, &c, cart))?;
    }
    Ok(())
}

/// The factorisation of `n` into `k` non-increasing factors that MPICH's
/// `MPI_Dims_create` gives (see the module's documentation).
fn balanced(n: u32, k: usize) -> Vec<u32> {
    let n = u64::from(n);
    let mut divisors: Vec<u64> = (1..)
        .take_while(|d| d * d <= n)
        .filter(|d| n % d == 0)
        .flat_map(|d| [d, n / d])
        .collect();
    divisors.sort_unstable();
    divisors.dedup();
    let mut s = Search {
        divisors,
        cur: Vec::new(),
        best: None,
    };
    s.go(n, k, n);
    s.best
        .map(|(_, _, f)| f.into_iter().map(|x| x as u32).collect())
        .unwrap_or_default()
}

/// The largest `r` with `r^k <= n` (`k >= 1`).
fn iroot(n: u64, k: usize) -> u64 {
    let mut r = (n as f64).powf(1.0 / k as f64).round() as u64;
    while r > 0 && !pow_le(r, k, n) {
        r -= 1;
    }
    while pow_le(r + 1, k, n) {
        r += 1;
    }
    r
}

/// Whether `r^k <= n`.
fn pow_le(r: u64, k: usize, n: u64) -> bool {
    let mut p: u64 = 1;
    for _ in 0..k {
        p = p.saturating_mul(r);
        if p > n {
            return false;
        }
    }
    true
}

/// A branch-and-bound search of non-increasing factorisations.
struct Search {
    divisors: Vec<u64>,
    cur: Vec<u64>,
    /// The best so far: its spread, smallest factor, factors.
    best: Option<(u64, u64, Vec<u64>)>,
}

impl Search {
    /// Extends `cur` with `slots` factors of `rem`, each at most `cap`.
    fn go(&mut self, rem: u64, slots: usize, cap: u64) {
        if slots == 0 {
            if rem == 1 {
                self.consider(1, 0);
            }
            return;
        }
        if rem == 1 {
            self.consider(1, slots);
            return;
        }
        if slots == 1 {
            if rem <= cap {
                self.consider(rem, 1);
            }
            return;
        }
        // Ascending, so the first of equals found is the smallest in
        // lexicographic order.
        for i in 0..self.divisors.len() {
            let d = self.divisors[i];
            if d > cap || d > rem {
                break;
            }
            // `d` is the largest factor left: d^slots >= rem.
            if !rem.is_multiple_of(d) || pow_le(d, slots, rem - 1) {
                continue;
            }
            let rest = rem / d;
            let max = self.cur.first().copied().unwrap_or(d);
            // The smallest factor is at most the root of what is left.
            let min_ub = d.min(iroot(rest, slots - 1));
            let spread_lb = max - min_ub;
            if let Some((spread, min, _)) = &self.best {
                if spread_lb > *spread || (spread_lb == *spread && min_ub < *min) {
                    // At the top, both bounds only worsen as `d` grows.
                    if self.cur.is_empty() {
                        break;
                    }
                    continue;
                }
            }
            self.cur.push(d);
            self.go(rest, slots - 1, d);
            self.cur.pop();
        }
    }

    /// Considers `cur` followed by `n` factors `x` (built only when it is
    /// the best so far: `n` may be large).
    fn consider(&mut self, x: u64, n: usize) {
        let last = if n > 0 {
            Some(x)
        } else {
            self.cur.last().copied()
        };
        let (Some(max), Some(min)) = (self.cur.first().copied().or(last), last) else {
            return;
        };
        let better = match &self.best {
            None => true,
            Some((spread, m, _)) => max - min < *spread || (max - min == *spread && min > *m),
        };
        if better {
            let mut f = self.cur.clone();
            f.resize(f.len() + n, x);
            self.best = Some((max - min, min, f));
        }
    }
}

crate::mpi! {
    /// `MPI_Dims_create`: fills the zero entries of `dims` with a balanced
    /// factorisation of `nnodes` over the nonzero ones, in non-increasing
    /// order.
    fn PMPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int as MPI_Dims_create {
        call(MPI_COMM_WORLD, "MPI_Dims_create", || {
            let k = usize::try_from(ndims).map_err(|_| MPI_ERR_ARG)?;
            if nnodes < 1 {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: `dims` holds `ndims` ints.
            let mut d = unsafe { ints(dims, k) }?;
            if d.iter().any(|&x| x < 0) {
                return Err(MPI_ERR_DIMS);
            }
            let mut fixed: u64 = 1;
            for &x in d.iter().filter(|&&x| x > 0) {
                fixed = fixed.saturating_mul(x as u64);
            }
            let nnodes = nnodes as u64;
            if !nnodes.is_multiple_of(fixed) {
                return Err(MPI_ERR_DIMS);
            }
            let free = d.iter().filter(|&&x| x == 0).count();
            if free == 0 {
                return Ok(());
            }
            let mut f = balanced((nnodes / fixed) as u32, free).into_iter();
            for x in d.iter_mut().filter(|x| **x == 0) {
                *x = f.next().ok_or(MPI_ERR_INTERN)? as c_int;
            }
            // SAFETY: MPI's contract, as above.
            unsafe { put_ints(dims, &d) }
        })
    }
}

crate::mpi! {
    /// `MPI_Cart_create`: the first `prod(dims)` ranks of `comm_old`, in
    /// their order, with the grid; `MPI_COMM_NULL` at the others.
    fn PMPI_Cart_create(comm_old: c_int, ndims: c_int, dims: *const c_int, periods: *const c_int, _reorder: c_int, comm_cart: *mut c_int) -> c_int as MPI_Cart_create {
        call(comm_old, "MPI_Cart_create", || {
            let c = comm_of(comm_old)?;
            if c.is_inter() {
                return Err(MPI_ERR_COMM);
            }
            if comm_cart.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: `dims` and `periods` hold `ndims`
            // ints.
            let cart = unsafe { grid(ndims, dims, periods, c.size(), MPI_ERR_ARG) }?;
            let color = (c.rank().0 < procs(&cart.dims)).then_some(0);
            let made = uniform(&c, c.split(color, c.rank().0).map_err(|e| code_of(&e)))?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { register_cart(comm_old, made, cart, comm_cart) }
        })
    }
}

crate::mpi! {
    /// `MPI_Cartdim_get`.
    fn PMPI_Cartdim_get(comm: c_int, ndims: *mut c_int) -> c_int as MPI_Cartdim_get {
        call(comm, "MPI_Cartdim_get", || {
            let cart = cart_of(comm)?;
            // SAFETY: MPI's contract: null or writable.
            unsafe { out(ndims, cart.dims.len() as c_int) }
        })
    }
}

crate::mpi! {
    /// `MPI_Cart_get`: the first `maxdims` dimensions, periods and this
    /// process's coordinates.
    fn PMPI_Cart_get(comm: c_int, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) -> c_int as MPI_Cart_get {
        call(comm, "MPI_Cart_get", || {
            let cart = cart_of(comm)?;
            let n = usize::try_from(maxdims).map_err(|_| MPI_ERR_ARG)?.min(cart.dims.len());
            let me = cart.coords(comm_of(comm)?.rank().0);
            let periods_c: Vec<i32> = cart.periods.iter().map(|&p| c_int::from(p)).collect();
            // SAFETY: MPI's contract: each array holds `maxdims` ints.
            unsafe {
                put_ints(dims, &cart.dims[..n])?;
                put_ints(periods, &periods_c[..n])?;
                put_ints(coords, &me[..n])
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Cart_rank`: a coordinate outside a periodic dimension wraps;
    /// outside a non-periodic one it is `MPI_ERR_ARG`.
    fn PMPI_Cart_rank(comm: c_int, coords: *const c_int, rank: *mut c_int) -> c_int as MPI_Cart_rank {
        call(comm, "MPI_Cart_rank", || {
            let cart = cart_of(comm)?;
            // SAFETY: MPI's contract: `coords` holds `ndims` ints.
            let mut at = unsafe { ints(coords, cart.dims.len()) }?;
            for ((x, &d), &p) in at.iter_mut().zip(&cart.dims).zip(&cart.periods) {
                if p {
                    *x = x.rem_euclid(d);
                } else if !(0..d).contains(x) {
                    return Err(MPI_ERR_ARG);
                }
            }
            // SAFETY: MPI's contract: null or writable.
            unsafe { out(rank, cart.rank(&at)) }
        })
    }
}

crate::mpi! {
    /// `MPI_Cart_coords` (`maxdims` below the grid's dimensions is
    /// `MPI_ERR_ARG`).
    fn PMPI_Cart_coords(comm: c_int, rank: c_int, maxdims: c_int, coords: *mut c_int) -> c_int as MPI_Cart_coords {
        call(comm, "MPI_Cart_coords", || {
            let cart = cart_of(comm)?;
            if !(0..procs(&cart.dims)).contains(&rank) {
                return Err(MPI_ERR_RANK);
            }
            if usize::try_from(maxdims).map_or(true, |m| m < cart.dims.len()) {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: `coords` holds `maxdims` ints.
            unsafe { put_ints(coords, &cart.coords(rank)) }
        })
    }
}

crate::mpi! {
    /// `MPI_Cart_shift`: the ranks `disp` steps back and forward along
    /// `direction`; `MPI_PROC_NULL` past the edge of a non-periodic one.
    fn PMPI_Cart_shift(comm: c_int, direction: c_int, disp: c_int, rank_source: *mut c_int, rank_dest: *mut c_int) -> c_int as MPI_Cart_shift {
        call(comm, "MPI_Cart_shift", || {
            let cart = cart_of(comm)?;
            if cart.dims.is_empty() {
                return Err(MPI_ERR_TOPOLOGY);
            }
            let dir = usize::try_from(direction)
                .ok()
                .filter(|&d| d < cart.dims.len())
                .ok_or(MPI_ERR_ARG)?;
            let me = cart.coords(comm_of(comm)?.rank().0);
            let (d, periodic) = (i64::from(cart.dims[dir]), cart.periods[dir]);
            let at = |step: i64| {
                let x = i64::from(me[dir]) + step;
                let x = if periodic { x.rem_euclid(d) } else { x };
                if !(0..d).contains(&x) {
                    return MPI_PROC_NULL;
                }
                let mut c = me.clone();
                c[dir] = x as i32;
                cart.rank(&c)
            };
            let disp = i64::from(disp);
            // SAFETY: MPI's contract: null or writable.
            unsafe {
                out(rank_source, at(-disp))?;
                out(rank_dest, at(disp))
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Cart_sub`: the sub-grids that keep the dimensions
    /// `remain_dims` marks, one communicator per sub-grid (each process
    /// alone in one when none is kept).
    fn PMPI_Cart_sub(comm: c_int, remain_dims: *const c_int, newcomm: *mut c_int) -> c_int as MPI_Cart_sub {
        call(comm, "MPI_Cart_sub", || {
            let cart = cart_of(comm)?;
            let c = comm_of(comm)?;
            if newcomm.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: `remain_dims` holds `ndims` ints.
            let keep = unsafe { ints(remain_dims, cart.dims.len()) }?;
            let me = cart.coords(c.rank().0);
            // The sub-grid: the coordinates dropped, row-major; the rank
            // in it: those kept.
            let (mut color, mut key) = (0i32, 0i32);
            let mut sub = Cart { dims: Vec::new(), periods: Vec::new() };
            for (i, &k) in keep.iter().enumerate() {
                if k != 0 {
                    key = key * cart.dims[i] + me[i];
                    sub.dims.push(cart.dims[i]);
                    sub.periods.push(cart.periods[i]);
                } else {
                    color = color * cart.dims[i] + me[i];
                }
            }
            let made = uniform(&c, c.split(Some(color as u32), key).map_err(|e| code_of(&e)))?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { register_cart(comm, made, sub, newcomm) }
        })
    }
}

crate::mpi! {
    /// `MPI_Topo_test`: `MPI_CART`, `MPI_GRAPH`, `MPI_DIST_GRAPH` (see
    /// `graph`) or `MPI_UNDEFINED`.
    fn PMPI_Topo_test(comm: c_int, status: *mut c_int) -> c_int as MPI_Topo_test {
        call(comm, "MPI_Topo_test", || {
            let t = match cart_of(comm) {
                Ok(_) => MPI_CART,
                Err(MPI_ERR_TOPOLOGY) => match crate::graph::topology(comm)? {
                    Some(crate::graph::Topo::Graph { .. }) => MPI_GRAPH,
                    Some(crate::graph::Topo::Dist { .. }) => MPI_DIST_GRAPH,
                    None => MPI_UNDEFINED,
                },
                Err(code) => return Err(code),
            };
            // SAFETY: MPI's contract: null or writable.
            unsafe { out(status, t) }
        })
    }
}

crate::mpi! {
    /// `MPI_Cart_map`: the rank `MPI_Cart_create` would give this process
    /// (its own, or `MPI_UNDEFINED` beyond the grid); a grid larger than
    /// the communicator is `MPI_ERR_DIMS`, as in MPICH.
    fn PMPI_Cart_map(comm: c_int, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) -> c_int as MPI_Cart_map {
        call(comm, "MPI_Cart_map", || {
            let c = comm_of(comm)?;
            if c.is_inter() {
                return Err(MPI_ERR_COMM);
            }
            // SAFETY: MPI's contract: `dims` and `periods` hold `ndims`
            // ints.
            let cart = unsafe { grid(ndims, dims, periods, c.size(), MPI_ERR_DIMS) }?;
            let r = c.rank().0;
            let r = if r < procs(&cart.dims) { r } else { MPI_UNDEFINED };
            // SAFETY: MPI's contract: null or writable.
            unsafe { out(newrank, r) }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_are_mpichs() {
        // MPICH 5's answers.
        for (n, k, want) in [
            (12, 2, &[4, 3][..]),
            (16, 3, &[4, 2, 2]),
            (24, 3, &[4, 3, 2]),
            (7, 2, &[7, 1]),
            (1, 3, &[1, 1, 1]),
            (100, 5, &[5, 5, 2, 2, 1]),
            (210, 5, &[7, 5, 3, 2, 1]),
            (360, 3, &[10, 6, 6]),
            (5040, 3, &[21, 16, 15]),
            (1000, 2, &[40, 25]),
            (2310, 4, &[11, 7, 6, 5]),
            (2_147_483_646, 3, &[1661, 1302, 993]),
        ] {
            assert_eq!(balanced(n, k), want, "{n} over {k}");
        }
        assert_eq!(balanced(2_147_483_647, 2), [2_147_483_647, 1]);
        assert_eq!(balanced(1 << 30, 31).iter().product::<u32>(), 1 << 30);
        assert_eq!(balanced(6, 0), Vec::<u32>::new());
        // Many dimensions: mostly ones, found without a search per one.
        let many = balanced(720_720, 100_000);
        assert_eq!(many.len(), 100_000);
        assert_eq!(many[..4], [13, 11, 7, 5]);
        assert_eq!(many.iter().map(|&x| u64::from(x)).product::<u64>(), 720_720);
    }

    #[test]
    fn coordinates_are_row_major() {
        let c = Cart {
            dims: vec![2, 3],
            periods: vec![false, true],
        };
        assert_eq!(c.coords(4), [1, 1]);
        assert_eq!(c.rank(&[1, 2]), 5);
        for r in 0..6 {
            assert_eq!(c.rank(&c.coords(r)), r);
        }
    }
}
