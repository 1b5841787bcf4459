//! The first panic a process reports on its stderr, for the summary.
//!
//! Rust's default panic hook prints, since Rust 1.73 (recent versions add
//! the thread's id in parentheses after its name):
//!
//! ```text
//! thread 'main' (4242) panicked at src/main.rs:10:5:
//! the message
//! (more lines of the message)
//! note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
//! ```
//!
//! and before 1.73 `thread 'main' panicked at 'the message',
//! src/main.rs:10:5` (a message of several lines spreads the quoted part
//! over them). [`PanicScan`] is fed the lines of a process's stderr as the
//! forwarder copies them. To stay cheap it looks only at lines that start
//! with `thread '` and, after one of them, at the next line; once it has a
//! panic it looks at nothing more. A process with a hook of its own that
//! prints something else has no panic recorded, and the summary says what
//! it said before (exit code 101).

/// Longest thread name, place and message line kept, in characters.
const MAX_CHARS: usize = 200;

/// A panic that a process reported on its stderr, as Rust's default panic
/// hook prints it: the first one the launcher saw.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Panic {
    /// The name of the thread that panicked (`main`, `<unnamed>`, ...).
    pub thread: String,
    /// Where: `file:line:column`.
    pub place: String,
    /// The first line of its message; may be empty.
    pub message: String,
}

/// What the scanner waits for.
#[derive(Debug)]
enum State {
    /// A line that starts with `thread '`.
    Header,
    /// The line after a header of the current format: the message's first
    /// line.
    Message { thread: String, place: String },
    /// The line after a header of the old format whose quoted message went
    /// on: it ends with `', place` if the message had two lines.
    OldPlace { thread: String, message: String },
    /// Nothing: it has found its panic.
    Done,
}

/// Finds the first panic in the lines of one stream.
#[derive(Debug)]
pub(crate) struct PanicScan {
    state: State,
}

impl PanicScan {
    pub(crate) fn new() -> PanicScan {
        PanicScan {
            state: State::Header,
        }
    }

    /// Scans `data` (whole lines, or a last partial line that the
    /// forwarder could hold back no longer); returns the panic the first
    /// time one is complete.
    pub(crate) fn feed(&mut self, data: &[u8]) -> Option<Panic> {
        if matches!(self.state, State::Done) {
            return None;
        }
        for line in data.split_inclusive(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if let Some(panic) = self.line(line) {
                return Some(panic);
            }
        }
        None
    }

    /// The stream ended: a header whose message never came is a panic
    /// with an empty message.
    pub(crate) fn end(&mut self) -> Option<Panic> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Message { thread, place } => Some(Panic {
                thread,
                place,
                message: String::new(),
            }),
            State::Header | State::OldPlace { .. } | State::Done => None,
        }
    }

    fn line(&mut self, line: &[u8]) -> Option<Panic> {
        match std::mem::replace(&mut self.state, State::Header) {
            State::Header => {
                let header = line.strip_prefix(b"thread '")?;
                match parse_header(&String::from_utf8_lossy(header))? {
                    Header::Current { thread, place } => {
                        self.state = State::Message { thread, place };
                        None
                    }
                    Header::Old {
                        thread,
                        message,
                        place: Some(place),
                    } => self.found(thread, place, message),
                    Header::Old {
                        thread,
                        message,
                        place: None,
                    } => {
                        self.state = State::OldPlace { thread, message };
                        None
                    }
                }
            }
            State::Message { thread, place } => {
                let message = clip(&String::from_utf8_lossy(line));
                self.found(thread, place, message)
            }
            State::OldPlace { thread, message } => {
                // A message of three lines or more in the old format is
                // not worth looking further for: no panic is recorded.
                let (_, place) = old_place(&String::from_utf8_lossy(line))?;
                self.found(thread, place, message)
            }
            State::Done => {
                self.state = State::Done;
                None
            }
        }
    }

    fn found(&mut self, thread: String, place: String, message: String) -> Option<Panic> {
        self.state = State::Done;
        Some(Panic {
            thread,
            place,
            message,
        })
    }
}

/// A panic's first line, after `thread '`.
#[derive(Debug, PartialEq, Eq)]
enum Header {
    /// `NAME' (ID) panicked at PLACE:` (the id only in recent versions).
    Current { thread: String, place: String },
    /// `NAME' panicked at 'MESSAGE', PLACE`, or, when the message has more
    /// lines, `NAME' panicked at 'MESSAGE` (its first line).
    Old {
        thread: String,
        message: String,
        place: Option<String>,
    },
}

/// Parses what follows `thread '` on a line; `None` if it is no panic.
/// Thread names may hold quotes (`thread 'a 'b'' panicked at`), and old
/// messages anything: the first ` panicked at ` ends the name, the last
/// `', ` before a place ends an old message.
fn parse_header(rest: &str) -> Option<Header> {
    const AT: &str = " panicked at ";
    let at = rest.find(AT)?;
    let thread = thread_name(&rest[..at])?;
    let tail = &rest[at + AT.len()..];
    if let Some(quoted) = tail.strip_prefix('\'') {
        return Some(match old_place(quoted) {
            Some((message, place)) => Header::Old {
                thread,
                message,
                place: Some(place),
            },
            None => Header::Old {
                thread,
                message: clip(quoted),
                place: None,
            },
        });
    }
    let place = tail.strip_suffix(':')?;
    is_place(place).then(|| Header::Current {
        thread,
        place: clip_place(place),
    })
}

/// The thread's name from `NAME'` or `NAME' (ID)`.
fn thread_name(s: &str) -> Option<String> {
    let s = match s.strip_suffix(')').and_then(|s| s.rsplit_once("' (")) {
        Some((name, id)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => s.strip_suffix('\'')?,
    };
    Some(clip(s))
}

/// Splits `MESSAGE', PLACE` (the end of an old-format panic line) into its
/// message and place.
fn old_place(s: &str) -> Option<(String, String)> {
    let (message, place) = s.rsplit_once("', ")?;
    is_place(place).then(|| (clip(message), clip_place(place)))
}

/// `file:line:column`, with a file name and numbers.
fn is_place(s: &str) -> bool {
    let number = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    let mut parts = s.rsplitn(3, ':');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(col), Some(line), Some(file)) if number(col) && number(line) && !file.is_empty()
    )
}

/// `s` cut to its first [`MAX_CHARS`] characters (`...` marks the cut).
fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_CHARS) {
        Some((end, _)) => format!("{}...", &s[..end]),
        None => s.to_string(),
    }
}

/// A place cut to its last [`MAX_CHARS`] characters, which hold the file
/// name, line and column (`...` marks the cut).
fn clip_place(s: &str) -> String {
    let n = s.chars().count();
    match s.char_indices().nth(n.saturating_sub(MAX_CHARS)) {
        Some((start, _)) if start > 0 => format!("...{}", &s[start..]),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panic(thread: &str, place: &str, message: &str) -> Option<Panic> {
        Some(Panic {
            thread: thread.into(),
            place: place.into(),
            message: message.into(),
        })
    }

    /// Feeds `chunks` to a scanner one after the other, then ends the
    /// stream; checks that the panic (if any) comes out once, from the
    /// chunk that completes it or at the end.
    fn check(chunks: &[&str], expected: Option<Panic>) {
        let mut scan = PanicScan::new();
        let mut found: Vec<Panic> = chunks
            .iter()
            .filter_map(|c| scan.feed(c.as_bytes()))
            .collect();
        found.extend(scan.end());
        assert!(found.len() <= 1, "{found:?}");
        assert_eq!(found.pop(), expected, "{chunks:?}");
    }

    #[test]
    fn the_current_format_with_a_thread_id() {
        check(
            &["working\n\
                 thread 'main' (4242) panicked at src/main.rs:10:5:\n\
                 solver blew up\n\
                 note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"],
            panic("main", "src/main.rs:10:5", "solver blew up"),
        );
    }

    #[test]
    fn the_current_format_without_a_thread_id() {
        check(
            &["thread 'main' panicked at src/main.rs:10:5:\nboom\n"],
            panic("main", "src/main.rs:10:5", "boom"),
        );
    }

    #[test]
    fn only_the_first_line_of_a_message_is_kept() {
        check(
            &["thread 'main' (7) panicked at src/lib.rs:3:9:\nline one\nline two\n"],
            panic("main", "src/lib.rs:3:9", "line one"),
        );
    }

    #[test]
    fn the_message_may_come_in_a_later_chunk_or_never() {
        check(
            &["x\nthread 'main' (1) panicked at a.rs:1:2:\n", "boom\r\n"],
            panic("main", "a.rs:1:2", "boom"),
        );
        check(
            &["thread 'main' (1) panicked at a.rs:1:2:\n"],
            panic("main", "a.rs:1:2", ""),
        );
        // An empty message is an empty line.
        check(
            &["thread 'main' (1) panicked at a.rs:1:2:\n\nstack backtrace:\n"],
            panic("main", "a.rs:1:2", ""),
        );
    }

    #[test]
    fn threads_other_than_main() {
        check(
            &["thread '<unnamed>' (99) panicked at src/w.rs:8:46:\nin a worker\n"],
            panic("<unnamed>", "src/w.rs:8:46", "in a worker"),
        );
        // Names may hold quotes, spaces and parentheses.
        check(
            &["thread 'worker 'x' (2)' (20443) panicked at p.rs:7:86:\nin worker\n"],
            panic("worker 'x' (2)", "p.rs:7:86", "in worker"),
        );
        check(
            &["thread 'pool-3' panicked at 'boom', src/pool.rs:1:1\n"],
            panic("pool-3", "src/pool.rs:1:1", "boom"),
        );
    }

    #[test]
    fn the_first_panic_is_kept() {
        // A worker panics, then main unwraps its join.
        let out = "thread 'w' (5) panicked at src/w.rs:2:3:\nreal cause\n\
                   thread 'main' (4) panicked at src/main.rs:9:9:\n\
                   called `Result::unwrap()` on an `Err` value: Any { .. }\n";
        check(&[out], panic("w", "src/w.rs:2:3", "real cause"));
        let mut scan = PanicScan::new();
        assert!(scan.feed(out.as_bytes()).is_some());
        assert_eq!(scan.feed(out.as_bytes()), None);
        assert_eq!(scan.end(), None);
    }

    #[test]
    fn the_old_format() {
        check(
            &["thread 'main' panicked at 'solver blew up', src/main.rs:10:5\nnote: run with\n"],
            panic("main", "src/main.rs:10:5", "solver blew up"),
        );
        // Quotes and commas in the message.
        check(
            &["thread 'main' panicked at 'it's 'x', y', src/main.rs:1:2\n"],
            panic("main", "src/main.rs:1:2", "it's 'x', y"),
        );
        // A message of two lines: the place is on the line after.
        check(
            &["thread 'main' panicked at 'line one\nline two', src/main.rs:4:20\n"],
            panic("main", "src/main.rs:4:20", "line one"),
        );
        // Of three lines: not looked for.
        check(
            &["thread 'main' panicked at 'one\ntwo\nthree', src/main.rs:4:20\n"],
            None,
        );
    }

    #[test]
    fn other_lines_are_no_panic() {
        check(
            &[
                "thread 'main' is fine\n",
                "the thread 'main' panicked at a.rs:1:2:\n",
                "  thread 'main' panicked at a.rs:1:2:\n",
                "thread 'main' panicked at somewhere:\n",
                "thread 'main' panicked at a.rs:1:x:\n",
                "thread 'main' panicked at a.rs:1:2\n",
                "thread main panicked at a.rs:1:2:\n",
            ],
            None,
        );
        // A line that is no panic does not spoil the next.
        check(
            &["thread 'x' panicked at nowhere:\nthread 'y' panicked at b.rs:3:4:\nm\n"],
            panic("y", "b.rs:3:4", "m"),
        );
    }

    #[test]
    fn long_fields_are_clipped_and_bytes_need_not_be_utf8() {
        let long = "é".repeat(300);
        let path = format!("{}/main.rs", "d".repeat(300));
        let out = format!("thread '{long}' panicked at {path}:1:2:\n{long}\n");
        let mut scan = PanicScan::new();
        let p = scan.feed(out.as_bytes()).unwrap();
        let clipped = format!("{}...", "é".repeat(MAX_CHARS));
        assert_eq!(p.thread, clipped);
        assert_eq!(p.message, clipped);
        assert_eq!(p.place.chars().count(), MAX_CHARS + 3);
        assert!(p.place.starts_with("...dd") && p.place.ends_with("/main.rs:1:2"));
        let mut scan = PanicScan::new();
        let bytes = b"thread 'main' panicked at a.rs:1:2:\nbad \xff\n";
        assert_eq!(scan.feed(bytes), panic("main", "a.rs:1:2", "bad \u{FFFD}"));
    }
}
