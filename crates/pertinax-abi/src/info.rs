//! Info objects, and what communicators keep beside them: their hints
//! (`MPI_Comm_set_info`, `MPI_Comm_get_info`) and their names
//! (`MPI_Comm_set_name`, `MPI_Comm_get_name`).
//!
//! An info object is an ordered list of (key, value) pairs of bytes: keys
//! are numbered in the order they were first set (`MPI_Info_get_nthkey`),
//! setting a key again replaces its value in place, and keys and values
//! are kept exactly as given (MPICH strips no blanks either). A key holds
//! 1 to `MPI_MAX_INFO_KEY` (255) bytes, a value at most `MPI_MAX_INFO_VAL`
//! (1024). Objects live in a table here (handle
//! `0x9c000000 | index`); the predefined `MPI_INFO_ENV` is read-only and
//! made afresh at each use: `command` and `argv` (this process's
//! arguments), `maxprocs` (the world's size, once `MPI_Init` ran), `host`,
//! `arch`, `wdir` (the current directory) and `thread_level` (what
//! `MPI_Query_thread` reports). `soft` and `file` are never set: the
//! launcher takes no such request. A value longer than `MPI_MAX_INFO_VAL`
//! (a long `argv` or `wdir`) is cut to that length.
//!
//! A communicator's hints are what the program set on it (merged over
//! successive `MPI_Comm_set_info` calls; pertinax acts on none of them);
//! `MPI_Comm_get_info` returns a new object holding them. Names default to
//! `MPI_COMM_WORLD`, `MPI_COMM_SELF`, and the empty string
//! (`MPI_Comm_get_name` of `MPI_COMM_NULL` is `MPI_COMM_NULL`, as in MPICH); a name longer
//! than `MPI_MAX_OBJECT_NAME - 1` bytes is cut, as MPICH does. Neither is
//! copied by `MPI_Comm_dup` (MPI says hints should be: not done).
//!
//! Not here: `MPIX_Info_set_hex` and the Fortran conversions (in
//! `convert`).
//!
//! Errors follow MPICH's classes: `MPI_INFO_NULL` where an object is
//! needed is `MPI_ERR_ARG`, a freed or unknown handle (and a change to
//! `MPI_INFO_ENV`) `MPI_ERR_INFO`, a bad key `MPI_ERR_INFO_KEY`, a long
//! value `MPI_ERR_INFO_VALUE`, deleting a missing key
//! `MPI_ERR_INFO_NOKEY`.

pub(crate) use crate::check::out;
use crate::serial::Serial;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};
use std::os::unix::ffi::OsStringExt;

use pertinax::Comm;

use crate::consts::*;
use crate::p2p::{call, comm_of};
use crate::state;

pub const MPI_INFO_NULL: c_int = 0x1c00_0000;
pub const MPI_INFO_ENV: c_int = 0x5c00_0001;
/// An info object made here: this prefix and its index.
pub const INFO_DIRECT: c_int = 0x9c00_0000_u32 as c_int;
pub const MPI_ERR_INFO: c_int = 28;
pub const MPI_ERR_INFO_KEY: c_int = 29;
pub const MPI_ERR_INFO_VALUE: c_int = 30;
pub const MPI_ERR_INFO_NOKEY: c_int = 31;
pub const MPI_MAX_INFO_KEY: usize = 255;
pub const MPI_MAX_INFO_VAL: usize = 1024;
pub const MPI_MAX_OBJECT_NAME: usize = 128;

/// The largest index a handle's low bits hold.
const MAX_INDEX: usize = 0x03ff_ffff;

/// An info object's (key, value) pairs, in the order keys were first set.
#[derive(Debug, Clone, Default)]
pub(crate) struct Info(Vec<(Vec<u8>, Vec<u8>)>);

impl Info {
    /// The value of `key`, if set.
    pub(crate) fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    }

    fn set(&mut self, key: &[u8], value: &[u8]) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_vec(),
            None => self.0.push((key.to_vec(), value.to_vec())),
        }
    }

    /// Sets every pair of `other` (a file's hints, `MPI_File_set_info`).
    pub(crate) fn merge(&mut self, other: &Info) {
        for (k, v) in &other.0 {
            self.set(k, v);
        }
    }

    /// Removes `key`; whether it was there.
    fn delete(&mut self, key: &[u8]) -> bool {
        let n = self.0.len();
        self.0.retain(|(k, _)| k != key);
        self.0.len() != n
    }
}

/// Values kept per communicator beside the state's table (names and
/// hints here, topologies in `topo`), by handle.
///
/// `MPI_Comm_free` (in `comm`) does not tell these maps, and the handle of
/// a freed communicator is given to the next one made. So each entry keeps
/// a clone of the communicator it was set on: once that is freed the entry
/// is stale, and is dropped when next seen; setting a handle replaces its
/// entry. The predefined communicators (never freed) keep no clone: one
/// of the world held past `MPI_Finalize` would release it again when the
/// thread ends. The clones kept are of communicators the state holds
/// anyway, which `MPI_Comm_free` or `MPI_Finalize` frees.
#[derive(Debug)]
pub(crate) struct PerComm<T> {
    entries: Vec<(c_int, Option<Comm>, T)>,
}

impl<T> PerComm<T> {
    pub(crate) const fn new() -> Self {
        PerComm {
            entries: Vec::new(),
        }
    }

    fn prune(&mut self) {
        self.entries
            .retain(|(_, made, _)| !made.as_ref().is_some_and(Comm::is_freed));
    }

    /// The value of communicator `handle`, unless stale.
    pub(crate) fn get(&mut self, handle: c_int) -> Option<&T> {
        self.prune();
        self.entries
            .iter()
            .find(|(h, _, _)| *h == handle)
            .map(|(_, _, v)| v)
    }

    /// The value of communicator `handle` to change, unless stale.
    pub(crate) fn get_mut(&mut self, handle: c_int) -> Option<&mut T> {
        self.prune();
        self.entries
            .iter_mut()
            .find(|(h, _, _)| *h == handle)
            .map(|(_, _, v)| v)
    }

    /// Removes communicator `handle`'s value.
    pub(crate) fn remove(&mut self, handle: c_int) {
        self.entries.retain(|(h, _, _)| *h != handle);
    }

    /// Sets the value of communicator `handle`, whose communicator is
    /// `comm`, replacing any entry of the handle.
    pub(crate) fn set(&mut self, handle: c_int, comm: &Comm, value: T) {
        self.prune();
        self.entries.retain(|(h, _, _)| *h != handle);
        let made = state::comm_index(handle)
            .filter(|&i| i >= 2)
            .map(|_| comm.clone());
        self.entries.push((handle, made, value));
    }
}

/// Runs `f` on one of the library's tables; `MPI_ERR_INTERN` if it is in
/// use (not expected: nothing here calls out while holding one).
pub(crate) fn with_table<T: 'static, R>(
    table: &'static Serial<RefCell<T>>,
    f: impl FnOnce(&mut T) -> R,
) -> Result<R, c_int> {
    table
        .with(|t| t.try_borrow_mut().ok().map(|mut t| f(&mut t)))
        .ok_or(MPI_ERR_INTERN)
}

/// Info objects by index (handle `INFO_DIRECT | index`).
static INFOS: Serial<RefCell<Vec<Option<Info>>>> = Serial::new(RefCell::new(Vec::new()));
/// Communicators' hints.
static HINTS: Serial<RefCell<PerComm<Info>>> = Serial::new(RefCell::new(PerComm::new()));
/// Communicators' names.
static NAMES: Serial<RefCell<PerComm<Vec<u8>>>> = Serial::new(RefCell::new(PerComm::new()));

fn index(h: c_int) -> Option<usize> {
    if h & !(MAX_INDEX as c_int) == INFO_DIRECT {
        Some((h & MAX_INDEX as c_int) as usize)
    } else {
        None
    }
}

/// Registers `info`; its handle.
fn add(info: Info) -> Result<c_int, c_int> {
    let i = with_table(&INFOS, |t| state::insert(t, info))?;
    if i > MAX_INDEX {
        let _ = with_table(&INFOS, |t| t.truncate(i));
        return Err(MPI_ERR_INTERN);
    }
    Ok(INFO_DIRECT | i as c_int)
}

/// A new info object holding `info`'s pairs; its handle.
pub(crate) fn add_info(info: Info) -> Result<c_int, c_int> {
    add(info)
}

/// A new info object holding `pairs`, in order; its handle.
pub(crate) fn new_info(pairs: &[(&str, &str)]) -> Result<c_int, c_int> {
    let mut info = Info::default();
    for (k, v) in pairs {
        info.set(k.as_bytes(), v.as_bytes());
    }
    add(info)
}

/// A copy of info object `h` (`MPI_INFO_ENV` too).
pub(crate) fn info_of(h: c_int) -> Result<Info, c_int> {
    match h {
        MPI_INFO_ENV => Ok(env_info(None)),
        MPI_INFO_NULL => Err(MPI_ERR_ARG),
        _ => {
            let i = index(h).ok_or(MPI_ERR_INFO)?;
            with_table(&INFOS, |t| t.get(i).cloned().flatten())?.ok_or(MPI_ERR_INFO)
        }
    }
}

/// Runs `f` on info object `h` to change it.
fn with_info_mut<R>(h: c_int, f: impl FnOnce(&mut Info) -> Result<R, c_int>) -> Result<R, c_int> {
    match h {
        MPI_INFO_ENV => Err(MPI_ERR_INFO),
        MPI_INFO_NULL => Err(MPI_ERR_ARG),
        _ => {
            let i = index(h).ok_or(MPI_ERR_INFO)?;
            with_table(&INFOS, |t| {
                t.get_mut(i)
                    .and_then(Option::as_mut)
                    .ok_or(MPI_ERR_INFO)
                    .and_then(f)
            })?
        }
    }
}

/// The bytes of a C string; `MPI_ERR_ARG` for null.
///
/// # Safety
/// `p` is null or NUL-terminated and valid until `'a` ends.
pub(crate) unsafe fn c_bytes<'a>(p: *const c_char) -> Result<&'a [u8], c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: non-null, NUL-terminated by the caller's contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// A key argument: 1 to `MPI_MAX_INFO_KEY` bytes.
///
/// # Safety
/// As [`c_bytes`].
unsafe fn key<'a>(p: *const c_char) -> Result<&'a [u8], c_int> {
    // SAFETY: by the caller's contract.
    let k = unsafe { c_bytes(p) }?;
    if k.is_empty() || k.len() > MPI_MAX_INFO_KEY {
        return Err(MPI_ERR_INFO_KEY);
    }
    Ok(k)
}

/// Writes the first `cap - 1` bytes of `bytes` and a NUL to `out` (nothing
/// when `cap` is 0).
///
/// # Safety
/// `out` is valid for `cap` bytes (or `cap` is 0).
pub(crate) unsafe fn write_c(bytes: &[u8], out: *mut c_char, cap: usize) -> Result<(), c_int> {
    if cap == 0 {
        return Ok(());
    }
    if out.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let n = bytes.len().min(cap - 1);
    // SAFETY: `out` holds `cap` bytes by the caller's contract and
    // `n + 1 <= cap`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), n);
        *out.add(n) = 0;
    }
    Ok(())
}

/// What `MPI_INFO_ENV` holds, with `args` (else this process's arguments)
/// as `command` and `argv`.
fn env_info(args: Option<Vec<Vec<u8>>>) -> Info {
    let args = args.unwrap_or_else(|| std::env::args_os().map(OsStringExt::into_vec).collect());
    let mut info = Info::default();
    let mut put = |k: &str, v: &[u8]| info.set(k.as_bytes(), &v[..v.len().min(MPI_MAX_INFO_VAL)]);
    if let Some((command, rest)) = args.split_first() {
        put("command", command);
        if !rest.is_empty() {
            put("argv", &rest.join(&b' '));
        }
    }
    if let Ok(world) = comm_of(MPI_COMM_WORLD) {
        put("maxprocs", world.size().to_string().as_bytes());
    }
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        if !host.trim().is_empty() {
            put("host", host.trim().as_bytes());
        }
    }
    put("arch", std::env::consts::ARCH.as_bytes());
    if let Ok(dir) = std::env::current_dir() {
        put("wdir", &dir.into_os_string().into_vec());
    }
    put("thread_level", crate::serial::level_name().as_bytes());
    info
}

crate::mpi! {
    /// `MPI_Info_create`: an empty info object.
    fn PMPI_Info_create(info: *mut c_int) -> c_int as MPI_Info_create {
        call(MPI_COMM_WORLD, "MPI_Info_create", || {
            if info.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = add(Info::default())?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { out(info, h) }
        })
    }
}

crate::mpi! {
    /// `MPI_Info_create_env`: a new object holding what `MPI_INFO_ENV`
    /// holds, with `argv` (when given) as `command` and `argv`. Callable
    /// before `MPI_Init` (without `maxprocs` then).
    fn PMPI_Info_create_env(argc: c_int, argv: *const *const c_char, info: *mut c_int) -> c_int as MPI_Info_create_env {
        call(MPI_COMM_WORLD, "MPI_Info_create_env", || {
            if info.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let args = match usize::try_from(argc) {
                Ok(n) if n > 0 && !argv.is_null() => {
                    let mut args = Vec::with_capacity(n);
                    for i in 0..n {
                        // SAFETY: MPI's contract: `argv` holds `argc`
                        // pointers, each null or a C string.
                        let a = unsafe { *argv.add(i) };
                        if a.is_null() {
                            break;
                        }
                        // SAFETY: non-null, a C string by the contract.
                        args.push(unsafe { c_bytes(a) }?.to_vec());
                    }
                    Some(args)
                }
                _ => None,
            };
            let h = add(env_info(args))?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { out(info, h) }
        })
    }
}

crate::mpi! {
    /// `MPI_Info_free`: the handle becomes `MPI_INFO_NULL`
    /// (`MPI_INFO_ENV` cannot be freed).
    fn PMPI_Info_free(info: *mut c_int) -> c_int as MPI_Info_free {
        call(MPI_COMM_WORLD, "MPI_Info_free", || {
            if info.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: checked non-null; readable by MPI's contract.
            let h = unsafe { *info };
            match h {
                MPI_INFO_NULL => return Err(MPI_ERR_ARG),
                MPI_INFO_ENV => return Err(MPI_ERR_INFO),
                _ => {}
            }
            let i = index(h).ok_or(MPI_ERR_INFO)?;
            with_table(&INFOS, |t| t.get_mut(i).and_then(Option::take))?.ok_or(MPI_ERR_INFO)?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { out(info, MPI_INFO_NULL) }
        })
    }
}

crate::mpi! {
    /// `MPI_Info_set`: adds `key` or replaces its value.
    fn PMPI_Info_set(info: c_int, k: *const c_char, value: *const c_char) -> c_int as MPI_Info_set {
        call(MPI_COMM_WORLD, "MPI_Info_set", || {
            // SAFETY: MPI's contract: C strings.
            let (k, v) = unsafe { (key(k)?, c_bytes(value)?) };
            if v.len() > MPI_MAX_INFO_VAL {
                return Err(MPI_ERR_INFO_VALUE);
            }
            with_info_mut(info, |i| {
                i.set(k, v);
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Info_delete` (`MPI_ERR_INFO_NOKEY` if `key` is not set).
    fn PMPI_Info_delete(info: c_int, k: *const c_char) -> c_int as MPI_Info_delete {
        call(MPI_COMM_WORLD, "MPI_Info_delete", || {
            // SAFETY: MPI's contract: a C string.
            let k = unsafe { key(k) }?;
            with_info_mut(info, |i| if i.delete(k) { Ok(()) } else { Err(MPI_ERR_INFO_NOKEY) })
        })
    }
}

crate::mpi! {
    /// `MPI_Info_get` (MPI-3): the value's first `valuelen` bytes and a
    /// NUL (`value` holds `valuelen + 1` bytes); `flag` says whether `key`
    /// is set (`value` untouched when not).
    fn PMPI_Info_get(info: c_int, k: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) -> c_int as MPI_Info_get {
        call(MPI_COMM_WORLD, "MPI_Info_get", || {
            let cap = usize::try_from(valuelen).map_err(|_| MPI_ERR_ARG)?;
            if flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: a C string.
            let k = unsafe { key(k) }?;
            let i = info_of(info)?;
            let v = i.get(k);
            if let Some(v) = v {
                // SAFETY: MPI's contract: `value` holds `valuelen + 1`
                // bytes.
                unsafe { write_c(v, value, cap + 1) }?;
            }
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { out(flag, c_int::from(v.is_some())) }
        })
    }
}

crate::mpi! {
    /// `MPI_Info_get_string` (MPI-4): when `key` is set, the value cut to
    /// `*buflen - 1` bytes and a NUL (nothing written when `*buflen` is
    /// 0), and `*buflen` becomes the value's length plus one; when not,
    /// `*buflen` is left as it is.
    fn PMPI_Info_get_string(info: c_int, k: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) -> c_int as MPI_Info_get_string {
        call(MPI_COMM_WORLD, "MPI_Info_get_string", || {
            if buflen.is_null() || flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: checked non-null; readable by MPI's contract.
            let cap = usize::try_from(unsafe { *buflen }).map_err(|_| MPI_ERR_ARG)?;
            // SAFETY: MPI's contract: a C string.
            let k = unsafe { key(k) }?;
            let i = info_of(info)?;
            let v = i.get(k);
            if let Some(v) = v {
                let need = c_int::try_from(v.len() + 1).map_err(|_| MPI_ERR_INTERN)?;
                // SAFETY: MPI's contract: `value` holds `*buflen` bytes;
                // `buflen` checked non-null.
                unsafe {
                    write_c(v, value, cap)?;
                    out(buflen, need)?;
                }
            }
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { out(flag, c_int::from(v.is_some())) }
        })
    }
}

crate::mpi! {
    /// `MPI_Info_get_valuelen`: the value's length without the NUL.
    fn PMPI_Info_get_valuelen(info: c_int, k: *const c_char, valuelen: *mut c_int, flag: *mut c_int) -> c_int as MPI_Info_get_valuelen {
        call(MPI_COMM_WORLD, "MPI_Info_get_valuelen", || {
            if valuelen.is_null() || flag.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: a C string.
            let k = unsafe { key(k) }?;
            let i = info_of(info)?;
            let v = i.get(k);
            if let Some(v) = v {
                // Values are at most MPI_MAX_INFO_VAL bytes.
                // SAFETY: checked non-null; writable by MPI's contract.
                unsafe { out(valuelen, v.len() as c_int) }?;
            }
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { out(flag, c_int::from(v.is_some())) }
        })
    }
}

crate::mpi! {
    /// `MPI_Info_get_nkeys`.
    fn PMPI_Info_get_nkeys(info: c_int, nkeys: *mut c_int) -> c_int as MPI_Info_get_nkeys {
        call(MPI_COMM_WORLD, "MPI_Info_get_nkeys", || {
            let n = c_int::try_from(info_of(info)?.0.len()).map_err(|_| MPI_ERR_INTERN)?;
            // SAFETY: MPI's contract: null or writable.
            unsafe { out(nkeys, n) }
        })
    }
}

crate::mpi! {
    /// `MPI_Info_get_nthkey`: key `n` (from 0, in the order keys were
    /// first set) into `key`, which holds `MPI_MAX_INFO_KEY + 1` bytes.
    fn PMPI_Info_get_nthkey(info: c_int, n: c_int, k: *mut c_char) -> c_int as MPI_Info_get_nthkey {
        call(MPI_COMM_WORLD, "MPI_Info_get_nthkey", || {
            let i = info_of(info)?;
            let (nth, _) = usize::try_from(n)
                .ok()
                .and_then(|n| i.0.get(n))
                .ok_or(MPI_ERR_ARG)?;
            if k.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: `k` holds MPI_MAX_INFO_KEY + 1 bytes.
            unsafe { write_c(nth, k, MPI_MAX_INFO_KEY + 1) }
        })
    }
}

crate::mpi! {
    /// `MPI_Info_dup` (of `MPI_INFO_ENV` too: a new object holding what it
    /// holds).
    fn PMPI_Info_dup(info: c_int, newinfo: *mut c_int) -> c_int as MPI_Info_dup {
        call(MPI_COMM_WORLD, "MPI_Info_dup", || {
            if newinfo.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = add(info_of(info)?)?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { out(newinfo, h) }
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_set_info`: merges `info`'s pairs into the communicator's
    /// hints (local: pertinax acts on none of them, so the members need
    /// not agree).
    fn PMPI_Comm_set_info(comm: c_int, info: c_int) -> c_int as MPI_Comm_set_info {
        call(comm, "MPI_Comm_set_info", || {
            let c = comm_of(comm)?;
            let new = info_of(info)?;
            with_table(&HINTS, |t| {
                if let Some(hints) = t.get_mut(comm) {
                    for (k, v) in &new.0 {
                        hints.set(k, v);
                    }
                } else {
                    t.set(comm, &c, new);
                }
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_get_info`: a new info object holding the hints set on the
    /// communicator (empty if none were).
    fn PMPI_Comm_get_info(comm: c_int, info_used: *mut c_int) -> c_int as MPI_Comm_get_info {
        call(comm, "MPI_Comm_get_info", || {
            comm_of(comm)?;
            if info_used.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let hints = with_table(&HINTS, |t| t.get(comm).cloned())?.unwrap_or_default();
            let h = add(hints)?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { out(info_used, h) }
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_set_name` (cut to `MPI_MAX_OBJECT_NAME - 1` bytes).
    fn PMPI_Comm_set_name(comm: c_int, name: *const c_char) -> c_int as MPI_Comm_set_name {
        call(comm, "MPI_Comm_set_name", || {
            let c = comm_of(comm)?;
            // SAFETY: MPI's contract: a C string.
            let name = unsafe { c_bytes(name) }?;
            let name = name[..name.len().min(MPI_MAX_OBJECT_NAME - 1)].to_vec();
            with_table(&NAMES, |t| t.set(comm, &c, name))
        })
    }
}

crate::mpi! {
    /// `MPI_Comm_get_name`: into `name`, which holds
    /// `MPI_MAX_OBJECT_NAME` bytes; the empty string for a communicator
    /// never named.
    fn PMPI_Comm_get_name(comm: c_int, name: *mut c_char, resultlen: *mut c_int) -> c_int as MPI_Comm_get_name {
        call(comm, "MPI_Comm_get_name", || {
            if comm != MPI_COMM_NULL {
                comm_of(comm)?;
            }
            if name.is_null() || resultlen.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let set = with_table(&NAMES, |t| t.get(comm).cloned())?;
            let n = set.unwrap_or_else(|| match comm {
                MPI_COMM_WORLD => b"MPI_COMM_WORLD".to_vec(),
                MPI_COMM_SELF => b"MPI_COMM_SELF".to_vec(),
                MPI_COMM_NULL => b"MPI_COMM_NULL".to_vec(),
                _ => Vec::new(),
            });
            // SAFETY: MPI's contract: `name` holds MPI_MAX_OBJECT_NAME
            // bytes; `resultlen` checked non-null.
            unsafe {
                write_c(&n, name, MPI_MAX_OBJECT_NAME)?;
                out(resultlen, n.len() as c_int)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_values_are_replaced_in_place() {
        let mut i = Info::default();
        i.set(b"a", b"1");
        i.set(b"b", b"2");
        i.set(b"a", b"3");
        assert_eq!(i.get(b"a"), Some(&b"3"[..]));
        assert_eq!(i.0[0].0, b"a");
        assert!(i.delete(b"a"));
        assert!(!i.delete(b"a"));
        assert_eq!(i.0.len(), 1);
    }

    #[test]
    fn handles_round_trip() {
        assert_eq!(index(INFO_DIRECT | 7), Some(7));
        assert_eq!(index(MPI_INFO_NULL), None);
        assert_eq!(index(MPI_INFO_ENV), None);
    }

    #[test]
    fn the_environment_has_its_keys_without_a_job() {
        // As an exported function would, before it reads the state.
        let _entry = crate::serial::enter().expect("no job joined: any thread may enter");
        let i = env_info(Some(vec![b"prog".to_vec(), b"a".to_vec(), b"b c".to_vec()]));
        assert_eq!(i.get(b"command"), Some(&b"prog"[..]));
        assert_eq!(i.get(b"argv"), Some(&b"a b c"[..]));
        assert!(i.get(b"wdir").is_some() && i.get(b"arch").is_some());
        // No MPI_Init in this process: no world to count.
        assert!(i.get(b"maxprocs").is_none());
    }
}
