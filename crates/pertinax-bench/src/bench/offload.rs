//! Offload (issue 18; the offload paper's section 6): the applications of
//! `pertinax-apps` under `pertinax run`, in the paper's configurations.
//!
//! - `original`: plain offload, tasks without `recover` (`--no-recover`);
//! - `error-free`: every task with `recover`, no failure;
//! - `error`: with `recover`, one booster killed at the start of a task
//!   half-way through the run (a victimless fault plan on an exact
//!   first-execution point, `PERTINAX_FAULTS=hello.B.T@1`,
//!   `booster.B.T@1`, `slave.S.N@1`, `worker.S.N.W@1`: the only kind of
//!   plan that reaches spawned processes), recovered by a respawn;
//! - `error-spare`: the same with one spare group (`--spares 1`).
//!
//! Cases: `hello` (figure 7, table 2: M masters, one booster each, one
//! task per master per round), `nbody-global` and `nbody-partial`
//! (figures 8-12), `fwi` (figures 13-16). Options for the figures:
//!
//! - `--nbody-mode error-each` (figure 10): the N-body cases on one
//!   master and one booster, in `original`, `error-free` and one error
//!   configuration per task: `error` for the global task (killed at the
//!   middle step), `error-1`, `error-2`, ... for the partial version, the
//!   tasks of the middle time step in offload order (with one booster the
//!   ring has one block, so a step is a `forces` then an `update` task:
//!   there is no `exchange`);
//! - `--fwi-faults worker|slave` (figure 15): the process killed in
//!   `error` and `error-spare`: a worker of the last slave (recovered by
//!   its slave) or the last slave (recovered by the masters);
//! - `--fwi-errors K` (figure 16): K kills in one run, each at the first
//!   kernel of a different wait, spread evenly over the run's waits.
//!
//! The configurations of a case run interleaved, launch by launch, so
//! that the machine's load drifts alike over all of them; each row gives
//! the median over launches of the program's own timing (`elapsed_ms`: for
//! N-body and FWI from before the booster allocation, its spawn included,
//! to the last result; for `hello` from after the allocation to the last
//! round's result) and, for `hello`, of the per-round median (the per-task
//! cost) and of the faulted round (kill -> re-executed task finished at
//! every master). Rows say how many processes shared the machine's cores.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use serde_json::json;

use super::Context;
use crate::cli::{FwiFault, NbodyMode, OffloadOpts};
use crate::run::{Cmd, Launch, Variant};
use crate::{setup, stats};

/// Launches per configuration unless `--launches` is given (1 with
/// `--quick`).
const DEFAULT_LAUNCHES: usize = 3;

/// Time limit per launch unless `--timeout` is given.
const DEFAULT_LIMIT: Duration = Duration::from_secs(120);

fn median(xs: &[f64]) -> f64 {
    stats::median(xs).unwrap_or(f64::NAN)
}

/// One program run: its summary line's fields.
type Fields = HashMap<String, String>;

/// The fields of the line of `l` (which ran `cmd`) starting with `tag`,
/// which must say `verified=true`; a launch that ran into the time limit
/// or printed no such line stops the benchmark.
fn fields(l: &Launch, cmd: &Cmd, tag: &str) -> Result<Fields> {
    if l.timed_out() {
        bail!("`{}`: over the time limit", cmd.display());
    }
    let stdout = &l.outcome.stdout;
    let line = stdout.lines().find(|l| l.starts_with(tag)).ok_or_else(|| {
        anyhow!(
            "`{}`: no {tag} line; stderr:\n{}",
            cmd.display(),
            l.outcome.stderr
        )
    })?;
    if !line.contains("verified=true") {
        bail!("`{}`: not verified: {line}", cmd.display());
    }
    Ok(line
        .split_whitespace()
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// The words of `s` (a command line without quoting).
fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn f(fields: &Fields, key: &str) -> f64 {
    fields
        .get(key)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// One configuration of a case: the rows' `config`, the arguments it
/// adds, its fault plan, the spare processes it adds.
struct Config {
    name: String,
    extra: Vec<String>,
    faults: Option<String>,
    spare_processes: usize,
    /// The task an `error-each` configuration kills (its rows'
    /// `error_task`).
    error_task: Option<&'static str>,
}

impl Config {
    fn new(name: &str) -> Config {
        Config {
            name: name.to_string(),
            extra: Vec::new(),
            faults: None,
            spare_processes: 0,
            error_task: None,
        }
    }
    fn arg(mut self, a: &str) -> Config {
        self.extra.push(a.to_string());
        self
    }
    fn faults(mut self, plan: String) -> Config {
        self.faults = Some(plan);
        self
    }
}

/// The paper's four configurations: `original`, `error-free`, `error`
/// (the plan `faults`) and `error-spare` (the same with a spare group of
/// `spare_processes`).
fn paper_configs(faults: &str, spare_processes: usize) -> Vec<Config> {
    let mut spare = Config::new("error-spare")
        .arg("--spares")
        .arg("1")
        .faults(faults.to_string());
    spare.spare_processes = spare_processes;
    vec![
        Config::new("original").arg("--no-recover"),
        Config::new("error-free"),
        Config::new("error").faults(faults.to_string()),
        spare,
    ]
}

/// One case: its program, arguments, configurations (the first is
/// `original`, the reference of the ratios), the processes it runs
/// (without spares) and the boosters.
struct Case {
    name: &'static str,
    prog: PathBuf,
    tag: &'static str,
    masters: usize,
    boosters: usize,
    processes: usize,
    args: Vec<String>,
    configs: Vec<Config>,
    tasks_per_master: usize,
    /// Fields added to every row (the options that shaped the case).
    notes: Vec<(&'static str, serde_json::Value)>,
}

impl Case {
    fn args(&self, config: &Config) -> Vec<String> {
        let mut a = self.args.clone();
        a.extend(config.extra.iter().cloned());
        a
    }
}

/// Runs the configurations of case `c` interleaved (`pertinax run
/// --max-spawn 1024 -n MASTERS PROG ARGS`, the fault plan in
/// `PERTINAX_FAULTS`) and emits one row per configuration: on stdout with
/// `--json` (and to `--csv`, `--plot`), else on stderr as it is (offload
/// prints no tables).
fn run_case(ctx: &mut Context, c: &Case) -> Result<()> {
    let launches = if ctx.quick { 1 } else { DEFAULT_LAUNCHES };
    let pace = ctx.pace_or(launches, DEFAULT_LIMIT);
    let variants = c.configs.iter().map(|config| {
        let masters = c.masters.to_string();
        let mut cmd = Cmd::new(&ctx.launcher)
            .args(["run", "--max-spawn", "1024", "-n", &masters])
            .arg(&c.prog)
            .args(c.args(config));
        if let Some(plan) = &config.faults {
            cmd = cmd.env("PERTINAX_FAULTS", plan);
        }
        Variant::new(&config.name, cmd)
    });
    let title = format!("offload {}", c.name);
    let run = ctx.campaign(&title, variants.collect(), pace)?;
    let mut got: HashMap<&str, Vec<Fields>> = HashMap::new();
    for l in &run.launches {
        let v = &run.variants[l.variant];
        got.entry(v.name.as_str())
            .or_default()
            .push(fields(l, &v.cmd, c.tag)?);
    }
    let med = |config: &str, key: &str| -> f64 {
        let xs: Vec<f64> = got[config].iter().map(|fl| f(fl, key)).collect();
        median(&xs)
    };
    let original = c.configs.first().map_or("original", |k| k.name.as_str());
    // Per-launch ratios against `original` (launch i of each
    // configuration ran next to launch i of the others).
    let ratio = |config: &str| -> f64 {
        let xs: Vec<f64> = got[config]
            .iter()
            .zip(&got[original])
            .map(|(a, o)| f(a, "elapsed_ms") / f(o, "elapsed_ms"))
            .collect();
        median(&xs)
    };
    for config in &c.configs {
        let name = config.name.as_str();
        let processes = c.processes + config.spare_processes;
        let elapsed = med(name, "elapsed_ms");
        let mut row = json!({
            "bench": "offload",
            "case": c.name,
            "config": name,
            "masters": c.masters,
            "boosters": c.boosters,
            "processes": processes,
            "cores": ctx.cores,
            "processes_per_core": processes as f64 / ctx.cores as f64,
            "launches": pace.rounds,
            "median_ms": elapsed,
            "ratio_to_original": ratio(name),
            "tasks_per_master": c.tasks_per_master,
            "recoveries": med(name, "recoveries"),
            "args": c.args(config).join(" "),
            "faults": config.faults,
        });
        for (k, v) in &c.notes {
            row[*k] = v.clone();
        }
        if let Some(t) = config.error_task {
            row["error_task"] = json!(t);
        }
        if c.name == "fwi" {
            // Workers' failures are recovered by their slaves.
            row["inner_recoveries"] = json!(med(name, "inner_recoveries"));
        }
        if c.name == "hello" {
            let round = med(name, "round_med_us") / 1e3;
            row["task_round_median_ms"] = json!(round);
            if name != original {
                let per_launch: Vec<f64> = got[name]
                    .iter()
                    .zip(&got[original])
                    .map(|(a, o)| (f(a, "round_med_us") - f(o, "round_med_us")) / 1e3)
                    .collect();
                row["overhead_per_task_ms"] = json!(median(&per_launch));
            }
            if config.faults.is_some() {
                let rec: Vec<f64> = got[name]
                    .iter()
                    .map(|a| (f(a, "fault_round_us") - f(a, "round_med_us")) / 1e3)
                    .collect();
                row["kill_to_reexecuted_ms"] = json!(med(name, "fault_round_us") / 1e3);
                row["recovery_extra_ms"] = json!(median(&rec));
            }
        } else if name != original {
            row["overhead_pct"] = json!((ratio(name) - 1.0) * 100.0);
        }
        if !ctx.out.json_mode() {
            eprintln!("{row}");
        }
        ctx.out.json(&row);
    }
    Ok(())
}

/// The kernel numbers (per slave, from 0) that start a wait in an FWI
/// run: per frequency and gradient iteration, the gradient's kernel, then
/// (with line-search tests) the first of the trials' kernels.
fn fwi_wait_starts(freqs: usize, grads: usize, tests: usize) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut seq = 0;
    for _ in 0..freqs * grads {
        starts.push(seq);
        seq += 1;
        if tests > 0 {
            starts.push(seq);
            seq += tests;
        }
    }
    starts
}

/// The FWI fault plan: `errors` first-execution kills of the last slave
/// (or of its last worker), each at the first kernel of a different wait,
/// evenly spread over the waits. One kill per wait: the kernels of a
/// wait after a killed one are re-executions, which mark no fault point.
/// One error is `slave.{S}.4@1` in the bench's FWI run (the middle).
fn fwi_plan(
    fault: FwiFault,
    errors: usize,
    shots: usize,
    workers: usize,
    waits: &[usize],
) -> Result<String> {
    if errors == 0 || errors > waits.len() {
        bail!(
            "--fwi-errors {errors}: between 1 and {} (the run's waits)",
            waits.len()
        );
    }
    let (s, w) = (shots.saturating_sub(1), workers.saturating_sub(1));
    let gap = waits.len() / errors;
    let plan: Vec<String> = (0..errors)
        .map(|j| waits[j * waits.len() / errors + (gap - 1) / 2])
        .map(|n| match fault {
            FwiFault::Slave => format!("slave.{s}.{n}@1"),
            FwiFault::Worker => format!("worker.{s}.{n}.{w}@1"),
        })
        .collect();
    Ok(plan.join(","))
}

/// The N-body configurations of `--nbody-mode error-each` (one booster):
/// `original`, `error-free`, then an error in each task, at the middle
/// step: `error` for the global task, `error-K` for the K-th task of the
/// step (partial: `forces`, `update`).
fn nbody_error_each(global: bool, steps: usize) -> Vec<Config> {
    let mid = steps / 2;
    let mut v = vec![
        Config::new("original").arg("--no-recover"),
        Config::new("error-free"),
    ];
    if global {
        let mut c = Config::new("error").faults(format!("booster.0.{mid}@1"));
        c.error_task = Some("global");
        v.push(c);
    } else {
        // One booster: per step one `forces` (the ring has one block, no
        // `exchange`) and one `update`; task numbers from 0 at the master.
        for (k, task) in ["forces", "update"].into_iter().enumerate() {
            let mut c = Config::new(&format!("error-{}", k + 1))
                .faults(format!("booster.0.{}@1", mid * 2 + k));
            c.error_task = Some(task);
            v.push(c);
        }
    }
    v
}

/// `pertinax-bench offload`.
///
/// # Errors
/// A missing program, a launch that fails, over-runs or is not verified.
pub fn run(ctx: &mut Context, o: &OffloadOpts) -> Result<()> {
    let dir = setup::apps_dir(o.apps.as_deref())?;
    let prog = |name: &str| setup::app(&dir, name);
    let reps = if ctx.quick { 40 } else { o.reps };
    let mut cases = Vec::new();
    for &m in &o.masters {
        cases.push(Case {
            name: "hello",
            prog: prog("pertinax-offhello")?,
            tag: "OFFHELLO ",
            masters: m,
            boosters: m,
            processes: 2 * m,
            args: vec!["--reps".into(), reps.to_string()],
            configs: paper_configs(&format!("hello.{}.{}@1", m - 1, reps / 2), m),
            tasks_per_master: reps,
            notes: Vec::new(),
        });
    }
    let each = o.nbody_mode == NbodyMode::ErrorEach;
    let n = if each { 1 } else { o.nbody_boosters.max(1) };
    let steps = 10;
    let nb = |version: &str| {
        words(&format!(
            "--version {version} --bodies {} --steps {steps}",
            o.bodies
        ))
    };
    // The global version offloads one task per run, the partial one a
    // `forces` and an `update` per step and booster; the fault hits the
    // middle one.
    for (global, name, tasks) in [
        (true, "nbody-global", 1),
        (false, "nbody-partial", steps * 2 * n),
    ] {
        let middle = if global { steps / 2 } else { tasks / 2 };
        cases.push(Case {
            name,
            prog: prog("pertinax-nbody")?,
            tag: "NBODY ",
            masters: n,
            boosters: n,
            processes: 2 * n,
            args: nb(if global { "global" } else { "partial" }),
            configs: if each {
                nbody_error_each(global, steps)
            } else {
                paper_configs(&format!("booster.{}.{middle}@1", n - 1), n)
            },
            tasks_per_master: tasks,
            notes: vec![("nbody_mode", json!(o.nbody_mode.name()))],
        });
    }
    let (shots, workers, freqs, grads, tests) = (o.shots.max(1), 2, 2, 2, 2);
    let fwi_faults = fwi_plan(
        o.fwi_faults,
        o.fwi_errors as usize,
        shots,
        workers,
        &fwi_wait_starts(freqs, grads, tests),
    )?;
    cases.push(Case {
        name: "fwi",
        prog: prog("pertinax-fwi")?,
        tag: "FWI ",
        masters: 1,
        boosters: shots,
        processes: 1 + shots * (1 + workers),
        args: words(&format!(
            "--shots {shots} --workers {workers} --grid 256 --freqs {freqs} --grads {grads} \
             --tests {tests} --work 64"
        )),
        configs: paper_configs(&fwi_faults, shots),
        tasks_per_master: freqs * grads * (1 + tests) * shots,
        notes: vec![
            ("fwi_faults", json!(o.fwi_faults.name())),
            ("fwi_errors", json!(o.fwi_errors)),
        ],
    });
    for c in cases
        .iter()
        .filter(|c| o.cases.is_empty() || o.cases.iter().any(|x| x == c.name))
    {
        run_case(ctx, c)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fwi_plans_spread_one_kill_per_wait() {
        let waits = fwi_wait_starts(2, 2, 2);
        assert_eq!(waits, [0, 1, 3, 4, 6, 7, 9, 10]);
        // One error: the plan the bench always used.
        assert_eq!(
            fwi_plan(FwiFault::Slave, 1, 2, 2, &waits).unwrap(),
            "slave.1.4@1"
        );
        assert_eq!(
            fwi_plan(FwiFault::Worker, 2, 2, 2, &waits).unwrap(),
            "worker.1.1.1@1,worker.1.7.1@1"
        );
        for k in 1..=waits.len() {
            let plan = fwi_plan(FwiFault::Slave, k, 2, 2, &waits).unwrap();
            let shots: std::collections::HashSet<&str> = plan.split(',').collect();
            assert_eq!(shots.len(), k, "{plan}");
        }
        assert!(fwi_plan(FwiFault::Slave, 0, 2, 2, &waits).is_err());
        assert!(fwi_plan(FwiFault::Slave, 9, 2, 2, &waits).is_err());
    }

    #[test]
    fn nbody_error_each_kills_each_task_of_the_middle_step() {
        let names = |v: &[Config]| -> Vec<(String, Option<String>)> {
            v.iter()
                .map(|c| (c.name.clone(), c.faults.clone()))
                .collect()
        };
        let partial = nbody_error_each(false, 10);
        assert_eq!(
            names(&partial),
            [
                ("original".to_string(), None),
                ("error-free".to_string(), None),
                ("error-1".to_string(), Some("booster.0.10@1".to_string())),
                ("error-2".to_string(), Some("booster.0.11@1".to_string())),
            ]
        );
        let global = nbody_error_each(true, 10);
        assert_eq!(global[2].faults.as_deref(), Some("booster.0.5@1"));
        assert_eq!(global[0].extra, ["--no-recover"]);
    }
}
