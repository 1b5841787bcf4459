//! Forwarding of the ranks' stdout and stderr.
//!
//! One thread per stream copies whole lines to the launcher's own stream,
//! each batch under the stream's lock, so that lines of different ranks
//! never interleave within a line. A partial line waits for its end (or for
//! end of file, or for [`MAX_PENDING`] bytes, whichever comes first).
//! The stderr forwarder also looks for the process's first panic
//! ([`PanicScan`]) and sends it to the event loop for the summary.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::mpsc::Sender;

use crate::event::Event;
use crate::panic::PanicScan;

/// Longest partial line held back before it is forwarded anyway.
const MAX_PENDING: usize = 64 * 1024;

/// Where a forwarder writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sink {
    /// The launcher's stdout.
    Stdout,
    /// The launcher's stderr.
    Stderr,
    /// Nowhere (the tests).
    #[cfg(test)]
    Discard,
}

impl Sink {
    fn write(self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Sink::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Sink::Stderr => io::stderr().lock().write_all(bytes),
            #[cfg(test)]
            Sink::Discard => Ok(()),
        }
    }
}

/// The `--tag-output` prefix of the process in `slot`: `[R] ` for a rank
/// (whose slot is its rank), `[slot S] ` for a spare or spawned process.
pub(crate) fn tag(slot: u32, ranks: usize) -> String {
    if (slot as usize) < ranks {
        format!("[{slot}] ")
    } else {
        format!("[slot {slot}] ")
    }
}

/// Formats `data` (complete lines, or a final partial line) for output:
/// as is, or with every line prefixed by `prefix` and newline-terminated.
pub(crate) fn format_lines(data: &[u8], prefix: Option<&str>, out: &mut Vec<u8>) {
    out.clear();
    let Some(prefix) = prefix else {
        out.extend_from_slice(data);
        return;
    };
    for line in data.split_inclusive(|&b| b == b'\n') {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(line);
        if line.last() != Some(&b'\n') {
            out.push(b'\n');
        }
    }
}

/// Copies `src` to `sink` line by line until end of file, then sends
/// [`Event::OutputClosed`]. With `panics` (the process's slot, for its
/// stderr), the process's first panic is sent as [`Event::Panicked`]
/// before that. Write errors (a closed terminal, a broken pipe) do not stop
/// the copy: the rank must never block on a full pipe.
pub(crate) fn forward(
    src: impl Read,
    sink: Sink,
    prefix: Option<&str>,
    panics: Option<u32>,
    events: &Sender<Event>,
) {
    let mut src = BufReader::with_capacity(16 * 1024, src);
    let mut pending: Vec<u8> = Vec::new();
    let mut formatted: Vec<u8> = Vec::new();
    let mut scan = panics.map(|slot| (slot, PanicScan::new()));
    let mut emit = |data: &[u8]| {
        format_lines(data, prefix, &mut formatted);
        let _ = sink.write(&formatted);
        if let Some((slot, scan)) = &mut scan {
            if let Some(panic) = scan.feed(data) {
                let _ = events.send(Event::Panicked { slot: *slot, panic });
            }
        }
    };
    loop {
        let buf = match src.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => &[],
        };
        if buf.is_empty() {
            if !pending.is_empty() {
                emit(&pending);
            }
            break;
        }
        let n = buf.len();
        if let Some(last) = buf.iter().rposition(|&b| b == b'\n') {
            if pending.is_empty() {
                emit(&buf[..=last]);
            } else {
                pending.extend_from_slice(&buf[..=last]);
                emit(&pending);
                pending.clear();
            }
            pending.extend_from_slice(&buf[last + 1..]);
        } else {
            pending.extend_from_slice(buf);
        }
        src.consume(n);
        if pending.len() >= MAX_PENDING {
            emit(&pending);
            pending.clear();
        }
    }
    if let Some((slot, mut scan)) = scan {
        if let Some(panic) = scan.end() {
            let _ = events.send(Event::Panicked { slot, panic });
        }
    }
    let _ = events.send(Event::OutputClosed);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(data: &str, slot: Option<u32>) -> String {
        let mut out = Vec::new();
        let prefix = slot.map(|s| tag(s, 4));
        format_lines(data.as_bytes(), prefix.as_deref(), &mut out);
        String::from_utf8(out).unwrap()
    }

    /// A reader that hands out `data` a few bytes at a time.
    struct Trickle<'d> {
        data: &'d [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn the_first_panic_is_reported_before_the_end_of_the_stream() {
        let data = b"starting\nthread 'main' (9) panicked at src/main.rs:10:5:\nboom\nnote: x\n\
                     thread 'main' (9) panicked at src/main.rs:11:5:\nagain\n";
        for step in [1, 7, data.len()] {
            let (tx, rx) = std::sync::mpsc::channel();
            let src = Trickle { data, step };
            forward(src, Sink::Discard, Some("[1] "), Some(3), &tx);
            match &rx.try_iter().collect::<Vec<_>>()[..] {
                [Event::Panicked { slot: 3, panic }, Event::OutputClosed] => {
                    assert_eq!(
                        (panic.place.as_str(), panic.message.as_str()),
                        ("src/main.rs:10:5", "boom")
                    );
                }
                other => panic!("step {step}: {other:?}"),
            }
        }
        // A header whose message never came.
        let (tx, rx) = std::sync::mpsc::channel();
        let data = b"thread 'main' (9) panicked at src/main.rs:10:5:";
        forward(Trickle { data, step: 5 }, Sink::Discard, None, Some(3), &tx);
        assert!(matches!(
            &rx.try_iter().collect::<Vec<_>>()[..],
            [Event::Panicked { slot: 3, .. }, Event::OutputClosed]
        ));
        // Without `panics` (stdout), nothing is looked for.
        let (tx, rx) = std::sync::mpsc::channel();
        let step = data.len();
        forward(Trickle { data, step }, Sink::Discard, None, None, &tx);
        assert!(matches!(
            &rx.try_iter().collect::<Vec<_>>()[..],
            [Event::OutputClosed]
        ));
    }

    #[test]
    fn untagged_output_passes_through() {
        assert_eq!(fmt("a\nb\n", None), "a\nb\n");
        assert_eq!(fmt("partial", None), "partial");
    }

    #[test]
    fn tagged_lines_get_a_prefix_and_an_end() {
        assert_eq!(fmt("a\nb\n", Some(3)), "[3] a\n[3] b\n");
        assert_eq!(
            fmt("x\npartial", Some(12)),
            "[slot 12] x\n[slot 12] partial\n"
        );
        assert_eq!(fmt("\n", Some(0)), "[0] \n");
    }
}
