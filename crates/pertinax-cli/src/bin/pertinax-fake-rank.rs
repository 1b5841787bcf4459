//! `pertinax-fake-rank`: a test tool, not part of the product.
//!
//! A rank that speaks the launcher's control protocol without the core
//! runtime, so that the launcher's tests can drive it: it attaches the
//! shared segment, says `Hello`, publishes `rank/R`, fences, checks that
//! the fence returned every rank's key, and finalizes. Flags change the
//! script:
//!
//! ```text
//! --bad-secret      say hello with a wrong secret; print "EOF after hello"
//!                   when the launcher drops the connection, exit 0
//! --fences K        K rounds of put + fence (default 1)
//! --watch R         after the fences, wait until slot R is FAILED
//! --wait-shutdown   after the fences, wait for Shutdown from the launcher
//! --abort CODE      after the fences, ask the launcher to abort the job
//! --exit CODE       after the fences, exit with CODE without finalizing
//! --no-finalize     exit 0 without finalizing
//! ```
//!
//! Problems are printed as "fake-rank R: ..." on stderr with exit status 10.
#![forbid(unsafe_code)]

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use pertinax_sys::segment::Segment;
use pertinax_wire::ctrl::{read_frame, write_frame, ToLauncher, ToRank};
use pertinax_wire::{env, slot};

#[derive(Debug, Default)]
struct Script {
    bad_secret: bool,
    fences: u32,
    watch: Option<usize>,
    wait_shutdown: bool,
    abort: Option<i32>,
    exit: Option<u8>,
    finalize: bool,
}

fn parse_args() -> Result<Script> {
    let mut s = Script {
        fences: 1,
        finalize: true,
        ..Script::default()
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--bad-secret" => s.bad_secret = true,
            "--fences" => s.fences = value()?.parse()?,
            "--watch" => s.watch = Some(value()?.parse()?),
            "--wait-shutdown" => s.wait_shutdown = true,
            "--abort" => s.abort = Some(value()?.parse()?),
            "--exit" => s.exit = Some(value()?.parse()?),
            "--no-finalize" => s.finalize = false,
            _ => bail!("unknown argument {a}"),
        }
    }
    Ok(s)
}

fn var(name: &str) -> Result<String> {
    std::env::var(name).with_context(|| format!("{name} is not set"))
}

fn main() -> ExitCode {
    let rank = std::env::var(env::RANK).unwrap_or_else(|_| "?".into());
    match parse_args().and_then(|s| play(&s)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("fake-rank {rank}: {e:#}");
            ExitCode::from(10)
        }
    }
}

fn play(script: &Script) -> Result<u8> {
    let rank: u32 = var(env::RANK)?.parse()?;
    let size: u32 = var(env::SIZE)?.parse()?;
    let slot_no: u32 = var(env::SLOT)?.parse()?;
    let mut secret = env::from_hex(&var(env::SECRET)?).context("bad secret")?;
    let shm_fd: i32 = var(env::SHM_FD)?.parse()?;
    let ctrl_fd: i32 = var(env::CTRL_FD)?.parse()?;
    let seg = Segment::attach(shm_fd).context("attach the segment")?;
    let mut ctrl = UnixStream::from(
        pertinax_sys::process::adopt_inherited_fd(ctrl_fd).context("control socket")?,
    );
    if script.bad_secret {
        secret[0] ^= 0xff;
    }
    let hello = ToLauncher::Hello {
        slot: slot_no,
        rank,
        pid: std::process::id(),
        secret,
    };
    write_frame(&mut ctrl, &hello)?;
    match read_frame::<_, ToRank>(&mut ctrl) {
        Ok(Some(ToRank::Welcome)) if !script.bad_secret => {}
        Ok(None) | Err(_) if script.bad_secret => {
            println!("fake-rank {rank}: EOF after hello");
            return Ok(0);
        }
        other => bail!("unexpected answer to hello: {other:?}"),
    }
    check_block(&seg, slot_no as usize)?;

    for round in 0..script.fences {
        let key = format!("round{round}/rank{rank}");
        let value = format!("{}:{}", std::process::id(), ctrl.as_raw_fd()).into_bytes();
        write_frame(&mut ctrl, &ToLauncher::Put { key, value })?;
        write_frame(&mut ctrl, &ToLauncher::Fence)?;
        let Some(ToRank::FenceDone { entries }) = read_frame::<_, ToRank>(&mut ctrl)? else {
            bail!("fence {round}: no FenceDone");
        };
        for r in 0..size {
            let want = format!("round{round}/rank{r}");
            if !entries.iter().any(|(k, _)| *k == want) {
                bail!(
                    "fence {round}: key {want} missing from {} entries",
                    entries.len()
                );
            }
        }
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            bail!("fence {round}: entries not in key order");
        }
    }
    println!("fake-rank {rank}: {} fence(s) ok", script.fences);

    if let Some(victim) = script.watch {
        watch_failure(&seg, slot_no as usize, victim)?;
        println!("fake-rank {rank}: saw rank {victim} fail");
    }
    if let Some(code) = script.abort {
        let message = format!("fake rank {rank} gives up");
        write_frame(&mut ctrl, &ToLauncher::Abort { code, message })?;
        wait_shutdown(&mut ctrl, rank)?;
        return Ok(1);
    }
    if script.wait_shutdown {
        wait_shutdown(&mut ctrl, rank)?;
    }
    if let Some(code) = script.exit {
        return Ok(code);
    }
    if script.finalize {
        write_frame(&mut ctrl, &ToLauncher::Finalize)?;
    }
    Ok(0)
}

/// The launcher set our slot up before welcoming us.
fn check_block(seg: &Segment, slot_no: usize) -> Result<()> {
    let block = seg.proc_block(slot_no);
    let (pid, state) = (block.pid.load(SeqCst), block.state.load(SeqCst));
    if state != slot::RUNNING {
        bail!("slot {slot_no} state is {state}, not RUNNING");
    }
    if pid != std::process::id() {
        bail!("slot {slot_no} holds pid {pid}, not ours");
    }
    Ok(())
}

/// Sleeps on our wake word until slot `victim` is FAILED (10 s at most).
fn watch_failure(seg: &Segment, me: usize, victim: usize) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let wake = &seg.proc_block(me).wake;
    loop {
        let seen = wake.load(SeqCst);
        if seg.proc_block(victim).state.load(SeqCst) == slot::FAILED {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("rank {victim} never failed");
        }
        pertinax_sys::futex::wait(wake, seen, Some(Duration::from_secs(1)));
    }
}

fn wait_shutdown(ctrl: &mut UnixStream, rank: u32) -> Result<()> {
    match read_frame::<_, ToRank>(ctrl)? {
        Some(ToRank::Shutdown) => {
            println!("fake-rank {rank}: got shutdown");
            Ok(())
        }
        other => bail!("expected Shutdown, got {other:?}"),
    }
}
