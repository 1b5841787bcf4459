//! The launcher's side of each process's control socket.
//!
//! One reader thread per process checks the first frame (a `Hello` with the
//! job secret and the process's own slot and rank: a rank's slot is its
//! rank, a spare says rank 0, a spawned process its index in its request),
//! answers `Welcome`, hands the event loop a handle to write to the
//! process, and then forwards every frame as an event. A connection whose
//! hello is wrong is shut down at once: the process is treated as never
//! having joined (it fails its own bootstrap).

use std::io;
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::Sender;
use std::time::Duration;

use pertinax_wire::ctrl::{read_frame, write_frame, ToLauncher, ToRank};

use crate::event::{CtrlEvent, Event};

/// How long the event loop may block writing to one process whose socket
/// buffer is full (a process that does not read its control socket).
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);

/// Compares two byte strings in time that depends only on their lengths.
pub(crate) fn secrets_match(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// Who may say hello on one control socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Expected {
    /// The process's slot.
    pub slot: u32,
    /// The rank it was given in `PERTINAX_RANK`.
    pub rank: u32,
}

/// Whether `hello` is the right first frame for the process `who`.
pub(crate) fn hello_is_valid(hello: &ToLauncher, who: Expected, secret: &[u8]) -> bool {
    match hello {
        ToLauncher::Hello {
            slot,
            rank,
            secret: s,
            ..
        } => *slot == who.slot && *rank == who.rank && secrets_match(s, secret),
        _ => false,
    }
}

/// Serves the control socket of the process `who` until it closes (runs
/// on its own thread).
pub(crate) fn serve(who: Expected, mut stream: UnixStream, secret: &[u8], events: &Sender<Event>) {
    let slot = who.slot;
    let send = |what| {
        let _ = events.send(Event::Ctrl { slot, what });
    };
    if let Ok(joined) = handshake(who, &mut stream, secret) {
        if let Some(writer) = joined {
            send(CtrlEvent::Joined(writer));
            while let Ok(Some(msg)) = read_frame::<_, ToLauncher>(&mut stream) {
                send(CtrlEvent::Msg(msg));
            }
        } else {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
    send(CtrlEvent::Closed);
}

/// Reads and checks the hello; on success answers `Welcome` and returns a
/// write handle. `Ok(None)`: a bad or missing hello.
fn handshake(
    who: Expected,
    stream: &mut UnixStream,
    secret: &[u8],
) -> io::Result<Option<UnixStream>> {
    let hello = match read_frame::<_, ToLauncher>(stream) {
        Ok(Some(h)) => h,
        Ok(None) | Err(_) => return Ok(None),
    };
    if !hello_is_valid(&hello, who, secret) {
        return Ok(None);
    }
    let writer = stream.try_clone()?;
    writer.set_write_timeout(Some(WRITE_TIMEOUT))?;
    if write_frame(stream, &ToRank::Welcome).is_err() {
        return Ok(None);
    }
    Ok(Some(writer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn hello(slot: u32, rank: u32, secret: &[u8]) -> ToLauncher {
        ToLauncher::Hello {
            slot,
            rank,
            pid: 1,
            secret: secret.to_vec(),
        }
    }

    #[test]
    fn secret_comparison() {
        assert!(secrets_match(b"abc", b"abc"));
        assert!(!secrets_match(b"abc", b"abd"));
        assert!(!secrets_match(b"abc", b"ab"));
        assert!(secrets_match(b"", b""));
    }

    fn who(slot: u32, rank: u32) -> Expected {
        Expected { slot, rank }
    }

    #[test]
    fn hello_must_match_rank_slot_and_secret() {
        let s = [7u8; 32];
        assert!(hello_is_valid(&hello(2, 2, &s), who(2, 2), &s));
        assert!(!hello_is_valid(&hello(1, 2, &s), who(2, 2), &s));
        assert!(!hello_is_valid(&hello(2, 1, &s), who(2, 2), &s));
        assert!(!hello_is_valid(&hello(2, 2, &[7u8; 31]), who(2, 2), &s));
        assert!(!hello_is_valid(&ToLauncher::Fence, who(2, 2), &s));
        // A spare in slot 5 is rank 0 until it is assigned.
        assert!(hello_is_valid(&hello(5, 0, &s), who(5, 0), &s));
        assert!(!hello_is_valid(&hello(5, 5, &s), who(5, 0), &s));
    }

    fn collect(rx: &mpsc::Receiver<Event>) -> Vec<String> {
        rx.iter()
            .map(|e| match e {
                Event::Ctrl {
                    what: CtrlEvent::Joined(_),
                    ..
                } => "joined".to_string(),
                Event::Ctrl {
                    what: CtrlEvent::Msg(m),
                    ..
                } => format!("{m:?}"),
                Event::Ctrl {
                    what: CtrlEvent::Closed,
                    ..
                } => "closed".to_string(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn good_hello_is_welcomed_and_frames_follow() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let (tx, rx) = mpsc::channel();
        let t = std::thread::spawn(move || serve(who(1, 1), ours, &[5; 32], &tx));
        write_frame(&mut theirs, &hello(1, 1, &[5; 32])).unwrap();
        assert_eq!(
            read_frame::<_, ToRank>(&mut theirs).unwrap(),
            Some(ToRank::Welcome)
        );
        write_frame(&mut theirs, &ToLauncher::Fence).unwrap();
        drop(theirs);
        t.join().unwrap();
        assert_eq!(collect(&rx), ["joined", "Fence", "closed"]);
    }

    #[test]
    fn bad_secret_is_dropped() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let (tx, rx) = mpsc::channel();
        let t = std::thread::spawn(move || serve(who(0, 0), ours, &[5; 32], &tx));
        write_frame(&mut theirs, &hello(0, 0, &[6; 32])).unwrap();
        assert!(read_frame::<_, ToRank>(&mut theirs).unwrap().is_none());
        t.join().unwrap();
        assert_eq!(collect(&rx), ["closed"]);
    }
}
