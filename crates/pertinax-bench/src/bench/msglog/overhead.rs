//! The overhead part (the paper's tables 3 and 4): per program, class or
//! grid and rank count, `--mode plain`, `--mode transactional` and
//! `--mode logged` without failure, interleaved launch by launch.
//!
//! Times are the programs' own `time_s` (the slowest rank's wall time of
//! the iterations, inside the library's run), medians over launches; the
//! ratios are medians of per-round ratios (round *i* of the three modes
//! ran back to back). The breakdown is the logged run's: the maxima over
//! ranks of the seconds in communication, payload copies into the log,
//! state copies of the transactional iterations and checkpoints, each as
//! a fraction of the same launch's `time_s`, median over launches. The
//! sizes: payload logged per rank and iteration, the log's peak (the most
//! any rank held, reached just before a checkpoint clears it), the
//! registered state (one checkpoint), and for CG the largest matrix block
//! of a rank; the memory base is state plus matrix block for CG and the
//! state alone for the stencil (its state is all of its data).

use anyhow::Result;
use serde_json::json;

use super::{jf, judge, matrix_block_bytes, per_core, Problem, Programs, Summary};
use crate::bench::{Context, Pace};
use crate::cli::{MsglogApp, MsglogOpts};
use crate::report::Table;
use crate::run::Variant;
use crate::stats::median;

/// The modes, in the order of the variants.
pub const MODES: [&str; 3] = ["plain", "transactional", "logged"];

/// One row: a problem at a rank count, its three modes.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub app: MsglogApp,
    pub class: String,
    pub ranks: usize,
    pub iterations: u64,
    pub cp_int: u64,
    pub cores: usize,
    pub launches: usize,
    /// Medians of `time_s` per mode (plain, transactional, logged).
    pub time_s: [f64; 3],
    pub logged_over_plain: f64,
    pub txn_over_plain: f64,
    pub logged_over_txn: f64,
    /// The logged run's seconds (medians): comm, log copy, txn copy, ckpt.
    pub comm_s: f64,
    pub log_copy_s: f64,
    pub txn_copy_s: f64,
    pub ckpt_s: f64,
    /// The same as fractions of `time_s` (medians of per-launch fractions).
    pub comm_frac: f64,
    pub log_copy_frac: f64,
    pub txn_copy_frac: f64,
    pub ckpt_frac: f64,
    pub logged_bytes_per_rank_iter: f64,
    pub log_peak_bytes: f64,
    pub state_bytes: f64,
    pub matrix_block_bytes: Option<u64>,
    pub others_cpu: Option<f64>,
    pub args: String,
}

fn med(xs: impl IntoIterator<Item = f64>) -> f64 {
    median(&xs.into_iter().collect::<Vec<_>>()).unwrap_or(f64::NAN)
}

impl Row {
    /// The row of `runs[mode][round]` (every launch counted).
    #[allow(clippy::too_many_arguments)]
    pub fn of(
        p: &Problem,
        ranks: usize,
        cp_int: u64,
        cores: usize,
        runs: &[Vec<Summary>; 3],
        matrix_block_bytes: Option<u64>,
        others_cpu: Option<f64>,
        args: String,
    ) -> Row {
        let t = |m: usize| med(runs[m].iter().map(|s| s.f("time_s")));
        let ratio = |a: usize, b: usize| {
            med(runs[a]
                .iter()
                .zip(&runs[b])
                .map(|(x, y)| x.f("time_s") / y.f("time_s")))
        };
        let logged = &runs[2];
        let secs = |k: &str| med(logged.iter().map(|s| s.f(k)));
        let frac = |k: &str| med(logged.iter().map(|s| s.f(k) / s.f("time_s")));
        Row {
            app: p.app,
            class: p.class.clone(),
            ranks,
            iterations: p.iterations,
            cp_int,
            cores,
            launches: runs[0].len(),
            time_s: [t(0), t(1), t(2)],
            logged_over_plain: ratio(2, 0),
            txn_over_plain: ratio(1, 0),
            logged_over_txn: ratio(2, 1),
            comm_s: secs("comm_s"),
            log_copy_s: secs("log_copy_s"),
            txn_copy_s: secs("txn_copy_s"),
            ckpt_s: secs("ckpt_s"),
            comm_frac: frac("comm_s"),
            log_copy_frac: frac("log_copy_s"),
            txn_copy_frac: frac("txn_copy_s"),
            ckpt_frac: frac("ckpt_s"),
            logged_bytes_per_rank_iter: secs("logged_bytes_per_rank_iter"),
            log_peak_bytes: secs("log_peak_bytes"),
            state_bytes: secs("state_bytes"),
            matrix_block_bytes,
            others_cpu,
            args,
        }
    }

    /// The bytes the log adds to: state plus matrix block (CG), state
    /// (stencil).
    fn memory_base(&self) -> (f64, &'static str) {
        match self.matrix_block_bytes {
            Some(m) => (self.state_bytes + m as f64, "state+matrix_block"),
            None => (self.state_bytes, "state"),
        }
    }

    /// The JSON row.
    pub fn json(&self) -> serde_json::Value {
        let (base, base_name) = self.memory_base();
        json!({
            "bench": "msglog",
            "case": "overhead",
            "app": self.app.name(),
            "class": self.class,
            "ranks": self.ranks,
            "cores": self.cores,
            "ranks_per_core": self.ranks as f64 / self.cores.max(1) as f64,
            "iterations": self.iterations,
            "cp_int": self.cp_int,
            "launches": self.launches,
            "plain_s": jf(self.time_s[0]),
            "transactional_s": jf(self.time_s[1]),
            "logged_s": jf(self.time_s[2]),
            "logged_over_plain": jf(self.logged_over_plain),
            "transactional_over_plain": jf(self.txn_over_plain),
            "logged_over_transactional": jf(self.logged_over_txn),
            "comm_s": jf(self.comm_s),
            "log_copy_s": jf(self.log_copy_s),
            "txn_copy_s": jf(self.txn_copy_s),
            "ckpt_s": jf(self.ckpt_s),
            "comm_frac": jf(self.comm_frac),
            "log_copy_frac": jf(self.log_copy_frac),
            "txn_copy_frac": jf(self.txn_copy_frac),
            "ckpt_frac": jf(self.ckpt_frac),
            "logged_bytes_per_rank_iter": jf(self.logged_bytes_per_rank_iter),
            "log_peak_bytes": jf(self.log_peak_bytes),
            "state_bytes": jf(self.state_bytes),
            "matrix_block_bytes": self.matrix_block_bytes,
            "memory_base": base_name,
            "memory_base_bytes": jf(base),
            "payload_per_iter_pct_of_base": jf(self.logged_bytes_per_rank_iter / base * 100.0),
            "log_peak_pct_of_base": jf(self.log_peak_bytes / base * 100.0),
            "others_cpu": self.others_cpu.map_or(serde_json::Value::Null, jf),
            "args": self.args,
        })
    }
}

/// `1.23 MiB`, `45.6 KiB`, `789 B`.
fn size(b: f64) -> String {
    if !b.is_finite() {
        "-".into()
    } else if b >= 1048576.0 {
        format!("{:.2} MiB", b / 1048576.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// The tables of the rows: times and breakdown (table 4), sizes (table 3).
pub fn tables(rows: &[Row]) -> String {
    let mut t4 = Table::new([
        "app",
        "class",
        "ranks (per core)",
        "plain s",
        "transactional s",
        "logged s",
        "logged/plain",
        "transactional/plain",
        "logged/transactional",
        "comm",
        "log copy",
        "txn copy",
        "ckpt",
        "others' CPU",
    ]);
    let mut t3 = Table::new([
        "app",
        "class",
        "ranks",
        "payload per rank per iteration",
        "log peak",
        "state",
        "CG matrix block",
        "payload/iteration % of base",
        "log peak % of base",
    ]);
    for r in rows {
        let (base, _) = r.memory_base();
        t4.row(vec![
            r.app.name().into(),
            r.class.clone(),
            format!("{} ({})", r.ranks, r.ranks as f64 / r.cores.max(1) as f64),
            format!("{:.3}", r.time_s[0]),
            format!("{:.3}", r.time_s[1]),
            format!("{:.3}", r.time_s[2]),
            format!("{:.3}", r.logged_over_plain),
            format!("{:.3}", r.txn_over_plain),
            format!("{:.3}", r.logged_over_txn),
            pct(r.comm_frac),
            pct(r.log_copy_frac),
            pct(r.txn_copy_frac),
            pct(r.ckpt_frac),
            r.others_cpu.map_or("n/a".into(), pct),
        ]);
        t3.row(vec![
            r.app.name().into(),
            r.class.clone(),
            r.ranks.to_string(),
            size(r.logged_bytes_per_rank_iter),
            size(r.log_peak_bytes),
            size(r.state_bytes),
            r.matrix_block_bytes.map_or("-".into(), |m| size(m as f64)),
            format!("{:.3}%", r.logged_bytes_per_rank_iter / base * 100.0),
            format!("{:.2}%", r.log_peak_bytes / base * 100.0),
        ]);
    }
    format!(
        "\n### msglog overhead (table 4): medians of time_s over launches; ratios: medians of \
         per-round ratios; comm, log copy, txn copy, ckpt: the logged run's maxima over ranks \
         as fractions of its time_s\n\n{}\n\
         ### msglog log sizes (table 3): the logged run; base = state + CG matrix block (CG), \
         state (stencil)\n\n{}",
        t4.render(),
        t3.render()
    )
}

/// The problems of the part, in order: CG per class, then the stencil,
/// each at every rank count.
fn problems(o: &MsglogOpts) -> Vec<(Problem, usize)> {
    let mut v = Vec::new();
    for app in &o.cases {
        let ps: Vec<Problem> = match app {
            MsglogApp::Cg => o.classes.iter().map(|&c| Problem::cg(c)).collect(),
            MsglogApp::Stencil => vec![Problem::stencil(o.grid, o.stencil_iters)],
        };
        for p in ps {
            for &n in &o.ranks {
                v.push((p.clone(), n));
            }
        }
    }
    v
}

/// Runs the part, prints its rows and tables.
///
/// # Errors
/// A launch that cannot start, fails or is not verified.
pub fn run(ctx: &mut Context, progs: &Programs, o: &MsglogOpts, pace: Pace) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (p, ranks) in problems(o) {
        let args = |mode: &str| {
            let mut a = p.args.clone();
            a.extend(["--mode", mode, "--cp-int", &o.cp_int.to_string()].map(String::from));
            a
        };
        let variants: Vec<Variant> = MODES
            .iter()
            .map(|m| Variant::new(*m, progs.cmd(p.app, ranks, &[], &args(m))))
            .collect();
        let title = format!(
            "msglog overhead {} {} {}",
            p.app.name(),
            p.class,
            per_core(ranks, ctx.cores)
        );
        let c = ctx.campaign(&title, variants, pace)?;
        // Launch i of every mode ran in round i: the launches of a mode
        // are in round order.
        let mut runs: [Vec<Summary>; 3] = Default::default();
        for l in &c.launches {
            runs[l.variant].push(judge(l, p.app, &c.variants[l.variant].cmd)?);
        }
        let others = median(
            &c.launches
                .iter()
                .filter_map(|l| l.others_cpu)
                .collect::<Vec<_>>(),
        );
        let matrix = p.cg_class.and_then(|c| matrix_block_bytes(c, ranks));
        let row = Row::of(
            &p,
            ranks,
            o.cp_int,
            ctx.cores,
            &runs,
            matrix,
            others,
            progs.cmd(p.app, ranks, &[], &args("MODE")).display(),
        );
        ctx.out.json(&row.json());
        rows.push(row);
    }
    if !rows.is_empty() {
        ctx.out.text(&tables(&rows));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(mode_time: f64, log_copy: f64) -> Summary {
        let out = format!(
            "cg class=A ranks=8 zeta=1 verified=true rollback=none recoveries=0 \
             logged_bytes_per_rank_iter=1000 log_peak_bytes=6000 state_bytes=100 \
             comm_s=0.5 log_copy_s={log_copy} txn_copy_s=0.001 ckpt_s=0.01 time_s={mode_time}"
        );
        Summary::parse(&out, MsglogApp::Cg).unwrap()
    }

    #[test]
    fn rows_pair_rounds_and_describe_themselves() {
        let runs = [
            vec![line(1.0, 0.0), line(2.0, 0.0), line(1.0, 0.0)],
            vec![line(1.1, 0.0), line(2.2, 0.0), line(1.1, 0.0)],
            vec![line(1.2, 0.02), line(2.4, 0.04), line(1.0, 0.01)],
        ];
        let p = Problem::cg(pertinax_apps::cg::Class::A);
        let r = Row::of(
            &p,
            8,
            5,
            2,
            &runs,
            Some(900),
            Some(0.1),
            "A --mode MODE".into(),
        );
        assert_eq!(r.time_s, [1.0, 1.1, 1.2]);
        // Per round: 1.2, 1.2, 1.0.
        assert!((r.logged_over_plain - 1.2).abs() < 1e-12);
        assert!(
            (r.log_copy_frac - 0.0166666).abs() < 1e-6,
            "{}",
            r.log_copy_frac
        );
        let j = r.json();
        for k in [
            "plain_s",
            "logged_s",
            "transactional_s",
            "logged_bytes_per_rank_iter",
            "log_peak_bytes",
            "state_bytes",
        ] {
            assert!(j[k].is_number(), "{k}: {j}");
        }
        assert_eq!(j["app"], "cg");
        assert_eq!(j["class"], "A");
        assert_eq!(j["ranks_per_core"], 4.0);
        assert_eq!(j["memory_base"], "state+matrix_block");
        assert_eq!(j["memory_base_bytes"], 1000.0);
        assert_eq!(j["payload_per_iter_pct_of_base"], 100.0);
        let text = tables(&[r]);
        assert!(text.contains("| cg  | A     | 8 (4)"), "{text}");
    }
}
