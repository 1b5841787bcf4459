//! Ports and joins between groups of one `MPI_COMM_WORLD`:
//! `MPI_Open_port`, `MPI_Close_port`, `MPI_Comm_accept`,
//! `MPI_Comm_connect` and `MPI_Comm_join`.
//!
//! pertinax's processes meet through their launcher, so a port names a
//! process of this job's `MPI_COMM_WORLD`: `pertinax-port:RANK:K`, the
//! opener's world rank and its K-th port. Both sides talk over a private
//! duplicate of the world made when the job is joined (the program's
//! messages, any-source receives included, never meet theirs):
//!
//! - connect: the connecting root sends `[K, its world rank]` to the
//!   port's process, tagged `K`; accept: the port's process receives it,
//!   from any process. Then both groups make the intercommunicator as
//!   `MPI_Intercomm_create` does, their roots as leaders over the private
//!   world (`Comm::intercomm_create`: a failure of either side fails it
//!   at every survivor).
//! - join: each side writes its world rank to the socket and reads the
//!   other's; both make the intercommunicator of their `MPI_COMM_SELF`s.
//!
//! Limits: the two sides must be processes of the same `MPI_COMM_WORLD`
//! (not a spawned job's: a port name holds no world, so another world's
//! port is `MPI_ERR_PORT` only when its rank is out of this world's
//! range); a connect to a port nobody accepts on waits (MPI allows it
//! to). Names for ports (`MPI_Publish_name`, `MPI_Lookup_name`) are in
//! `names.rs`.

use pertinax::CommunicatorExt as _;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

use pertinax::{Comm, Rank, Tag, TagMatch, ANY_SOURCE};

use crate::comm::register;
use crate::consts::*;
use crate::errors::{code_of, raise};
use crate::p2p::{call, comm_of};
use crate::serial::Serial;

/// The port names' prefix.
const PREFIX: &str = "pertinax-port:";
/// The intercommunicator's tag for port `K` (the requests use `K`).
const CREATE: i32 = 1 << 24;
/// The tag of a join's intercommunicator.
const JOIN: i32 = 1 << 25;

struct Ports {
    /// The private duplicate of the world (`None` before the job is
    /// joined, or when making it failed).
    world: Option<Comm>,
    /// The ports open here, by number.
    open: Vec<u32>,
    next: u32,
}

static PORTS: Serial<RefCell<Ports>> = Serial::new(RefCell::new(Ports {
    world: None,
    open: Vec::new(),
    next: 0,
}));

/// Makes the private world (collective over `world`, at `MPI_Init`).
pub(crate) fn start(world: &Comm) {
    let dup = world.dup().ok();
    PORTS.with(|p| {
        let mut p = p.borrow_mut();
        p.world = dup;
        p.open.clear();
    });
}

/// Forgets the private world (`MPI_Finalize`).
pub(crate) fn stop() {
    PORTS.with(|p| {
        if let Some(w) = p.borrow_mut().world.take() {
            let _ = w.free();
        }
    });
}

fn private_world() -> Result<Comm, c_int> {
    PORTS
        .with(|p| p.borrow().world.clone())
        .ok_or(MPI_ERR_OTHER)
}

/// A port name's (world rank, number); `MPI_ERR_PORT` for a name that is
/// not one of this world's ports.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn parse(name: *const c_char, world: &Comm) -> Result<(i32, u32), c_int> {
    if name.is_null() {
        return Err(MPI_ERR_ARG);
    }
    // SAFETY: by the caller's contract.
    let s = unsafe { CStr::from_ptr(name) }
        .to_str()
        .map_err(|_| MPI_ERR_PORT)?;
    let (r, k) = s
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.split_once(':'))
        .ok_or(MPI_ERR_PORT)?;
    let r: i32 = r.parse().map_err(|_| MPI_ERR_PORT)?;
    let k: u32 = k.parse().map_err(|_| MPI_ERR_PORT)?;
    if r < 0 || r as usize >= world.size() || k >= CREATE as u32 {
        return Err(MPI_ERR_PORT);
    }
    Ok((r, k))
}

crate::mpi! {
    /// `MPI_Open_port`: a new port of this process (`port_name` holds
    /// `MPI_MAX_PORT_NAME` characters).
    fn PMPI_Open_port(_info: c_int, port_name: *mut c_char) -> c_int as MPI_Open_port {
        call(MPI_COMM_WORLD, "MPI_Open_port", || {
            if port_name.is_null() {
                return Err(MPI_ERR_ARG);
            }
            let w = private_world()?;
            let k = PORTS.with(|p| {
                let mut p = p.borrow_mut();
                let k = p.next;
                p.next += 1;
                p.open.push(k);
                k
            });
            let name = format!("{PREFIX}{}:{k}\0", w.rank().0);
            if name.len() > MPI_MAX_PORT_NAME || k >= CREATE as u32 {
                return Err(MPI_ERR_PORT);
            }
            // SAFETY: MPI's contract: `port_name` holds MPI_MAX_PORT_NAME
            // characters; the name is shorter, its NUL included.
            unsafe { std::ptr::copy_nonoverlapping(name.as_ptr().cast::<c_char>(), port_name, name.len()) };
            Ok(())
        })
    }
}

crate::mpi! {
    /// `MPI_Close_port`: `MPI_ERR_PORT` for a port not open here.
    fn PMPI_Close_port(port_name: *const c_char) -> c_int as MPI_Close_port {
        call(MPI_COMM_WORLD, "MPI_Close_port", || {
            let w = private_world()?;
            // SAFETY: MPI's contract: a NUL-terminated name.
            let (r, k) = unsafe { parse(port_name, &w) }?;
            let closed = r == w.rank().0
                && PORTS.with(|p| {
                    let mut p = p.borrow_mut();
                    let at = p.open.iter().position(|&o| o == k);
                    at.map(|i| p.open.swap_remove(i)).is_some()
                });
            if closed { Ok(()) } else { Err(MPI_ERR_PORT) }
        })
    }
}

/// Accept (`connect` false) or connect over `comm` at port `port_name`
/// (significant at `root` only); the intercommunicator's handle in
/// `newcomm`.
///
/// # Safety
/// MPI's contract for the arguments.
unsafe fn meet(
    connect: bool,
    port_name: *const c_char,
    root: c_int,
    comm: c_int,
    newcomm: *mut c_int,
) -> Result<(), c_int> {
    if newcomm.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let c = comm_of(comm)?;
    if c.is_inter() {
        return Err(MPI_ERR_COMM);
    }
    let root = crate::check::root(&c, root)?;
    let w = private_world()?;
    // The remote leader and the port's number: the root's to know.
    let (leader, k) = if c.rank() == root {
        // SAFETY: MPI's contract: a NUL-terminated name at the root.
        let (r, k) = unsafe { parse(port_name, &w) }?;
        if connect {
            let me = [k as i32, w.rank().0];
            w.send(&me[..], Rank(r), Tag(k as i32))
                .map_err(|e| code_of(&e))?;
            (Rank(r), k)
        } else {
            let open = r == w.rank().0 && PORTS.with(|p| p.borrow().open.contains(&k));
            if !open {
                return Err(MPI_ERR_PORT);
            }
            let mut req = [0i32; 2];
            w.recv(&mut req[..], ANY_SOURCE, TagMatch::from(Tag(k as i32)))
                .map_err(|e| code_of(&e))?;
            (Rank(req[1]), k)
        }
    } else {
        (Rank(0), 0)
    };
    let made = c
        .intercomm_create(root, &w, leader, Tag(CREATE + k as i32))
        .map_err(|e| code_of(&e))?;
    // SAFETY: checked non-null; writable by MPI's contract.
    unsafe { register(comm, Some(made), newcomm) }
}

crate::mpi! {
    /// `MPI_Comm_accept`: waits for a connect to port `port_name` (at
    /// `root`); collective over `comm`.
    fn PMPI_Comm_accept(port_name: *const c_char, _info: c_int, root: c_int, comm: c_int, newcomm: *mut c_int) -> c_int as MPI_Comm_accept {
        // SAFETY: MPI's contract, forwarded.
        call(comm, "MPI_Comm_accept", || unsafe { meet(false, port_name, root, comm, newcomm) })
    }
}

crate::mpi! {
    /// `MPI_Comm_connect`: connects to port `port_name` (at `root`);
    /// collective over `comm`.
    fn PMPI_Comm_connect(port_name: *const c_char, _info: c_int, root: c_int, comm: c_int, newcomm: *mut c_int) -> c_int as MPI_Comm_connect {
        // SAFETY: MPI's contract, forwarded.
        call(comm, "MPI_Comm_connect", || unsafe { meet(true, port_name, root, comm, newcomm) })
    }
}

crate::mpi! {
    /// `MPI_Comm_join`: the intercommunicator of this process and the one
    /// at the other end of socket `fd` (both in this `MPI_COMM_WORLD`).
    fn PMPI_Comm_join(fd: c_int, intercomm: *mut c_int) -> c_int as MPI_Comm_join {
        let joined = (|| {
            if intercomm.is_null() || fd < 0 {
                return Err(MPI_ERR_ARG);
            }
            let w = private_world()?;
            // SAFETY: the program's open socket, borrowed (never closed
            // here: ManuallyDrop).
            let mut sock = ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
            sock.write_all(&w.rank().0.to_ne_bytes()).map_err(|_| MPI_ERR_OTHER)?;
            let mut peer = [0u8; 4];
            sock.read_exact(&mut peer).map_err(|_| MPI_ERR_OTHER)?;
            let peer = i32::from_ne_bytes(peer);
            if peer < 0 || peer as usize >= w.size() || peer == w.rank().0 {
                return Err(MPI_ERR_OTHER);
            }
            let me = comm_of(MPI_COMM_SELF)?;
            let made = me
                .intercomm_create(Rank(0), &w, Rank(peer), Tag(JOIN))
                .map_err(|e| code_of(&e))?;
            // SAFETY: checked non-null; writable by MPI's contract.
            unsafe { register(MPI_COMM_SELF, Some(made), intercomm) }
        })();
        match joined {
            Ok(()) => MPI_SUCCESS,
            Err(code) => raise(MPI_COMM_WORLD, "MPI_Comm_join", code),
        }
    }
}
