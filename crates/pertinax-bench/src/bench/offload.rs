//! Offload (issue 18; the offload paper's section 6): the applications of
//! `pertinax-apps` under `pertinax run`, in the paper's configurations.
//!
//! - `original`: plain offload, tasks without `recover` (`--no-recover`);
//! - `error-free`: every task with `recover`, no failure;
//! - `error`: with `recover`, one booster killed at the start of a task
//!   half-way through the run (a victimless fault plan on an exact
//!   first-execution point, `PERTINAX_FAULTS=hello.B.T@1`,
//!   `booster.B.T@1`, `slave.S.N@1`: the only kind of plan that reaches
//!   spawned processes), recovered by a respawn;
//! - `error-spare`: the same with one spare group (`--spares 1`).
//!
//! Cases: `hello` (figure 7, table 2: M masters, one booster each, one
//! task per master per round), `nbody-global` and `nbody-partial`
//! (figures 8-12), `fwi` (figures 13-16: a slave killed). The four
//! configurations of a case run interleaved, launch by launch, so that
//! the machine's load drifts alike over all four; each row gives the
//! median over launches of the program's own timing (`elapsed_ms`: from
//! after the allocation to the last result) and, for `hello`, of the
//! per-round median (the per-task cost) and of the faulted round
//! (kill -> re-executed task finished at every master). Rows say how many
//! processes shared the machine's cores.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _, Result};
use serde_json::json;

use crate::cli::{Common, OffloadOpts};
use crate::setup;
use crate::stats;

fn median(xs: &[f64]) -> f64 {
    stats::median(xs).unwrap_or(f64::NAN)
}

const CONFIGS: [&str; 4] = ["original", "error-free", "error", "error-spare"];

/// One program run: its summary line's fields.
type Fields = HashMap<String, String>;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `launcher run -n masters prog args` with `faults`; the fields of
/// the line starting with `tag`, which must say `verified=true`.
fn launch(
    launcher: &Path,
    masters: usize,
    prog: &Path,
    args: &[String],
    faults: Option<&str>,
    tag: &str,
    limit: Duration,
) -> Result<Fields> {
    let mut cmd = Command::new(launcher);
    cmd.arg("run")
        .arg("--max-spawn")
        .arg("1024")
        .arg("-n")
        .arg(masters.to_string())
        .arg(prog)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(f) = faults {
        cmd.env("PERTINAX_FAULTS", f);
    }
    let mut child = cmd.spawn().context("start the launcher")?;
    let start = Instant::now();
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{} {args:?}: over the time limit", prog.display());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with(tag)).ok_or_else(|| {
        anyhow!(
            "{} {args:?} (faults {faults:?}): no {tag} line; stderr:\n{}",
            prog.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    if !line.contains("verified=true") {
        bail!("{} {args:?}: not verified: {line}", prog.display());
    }
    Ok(line
        .split_whitespace()
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

fn f(fields: &Fields, key: &str) -> f64 {
    fields
        .get(key)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// One case: its program, arguments per configuration, fault plan, the
/// processes it runs (without spares) and the boosters.
struct Case {
    name: &'static str,
    prog: PathBuf,
    tag: &'static str,
    masters: usize,
    boosters: usize,
    processes: usize,
    /// Spare processes added by `error-spare`.
    spare_processes: usize,
    args: Vec<String>,
    faults: String,
    tasks_per_master: usize,
}

impl Case {
    fn args(&self, config: &str) -> Vec<String> {
        let mut a = self.args.clone();
        match config {
            "original" => a.push("--no-recover".into()),
            "error-spare" => a.extend(["--spares".to_string(), "1".to_string()]),
            _ => {}
        }
        a
    }
    fn faults(&self, config: &str) -> Option<&str> {
        matches!(config, "error" | "error-spare").then_some(self.faults.as_str())
    }
}

fn emit(json: bool, row: serde_json::Value) {
    if json {
        println!("{row}");
    } else {
        eprintln!("{row}");
    }
}

fn run_case(launcher: &Path, c: &Case, launches: usize, json: bool, limit: Duration) -> Result<()> {
    let mut got: HashMap<&str, Vec<Fields>> = HashMap::new();
    for _ in 0..launches {
        for config in CONFIGS {
            let fl = launch(
                launcher,
                c.masters,
                &c.prog,
                &c.args(config),
                c.faults(config),
                c.tag,
                limit,
            )?;
            got.entry(config).or_default().push(fl);
        }
    }
    let med = |config: &str, key: &str| -> f64 {
        let xs: Vec<f64> = got[config].iter().map(|fl| f(fl, key)).collect();
        median(&xs)
    };
    // Per-launch ratios against `original` (launch i of each
    // configuration ran next to launch i of the others).
    let ratio = |config: &str| -> f64 {
        let xs: Vec<f64> = got[config]
            .iter()
            .zip(&got["original"])
            .map(|(a, o)| f(a, "elapsed_ms") / f(o, "elapsed_ms"))
            .collect();
        median(&xs)
    };
    for config in CONFIGS {
        let spares = if config == "error-spare" {
            c.spare_processes
        } else {
            0
        };
        let processes = c.processes + spares;
        let elapsed = med(config, "elapsed_ms");
        let mut row = json!({
            "bench": "offload",
            "case": c.name,
            "config": config,
            "masters": c.masters,
            "boosters": c.boosters,
            "processes": processes,
            "cores": cores(),
            "processes_per_core": processes as f64 / cores() as f64,
            "launches": launches,
            "median_ms": elapsed,
            "ratio_to_original": ratio(config),
            "tasks_per_master": c.tasks_per_master,
            "recoveries": med(config, "recoveries"),
            "args": c.args(config).join(" "),
            "faults": c.faults(config),
        });
        if c.name == "hello" {
            let round = med(config, "round_med_us") / 1e3;
            row["task_round_median_ms"] = json!(round);
            if config != "original" {
                let per_launch: Vec<f64> = got[config]
                    .iter()
                    .zip(&got["original"])
                    .map(|(a, o)| (f(a, "round_med_us") - f(o, "round_med_us")) / 1e3)
                    .collect();
                row["overhead_per_task_ms"] = json!(median(&per_launch));
            }
            if matches!(config, "error" | "error-spare") {
                let rec: Vec<f64> = got[config]
                    .iter()
                    .map(|a| (f(a, "fault_round_us") - f(a, "round_med_us")) / 1e3)
                    .collect();
                row["kill_to_reexecuted_ms"] = json!(med(config, "fault_round_us") / 1e3);
                row["recovery_extra_ms"] = json!(median(&rec));
            }
        } else if config != "original" {
            row["overhead_pct"] = json!((ratio(config) - 1.0) * 100.0);
        }
        emit(json, row);
    }
    Ok(())
}

/// `pertinax-bench offload`.
///
/// # Errors
/// A missing program, a launch that fails, over-runs or is not verified.
pub fn run(common: &Common, o: &OffloadOpts) -> Result<()> {
    let launcher = setup::launcher(common.launcher.as_deref())?;
    let dir = match &o.apps {
        Some(d) => d.clone(),
        None => setup::this_exe()?
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| anyhow!("no directory"))?,
    };
    let prog = |name: &str| -> Result<PathBuf> {
        let p = dir.join(name);
        if !p.is_file() {
            bail!(
                "{} not found; build it with `cargo build --release -p pertinax-apps` or pass --apps DIR",
                p.display()
            );
        }
        Ok(p)
    };
    let launches = common
        .launches
        .map_or(if common.quick { 1 } else { 3 }, |k| k as usize);
    let limit = Duration::from_secs(common.timeout.unwrap_or(120));
    let reps = if common.quick { 40 } else { o.reps };
    let mut cases = Vec::new();
    for &m in &o.masters {
        cases.push(Case {
            name: "hello",
            prog: prog("pertinax-offhello")?,
            tag: "OFFHELLO ",
            masters: m,
            boosters: m,
            processes: 2 * m,
            spare_processes: m,
            args: vec!["--reps".into(), reps.to_string()],
            faults: format!("hello.{}.{}@1", m - 1, reps / 2),
            tasks_per_master: reps,
        });
    }
    let n = o.nbody_boosters;
    let steps = 10;
    let nb = |version: &str| {
        vec![
            "--version".to_string(),
            version.to_string(),
            "--bodies".to_string(),
            o.bodies.to_string(),
            "--steps".to_string(),
            steps.to_string(),
        ]
    };
    cases.push(Case {
        name: "nbody-global",
        prog: prog("pertinax-nbody")?,
        tag: "NBODY ",
        masters: n,
        boosters: n,
        processes: 2 * n,
        spare_processes: n,
        args: nb("global"),
        faults: format!("booster.{}.{}@1", n - 1, steps / 2),
        tasks_per_master: 1,
    });
    let partial_tasks = steps * 2 * n;
    cases.push(Case {
        name: "nbody-partial",
        prog: prog("pertinax-nbody")?,
        tag: "NBODY ",
        masters: n,
        boosters: n,
        processes: 2 * n,
        spare_processes: n,
        args: nb("partial"),
        faults: format!("booster.{}.{}@1", n - 1, partial_tasks / 2),
        tasks_per_master: partial_tasks,
    });
    let (shots, workers) = (o.shots, 2);
    cases.push(Case {
        name: "fwi",
        prog: prog("pertinax-fwi")?,
        tag: "FWI ",
        masters: 1,
        boosters: shots,
        processes: 1 + shots * (1 + workers),
        spare_processes: shots,
        args: [
            "--shots",
            &shots.to_string(),
            "--workers",
            "2",
            "--grid",
            "256",
            "--freqs",
            "2",
            "--grads",
            "2",
            "--tests",
            "2",
            "--work",
            "64",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        faults: format!("slave.{}.4@1", shots - 1),
        tasks_per_master: 2 * 2 * 3 * shots,
    });
    for c in cases
        .iter()
        .filter(|c| o.cases.is_empty() || o.cases.iter().any(|x| x == c.name))
    {
        run_case(&launcher, c, launches, common.json, limit)?;
    }
    Ok(())
}
