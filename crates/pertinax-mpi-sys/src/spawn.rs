//! Groups, intercommunicators and dynamic processes: the safe layer over
//! the shim's `shim/pxm_spawn.c` (`MPI_Comm_create_from_group` over any
//! group, `MPI_Intercomm_create`, `MPI_Intercomm_merge`,
//! `MPI_Comm_spawn`, `MPI_Comm_get_parent`, and the two blocking
//! collectives a spawn needs to hand its children their start-up data).

use std::ffi::{c_char, c_int, CString};

use crate::{check, Code, Comm, Result};

mod ffi {
    use std::ffi::{c_char, c_int};

    extern "C" {
        pub fn pxm_group_null() -> isize;
        pub fn pxm_root() -> c_int;
        /// Defined in `pxm.c`.
        pub fn pxm_proc_null() -> c_int;
        pub fn pxm_comm_group_of(comm: isize, remote: c_int, out: *mut isize) -> c_int;
        pub fn pxm_group_free(g: *mut isize) -> c_int;
        pub fn pxm_group_build(
            n: c_int,
            groups: *const isize,
            ranks: *const c_int,
            out: *mut isize,
        ) -> c_int;
        pub fn pxm_group_size(g: isize, n: *mut c_int) -> c_int;
        pub fn pxm_comm_from_group(group: isize, tag: *const c_char, out: *mut isize) -> c_int;
        pub fn pxm_intercomm_create(
            local: isize,
            local_leader: c_int,
            peer: isize,
            remote_leader: c_int,
            tag: c_int,
            out: *mut isize,
        ) -> c_int;
        pub fn pxm_intercomm_merge(inter: isize, high: c_int, out: *mut isize) -> c_int;
        pub fn pxm_comm_remote_size(comm: isize, n: *mut c_int) -> c_int;
        pub fn pxm_comm_get_parent(out: *mut isize) -> c_int;
        pub fn pxm_comm_spawn(
            cmd: *const c_char,
            argv: *const *const c_char,
            maxprocs: c_int,
            root: c_int,
            comm: isize,
            inter: *mut isize,
            errcodes: *mut c_int,
        ) -> c_int;
        pub fn pxm_comm_disconnect(comm: *mut isize) -> c_int;
        pub fn pxm_bcast(buf: *mut u8, len: c_int, root: c_int, comm: isize) -> c_int;
        pub fn pxm_allgather_u32(mine: u32, out: *mut u32, comm: isize) -> c_int;
        pub fn pxm_connect_remote(inter: isize) -> c_int;
        pub fn pxm_notify_remote(inter: isize, tag: c_int, bound: f64) -> c_int;
    }
}

/// An MPI group handle (not freed on drop: see [`Group::free`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group(isize);

impl Group {
    /// `MPI_GROUP_NULL`.
    pub fn null() -> Group {
        // SAFETY: the address/value of a predefined handle.
        Group(unsafe { ffi::pxm_group_null() })
    }

    /// The group of the processes `(groups[i], ranks[i])` in that order
    /// (each `ranks[i]` a rank of `groups[i]`; no process twice).
    ///
    /// # Errors
    /// The MPI's code (`-1` if the slices differ in length).
    pub fn build(members: &[(Group, i32)]) -> Result<Group> {
        let n = c_int::try_from(members.len()).map_err(|_| Code(-1))?;
        let groups: Vec<isize> = members.iter().map(|m| m.0 .0).collect();
        let ranks: Vec<c_int> = members.iter().map(|m| m.1).collect();
        let mut out: isize = 0;
        // SAFETY: both arrays hold `n` elements, read during the call only;
        // writes `out`.
        check(unsafe { ffi::pxm_group_build(n, groups.as_ptr(), ranks.as_ptr(), &mut out) })?;
        Ok(Group(out))
    }

    /// The number of processes in the group.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn size(self) -> Result<i32> {
        let mut n: c_int = 0;
        // SAFETY: writes `n`.
        check(unsafe { ffi::pxm_group_size(self.0, &mut n) })?;
        Ok(n)
    }

    /// `MPI_Group_free`: the handle becomes [`Group::null`].
    ///
    /// # Errors
    /// The MPI's code.
    pub fn free(&mut self) -> Result<()> {
        // SAFETY: reads and writes the handle.
        check(unsafe { ffi::pxm_group_free(&mut self.0) })
    }
}

/// `MPI_ROOT`: the root's `root` argument of a collective on an
/// intercommunicator.
pub fn root() -> i32 {
    // SAFETY: returns a compile-time constant of the MPI headers.
    unsafe { ffi::pxm_root() }
}

/// `MPI_PROC_NULL`: the `root` argument of the root's group's other
/// members in a collective on an intercommunicator.
pub fn proc_null() -> i32 {
    // SAFETY: as above.
    unsafe { ffi::pxm_proc_null() }
}

/// The intercommunicator to the parents of a process started by
/// `MPI_Comm_spawn` ([`Comm::null`] for any other process).
///
/// # Errors
/// The MPI's code.
pub fn parent() -> Result<Comm> {
    let mut out: isize = 0;
    // SAFETY: writes `out`.
    check(unsafe { ffi::pxm_comm_get_parent(&mut out) })?;
    Ok(Comm(out))
}

/// Why an `MPI_Comm_spawn` failed: the call's code, and the per-process
/// codes of those that did not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnError {
    /// The code `MPI_Comm_spawn` returned.
    pub code: Code,
    /// The non-zero entries of its `array_of_errcodes`.
    pub errcodes: Vec<i32>,
}

impl Comm {
    /// The local group.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn group(self) -> Result<Group> {
        let mut out: isize = 0;
        // SAFETY: writes `out`.
        check(unsafe { ffi::pxm_comm_group_of(self.0, 0, &mut out) })?;
        Ok(Group(out))
    }

    /// The remote group of an intercommunicator.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn remote_group(self) -> Result<Group> {
        let mut out: isize = 0;
        // SAFETY: writes `out`.
        check(unsafe { ffi::pxm_comm_group_of(self.0, 1, &mut out) })?;
        Ok(Group(out))
    }

    /// The size of the remote group of an intercommunicator.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn remote_size(self) -> Result<i32> {
        let mut n: c_int = 0;
        // SAFETY: writes `n`.
        check(unsafe { ffi::pxm_comm_remote_size(self.0, &mut n) })?;
        Ok(n)
    }

    /// The communicator of `group` in its order, made without a parent
    /// (`MPI_Comm_create_from_group`: collective over the group only, which
    /// may span several `MPI_COMM_WORLD`s), with `MPI_ERRORS_RETURN`. `tag`
    /// must be unique among concurrent creations over overlapping groups.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn from_group(group: Group, tag: &str) -> Result<Comm> {
        let tag = CString::new(tag).map_err(|_| Code(-1))?;
        let mut out: isize = 0;
        // SAFETY: `tag` is NUL-terminated and read during the call only;
        // writes `out`.
        check(unsafe { ffi::pxm_comm_from_group(group.0, tag.as_ptr(), &mut out) })?;
        Ok(Comm(out))
    }

    /// The intercommunicator between this communicator's group (its
    /// leader: rank `local_leader`) and another disjoint one, whose leader
    /// is rank `remote_leader` of `peer` (`MPI_Intercomm_create`:
    /// collective over both groups), with `MPI_ERRORS_RETURN`.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn intercomm_create(
        self,
        local_leader: i32,
        peer: Comm,
        remote_leader: i32,
        tag: i32,
    ) -> Result<Comm> {
        let mut out: isize = 0;
        // SAFETY: writes `out`.
        check(unsafe {
            ffi::pxm_intercomm_create(self.0, local_leader, peer.0, remote_leader, tag, &mut out)
        })?;
        let c = Comm(out);
        c.errors_return()?;
        Ok(c)
    }

    /// `MPI_Intercomm_merge`: the group passing `high == false` first.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn merge(self, high: bool) -> Result<Comm> {
        let mut out: isize = 0;
        // SAFETY: writes `out`.
        check(unsafe { ffi::pxm_intercomm_merge(self.0, c_int::from(high), &mut out) })?;
        Ok(Comm(out))
    }

    /// `MPI_Comm_spawn` of `count` processes of `cmd args...` over this
    /// communicator (collective; `cmd`, `args` and `count` are read at
    /// `root` only). Returns the intercommunicator to the new processes.
    ///
    /// # Errors
    /// The call's code and the codes of the processes that did not start.
    pub fn spawn(
        self,
        cmd: &str,
        args: &[&str],
        count: usize,
        root: i32,
    ) -> std::result::Result<Comm, SpawnError> {
        let bad = |code: i32| SpawnError {
            code: Code(code),
            errcodes: Vec::new(),
        };
        let n = c_int::try_from(count).map_err(|_| bad(-1))?;
        let cmd = CString::new(cmd).map_err(|_| bad(-1))?;
        let args: Vec<CString> = args
            .iter()
            .map(|a| CString::new(*a))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad(-1))?;
        let mut argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut errcodes: Vec<c_int> = vec![0; count.max(1)];
        let mut out: isize = 0;
        // SAFETY: `cmd` and every `argv` entry are NUL-terminated strings
        // that outlive the call, `argv` ends with a null pointer, and
        // `errcodes` holds at least `count` ints; writes `out`.
        let rc = unsafe {
            ffi::pxm_comm_spawn(
                cmd.as_ptr(),
                argv.as_ptr(),
                n,
                root,
                self.0,
                &mut out,
                errcodes.as_mut_ptr(),
            )
        };
        let failed: Vec<i32> = errcodes.iter().copied().filter(|&c| c != 0).collect();
        if rc != 0 {
            return Err(SpawnError {
                code: Code(rc),
                errcodes: failed,
            });
        }
        Ok(Comm(out))
    }

    /// `MPI_Comm_disconnect` (collective; waits for the communicator's
    /// pending messages): the handle becomes [`Comm::null`].
    ///
    /// # Errors
    /// The MPI's code.
    pub fn disconnect(&mut self) -> Result<()> {
        // SAFETY: reads and writes the handle.
        check(unsafe { ffi::pxm_comm_disconnect(&mut self.0) })
    }

    /// Blocking `MPI_Bcast` of `buf` from `root` (on an intercommunicator:
    /// [`root`] at the root, [`proc_null`] at its group's other members,
    /// the root's rank in the remote group at the receivers).
    ///
    /// # Errors
    /// The MPI's code.
    pub fn bcast(self, buf: &mut [u8], root: i32) -> Result<()> {
        let len = c_int::try_from(buf.len()).map_err(|_| Code(-1))?;
        // SAFETY: `buf` holds `len` bytes, written or read during the call
        // only.
        check(unsafe { ffi::pxm_bcast(buf.as_mut_ptr(), len, root, self.0) })
    }

    /// Blocking `MPI_Allgather` of one `u32` per process; on an
    /// intercommunicator the remote group's values. `out` must hold one
    /// value per process of the (remote) group.
    ///
    /// # Errors
    /// The MPI's code (`-1` if `out` has the wrong length).
    pub fn allgather_u32(self, mine: u32, out: &mut [u32]) -> Result<()> {
        let want = if self.remote_size().unwrap_or(0) > 0 {
            self.remote_size()?
        } else {
            self.size()?
        };
        if usize::try_from(want).ok() != Some(out.len()) {
            return Err(Code(-1));
        }
        // SAFETY: `out` holds one u32 per process of the group that sends
        // (checked above), written during the call only.
        check(unsafe { ffi::pxm_allgather_u32(mine, out.as_mut_ptr(), self.0) })
    }

    /// One byte to and from every process of this intercommunicator's
    /// remote group (collective over both groups): Open MPI connects two
    /// jobs' processes (a spawn's parents and children) at their first
    /// message and learns of a death in the other job only through that
    /// connection, so a spawn connects every pair across it while all are
    /// alive (`checks/spawned_death.c`: a process of the other job that
    /// dies before the first message is through is never reported, and a
    /// send to it never returns).
    ///
    /// # Errors
    /// The MPI's code.
    pub fn connect_remote(self) -> Result<()> {
        // SAFETY: reads the handle only.
        check(unsafe { ffi::pxm_connect_remote(self.0) })
    }

    /// A one-byte message with `tag` to every process of this
    /// intercommunicator's remote group, waited for at most `bound`: how a
    /// spawn's parents tell the new processes they gave it up. Unlike a
    /// revoke, which Open MPI drops at a process that does not have the
    /// communicator yet (one still in `MPI_Init`), the message is kept
    /// until the communicator exists. Waited for, since a revoke of the
    /// communicator ends sends not yet out; bounded, since a send to a
    /// process that died before its first message never completes.
    ///
    /// # Errors
    /// The MPI's code.
    pub fn notify_remote(self, tag: i32, bound: std::time::Duration) -> Result<()> {
        // SAFETY: reads the handle only; the byte sent is static.
        check(unsafe { ffi::pxm_notify_remote(self.0, tag, bound.as_secs_f64()) })
    }
}
