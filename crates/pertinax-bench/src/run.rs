//! Running measured programs: one launch with a wall-clock bound, and K
//! launches of several variants interleaved.
//!
//! This host flips between a fast and a slow state between launches and is
//! shared with builds and tests (see [`crate::host`]). Comparisons are
//! therefore made launch by launch: launch *i* of every variant runs back
//! to back, each right after a sentinel sample, with the other processes'
//! CPU use recorded while it runs, and the variants' order rotates from one
//! round to the next so that no variant always goes first.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rustix::process::{kill_process_group, Pid, Signal};

use crate::contention::Meter;
use crate::host::{describe, Sample, Sentinel};
use crate::parse::{parse_output, Record};

/// Key of the record the bench adds to every launch's records:
/// `WALL variant=<name> elapsed_ms=<wall time of the whole launch>`.
pub const WALL: &str = "WALL";

/// Grace period between SIGTERM and SIGKILL when a launch times out.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// A program, its arguments and the environment variables it gets on top
/// of this process's.
#[derive(Clone, Debug)]
pub struct Cmd {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

impl Cmd {
    /// `program` without arguments.
    pub fn new(program: impl Into<PathBuf>) -> Cmd {
        Cmd {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// Sets environment variable `key` to `value`.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Cmd {
        let kv = (key.as_ref().to_owned(), value.as_ref().to_owned());
        self.env.push(kv);
        self
    }

    /// Appends one argument.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Cmd {
        self.args.push(a.as_ref().to_owned());
        self
    }

    /// Appends arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Cmd {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// The command line as a shell would show it (for logs and reports),
    /// the environment variables first (`KEY=VALUE program args`).
    pub fn display(&self) -> String {
        let env = self.env.iter().map(|(k, v)| {
            let mut kv = k.clone();
            kv.push("=");
            kv.push(v);
            kv
        });
        env.chain(std::iter::once(self.program.clone().into_os_string()))
            .chain(self.args.iter().cloned())
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// How a launch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal (not by us).
    Signal(i32),
    /// Exceeded its time limit; its process group was killed.
    TimedOut,
}

/// Everything a launch produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How it ended.
    pub exit: Exit,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Outcome {
    /// Whether it exited with code 0.
    pub fn ok(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// A short description of how it ended, e.g. `rc=0` or `TIMEOUT`.
    pub fn status(&self) -> String {
        match self.exit {
            Exit::Code(c) => format!("rc={c}"),
            Exit::Signal(s) => format!("signal={s}"),
            Exit::TimedOut => "TIMEOUT".into(),
        }
    }
}

/// Runs `cmd` in a process group of its own, collects its output and kills
/// the whole group if it runs longer than `limit`.
///
/// # Errors
/// When the program cannot be started.
pub fn run(cmd: &Cmd, limit: Duration) -> Result<Outcome> {
    let mut command = Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let t0 = Instant::now();
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start {}", cmd.program.display()))?;
    let pgid = child.id();
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send((status, Instant::now()));
    });
    let (status, t1, timed_out) = match rx.recv_timeout(limit) {
        Ok((s, t1)) => (s, t1, false),
        Err(_) => {
            kill_group(pgid, Signal::TERM);
            let (s, t1) = match rx.recv_timeout(KILL_GRACE) {
                Ok(r) => r,
                Err(_) => {
                    kill_group(pgid, Signal::KILL);
                    rx.recv().context("waiter thread vanished")?
                }
            };
            (s, t1, true)
        }
    };
    let status = status.context("waiting for the launch")?;
    // Descendants that outlive the launcher would keep the pipes open; they
    // are ours, in our process group, so end them after a grace period.
    let collect = |rx: mpsc::Receiver<String>| match rx.recv_timeout(KILL_GRACE) {
        Ok(s) => s,
        Err(_) => {
            kill_group(pgid, Signal::KILL);
            rx.recv().unwrap_or_default()
        }
    };
    let stdout = collect(stdout);
    let stderr = collect(stderr);
    let exit = if timed_out {
        Exit::TimedOut
    } else if let Some(c) = status.code() {
        Exit::Code(c)
    } else {
        Exit::Signal(status.signal().unwrap_or(0))
    };
    Ok(Outcome {
        exit,
        elapsed: t1 - t0,
        stdout,
        stderr,
    })
}

/// Reads a pipe to its end on a thread; the text arrives on the channel.
fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
    });
    rx
}

/// Sends `sig` to process group `pgid`; a group already gone is not an
/// error.
fn kill_group(pgid: u32, sig: Signal) {
    let Some(pid) = Pid::from_raw(pgid as i32) else {
        return;
    };
    match kill_process_group(pid, sig) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => {}
        Err(e) => eprintln!("warning: cannot signal process group {pgid}: {e}"),
    }
}

/// One configuration being measured, e.g. "pertinax" or "ompi".
#[derive(Clone, Debug)]
pub struct Variant {
    /// Short name used in tables and JSON.
    pub name: String,
    /// What one launch runs.
    pub cmd: Cmd,
    /// A file a launch writes (e.g. the kill-time file of a fault
    /// scenario), removed before each of its launches so that none reads
    /// an older one.
    pub scratch: Option<PathBuf>,
}

impl Variant {
    /// Variant `name` that runs `cmd`.
    pub fn new(name: impl Into<String>, cmd: Cmd) -> Variant {
        Variant {
            name: name.into(),
            cmd,
            scratch: None,
        }
    }

    /// The same, with `file` removed before each launch.
    pub fn scratch(mut self, file: PathBuf) -> Variant {
        self.scratch = Some(file);
        self
    }
}

/// The last non-blank line of `s` (a launch's stderr), at most 160
/// characters, for a report's list of failures.
pub fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(160)
        .collect()
}

/// One launch of one variant.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Index into the variants.
    pub variant: usize,
    /// Round number, from 0.
    pub round: usize,
    /// The sentinel reading taken just before.
    pub sentinel: Option<Sample>,
    /// The sentinel reading taken just after (the host can change state
    /// during a launch, e.g. during Open MPI's one-second `MPI_Init`).
    pub sentinel_after: Option<Sample>,
    /// Share of the machine's CPU time that other processes (not this
    /// launch, not the bench) used while it ran, 0..1; `None` if unknown.
    pub others_cpu: Option<f64>,
    /// What the program did.
    pub outcome: Outcome,
    /// The records parsed from its standard output.
    pub records: Vec<Record>,
}

impl Launch {
    /// For tests: round 0 of `variant`, no sentinel readings, ended with
    /// `exit` after printing `out` (parsed into records) and `last words`
    /// on stderr. Tests adjust the fields they care about.
    #[cfg(test)]
    pub fn fake(variant: usize, exit: Exit, out: &str) -> Launch {
        Launch {
            variant,
            round: 0,
            sentinel: None,
            sentinel_after: None,
            others_cpu: None,
            outcome: Outcome {
                exit,
                elapsed: Duration::ZERO,
                stdout: out.into(),
                stderr: "last words\n".into(),
            },
            records: parse_output(out),
        }
    }

    /// Whether it ran into its time limit.
    pub fn timed_out(&self) -> bool {
        self.outcome.exit == Exit::TimedOut
    }

    /// Whether the host was in its fast state for this launch: the
    /// sentinel saw it fast right before and (if sampled) right after.
    pub fn fast(&self) -> Option<bool> {
        let before = self.sentinel?.fast();
        Some(before && self.sentinel_after.is_none_or(|s| s.fast()))
    }
}

/// What to run and how.
#[derive(Debug)]
pub struct Plan<'a> {
    /// Title for progress lines and the log, e.g. `"pingpong"`.
    pub title: &'a str,
    /// The configurations, run in rotating order each round.
    pub variants: &'a [Variant],
    /// Rounds (launches per variant).
    pub rounds: usize,
    /// Wall-clock limit per launch.
    pub limit: Duration,
    /// Sampled before every launch.
    pub sentinel: &'a Sentinel,
}

/// Runs `plan.rounds` rounds; in each, every variant once (sentinel first).
/// Progress goes to stderr; every launch's full output to `log`, if given.
///
/// # Errors
/// When a program cannot be started or the log cannot be written. A launch
/// that fails or times out is not an error: it is recorded, and its records
/// are left out of the aggregates.
pub fn interleave(plan: &Plan<'_>, mut log: Option<&mut File>) -> Result<Vec<Launch>> {
    let n = plan.variants.len();
    let mut launches = Vec::with_capacity(n * plan.rounds);
    for round in 0..plan.rounds {
        for k in 0..n {
            let variant = (round + k) % n;
            let v = &plan.variants[variant];
            if let Some(f) = &v.scratch {
                let _ = std::fs::remove_file(f);
            }
            let sentinel = plan.sentinel.sample();
            let meter = Meter::start();
            let outcome = run(&v.cmd, plan.limit)?;
            let others_cpu = meter.and_then(Meter::finish);
            let sentinel_after = plan.sentinel.sample();
            let mut records = parse_output(&outcome.stdout);
            records.push(Record::new(
                WALL,
                &[
                    ("variant", v.name.clone()),
                    (
                        "elapsed_ms",
                        format!("{:.3}", outcome.elapsed.as_secs_f64() * 1e3),
                    ),
                ],
            ));
            let l = Launch {
                variant,
                round,
                sentinel,
                sentinel_after,
                others_cpu,
                outcome,
                records,
            };
            crate::progress::println(&format!(
                "[{} {}/{}] {:<22} {:>6} {:>8.3} s  {}, after {}  others' CPU {}",
                plan.title,
                round + 1,
                plan.rounds,
                v.name,
                l.outcome.status(),
                l.outcome.elapsed.as_secs_f64(),
                describe(l.sentinel),
                l.sentinel_after
                    .map_or("n/a".into(), |s| format!("{:.1} ns", s.oneway_ns)),
                crate::host::percent(l.others_cpu),
            ));
            if !l.outcome.ok() {
                let tail: Vec<&str> = l.outcome.stderr.lines().rev().take(5).collect();
                for line in tail.iter().rev() {
                    crate::progress::println(&format!("    stderr: {line}"));
                }
            }
            crate::progress::tick();
            if let Some(f) = log.as_deref_mut() {
                write_log(f, plan.title, v, &l)?;
            }
            launches.push(l);
        }
    }
    Ok(launches)
}

fn write_log(f: &mut File, title: &str, v: &Variant, l: &Launch) -> Result<()> {
    writeln!(
        f,
        "### {title} variant={} round={} {} elapsed={:.6} {} after={} others_cpu={}\n$ {}",
        v.name,
        l.round + 1,
        l.outcome.status(),
        l.outcome.elapsed.as_secs_f64(),
        describe(l.sentinel),
        l.sentinel_after
            .map_or("n/a".into(), |s| format!("{:.1}ns", s.oneway_ns)),
        crate::host::percent(l.others_cpu),
        v.cmd.display()
    )?;
    f.write_all(l.outcome.stdout.as_bytes())?;
    if !l.outcome.stderr.is_empty() {
        writeln!(f, "--- stderr")?;
        f.write_all(l.outcome.stderr.as_bytes())?;
    }
    Ok(())
}

/// Opens (appends to) the raw log at `path`.
///
/// # Errors
/// When the file cannot be opened.
pub fn open_log(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open log {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_reports_output_and_status() {
        let out = run(
            &Cmd::new("/bin/sh").args(["-c", "echo 'PP size=0 t=1'; echo oops >&2; exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.exit, Exit::Code(3));
        assert!(!out.ok());
        assert_eq!(parse_output(&out.stdout).len(), 1);
        assert_eq!(out.stderr.trim(), "oops");
    }

    #[test]
    fn a_hanging_launch_is_killed_with_its_children() {
        let t0 = Instant::now();
        let out = run(
            &Cmd::new("/bin/sh").args(["-c", "sleep 30 & sleep 30; echo never"]),
            Duration::from_millis(300),
        )
        .unwrap();
        assert_eq!(out.exit, Exit::TimedOut);
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        assert!(out.stdout.is_empty());
    }
}
