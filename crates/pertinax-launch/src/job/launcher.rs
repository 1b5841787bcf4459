//! The [`Launcher`]: how one process starts (its command, variables,
//! descriptors, slot), and then its control reader and output forwarders;
//! at launch and for spawn requests.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc::Sender;
use std::sync::Arc;

use pertinax_os::process::configure_child;
use pertinax_os::segment::Segment;
use pertinax_wire::{env, slot};

use super::os;
use crate::children::Children;
use crate::ctrl::{self, Expected};
use crate::event::Event;
use crate::fault::{faults_env, Kill};
use crate::output::{self, Out, Sink};
use crate::resilient;
use crate::spec::{JobSpec, StdinTo};
use crate::supervise::{NewProc, Started, Starter};
use crate::LaunchError;

/// What a process is when it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Rank R of the job (slot R).
    Rank(u32),
    /// An idle spare: rank 0 of 1 until it is assigned.
    Spare,
    /// Process `index` of a spawn request for `count`.
    Spawned { index: u32, count: u32 },
}

impl Kind {
    fn role(self) -> &'static str {
        match self {
            Kind::Rank(_) => "rank",
            Kind::Spare => "spare",
            Kind::Spawned { .. } => "spawned",
        }
    }

    /// Its `PERTINAX_RANK` and `PERTINAX_SIZE`.
    fn rank_and_size(self, ranks: usize) -> (u32, usize) {
        match self {
            Kind::Rank(r) => (r, ranks),
            Kind::Spare => (0, 1),
            Kind::Spawned { index, count } => (index, count as usize),
        }
    }
}

/// One process to start.
#[derive(Debug)]
pub(super) struct Launch<'p> {
    pub(super) slot: u32,
    pub(super) kind: Kind,
    /// Resolved path of the program.
    pub(super) program: &'p Path,
    /// Its name as the user (or the requester) gave it.
    pub(super) arg0: &'p OsStr,
    pub(super) args: &'p [OsString],
    /// Variables of its application context (MIMD), after the job's.
    pub(super) env: &'p [(OsString, OsString)],
    pub(super) cma_all: bool,
}

/// A process that runs, before its helper threads start.
#[derive(Debug)]
pub(super) struct Spawned {
    who: Expected,
    pub(super) pid: u32,
    ctrl: UnixStream,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    stdin: Option<ChildStdin>,
}

/// What every process's start needs.
#[derive(Debug)]
pub(super) struct Launcher<'a> {
    pub(super) spec: &'a JobSpec,
    pub(super) program: &'a Path,
    pub(super) seg: &'a Segment,
    pub(super) children: &'a Children,
    pub(super) shm_fd: RawFd,
    pub(super) job_id: String,
    pub(super) secret_hex: String,
    pub(super) secret: Arc<[u8]>,
    pub(super) events: Sender<Event>,
    pub(super) kills: &'a [Kill],
    pub(super) heartbeat: Option<String>,
    /// The resilient communicators' variables (empty when off).
    pub(super) resilient: Vec<(&'static str, String)>,
    /// How many CPUs the launcher may use: the job's, told to every
    /// process ([`env::CPUS`]) for its wait policy.
    pub(super) cpus: usize,
}

impl Launcher<'_> {
    /// Starts one process: its slot is RUNNING before it runs, and holds
    /// its pid before its control reader can welcome it.
    pub(super) fn spawn(&self, l: &Launch<'_>) -> Result<Spawned, LaunchError> {
        let (ours, theirs) = UnixStream::pair().map_err(os("create a control socket"))?;
        let mut cmd = Command::new(l.program);
        // Without `--resilient` the program must not find the layer's
        // variables, even in the launcher's own environment; `-x` may
        // still set them.
        for var in resilient::VARS {
            cmd.env_remove(var);
        }
        // Rank 0's input is the launcher's (copied by a thread: rank 0 runs
        // in a process group of its own, so reading a terminal itself would
        // stop it with SIGTTIN); the others read /dev/null.
        let stdin =
            if self.spec.stdin == StdinTo::Rank0 && l.kind == Kind::Rank(0) && stdin_is_ours() {
                Stdio::piped()
            } else {
                Stdio::null()
            };
        cmd.arg0(l.arg0)
            .args(l.args)
            .envs(self.spec.env.iter().map(|(k, v)| (k, v)))
            .envs(l.env.iter().map(|(k, v)| (k, v)))
            .envs(self.env(l, theirs.as_raw_fd()))
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &self.spec.wdir {
            cmd.current_dir(dir);
        }
        configure_child(&mut cmd, vec![self.shm_fd, theirs.as_raw_fd()]);

        let block = self.seg.proc_block(l.slot as usize);
        block.state.store(slot::RUNNING, SeqCst);
        let mut child = cmd.spawn().map_err(|source| {
            block.state.store(slot::EMPTY, SeqCst);
            LaunchError::Spawn {
                slot: l.slot,
                ranks: self.spec.ranks,
                source,
            }
        })?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let stdin = child.stdin.take();
        let pid = self.children.add(child);
        // Before the control reader starts, hence before `Welcome`: a
        // process that was welcomed finds its pid in its slot.
        block.pid.store(pid, SeqCst);
        drop(theirs);
        let (rank, _) = l.kind.rank_and_size(self.spec.ranks);
        Ok(Spawned {
            who: Expected { slot: l.slot, rank },
            pid,
            ctrl: ours,
            stdout,
            stderr,
            stdin,
        })
    }

    /// Starts the control reader and output forwarders of a spawned
    /// process. The reader answers `Welcome` only from here on, after the
    /// process's pid was stored in its slot.
    pub(super) fn attend(
        &self,
        spawned: Spawned,
        replaces: Option<u32>,
    ) -> Result<Started, LaunchError> {
        let Spawned {
            who,
            pid,
            ctrl: ours,
            stdout,
            stderr,
            stdin,
        } = spawned;
        let slot = who.slot;
        let tag = self
            .spec
            .tag_output
            .then(|| output::Tag::new(slot, self.spec.ranks));
        // Named from the start: even what it prints before it learns its
        // rank carries the rank.
        if let (Some(tag), Some(rank)) = (&tag, replaces) {
            tag.replacement(rank, slot);
        }
        if let Some(mut to) = stdin {
            // Ends at end of file (dropping `to` closes rank 0's input), or
            // when rank 0 is gone (a broken pipe).
            thread("pertinax-stdin".into(), move || {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to);
            })?;
        }
        let mut outputs = 0;
        if let Some(out) = stdout {
            let (events, tag) = (self.events.clone(), tag.clone());
            let to = self.out(Sink::Stdout, slot, "stdout")?;
            thread(format!("pertinax-out-{slot}"), move || {
                output::forward(out, to, tag, None, &events);
            })?;
            outputs += 1;
        }
        if let Some(err) = stderr {
            let (events, tag) = (self.events.clone(), tag.clone());
            let to = self.out(Sink::Stderr, slot, "stderr")?;
            thread(format!("pertinax-err-{slot}"), move || {
                output::forward(err, to, tag, Some(slot), &events);
            })?;
            outputs += 1;
        }
        let closer = ours.try_clone().map_err(os("create a control socket"))?;
        let events = self.events.clone();
        let secret = self.secret.clone();
        thread(format!("pertinax-ctrl-{slot}"), move || {
            ctrl::serve(who, ours, &secret, &events);
        })?;
        Ok(Started {
            pid,
            closer,
            outputs,
            tag,
        })
    }

    /// Where the stream `name` (stdout, stderr) of the process in `slot`
    /// goes: `sink`, and its file under `--output-filename`.
    fn out(&self, sink: Sink, slot: u32, name: &str) -> Result<Out, LaunchError> {
        let mut out = Out {
            sink: Some(sink),
            file: None,
            timestamp: self.spec.timestamp_output,
        };
        if let Some(files) = &self.spec.output_files {
            let path = output_path(&files.dir, slot, self.spec.ranks).join(name);
            let file = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::File::create(&path))
                .map_err(|source| LaunchError::OutputFile { path, source })?;
            out.file = Some(file);
            if !files.copy {
                out.sink = None;
            }
        }
        Ok(out)
    }

    /// The `PERTINAX_*` variables of a process.
    fn env(&self, l: &Launch<'_>, ctrl_fd: RawFd) -> Vec<(&'static str, OsString)> {
        let (rank, size) = l.kind.rank_and_size(self.spec.ranks);
        let mut vars = vec![
            (env::RANK, rank.to_string().into()),
            (env::SIZE, size.to_string().into()),
            (env::CPUS, self.cpus.to_string().into()),
            (env::SLOT, l.slot.to_string().into()),
            (env::ROLE, l.kind.role().into()),
            (env::JOB_ID, self.job_id.clone().into()),
            (env::SECRET, self.secret_hex.clone().into()),
            (env::SHM_FD, self.shm_fd.to_string().into()),
            (env::CTRL_FD, ctrl_fd.to_string().into()),
        ];
        match l.kind {
            Kind::Rank(r) => {
                if let Some(faults) = faults_env(self.kills, r) {
                    vars.push((env::FAULTS, faults.into()));
                }
            }
            Kind::Spare | Kind::Spawned { .. } => {
                let cma = if l.cma_all { "1" } else { "0" };
                vars.push((env::CMA_ALL, cma.into()));
            }
        }
        if let Some(hb) = &self.heartbeat {
            vars.push((env::HEARTBEAT, hb.into()));
        }
        for (var, value) in &self.resilient {
            vars.push((var, value.into()));
        }
        vars
    }
}

impl Starter for Launcher<'_> {
    fn start(&self, new: &NewProc<'_>) -> Result<Started, LaunchError> {
        let requested: Vec<OsString>;
        let (program, arg0, args) = match new.program {
            Some((path, name, args)) => {
                requested = args.iter().map(OsString::from).collect();
                (path, OsStr::new(name), &requested[..])
            }
            None => (
                self.program,
                self.spec.program.as_os_str(),
                &self.spec.args[..],
            ),
        };
        let spawned = self.spawn(&Launch {
            slot: new.slot,
            kind: Kind::Spawned {
                index: new.index,
                count: new.count,
            },
            program,
            arg0,
            args,
            env: &[],
            cma_all: new.cma_all,
        })?;
        self.attend(spawned, new.replaces)
    }
}

/// Whether the launcher may read its standard input without being stopped:
/// it is not a terminal, or the launcher's process group is the terminal's
/// foreground group. A launcher started in the background (`pertinax run
/// ... &`) would be stopped by SIGTTIN at its first read, with the whole
/// job; its rank 0 reads `/dev/null` instead.
fn stdin_is_ours() -> bool {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    !stdin.is_terminal()
        || rustix::termios::tcgetpgrp(&stdin).is_ok_and(|fg| fg == rustix::process::getpgrp())
}

/// The directory of the output files of the process in `slot`, in Open
/// MPI's layout (`DIR/1/rank.N`; `DIR/1/slot.S` for a spare or spawned
/// process).
fn output_path(dir: &Path, slot: u32, ranks: usize) -> PathBuf {
    let leaf = if (slot as usize) < ranks {
        format!("rank.{slot}")
    } else {
        format!("slot.{slot}")
    };
    dir.join("1").join(leaf)
}

/// Starts a named helper thread; its handle is dropped: the helpers end on
/// their own (end of file, or the launcher's channel closing).
fn thread(name: String, f: impl FnOnce() + Send + 'static) -> Result<(), LaunchError> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .map(drop)
        .map_err(os("start a thread"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_files_follow_open_mpis_layout() {
        let d = Path::new("out");
        assert_eq!(output_path(d, 3, 4), Path::new("out/1/rank.3"));
        assert_eq!(output_path(d, 4, 4), Path::new("out/1/slot.4"));
    }

    #[test]
    fn ranks_spares_and_spawned_processes_have_their_own_identity() {
        assert_eq!(Kind::Rank(3).rank_and_size(8), (3, 8));
        assert_eq!(Kind::Spare.rank_and_size(8), (0, 1));
        let k = Kind::Spawned { index: 1, count: 2 };
        assert_eq!((k.rank_and_size(8), k.role()), ((1, 2), "spawned"));
    }
}
