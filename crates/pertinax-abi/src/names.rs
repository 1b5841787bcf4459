//! Name publishing: `MPI_Publish_name`, `MPI_Unpublish_name`,
//! `MPI_Lookup_name`, over the core's `Universe::publish_name` and kin
//! (native: the launcher's table, one per job; see `ports.rs` for the
//! ports they name).
//!
//! Service and port names are at most `MPI_MAX_PORT_NAME - 1` bytes
//! (`MPI_ERR_ARG` for a longer service name, `MPI_ERR_PORT` for a longer
//! port name). Publishing a published service and unpublishing one not
//! published for that port are `MPI_ERR_SERVICE`; looking up an unknown
//! service is `MPI_ERR_NAME`. Errors go to `MPI_COMM_WORLD`'s handler, as
//! the ports' do. The info arguments are ignored. A name stays published
//! after its publisher ended, until someone unpublishes it.

use std::ffi::{c_char, c_int};

use crate::consts::*;
use crate::errors::code_of;
use crate::p2p::call;
use crate::state;

/// The string at `p`, of at most `MPI_MAX_PORT_NAME - 1` bytes: `long`
/// for a longer or non-UTF-8 one, `MPI_ERR_ARG` for NULL.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string (read no further than
/// `MPI_MAX_PORT_NAME` bytes).
unsafe fn name_at(p: *const c_char, long: c_int) -> Result<String, c_int> {
    if p.is_null() {
        return Err(MPI_ERR_ARG);
    }
    let mut bytes = Vec::new();
    for i in 0..MPI_MAX_PORT_NAME {
        // SAFETY: by the caller's contract, every byte up to the NUL is
        // readable, and the loop stops at the first NUL.
        let b = unsafe { *p.add(i) } as u8;
        if b == 0 {
            return String::from_utf8(bytes).map_err(|_| long);
        }
        bytes.push(b);
    }
    Err(long)
}

/// The universe's answer as an MPI error class.
fn universe<R>(f: impl FnOnce(&pertinax::Universe) -> pertinax::Result<R>) -> Result<R, c_int> {
    state::with(|s| f(&s.universe))
        .ok_or(MPI_ERR_OTHER)?
        .map_err(|e| code_of(&e))
}

crate::mpi! {
    /// `MPI_Publish_name`: publishes `service_name` as the name of
    /// `port_name` for the whole job.
    fn PMPI_Publish_name(service_name: *const c_char, _info: c_int, port_name: *const c_char) -> c_int as MPI_Publish_name {
        call(MPI_COMM_WORLD, "MPI_Publish_name", || {
            // SAFETY: MPI's contract: NUL-terminated strings.
            let service = unsafe { name_at(service_name, MPI_ERR_ARG) }?;
            // SAFETY: as above.
            let port = unsafe { name_at(port_name, MPI_ERR_PORT) }?;
            universe(|u| u.publish_name(&service, &port))
        })
    }
}

crate::mpi! {
    /// `MPI_Unpublish_name`: withdraws `service_name`, published for
    /// `port_name`.
    fn PMPI_Unpublish_name(service_name: *const c_char, _info: c_int, port_name: *const c_char) -> c_int as MPI_Unpublish_name {
        call(MPI_COMM_WORLD, "MPI_Unpublish_name", || {
            // SAFETY: MPI's contract: NUL-terminated strings.
            let service = unsafe { name_at(service_name, MPI_ERR_ARG) }?;
            // SAFETY: as above.
            let port = unsafe { name_at(port_name, MPI_ERR_PORT) }?;
            universe(|u| u.unpublish_name(&service, &port))
        })
    }
}

crate::mpi! {
    /// `MPI_Lookup_name`: the port published as `service_name`, into
    /// `port_name` (which holds `MPI_MAX_PORT_NAME` characters).
    fn PMPI_Lookup_name(service_name: *const c_char, _info: c_int, port_name: *mut c_char) -> c_int as MPI_Lookup_name {
        call(MPI_COMM_WORLD, "MPI_Lookup_name", || {
            if port_name.is_null() {
                return Err(MPI_ERR_ARG);
            }
            // SAFETY: MPI's contract: a NUL-terminated string.
            let service = unsafe { name_at(service_name, MPI_ERR_ARG) }?;
            let mut port = universe(|u| u.lookup_name(&service))?;
            // Published by a Rust process without this crate's limit.
            if port.len() >= MPI_MAX_PORT_NAME || port.contains('\0') {
                return Err(MPI_ERR_PORT);
            }
            port.push('\0');
            // SAFETY: MPI's contract: `port_name` holds MPI_MAX_PORT_NAME
            // characters; the name is shorter, its NUL included.
            unsafe { std::ptr::copy_nonoverlapping(port.as_ptr().cast::<c_char>(), port_name, port.len()) };
            Ok(())
        })
    }
}
