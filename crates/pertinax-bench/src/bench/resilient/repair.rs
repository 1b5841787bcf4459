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
//! the kinds ([`weighted`](scheme::weighted)): `P_m·master + P_d·deputy + (1 − P_m −
//! P_d)·member`, with `P_m = ceil(N/k) / N` (one master per group) and
//! `P_d` = (groups of at least 2 ranks) / N (one deputy per such group);
//! when there is no member (k = 2), `P_m + P_d = 1` and the member term
//! is left out.

mod line;
mod scheme;
mod tally;

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::{per_core, spread};
use crate::bench::{head, listed, Context};
use crate::cli::{ResilientOpts, REPAIR_AFTER, REPAIR_WARMUP};
use crate::report::{jnum, Table};
use crate::run::{Cmd, Variant};
use crate::stats::Summary;
use crate::worker::ITER_POINT;
use scheme::{master_share, Scheme, Victim, SCHEMES};
use tally::{shares_cell, SchemeTally, Weighted};

/// Launches per scheme and rank count unless `--launches` is given (a
/// launch takes well under a second of work).
const DEFAULT_LAUNCHES: usize = 5;

/// Time limit per launch unless `--timeout` is given.
const DEFAULT_LIMIT: Duration = Duration::from_secs(120);

/// The record key.
const KEY: &str = "REPAIR";

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
mod tests;
