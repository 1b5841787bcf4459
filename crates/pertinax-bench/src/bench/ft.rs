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

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde_json::json;

use super::{sentinel_summary, Context};
use crate::cli::{Common, FtMode, FtOpts, FtPart};
use crate::parse::Record;
use crate::report::{jnum, ratio, verdict, Table};
use crate::run::{interleave, Cmd, Exit, Launch, Plan, Variant};
use crate::stats::{self, Selector, Summary};

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

/// The fields of an `FT` line, in table order: (field, column title, decimals).
const FT_FIELDS: [(&str, &str, usize); 14] = [
    ("det_min_ms", "det min", 3),
    ("det_med_ms", "det med", 3),
    ("det_max_ms", "det max", 3),
    ("revoke_max_us", "revoke max µs", 1),
    ("shrink_med_ms", "shrink med", 3),
    ("shrink_max_ms", "shrink max", 3),
    ("revoke_shrink_max_ms", "rv+sh max", 3),
    ("e2e_med_ms", "e2e med", 3),
    ("e2e_max_ms", "e2e max", 3),
    ("agree_healthy_us", "agree healthy µs", 1),
    ("agree_shrunk_us", "agree shrunk µs", 1),
    ("shrink_healthy_us", "shrink healthy µs", 1),
    ("agree_after_fail_med_ms", "agree after fail", 3),
    ("agree_after_ack_med_ms", "agree after ack", 3),
];

/// The fields of a `REPL` line.
const REPL_FIELDS: [(&str, &str, usize); 7] = [
    ("det_med_ms", "det med", 3),
    ("det_max_ms", "det max", 3),
    ("replace_med_ms", "replace_failed med", 3),
    ("replace_max_ms", "replace_failed max", 3),
    ("repl_init_ms", "kill → replacement's init done", 3),
    ("repl_e2e_ms", "kill → replacement's allreduce done", 3),
    ("e2e_max_ms", "e2e max", 3),
];

/// Which implementation a variant runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Impl {
    Pertinax,
    Ompi,
}

impl Impl {
    fn name(self) -> &'static str {
        match self {
            Impl::Pertinax => "pertinax",
            Impl::Ompi => "ompi",
        }
    }
}

/// What the launches of one variant produced.
#[derive(Clone, Debug, Default, PartialEq)]
struct Tally {
    /// Launches run.
    runs: usize,
    /// Launches whose summary line was complete and checked (`ok=1`,
    /// kill time read).
    valid: usize,
    /// Launches that printed their results and then ran into the time
    /// limit (Open MPI's finalize hang).
    hung_after: usize,
    /// Launches that ran into the time limit without results.
    hung_before: usize,
    /// Launches without valid results that did not hang: why.
    failed: Vec<String>,
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
            t.runs += 1;
            *t.exits.entry(l.outcome.status()).or_default() += 1;
            let rec = l.records.iter().find(|r| r.key == key);
            let valid = rec.is_some_and(valid_summary);
            let timed_out = l.outcome.exit == Exit::TimedOut;
            match (timed_out, rec.is_some()) {
                (true, true) => t.hung_after += 1,
                (true, false) => t.hung_before += 1,
                _ => {}
            }
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
                t.failed.push(why);
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
        self.hung_after + self.hung_before
    }
}

/// A summary line is usable when it says `ok=1` and the kill time was read.
fn valid_summary(r: &Record) -> bool {
    r.get("ok") == Some("1") && r.get("kill_file") != Some("MISSING")
}

fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(160)
        .collect()
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

// ---------------------------------------------------------------- compare

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

/// The per-variant tallies of one rank count: (impl, mode) -> tally.
type Tallies = BTreeMap<(Impl, FtMode), Tally>;

fn compare(ctx: &mut Context, o: &FtOpts, limit: Duration, s: &Scratch) -> Result<Vec<Goal>> {
    let prog = ctx.ompi_program("ft", None);
    let fields: Vec<&str> = FT_FIELDS.iter().map(|f| f.0).collect();
    let mut per_n: Vec<(usize, Tallies)> = Vec::new();
    for &n in &o.ranks {
        let mut variants = Vec::new();
        let mut index = Vec::new();
        let mut files = Vec::new();
        for &m in &o.modes {
            let name = format!("{} {} n={n}", ctx.pertinax_name(), m.name());
            let kf = s.file(&name);
            variants.push(Variant {
                cmd: ctx
                    .pertinax_cmd(n, &[])
                    .args(["worker", "ft", "--mode", m.name(), "--kill-file"])
                    .arg(&kf)
                    .args(["--delay-ms", &o.delay_ms.to_string()])
                    .args(["--agree-reps", &o.agree_reps.to_string()]),
                name,
            });
            index.push((Impl::Pertinax, m));
            files.push(kf);
            if let (Some(ompi), Some(prog)) = (&ctx.ompi, &prog) {
                let name = format!("ompi {} n={n}", m.name());
                let kf = s.file(&name);
                variants.push(Variant {
                    cmd: ompi
                        .mpirun(n, &["--with-ft", "ulfm"], prog)
                        .args(["-m", m.name(), "-k"])
                        .arg(&kf)
                        .args(["-d", &o.delay_ms.to_string()])
                        .args(["-a", &o.agree_reps.to_string()]),
                    name,
                });
                index.push((Impl::Ompi, m));
                files.push(kf);
            }
        }
        let mut head = format!(
            "\n## ft compare: {}; {} launches per implementation and mode, interleaved launch by \
             launch; time limit {} s per launch\n\n",
            ctx.placement(n),
            ctx.launches,
            limit.as_secs()
        );
        for v in variants.iter().take(2) {
            head.push_str(&format!("- {}: `{}`\n", v.name, v.cmd.display()));
        }
        if prog.is_none() || ctx.ompi.is_none() {
            head.push_str(&format!(
                "- Open MPI: not run ({})\n",
                ctx.ompi_absent.as_deref().unwrap_or("unavailable")
            ));
        }
        ctx.out.text(&head);
        let plan = Plan {
            title: &format!("ft n={n}"),
            variants: &variants,
            rounds: ctx.launches,
            limit,
            sentinel: &ctx.sentinel,
            scratch: &files,
        };
        let done = interleave(&plan, ctx.log.as_mut())?;
        let mut tallies = Tallies::new();
        for (i, key) in index.iter().enumerate() {
            tallies.insert(*key, Tally::of(&done, i, "FT", &fields));
        }
        let mut text = full_table(n, &tallies);
        text.push_str(&compare_table(n, &tallies).render());
        text.push_str(&sentinel_summary(&variants, &done));
        ctx.out.text(&text);
        json_rows(ctx, n, &tallies);
        per_n.push((n, tallies));
    }
    Ok(compare_goals(&per_n, &o.modes))
}

/// Every field of every configuration (as RESULTS.md section 3).
fn full_table(n: usize, tallies: &Tallies) -> String {
    let mut header = vec![
        "config".to_string(),
        "ok/runs [hangs after results, before]".into(),
    ];
    header.extend(FT_FIELDS.iter().map(|f| f.1.to_string()));
    header.push("error classes (last run)".into());
    header.push("exits".into());
    let mut t = Table::new(header);
    let mut problems = String::new();
    let mut order: Vec<(&(Impl, FtMode), &Tally)> = tallies.iter().collect();
    order.sort_by_key(|((imp, m), _)| (*m, *imp));
    for ((imp, m), tl) in order {
        let mut row = vec![
            format!("{} {} n={n}", imp.name(), m.name()),
            format!(
                "{}/{} [{}, {}]",
                tl.valid, tl.runs, tl.hung_after, tl.hung_before
            ),
        ];
        row.extend(FT_FIELDS.iter().map(|(f, _, d)| med_cell(tl.get(f), *d)));
        row.push(tl.classes.clone().unwrap_or("-".into()));
        row.push(
            tl.exits
                .iter()
                .map(|(k, v)| format!("{k}×{v}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        t.row(row);
        for f in &tl.failed {
            problems.push_str(&format!("- {} {} n={n}: {f}\n", imp.name(), m.name()));
        }
    }
    let mut s = format!(
        "\nft, {n} ranks, every field, median over the valid launches (ms unless marked µs). \
         det = kill -> the blocked call returns (min/median/max over survivors); shrink = the \
         shrink call after the failure; rv+sh = revoke + shrink, max over survivors; e2e = kill -> \
         first allreduce on the shrunk communicator done; agree/shrink healthy = mean per call \
         before the failure, slowest rank. Hangs after results: the launch printed its FT line and \
         then ran into the time limit (Open MPI: stuck in MPI_Finalize). Exits: pertinax \
         launches end with status 137 because `pertinax run` reports the victim's SIGKILL (the \
         first failure of the job); mpirun --with-ft ulfm ends with 0.\n\n"
    );
    s.push_str(&t.render());
    if !problems.is_empty() {
        s.push_str("\nlaunches without valid results:\n\n");
        s.push_str(&problems);
    }
    s
}

/// The comparison rows: (title, field, modes, decimals, pooled over modes).
const COMPARED: [(&str, &str, &[FtMode], usize, bool); 13] = [
    (
        "detection min",
        "det_min_ms",
        &[FtMode::Recv, FtMode::Allreduce],
        3,
        false,
    ),
    (
        "detection med",
        "det_med_ms",
        &[FtMode::Recv, FtMode::Allreduce],
        3,
        false,
    ),
    (
        "detection max",
        "det_max_ms",
        &[FtMode::Recv, FtMode::Allreduce],
        3,
        false,
    ),
    (
        "detection med (agree in flight)",
        "det_med_ms",
        &[FtMode::Agreeblk],
        3,
        false,
    ),
    (
        "revoke max µs",
        "revoke_max_us",
        &[FtMode::Allreduce],
        1,
        false,
    ),
    (
        "revoke+shrink max",
        "revoke_shrink_max_ms",
        &FtMode::COMPARED,
        3,
        false,
    ),
    (
        "shrink med (after failure)",
        "shrink_med_ms",
        &FtMode::COMPARED,
        3,
        false,
    ),
    (
        "shrink healthy µs",
        "shrink_healthy_us",
        &FtMode::COMPARED,
        1,
        true,
    ),
    (
        "agree healthy µs",
        "agree_healthy_us",
        &FtMode::COMPARED,
        1,
        true,
    ),
    (
        "agree on shrunk comm µs",
        "agree_shrunk_us",
        &FtMode::COMPARED,
        1,
        true,
    ),
    (
        "agree after failure (unacked)",
        "agree_after_fail_med_ms",
        &[FtMode::Agree],
        3,
        false,
    ),
    (
        "agree after ack",
        "agree_after_ack_med_ms",
        &[FtMode::Agree],
        3,
        false,
    ),
    (
        "e2e max (kill -> allreduce on shrunk)",
        "e2e_max_ms",
        &FtMode::COMPARED,
        3,
        false,
    ),
];

/// The values of `field` over the valid launches of `imp`, for one mode
/// or pooled over `modes`.
fn values(
    tallies: &Tallies,
    imp: Impl,
    modes: &[FtMode],
    field: &str,
    quiet: bool,
) -> Option<Summary> {
    let v: Vec<f64> = modes
        .iter()
        .filter_map(|m| tallies.get(&(imp, *m)))
        .filter_map(|t| if quiet { &t.quiet } else { &t.values }.get(field))
        .flatten()
        .copied()
        .filter(|x| *x >= 0.0)
        .collect();
    Summary::of(&v)
}

/// One compared quantity at one rank count.
#[derive(Clone, Debug, PartialEq)]
struct Compared {
    title: &'static str,
    field: &'static str,
    /// A mode name, or "all" when pooled.
    mode: &'static str,
    p: Option<Summary>,
    o: Option<Summary>,
    /// The same over the quiet launches only.
    pq: Option<Summary>,
    oq: Option<Summary>,
    decimals: usize,
}

impl Compared {
    /// pertinax / Open MPI of the medians.
    fn ratio(&self) -> Option<f64> {
        stats::ratio(self.p.map(|s| s.median), self.o.map(|s| s.median))
    }

    /// pertinax / Open MPI of the medians over the quiet launches.
    fn ratio_quiet(&self) -> Option<f64> {
        stats::ratio(self.pq.map(|s| s.median), self.oq.map(|s| s.median))
    }
}

fn compared(tallies: &Tallies, modes: &[FtMode]) -> Vec<Compared> {
    let mut out = Vec::new();
    for (title, field, ms, d, pooled) in COMPARED {
        let ms: Vec<FtMode> = ms.iter().copied().filter(|m| modes.contains(m)).collect();
        if ms.is_empty() {
            continue;
        }
        if pooled {
            out.push(Compared {
                title,
                field,
                mode: "all",
                p: values(tallies, Impl::Pertinax, &ms, field, false),
                o: values(tallies, Impl::Ompi, &ms, field, false),
                pq: values(tallies, Impl::Pertinax, &ms, field, true),
                oq: values(tallies, Impl::Ompi, &ms, field, true),
                decimals: d,
            });
        } else {
            for m in ms {
                out.push(Compared {
                    title,
                    field,
                    mode: m.name(),
                    p: values(tallies, Impl::Pertinax, &[m], field, false),
                    o: values(tallies, Impl::Ompi, &[m], field, false),
                    pq: values(tallies, Impl::Pertinax, &[m], field, true),
                    oq: values(tallies, Impl::Ompi, &[m], field, true),
                    decimals: d,
                });
            }
        }
    }
    out
}

fn compare_table(n: usize, tallies: &Tallies) -> Table {
    let modes: Vec<FtMode> = tallies.keys().map(|k| k.1).collect();
    let mut t = Table::new([
        "quantity (ms unless µs)".to_string(),
        "mode".into(),
        format!("pertinax n={n}"),
        format!("Open MPI n={n}"),
        "ratio p/o".into(),
        "speed-up o/p".into(),
        "quiet launches: pertinax / Open MPI (launches)".into(),
        "quiet ratio p/o".into(),
    ]);
    for c in compared(tallies, &modes) {
        let r = c.ratio();
        let d = c.decimals;
        t.row(vec![
            c.title.into(),
            c.mode.into(),
            cell(c.p, d),
            cell(c.o, d),
            ratio(r),
            r.filter(|r| *r > 0.0)
                .map_or("-".into(), |r| format!("{:.1}", 1.0 / r)),
            format!(
                "{} / {} ({}/{})",
                med_cell(c.pq, d),
                med_cell(c.oq, d),
                c.pq.map_or(0, |s| s.n),
                c.oq.map_or(0, |s| s.n)
            ),
            ratio(c.ratio_quiet()),
        ]);
    }
    t
}

fn json_rows(ctx: &Context, n: usize, tallies: &Tallies) {
    for ((imp, m), t) in tallies {
        let mut row = serde_json::Map::new();
        row.insert("bench".into(), json!("ft"));
        let name = match imp {
            Impl::Pertinax => ctx.pertinax_name(),
            Impl::Ompi => imp.name(),
        };
        row.insert("impl".into(), json!(name));
        row.insert("mode".into(), json!(m.name()));
        row.insert("ranks".into(), json!(n));
        row.insert("cores".into(), json!(ctx.cores));
        row.insert("launches".into(), json!(t.runs));
        row.insert("valid".into(), json!(t.valid));
        row.insert("hangs_after_results".into(), json!(t.hung_after));
        row.insert("hangs_before_results".into(), json!(t.hung_before));
        for (f, _, _) in FT_FIELDS {
            row.insert(f.into(), jnum(t.get(f).map(|s| s.median)));
        }
        ctx.out.json(&serde_json::Value::Object(row));
    }
    let modes: Vec<FtMode> = tallies.keys().map(|k| k.1).collect();
    for c in compared(tallies, &modes) {
        ctx.out.json(&json!({
            "bench": "ft", "backend": ctx.backend.name(), "quantity": c.field, "mode": c.mode,
            "ranks": n, "cores": ctx.cores,
            "pertinax": jnum(c.p.map(|s| s.median)), "ompi": jnum(c.o.map(|s| s.median)),
            "ratio": jnum(c.ratio()), "ratio_quiet": jnum(c.ratio_quiet()),
        }));
    }
}

fn compare_goals(per_n: &[(usize, Tallies)], modes: &[FtMode]) -> Vec<Goal> {
    let mut g = Vec::new();
    let find = |rows: &[Compared], field: &str, mode: &str| {
        rows.iter()
            .find(|c| c.field == field && c.mode == mode)
            .cloned()
    };
    for (n, tallies) in per_n {
        let rows = compared(tallies, modes);
        for mode in ["recv", "allreduce"] {
            let Some(max) = find(&rows, "det_max_ms", mode) else {
                continue;
            };
            let med = find(&rows, "det_med_ms", mode);
            let speedup = |c: &Compared| c.ratio().filter(|r| *r > 0.0).map(|r| 1.0 / r);
            g.push(Goal {
                name: "detection speed-up, det max (Open MPI / pertinax)".into(),
                ranks: Some(*n),
                mode: Some(max.mode),
                value: speedup(&max),
                target: format!(">= {DETECT_SPEEDUP}"),
                note: format!(
                    "det med: {}; quiet launches: {}",
                    med.as_ref()
                        .and_then(speedup)
                        .map_or("-".into(), |s| format!("{s:.1}x")),
                    max.ratio_quiet()
                        .filter(|r| *r > 0.0)
                        .map_or("-".into(), |r| format!("{:.1}x", 1.0 / r))
                ),
                ok: |v| v >= DETECT_SPEEDUP,
                reference: false,
            });
            if *n == GOAL_RANKS {
                g.push(Goal {
                    name: "detection, det max (ms)".into(),
                    ranks: Some(*n),
                    mode: Some(max.mode),
                    value: max.p.map(|s| s.median),
                    target: format!("< {DETECT_MAX_MS}"),
                    note: format!(
                        "det med {} ms; worst launch's det max {} ms; quiet launches {} ms",
                        med.and_then(|c| c.p)
                            .map_or("-".into(), |s| format!("{:.3}", s.median)),
                        max.p.map_or("-".into(), |s| format!("{:.3}", s.max)),
                        med_cell(max.pq, 3)
                    ),
                    ok: |v| v < DETECT_MAX_MS,
                    reference: false,
                });
            }
        }
        for c in rows.iter().filter(|c| {
            matches!(
                c.field,
                "shrink_med_ms"
                    | "shrink_healthy_us"
                    | "revoke_shrink_max_ms"
                    | "agree_healthy_us"
                    | "agree_shrunk_us"
                    | "agree_after_fail_med_ms"
                    | "agree_after_ack_med_ms"
            )
        }) {
            g.push(Goal {
                name: format!("{} ratio (pertinax / Open MPI)", c.title),
                ranks: Some(*n),
                mode: Some(c.mode),
                value: c.ratio(),
                target: "<= 1.0".into(),
                note: format!(
                    "{} vs {}; quiet launches {}",
                    med_cell(c.p, c.decimals),
                    med_cell(c.o, c.decimals),
                    ratio(c.ratio_quiet())
                ),
                ok: |v| v <= 1.0,
                reference: false,
            });
        }
        if *n == GOAL_RANKS {
            for c in rows.iter().filter(|c| c.field == "e2e_max_ms") {
                g.push(Goal {
                    name: "kill -> first allreduce on the shrunk comm, e2e max (ms)".into(),
                    ranks: Some(*n),
                    mode: Some(c.mode),
                    value: c.p.map(|s| s.median),
                    target: format!("< {E2E_MAX_MS}"),
                    note: format!(
                        "worst launch {} ms; quiet launches {} ms{}",
                        c.p.map_or("-".into(), |s| format!("{:.3}", s.max)),
                        med_cell(c.pq, 3),
                        if c.mode == "agree" {
                            "; includes the two timed agrees"
                        } else {
                            ""
                        }
                    ),
                    ok: |v| v < E2E_MAX_MS,
                    reference: false,
                });
            }
        }
    }
    let hangs = |imp: Impl, after: bool| -> (usize, usize) {
        let mut h = 0;
        let mut runs = 0;
        for (_, t) in per_n {
            for ((i, _), tl) in t {
                if *i == imp {
                    h += if after { tl.hung_after } else { tl.hangs() };
                    runs += tl.runs;
                }
            }
        }
        (h, runs)
    };
    let (ph, pr) = hangs(Impl::Pertinax, false);
    if pr > 0 {
        g.push(Goal {
            name: "pertinax hangs (launches that ran into the time limit)".into(),
            ranks: None,
            mode: None,
            value: Some(ph as f64),
            target: "0".into(),
            note: format!("of {pr} launches"),
            ok: |v| v == 0.0,
            reference: false,
        });
    }
    let (oh, or) = hangs(Impl::Ompi, true);
    let (oh_all, _) = hangs(Impl::Ompi, false);
    if or > 0 {
        g.push(Goal {
            name: "Open MPI finalize hangs (results printed, then the time limit)".into(),
            ranks: None,
            mode: None,
            value: Some(oh as f64),
            target: "-".into(),
            note: format!(
                "of {or} launches; {} hung before printing results",
                oh_all - oh
            ),
            ok: |_| true,
            reference: true,
        });
    }
    g
}

// ---------------------------------------------------------------- cost

fn cost(ctx: &mut Context, launches: usize) -> Result<Vec<Goal>> {
    let worker = |c: Cmd| {
        c.arg("--")
            .arg(&ctx.exe)
            .args(["worker", "pingpong", "--sizes", "0,8"])
            .args(["--reps", "1000", "--warmup", "100", "--batches", "7"])
    };
    let base = Cmd::new(&ctx.launcher).args(["run", "-n", "2"]);
    let detect_off = format!("{}=0", pertinax_wire::env::tune::DETECT);
    let variants = vec![
        Variant {
            name: "detect on".into(),
            cmd: worker(base.clone()),
        },
        Variant {
            name: detect_off.clone(),
            cmd: worker(base.args(["-x", detect_off.as_str()])),
        },
    ];
    let mut head = format!(
        "\n## ft cost: ping-pong with failure detection on and off; {}; {launches} launches per \
         variant, interleaved launch by launch\n\n",
        ctx.placement(2)
    );
    for v in &variants {
        head.push_str(&format!("- {}: `{}`\n", v.name, v.cmd.display()));
    }
    ctx.out.text(&head);
    let plan = Plan {
        title: "ft cost",
        variants: &variants,
        rounds: launches,
        limit: ctx.limit,
        sentinel: &ctx.sentinel,
        scratch: &[],
    };
    let done = interleave(&plan, ctx.log.as_mut())?;
    let sel = Selector {
        key: "PP",
        group: &["size"],
        value: "t_half_us_med",
    };
    let on = stats::series(&done, 0, sel);
    let off = stats::series(&done, 1, sel);
    let mut t = Table::new([
        "bytes",
        "detect on µs",
        "detect off µs",
        "cost % (medians)",
        "cost % (minima)",
        "cost % (fast-state medians, launches on/off)",
    ]);
    let pct = |a: Option<f64>, b: Option<f64>| stats::ratio(a, b).map(|r| (r - 1.0) * 100.0);
    let fmt = |p: Option<f64>| p.map_or("-".into(), |p| format!("{p:+.1}"));
    let mut goals = Vec::new();
    for label in ["0", "8"] {
        let a = stats::find(&on, label);
        let b = stats::find(&off, label);
        let (sa, sb) = (a.and_then(|s| s.all()), b.and_then(|s| s.all()));
        let (fa, fb) = (a.and_then(|s| s.fast()), b.and_then(|s| s.fast()));
        let p_med = pct(sa.map(|s| s.median), sb.map(|s| s.median));
        let p_min = pct(sa.map(|s| s.min), sb.map(|s| s.min));
        let p_fast = pct(fa.map(|s| s.median), fb.map(|s| s.median));
        let mm = |s: Option<Summary>| {
            s.map_or("-".into(), |s| format!("{:.3} ({:.3})", s.median, s.min))
        };
        t.row(vec![
            label.into(),
            mm(sa),
            mm(sb),
            fmt(p_med),
            fmt(p_min),
            format!(
                "{} ({}/{})",
                fmt(p_fast),
                fa.map_or(0, |s| s.n),
                fb.map_or(0, |s| s.n)
            ),
        ]);
        ctx.out.json(&json!({
            "bench": "ft-cost", "bytes": label.parse::<u64>().unwrap_or(0),
            "detect_on_us": jnum(sa.map(|s| s.median)), "detect_off_us": jnum(sb.map(|s| s.median)),
            "cost_pct": jnum(p_med), "cost_pct_min": jnum(p_min), "cost_pct_fast": jnum(p_fast),
        }));
        goals.push(Goal {
            name: format!("cost of failure detection on {label} B ping-pong (%)"),
            ranks: Some(2),
            mode: None,
            value: p_med,
            target: format!("<= {COST_PCT}"),
            note: format!("minima {}, fast-state {}", fmt(p_min), fmt(p_fast)),
            ok: |v| v <= COST_PCT,
            reference: false,
        });
    }
    let mut text = String::from(
        "\nft cost, µs: half round trip, per launch the median over 7 batches of 1000 round \
         trips; below, median over launches (min over launches). cost % = on / off - 1 (> 0: \
         detection costs time).\n\n",
    );
    text.push_str(&t.render());
    text.push_str(&sentinel_summary(&variants, &done));
    ctx.out.text(&text);
    Ok(goals)
}

// ---------------------------------------------------------------- replace

fn replace(ctx: &mut Context, o: &FtOpts, limit: Duration, s: &Scratch) -> Result<Vec<Goal>> {
    let fields: Vec<&str> = REPL_FIELDS.iter().map(|f| f.0).collect();
    let mut t = {
        let mut h = vec![
            "ranks".to_string(),
            "replacement".into(),
            "ok/runs [hangs]".into(),
        ];
        h.extend(REPL_FIELDS.iter().map(|f| f.1.to_string()));
        h.push("spare used".into());
        Table::new(h)
    };
    let mut problems = String::new();
    let mut hangs = 0;
    let mut runs = 0;
    let mut all_variants = Vec::new();
    let mut all_done = Vec::new();
    for &n in &o.ranks {
        let mut variants = Vec::new();
        let mut files = Vec::new();
        for spares in [true, false] {
            let name = format!("{} n={n}", if spares { "spare" } else { "new process" });
            let kf = s.file(&format!("replace {name}"));
            let mut cmd = Cmd::new(&ctx.launcher).args(["run", "-n", &n.to_string()]);
            if spares {
                cmd = cmd.args(["--spares", "1"]);
            }
            variants.push(Variant {
                cmd: cmd
                    .arg("--")
                    .arg(&ctx.exe)
                    .args(["worker", "ft", "--mode", "replace", "--kill-file"])
                    .arg(&kf)
                    .args(["--delay-ms", &o.delay_ms.to_string()]),
                name,
            });
            files.push(kf);
        }
        if n == o.ranks[0] {
            let mut head = format!(
                "\n## ft replace: kill -> replace_failed -> first allreduce on the restored \
                 communicator (pertinax only); {} launches per variant, interleaved\n\n",
                ctx.launches
            );
            for v in &variants {
                head.push_str(&format!("- {}: `{}`\n", v.name, v.cmd.display()));
            }
            ctx.out.text(&head);
        }
        let plan = Plan {
            title: &format!("ft replace n={n}"),
            variants: &variants,
            rounds: ctx.launches,
            limit,
            sentinel: &ctx.sentinel,
            scratch: &files,
        };
        let done = interleave(&plan, ctx.log.as_mut())?;
        for (i, v) in variants.iter().enumerate() {
            let tl = Tally::of(&done, i, "REPL", &fields);
            hangs += tl.hangs();
            runs += tl.runs;
            let mut row = vec![
                n.to_string(),
                v.name.split(" n=").next().unwrap_or("").into(),
                format!("{}/{} [{}]", tl.valid, tl.runs, tl.hangs()),
            ];
            row.extend(REPL_FIELDS.iter().map(|(f, _, d)| cell(tl.get(f), *d)));
            row.push(format!(
                "{}/{}",
                tl.spare.iter().filter(|s| **s).count(),
                tl.spare.len()
            ));
            t.row(row);
            for f in &tl.failed {
                problems.push_str(&format!("- {}: {f}\n", v.name));
            }
            let mut j = serde_json::Map::new();
            j.insert("bench".into(), json!("ft-replace"));
            j.insert("variant".into(), json!(v.name.split(" n=").next()));
            j.insert("ranks".into(), json!(n));
            j.insert("launches".into(), json!(tl.runs));
            j.insert("valid".into(), json!(tl.valid));
            for (f, _, _) in REPL_FIELDS {
                j.insert(f.into(), jnum(tl.get(f).map(|s| s.median)));
            }
            ctx.out.json(&serde_json::Value::Object(j));
        }
        all_variants.extend(variants);
        all_done.extend(done.into_iter().map(|mut l| {
            l.variant += all_variants.len() - 2;
            l
        }));
    }
    let mut text = String::from(
        "\nft replace, ms, median (min..max) over the valid launches. The survivors are \
         blocked in an allreduce when rank N-1 dies; they revoke, call replace_failed, and run an \
         allreduce on the restored communicator (checked: N ranks, the replacement included). \
         det = kill -> the blocked allreduce returns; replace_failed = the call at the survivors; \
         kill -> replacement's init done = when pertinax::init returned in the new process \
         (a spare waits in init until it is assigned); e2e max = kill -> the first allreduce on \
         the restored communicator done, max over all N ranks.\n\n",
    );
    text.push_str(&t.render());
    if !problems.is_empty() {
        text.push_str("\nlaunches without valid results:\n\n");
        text.push_str(&problems);
    }
    text.push_str(&sentinel_summary(&all_variants, &all_done));
    ctx.out.text(&text);
    Ok(vec![Goal {
        name: "pertinax hangs in replace (launches that ran into the time limit)".into(),
        ranks: None,
        mode: Some("replace"),
        value: Some(hangs as f64),
        target: "0".into(),
        note: format!("of {runs} launches"),
        ok: |v| v == 0.0,
        reference: false,
    }])
}

// ---------------------------------------------------------------- spawn

fn spawn(ctx: &mut Context, o: &FtOpts, limit: Duration) -> Result<()> {
    let reps = o.spawn_reps.max(1);
    let mut variants = Vec::new();
    for &n in &o.ranks {
        let slots = reps * (n as u64 + 1);
        variants.push(Variant {
            name: format!("spawn n={n}"),
            cmd: Cmd::new(&ctx.launcher)
                .args([
                    "run",
                    "-n",
                    &n.to_string(),
                    "--max-spawn",
                    &slots.to_string(),
                ])
                .arg("--")
                .arg(&ctx.exe)
                .args(["worker", "ft", "--mode", "spawn", "--spawn-reps"])
                .arg(reps.to_string()),
        });
    }
    let mut head = format!(
        "\n## ft spawn: spawn of 1 and of N processes + merge + barrier on the merged \
         communicator (pertinax only); {} launches per rank count, interleaved; {reps} spawns \
         of each size per launch\n\n",
        ctx.launches
    );
    if let Some(v) = variants.first() {
        head.push_str(&format!("- {}: `{}`\n", v.name, v.cmd.display()));
    }
    ctx.out.text(&head);
    let plan = Plan {
        title: "ft spawn",
        variants: &variants,
        rounds: ctx.launches,
        limit,
        sentinel: &ctx.sentinel,
        scratch: &[],
    };
    let done = interleave(&plan, ctx.log.as_mut())?;
    let parts = ["spawn_ms", "merge_ms", "barrier_ms", "total_ms"];
    let mut t = Table::new([
        "ranks",
        "spawned",
        "launches ok/run",
        "spawn",
        "merge",
        "barrier",
        "total",
    ]);
    for (i, &n) in o.ranks.iter().enumerate() {
        let mine: Vec<&Launch> = done.iter().filter(|l| l.variant == i).collect();
        let ok = mine.iter().filter(|l| l.outcome.ok()).count();
        for count in [1, n] {
            // Per launch: the median over its repetitions; then over launches.
            let per_launch = |field: &str| -> Vec<f64> {
                mine.iter()
                    .filter(|l| l.outcome.ok())
                    .filter_map(|l| {
                        let v: Vec<f64> = l
                            .records
                            .iter()
                            .filter(|r| {
                                r.key == "SPAWN"
                                    && r.get("count") == Some(count.to_string().as_str())
                            })
                            .filter_map(|r| r.f64(field))
                            .collect();
                        stats::median(&v)
                    })
                    .collect()
            };
            let sums: Vec<Option<Summary>> =
                parts.iter().map(|f| Summary::of(&per_launch(f))).collect();
            let mut row = vec![
                n.to_string(),
                count.to_string(),
                format!("{ok}/{}", mine.len()),
            ];
            row.extend(sums.iter().map(|s| cell(*s, 3)));
            t.row(row);
            ctx.out.json(&json!({
                "bench": "ft-spawn", "ranks": n, "spawned": count,
                "spawn_ms": jnum(sums[0].map(|s| s.median)), "merge_ms": jnum(sums[1].map(|s| s.median)),
                "barrier_ms": jnum(sums[2].map(|s| s.median)), "total_ms": jnum(sums[3].map(|s| s.median)),
            }));
        }
        for l in mine.iter().filter(|l| !l.outcome.ok()) {
            eprintln!(
                "spawn n={n}: launch {} {}: {}",
                l.round + 1,
                l.outcome.status(),
                last_line(&l.outcome.stderr)
            );
        }
    }
    let mut text = String::from(
        "\nft spawn, ms, median (min..max) over launches of the per-launch median over the \
         repetitions; each phase is the slowest parent's time. spawn = Comm::spawn returned \
         (the launcher has published the new processes' slots; they may still be starting); \
         merge = the intercommunicator merged (waits for the children's init); barrier = a \
         barrier on the merged communicator; total = all three.\n\n",
    );
    text.push_str(&t.render());
    text.push_str(&sentinel_summary(&variants, &done));
    ctx.out.text(&text);
    Ok(())
}

/// The kill-time file of a variant, for tests.
#[cfg(test)]
fn scratch_name(s: &Scratch, name: &str) -> PathBuf {
    s.file(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_output;
    use crate::run::Outcome;
    use std::path::Path;

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

    const FT_OK: &str = "FT mode=recv revoke=0 N=4 victim=3 det_min_ms=0.1 det_med_ms=0.2 \
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
        assert_eq!((t.runs, t.valid, t.hung_after, t.hung_before), (5, 2, 1, 1));
        assert_eq!(t.failed.len(), 2, "{:?}", t.failed);
        assert!(t.failed[0].contains("last words"), "{:?}", t.failed);
        assert!(t.failed[1].contains("ok=0"), "{:?}", t.failed);
        assert_eq!(t.get("det_max_ms").unwrap().n, 2);
        assert_eq!(t.quiet.get("det_max_ms").map(Vec::len), Some(1));
        assert_eq!(t.get("agree_after_fail_med_ms"), None); // -1 = not measured
        assert_eq!(t.exits.get("TIMEOUT"), Some(&2));
        assert_eq!(t.classes.as_deref(), Some("PF:3,REV:0,OK:0,OTHER:0"));
    }

    fn tallies(p_det: f64, o_det: f64) -> Tallies {
        let mut m = Tallies::new();
        for (imp, det) in [(Impl::Pertinax, p_det), (Impl::Ompi, o_det)] {
            for mode in FtMode::COMPARED {
                let out = FT_OK
                    .replace("det_max_ms=0.3", &format!("det_max_ms={det}"))
                    .replace("mode=recv", &format!("mode={}", mode.name()));
                let l = [launch(0, Exit::Code(0), &out)];
                let fields: Vec<&str> = FT_FIELDS.iter().map(|f| f.0).collect();
                m.insert((imp, mode), Tally::of(&l, 0, "FT", &fields));
            }
        }
        m
    }

    #[test]
    fn comparison_and_goals() {
        let t = tallies(0.3, 6.0);
        let rows = compared(&t, &FtMode::COMPARED);
        let det: Vec<&Compared> = rows.iter().filter(|c| c.field == "det_max_ms").collect();
        assert_eq!(det.len(), 2);
        assert!((det[0].ratio().unwrap() - 0.05).abs() < 1e-9);
        let pooled = rows.iter().find(|c| c.field == "agree_healthy_us").unwrap();
        assert_eq!(pooled.mode, "all");
        assert_eq!(pooled.p.unwrap().n, 4);
        let text = compare_table(16, &t).render();
        assert!(text.contains("20.0"), "{text}");
        let goals = compare_goals(&[(16, t)], &FtMode::COMPARED);
        let speed: Vec<&Goal> = goals
            .iter()
            .filter(|g| g.name.starts_with("detection speed-up"))
            .collect();
        assert_eq!(speed.len(), 2);
        assert_eq!(speed[0].met(), Some(true));
        let abs = goals
            .iter()
            .find(|g| g.name.starts_with("detection, det max"))
            .unwrap();
        assert_eq!(abs.met(), Some(true));
        let e2e = goals
            .iter()
            .find(|g| g.name.starts_with("kill ->"))
            .unwrap();
        assert_eq!(e2e.met(), Some(true)); // 0.5 ms
        let hang = goals
            .iter()
            .find(|g| g.name.starts_with("pertinax hangs"))
            .unwrap();
        assert_eq!(hang.met(), Some(true));
        let slow = compare_goals(&[(16, tallies(1.5, 6.0))], &FtMode::COMPARED);
        let s = slow
            .iter()
            .find(|g| g.name.starts_with("detection speed-up"))
            .unwrap();
        assert_eq!(s.met(), Some(false)); // 4x only
        assert!(goal_text(&slow).contains("NOT met"));
        // The absolute goals are judged at 16 ranks only.
        let at4 = compare_goals(&[(4, tallies(0.3, 6.0))], &FtMode::COMPARED);
        assert!(!at4.iter().any(|g| g.name.starts_with("detection, det max")));
    }

    #[test]
    fn full_table_lists_every_configuration() {
        let text = full_table(4, &tallies(0.3, 6.0));
        assert!(text.contains("pertinax recv n=4"), "{text}");
        assert!(text.contains("ompi agree n=4"), "{text}");
        assert!(text.contains("1/1 [0, 0]"), "{text}");
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
