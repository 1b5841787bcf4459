//! What a window carries besides its memory: attributes (the predefined
//! `MPI_WIN_BASE`, `_SIZE`, `_DISP_UNIT`, `_CREATE_FLAVOR`, `_MODEL`,
//! and user keyvals of the communicators' kind), its name, its info, and
//! its error handler (the library's reference-counted ones).

use std::ffi::{c_char, c_int, c_void};

use super::{call, entry, out, raise, with, Entry};
use crate::consts::*;
use crate::errors;
use crate::info::{self, Info, MPI_INFO_NULL, MPI_MAX_OBJECT_NAME};
use crate::state::{self, UserErrhandler};

/// Keyval `k` (freed or not).
fn keyval_entry(k: c_int) -> Result<state::Keyval, c_int> {
    state::keyval_index(k)
        .and_then(|i| state::with(|s| s.keyvals.get(i).copied().flatten()).flatten())
        .ok_or(MPI_ERR_KEYVAL)
}

/// Keyval `k` as an argument: `MPI_ERR_KEYVAL` once freed.
fn keyval(k: c_int) -> Result<state::Keyval, c_int> {
    keyval_entry(k).and_then(|e| if e.freed { Err(MPI_ERR_KEYVAL) } else { Ok(e) })
}

/// Runs keyval `k`'s delete function on `win`'s `value` (nothing
/// borrowed).
fn run_delete(win: c_int, k: c_int, value: *mut c_void) -> Result<(), c_int> {
    if let Ok(state::Keyval {
        delete: Some(f),
        extra,
        ..
    }) = keyval_entry(k)
    {
        // SAFETY: the program registered `f` for this signature
        // (`MPI_Win_delete_attr_function`: the window is an `int`).
        super::ok(unsafe { f(win, k, value, extra) })?;
    }
    Ok(())
}

/// Deletes every attribute of the window (`MPI_Win_free`), in the
/// reverse order of setting.
pub(crate) fn delete_all(win: c_int, e: &Entry) -> Result<(), c_int> {
    let attrs = with(e, |g| Ok(std::mem::take(&mut g.attrs)))?;
    for (k, v) in attrs.into_iter().rev() {
        run_delete(win, k, v)?;
    }
    Ok(())
}

crate::mpi! {
    /// `MPI_Win_create_keyval`: a keyval of the communicators' kind (the
    /// copy function is never called: windows are not duplicated).
    fn PMPI_Win_create_keyval(copy: Option<state::CopyFn>, delete: Option<state::DeleteFn>, keyval: *mut c_int, extra: *mut c_void) -> c_int as MPI_Win_create_keyval {
        // SAFETY: the same contract (the functions' signatures agree).
        unsafe { crate::comm::PMPI_Comm_create_keyval(copy, delete, keyval, extra) }
    }
}

crate::mpi! {
    /// `MPI_Win_free_keyval`: attributes set with it keep their delete
    /// function.
    fn PMPI_Win_free_keyval(k: *mut c_int) -> c_int as MPI_Win_free_keyval {
        if k.is_null() {
            return errors::raise(MPI_COMM_WORLD, "MPI_Win_free_keyval", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract.
        let kv = unsafe { *k };
        let used = info::with_table(&super::WINS, |t| {
            t.iter().flatten().any(|e| {
                e.try_borrow().map_or(true, |g| g.attrs.iter().any(|(a, _)| *a == kv))
            })
        })
        .unwrap_or(true);
        if !used || keyval(kv).is_err() {
            // SAFETY: forwarded.
            return unsafe { crate::comm::PMPI_Comm_free_keyval(k) };
        }
        state::with(|s| {
            if let Some(Some(e)) = state::keyval_index(kv).and_then(|i| s.keyvals.get_mut(i)) {
                e.freed = true;
            }
        });
        // SAFETY: as above.
        unsafe { *k = MPI_KEYVAL_INVALID };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Win_set_attr`: replaces (deleting the old value first).
    fn PMPI_Win_set_attr(win: c_int, k: c_int, value: *mut c_void) -> c_int as MPI_Win_set_attr {
        call(win, "MPI_Win_set_attr", |e| {
            keyval(k)?;
            let old = with(e, |g| Ok(g.attrs.iter().find(|(a, _)| *a == k).map(|&(_, v)| v)))?;
            if let Some(v) = old {
                run_delete(win, k, v)?;
            }
            with(e, |g| {
                match g.attrs.iter_mut().find(|(a, _)| *a == k) {
                    Some(slot) => slot.1 = value,
                    None => g.attrs.push((k, value)),
                }
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Win_get_attr`: `MPI_WIN_BASE` is the base itself, the other
    /// predefined attributes point to their values (an `MPI_Aint` for
    /// `MPI_WIN_SIZE`, `int`s else); user attributes are their values.
    fn PMPI_Win_get_attr(win: c_int, k: c_int, value: *mut c_void, flag: *mut c_int) -> c_int as MPI_Win_get_attr {
        call(win, "MPI_Win_get_attr", |e| {
            if value.is_null() || flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let v: Option<*mut c_void> = with(e, |g| {
                let vals = &mut *g.vals;
                Ok(match k {
                    MPI_WIN_BASE => Some(vals.base),
                    MPI_WIN_SIZE => Some((&raw mut vals.size).cast()),
                    MPI_WIN_DISP_UNIT => Some((&raw mut vals.disp_unit).cast()),
                    MPI_WIN_CREATE_FLAVOR => Some((&raw mut vals.flavor).cast()),
                    MPI_WIN_MODEL => Some((&raw mut vals.model).cast()),
                    _ => None,
                })
            })?;
            let v = match v {
                Some(v) => Some(v),
                None => {
                    keyval(k)?;
                    with(e, |g| Ok(g.attrs.iter().find(|(a, _)| *a == k).map(|&(_, v)| v)))?
                }
            };
            // SAFETY: checked non-null; MPI's contract: `value` is a
            // `void **`.
            unsafe {
                *flag = c_int::from(v.is_some());
                if let Some(v) = v {
                    *value.cast::<*mut c_void>() = v;
                }
            }
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Win_delete_attr`: `MPI_ERR_KEYVAL` when not set.
    fn PMPI_Win_delete_attr(win: c_int, k: c_int) -> c_int as MPI_Win_delete_attr {
        call(win, "MPI_Win_delete_attr", |e| {
            keyval(k)?;
            let v = with(e, |g| {
                let i = g.attrs.iter().position(|(a, _)| *a == k).ok_or(MPI_ERR_KEYVAL)?;
                Ok(g.attrs.remove(i).1)
            })?;
            run_delete(win, k, v)
        })
    }
}

crate::mpi! {
    /// `MPI_Win_set_name` (cut to `MPI_MAX_OBJECT_NAME - 1` bytes).
    fn PMPI_Win_set_name(win: c_int, name: *const c_char) -> c_int as MPI_Win_set_name {
        call(win, "MPI_Win_set_name", |e| {
            // SAFETY: MPI's contract: a C string.
            let n = unsafe { info::c_bytes(name) }?;
            let n = n[..n.len().min(MPI_MAX_OBJECT_NAME - 1)].to_vec();
            with(e, |g| {
                g.name = n;
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Win_get_name`: the empty string until set; `MPI_WIN_NULL`'s
    /// is `MPI_WIN_NULL`.
    fn PMPI_Win_get_name(win: c_int, name: *mut c_char, resultlen: *mut c_int) -> c_int as MPI_Win_get_name {
        let write = |n: &[u8]| -> Result<(), c_int> {
            if name.is_null() || resultlen.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: `name` holds MPI_MAX_OBJECT_NAME
            // bytes; `resultlen` checked non-null.
            unsafe {
                info::write_c(n, name, MPI_MAX_OBJECT_NAME)?;
                out(resultlen, n.len() as c_int)
            }
        };
        if win == MPI_WIN_NULL {
            return match write(b"MPI_WIN_NULL") {
                Ok(()) => MPI_SUCCESS,
                Err(c) => errors::raise(MPI_COMM_WORLD, "MPI_Win_get_name", c),
            };
        }
        call(win, "MPI_Win_get_name", |e| {
            let n = with(e, |g| Ok(g.name.clone()))?;
            write(&n)
        })
    }
}

crate::mpi! {
    /// `MPI_Win_set_info`: the hints are kept (merged); none acts.
    fn PMPI_Win_set_info(win: c_int, info: c_int) -> c_int as MPI_Win_set_info {
        call(win, "MPI_Win_set_info", |e| {
            let new = if info == MPI_INFO_NULL { Info::default() } else { info::info_of(info)? };
            with(e, |g| {
                g.info.merge(&new);
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Win_get_info`: a new info object with the hints set.
    fn PMPI_Win_get_info(win: c_int, info_used: *mut c_int) -> c_int as MPI_Win_get_info {
        call(win, "MPI_Win_get_info", |e| {
            if info_used.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = with(e, |g| Ok(g.info.clone()))?;
            let h = info::add_info(h)?;
            // SAFETY: checked non-null; MPI's contract.
            unsafe { out(info_used, h) }
        })
    }
}

crate::mpi! {
    /// `MPI_Win_create_errhandler`: a user function
    /// `void f(MPI_Win *, int *, ...)`.
    fn PMPI_Win_create_errhandler(f: Option<UserErrhandler>, errhandler: *mut c_int) -> c_int as MPI_Win_create_errhandler {
        let (Some(f), false) = (f, errhandler.is_null()) else {
            return errors::raise(MPI_COMM_WORLD, "MPI_Win_create_errhandler", MPI_ERR_ARG);
        };
        let Some(h) = errors::create(f) else {
            return errors::raise(MPI_COMM_WORLD, "MPI_Win_create_errhandler", MPI_ERR_OTHER);
        };
        // SAFETY: checked non-null; MPI's contract makes it writable.
        unsafe { *errhandler = h };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Win_set_errhandler`.
    fn PMPI_Win_set_errhandler(win: c_int, errhandler: c_int) -> c_int as MPI_Win_set_errhandler {
        let Ok(e) = entry(win) else {
            return errors::raise(MPI_COMM_WORLD, "MPI_Win_set_errhandler", MPI_ERR_WIN);
        };
        if !errors::usable(errhandler) {
            return raise(win, "MPI_Win_set_errhandler", MPI_ERR_ERRHANDLER);
        }
        let Ok(mut g) = e.try_borrow_mut() else {
            return raise(win, "MPI_Win_set_errhandler", MPI_ERR_INTERN);
        };
        let old = std::mem::replace(&mut g.errhandler, errhandler);
        drop(g);
        errors::attach(errhandler);
        errors::detach(old);
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Win_get_errhandler`: a new handle of the window's handler.
    fn PMPI_Win_get_errhandler(win: c_int, errhandler: *mut c_int) -> c_int as MPI_Win_get_errhandler {
        let Some(h) = entry(win).ok().and_then(|e| e.try_borrow().ok().map(|g| g.errhandler)) else {
            return errors::raise(MPI_COMM_WORLD, "MPI_Win_get_errhandler", MPI_ERR_WIN);
        };
        if errhandler.is_null() {
            return raise(win, "MPI_Win_get_errhandler", MPI_ERR_ARG);
        }
        errors::new_handle(h);
        // SAFETY: checked non-null; MPI's contract makes it writable.
        unsafe { *errhandler = h };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Win_call_errhandler`: hands `errorcode` to the window's
    /// handler; `MPI_SUCCESS` when it returns.
    fn PMPI_Win_call_errhandler(win: c_int, errorcode: c_int) -> c_int as MPI_Win_call_errhandler {
        if entry(win).is_err() {
            return errors::raise(MPI_COMM_WORLD, "MPI_Win_call_errhandler", MPI_ERR_WIN);
        }
        raise(win, "MPI_Win_call_errhandler", errorcode);
        MPI_SUCCESS
    }
}
