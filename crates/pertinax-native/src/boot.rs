//! Bootstrap of a native process: with the launcher (`pertinax run`) over
//! its control socket, or as a singleton; the heartbeat; the connection
//! guard that stops a rank whose launcher is gone and hands the launcher's
//! answers to name requests to the runtime.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use pertinax_os::segment::{Layout, Segment};
use pertinax_os::{cma, process};
use pertinax_wire::ctrl::{self, NameAnswer, ToLauncher, ToRank};
use pertinax_wire::env;

use crate::backend::Assignment;
use crate::error::{Error, Result};

/// What the runtime knows of the job.
#[derive(Debug, Clone)]
pub(crate) struct JobInfo {
    pub rank: usize,
    pub size: usize,
    pub job_id: String,
}

fn env_parse<T: std::str::FromStr>(name: &str) -> Result<T> {
    let v = std::env::var(name).map_err(|_| Error::Bootstrap(format!("{name} is not set")))?;
    v.trim()
        .parse()
        .map_err(|_| Error::Bootstrap(format!("{name}={v} is not a valid number")))
}

fn boot_err(what: &str) -> impl Fn(ctrl::FrameError) -> Error + '_ {
    move |e| Error::Bootstrap(format!("{what}: {e}"))
}

pub(super) struct Boot {
    pub seg: Segment,
    pub slot: usize,
    pub job: JobInfo,
    pub ctrl: Option<UnixStream>,
    /// The launcher's answers to name requests (`ToRank::Name`: id and
    /// answer), from the connection guard; `None` for a singleton.
    pub names: Option<Receiver<(u64, NameAnswer)>>,
    pub cma: bool,
    /// For a spare or spawned process: its assignment (slots of its
    /// request, its index, the payload).
    pub assign: Option<(Vec<u32>, usize, Assignment)>,
    /// Beat the heartbeat from the progress engine.
    pub beat_in_progress: bool,
}

/// Starts the heartbeat the launcher asked for (`thread:MS` or
/// `progress:MS`); returns whether progress rounds must beat.
fn start_heartbeat(seg: &Segment, slot: usize) -> Result<bool> {
    let Ok(spec) = std::env::var(env::HEARTBEAT) else {
        return Ok(false);
    };
    let (mode, ms) = spec.split_once(':').unwrap_or(("thread", spec.as_str()));
    let ms: u64 = ms
        .trim()
        .parse()
        .ok()
        .filter(|&m| m > 0)
        .ok_or_else(|| Error::Bootstrap(format!("{}={spec}: bad period", env::HEARTBEAT)))?;
    let beat = move |seg: &Segment| {
        seg.proc_block(slot).beat.fetch_add(1, Ordering::Relaxed);
    };
    beat(seg);
    match mode {
        "progress" => Ok(true),
        "thread" => {
            let seg = seg.clone();
            std::thread::Builder::new()
                .name("pertinax-heartbeat".into())
                .spawn(move || loop {
                    beat(&seg);
                    std::thread::sleep(Duration::from_millis(ms));
                })
                .map_err(|e| Error::Bootstrap(format!("cannot start the heartbeat: {e}")))?;
            Ok(false)
        }
        other => Err(Error::Bootstrap(format!(
            "{}: unknown heartbeat mode {other:?}",
            env::HEARTBEAT
        ))),
    }
}

pub(super) fn bootstrap() -> Result<Boot> {
    cma::allow_peers();
    let cma_env = std::env::var(env::tune::CMA)
        .map(|v| v.trim() != "0")
        .unwrap_or(true);
    if std::env::var_os(env::RANK).is_none() {
        let seg = Segment::create_anonymous(Layout::new(1, 64 * 1024))
            .map_err(|e| Error::Transport(format!("shared memory: {e}")))?;
        seg.proc_block(0)
            .pid
            .store(std::process::id(), Ordering::Release);
        let mut id = [0u8; 16];
        pertinax_os::random_bytes(&mut id).map_err(|e| Error::Bootstrap(e.to_string()))?;
        return Ok(Boot {
            seg,
            slot: 0,
            job: JobInfo {
                rank: 0,
                size: 1,
                job_id: env::to_hex(&id),
            },
            ctrl: None,
            names: None,
            cma: cma_env && cma::probe(),
            assign: None,
            beat_in_progress: false,
        });
    }
    let role = std::env::var(env::ROLE).unwrap_or_else(|_| "rank".into());
    if !matches!(role.as_str(), "rank" | "spare" | "spawned") {
        return Err(Error::Bootstrap(format!(
            "{}={role} is not a known role",
            env::ROLE
        )));
    }
    let rank: usize = env_parse(env::RANK)?;
    let size: usize = env_parse(env::SIZE)?;
    let slot: usize = env_parse(env::SLOT)?;
    let shm_fd: i32 = env_parse(env::SHM_FD)?;
    let ctrl_fd: i32 = env_parse(env::CTRL_FD)?;
    let job_id = std::env::var(env::JOB_ID)
        .map_err(|_| Error::Bootstrap(format!("{} is not set", env::JOB_ID)))?;
    let secret = std::env::var(env::SECRET)
        .ok()
        .and_then(|s| env::from_hex(&s))
        .ok_or_else(|| Error::Bootstrap(format!("{} is missing or not hex", env::SECRET)))?;
    if rank >= size.max(1) {
        return Err(Error::Bootstrap(format!(
            "rank {rank} is not below size {size}"
        )));
    }
    let shm = process::adopt_inherited_fd(shm_fd)
        .map_err(|e| Error::Bootstrap(format!("shared-memory descriptor {shm_fd}: {e}")))?;
    let seg = Segment::attach(std::os::fd::AsRawFd::as_raw_fd(&shm))
        .map_err(|e| Error::Bootstrap(format!("shared memory: {e}")))?;
    drop(shm);
    if slot >= seg.layout().capacity() {
        return Err(Error::Bootstrap(
            "the shared segment is too small for the job".into(),
        ));
    }
    let fd = process::adopt_inherited_fd(ctrl_fd)
        .map_err(|e| Error::Bootstrap(format!("control descriptor {ctrl_fd}: {e}")))?;
    let mut sock = UnixStream::from(fd);
    let pid = std::process::id();
    seg.proc_block(slot).pid.store(pid, Ordering::Release);
    let t = Some(Duration::from_secs(60));
    sock.set_read_timeout(t)
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    ctrl::write_frame(
        &mut sock,
        &ToLauncher::Hello {
            slot: slot as u32,
            rank: rank as u32,
            pid,
            secret,
        },
    )
    .map_err(boot_err("hello"))?;
    match ctrl::read_frame::<_, ToRank>(&mut sock).map_err(boot_err("welcome"))? {
        Some(ToRank::Welcome) => {}
        other => {
            return Err(Error::Bootstrap(format!(
                "launcher refused the hello: {other:?}"
            )))
        }
    }
    // From now on the kernel tells the launcher at once if this process
    // dies (see pertinax_os::robust); finalize gives the word back.
    pertinax_os::robust::hold(&seg.proc_block(slot).alive)
        .map_err(|e| Error::Bootstrap(format!("cannot register the death notice: {e}")))?;
    let beat_in_progress = start_heartbeat(&seg, slot)?;
    let my_cma = cma_env && cma::probe();
    if role != "rank" {
        // Spares wait here (as long as it takes) until they are needed;
        // spawned processes get their assignment at once.
        sock.set_read_timeout(None)
            .map_err(|e| Error::Bootstrap(e.to_string()))?;
        let (slots, index, payload) =
            match ctrl::read_frame::<_, ToRank>(&mut sock).map_err(boot_err("assignment"))? {
                Some(ToRank::Assign {
                    slots,
                    index,
                    payload,
                }) => (slots, index as usize, payload),
                Some(ToRank::Shutdown) | None if role == "spare" => {
                    // A spare that was never needed: its job is done.
                    process::exit_now(0)
                }
                other => {
                    return Err(Error::Bootstrap(format!(
                        "expected an assignment, got {other:?}"
                    )))
                }
            };
        let a: Assignment = postcard::from_bytes(&payload)
            .map_err(|e| Error::Bootstrap(format!("bad assignment: {e}")))?;
        let (rank, size) = match &a {
            Assignment::Spawned { .. } => (index, slots.len()),
            Assignment::Replace { peers, holes, .. } => {
                (holes.get(index).copied().unwrap_or(0) as usize, peers.len())
            }
        };
        let all_cma = my_cma && std::env::var(env::CMA_ALL).is_ok_and(|v| v.trim() == "1");
        let names = start_guard(&sock, rank)?;
        return Ok(Boot {
            seg,
            slot,
            job: JobInfo { rank, size, job_id },
            ctrl: Some(sock),
            names: Some(names),
            cma: all_cma,
            assign: Some((slots, index, a)),
            beat_in_progress,
        });
    }
    ctrl::write_frame(
        &mut sock,
        &ToLauncher::Put {
            key: format!("cma/{slot}"),
            value: vec![my_cma as u8],
        },
    )
    .map_err(boot_err("put"))?;
    ctrl::write_frame(&mut sock, &ToLauncher::Fence).map_err(boot_err("fence"))?;
    let entries = match ctrl::read_frame::<_, ToRank>(&mut sock).map_err(boot_err("fence"))? {
        Some(ToRank::FenceDone { entries }) => entries,
        other => {
            return Err(Error::Bootstrap(format!(
                "unexpected answer to fence: {other:?}"
            )))
        }
    };
    let all_cma = my_cma
        && (0..size).all(|s| {
            entries
                .iter()
                .any(|(k, v)| *k == format!("cma/{s}") && v.first() == Some(&1))
        });
    sock.set_read_timeout(None)
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    let names = start_guard(&sock, rank)?;
    Ok(Boot {
        seg,
        slot,
        job: JobInfo { rank, size, job_id },
        ctrl: Some(sock),
        names: Some(names),
        cma: all_cma,
        assign: None,
        beat_in_progress,
    })
}

/// Starts the connection guard; returns where it hands the answers to
/// name requests.
fn start_guard(sock: &UnixStream, rank: usize) -> Result<Receiver<(u64, NameAnswer)>> {
    let watch = sock
        .try_clone()
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("pertinax-guard".into())
        .spawn(move || guard(watch, rank, tx))
        .map_err(|e| Error::Bootstrap(format!("cannot start the connection guard: {e}")))?;
    Ok(rx)
}

/// The connection guard: a rank whose launcher is gone stops; the
/// launcher's answers to name requests go to `names`.
fn guard(mut sock: UnixStream, rank: usize, names: Sender<(u64, NameAnswer)>) {
    loop {
        match ctrl::read_frame::<_, ToRank>(&mut sock) {
            Ok(Some(ToRank::Shutdown)) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "pertinax: rank {rank}: the launcher ended the job"
                );
                process::exit_now(143);
            }
            Ok(Some(ToRank::Name { id, answer })) => {
                // Nobody waits any more once the runtime is gone.
                let _ = names.send((id, answer));
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "pertinax: rank {rank}: lost the connection to the launcher; exiting"
                );
                process::exit_now(70);
            }
        }
    }
}
