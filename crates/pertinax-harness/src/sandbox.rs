//! A test's sandbox: its own temporary directory and process mark, the
//! launcher started in it with a wall-clock bound, and the leftover check.
//!
//! Every process a sandbox starts carries `PERTINAX_TEST_MARK=<unique>` in
//! its environment (the launcher gets it; ranks, spares, spawned processes
//! and their children inherit it), so leftovers are found by scanning
//! `/proc`, whoever their parent is by then. Ending a sandbox, a launcher
//! past its bound, or a dropped [`Running`] kills the whole job: the
//! launcher, every marked process, and the process group of each marked
//! group leader (the launcher puts each rank in a group of its own, so a
//! rank's descendants go too, marked or not). The launcher stays in the
//! test's own process group, so a Ctrl-C of `cargo test` reaches it and it
//! ends its job itself.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::process::{getpgid, kill_process, kill_process_group, Pid, Signal};

use crate::program::launcher;

/// The environment variable that marks a sandbox's processes.
pub const MARK_VAR: &str = pertinax_wire::env::test::TEST_MARK;

/// How long leftovers may take to disappear after the launcher ended (they
/// may be dying of PDEATHSIG at that moment), by default.
pub const LEFTOVER_GRACE: Duration = Duration::from_secs(1);

/// A test's own directory and process mark. Dropping it kills every process
/// it started that is still alive.
#[derive(Debug)]
pub struct Sandbox {
    /// Always `Some` until [`Sandbox::into_dir`].
    dir: Option<tempfile::TempDir>,
    mark: String,
    grace: Duration,
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

/// A launcher started in the background. Dropping it kills the launcher
/// and its job.
#[derive(Debug)]
pub struct Running {
    child: Option<Child>,
    out: Option<JoinHandle<String>>,
    err: Option<JoinHandle<String>>,
    started: Instant,
    mark: String,
}

/// How [`Running::wait_within`] ended.
#[derive(Debug)]
pub struct Ended {
    /// The launcher's status; `None` if it ran past the bound and was
    /// killed (with everything it started).
    pub status: Option<ExitStatus>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
    /// Wall-clock time from spawn to exit (or to the kill).
    pub elapsed: Duration,
    /// Past the bound, what the caller's probe said of the processes still
    /// alive before they were killed ([`Running::wait_within_then`]).
    pub alive: String,
    /// Why the job was killed before its bound, if it was
    /// ([`Running::wait_watching`]).
    pub wedged: Option<String>,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    /// A fresh directory and mark.
    pub fn new() -> Sandbox {
        Sandbox::with_grace(LEFTOVER_GRACE)
    }

    /// A fresh directory and mark, with `grace` for leftovers to go.
    pub fn with_grace(grace: Duration) -> Sandbox {
        Sandbox {
            dir: Some(tempfile::tempdir().expect("temporary directory")),
            mark: unique_mark(),
            grace,
        }
    }

    /// The test's directory.
    pub fn dir(&self) -> &Path {
        self.dir.as_ref().expect("the sandbox's directory").path()
    }

    /// The mark of the processes this sandbox starts.
    pub fn mark(&self) -> &str {
        &self.mark
    }

    /// A file in the test's directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir().join(name)
    }

    /// Ends the sandbox (killing whatever of it is still alive) but keeps
    /// its directory.
    pub fn into_dir(mut self) -> tempfile::TempDir {
        kill_job(&self.mark);
        self.dir.take().expect("the sandbox's directory")
    }

    /// Starts `pertinax ARGS` in the test's directory.
    pub fn spawn(&self, args: &[&str]) -> Running {
        let mut cmd = Command::new(launcher());
        cmd.args(args);
        self.spawn_command(cmd)
    }

    /// Starts the launcher command `cmd` (see [`launcher`]) in the test's
    /// directory, marked, with its output read on threads.
    pub fn spawn_command(&self, mut cmd: Command) -> Running {
        let mut child = cmd
            .current_dir(self.dir())
            .env(MARK_VAR, &self.mark)
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
            mark: self.mark.clone(),
        }
    }

    /// Runs `pertinax ARGS` to its end within `bound` (fails the test past
    /// it), then checks that it left nothing behind.
    pub fn run(&self, args: &[&str], bound: Duration) -> Outcome {
        let outcome = self.spawn(args).wait(bound);
        self.assert_no_leftovers();
        outcome
    }

    /// Fails the test if a process started by it is still alive after the
    /// grace period (and kills it). A job's segment is an anonymous `memfd`
    /// that goes with its last process, and its sockets are socket pairs:
    /// no name is left to check (`/dev/shm` is machine-wide, see
    /// [`shm_leftovers`]).
    pub fn assert_no_leftovers(&self) {
        if !wait_for(self.grace, || marked(&self.mark).is_empty()) {
            let pids = marked(&self.mark);
            kill_job(&self.mark);
            panic!("processes left behind: {pids:?}");
        }
    }

    /// Live processes started by this test (the launcher included).
    pub fn live_processes(&self) -> Vec<u32> {
        marked(&self.mark)
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
        kill_job(&self.mark);
    }
}

impl Running {
    /// The launcher's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Sends `sig` to the launcher.
    pub fn signal(&self, sig: i32) {
        let sig = Signal::from_named_raw(sig).expect("a named signal");
        let pid = Pid::from_raw(self.pid() as i32).expect("the launcher's pid");
        kill_process(pid, sig).expect("signal the launcher");
    }

    /// Waits for the launcher to end; kills it and fails the test if it
    /// runs past `bound`.
    pub fn wait(self, bound: Duration) -> Outcome {
        let e = self.wait_within(bound);
        let Some(status) = e.status else {
            panic!("pertinax ran longer than {bound:?}");
        };
        Outcome {
            code: status.code(),
            stdout: e.stdout,
            stderr: e.stderr,
            elapsed: e.elapsed,
        }
    }

    /// Waits for the launcher to end within `bound` (counted from its
    /// start); past it, kills the launcher and its job, and returns no
    /// status.
    pub fn wait_within(self, bound: Duration) -> Ended {
        self.wait_within_then(bound, |_| String::new())
    }

    /// [`Running::wait_within`], with `probe` run on the sandbox's mark at
    /// the bound, before the kill (what was still alive).
    pub fn wait_within_then(self, bound: Duration, probe: impl FnOnce(&str) -> String) -> Ended {
        self.wait_watching(bound, |_| None, probe)
    }

    /// [`Running::wait_within_then`], with `wedged` asked twice a second
    /// whether the job can no longer end by itself: when it answers with a
    /// reason, the job is killed then as at the bound, `probe` is not run,
    /// and [`Ended::wedged`] holds the reason.
    pub fn wait_watching(
        mut self,
        bound: Duration,
        mut wedged: impl FnMut(&str) -> Option<String>,
        probe: impl FnOnce(&str) -> String,
    ) -> Ended {
        let mut child = self.child.take().expect("launcher");
        let mut alive = String::new();
        let mut stuck = None;
        let mut asked = Instant::now();
        let mark = self.mark.clone();
        let kill = |child: &mut Child| {
            let _ = child.kill();
            kill_job(&mark);
            let _ = child.wait();
        };
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for pertinax") {
                break Some(status);
            }
            if asked.elapsed() >= Duration::from_millis(500) {
                asked = Instant::now();
                stuck = wedged(&self.mark);
                if stuck.is_some() {
                    kill(&mut child);
                    break None;
                }
            }
            if self.started.elapsed() > bound {
                alive = probe(&self.mark);
                kill(&mut child);
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let elapsed = self.started.elapsed();
        let join = |h: Option<JoinHandle<String>>| {
            h.map(|h| h.join().unwrap_or_default()).unwrap_or_default()
        };
        Ended {
            status,
            stdout: join(self.out.take()),
            stderr: join(self.err.take()),
            elapsed,
            alive,
            wedged: stuck,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            kill_job(&self.mark);
            let _ = child.wait();
        }
    }
}

/// SIGKILL to every live process marked `mark` and to the process group of
/// each that leads one.
pub fn kill_job(mark: &str) {
    let pids = marked(mark);
    for &p in &pids {
        let Some(pid) = Pid::from_raw(p as i32) else {
            continue;
        };
        if getpgid(Some(pid)).is_ok_and(|g| g == pid) {
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
    kill_all(&pids);
}

fn slurp(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = r.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// A mark no other sandbox of this process or any other shares.
fn unique_mark() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{}-{t}-{k}", std::process::id())
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

/// Live processes whose environment holds `PERTINAX_TEST_MARK=mark`.
pub fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("{MARK_VAR}={mark}");
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

/// SIGKILL to each of `pids`.
pub fn kill_all(pids: &[u32]) {
    for &pid in pids {
        if let Some(pid) = Pid::from_raw(pid as i32) {
            let _ = kill_process(pid, Signal::KILL);
        }
    }
}

/// Shared-memory entries in /dev/shm whose name mentions pertinax (on the
/// whole machine: other programs' runs count too).
pub fn shm_leftovers() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains("pertinax"))
                .collect()
        })
        .unwrap_or_default()
}
