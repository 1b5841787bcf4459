//! Applications end to end without failures: `pertinax-ep CLASS` (NAS EP)
//! and `pertinax-screen` (virtual screening, default size), each launched
//! plain, with `--resilient` (the default check, agree) and with
//! `--resilient --resilient-check log`; the programs are unchanged (their
//! world communicator is resilient when the launcher says so).
//!
//! Per (program, rank count) the three are variants interleaved launch by
//! launch. A launch counts when it exited with 0 (the program's own checks
//! passed), printed its summary line (`EP ...`, `SCREEN ...`) with every
//! check `true`, no failed rank, and the mode its launcher asked for. The
//! figures: the program's own `time_s` (its parallel part) and the launch's
//! wall time, median (min–max) over launches, and the overhead of each
//! resilient variant over plain, in % of the medians.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use super::spread;
use crate::bench::{head, listed, Campaign, Context, Judged, Scratch, Tally};
use crate::cli::{ResComm, ResilientOpts};
use crate::parse::Record;
use crate::report::{jnum, Table};
use crate::run::{last_line, run as run_once, Cmd, Variant, WALL};
use crate::stats::{self, Summary};

/// Launches per variant unless `--launches` is given.
const DEFAULT_LAUNCHES: usize = 3;

/// Time limit per launch unless `--timeout` is given (EP class A is about
/// 16 s of CPU in all: 8 s on 2 cores, more on a busy machine).
const DEFAULT_LIMIT: Duration = Duration::from_secs(600);

/// A measured program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum App {
    Ep,
    Screen,
}

impl App {
    const ALL: [App; 2] = [App::Ep, App::Screen];

    /// The binary, next to this executable.
    fn binary(self) -> &'static str {
        match self {
            App::Ep => "pertinax-ep",
            App::Screen => "pertinax-screen",
        }
    }

    /// Its summary line's key.
    fn key(self) -> &'static str {
        match self {
            App::Ep => "EP",
            App::Screen => "SCREEN",
        }
    }

    /// The fields of its summary line that must say `true`.
    fn checks(self) -> &'static [&'static str] {
        match self {
            App::Ep => &["verified", "exact_survivors", "consistent"],
            App::Screen => &["exact_survivors", "file_ok", "consistent", "count_ok"],
        }
    }
}

/// The launcher's options for a communicator kind. The part runs the flat
/// kinds ([`ResComm::FLAT`]); the hierarchical one would be the library's
/// `--resilient=hier`, from 1 rank on, with its default k.
fn launcher_args(c: ResComm) -> &'static [&'static str] {
    match c {
        ResComm::Plain => &[],
        ResComm::Agree => &["--resilient"],
        ResComm::Log => &["--resilient", "--resilient-check", "log"],
        ResComm::Hier => &["--resilient=hier", "--resilient-threshold", "1"],
    }
}

/// Tallies the launches of variant `v` (of [`ResComm::FLAT`]) of `app` at
/// `ranks` ranks: (program time s, launch wall time s) of each launch that
/// exited with 0 and printed a summary line that counts.
fn tally(c: &Campaign, v: usize, app: App, ranks: usize) -> Tally<(f64, f64)> {
    c.tally(v, app.key(), |l, rec| {
        let stderr = last_line(&l.outcome.stderr);
        let time = match rec {
            _ if !l.outcome.ok() => Err(format!("{}: {stderr}", l.outcome.status())),
            None => Err(format!("no {} line; stderr: {stderr}", app.key())),
            Some(r) => check_line(app, ResComm::FLAT[v], ranks, r),
        };
        let wall = || {
            let wall = l.records.iter().find(|r| r.key == WALL);
            let ms = wall.and_then(|r| r.f64("elapsed_ms"));
            ms.map_or(l.outcome.elapsed.as_secs_f64(), |ms| ms / 1e3)
        };
        match time {
            Ok(t) => Judged::Counts((t, wall())),
            Err(why) => Judged::Fails(why),
        }
    })
}

/// The time of a summary line that counts, or why it does not.
fn check_line(app: App, comm: ResComm, ranks: usize, r: &Record) -> Result<f64, String> {
    let mode = if comm == ResComm::Plain {
        "plain"
    } else {
        "resilient"
    };
    if r.get("n") != Some(ranks.to_string().as_str()) {
        return Err(format!("line for n={}", r.get("n").unwrap_or("?")));
    }
    if r.get("mode") != Some(mode) {
        return Err(format!(
            "mode={}, expected {mode}",
            r.get("mode").unwrap_or("?")
        ));
    }
    if r.get("failed") != Some("[]") {
        return Err(format!("failed={}", r.get("failed").unwrap_or("?")));
    }
    if let Some(bad) = app.checks().iter().find(|c| r.get(c) != Some("true")) {
        return Err(format!("{bad}={}", r.get(bad).unwrap_or("?")));
    }
    r.f64("time_s")
        .filter(|t| t.is_finite())
        .ok_or_else(|| "no time_s".to_string())
}

impl Tally<(f64, f64)> {
    /// The program's time over the launches that count.
    fn time(&self) -> Option<Summary> {
        Summary::of(&self.counted.iter().map(|t| t.0).collect::<Vec<_>>())
    }

    /// The launches' wall time.
    fn wall(&self) -> Option<Summary> {
        Summary::of(&self.counted.iter().map(|t| t.1).collect::<Vec<_>>())
    }
}

/// One (program, rank count): the tallies of plain, agree and log.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    app: App,
    ranks: usize,
    tallies: [Tally<(f64, f64)>; 3],
}

/// `+1.2%` of `a` over `b` (medians), or `-`.
fn overhead(a: Option<Summary>, b: Option<Summary>) -> String {
    stats::ratio(a.map(|s| s.median), b.map(|s| s.median))
        .map_or("-".into(), |r| format!("{:+.1}%", (r - 1.0) * 100.0))
}

/// The program's arguments (`work`: the screening's poses per molecule,
/// its own default when `None`; its database and scores in `scratch`).
fn app_args(app: App, class: &str, work: Option<u32>, scratch: &Scratch) -> Vec<String> {
    match app {
        App::Ep => vec![class.to_string()],
        App::Screen => {
            let mut a = vec![
                "--db".into(),
                scratch.file("screen.db").display().to_string(),
                "--out".into(),
                scratch.file(SCORES).display().to_string(),
            ];
            if let Some(w) = work {
                a.extend(["--work".into(), w.to_string()]);
            }
            a
        }
    }
}

/// The screening's output, rewritten by every launch.
const SCORES: &str = "screen.scores";

/// Runs the apps part and prints its table; says so and returns when the
/// programs are not built.
///
/// # Errors
/// When a program cannot be started or the scratch directory made.
pub fn run(ctx: &mut Context, o: &ResilientOpts) -> Result<()> {
    let dir = ctx.exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let missing: Vec<String> = App::ALL
        .iter()
        .map(|a| dir.join(a.binary()))
        .filter(|p| !p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    if !missing.is_empty() {
        ctx.out.text(&format!(
            "\n### resilient apps: not run: {} not found (build with `cargo build --release -p \
             pertinax-apps`)\n",
            missing.join(", ")
        ));
        return Ok(());
    }
    let pace = ctx.pace_or(DEFAULT_LAUNCHES, DEFAULT_LIMIT);
    let class = o.ep_class(ctx.quick);
    let scratch = Scratch::new("apps", false)?;
    // The database is generated once, outside the measured launches.
    let prep = Cmd::new(&ctx.launcher)
        .args(["run", "-n", "1", "--"])
        .arg(dir.join(App::Screen.binary()))
        .args(app_args(App::Screen, &class, o.screen_work, &scratch));
    let prepared = run_once(&prep, pace.limit)?;
    let mut rows = Vec::new();
    let mut hosts = String::new();
    for app in App::ALL {
        if app == App::Screen && !prepared.ok() {
            ctx.out.text(&format!(
                "\n### resilient apps: screening not run: preparing its database failed \
                 (`{}`: {}: {})\n",
                prep.display(),
                prepared.status(),
                last_line(&prepared.stderr)
            ));
            continue;
        }
        for &n in &o.app_ranks {
            let variants: Vec<Variant> = ResComm::FLAT
                .iter()
                .map(|&c| {
                    let name = format!("{} {} n={n}", app.binary(), c.name());
                    let cmd = Cmd::new(&ctx.launcher)
                        .args(["run", "-n", &n.to_string()])
                        .args(launcher_args(c))
                        .arg("--")
                        .arg(dir.join(app.binary()))
                        .args(app_args(app, &class, o.screen_work, &scratch));
                    match app {
                        App::Screen => Variant::new(name, cmd).scratch(scratch.file(SCORES)),
                        App::Ep => Variant::new(name, cmd),
                    }
                })
                .collect();
            let title = format!(
                "### resilient apps: {}, {}; {} launches per variant, interleaved launch by \
                 launch",
                app.binary(),
                ctx.placement(n),
                pace.rounds
            );
            ctx.out.text(&head(&title, &variants));
            let title = format!("resilient {} n={n}", app.binary());
            let c = ctx.campaign(&title, variants, pace)?;
            let tally = |v: usize| tally(&c, v, app, n);
            rows.push(Row {
                app,
                ranks: n,
                tallies: [tally(0), tally(1), tally(2)],
            });
            hosts.push_str(&c.hosts());
        }
    }
    let mut text = table(&rows, &class, ctx.cores);
    text.push_str(&hosts);
    ctx.out.text(&text);
    for r in &rows {
        let [p, a, l] = &r.tallies;
        ctx.out.json(&json!({
            "bench": "resilient", "part": "apps", "program": r.app.binary(),
            "class": (r.app == App::Ep).then_some(class.as_str()), "ranks": r.ranks,
            "cores": ctx.cores,
            "plain_s": jnum(p.time().map(|s| s.median)),
            "agree_s": jnum(a.time().map(|s| s.median)),
            "log_s": jnum(l.time().map(|s| s.median)),
            "plain_wall_s": jnum(p.wall().map(|s| s.median)),
            "agree_wall_s": jnum(a.wall().map(|s| s.median)),
            "log_wall_s": jnum(l.wall().map(|s| s.median)),
            "launches": [p.counted.len(), a.counted.len(), l.counted.len()],
        }));
    }
    Ok(())
}

/// The table of every program and rank count, and the failed launches.
fn table(rows: &[Row], class: &str, cores: usize) -> String {
    let mut t = Table::new([
        "program",
        "ranks",
        "plain s",
        "agree s",
        "log s",
        "agree overhead",
        "log overhead",
        "launch wall s: plain / agree / log",
        "wall overhead agree / log",
        "launches ok/run",
    ]);
    let mut problems = String::new();
    for r in rows {
        let [p, a, l] = &r.tallies;
        let name = match r.app {
            App::Ep => format!("EP class {class}"),
            App::Screen => "screening".into(),
        };
        let med = |s: Option<Summary>| s.map_or("-".into(), |s| format!("{:.3}", s.median));
        t.row(vec![
            name,
            r.ranks.to_string(),
            spread(p.time(), Some(3)),
            spread(a.time(), Some(3)),
            spread(l.time(), Some(3)),
            overhead(a.time(), p.time()),
            overhead(l.time(), p.time()),
            format!("{} / {} / {}", med(p.wall()), med(a.wall()), med(l.wall())),
            format!(
                "{} / {}",
                overhead(a.wall(), p.wall()),
                overhead(l.wall(), p.wall())
            ),
            format!("{}, {}, {}", p.ok_of_runs(), a.ok_of_runs(), l.ok_of_runs()),
        ]);
        for (c, x) in ResComm::FLAT.iter().zip(&r.tallies) {
            let name = format!("{} {} n={}", r.app.binary(), c.name(), r.ranks);
            problems.push_str(&x.ended.failures(&name));
        }
    }
    let mut s = format!(
        "\n### resilient apps: end to end without failures\n\n\
         Plain = `pertinax run -n N -- PROGRAM`; agree = `--resilient` (the default check, an \
         agreement after every collective); log = `--resilient --resilient-check log`. The \
         program's time (`time_s` of its summary line: its parallel part, without the \
         reporter's checks) and the launch's wall time (start-up and checks included), median \
         (min–max) over launches, s. Overhead = resilient / plain - 1 of the medians. N ranks \
         share {cores} cores (oversubscribed above {cores}).\n\n"
    );
    s.push_str(&t.render());
    s.push_str(&listed("launches without usable results", &problems));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_line, parse_output};
    use crate::run::{Exit, Launch};

    const EP: &str = "EP class=A n=4 mode=resilient failed=[] missing=[] fraction=1.0000 \
        sx=-4.295875165629892e3 sy=-1.580732573678431e4 gaussian=210832767 verified=true \
        exact_survivors=true consistent=true recomputed=0 time_s=8.123 check_s=0.001";
    const SCREEN: &str = "SCREEN n=2 count=100000 work=64 k=10 mode=plain failed=[] lost=[] \
        screened=100000 fraction=1.0000 best=[17:12.345678,3:11.5] from_p2p=[0,1] \
        from_allgather=[0,1] exact_survivors=true file_ok=true consistent=true count_ok=true \
        recomputed=false time_s=0.812 check_s=0.380";

    fn check(app: App, comm: ResComm, ranks: usize, text: &str) -> Result<f64, String> {
        let r = parse_line(text).unwrap_or_else(|| panic!("no record in {text:?}"));
        check_line(app, comm, ranks, &r)
    }

    #[test]
    fn summary_lines_are_checked() {
        assert_eq!(check(App::Ep, ResComm::Agree, 4, EP), Ok(8.123));
        assert_eq!(check(App::Ep, ResComm::Log, 4, EP), Ok(8.123));
        assert_eq!(check(App::Screen, ResComm::Plain, 2, SCREEN), Ok(0.812));
        let err = |app, comm, n, text: &str| check(app, comm, n, text).unwrap_err();
        assert!(err(App::Ep, ResComm::Plain, 4, EP).contains("mode=resilient"));
        assert!(err(App::Ep, ResComm::Agree, 8, EP).contains("n=4"));
        assert!(err(
            App::Ep,
            ResComm::Agree,
            4,
            &EP.replace("failed=[]", "failed=[2]")
        )
        .contains("failed=[2]"));
        assert!(err(
            App::Ep,
            ResComm::Agree,
            4,
            &EP.replace("verified=true", "verified=n/a")
        )
        .contains("verified=n/a"));
        assert!(err(
            App::Screen,
            ResComm::Plain,
            2,
            &SCREEN.replace("file_ok=true", "file_ok=false")
        )
        .contains("file_ok=false"));
        assert!(err(
            App::Screen,
            ResComm::Plain,
            2,
            &SCREEN.replace(" time_s=0.812", "")
        )
        .contains("time_s"));
    }

    fn launch(variant: usize, code: i32, out: &str, ms: &str) -> Launch {
        let mut records = parse_output(out);
        records.push(Record::new(
            WALL,
            &[("variant", "x".into()), ("elapsed_ms", ms.into())],
        ));
        let mut l = Launch::fake(variant, Exit::Code(code), out);
        l.outcome.stderr = "ep: rank 3: gone\n".into();
        l.records = records;
        l
    }

    #[test]
    fn tallies_and_table() {
        let plain = EP.replace("mode=resilient", "mode=plain");
        let launches = [
            launch(0, 0, &plain.replace("8.123", "8.000"), "9000"),
            launch(1, 0, EP, "9500"),
            launch(2, 0, &EP.replace("8.123", "7.600"), "8800"),
            launch(0, 0, &plain.replace("8.123", "8.200"), "9100"),
            launch(1, 1, EP, "9500"),
            launch(2, 0, "", "10"),
        ];
        let c = Campaign::fake(&launches);
        let t = |i| tally(&c, i, App::Ep, 4);
        let row = Row {
            app: App::Ep,
            ranks: 4,
            tallies: [t(0), t(1), t(2)],
        };
        assert_eq!(row.tallies[0].counted, [(8.0, 9.0), (8.2, 9.1)]);
        assert!(row.tallies[1].ended.failed[0].contains("rc=1: ep: rank 3: gone"));
        assert!(row.tallies[2].ended.failed[0].contains("no EP line"));
        let text = table(&[row], "A", 2);
        let line = text
            .lines()
            .find(|l| l.starts_with("| EP class A"))
            .unwrap();
        for cell in [
            "| 8.100 (8.000–8.200) ",
            "| +0.3% ",
            "| -6.2% ",
            "| 9.050 / 9.500 / 8.800 ",
            "| +5.0% / -2.8% ",
            "| 2/2, 1/2, 1/2 ",
        ] {
            assert!(line.contains(cell), "{cell:?} not in {line:?}");
        }
        assert!(text.contains("- pertinax-ep log n=4: no EP line"), "{text}");
        assert_eq!(overhead(None, Summary::of(&[1.0])), "-");
    }

    #[test]
    fn launcher_options() {
        assert!(launcher_args(ResComm::Plain).is_empty());
        assert_eq!(launcher_args(ResComm::Agree), ["--resilient"]);
        assert_eq!(
            launcher_args(ResComm::Log),
            ["--resilient", "--resilient-check", "log"]
        );
        let s = Scratch::new("apps-test", false).unwrap();
        let file = |f: &str| s.file(f).display().to_string();
        assert_eq!(app_args(App::Ep, "W", None, &s), ["W"]);
        assert_eq!(
            app_args(App::Screen, "W", Some(640), &s)[4..],
            ["--work", "640"]
        );
        assert_eq!(
            app_args(App::Screen, "W", None, &s),
            ["--db", &file("screen.db"), "--out", &file("screen.scores")]
        );
    }
}
