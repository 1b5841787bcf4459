//! Error propagation: `pertinax run -n N -- propagate-ranks bench REPS`
//! against `mpirun --with-ft ulfm -n N propagate -r REPS` (this crate's
//! `c/propagate.c`), the measurement of the error-propagation paper.
//!
//! One repetition, on both sides: barrier, t0, duplicate the world (pertinax:
//! guard a duplicate), barrier on the world, t1, rank 0 raises the error
//! (pertinax: `signal`; Open MPI: `MPIX_Comm_revoke`), every rank learns it
//! in a barrier on the duplicate (pertinax: the guarded barrier returns the
//! propagated error; Open MPI: `MPI_Barrier` returns `MPIX_ERR_REVOKED`, then
//! `MPIX_Comm_agree` so that every rank knows), t2, clean up (drop the guard;
//! `MPI_Comm_free`), t3. Per repetition the slowest rank's t2 - t1
//! (propagation) and t3 - t0 (whole cycle); each launch prints one
//! `PROPAGATE` line with the median, 10th and 90th percentile over its
//! repetitions, and an 8-byte ping-pong for reference.
//!
//! Each rank count is its own interleaved series of launches. The tables
//! give, per rank count and implementation, the median over launches of
//! each per-launch figure. Open MPI launches that printed their line and
//! then ran into the time limit (stuck in `MPI_Finalize`, RESULTS.md
//! section 3) are killed and their figures count.

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::{head, listed, Campaign, Context, Impl, Judged, Tally};
use crate::cli::PropagateOpts;
use crate::parse::Record;
use crate::report::{jnum, ratio, Table};
use crate::run::{last_line, Cmd, Variant};
use crate::setup;
use crate::stats::{self, median};

/// Launches per implementation and rank count unless `--launches` is given.
const DEFAULT_LAUNCHES: usize = 3;

/// The record key of both programs.
const KEY: &str = "PROPAGATE";

/// The time limit of one launch unless `--timeout` is given: 30 s plus
/// 5 ms per repetition and rank. Open MPI's oversubscribed ranks spin, so
/// its launch at 16 ranks and 1000 repetitions takes 5 to 45 s, the more
/// the busier the machine (pertinax: about 1 s); a launch stuck in
/// `MPI_Finalize` waits this long.
fn default_limit(ranks: usize, reps: usize) -> Duration {
    Duration::from_secs(30) + Duration::from_millis(5 * (ranks * reps) as u64)
}

/// Median, 10th and 90th percentile over the repetitions of one launch, µs.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Spread {
    med: f64,
    p10: f64,
    p90: f64,
}

impl Spread {
    /// The field `med` and the `p10` and `p90` that follow it.
    fn of(r: &Record, med: &str) -> Option<Spread> {
        Some(Spread {
            med: r.f64(med)?,
            p10: r.f64_after(med, "p10")?,
            p90: r.f64_after(med, "p90")?,
        })
    }
}

/// One `PROPAGATE` line, of either program:
///
/// ```text
/// PROPAGATE N=4 reps=1000 total_med_us=45.8 p10=44.1 p90=47.6 propagate_med_us=17.7 p10=17.1
///   p90=18.4 pingpong_plain_us=0.839 pingpong_guarded_us=0.850                    (pertinax)
/// PROPAGATE N=4 reps=1000 total_med_us=68.2 p10=57.7 p90=85.2 propagate_med_us=15.1 p10=12.4
///   p90=20.0 pingpong_plain_us=2.255 impl=openmpi unexpected=0 dup_med_us=50.1 free_med_us=3.2
/// ```
#[derive(Clone, Debug, PartialEq)]
struct Line {
    ranks: usize,
    reps: usize,
    /// Whole cycle: duplicate, propagate, clean up.
    total: Spread,
    /// Signal (revoke) -> every rank has the error.
    prop: Spread,
    /// Half round trip of the plain 8-byte ping-pong, µs.
    pp_plain: Option<f64>,
    /// The same inside the guard (pertinax only).
    pp_guarded: Option<f64>,
    /// Open MPI: calls that returned something unexpected, summed over ranks.
    unexpected: Option<u64>,
    /// Open MPI: median of the duplicate (+ world barrier) and of the free.
    dup: Option<f64>,
    free: Option<f64>,
}

impl Line {
    /// Reads a `PROPAGATE` record; `None` if a required field is missing.
    fn parse(r: &Record) -> Option<Line> {
        if r.key != KEY {
            return None;
        }
        Some(Line {
            ranks: r.get("N")?.parse().ok()?,
            reps: r.get("reps")?.parse().ok()?,
            total: Spread::of(r, "total_med_us")?,
            prop: Spread::of(r, "propagate_med_us")?,
            pp_plain: r.f64("pingpong_plain_us"),
            pp_guarded: r.f64("pingpong_guarded_us"),
            unexpected: r.get("unexpected").and_then(|u| u.parse().ok()),
            dup: r.f64("dup_med_us"),
            free: r.f64("free_med_us"),
        })
    }
}

/// Tallies the launches of `variant`, which ran `ranks` ranks. A line
/// counts when it names the right rank count and reports no unexpected
/// result, and the launch exited with 0 or ran into the time limit after
/// printing it.
fn tally(c: &Campaign, variant: usize, ranks: usize) -> Tally<Line> {
    c.tally(variant, KEY, |l, rec| {
        let why = match rec.map(Line::parse) {
            None if l.timed_out() => return Judged::Hung,
            None => format!(
                "no PROPAGATE line; stderr: {}",
                last_line(&l.outcome.stderr)
            ),
            Some(None) => "incomplete PROPAGATE line".to_string(),
            Some(Some(x)) if x.ranks != ranks => format!("line for N={}", x.ranks),
            Some(Some(x)) if x.unexpected.is_some_and(|u| u > 0) => format!(
                "{} calls returned an unexpected code",
                x.unexpected.unwrap_or(0)
            ),
            Some(Some(_)) if !l.timed_out() && !l.outcome.ok() => format!(
                "exit after the line; stderr: {}",
                last_line(&l.outcome.stderr)
            ),
            Some(Some(x)) => return Judged::Counts(x),
        };
        Judged::Fails(format!("{}: {why}", l.outcome.status()))
    })
}

impl Tally<Line> {
    /// The median over launches of one per-launch figure.
    fn med(&self, f: impl Fn(&Line) -> Option<f64>) -> Option<f64> {
        median(&self.counted.iter().filter_map(f).collect::<Vec<_>>())
    }

    /// Median over launches of the median, p10 and p90.
    fn spread(&self, f: impl Fn(&Line) -> Spread) -> Option<Spread> {
        Some(Spread {
            med: self.med(|l| Some(f(l).med))?,
            p10: self.med(|l| Some(f(l).p10))?,
            p90: self.med(|l| Some(f(l).p90))?,
        })
    }

    /// Every launch's median of one figure, in launch order.
    fn per_launch(&self, f: impl Fn(&Line) -> f64) -> String {
        let v: Vec<String> = self
            .counted
            .iter()
            .map(|l| format!("{:.1}", f(l)))
            .collect();
        if v.is_empty() {
            "-".into()
        } else {
            v.join(" ")
        }
    }
}

/// `med (p10–p90)`, or `-`.
fn spread_cell(s: Option<Spread>) -> String {
    s.map_or("-".into(), |s| {
        format!("{:.1} ({:.1}–{:.1})", s.med, s.p10, s.p90)
    })
}

fn opt_cell(x: Option<f64>, d: usize) -> String {
    x.map_or("-".into(), |x| format!("{x:.d$}"))
}

/// The tallies of one rank count: pertinax, and Open MPI if it ran.
#[derive(Clone, Debug, PartialEq)]
struct PerRanks {
    ranks: usize,
    p: Tally<Line>,
    o: Option<Tally<Line>>,
}

/// Runs the benchmark for every rank count and prints its tables.
///
/// # Errors
/// When the rank program is missing or a program cannot be started.
pub fn run(ctx: &mut Context, o: &PropagateOpts) -> Result<()> {
    let ranks = setup::propagate_ranks(o.propagate_ranks.as_deref())?;
    let prog = ctx.ompi_program("propagate", Some(&setup::propagate_source()));
    let reps = o.reps(ctx.quick);
    let mut all = Campaign::default();
    let mut results = Vec::new();
    for &n in &o.ranks {
        let pace = ctx.pace_or(DEFAULT_LAUNCHES, default_limit(n, reps));
        let cmd = Cmd::new(&ctx.launcher)
            .args(["run", "-n", &n.to_string(), "--"])
            .arg(&ranks)
            .args(["bench", &reps.to_string()]);
        let mut variants = vec![Variant::new(format!("pertinax n={n}"), cmd)];
        if let (Some(ompi), Some(prog)) = (&ctx.ompi, &prog) {
            let cmd = ompi.mpirun(n, setup::FT, prog);
            let cmd = cmd.args(["-r", &reps.to_string()]);
            variants.push(Variant::new(format!("ompi n={n}"), cmd));
        }
        if all.variants.is_empty() {
            let title = format!(
                "## propagate: error propagation, N ranks on {c} cores (N > {c} oversubscribed); \
                 {} launches per implementation and rank count, interleaved launch by launch; \
                 {reps} repetitions per launch",
                pace.rounds,
                c = ctx.cores
            );
            let ran = ctx.ompi.is_some() && prog.is_some();
            ctx.out
                .text(&(head(&title, &variants) + &ctx.ompi_line(ran)));
        }
        let c = ctx.campaign(&format!("propagate n={n}"), variants, pace)?;
        results.push(PerRanks {
            ranks: n,
            p: tally(&c, 0, n),
            o: (c.variants.len() > 1).then(|| tally(&c, 1, n)),
        });
        all.append(c);
    }
    let mut text = tables(&results, ctx.cores);
    text.push_str(&all.hosts());
    ctx.out.text(&text);
    for r in &results {
        json_rows(ctx, r);
    }
    Ok(())
}

/// The side-by-side tables, the ping-pong reference and the per-launch detail.
fn tables(results: &[PerRanks], cores: usize) -> String {
    let mut main = Table::new([
        "ranks",
        "pertinax propagation µs",
        "Open MPI revoke+agree µs",
        "ratio p/o",
        "pertinax whole cycle µs",
        "Open MPI whole cycle µs",
        "ratio p/o",
        "launches ok/run: pertinax, Open MPI [finalize hangs]",
    ]);
    let mut pp = Table::new([
        "ranks",
        "pertinax plain",
        "pertinax guarded",
        "guarded / plain",
        "Open MPI plain",
        "pertinax plain / Open MPI",
    ]);
    let mut detail = String::new();
    let mut problems = String::new();
    for r in results {
        let o = r.o.as_ref();
        let (pp_prop, pp_total) = (r.p.spread(|l| l.prop), r.p.spread(|l| l.total));
        let (o_prop, o_total) = (
            o.and_then(|t| t.spread(|l| l.prop)),
            o.and_then(|t| t.spread(|l| l.total)),
        );
        let med = |s: Option<Spread>| s.map(|s| s.med);
        main.row(vec![
            r.ranks.to_string(),
            spread_cell(pp_prop),
            spread_cell(o_prop),
            ratio(stats::ratio(med(pp_prop), med(o_prop))),
            spread_cell(pp_total),
            spread_cell(o_total),
            ratio(stats::ratio(med(pp_total), med(o_total))),
            format!(
                "{}, {}",
                r.p.ok_of_runs(),
                o.map_or("-".into(), |t| format!(
                    "{} [{}]",
                    t.ok_of_runs(),
                    t.ended.hung_after
                ))
            ),
        ]);
        let (plain, guarded) = (r.p.med(|l| l.pp_plain), r.p.med(|l| l.pp_guarded));
        let o_plain = o.and_then(|t| t.med(|l| l.pp_plain));
        pp.row(vec![
            r.ranks.to_string(),
            opt_cell(plain, 3),
            opt_cell(guarded, 3),
            ratio(stats::ratio(guarded, plain)),
            opt_cell(o_plain, 3),
            ratio(stats::ratio(plain, o_plain)),
        ]);
        detail.push_str(&format!(
            "pertinax n={:<3} propagation {} | whole cycle {}\n",
            r.ranks,
            r.p.per_launch(|l| l.prop.med),
            r.p.per_launch(|l| l.total.med)
        ));
        if let Some(t) = o {
            detail.push_str(&format!(
                "ompi     n={:<3} propagation {} | whole cycle {} | dup {} | free {}\n",
                r.ranks,
                t.per_launch(|l| l.prop.med),
                t.per_launch(|l| l.total.med),
                t.per_launch(|l| l.dup.unwrap_or(f64::NAN)),
                t.per_launch(|l| l.free.unwrap_or(f64::NAN)),
            ));
        }
        for (name, t) in [("pertinax", Some(&r.p)), ("ompi", o)] {
            let Some(t) = t else { continue };
            problems.push_str(&t.ended.failures(&format!("{name} n={}", r.ranks)));
            if t.ended.hung_before > 0 {
                problems.push_str(&format!(
                    "- {name} n={}: {} launches hit the time limit before printing results\n",
                    r.ranks, t.ended.hung_before
                ));
            }
        }
    }
    let mut s = format!(
        "\npropagate, µs, slowest rank per repetition; each cell: median over launches of the \
         per-launch median (10th–90th percentile over the repetitions). N ranks share {cores} \
         cores (oversubscribed above {cores}). Propagation: pertinax = rank 0 signals -> every \
         rank's guarded barrier has returned the error; Open MPI = rank 0 MPIX_Comm_revoke -> \
         every rank's MPI_Barrier has returned MPIX_ERR_REVOKED and MPIX_Comm_agree has \
         completed. Whole cycle: duplicate (guard) + world barrier + propagation + clean up \
         (drop the guard; MPI_Comm_free). Ratio p/o = pertinax / Open MPI of the medians \
         (< 1: pertinax faster). Finalize hangs: Open MPI launches that printed their line and \
         then never left MPI_Finalize; they were killed at the time limit and their figures \
         count.\n\n"
    );
    s.push_str(&main.render());
    s.push_str(
        "\n8-byte ping-pong between ranks 0 and 1, half round trip µs (median over launches of \
         the median of 7 batches of 20,000 round trips). The other ranks wait meanwhile: \
         pertinax's in the next guard's duplicate, Open MPI's in MPI_Barrier:\n\n",
    );
    s.push_str(&pp.render());
    s.push_str(
        "\nPer launch, the median over its repetitions, µs (Open MPI: also the duplicate with \
         the world barrier, and the free):\n\n```\n",
    );
    s.push_str(&detail);
    s.push_str("```\n");
    s.push_str(&listed("launches without usable results", &problems));
    s
}

fn json_rows(ctx: &Context, r: &PerRanks) {
    let spread = |s: Option<Spread>| {
        json!({
            "med": jnum(s.map(|s| s.med)),
            "p10": jnum(s.map(|s| s.p10)),
            "p90": jnum(s.map(|s| s.p90)),
        })
    };
    for (imp, t) in [(Impl::Pertinax, Some(&r.p)), (Impl::Ompi, r.o.as_ref())] {
        let Some(t) = t else { continue };
        ctx.out.json(&json!({
            "bench": "propagate", "impl": imp.name(), "ranks": r.ranks,
            "launches": t.counted.len(), "runs": t.ended.runs,
            "hangs_after_results": t.ended.hung_after, "hangs_before_results": t.ended.hung_before,
            "reps": t.counted.first().map(|l| l.reps),
            "propagation_us": spread(t.spread(|l| l.prop)),
            "whole_cycle_us": spread(t.spread(|l| l.total)),
            "pingpong_plain_us": jnum(t.med(|l| l.pp_plain)),
            "pingpong_guarded_us": jnum(t.med(|l| l.pp_guarded)),
        }));
    }
    if let Some(o) = &r.o {
        let m = |t: &Tally<Line>, f: fn(&Line) -> f64| t.med(|l| Some(f(l)));
        ctx.out.json(&json!({
            "bench": "propagate", "ranks": r.ranks,
            "propagation_ratio": jnum(stats::ratio(m(&r.p, |l| l.prop.med), m(o, |l| l.prop.med))),
            "whole_cycle_ratio": jnum(stats::ratio(m(&r.p, |l| l.total.med), m(o, |l| l.total.med))),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_line;
    use crate::run::{Exit, Launch};

    const PERTINAX: &str = "PROPAGATE N=4 reps=1000 total_med_us=45.8 p10=44.1 p90=47.6 \
        propagate_med_us=17.7 p10=17.1 p90=18.4 pingpong_plain_us=0.839 pingpong_guarded_us=0.850";
    const OMPI: &str = "PROPAGATE N=4 reps=1000 total_med_us=68.2 p10=57.7 p90=85.2 \
        propagate_med_us=15.1 p10=12.4 p90=20.0 pingpong_plain_us=2.255 impl=openmpi \
        unexpected=0 dup_med_us=50.1 free_med_us=3.2";

    fn check(text: &str, expected: &Line) {
        let r = parse_line(text).unwrap_or_else(|| panic!("no record in {text:?}"));
        assert_eq!(Line::parse(&r).as_ref(), Some(expected), "{text}");
    }

    #[test]
    fn both_lines_parse() {
        check(
            PERTINAX,
            &Line {
                ranks: 4,
                reps: 1000,
                total: Spread {
                    med: 45.8,
                    p10: 44.1,
                    p90: 47.6,
                },
                prop: Spread {
                    med: 17.7,
                    p10: 17.1,
                    p90: 18.4,
                },
                pp_plain: Some(0.839),
                pp_guarded: Some(0.850),
                unexpected: None,
                dup: None,
                free: None,
            },
        );
        check(
            OMPI,
            &Line {
                ranks: 4,
                reps: 1000,
                total: Spread {
                    med: 68.2,
                    p10: 57.7,
                    p90: 85.2,
                },
                prop: Spread {
                    med: 15.1,
                    p10: 12.4,
                    p90: 20.0,
                },
                pp_plain: Some(2.255),
                pp_guarded: None,
                unexpected: Some(0),
                dup: Some(50.1),
                free: Some(3.2),
            },
        );
        // A line cut before the propagation's percentiles is not usable.
        let cut = parse_line("PROPAGATE N=4 reps=10 total_med_us=1 p10=1 p90=2 propagate_med_us=1")
            .unwrap();
        assert_eq!(Line::parse(&cut), None);
        let other = parse_line("PP size=8 t_half_us_med=0.2").unwrap();
        assert_eq!(Line::parse(&other), None);
    }

    fn launch(variant: usize, exit: Exit, out: &str) -> Launch {
        Launch::fake(variant, exit, out)
    }

    fn check_tally(launches: &[Launch], variant: usize, ranks: usize) -> Tally<Line> {
        tally(&Campaign::fake(launches), variant, ranks)
    }

    #[test]
    fn finalize_hangs_count_and_failures_do_not() {
        let bad = OMPI.replace("unexpected=0", "unexpected=3");
        let launches = [
            launch(1, Exit::Code(0), OMPI),
            launch(1, Exit::TimedOut, &format!("# impl\n{OMPI}\n")),
            launch(1, Exit::TimedOut, ""),
            launch(1, Exit::Code(0), &bad),
            launch(1, Exit::Code(1), ""),
            launch(1, Exit::Code(1), OMPI),
            launch(0, Exit::Code(0), PERTINAX),
        ];
        let t = check_tally(&launches, 1, 4);
        assert_eq!((t.ended.runs, t.counted.len()), (6, 2));
        assert_eq!((t.ended.hung_after, t.ended.hung_before), (1, 1));
        assert_eq!(t.ended.failed.len(), 3, "{:?}", t.ended.failed);
        assert!(
            t.ended.failed[0].contains("3 calls"),
            "{:?}",
            t.ended.failed
        );
        assert!(
            t.ended.failed[1].contains("last words"),
            "{:?}",
            t.ended.failed
        );
        assert_eq!(t.med(|l| Some(l.prop.med)), Some(15.1));
        // A line for another rank count is not counted.
        assert_eq!(check_tally(&launches, 0, 8).counted.len(), 0);
        let p = check_tally(&launches, 0, 4);
        assert_eq!(p.spread(|l| l.total).map(|s| s.p90), Some(47.6));
    }

    #[test]
    fn tables_put_both_sides_together() {
        let launches = [
            launch(0, Exit::Code(0), PERTINAX),
            launch(1, Exit::TimedOut, OMPI),
        ];
        let r = PerRanks {
            ranks: 4,
            p: check_tally(&launches, 0, 4),
            o: Some(check_tally(&launches, 1, 4)),
        };
        let text = tables(&[r], 2);
        assert!(text.contains("| 4     | 17.7 (17.1–18.4)"), "{text}");
        assert!(text.contains("15.1 (12.4–20.0)"), "{text}");
        assert!(text.contains("| 1.17 "), "{text}"); // 17.7 / 15.1
        assert!(text.contains("1/1, 1/1 [1]"), "{text}");
        assert!(text.contains("share 2 cores"), "{text}");
        assert_eq!(default_limit(16, 1000), Duration::from_secs(110));
    }

    #[test]
    fn command_lines() {
        use crate::cli::{parse, Command};
        let Ok(Command::Propagate(d)) = parse("propagate") else {
            panic!("not propagate")
        };
        assert_eq!(d.opts, PropagateOpts::default());
        assert_eq!(d.opts.ranks, vec![2, 4, 8, 16]);
        assert_eq!((d.opts.reps(false), d.opts.reps(true)), (1000, 200));
        assert_eq!(d.common.launches_or(DEFAULT_LAUNCHES), 3);
        let Ok(Command::Propagate(a)) = parse("propagate --ranks 2,16 --reps 50 --launches 4")
        else {
            panic!("not propagate")
        };
        assert_eq!(a.opts.ranks, vec![2, 16]);
        assert_eq!(a.opts.reps(true), 50);
        assert_eq!(a.common.launches_or(DEFAULT_LAUNCHES), 4);
        assert!(parse("propagate --ranks 1").is_err());
        assert!(parse("propagate --reps 0").is_err());
    }
}
