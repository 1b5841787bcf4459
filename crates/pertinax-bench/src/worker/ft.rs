//! Fault handling, the pertinax twin of the Open MPI anchor `ft.c`.
//!
//! Modes `recv`, `allreduce`, `agreeblk` and `agree` reproduce `ft.c`
//! step by step (see its header): healthy baselines (agree over
//! `agree_reps` calls, shrink over 10 calls, each shrunk communicator
//! freed), a barrier, the victim (rank N−1 unless `--victim`) sleeps
//! `delay_ms`, writes CLOCK_REALTIME to the kill file and SIGKILLs itself;
//! the survivors time the return of the call they were blocked in, revoke
//! (not in `recv`), shrink and allreduce on the shrunk communicator
//! (checked), then measure a healthy agree on it and gather everything to
//! its rank 0, which prints the same `FTRANK` and `FT` lines as `ft.c`
//! (same fields, same formats), so one parser reads both.
//!
//! Mode `replace` (no Open MPI counterpart): the survivors are blocked in
//! an allreduce when the victim dies; they revoke, call
//! [`Comm::replace_failed`] and run a checked allreduce on the restored
//! communicator, in which the replacement (a spare, or a new process of
//! this program) takes part right after its `init`. Rank 0 prints
//! `REPLRANK` lines (one per rank of the restored communicator) and a
//! `REPL` summary.
//!
//! Mode `spawn`: all ranks time [`Comm::spawn`] of 1 and of N processes
//! (this program again, which sees itself spawned), [`Comm::merge`] and a
//! barrier on the merged communicator; rank 0 prints `SPAWN` lines.

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use pertinax::{Comm, Error, Op, Rank, Role, Universe};
use rustix::process::{getpid, kill_process, Signal};

use crate::cli::FtMode;
use crate::stats::median;

/// What one ft launch does.
#[derive(Clone, Debug)]
pub struct FtParams {
    /// The scenario.
    pub mode: FtMode,
    /// Where the victim writes its kill time (not needed by `spawn`).
    pub kill_file: Option<std::path::PathBuf>,
    /// The victim's rank (default N−1).
    pub victim: Option<usize>,
    /// The victim's sleep between the barrier and its death.
    pub delay_ms: u64,
    /// Agree calls per healthy-agree measurement.
    pub agree_reps: usize,
    /// Revoke before shrinking (default: in every mode but `recv`).
    pub revoke: Option<bool>,
    /// Spawn mode: repetitions of each spawn size.
    pub spawn_reps: usize,
    /// CLOCK_REALTIME when this process entered `main`, seconds.
    pub t_main: f64,
}

/// Error classes, numbered as in `ft.c`.
const C_SUCCESS: usize = 0;
const C_PROC_FAILED: usize = 1;
const C_REVOKED: usize = 2;
const C_OTHER: usize = 3;
const C_PENDING: usize = 4;
const CLASS_NAMES: [&str; 5] = [
    "SUCCESS",
    "PROC_FAILED",
    "REVOKED",
    "OTHER",
    "PROC_FAILED_PENDING",
];

fn class<T>(r: &pertinax::Result<T>) -> usize {
    match r {
        Ok(_) => C_SUCCESS,
        Err(Error::ProcFailed { .. }) => C_PROC_FAILED,
        Err(Error::Revoked) => C_REVOKED,
        Err(Error::ProcFailedPending { .. }) => C_PENDING,
        Err(_) => C_OTHER,
    }
}

/// The name of a class stored as a float (`-` for "not measured").
fn class_name(c: f64) -> &'static str {
    if c < 0.0 {
        "-"
    } else {
        CLASS_NAMES.get(c as usize).copied().unwrap_or("OTHER")
    }
}

/// Wall clock in seconds since the epoch (CLOCK_REALTIME, comparable
/// across the processes of this machine), as `real_s()` of the anchors.
pub fn real_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Median as `ft.c` computes it (-1 for no values).
fn med(v: &[f64]) -> f64 {
    median(v).unwrap_or(-1.0)
}

/// Mean time (µs) per agree over `reps` calls, max over ranks (as
/// `time_agree` of `ft.c`: 5 untimed calls, a barrier, the timed calls).
fn time_agree(c: &Comm, reps: usize, bad: &mut usize) -> Result<f64> {
    for _ in 0..5 {
        if c.agree(1).is_err() {
            *bad += 1;
        }
    }
    c.barrier()?;
    let t0 = Instant::now();
    for _ in 0..reps {
        if c.agree(1).is_err() {
            *bad += 1;
        }
    }
    let t = t0.elapsed().as_secs_f64() / reps.max(1) as f64 * 1e6;
    let mut tmax = [0f64];
    c.allreduce(&[t], &mut tmax, &Op::max())?;
    Ok(tmax[0])
}

/// The value of a recovery call the measurement cannot go on without; on
/// an error the whole job ends (as ft.c's `MPI_Abort`).
fn or_abort<T>(u: &Universe, rank: usize, what: &str, r: Result<T, Error>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => {
            eprintln!("rank {rank}: {what} failed ({e})");
            u.abort(3, &format!("{what} failed"))
        }
    }
}

/// The victim: sleeps, writes its kill time, SIGKILLs itself.
fn die(kill_file: &Path, delay_ms: u64) -> ! {
    std::thread::sleep(Duration::from_millis(delay_ms));
    let t = real_s();
    let _ = std::fs::write(kill_file, format!("{t:.9}\n"));
    let _ = kill_process(getpid(), Signal::KILL);
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The kill time the victim wrote, if any.
fn read_kill_time(kill_file: &Path) -> Option<f64> {
    std::fs::read_to_string(kill_file).ok()?.trim().parse().ok()
}

/// The victim's rank for a world of `size`, checked as `ft.c` does.
fn victim_of(p: &FtParams, size: usize) -> Result<usize> {
    let v = p.victim.unwrap_or(size.saturating_sub(1));
    if size < 3 || v == 0 || v >= size {
        bail!("need >= 3 ranks and victim in 1..N-1 (N={size}, victim={v})");
    }
    Ok(v)
}

fn kill_file(p: &FtParams) -> Result<&Path> {
    p.kill_file
        .as_deref()
        .ok_or_else(|| anyhow!("mode {} needs --kill-file", p.mode.name()))
}

/// Runs one ft launch in this process (already initialized as `u`).
///
/// # Errors
/// On unexpected errors of the library; a process that fails to recover
/// aborts the job (as `ft.c` calls `MPI_Abort`) so that nobody hangs.
pub fn ft(u: &Universe, p: &FtParams) -> Result<()> {
    match p.mode {
        FtMode::Replace => replace(u, p),
        FtMode::Spawn => spawn(u, p),
        _ => shrink_modes(u, p),
    }
}

/// Number of values each survivor contributes to the gather (as `ft.c`).
const NF: usize = 13;

fn shrink_modes(u: &Universe, p: &FtParams) -> Result<()> {
    let world = u.world();
    let (rank, size) = (world.rank().index(), world.size());
    let kill_file = kill_file(p)?;
    let victim = match victim_of(p, size) {
        Ok(v) => v,
        Err(e) => {
            if rank == 0 {
                eprintln!("{e}");
            }
            u.abort(2, "bad arguments")
        }
    };
    let mode = p.mode;
    let do_revoke = p.revoke.unwrap_or(mode != FtMode::Recv);
    let mut bad = 0usize;

    // 1. healthy baselines
    let agree_healthy_us = time_agree(&world, p.agree_reps, &mut bad)?;
    let mut shs = 0.0;
    for _ in 0..10 {
        world.barrier()?;
        let t0 = Instant::now();
        let r = world.shrink();
        shs += t0.elapsed().as_secs_f64();
        match r {
            Ok(c) => c.free()?,
            Err(_) => bad += 1,
        }
    }
    let mut shmax = [0f64];
    world.allreduce(&[shs / 10.0 * 1e6], &mut shmax, &Op::max())?;
    let shrink_healthy_us = shmax[0];
    if bad > 0 {
        eprintln!("rank {rank}: {bad} errors in healthy phase");
    }

    // 2. kill
    world.barrier()?;
    if rank == victim {
        die(kill_file, p.delay_ms);
    }

    // 3. survivors
    let (x, mut y) = ([1.0f64], [0.0f64]);
    let mut dummy = [0i32];
    let rc = match mode {
        FtMode::Recv | FtMode::Agree => class(&world.recv(&mut dummy, victim, 7)),
        FtMode::Allreduce => class(&world.allreduce(&x, &mut y, &Op::sum())),
        FtMode::Agreeblk => class(&world.agree(1)),
        FtMode::Replace | FtMode::Spawn => bail!("unreachable mode"),
    };
    let t_det = real_s();
    let (mut a1, mut a2, mut rc_a1, mut rc_a2) = (-1.0, -1.0, -1.0, -1.0);
    if mode == FtMode::Agree {
        let s = real_s();
        rc_a1 = class(&world.agree(1)) as f64;
        let m = real_s();
        world.ack_failed(usize::MAX)?;
        let m2 = real_s();
        rc_a2 = class(&world.agree(1)) as f64;
        let e = real_s();
        a1 = (m - s) * 1e3;
        a2 = (e - m2) * 1e3;
    }
    let t_rv0 = real_s();
    let rc_rv = if do_revoke {
        class(&world.revoke())
    } else {
        C_SUCCESS
    };
    let t_rv1 = real_s();
    let nc = or_abort(u, rank, "shrink", world.shrink());
    let t_sh = real_s();
    let mut sum = [0i32];
    let rc_ar = nc.allreduce(&[1i32], &mut sum, &Op::sum());
    let t_ar = real_s();
    let nsize = nc.size();
    let ok = rc_ar.is_ok() && sum[0] as usize == size - 1 && nsize == size - 1;

    // 4. healthy agree on the shrunk communicator, then report
    let mut bad2 = 0usize;
    let agree_shrunk_us = time_agree(&nc, p.agree_reps, &mut bad2)?;
    let mine: [f64; NF] = [
        rank as f64,
        t_det,
        rc as f64,
        t_rv0,
        t_rv1,
        t_sh,
        t_ar,
        f64::from(u8::from(ok)),
        a1,
        a2,
        rc_a1,
        rc_a2,
        f64::from(u8::from(rc_rv == C_SUCCESS)),
    ];
    let nrank = nc.rank().index();
    let mut all = if nrank == 0 {
        vec![0f64; NF * nsize]
    } else {
        Vec::new()
    };
    nc.gather(&mine, &mut all, 0)?;
    if nrank == 0 {
        let t_kill = read_kill_time(kill_file);
        print!(
            "{}",
            ft_report(
                mode.name(),
                size,
                victim,
                do_revoke,
                t_kill,
                &all,
                [agree_healthy_us, agree_shrunk_us, shrink_healthy_us]
            )
        );
        use std::io::Write;
        let _ = std::io::stdout().flush();
    }
    if bad2 > 0 {
        eprintln!("rank {rank}: {bad2} errors in agree on shrunk comm");
    }
    nc.free()?;
    Ok(())
}

/// The `FTRANK` and `FT` lines of `ft.c` from the gathered rows.
fn ft_report(
    mode: &str,
    size: usize,
    victim: usize,
    do_revoke: bool,
    t_kill: Option<f64>,
    all: &[f64],
    [agree_healthy_us, agree_shrunk_us, shrink_healthy_us]: [f64; 3],
) -> String {
    let t_kill_v = t_kill.unwrap_or(-1.0);
    let mut out = String::new();
    let (mut det, mut rv, mut sh, mut e2e, mut ag1, mut ag2) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut rs_max: f64 = 0.0;
    let mut ncls = [0usize; 5];
    let mut allok = true;
    for r in all.chunks_exact(NF) {
        let d = (r[1] - t_kill_v) * 1e3;
        let v = (r[4] - r[3]) * 1e6;
        let rs = (r[5] - r[3]) * 1e3;
        let s = (r[5] - r[4]) * 1e3;
        let e = (r[6] - t_kill_v) * 1e3;
        let c = (r[2] as usize).min(4);
        ncls[c] += 1;
        allok &= r[7] != 0.0;
        out.push_str(&format!(
            "FTRANK mode={mode} N={size} rank={} det_ms={d:.3} det_class={} revoke_us={v:.1} \
             shrink_ms={s:.3} e2e_ms={e:.3} agree_after_fail_ms={:.3}({}) \
             agree_after_ack_ms={:.3}({}) ok={}\n",
            r[0] as i64,
            CLASS_NAMES[c],
            r[8],
            class_name(r[10]),
            r[9],
            class_name(r[11]),
            r[7] as i64,
        ));
        det.push(d);
        rv.push(v);
        sh.push(s);
        e2e.push(e);
        ag1.push(r[8]);
        ag2.push(r[9]);
        rs_max = rs_max.max(rs);
    }
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let min = |v: &[f64]| v.iter().copied().fold(1e30, f64::min);
    out.push_str(&format!(
        "FT mode={mode} revoke={} N={size} victim={victim} det_min_ms={:.3} det_med_ms={:.3} \
         det_max_ms={:.3} revoke_max_us={:.1} shrink_med_ms={:.3} shrink_max_ms={:.3} \
         revoke_shrink_max_ms={rs_max:.3} e2e_med_ms={:.3} e2e_max_ms={:.3} \
         agree_healthy_us={agree_healthy_us:.1} agree_shrunk_us={agree_shrunk_us:.1} \
         shrink_healthy_us={shrink_healthy_us:.1} agree_after_fail_med_ms={:.3} \
         agree_after_ack_med_ms={:.3} classes=PF:{},REV:{},OK:{},OTHER:{} ok={} kill_file={}\n",
        u8::from(do_revoke),
        min(&det),
        med(&det),
        max(&det),
        max(&rv),
        med(&sh),
        max(&sh),
        med(&e2e),
        max(&e2e),
        med(&ag1),
        med(&ag2),
        ncls[C_PROC_FAILED] + ncls[C_PENDING],
        ncls[C_REVOKED],
        ncls[C_SUCCESS],
        ncls[C_OTHER],
        u8::from(allok),
        if t_kill.is_some() { "read" } else { "MISSING" },
    ));
    out
}

/// Values per rank in the replace gather.
const NR: usize = 9;

/// The replace scenario (see the module documentation).
fn replace(u: &Universe, p: &FtParams) -> Result<()> {
    let t_main = p.t_main;
    let kill_file = kill_file(p)?;
    if let Role::Replacement { rank, .. } = u.role() {
        // A spare or a new process in the victim's place: join the first
        // allreduce of the restored communicator, then the report.
        let t_init = real_s();
        let w = u.world();
        let n = w.size();
        let mut sum = [0i32];
        let rc = w.allreduce(&[1i32], &mut sum, &Op::sum());
        let t_ar = real_s();
        let ok = rc.is_ok() && sum[0] as usize == n;
        let mine: [f64; NR] = [
            rank.0 as f64,
            1.0,
            -1.0,
            -1.0,
            t_init,
            t_ar,
            f64::from(u8::from(ok)),
            t_main,
            -1.0,
        ];
        let mut none: [f64; 0] = [];
        w.gather(&mine, &mut none, 0)?;
        return Ok(());
    }
    let world = u.world();
    let (rank, size) = (world.rank().index(), world.size());
    let victim = match victim_of(p, size) {
        Ok(v) => v,
        Err(e) => {
            if rank == 0 {
                eprintln!("{e}");
            }
            u.abort(2, "bad arguments")
        }
    };
    let do_revoke = p.revoke.unwrap_or(true);
    // Warm the allreduce path, then meet.
    let mut s = [0f64];
    world.allreduce(&[1.0f64], &mut s, &Op::sum())?;
    world.barrier()?;
    if rank == victim {
        die(kill_file, p.delay_ms);
    }
    let rc = world.allreduce(&[1.0f64], &mut s, &Op::sum());
    let t_det = real_s();
    if rc.is_ok() {
        eprintln!("rank {rank}: the allreduce succeeded although the victim died");
    }
    if do_revoke {
        world.revoke()?;
    }
    let t_rp0 = real_s();
    let rep = or_abort(u, rank, "replace_failed", world.replace_failed());
    let t_rp1 = real_s();
    let c = rep.comm;
    let mut sum = [0i32];
    let rc_ar = c.allreduce(&[1i32], &mut sum, &Op::sum());
    let t_ar = real_s();
    let ok = rc_ar.is_ok()
        && sum[0] as usize == size
        && c.size() == size
        && rep.replaced == [Rank(victim as i32)];
    let mine: [f64; NR] = [
        rank as f64,
        0.0,
        t_det,
        t_rp0,
        t_rp1,
        t_ar,
        f64::from(u8::from(ok)),
        t_main,
        rep.replaced.len() as f64,
    ];
    let me = c.rank().index();
    let mut all = if me == 0 {
        vec![0f64; NR * size]
    } else {
        Vec::new()
    };
    c.gather(&mine, &mut all, 0)?;
    if me == 0 {
        let t_kill = read_kill_time(kill_file);
        print!("{}", replace_report(size, victim, t_kill, &all));
        use std::io::Write;
        let _ = std::io::stdout().flush();
    }
    c.free()?;
    Ok(())
}

/// The `REPLRANK` and `REPL` lines from the gathered rows.
fn replace_report(size: usize, victim: usize, t_kill: Option<f64>, all: &[f64]) -> String {
    let tk = t_kill.unwrap_or(-1.0);
    let ms = |t: f64| (t - tk) * 1e3;
    let mut out = String::new();
    let (mut det, mut rp, mut e2e) = (vec![], vec![], vec![]);
    let (mut repl_init, mut repl_e2e, mut repl_spare) = (-1.0, -1.0, -1);
    let mut allok = true;
    for r in all.chunks_exact(NR) {
        let ok = r[6] != 0.0;
        allok &= ok;
        if r[1] == 0.0 {
            let (d, rpm, e) = (ms(r[2]), (r[4] - r[3]) * 1e3, ms(r[5]));
            out.push_str(&format!(
                "REPLRANK N={size} rank={} role=survivor det_ms={d:.3} replace_ms={rpm:.3} \
                 e2e_ms={e:.3} ok={}\n",
                r[0] as i64,
                u8::from(ok)
            ));
            det.push(d);
            rp.push(rpm);
            e2e.push(e);
        } else {
            // A spare's main started before the kill; a new process after.
            let spare = r[7] < tk;
            repl_init = ms(r[4]);
            repl_e2e = ms(r[5]);
            repl_spare = i32::from(spare);
            out.push_str(&format!(
                "REPLRANK N={size} rank={} role=replacement started_ms={:.3} init_ms={repl_init:.3} \
                 e2e_ms={repl_e2e:.3} spare={} ok={}\n",
                r[0] as i64,
                ms(r[7]),
                u8::from(spare),
                u8::from(ok)
            ));
            e2e.push(repl_e2e);
        }
    }
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    out.push_str(&format!(
        "REPL N={size} victim={victim} det_med_ms={:.3} det_max_ms={:.3} replace_med_ms={:.3} \
         replace_max_ms={:.3} repl_init_ms={repl_init:.3} repl_e2e_ms={repl_e2e:.3} \
         e2e_max_ms={:.3} spare={repl_spare} ok={} kill_file={}\n",
        med(&det),
        max(&det),
        med(&rp),
        max(&rp),
        max(&e2e),
        u8::from(allok && repl_spare >= 0),
        if t_kill.is_some() { "read" } else { "MISSING" },
    ));
    out
}

/// The spawn scenario (see the module documentation); a spawned process
/// merges with its parents and joins the barrier.
fn spawn(u: &Universe, p: &FtParams) -> Result<()> {
    if let Some(parent) = u.parent() {
        let me = parent.rank().index();
        let merged = parent
            .merge(true)
            .with_context(|| format!("spawned process {me}: merge"))?;
        merged
            .barrier()
            .with_context(|| format!("spawned process {me}: barrier on the merged comm"))?;
        let mut sum = [0i32];
        merged
            .allreduce(&[1i32], &mut sum, &Op::sum())
            .with_context(|| format!("spawned process {me}: allreduce on the merged comm"))?;
        merged.free()?;
        parent.free()?;
        return Ok(());
    }
    let world = u.world();
    let (rank, n) = (world.rank().index(), world.size());
    let exe = std::env::current_exe().context("cannot find the running executable")?;
    let exe = exe.to_string_lossy().into_owned();
    let args = ["worker", "ft", "--mode", "spawn"];
    for rep in 0..p.spawn_reps.max(1) {
        for count in [1, n] {
            let what = |step: &str| format!("rank {rank}: spawn {count} (rep {rep}): {step}");
            world.barrier().with_context(|| what("barrier"))?;
            let t0 = Instant::now();
            let inter = world
                .spawn(&exe, &args, count, Rank(0))
                .with_context(|| what("spawn"))?;
            let t1 = Instant::now();
            let merged = inter.merge(false).with_context(|| what("merge"))?;
            let t2 = Instant::now();
            merged
                .barrier()
                .with_context(|| what("barrier on the merged comm"))?;
            let t3 = Instant::now();
            let mut sum = [0i32];
            merged
                .allreduce(&[1i32], &mut sum, &Op::sum())
                .with_context(|| what("allreduce on the merged comm"))?;
            if sum[0] as usize != n + count || merged.size() != n + count {
                bail!(
                    "rank {rank}: merged communicator of {} ranks, sum {} (expected {})",
                    merged.size(),
                    sum[0],
                    n + count
                );
            }
            let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
            let mine = [ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t0, t3)];
            let mut mx = [0f64; 4];
            world
                .allreduce(&mine, &mut mx, &Op::max())
                .with_context(|| what("allreduce of the times"))?;
            if rank == 0 {
                println!(
                    "SPAWN N={n} count={count} rep={rep} spawn_ms={:.3} merge_ms={:.3} \
                     barrier_ms={:.3} total_ms={:.3}",
                    mx[0], mx[1], mx[2], mx[3]
                );
            }
            merged.free()?;
            inter.free()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_output;

    #[test]
    fn ft_lines_match_the_anchor_format() {
        // Two survivors, kill at t = 100 s.
        let row = |rank: f64, det: f64, cls: f64| {
            [
                rank,
                100.0 + det,
                cls,
                100.01,
                100.010002,
                100.0105,
                100.011,
                1.0,
                -1.0,
                -1.0,
                -1.0,
                -1.0,
                1.0,
            ]
        };
        let mut all = row(0.0, 0.001, 1.0).to_vec();
        all.extend(row(1.0, 0.003, 2.0));
        let out = ft_report("allreduce", 3, 2, true, Some(100.0), &all, [1.0, 2.0, 3.0]);
        let recs = parse_output(&out);
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0].key, "FTRANK");
        assert_eq!(recs[1].get("det_class"), Some("REVOKED"));
        assert_eq!(recs[0].get("agree_after_fail_ms"), Some("-1.000(-)"));
        let ft = &recs[2];
        assert_eq!(ft.key, "FT");
        let f = |k: &str| ft.f64(k).unwrap_or_else(|| panic!("{k} in {out}"));
        assert!((f("det_min_ms") - 1.0).abs() < 1e-3);
        assert!((f("det_med_ms") - 2.0).abs() < 1e-3);
        assert!((f("det_max_ms") - 3.0).abs() < 1e-3);
        assert!((f("revoke_max_us") - 2.0).abs() < 0.1);
        assert!((f("e2e_max_ms") - 11.0).abs() < 1e-3);
        assert!((f("revoke_shrink_max_ms") - 0.5).abs() < 1e-3);
        assert_eq!(ft.get("classes"), Some("PF:1,REV:1,OK:0,OTHER:0"));
        assert_eq!(ft.get("ok"), Some("1"));
        assert_eq!(ft.get("kill_file"), Some("read"));
        assert_eq!(ft.get("revoke"), Some("1"));
        let missing = ft_report("recv", 3, 2, false, None, &all, [0.0; 3]);
        assert!(missing.contains("kill_file=MISSING"));
    }

    #[test]
    fn replace_lines() {
        let surv = |rank: f64| {
            [
                rank, 0.0, 100.001, 100.0011, 100.002, 100.003, 1.0, 1.0, 1.0,
            ]
        };
        let mut all = surv(0.0).to_vec();
        all.extend(surv(1.0));
        all.extend([2.0, 1.0, -1.0, -1.0, 100.0025, 100.003, 1.0, 99.0, -1.0]);
        let out = replace_report(3, 2, Some(100.0), &all);
        let recs = parse_output(&out);
        assert_eq!(recs.len(), 4);
        let r = &recs[3];
        assert_eq!(r.key, "REPL");
        assert_eq!(r.get("spare"), Some("1"));
        assert_eq!(r.get("ok"), Some("1"));
        assert!((r.f64("replace_max_ms").unwrap() - 0.9).abs() < 1e-3);
        assert!((r.f64("repl_init_ms").unwrap() - 2.5).abs() < 1e-3);
        assert!((r.f64("e2e_max_ms").unwrap() - 3.0).abs() < 1e-3);
        assert!(recs[2].get("role") == Some("replacement"));
    }
}
