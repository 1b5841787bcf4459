//! Forwarding of the ranks' stdout and stderr.
//!
//! One thread per stream copies whole lines to the launcher's own stream,
//! each batch with one write of a complete buffer under the stream's lock,
//! so that lines of different processes (and the launcher's own messages,
//! written the same way by [`say`]) never interleave within a line. A
//! partial line waits for its end (or for end of file, or for
//! [`MAX_PENDING`] bytes, whichever comes first) and is then forwarded
//! with a newline added, so that the next line, whoever writes it, starts
//! a line of its own. The stderr forwarder also looks for the process's
//! first panic ([`PanicScan`]) and sends it to the event loop for the
//! summary.
//!
//! With `--output-filename` a forwarder also appends its lines to a file
//! ([`Out::file`], without the `--tag-output` prefix: the file names the
//! process), and with `--timestamp-output` every line starts with the UTC
//! time at which the launcher read it (`[2026-11-27 02:15:02.153] `).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use crate::event::Event;
use crate::panic::PanicScan;

/// Longest partial line held back before it is forwarded anyway.
const MAX_PENDING: usize = 64 * 1024;

/// Where a forwarder writes.
#[derive(Clone, Debug)]
pub(crate) enum Sink {
    /// The launcher's stdout.
    Stdout,
    /// The launcher's stderr.
    Stderr,
    /// Nowhere (the tests).
    #[cfg(test)]
    Discard,
    /// Each write kept apart (the tests).
    #[cfg(test)]
    Record(Arc<Mutex<Vec<Vec<u8>>>>),
}

impl Sink {
    /// Writes `bytes` with one `write_all` under the stream's lock.
    fn write(&self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Sink::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Sink::Stderr => io::stderr().lock().write_all(bytes),
            #[cfg(test)]
            Sink::Discard => Ok(()),
            #[cfg(test)]
            Sink::Record(writes) => {
                lock(writes).push(bytes.to_vec());
                Ok(())
            }
        }
    }
}

/// Where one stream's lines go.
#[derive(Debug)]
pub(crate) struct Out {
    /// The launcher's stream (`None`: `--output-filename DIR:nocopy`).
    pub sink: Option<Sink>,
    /// A file that gets every line too.
    pub file: Option<File>,
    /// Start every line with the time.
    pub timestamp: bool,
}

impl From<Sink> for Out {
    fn from(sink: Sink) -> Out {
        Out {
            sink: Some(sink),
            file: None,
            timestamp: false,
        }
    }
}

/// `[YYYY-MM-DD HH:MM:SS.mmm] ` for `t`, in UTC.
pub(crate) fn timestamp(t: SystemTime) -> String {
    let u = pertinax_wire::utc::Utc::of(t);
    format!(
        "[{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}] ",
        u.year, u.month, u.day, u.hour, u.minute, u.second, u.millis
    )
}

/// Writes one message of the launcher (`pertinax: ...`) on its stderr as
/// the forwarders write the processes' lines: formatted first, ended by a
/// newline, then written at once under the lock.
pub(crate) fn say(message: std::fmt::Arguments<'_>) {
    let mut line = message.to_string();
    if !line.ends_with('\n') {
        line.push('\n');
    }
    let _ = Sink::Stderr.write(line.as_bytes());
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The `--tag-output` prefix of one process, shared by its forwarders and
/// the event loop, which renames a process that takes over a rank.
#[derive(Clone, Debug)]
pub(crate) struct Tag(Arc<Mutex<String>>);

impl Tag {
    /// The prefix of the process in `slot` ([`tag`]).
    pub(crate) fn new(slot: u32, ranks: usize) -> Tag {
        Tag(Arc::new(Mutex::new(tag(slot, ranks))))
    }

    /// From now on, the prefix of a process that took over `rank`: lines
    /// read after this call carry it. The launcher calls it before it
    /// sends the process its assignment, hence before the process can
    /// know (and print) its rank.
    pub(crate) fn replacement(&self, rank: u32, slot: u32) {
        *lock(&self.0) = format!("[{rank} (replacement, slot {slot})] ");
    }

    /// The prefix now.
    pub(crate) fn get(&self) -> MutexGuard<'_, String> {
        lock(&self.0)
    }
}

/// The `--tag-output` prefix of the process in `slot`: `[R] ` for a rank
/// (whose slot is its rank), `[slot S] ` for a spare or spawned process
/// (until it takes over a rank: [`Tag::replacement`]).
pub(crate) fn tag(slot: u32, ranks: usize) -> String {
    if (slot as usize) < ranks {
        format!("[{slot}] ")
    } else {
        format!("[slot {slot}] ")
    }
}

/// Formats `data` (complete lines, or a final partial line) for output:
/// as is, or with every line prefixed by `prefix`; newline-terminated in
/// both cases.
pub(crate) fn format_lines(data: &[u8], prefix: Option<&str>, out: &mut Vec<u8>) {
    out.clear();
    let Some(prefix) = prefix else {
        out.extend_from_slice(data);
        if !out.is_empty() && out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
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
    out: impl Into<Out>,
    prefix: Option<Tag>,
    panics: Option<u32>,
    events: &Sender<Event>,
) {
    let Out {
        sink,
        mut file,
        timestamp: stamp,
    } = out.into();
    let mut src = BufReader::with_capacity(16 * 1024, src);
    let mut pending: Vec<u8> = Vec::new();
    let mut formatted: Vec<u8> = Vec::new();
    let mut scan = panics.map(|slot| (slot, PanicScan::new()));
    let mut emit = |data: &[u8]| {
        let time = stamp.then(|| timestamp(SystemTime::now()));
        if let Some(f) = &mut file {
            format_lines(data, time.as_deref(), &mut formatted);
            let _ = f.write_all(&formatted);
        }
        if let Some(sink) = &sink {
            let prefix = prefix.as_ref().map(Tag::get);
            let full = match (&time, &prefix) {
                (Some(t), Some(p)) => Some(format!("{t}{}", p.as_str())),
                (Some(t), None) => Some(t.clone()),
                (None, Some(p)) => Some(p.to_string()),
                (None, None) => None,
            };
            drop(prefix);
            format_lines(data, full.as_deref(), &mut formatted);
            let _ = sink.write(&formatted);
        }
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

    #[test]
    fn timestamps_are_utc_dates_with_milliseconds() {
        let at = |secs: u64, ms: u64| {
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(secs * 1000 + ms)
        };
        assert_eq!(timestamp(at(0, 0)), "[1970-01-01 00:00:00.000] ");
        assert_eq!(
            timestamp(at(1_000_000_000, 7)),
            "[2001-09-09 01:46:40.007] "
        );
        // A leap day, and the last millisecond of a year.
        assert_eq!(timestamp(at(951_782_400, 0)), "[2000-02-29 00:00:00.000] ");
        assert_eq!(
            timestamp(at(1_798_761_599, 999)),
            "[2026-12-31 23:59:59.999] "
        );
    }

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
            forward(src, Sink::Discard, Some(Tag::new(1, 4)), Some(3), &tx);
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
    fn untagged_output_passes_through_with_an_end() {
        assert_eq!(fmt("a\nb\n", None), "a\nb\n");
        assert_eq!(fmt("partial", None), "partial\n");
        assert_eq!(fmt("a\npartial", None), "a\npartial\n");
        assert_eq!(fmt("", None), "");
    }

    /// Every write of a forwarder is whole lines, whatever pieces the
    /// process wrote and however it ended (here: in the middle of a line,
    /// as a process killed between two writes does), with or without tags.
    #[test]
    fn every_write_is_whole_lines() {
        let data = b"pertinax: rank 3 aborts: first\nsecond line in two pieces\npertinax: rank";
        for prefix in [None, Some(Tag::new(3, 4))] {
            for step in [1, 5, 13, data.len()] {
                let writes = Arc::new(Mutex::new(Vec::new()));
                let (tx, _rx) = std::sync::mpsc::channel();
                let src = Trickle { data, step };
                forward(src, Sink::Record(writes.clone()), prefix.clone(), None, &tx);
                let writes = lock(&writes);
                assert!(
                    writes.iter().all(|w| w.ends_with(b"\n")),
                    "step {step}: {writes:?}"
                );
                let all: Vec<u8> = writes.concat();
                let want: &[u8] = if prefix.is_some() {
                    b"[3] pertinax: rank 3 aborts: first\n[3] second line in two pieces\n[3] pertinax: rank\n"
                } else {
                    b"pertinax: rank 3 aborts: first\nsecond line in two pieces\npertinax: rank\n"
                };
                assert_eq!(all, want, "step {step}");
            }
        }
    }

    /// A process that takes over a rank is tagged with it from then on.
    #[test]
    fn a_replacement_is_tagged_with_its_rank_and_slot() {
        let t = Tag::new(5, 4);
        assert_eq!(t.get().as_str(), "[slot 5] ");
        let (tx, _rx) = std::sync::mpsc::channel();
        let writes = Arc::new(Mutex::new(Vec::new()));
        t.replacement(3, 5);
        let src = Trickle {
            data: b"hello\n",
            step: 6,
        };
        forward(src, Sink::Record(writes.clone()), Some(t), None, &tx);
        assert_eq!(
            lock(&writes).concat(),
            b"[3 (replacement, slot 5)] hello\n".to_vec()
        );
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
