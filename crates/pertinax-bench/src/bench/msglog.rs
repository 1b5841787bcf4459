//! Message logging (issue 19; the paper's section 8): `pertinax-cg` and
//! `pertinax-stencil` of pertinax-apps under `pertinax run`, as the
//! paper evaluates its CG and LULESH.
//!
//! Two parts:
//!
//! - [`overhead`] (tables 3 and 4): per program, class or grid and rank
//!   count, `--mode plain`, `--mode transactional` and `--mode logged`
//!   without failure, interleaved launch by launch (the order rotates
//!   each round); the medians of the programs' `time_s`, the per-round
//!   ratios, the logged run's breakdown (communication, payload copies,
//!   transactional copies, checkpoints as fractions of `time_s`) and its
//!   log sizes against the memory they add to (the registered state, and
//!   for CG the rank's matrix block, computed here with
//!   `pertinax_apps::cg::makea`);
//! - [`rollback`] (figures 6, 7 and 8): a fixed victim killed at its
//!   fault point `iter` (`--kill V@iter#K`: K-th hit = iteration K-1) in
//!   one run per crash iteration over a window of checkpoint intervals,
//!   with local rollback (`--rollback auto`), global rollback
//!   (`--rollback global`) and the hybrid (`--log-cap N`): the iterations
//!   recomputed (summed over ranks), the time, and the rollback the run
//!   reported.
//!
//! Every launch must exit 0 and print its summary line with
//! `verified=true` (CG: NPB's zeta check; stencil: every block bitwise
//! equal to the one-process computation), or the benchmark stops with an
//! error. Then the goals of the issue are judged on what was measured.
//! Rows say how many ranks shared each core.

mod overhead;
mod rollback;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use pertinax_apps::cg::{self, Class, Layout};
use serde_json::json;

use super::Context;
use crate::cli::{MsglogApp, MsglogOpts, MsglogPart};
use crate::report::{verdict, Table};
use crate::run::{Cmd, Launch};

/// Launches per configuration unless `--launches` is given.
const DEFAULT_LAUNCHES: usize = 3;

/// The fields of a program's summary line (`cg class=S ranks=4 ...`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    fields: HashMap<String, String>,
}

impl Summary {
    /// The first line of `stdout` that starts with `app`'s word.
    pub fn parse(stdout: &str, app: MsglogApp) -> Option<Summary> {
        let line = stdout.lines().find(|l| {
            let mut w = l.split_whitespace();
            w.next() == Some(app.name())
        })?;
        Some(Summary {
            fields: line
                .split_whitespace()
                .filter_map(|w| w.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        })
    }

    /// Field `key`'s text.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    /// Field `key` as a number (NaN when absent, so that a missing field
    /// shows in the rows instead of stopping them).
    pub fn f(&self, key: &str) -> f64 {
        self.get(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    }
}

/// The summary of a launch that counts, or why it does not: exit 0, the
/// summary line, `verified=true`.
pub fn judge(l: &Launch, app: MsglogApp, cmd: &Cmd) -> Result<Summary> {
    let tail = || {
        let lines: Vec<&str> = l.outcome.stderr.lines().rev().take(6).collect();
        lines.into_iter().rev().collect::<Vec<_>>().join("\n    ")
    };
    let Some(s) = Summary::parse(&l.outcome.stdout, app) else {
        bail!(
            "`{}`: {}, no summary line; stderr:\n    {}",
            cmd.display(),
            l.outcome.status(),
            tail()
        );
    };
    if s.get("verified") != Some("true") {
        bail!(
            "`{}`: not verified (verified={}); stderr:\n    {}",
            cmd.display(),
            s.get("verified").unwrap_or("?"),
            tail()
        );
    }
    if !l.outcome.ok() {
        bail!(
            "`{}`: {} after a verified summary; stderr:\n    {}",
            cmd.display(),
            l.outcome.status(),
            tail()
        );
    }
    Ok(s)
}

/// Where the programs are and how to start them.
#[derive(Debug)]
pub struct Programs {
    launcher: PathBuf,
    dir: PathBuf,
}

impl Programs {
    /// The programs' directory (`--apps`, else next to this executable);
    /// an error naming the build command if one of `apps` is missing.
    ///
    /// # Errors
    /// A missing program.
    pub fn find(launcher: &Path, apps: Option<&Path>, wanted: &[MsglogApp]) -> Result<Programs> {
        let dir = crate::setup::apps_dir(apps)?;
        for a in wanted {
            crate::setup::app(&dir, a.binary())?;
        }
        Ok(Programs {
            launcher: launcher.to_path_buf(),
            dir,
        })
    }

    /// `pertinax run -n ranks [launcher_args] -- <app> args`.
    pub fn cmd(
        &self,
        app: MsglogApp,
        ranks: usize,
        launcher_args: &[String],
        args: &[String],
    ) -> Cmd {
        Cmd::new(&self.launcher)
            .args(["run", "-n", &ranks.to_string()])
            .args(launcher_args)
            .arg("--")
            .arg(self.dir.join(app.binary()))
            .args(args)
    }
}

/// A program's problem: CG's class or the stencil's grid and iterations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Which program.
    pub app: MsglogApp,
    /// The rows' `class`: `S`, `W`, `A`, or the grid `48x48x48`.
    pub class: String,
    /// CG's class (none for the stencil).
    pub cg_class: Option<Class>,
    /// Iterations of a run.
    pub iterations: u64,
    /// The program's arguments before the message-logging options.
    pub args: Vec<String>,
}

impl Problem {
    /// `pertinax-cg CLASS` (15 iterations).
    pub fn cg(class: Class) -> Problem {
        Problem {
            app: MsglogApp::Cg,
            class: class.to_string(),
            cg_class: Some(class),
            iterations: class.niter(),
            args: vec![class.to_string()],
        }
    }

    /// `pertinax-stencil --nx --ny --nz --iters`.
    pub fn stencil(grid: crate::cli::Grid3, iters: u64) -> Problem {
        Problem {
            app: MsglogApp::Stencil,
            class: grid.to_string(),
            cg_class: None,
            iterations: iters,
            args: format!(
                "--nx {} --ny {} --nz {} --iters {iters}",
                grid.nx, grid.ny, grid.nz
            )
            .split_whitespace()
            .map(String::from)
            .collect(),
        }
    }
}

/// The largest CG matrix block of a rank, in bytes as `pertinax-cg` holds
/// it (CSR: row starts, u32 columns, f64 values); `None` when the class
/// does not run on `ranks`.
pub fn matrix_block_bytes(class: Class, ranks: usize) -> Option<u64> {
    (0..ranks)
        .map(|r| {
            let l = Layout::new(class.na(), r, ranks).ok()?;
            let m = cg::makea(class, &l);
            Some(
                (m.rowstr.len() * std::mem::size_of::<usize>()
                    + m.colidx.len() * std::mem::size_of::<u32>()
                    + m.a.len() * std::mem::size_of::<f64>()) as u64,
            )
        })
        .try_fold(0u64, |acc, b| b.map(|b| acc.max(b)))
}

/// `4 ranks on 2 cores (2 per core)`.
pub fn per_core(ranks: usize, cores: usize) -> String {
    let c = cores.max(1);
    format!(
        "{ranks} ranks on {c} cores ({} per core)",
        ranks as f64 / c as f64
    )
}

/// The JSON number of a float (`null` when not finite), rounded to 6
/// decimals so that rows stay readable.
pub fn jf(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!((x * 1e6).round() / 1e6)
    } else {
        serde_json::Value::Null
    }
}

/// `pertinax-bench msglog`.
///
/// # Errors
/// A missing program, a launch that fails or is not verified.
pub fn run(ctx: &mut Context, o: &MsglogOpts) -> Result<()> {
    let progs = Programs::find(&ctx.launcher, o.apps.as_deref(), &o.cases)?;
    let pace = ctx.pace_or(DEFAULT_LAUNCHES, ctx.limit);
    ctx.out.text(&format!(
        "\n## msglog: message logging (pertinax-msglog) in pertinax-cg and pertinax-stencil\n\n\
         This machine has {c} cores: N ranks share them (N/{c} per core), so times include \
         waiting for a time slice; other jobs may share the machine too (others' CPU per \
         launch on stderr).\n",
        c = ctx.cores
    ));
    let mut over = Vec::new();
    if o.parts.contains(&MsglogPart::Overhead) {
        over = overhead::run(ctx, &progs, o, pace)?;
    }
    let mut roll = Vec::new();
    if o.parts.contains(&MsglogPart::Rollback) {
        roll = rollback::run(ctx, &progs, o)?;
    }
    goals(ctx, &over, &roll);
    Ok(())
}

/// The goals, judged on what ran: payload logging ≤ 3% and
/// transactional copies ≤ 1% of CG class A's run time at 8 ranks; local
/// rollback recomputes only the failed rank's iterations since its
/// checkpoint; local recovery no slower than global.
fn goals(ctx: &Context, over: &[overhead::Row], roll: &[rollback::Row]) {
    let mut t = Table::new(["goal", "measured", "verdict"]);
    let mut emit = |goal: &str, measured: String, value: Option<f64>, ok: &dyn Fn(f64) -> bool| {
        let v = verdict(value, ok);
        ctx.out.json(&json!({
            "bench": "msglog", "case": "goal", "goal": goal,
            "measured": measured, "value": value.map_or(serde_json::Value::Null, jf),
            "verdict": v,
        }));
        t.row(vec![goal.to_string(), measured, v.to_string()]);
    };
    let a8 = over
        .iter()
        .find(|r| r.app == MsglogApp::Cg && r.class == "A" && r.ranks == 8);
    let pct = |x: f64| x * 100.0;
    emit(
        "payload logging <= 3% of run time (CG class A, 8 ranks)",
        a8.map_or("not run".into(), |r| {
            format!(
                "log copies {:.2}% of the logged run's time_s; end to end logged/transactional {:+.1}%",
                pct(r.log_copy_frac),
                pct(r.logged_over_txn - 1.0)
            )
        }),
        a8.map(|r| pct(r.log_copy_frac)),
        &|v| v <= 3.0,
    );
    emit(
        "transactional copies <= 1% of run time (CG class A, 8 ranks)",
        a8.map_or("not run".into(), |r| {
            format!("{:.3}% of the logged run's time_s", pct(r.txn_copy_frac))
        }),
        a8.map(|r| pct(r.txn_copy_frac)),
        &|v| v <= 1.0,
    );
    // A survivor that noticed the failure inside an iteration aborts it
    // and runs it again (at most one each: the library's local rollback);
    // beyond that, only the failed rank may recompute.
    let local: Vec<&rollback::Row> = roll.iter().filter(|r| r.policy == "local").collect();
    let extra = |r: &rollback::Row| r.recomputed as i64 - r.failed_rank_redo as i64;
    let exact = local.iter().filter(|r| extra(r) == 0).count();
    let bad = local
        .iter()
        .filter(|r| r.rollback != "local" || extra(r) < 0 || extra(r) > r.ranks as i64 - 1)
        .count();
    emit(
        "local rollback recomputes only the failed rank's iterations since its checkpoint",
        if local.is_empty() {
            "not run".into()
        } else {
            format!(
                "{} local runs: {exact} recomputed exactly crash_iter - checkpoint, the others \
                 at most {} more (survivors' aborted in-flight iterations, at most one per \
                 survivor); {bad} runs beyond that or not reported local",
                local.len(),
                local.iter().map(|r| extra(r)).max().unwrap_or(0)
            )
        },
        (!local.is_empty()).then_some(bad as f64),
        &|v| v == 0.0,
    );
    let ratio = rollback::time_ratio(roll, "local", "global");
    emit(
        "recovery with local rollback no slower than global rollback",
        ratio.map_or("not run".into(), |r| {
            format!("median over crash iterations of time_s local/global: {r:.3}")
        }),
        ratio,
        &|v| v <= 1.0,
    );
    ctx.out
        .text(&format!("\n### msglog: goals\n\n{}", t.render()));
}

#[cfg(test)]
mod tests {
    use super::*;

    const CG_LINE: &str = "cg class=S ranks=4 zeta=8.5971775078648e+00 zeta_bits=402131c140145f4c \
        verified=true rollback=local recoveries=1 iterations_run=56 recomputed=2 replayed=210 \
        logged_bytes_per_rank_iter=199483 log_peak_bytes=1166528 state_bytes=5618 \
        comm_s=0.001238 log_copy_s=0.001300 txn_copy_s=0.000014 ckpt_s=0.006726 \
        recovery_s=0.019303 time_s=0.133019";

    #[test]
    fn summary_lines_parse() {
        let out = format!("noise\n{CG_LINE}\n");
        let s = Summary::parse(&out, MsglogApp::Cg).unwrap();
        assert_eq!(s.get("rollback"), Some("local"));
        assert_eq!(s.f("recomputed"), 2.0);
        assert_eq!(s.f("time_s"), 0.133019);
        assert!(s.f("absent").is_nan());
        assert!(Summary::parse(&out, MsglogApp::Stencil).is_none());
        // `cgx` is not `cg`.
        assert!(Summary::parse("cgx a=1\n", MsglogApp::Cg).is_none());
    }

    #[test]
    fn cg_matrix_blocks() {
        // Class S on 2 ranks: two blocks of 1400 x 700 holding the whole
        // matrix between them.
        let b = matrix_block_bytes(Class::S, 2).unwrap();
        assert!(b > 1401 * 8, "{b}");
        assert!(matrix_block_bytes(Class::S, 3).is_none());
        assert_eq!(jf(f64::NAN), serde_json::Value::Null);
        assert_eq!(jf(0.1234567), json!(0.123457));
    }
}
