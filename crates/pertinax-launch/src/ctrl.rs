//! The launcher's side of each rank's control socket.
//!
//! One reader thread per rank checks the first frame (a `Hello` with the
//! job secret and the rank's own slot and rank), answers `Welcome`, hands
//! the event loop a handle to write to the rank, and then forwards every
//! frame as an event. A connection whose hello is wrong is shut down at once:
//! the rank is treated as never having joined (it fails its own bootstrap).

use std::io;
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::Sender;
use std::time::Duration;

use pertinax_wire::ctrl::{read_frame, write_frame, ToLauncher, ToRank};

use crate::event::{CtrlEvent, Event};

/// How long the event loop may block writing to one rank whose socket
/// buffer is full (a rank that does not read its control socket).
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);

/// Compares two byte strings in time that depends only on their lengths.
pub(crate) fn secrets_match(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// Whether `hello` is the right first frame for rank `rank` of this job.
pub(crate) fn hello_is_valid(hello: &ToLauncher, rank: u32, secret: &[u8]) -> bool {
    match hello {
        ToLauncher::Hello {
            slot,
            rank: r,
            secret: s,
            ..
        } => *slot == rank && *r == rank && secrets_match(s, secret),
        _ => false,
    }
}

/// Serves rank `rank`'s control socket until it closes (runs on its own
/// thread).
pub(crate) fn serve(rank: u32, mut stream: UnixStream, secret: &[u8], events: &Sender<Event>) {
    let send = |what| {
        let _ = events.send(Event::Ctrl { rank, what });
    };
    if let Ok(joined) = handshake(rank, &mut stream, secret) {
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
fn handshake(rank: u32, stream: &mut UnixStream, secret: &[u8]) -> io::Result<Option<UnixStream>> {
    let hello = match read_frame::<_, ToLauncher>(stream) {
        Ok(Some(h)) => h,
        Ok(None) | Err(_) => return Ok(None),
    };
    if !hello_is_valid(&hello, rank, secret) {
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

    #[test]
    fn hello_must_match_rank_slot_and_secret() {
        let s = [7u8; 32];
        assert!(hello_is_valid(&hello(2, 2, &s), 2, &s));
        assert!(!hello_is_valid(&hello(1, 2, &s), 2, &s));
        assert!(!hello_is_valid(&hello(2, 1, &s), 2, &s));
        assert!(!hello_is_valid(&hello(2, 2, &[7u8; 31]), 2, &s));
        assert!(!hello_is_valid(&ToLauncher::Fence, 2, &s));
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
        let t = std::thread::spawn(move || serve(1, ours, &[5; 32], &tx));
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
        let t = std::thread::spawn(move || serve(0, ours, &[5; 32], &tx));
        write_frame(&mut theirs, &hello(0, 0, &[6; 32])).unwrap();
        assert!(read_frame::<_, ToRank>(&mut theirs).unwrap().is_none());
        t.join().unwrap();
        assert_eq!(collect(&rx), ["closed"]);
    }
}
