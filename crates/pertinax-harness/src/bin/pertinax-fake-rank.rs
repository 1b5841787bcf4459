//! `pertinax-fake-rank`: a test tool, not part of the product.
//!
//! A process that speaks the launcher's control protocol without the core
//! runtime, so that the launcher's tests can drive it. As a rank
//! (`PERTINAX_ROLE` unset or `rank`) it attaches the shared segment, says
//! `Hello`, publishes `rank/R`, fences, checks that the fence returned every
//! rank's key, and finalizes. As a spare it says hello as rank 0 and waits
//! for `Assign` (then goes on like a spawned process) or `Shutdown` (then
//! prints "idle spare shut down" and exits 0). As a spawned process it says
//! hello and checks that `Assign` follows at once and matches its
//! environment. Flags change the script, in this order after the start:
//!
//! ```text
//! --bad-secret        say hello with a wrong secret; print "EOF after hello"
//!                     when the launcher drops the connection, exit 0
//! --fences K          K rounds of put + fence (default 1; ranks only)
//! --cma               publish cma/SLOT = 1 in the first round (ranks only)
//! --print-env         print role, rank, size, slot, cma_all, faults, heartbeat
//! --beat              beat the heartbeat as PERTINAX_HEARTBEAT says (a thread)
//! --spawn N           ask for N processes; wait for the publication, print it
//!   --use-spares      ... taking idle spares first
//!   --spawn-program P ... running P instead of the job's program
//!   --spawn-arg A     ... with argument A (repeatable)
//! --watch R           wait until slot R is FAILED
//! --point NAME        hit fault point NAME --hits times (default 1): at a hit
//!   --hits K          that PERTINAX_FAULTS names, send Injected and die
//! --stop-self         stop itself with SIGSTOP
//! --hang              sleep until killed (30 s at most, then exit 11)
//! --sleep-ms MS       sleep MS milliseconds
//! --wait-shutdown     wait for Shutdown from the launcher
//! --abort CODE        ask the launcher to abort the job
//! --exit CODE         exit with CODE without finalizing
//! --no-finalize       exit 0 without finalizing
//! ```
//!
//! Problems are printed as "fake-rank R: ..." on stderr with exit status 10.
#![forbid(unsafe_code)]

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use pertinax_os::segment::Segment;
use pertinax_wire::ctrl::{read_frame, write_frame, ToLauncher, ToRank};
use pertinax_wire::{env, slot};

#[derive(Debug, Default)]
struct Script {
    bad_secret: bool,
    fences: u32,
    cma: bool,
    print_env: bool,
    beat: bool,
    spawn: Option<u32>,
    use_spares: bool,
    spawn_program: Option<String>,
    spawn_args: Vec<String>,
    watch: Option<usize>,
    point: Option<String>,
    hits: u64,
    stop_self: bool,
    hang: bool,
    sleep_ms: u64,
    wait_shutdown: bool,
    abort: Option<i32>,
    exit: Option<u8>,
    finalize: bool,
}

fn parse_args() -> Result<Script> {
    let mut s = Script {
        fences: 1,
        hits: 1,
        finalize: true,
        ..Script::default()
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--bad-secret" => s.bad_secret = true,
            "--fences" => s.fences = value()?.parse()?,
            "--cma" => s.cma = true,
            "--print-env" => s.print_env = true,
            "--beat" => s.beat = true,
            "--spawn" => s.spawn = Some(value()?.parse()?),
            "--use-spares" => s.use_spares = true,
            "--spawn-program" => s.spawn_program = Some(value()?),
            "--spawn-arg" => s.spawn_args.push(value()?),
            "--watch" => s.watch = Some(value()?.parse()?),
            "--point" => s.point = Some(value()?),
            "--hits" => s.hits = value()?.parse()?,
            "--stop-self" => s.stop_self = true,
            "--hang" => s.hang = true,
            "--sleep-ms" => s.sleep_ms = value()?.parse()?,
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

/// How the process names itself: `fake-rank R` for a rank, `fake-rank
/// slot S` for a spare or spawned process.
fn name() -> String {
    let role = std::env::var(env::ROLE).unwrap_or_else(|_| "rank".into());
    if role == "rank" {
        let rank = std::env::var(env::RANK).unwrap_or_else(|_| "?".into());
        format!("fake-rank {rank}")
    } else {
        let slot = std::env::var(env::SLOT).unwrap_or_else(|_| "?".into());
        format!("fake-rank slot {slot}")
    }
}

fn main() -> ExitCode {
    match parse_args().and_then(|s| play(&s)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("{}: {e:#}", name());
            ExitCode::from(10)
        }
    }
}

/// The process's identity and connections.
struct Me {
    name: String,
    role: String,
    rank: u32,
    size: u32,
    slot: usize,
    seg: Segment,
    ctrl: UnixStream,
}

fn play(script: &Script) -> Result<u8> {
    let role = std::env::var(env::ROLE).unwrap_or_else(|_| "rank".into());
    let rank: u32 = var(env::RANK)?.parse()?;
    let size: u32 = var(env::SIZE)?.parse()?;
    let slot_no: u32 = var(env::SLOT)?.parse()?;
    let mut secret = env::from_hex(&var(env::SECRET)?).context("bad secret")?;
    let shm_fd: i32 = var(env::SHM_FD)?.parse()?;
    let ctrl_fd: i32 = var(env::CTRL_FD)?.parse()?;
    let seg = Segment::attach(shm_fd).context("attach the segment")?;
    let mut ctrl = UnixStream::from(
        pertinax_os::process::adopt_inherited_fd(ctrl_fd).context("control socket")?,
    );
    let name = name();
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
            println!("{name}: EOF after hello");
            return Ok(0);
        }
        other => bail!("unexpected answer to hello: {other:?}"),
    }
    check_block(&seg, slot_no as usize)?;
    let mut me = Me {
        name,
        role,
        rank,
        size,
        slot: slot_no as usize,
        seg,
        ctrl,
    };
    if script.print_env {
        print_env(&me);
    }
    if script.beat {
        start_beating(&me)?;
    }
    match me.role.as_str() {
        "rank" => fences(&mut me, script)?,
        "spare" | "spawned" => {
            if !wait_assignment(&mut me)? {
                return Ok(0);
            }
        }
        other => bail!("unknown role {other}"),
    }
    after_start(&mut me, script)
}

/// The ranks' bootstrap rounds.
fn fences(me: &mut Me, script: &Script) -> Result<()> {
    let Me {
        name,
        rank,
        size,
        slot,
        ctrl,
        ..
    } = me;
    for round in 0..script.fences {
        if round == 0 && script.cma {
            let put = ToLauncher::Put {
                key: format!("cma/{slot}"),
                value: vec![1],
            };
            write_frame(ctrl, &put)?;
        }
        let key = format!("round{round}/rank{rank}");
        let value = format!("{}:{}", std::process::id(), ctrl.as_raw_fd()).into_bytes();
        write_frame(ctrl, &ToLauncher::Put { key, value })?;
        write_frame(ctrl, &ToLauncher::Fence)?;
        let Some(ToRank::FenceDone { entries }) = read_frame::<_, ToRank>(ctrl)? else {
            bail!("fence {round}: no FenceDone");
        };
        for r in 0..*size {
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
    println!("{name}: {} fence(s) ok", script.fences);
    Ok(())
}

/// Waits for `Assign` (a spare may get `Shutdown` instead: returns false)
/// and checks it against the environment.
fn wait_assignment(me: &mut Me) -> Result<bool> {
    let name = &me.name;
    let (slots, index, payload) = match read_frame::<_, ToRank>(&mut me.ctrl)? {
        Some(ToRank::Assign {
            slots,
            index,
            payload,
        }) => (slots, index, payload),
        Some(ToRank::Shutdown) | None if me.role == "spare" => {
            println!("{name}: idle spare shut down");
            return Ok(false);
        }
        other => bail!("expected an assignment, got {other:?}"),
    };
    if slots.get(index as usize) != Some(&(me.slot as u32)) {
        bail!(
            "assigned index {index} of {slots:?}, but my slot is {}",
            me.slot
        );
    }
    if me.role == "spawned" && (index != me.rank || slots.len() != me.size as usize) {
        bail!(
            "assignment {index} of {} does not match rank {} of {}",
            slots.len(),
            me.rank,
            me.size
        );
    }
    println!(
        "{name}: assigned index {index} of {slots:?} payload {}",
        String::from_utf8_lossy(&payload)
    );
    Ok(true)
}

/// Everything after the start-up, in the order of the flags' list.
fn after_start(me: &mut Me, script: &Script) -> Result<u8> {
    let name = me.name.clone();
    if let Some(count) = script.spawn {
        spawn(me, script, count)?;
    }
    if let Some(victim) = script.watch {
        watch_failure(&me.seg, me.slot, victim)?;
        println!("{name}: saw slot {victim} fail");
    }
    if let Some(point) = &script.point {
        hit_point(me, point, script.hits)?;
    }
    if script.stop_self {
        raise(libc::SIGSTOP)?;
        println!("{name}: resumed");
    }
    if script.hang {
        std::thread::sleep(Duration::from_secs(30));
        return Ok(11);
    }
    std::thread::sleep(Duration::from_millis(script.sleep_ms));
    if let Some(code) = script.abort {
        let message = format!("{name} gives up");
        write_frame(&mut me.ctrl, &ToLauncher::Abort { code, message })?;
        wait_shutdown(&mut me.ctrl, &name)?;
        return Ok(1);
    }
    if script.wait_shutdown {
        wait_shutdown(&mut me.ctrl, &name)?;
    }
    if let Some(code) = script.exit {
        return Ok(code);
    }
    if script.finalize {
        write_frame(&mut me.ctrl, &ToLauncher::Finalize)?;
    }
    Ok(0)
}

fn print_env(me: &Me) {
    let get = |k: &str| std::env::var(k).unwrap_or_else(|_| "-".into());
    println!(
        "{}: env role={} rank={} size={} slot={} cma_all={} faults={} heartbeat={}",
        me.name,
        me.role,
        me.rank,
        me.size,
        me.slot,
        get(env::CMA_ALL),
        get(env::FAULTS),
        get(env::HEARTBEAT)
    );
}

/// Beats from a thread every period of `PERTINAX_HEARTBEAT`, as the
/// runtime does.
fn start_beating(me: &Me) -> Result<()> {
    let spec = var(env::HEARTBEAT)?;
    let ms: u64 = spec
        .split_once(':')
        .map_or(spec.as_str(), |(_, ms)| ms)
        .parse()
        .with_context(|| format!("bad heartbeat {spec}"))?;
    let (seg, slot) = (me.seg.clone(), me.slot);
    seg.proc_block(slot).beat.fetch_add(1, Relaxed);
    std::thread::spawn(move || loop {
        seg.proc_block(slot).beat.fetch_add(1, Relaxed);
        std::thread::sleep(Duration::from_millis(ms));
    });
    Ok(())
}

/// Asks for `count` processes and prints the launcher's answer.
fn spawn(me: &mut Me, script: &Script, count: u32) -> Result<()> {
    let stamp = (1u64 << 32) | u64::from(std::process::id());
    let req = ToLauncher::Spawn {
        stamp,
        program: script.spawn_program.clone(),
        args: script.spawn_args.clone(),
        count,
        use_spares: script.use_spares,
        payload: format!("from slot {}", me.slot).into_bytes(),
        replaces: Vec::new(),
    };
    write_frame(&mut me.ctrl, &req)?;
    let p = &me.seg.ft_block(me.slot).publication;
    let deadline = Instant::now() + Duration::from_secs(10);
    while p.stamp.load(Acquire) != stamp {
        if Instant::now() > deadline {
            bail!("no answer to the spawn request in the publication");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let n = p.count.load(Relaxed) as usize;
    let slots: Vec<u32> = (0..n).map(|i| p.slots[i].load(Relaxed)).collect();
    let status = p.status.load(Relaxed);
    // The launcher publishes first and starts afterwards.
    for &s in &slots {
        let state = &me.seg.proc_block(s as usize).state;
        while state.load(SeqCst) == slot::EMPTY {
            if Instant::now() > deadline {
                bail!("published slot {s} never started");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    println!("{}: spawn status {status} slots {slots:?}", me.name);
    Ok(())
}

/// Hits fault point `point` `hits` times, dying as `PERTINAX_FAULTS` says.
fn hit_point(me: &mut Me, point: &str, hits: u64) -> Result<()> {
    let faults = std::env::var(env::FAULTS).unwrap_or_default();
    let mut plan = Vec::new();
    for entry in faults.split(',').filter(|e| !e.is_empty()) {
        let (name, rest) = entry.split_once('@').context("bad FAULTS entry")?;
        let (hit, sig) = rest.split_once(':').context("bad FAULTS entry")?;
        plan.push((name.to_string(), hit.parse::<u64>()?, sig.to_string()));
    }
    for hit in 1..=hits {
        let Some((_, _, sig)) = plan
            .iter()
            .find(|(n, k, _)| (n == point || n == "*") && *k == hit)
        else {
            continue;
        };
        let signal = match sig.as_str() {
            "kill" => libc::SIGKILL,
            "segv" => libc::SIGSEGV,
            "stop" => libc::SIGSTOP,
            "panic" => 0,
            other => bail!("unknown fault signal {other}"),
        };
        let injected = ToLauncher::Injected {
            point: point.to_string(),
            hit,
            signal,
        };
        write_frame(&mut me.ctrl, &injected)?;
        if signal == 0 {
            panic!("injected panic at hit {hit} of {point}");
        }
        raise(signal)?;
        if signal == libc::SIGSEGV {
            // The standard library's stack-overflow handler takes a SIGSEGV
            // that is no fault, restores the default action and returns:
            // the second one kills.
            raise(signal)?;
        }
        // Only a stop returns.
    }
    println!("{}: {hits} hit(s) of {point}", me.name);
    Ok(())
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
            bail!("slot {victim} never failed");
        }
        pertinax_os::futex::wait(wake, seen, Some(Duration::from_secs(1)));
    }
}

fn wait_shutdown(ctrl: &mut UnixStream, name: &str) -> Result<()> {
    match read_frame::<_, ToRank>(ctrl)? {
        Some(ToRank::Shutdown) => {
            println!("{name}: got shutdown");
            Ok(())
        }
        other => bail!("expected Shutdown, got {other:?}"),
    }
}

/// Sends signal `sig` to this process.
fn raise(sig: i32) -> Result<()> {
    use rustix::process::{getpid, kill_process, Signal};
    let sig = Signal::from_named_raw(sig).with_context(|| format!("no signal {sig}"))?;
    kill_process(getpid(), sig).context("kill")?;
    Ok(())
}
