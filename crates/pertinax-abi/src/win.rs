//! One-sided communication (`MPI_Win_*`, `MPI_Put`, `MPI_Get`, the
//! accumulates) between processes of one machine, by cross-memory attach.
//!
//! - A window holds a private duplicate of its communicator and, for every
//!   member, its pid, base address, size and displacement unit (gathered
//!   at creation). `MPI_Put` writes the target's memory with
//!   `process_vm_writev`, `MPI_Get` reads it with `process_vm_readv`
//!   (`xfer.rs`): the copy is complete when the call returns, so the
//!   request-based forms return done requests. The target's datatype
//!   becomes a list of address ranges in the target; the origin's is
//!   packed and unpacked as the other calls do.
//! - A shared control segment (`shm.rs`: a memfd rank 0 makes, which the
//!   others map through `/proc/<pid>/fd/<fd>`) holds, per target, the lock
//!   word of `MPI_Win_lock` (a reader-writer lock on futexes) and a mutex
//!   under which the accumulates read, combine and write back, so that
//!   they are atomic per target. A waiter that finds the exclusive holder
//!   or the mutex's holder dead gets `MPIX_ERR_PROC_FAILED`; a dead shared
//!   holder is not detected.
//! - Synchronization (`sync.rs`): a fence is a barrier on the private
//!   communicator; a flush a memory fence; PSCW point-to-point messages
//!   on it. RMA calls outside any epoch are `MPI_ERR_RMA_SYNC`.
//! - Flavors: `create`, `allocate` (`malloc`), `allocate_shared` (one
//!   memfd all members map, contiguous), `create_dynamic` (displacements
//!   are addresses; `attach`/`detach` only record regions).
//! - Attributes, names, info and error handlers (`attr.rs`); the default
//!   handler is `MPI_ERRORS_ARE_FATAL`.
//!
//! Without cross-memory attach (Yama, seccomp, a container), creation
//! fails with `MPI_ERR_UNSUPPORTED_OPERATION`; so does a window on a
//! resilient communicator (`pertinax run --resilient`). A window handle
//! is an `int`: `WIN_DIRECT | index`.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::rc::Rc;

use crate::check::out;
use crate::coll::allreduce_max;
use crate::coll::barrier_of as barrier;
use crate::consts::*;
use crate::errors::ok;
use crate::info::{self, Info, MPI_INFO_NULL};
use crate::serial::Serial;
use crate::state;
use crate::MPI_Aint;

mod attr;
mod ops;
mod shm;
mod sync;
mod xfer;

/// A window this library made: this prefix and its index.
const WIN_DIRECT: c_int = 0xa000_0000_u32 as c_int;
/// The most windows at once (the handle's index bits).
const MAX_WINS: usize = 0x03ff_ffff;

/// What every member of a window knows of each member.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer {
    pub pid: u32,
    pub base: u64,
    pub size: u64,
    pub disp_unit: u64,
}

/// The values the predefined attributes point to (boxed: their
/// addresses stay put).
#[derive(Debug)]
pub(crate) struct AttrVals {
    pub base: *mut c_void,
    pub size: MPI_Aint,
    pub disp_unit: c_int,
    pub flavor: c_int,
    pub model: c_int,
}

/// A window.
#[derive(Debug)]
pub(crate) struct WinEntry {
    /// The private duplicate of the communicator.
    pub comm: c_int,
    pub rank: usize,
    pub size: usize,
    pub flavor: c_int,
    pub peers: Vec<Peer>,
    pub ctl: shm::Mapping,
    /// Memory the window owns: `malloc`ed (`MPI_Win_allocate`) or the
    /// shared segment (`MPI_Win_allocate_shared`, with each member's
    /// offset in it).
    pub mem: Owned,
    pub vals: Box<AttrVals>,
    pub errhandler: c_int,
    pub name: Vec<u8>,
    pub info: Info,
    pub attrs: Vec<(c_int, *mut c_void)>,
    pub epoch: sync::Epoch,
    /// Regions attached to a dynamic window: (address, length).
    pub regions: Vec<(usize, usize)>,
}

/// Memory a window owns.
#[derive(Debug)]
pub(crate) enum Owned {
    None,
    Malloc(*mut c_void),
    Shared {
        map: shm::Mapping,
        offsets: Vec<usize>,
    },
}

impl Drop for Owned {
    fn drop(&mut self) {
        if let Owned::Malloc(p) = *self {
            // SAFETY: from `malloc`, owned by this alone, freed once.
            unsafe { libc::free(p) };
        }
    }
}

/// A byte at a known address of every member, which the others read at
/// creation to learn that cross-memory attach reaches it.
static PROBE: u8 = 0x5a;

type Entry = Rc<RefCell<WinEntry>>;

/// Windows by index.
static WINS: Serial<RefCell<Vec<Option<Entry>>>> = Serial::new(RefCell::new(Vec::new()));

fn index_of(win: c_int) -> Option<usize> {
    (win & !0x03ff_ffff == WIN_DIRECT).then_some((win & 0x03ff_ffff) as usize)
}

/// The window of handle `win`, or `MPI_ERR_WIN`.
fn entry(win: c_int) -> Result<Entry, c_int> {
    let i = index_of(win).ok_or(MPI_ERR_WIN)?;
    info::with_table(&WINS, |t| t.get(i).cloned().flatten())?.ok_or(MPI_ERR_WIN)
}

/// Hands `code` from call `what` on `win` to its error handler (an
/// invalid handle's: `MPI_COMM_WORLD`'s).
pub(crate) fn raise(win: c_int, what: &str, code: c_int) -> c_int {
    if code == MPI_SUCCESS {
        return code;
    }
    match entry(win)
        .ok()
        .and_then(|e| e.try_borrow().ok().map(|e| e.errhandler))
    {
        Some(eh) => crate::errors::invoke(eh, win, what, code),
        None => crate::errors::raise(MPI_COMM_WORLD, what, code),
    }
}

/// Runs a call's body on window `win`; an error goes to its handler.
fn call<F>(win: c_int, what: &str, f: F) -> c_int
where
    F: FnOnce(&Entry) -> Result<(), c_int>,
{
    if pertinax::faults_planned() {
        pertinax::fault_point(&format!(
            "mpi.{}",
            what.strip_prefix("MPI_").unwrap_or(what)
        ));
    }
    match entry(win).and_then(|e| f(&e)) {
        Ok(()) => MPI_SUCCESS,
        Err(code) => raise(win, what, code),
    }
}

/// Runs `f` on the window, borrowed (`f` must not call back into MPI).
fn with<R>(e: &Entry, f: impl FnOnce(&mut WinEntry) -> Result<R, c_int>) -> Result<R, c_int> {
    let mut g = e.try_borrow_mut().map_err(|_| MPI_ERR_INTERN)?;
    f(&mut g)
}

/// Every member's `N` `u64`s, by rank.
fn allgather<const N: usize>(
    comm: c_int,
    size: usize,
    v: [u64; N],
) -> Result<Vec<[u64; N]>, c_int> {
    let mut all = vec![[0u64; N]; size];
    // SAFETY: `N` values in, `N` per member out.
    ok(unsafe {
        crate::coll::PMPI_Allgather(
            v.as_ptr().cast(),
            N as c_int,
            MPI_UINT64_T,
            all.as_mut_ptr().cast(),
            N as c_int,
            MPI_UINT64_T,
            comm,
        )
    })?;
    Ok(all)
}

/// How the memory of a new window is had.
enum Flavor {
    /// The program's (`create`): base and size.
    Create(*mut c_void, usize),
    /// `malloc`ed here (`allocate`): the size.
    Allocate(usize),
    /// One shared segment (`allocate_shared`): this member's size.
    Shared(usize),
    Dynamic,
}

/// A window's creation: checks, the private communicator, the peers,
/// the control segment; its handle (the memory's base to `baseptr` for
/// the allocating flavors).
///
/// # Safety
/// `baseptr` is null or a `void **` for the allocating flavors.
unsafe fn create(
    what: &str,
    flavor: Flavor,
    disp_unit: MPI_Aint,
    info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    if win.is_null() {
        return crate::errors::raise(comm, what, MPI_ERR_ARG);
    }
    // SAFETY: forwarded.
    match unsafe { create_on(flavor, disp_unit, info, comm, baseptr) } {
        Ok(h) => {
            // SAFETY: checked non-null; MPI's contract.
            unsafe { *win = h };
            MPI_SUCCESS
        }
        Err(code) => {
            // SAFETY: as above.
            unsafe { *win = MPI_WIN_NULL };
            crate::errors::raise(comm, what, code)
        }
    }
}

/// [`create`]'s body.
///
/// # Safety
/// As [`create`].
unsafe fn create_on(
    flavor: Flavor,
    disp_unit: MPI_Aint,
    info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
) -> Result<c_int, c_int> {
    if crate::resilient::refused(comm) {
        return Err(MPI_ERR_UNSUPPORTED_OPERATION);
    }
    crate::p2p::comm_of(comm)?;
    let mut inter = 0;
    // SAFETY: a valid communicator and an int to write.
    ok(unsafe { crate::comm::PMPI_Comm_test_inter(comm, &mut inter) })?;
    if inter != 0 {
        return Err(MPI_ERR_COMM);
    }
    let disp_unit = match flavor {
        Flavor::Dynamic => 1,
        _ if disp_unit <= 0 || disp_unit > c_int::MAX as MPI_Aint => return Err(MPI_ERR_DISP),
        _ => disp_unit,
    };
    if !matches!(flavor, Flavor::Create(..) | Flavor::Dynamic) && baseptr.is_null() {
        return Err(MPI_ERR_ARG);
    }
    if let Flavor::Create(b, n) = flavor {
        if b.is_null() && n > 0 {
            return Err(MPI_ERR_BASE);
        }
    }
    let hints = if info == MPI_INFO_NULL {
        Info::default()
    } else {
        info::info_of(info)?
    };
    let mut dup = MPI_COMM_NULL;
    // SAFETY: a valid communicator and an int to write.
    ok(unsafe { crate::comm::PMPI_Comm_dup(comm, &mut dup) })?;
    // SAFETY: the communicator just made; forwarded.
    let made = unsafe { build(dup, flavor, disp_unit, hints) };
    match made {
        Ok((h, base)) => {
            if !baseptr.is_null() && base.is_some() {
                // SAFETY: MPI's contract: a `void **`.
                unsafe { *baseptr.cast::<*mut c_void>() = base.unwrap_or(std::ptr::null_mut()) };
            }
            Ok(h)
        }
        Err(code) => {
            // SAFETY: the communicator just made, not used elsewhere.
            unsafe { crate::comm::PMPI_Comm_free(&mut dup) };
            Err(code)
        }
    }
}

/// Builds the window over `dup`, its private communicator; its handle and
/// the base of the memory it allocated.
///
/// # Safety
/// `dup` is a valid communicator handle.
unsafe fn build(
    dup: c_int,
    flavor: Flavor,
    disp_unit: MPI_Aint,
    hints: Info,
) -> Result<(c_int, Option<*mut c_void>), c_int> {
    // SAFETY: a valid communicator.
    ok(unsafe { crate::errors::PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN) })?;
    let (mut rank, mut size) = (0, 0);
    // SAFETY: as above; ints to write.
    ok(unsafe { crate::comm::PMPI_Comm_rank(dup, &mut rank) })?;
    // SAFETY: as above.
    ok(unsafe { crate::comm::PMPI_Comm_size(dup, &mut size) })?;
    let (rank, size) = (rank as usize, size as usize);
    // Cross-memory attach must work here, and for every member.
    let cma = if pertinax_os::cma::probe() {
        MPI_SUCCESS
    } else {
        MPI_ERR_UNSUPPORTED_OPERATION
    };
    ok(allreduce_max(dup, cma)?)?;
    pertinax_os::cma::allow_peers();
    let ctl = shm::shared(dup, rank, shm::control_len(size))?;
    // The memory.
    let (base, bytes, mem) = match flavor {
        Flavor::Create(b, n) => (b, n, Owned::None),
        Flavor::Dynamic => (std::ptr::null_mut(), 0, Owned::None),
        Flavor::Allocate(n) => {
            // SAFETY: a plain allocation (at least one byte).
            let p = unsafe { libc::malloc(n.max(1)) };
            let code = if p.is_null() {
                MPI_ERR_NO_MEM
            } else {
                MPI_SUCCESS
            };
            match allreduce_max(dup, code) {
                Ok(MPI_SUCCESS) => {}
                Ok(c) | Err(c) => {
                    // SAFETY: from `malloc` (or null), not handed out.
                    unsafe { libc::free(p) };
                    return Err(c);
                }
            }
            (p, n, Owned::Malloc(p))
        }
        Flavor::Shared(n) => {
            let sizes = allgather(dup, size, [n as u64])?;
            let mut offsets = Vec::with_capacity(size);
            let mut total = 0usize;
            for s in &sizes {
                offsets.push(total);
                total = total.checked_add(s[0] as usize).ok_or(MPI_ERR_SIZE)?;
            }
            let map = shm::shared(dup, rank, total)?;
            let p = map.ptr().wrapping_add(offsets[rank]).cast::<c_void>();
            (p, n, Owned::Shared { map, offsets })
        }
    };
    let me = [
        u64::from(pertinax_os::pid()),
        base as u64,
        bytes as u64,
        disp_unit as u64,
        &raw const PROBE as u64,
    ];
    let all = allgather(dup, size, me)?;
    // This process reaches the next one's memory (Yama's ptrace scope or
    // a seccomp filter may forbid it even where it reaches its own).
    let next = all[(rank + 1) % size];
    let mut b = [0u8];
    let reach = match pertinax_os::cma::read_from(next[0] as u32, next[4], &mut b) {
        Ok(()) if b[0] == PROBE => MPI_SUCCESS,
        _ => MPI_ERR_UNSUPPORTED_OPERATION,
    };
    ok(allreduce_max(dup, reach)?)?;
    let peers = all
        .iter()
        .map(|p| Peer {
            pid: p[0] as u32,
            base: p[1],
            size: p[2],
            disp_unit: p[3],
        })
        .collect();
    let fl = match flavor {
        Flavor::Create(..) => MPI_WIN_FLAVOR_CREATE,
        Flavor::Allocate(_) => MPI_WIN_FLAVOR_ALLOCATE,
        Flavor::Shared(_) => MPI_WIN_FLAVOR_SHARED,
        Flavor::Dynamic => MPI_WIN_FLAVOR_DYNAMIC,
    };
    let allocated = matches!(flavor, Flavor::Allocate(_) | Flavor::Shared(_)).then_some(base);
    let e = WinEntry {
        comm: dup,
        rank,
        size,
        flavor: fl,
        peers,
        ctl,
        mem,
        vals: Box::new(AttrVals {
            base,
            size: bytes as MPI_Aint,
            disp_unit: disp_unit as c_int,
            flavor: fl,
            model: MPI_WIN_UNIFIED,
        }),
        errhandler: MPI_ERRORS_ARE_FATAL,
        name: Vec::new(),
        info: hints,
        attrs: Vec::new(),
        epoch: sync::Epoch::new(size),
        regions: Vec::new(),
    };
    let i = info::with_table(&WINS, |t| state::insert(t, Rc::new(RefCell::new(e))))?;
    if i >= MAX_WINS {
        let _ = info::with_table(&WINS, |t| t[i] = None);
        return Err(MPI_ERR_NO_MEM);
    }
    Ok((WIN_DIRECT | i as c_int, allocated))
}

/// A size argument as a `usize`: `MPI_ERR_SIZE` when negative.
fn size_of(size: MPI_Aint) -> Result<usize, c_int> {
    usize::try_from(size).map_err(|_| MPI_ERR_SIZE)
}

/// [`create`] after checking the size.
///
/// # Safety
/// As [`create`].
#[allow(clippy::too_many_arguments)]
unsafe fn create_sized(
    what: &str,
    size: MPI_Aint,
    make: impl FnOnce(usize) -> Flavor,
    disp_unit: MPI_Aint,
    info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    match size_of(size) {
        // SAFETY: forwarded.
        Ok(n) => unsafe { create(what, make(n), disp_unit, info, comm, baseptr, win) },
        Err(code) => crate::errors::raise(comm, what, code),
    }
}

crate::mpi! {
    /// `MPI_Win_create`: collective over `comm`, on the program's memory.
    fn PMPI_Win_create(base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: c_int, comm: c_int, win: *mut c_int) -> c_int as MPI_Win_create {
        // SAFETY: MPI's contract.
        unsafe { create_sized("MPI_Win_create", size, |n| Flavor::Create(base, n), disp_unit as MPI_Aint, info, comm, std::ptr::null_mut(), win) }
    }
}

crate::mpi! {
    /// `MPI_Win_create_c`.
    fn PMPI_Win_create_c(base: *mut c_void, size: MPI_Aint, disp_unit: MPI_Aint, info: c_int, comm: c_int, win: *mut c_int) -> c_int as MPI_Win_create_c {
        // SAFETY: MPI's contract.
        unsafe { create_sized("MPI_Win_create_c", size, |n| Flavor::Create(base, n), disp_unit, info, comm, std::ptr::null_mut(), win) }
    }
}

crate::mpi! {
    /// `MPI_Win_allocate`: `malloc`ed memory, its address to `baseptr`.
    fn PMPI_Win_allocate(size: MPI_Aint, disp_unit: c_int, info: c_int, comm: c_int, baseptr: *mut c_void, win: *mut c_int) -> c_int as MPI_Win_allocate {
        // SAFETY: MPI's contract.
        unsafe { create_sized("MPI_Win_allocate", size, Flavor::Allocate, disp_unit as MPI_Aint, info, comm, baseptr, win) }
    }
}

crate::mpi! {
    /// `MPI_Win_allocate_c`.
    fn PMPI_Win_allocate_c(size: MPI_Aint, disp_unit: MPI_Aint, info: c_int, comm: c_int, baseptr: *mut c_void, win: *mut c_int) -> c_int as MPI_Win_allocate_c {
        // SAFETY: MPI's contract.
        unsafe { create_sized("MPI_Win_allocate_c", size, Flavor::Allocate, disp_unit, info, comm, baseptr, win) }
    }
}

crate::mpi! {
    /// `MPI_Win_allocate_shared`: one segment every member maps, the
    /// members' parts contiguous in rank order.
    fn PMPI_Win_allocate_shared(size: MPI_Aint, disp_unit: c_int, info: c_int, comm: c_int, baseptr: *mut c_void, win: *mut c_int) -> c_int as MPI_Win_allocate_shared {
        // SAFETY: MPI's contract.
        unsafe { create_sized("MPI_Win_allocate_shared", size, Flavor::Shared, disp_unit as MPI_Aint, info, comm, baseptr, win) }
    }
}

crate::mpi! {
    /// `MPI_Win_allocate_shared_c`.
    fn PMPI_Win_allocate_shared_c(size: MPI_Aint, disp_unit: MPI_Aint, info: c_int, comm: c_int, baseptr: *mut c_void, win: *mut c_int) -> c_int as MPI_Win_allocate_shared_c {
        // SAFETY: MPI's contract.
        unsafe { create_sized("MPI_Win_allocate_shared_c", size, Flavor::Shared, disp_unit, info, comm, baseptr, win) }
    }
}

crate::mpi! {
    /// `MPI_Win_create_dynamic`: no memory; targets address absolute
    /// addresses (displacements from `MPI_BOTTOM`).
    fn PMPI_Win_create_dynamic(info: c_int, comm: c_int, win: *mut c_int) -> c_int as MPI_Win_create_dynamic {
        // SAFETY: MPI's contract.
        unsafe { create("MPI_Win_create_dynamic", Flavor::Dynamic, 1, info, comm, std::ptr::null_mut(), win) }
    }
}

crate::mpi! {
    /// `MPI_Win_free`: collective (a barrier first: every member's
    /// accesses are over); deletes the attributes, frees the memory the
    /// window allocated.
    fn PMPI_Win_free(win: *mut c_int) -> c_int as MPI_Win_free {
        if win.is_null() {
            return crate::errors::raise(MPI_COMM_WORLD, "MPI_Win_free", MPI_ERR_ARG);
        }
        // SAFETY: checked non-null; MPI's contract.
        let h = unsafe { *win };
        let rc = call(h, "MPI_Win_free", |e| {
            let comm = with(e, |g| {
                if g.epoch.locked() {
                    return Err(MPI_ERR_RMA_SYNC);
                }
                Ok(g.comm)
            })?;
            barrier(comm)?;
            attr::delete_all(h, e)?;
            let i = index_of(h).ok_or(MPI_ERR_WIN)?;
            info::with_table(&WINS, |t| t[i] = None)?;
            let mut g = e.try_borrow_mut().map_err(|_| MPI_ERR_INTERN)?;
            // The memory the window allocated goes (`Owned`'s drop).
            g.mem = Owned::None;
            crate::errors::detach(g.errhandler);
            let mut c = g.comm;
            // SAFETY: the window's own communicator, freed once.
            unsafe { crate::comm::PMPI_Comm_free(&mut c) };
            Ok(())
        });
        if rc == MPI_SUCCESS {
            // SAFETY: as above.
            unsafe { *win = MPI_WIN_NULL };
        }
        rc
    }
}

crate::mpi! {
    /// `MPI_Win_get_group`: the group of the window's communicator.
    fn PMPI_Win_get_group(win: c_int, group: *mut c_int) -> c_int as MPI_Win_get_group {
        call(win, "MPI_Win_get_group", |e| {
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
    /// `MPI_Win_shared_query`: a member's size, displacement unit and
    /// base in this process (`MPI_PROC_NULL`: the first member with
    /// memory).
    fn PMPI_Win_shared_query(win: c_int, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_int, baseptr: *mut c_void) -> c_int as MPI_Win_shared_query {
        call(win, "MPI_Win_shared_query", |e| {
            let (s, d, b) = shared_query(e, rank)?;
            // SAFETY: MPI's contract; `baseptr` is a `void **`.
            unsafe {
                out(size, s as MPI_Aint)?;
                out(disp_unit, d as c_int)?;
                out(baseptr.cast::<*mut c_void>(), b)
            }
        })
    }
}

crate::mpi! {
    /// `MPI_Win_shared_query_c`.
    fn PMPI_Win_shared_query_c(win: c_int, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut MPI_Aint, baseptr: *mut c_void) -> c_int as MPI_Win_shared_query_c {
        call(win, "MPI_Win_shared_query_c", |e| {
            let (s, d, b) = shared_query(e, rank)?;
            // SAFETY: MPI's contract; `baseptr` is a `void **`.
            unsafe {
                out(size, s as MPI_Aint)?;
                out(disp_unit, d as MPI_Aint)?;
                out(baseptr.cast::<*mut c_void>(), b)
            }
        })
    }
}

/// `MPI_Win_shared_query`'s answer: size, displacement unit, local base.
/// Another flavor's window (MPI 4.1) shares this process's own memory
/// only: size 0 and no base for the others.
fn shared_query(e: &Entry, rank: c_int) -> Result<(u64, u64, *mut c_void), c_int> {
    with(e, |g| {
        let Owned::Shared { map, offsets } = &g.mem else {
            let r = if rank == MPI_PROC_NULL { 0 } else { rank };
            let r = sync::target(r, g.size)?.unwrap_or(0);
            let p = g.peers[r];
            return Ok(if r == g.rank && g.flavor != MPI_WIN_FLAVOR_DYNAMIC {
                (p.size, p.disp_unit, g.vals.base)
            } else {
                (0, p.disp_unit, std::ptr::null_mut())
            });
        };
        let r = if rank == MPI_PROC_NULL {
            match g.peers.iter().position(|p| p.size > 0) {
                Some(r) => r,
                None => return Ok((0, g.peers[0].disp_unit, std::ptr::null_mut())),
            }
        } else {
            usize::try_from(rank)
                .ok()
                .filter(|&r| r < g.size)
                .ok_or(MPI_ERR_RANK)?
        };
        let p = g.peers[r];
        Ok((
            p.size,
            p.disp_unit,
            map.ptr().wrapping_add(offsets[r]).cast(),
        ))
    })
}

crate::mpi! {
    /// `MPI_Win_attach`: a region of this process's memory is a target of
    /// the dynamic window (recorded; any address is reachable).
    fn PMPI_Win_attach(win: c_int, base: *mut c_void, size: MPI_Aint) -> c_int as MPI_Win_attach {
        call(win, "MPI_Win_attach", |e| {
            let n = size_of(size)?;
            with(e, |g| {
                if g.flavor != MPI_WIN_FLAVOR_DYNAMIC {
                    return Err(MPI_ERR_RMA_FLAVOR);
                }
                if base.is_null() && n > 0 {
                    return Err(MPI_ERR_RMA_ATTACH);
                }
                g.regions.push((base as usize, n));
                Ok(())
            })
        })
    }
}

crate::mpi! {
    /// `MPI_Win_detach`: the region attached at `base` is no longer a
    /// target (`MPI_ERR_RMA_ATTACH` if none is).
    fn PMPI_Win_detach(win: c_int, base: *mut c_void) -> c_int as MPI_Win_detach {
        call(win, "MPI_Win_detach", |e| {
            with(e, |g| {
                if g.flavor != MPI_WIN_FLAVOR_DYNAMIC {
                    return Err(MPI_ERR_RMA_FLAVOR);
                }
                let i = g
                    .regions
                    .iter()
                    .position(|r| r.0 == base as usize)
                    .ok_or(MPI_ERR_RMA_ATTACH)?;
                g.regions.remove(i);
                Ok(())
            })
        })
    }
}
