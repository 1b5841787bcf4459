//! The spawn part: `spawn` of 1 and of N processes + `merge` + barrier.

use anyhow::Result;
use serde_json::json;

use super::{cell, last_line};
use crate::bench::{head, Context, Pace};
use crate::cli::FtOpts;
use crate::report::{jnum, Table};
use crate::run::{Cmd, Launch, Variant};
use crate::stats::{self, Summary};

pub(super) fn spawn(ctx: &mut Context, o: &FtOpts, pace: Pace) -> Result<()> {
    let reps = o.spawn_reps.max(1);
    let mut variants = Vec::new();
    for &n in &o.ranks {
        let slots = reps * (n as u64 + 1);
        let cmd = Cmd::new(&ctx.launcher)
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
            .arg(reps.to_string());
        variants.push(Variant::new(format!("spawn n={n}"), cmd));
    }
    let title = format!(
        "## ft spawn: spawn of 1 and of N processes + merge + barrier on the merged \
         communicator (pertinax only); {} launches per rank count, interleaved; {reps} spawns \
         of each size per launch",
        pace.rounds
    );
    ctx.out
        .text(&head(&title, &variants[..1.min(variants.len())]));
    let c = ctx.campaign("ft spawn", variants, pace)?;
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
        let mine: Vec<&Launch> = c.of(i).collect();
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
    text.push_str(&c.hosts());
    ctx.out.text(&text);
    Ok(())
}
