//! The launcher's own signals: SIGINT, SIGTERM and SIGHUP become events,
//! and SIGCHLD tells the event loop to reap.
//!
//! The handlers stay installed for as long as the watch lives. After it is
//! dropped the signals stay caught by signal-hook (which cannot restore the
//! previous disposition) and are ignored; a command-line tool exits right
//! after the job anyway.

use std::io;
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use signal_hook::consts::signal::{SIGCHLD, SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

use crate::event::Event;

/// A thread that turns the launcher's terminating signals into
/// [`Event::Signal`] and SIGCHLD into [`Event::ChildChanged`]; stopped and
/// joined on drop. Signals that arrive together are merged: one SIGCHLD
/// event may stand for several children, so the loop reaps every child that
/// ended.
#[derive(Debug)]
pub(crate) struct SignalWatch {
    handle: Handle,
    thread: Option<JoinHandle<()>>,
}

impl SignalWatch {
    /// Installs the handlers and starts the thread.
    ///
    /// # Errors
    /// When the handlers or the thread cannot be set up.
    pub fn start(events: Sender<Event>) -> io::Result<SignalWatch> {
        let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP, SIGCHLD])?;
        let handle = signals.handle();
        let thread = std::thread::Builder::new()
            .name("pertinax-signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    let event = match sig {
                        SIGCHLD => Event::ChildChanged,
                        sig => Event::Signal(sig),
                    };
                    if events.send(event).is_err() {
                        break;
                    }
                }
            });
        match thread {
            Ok(t) => Ok(SignalWatch {
                handle,
                thread: Some(t),
            }),
            Err(e) => {
                handle.close();
                Err(e)
            }
        }
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
