//! The rollback part (the paper's figures 6, 7 and 8): a fixed victim
//! killed in one run per crash iteration, over a window of checkpoint
//! intervals starting at the first checkpoint after 0, under each policy:
//!
//! - `local`: `--rollback auto` with the whole log (local rollback);
//! - `global`: `--rollback global` (every rank back to the checkpoint);
//! - `hybrid`: `--rollback auto --log-cap N` (local while the logs of the
//!   first N iterations after the checkpoint reach, global past them).
//!
//! The kill is `--kill V@iter#K`: the victim dies at its K-th hit of the
//! library's fault point `iter`, i.e. at the start of iteration K-1 (the
//! crash iteration), after that iteration's checkpoint if it has one. The
//! runs of one crash iteration are interleaved (one round). A row gives
//! what the run reported: `recomputed` (iterations recomputed, summed over
//! ranks), `time_s` (slowest rank's time of the whole run, recovery
//! included), `rollback`, and `failed_rank_redo` = crash iteration minus
//! its checkpoint, what the failed rank alone must run again (the paper's
//! minimum).

use anyhow::{bail, Result};
use serde_json::json;

use super::{jf, judge, per_core, Problem, Programs};
use crate::bench::{Context, Pace};
use crate::cli::{MsglogApp, MsglogOpts, Policy};
use crate::report::Table;
use crate::run::Variant;
use crate::stats::median;

/// One run: a policy and a crash iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub app: MsglogApp,
    pub class: String,
    pub ranks: usize,
    pub cores: usize,
    pub iterations: u64,
    pub cp_int: u64,
    pub victim: usize,
    pub policy: &'static str,
    pub log_cap: Option<u64>,
    pub crash_iter: u64,
    pub failed_rank_redo: u64,
    pub rollback: String,
    pub recoveries: f64,
    pub recomputed: u64,
    pub iterations_run: u64,
    pub replayed: u64,
    pub time_s: f64,
    pub recovery_s: f64,
    pub others_cpu: Option<f64>,
    pub args: String,
}

impl Row {
    /// The JSON row.
    pub fn json(&self) -> serde_json::Value {
        json!({
            "bench": "msglog",
            "case": "rollback",
            "app": self.app.name(),
            "class": self.class,
            "ranks": self.ranks,
            "cores": self.cores,
            "ranks_per_core": self.ranks as f64 / self.cores.max(1) as f64,
            "iterations": self.iterations,
            "cp_int": self.cp_int,
            "victim": self.victim,
            "policy": self.policy,
            "log_cap": self.log_cap,
            "crash_iter": self.crash_iter,
            "kill": format!("{}@iter#{}", self.victim, self.crash_iter + 1),
            "checkpoint_iter": self.crash_iter - self.failed_rank_redo,
            "failed_rank_redo": self.failed_rank_redo,
            "rollback": self.rollback,
            "recoveries": jf(self.recoveries),
            "recomputed": self.recomputed,
            "iterations_run": self.iterations_run,
            "replayed": self.replayed,
            "time_s": jf(self.time_s),
            "recovery_s": jf(self.recovery_s),
            "verified": true,
            "others_cpu": self.others_cpu.map_or(serde_json::Value::Null, jf),
            "args": self.args,
        })
    }
}

/// The crash iterations: from the first checkpoint after 0 (0 if the run
/// has none) over `window` intervals, cut at the last iteration.
pub fn crash_iters(cp_int: u64, window: u64, iterations: u64) -> Vec<u64> {
    let start = if cp_int < iterations { cp_int } else { 0 };
    let end = start
        .saturating_add(window.saturating_mul(cp_int))
        .min(iterations);
    (start..end).collect()
}

/// The median over (app, crash iteration) of `time_s` of policy `a` over
/// policy `b`, when both ran.
pub fn time_ratio(rows: &[Row], a: &str, b: &str) -> Option<f64> {
    let ratios: Vec<f64> = rows
        .iter()
        .filter(|r| r.policy == a)
        .filter_map(|r| {
            rows.iter()
                .find(|q| q.policy == b && q.app == r.app && q.crash_iter == r.crash_iter)
                .map(|q| r.time_s / q.time_s)
        })
        .collect();
    median(&ratios)
}

/// The program's message-logging options for a policy.
fn policy_args(p: Policy, cp_int: u64, cap: u64) -> Vec<String> {
    let mut a = vec![
        "--cp-int".to_string(),
        cp_int.to_string(),
        "--rollback".into(),
    ];
    match p {
        Policy::Local => a.push("auto".into()),
        Policy::Global => a.push("global".into()),
        Policy::Hybrid => a.extend(["auto".into(), "--log-cap".into(), cap.to_string()]),
    }
    a
}

/// The table of one program's rows: a line per crash iteration, per
/// policy recomputed / time_s / rollback.
fn table(rows: &[Row], policies: &[Policy]) -> String {
    let mut head = vec!["crash iter".to_string(), "ckpt".to_string()];
    for p in policies {
        head.push(format!("{} recomputed", p.name()));
        head.push(format!("{} time s", p.name()));
        head.push(format!("{} rollback", p.name()));
    }
    let mut t = Table::new(head);
    let mut iters: Vec<u64> = rows.iter().map(|r| r.crash_iter).collect();
    iters.dedup();
    for it in iters {
        let mut cells = vec![it.to_string()];
        let ckpt = rows.iter().find(|r| r.crash_iter == it);
        cells.push(ckpt.map_or("-".into(), |r| (it - r.failed_rank_redo).to_string()));
        for p in policies {
            match rows
                .iter()
                .find(|r| r.crash_iter == it && r.policy == p.name())
            {
                Some(r) => {
                    cells.push(r.recomputed.to_string());
                    cells.push(format!("{:.3}", r.time_s));
                    cells.push(r.rollback.clone());
                }
                None => cells.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        t.row(cells);
    }
    let mut sums = String::new();
    for p in policies {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.policy == p.name()).collect();
        let rec: u64 = mine.iter().map(|r| r.recomputed).sum();
        let rs = median(&mine.iter().map(|r| r.recovery_s).collect::<Vec<_>>());
        sums.push_str(&format!(
            "- {}: {rec} iterations recomputed over the window; recovery_s median {}\n",
            p.name(),
            rs.map_or("-".into(), |s| format!("{s:.4}"))
        ));
    }
    let redo: u64 = rows
        .iter()
        .filter(|r| r.policy == policies[0].name())
        .map(|r| r.failed_rank_redo)
        .sum();
    sums.push_str(&format!(
        "- the failed rank alone: {redo} iterations (sum of crash iteration - checkpoint)\n"
    ));
    if let Some(r) = time_ratio(rows, "local", "global") {
        sums.push_str(&format!(
            "- time_s local/global, median over crash iterations: {r:.3}\n"
        ));
    }
    format!("{}\n{sums}", t.render())
}

/// Runs the part, prints its rows and tables.
///
/// # Errors
/// A launch that cannot start, fails or is not verified; a victim outside
/// the job.
pub fn run(ctx: &mut Context, progs: &Programs, o: &MsglogOpts) -> Result<Vec<Row>> {
    let ranks = o.rollback_ranks;
    if o.victim >= ranks {
        bail!(
            "--victim {} is not a rank of --rollback-ranks {ranks}",
            o.victim
        );
    }
    let cp = o.rollback_cp_int;
    let mut all = Vec::new();
    for &app in &o.cases {
        let p = match app {
            MsglogApp::Cg => Problem::cg(o.rollback_class),
            MsglogApp::Stencil => Problem::stencil(o.rollback_grid, o.rollback_iters),
        };
        let mut rows = Vec::new();
        for crash in crash_iters(cp, o.window, p.iterations) {
            let kill = vec![
                "--kill".to_string(),
                format!("{}@iter#{}", o.victim, crash + 1),
            ];
            let variants: Vec<Variant> = o
                .policies
                .iter()
                .map(|&pol| {
                    let mut a = p.args.clone();
                    a.extend(policy_args(pol, cp, o.hybrid_log_cap));
                    Variant::new(pol.name(), progs.cmd(app, ranks, &kill, &a))
                })
                .collect();
            let title = format!("msglog rollback {} {} crash {crash}", app.name(), p.class);
            let once = Pace {
                rounds: 1,
                ..ctx.pace()
            };
            let c = ctx.campaign(&title, variants, once)?;
            for l in &c.launches {
                let cmd = &c.variants[l.variant].cmd;
                let s = judge(l, app, cmd)?;
                let pol = o.policies[l.variant];
                let u = |k: &str| s.f(k).max(0.0) as u64;
                let row = Row {
                    app,
                    class: p.class.clone(),
                    ranks,
                    cores: ctx.cores,
                    iterations: p.iterations,
                    cp_int: cp,
                    victim: o.victim,
                    policy: pol.name(),
                    log_cap: (pol == Policy::Hybrid).then_some(o.hybrid_log_cap),
                    crash_iter: crash,
                    failed_rank_redo: crash % cp,
                    rollback: s.get("rollback").unwrap_or("?").to_string(),
                    recoveries: s.f("recoveries"),
                    recomputed: u("recomputed"),
                    iterations_run: u("iterations_run"),
                    replayed: u("replayed"),
                    time_s: s.f("time_s"),
                    recovery_s: s.f("recovery_s"),
                    others_cpu: l.others_cpu,
                    args: cmd.display(),
                };
                ctx.out.json(&row.json());
                rows.push(row);
            }
        }
        rows.sort_by_key(|r| {
            (
                r.crash_iter,
                o.policies.iter().position(|p| p.name() == r.policy),
            )
        });
        if !rows.is_empty() {
            ctx.out.text(&format!(
                "\n### msglog rollback (figures 6-8): {} {}, {}, victim rank {}, cp-int {cp}, \
                 hybrid --log-cap {}; one run per crash iteration and policy\n\n{}",
                app.name(),
                p.class,
                per_core(ranks, ctx.cores),
                o.victim,
                o.hybrid_log_cap,
                table(&rows, &o.policies)
            ));
        }
        all.extend(rows);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_of_crash_iterations() {
        assert_eq!(crash_iters(5, 2, 15), (5..15).collect::<Vec<_>>());
        assert_eq!(crash_iters(5, 1, 15), (5..10).collect::<Vec<_>>());
        assert_eq!(crash_iters(10, 2, 15), (10..15).collect::<Vec<_>>());
        assert_eq!(crash_iters(20, 2, 15), (0..15).collect::<Vec<_>>());
    }

    #[test]
    fn policies_map_to_program_options() {
        assert_eq!(
            policy_args(Policy::Local, 5, 2).join(" "),
            "--cp-int 5 --rollback auto"
        );
        assert_eq!(
            policy_args(Policy::Global, 5, 2).join(" "),
            "--cp-int 5 --rollback global"
        );
        assert_eq!(
            policy_args(Policy::Hybrid, 5, 2).join(" "),
            "--cp-int 5 --rollback auto --log-cap 2"
        );
    }

    #[test]
    fn rollback_rows_describe_themselves() {
        let r = Row {
            app: MsglogApp::Cg,
            class: "W".into(),
            ranks: 4,
            cores: 2,
            iterations: 15,
            cp_int: 5,
            victim: 1,
            policy: "local",
            log_cap: None,
            crash_iter: 7,
            failed_rank_redo: 2,
            rollback: "local".into(),
            recoveries: 1.0,
            recomputed: 2,
            iterations_run: 62,
            replayed: 10,
            time_s: 0.5,
            recovery_s: 0.01,
            others_cpu: None,
            args: String::new(),
        };
        let mut g = r.clone();
        g.policy = "global";
        g.time_s = 0.4;
        let j = r.json();
        assert_eq!(j["case"], "rollback");
        assert_eq!(j["kill"], "1@iter#8");
        assert_eq!(j["checkpoint_iter"], 5);
        assert_eq!(j["verified"], true);
        assert_eq!(
            time_ratio(&[r.clone(), g.clone()], "local", "global"),
            Some(1.25)
        );
        let t = table(&[r, g], &[Policy::Local, Policy::Global]);
        assert!(t.contains("| 7          | 5    | 2"), "{t}");
    }
}
