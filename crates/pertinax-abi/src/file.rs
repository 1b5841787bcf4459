//! MPI-IO (`MPI_File_*`) over POSIX files: every process of the file's
//! communicator opens the same file and reads and writes it with
//! `pread`/`pwrite` (one node, or a filesystem all the nodes share).
//!
//! - A file holds a private duplicate of the communicator it was opened
//!   on (errors return there); the collective parts (open, close,
//!   `set_view`, `set_size`, the ordered and shared-pointer seeks) are the
//!   library's own collectives on it, so under `pertinax run --resilient`
//!   they are the resilient ones. The `_all` data calls need no
//!   communication and run as the independent ones.
//! - Views (`view.rs`): a displacement, an etype and a filetype tiled from
//!   it; an access maps its bytes to file byte ranges through the
//!   filetype's blocks. Native data only (`datarep.rs`: `"native"`,
//!   `"internal"`, and registered names without conversion functions).
//! - The shared file pointer (`access.rs`): 8 bytes in a side file every
//!   process opened (made by rank 0 beside the file, unlinked once all
//!   have it open), changed under an `fcntl` lock; in memory when the
//!   communicator has one process. Atomic mode locks each access's byte
//!   range of the file with `fcntl`.
//! - The data calls (`calls.rs`, `calls_c.rs`): explicit offsets,
//!   individual and shared pointers, ordered, split collectives, and the
//!   non-blocking forms, which complete at once (a done request).
//! - Error handlers (`errh.rs`): a file's own, `MPI_ERRORS_RETURN` by
//!   default; the one set on `MPI_FILE_NULL` is the default for the next
//!   opens, and handles the errors of `MPI_File_open` and
//!   `MPI_File_delete`.
//!
//! A file handle is a pointer in MPICH's ABI: here `(index + 1) << 4`,
//! never dereferenced; its Fortran and integer forms are `index + 1`.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, CStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::rc::Rc;

use crate::check::out;
use crate::consts::*;
use crate::errors::ok;
use crate::info::{self, Info, MPI_INFO_NULL};
use crate::serial::Serial;
use crate::state;

mod access;
mod calls;
mod calls_c;
mod datarep;
mod errh;
mod view;

pub(crate) use access::Shared;
use view::View;

/// An open file.
#[derive(Debug)]
pub(crate) struct FileEntry {
    file: std::fs::File,
    path: PathBuf,
    /// The private duplicate of the communicator (errors return).
    comm: c_int,
    rank: c_int,
    amode: c_int,
    errhandler: c_int,
    atomic: bool,
    hints: Info,
    view: View,
    /// The individual file pointer, in etypes of the view.
    pos: i64,
    shared: Shared,
    /// A split collective begun and not ended: its status.
    split: Option<MpiStatus>,
}

type Entry = Rc<RefCell<FileEntry>>;

/// Open files by index.
static FILES: Serial<RefCell<Vec<Option<Entry>>>> = Serial::new(RefCell::new(Vec::new()));
/// The error handler of `MPI_FILE_NULL`: new files' default.
static DEFAULT_EH: Serial<Cell<c_int>> = Serial::new(Cell::new(MPI_ERRORS_RETURN));

/// The most files open at once.
const MAX_FILES: usize = 1 << 24;

fn handle_of(i: usize) -> MPI_File {
    std::ptr::without_provenance_mut((i + 1) << 4)
}

fn index_of(fh: MPI_File) -> Option<usize> {
    let v = fh as usize;
    (v != 0 && v & 0xf == 0).then(|| (v >> 4) - 1)
}

/// The Fortran (and integer) form of a file handle.
pub(crate) fn c2f(fh: MPI_File) -> c_int {
    index_of(fh).map_or(0, |i| (i + 1) as c_int)
}

/// The file handle of a Fortran (or integer) form.
pub(crate) fn f2c(f: c_int) -> MPI_File {
    if f <= 0 {
        MPI_FILE_NULL
    } else {
        handle_of(f as usize - 1)
    }
}

/// The open file of `fh`, or `MPI_ERR_FILE`.
fn entry(fh: MPI_File) -> Result<Entry, c_int> {
    let i = index_of(fh).ok_or(MPI_ERR_FILE)?;
    info::with_table(&FILES, |t| t.get(i).cloned().flatten())?.ok_or(MPI_ERR_FILE)
}

/// Hands `code` from call `what` on `fh` to its error handler (an
/// invalid or null handle's: `MPI_FILE_NULL`'s).
pub(crate) fn raise(fh: MPI_File, what: &str, code: c_int) -> c_int {
    if code == MPI_SUCCESS {
        return code;
    }
    let eh = entry(fh)
        .ok()
        .and_then(|e| e.try_borrow().ok().map(|e| e.errhandler))
        .unwrap_or_else(|| DEFAULT_EH.with(Cell::get));
    crate::errors::invoke_file(eh, fh, what, code)
}

/// Runs a call's body on file `fh`; an error goes to its handler.
fn call<F>(fh: MPI_File, what: &str, f: F) -> c_int
where
    F: FnOnce(&Entry) -> Result<(), c_int>,
{
    let r = entry(fh).and_then(|e| f(&e));
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(code) => raise(fh, what, code),
    }
}

/// Runs `f` on the file, borrowed (`f` must not call back into MPI).
fn with<R>(e: &Entry, f: impl FnOnce(&mut FileEntry) -> Result<R, c_int>) -> Result<R, c_int> {
    let mut g = e.try_borrow_mut().map_err(|_| MPI_ERR_INTERN)?;
    f(&mut g)
}

/// The MPI error class of an I/O error.
pub(crate) fn io_class(e: &std::io::Error) -> c_int {
    match e.raw_os_error() {
        Some(libc::ENOENT) => MPI_ERR_NO_SUCH_FILE,
        Some(libc::EEXIST) => MPI_ERR_FILE_EXISTS,
        Some(libc::EACCES | libc::EPERM | libc::EBADF) => MPI_ERR_ACCESS,
        Some(libc::EROFS) => MPI_ERR_READ_ONLY,
        Some(libc::ENOSPC) => MPI_ERR_NO_SPACE,
        Some(libc::EDQUOT) => MPI_ERR_QUOTA,
        Some(libc::EISDIR | libc::ENOTDIR | libc::ENAMETOOLONG | libc::ELOOP | libc::EINVAL) => {
            MPI_ERR_BAD_FILE
        }
        _ => MPI_ERR_IO,
    }
}

/// The path of a C file name: ROMIO's file-system prefixes (`ufs:`,
/// `nfs:`, ...) are dropped; an empty name is `MPI_ERR_BAD_FILE`.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
unsafe fn path_of(name: *const c_char) -> Result<PathBuf, c_int> {
    if name.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: NUL-terminated by the caller's contract.
    let b = unsafe { CStr::from_ptr(name) }.to_bytes();
    let mut b = b;
    for p in [
        &b"ufs:"[..],
        b"nfs:",
        b"lustre:",
        b"gpfs:",
        b"pvfs2:",
        b"daos:",
        b"xfs:",
    ] {
        if let Some(rest) = b.strip_prefix(p) {
            b = rest;
            break;
        }
    }
    if b.is_empty() {
        return Err(MPI_ERR_BAD_FILE);
    }
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(b)))
}

/// Checks an access mode (MPI 4.1 §14.2.1); `MPI_ERR_AMODE` if wrong.
fn check_amode(amode: c_int) -> Result<(), c_int> {
    let known = MPI_MODE_RDONLY
        | MPI_MODE_WRONLY
        | MPI_MODE_RDWR
        | MPI_MODE_CREATE
        | MPI_MODE_EXCL
        | MPI_MODE_DELETE_ON_CLOSE
        | MPI_MODE_UNIQUE_OPEN
        | MPI_MODE_SEQUENTIAL
        | MPI_MODE_APPEND;
    let access = [MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR]
        .iter()
        .filter(|&&m| amode & m != 0)
        .count();
    let rdonly = amode & MPI_MODE_RDONLY != 0;
    if amode & !known != 0
        || access != 1
        || (rdonly && amode & (MPI_MODE_CREATE | MPI_MODE_EXCL) != 0)
        || (amode & MPI_MODE_RDWR != 0 && amode & MPI_MODE_SEQUENTIAL != 0)
    {
        return Err(MPI_ERR_AMODE);
    }
    Ok(())
}

/// Opens `path` with `amode`; `create` adds `MPI_MODE_CREATE` and
/// `MPI_MODE_EXCL` (rank 0's open).
fn open_path(path: &PathBuf, amode: c_int, create: bool) -> Result<std::fs::File, c_int> {
    let mut o = std::fs::OpenOptions::new();
    o.read(amode & MPI_MODE_WRONLY == 0)
        .write(amode & MPI_MODE_RDONLY == 0)
        .mode(0o666);
    if create && amode & MPI_MODE_EXCL != 0 {
        o.create_new(true);
    } else if create && amode & MPI_MODE_CREATE != 0 {
        o.create(true);
    }
    o.open(path).map_err(|e| io_class(&e))
}

/// A hint set as bytes.
fn hints_of(h: c_int) -> Result<Info, c_int> {
    if h == MPI_INFO_NULL {
        Ok(Info::default())
    } else {
        info::info_of(h)
    }
}

crate::mpi! {
    /// `MPI_File_open`: collective over `comm`; rank 0 creates the file
    /// (`MPI_MODE_EXCL` is its open's), then the others open it. Errors go
    /// to `MPI_FILE_NULL`'s handler and are the same on every process.
    fn PMPI_File_open(comm: c_int, filename: *const c_char, amode: c_int, info: c_int, fh: *mut MPI_File) -> c_int as MPI_File_open {
        if fh.is_null() {
            return raise(MPI_FILE_NULL, "MPI_File_open", MPI_ERR_ARG);
        }
        // SAFETY: MPI's contract for the arguments.
        match unsafe { open(comm, filename, amode, info) } {
            Ok(h) => {
                // SAFETY: checked non-null above.
                unsafe { *fh = h };
                MPI_SUCCESS
            }
            Err(code) => {
                // SAFETY: as above.
                unsafe { *fh = MPI_FILE_NULL };
                raise(MPI_FILE_NULL, "MPI_File_open", code)
            }
        }
    }
}

/// `MPI_File_open`'s body; the new handle.
///
/// # Safety
/// `filename` is null or a C string.
unsafe fn open(
    comm: c_int,
    filename: *const c_char,
    amode: c_int,
    info: c_int,
) -> Result<MPI_File, c_int> {
    if state::with(|s| s.comm(comm).is_some()) != Some(true) {
        return Err(MPI_ERR_COMM);
    }
    let mut inter = 0;
    // SAFETY: a valid communicator and an int to write.
    ok(unsafe { crate::comm::PMPI_Comm_test_inter(comm, &mut inter) })?;
    if inter != 0 {
        return Err(MPI_ERR_COMM);
    }
    // SAFETY: forwarded.
    let path = unsafe { path_of(filename) }?;
    check_amode(amode)?;
    let hints = hints_of(info)?;
    let mut dup = MPI_COMM_NULL;
    // SAFETY: a valid communicator and an int to write.
    ok(unsafe { crate::comm::PMPI_Comm_dup(comm, &mut dup) })?;
    // SAFETY: the communicator just made.
    let made = unsafe { open_on(dup, &path, amode, hints) };
    if made.is_err() {
        // SAFETY: the communicator just made, not used elsewhere.
        unsafe { crate::comm::PMPI_Comm_free(&mut dup) };
    }
    made
}

/// Opens the file collectively over `dup`, the file's own communicator.
///
/// # Safety
/// `dup` is a valid communicator handle.
unsafe fn open_on(
    dup: c_int,
    path: &PathBuf,
    amode: c_int,
    hints: Info,
) -> Result<MPI_File, c_int> {
    // SAFETY: a valid communicator; ints to write.
    ok(unsafe { crate::errors::PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN) })?;
    let (mut rank, mut size) = (0, 0);
    // SAFETY: as above.
    ok(unsafe { crate::comm::PMPI_Comm_rank(dup, &mut rank) })?;
    // SAFETY: as above.
    ok(unsafe { crate::comm::PMPI_Comm_size(dup, &mut size) })?;
    // Rank 0 first (it creates the file, and the side file of the shared
    // pointer), and tells the others its outcome and the side file's name.
    let mut first: Option<(std::fs::File, Option<std::fs::File>)> = None;
    let mut side_made: Option<PathBuf> = None;
    let mut msg = vec![0u8; 4 + access::SIDE_NAME_MAX];
    if rank == 0 {
        let r = open_path(path, amode, true).and_then(|f| {
            let side = if size > 1 {
                Some(access::make_side(path)?)
            } else {
                None
            };
            Ok((f, side))
        });
        let code = match r {
            Ok((f, side)) => {
                first = Some((
                    f,
                    side.map(|(sf, p)| {
                        let b = p.as_os_str().as_bytes();
                        msg[4..4 + b.len()].copy_from_slice(b);
                        side_made = Some(p);
                        sf
                    }),
                ));
                MPI_SUCCESS
            }
            Err(c) => c,
        };
        msg[..4].copy_from_slice(&code.to_ne_bytes());
    }
    let told = access::bcast(dup, &mut msg);
    let code = c_int::from_ne_bytes([msg[0], msg[1], msg[2], msg[3]]);
    let (file, side) = match first {
        Some((f, s)) => (Ok(f), Ok(s)),
        None => {
            let name_len = msg[4..].iter().position(|&b| b == 0).unwrap_or(0);
            let side_path = PathBuf::from(std::ffi::OsStr::from_bytes(&msg[4..4 + name_len]));
            let f = told
                .and(ok(code))
                .and_then(|()| open_path(path, amode, false));
            let s = if size > 1 && f.is_ok() {
                access::open_side(&side_path).map(Some)
            } else {
                Ok(None)
            };
            (f, s)
        }
    };
    let local = match (&file, &side) {
        (Ok(_), Ok(_)) => MPI_SUCCESS,
        (Err(c), _) | (_, Err(c)) => *c,
    };
    // Every process has the side file open (or failed): its name can go.
    let worst = crate::coll::allreduce_max(dup, local);
    if let Some(p) = side_made {
        let _ = std::fs::remove_file(p);
    }
    let worst = worst?;
    let (file, side) = match (file, side) {
        (Ok(f), Ok(s)) if worst == MPI_SUCCESS => (f, s),
        _ => return Err(if local != MPI_SUCCESS { local } else { worst }),
    };
    let shared = match side {
        Some(f) => Shared::File(f),
        None => Shared::Local(Cell::new(0)),
    };
    let mut e = FileEntry {
        file,
        path: path.clone(),
        comm: dup,
        rank,
        amode,
        errhandler: DEFAULT_EH.with(Cell::get),
        atomic: false,
        hints,
        view: View::default(),
        pos: 0,
        shared,
        split: None,
    };
    if amode & MPI_MODE_APPEND != 0 {
        let end = e.file.metadata().map_err(|x| io_class(&x))?.len() as i64;
        e.pos = end;
        if rank == 0 {
            e.shared.set(end)?;
        }
        access::barrier(dup)?;
    }
    crate::errors::attach(e.errhandler);
    let i = info::with_table(&FILES, |t| state::insert(t, Rc::new(RefCell::new(e))))?;
    if i >= MAX_FILES {
        return Err(MPI_ERR_NO_MEM);
    }
    Ok(handle_of(i))
}

crate::mpi! {
    /// `MPI_File_close`: collective; `MPI_MODE_DELETE_ON_CLOSE` removes
    /// the file once every process closed it.
    fn PMPI_File_close(fh: *mut MPI_File) -> c_int as MPI_File_close {
        if fh.is_null() {
            return raise(MPI_FILE_NULL, "MPI_File_close", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract.
        let h = unsafe { *fh };
        let rc = call(h, "MPI_File_close", |e| {
            let (comm, rank, amode, path) = {
                let g = e.try_borrow().map_err(|_| MPI_ERR_INTERN)?;
                (g.comm, g.rank, g.amode, g.path.clone())
            };
            access::barrier(comm)?;
            if amode & MPI_MODE_DELETE_ON_CLOSE != 0 && rank == 0 {
                let _ = std::fs::remove_file(&path);
            }
            let i = index_of(h).ok_or(MPI_ERR_FILE)?;
            info::with_table(&FILES, |t| t[i] = None)?;
            let mut g = e.try_borrow_mut().map_err(|_| MPI_ERR_INTERN)?;
            g.view.release();
            crate::errors::detach(g.errhandler);
            let mut c = g.comm;
            // SAFETY: the file's own communicator, freed once.
            unsafe { crate::comm::PMPI_Comm_free(&mut c) };
            Ok(())
        });
        if rc == MPI_SUCCESS {
            // SAFETY: as above.
            unsafe { *fh = MPI_FILE_NULL };
        }
        rc
    }
}

crate::mpi! {
    /// `MPI_File_delete`: removes the file (not collective).
    fn PMPI_File_delete(filename: *const c_char, info: c_int) -> c_int as MPI_File_delete {
        // SAFETY: MPI's contract for `filename`.
        let r = unsafe { path_of(filename) }
            .and_then(|p| hints_of(info).map(|_| p))
            .and_then(|p| std::fs::remove_file(p).map_err(|e| io_class(&e)));
        match r {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(MPI_FILE_NULL, "MPI_File_delete", code),
        }
    }
}

crate::mpi! {
    /// `MPI_File_set_size`: collective; truncates or extends the file.
    fn PMPI_File_set_size(fh: MPI_File, size: i64) -> c_int as MPI_File_set_size {
        call(fh, "MPI_File_set_size", |e| resize(e, size, false))
    }
}

crate::mpi! {
    /// `MPI_File_preallocate`: collective; the file has at least `size`
    /// bytes of storage (its data below the old size unchanged).
    fn PMPI_File_preallocate(fh: MPI_File, size: i64) -> c_int as MPI_File_preallocate {
        call(fh, "MPI_File_preallocate", |e| resize(e, size, true))
    }
}

/// `set_size` (`grow`: `preallocate`) by rank 0 once every process
/// called, the outcome to all.
fn resize(e: &Entry, size: i64, grow: bool) -> Result<(), c_int> {
    let size = u64::try_from(size).map_err(|_| MPI_ERR_ARG)?;
    with(e, |g| {
        if g.amode & MPI_MODE_SEQUENTIAL != 0 {
            return Err(MPI_ERR_UNSUPPORTED_OPERATION);
        }
        if g.amode & MPI_MODE_RDONLY != 0 {
            return Err(MPI_ERR_READ_ONLY);
        }
        Ok(())
    })?;
    by_rank0(e, |g| {
        if grow {
            access::preallocate(&g.file, access::size(&g.file)?, size)
        } else {
            g.file.set_len(size).map_err(|x| io_class(&x))
        }
    })
}

/// A change rank 0 makes for all (the file's size, the shared pointer):
/// after every process entered the call (none still reads the old
/// state), its outcome to all.
pub(crate) fn by_rank0(
    e: &Entry,
    f: impl FnOnce(&mut FileEntry) -> Result<(), c_int>,
) -> Result<(), c_int> {
    let (comm, rank) = with(e, |g| Ok((g.comm, g.rank)))?;
    access::barrier(comm)?;
    let code = if rank == 0 {
        with(e, f).err().unwrap_or(MPI_SUCCESS)
    } else {
        MPI_SUCCESS
    };
    ok(crate::coll::allreduce_max(comm, code)?)
}

crate::mpi! {
    /// `MPI_File_get_size`: the file's size in bytes.
    fn PMPI_File_get_size(fh: MPI_File, size: *mut i64) -> c_int as MPI_File_get_size {
        call(fh, "MPI_File_get_size", |e| {
            let n = with(e, |g| g.file.metadata().map_err(|x| io_class(&x)))?.len();
            // SAFETY: MPI's contract.
            unsafe { out(size, n as i64) }
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_group`: the group of the file's communicator.
    fn PMPI_File_get_group(fh: MPI_File, group: *mut c_int) -> c_int as MPI_File_get_group {
        call(fh, "MPI_File_get_group", |e| {
            let comm = with(e, |g| Ok(g.comm))?;
            if group.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: a valid communicator; `group` checked non-null.
            ok(unsafe { crate::comm::PMPI_Comm_group(comm, group) })
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_amode`.
    fn PMPI_File_get_amode(fh: MPI_File, amode: *mut c_int) -> c_int as MPI_File_get_amode {
        call(fh, "MPI_File_get_amode", |e| {
            let a = with(e, |g| Ok(g.amode))?;
            // SAFETY: MPI's contract.
            unsafe { out(amode, a) }
        })
    }
}

crate::mpi! {
    /// `MPI_File_set_info`: the hints are kept (merged); none acts.
    fn PMPI_File_set_info(fh: MPI_File, info: c_int) -> c_int as MPI_File_set_info {
        call(fh, "MPI_File_set_info", |e| {
            let new = hints_of(info)?;
            with(e, |g| {
                g.hints.merge(&new);
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_info`: a new info object with the hints set.
    fn PMPI_File_get_info(fh: MPI_File, info_used: *mut c_int) -> c_int as MPI_File_get_info {
        call(fh, "MPI_File_get_info", |e| {
            if info_used.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let h = with(e, |g| Ok(g.hints.clone()))?;
            let h = info::add_info(h)?;
            // SAFETY: checked non-null; MPI's contract.
            unsafe { out(info_used, h) }
        })
    }
}

crate::mpi! {
    /// `MPI_File_sync`: `fsync`, then a barrier (MPI's sync-barrier-sync
    /// needs no more on one shared file).
    fn PMPI_File_sync(fh: MPI_File) -> c_int as MPI_File_sync {
        call(fh, "MPI_File_sync", |e| {
            let (comm, code) = with(e, |g| {
                Ok((g.comm, g.file.sync_data().err().map_or(MPI_SUCCESS, |x| io_class(&x))))
            })?;
            ok(crate::coll::allreduce_max(comm, code)?)
        })
    }
}

crate::mpi! {
    /// `MPI_File_set_atomicity`: collective; atomic mode locks the byte
    /// range of each access.
    fn PMPI_File_set_atomicity(fh: MPI_File, flag: c_int) -> c_int as MPI_File_set_atomicity {
        call(fh, "MPI_File_set_atomicity", |e| {
            let comm = with(e, |g| {
                g.atomic = flag != 0;
                Ok(g.comm)
            })?;
            access::barrier(comm)
        })
    }
}

crate::mpi! {
    /// `MPI_File_get_atomicity`.
    fn PMPI_File_get_atomicity(fh: MPI_File, flag: *mut c_int) -> c_int as MPI_File_get_atomicity {
        call(fh, "MPI_File_get_atomicity", |e| {
            let a = with(e, |g| Ok(g.atomic))?;
            // SAFETY: MPI's contract.
            unsafe { out(flag, c_int::from(a)) }
        })
    }
}
