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
//! the lowest live rank and whose deputy the next one; the global
//! communicator holds every master and deputy) with one victim of each
//! kind ([`Victim`]): a master and a deputy (a global repair: global and
//! local shrink, then the new deputy joins) and a member, neither master
//! nor deputy (a repair inside its group only). A member exists only when
//! some group has 3 ranks or more (k >= 3): otherwise its scheme is skipped
//! at that rank count, and the output says so. A launch counts when it
//! exited with 0 (the victim's injected death does not fail a job) and its
//! `REPAIR` line says every survivor saw exactly the victim fail and every
//! sum was right, and, for the hierarchy, that the victim was of its kind
//! when the communicator was made (the line's lists of masters and
//! deputies). The hierarchy's expected repair time for a victim chosen
//! uniformly among the N ranks weights the three medians by the shares of
//! the kinds ([`weighted`]): `P_m·master + P_d·deputy + (1 − P_m −
//! P_d)·member`, with `P_m = ceil(N/k) / N` (one master per group) and
//! `P_d` = (groups of at least 2 ranks) / N (one deputy per such group);
//! when there is no member (k = 2), `P_m + P_d = 1` and the member term
//! is left out.

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::{hier_launch_args, per_core, spread};
use crate::bench::{head, listed, Campaign, Context, Judged, Tally};
use crate::cli::{ResCheck, ResilientOpts, REPAIR_AFTER, REPAIR_WARMUP};
use crate::parse::Record;
use crate::report::{jnum, Table};
use crate::run::{last_line, Cmd, Variant};
use crate::stats::Summary;
use crate::worker::ITER_POINT;

/// Launches per scheme and rank count unless `--launches` is given (a
/// launch takes well under a second of work).
const DEFAULT_LAUNCHES: usize = 5;

/// Time limit per launch unless `--timeout` is given.
const DEFAULT_LIMIT: Duration = Duration::from_secs(120);

/// The record key.
const KEY: &str = "REPAIR";

/// Which rank of the hierarchical communicator dies, by its kind when the
/// communicator is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Victim {
    /// A group's master ([`master_victim`]), local rank 0: the global
    /// communicator and the group shrink, the deputy becomes master and
    /// the group's next rank, if any, joins the global communicator as its
    /// deputy.
    Master,
    /// That group's deputy ([`deputy_victim`]), local rank 1: the global
    /// communicator and the group shrink, and the group's next rank, if
    /// any, joins the global communicator as its deputy.
    Deputy,
    /// A rank that is neither master nor deputy ([`member_victim`]), local
    /// rank 2 or more: only its group repairs.
    Member,
    /// The master victim's group's master and deputy together (both
    /// killed at the same iteration): the group loses every member of the
    /// global communicator; its next rank, the new master, rejoins it
    /// (called by the global communicator's rank 0) and the rank after
    /// that, if any, joins as its deputy. Not a kind of rank: left out of
    /// the weighted average.
    Pair,
}

impl Victim {
    /// Every kind, in report order.
    const ALL: [Victim; 3] = [Victim::Master, Victim::Deputy, Victim::Member];

    /// The kind's name in tables and messages.
    fn name(self) -> &'static str {
        match self {
            Victim::Master => "master",
            Victim::Deputy => "deputy",
            Victim::Member => "member",
            Victim::Pair => "master+deputy",
        }
    }

    /// The rank of this kind that dies at `n` ranks in groups of `k`;
    /// `None` when there is no such rank (a member at k = 2).
    fn rank(self, n: usize, k: usize) -> Option<usize> {
        match self {
            Victim::Master | Victim::Pair => Some(master_victim(n, k)),
            Victim::Deputy => Some(deputy_victim(n, k)),
            Victim::Member => member_victim(n, k),
        }
    }

    /// How many of `n` ranks in groups of `k` are of this kind when the
    /// communicator is made: one master per group (`ceil(n/k)`), one
    /// deputy per group of at least 2 ranks, the rest are members.
    fn count(self, n: usize, k: usize) -> usize {
        let groups = n.div_ceil(k);
        let deputies = (0..groups).filter(|g| (n - g * k).min(k) >= 2).count();
        match self {
            Victim::Master => groups,
            Victim::Deputy => deputies,
            Victim::Member => n - groups - deputies,
            Victim::Pair => 0,
        }
    }

    /// The probability that a victim chosen uniformly among `n` ranks in
    /// groups of `k` is of this kind: [`Victim::count`] / `n`.
    fn share(self, n: usize, k: usize) -> f64 {
        self.count(n, k) as f64 / n as f64
    }
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
const SCHEMES: [Scheme; 6] = [
    Scheme::Flat(ResCheck::Agree),
    Scheme::Flat(ResCheck::Log),
    Scheme::Hier(Victim::Master),
    Scheme::Hier(Victim::Deputy),
    Scheme::Hier(Victim::Member),
    Scheme::Hier(Victim::Pair),
];

/// The master victim at `n` ranks in groups of `k`: the lowest rank of the
/// last group but group 0 that has at least 2 members, so that the group
/// has a deputy to take the master's place (the master of a group of one
/// would leave no successor); rank 0 when only group 0 has 2 members
/// (`n <= k + 1`).
fn master_victim(n: usize, k: usize) -> usize {
    (1..n.div_ceil(k))
        .rev()
        .find(|g| n - g * k >= 2)
        .map_or(0, |g| g * k)
}

/// The deputy victim at `n` ranks in groups of `k`: the deputy of the
/// master victim's group, its second rank (the group has at least 2).
fn deputy_victim(n: usize, k: usize) -> usize {
    master_victim(n, k) + 1
}

/// The member victim at `n` ranks in groups of `k`: the highest rank that
/// is neither master nor deputy (`r % k >= 2`); `None` when there is none
/// (k = 2, or no group of 3 ranks).
fn member_victim(n: usize, k: usize) -> Option<usize> {
    (0..n).rev().find(|r| r % k >= 2)
}

/// The share of masters among `n` ranks in groups of `k`: `ceil(n/k) / n`,
/// the probability that a victim chosen uniformly is a master.
fn master_share(n: usize, k: usize) -> f64 {
    Victim::Master.share(n, k)
}

/// The hierarchy's expected repair time for a uniformly chosen victim:
/// `P_m·master + P_d·deputy + (1 − P_m − P_d)·member`, the shares from
/// [`Victim::share`]. The member term is left out when there is no member
/// (its weight is 0; `member` is then ignored); `None` when there are
/// members but no `member` time.
fn weighted(n: usize, k: usize, master: f64, deputy: f64, member: Option<f64>) -> Option<f64> {
    let member = if Victim::Member.count(n, k) == 0 {
        0.0
    } else {
        Victim::Member.share(n, k) * member?
    };
    Some(master_share(n, k) * master + Victim::Deputy.share(n, k) * deputy + member)
}

impl Scheme {
    /// The name in tables and JSON.
    fn name(self) -> String {
        match self {
            Scheme::Flat(c) => format!("flat {}", c.name()),
            Scheme::Hier(v) => format!("hier {}", v.name()),
        }
    }

    /// The rank that dies at `n` ranks (groups of `k` for the hierarchy);
    /// `None`: the scheme has no victim there and is skipped
    /// ([`Scheme::skip_reason`]).
    fn victim(self, n: usize, k: usize) -> Option<usize> {
        match self {
            Scheme::Flat(_) => Some(n - 1),
            Scheme::Hier(v) => v.rank(n, k),
        }
    }

    /// Every rank that dies when `victim` is [`Scheme::victim`]: the
    /// victim, and its deputy for [`Victim::Pair`].
    fn victims(self, victim: usize) -> Vec<usize> {
        match self {
            Scheme::Hier(Victim::Pair) => vec![victim, victim + 1],
            _ => vec![victim],
        }
    }

    /// Why the scheme is skipped at `n` ranks in groups of `k`, if it is.
    fn skip_reason(self, n: usize, k: usize) -> Option<String> {
        self.victim(n, k).is_none().then(|| {
            format!(
                "no rank is neither master nor deputy at k={k} (groups of at most {} ranks)",
                k.min(n)
            )
        })
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
    /// if it does not: another k, or a victim of another kind than the
    /// line's lists of masters and deputies make it.
    fn kind_problem(self, line: &Line, victim: usize, k: usize) -> Option<String> {
        let (Scheme::Hier(want), Some(h)) = (self, &line.hier) else {
            return None;
        };
        if h.k != k {
            return Some(format!("k={}, expected k={k}", h.k));
        }
        let lists = || format!("(masters {:?}, deputies {:?})", h.masters, h.deputies);
        let was = match (h.masters.contains(&victim), h.deputies.contains(&victim)) {
            (true, true) => {
                return Some(format!(
                    "victim {victim} was both a master and a deputy {}",
                    lists()
                ))
            }
            (true, false) => Victim::Master,
            (false, true) => Victim::Deputy,
            (false, false) => Victim::Member,
        };
        let want = if want == Victim::Pair {
            Victim::Master
        } else {
            want
        };
        (was != want).then(|| {
            format!(
                "victim {victim} was a {}, expected a {} {}",
                was.name(),
                want.name(),
                lists()
            )
        })
    }

    /// The victim's cell: its rank and kind, or why there is none.
    fn victim_cell(self, n: usize, k: usize) -> String {
        let Some(v) = self.victim(n, k) else {
            return format!("none: {}", self.skip_reason(n, k).unwrap_or_default());
        };
        match self {
            Scheme::Flat(_) => format!("{v} (N-1)"),
            Scheme::Hier(kind) => {
                let g = v / k;
                let last = (g * k + k).min(n) - 1;
                format!("{v}: {} of group {g} (ranks {}–{last})", kind.name(), g * k)
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
    /// The deputies when the communicator was made.
    deputies: Vec<usize>,
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
/// and with `shape=hier`, at the end: `k=3 masters=0,3,6 deputies=1,4,7
/// local_repairs=1 global_repairs=0`.
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
    /// The most time a survivor spent in the library's repair procedure
    /// (`proc_max_us`; absent from older workers).
    proc_max: Option<f64>,
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
                deputies: ranks_list(r.get("deputies")?)?,
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
            proc_max: r.f64("proc_max_us").filter(|x| x.is_finite()),
            bad: int("bad")?,
            hier,
        })
    }

    /// Why the line does not count for a launch of `ranks` ranks whose
    /// victim is rank `victim`, if it does not.
    fn problem(&self, ranks: usize, victims: &[usize]) -> Option<String> {
        if self.ranks != ranks {
            Some(format!("line for N={}", self.ranks))
        } else if self.failed != victims {
            Some(format!(
                "failed ranks {:?}, expected {victims:?}",
                self.failed
            ))
        } else if self.spanned != self.survivors || self.survivors != ranks - victims.len() {
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
struct SchemeTally {
    ranks: usize,
    scheme: Scheme,
    /// The hierarchy's group size at this rank count.
    k: usize,
    runs: usize,
    lines: Vec<Line>,
    /// Launches without a usable line: why.
    failed: Vec<String>,
}

impl SchemeTally {
    /// The launches of `variant`, checked against `scheme`'s victim at
    /// `ranks` ranks in groups of `k`; a scheme without a victim there
    /// (skipped, never launched) has no launches.
    fn of(c: &Campaign, variant: usize, ranks: usize, scheme: Scheme, k: usize) -> SchemeTally {
        let victim = scheme.victim(ranks, k);
        let Tally { ended, counted } = c.tally(variant, KEY, |l, rec| {
            let why = match rec.map(Line::parse) {
                _ if !l.outcome.ok() => {
                    format!("{}: {}", l.outcome.status(), last_line(&l.outcome.stderr))
                }
                Some(None) => "incomplete REPAIR line".into(),
                None => format!("no REPAIR line; stderr: {}", last_line(&l.outcome.stderr)),
                Some(Some(x)) if !scheme.matches(&x) => format!(
                    "line for {} {}",
                    if x.hier.is_some() { "hier" } else { "flat" },
                    x.check.name()
                ),
                Some(Some(x)) => match victim.and_then(|v| {
                    x.problem(ranks, &scheme.victims(v))
                        .or_else(|| scheme.kind_problem(&x, v, k))
                }) {
                    Some(p) => p,
                    None => return Judged::Counts(x),
                },
            };
            Judged::Fails(why)
        });
        SchemeTally {
            ranks,
            scheme,
            k,
            runs: ended.runs,
            lines: counted,
            failed: ended.failed,
        }
    }

    fn summary(&self, f: impl Fn(&Line) -> Option<f64>) -> Option<Summary> {
        Summary::of(&self.lines.iter().filter_map(f).collect::<Vec<_>>())
    }

    /// The median repair time (max over survivors) over launches.
    fn repair_median(&self) -> Option<f64> {
        self.summary(|l| Some(l.repair_max)).map(|s| s.median)
    }

    /// The median repair-procedure time (max over survivors) over launches.
    fn proc_median(&self) -> Option<f64> {
        self.summary(|l| l.proc_max).map(|s| s.median)
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
/// master, deputy and member tallies.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Weighted {
    ranks: usize,
    k: usize,
    master: f64,
    deputy: f64,
    /// `None` when there is no member at this rank count and k.
    member: Option<f64>,
    /// [`weighted`] of the three.
    value: f64,
}

impl Weighted {
    /// From the tallies of one rank count, when every kind that exists
    /// there (the member only when k >= 3) has a median.
    fn of(tallies: &[SchemeTally], ranks: usize) -> Option<Weighted> {
        Weighted::of_metric(tallies, ranks, SchemeTally::repair_median)
    }

    /// [`Weighted::of`] the repair procedure's times.
    fn of_proc(tallies: &[SchemeTally], ranks: usize) -> Option<Weighted> {
        Weighted::of_metric(tallies, ranks, SchemeTally::proc_median)
    }

    /// [`Weighted::of`] the medians `metric` gives.
    fn of_metric(
        tallies: &[SchemeTally],
        ranks: usize,
        metric: fn(&SchemeTally) -> Option<f64>,
    ) -> Option<Weighted> {
        let med = |v: Victim| {
            tallies
                .iter()
                .find(|t| t.ranks == ranks && t.scheme == Scheme::Hier(v))
                .and_then(|t| Some((t.k, metric(t)?)))
        };
        let (k, master) = med(Victim::Master)?;
        let (_, deputy) = med(Victim::Deputy)?;
        let member = med(Victim::Member).map(|(_, m)| m);
        Some(Weighted {
            ranks,
            k,
            master,
            deputy,
            member,
            value: weighted(ranks, k, master, deputy, member)?,
        })
    }

    /// `= P_m·master + P_d·deputy + P_r·member` with the numbers (the
    /// member term only when there are members).
    fn formula(&self) -> String {
        let (n, k) = (self.ranks, self.k);
        let mut s = format!(
            "= {:.3}·{:.1} + {:.3}·{:.1}",
            Victim::Master.share(n, k),
            self.master,
            Victim::Deputy.share(n, k),
            self.deputy
        );
        if let (true, Some(m)) = (Victim::Member.count(n, k) > 0, self.member) {
            s.push_str(&format!(" + {:.3}·{m:.1}", Victim::Member.share(n, k)));
        }
        s
    }
}

/// `P(master) = 3/8 = 0.375, P(deputy) = …, P(member) = …`: the shares of
/// the kinds at `n` ranks in groups of `k`.
fn shares_cell(n: usize, k: usize) -> String {
    Victim::ALL
        .iter()
        .map(|v| {
            format!(
                "P({}) = {}/{n} = {:.3}",
                v.name(),
                v.count(n, k),
                v.share(n, k)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The command of one scheme at `n` ranks: `victim` dies at the top of
/// the iteration after `REPAIR_WARMUP + timed` fault-free ones.
fn command(ctx: &Context, n: usize, scheme: Scheme, victim: usize, timed: usize, k: usize) -> Cmd {
    let mut cmd = Cmd::new(&ctx.launcher)
        .args(["run", "-n", &n.to_string()])
        .args(scheme.launcher_args(k));
    for v in scheme.victims(victim) {
        let kill = format!("{v}@{ITER_POINT}#{}", REPAIR_WARMUP + timed + 1);
        cmd = cmd.args(["--kill", &kill]);
    }
    cmd.arg("--")
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
pub fn run(ctx: &mut Context, o: &ResilientOpts) -> Result<()> {
    let pace = ctx.pace_or(DEFAULT_LAUNCHES, DEFAULT_LIMIT);
    let timed = o.repair_iters(ctx.quick);
    let mut tallies = Vec::new();
    let mut hosts = String::new();
    for &n in &o.repair_ranks {
        let k = o.hier_k(n);
        // The schemes with a victim at this n and k, in report order.
        let schemes: Vec<(Scheme, usize)> = SCHEMES
            .iter()
            .filter_map(|&s| Some((s, s.victim(n, k)?)))
            .collect();
        let variants: Vec<Variant> = schemes
            .iter()
            .map(|&(s, v)| {
                let name = format!("{} n={n}", s.name());
                Variant::new(name, command(ctx, n, s, v, timed, k))
            })
            .collect();
        let title = format!(
            "### resilient repair: {}, hier k={k}; {} launches per scheme, interleaved launch by \
             launch",
            ctx.placement(n),
            pace.rounds
        );
        let mut text = head(&title, &variants);
        for s in SCHEMES {
            if let Some(why) = s.skip_reason(n, k) {
                text.push_str(&format!("- {} n={n}: skipped, {why}\n", s.name()));
            }
        }
        ctx.out.text(&text);
        let c = ctx.campaign(&format!("resilient repair n={n}"), variants, pace)?;
        for s in SCHEMES {
            // A skipped scheme gets an empty tally (its row says why).
            let i = schemes
                .iter()
                .position(|&(x, _)| x == s)
                .unwrap_or(usize::MAX);
            tallies.push(SchemeTally::of(&c, i, n, s, k));
        }
        hosts.push_str(&c.hosts());
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
            "ranks": t.ranks, "cores": ctx.cores, "launches": t.lines.len(),
            "runs": t.runs,
            "victim": t.scheme.victim(t.ranks, t.k), "hier_k": hier.then_some(t.k),
            "skipped": t.scheme.skip_reason(t.ranks, t.k),
            "repair_us": sum(t.summary(|l| Some(l.repair_max))),
            "repair_min_us": sum(t.summary(|l| Some(l.repair_min))),
            "span_us": sum(t.summary(|l| Some(l.span_max))),
            "base_us": sum(t.summary(|l| Some(l.base))),
            "after_us": sum(t.summary(|l| l.after)),
            "proc_us": sum(t.summary(|l| l.proc_max)),
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
            "p_deputy": jnum(Some(Victim::Deputy.share(w.ranks, w.k))),
            "p_member": jnum(Some(Victim::Member.share(w.ranks, w.k))),
            "master_us": jnum(Some(w.master)), "deputy_us": jnum(Some(w.deputy)),
            "member_us": jnum(w.member), "repair_us": jnum(Some(w.value)),
            "proc_us": jnum(Weighted::of_proc(&tallies, w.ranks).map(|p| p.value)),
        }));
    }
    Ok(())
}

/// The table of every rank count and scheme (after the hierarchical ones
/// of a rank count, their weighted combination), and the failed launches.
fn table(tallies: &[SchemeTally], ranks: &[usize], timed: usize, cores: usize) -> String {
    let mut t = Table::new([
        "ranks",
        "ranks on cores",
        "scheme",
        "hier k",
        "victim",
        "repair µs (max over survivors)",
        "min over survivors",
        "repair procedure µs (max over survivors)",
        "spanning call µs",
        "fault-free call µs",
        "call after µs",
        "hier repairs local/global",
        "launches ok/run",
    ]);
    let mut problems = String::new();
    let mut skipped = String::new();
    for &n in ranks {
        for x in tallies.iter().filter(|x| x.ranks == n) {
            let hier = matches!(x.scheme, Scheme::Hier(_));
            let skip = x.scheme.skip_reason(x.ranks, x.k);
            t.row(vec![
                x.ranks.to_string(),
                per_core(x.ranks, cores),
                x.scheme.name(),
                if hier { x.k.to_string() } else { "-".into() },
                x.scheme.victim_cell(x.ranks, x.k),
                spread(x.summary(|l| Some(l.repair_max)), Some(1)),
                spread(x.summary(|l| Some(l.repair_min)), Some(1)),
                spread(x.summary(|l| l.proc_max), Some(1)),
                spread(x.summary(|l| Some(l.span_max)), Some(1)),
                spread(x.summary(|l| Some(l.base)), Some(2)),
                spread(x.summary(|l| l.after), Some(2)),
                x.repairs_cell(),
                if skip.is_some() {
                    "skipped".into()
                } else {
                    format!("{}/{}", x.lines.len(), x.runs)
                },
            ]);
            if let Some(why) = skip {
                skipped.push_str(&format!("- {} n={}: {why}\n", x.scheme.name(), x.ranks));
            }
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
            shares_cell(n, k),
            w.map_or("-".into(), |w| format!("{:.1} ({})", w.value, w.formula())),
            "-".into(),
            Weighted::of_proc(tallies, n)
                .map_or("-".into(), |w| format!("{:.1} ({})", w.value, w.formula())),
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
         minimum over survivors); repair procedure = the most time a survivor spent inside the \
         library's repair (Resilient::repair_time, Hierarchical::repair_time: the shrinks, the \
         joins of new deputies, the log's replays; neither detection nor redo), the time the \
         Legio paper's repair figure reports; spanning call = the longest such call; fault-free call and \
         call after = the slowest survivor's median before and after it. Cells: median \
         (min–max) over launches, µs. All N ranks run on this machine's {cores} cores (ranks on \
         cores: how many ranks shared each core; above {cores} ranks the job is \
         oversubscribed). flat agree = Resilient with Check::Agree (Legio's agreement after \
         every collective); flat log = Check::Log; the victim of both is rank N-1. hier = \
         Hierarchical (Check::Agree, its only check; built at every rank count): group g holds \
         ranks k·g to k·g+k-1, its master is its lowest live rank, its deputy the next one, and \
         the global communicator holds every master and deputy. hier master: the victim is the \
         master of the last group but group 0 with at least two members (rank 0 when there is \
         no such group): the global communicator and the group shrink, the deputy becomes \
         master and the group's next rank, if any, joins the global communicator as its new \
         deputy; hier deputy: that group's deputy (the master victim + 1): the same repairs, \
         the new deputy, if any, joins; hier member: the highest rank that is neither master nor deputy (rank \
         mod k >= 2), repaired inside its group only (there is none when k = 2: that scheme is \
         then skipped). A launch counts only if the worker's lists of masters and deputies \
         confirm the victim's kind. hier repairs: the most local and global repairs a survivor \
         made (a master's or deputy's death needs both). hier weighted: the expected repair \
         time for a victim chosen uniformly among the N ranks, P(master)·master + \
         P(deputy)·deputy + P(member)·member of the three medians, with P(master) = ceil(N/k)/N \
         (one master per group), P(deputy) = (groups of at least two ranks)/N and P(member) = \
         1 - P(master) - P(deputy) (the member term is left out when P(member) = 0).\n\n",
        k = REPAIR_WARMUP + timed + 1,
    );
    s.push_str(&t.render());
    s.push_str(&listed(
        "schemes skipped (no victim of their kind)",
        &skipped,
    ));
    s.push_str(&listed("launches without usable results", &problems));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_line, parse_output};
    use crate::run::{Exit, Launch};

    const LINE: &str = "REPAIR check=log ranks=8 survivors=7 spanned=7 failed=7 repairs=1 \
        iters=450 span_iter=349..349 repair_max_us=812.5 repair_min_us=640.2 span_max_us=830.1 \
        base_med_us=17.6 after_med_us=16.9 proc_max_us=402.7 bad=0";

    /// A hierarchical line at 8 ranks, k=3, whose victim is rank 6.
    const HIER: &str = "REPAIR shape=hier check=agree ranks=8 survivors=7 spanned=7 failed=6 \
        repairs=2 iters=450 span_iter=351..351 repair_max_us=1500.0 repair_min_us=900.0 \
        span_max_us=1520.0 base_med_us=20.0 after_med_us=21.0 bad=0 k=3 masters=0,3,6 \
        deputies=1,4,7 local_repairs=1 global_repairs=1";

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
            proc_max: Some(402.7),
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
        // An older worker's line, without the repair procedure's time.
        let mut old = line();
        old.proc_max = None;
        check(&LINE.replace(" proc_max_us=402.7", ""), Some(old));
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
        let t = tally(
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
                deputies: vec![1, 4, 7],
                local_repairs: 1,
                global_repairs: 1
            })
        );
        // A hierarchical line must carry the hierarchy's fields.
        check(&HIER.replace(" k=3", ""), None);
        check(&HIER.replace("masters=0,3,6", "masters=0,x"), None);
        check(&HIER.replace(" deputies=1,4,7", ""), None);
        let r = parse_line(&HIER.replace("deputies=1,4,7", "deputies=-")).unwrap();
        let h = Line::parse(&r).unwrap().hier.unwrap();
        assert_eq!(h.deputies, Vec::<usize>::new());
    }

    #[test]
    fn problems_are_named() {
        assert_eq!(line().problem(8, &[7]), None);
        assert!(line().problem(4, &[3]).unwrap().contains("N=8"));
        assert!(line().problem(8, &[6]).unwrap().contains("expected [6]"));
        let mut l = line();
        l.spanned = 6;
        assert!(l.problem(8, &[7]).unwrap().contains("6 of 7"));
        let mut l = line();
        l.failed = vec![3];
        assert!(l.problem(8, &[7]).unwrap().contains("[3]"));
        let mut l = line();
        l.bad = 2;
        assert!(l.problem(8, &[7]).unwrap().contains("wrong"));
        let mut l = line();
        l.repair_max = f64::NEG_INFINITY;
        assert!(l.problem(8, &[7]).unwrap().contains("no repair"));
    }

    fn launch(variant: usize, exit: Exit, out: &str) -> Launch {
        Launch::fake(variant, exit, out)
    }

    fn tally(launches: &[Launch], v: usize, n: usize, scheme: Scheme, k: usize) -> SchemeTally {
        SchemeTally::of(&Campaign::fake(launches), v, n, scheme, k)
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
        let t = tally(&launches, 1, 8, Scheme::Flat(ResCheck::Log), 3);
        assert_eq!((t.runs, t.lines.len(), t.failed.len()), (6, 2, 4));
        assert!(t.failed[0].contains("rc=1: last words"), "{:?}", t.failed);
        assert!(t.failed[1].contains("no REPAIR line"), "{:?}", t.failed);
        assert!(t.failed[2].contains("flat agree"), "{:?}", t.failed);
        assert!(t.failed[3].contains("wrong"), "{:?}", t.failed);
        assert_eq!(t.summary(|l| Some(l.repair_max)).unwrap().median, 856.5);
        let a = tally(&launches, 0, 8, Scheme::Flat(ResCheck::Agree), 3);
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
        assert!(
            w.contains(
                "| P(master) = 3/8 = 0.375, P(deputy) = 3/8 = 0.375, P(member) = 2/8 = 0.250 | - "
            ),
            "{w}"
        );
        assert!(!text.contains("schemes skipped"), "{text}");
    }

    #[test]
    fn hierarchical_victims_are_checked_and_weighted() {
        let master = Scheme::Hier(Victim::Master);
        let deputy = Scheme::Hier(Victim::Deputy);
        let member = Scheme::Hier(Victim::Member);
        // At 8 ranks, k=3: master 6, deputy 7, member 5.
        let dep = HIER
            .replace("failed=6", "failed=7")
            .replace("1500.0", "1400.0");
        let mem = HIER
            .replace("failed=6", "failed=5")
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
            launch(1, Exit::Code(0), &dep),
            // Rank 7 was a master here, not a deputy.
            launch(
                1,
                Exit::Code(0),
                &dep.replace("masters=0,3,6", "masters=0,3,7")
                    .replace("deputies=1,4,7", "deputies=1,4"),
            ),
            // ... and both here.
            launch(
                1,
                Exit::Code(0),
                &dep.replace("masters=0,3,6", "masters=0,3,7"),
            ),
            launch(2, Exit::Code(0), &mem),
            // Rank 5 was a deputy in this one.
            launch(
                2,
                Exit::Code(0),
                &mem.replace("deputies=1,4,7", "deputies=1,5,7"),
            ),
        ];
        let m = tally(&launches, 0, 8, master, 3);
        assert_eq!((m.runs, m.lines.len()), (5, 2), "{:?}", m.failed);
        assert!(
            m.failed[0].contains("victim 6 was a member, expected a master"),
            "{:?}",
            m.failed
        );
        assert!(m.failed[1].contains("k=4, expected k=3"), "{:?}", m.failed);
        assert!(m.failed[2].contains("line for flat log"), "{:?}", m.failed);
        let d = tally(&launches, 1, 8, deputy, 3);
        assert_eq!((d.runs, d.lines.len()), (3, 1), "{:?}", d.failed);
        assert!(
            d.failed[0].contains("victim 7 was a master, expected a deputy"),
            "{:?}",
            d.failed
        );
        assert!(
            d.failed[1].contains("victim 7 was both a master and a deputy"),
            "{:?}",
            d.failed
        );
        let r = tally(&launches, 2, 8, member, 3);
        assert_eq!((r.runs, r.lines.len()), (2, 1), "{:?}", r.failed);
        assert!(
            r.failed[0].contains("victim 5 was a deputy, expected a member"),
            "{:?}",
            r.failed
        );
        assert_eq!(
            (m.repairs_cell(), d.repairs_cell(), r.repairs_cell()),
            ("1/1".into(), "1/1".into(), "1/0".into())
        );
        let all = [m.clone(), d.clone(), r.clone()];
        let w = Weighted::of(&all, 8).unwrap();
        // 3 masters, 3 deputies and 2 members among 8 ranks:
        // 3/8·1600 + 3/8·1400 + 2/8·600.
        assert_eq!(
            (w.master, w.deputy, w.member, w.value),
            (1600.0, 1400.0, Some(600.0), 1275.0)
        );
        // Without a deputy or (when there are members) a member median,
        // there is no weighted value.
        assert_eq!(Weighted::of(std::slice::from_ref(&m), 8), None);
        assert_eq!(Weighted::of(&[m.clone(), d.clone()], 8), None);
        let text = table(&all, &[8], 300, 2);
        let row = |name: &str| {
            text.lines()
                .find(|l| l.contains(&format!("| {name} ")))
                .unwrap_or_else(|| panic!("no {name} row in\n{text}"))
                .to_string()
        };
        assert!(row("hier master").contains("| 6: master of group 2 (ranks 6–7) "));
        assert!(row("hier master").contains("| 1600.0 (1500.0–1700.0) "));
        assert!(row("hier master").contains("| 3 "));
        assert!(row("hier deputy").contains("| 7: deputy of group 2 (ranks 6–7) "));
        assert!(row("hier deputy").contains("| 1400.0 (1400.0–1400.0) "));
        assert!(row("hier deputy").contains("| 1/3 "));
        assert!(row("hier member").contains("| 5: member of group 1 (ranks 3–5) "));
        assert!(row("hier weighted")
            .contains("| 1275.0 (= 0.375·1600.0 + 0.375·1400.0 + 0.250·600.0) "));
    }

    #[test]
    fn without_members_the_member_scheme_is_skipped() {
        // At 8 ranks, k=2: masters 0,2,4,6, deputies 1,3,5,7, no member.
        assert_eq!(Scheme::Hier(Victim::Member).victim(8, 2), None);
        let why = Scheme::Hier(Victim::Member).skip_reason(8, 2).unwrap();
        assert!(why.contains("k=2"), "{why}");
        assert_eq!(Scheme::Hier(Victim::Deputy).skip_reason(8, 2), None);
        let line = HIER
            .replace("k=3", "k=2")
            .replace("masters=0,3,6", "masters=0,2,4,6")
            .replace("deputies=1,4,7", "deputies=1,3,5,7");
        let dep = line
            .replace("failed=6", "failed=7")
            .replace("1500.0", "1300.0");
        let launches = [
            launch(0, Exit::Code(0), &line),
            launch(1, Exit::Code(0), &dep),
        ];
        let tallies: Vec<SchemeTally> = Victim::ALL
            .iter()
            .enumerate()
            .map(|(i, &v)| tally(&launches, i, 8, Scheme::Hier(v), 2))
            .collect();
        assert_eq!(tallies[0].lines.len(), 1, "{:?}", tallies[0].failed);
        assert_eq!(tallies[1].lines.len(), 1, "{:?}", tallies[1].failed);
        // Never launched: no runs, whatever the variant index.
        assert_eq!((tallies[2].runs, tallies[2].lines.len()), (0, 0));
        let w = Weighted::of(&tallies, 8).unwrap();
        assert_eq!((w.member, w.value), (None, 0.5 * 1500.0 + 0.5 * 1300.0));
        let text = table(&tallies, &[8], 300, 2);
        let member = text.lines().find(|l| l.contains("| hier member ")).unwrap();
        assert!(
            member.contains("| none: no rank is neither master nor deputy"),
            "{member}"
        );
        assert!(member.contains("| skipped "), "{member}");
        assert!(text.contains("schemes skipped"), "{text}");
        assert!(
            text.contains(&format!("- hier member n=8: {why}")),
            "{text}"
        );
        let w = text
            .lines()
            .find(|l| l.contains("| hier weighted "))
            .unwrap();
        assert!(w.contains("P(member) = 0/8 = 0.000"), "{w}");
        assert!(
            w.contains("| 1400.0 (= 0.500·1500.0 + 0.500·1300.0) |"),
            "{w}"
        );
    }

    #[test]
    fn victims_by_rank_count_and_k() {
        // (n, k, master victim, deputy victim, member victim)
        for (n, k, m, d, r) in [
            (4, 2, 2, 3, None),
            (8, 3, 6, 7, Some(5)),
            // 16 = 5 groups of 3 and {15}: 15 is a master without a
            // deputy, so the master victim is 12; 14 is a member.
            (16, 3, 12, 13, Some(14)),
            (3, 2, 0, 1, None),
            (3, 3, 0, 1, Some(2)),
            (8, 4, 4, 5, Some(7)),
            // {8} is a group of one: 7 is still the highest member.
            (9, 4, 4, 5, Some(7)),
            (5, 8, 0, 1, Some(4)),
        ] {
            assert_eq!(master_victim(n, k), m, "n={n} k={k}");
            assert_eq!(deputy_victim(n, k), d, "n={n} k={k}");
            assert_eq!(member_victim(n, k), r, "n={n} k={k}");
        }
        assert_eq!(master_share(8, 3), 3.0 / 8.0);
        assert_eq!(master_share(16, 3), 6.0 / 16.0);
        // 16 ranks, k=3: 6 masters, 5 deputies ({15} has none), 5 members.
        assert_eq!(Victim::ALL.map(|v| v.count(16, 3)), [6, 5, 5]);
        assert_eq!(weighted(4, 2, 100.0, 200.0, None), Some(150.0));
        // A member's time is ignored when there are no members ...
        assert_eq!(weighted(4, 2, 100.0, 200.0, Some(1e9)), Some(150.0));
        // ... and needed when there are.
        assert_eq!(weighted(8, 3, 100.0, 200.0, None), None);
        assert_eq!(
            weighted(8, 3, 800.0, 400.0, Some(80.0)),
            Some(300.0 + 150.0 + 20.0)
        );
    }

    #[test]
    fn the_shares_of_the_kinds_sum_to_one() {
        for n in 3..=64 {
            for k in 2..=9 {
                let counts = Victim::ALL.map(|v| v.count(n, k));
                assert_eq!(counts.iter().sum::<usize>(), n, "n={n} k={k}");
                let sum: f64 = Victim::ALL.iter().map(|v| v.share(n, k)).sum();
                assert!((sum - 1.0).abs() < 1e-12, "n={n} k={k}: {sum}");
                // The kinds as the ranks have them when the communicator
                // is made: local rank 0, 1, and the rest.
                let deputies = (0..n).filter(|r| r % k == 1).count();
                assert_eq!(counts[1], deputies, "n={n} k={k}");
                // Equal times weigh to that time.
                let w = weighted(n, k, 7.0, 7.0, Some(7.0)).unwrap();
                assert!((w - 7.0).abs() < 1e-9, "n={n} k={k}: {w}");
            }
        }
    }

    #[test]
    fn with_k_2_every_rank_is_a_master_or_a_deputy() {
        for n in 3..=64 {
            assert_eq!(member_victim(n, 2), None, "n={n}");
            assert_eq!(Victim::Member.count(n, 2), 0, "n={n}");
            let pm = Victim::Master.share(n, 2);
            let pd = Victim::Deputy.share(n, 2);
            assert!((pm + pd - 1.0).abs() < 1e-12, "n={n}");
            assert_eq!(
                weighted(n, 2, 10.0, 20.0, None),
                Some(pm * 10.0 + pd * 20.0),
                "n={n}"
            );
        }
        // With k >= 3 there is always a member from 3 ranks on.
        for k in 3..=9 {
            for n in 3..=40 {
                assert!(member_victim(n, k).is_some(), "n={n} k={k}");
                assert!(Victim::Member.count(n, k) > 0, "n={n} k={k}");
            }
        }
    }

    #[test]
    fn victims_have_their_kind() {
        for n in 4..=32 {
            for k in 2..=5 {
                // The lists the worker reports: the masters and deputies
                // of the groups `rank / k` when nobody has failed.
                let masters: Vec<usize> = (0..n).filter(|r| r % k == 0).collect();
                let deputies: Vec<usize> = (0..n).filter(|r| r % k == 1).collect();
                let hier = HierFields {
                    k,
                    masters: masters.clone(),
                    deputies: deputies.clone(),
                    local_repairs: 1,
                    global_repairs: 1,
                };
                let line = Line {
                    check: ResCheck::Agree,
                    hier: Some(hier),
                    ..line()
                };
                for v in Victim::ALL {
                    let s = Scheme::Hier(v);
                    let Some(victim) = s.victim(n, k) else {
                        assert_eq!((v, k), (Victim::Member, 2), "n={n}");
                        assert!(s.skip_reason(n, k).is_some());
                        continue;
                    };
                    assert!(victim < n, "n={n} k={k} {v:?}");
                    assert_eq!(s.skip_reason(n, k), None, "n={n} k={k} {v:?}");
                    assert_eq!(
                        s.kind_problem(&line, victim, k),
                        None,
                        "n={n} k={k} {v:?}: victim {victim}"
                    );
                    // And not of the other kinds.
                    for other in Victim::ALL.into_iter().filter(|&o| o != v) {
                        assert!(
                            Scheme::Hier(other).kind_problem(&line, victim, k).is_some(),
                            "n={n} k={k} {v:?} as {other:?}"
                        );
                    }
                }
                let m = master_victim(n, k);
                // The master's group has a deputy to take over.
                assert!(deputies.contains(&(m + 1)), "n={n} k={k}");
                assert_eq!(deputy_victim(n, k) / k, m / k, "n={n} k={k}");
                // The member is the highest rank of its kind.
                if let Some(r) = member_victim(n, k) {
                    assert!(
                        (r + 1..n).all(|x| masters.contains(&x) || deputies.contains(&x)),
                        "n={n} k={k}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_victim_dies_after_the_timed_iterations() {
        let k = REPAIR_WARMUP + 300 + 1;
        assert_eq!(
            Scheme::Flat(ResCheck::Agree).worker_args(),
            ["--check", "agree"]
        );
        assert_eq!(
            Scheme::Hier(Victim::Member).worker_args(),
            ["--check", "agree"]
        );
        assert!(Scheme::Flat(ResCheck::Log).launcher_args(3).is_empty());
        assert_eq!(
            Scheme::Hier(Victim::Master).launcher_args(3)[..3],
            ["--resilient=hier", "--resilient-k", "3"]
        );
        assert_eq!(Scheme::Flat(ResCheck::Agree).victim(8, 3), Some(7));
        // The worker's loop is long enough to pass the kill and measure after it.
        assert!(REPAIR_WARMUP + 300 + REPAIR_AFTER > k + 10);
        assert_eq!(Scheme::Flat(ResCheck::Log).name(), "flat log");
        assert_eq!(Scheme::Hier(Victim::Master).name(), "hier master");
        assert_eq!(Scheme::Hier(Victim::Deputy).name(), "hier deputy");
        assert_eq!(Scheme::Hier(Victim::Member).name(), "hier member");
    }
}
