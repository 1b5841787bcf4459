//! Helpers for the integration tests: each test gets a [`Sandbox`] (its own
//! temporary directory), runs the real `pertinax` binary under a wall-clock
//! bound, and checks afterwards that no process it started is still alive.
//!
//! Every process a test starts carries `PERTINAX_TEST_TAG=<unique>` in its
//! environment (ranks and their children inherit it), so leftovers are found
//! by scanning `/proc`, whoever their parent is by then.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The launcher under test.
pub const PERTINAX: &str = env!("CARGO_BIN_EXE_pertinax");
/// The protocol-speaking test rank.
pub const FAKE_RANK: &str = env!("CARGO_BIN_EXE_pertinax-fake-rank");

const TAG_VAR: &str = pertinax_wire::env::test::TEST_TAG;

/// How long leftovers may take to disappear after the launcher ended (they
/// may be dying of PDEATHSIG at that moment).
const LEFTOVER_GRACE: Duration = Duration::from_secs(1);

/// A test's own directory and process tag.
pub struct Sandbox {
    dir: tempfile::TempDir,
    tag: String,
}

/// How a launcher run ended.
#[derive(Debug)]
pub struct Outcome {
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
    /// Wall-clock time from spawn to exit.
    pub elapsed: Duration,
}

impl Outcome {
    /// Lines of stdout.
    pub fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

/// A launcher started in the background.
pub struct Running {
    child: Option<Child>,
    out: Option<JoinHandle<String>>,
    err: Option<JoinHandle<String>>,
    started: Instant,
}

impl Sandbox {
    /// A fresh directory and tag.
    pub fn new() -> Sandbox {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = tempfile::tempdir().expect("temporary directory");
        let tag = format!(
            "{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        Sandbox { dir, tag }
    }

    /// The test's directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A file in the test's directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Starts `pertinax ARGS` in the test's directory.
    pub fn spawn(&self, args: &[&str]) -> Running {
        let mut child = Command::new(PERTINAX)
            .args(args)
            .current_dir(self.dir())
            .env(TAG_VAR, &self.tag)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pertinax");
        let out = child.stdout.take().map(slurp);
        let err = child.stderr.take().map(slurp);
        Running {
            child: Some(child),
            out,
            err,
            started: Instant::now(),
        }
    }

    /// Runs `pertinax ARGS` to its end within `bound`, then checks that it
    /// left no process behind.
    pub fn run(&self, args: &[&str], bound: Duration) -> Outcome {
        let outcome = self.spawn(args).wait(bound);
        self.assert_no_leftovers();
        outcome
    }

    /// Fails the test if a process started by it is still alive after
    /// [`LEFTOVER_GRACE`] (and kills it).
    pub fn assert_no_leftovers(&self) {
        let left = wait_for(LEFTOVER_GRACE, || tagged(&self.tag).is_empty());
        if !left {
            let pids = tagged(&self.tag);
            kill_all(&pids);
            panic!("processes left behind: {pids:?}");
        }
    }

    /// Live processes started by this test (the launcher included).
    pub fn live_processes(&self) -> Vec<u32> {
        tagged(&self.tag)
    }

    /// Reads a file of the test's directory, waiting until `bound` for it
    /// to exist and end with a newline.
    pub fn read_when_ready(&self, name: &str, bound: Duration) -> String {
        let path = self.file(name);
        let mut text = String::new();
        let ok = wait_for(bound, || {
            text = std::fs::read_to_string(&path).unwrap_or_default();
            text.ends_with('\n')
        });
        assert!(ok, "{name} did not appear within {bound:?}");
        text
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        kill_all(&tagged(&self.tag));
    }
}

impl Running {
    /// The launcher's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Sends `sig` to the launcher.
    pub fn signal(&self, sig: i32) {
        pertinax_sys::process::kill(self.pid(), sig).expect("signal the launcher");
    }

    /// Waits for the launcher to end; kills it and fails the test if it
    /// runs past `bound`.
    pub fn wait(mut self, bound: Duration) -> Outcome {
        let mut child = self.child.take().expect("launcher");
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for pertinax") {
                break status;
            }
            if self.started.elapsed() > bound {
                let _ = child.kill();
                let _ = child.wait();
                panic!("pertinax ran longer than {bound:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let elapsed = self.started.elapsed();
        let join = |h: Option<JoinHandle<String>>| {
            h.map(|h| h.join().unwrap_or_default()).unwrap_or_default()
        };
        Outcome {
            code: status.code(),
            stdout: join(self.out.take()),
            stderr: join(self.err.take()),
            elapsed,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn slurp(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = r.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Polls `cond` every 5 ms until it holds or `bound` passes.
pub fn wait_for(bound: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if cond() {
            return true;
        }
        if start.elapsed() > bound {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether `pid` is a live process (zombies are dead: nobody may reap them
/// where init does not).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesized command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// Live processes whose environment holds our tag.
fn tagged(tag: &str) -> Vec<u32> {
    let needle = format!("{TAG_VAR}={tag}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes()))
                .unwrap_or(false)
        })
        .filter(|&pid| alive(pid))
        .collect()
}

fn kill_all(pids: &[u32]) {
    for &pid in pids {
        let _ = pertinax_sys::process::kill(pid, libc::SIGKILL);
    }
}

/// A shell command line for `sh -c` that runs `script` in every rank.
pub fn sh(script: &str) -> Vec<&str> {
    vec!["sh", "-c", script]
}

/// A `sh -c` script that runs the fake rank with flags chosen by role and
/// rank: `cases` are shell patterns on `ROLE:RANK` (`rank:0`, `spare:*`,
/// `spawned:1`, `*`) with their flags; the first match wins.
pub fn fake_script(cases: &[(&str, &str)]) -> String {
    let mut s = String::from("case \"$PERTINAX_ROLE:$PERTINAX_RANK\" in ");
    for (pattern, flags) in cases {
        s.push_str(&format!("{pattern}) exec {FAKE_RANK} {flags};; "));
    }
    s.push_str("esac; echo 'no case for' $PERTINAX_ROLE:$PERTINAX_RANK >&2; exit 99");
    s
}

/// Runs `pertinax run -n N OPTS -- sh -c (fake_script CASES)` in a fresh
/// sandbox within `bound`, and checks that nothing is left behind.
pub fn run_fake_job(n: usize, opts: &[&str], cases: &[(&str, &str)], bound: Duration) -> Outcome {
    let sb = Sandbox::new();
    let n = n.to_string();
    let script = fake_script(cases);
    let mut args = vec!["run", "-n", &n];
    args.extend_from_slice(opts);
    args.extend(["--", "sh", "-c", &script]);
    sb.run(&args, bound)
}

/// The `at T s` time of the summary line that contains `what`, in seconds.
pub fn summary_time(stderr: &str, what: &str) -> f64 {
    let line = stderr
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no line with {what:?} in {stderr}"));
    line.match_indices(" at ")
        .find_map(|(i, _)| line[i + 4..].split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no time in {line:?}"))
}
