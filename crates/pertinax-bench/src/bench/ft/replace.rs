//! The replace part: kill -> `replace_failed` -> first allreduce on the
//! restored communicator, with a spare and with a new process.

use anyhow::Result;
use serde_json::json;

use super::{cell, decimals, tally, Goal};
use crate::bench::{head, listed, Campaign, Context, Pace, Scratch};
use crate::cli::FtOpts;
use crate::report::{jnum, Table};
use crate::run::{Cmd, Variant};

/// The fields of a `REPL` line: (field, column title).
const REPL_FIELDS: [(&str, &str); 7] = [
    ("det_med_ms", "det med"),
    ("det_max_ms", "det max"),
    ("replace_med_ms", "replace_failed med"),
    ("replace_max_ms", "replace_failed max"),
    ("repl_init_ms", "kill → replacement's init done"),
    ("repl_e2e_ms", "kill → replacement's allreduce done"),
    ("e2e_max_ms", "e2e max"),
];

pub(super) fn replace(ctx: &mut Context, o: &FtOpts, pace: Pace, s: &Scratch) -> Result<Vec<Goal>> {
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
    let (mut hangs, mut runs) = (0, 0);
    let mut all = Campaign::default();
    for &n in &o.ranks {
        let mut variants = Vec::new();
        for spares in [true, false] {
            let name = format!("{} n={n}", if spares { "spare" } else { "new process" });
            let kf = s.file(&format!("replace {name}"));
            let mut cmd = Cmd::new(&ctx.launcher).args(["run", "-n", &n.to_string()]);
            if spares {
                cmd = cmd.args(["--spares", "1"]);
            }
            let cmd = cmd
                .arg("--")
                .arg(&ctx.exe)
                .args(["worker", "ft", "--mode", "replace", "--kill-file"])
                .arg(&kf)
                .args(["--delay-ms", &o.delay_ms.to_string()]);
            variants.push(Variant::new(name, cmd).scratch(kf));
        }
        if all.variants.is_empty() {
            let title = format!(
                "## ft replace: kill -> replace_failed -> first allreduce on the restored \
                 communicator (pertinax only); {} launches per variant, interleaved",
                pace.rounds
            );
            ctx.out.text(&head(&title, &variants));
        }
        let c = ctx.campaign(&format!("ft replace n={n}"), variants, pace)?;
        for (i, v) in c.variants.iter().enumerate() {
            let tl = tally(&c, i, "REPL");
            hangs += tl.ended.hangs();
            runs += tl.ended.runs;
            let replacement = v.name.split(" n=").next().unwrap_or("");
            let mut row = vec![
                n.to_string(),
                replacement.into(),
                format!("{} [{}]", tl.ok_of_runs(), tl.ended.hangs()),
            ];
            row.extend(
                REPL_FIELDS
                    .iter()
                    .map(|(f, _)| cell(tl.get(f), decimals(f))),
            );
            let spares = tl.spares();
            let used = spares.iter().filter(|s| **s).count();
            row.push(format!("{used}/{}", spares.len()));
            t.row(row);
            problems.push_str(&tl.ended.failures(&v.name));
            let mut j = serde_json::Map::new();
            j.insert("bench".into(), json!("ft-replace"));
            j.insert("variant".into(), json!(replacement));
            j.insert("ranks".into(), json!(n));
            j.insert("launches".into(), json!(tl.ended.runs));
            j.insert("valid".into(), json!(tl.counted.len()));
            for (f, _) in REPL_FIELDS {
                j.insert(f.into(), jnum(tl.get(f).map(|s| s.median)));
            }
            ctx.out.json(&serde_json::Value::Object(j));
        }
        all.append(c);
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
    text.push_str(&listed("launches without valid results", &problems));
    text.push_str(&all.hosts());
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
