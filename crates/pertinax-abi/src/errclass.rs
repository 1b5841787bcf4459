//! User error classes, codes and strings (`MPI_Add_error_class`,
//! `_code`, `_string`, and MPI 4.1's `MPI_Remove_error_*`). A new class
//! or code takes the next value above `MPI_ERR_LASTCODE` (one number
//! space for both, as MPI allows: a class is a code of itself), and
//! `MPI_LASTUSEDCODE` is the largest given so far. `MPI_Error_class` and
//! `MPI_Error_string` answer for them (`errors.rs`).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicI32, Ordering};

use crate::consts::*;
use crate::errors::raise;
use crate::serial::Serial;

/// A user class or code: its class (itself for a class) and its string.
#[derive(Debug)]
struct Entry {
    value: c_int,
    class: c_int,
    text: Option<String>,
}

static USER: Serial<RefCell<Vec<Entry>>> = Serial::new(RefCell::new(Vec::new()));

/// `MPI_LASTUSEDCODE`'s value (the attribute points at it).
pub(crate) static LAST_USED: AtomicI32 = AtomicI32::new(MPI_ERR_LASTCODE);

/// The class of user code `code`, if it is one.
pub(crate) fn class_of(code: c_int) -> Option<c_int> {
    USER.with(|u| u.borrow().iter().find(|e| e.value == code).map(|e| e.class))
}

/// The string set for user code `code` (empty when none was set), if it
/// is one.
pub(crate) fn text_of(code: c_int) -> Option<String> {
    USER.with(|u| {
        u.borrow()
            .iter()
            .find(|e| e.value == code)
            .map(|e| e.text.clone().unwrap_or_default())
    })
}

/// Registers a new value of class `class` (`None`: a new class).
fn add(class: Option<c_int>) -> Result<c_int, c_int> {
    let value = LAST_USED
        .load(Ordering::Relaxed)
        .checked_add(1)
        .ok_or(MPI_ERR_OTHER)?;
    LAST_USED.store(value, Ordering::Relaxed);
    USER.with(|u| {
        u.borrow_mut().push(Entry {
            value,
            class: class.unwrap_or(value),
            text: None,
        })
    });
    Ok(value)
}

/// Whether `class` is a predefined class or a user class.
fn is_class(class: c_int) -> bool {
    (0..=MPI_ERR_LASTCODE).contains(&class)
        || USER.with(|u| {
            u.borrow()
                .iter()
                .any(|e| e.value == class && e.class == class)
        })
}

/// Writes `v` to `out` (checked non-null).
fn put(out: *mut c_int, v: c_int) {
    // SAFETY: the callers check `out` non-null; MPI's contract makes it
    // writable.
    unsafe { *out = v };
}

crate::mpi! {
    /// `MPI_Add_error_class`: a new class.
    fn PMPI_Add_error_class(class: *mut c_int) -> c_int as MPI_Add_error_class {
        if class.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Add_error_class", MPI_ERR_ARG);
        }
        match add(None) {
            Ok(v) => {
                put(class, v);
                MPI_SUCCESS
            }
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Add_error_class", code),
        }
    }
}

crate::mpi! {
    /// `MPI_Add_error_code`: a new code of `class` (predefined or a user
    /// class).
    fn PMPI_Add_error_code(class: c_int, code: *mut c_int) -> c_int as MPI_Add_error_code {
        if code.is_null() || !is_class(class) {
            return raise(MPI_COMM_WORLD, "MPI_Add_error_code", MPI_ERR_ARG);
        }
        match add(Some(class)) {
            Ok(v) => {
                put(code, v);
                MPI_SUCCESS
            }
            Err(e) => raise(MPI_COMM_WORLD, "MPI_Add_error_code", e),
        }
    }
}

crate::mpi! {
    /// `MPI_Add_error_string`: the text of a user class or code (at most
    /// `MPI_MAX_ERROR_STRING - 1` bytes); predefined ones keep theirs.
    fn PMPI_Add_error_string(code: c_int, text: *const c_char) -> c_int as MPI_Add_error_string {
        if text.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Add_error_string", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract: a NUL-terminated string.
        let s = unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned();
        if s.len() >= MPI_MAX_ERROR_STRING {
            return raise(MPI_COMM_WORLD, "MPI_Add_error_string", MPI_ERR_ARG);
        }
        let set = USER.with(|u| {
            u.borrow_mut()
                .iter_mut()
                .find(|e| e.value == code)
                .map(|e| e.text = Some(s))
        });
        match set {
            Some(()) => MPI_SUCCESS,
            None => raise(MPI_COMM_WORLD, "MPI_Add_error_string", MPI_ERR_ARG),
        }
    }
}

/// Removes user `value` if `ok` allows; `MPI_ERR_ARG` when it is not a
/// user value of that kind or still in use.
fn remove(what: &str, value: c_int, ok: impl Fn(&[Entry], &Entry) -> bool) -> c_int {
    let done = USER.with(|u| {
        let mut u = u.borrow_mut();
        let i = u.iter().position(|e| e.value == value)?;
        ok(&u, &u[i]).then(|| u.remove(i))
    });
    match done {
        Some(_) => MPI_SUCCESS,
        None => raise(MPI_COMM_WORLD, what, MPI_ERR_ARG),
    }
}

crate::mpi! {
    /// `MPI_Remove_error_class`: a user class with no codes left (and no
    /// string, as MPI 4.1 asks).
    fn PMPI_Remove_error_class(class: c_int) -> c_int as MPI_Remove_error_class {
        remove("MPI_Remove_error_class", class, |all, e| {
            e.class == e.value
                && e.text.is_none()
                && !all.iter().any(|o| o.class == class && o.value != class)
        })
    }
}

crate::mpi! {
    /// `MPI_Remove_error_code`: a user code (not a class) with no string.
    fn PMPI_Remove_error_code(code: c_int) -> c_int as MPI_Remove_error_code {
        remove("MPI_Remove_error_code", code, |_, e| e.class != e.value && e.text.is_none())
    }
}

crate::mpi! {
    /// `MPI_Remove_error_string`: forgets a user class's or code's string.
    fn PMPI_Remove_error_string(code: c_int) -> c_int as MPI_Remove_error_string {
        let done = USER.with(|u| {
            u.borrow_mut()
                .iter_mut()
                .find(|e| e.value == code && e.text.is_some())
                .map(|e| e.text = None)
        });
        match done {
            Some(()) => MPI_SUCCESS,
            None => raise(MPI_COMM_WORLD, "MPI_Remove_error_string", MPI_ERR_ARG),
        }
    }
}
