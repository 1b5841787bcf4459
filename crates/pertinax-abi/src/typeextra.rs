//! More datatype calls: the large-count envelope and contents
//! (`MPI_Type_get_envelope_c`, `_get_contents_c`: a type has large counts
//! when a `_c` constructor was given a count past `int`; else its counts
//! are in its integers), `MPI_Get_address` (and the
//! deprecated `MPI_Address`), `MPI_Type_get_value_index` (the predefined
//! pair types), `MPI_Type_create_f90_integer`/`_real`/`_complex` (the
//! Fortran type of the range and precision, as a type of the F90
//! combiner that counts as predefined, one per request), and attributes
//! on datatypes (`MPI_Type_create_keyval`, `_free_keyval`, `_set_attr`,
//! `_get_attr`, `_delete_attr`: the keyvals are the communicators' kind;
//! attributes are copied by `MPI_Type_dup` and deleted by
//! `MPI_Type_free`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::rc::Rc;

use crate::check::out as put;
use crate::consts::*;
use crate::datatype::{add, layout, Contents};
use crate::errors::raise;
use crate::large::MPI_Count;
use crate::serial::Serial;
use crate::state;
use crate::MPI_Aint;

/// Runs a datatype call; an error class goes to the world's handler.
fn run(what: &str, f: impl FnOnce() -> Result<(), c_int>) -> c_int {
    match f() {
        Ok(()) => MPI_SUCCESS,
        Err(code) => raise(MPI_COMM_WORLD, what, code),
    }
}

/// An `int` form's return code as a `Result` (raised already).
fn rc(code: c_int) -> Result<(), c_int> {
    if code == MPI_SUCCESS {
        Ok(())
    } else {
        Err(code)
    }
}

crate::mpi! {
    /// `MPI_Type_get_envelope_c`: large counts for a type whose counts do
    /// not fit an `int`.
    fn PMPI_Type_get_envelope_c(ty: c_int, ni: *mut MPI_Count, na: *mut MPI_Count, nl: *mut MPI_Count, nd: *mut MPI_Count, combiner: *mut c_int) -> c_int as MPI_Type_get_envelope_c {
        run("MPI_Type_get_envelope_c", || {
            let l = layout(ty)?;
            let c = &l.contents;
            // SAFETY: MPI's contract: the out-pointers are writable.
            unsafe {
                put(ni, c.ints.len() as MPI_Count)?;
                put(na, c.addrs.len() as MPI_Count)?;
                put(nl, c.large.len() as MPI_Count)?;
                put(nd, c.types.len() as MPI_Count)?;
                put(combiner, c.combiner)
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Type_get_contents_c`.
    fn PMPI_Type_get_contents_c(ty: c_int, max_ints: MPI_Count, max_addrs: MPI_Count, max_large: MPI_Count, max_types: MPI_Count,
        ints: *mut c_int, addrs: *mut MPI_Aint, large: *mut MPI_Count, types: *mut c_int) -> c_int as MPI_Type_get_contents_c {
        // SAFETY: MPI's contract: each array holds its `max_` values.
        run("MPI_Type_get_contents_c", || unsafe { crate::types::contents(ty, [max_ints, max_addrs, max_large, max_types], ints, addrs, large, types) })
    }
}

crate::mpi! {
    /// `MPI_Get_address`: the address itself.
    fn PMPI_Get_address(location: *const c_void, address: *mut MPI_Aint) -> c_int as MPI_Get_address {
        // SAFETY: MPI's contract: `address` writable.
        run("MPI_Get_address", || unsafe { put(address, location as MPI_Aint) })
    }
}

crate::mpi! {
    /// `MPI_Address` (deprecated): `MPI_Get_address`.
    fn PMPI_Address(location: *mut c_void, address: *mut MPI_Aint) -> c_int as MPI_Address {
        // SAFETY: MPI's contract: `address` writable.
        run("MPI_Address", || unsafe { put(address, location as MPI_Aint) })
    }
}

crate::mpi! {
    /// `MPI_Type_get_value_index`: the predefined pair type of a value
    /// type and `MPI_INT`, `MPI_DATATYPE_NULL` for any other pair.
    fn PMPI_Type_get_value_index(value: c_int, index: c_int, pair: *mut c_int) -> c_int as MPI_Type_get_value_index {
        run("MPI_Type_get_value_index", || {
            layout(value)?;
            layout(index)?;
            let p = match (value, index) {
                (MPI_FLOAT, MPI_INT) => MPI_FLOAT_INT,
                (MPI_DOUBLE, MPI_INT) => MPI_DOUBLE_INT,
                (MPI_LONG, MPI_INT) => MPI_LONG_INT,
                (MPI_SHORT, MPI_INT) => MPI_SHORT_INT,
                (MPI_INT, MPI_INT) => MPI_2INT,
                (MPI_LONG_DOUBLE, MPI_INT) => MPI_LONG_DOUBLE_INT,
                _ => MPI_DATATYPE_NULL,
            };
            // SAFETY: MPI's contract: `pair` writable.
            unsafe { put(pair, p) }
        })
    }
}

/// An F90 type's (combiner, p, r).
type F90Key = (c_int, c_int, c_int);
/// An attribute: (keyval, value).
type Attr = (c_int, *mut c_void);

/// The F90 types made so far: (combiner, p, r) to handle.
static F90: Serial<RefCell<BTreeMap<F90Key, c_int>>> = Serial::new(RefCell::new(BTreeMap::new()));
/// Datatypes' attributes: type handle to (keyval, value), in the order
/// set.
static ATTRS: Serial<RefCell<BTreeMap<c_int, Vec<Attr>>>> =
    Serial::new(RefCell::new(BTreeMap::new()));

/// The F90 type of `combiner` for (`p`, `r`) standing for predefined
/// `base`: made once, then the same handle.
///
/// # Safety
/// `out` null or writable.
unsafe fn f90(
    combiner: c_int,
    p: c_int,
    r: c_int,
    base: c_int,
    out: *mut c_int,
) -> Result<(), c_int> {
    let key = (combiner, p, r);
    let h = match F90.with(|m| m.borrow().get(&key).copied()) {
        Some(h) => h,
        None => {
            let mut l = (*layout(base)?).clone();
            l.contents = Rc::new(Contents {
                combiner,
                ints: if combiner == MPI_COMBINER_F90_INTEGER {
                    vec![r]
                } else {
                    vec![p, r]
                },
                addrs: Vec::new(),
                large: Vec::new(),
                types: Vec::new(),
            });
            l.committed = true;
            l.predefined = true;
            let h = add(l)?;
            F90.with(|m| m.borrow_mut().insert(key, h));
            h
        }
    };
    // SAFETY: by the caller's contract.
    unsafe { put(out, h) }
}

/// Whether `v` is at most `limit` (`MPI_UNDEFINED`: no requirement).
fn within(v: c_int, limit: c_int) -> bool {
    v == MPI_UNDEFINED || (0..=limit).contains(&v)
}

crate::mpi! {
    /// `MPI_Type_create_f90_integer`: the smallest `INTEGERn` with
    /// decimal range `r` (`MPI_ERR_ARG` past `INTEGER8`'s 18).
    fn PMPI_Type_create_f90_integer(r: c_int, ty: *mut c_int) -> c_int as MPI_Type_create_f90_integer {
        run("MPI_Type_create_f90_integer", || {
            let base = match r {
                ..=2 => MPI_INTEGER1,
                3..=4 => MPI_INTEGER2,
                5..=9 => MPI_INTEGER4,
                10..=18 => MPI_INTEGER8,
                _ => return Err(MPI_ERR_ARG),
            };
            // SAFETY: MPI's contract: `ty` writable.
            unsafe { f90(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, base, ty) }
        })
    }
}

/// The real kind of precision `p` and range `r`: `REAL4` or `REAL8`.
fn real_kind(p: c_int, r: c_int) -> Result<bool, c_int> {
    if p == MPI_UNDEFINED && r == MPI_UNDEFINED {
        return Err(MPI_ERR_ARG);
    }
    if within(p, 6) && within(r, 37) {
        Ok(false)
    } else if within(p, 15) && within(r, 307) {
        Ok(true)
    } else {
        Err(MPI_ERR_ARG)
    }
}

crate::mpi! {
    /// `MPI_Type_create_f90_real`: `REAL4` or `REAL8`.
    fn PMPI_Type_create_f90_real(p: c_int, r: c_int, ty: *mut c_int) -> c_int as MPI_Type_create_f90_real {
        run("MPI_Type_create_f90_real", || {
            let base = if real_kind(p, r)? { MPI_REAL8 } else { MPI_REAL4 };
            // SAFETY: MPI's contract: `ty` writable.
            unsafe { f90(MPI_COMBINER_F90_REAL, p, r, base, ty) }
        })
    }
}

crate::mpi! {
    /// `MPI_Type_create_f90_complex`: `COMPLEX8` or `COMPLEX16`.
    fn PMPI_Type_create_f90_complex(p: c_int, r: c_int, ty: *mut c_int) -> c_int as MPI_Type_create_f90_complex {
        run("MPI_Type_create_f90_complex", || {
            let base = if real_kind(p, r)? { MPI_COMPLEX16 } else { MPI_COMPLEX8 };
            // SAFETY: MPI's contract: `ty` writable.
            unsafe { f90(MPI_COMBINER_F90_COMPLEX, p, r, base, ty) }
        })
    }
}

/// User keyval `k`.
fn keyval(k: c_int) -> Result<state::Keyval, c_int> {
    state::keyval_index(k)
        .and_then(|i| state::with(|s| s.keyvals.get(i).copied().flatten()).flatten())
        .ok_or(MPI_ERR_KEYVAL)
}

/// Runs keyval `k`'s delete function on `ty`'s `value` (no state
/// borrowed).
fn run_delete(ty: c_int, k: c_int, value: *mut c_void) -> Result<(), c_int> {
    if let Ok(state::Keyval {
        delete: Some(f),
        extra,
        ..
    }) = keyval(k)
    {
        // SAFETY: the program registered `f` for this signature.
        rc(unsafe { f(ty, k, value, extra) })?;
    }
    Ok(())
}

/// Deletes every attribute of `ty` (`MPI_Type_free`), in the reverse
/// order of setting.
pub(crate) fn delete_attrs(ty: c_int) -> Result<(), c_int> {
    let attrs = ATTRS
        .with(|a| a.borrow_mut().remove(&ty))
        .unwrap_or_default();
    for (k, v) in attrs.into_iter().rev() {
        run_delete(ty, k, v)?;
    }
    Ok(())
}

/// Copies `from`'s attributes to `to` through their copy functions
/// (`MPI_Type_dup`).
pub(crate) fn copy_attrs(from: c_int, to: c_int) -> Result<(), c_int> {
    let attrs = ATTRS
        .with(|a| a.borrow().get(&from).cloned())
        .unwrap_or_default();
    for (k, v) in attrs {
        let Ok(state::Keyval {
            copy: Some(f),
            extra,
            ..
        }) = keyval(k)
        else {
            continue;
        };
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: the program registered `f` for this signature.
        rc(unsafe {
            f(
                from,
                k,
                extra,
                v,
                (&mut out as *mut *mut c_void).cast(),
                &mut flag,
            )
        })?;
        if flag != 0 {
            set(to, k, out)?;
        }
    }
    Ok(())
}

/// Sets (or replaces, deleting the old value first) attribute `k` of
/// `ty`.
fn set(ty: c_int, k: c_int, value: *mut c_void) -> Result<(), c_int> {
    layout(ty)?;
    keyval(k)?;
    let old = ATTRS.with(|a| {
        let mut a = a.borrow_mut();
        let list = a.entry(ty).or_default();
        match list.iter_mut().find(|(key, _)| *key == k) {
            Some(slot) => Some(std::mem::replace(&mut slot.1, value)),
            None => {
                list.push((k, value));
                None
            }
        }
    });
    if let Some(v) = old {
        run_delete(ty, k, v)?;
    }
    Ok(())
}

crate::mpi! {
    /// `MPI_Type_create_keyval`: a keyval of the communicators' kind.
    fn PMPI_Type_create_keyval(copy: Option<state::CopyFn>, delete: Option<state::DeleteFn>, keyval: *mut c_int, extra: *mut c_void) -> c_int as MPI_Type_create_keyval {
        // SAFETY: the same contract (the functions' signatures agree).
        unsafe { crate::comm::PMPI_Comm_create_keyval(copy, delete, keyval, extra) }
    }
}

crate::mpi! {
    /// `MPI_Type_free_keyval`.
    fn PMPI_Type_free_keyval(keyval: *mut c_int) -> c_int as MPI_Type_free_keyval {
        // SAFETY: the same contract.
        unsafe { crate::comm::PMPI_Comm_free_keyval(keyval) }
    }
}

crate::mpi! {
    /// `MPI_Type_set_attr`.
    fn PMPI_Type_set_attr(ty: c_int, k: c_int, value: *mut c_void) -> c_int as MPI_Type_set_attr {
        run("MPI_Type_set_attr", || set(ty, k, value))
    }
}

crate::mpi! {
    /// `MPI_Type_get_attr`: the value through a `void **`.
    fn PMPI_Type_get_attr(ty: c_int, k: c_int, value: *mut c_void, flag: *mut c_int) -> c_int as MPI_Type_get_attr {
        run("MPI_Type_get_attr", || {
            layout(ty)?;
            keyval(k)?;
            let v = ATTRS.with(|a| {
                a.borrow()
                    .get(&ty)
                    .and_then(|l| l.iter().find(|(key, _)| *key == k).map(|&(_, v)| v))
            });
            // SAFETY: MPI's contract: `flag` writable, `value` a `void **`.
            unsafe {
                put(flag, c_int::from(v.is_some()))?;
                if let Some(v) = v {
                    put(value.cast::<*mut c_void>(), v)?;
                }
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Type_delete_attr`: `MPI_ERR_KEYVAL` when not set.
    fn PMPI_Type_delete_attr(ty: c_int, k: c_int) -> c_int as MPI_Type_delete_attr {
        run("MPI_Type_delete_attr", || {
            layout(ty)?;
            keyval(k)?;
            let v = ATTRS.with(|a| {
                let mut a = a.borrow_mut();
                let list = a.get_mut(&ty)?;
                let i = list.iter().position(|(key, _)| *key == k)?;
                Some(list.remove(i).1)
            });
            match v {
                Some(v) => run_delete(ty, k, v),
                None => Err(MPI_ERR_KEYVAL),
            }
        })
    }
}
