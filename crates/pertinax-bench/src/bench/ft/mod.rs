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
//! variant's launches ([`Tally`]), the judged goals ([`Goal`]) and the
//! scratch directory of the kill-time files ([`Scratch`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde_json::json;

use super::{Context, Ended, Impl};
use crate::cli::{Common, FtOpts, FtPart};
use crate::parse::Record;
use crate::report::{jnum, verdict, Table};
use crate::run::last_line;
use crate::run::Launch;
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

/// What the launches of one variant produced.
#[derive(Clone, Debug, Default, PartialEq)]
struct Tally {
    /// How the launches ended.
    ended: Ended,
    /// Launches whose summary line was complete and checked (`ok=1`,
    /// kill time read).
    valid: usize,
    /// How the launches ended, e.g. `rc=0` -> 4.
    exits: BTreeMap<String, usize>,
    /// Per field, the value of every valid launch.
    values: BTreeMap<String, Vec<f64>>,
    /// The same, only from the quiet launches (others' CPU known and at
    /// most [`QUIET_OTHERS`]).
    quiet: BTreeMap<String, Vec<f64>>,
    /// The error classes of the last valid launch.
    classes: Option<String>,
    /// Whether the replacement was a spare, per valid launch (replace).
    spare: Vec<bool>,
}

impl Tally {
    /// Tallies the launches of `variant`: the first `key` record of each.
    fn of(launches: &[Launch], variant: usize, key: &str, fields: &[&str]) -> Tally {
        let mut t = Tally::default();
        for l in launches.iter().filter(|l| l.variant == variant) {
            *t.exits.entry(l.outcome.status()).or_default() += 1;
            let rec = l.records.iter().find(|r| r.key == key);
            let valid = rec.is_some_and(valid_summary);
            let timed_out = t.ended.count(l, rec.is_some());
            if let (true, Some(r)) = (valid, rec) {
                t.valid += 1;
                let quiet = l.others_cpu.is_some_and(|c| c <= QUIET_OTHERS);
                for f in fields {
                    if let Some(v) = r.f64(f) {
                        t.values.entry((*f).to_string()).or_default().push(v);
                        if quiet {
                            t.quiet.entry((*f).to_string()).or_default().push(v);
                        }
                    }
                }
                t.classes = r.get("classes").map(str::to_string);
                if let Some(s) = r.get("spare") {
                    t.spare.push(s == "1");
                }
            } else if !timed_out {
                let why = match rec {
                    Some(r) => format!(
                        "{}: results not ok (ok={}, kill_file={})",
                        l.outcome.status(),
                        r.get("ok").unwrap_or("?"),
                        r.get("kill_file").unwrap_or("?")
                    ),
                    None => format!(
                        "{}: no {key} line; stderr: {}",
                        l.outcome.status(),
                        last_line(&l.outcome.stderr)
                    ),
                };
                t.ended.failed.push(why);
            }
        }
        t
    }

    /// Median, min and max over the valid launches of `field`; negative
    /// values mean "not measured" (ft.c prints -1).
    fn get(&self, field: &str) -> Option<Summary> {
        let v: Vec<f64> = self
            .values
            .get(field)?
            .iter()
            .copied()
            .filter(|x| *x >= 0.0)
            .collect();
        Summary::of(&v)
    }

    fn hangs(&self) -> usize {
        self.ended.hangs()
    }
}

/// A summary line is usable when it says `ok=1` and the kill time was read.
fn valid_summary(r: &Record) -> bool {
    r.get("ok") == Some("1") && r.get("kill_file") != Some("MISSING")
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

/// Per-run temporary files (kill times), removed at the end.
///
/// They live in memory (`/dev/shm`) when the machine has it: the victim
/// writes its kill time between taking it and killing itself, so the write
/// is inside every kill -> X figure, of both implementations alike. On the
/// disk-backed `/tmp` of the test machine that write (open with truncation,
/// write, close) takes 0.2 to 1.2 ms, which is most of pertinax's detection
/// time; in memory it takes a few microseconds.
pub(super) struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    pub(super) fn new() -> Result<Scratch> {
        let shm = std::path::Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("pertinax-bench-ft-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Scratch { dir })
    }

    pub(super) fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name.replace([' ', '=', '/'], "_"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs the parts of the benchmark that `o` asks for.
///
/// # Errors
/// When a program cannot be started or a scratch file cannot be made.
pub fn run(ctx: &mut Context, common: &Common, o: &FtOpts) -> Result<()> {
    let limit = ctx.timeout.unwrap_or(DEFAULT_LIMIT);
    let scratch = Scratch::new()?;
    let mut goals = Vec::new();
    if o.wants(FtPart::Compare) {
        goals.extend(compare(ctx, o, limit, &scratch)?);
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
            .map_or_else(|| (2 * common.launches()).max(6), |k| k as usize);
        goals.extend(cost(ctx, k)?);
    }
    if native && o.wants(FtPart::Replace) {
        goals.extend(replace(ctx, o, limit, &scratch)?);
    }
    if native && o.wants(FtPart::Spawn) {
        spawn(ctx, o, limit)?;
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
fn scratch_name(s: &Scratch, name: &str) -> PathBuf {
    s.file(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Exit;

    use std::path::Path;

    pub(super) fn launch(variant: usize, exit: Exit, out: &str) -> Launch {
        Launch::fake(variant, exit, out)
    }

    pub(super) const FT_OK: &str =
        "FT mode=recv revoke=0 N=4 victim=3 det_min_ms=0.1 det_med_ms=0.2 \
        det_max_ms=0.3 revoke_max_us=0.0 shrink_med_ms=0.05 shrink_max_ms=0.06 \
        revoke_shrink_max_ms=0.06 e2e_med_ms=0.4 e2e_max_ms=0.5 agree_healthy_us=2.0 \
        agree_shrunk_us=1.5 shrink_healthy_us=3.0 agree_after_fail_med_ms=-1.000 \
        agree_after_ack_med_ms=-1.000 classes=PF:3,REV:0,OK:0,OTHER:0 ok=1 kill_file=read\n";

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
        let t = Tally::of(
            &launches,
            0,
            "FT",
            &["det_max_ms", "agree_after_fail_med_ms"],
        );
        assert_eq!(
            (
                t.ended.runs,
                t.valid,
                t.ended.hung_after,
                t.ended.hung_before
            ),
            (5, 2, 1, 1)
        );
        assert_eq!(t.ended.failed.len(), 2, "{:?}", t.ended.failed);
        assert!(
            t.ended.failed[0].contains("last words"),
            "{:?}",
            t.ended.failed
        );
        assert!(t.ended.failed[1].contains("ok=0"), "{:?}", t.ended.failed);
        assert_eq!(t.get("det_max_ms").unwrap().n, 2);
        assert_eq!(t.quiet.get("det_max_ms").map(Vec::len), Some(1));
        assert_eq!(t.get("agree_after_fail_med_ms"), None); // -1 = not measured
        assert_eq!(t.exits.get("TIMEOUT"), Some(&2));
        assert_eq!(t.classes.as_deref(), Some("PF:3,REV:0,OK:0,OTHER:0"));
    }

    #[test]
    fn scratch_files_are_flat_and_removed() {
        let dir;
        {
            let s = Scratch::new().unwrap();
            let f = scratch_name(&s, "ompi recv n=4");
            assert_eq!(f.parent(), Some(s.dir.as_path()));
            assert!(!f.file_name().unwrap().to_string_lossy().contains(' '));
            std::fs::write(&f, "1").unwrap();
            dir = s.dir.clone();
        }
        assert!(!Path::new(&dir).exists());
    }
}
