//! Dynamic processes: `MPI_Comm_spawn`, `MPI_Comm_spawn_multiple` of one
//! program, `MPI_Comm_get_parent` and `MPI_Comm_disconnect`, over
//! `Comm::spawn` and `Universe::parent`.
//!
//! Under `pertinax run` the processes come from the slots reserved with
//! `--max-spawn` (see `docs/launcher.md`); a spawn that does not fit (or
//! any spawn outside the launcher) is `MPI_ERR_SPAWN`, with every entry of
//! `array_of_errcodes` set to it. The info argument is ignored. The
//! arguments are read at the root only, which tells the others whether
//! they were good before the spawn (so a bad one is the same error at
//! every member, `MPI_ERR_ARG` for a count below 1). The children's
//! `MPI_COMM_WORLD` holds only them; `MPI_Comm_get_parent` gives them the
//! intercommunicator to the parents (the same handle each time, until it
//! is freed; `MPI_COMM_NULL` in a process that was not spawned).
//! `MPI_Comm_disconnect` is `MPI_Comm_free` (pertinax's free is local;
//! messages in flight are dropped with the communicator).
//! `MPI_Comm_spawn_multiple` is one spawn when its commands are one program
//! with the same arguments, `MPI_ERR_UNSUPPORTED_OPERATION` otherwise:
//! pertinax starts one program per spawn. Ports (`MPI_Open_port`,
//! `MPI_Comm_accept`, `MPI_Comm_connect`), `MPI_Comm_join` and the name
//! service are not implemented: pertinax's processes meet only through
//! their launcher, within one job.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};

use pertinax::{Comm, Communicator, Rank};

use crate::comm::register;
use crate::consts::*;
use crate::errors::{code_of, raise};
use crate::p2p::{call, comm_of};
use crate::serial::Serial;
use crate::state;

/// The parent intercommunicator's handle once registered, with the
/// communicator (to see that it was freed).
static PARENT: Serial<RefCell<Option<(c_int, Comm)>>> = Serial::new(RefCell::new(None));

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

/// What the root asks for: `count` processes of `program args...`.
struct Request {
    program: String,
    args: Vec<String>,
    count: usize,
}

/// The spawn of what the root asks for (`ask`, read at the root only),
/// registered in `intercomm`; `ncodes` tells how many error codes
/// `errcodes` holds (from the member's own arguments).
///
/// The root first tells the others whether its arguments were good (a
/// broadcast over `comm`), so that a bad one fails the call at every
/// member instead of leaving them in the spawn's collective.
///
/// # Safety
/// MPI's contract for the pointers.
unsafe fn spawn(
    ask: impl FnOnce() -> Result<Request, c_int>,
    root: c_int,
    comm: c_int,
    intercomm: *mut c_int,
    errcodes: *mut c_int,
    ncodes: c_int,
) -> Result<(), c_int> {
    let c = comm_of(comm)?;
    if intercomm.is_null() {
        return Err(MPI_ERR_ARG);
    }
    if !(0..c.size() as c_int).contains(&root) {
        return Err(MPI_ERR_ROOT);
    }
    let at_root = c.rank().0 == root;
    let asked = if at_root { ask() } else { Err(MPI_SUCCESS) };
    // The root's verdict and number of processes, for every member.
    let mut word = [0u8; 8];
    if at_root {
        let code = asked.as_ref().err().copied().unwrap_or(MPI_SUCCESS);
        word[..4].copy_from_slice(&code.to_ne_bytes());
        word[4..].copy_from_slice(&ncodes.to_ne_bytes());
    }
    c.bcast_bytes(&mut word, Rank(root))
        .map_err(|e| code_of(&e))?;
    let [a, b, c0, d, e, f, g, h] = word;
    let (verdict, total) = (
        c_int::from_ne_bytes([a, b, c0, d]),
        c_int::from_ne_bytes([e, f, g, h]),
    );
    // Every member gets the codes, in as many entries as its own
    // arguments say it has room for (the root's count at most).
    let n = if at_root { total } else { ncodes.min(total) };
    let fill = |code| {
        // SAFETY: MPI's contract: `errcodes` holds the member's count.
        unsafe { codes(errcodes, n, code) }
    };
    if verdict != MPI_SUCCESS {
        fill(verdict);
        // SAFETY: checked non-null; writable by MPI's contract.
        unsafe { *intercomm = MPI_COMM_NULL };
        return Err(verdict);
    }
    let (program, list, count) = match asked {
        Ok(r) => (r.program, r.args, r.count),
        // Not significant away from the root.
        Err(_) => (String::new(), Vec::new(), 1),
    };
    let list: Vec<&str> = list.iter().map(String::as_str).collect();
    let made = c.spawn(&program, &list, count, Rank(root)).map_err(|e| {
        let code = match e {
            // A count beyond what the launcher may start.
            pertinax::Error::InvalidArgument(_) => MPI_ERR_SPAWN,
            ref e => code_of(e),
        };
        if let pertinax::Error::SpawnFailed(why) | pertinax::Error::InvalidArgument(why) = &e {
            crate::errors::spawn_failed(why.clone());
        }
        code
    });
    match made {
        Ok(ic) => {
            fill(MPI_SUCCESS);
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { register(comm, Some(ic), intercomm) }
        }
        Err(code) => {
            fill(code);
            // SAFETY: as above.
            unsafe { *intercomm = MPI_COMM_NULL };
            Err(code)
        }
    }
}

crate::mpi! {
    /// `MPI_Comm_spawn` (see the module's documentation).
    fn PMPI_Comm_spawn(command: *const c_char, argv: *const *const c_char, maxprocs: c_int, _info: c_int, root: c_int, comm: c_int, intercomm: *mut c_int, array_of_errcodes: *mut c_int) -> c_int as MPI_Comm_spawn {
        call(comm, "MPI_Comm_spawn", || {
            let ask = || {
                // SAFETY: MPI's contract at the root.
                let (program, args) = unsafe { (text(command)?, args(argv)?) };
                let count = usize::try_from(maxprocs).ok().filter(|&n| n > 0).ok_or(MPI_ERR_ARG)?;
                Ok(Request { program, args, count })
            };
            // SAFETY: MPI's contract, forwarded.
            unsafe { spawn(ask, root, comm, intercomm, array_of_errcodes, maxprocs.max(0)) }
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_spawn_multiple` of commands that are all the same program
    /// with the same arguments: one spawn of the sum of the counts (their
    /// processes in the order of the commands, as MPI says). Different
    /// programs or arguments are `MPI_ERR_UNSUPPORTED_OPERATION`: pertinax
    /// starts one program per spawn.
    fn PMPI_Comm_spawn_multiple(count: c_int, array_of_commands: *const *const c_char, array_of_argv: *const *const *const c_char, array_of_maxprocs: *const c_int, _array_of_info: *const c_int, root: c_int, comm: c_int, intercomm: *mut c_int, array_of_errcodes: *mut c_int) -> c_int as MPI_Comm_spawn_multiple {
        call(comm, "MPI_Comm_spawn_multiple", || {
            let n = usize::try_from(count).unwrap_or(0);
            let ask = || {
                if n == 0 || array_of_commands.is_null() || array_of_maxprocs.is_null() {
                    return Err(MPI_ERR_ARG);
                }
                let mut first: Option<(String, Vec<String>)> = None;
                let mut total = 0usize;
                for i in 0..n {
                    // SAFETY: MPI's contract: `count` entries each (the
                    // argvs may be MPI_ARGVS_NULL).
                    let (command, argv, maxprocs) = unsafe {
                        let argv = if array_of_argv.is_null() { std::ptr::null() } else { *array_of_argv.add(i) };
                        (text(*array_of_commands.add(i))?, args(argv)?, *array_of_maxprocs.add(i))
                    };
                    let m = usize::try_from(maxprocs).ok().filter(|&m| m > 0).ok_or(MPI_ERR_ARG)?;
                    total += m;
                    match &first {
                        None => first = Some((command, argv)),
                        Some((c, a)) if *c == command && *a == argv => {}
                        Some(_) => return Err(MPI_ERR_UNSUPPORTED_OPERATION),
                    }
                }
                let (program, args) = first.ok_or(MPI_ERR_ARG)?;
                Ok(Request { program, args, count: total })
            };
            // The error codes: one per process asked for.
            let ncodes: c_int = if array_of_maxprocs.is_null() || array_of_errcodes.is_null() {
                0
            } else {
                // SAFETY: MPI's contract: `count` entries.
                (0..n).map(|i| unsafe { *array_of_maxprocs.add(i) }.max(0)).sum()
            };
            // SAFETY: MPI's contract, forwarded.
            unsafe { spawn(ask, root, comm, intercomm, array_of_errcodes, ncodes) }
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
