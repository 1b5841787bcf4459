//! `libmpi.so.12` over pertinax: the MPICH ABI (the binary interface of
//! MPICH, Intel MPI, Cray MPICH, MVAPICH, ParaStation MPI), so that a C
//! program built once against any of them, and the mpi4py wheel's
//! `MPI.mpich`, run on pertinax unchanged.
//!
//! Run a program under the launcher with this library first on the
//! loader's path (`LD_LIBRARY_PATH`, a `libmpi.so.12` link to Cargo's
//! `libmpi.so`; see `docs/c-programs.md`). `MPI_Init` joins the job as
//! `pertinax::init` does; every call then maps onto pertinax's API on the
//! world it made.
//!
//! - [`consts`]: the ABI's values. Handles are `int`s; the library's own
//!   objects live in the process's tables (`state.rs`) indexed by the
//!   handle's low bits.
//! - [`errors`]: pertinax's errors as MPI error classes (a failure is
//!   `MPIX_ERR_PROC_FAILED`, a revocation `MPIX_ERR_REVOKED`) and the
//!   communicators' error handlers (`MPI_ERRORS_ARE_FATAL` by default).
//! - [`datatype`]: datatypes' layouts (predefined and derived), the
//!   send and receive buffers every call moves through (`datatype/buf.rs`),
//!   and reduction operations (`datatype/reduction.rs`); [`types`]: the
//!   datatype calls (constructors in `types/constructor.rs`, queries,
//!   `MPI_Pack`/`MPI_Unpack` and `MPI_Get_elements` in `types/pack.rs`);
//!   [`typeextra`]: the large-count envelope and contents, addresses,
//!   value-index pairs, F90 types, datatype attributes.
//! - The calls by area: [`env`](mod@env); [`p2p`] (its waits and tests in
//!   `p2p/complete.rs`), [`requests`], [`modes`],
//!   [`mprobe`], [`status`], [`persist`], [`part`] (partitioned), [`grequest`], [`buffer`]; [`coll`], [`vcoll`], [`wcoll`], [`icoll`], [`ivcoll`], [`reduce`];
//!   [`comm`], [`groups`], [`info`], [`topo`], [`graph`], [`neighbor`];
//!   [`inter`] (intercommunicators) and `intercoll` (their collectives), [`spawn`]; [`session`] (MPI 4's
//!   sessions); [`ulfm`]; [`large`] (the
//!   `_c` forms); [`convert`] (handle conversions, data symbols);
//!   [`extras`] (`MPI_Alloc_mem`, the dups with info,
//!   `MPI_Comm_call_errhandler`, status conversions); [`mod@file`] (MPI-IO
//!   over POSIX files); [`win`] (one-sided communication by cross-memory
//!   attach).
//! - `resilient`: `pertinax run --resilient` for unchanged programs: the
//!   world and the communicators made from it are `pertinax-resilient`'s.
//! - `unsupported`: every other function `libmpi.so.12` exports, generated
//!   by `gen/unsupported.py`; each returns `MPI_ERR_UNSUPPORTED_OPERATION`
//!   through the communicator's error handler.
//!
//! Every function is exported under its `MPI_` name and its `PMPI_` name
//! (the profiling interface: a tool's `MPI_Send` may call `PMPI_Send`).
//! Calls made inside the library go to the `PMPI_` names.
//!
//! Threads: `MPI_THREAD_SERIALIZED` at most (`serial.rs`). The state is
//! the process's, and every exported function passes an entry guard
//! first: at `MPI_THREAD_FUNNELED` (what `MPI_Init` gives) only the thread
//! that initialized may call, after one comparison of thread ids, and
//! another thread's call is `MPI_ERR_OTHER`; at `MPI_THREAD_SERIALIZED`
//! (asked as `SERIALIZED` or `MULTIPLE`) any thread may call and each call
//! holds a process-wide, re-entrant lock, so that two threads breaking
//! the promise wait rather than corrupt memory.

#![allow(non_snake_case)]
// The exported functions are the C ABI: their safety contract is MPI's.
#![allow(clippy::missing_safety_doc)]
// The Rust documentation of a C library is its internals' map: module
// docs name the private helpers they are built on.
#![allow(rustdoc::private_intra_doc_links)]

use std::ffi::c_int;

/// MPI's address-sized integer (`MPI_Aint`: `intptr_t`).
#[allow(non_camel_case_types)]
pub type MPI_Aint = isize;

/// Defines `PMPI_X` and `MPI_X` calling it: `mpi! { fn PMPI_X(args) -> T
/// as MPI_X { body } }`. The body runs behind the entry guard
/// (`serial::enter`: see `serial.rs`), or is refused with
/// `MPI_ERR_OTHER`. `mpi! { fn ... as MPI_X fast { .. } else { .. } }`
/// gives a hot call a fast path (an `Option` of the return, `None` to
/// decline) that the thread calling without the lock runs before any
/// guard; a thread holding the lock (`MPI_THREAD_SERIALIZED`) runs it
/// behind the guard. `mpi! { any_thread fn ... }` defines a function that
/// reads no state and passes no guard (callable from any thread, at any
/// time).
#[macro_export]
#[doc(hidden)]
macro_rules! mpi {
    ($(#[$m:meta])* fn $pmpi:ident($($a:ident: $t:ty),* $(,)?) -> $r:ty as $mpi:ident $body:block) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $pmpi($($a: $t),*) -> $r {
            let _entry = match $crate::serial::enter() {
                Ok(entry) => entry,
                Err(()) => return $crate::serial::refused(stringify!($mpi)),
            };
            $body
        }

        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            // SAFETY: the same function, the same contract.
            unsafe { $pmpi($($a),*) }
        }
    };
    ($(#[$m:meta])* fn $pmpi:ident($($a:ident: $t:ty),* $(,)?) -> $r:ty as $mpi:ident fast $fast:block else $body:block) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $pmpi($($a: $t),*) -> $r {
            // The thread that may call without the lock passes no guard
            // (its entry would be `Entry::Free`, which holds nothing), so
            // its fast path saves no register for one; the guarded path
            // (the lock's holder's fast path, then the general path) is
            // out of line.
            if $crate::serial::free() {
                if let Some(rc) = $fast {
                    return rc;
                }
            }
            #[inline(never)]
            unsafe fn guarded($($a: $t),*) -> $r {
                let entry = match $crate::serial::enter() {
                    Ok(entry) => entry,
                    Err(()) => return $crate::serial::refused(stringify!($mpi)),
                };
                if matches!(entry, $crate::serial::Entry::Held(_)) {
                    if let Some(rc) = $fast {
                        return rc;
                    }
                }
                $body
            }
            // SAFETY: forwarded.
            unsafe { guarded($($a),*) }
        }

        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            // SAFETY: the same function, the same contract.
            unsafe { $pmpi($($a),*) }
        }
    };
    ($(#[$m:meta])* any_thread fn $pmpi:ident($($a:ident: $t:ty),* $(,)?) -> $r:ty as $mpi:ident $body:block) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $pmpi($($a: $t),*) -> $r $body

        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> $r {
            // SAFETY: the same function, the same contract.
            unsafe { $pmpi($($a),*) }
        }
    };
}

/// A function this library does not implement (see `unsupported.rs`):
/// both names return `MPI_ERR_UNSUPPORTED_OPERATION` through the error
/// handler of the communicator argument named last (`none`: the world's).
macro_rules! unsupported {
    ($mpi:ident, $pmpi:ident, ($($a:ident: $t:ty),* $(,)?), none) => {
        #[doc = concat!("`", stringify!($mpi), "`: not implemented.")]
        #[no_mangle]
        pub unsafe extern "C" fn $pmpi($(#[allow(unused_variables)] $a: $t),*) -> ::std::ffi::c_int {
            let _entry = match $crate::serial::enter() {
                Ok(entry) => entry,
                Err(()) => return $crate::serial::refused(stringify!($mpi)),
            };
            $crate::errors::unsupported(stringify!($mpi), $crate::consts::MPI_COMM_NULL)
        }
        #[doc = concat!("`", stringify!($mpi), "`: not implemented.")]
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> ::std::ffi::c_int {
            // SAFETY: the same function, the same contract.
            unsafe { $pmpi($($a),*) }
        }
    };
    ($mpi:ident, $pmpi:ident, ($($a:ident: $t:ty),* $(,)?), $comm:ident) => {
        #[doc = concat!("`", stringify!($mpi), "`: not implemented.")]
        #[no_mangle]
        pub unsafe extern "C" fn $pmpi($(#[allow(unused_variables)] $a: $t),*) -> ::std::ffi::c_int {
            let _entry = match $crate::serial::enter() {
                Ok(entry) => entry,
                Err(()) => return $crate::serial::refused(stringify!($mpi)),
            };
            $crate::errors::unsupported(stringify!($mpi), $comm)
        }
        #[doc = concat!("`", stringify!($mpi), "`: not implemented.")]
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($a: $t),*) -> ::std::ffi::c_int {
            // SAFETY: the same function, the same contract.
            unsafe { $pmpi($($a),*) }
        }
    };
}

mod check;
pub mod consts;
pub mod errors;
pub mod extras;
mod fast;
mod serial;
mod state;

pub mod buffer;
pub mod coll;
pub mod comm;
pub mod convert;
pub mod datatype;
pub mod env;
pub mod errclass;
pub mod file;
pub mod graph;
pub mod grequest;
pub mod groups;
pub mod icoll;
pub mod info;
pub mod inter;
mod intercoll;
pub mod ivcoll;
pub mod large;
pub mod modes;
pub mod mprobe;
pub mod names;
pub mod neighbor;
pub mod p2p;
pub mod part;
pub mod persist;
pub mod ports;
mod ready;
pub mod reduce;
pub mod requests;
mod resilient;
mod resilient_icoll;
mod resilient_req;
pub mod session;
pub mod spawn;
pub mod status;
pub mod topo;
pub mod typeextra;
pub mod types;
pub mod ulfm;
mod unsupported;
pub mod vcoll;
pub mod wcoll;
pub mod win;

#[allow(unused_imports)]
use std::ffi::c_void;

/// Writes `v` through an out-pointer from C, or reports `MPI_ERR_ARG`
/// through `comm`'s handler when it is null.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
pub(crate) unsafe fn put<T>(out: *mut T, v: T, comm: c_int, what: &str) -> c_int {
    if out.is_null() {
        return errors::raise(comm, what, consts::MPI_ERR_ARG);
    }
    // SAFETY: non-null, and valid by the caller's contract.
    unsafe { out.write(v) };
    consts::MPI_SUCCESS
}
