//! The control protocol between a process and the launcher.
//!
//! Frames are a little-endian `u32` length followed by a postcard-encoded
//! message. Both ends are built from the same pertinax (the launcher and
//! the ranks of one job): the encoding is not a stable format across
//! versions and nothing stores it. The process speaks first with [`ToLauncher::Hello`], presenting
//! the job secret; the launcher drops any connection whose secret is wrong.

use std::io::{self, Read, Write};

use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// Largest frame either side accepts.
pub const MAX_FRAME: usize = 64 << 20;

/// Messages a process sends to the launcher.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToLauncher {
    /// First message: who I am, proven by the job secret.
    Hello {
        /// Slot in the shared segment.
        slot: u32,
        /// World rank.
        rank: u32,
        /// Process id.
        pid: u32,
        /// The job secret from the environment.
        secret: Vec<u8>,
    },
    /// Publish a bootstrap key/value pair (visible after the next fence).
    Put {
        /// Key.
        key: String,
        /// Value.
        value: Vec<u8>,
    },
    /// Wait until every rank has reached its fence; answered by
    /// [`ToRank::FenceDone`] with everything published before it.
    Fence,
    /// The process finalized cleanly and will exit.
    Finalize,
    /// Start `count` new processes (spares first when `use_spares`), each
    /// of which gets [`ToRank::Assign`] with `payload`. The launcher writes
    /// the slots it chose into the requester's `Publication` (stamped with
    /// `stamp`) *before* it starts or assigns anything, and ignores requests
    /// from a slot it already knows to have failed, so that everyone who
    /// reads the publication sees the same answer whether or not the
    /// requester survived. A failed request publishes a non-zero status.
    Spawn {
        /// Value the launcher stores in the publication's stamp, last.
        stamp: u64,
        /// Program to run; `None`: the job's own program and arguments.
        program: Option<String>,
        /// Arguments (ignored when `program` is `None`).
        args: Vec<String>,
        /// Number of processes.
        count: u32,
        /// Take idle spares before starting new processes.
        use_spares: bool,
        /// Opaque bytes handed to every new process.
        payload: Vec<u8>,
        /// For a request of `replace_failed`: the rank each new process
        /// takes over (the one it will call itself), in order; empty for
        /// any other request. Only the launcher's labels use it (summary,
        /// `--tag-output`).
        replaces: Vec<u32>,
    },
    /// This process is about to kill itself at a fault-injection point (so
    /// the launcher reports the death as injected, not as a failure).
    Injected {
        /// The point's name.
        point: String,
        /// Which hit of the point.
        hit: u64,
        /// The signal (or 0 for a panic).
        signal: i32,
    },
    /// The program asks to end the whole job with this exit code.
    Abort {
        /// Exit code for the job.
        code: i32,
        /// Why.
        message: String,
    },
    /// Publish `service` as the name of `port` in the job's name table
    /// (`MPI_Publish_name`); answered by [`ToRank::Name`] with `id`.
    Publish {
        /// The request's number, echoed in the answer.
        id: u64,
        /// The service name.
        service: String,
        /// The port it names.
        port: String,
    },
    /// Withdraw `service`, published for `port` (`MPI_Unpublish_name`);
    /// answered by [`ToRank::Name`] with `id`.
    Unpublish {
        /// The request's number, echoed in the answer.
        id: u64,
        /// The service name.
        service: String,
        /// The port it was published for.
        port: String,
    },
    /// The port published as `service` (`MPI_Lookup_name`); answered by
    /// [`ToRank::Name`] with `id`.
    Lookup {
        /// The request's number, echoed in the answer.
        id: u64,
        /// The service name.
        service: String,
    },
}

/// Messages the launcher sends to a process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToRank {
    /// The hello was accepted.
    Welcome,
    /// Every rank reached the fence; here is all that was published.
    FenceDone {
        /// Key/value pairs, in key order.
        entries: Vec<(String, Vec<u8>)>,
    },
    /// The job is ending; exit now.
    Shutdown,
    /// Sent to a spare or a spawned process: the job it joins. `slots` are
    /// all the processes started by the same request, in order, and this
    /// process is `slots[index]`.
    Assign {
        /// The processes of the request.
        slots: Vec<u32>,
        /// This process's position in `slots`.
        index: u32,
        /// The requester's payload.
        payload: Vec<u8>,
    },
    /// The answer to a [`ToLauncher::Publish`], [`ToLauncher::Unpublish`]
    /// or [`ToLauncher::Lookup`].
    Name {
        /// The request's `id`.
        id: u64,
        /// What the name table said.
        answer: NameAnswer,
    },
}

/// The name table's answer to one request ([`ToRank::Name`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NameAnswer {
    /// Published or unpublished.
    Done,
    /// The port the looked-up service names.
    Port(String),
    /// Lookup: no such service is published.
    NotFound,
    /// Publish: the service is already published (for the port given).
    AlreadyPublished(String),
    /// Unpublish: the service is not published, or for another port
    /// (given when it is).
    NotPublished(Option<String>),
}

/// Errors of the framing layer.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The socket failed.
    #[error("control socket: {0}")]
    Io(#[from] io::Error),
    /// The frame could not be decoded or encoded.
    #[error("control message: {0}")]
    Codec(#[from] postcard::Error),
    /// A frame announced more than [`MAX_FRAME`] bytes.
    #[error("control frame of {0} bytes exceeds the limit")]
    TooLarge(usize),
}

/// Writes one frame.
///
/// # Errors
/// Encoding and I/O errors.
pub fn write_frame<W: Write, T: Serialize>(w: &mut W, msg: &T) -> Result<(), FrameError> {
    let body = postcard::to_allocvec(msg)?;
    if body.len() > MAX_FRAME {
        return Err(FrameError::TooLarge(body.len()));
    }
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&(body.len() as u32).to_le_bytes());
    buf.extend_from_slice(&body);
    w.write_all(&buf)?;
    w.flush()?;
    Ok(())
}

/// Reads one frame; `Ok(None)` on a clean end of stream before a frame.
///
/// # Errors
/// I/O errors (including a stream cut inside a frame), decoding errors,
/// oversized frames.
pub fn read_frame<R: Read, T: DeserializeOwned>(r: &mut R) -> Result<Option<T>, FrameError> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    Ok(Some(postcard::from_bytes(&body)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_eof() {
        let mut buf = Vec::new();
        let m1 = ToLauncher::Hello {
            slot: 3,
            rank: 3,
            pid: 42,
            secret: vec![1, 2, 3],
        };
        let m2 = ToLauncher::Put {
            key: "k".into(),
            value: vec![9; 1000],
        };
        write_frame(&mut buf, &m1).unwrap();
        write_frame(&mut buf, &m2).unwrap();
        let mut r = &buf[..];
        assert_eq!(read_frame::<_, ToLauncher>(&mut r).unwrap(), Some(m1));
        assert_eq!(read_frame::<_, ToLauncher>(&mut r).unwrap(), Some(m2));
        assert!(read_frame::<_, ToLauncher>(&mut r).unwrap().is_none());
    }

    #[test]
    fn truncated_and_oversized_frames_are_errors() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &ToRank::Shutdown).unwrap();
        let cut = &buf[..buf.len() - 1];
        assert!(read_frame::<_, ToRank>(&mut &cut[..]).is_err());
        let huge = (u32::MAX).to_le_bytes();
        assert!(matches!(
            read_frame::<_, ToRank>(&mut &huge[..]),
            Err(FrameError::TooLarge(_))
        ));
        let garbage = [1u8, 0, 0, 0, 0xff];
        assert!(read_frame::<_, ToRank>(&mut &garbage[..]).is_err());
    }

    mod round_trip {
        use super::*;
        use proptest::prelude::*;

        fn bytes() -> impl Strategy<Value = Vec<u8>> {
            proptest::collection::vec(any::<u8>(), 0..64)
        }

        fn to_launcher() -> impl Strategy<Value = ToLauncher> {
            prop_oneof![
                (any::<u32>(), any::<u32>(), any::<u32>(), bytes()).prop_map(
                    |(slot, rank, pid, secret)| ToLauncher::Hello {
                        slot,
                        rank,
                        pid,
                        secret
                    }
                ),
                (".*", bytes()).prop_map(|(key, value)| ToLauncher::Put { key, value }),
                Just(ToLauncher::Fence),
                Just(ToLauncher::Finalize),
                (
                    any::<u64>(),
                    proptest::option::of(".*"),
                    proptest::collection::vec(".*", 0..4),
                    any::<u32>(),
                    any::<bool>(),
                    bytes(),
                    proptest::collection::vec(any::<u32>(), 0..8),
                )
                    .prop_map(
                        |(stamp, program, args, count, use_spares, payload, replaces)| {
                            ToLauncher::Spawn {
                                stamp,
                                program,
                                args,
                                count,
                                use_spares,
                                payload,
                                replaces,
                            }
                        }
                    ),
                (".*", any::<u64>(), any::<i32>()).prop_map(|(point, hit, signal)| {
                    ToLauncher::Injected { point, hit, signal }
                }),
                (any::<i32>(), ".*")
                    .prop_map(|(code, message)| ToLauncher::Abort { code, message }),
                (any::<u64>(), ".*", ".*").prop_map(|(id, service, port)| ToLauncher::Publish {
                    id,
                    service,
                    port
                }),
                (any::<u64>(), ".*", ".*").prop_map(|(id, service, port)| {
                    ToLauncher::Unpublish { id, service, port }
                }),
                (any::<u64>(), ".*").prop_map(|(id, service)| ToLauncher::Lookup { id, service }),
            ]
        }

        fn to_rank() -> impl Strategy<Value = ToRank> {
            prop_oneof![
                Just(ToRank::Welcome),
                proptest::collection::vec((".*", bytes()), 0..6)
                    .prop_map(|entries| ToRank::FenceDone { entries }),
                Just(ToRank::Shutdown),
                (
                    proptest::collection::vec(any::<u32>(), 0..8),
                    any::<u32>(),
                    bytes()
                )
                    .prop_map(|(slots, index, payload)| ToRank::Assign {
                        slots,
                        index,
                        payload
                    }),
                (any::<u64>(), name_answer()).prop_map(|(id, answer)| ToRank::Name { id, answer }),
            ]
        }

        fn name_answer() -> impl Strategy<Value = NameAnswer> {
            prop_oneof![
                Just(NameAnswer::Done),
                ".*".prop_map(NameAnswer::Port),
                Just(NameAnswer::NotFound),
                ".*".prop_map(NameAnswer::AlreadyPublished),
                proptest::option::of(".*").prop_map(NameAnswer::NotPublished),
            ]
        }

        proptest! {
                   /// Every message, in any order, reads back as written, and the
                   /// stream ends cleanly after the last frame.
                   #[test]
                   fn every_message_survives_a_frame(
                       up in proptest::collection::vec(to_launcher(), 0..8),
                       down in proptest::collection::vec(to_rank(), 0..8),
                   ) {
                       let mut buf = Vec::new();
                       for m in &up {
                           write_frame(&mut buf, m).unwrap();
                       }
                       let mut r = &buf[..];
                       for m in &up {
                           let got = read_frame::<_, ToLauncher>(&mut r).unwrap();
        prop_assert_eq!(got.as_ref(), Some(m));
                       }
                       prop_assert!(read_frame::<_, ToLauncher>(&mut r).unwrap().is_none());

                       let mut buf = Vec::new();
                       for m in &down {
                           write_frame(&mut buf, m).unwrap();
                       }
                       let mut r = &buf[..];
                       for m in &down {
                           let got = read_frame::<_, ToRank>(&mut r).unwrap();
        prop_assert_eq!(got.as_ref(), Some(m));
                       }
                       prop_assert!(read_frame::<_, ToRank>(&mut r).unwrap().is_none());
                   }

                   /// A frame cut anywhere is an error, never a wrong message.
                   #[test]
                   fn a_cut_frame_is_an_error(m in to_launcher(), cut in any::<prop::sample::Index>()) {
                       let mut buf = Vec::new();
                       write_frame(&mut buf, &m).unwrap();
                       let at = 1 + cut.index(buf.len() - 1);
                       let r = read_frame::<_, ToLauncher>(&mut &buf[..at]);
                       prop_assert!(r.is_err(), "cut at {} of {}: {:?}", at, buf.len(), r);
                   }
               }
    }
}
