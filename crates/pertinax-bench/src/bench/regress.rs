//! Regression check of a change against the build before it: the same
//! measurements launched alternately from two builds in one run.
//!
//! `pertinax-bench regress --against DIR` runs, from DIR's `pertinax` and
//! `pertinax-bench` (the old build) and from the current ones (the new
//! build), launch by launch interleaved (the order of the two rotates from
//! one round to the next):
//!
//! - 0 B and 8 B ping-pong between 2 ranks (`PP` lines, `t_half_us_med`);
//! - an 8 B allreduce at 2 and at 8 ranks (`COLL` lines, `t_max_us_med`);
//! - failure detection at 16 ranks (`worker ft --mode recv`, `FT` line,
//!   `det_med_ms`: the survivors' median time from the victim's death to
//!   the return of their blocked receive).
//!
//! For each figure it reports the median over the launches of each build
//! and the ratio new / old of the medians; a figure is within the goal
//! when the ratio is at most 1 + tolerance (3% by default). The minima and
//! their ratio are printed too, and the ratio of the medians over the
//! launches in the host's fast state (the sentinel fast right before and
//! right after): on a loaded machine (other jobs on the cores) these are
//! the launches least disturbed.

use std::path::Path;

use anyhow::{bail, Result};
use serde_json::json;

use super::{head, Campaign, Context, Scratch};
use crate::report::{jnum, Table};
use crate::run::{Cmd, Variant};
use crate::stats::{self, median};

/// One figure: which launch, which record and field.
struct Figure {
    name: String,
    /// Index of the variant pair (old = 2i, new = 2i + 1).
    pair: usize,
    key: &'static str,
    /// A field that must have this value (the record's label).
    label: Option<(&'static str, String)>,
    field: &'static str,
}

/// The values of `fig` over the launches of variant `v` (a detection
/// launch ends with the victim's SIGKILL: its record is what counts).
fn values(c: &Campaign, v: usize, fig: &Figure, fast_only: bool) -> Vec<f64> {
    c.of(v)
        .filter(|l| !fast_only || l.fast() == Some(true))
        .filter_map(|l| {
            l.records
                .iter()
                .find(|r| {
                    r.key == fig.key
                        && fig
                            .label
                            .as_ref()
                            .is_none_or(|(k, want)| r.get(k) == Some(want.as_str()))
                })
                .and_then(|r| r.f64(fig.field))
        })
        .collect()
}

/// Runs the regression check against the build in `dir`.
///
/// # Errors
/// When DIR lacks a binary or a program cannot be started.
pub fn run(ctx: &mut Context, dir: &Path, tolerance_pct: f64) -> Result<()> {
    let old_launcher = dir.join("pertinax");
    let old_exe = dir.join("pertinax-bench");
    for p in [&old_launcher, &old_exe] {
        if !p.is_file() {
            bail!(
                "{} is missing (DIR must hold the old build's pertinax and pertinax-bench)",
                p.display()
            );
        }
    }
    let scratch = Scratch::new("ft", true)?;
    let builds = [
        ("old", old_launcher.as_path(), old_exe.as_path()),
        ("new", ctx.launcher.as_path(), ctx.exe.as_path()),
    ];
    let (reps, batches) = if ctx.quick { (200, 3) } else { (2000, 7) };
    let coll = "worker coll --ops allreduce --sizes 8 --max-reps 1000 --warmup 20 --batches 5 \
                --target-ms 100";
    // (label, ranks, worker arguments)
    let cases = [
        (
            "pingpong".to_string(),
            2,
            format!("worker pingpong --sizes 0,8 --reps {reps} --warmup 200 --batches {batches}"),
        ),
        ("allreduce n=2".into(), 2, coll.into()),
        ("allreduce n=8".into(), 8, coll.into()),
        (
            "detection n=16".into(),
            16,
            "worker ft --mode recv --delay-ms 300 --agree-reps 5".into(),
        ),
    ];
    let mut variants = Vec::new();
    for (label, n, args) in &cases {
        for (b, launcher, exe) in &builds {
            let name = format!("{b} {label}");
            let cmd = Cmd::new(launcher)
                .args(["run", "-n", &n.to_string(), "--"])
                .arg(exe)
                .args(args.split_whitespace());
            variants.push(if label.starts_with("detection") {
                let kf = scratch.file(&name);
                Variant::new(name, cmd.arg("--kill-file").arg(&kf)).scratch(kf)
            } else {
                Variant::new(name, cmd)
            });
        }
    }
    let figures = vec![
        Figure {
            name: "0 B ping-pong, half round trip (µs)".into(),
            pair: 0,
            key: "PP",
            label: Some(("size", "0".into())),
            field: "t_half_us_med",
        },
        Figure {
            name: "8 B ping-pong, half round trip (µs)".into(),
            pair: 0,
            key: "PP",
            label: Some(("size", "8".into())),
            field: "t_half_us_med",
        },
        Figure {
            name: "8 B allreduce, 2 ranks (µs, slowest rank)".into(),
            pair: 1,
            key: "COLL",
            label: None,
            field: "t_max_us_med",
        },
        Figure {
            name: "8 B allreduce, 8 ranks (µs, slowest rank)".into(),
            pair: 2,
            key: "COLL",
            label: None,
            field: "t_max_us_med",
        },
        Figure {
            name: "detection, 16 ranks (ms, median survivor)".into(),
            pair: 3,
            key: "FT",
            label: None,
            field: "det_med_ms",
        },
    ];
    let title = format!(
        "## regress: the build in {} (old) against this one (new); {} launches each, \
         interleaved launch by launch (old and new alternate, the order rotating); {} cores",
        dir.display(),
        ctx.launches,
        ctx.cores
    );
    ctx.out.text(&head(&title, &variants));
    let c = ctx.campaign("regress", variants, ctx.pace())?;
    let mut t = Table::new([
        "figure",
        "old median",
        "new median",
        "new / old",
        "old min",
        "new min",
        "new / old (min)",
        "new / old (fast-state medians, launches)",
        "launches old/new",
        "goal (medians)",
    ]);
    let mut failed = 0;
    for f in &figures {
        let old = values(&c, 2 * f.pair, f, false);
        let new = values(&c, 2 * f.pair + 1, f, false);
        let (fo, fnew) = (
            values(&c, 2 * f.pair, f, true),
            values(&c, 2 * f.pair + 1, f, true),
        );
        let (mfo, mfn) = (median(&fo), median(&fnew));
        let fast_ratio = stats::ratio(mfn, mfo);
        let (mo, mn) = (median(&old), median(&new));
        let ratio = stats::ratio(mn, mo);
        let low = |v: &[f64]| v.iter().copied().reduce(f64::min);
        let (lo, ln) = (low(&old), low(&new));
        let min_ratio = stats::ratio(ln, lo);
        let met = ratio.map(|r| r <= 1.0 + tolerance_pct / 100.0);
        if met != Some(true) {
            failed += 1;
        }
        let fmt = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.3}"));
        t.row(vec![
            f.name.clone(),
            fmt(mo),
            fmt(mn),
            ratio.map_or("-".into(), |r| format!("{r:.3}")),
            fmt(lo),
            fmt(ln),
            min_ratio.map_or("-".into(), |r| format!("{r:.3}")),
            format!(
                "{} ({} {}/{})",
                fast_ratio.map_or("-".into(), |r| format!("{r:.3}")),
                match (mfo, mfn) {
                    (Some(o), Some(n)) => format!("{o:.3}→{n:.3},"),
                    _ => String::new(),
                },
                fo.len(),
                fnew.len()
            ),
            format!("{}/{}", old.len(), new.len()),
            match met {
                Some(true) => format!("met (≤ {:.2})", 1.0 + tolerance_pct / 100.0),
                Some(false) => format!("NOT met (> {:.2})", 1.0 + tolerance_pct / 100.0),
                None => "no data".into(),
            },
        ]);
        ctx.out.json(&json!({
            "bench": "regress", "figure": f.name, "old_median": jnum(mo), "new_median": jnum(mn),
            "ratio": jnum(ratio), "old_min": jnum(lo), "new_min": jnum(ln),
            "min_ratio": jnum(min_ratio), "fast_ratio": jnum(fast_ratio), "old_launches": old.len(), "new_launches": new.len(),
        }));
    }
    ctx.out.text(&format!(
        "\n### regress: ratio of medians, new / old ({} of {} figures within {tolerance_pct}%)\n\n{}",
        figures.len() - failed,
        figures.len(),
        t.render()
    ));
    ctx.out.text(&c.hosts());
    Ok(())
}
