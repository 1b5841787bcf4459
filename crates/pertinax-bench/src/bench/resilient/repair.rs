//! Repair time after one failure: ranks loop on a one-element allreduce on
//! a resilient communicator; the launcher SIGKILLs the victim at the top of
//! an iteration (`--kill V@resilient.iter#K`); every survivor times the
//! call that spans the failure, minus its median fault-free call (see
//! [`crate::worker::repair`]): detection + repair + redo, max over
//! survivors.
//!
//! Per rank count, the schemes ([`SCHEMES`]) are variants interleaved
//! launch by launch: the flat communicator (victim N-1) with either check,
//! and the hierarchical one (groups of k ranks, `rank / k`, whose master is
//! the lowest live rank) with a master victim and with a non-master victim
//! ([`Victim`]). A launch counts when it exited with 0 (the victim's
//! injected death does not fail a job) and its `REPAIR` line says every
//! survivor saw exactly the victim fail and every sum was right, and, for
//! the hierarchy, that the victim was a master (or not) when the
//! communicator was made. The hierarchy's expected repair time for a victim
//! chosen uniformly among the N ranks weights the two medians by the share
//! of masters, `ceil(N/k) / N` ([`weighted`]).

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::{head, hier_launch_args, last_line, per_core, spread};
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

/// Which rank of the hierarchical communicator dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Victim {
    /// A group's master ([`master_victim`]): its group repairs locally,
    /// the masters repair their communicator, and the group's next rank
    /// joins them as its new master.
    Master,
    /// A rank that is not a master ([`non_master_victim`]): only its group
    /// repairs.
    NonMaster,
}

/// A resilient communicator whose repair is measured.
///
/// [`Scheme::launcher_args`] and [`Scheme::worker_args`] make the job build
/// it (`pertinax run --resilient=hier --resilient-k K` for the
/// hierarchical one, whose only check is agree), [`Scheme::victim`] picks
/// the rank that dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scheme {
    /// [`pertinax_resilient::Resilient`] with this check; the victim is
    /// rank N-1.
    Flat(ResCheck),
    /// [`pertinax_resilient::Hierarchical`] (agree) with this victim.
    Hier(Victim),
}

/// The schemes, in report order.
const SCHEMES: [Scheme; 4] = [
    Scheme::Flat(ResCheck::Agree),
    Scheme::Flat(ResCheck::Log),
    Scheme::Hier(Victim::Master),
    Scheme::Hier(Victim::NonMaster),
];

/// The master victim at `n` ranks in groups of `k`: the lowest rank of the
/// last group but group 0 that has at least 2 members, so that a survivor
/// takes the master's place (the master repair of the paper; the master of
/// a group of one would leave no successor); rank 0 when only group 0 has
/// 2 members (`n <= k + 1`).
fn master_victim(n: usize, k: usize) -> usize {
    (1..n.div_ceil(k))
        .rev()
        .find(|g| n - g * k >= 2)
        .map_or(0, |g| g * k)
}

/// The non-master victim at `n` ranks in groups of `k`: the highest rank
/// that is not the lowest of its group (`r % k != 0`): N-1, or N-2 when N-1
/// starts a group.
fn non_master_victim(n: usize, k: usize) -> usize {
    (1..n).rev().find(|r| r % k != 0).unwrap_or(n - 1)
}

/// The share of masters among `n` ranks in groups of `k`: `ceil(n/k) / n`,
/// the probability that a victim chosen uniformly is a master.
fn master_share(n: usize, k: usize) -> f64 {
    n.div_ceil(k) as f64 / n as f64
}

/// The hierarchy's expected repair time for a uniformly chosen victim:
/// `P·master + (1-P)·non-master`, `P` = [`master_share`].
fn weighted(n: usize, k: usize, master: f64, non_master: f64) -> f64 {
    let p = master_share(n, k);
    p * master + (1.0 - p) * non_master
}

impl Scheme {
    /// The name in tables and JSON.
    fn name(self) -> String {
        match self {
            Scheme::Flat(c) => format!("flat {}", c.name()),
            Scheme::Hier(Victim::Master) => "hier master".into(),
            Scheme::Hier(Victim::NonMaster) => "hier non-master".into(),
        }
    }

    /// The rank that dies at `n` ranks (groups of `k` for the hierarchy).
    fn victim(self, n: usize, k: usize) -> usize {
        match self {
            Scheme::Flat(_) => n - 1,
            Scheme::Hier(Victim::Master) => master_victim(n, k),
            Scheme::Hier(Victim::NonMaster) => non_master_victim(n, k),
        }
    }

    /// What `pertinax run` needs to make the job build this communicator.
    fn launcher_args(self, k: usize) -> Vec<String> {
        match self {
            Scheme::Flat(_) => Vec::new(),
            Scheme::Hier(_) => hier_launch_args(k),
        }
    }

    /// What `worker repair` needs to build this communicator.
    fn worker_args(self) -> Vec<String> {
        let c = match self {
            Scheme::Flat(c) => c,
            Scheme::Hier(_) => ResCheck::Agree,
        };
        vec!["--check".into(), c.name().into()]
    }

    /// Whether a `REPAIR` line comes from this scheme.
    fn matches(self, line: &Line) -> bool {
        match self {
            Scheme::Flat(c) => line.hier.is_none() && line.check == c,
            Scheme::Hier(_) => line.hier.is_some() && line.check == ResCheck::Agree,
        }
    }

    /// Why a hierarchical line does not fit this scheme's `victim` and `k`,
    /// if it does not: another k, or a victim of the other kind.
    fn kind_problem(self, line: &Line, victim: usize, k: usize) -> Option<String> {
        let (Scheme::Hier(want), Some(h)) = (self, &line.hier) else {
            return None;
        };
        let was = h.masters.contains(&victim);
        if h.k != k {
            Some(format!("k={}, expected k={k}", h.k))
        } else if was != (want == Victim::Master) {
            let kind = if was { "a master" } else { "not a master" };
            Some(format!(
                "victim {victim} was {kind} (masters {:?})",
                h.masters
            ))
        } else {
            None
        }
    }

    /// The victim's cell: its rank and kind.
    fn victim_cell(self, n: usize, k: usize) -> String {
        let v = self.victim(n, k);
        match self {
            Scheme::Flat(_) => format!("{v} (N-1)"),
            Scheme::Hier(kind) => {
                let g = v / k;
                let last = (g * k + k).min(n) - 1;
                let what = match kind {
                    Victim::Master => "master",
                    Victim::NonMaster => "non-master",
                };
                format!("{v}: {what} of group {g} (ranks {}–{last})", g * k)
            }
        }
    }
}

/// The hierarchical fields of a `REPAIR` line.
#[derive(Clone, Debug, PartialEq)]
struct HierFields {
    k: usize,
    /// The masters when the communicator was made.
    masters: Vec<usize>,
    /// The most local and global repairs a survivor made.
    local_repairs: u64,
    global_repairs: u64,
}

/// One `REPAIR` line (on one line; `shape=flat` where it is absent):
///
/// ```text
/// REPAIR shape=flat check=log ranks=8 survivors=7 spanned=7 failed=7 repairs=1 iters=450
///   span_iter=349..349 repair_max_us=812.5 repair_min_us=640.2 span_max_us=830.1
///   base_med_us=17.6 after_med_us=16.9 bad=0
/// ```
///
/// and with `shape=hier`, at the end: `k=3 masters=0,3,6 local_repairs=1
/// global_repairs=0`.
#[derive(Clone, Debug, PartialEq)]
struct Line {
    check: ResCheck,
    ranks: usize,
    survivors: usize,
    /// Survivors that saw the failure.
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
    /// `shape=hier`: the hierarchy's fields.
    hier: Option<HierFields>,
}

/// A comma-separated list of ranks, `-` for none.
fn ranks_list(s: &str) -> Option<Vec<usize>> {
    match s {
        "-" => Some(Vec::new()),
        list => list.split(',').map(|x| x.parse().ok()).collect(),
    }
}

impl Line {
    /// Reads a `REPAIR` record; `None` if a required field is missing.
    fn parse(r: &Record) -> Option<Line> {
        if r.key != KEY {
            return None;
        }
        let int = |k: &str| r.get(k)?.parse::<u64>().ok();
        let hier = match r.get("shape").unwrap_or("flat") {
            "flat" => None,
            "hier" => Some(HierFields {
                k: int("k")? as usize,
                masters: ranks_list(r.get("masters")?)?,
                local_repairs: int("local_repairs")?,
                global_repairs: int("global_repairs")?,
            }),
            _ => return None,
        };
        Some(Line {
            check: ResCheck::from_name(r.get("check")?)?,
            ranks: int("ranks")? as usize,
            survivors: int("survivors")? as usize,
            spanned: int("spanned")? as usize,
            failed: ranks_list(r.get("failed")?)?,
            repairs: int("repairs")?,
            repair_max: r.f64("repair_max_us")?,
            repair_min: r.f64("repair_min_us")?,
            span_max: r.f64("span_max_us")?,
            base: r.f64("base_med_us")?,
            after: r.f64("after_med_us").filter(|x| x.is_finite()),
            bad: int("bad")?,
            hier,
        })
    }

    /// Why the line does not count for a launch of `ranks` ranks whose
    /// victim is rank `victim`, if it does not.
    fn problem(&self, ranks: usize, victim: usize) -> Option<String> {
        if self.ranks != ranks {
            Some(format!("line for N={}", self.ranks))
        } else if self.failed != [victim] {
            Some(format!(
                "failed ranks {:?}, expected [{victim}]",
                self.failed
            ))
        } else if self.spanned != self.survivors || self.survivors != ranks - 1 {
            Some(format!(
                "{} of {} survivors saw the failure",
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
    /// The hierarchy's group size at this rank count.
    k: usize,
    runs: usize,
    lines: Vec<Line>,
    /// Launches without a usable line: why.
    failed: Vec<String>,
}

impl Tally {
    fn of(launches: &[Launch], variant: usize, ranks: usize, scheme: Scheme, k: usize) -> Tally {
        let mut t = Tally {
            ranks,
            scheme,
            k,
            runs: 0,
            lines: Vec::new(),
            failed: Vec::new(),
        };
        let victim = scheme.victim(ranks, k);
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
                Some(x) if !scheme.matches(x) => format!(
                    "line for {} {}",
                    if x.hier.is_some() { "hier" } else { "flat" },
                    x.check.name()
                ),
                Some(x) => match x
                    .problem(ranks, victim)
                    .or_else(|| scheme.kind_problem(x, victim, k))
                {
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

    /// The median repair time (max over survivors) over launches.
    fn repair_median(&self) -> Option<f64> {
        self.summary(|l| Some(l.repair_max)).map(|s| s.median)
    }

    /// The hierarchy's repair counts (`local/global`, most over survivors)
    /// as the launches reported them, each different pair once; `-` for
    /// the flat schemes.
    fn repairs_cell(&self) -> String {
        let mut seen: Vec<String> = Vec::new();
        for h in self.lines.iter().filter_map(|l| l.hier.as_ref()) {
            let c = format!("{}/{}", h.local_repairs, h.global_repairs);
            if !seen.contains(&c) {
                seen.push(c);
            }
        }
        if seen.is_empty() {
            "-".into()
        } else {
            seen.join(", ")
        }
    }
}

/// The hierarchy's weighted repair time at one rank count, from the
/// master and non-master tallies.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Weighted {
    ranks: usize,
    k: usize,
    master: f64,
    non_master: f64,
    /// [`weighted`] of the two.
    value: f64,
}

impl Weighted {
    /// From the tallies of one rank count, when both victims have a median.
    fn of(tallies: &[Tally], ranks: usize) -> Option<Weighted> {
        let med = |v: Victim| {
            tallies
                .iter()
                .find(|t| t.ranks == ranks && t.scheme == Scheme::Hier(v))
                .and_then(|t| Some((t.k, t.repair_median()?)))
        };
        let (k, master) = med(Victim::Master)?;
        let (_, non_master) = med(Victim::NonMaster)?;
        Some(Weighted {
            ranks,
            k,
            master,
            non_master,
            value: weighted(ranks, k, master, non_master),
        })
    }
}

/// The command of one scheme at `n` ranks: the victim dies at the top of
/// the iteration after `REPAIR_WARMUP + timed` fault-free ones.
fn command(ctx: &Context, n: usize, scheme: Scheme, timed: usize, k: usize) -> Cmd {
    let kill = format!(
        "{}@{ITER_POINT}#{}",
        scheme.victim(n, k),
        REPAIR_WARMUP + timed + 1
    );
    Cmd::new(&ctx.launcher)
        .args(["run", "-n", &n.to_string()])
        .args(scheme.launcher_args(k))
        .args(["--kill", &kill, "--"])
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
        let k = o.hier_k(n);
        let variants: Vec<Variant> = SCHEMES
            .iter()
            .map(|&s| Variant {
                name: format!("{} n={n}", s.name()),
                cmd: command(ctx, n, s, timed, k),
            })
            .collect();
        ctx.out.text(&head(
            &format!(
                "resilient repair: {}, hier k={k}; {launches} launches per scheme, interleaved \
                 launch by launch",
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
            tallies.push(Tally::of(&done, i, n, s, k));
        }
        hosts.push_str(&sentinel_summary(&variants, &done));
    }
    let mut text = table(&tallies, &o.repair_ranks, timed, ctx.cores);
    text.push_str(&hosts);
    ctx.out.text(&text);
    let sum = |s: Option<Summary>| {
        json!({
            "median": jnum(s.map(|s| s.median)), "min": jnum(s.map(|s| s.min)),
            "max": jnum(s.map(|s| s.max)),
        })
    };
    for t in &tallies {
        let hier = matches!(t.scheme, Scheme::Hier(_));
        ctx.out.json(&json!({
            "bench": "resilient", "part": "repair", "scheme": t.scheme.name(),
            "ranks": t.ranks, "cores": ctx.cores, "launches": t.lines.len(), "runs": t.runs,
            "victim": t.scheme.victim(t.ranks, t.k), "hier_k": hier.then_some(t.k),
            "repair_us": sum(t.summary(|l| Some(l.repair_max))),
            "repair_min_us": sum(t.summary(|l| Some(l.repair_min))),
            "span_us": sum(t.summary(|l| Some(l.span_max))),
            "base_us": sum(t.summary(|l| Some(l.base))),
            "after_us": sum(t.summary(|l| l.after)),
        }));
    }
    for w in o
        .repair_ranks
        .iter()
        .filter_map(|&n| Weighted::of(&tallies, n))
    {
        ctx.out.json(&json!({
            "bench": "resilient", "part": "repair", "scheme": "hier weighted",
            "ranks": w.ranks, "cores": ctx.cores, "hier_k": w.k,
            "p_master": jnum(Some(master_share(w.ranks, w.k))),
            "master_us": jnum(Some(w.master)), "non_master_us": jnum(Some(w.non_master)),
            "repair_us": jnum(Some(w.value)),
        }));
    }
    Ok(())
}

/// The table of every rank count and scheme (after the hierarchical ones
/// of a rank count, their weighted combination), and the failed launches.
fn table(tallies: &[Tally], ranks: &[usize], timed: usize, cores: usize) -> String {
    let mut t = Table::new([
        "ranks",
        "ranks on cores",
        "scheme",
        "hier k",
        "victim",
        "repair µs (max over survivors)",
        "min over survivors",
        "spanning call µs",
        "fault-free call µs",
        "call after µs",
        "hier repairs local/global",
        "launches ok/run",
    ]);
    let mut problems = String::new();
    for &n in ranks {
        for x in tallies.iter().filter(|x| x.ranks == n) {
            let hier = matches!(x.scheme, Scheme::Hier(_));
            t.row(vec![
                x.ranks.to_string(),
                per_core(x.ranks, cores),
                x.scheme.name(),
                if hier { x.k.to_string() } else { "-".into() },
                x.scheme.victim_cell(x.ranks, x.k),
                spread(x.summary(|l| Some(l.repair_max)), Some(1)),
                spread(x.summary(|l| Some(l.repair_min)), Some(1)),
                spread(x.summary(|l| Some(l.span_max)), Some(1)),
                spread(x.summary(|l| Some(l.base)), Some(2)),
                spread(x.summary(|l| l.after), Some(2)),
                x.repairs_cell(),
                format!("{}/{}", x.lines.len(), x.runs),
            ]);
            for f in &x.failed {
                problems.push_str(&format!("- {} n={}: {f}\n", x.scheme.name(), x.ranks));
            }
        }
        let Some(k) = tallies.iter().find(|x| x.ranks == n).map(|x| x.k) else {
            continue;
        };
        let w = Weighted::of(tallies, n);
        t.row(vec![
            n.to_string(),
            per_core(n, cores),
            "hier weighted".into(),
            k.to_string(),
            format!(
                "P(master) = {}/{n} = {:.3}",
                n.div_ceil(k),
                master_share(n, k)
            ),
            w.map_or("-".into(), |w| {
                format!(
                    "{:.1} (= {:.3}·{:.1} + {:.3}·{:.1})",
                    w.value,
                    master_share(n, k),
                    w.master,
                    1.0 - master_share(n, k),
                    w.non_master
                )
            }),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
        ]);
    }
    let mut s = format!(
        "\n### resilient repair: one rank killed (SIGKILL) in an allreduce loop\n\n\
         Every rank loops on a one-element f64 allreduce on a resilient communicator; the victim \
         is killed at the top of iteration {k} (`--kill V@{ITER_POINT}#{k}`) after \
         {REPAIR_WARMUP} untimed and {timed} timed fault-free iterations. Each survivor times \
         every call; the call during which its communicator was repaired spans the failure (in \
         the hierarchy, a survivor whose communicators needed no repair takes the first call \
         whose result lacks the victim). Repair = that call minus the survivor's median \
         fault-free call (detection + repair + redo), the maximum over survivors (min: the \
         minimum over survivors); spanning call = the longest such call; fault-free call and \
         call after = the slowest survivor's median before and after it. Cells: median \
         (min–max) over launches, µs. All N ranks run on this machine's {cores} cores (ranks on \
         cores: how many ranks shared each core; above {cores} ranks the job is \
         oversubscribed). flat agree = Resilient with Check::Agree (Legio's agreement after \
         every collective); flat log = Check::Log; the victim of both is rank N-1. hier = \
         Hierarchical (Check::Agree, its only check; built at every rank count): group g holds \
         ranks k·g to k·g+k-1, its master is its lowest live rank. hier master: the victim is \
         the master of the last group but group 0 with at least two members (a survivor \
         becomes master and joins the masters' communicator; rank 0 when there is no such \
         group); hier non-master: the highest rank that is not a master. A launch counts only \
         if the worker's list of masters confirms the victim's kind. hier repairs: the most \
         local and global repairs a survivor made (a master's death needs both). hier \
         weighted: the expected repair time for a victim chosen uniformly among the N ranks, \
         P(master)·master + (1-P(master))·non-master of the two medians, with P(master) = \
         ceil(N/k)/N (the masters' share).\n\n",
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

    /// A hierarchical line at 8 ranks, k=3, whose victim is rank 6.
    const HIER: &str = "REPAIR shape=hier check=agree ranks=8 survivors=7 spanned=7 failed=6 \
        repairs=2 iters=450 span_iter=351..351 repair_max_us=1500.0 repair_min_us=900.0 \
        span_max_us=1520.0 base_med_us=20.0 after_med_us=21.0 bad=0 k=3 masters=0,3,6 \
        local_repairs=1 global_repairs=1";

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
            hier: None,
        }
    }

    fn check(text: &str, expected: Option<Line>) {
        let r = parse_line(text).unwrap_or_else(|| panic!("no record in {text:?}"));
        assert_eq!(Line::parse(&r), expected, "{text}");
    }

    #[test]
    fn lines_parse() {
        check(LINE, Some(line()));
        check(&LINE.replace("REPAIR ", "REPAIR shape=flat "), Some(line()));
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
        check(&LINE.replace("REPAIR ", "REPAIR shape=tree "), None);
        check(&LINE.replace(" bad=0", ""), None);
        let cut = parse_output(&LINE.replace(" bad=0", ""));
        let t = Tally::of(
            &[launch(0, Exit::Code(0), &LINE.replace(" bad=0", ""))],
            0,
            8,
            Scheme::Flat(ResCheck::Log),
            3,
        );
        assert_eq!(cut.len(), 1);
        assert!(t.failed[0].contains("incomplete"), "{:?}", t.failed);
        check(
            "RES comm=log op=bcast bytes=1 ranks=8 t_max_us=1 reps=2",
            None,
        );
        let r = parse_line(HIER).unwrap();
        let h = Line::parse(&r).unwrap();
        assert_eq!((h.check, h.failed.clone()), (ResCheck::Agree, vec![6]));
        assert_eq!(
            h.hier,
            Some(HierFields {
                k: 3,
                masters: vec![0, 3, 6],
                local_repairs: 1,
                global_repairs: 1
            })
        );
        // A hierarchical line must carry the hierarchy's fields.
        check(&HIER.replace(" k=3", ""), None);
        check(&HIER.replace("masters=0,3,6", "masters=0,x"), None);
    }

    #[test]
    fn problems_are_named() {
        assert_eq!(line().problem(8, 7), None);
        assert!(line().problem(4, 3).unwrap().contains("N=8"));
        assert!(line().problem(8, 6).unwrap().contains("expected [6]"));
        let mut l = line();
        l.spanned = 6;
        assert!(l.problem(8, 7).unwrap().contains("6 of 7"));
        let mut l = line();
        l.failed = vec![3];
        assert!(l.problem(8, 7).unwrap().contains("[3]"));
        let mut l = line();
        l.bad = 2;
        assert!(l.problem(8, 7).unwrap().contains("wrong"));
        let mut l = line();
        l.repair_max = f64::NEG_INFINITY;
        assert!(l.problem(8, 7).unwrap().contains("no repair"));
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
        let t = Tally::of(&launches, 1, 8, Scheme::Flat(ResCheck::Log), 3);
        assert_eq!((t.runs, t.lines.len(), t.failed.len()), (6, 2, 4));
        assert!(t.failed[0].contains("rc=1: last words"), "{:?}", t.failed);
        assert!(t.failed[1].contains("no REPAIR line"), "{:?}", t.failed);
        assert!(t.failed[2].contains("flat agree"), "{:?}", t.failed);
        assert!(t.failed[3].contains("wrong"), "{:?}", t.failed);
        assert_eq!(t.summary(|l| Some(l.repair_max)).unwrap().median, 856.5);
        let a = Tally::of(&launches, 0, 8, Scheme::Flat(ResCheck::Agree), 3);
        let text = table(&[a, t], &[8], 300, 2);
        let log = text.lines().find(|l| l.contains("| flat log")).unwrap();
        assert!(log.contains("| 856.5 (812.5–900.5) "), "{log}");
        assert!(log.contains("| 2/6 "), "{log}");
        assert!(log.contains("| 8 on 2 cores (4 per core) "), "{log}");
        assert!(log.contains("| 7 (N-1) "), "{log}");
        assert!(text.contains("iteration 351"), "{text}");
        assert!(
            text.contains("- flat log n=8: 1 allreduce results were wrong"),
            "{text}"
        );
        // Without hierarchical launches the weighted row has no value.
        let w = text
            .lines()
            .find(|l| l.contains("| hier weighted"))
            .unwrap();
        assert!(w.contains("| P(master) = 3/8 = 0.375 | - "), "{w}");
    }

    #[test]
    fn hierarchical_victims_are_checked_and_weighted() {
        let master = Scheme::Hier(Victim::Master);
        let non = Scheme::Hier(Victim::NonMaster);
        let nm = HIER
            .replace("failed=6", "failed=7")
            .replace("1500.0", "600.0")
            .replace("global_repairs=1", "global_repairs=0");
        let launches = [
            launch(0, Exit::Code(0), HIER),
            launch(0, Exit::Code(0), &HIER.replace("1500.0", "1700.0")),
            // Rank 6 was not a master in this one.
            launch(
                0,
                Exit::Code(0),
                &HIER.replace("masters=0,3,6", "masters=0,3,7"),
            ),
            launch(0, Exit::Code(0), &HIER.replace("k=3", "k=4")),
            launch(0, Exit::Code(0), LINE),
            launch(1, Exit::Code(0), &nm),
            launch(
                1,
                Exit::Code(0),
                &nm.replace("masters=0,3,6", "masters=0,3,7"),
            ),
        ];
        let m = Tally::of(&launches, 0, 8, master, 3);
        assert_eq!((m.runs, m.lines.len()), (5, 2), "{:?}", m.failed);
        assert!(
            m.failed[0].contains("victim 6 was not a master"),
            "{:?}",
            m.failed
        );
        assert!(m.failed[1].contains("k=4, expected k=3"), "{:?}", m.failed);
        assert!(m.failed[2].contains("line for flat log"), "{:?}", m.failed);
        let n = Tally::of(&launches, 1, 8, non, 3);
        assert_eq!((n.runs, n.lines.len()), (2, 1), "{:?}", n.failed);
        assert!(
            n.failed[0].contains("victim 7 was a master"),
            "{:?}",
            n.failed
        );
        assert_eq!(
            (m.repairs_cell(), n.repairs_cell()),
            ("1/1".into(), "1/0".into())
        );
        let w = Weighted::of(&[m.clone(), n.clone()], 8).unwrap();
        // 3 masters among 8 ranks: 3/8·1600 + 5/8·600.
        assert_eq!((w.master, w.non_master, w.value), (1600.0, 600.0, 975.0));
        assert_eq!(Weighted::of(std::slice::from_ref(&m), 8), None);
        let text = table(&[m, n], &[8], 300, 2);
        let row = |name: &str| {
            text.lines()
                .find(|l| l.contains(&format!("| {name} ")))
                .unwrap_or_else(|| panic!("no {name} row in\n{text}"))
                .to_string()
        };
        assert!(row("hier master").contains("| 6: master of group 2 (ranks 6–7) "));
        assert!(row("hier master").contains("| 1600.0 (1500.0–1700.0) "));
        assert!(row("hier master").contains("| 3 "));
        assert!(row("hier non-master").contains("| 7: non-master of group 2 (ranks 6–7) "));
        assert!(row("hier weighted").contains("| 975.0 (= 0.375·1600.0 + 0.625·600.0) "));
    }

    #[test]
    fn victims_by_rank_count_and_k() {
        // (n, k, master victim, non-master victim)
        for (n, k, m, nm) in [
            (4, 2, 2, 3),
            (8, 3, 6, 7),
            // 16 = 5 groups of 3 and {15}: 15 is a master without a
            // successor, so the master victim is 12 and the other 14.
            (16, 3, 12, 14),
            (3, 2, 0, 1),
            (8, 4, 4, 7),
            (9, 4, 4, 7),
            (5, 8, 0, 4),
        ] {
            assert_eq!(master_victim(n, k), m, "n={n} k={k}");
            assert_eq!(non_master_victim(n, k), nm, "n={n} k={k}");
            assert_eq!(m % k, 0, "n={n} k={k}: a master");
            assert_ne!(nm % k, 0, "n={n} k={k}: not a master");
            assert!(
                m == 0 || n - m >= 2,
                "n={n} k={k}: the group has a successor"
            );
        }
        assert_eq!(master_share(8, 3), 3.0 / 8.0);
        assert_eq!(master_share(16, 3), 6.0 / 16.0);
        assert_eq!(weighted(4, 2, 100.0, 200.0), 150.0);
    }

    #[test]
    fn the_victim_dies_after_the_timed_iterations() {
        let k = REPAIR_WARMUP + 300 + 1;
        assert_eq!(
            Scheme::Flat(ResCheck::Agree).worker_args(),
            ["--check", "agree"]
        );
        assert_eq!(
            Scheme::Hier(Victim::NonMaster).worker_args(),
            ["--check", "agree"]
        );
        assert!(Scheme::Flat(ResCheck::Log).launcher_args(3).is_empty());
        assert_eq!(
            Scheme::Hier(Victim::Master).launcher_args(3)[..3],
            ["--resilient=hier", "--resilient-k", "3"]
        );
        assert_eq!(Scheme::Flat(ResCheck::Agree).victim(8, 3), 7);
        // The worker's loop is long enough to pass the kill and measure after it.
        assert!(REPAIR_WARMUP + 300 + REPAIR_AFTER > k + 10);
        assert_eq!(Scheme::Flat(ResCheck::Log).name(), "flat log");
        assert_eq!(Scheme::Hier(Victim::NonMaster).name(), "hier non-master");
    }
}
