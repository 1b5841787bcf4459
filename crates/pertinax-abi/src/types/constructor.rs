//! The datatype constructors: each builds a [`Layout`] from its
//! arguments, records them as the type's contents
//! (`MPI_Type_get_envelope`/`_get_contents`) and registers the new
//! type, uncommitted.

use std::ffi::c_int;
use std::rc::Rc;

use super::{non_negative, read, run};
use crate::consts::*;
use crate::datatype::{add, build, count_of, layout, update, Contents, Layout, Part};
use crate::large::MPI_Count;
use crate::MPI_Aint;

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
