//! Per-operation overhead of resilient communicators: plain vs `agree`
//! (Legio's agreement per collective) vs `log` (replay log) vs `hier`
//! (Legio's hierarchical communicator, agree, local groups of k ranks), all
//! four in every launch (see [`crate::worker::resilient`] for the method).
//!
//! Each rank count is its own series of launches; each launch prints one
//! `RES` line per (communicator, op, bytes). The tables give, per (op,
//! bytes), each communicator's time per call (median over launches, min–max
//! over launches) and the ratios of two communicators taken launch by
//! launch (both measured in the same launch, minutes apart at most, so the
//! host's state cancels out), median (min–max) over launches.

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::{hier_launch_args, per_core, spread};
use crate::bench::{head, listed, Context};
use crate::cli::{ops_arg, reps_for, CollOp, ResComm, ResilientOpts, Sizes, RES_OPS};
use crate::parse::Record;
use crate::report::{bytes, jnum, verdict, Table};
use crate::run::{last_line, Cmd, Launch, Variant};
use crate::stats::Summary;

/// Launches per rank count unless `--launches` is given.
const DEFAULT_LAUNCHES: usize = 3;

/// Time limit per launch unless `--timeout` is given: a launch at 16 ranks
/// (8× oversubscribed) runs 4 × 4 series of 2000 calls of up to a few
/// hundred µs each (the agreements), and the sweep launch 4 × 22 series.
const DEFAULT_LIMIT: Duration = Duration::from_secs(600);

/// The record key.
const KEY: &str = "RES";

/// The goal: at this rank count, 1-byte resilient (log) collectives at
/// most this many times plain, and cheaper than the agree baseline.
const GOAL_RANKS: usize = 8;
const GOAL_RATIO: f64 = 1.5;

/// One `RES` line:
///
/// ```text
/// RES comm=log op=bcast bytes=1 ranks=8 t_max_us=2.345 t_avg_us=2.100 reps=2000 warmup=200
/// ```
///
/// (a `hier` line ends with ` k=3`).
#[derive(Clone, Debug, PartialEq)]
struct Line {
    comm: ResComm,
    op: CollOp,
    bytes: u64,
    ranks: usize,
    /// The slowest rank's mean time per call, µs.
    t_max: f64,
    /// The mean over ranks, µs.
    t_avg: Option<f64>,
    reps: usize,
    /// The hierarchical communicator's local group size.
    k: Option<usize>,
}

impl Line {
    /// Reads a `RES` record; `None` if a required field is missing.
    fn parse(r: &Record) -> Option<Line> {
        if r.key != KEY {
            return None;
        }
        Some(Line {
            comm: ResComm::from_name(r.get("comm")?)?,
            op: CollOp::from_name(r.get("op")?)?,
            bytes: r.get("bytes")?.parse().ok()?,
            ranks: r.get("ranks")?.parse().ok()?,
            t_max: r.f64("t_max_us").filter(|t| t.is_finite())?,
            t_avg: r.f64("t_avg_us"),
            reps: r.get("reps")?.parse().ok()?,
            k: r.get("k").and_then(|k| k.parse().ok()),
        })
    }
}

/// The number of communicators a launch measures.
const COMMS: usize = ResComm::ALL.len();

/// One (op, bytes) at one rank count: per launch, each communicator's time
/// per call (µs, slowest rank), indexed as [`ResComm::ALL`].
#[derive(Clone, Debug, PartialEq)]
struct Row {
    op: CollOp,
    bytes: u64,
    ranks: usize,
    launches: Vec<[Option<f64>; COMMS]>,
    reps: Option<usize>,
    /// The hierarchical communicator's k, as its lines report it.
    k: Option<usize>,
}

/// A communicator's index in [`ResComm::ALL`].
fn slot(c: ResComm) -> usize {
    ResComm::ALL.iter().position(|&x| x == c).unwrap_or(0)
}

impl Row {
    /// One communicator's times over launches.
    fn summary(&self, c: ResComm) -> Option<Summary> {
        let v: Vec<f64> = self.launches.iter().filter_map(|l| l[slot(c)]).collect();
        Summary::of(&v)
    }

    /// `a / b` launch by launch, over the launches that measured both.
    fn ratio(&self, a: ResComm, b: ResComm) -> Option<Summary> {
        let v: Vec<f64> = self
            .launches
            .iter()
            .filter_map(|l| crate::stats::ratio(l[slot(a)], l[slot(b)]))
            .collect();
        Summary::of(&v)
    }
}

/// The rows of one rank count from the launches that exited cleanly
/// (lines for another rank count are ignored), in report order: op as in
/// [`RES_OPS`], then bytes.
fn rows(ranks: usize, launches: &[Launch]) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    let ok: Vec<&Launch> = launches.iter().filter(|l| l.outcome.ok()).collect();
    for (i, l) in ok.iter().enumerate() {
        for line in l.records.iter().filter_map(Line::parse) {
            if line.ranks != ranks {
                continue;
            }
            let k = match out
                .iter()
                .position(|r| r.op == line.op && r.bytes == line.bytes)
            {
                Some(k) => k,
                None => {
                    out.push(Row {
                        op: line.op,
                        bytes: line.bytes,
                        ranks,
                        launches: vec![[None; COMMS]; ok.len()],
                        reps: Some(line.reps),
                        k: None,
                    });
                    out.len() - 1
                }
            };
            out[k].launches[i][slot(line.comm)] = Some(line.t_max);
            if line.comm == ResComm::Hier {
                out[k].k = out[k].k.or(line.k);
            }
        }
    }
    let order = |op: CollOp| RES_OPS.iter().position(|&x| x == op);
    out.sort_by_key(|r| (order(r.op), r.bytes));
    out
}

/// The worker's arguments for one rank count: 1 byte, plus the sweep's
/// sizes at the sweep's rank count.
fn worker_args(n: usize, o: &ResilientOpts, reps: usize, warmup: usize) -> Vec<String> {
    let mut sizes = vec![1];
    if n == o.sweep_ranks {
        sizes.extend(o.sizes().0);
    }
    vec![
        "worker".into(),
        "resilient".into(),
        "--comms".into(),
        ResComm::ALL.map(ResComm::name).join(","),
        "--ops".into(),
        ops_arg(&RES_OPS),
        "--sizes".into(),
        Sizes(sizes).to_arg(),
        "--reps".into(),
        reps.to_string(),
        "--warmup".into(),
        warmup.to_string(),
    ]
}

/// Runs the overhead part for every rank count (and the sweep's, if it is
/// not among them) and prints its tables.
///
/// # Errors
/// When a program cannot be started.
pub fn run(ctx: &mut Context, o: &ResilientOpts) -> Result<()> {
    let pace = ctx.pace_or(DEFAULT_LAUNCHES, DEFAULT_LIMIT);
    let (reps, warmup) = o.counts(ctx.quick);
    let mut counts = o.ranks.clone();
    if !counts.contains(&o.sweep_ranks) {
        counts.push(o.sweep_ranks);
    }
    let mut all = Vec::new();
    let mut problems = String::new();
    for &n in &counts {
        let k = o.hier_k(n);
        let cmd = Cmd::new(&ctx.launcher)
            .args(["run", "-n", &n.to_string()])
            .args(hier_launch_args(k))
            .arg("--")
            .arg(&ctx.exe)
            .args(worker_args(n, o, reps, warmup));
        let variants = vec![Variant::new(format!("resilient n={n}"), cmd)];
        let title = format!(
            "### resilient overhead: {}; {} launches, each measuring plain, agree, log and hier \
             (k={k})",
            ctx.placement(n),
            pace.rounds
        );
        ctx.out.text(&head(&title, &variants));
        let c = ctx.campaign(&format!("resilient overhead n={n}"), variants, pace)?;
        for l in c.launches.iter().filter(|l| !l.outcome.ok()) {
            let why = last_line(&l.outcome.stderr);
            problems.push_str(&format!("- n={n}: {}: {why}\n", l.outcome.status()));
        }
        let rows = rows(n, &c.launches);
        let mut text = format!(
            "\nresilient overhead, {}, µs per call: per launch and communicator, the slowest \
             rank's mean time per call over a series of {} calls (fewer above 4 KiB: {}) \
             after {} warm-up calls, started by a barrier; the four communicators take turns case \
             by case in the same launch. Cells: median (min–max) over {} launches. Ratios are \
             taken launch by launch (both sides from the same launch), then median (min–max) \
             over launches; agree/plain, log/plain and hier/plain > 1: the resilient \
             communicator is slower. agree = Resilient with Check::Agree (an agreement after \
             every collective, Legio's approach, the library's default); log = Check::Log \
             (replay log, no agreement on the fault-free path); hier = Hierarchical \
             (Check::Agree, its only check): local groups of at most k={k} ranks ({}) joined \
             by a global communicator of their masters and deputies, every collective in \
             stages on the local and the global communicators (local, global, local), each followed by an agreement on its \
             communicator; built at every rank count (the launch's --resilient=hier only passes \
             k to the worker). \
             reduce and allreduce of 1 byte sum u8, of multiples of 8 bytes f64.\n\n",
            ctx.placement(n),
            reps,
            sweep_reps_note(reps),
            warmup,
            c.launches.iter().filter(|l| l.outcome.ok()).count(),
            k_note(o, n),
        );
        text.push_str(&table(&rows).render());
        if let Some(r) = rows.iter().find(|r| r.k.is_some_and(|x| x != k)) {
            text.push_str(&format!(
                "\nnote: the hier lines report k={}, not the k={k} asked for\n",
                r.k.unwrap_or(0)
            ));
        }
        text.push_str(&c.hosts());
        ctx.out.text(&text);
        json_rows(ctx, &rows);
        all.extend(rows);
    }
    let mut text = overview(&all, &o.ranks, ctx.cores);
    text.push_str(&goal(&all));
    text.push_str(&listed("launches without usable results", &problems));
    ctx.out.text(&text);
    Ok(())
}

/// Where k comes from at `n` ranks: `--hier-k` or the paper's equation 4.
fn k_note(o: &ResilientOpts, n: usize) -> String {
    match o.hier_k {
        Some(_) => "--hier-k".into(),
        None => format!("default_k({n}), the paper's equation 4"),
    }
}

/// How the series shrink above 4 KiB, e.g. `32 KiB 250, 1 MiB 20`.
fn sweep_reps_note(base: usize) -> String {
    [32 << 10, 256 << 10, 1 << 20]
        .iter()
        .map(|&b| format!("{} {}", bytes(b as u64), reps_for(b, base)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The per-rank-count table.
fn table(rows: &[Row]) -> Table {
    let mut t = Table::new([
        "op",
        "bytes",
        "ranks",
        "plain µs",
        "agree µs",
        "log µs",
        "hier µs",
        "agree/plain",
        "log/plain",
        "log/agree",
        "hier/plain",
        "hier/agree",
        "hier k",
        "reps",
    ]);
    for r in rows {
        t.row(vec![
            r.op.name().into(),
            bytes(r.bytes),
            r.ranks.to_string(),
            spread(r.summary(ResComm::Plain), None),
            spread(r.summary(ResComm::Agree), None),
            spread(r.summary(ResComm::Log), None),
            spread(r.summary(ResComm::Hier), None),
            spread(r.ratio(ResComm::Agree, ResComm::Plain), Some(2)),
            spread(r.ratio(ResComm::Log, ResComm::Plain), Some(2)),
            spread(r.ratio(ResComm::Log, ResComm::Agree), Some(2)),
            spread(r.ratio(ResComm::Hier, ResComm::Plain), Some(2)),
            spread(r.ratio(ResComm::Hier, ResComm::Agree), Some(2)),
            r.k.map_or("-".into(), |x| x.to_string()),
            r.reps.map_or("-".into(), |x| x.to_string()),
        ]);
    }
    t
}

/// The 1-byte ratios across rank counts: one row per (op, ratio); the
/// header says how many ranks shared each of the `cores` cores.
fn overview(rows: &[Row], ranks: &[usize], cores: usize) -> String {
    let mut header = vec!["op".to_string(), "ratio".into()];
    header.extend(ranks.iter().map(|&n| {
        let k = rows.iter().filter(|r| r.ranks == n).find_map(|r| r.k);
        let k = k.map_or(String::new(), |k| format!(", hier k={k}"));
        format!("{}{k}", per_core(n, cores))
    }));
    let mut t = Table::new(header);
    for op in RES_OPS {
        let b = u64::from(op != CollOp::Barrier);
        for (name, a, c) in [
            ("agree/plain", ResComm::Agree, ResComm::Plain),
            ("log/plain", ResComm::Log, ResComm::Plain),
            ("hier/plain", ResComm::Hier, ResComm::Plain),
            ("hier/agree", ResComm::Hier, ResComm::Agree),
        ] {
            let mut cells = vec![op.name().to_string(), name.into()];
            for &n in ranks {
                let r = rows
                    .iter()
                    .find(|r| r.op == op && r.bytes == b && r.ranks == n);
                cells.push(r.map_or("-".into(), |r| spread(r.ratio(a, c), Some(2))));
            }
            t.row(cells);
        }
    }
    format!(
        "\n### resilient overhead: 1-byte collectives (barrier: no data) by rank count, ratio to \
         plain (hier/agree: hierarchical to flat agree) launch by launch, median (min–max) over \
         launches; columns: ranks on cores, and the hierarchy's k\n\n{}",
        t.render()
    )
}

/// The goal, judged op by op at [`GOAL_RANKS`].
fn goal(rows: &[Row]) -> String {
    let mut t = Table::new([
        "op",
        "log/plain",
        &format!("<= {GOAL_RATIO}"),
        "log/agree",
        "< 1 (below agree)",
        "agree/plain",
    ]);
    let mut met = 0;
    let mut judged = 0;
    for op in RES_OPS {
        let b = u64::from(op != CollOp::Barrier);
        let r = rows
            .iter()
            .find(|r| r.op == op && r.bytes == b && r.ranks == GOAL_RANKS);
        let lp = r.and_then(|r| r.ratio(ResComm::Log, ResComm::Plain));
        let la = r.and_then(|r| r.ratio(ResComm::Log, ResComm::Agree));
        let ap = r.and_then(|r| r.ratio(ResComm::Agree, ResComm::Plain));
        let (v1, v2) = (
            verdict(lp.map(|s| s.median), |x| x <= GOAL_RATIO),
            verdict(la.map(|s| s.median), |x| x < 1.0),
        );
        if lp.is_some() && la.is_some() {
            judged += 1;
            if v1 == "met" && v2 == "met" {
                met += 1;
            }
        }
        t.row(vec![
            op.name().into(),
            spread(lp, Some(2)),
            v1.into(),
            spread(la, Some(2)),
            v2.into(),
            spread(ap, Some(2)),
        ]);
    }
    format!(
        "\n### resilient overhead: goal (at {GOAL_RANKS} ranks, 1-byte resilient collectives \
         with the log check at most {GOAL_RATIO}× plain, and below the agree baseline; judged \
         on the median of the launch-by-launch ratios)\n\n{}\n- met for {met} of {judged} \
         operations measured at {GOAL_RANKS} ranks\n",
        t.render()
    )
}

fn json_rows(ctx: &Context, rows: &[Row]) {
    let sum = |s: Option<Summary>| {
        json!({
            "median": jnum(s.map(|s| s.median)),
            "min": jnum(s.map(|s| s.min)),
            "max": jnum(s.map(|s| s.max)),
            "launches": s.map(|s| s.n),
        })
    };
    for r in rows {
        ctx.out.json(&json!({
            "bench": "resilient", "part": "overhead", "op": r.op.name(), "bytes": r.bytes,
            "ranks": r.ranks, "cores": ctx.cores, "reps": r.reps,
            "hier_k": r.k,
            "plain_us": sum(r.summary(ResComm::Plain)),
            "agree_us": sum(r.summary(ResComm::Agree)),
            "log_us": sum(r.summary(ResComm::Log)),
            "hier_us": sum(r.summary(ResComm::Hier)),
            "agree_over_plain": sum(r.ratio(ResComm::Agree, ResComm::Plain)),
            "log_over_plain": sum(r.ratio(ResComm::Log, ResComm::Plain)),
            "log_over_agree": sum(r.ratio(ResComm::Log, ResComm::Agree)),
            "hier_over_plain": sum(r.ratio(ResComm::Hier, ResComm::Plain)),
            "hier_over_agree": sum(r.ratio(ResComm::Hier, ResComm::Agree)),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_line;
    use crate::run::Exit;

    fn launch(ok: bool, out: &str) -> Launch {
        Launch::fake(0, Exit::Code(if ok { 0 } else { 1 }), out)
    }

    fn check(text: &str, expected: Option<Line>) {
        let r = parse_line(text).unwrap_or_else(|| panic!("no record in {text:?}"));
        assert_eq!(Line::parse(&r), expected, "{text}");
    }

    #[test]
    fn lines_parse() {
        check(
            "RES comm=log op=bcast bytes=1 ranks=8 t_max_us=2.345 t_avg_us=2.100 reps=2000 warmup=200",
            Some(Line {
                comm: ResComm::Log,
                op: CollOp::Bcast,
                bytes: 1,
                ranks: 8,
                t_max: 2.345,
                t_avg: Some(2.1),
                reps: 2000,
                k: None,
            }),
        );
        check(
            "RES comm=plain op=barrier bytes=0 ranks=2 t_max_us=0.5 reps=20",
            Some(Line {
                comm: ResComm::Plain,
                op: CollOp::Barrier,
                bytes: 0,
                ranks: 2,
                t_max: 0.5,
                t_avg: None,
                reps: 20,
                k: None,
            }),
        );
        check(
            "RES comm=hier op=bcast bytes=1 ranks=8 t_max_us=1 reps=2 k=3",
            Some(Line {
                comm: ResComm::Hier,
                op: CollOp::Bcast,
                bytes: 1,
                ranks: 8,
                t_max: 1.0,
                t_avg: None,
                reps: 2,
                k: Some(3),
            }),
        );
        check(
            "RES comm=flat op=bcast bytes=1 ranks=8 t_max_us=1 reps=2",
            None,
        );
        check(
            "RES comm=log op=scan bytes=1 ranks=8 t_max_us=1 reps=2",
            None,
        );
        check(
            "RES comm=log op=bcast bytes=1 ranks=8 t_max_us=nan reps=2",
            None,
        );
        check("RES comm=log op=bcast bytes=1 ranks=8 reps=2", None);
        check("COLL op=bcast bytes=8 ranks=4 t_max_us_med=1", None);
    }

    const LAUNCH_A: &str = "# impl=pertinax ranks=8\n\
        RES comm=plain op=bcast bytes=1 ranks=8 t_max_us=2 reps=2000\n\
        RES comm=agree op=bcast bytes=1 ranks=8 t_max_us=20 reps=2000\n\
        RES comm=log op=bcast bytes=1 ranks=8 t_max_us=3 reps=2000\n\
        RES comm=hier op=bcast bytes=1 ranks=8 t_max_us=60 reps=2000 k=3\n\
        RES comm=plain op=barrier bytes=0 ranks=8 t_max_us=10 reps=2000\n\
        RES comm=log op=barrier bytes=0 ranks=8 t_max_us=11 reps=2000\n\
        RES comm=plain op=allreduce bytes=1048576 ranks=8 t_max_us=3000 reps=20\n\
        RES comm=plain op=bcast bytes=1 ranks=4 t_max_us=99 reps=2000\n";
    const LAUNCH_B: &str = "RES comm=plain op=bcast bytes=1 ranks=8 t_max_us=4 reps=2000\n\
        RES comm=agree op=bcast bytes=1 ranks=8 t_max_us=30 reps=2000\n\
        RES comm=log op=bcast bytes=1 ranks=8 t_max_us=5 reps=2000\n\
        RES comm=hier op=bcast bytes=1 ranks=8 t_max_us=90 reps=2000 k=3\n";

    #[test]
    fn rows_pair_communicators_launch_by_launch() {
        let launches = [
            launch(true, LAUNCH_A),
            launch(false, LAUNCH_B.replace('4', "400").as_str()),
            launch(true, LAUNCH_B),
        ];
        let r = rows(8, &launches);
        let keys: Vec<(CollOp, u64)> = r.iter().map(|r| (r.op, r.bytes)).collect();
        assert_eq!(
            keys,
            [
                (CollOp::Barrier, 0),
                (CollOp::Bcast, 1),
                (CollOp::Allreduce, 1 << 20)
            ]
        );
        let bcast = &r[1];
        assert_eq!(bcast.launches.len(), 2, "the failed launch is left out");
        assert_eq!(bcast.summary(ResComm::Plain).map(|s| s.median), Some(3.0));
        let lp = bcast.ratio(ResComm::Log, ResComm::Plain).unwrap();
        // 3/2 and 5/4, launch by launch (not 4/3 of the medians).
        assert_eq!((lp.min, lp.max, lp.median), (1.25, 1.5, 1.375));
        let la = bcast.ratio(ResComm::Log, ResComm::Agree).unwrap();
        assert_eq!((la.min, la.max), (3.0 / 20.0, 5.0 / 30.0));
        let hp = bcast.ratio(ResComm::Hier, ResComm::Plain).unwrap();
        assert_eq!((hp.min, hp.max, hp.median), (22.5, 30.0, 26.25));
        assert_eq!(bcast.k, Some(3));
        assert_eq!(r[0].k, None);
        // Only one launch measured the barrier; it has no agree value.
        assert_eq!(r[0].ratio(ResComm::Agree, ResComm::Plain), None);
        assert_eq!(
            r[0].ratio(ResComm::Log, ResComm::Plain).map(|s| s.n),
            Some(1)
        );
        assert_eq!(r[2].reps, Some(20));
        assert_eq!(rows(4, &launches)[0].summary(ResComm::Plain).unwrap().n, 1);
    }

    #[test]
    fn tables_and_goal() {
        let r = rows(8, &[launch(true, LAUNCH_A), launch(true, LAUNCH_B)]);
        let text = table(&r).render();
        let line = text
            .lines()
            .find(|l| l.starts_with("| bcast"))
            .unwrap_or_else(|| panic!("no bcast row in\n{text}"));
        for cell in [
            "| 3.000 (2.000–4.000) ",
            "| 25.000 (20.000–30.000) ",
            "| 8.75 (7.50–10.00) ",
            "| 1.38 (1.25–1.50) ",
            "| 75.000 (60.000–90.000) ",
            "| 26.25 (22.50–30.00) | 3.00 (3.00–3.00) | 3 ",
            "| 2000 ",
        ] {
            assert!(line.contains(cell), "{cell:?} not in {line:?}");
        }
        let g = goal(&r);
        let bcast = g.lines().find(|l| l.starts_with("| bcast")).unwrap();
        assert!(bcast.contains("| 1.38 (1.25–1.50) | met "), "{bcast}");
        assert!(bcast.contains("| 0.16 (0.15–0.17) | met "), "{bcast}");
        let barrier = g.lines().find(|l| l.starts_with("| barrier")).unwrap();
        assert!(barrier.contains("not measured"), "{barrier}");
        assert!(g.contains("met for 1 of 1 operations"), "{g}");
        let v = overview(&r, &[4, 8], 2);
        assert!(
            v.contains("| 4 on 2 cores (2 per core) | 8 on 2 cores (4 per core), hier k=3 |"),
            "{v}"
        );
        let hp = v
            .lines()
            .find(|l| l.starts_with("| bcast") && l.contains("hier/plain"))
            .unwrap();
        assert!(hp.contains("26.25 (22.50–30.00)"), "{hp}");
        let lp = v
            .lines()
            .find(|l| l.starts_with("| bcast") && l.contains("log/plain"))
            .unwrap();
        assert!(lp.contains("| -  ") || lp.contains("| - "), "{lp}");
        assert!(lp.contains("1.38 (1.25–1.50)"), "{lp}");
    }

    #[test]
    fn worker_command_lines() {
        let o = ResilientOpts::default();
        let a = worker_args(4, &o, 2000, 200);
        assert_eq!(a[a.len() - 5], "1");
        let s = worker_args(8, &o, 2000, 200);
        assert_eq!(
            s[s.len() - 5],
            "1,8,64,512,4096,32768,262144,1048576",
            "{s:?}"
        );
        // The worker reads back what the bench passes.
        use crate::cli::{parse, Command};
        let Ok(Command::Worker(w)) = parse(&s.join(" ")) else {
            panic!("not worker")
        };
        let p = w.res();
        assert_eq!(p.comms, ResComm::ALL.to_vec());
        assert_eq!((p.reps, p.warmup), (2000, 200));
        assert_eq!(p.cases.len(), 1 + 3 * 8);
        assert_eq!(p.cases[0], (CollOp::Barrier, 0));
        assert_eq!(p.cases[1], (CollOp::Bcast, 1));
        assert_eq!(sweep_reps_note(2000), "32 KiB 250, 256 KiB 31, 1 MiB 20");
    }
}
