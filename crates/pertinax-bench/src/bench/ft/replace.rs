//! The replace part: kill -> `replace_failed` -> first allreduce on the
//! restored communicator, with a spare and with a new process.

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::{cell, Goal, Scratch, Tally};
use crate::bench::{sentinel_summary, Context};
use crate::cli::FtOpts;
use crate::report::{jnum, Table};
use crate::run::{interleave, Cmd, Plan, Variant};

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

pub(super) fn replace(
    ctx: &mut Context,
    o: &FtOpts,
    limit: Duration,
    s: &Scratch,
) -> Result<Vec<Goal>> {
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
            runs += tl.ended.runs;
            let mut row = vec![
                n.to_string(),
                v.name.split(" n=").next().unwrap_or("").into(),
                format!("{}/{} [{}]", tl.valid, tl.ended.runs, tl.hangs()),
            ];
            row.extend(REPL_FIELDS.iter().map(|(f, _, d)| cell(tl.get(f), *d)));
            row.push(format!(
                "{}/{}",
                tl.spare.iter().filter(|s| **s).count(),
                tl.spare.len()
            ));
            t.row(row);
            for f in &tl.ended.failed {
                problems.push_str(&format!("- {}: {f}\n", v.name));
            }
            let mut j = serde_json::Map::new();
            j.insert("bench".into(), json!("ft-replace"));
            j.insert("variant".into(), json!(v.name.split(" n=").next()));
            j.insert("ranks".into(), json!(n));
            j.insert("launches".into(), json!(tl.ended.runs));
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
