//! The datatype calls: constructors (`MPI_Type_contiguous`, `_vector`,
//! `_create_hvector`, `_indexed`, `_create_hindexed`,
//! `_create_indexed_block`, `_create_hindexed_block`, `_create_struct`,
//! `_create_resized`, `_create_subarray`, `_create_darray`, `_dup`, and the deprecated
//! `MPI_Type_hvector`, `_hindexed`, `_struct`), `_commit`, `_free`, the
//! queries (`_get_envelope`, `_get_contents`, names, `_match_size`,
//! the deprecated `_extent`, `_lb`, `_ub`), `MPI_Pack`/`MPI_Unpack` (and
//! `"external32"`: big-endian) and the basic-element counts behind
//! `MPI_Get_elements`. More in `typeextra.rs` (the `_c` envelope and
//! contents, type attributes, the F90 types). Not implemented: the
//! `MPI_LB`/`MPI_UB` markers of the deprecated `MPI_Type_struct`.

use std::ffi::{c_char, c_int, c_void};
use std::rc::Rc;

use crate::consts::*;
use crate::datatype::{
    add, build, builtin_size, count_of, layout, remove, update, usable, Contents, Layout, Part,
    RecvBuf, SendBuf,
};
use crate::errors::raise;
use crate::large::MPI_Count;
use crate::serial::Serial;
use crate::MPI_Aint;

/// Runs a datatype call; an error class goes to the world's handler.
fn run(what: &str, f: impl FnOnce() -> Result<(), c_int>) -> c_int {
    match f() {
        Ok(()) => MPI_SUCCESS,
        Err(code) => raise(MPI_COMM_WORLD, what, code),
    }
}

/// `n` values of a C array as `i64`s.
///
/// # Safety
/// `p` holds `n` values (or `n` is 0).
unsafe fn read<T: Copy + TryInto<i64>>(p: *const T, n: usize) -> Result<Vec<i64>, c_int> {
    if n > 0 && p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    (0..n)
        // SAFETY: `i < n`, by the caller's contract.
        .map(|i| unsafe { *p.add(i) }.try_into().map_err(|_| MPI_ERR_ARG))
        .collect()
}

fn non_negative(v: i64) -> Result<usize, c_int> {
    usize::try_from(v).map_err(|_| MPI_ERR_COUNT)
}

/// Names a new type's contents and registers it; writes its handle.
///
/// # Safety
/// `out` null or writable.
unsafe fn finish(
    mut l: Layout,
    combiner: c_int,
    ints: Vec<i64>,
    addrs: Vec<i64>,
    types: &[c_int],
    out: *mut c_int,
) -> Result<(), c_int> {
    if out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let types = types
        .iter()
        .map(|&t| {
            let l = layout(t)?;
            Ok((t, (!l.predefined).then_some(l)))
        })
        .collect::<Result<Vec<_>, c_int>>()?;
    let (ints, addrs, large) = if ints.iter().all(|&v| c_int::try_from(v).is_ok()) {
        (ints, addrs, Vec::new())
    } else {
        large_counts(combiner, ints, addrs)
    };
    l.contents = Rc::new(Contents {
        combiner,
        ints: ints.into_iter().map(|v| v as c_int).collect(),
        addrs: addrs.into_iter().map(|v| v as isize).collect(),
        large,
        types,
    });
    l.committed = false;
    l.predefined = false;
    l.name.clear();
    let h = add(l)?;
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { *out = h };
    Ok(())
}

/// A `_c` constructor's arguments as `MPI_Type_get_contents_c` gives
/// them when a count does not fit an `int`: `(ints, addrs, large
/// counts)`, the counts, block lengths, strides, displacements (in
/// elements or bytes), sizes and starts among the large counts in their
/// order, the rest (`ndims`, `order`, a darray's distributions) as `int`s.
fn large_counts(
    combiner: c_int,
    ints: Vec<i64>,
    addrs: Vec<i64>,
) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    match combiner {
        MPI_COMBINER_SUBARRAY => {
            let nd = ints.first().copied().unwrap_or(0) as usize;
            let order = ints.get(1 + 3 * nd).copied().unwrap_or(0);
            let mid = ints.get(1..1 + 3 * nd).unwrap_or(&[]).to_vec();
            (vec![nd as i64, order], addrs, mid)
        }
        MPI_COMBINER_DARRAY => {
            let nd = ints.get(2).copied().unwrap_or(0) as usize;
            let gsizes = ints.get(3..3 + nd).unwrap_or(&[]).to_vec();
            let mut rest = ints.get(..3).unwrap_or(&[]).to_vec();
            rest.extend(ints.get(3 + nd..).unwrap_or(&[]));
            (rest, addrs, gsizes)
        }
        _ => {
            let mut large = ints;
            large.extend(addrs);
            (Vec::new(), Vec::new(), large)
        }
    }
}

/// Blocks of `old` at byte displacements: (displacement, count).
fn blocks(old: &Layout, parts: &[(isize, usize)]) -> Layout {
    let parts: Vec<Part> = parts
        .iter()
        .map(|&(disp, count)| Part {
            disp,
            count,
            child: old,
        })
        .collect();
    build(&parts, false)
}

/// `MPI_Type_contiguous` and its `_c` form.
///
/// # Safety
/// `out` null or writable.
unsafe fn contiguous(count: i64, old: c_int, out: *mut c_int) -> Result<(), c_int> {
    let o = layout(old)?;
    let l = blocks(&o, &[(0, non_negative(count)?)]);
    // SAFETY: forwarded.
    unsafe { finish(l, MPI_COMBINER_CONTIGUOUS, vec![count], vec![], &[old], out) }
}

/// `MPI_Type_vector` (`stride` in extents) and `_create_hvector`
/// (`bytes`: in bytes).
///
/// # Safety
/// `out` null or writable.
unsafe fn vector(
    count: i64,
    bl: i64,
    stride: i64,
    bytes: bool,
    old: c_int,
    out: *mut c_int,
) -> Result<(), c_int> {
    let o = layout(old)?;
    let (n, b) = (non_negative(count)?, non_negative(bl)?);
    let step = if bytes {
        stride as isize
    } else {
        stride as isize * o.extent
    };
    let parts: Vec<(isize, usize)> = (0..n).map(|i| (i as isize * step, b)).collect();
    let l = blocks(&o, &parts);
    // SAFETY: forwarded.
    unsafe {
        if bytes {
            finish(
                l,
                MPI_COMBINER_HVECTOR,
                vec![count, bl],
                vec![stride],
                &[old],
                out,
            )
        } else {
            finish(
                l,
                MPI_COMBINER_VECTOR,
                vec![count, bl, stride],
                vec![],
                &[old],
                out,
            )
        }
    }
}

/// `MPI_Type_indexed` (displacements in extents) and
/// `_create_hindexed` (`bytes`).
///
/// # Safety
/// `out` null or writable.
unsafe fn indexed(
    bls: Vec<i64>,
    displs: Vec<i64>,
    bytes: bool,
    old: c_int,
    out: *mut c_int,
) -> Result<(), c_int> {
    let o = layout(old)?;
    let unit = if bytes { 1 } else { o.extent };
    let parts = bls
        .iter()
        .zip(&displs)
        .map(|(&b, &d)| Ok((d as isize * unit, non_negative(b)?)))
        .collect::<Result<Vec<_>, c_int>>()?;
    let l = blocks(&o, &parts);
    let mut ints = vec![bls.len() as i64];
    ints.extend(&bls);
    // SAFETY: forwarded.
    unsafe {
        if bytes {
            finish(l, MPI_COMBINER_HINDEXED, ints, displs, &[old], out)
        } else {
            ints.extend(&displs);
            finish(l, MPI_COMBINER_INDEXED, ints, vec![], &[old], out)
        }
    }
}

/// `MPI_Type_create_indexed_block` and `_create_hindexed_block`.
///
/// # Safety
/// `out` null or writable.
unsafe fn block(
    bl: i64,
    displs: Vec<i64>,
    bytes: bool,
    old: c_int,
    out: *mut c_int,
) -> Result<(), c_int> {
    let o = layout(old)?;
    let unit = if bytes { 1 } else { o.extent };
    let b = non_negative(bl)?;
    let parts: Vec<(isize, usize)> = displs.iter().map(|&d| (d as isize * unit, b)).collect();
    let l = blocks(&o, &parts);
    let mut ints = vec![displs.len() as i64, bl];
    // SAFETY: forwarded.
    unsafe {
        if bytes {
            finish(l, MPI_COMBINER_HINDEXED_BLOCK, ints, displs, &[old], out)
        } else {
            ints.extend(&displs);
            finish(l, MPI_COMBINER_INDEXED_BLOCK, ints, vec![], &[old], out)
        }
    }
}

/// `MPI_Type_create_struct`.
///
/// # Safety
/// `out` null or writable.
unsafe fn structure(
    bls: Vec<i64>,
    displs: Vec<i64>,
    types: Vec<c_int>,
    out: *mut c_int,
) -> Result<(), c_int> {
    let children = types
        .iter()
        .map(|&t| layout(t))
        .collect::<Result<Vec<_>, c_int>>()?;
    let parts = bls
        .iter()
        .zip(&displs)
        .zip(&children)
        .map(|((&b, &d), c)| {
            Ok(Part {
                disp: d as isize,
                count: non_negative(b)?,
                child: c,
            })
        })
        .collect::<Result<Vec<_>, c_int>>()?;
    let l = build(&parts, true);
    let mut ints = vec![bls.len() as i64];
    ints.extend(&bls);
    // SAFETY: forwarded.
    unsafe { finish(l, MPI_COMBINER_STRUCT, ints, displs, &types, out) }
}

/// `MPI_Type_create_resized`.
///
/// # Safety
/// `out` null or writable.
unsafe fn resized(old: c_int, lb: i64, extent: i64, out: *mut c_int) -> Result<(), c_int> {
    let mut l = (*layout(old)?).clone();
    l.lb = lb as isize;
    l.extent = extent as isize;
    // SAFETY: forwarded.
    unsafe {
        finish(
            l,
            MPI_COMBINER_RESIZED,
            vec![],
            vec![lb, extent],
            &[old],
            out,
        )
    }
}

/// `MPI_Type_create_subarray`: nested vectors of the sub-array, its
/// start as a displacement, and the whole array as its extent.
///
/// # Safety
/// The arrays hold `ndims` values; `out` null or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn subarray(
    sizes: Vec<i64>,
    subsizes: Vec<i64>,
    starts: Vec<i64>,
    order: c_int,
    old: c_int,
    out: *mut c_int,
) -> Result<(), c_int> {
    let o = layout(old)?;
    let nd = sizes.len();
    if nd == 0 {
        return Err(MPI_ERR_ARG);
    }
    for i in 0..nd {
        if sizes[i] <= 0 || subsizes[i] <= 0 || starts[i] < 0 || starts[i] + subsizes[i] > sizes[i]
        {
            return Err(MPI_ERR_ARG);
        }
    }
    // Dimensions from the fastest varying.
    let dims: Vec<usize> = match order {
        MPI_ORDER_C => (0..nd).rev().collect(),
        MPI_ORDER_FORTRAN => (0..nd).collect(),
        _ => return Err(MPI_ERR_ARG),
    };
    let inner = dims[0];
    let mut t = blocks(&o, &[(0, subsizes[inner] as usize)]);
    let mut disp = starts[inner] as isize * o.extent;
    let mut stride = sizes[inner] as isize * o.extent;
    for &d in &dims[1..] {
        let parts: Vec<(isize, usize)> =
            (0..subsizes[d] as isize).map(|k| (k * stride, 1)).collect();
        t = blocks(&t, &parts);
        disp += starts[d] as isize * stride;
        stride *= sizes[d] as isize;
    }
    let mut l = blocks(&t, &[(disp, 1)]);
    l.lb = o.lb;
    l.extent = stride;
    let mut ints = vec![nd as i64];
    ints.extend(&sizes);
    ints.extend(&subsizes);
    ints.extend(&starts);
    ints.push(order.into());
    // SAFETY: forwarded.
    unsafe { finish(l, MPI_COMBINER_SUBARRAY, ints, vec![], &[old], out) }
}

/// The indices of one dimension of `gsize` elements that process
/// coordinate `p` of `psize` owns, as runs `(start, length)`: `distrib`
/// `MPI_DISTRIBUTE_BLOCK` (blocks of `darg`, default `ceil(gsize /
/// psize)`), `_CYCLIC` (blocks of `darg`, default 1, dealt round) or
/// `_NONE` (all of them; `psize` must be 1).
fn owned(
    gsize: i64,
    distrib: i64,
    darg: i64,
    psize: i64,
    p: i64,
) -> Result<Vec<(i64, i64)>, c_int> {
    let dflt = darg == i64::from(MPI_DISTRIBUTE_DFLT_DARG);
    if gsize <= 0 || psize <= 0 || (!dflt && darg <= 0) {
        return Err(MPI_ERR_ARG);
    }
    match c_int::try_from(distrib) {
        Ok(MPI_DISTRIBUTE_NONE) if psize == 1 => Ok(vec![(0, gsize)]),
        Ok(MPI_DISTRIBUTE_BLOCK) => {
            let b = if dflt {
                (gsize + psize - 1) / psize
            } else {
                darg
            };
            if b.checked_mul(psize).is_none_or(|all| all < gsize) {
                return Err(MPI_ERR_ARG);
            }
            let start = (p * b).min(gsize);
            Ok(vec![(start, (start + b).min(gsize) - start)])
        }
        Ok(MPI_DISTRIBUTE_CYCLIC) => {
            let b = if dflt { 1 } else { darg };
            let step = b.checked_mul(psize).ok_or(MPI_ERR_ARG)?;
            let mut runs = Vec::new();
            let mut at = p * b;
            while at < gsize {
                runs.push((at, b.min(gsize - at)));
                at += step;
            }
            Ok(runs)
        }
        _ => Err(MPI_ERR_ARG),
    }
}

/// `MPI_Type_create_darray`: process `rank` of a row-major grid of
/// `psizes` gets, in each dimension, the indices [`owned`] says; the type
/// is those elements of the global array (in its `order`), built from the
/// fastest dimension out as nested blocks, lower bound 0 and the whole
/// array as its extent.
///
/// # Safety
/// `out` null or writable.
#[allow(clippy::too_many_arguments)]
unsafe fn darray(
    size: c_int,
    rank: c_int,
    gsizes: Vec<i64>,
    distribs: Vec<i64>,
    dargs: Vec<i64>,
    psizes: Vec<i64>,
    order: c_int,
    old: c_int,
    out: *mut c_int,
) -> Result<(), c_int> {
    let o = layout(old)?;
    let nd = gsizes.len();
    if nd == 0 || size <= 0 || rank < 0 || rank >= size {
        return Err(MPI_ERR_ARG);
    }
    if psizes.iter().try_fold(1i64, |a, &p| a.checked_mul(p)) != Some(size.into()) {
        return Err(MPI_ERR_ARG);
    }
    // The grid coordinates of `rank`, the last dimension fastest.
    let mut coords = vec![0i64; nd];
    let mut r = i64::from(rank);
    for d in (0..nd).rev() {
        coords[d] = r % psizes[d];
        r /= psizes[d];
    }
    let runs = (0..nd)
        .map(|d| owned(gsizes[d], distribs[d], dargs[d], psizes[d], coords[d]))
        .collect::<Result<Vec<_>, c_int>>()?;
    let dims: Vec<usize> = match order {
        MPI_ORDER_C => (0..nd).rev().collect(),
        MPI_ORDER_FORTRAN => (0..nd).collect(),
        _ => return Err(MPI_ERR_ARG),
    };
    let inner = dims[0];
    let step = o.extent;
    let parts: Vec<(isize, usize)> = runs[inner]
        .iter()
        .map(|&(s, n)| (s as isize * step, n as usize))
        .collect();
    let mut t = blocks(&o, &parts);
    let mut stride = gsizes[inner] as isize * step;
    for &d in &dims[1..] {
        let parts: Vec<(isize, usize)> = runs[d]
            .iter()
            .flat_map(|&(s, n)| (s..s + n).map(|i| (i as isize * stride, 1)))
            .collect();
        t = blocks(&t, &parts);
        stride = stride.checked_mul(gsizes[d] as isize).ok_or(MPI_ERR_ARG)?;
    }
    t.lb = 0;
    t.extent = stride;
    let mut ints = vec![size.into(), rank.into(), nd as i64];
    for v in [&gsizes, &distribs, &dargs, &psizes] {
        ints.extend(v.iter());
    }
    ints.push(order.into());
    // SAFETY: forwarded.
    unsafe { finish(t, MPI_COMBINER_DARRAY, ints, vec![], &[old], out) }
}

crate::mpi! {
    /// `MPI_Type_contiguous`.
    fn PMPI_Type_contiguous(count: c_int, old: c_int, new: *mut c_int) -> c_int as MPI_Type_contiguous {
        // SAFETY: MPI's contract for `new`.
        run("MPI_Type_contiguous", || unsafe { contiguous(count.into(), old, new) })
    }
}
crate::mpi! {
    /// `MPI_Type_contiguous_c`.
    fn PMPI_Type_contiguous_c(count: MPI_Count, old: c_int, new: *mut c_int) -> c_int as MPI_Type_contiguous_c {
        // SAFETY: MPI's contract for `new`.
        run("MPI_Type_contiguous_c", || unsafe { contiguous(count, old, new) })
    }
}
crate::mpi! {
    /// `MPI_Type_vector`.
    fn PMPI_Type_vector(count: c_int, bl: c_int, stride: c_int, old: c_int, new: *mut c_int) -> c_int as MPI_Type_vector {
        // SAFETY: MPI's contract for `new`.
        run("MPI_Type_vector", || unsafe { vector(count.into(), bl.into(), stride.into(), false, old, new) })
    }
}
crate::mpi! {
    /// `MPI_Type_vector_c`.
    fn PMPI_Type_vector_c(count: MPI_Count, bl: MPI_Count, stride: MPI_Count, old: c_int, new: *mut c_int) -> c_int as MPI_Type_vector_c {
        // SAFETY: MPI's contract for `new`.
        run("MPI_Type_vector_c", || unsafe { vector(count, bl, stride, false, old, new) })
    }
}
crate::mpi! {
    /// `MPI_Type_create_hvector`.
    fn PMPI_Type_create_hvector(count: c_int, bl: c_int, stride: MPI_Aint, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_hvector {
        // SAFETY: MPI's contract for `new`.
        run("MPI_Type_create_hvector", || unsafe { vector(count.into(), bl.into(), stride as i64, true, old, new) })
    }
}
crate::mpi! {
    /// `MPI_Type_hvector` (deprecated): `MPI_Type_create_hvector`.
    fn PMPI_Type_hvector(count: c_int, bl: c_int, stride: MPI_Aint, old: c_int, new: *mut c_int) -> c_int as MPI_Type_hvector {
        // SAFETY: MPI's contract for `new`.
        run("MPI_Type_hvector", || unsafe { vector(count.into(), bl.into(), stride as i64, true, old, new) })
    }
}
crate::mpi! {
    /// `MPI_Type_create_hvector_c`.
    fn PMPI_Type_create_hvector_c(count: MPI_Count, bl: MPI_Count, stride: MPI_Count, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_hvector_c {
        // SAFETY: MPI's contract for `new`.
        run("MPI_Type_create_hvector_c", || unsafe { vector(count, bl, stride, true, old, new) })
    }
}
crate::mpi! {
    /// `MPI_Type_indexed`.
    fn PMPI_Type_indexed(count: c_int, bls: *const c_int, displs: *const c_int, old: c_int, new: *mut c_int) -> c_int as MPI_Type_indexed {
        run("MPI_Type_indexed", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: the arrays hold `count` values.
            unsafe { indexed(read(bls, n)?, read(displs, n)?, false, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_indexed_c`.
    fn PMPI_Type_indexed_c(count: MPI_Count, bls: *const MPI_Count, displs: *const MPI_Count, old: c_int, new: *mut c_int) -> c_int as MPI_Type_indexed_c {
        run("MPI_Type_indexed_c", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: the arrays hold `count` values.
            unsafe { indexed(read(bls, n)?, read(displs, n)?, false, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_hindexed`.
    fn PMPI_Type_create_hindexed(count: c_int, bls: *const c_int, displs: *const MPI_Aint, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_hindexed {
        run("MPI_Type_create_hindexed", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: the arrays hold `count` values.
            unsafe { indexed(read(bls, n)?, read(displs, n)?, true, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_hindexed` (deprecated): `MPI_Type_create_hindexed`.
    fn PMPI_Type_hindexed(count: c_int, bls: *const c_int, displs: *const MPI_Aint, old: c_int, new: *mut c_int) -> c_int as MPI_Type_hindexed {
        run("MPI_Type_hindexed", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: the arrays hold `count` values.
            unsafe { indexed(read(bls, n)?, read(displs, n)?, true, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_hindexed_c`.
    fn PMPI_Type_create_hindexed_c(count: MPI_Count, bls: *const MPI_Count, displs: *const MPI_Count, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_hindexed_c {
        run("MPI_Type_create_hindexed_c", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: the arrays hold `count` values.
            unsafe { indexed(read(bls, n)?, read(displs, n)?, true, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_indexed_block`.
    fn PMPI_Type_create_indexed_block(count: c_int, bl: c_int, displs: *const c_int, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_indexed_block {
        run("MPI_Type_create_indexed_block", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: `displs` holds `count` values.
            unsafe { block(bl.into(), read(displs, n)?, false, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_indexed_block_c`.
    fn PMPI_Type_create_indexed_block_c(count: MPI_Count, bl: MPI_Count, displs: *const MPI_Count, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_indexed_block_c {
        run("MPI_Type_create_indexed_block_c", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: `displs` holds `count` values.
            unsafe { block(bl, read(displs, n)?, false, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_hindexed_block`.
    fn PMPI_Type_create_hindexed_block(count: c_int, bl: c_int, displs: *const MPI_Aint, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_hindexed_block {
        run("MPI_Type_create_hindexed_block", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: `displs` holds `count` values.
            unsafe { block(bl.into(), read(displs, n)?, true, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_hindexed_block_c`.
    fn PMPI_Type_create_hindexed_block_c(count: MPI_Count, bl: MPI_Count, displs: *const MPI_Count, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_hindexed_block_c {
        run("MPI_Type_create_hindexed_block_c", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: `displs` holds `count` values.
            unsafe { block(bl, read(displs, n)?, true, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_struct`.
    fn PMPI_Type_create_struct(count: c_int, bls: *const c_int, displs: *const MPI_Aint, types: *const c_int, new: *mut c_int) -> c_int as MPI_Type_create_struct {
        run("MPI_Type_create_struct", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: the arrays hold `count` values.
            let t = unsafe { read(types, n)? }.into_iter().map(|t| t as c_int).collect();
            // SAFETY: as above.
            unsafe { structure(read(bls, n)?, read(displs, n)?, t, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_struct` (deprecated): `MPI_Type_create_struct`.
    fn PMPI_Type_struct(count: c_int, bls: *const c_int, displs: *const MPI_Aint, types: *const c_int, new: *mut c_int) -> c_int as MPI_Type_struct {
        // SAFETY: the same contract.
        unsafe { PMPI_Type_create_struct(count, bls, displs, types, new) }
    }
}
crate::mpi! {
    /// `MPI_Type_create_struct_c`.
    fn PMPI_Type_create_struct_c(count: MPI_Count, bls: *const MPI_Count, displs: *const MPI_Count, types: *const c_int, new: *mut c_int) -> c_int as MPI_Type_create_struct_c {
        run("MPI_Type_create_struct_c", || {
            let n = count_of(count)?;
            // SAFETY: MPI's contract: the arrays hold `count` values.
            let t = unsafe { read(types, n)? }.into_iter().map(|t| t as c_int).collect();
            // SAFETY: as above.
            unsafe { structure(read(bls, n)?, read(displs, n)?, t, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_resized`.
    fn PMPI_Type_create_resized(old: c_int, lb: MPI_Aint, extent: MPI_Aint, new: *mut c_int) -> c_int as MPI_Type_create_resized {
        // SAFETY: MPI's contract for `new`.
        run("MPI_Type_create_resized", || unsafe { resized(old, lb as i64, extent as i64, new) })
    }
}
crate::mpi! {
    /// `MPI_Type_create_resized_c`.
    fn PMPI_Type_create_resized_c(old: c_int, lb: MPI_Count, extent: MPI_Count, new: *mut c_int) -> c_int as MPI_Type_create_resized_c {
        // SAFETY: MPI's contract for `new`.
        run("MPI_Type_create_resized_c", || unsafe { resized(old, lb, extent, new) })
    }
}
crate::mpi! {
    /// `MPI_Type_create_subarray`.
    fn PMPI_Type_create_subarray(ndims: c_int, sizes: *const c_int, subsizes: *const c_int, starts: *const c_int, order: c_int, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_subarray {
        run("MPI_Type_create_subarray", || {
            let n = count_of(ndims)?;
            // SAFETY: MPI's contract: the arrays hold `ndims` values.
            unsafe { subarray(read(sizes, n)?, read(subsizes, n)?, read(starts, n)?, order, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_subarray_c`.
    fn PMPI_Type_create_subarray_c(ndims: c_int, sizes: *const MPI_Count, subsizes: *const MPI_Count, starts: *const MPI_Count, order: c_int, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_subarray_c {
        run("MPI_Type_create_subarray_c", || {
            let n = count_of(ndims)?;
            // SAFETY: MPI's contract: the arrays hold `ndims` values.
            unsafe { subarray(read(sizes, n)?, read(subsizes, n)?, read(starts, n)?, order, old, new) }
        })
    }
}

crate::mpi! {
    /// `MPI_Type_create_darray`.
    fn PMPI_Type_create_darray(size: c_int, rank: c_int, ndims: c_int, gsizes: *const c_int, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_darray {
        run("MPI_Type_create_darray", || {
            let n = count_of(ndims)?;
            // SAFETY: MPI's contract: the arrays hold `ndims` values.
            unsafe { darray(size, rank, read(gsizes, n)?, read(distribs, n)?, read(dargs, n)?, read(psizes, n)?, order, old, new) }
        })
    }
}
crate::mpi! {
    /// `MPI_Type_create_darray_c`.
    fn PMPI_Type_create_darray_c(size: c_int, rank: c_int, ndims: c_int, gsizes: *const MPI_Count, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, old: c_int, new: *mut c_int) -> c_int as MPI_Type_create_darray_c {
        run("MPI_Type_create_darray_c", || {
            let n = count_of(ndims)?;
            // SAFETY: MPI's contract: the arrays hold `ndims` values.
            unsafe { darray(size, rank, read(gsizes, n)?, read(distribs, n)?, read(dargs, n)?, read(psizes, n)?, order, old, new) }
        })
    }
}

crate::mpi! {
    /// `MPI_Type_dup`: the same layout and committed state.
    fn PMPI_Type_dup(old: c_int, new: *mut c_int) -> c_int as MPI_Type_dup {
        run("MPI_Type_dup", || {
            let o = layout(old)?;
            let committed = o.committed;
            // SAFETY: MPI's contract for `new`.
            unsafe { finish((*o).clone(), MPI_COMBINER_DUP, vec![], vec![], &[old], new) }?;
            // SAFETY: just written.
            let h = unsafe { *new };
            update(h, |t| t.committed = committed)?;
            crate::typeextra::copy_attrs(old, h)
        })
    }
}

/// Reads a handle through a pointer.
///
/// # Safety
/// `p` null or readable.
unsafe fn handle(p: *const c_int) -> Result<c_int, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: checked non-null; readable by the caller's contract.
    Ok(unsafe { *p })
}

crate::mpi! {
    /// `MPI_Type_commit` (of a predefined type: nothing to do).
    fn PMPI_Type_commit(ty: *mut c_int) -> c_int as MPI_Type_commit {
        run("MPI_Type_commit", || {
            // SAFETY: MPI's contract: `ty` readable.
            let h = unsafe { handle(ty) }?;
            if layout(h)?.predefined {
                return Ok(());
            }
            update(h, |l| l.committed = true)
        })
    }
}

crate::mpi! {
    /// `MPI_Type_free`: the handle becomes `MPI_DATATYPE_NULL` (types
    /// made of it, and operations under way, keep its layout). A
    /// predefined type is `MPI_ERR_TYPE`.
    fn PMPI_Type_free(ty: *mut c_int) -> c_int as MPI_Type_free {
        run("MPI_Type_free", || {
            // SAFETY: MPI's contract: `ty` readable and writable.
            let h = unsafe { handle(ty) }?;
            if layout(h)?.predefined {
                return Err(MPI_ERR_TYPE);
            }
            crate::typeextra::delete_attrs(h)?;
            remove(h)?;
            // SAFETY: as above.
            unsafe { *ty = MPI_DATATYPE_NULL };
            Ok(())
        })
    }
}

/// Writes `v` through `p` (`MPI_ERR_ARG` when null).
///
/// # Safety
/// `p` null or writable.
unsafe fn put<T>(p: *mut T, v: T) -> Result<(), c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

crate::mpi! {
    /// `MPI_Type_get_envelope` (`MPI_ERR_TYPE` for a type with large
    /// counts: `MPI_Type_get_envelope_c` gives them).
    fn PMPI_Type_get_envelope(ty: c_int, ni: *mut c_int, na: *mut c_int, nd: *mut c_int, combiner: *mut c_int) -> c_int as MPI_Type_get_envelope {
        run("MPI_Type_get_envelope", || {
            let l = layout(ty)?;
            let c = &l.contents;
            if !c.large.is_empty() {
                return Err(MPI_ERR_TYPE);
            }
            // SAFETY: MPI's contract: the out-pointers are writable.
            unsafe {
                put(ni, c.ints.len() as c_int)?;
                put(na, c.addrs.len() as c_int)?;
                put(nd, c.types.len() as c_int)?;
                put(combiner, c.combiner)
            }
        })
    }
}

/// Writes `ty`'s contents: `max` bounds the ints, addresses, large counts
/// and types (`large` null: the `int` form, for a type without large
/// counts); a derived type among the types is a new handle (the program
/// frees it), as MPI says.
///
/// # Safety
/// Each array holds its `max` values.
pub(crate) unsafe fn contents(
    ty: c_int,
    max: [MPI_Count; 4],
    ints: *mut c_int,
    addrs: *mut MPI_Aint,
    large: *mut MPI_Count,
    types: *mut c_int,
) -> Result<(), c_int> {
    let l = layout(ty)?;
    let c = l.contents.clone();
    if c.combiner == MPI_COMBINER_NAMED || (large.is_null() && !c.large.is_empty()) {
        return Err(MPI_ERR_TYPE);
    }
    let lens = [c.ints.len(), c.addrs.len(), c.large.len(), c.types.len()];
    if max
        .iter()
        .zip(lens)
        .any(|(&m, n)| m < 0 || (m as u64) < n as u64)
    {
        return Err(MPI_ERR_ARG);
    }
    for (i, &v) in c.ints.iter().enumerate() {
        // SAFETY: by the caller's contract: `ints` holds `max[0]` values.
        unsafe { put(ints.add(i), v) }?;
    }
    for (i, &v) in c.addrs.iter().enumerate() {
        // SAFETY: as above, `addrs`.
        unsafe { put(addrs.add(i), v) }?;
    }
    for (i, &v) in c.large.iter().enumerate() {
        // SAFETY: as above, `large`.
        unsafe { put(large.add(i), v) }?;
    }
    for (i, (h, derived)) in c.types.iter().enumerate() {
        let h = match derived {
            Some(d) => add((**d).clone())?,
            None => *h,
        };
        // SAFETY: as above, `types`.
        unsafe { put(types.add(i), h) }?;
    }
    Ok(())
}

crate::mpi! {
    /// `MPI_Type_get_contents`.
    fn PMPI_Type_get_contents(ty: c_int, max_ints: c_int, max_addrs: c_int, max_types: c_int,
        ints: *mut c_int, addrs: *mut MPI_Aint, types: *mut c_int) -> c_int as MPI_Type_get_contents {
        let max = [max_ints.into(), max_addrs.into(), 0, max_types.into()];
        // SAFETY: MPI's contract: each array holds its `max_` values.
        run("MPI_Type_get_contents", || unsafe { contents(ty, max, ints, addrs, std::ptr::null_mut(), types) })
    }
}

/// The names the program gave predefined types.
static RENAMED: Serial<std::cell::RefCell<std::collections::BTreeMap<c_int, Vec<u8>>>> =
    Serial::new(std::cell::RefCell::new(std::collections::BTreeMap::new()));

crate::mpi! {
    /// `MPI_Type_set_name` (cut to `MPI_MAX_OBJECT_NAME - 1` bytes; a
    /// predefined type's new name is this process's, as MPICH allows).
    fn PMPI_Type_set_name(ty: c_int, name: *const c_char) -> c_int as MPI_Type_set_name {
        run("MPI_Type_set_name", || {
            // SAFETY: MPI's contract: a C string.
            let n = unsafe { crate::info::c_bytes(name) }?;
            let n = n[..n.len().min(crate::info::MPI_MAX_OBJECT_NAME - 1)].to_vec();
            if layout(ty)?.predefined {
                RENAMED.with(|r| r.borrow_mut().insert(ty, n));
                return Ok(());
            }
            update(ty, |l| l.name = n)
        })
    }
}

crate::mpi! {
    /// `MPI_Type_get_name`: the empty string for a type never named
    /// (`MPI_DATATYPE_NULL` is named so, as in MPICH).
    fn PMPI_Type_get_name(ty: c_int, name: *mut c_char, len: *mut c_int) -> c_int as MPI_Type_get_name {
        run("MPI_Type_get_name", || {
            if ty == MPI_DATATYPE_NULL {
                // SAFETY: as below.
                return unsafe {
                    crate::info::write_c(b"MPI_DATATYPE_NULL", name, crate::info::MPI_MAX_OBJECT_NAME)?;
                    put(len, 17)
                };
            }
            let l = layout(ty)?;
            let n = RENAMED.with(|r| r.borrow().get(&ty).cloned()).unwrap_or_else(|| l.name.clone());
            // SAFETY: MPI's contract: `name` holds MPI_MAX_OBJECT_NAME
            // bytes, `len` is writable.
            unsafe {
                crate::info::write_c(&n, name, crate::info::MPI_MAX_OBJECT_NAME)?;
                put(len, n.len() as c_int)
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Type_match_size`: a C type of the class and size.
    fn PMPI_Type_match_size(class: c_int, size: c_int, ty: *mut c_int) -> c_int as MPI_Type_match_size {
        run("MPI_Type_match_size", || {
            let t = match (class, size) {
                (MPI_TYPECLASS_INTEGER, 1) => MPI_SIGNED_CHAR,
                (MPI_TYPECLASS_INTEGER, 2) => MPI_SHORT,
                (MPI_TYPECLASS_INTEGER, 4) => MPI_INT,
                (MPI_TYPECLASS_INTEGER, 8) => MPI_LONG,
                (MPI_TYPECLASS_REAL, 4) => MPI_FLOAT,
                (MPI_TYPECLASS_REAL, 8) => MPI_DOUBLE,
                (MPI_TYPECLASS_REAL, 16) => MPI_LONG_DOUBLE,
                (MPI_TYPECLASS_COMPLEX, 8) => MPI_C_FLOAT_COMPLEX,
                (MPI_TYPECLASS_COMPLEX, 16) => MPI_C_DOUBLE_COMPLEX,
                (MPI_TYPECLASS_COMPLEX, 32) => MPI_C_LONG_DOUBLE_COMPLEX,
                _ => return Err(MPI_ERR_ARG),
            };
            // SAFETY: MPI's contract: `ty` writable.
            unsafe { put(ty, t) }
        })
    }
}

/// The deprecated bound queries: which of lb, ub, extent.
///
/// # Safety
/// `out` null or writable.
unsafe fn old_bound(ty: c_int, out: *mut MPI_Aint, which: u8, what: &str) -> c_int {
    run(what, || {
        let l = layout(ty)?;
        let v = match which {
            0 => l.lb,
            1 => l.lb + l.extent,
            _ => l.extent,
        };
        // SAFETY: by the caller's contract.
        unsafe { put(out, v) }
    })
}

crate::mpi! {
    /// `MPI_Type_lb` (deprecated).
    fn PMPI_Type_lb(ty: c_int, lb: *mut MPI_Aint) -> c_int as MPI_Type_lb {
        // SAFETY: MPI's contract for `lb`.
        unsafe { old_bound(ty, lb, 0, "MPI_Type_lb") }
    }
}
crate::mpi! {
    /// `MPI_Type_ub` (deprecated).
    fn PMPI_Type_ub(ty: c_int, ub: *mut MPI_Aint) -> c_int as MPI_Type_ub {
        // SAFETY: MPI's contract for `ub`.
        unsafe { old_bound(ty, ub, 1, "MPI_Type_ub") }
    }
}
crate::mpi! {
    /// `MPI_Type_extent` (deprecated).
    fn PMPI_Type_extent(ty: c_int, extent: *mut MPI_Aint) -> c_int as MPI_Type_extent {
        // SAFETY: MPI's contract for `extent`.
        unsafe { old_bound(ty, extent, 2, "MPI_Type_extent") }
    }
}

/// The size of basic element `t`.
fn prim_size(t: c_int) -> usize {
    builtin_size(t).unwrap_or(1)
}

/// How many basic elements of `l` the first `len` bytes of packed data
/// hold; `None` when they end inside one.
pub(crate) fn elements_in(l: &Layout, len: u64) -> Option<u64> {
    if l.size == 0 {
        return Some(0);
    }
    let per: u64 = l.prims.iter().map(|&(_, n)| n as u64).sum();
    let mut count = len / l.size as u64 * per;
    let mut rest = len % l.size as u64;
    for &(t, n) in &l.prims {
        let es = prim_size(t) as u64;
        let k = (rest / es).min(n as u64);
        count += k;
        rest -= k * es;
        if k < n as u64 {
            break;
        }
    }
    (rest == 0).then_some(count)
}

/// The packed length of the first `n` basic elements of `l`s.
pub(crate) fn bytes_of_elements(l: &Layout, n: u64) -> Option<u64> {
    let per: u64 = l.prims.iter().map(|&(_, k)| k as u64).sum();
    if per == 0 {
        return (n == 0).then_some(0);
    }
    let mut bytes = (n / per).checked_mul(l.size as u64)?;
    let mut rest = n % per;
    for &(t, k) in &l.prims {
        let take = rest.min(k as u64);
        bytes += take * prim_size(t) as u64;
        rest -= take;
    }
    Some(bytes)
}

/// `MPI_Pack` and its forms: packs `count` elements at `*position` of
/// `out` (`outsize` bytes), moving the position on; `external`: in
/// big-endian order.
///
/// # Safety
/// MPI's contract for the buffers; `position` readable and writable.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_to<P: Copy + TryInto<usize> + TryFrom<usize>>(
    inbuf: *const c_void,
    count: i64,
    ty: c_int,
    out: *mut c_void,
    outsize: i64,
    position: *mut P,
    external: bool,
) -> Result<(), c_int> {
    let t = usable(ty)?;
    let n = non_negative(count)?;
    // SAFETY: MPI's contract: `inbuf` holds `count` elements.
    let data = unsafe { SendBuf::new(inbuf, n, &t) }?;
    let mut bytes = data.bytes().to_vec();
    if external {
        let l = layout(ty)?;
        swap(&l, &mut bytes);
    }
    // SAFETY: by the caller's contract.
    let pos: usize = unsafe { handle_pos(position) }?;
    let end = pos.checked_add(bytes.len()).ok_or(MPI_ERR_COUNT)?;
    if end as i64 > outsize {
        return Err(MPI_ERR_TRUNCATE);
    }
    if !bytes.is_empty() {
        // SAFETY: `out` holds `outsize >= end` bytes by MPI's contract.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>().add(pos), bytes.len())
        };
    }
    // SAFETY: by the caller's contract.
    unsafe { *position = P::try_from(end).map_err(|_| MPI_ERR_COUNT)? };
    Ok(())
}

/// Reads a position.
///
/// # Safety
/// `p` null or readable.
unsafe fn handle_pos<P: Copy + TryInto<usize>>(p: *const P) -> Result<usize, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: checked non-null; readable by the caller's contract.
    unsafe { *p }.try_into().map_err(|_| MPI_ERR_ARG)
}

/// `MPI_Unpack` and its forms.
///
/// # Safety
/// MPI's contract for the buffers; `position` readable and writable.
#[allow(clippy::too_many_arguments)]
unsafe fn unpack_from<P: Copy + TryInto<usize> + TryFrom<usize>>(
    inbuf: *const c_void,
    insize: i64,
    position: *mut P,
    out: *mut c_void,
    count: i64,
    ty: c_int,
    external: bool,
) -> Result<(), c_int> {
    let t = usable(ty)?;
    let n = non_negative(count)?;
    // SAFETY: by the caller's contract.
    let pos = unsafe { handle_pos(position) }?;
    let len = t.bytes(n)?;
    let end = pos.checked_add(len).ok_or(MPI_ERR_COUNT)?;
    if end as i64 > insize {
        return Err(MPI_ERR_TRUNCATE);
    }
    // SAFETY: MPI's contract: `inbuf` holds `insize >= end` bytes.
    let mut bytes = unsafe { crate::p2p::slice(inbuf.cast::<u8>().add(pos).cast(), len) }.to_vec();
    if external {
        let l = layout(ty)?;
        swap(&l, &mut bytes);
    }
    // SAFETY: MPI's contract: `out` holds `count` elements.
    let mut into = unsafe { RecvBuf::new(out, n, &t) }?;
    into.bytes_mut().copy_from_slice(&bytes);
    into.finish(len);
    // SAFETY: by the caller's contract.
    unsafe { *position = P::try_from(end).map_err(|_| MPI_ERR_COUNT)? };
    Ok(())
}

/// Reverses the bytes of every basic element of packed data (native
/// little-endian to "external32" big-endian and back; a complex number's
/// parts each).
fn swap(l: &Layout, data: &mut [u8]) {
    let mut at = 0;
    while at < data.len() {
        let before = at;
        for &(t, n) in &l.prims {
            let es = prim_size(t);
            let unit = match t {
                MPI_C_FLOAT_COMPLEX | MPI_C_DOUBLE_COMPLEX | MPI_C_LONG_DOUBLE_COMPLEX => es / 2,
                _ => es,
            };
            for _ in 0..n * (es / unit.max(1)) {
                if at + unit > data.len() {
                    return;
                }
                data[at..at + unit].reverse();
                at += unit;
            }
        }
        if at == before {
            return;
        }
    }
}

/// Checks a data representation's name: only `"external32"`.
///
/// # Safety
/// `rep` a C string or null.
unsafe fn external32(rep: *const c_char) -> Result<(), c_int> {
    // SAFETY: by the caller's contract.
    match unsafe { crate::info::c_bytes(rep) }? {
        b"external32" => Ok(()),
        _ => Err(MPI_ERR_UNSUPPORTED_DATAREP),
    }
}

crate::mpi! {
    /// `MPI_Pack`.
    fn PMPI_Pack(inbuf: *const c_void, count: c_int, ty: c_int, out: *mut c_void, outsize: c_int, position: *mut c_int, comm: c_int) -> c_int as MPI_Pack {
        // SAFETY: MPI's contract for the buffers.
        match crate::check::comm(comm).and_then(|_| unsafe { pack_to(inbuf, count.into(), ty, out, outsize.into(), position, false) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Pack", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Pack_c`.
    fn PMPI_Pack_c(inbuf: *const c_void, count: MPI_Count, ty: c_int, out: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count, comm: c_int) -> c_int as MPI_Pack_c {
        // SAFETY: MPI's contract for the buffers.
        match crate::check::comm(comm).and_then(|_| unsafe { pack_to(inbuf, count, ty, out, outsize, position, false) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Pack_c", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Unpack`.
    fn PMPI_Unpack(inbuf: *const c_void, insize: c_int, position: *mut c_int, out: *mut c_void, count: c_int, ty: c_int, comm: c_int) -> c_int as MPI_Unpack {
        // SAFETY: MPI's contract for the buffers.
        match crate::check::comm(comm).and_then(|_| unsafe { unpack_from(inbuf, insize.into(), position, out, count.into(), ty, false) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Unpack", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Unpack_c`.
    fn PMPI_Unpack_c(inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, out: *mut c_void, count: MPI_Count, ty: c_int, comm: c_int) -> c_int as MPI_Unpack_c {
        // SAFETY: MPI's contract for the buffers.
        match crate::check::comm(comm).and_then(|_| unsafe { unpack_from(inbuf, insize, position, out, count, ty, false) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Unpack_c", code),
        }
    }
}

/// `MPI_Pack_size` and the external form: `count` times the type's size
/// (the packed form carries no header).
fn pack_size(count: i64, ty: c_int) -> Result<i64, c_int> {
    let l = layout(ty)?;
    let n = non_negative(count)?;
    let b = n.checked_mul(l.size).ok_or(MPI_ERR_COUNT)?;
    i64::try_from(b).map_err(|_| MPI_ERR_COUNT)
}

crate::mpi! {
    /// `MPI_Pack_size`.
    fn PMPI_Pack_size(count: c_int, ty: c_int, comm: c_int, size: *mut c_int) -> c_int as MPI_Pack_size {
        let r = crate::check::comm(comm)
            .and_then(|_| pack_size(count.into(), ty))
            .and_then(|n| c_int::try_from(n).map_err(|_| MPI_ERR_COUNT))
            // SAFETY: MPI's contract: `size` writable.
            .and_then(|n| unsafe { put(size, n) });
        match r {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Pack_size", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Pack_size_c`.
    fn PMPI_Pack_size_c(count: MPI_Count, ty: c_int, comm: c_int, size: *mut MPI_Count) -> c_int as MPI_Pack_size_c {
        // SAFETY: MPI's contract: `size` writable.
        match crate::check::comm(comm).and_then(|_| pack_size(count, ty)).and_then(|n| unsafe { put(size, n) }) {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(comm, "MPI_Pack_size_c", code),
        }
    }
}
crate::mpi! {
    /// `MPI_Pack_external` (`"external32"`: big-endian, the same sizes).
    fn PMPI_Pack_external(rep: *const c_char, inbuf: *const c_void, count: c_int, ty: c_int, out: *mut c_void, outsize: MPI_Aint, position: *mut MPI_Aint) -> c_int as MPI_Pack_external {
        run("MPI_Pack_external", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                pack_to(inbuf, count.into(), ty, out, outsize as i64, position, true)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Pack_external_c`.
    fn PMPI_Pack_external_c(rep: *const c_char, inbuf: *const c_void, count: MPI_Count, ty: c_int, out: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count) -> c_int as MPI_Pack_external_c {
        run("MPI_Pack_external_c", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                pack_to(inbuf, count, ty, out, outsize, position, true)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Unpack_external`.
    fn PMPI_Unpack_external(rep: *const c_char, inbuf: *const c_void, insize: MPI_Aint, position: *mut MPI_Aint, out: *mut c_void, count: c_int, ty: c_int) -> c_int as MPI_Unpack_external {
        run("MPI_Unpack_external", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                unpack_from(inbuf, insize as i64, position, out, count.into(), ty, true)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Unpack_external_c`.
    fn PMPI_Unpack_external_c(rep: *const c_char, inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, out: *mut c_void, count: MPI_Count, ty: c_int) -> c_int as MPI_Unpack_external_c {
        run("MPI_Unpack_external_c", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                unpack_from(inbuf, insize, position, out, count, ty, true)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Pack_external_size`.
    fn PMPI_Pack_external_size(rep: *const c_char, count: c_int, ty: c_int, size: *mut MPI_Aint) -> c_int as MPI_Pack_external_size {
        run("MPI_Pack_external_size", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                put(size, pack_size(count.into(), ty)? as MPI_Aint)
            }
        })
    }
}
crate::mpi! {
    /// `MPI_Pack_external_size_c`.
    fn PMPI_Pack_external_size_c(rep: *const c_char, count: MPI_Count, ty: c_int, size: *mut MPI_Count) -> c_int as MPI_Pack_external_size_c {
        run("MPI_Pack_external_size_c", || {
            // SAFETY: MPI's contract for the arguments.
            unsafe {
                external32(rep)?;
                put(size, pack_size(count, ty)?)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DFLT: i64 = MPI_DISTRIBUTE_DFLT_DARG as i64;
    const BLOCK: i64 = MPI_DISTRIBUTE_BLOCK as i64;
    const CYCLIC: i64 = MPI_DISTRIBUTE_CYCLIC as i64;
    const NONE: i64 = MPI_DISTRIBUTE_NONE as i64;

    #[test]
    fn a_dimension_is_dealt_as_its_distribution_says() {
        // 10 in default blocks over 3: 4, 4, 2.
        assert_eq!(owned(10, BLOCK, DFLT, 3, 0), Ok(vec![(0, 4)]));
        assert_eq!(owned(10, BLOCK, DFLT, 3, 2), Ok(vec![(8, 2)]));
        // Blocks of 5 over 3: the last process has none.
        assert_eq!(owned(10, BLOCK, 5, 3, 2), Ok(vec![(10, 0)]));
        assert_eq!(owned(10, BLOCK, 3, 3, 0), Err(MPI_ERR_ARG));
        // Cyclic blocks of 2 over 3: 0-1, 6-7; 2-3, 8-9; 4-5.
        assert_eq!(owned(10, CYCLIC, 2, 3, 0), Ok(vec![(0, 2), (6, 2)]));
        assert_eq!(owned(10, CYCLIC, 2, 3, 1), Ok(vec![(2, 2), (8, 2)]));
        assert_eq!(owned(10, CYCLIC, 2, 3, 2), Ok(vec![(4, 2)]));
        // Cyclic blocks of 4 over 2: the last block is cut.
        assert_eq!(owned(10, CYCLIC, 4, 2, 0), Ok(vec![(0, 4), (8, 2)]));
        assert_eq!(owned(3, CYCLIC, DFLT, 2, 1), Ok(vec![(1, 1)]));
        assert_eq!(owned(7, NONE, DFLT, 1, 0), Ok(vec![(0, 7)]));
        assert_eq!(owned(7, NONE, DFLT, 2, 0), Err(MPI_ERR_ARG));
        assert_eq!(owned(7, 99, DFLT, 1, 0), Err(MPI_ERR_ARG));
    }

    #[test]
    fn large_counts_are_split_as_mpi_orders_them() {
        let big = 1i64 << 33;
        assert_eq!(
            large_counts(MPI_COMBINER_HVECTOR, vec![big, 2], vec![16]),
            (vec![], vec![], vec![big, 2, 16])
        );
        // Subarray: ndims and order stay ints.
        assert_eq!(
            large_counts(MPI_COMBINER_SUBARRAY, vec![1, big, 3, 4, 56], vec![]),
            (vec![1, 56], vec![], vec![big, 3, 4])
        );
        // Darray: only gsizes are large counts.
        let ints = vec![4, 1, 2, big, 5, 121, 122, -49767, 2, 2, 2, 56];
        assert_eq!(
            large_counts(MPI_COMBINER_DARRAY, ints, vec![]),
            (
                vec![4, 1, 2, 121, 122, -49767, 2, 2, 2, 56],
                vec![],
                vec![big, 5]
            )
        );
    }
}
