//! Dynamic processes: `MPI_Comm_spawn`, `MPI_Comm_spawn_multiple` of one
//! command, `MPI_Comm_get_parent` and `MPI_Comm_disconnect`, over
//! `Comm::spawn` and `Universe::parent`.
//!
//! Under `pertinax run` the processes come from the slots reserved with
//! `--max-spawn` (see `docs/launcher.md`); a spawn that does not fit (or
//! any spawn outside the launcher) is `MPI_ERR_SPAWN`, with every entry of
//! `array_of_errcodes` set to it. The info argument is ignored. `maxprocs`
//! is checked at every member (pass the root's value everywhere, as most
//! programs do; a member passing 0 or less counts as 1). The children's
//! `MPI_COMM_WORLD` holds only them; `MPI_Comm_get_parent` gives them the
//! intercommunicator to the parents (the same handle each time, until it
//! is freed; `MPI_COMM_NULL` in a process that was not spawned).
//! `MPI_Comm_disconnect` is `MPI_Comm_free` (pertinax's free is local;
//! messages in flight are dropped with the communicator).
//! `MPI_Comm_spawn_multiple` of more than one command is
//! `MPI_ERR_UNSUPPORTED_OPERATION`: pertinax starts one program per spawn.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};

use pertinax::{Comm, Rank};

use crate::comm::register;
use crate::consts::*;
use crate::errors::{code_of, raise};
use crate::p2p::{call, comm_of};
use crate::state;

thread_local! {
    /// The parent intercommunicator's handle once registered, with the
    /// communicator (to see that it was freed).
    static PARENT: RefCell<Option<(c_int, Comm)>> = const { RefCell::new(None) };
}

/// A C string's text.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn text(p: *const c_char) -> Result<String, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    let s = unsafe { CStr::from_ptr(p) };
    Ok(s.to_string_lossy().into_owned())
}

/// A NULL-terminated `char *argv[]` (`MPI_ARGV_NULL`: none).
///
/// # Safety
/// `argv` is null or a NULL-terminated array of strings.
unsafe fn args(argv: *const *const c_char) -> Result<Vec<String>, c_int> {
    let mut out = Vec::new();
    if argv.is_null() {
        return Ok(out);
    }
    for i in 0.. {
        // SAFETY: NULL-terminated by the caller's contract: every entry up
        // to the terminator is readable.
        let p = unsafe { *argv.add(i) };
        if p.is_null() {
            break;
        }
        // SAFETY: each entry is a string.
        out.push(unsafe { text(p) }?);
    }
    Ok(out)
}

/// Fills `n` error codes (unless `MPI_ERRCODES_IGNORE`).
///
/// # Safety
/// `codes` is null or holds `n` ints.
unsafe fn codes(codes: *mut c_int, n: c_int, code: c_int) {
    if codes.is_null() {
        return;
    }
    for i in 0..usize::try_from(n).unwrap_or(0) {
        // SAFETY: by the caller's contract.
        unsafe { *codes.add(i) = code };
    }
}

/// The spawn of `maxprocs` processes of `command argv...`, registered in
/// `intercomm`.
///
/// # Safety
/// MPI's contract for the pointers (significant at the root only).
#[allow(clippy::too_many_arguments)]
unsafe fn spawn(
    command: *const c_char,
    argv: *const *const c_char,
    maxprocs: c_int,
    root: c_int,
    comm: c_int,
    intercomm: *mut c_int,
    errcodes: *mut c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    if intercomm.is_null() {
        return Err(MPI_ERR_ARG);
    }
    if !(0..c.size() as c_int).contains(&root) {
        return Err(MPI_ERR_ROOT);
    }
    let at_root = c.rank().0 == root;
    let (program, list) = if at_root {
        // SAFETY: MPI's contract at the root.
        unsafe { (text(command)?, args(argv)?) }
    } else {
        (String::new(), Vec::new())
    };
    let list: Vec<&str> = list.iter().map(String::as_str).collect();
    let count = usize::try_from(maxprocs).ok().filter(|&n| n > 0);
    let count = match (count, at_root) {
        (Some(n), _) => n,
        (None, false) => 1,
        (None, true) => return Err(MPI_ERR_ARG),
    };
    let made = c
        .spawn(&program, &list, count, Rank(root))
        .map_err(|e| match e {
            // A count beyond what the launcher may start.
            pertinax::Error::InvalidArgument(_) => MPI_ERR_SPAWN,
            e => code_of(&e),
        });
    match made {
        Ok(ic) => {
            // SAFETY: MPI's contract for `errcodes` (at the root).
            unsafe {
                codes(
                    if at_root {
                        errcodes
                    } else {
                        std::ptr::null_mut()
                    },
                    maxprocs,
                    MPI_SUCCESS,
                )
            };
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { register(comm, Some(ic), intercomm) }
        }
        Err(code) => {
            // SAFETY: as above.
            unsafe {
                codes(
                    if at_root {
                        errcodes
                    } else {
                        std::ptr::null_mut()
                    },
                    maxprocs,
                    code,
                );
                *intercomm = MPI_COMM_NULL;
            }
            Err(code)
        }
    }
}

crate::mpi! {
    /// `MPI_Comm_spawn` (see the module's documentation).
    fn PMPI_Comm_spawn(command: *const c_char, argv: *const *const c_char, maxprocs: c_int, _info: c_int, root: c_int, comm: c_int, intercomm: *mut c_int, array_of_errcodes: *mut c_int) -> c_int as MPI_Comm_spawn {
        call(comm, "MPI_Comm_spawn", || {
            // SAFETY: MPI's contract, forwarded.
            unsafe { spawn(command, argv, maxprocs, root, comm, intercomm, array_of_errcodes) }
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_spawn_multiple` of one command (more is
    /// `MPI_ERR_UNSUPPORTED_OPERATION`).
    fn PMPI_Comm_spawn_multiple(count: c_int, array_of_commands: *const *const c_char, array_of_argv: *const *const *const c_char, array_of_maxprocs: *const c_int, _array_of_info: *const c_int, root: c_int, comm: c_int, intercomm: *mut c_int, array_of_errcodes: *mut c_int) -> c_int as MPI_Comm_spawn_multiple {
        call(comm, "MPI_Comm_spawn_multiple", || {
            let c = comm_of(comm)?;
            let at_root = c.rank().0 == root;
            if at_root && count != 1 {
                return Err(if count > 1 { MPI_ERR_UNSUPPORTED_OPERATION } else { MPI_ERR_ARG });
            }
            let (command, argv, maxprocs) = if at_root {
                if array_of_commands.is_null() || array_of_maxprocs.is_null() {
                    return Err(MPI_ERR_ARG);
                }
                // SAFETY: MPI's contract: one entry each (argvs may be
                // MPI_ARGVS_NULL).
                unsafe {
                    let argv = if array_of_argv.is_null() { std::ptr::null() } else { *array_of_argv };
                    (*array_of_commands, argv, *array_of_maxprocs)
                }
            } else {
                (std::ptr::null(), std::ptr::null(), 1)
            };
            // SAFETY: MPI's contract, forwarded.
            unsafe { spawn(command, argv, maxprocs, root, comm, intercomm, array_of_errcodes) }
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_get_parent`: the intercommunicator to the parents, or
    /// `MPI_COMM_NULL` (not spawned, or the handle was freed).
    fn PMPI_Comm_get_parent(parent: *mut c_int) -> c_int as MPI_Comm_get_parent {
        if parent.is_null() {
            return raise(MPI_COMM_WORLD, "MPI_Comm_get_parent", MPI_ERR_ARG);
        }
        let known = PARENT.with(|p| p.borrow().as_ref().map(|(h, c)| if c.is_freed() { MPI_COMM_NULL } else { *h }));
        let h = match known {
            Some(h) => h,
            None => {
                let Some(pc) = state::with(|s| s.universe.parent()) else {
                    return raise(MPI_COMM_WORLD, "MPI_Comm_get_parent", MPI_ERR_OTHER);
                };
                match pc {
                    None => MPI_COMM_NULL,
                    Some(c) => {
                        let mut h = MPI_COMM_NULL;
                        // SAFETY: `h` is a local.
                        if let Err(code) = unsafe { register(MPI_COMM_WORLD, Some(c.clone()), &mut h) } {
                            return raise(MPI_COMM_WORLD, "MPI_Comm_get_parent", code);
                        }
                        PARENT.with(|p| *p.borrow_mut() = Some((h, c)));
                        h
                    }
                }
            }
        };
        // SAFETY: checked non-null; writable by MPI's contract.
        unsafe { *parent = h };
        MPI_SUCCESS
    }
}

crate::mpi! {
    /// `MPI_Comm_disconnect`: `MPI_Comm_free`.
    fn PMPI_Comm_disconnect(comm: *mut c_int) -> c_int as MPI_Comm_disconnect {
        // SAFETY: the same contract.
        unsafe { crate::comm::PMPI_Comm_free(comm) }
    }
}
