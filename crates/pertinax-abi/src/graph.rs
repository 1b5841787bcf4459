//! Graph and distributed-graph topologies: `MPI_Graph_create`, `_get`,
//! `_neighbors_count`, `_neighbors`, `_map`, `MPI_Graphdims_get`,
//! `MPI_Dist_graph_create_adjacent`, `MPI_Dist_graph_create`,
//! `MPI_Dist_graph_neighbors_count` and `MPI_Dist_graph_neighbors`.
//!
//! As for Cartesian topologies (`topo`), the communicator is an ordinary
//! one and its graph is kept here per handle (`info::PerComm`):
//!
//! - a graph communicator is a split of the old one keeping its first
//!   `nnodes` ranks in their order (`reorder` is ignored, as MPI allows);
//!   the others get `MPI_COMM_NULL`;
//! - a distributed graph communicator is a duplicate of the old one. With
//!   `MPI_Dist_graph_create` every process may name any edge: the edges
//!   are gathered (an allgather of their counts, then of the edges) and
//!   each process keeps those that leave it (its destinations) and those
//!   that reach it (its sources), in the order of the ranks that named
//!   them, then the order each named them. With
//!   `MPI_Dist_graph_create_adjacent` each gives its own lists, kept as
//!   given. `MPI_UNWEIGHTED` makes the graph unweighted;
//!   `MPI_WEIGHTS_EMPTY` is an empty weighted list.
//!
//! `MPI_Comm_dup` copies a topology ([`copy_topology`]). Creations are
//! uniform under failures, as `MPI_Comm_split`'s
//! (`comm::uniform`). The neighbour lists are what the neighbourhood
//! collectives (`neighbor`) exchange with. Error classes follow MPICH's:
//! `MPI_ERR_TOPOLOGY` for a communicator without such a topology,
//! `MPI_ERR_ARG` for a rank outside the communicator or a negative
//! count.

use std::cell::RefCell;
use std::ffi::c_int;

use pertinax::Communicator;

use crate::comm::{register, uniform};
use crate::consts::*;
use crate::errors::code_of;
use crate::info::{out, with_table, PerComm};
use crate::p2p::{call, comm_of};
use crate::serial::Serial;
use crate::topo::MPI_ERR_TOPOLOGY;

/// A graph topology.
#[derive(Debug, Clone)]
pub(crate) enum Topo {
    /// `MPI_Graph_create`'s: `index` and `edges` as MPI gives them.
    Graph { index: Vec<i32>, edges: Vec<i32> },
    /// A distributed graph: this process's sources and destinations, with
    /// weights when `weighted`.
    Dist {
        sources: Vec<i32>,
        source_weights: Vec<i32>,
        dests: Vec<i32>,
        dest_weights: Vec<i32>,
        weighted: bool,
    },
}

impl Topo {
    /// The neighbours of `rank` in a graph (`MPI_Graph_neighbors`).
    fn graph_neighbors(index: &[i32], edges: &[i32], rank: i32) -> Option<Vec<i32>> {
        let r = usize::try_from(rank).ok().filter(|&r| r < index.len())?;
        let lo = if r == 0 { 0 } else { index[r - 1] as usize };
        let hi = index[r] as usize;
        edges.get(lo..hi).map(<[i32]>::to_vec)
    }
}

static GRAPHS: Serial<RefCell<PerComm<Topo>>> = Serial::new(RefCell::new(PerComm::new()));

/// The graph topology of `comm`, if it has one.
pub(crate) fn topology(comm: c_int) -> Result<Option<Topo>, c_int> {
    with_table(&GRAPHS, |t| t.get(comm).cloned())
}

/// Sources and destinations.
pub(crate) type Neighbours = (Vec<i32>, Vec<i32>);

/// The (sources, destinations) of this process in `comm`'s graph or
/// distributed graph; `None` if it has neither.
pub(crate) fn neighbors(comm: c_int, me: i32) -> Result<Option<Neighbours>, c_int> {
    Ok(match topology(comm)? {
        None => None,
        Some(Topo::Graph { index, edges }) => {
            let n = Topo::graph_neighbors(&index, &edges, me).ok_or(MPI_ERR_INTERN)?;
            Some((n.clone(), n))
        }
        Some(Topo::Dist { sources, dests, .. }) => Some((sources, dests)),
    })
}

/// Gives `to` (a duplicate of `from`, `MPI_Comm_dup`) `from`'s topology:
/// Cartesian, graph or distributed graph.
pub(crate) fn copy_topology(from: c_int, to: c_int) -> Result<(), c_int> {
    crate::topo::copy_cart(from, to)?;
    if let Some(t) = topology(from)? {
        let c = comm_of(to)?;
        with_table(&GRAPHS, |tb| tb.set(to, &c, t))?;
    }
    Ok(())
}

fn graph_of(comm: c_int) -> Result<(Vec<i32>, Vec<i32>), c_int> {
    comm_of(comm)?;
    match topology(comm)? {
        Some(Topo::Graph { index, edges }) => Ok((index, edges)),
        _ => Err(MPI_ERR_TOPOLOGY),
    }
}

/// `n` ints from C (`MPI_ERR_ARG` for null when `n > 0`).
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
    // SAFETY: non-null and holding `n` ints by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

/// Writes the first `max` of `v` to `p`.
///
/// # Safety
/// `p` is null or holds `max` ints.
unsafe fn put_ints(p: *mut c_int, v: &[i32], max: c_int) -> Result<(), c_int> {
    let n = usize::try_from(max).map_err(|_| MPI_ERR_ARG)?.min(v.len());
    if n == 0 {
        return Ok(());
    }
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-null and holding `max >= n` ints by the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, n) };
    Ok(())
}

fn unweighted(p: *const c_int) -> bool {
    std::ptr::eq(p, crate::convert::MPI_UNWEIGHTED.0)
}

fn weights_empty(p: *const c_int) -> bool {
    std::ptr::eq(p, crate::convert::MPI_WEIGHTS_EMPTY.0)
}

/// Registers `made` with topology `t`, writing its handle to `newcomm`.
///
/// # Safety
/// `newcomm` is null or writable.
unsafe fn register_topo(
    parent: c_int,
    made: Option<pertinax::Comm>,
    t: Topo,
    newcomm: *mut c_int,
) -> Result<(), c_int> {
    let witness = made.clone();
    // SAFETY: by the caller's contract.
    unsafe { register(parent, made, newcomm)? };
    if let Some(c) = witness {
        // SAFETY: `register` wrote it.
        let h = unsafe { *newcomm };
        with_table(&GRAPHS, |tb| tb.set(h, &c, t))?;
    }
    Ok(())
}

/// A graph from `nnodes`, `index`, `edges`, checked against a
/// communicator of `size`.
///
/// # Safety
/// `index` holds `nnodes` ints, `edges` `index[nnodes - 1]`.
unsafe fn read_graph(
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    size: usize,
) -> Result<(Vec<i32>, Vec<i32>), c_int> {
    let n = usize::try_from(nnodes).map_err(|_| MPI_ERR_ARG)?;
    if n > size {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: by the caller's contract.
    let index = unsafe { ints(index, n) }?;
    if index.windows(2).any(|w| w[1] < w[0]) || index.first().is_some_and(|&x| x < 0) {
        return Err(MPI_ERR_ARG);
    }
    let ne = index.last().map_or(0, |&x| x as usize);
    // SAFETY: by the caller's contract.
    let edges = unsafe { ints(edges, ne) }?;
    if edges.iter().any(|&e| !(0..nnodes).contains(&e)) {
        return Err(MPI_ERR_ARG);
    }
    Ok((index, edges))
}

crate::mpi! {
    /// `MPI_Graph_create`: the first `nnodes` ranks of `comm_old` with the
    /// graph; `MPI_COMM_NULL` at the others.
    fn PMPI_Graph_create(comm_old: c_int, nnodes: c_int, index: *const c_int, edges: *const c_int, _reorder: c_int, comm_graph: *mut c_int) -> c_int as MPI_Graph_create {
        call(comm_old, "MPI_Graph_create", || {
            let c = comm_of(comm_old)?;
            if c.is_inter() {
                return Err(MPI_ERR_COMM);
            }
            if comm_graph.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract for `index` and `edges`.
            let (index, edges) = unsafe { read_graph(nnodes, index, edges, c.size()) }?;
            let color = (c.rank().0 < nnodes).then_some(0);
            let made = uniform(&c, c.split(color, c.rank().0).map_err(|e| code_of(&e)))?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { register_topo(comm_old, made, Topo::Graph { index, edges }, comm_graph) }
        })
    }
}

crate::mpi! {
    /// `MPI_Graphdims_get`.
    fn PMPI_Graphdims_get(comm: c_int, nnodes: *mut c_int, nedges: *mut c_int) -> c_int as MPI_Graphdims_get {
        call(comm, "MPI_Graphdims_get", || {
            let (index, edges) = graph_of(comm)?;
            // SAFETY: MPI's contract: null or writable.
            unsafe {
                out(nnodes, index.len() as c_int)?;
                out(nedges, edges.len() as c_int)
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Graph_get`: the first `maxindex` of `index`, `maxedges` of
    /// `edges`.
    fn PMPI_Graph_get(comm: c_int, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) -> c_int as MPI_Graph_get {
        call(comm, "MPI_Graph_get", || {
            let (i, e) = graph_of(comm)?;
            // SAFETY: MPI's contract: the arrays hold `maxindex` and
            // `maxedges` ints.
            unsafe {
                put_ints(index, &i, maxindex)?;
                put_ints(edges, &e, maxedges)
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Graph_neighbors_count`.
    fn PMPI_Graph_neighbors_count(comm: c_int, rank: c_int, nneighbors: *mut c_int) -> c_int as MPI_Graph_neighbors_count {
        call(comm, "MPI_Graph_neighbors_count", || {
            let (i, e) = graph_of(comm)?;
            let n = Topo::graph_neighbors(&i, &e, rank).ok_or(MPI_ERR_RANK)?;
            // SAFETY: MPI's contract: null or writable.
            unsafe { out(nneighbors, n.len() as c_int) }
        })
    }
}

crate::mpi! {
    /// `MPI_Graph_neighbors`: the first `maxneighbors`.
    fn PMPI_Graph_neighbors(comm: c_int, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) -> c_int as MPI_Graph_neighbors {
        call(comm, "MPI_Graph_neighbors", || {
            let (i, e) = graph_of(comm)?;
            let n = Topo::graph_neighbors(&i, &e, rank).ok_or(MPI_ERR_RANK)?;
            // SAFETY: MPI's contract: `neighbors` holds `maxneighbors` ints.
            unsafe { put_ints(neighbors, &n, maxneighbors) }
        })
    }
}

crate::mpi! {
    /// `MPI_Graph_map`: the rank `MPI_Graph_create` would give this
    /// process (its own, or `MPI_UNDEFINED` beyond `nnodes`).
    fn PMPI_Graph_map(comm: c_int, nnodes: c_int, index: *const c_int, edges: *const c_int, newrank: *mut c_int) -> c_int as MPI_Graph_map {
        call(comm, "MPI_Graph_map", || {
            let c = comm_of(comm)?;
            if c.is_inter() {
                return Err(MPI_ERR_COMM);
            }
            // SAFETY: MPI's contract for `index` and `edges`.
            unsafe { read_graph(nnodes, index, edges, c.size()) }?;
            let r = c.rank().0;
            // SAFETY: MPI's contract: null or writable.
            unsafe { out(newrank, if r < nnodes { r } else { MPI_UNDEFINED }) }
        })
    }
}

/// A duplicate of `comm_old` registered with distributed graph `t`.
///
/// # Safety
/// `newcomm` is null or writable.
unsafe fn dist(
    comm_old: c_int,
    c: &pertinax::Comm,
    t: Topo,
    newcomm: *mut c_int,
) -> Result<(), c_int> {
    let d = uniform(c, c.dup().map(Some).map_err(|e| code_of(&e)))?;
    // SAFETY: by the caller's contract.
    unsafe { register_topo(comm_old, d, t, newcomm) }
}

/// Weights from C: `None` for `MPI_UNWEIGHTED`.
///
/// # Safety
/// `p` is a marker, or null, or holds `n` ints.
unsafe fn weights(p: *const c_int, n: usize) -> Result<Option<Vec<i32>>, c_int> {
    if unweighted(p) {
        Ok(None)
    } else if weights_empty(p) || n == 0 {
        Ok(Some(Vec::new()))
    } else {
        // SAFETY: by the caller's contract.
        unsafe { ints(p, n) }.map(Some)
    }
}

crate::mpi! {
    /// `MPI_Dist_graph_create_adjacent`: a duplicate of `comm_old` with
    /// this process's sources and destinations as given.
    fn PMPI_Dist_graph_create_adjacent(comm_old: c_int, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, _info: c_int, _reorder: c_int, comm_dist_graph: *mut c_int) -> c_int as MPI_Dist_graph_create_adjacent {
        call(comm_old, "MPI_Dist_graph_create_adjacent", || {
            let c = comm_of(comm_old)?;
            if c.is_inter() {
                return Err(MPI_ERR_COMM);
            }
            if comm_dist_graph.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let nin = usize::try_from(indegree).map_err(|_| MPI_ERR_ARG)?;
            let nout = usize::try_from(outdegree).map_err(|_| MPI_ERR_ARG)?;
            // SAFETY: MPI's contract: the arrays hold the degrees' ints.
            let (s, d, sw, dw) = unsafe {
                (ints(sources, nin)?, ints(destinations, nout)?, weights(sourceweights, nin)?, weights(destweights, nout)?)
            };
            let n = c.size() as i32;
            if s.iter().chain(&d).any(|&r| !(0..n).contains(&r)) {
                return Err(MPI_ERR_ARG);
            }
            let weighted = sw.is_some() || dw.is_some();
            let t = Topo::Dist {
                source_weights: sw.unwrap_or_else(|| vec![1; nin]),
                dest_weights: dw.unwrap_or_else(|| vec![1; nout]),
                sources: s,
                dests: d,
                weighted,
            };
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { dist(comm_old, &c, t, comm_dist_graph) }
        })
    }
}

crate::mpi! {
    /// `MPI_Dist_graph_create`: the edges every process names, gathered
    /// (see the module's documentation).
    fn PMPI_Dist_graph_create(comm_old: c_int, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, weights_in: *const c_int, _info: c_int, _reorder: c_int, comm_dist_graph: *mut c_int) -> c_int as MPI_Dist_graph_create {
        call(comm_old, "MPI_Dist_graph_create", || {
            let c = comm_of(comm_old)?;
            if c.is_inter() {
                return Err(MPI_ERR_COMM);
            }
            if comm_dist_graph.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let k = usize::try_from(n).map_err(|_| MPI_ERR_ARG)?;
            // SAFETY: MPI's contract: `sources` and `degrees` hold `n` ints.
            let (srcs, degs) = unsafe { (ints(sources, k)?, ints(degrees, k)?) };
            if degs.iter().any(|&d| d < 0) {
                return Err(MPI_ERR_ARG);
            }
            let total: usize = degs.iter().map(|&d| d as usize).sum();
            // SAFETY: MPI's contract: `destinations` (and the weights
            // unless a marker) hold the degrees' sum.
            let (dsts, w) = unsafe { (ints(destinations, total)?, weights(weights_in, total)?) };
            let size = c.size() as i32;
            if srcs.iter().chain(&dsts).any(|&r| !(0..size).contains(&r)) {
                return Err(MPI_ERR_ARG);
            }
            // Triples (source, destination, weight), as native-endian ints.
            let mut mine: Vec<i32> = Vec::with_capacity(3 * total);
            let mut at = 0;
            for (&s, &d) in srcs.iter().zip(&degs) {
                for j in at..at + d as usize {
                    mine.extend([s, dsts[j], w.as_ref().map_or(1, |w| w[j])]);
                }
                at += d as usize;
            }
            let mut counts = vec![0u8; 8 * c.size()];
            c.allgather_bytes(&(total as u64).to_ne_bytes(), &mut counts).map_err(|e| code_of(&e))?;
            let counts: Vec<usize> = counts
                .chunks_exact(8)
                .map(|b| u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as usize)
                .collect();
            let displs: Vec<usize> = counts.iter().scan(0, |acc, &x| { let d = *acc; *acc += x; Some(d) }).collect();
            let all_n: usize = counts.iter().sum();
            let mut all = vec![0u8; 12 * all_n];
            let send: Vec<u8> = mine.iter().flat_map(|x| x.to_ne_bytes()).collect();
            c.allgatherv_bytes(&send, &mut all, &counts, &displs, 12).map_err(|e| code_of(&e))?;
            let me = c.rank().0;
            let (mut s, mut sw, mut d, mut dw) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for t in all.chunks_exact(12) {
                let x = |i: usize| i32::from_ne_bytes([t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]]);
                let (from, to, wt) = (x(0), x(1), x(2));
                if to == me {
                    s.push(from);
                    sw.push(wt);
                }
                if from == me {
                    d.push(to);
                    dw.push(wt);
                }
            }
            let t = Topo::Dist { sources: s, source_weights: sw, dests: d, dest_weights: dw, weighted: w.is_some() };
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { dist(comm_old, &c, t, comm_dist_graph) }
        })
    }
}

/// The distributed graph of `comm`: sources, their weights,
/// destinations, their weights, whether weighted.
struct DistOf(Vec<i32>, Vec<i32>, Vec<i32>, Vec<i32>, bool);

fn dist_of(comm: c_int) -> Result<DistOf, c_int> {
    comm_of(comm)?;
    match topology(comm)? {
        Some(Topo::Dist {
            sources,
            source_weights,
            dests,
            dest_weights,
            weighted,
        }) => Ok(DistOf(
            sources,
            source_weights,
            dests,
            dest_weights,
            weighted,
        )),
        _ => Err(MPI_ERR_TOPOLOGY),
    }
}

crate::mpi! {
    /// `MPI_Dist_graph_neighbors_count`.
    fn PMPI_Dist_graph_neighbors_count(comm: c_int, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) -> c_int as MPI_Dist_graph_neighbors_count {
        call(comm, "MPI_Dist_graph_neighbors_count", || {
            let DistOf(s, _, d, _, w) = dist_of(comm)?;
            // SAFETY: MPI's contract: null or writable.
            unsafe {
                out(indegree, s.len() as c_int)?;
                out(outdegree, d.len() as c_int)?;
                out(weighted, c_int::from(w))
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Dist_graph_neighbors`: the first `maxindegree` sources and
    /// `maxoutdegree` destinations, with their weights unless
    /// `MPI_UNWEIGHTED` (or the graph is unweighted).
    fn PMPI_Dist_graph_neighbors(comm: c_int, maxindegree: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) -> c_int as MPI_Dist_graph_neighbors {
        call(comm, "MPI_Dist_graph_neighbors", || {
            let DistOf(s, sw, d, dw, w) = dist_of(comm)?;
            // SAFETY: MPI's contract: each array holds its maximum of ints.
            unsafe {
                put_ints(sources, &s, maxindegree)?;
                put_ints(destinations, &d, maxoutdegree)?;
                if w && !unweighted(sourceweights) {
                    put_ints(sourceweights, &sw, maxindegree)?;
                }
                if w && !unweighted(destweights) {
                    put_ints(destweights, &dw, maxoutdegree)?;
                }
            }
            Ok(())
        })
    }
}
