//! Runs rank programs through the real launcher: each job gets a wall-clock
//! bound, a private temporary directory, and a check that none of its
//! processes outlives it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The rank program.
pub fn testprog() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pertinax-testprog"))
}

/// The launcher, built next to the rank program by `cargo test --workspace`.
pub fn launcher() -> PathBuf {
    let p = testprog().with_file_name("pertinax");
    assert!(
        p.exists(),
        "the launcher {} is missing: run the tests with `cargo test --workspace`",
        p.display()
    );
    p
}

/// A finished job.
#[derive(Debug)]
pub struct Job {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub dir: tempfile::TempDir,
}

impl Job {
    /// Number of ranks that printed `OK`.
    pub fn oks(&self) -> usize {
        self.stdout.lines().filter(|l| l.starts_with("OK ")).count()
    }
    /// Checks a job of a resilient program: exit 0, at least `survivors`
    /// ranks finished, none failed a check, all printed the same
    /// `digest=`; returns the digest.
    pub fn agreed(&self, survivors: usize, what: &str) -> String {
        assert!(
            self.code == Some(0) && self.oks() >= survivors && !self.stdout.contains("FAIL"),
            "{what}: code {:?}, {} OK\n{}\n{}",
            self.code,
            self.oks(),
            self.stdout,
            self.stderr
        );
        let digests: Vec<&str> = self
            .stdout
            .lines()
            .filter(|l| l.starts_with("OK "))
            .filter_map(|l| l.split("digest=").nth(1))
            .collect();
        assert!(
            digests.windows(2).all(|w| w[0] == w[1]),
            "{what}: survivors disagree {digests:?}\n{}",
            self.stdout
        );
        digests.first().map_or_else(String::new, |d| d.to_string())
    }
    /// Panics with the job's output unless every one of `n` ranks printed OK
    /// and the job exited 0.
    pub fn assert_ok(&self, n: usize) {
        assert!(
            self.code == Some(0) && self.oks() == n,
            "job failed: code {:?}, {} of {n} OK\nstdout:\n{}\nstderr:\n{}",
            self.code,
            self.oks(),
            self.stdout,
            self.stderr
        );
    }
}

/// A mark no other job of this process or any other shares.
fn marker() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{t}-{k}", std::process::id())
}

/// Pids of live processes whose environment holds `PERTINAX_TEST_MARK=mark`.
pub fn marked_processes(mark: &str) -> Vec<u32> {
    let needle = format!("{}={mark}", pertinax_wire::env::test::TEST_MARK);
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) {
            if env.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
                // Zombies are reaped by their parent; only count live ones.
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                if !stat.contains(") Z ") {
                    out.push(pid);
                }
            }
        }
    }
    out
}

/// Options of one job.
pub struct Spec<'a> {
    pub ranks: usize,
    pub args: Vec<String>,
    pub launcher_args: Vec<String>,
    pub env: Vec<(&'a str, String)>,
    pub bound: Duration,
    /// The rank program (default: `pertinax-testprog`).
    pub program: PathBuf,
}

impl<'a> Spec<'a> {
    pub fn new(ranks: usize, args: &[&str]) -> Spec<'a> {
        Spec {
            ranks,
            args: args.iter().map(|s| s.to_string()).collect(),
            launcher_args: Vec::new(),
            env: Vec::new(),
            bound: Duration::from_secs(120),
            program: testprog(),
        }
    }

    pub fn program(mut self, p: PathBuf) -> Self {
        self.program = p;
        self
    }
    pub fn env(mut self, k: &'a str, v: &str) -> Self {
        self.env.push((k, v.to_string()));
        self
    }
    pub fn bound(mut self, secs: u64) -> Self {
        self.bound = Duration::from_secs(secs);
        self
    }
    pub fn launcher_arg(mut self, a: &str) -> Self {
        self.launcher_args.push(a.to_string());
        self
    }
}

/// Starts a job; `during` runs while it is alive (for kills); then waits
/// for it within the bound, kills everything if the bound is exceeded, and
/// checks that no process of the job survives.
pub fn run_with(spec: Spec<'_>, during: impl FnOnce(&std::path::Path, u32)) -> Job {
    let dir = tempfile::tempdir().expect("temp dir");
    let mark = marker();
    let mut cmd = Command::new(launcher());
    cmd.arg("run").arg("-n").arg(spec.ranks.to_string());
    cmd.args(&spec.launcher_args);
    cmd.arg("-x")
        .arg(format!("{}={mark}", pertinax_wire::env::test::TEST_MARK));
    for (k, v) in &spec.env {
        cmd.arg("-x").arg(format!("{k}={v}"));
    }
    cmd.arg("--").arg(&spec.program).args(&spec.args);
    cmd.current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = Instant::now();
    let mut child = cmd.spawn().expect("spawn the launcher");
    let out_pipe = child.stdout.take().expect("stdout");
    let err_pipe = child.stderr.take().expect("stderr");
    let rd = |mut p: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = p.read_to_string(&mut s);
            s
        })
    };
    let (ho, he) = (rd(Box::new(out_pipe)), rd(Box::new(err_pipe)));
    during(dir.path(), child.id());
    let mut timed_out = false;
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break Some(st);
        }
        if t0.elapsed() > spec.bound {
            timed_out = true;
            let _ = child.kill();
            for pid in marked_processes(&mark) {
                let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            }
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = t0.elapsed();
    let stdout = ho.join().unwrap_or_default();
    let stderr = he.join().unwrap_or_default();
    // Everything the job started must be gone (allow a moment for exits
    // already under way).
    let t = Instant::now();
    let mut left = marked_processes(&mark);
    while !left.is_empty() && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
        left = marked_processes(&mark);
    }
    assert!(left.is_empty(), "processes left behind: {left:?}");
    // A job past its bound was killed: it has no exit code, and its output
    // says why, so callers that check the outcome fail with the reason.
    let stdout = if timed_out {
        format!(
            "{stdout}\n[job of {} ranks `{}` exceeded its bound of {:?} and was killed]",
            spec.ranks,
            spec.args.join(" "),
            spec.bound
        )
    } else {
        stdout
    };
    Job {
        code: status.and_then(|s| s.code()),
        stdout,
        stderr,
        elapsed,
        dir,
    }
}

/// Runs a job to completion.
pub fn run(spec: Spec<'_>) -> Job {
    run_with(spec, |_, _| {})
}

/// Shorthand: `n` ranks of scenario `args`, expected to succeed.
pub fn check(n: usize, args: &[&str]) -> Job {
    let j = run(Spec::new(n, args));
    j.assert_ok(n);
    j
}

/// Waits up to `secs` for a file to appear and returns its content.
pub fn wait_file(path: &std::path::Path, secs: u64) -> String {
    let t = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if !s.is_empty() {
                return s;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(secs),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Shared-memory entries in /dev/shm whose name mentions pertinax.
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
