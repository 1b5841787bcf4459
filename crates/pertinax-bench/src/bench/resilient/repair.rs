//! Repair time after one failure: ranks loop on a one-element allreduce on
//! a resilient communicator; the launcher SIGKILLs rank N-1 at the top of
//! an iteration (`--kill N-1@resilient.iter#K`); every survivor times the
//! call that spans the failure, minus its median fault-free call (see
//! [`crate::worker::repair`]): detection + repair + redo, max over
//! survivors.
//!
//! Per rank count, the schemes ([`SCHEMES`]) are variants interleaved
//! launch by launch. A launch counts when it exited with 0 (the victim's
//! injected death does not fail a job) and its `REPAIR` line says every
//! survivor saw exactly the victim fail and every sum was right.

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::{head, last_line, spread};
use crate::bench::{sentinel_summary, Context};
use crate::cli::{Common, ResCheck, ResilientOpts, REPAIR_AFTER, REPAIR_WARMUP};
use crate::parse::Record;
use crate::report::{jnum, Table};
use crate::run::{interleave, Cmd, Launch, Plan, Variant};
use crate::stats::Summary;
use crate::worker::ITER_POINT;

/// Launches per scheme and rank count unless `--launches` is given (a
/// launch takes well under a second of work).
const DEFAULT_LAUNCHES: usize = 5;

/// Time limit per launch unless `--timeout` is given.
const DEFAULT_LIMIT: Duration = Duration::from_secs(120);

/// The record key.
const KEY: &str = "REPAIR";

/// A resilient communicator whose repair is measured.
///
/// Only the flat communicator exists. The hierarchical one (local groups of
/// at most K ranks joined by their leaders; `pertinax run --resilient=hier`
/// already parses it, `pertinax-resilient` does not build it yet) goes
/// here as `Hier(ResCheck)`: [`Scheme::worker_args`] then passes its shape
/// to `worker repair` (a `--shape hier` option to add there, making the
/// worker build the hierarchical communicator), and its rows join the table
/// without other changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scheme {
    /// [`pertinax_resilient::Resilient`] with this check.
    Flat(ResCheck),
}

/// The schemes, in report order.
const SCHEMES: [Scheme; 2] = [Scheme::Flat(ResCheck::Agree), Scheme::Flat(ResCheck::Log)];

impl Scheme {
    /// The name in tables and JSON.
    fn name(self) -> String {
        match self {
            Scheme::Flat(c) => format!("flat {}", c.name()),
        }
    }

    /// What `worker repair` needs to build this communicator.
    fn worker_args(self) -> Vec<String> {
        match self {
            Scheme::Flat(c) => vec!["--check".into(), c.name().into()],
        }
    }

    /// Whether a `REPAIR` line comes from this scheme.
    fn matches(self, line: &Line) -> bool {
        match self {
            Scheme::Flat(c) => line.check == c,
        }
    }
}

/// One `REPAIR` line (on one line):
///
/// ```text
/// REPAIR check=log ranks=8 survivors=7 spanned=7 failed=7 repairs=1 iters=450 span_iter=349..349
///   repair_max_us=812.5 repair_min_us=640.2 span_max_us=830.1 base_med_us=17.6
///   after_med_us=16.9 bad=0
/// ```
#[derive(Clone, Debug, PartialEq)]
struct Line {
    check: ResCheck,
    ranks: usize,
    survivors: usize,
    /// Survivors that saw a repair.
    spanned: usize,
    /// The failed ranks (`-`: none).
    failed: Vec<usize>,
    repairs: u64,
    /// Spanning call minus fault-free median, max and min over survivors.
    repair_max: f64,
    repair_min: f64,
    /// The spanning call, max over survivors.
    span_max: f64,
    /// The median fault-free call, max over survivors.
    base: f64,
    /// The median call after the spanning one, max over survivors.
    after: Option<f64>,
    /// Calls with a wrong sum, over survivors.
    bad: u64,
}

impl Line {
    /// Reads a `REPAIR` record; `None` if a required field is missing.
    fn parse(r: &Record) -> Option<Line> {
        if r.key != KEY {
            return None;
        }
        let int = |k: &str| r.get(k)?.parse::<u64>().ok();
        let failed = match r.get("failed")? {
            "-" => Vec::new(),
            list => list
                .split(',')
                .map(|x| x.parse().ok())
                .collect::<Option<Vec<usize>>>()?,
        };
        Some(Line {
            check: ResCheck::from_name(r.get("check")?)?,
            ranks: int("ranks")? as usize,
            survivors: int("survivors")? as usize,
            spanned: int("spanned")? as usize,
            failed,
            repairs: int("repairs")?,
            repair_max: r.f64("repair_max_us")?,
            repair_min: r.f64("repair_min_us")?,
            span_max: r.f64("span_max_us")?,
            base: r.f64("base_med_us")?,
            after: r.f64("after_med_us").filter(|x| x.is_finite()),
            bad: int("bad")?,
        })
    }

    /// Why the line does not count for a launch of `ranks` ranks whose
    /// victim is rank `ranks - 1`, if it does not.
    fn problem(&self, ranks: usize) -> Option<String> {
        let victim = ranks - 1;
        if self.ranks != ranks {
            Some(format!("line for N={}", self.ranks))
        } else if self.failed != [victim] {
            Some(format!(
                "failed ranks {:?}, expected [{victim}]",
                self.failed
            ))
        } else if self.spanned != self.survivors || self.survivors != ranks - 1 {
            Some(format!(
                "{} of {} survivors saw a repair",
                self.spanned, self.survivors
            ))
        } else if self.bad > 0 {
            Some(format!("{} allreduce results were wrong", self.bad))
        } else if !self.repair_max.is_finite() {
            Some("no repair time".into())
        } else {
            None
        }
    }
}

/// What the launches of one scheme at one rank count produced.
#[derive(Clone, Debug, PartialEq)]
struct Tally {
    ranks: usize,
    scheme: Scheme,
    runs: usize,
    lines: Vec<Line>,
    /// Launches without a usable line: why.
    failed: Vec<String>,
}

impl Tally {
    fn of(launches: &[Launch], variant: usize, ranks: usize, scheme: Scheme) -> Tally {
        let mut t = Tally {
            ranks,
            scheme,
            runs: 0,
            lines: Vec::new(),
            failed: Vec::new(),
        };
        for l in launches.iter().filter(|l| l.variant == variant) {
            t.runs += 1;
            let rec = l.records.iter().find(|r| r.key == KEY);
            let line = rec.and_then(Line::parse);
            let why = match &line {
                _ if !l.outcome.ok() => {
                    format!("{}: {}", l.outcome.status(), last_line(&l.outcome))
                }
                None if rec.is_some() => "incomplete REPAIR line".into(),
                None => format!("no REPAIR line; stderr: {}", last_line(&l.outcome)),
                Some(x) if !scheme.matches(x) => format!("line for check {}", x.check.name()),
                Some(x) => match x.problem(ranks) {
                    Some(p) => p,
                    None => {
                        t.lines.push(x.clone());
                        continue;
                    }
                },
            };
            t.failed.push(why);
        }
        t
    }

    fn summary(&self, f: impl Fn(&Line) -> Option<f64>) -> Option<Summary> {
        Summary::of(&self.lines.iter().filter_map(f).collect::<Vec<_>>())
    }
}

/// The command of one scheme at `n` ranks: the victim, rank N-1, dies at
/// the top of the iteration after `REPAIR_WARMUP + timed` fault-free ones.
fn command(ctx: &Context, n: usize, scheme: Scheme, timed: usize) -> Cmd {
    let kill = format!("{}@{ITER_POINT}#{}", n - 1, REPAIR_WARMUP + timed + 1);
    Cmd::new(&ctx.launcher)
        .args(["run", "-n", &n.to_string(), "--kill", &kill, "--"])
        .arg(&ctx.exe)
        .args(["worker", "repair"])
        .args(scheme.worker_args())
        .args([
            "--iters".to_string(),
            (REPAIR_WARMUP + timed + REPAIR_AFTER).to_string(),
            "--warmup".into(),
            REPAIR_WARMUP.to_string(),
        ])
}

/// Runs the repair part for every rank count and prints its table.
///
/// # Errors
/// When a program cannot be started.
pub fn run(ctx: &mut Context, common: &Common, o: &ResilientOpts) -> Result<()> {
    let launches = common.launches_or(DEFAULT_LAUNCHES);
    let limit = ctx.timeout.unwrap_or(DEFAULT_LIMIT);
    let timed = o.repair_iters(ctx.quick);
    let mut tallies = Vec::new();
    let mut hosts = String::new();
    for &n in &o.repair_ranks {
        let variants: Vec<Variant> = SCHEMES
            .iter()
            .map(|&s| Variant {
                name: format!("{} n={n}", s.name()),
                cmd: command(ctx, n, s, timed),
            })
            .collect();
        ctx.out.text(&head(
            &format!(
                "resilient repair: {}; {launches} launches per scheme, interleaved launch by launch",
                ctx.placement(n)
            ),
            &variants,
        ));
        let plan = Plan {
            title: &format!("resilient repair n={n}"),
            variants: &variants,
            rounds: launches,
            limit,
            sentinel: &ctx.sentinel,
            scratch: &[],
        };
        let done = interleave(&plan, ctx.log.as_mut())?;
        for (i, &s) in SCHEMES.iter().enumerate() {
            tallies.push(Tally::of(&done, i, n, s));
        }
        hosts.push_str(&sentinel_summary(&variants, &done));
    }
    let mut text = table(&tallies, timed, ctx.cores);
    text.push_str(&hosts);
    ctx.out.text(&text);
    for t in &tallies {
        let sum = |s: Option<Summary>| {
            json!({
                "median": jnum(s.map(|s| s.median)), "min": jnum(s.map(|s| s.min)),
                "max": jnum(s.map(|s| s.max)),
            })
        };
        ctx.out.json(&json!({
            "bench": "resilient", "part": "repair", "scheme": t.scheme.name(),
            "ranks": t.ranks, "cores": ctx.cores, "launches": t.lines.len(), "runs": t.runs,
            "repair_us": sum(t.summary(|l| Some(l.repair_max))),
            "repair_min_us": sum(t.summary(|l| Some(l.repair_min))),
            "span_us": sum(t.summary(|l| Some(l.span_max))),
            "base_us": sum(t.summary(|l| Some(l.base))),
            "after_us": sum(t.summary(|l| l.after)),
        }));
    }
    Ok(())
}

/// The table of every rank count and scheme, and the failed launches.
fn table(tallies: &[Tally], timed: usize, cores: usize) -> String {
    let mut t = Table::new([
        "ranks",
        "scheme",
        "repair µs (max over survivors)",
        "min over survivors",
        "spanning call µs",
        "fault-free call µs",
        "call after µs",
        "launches ok/run",
    ]);
    let mut problems = String::new();
    for x in tallies {
        t.row(vec![
            x.ranks.to_string(),
            x.scheme.name(),
            spread(x.summary(|l| Some(l.repair_max)), Some(1)),
            spread(x.summary(|l| Some(l.repair_min)), Some(1)),
            spread(x.summary(|l| Some(l.span_max)), Some(1)),
            spread(x.summary(|l| Some(l.base)), Some(2)),
            spread(x.summary(|l| l.after), Some(2)),
            format!("{}/{}", x.lines.len(), x.runs),
        ]);
        for f in &x.failed {
            problems.push_str(&format!("- {} n={}: {f}\n", x.scheme.name(), x.ranks));
        }
    }
    let mut s = format!(
        "\n### resilient repair: one rank killed (SIGKILL) in an allreduce loop\n\n\
         Every rank loops on a one-element f64 allreduce on a resilient communicator; rank N-1 \
         is killed at the top of iteration {k} (`--kill N-1@{ITER_POINT}#{k}`) after \
         {REPAIR_WARMUP} untimed and {timed} timed fault-free iterations. Each survivor times \
         every call; the call during which its communicator was repaired spans the failure. \
         Repair = that call minus the survivor's median fault-free call (detection + repair + \
         redo), the maximum over survivors (min: the minimum over survivors); spanning call = \
         the longest such call; fault-free call and call after = the slowest survivor's median \
         before and after it. Cells: median (min–max) over launches, µs. N ranks share {cores} \
         cores (oversubscribed above {cores}). flat agree = Resilient with Check::Agree (Legio's \
         agreement after every collective); flat log = Check::Log. hierarchical: not measured \
         (pertinax-resilient has no hierarchical communicator yet).\n\n",
        k = REPAIR_WARMUP + timed + 1,
    );
    s.push_str(&t.render());
    if !problems.is_empty() {
        s.push_str("\nlaunches without usable results:\n\n");
        s.push_str(&problems);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_line, parse_output};
    use crate::run::{Exit, Outcome};

    const LINE: &str = "REPAIR check=log ranks=8 survivors=7 spanned=7 failed=7 repairs=1 \
        iters=450 span_iter=349..349 repair_max_us=812.5 repair_min_us=640.2 span_max_us=830.1 \
        base_med_us=17.6 after_med_us=16.9 bad=0";

    fn line() -> Line {
        Line {
            check: ResCheck::Log,
            ranks: 8,
            survivors: 7,
            spanned: 7,
            failed: vec![7],
            repairs: 1,
            repair_max: 812.5,
            repair_min: 640.2,
            span_max: 830.1,
            base: 17.6,
            after: Some(16.9),
            bad: 0,
        }
    }

    fn check(text: &str, expected: Option<Line>) {
        let r = parse_line(text).unwrap_or_else(|| panic!("no record in {text:?}"));
        assert_eq!(Line::parse(&r), expected, "{text}");
    }

    #[test]
    fn lines_parse() {
        check(LINE, Some(line()));
        let mut none = line();
        none.failed = Vec::new();
        none.after = None;
        check(
            &LINE
                .replace("failed=7", "failed=-")
                .replace("after_med_us=16.9", "after_med_us=-inf"),
            Some(none),
        );
        let mut two = line();
        two.failed = vec![3, 7];
        check(&LINE.replace("failed=7", "failed=3,7"), Some(two));
        check(&LINE.replace("failed=7", "failed=3,x"), None);
        check(&LINE.replace("check=log", "check=hier"), None);
        check(&LINE.replace(" bad=0", ""), None);
        let cut = parse_output(&LINE.replace(" bad=0", ""));
        let t = Tally::of(
            &[launch(0, Exit::Code(0), &LINE.replace(" bad=0", ""))],
            0,
            8,
            Scheme::Flat(ResCheck::Log),
        );
        assert_eq!(cut.len(), 1);
        assert!(t.failed[0].contains("incomplete"), "{:?}", t.failed);
        check(
            "RES comm=log op=bcast bytes=1 ranks=8 t_max_us=1 reps=2",
            None,
        );
    }

    #[test]
    fn problems_are_named() {
        assert_eq!(line().problem(8), None);
        assert!(line().problem(4).unwrap().contains("N=8"));
        let mut l = line();
        l.spanned = 6;
        assert!(l.problem(8).unwrap().contains("6 of 7"));
        let mut l = line();
        l.failed = vec![3];
        assert!(l.problem(8).unwrap().contains("[3]"));
        let mut l = line();
        l.bad = 2;
        assert!(l.problem(8).unwrap().contains("wrong"));
        let mut l = line();
        l.repair_max = f64::NEG_INFINITY;
        assert!(l.problem(8).unwrap().contains("no repair"));
    }

    fn launch(variant: usize, exit: Exit, out: &str) -> Launch {
        Launch {
            variant,
            round: 0,
            sentinel: None,
            sentinel_after: None,
            others_cpu: None,
            outcome: Outcome {
                exit,
                elapsed: Duration::ZERO,
                stdout: out.into(),
                stderr: "last words\n".into(),
            },
            records: parse_output(out),
        }
    }

    #[test]
    fn tallies_and_table() {
        let agree = LINE.replace("check=log", "check=agree");
        let launches = [
            launch(0, Exit::Code(0), &agree),
            launch(1, Exit::Code(0), LINE),
            launch(1, Exit::Code(0), &LINE.replace("812.5", "900.5")),
            launch(1, Exit::Code(1), LINE),
            launch(1, Exit::Code(0), ""),
            launch(1, Exit::Code(0), &agree),
            launch(1, Exit::Code(0), &LINE.replace("bad=0", "bad=1")),
        ];
        let t = Tally::of(&launches, 1, 8, Scheme::Flat(ResCheck::Log));
        assert_eq!((t.runs, t.lines.len(), t.failed.len()), (6, 2, 4));
        assert!(t.failed[0].contains("rc=1: last words"), "{:?}", t.failed);
        assert!(t.failed[1].contains("no REPAIR line"), "{:?}", t.failed);
        assert!(t.failed[2].contains("check agree"), "{:?}", t.failed);
        assert!(t.failed[3].contains("wrong"), "{:?}", t.failed);
        assert_eq!(t.summary(|l| Some(l.repair_max)).unwrap().median, 856.5);
        let a = Tally::of(&launches, 0, 8, Scheme::Flat(ResCheck::Agree));
        let text = table(&[a, t], 300, 2);
        let log = text.lines().find(|l| l.contains("| flat log")).unwrap();
        assert!(log.contains("| 856.5 (812.5–900.5) "), "{log}");
        assert!(log.contains("| 2/6 "), "{log}");
        assert!(text.contains("iteration 351"), "{text}");
        assert!(text.contains("hierarchical: not measured"), "{text}");
        assert!(
            text.contains("- flat log n=8: 1 allreduce results were wrong"),
            "{text}"
        );
    }

    #[test]
    fn the_victim_dies_after_the_timed_iterations() {
        let k = REPAIR_WARMUP + 300 + 1;
        assert_eq!(
            Scheme::Flat(ResCheck::Agree).worker_args(),
            ["--check", "agree"]
        );
        // The worker's loop is long enough to pass the kill and measure after it.
        assert!(REPAIR_WARMUP + 300 + REPAIR_AFTER > k + 10);
        assert_eq!(Scheme::Flat(ResCheck::Log).name(), "flat log");
    }
}
