//! The events that the launcher's threads send to its event loop.

use std::os::unix::net::UnixStream;

use pertinax_wire::ctrl::ToLauncher;

use crate::panic::Panic;

/// One thing that happened, sent by a helper thread to the event loop
/// through one `mpsc` channel.
#[derive(Debug)]
pub(crate) enum Event {
    /// A child of the launcher changed state (`SIGCHLD`): the loop reaps.
    ChildChanged,
    /// The kernel marked the process in this slot dead (its robust futex
    /// word), ahead of `SIGCHLD`.
    Died(u32),
    /// A process of the job ended. The loop reaps by itself; the unit
    /// tests, which start no processes, send these by hand.
    #[cfg(test)]
    Exited {
        /// Its process id.
        pid: u32,
        /// How it ended.
        end: pertinax_os::process::ExitKind,
    },
    /// Something arrived on (or happened to) a process's control socket.
    Ctrl {
        /// The process's slot.
        slot: u32,
        /// What.
        what: CtrlEvent,
    },
    /// The first panic the process in `slot` printed on its stderr; sent
    /// before that stream's [`Event::OutputClosed`].
    Panicked {
        /// The process's slot.
        slot: u32,
        /// Its panic.
        panic: Panic,
    },
    /// A process's stdout or stderr reached end of file.
    OutputClosed,
    /// The launcher received a terminating signal.
    Signal(i32),
}

/// What a control-reader thread saw.
#[derive(Debug)]
pub(crate) enum CtrlEvent {
    /// The process's `Hello` was accepted and answered with `Welcome`;
    /// here is a handle to write to it.
    Joined(UnixStream),
    /// A frame after the hello.
    Msg(ToLauncher),
    /// The connection ended (end of file, error, or a rejected hello). The
    /// last event of every control reader.
    Closed,
}
