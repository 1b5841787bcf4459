//! Collective latency at several rank counts: `pertinax run -n N --
//! <self> worker coll` against `mpirun -n N coll_sweep` (this crate's
//! `c/coll_sweep.c`, which extends the anchor `coll.c` over ops and sizes
//! with the same method).
//!
//! Each rank count is its own interleaved series of launches (sentinel
//! before and after each). Every launch prints one `COLL op=.. bytes=..
//! t_max_us_med=..` line per case; the table gives, per (op, bytes, ranks),
//! the median and the minimum of those values over launches and the
//! pertinax / Open MPI ratios. The goals are judged at the end.

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::{head, Campaign, Context};
use crate::cli::{ops_arg, BenchBackend, CollCounts, CollOp, CollOpts, MIN_COLL_REPS};
use crate::report::{bytes, jnum, med_min, ratio, verdict, Table};
use crate::run::Variant;
use crate::setup;
use crate::stats::{self, find, Selector, Series, Summary};

/// Launches per implementation and rank count unless `--launches` is given.
const DEFAULT_LAUNCHES: usize = 3;

/// Time limit per launch unless `--timeout` is given: one launch measures
/// every op and size (tens of seconds; minutes when oversubscribed 8×).
const DEFAULT_LIMIT: Duration = Duration::from_secs(900);

/// The records: `COLL` lines, one row per (op, bytes).
const KEY: &str = "COLL";
const GROUP: &[&str] = &["op", "bytes"];

/// One row of the table: an (op, bytes) case at one rank count, with the
/// per-launch values of each implementation.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    op: CollOp,
    bytes: u64,
    ranks: usize,
    /// pertinax: t_max_us_med per launch.
    p: Option<Series>,
    /// Open MPI: t_max_us_med per launch.
    o: Option<Series>,
    /// Median calls per batch (pertinax, Open MPI).
    reps: (Option<f64>, Option<f64>),
}

impl Row {
    fn p(&self) -> Option<Summary> {
        self.p.as_ref().and_then(Series::all)
    }

    fn o(&self) -> Option<Summary> {
        self.o.as_ref().and_then(Series::all)
    }

    /// pertinax / Open MPI of the medians over launches.
    fn ratio(&self) -> Option<f64> {
        stats::ratio(self.p().map(|s| s.median), self.o().map(|s| s.median))
    }

    /// pertinax / Open MPI of the minima over launches (best vs best).
    fn ratio_min(&self) -> Option<f64> {
        stats::ratio(self.p().map(|s| s.min), self.o().map(|s| s.min))
    }

    /// The ratio of medians over fast-state launches only, and how many
    /// fast-state launches each side had.
    fn ratio_fast(&self) -> (Option<f64>, usize, usize) {
        let f = |s: &Option<Series>| s.as_ref().and_then(Series::fast);
        let (pf, of) = (f(&self.p), f(&self.o));
        (
            stats::ratio(pf.map(|s| s.median), of.map(|s| s.median)),
            pf.map_or(0, |s| s.n),
            of.map_or(0, |s| s.n),
        )
    }

    /// Which of the goals this row belongs to.
    fn goal(&self) -> Option<Goal> {
        match self.op {
            CollOp::Barrier => Some(Goal::Small),
            CollOp::Bcast | CollOp::Allreduce if self.bytes == 8 => Some(Goal::Small),
            CollOp::Bcast | CollOp::Allreduce if (64 << 10..=1 << 20).contains(&self.bytes) => {
                Some(Goal::Large)
            }
            _ => None,
        }
    }
}

/// The goals, both "ratio pertinax / Open MPI <= 1.0".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Goal {
    /// 8 B barrier, bcast and allreduce at 2 to 16 ranks.
    Small,
    /// 64 KiB to 1 MiB bcast and allreduce.
    Large,
}

impl Goal {
    fn describe(self) -> &'static str {
        match self {
            Goal::Small => "small messages (barrier; bcast and allreduce of 8 B), ratio <= 1.0",
            Goal::Large => "large messages (bcast and allreduce of 64 KiB to 1 MiB), ratio <= 1.0",
        }
    }
}

/// Parses a row label `"<op> <bytes>"`.
fn parse_label(label: &str) -> Option<(CollOp, u64)> {
    let (op, b) = label.split_once(' ')?;
    Some((CollOp::from_name(op)?, b.parse().ok()?))
}

/// The rows of one rank count from the series of both implementations,
/// in report order (op as in [`CollOp::ALL`], then bytes).
fn rows(
    ranks: usize,
    p: &[Series],
    o: Option<&[Series]>,
    reps: (&[Series], Option<&[Series]>),
) -> Vec<Row> {
    let mut keys: Vec<(CollOp, u64)> = Vec::new();
    for s in p.iter().chain(o.unwrap_or_default()) {
        if let Some(k) = parse_label(&s.label) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let order = |op: CollOp| CollOp::ALL.iter().position(|&x| x == op);
    keys.sort_by_key(|&(op, b)| (order(op), b));
    let med = |set: Option<&[Series]>, label: &str| {
        set.and_then(|s| find(s, label))
            .and_then(Series::all)
            .map(|s| s.median)
    };
    keys.into_iter()
        .map(|(op, b)| {
            let label = format!("{} {b}", op.name());
            Row {
                op,
                bytes: b,
                ranks,
                p: find(p, &label).cloned(),
                o: o.and_then(|o| find(o, &label)).cloned(),
                reps: (med(Some(reps.0), &label), med(reps.1, &label)),
            }
        })
        .collect()
}

/// Runs the benchmark for every rank count and prints its tables.
///
/// # Errors
/// When a program cannot be started.
pub fn run(ctx: &mut Context, ranks: &[usize], opts: &CollOpts) -> Result<()> {
    let pace = ctx.pace_or(DEFAULT_LAUNCHES, DEFAULT_LIMIT);
    let counts = opts.counts(ctx.quick);
    let (ops, sizes) = (ops_arg(&opts.ops()), opts.sizes().to_arg());
    let prog = ctx.ompi_program("coll_sweep", Some(&setup::coll_sweep_source()));
    let CollCounts {
        max_reps,
        warmup,
        batches,
        target_ms,
    } = counts;
    let worker_args = format!(
        "worker coll --ops {ops} --sizes {sizes} --max-reps {max_reps} --warmup {warmup} \
         --batches {batches} --target-ms {target_ms}"
    );
    let target_s = f64::from(target_ms) / 1e3;
    let c_args =
        format!("-o {ops} -s {sizes} -r {max_reps} -w {warmup} -b {batches} -t {target_s:.3}");
    let mut all_rows = Vec::new();
    for &n in ranks {
        let mut variants = vec![Variant::new(
            format!("{} n={n}", ctx.pertinax_name()),
            ctx.pertinax_cmd(n, &[])
                .args(worker_args.split_whitespace()),
        )];
        if let (Some(ompi), Some(prog)) = (&ctx.ompi, &prog) {
            let cmd = ompi.mpirun(n, ctx.ompi_extra(), prog);
            let cmd = cmd.args(c_args.split_whitespace());
            variants.push(Variant::new(format!("ompi n={n}"), cmd));
        }
        let title = format!(
            "## coll: {}; {} launches per implementation, interleaved launch by launch",
            ctx.placement(n),
            pace.rounds
        );
        let ran = variants.len() > 1;
        ctx.out
            .text(&(head(&title, &variants) + &ctx.ompi_line(ran)));
        let c = ctx.campaign(&format!("coll n={n}"), variants, pace)?;
        let rows = collect(n, &c);
        report(ctx, n, counts, &c, &rows);
        all_rows.extend(rows);
    }
    ctx.out.text(&goals(&all_rows, ranks));
    if ctx.backend == BenchBackend::Mpi {
        ctx.out.text(&mpi_goal(&all_rows));
    }
    Ok(())
}

/// The MPI backend's collective goal (issue 17): the Rust layer costs at
/// most 5% over raw C on an 8-byte allreduce at 8 ranks.
fn mpi_goal(rows: &[Row]) -> String {
    let r = rows
        .iter()
        .find(|r| r.op == CollOp::Allreduce && r.bytes == 8 && r.ranks == 8);
    let judged = r.map_or_else(
        || "not measured (run --ranks 8 --ops allreduce --sizes 8)".to_string(),
        |r| {
            format!(
                "ratio {} (of minima {}): {}",
                ratio(r.ratio()),
                ratio(r.ratio_min()),
                verdict(r.ratio(), |x| x <= 1.05)
            )
        },
    );
    format!("\nMPI backend goal: allreduce of 8 B at 8 ranks within 5% of C (ratio <= 1.05): {judged}\n")
}

/// The rows of one rank count from its launches (variant 0 is pertinax,
/// variant 1, if any, Open MPI).
fn collect(ranks: usize, c: &Campaign) -> Vec<Row> {
    let sel = |value| Selector {
        key: KEY,
        group: GROUP,
        value,
    };
    let p = c.series(0, sel("t_max_us_med"));
    let p_reps = c.series(0, sel("reps"));
    let with_ompi = c.variants.len() > 1;
    let o = with_ompi.then(|| c.series(1, sel("t_max_us_med")));
    let o_reps = with_ompi.then(|| c.series(1, sel("reps")));
    rows(ranks, &p, o.as_deref(), (&p_reps, o_reps.as_deref()))
}

/// The table of one rank count, its JSON rows, and the host state.
fn report(ctx: &Context, n: usize, counts: CollCounts, c: &Campaign, rows: &[Row]) {
    let mut text = format!(
        "\ncoll, {}, µs per call: per launch the median over {} batches of the slowest rank's \
         mean time per call (t_max), each batch {MIN_COLL_REPS}..{} calls sized to about {} ms \
         by a calibration, after {} warm-up calls; below, the median over launches (min over \
         launches). Ratios are pertinax / Open MPI (< 1: pertinax faster); `fast` is the ratio \
         of medians over the launches in the host's fast state (how many: pertinax/Open MPI). \
         Bytes: the whole vector for bcast/reduce/allreduce (f64 sums), each rank's block for \
         allgather, each destination's block for alltoall.\n\n",
        ctx.placement(n),
        counts.batches,
        counts.max_reps,
        counts.target_ms,
        counts.warmup,
    );
    text.push_str(&table(rows).render());
    if c.variants.len() == 1 {
        text.push_str("\n(no Open MPI column: Open MPI was not run)\n");
    }
    text.push_str(&c.hosts());
    ctx.out.text(&text);
    for r in rows {
        let mine = ctx.pertinax_name();
        for (name, s, reps) in [(mine, r.p(), r.reps.0), ("ompi", r.o(), r.reps.1)] {
            if let Some(s) = s {
                ctx.out.json(&json!({
                    "bench": "coll", "impl": name, "op": r.op.name(), "bytes": r.bytes,
                    "ranks": r.ranks, "cores": ctx.cores,
                    "median_us": jnum(Some(s.median)), "min_us": jnum(Some(s.min)),
                    "launches": s.n, "reps": reps.map(|r| r.round() as u64),
                }));
            }
        }
        if let (Some(p), Some(o)) = (r.p(), r.o()) {
            ctx.out.json(&json!({
                "bench": "coll", "backend": ctx.backend.name(), "op": r.op.name(),
                "bytes": r.bytes, "ranks": r.ranks, "cores": ctx.cores,
                "pertinax_us": jnum(Some(p.median)), "ompi_us": jnum(Some(o.median)),
                "ratio": jnum(r.ratio()), "ratio_min": jnum(r.ratio_min()),
                "ratio_fast": jnum(r.ratio_fast().0),
            }));
        }
    }
}

/// The per-rank-count table.
fn table(rows: &[Row]) -> Table {
    let mut t = Table::new([
        "op",
        "bytes",
        "ranks",
        "pertinax µs",
        "Open MPI µs",
        "ratio med",
        "ratio min",
        "fast",
        "reps p/o",
    ]);
    let reps = |x: Option<f64>| x.map_or("-".into(), |r| format!("{r:.0}"));
    for r in rows {
        let (rf, np, no) = r.ratio_fast();
        t.row(vec![
            r.op.name().into(),
            bytes(r.bytes),
            r.ranks.to_string(),
            med_min(r.p()),
            med_min(r.o()),
            ratio(r.ratio()),
            ratio(r.ratio_min()),
            if r.o.is_some() {
                format!("{} ({np}/{no})", ratio(rf))
            } else {
                "-".into()
            },
            format!("{}/{}", reps(r.reps.0), reps(r.reps.1)),
        ]);
    }
    t
}

/// The goals, judged row by row: one table per goal (rows: op and bytes;
/// columns: rank counts), then a tally.
fn goals(rows: &[Row], ranks: &[usize]) -> String {
    let mut s = String::from(
        "\n## coll: goals (pertinax / Open MPI; each cell: ratio of medians over launches \
         (ratio of minima), and the verdict on the ratio of medians)\n",
    );
    for goal in [Goal::Small, Goal::Large] {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.goal() == Some(goal)).collect();
        s.push_str(&format!("\n{}:\n\n", goal.describe()));
        if mine.is_empty() {
            s.push_str("not measured (no such rows)\n");
            continue;
        }
        let mut keys: Vec<(CollOp, u64)> = Vec::new();
        for r in &mine {
            if !keys.contains(&(r.op, r.bytes)) {
                keys.push((r.op, r.bytes));
            }
        }
        let mut header = vec!["op".to_string(), "bytes".into()];
        header.extend(ranks.iter().map(|n| format!("{n} ranks")));
        let mut t = Table::new(header);
        for (op, b) in keys {
            let mut cells = vec![op.name().to_string(), bytes(b)];
            for &n in ranks {
                let r = mine
                    .iter()
                    .find(|r| r.op == op && r.bytes == b && r.ranks == n);
                cells.push(r.map_or("-".into(), |r| {
                    format!(
                        "{} ({}) {}",
                        ratio(r.ratio()),
                        ratio(r.ratio_min()),
                        verdict(r.ratio(), |x| x <= 1.0)
                    )
                }));
            }
            t.row(cells);
        }
        s.push_str(&t.render());
        let tally = |f: &dyn Fn(&Row) -> Option<f64>| {
            let judged: Vec<f64> = mine.iter().filter_map(|r| f(r)).collect();
            let met = judged.iter().filter(|&&x| x <= 1.0).count();
            format!("{met} of {}", judged.len())
        };
        s.push_str(&format!(
            "\n- met on medians in {} rows; best vs best in {}; on fast-state launches only in {} \
             (of the rows where both sides had a fast-state launch); {} rows have no Open MPI value\n",
            tally(&|r| r.ratio()),
            tally(&|r| r.ratio_min()),
            tally(&|r| r.ratio_fast().0),
            mine.iter().filter(|r| r.ratio().is_none()).count(),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Point;

    fn series(label: &str, values: &[f64]) -> Series {
        Series {
            label: label.into(),
            points: values
                .iter()
                .map(|&value| Point {
                    value,
                    fast: Some(value < 100.0),
                })
                .collect(),
        }
    }

    fn check_rows(p: &[Series], o: Option<&[Series]>) -> Vec<Row> {
        rows(4, p, o, (&[], None))
    }

    #[test]
    fn labels() {
        assert_eq!(parse_label("bcast 8"), Some((CollOp::Bcast, 8)));
        assert_eq!(parse_label("barrier 0"), Some((CollOp::Barrier, 0)));
        assert_eq!(parse_label("bcast_8B 8"), None);
        assert_eq!(parse_label("bcast"), None);
        assert_eq!(parse_label("bcast x"), None);
    }

    #[test]
    fn rows_merge_both_sides_in_report_order() {
        let p = [
            series("alltoall 8", &[5.0]),
            series("bcast 65536", &[2.0, 4.0, 3.0]),
            series("bcast 8", &[1.0]),
        ];
        let o = [
            series("barrier 0", &[1.0]),
            series("bcast 65536", &[4.0, 8.0, 6.0]),
        ];
        let r = check_rows(&p, Some(&o));
        let keys: Vec<(CollOp, u64)> = r.iter().map(|r| (r.op, r.bytes)).collect();
        assert_eq!(
            keys,
            [
                (CollOp::Barrier, 0),
                (CollOp::Bcast, 8),
                (CollOp::Bcast, 65536),
                (CollOp::Alltoall, 8)
            ]
        );
        assert!(r[0].p.is_none() && r[0].ratio().is_none());
        assert_eq!(r[2].ratio(), Some(0.5));
        assert_eq!(r[2].ratio_min(), Some(0.5));
        assert!(r[3].o.is_none());
        let only_p = check_rows(&p, None);
        assert_eq!(only_p.len(), 3);
        assert!(only_p.iter().all(|r| r.ranks == 4 && r.o.is_none()));
    }

    #[test]
    fn fast_ratio_uses_fast_launches_only() {
        // Values >= 100 are slow-state launches in `series` above.
        let p = [series("allreduce 8", &[1.0, 200.0, 3.0])];
        let o = [series("allreduce 8", &[4.0, 300.0, 500.0])];
        let r = &check_rows(&p, Some(&o))[0];
        assert_eq!(r.ratio(), Some(3.0 / 300.0));
        assert_eq!(r.ratio_fast(), (Some(0.5), 2, 1));
    }

    #[test]
    fn goal_membership() {
        let row = |op, bytes| Row {
            op,
            bytes,
            ranks: 2,
            p: None,
            o: None,
            reps: (None, None),
        };
        assert_eq!(row(CollOp::Barrier, 0).goal(), Some(Goal::Small));
        assert_eq!(row(CollOp::Bcast, 8).goal(), Some(Goal::Small));
        assert_eq!(row(CollOp::Allreduce, 8).goal(), Some(Goal::Small));
        assert_eq!(row(CollOp::Reduce, 8).goal(), None);
        assert_eq!(row(CollOp::Bcast, 1024).goal(), None);
        assert_eq!(row(CollOp::Bcast, 65536).goal(), Some(Goal::Large));
        assert_eq!(row(CollOp::Allreduce, 1 << 20).goal(), Some(Goal::Large));
        assert_eq!(row(CollOp::Allreduce, 4 << 20).goal(), None);
        assert_eq!(row(CollOp::Allgather, 65536).goal(), None);
    }

    #[test]
    fn goals_report_verdicts_and_tallies() {
        let mut all = check_rows(
            &[series("barrier 0", &[0.8]), series("bcast 65536", &[12.0])],
            Some(&[series("barrier 0", &[1.0]), series("bcast 65536", &[10.0])]),
        );
        all.extend(rows(
            8,
            &[series("barrier 0", &[2.0])],
            Some(&[series("barrier 0", &[4.0])]),
            (&[], None),
        ));
        let g = goals(&all, &[4, 8]);
        let line = |start: &str| {
            g.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no {start:?} in\n{g}"))
                .to_string()
        };
        let barrier = line("| barrier");
        assert!(barrier.contains("0.80 (0.80) met"), "{barrier}");
        assert!(barrier.contains("0.50 (0.50) met"), "{barrier}");
        let bcast = line("| bcast");
        assert!(bcast.contains("1.20 (1.20) NOT met"), "{bcast}");
        assert!(bcast.contains("| -"), "{bcast}");
        assert!(g.contains("met on medians in 2 of 2 rows"), "{g}");
        assert!(g.contains("met on medians in 0 of 1 rows"), "{g}");
        assert!(goals(&[], &[2]).contains("not measured"));
    }

    #[test]
    fn mpi_goal_judges_the_8_byte_allreduce_at_8_ranks() {
        assert!(mpi_goal(&[]).contains("not measured"));
        let judge = |p: f64| {
            mpi_goal(&rows(
                8,
                &[series("allreduce 8", &[p]), series("allreduce 16", &[1.0])],
                Some(&[
                    series("allreduce 8", &[20.0]),
                    series("allreduce 16", &[9.0]),
                ]),
                (&[], None),
            ))
        };
        assert!(
            judge(21.0).contains("ratio 1.05 (of minima 1.05): met"),
            "{}",
            judge(21.0)
        );
        assert!(
            judge(26.0).contains("ratio 1.30 (of minima 1.30): NOT met"),
            "{}",
            judge(26.0)
        );
    }

    #[test]
    fn table_cells() {
        let mut p = series("allreduce 8", &[1.0, 2.0, 3.0]);
        p.points[2].fast = Some(false);
        let r = rows(
            2,
            &[p],
            Some(&[series("allreduce 8", &[4.0])]),
            (&[series("allreduce 8", &[1000.0])], Some(&[])),
        );
        let text = table(&r).render();
        let line = text.lines().nth(2).unwrap();
        for cell in [
            "| allreduce ",
            "| 8 ",
            "| 2.000 (1.000) ",
            "| 4.000 (4.000) ",
            "| 0.50 ",
            "| 0.25 ",
            "| 0.38 (2/1) ",
            "| 1000/- ",
        ] {
            assert!(line.contains(cell), "{cell:?} not in {line:?}");
        }
    }
}
