//! The events that the launcher's threads send to its event loop.

use std::os::unix::net::UnixStream;

use pertinax_sys::process::ExitKind;
use pertinax_wire::ctrl::ToLauncher;

/// One thing that happened, sent by a helper thread to the event loop
/// through one `mpsc` channel.
#[derive(Debug)]
pub(crate) enum Event {
    /// The reaper reaped a rank's process.
    Exited {
        /// Its process id.
        pid: u32,
        /// How it ended.
        end: ExitKind,
    },
    /// Something arrived on (or happened to) a rank's control socket.
    Ctrl {
        /// The rank.
        rank: u32,
        /// What.
        what: CtrlEvent,
    },
    /// A rank's stdout or stderr reached end of file.
    OutputClosed,
    /// The launcher received a signal.
    Signal(i32),
}

/// What a control-reader thread saw.
#[derive(Debug)]
pub(crate) enum CtrlEvent {
    /// The rank's `Hello` was accepted and answered with `Welcome`; here is
    /// a handle to write to it.
    Joined(UnixStream),
    /// A frame after the hello.
    Msg(ToLauncher),
    /// The connection ended (end of file, error, or a rejected hello). The
    /// last event of every control reader.
    Closed,
}
