//! Fault handling: `pertinax run -n N -- <self> worker ft --mode M` against
//! `mpirun --with-ft ulfm -n N ft -m M` (the anchor `ft.c`), plus three
//! pertinax-only parts.
//!
//! - **compare**: for each rank count, every mode of both implementations
//!   interleaved launch by launch. Each launch prints one `FT` line (same
//!   fields from both programs); a launch counts when that line says
//!   `ok=1` and `kill_file=read`. Tables: every field per configuration
//!   (median over launches), then pertinax against Open MPI with ratios,
//!   then the goals. Open MPI launches that printed their results
//!   and then ran into the time limit are finalize hangs (a known Open MPI
//!   problem, RESULTS.md section 3); their results still count. Any
//!   pertinax launch that runs into the limit is a hang.
//! - **cost**: ping-pong at 0 and 8 B with failure detection on and with
//!   `PERTINAX_DETECT=0`, interleaved.
//! - **replace**: kill -> `replace_failed` -> first allreduce on the
//!   restored communicator, with a spare (`--spares 1`) and with a new
//!   process.
//! - **spawn**: `spawn` of 1 and of N processes + `merge` + barrier.
//!
//! One file per part; this one holds what they share: the tally of a
//! variant's launches (a [`Tally`] of the [`Kept`] summary lines) and the
//! judged goals ([`Goal`]).

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::{Campaign, Context, Impl, Judged, Scratch, Tally};
use crate::cli::{FtOpts, FtPart};
use crate::parse::Record;
use crate::report::{jnum, verdict, Table};
use crate::run::last_line;
use crate::stats::Summary;
use compare::compare;
use cost::cost;
use replace::replace;
use spawn::spawn;

mod compare;
mod cost;
mod replace;
mod spawn;

/// Time limit per launch unless `--timeout` is given (as the anchors'
/// `run.sh`: a healthy launch takes 1–3 s, a finalize hang forever).
const DEFAULT_LIMIT: Duration = Duration::from_secs(20);

/// A launch is quiet when other processes used at most this share of the
/// machine's CPU while it ran.
const QUIET_OTHERS: f64 = 0.10;

/// The goals.
const DETECT_SPEEDUP: f64 = 10.0;
const DETECT_MAX_MS: f64 = 1.0;
const E2E_MAX_MS: f64 = 2.0;
const COST_PCT: f64 = 2.0;
/// The rank count at which the absolute goals are judged.
const GOAL_RANKS: usize = 16;

/// A launch that counts: its summary line, and whether it was quiet
/// (others' CPU known and at most [`QUIET_OTHERS`]).
#[derive(Clone, Debug, PartialEq)]
struct Kept {
    rec: Record,
    quiet: bool,
}

/// Tallies the launches of `variant`: the first `key` record of each
/// counts when it is complete and checked (`ok=1`, kill time read).
fn tally(c: &Campaign, variant: usize, key: &str) -> Tally<Kept> {
    c.tally(variant, key, |l, rec| match rec {
        Some(r) if valid_summary(r) => Judged::Counts(Kept {
            rec: r.clone(),
            quiet: l.others_cpu.is_some_and(|c| c <= QUIET_OTHERS),
        }),
        _ if l.timed_out() => Judged::Hung,
        Some(r) => Judged::Fails(format!(
            "{}: results not ok (ok={}, kill_file={})",
            l.outcome.status(),
            r.get("ok").unwrap_or("?"),
            r.get("kill_file").unwrap_or("?")
        )),
        None => Judged::Fails(format!(
            "{}: no {key} line; stderr: {}",
            l.outcome.status(),
            last_line(&l.outcome.stderr)
        )),
    })
}

impl Tally<Kept> {
    /// The values of `field` over the launches that count (`quiet`: over
    /// the quiet ones only); negative values mean "not measured" (ft.c
    /// prints -1).
    fn values<'a>(&'a self, field: &'a str, quiet: bool) -> impl Iterator<Item = f64> + 'a {
        self.counted
            .iter()
            .filter(move |k| k.quiet || !quiet)
            .filter_map(move |k| k.rec.f64(field))
            .filter(|x| *x >= 0.0)
    }

    /// Median, min and max of `field` over the launches that count.
    fn get(&self, field: &str) -> Option<Summary> {
        Summary::of(&self.values(field, false).collect::<Vec<_>>())
    }

    /// The error classes of the last launch that counts.
    fn classes(&self) -> Option<&str> {
        self.counted.last()?.rec.get("classes")
    }

    /// Whether the replacement was a spare, per launch that counts (replace).
    fn spares(&self) -> Vec<bool> {
        let spare = |k: &Kept| k.rec.get("spare").map(|s| s == "1");
        self.counted.iter().filter_map(spare).collect()
    }
}

/// A summary line is usable when it says `ok=1` and the kill time was read.
fn valid_summary(r: &Record) -> bool {
    r.get("ok") == Some("1") && r.get("kill_file") != Some("MISSING")
}

/// The decimals a field's values are shown with: 1 for µs (`_us`), 3 for
/// ms.
fn decimals(field: &str) -> usize {
    if field.ends_with("_us") {
        1
    } else {
        3
    }
}

/// `median (min..max)` with `d` decimals, or `-`.
fn cell(s: Option<Summary>, d: usize) -> String {
    s.map_or("-".into(), |s| {
        format!("{:.d$} ({:.d$}..{:.d$})", s.median, s.min, s.max)
    })
}

/// Just the median with `d` decimals, or `-`.
fn med_cell(s: Option<Summary>, d: usize) -> String {
    s.map_or("-".into(), |s| format!("{:.d$}", s.median))
}

/// Runs the parts of the benchmark that `o` asks for.
///
/// # Errors
/// When a program cannot be started or a scratch file cannot be made.
pub fn run(ctx: &mut Context, o: &FtOpts) -> Result<()> {
    let pace = ctx.pace_or(ctx.launches, DEFAULT_LIMIT);
    let scratch = Scratch::new("ft", true)?;
    let mut goals = Vec::new();
    if o.wants(FtPart::Compare) {
        goals.extend(compare(ctx, o, pace, &scratch)?);
    }
    let native = ctx.backend == crate::cli::BenchBackend::Native;
    if !native {
        ctx.out.text(
            "\n(--backend mpi: the compare part only; cost, replace and spawn measure the \
             native runtime's detection and spawning)\n",
        );
    }
    if native && o.wants(FtPart::Cost) {
        let k = o
            .cost_launches
            .map_or_else(|| (2 * ctx.launches).max(6), |k| k as usize);
        goals.extend(cost(ctx, k)?);
    }
    if native && o.wants(FtPart::Replace) {
        goals.extend(replace(ctx, o, pace, &scratch)?);
    }
    if native && o.wants(FtPart::Spawn) {
        spawn(ctx, o, pace)?;
    }
    if !goals.is_empty() {
        ctx.out.text(&goal_text(&goals));
        for g in &goals {
            ctx.out.json(&json!({
                "bench": "ft-goal", "goal": g.name, "ranks": g.ranks, "mode": g.mode,
                "value": jnum(g.value), "target": g.target, "met": g.met(),
            }));
        }
    }
    Ok(())
}

/// One judged goal.
#[derive(Clone, Debug)]
struct Goal {
    /// What is judged, e.g. "detection speed-up (Open MPI / pertinax)".
    name: String,
    ranks: Option<usize>,
    mode: Option<&'static str>,
    /// The measured value (ratio, ms, %, count).
    value: Option<f64>,
    /// The target as text, e.g. ">= 10".
    target: String,
    /// Extra information for the reader.
    note: String,
    ok: fn(f64) -> bool,
    /// Shown for reference only, not judged.
    reference: bool,
}

impl Goal {
    fn met(&self) -> Option<bool> {
        if self.reference {
            return None;
        }
        self.value.map(self.ok)
    }
}

fn goal_text(goals: &[Goal]) -> String {
    let mut t = Table::new([
        "goal", "ranks", "mode", "value", "target", "verdict", "note",
    ]);
    for g in goals {
        t.row(vec![
            g.name.clone(),
            g.ranks.map_or("-".into(), |n| n.to_string()),
            g.mode.unwrap_or("-").into(),
            g.value.map_or("-".into(), |v| format!("{v:.3}")),
            g.target.clone(),
            if g.reference {
                "(reference)".into()
            } else {
                verdict(g.value, g.ok).into()
            },
            g.note.clone(),
        ]);
    }
    let met = goals.iter().filter(|g| g.met() == Some(true)).count();
    let judged = goals.iter().filter(|g| g.met().is_some()).count();
    format!(
        "\n## ft: goals ({met} of {judged} judged rows met)\n\n{}",
        t.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Exit, Launch};

    pub(super) fn launch(variant: usize, exit: Exit, out: &str) -> Launch {
        Launch::fake(variant, exit, out)
    }

    pub(super) const FT_OK: &str =
        "FT mode=recv revoke=0 N=4 victim=3 det_min_ms=0.1 det_med_ms=0.2 \
        det_max_ms=0.3 revoke_max_us=0.0 shrink_med_ms=0.05 shrink_max_ms=0.06 \
        revoke_shrink_max_ms=0.06 e2e_med_ms=0.4 e2e_max_ms=0.5 agree_healthy_us=2.0 \
        agree_shrunk_us=1.5 shrink_healthy_us=3.0 agree_after_fail_med_ms=-1.000 \
        agree_after_ack_med_ms=-1.000 classes=PF:3,REV:0,OK:0,OTHER:0 ok=1 kill_file=read\n";

    /// The tally of variant 0 of `launches`.
    pub(super) fn check_tally(launches: &[Launch], key: &str) -> Tally<Kept> {
        tally(&Campaign::fake(launches), 0, key)
    }

    #[test]
    fn tally_counts_hangs_failures_and_values() {
        let bad = FT_OK.replace("ok=1", "ok=0");
        let mut launches = [
            launch(0, Exit::Code(0), FT_OK),
            launch(0, Exit::TimedOut, FT_OK),
            launch(0, Exit::TimedOut, ""),
            launch(0, Exit::Code(1), ""),
            launch(0, Exit::Code(0), &bad),
            launch(1, Exit::Code(0), FT_OK),
        ];
        launches[0].others_cpu = Some(0.05); // quiet
        launches[1].others_cpu = Some(0.5);
        let t = check_tally(&launches, "FT");
        let e = &t.ended;
        assert_eq!(
            (e.runs, t.counted.len(), e.hung_after, e.hung_before),
            (5, 2, 1, 1)
        );
        assert_eq!(e.failed.len(), 2, "{:?}", e.failed);
        assert!(e.failed[0].contains("last words"), "{:?}", e.failed);
        assert!(e.failed[1].contains("ok=0"), "{:?}", e.failed);
        assert_eq!(t.get("det_max_ms").unwrap().n, 2);
        assert_eq!(t.values("det_max_ms", true).count(), 1);
        assert_eq!(t.get("agree_after_fail_med_ms"), None); // -1 = not measured
        assert_eq!(e.exits.get("TIMEOUT"), Some(&2));
        assert_eq!(t.classes(), Some("PF:3,REV:0,OK:0,OTHER:0"));
    }
}
