//! Output: Markdown tables for people, one JSON object per line for tools.
//!
//! With `--json` the JSON rows go to stdout and the tables to stderr;
//! otherwise the tables go to stdout. `--csv FILE` writes the same rows as
//! CSV and `--plot DIR` draws them ([`crate::plot`]) when the benchmark
//! ends. [`Out`] hides those choices from the benchmarks; every row gets
//! the provenance of [`crate::rows`].

use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::{Context as _, Result};
use serde_json::Value;

use crate::cli::Common;
use crate::rows::{self, Provenance};
use crate::stats::Summary;

/// A Markdown table with padded columns (readable in a terminal as well).
#[derive(Clone, Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells are left empty).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as Markdown text, one line per row, ending in a newline.
    pub fn render(&self) -> String {
        let cols = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        let cell = |r: &[String], c: usize| r.get(c).map_or("", String::as_str).to_string();
        let width: Vec<usize> = (0..cols)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| cell(r, c).chars().count())
                    .chain([cell(&self.header, c).chars().count(), 3])
                    .max()
                    .unwrap_or(3)
            })
            .collect();
        let line = |r: &[String]| {
            let cells: Vec<String> = (0..cols)
                .map(|c| format!("{:<w$}", cell(r, c), w = width[c]))
                .collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(&self.header);
        let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&format!("|-{}-|\n", rule.join("-|-")));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

/// A time or size-like number: 3 decimals below 1000, else 1.
pub fn num(x: f64) -> String {
    if x.abs() < 1000.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.1}")
    }
}

/// `median (min)` of a summary, or `-`.
pub fn med_min(s: Option<Summary>) -> String {
    s.map_or("-".into(), |s| {
        format!("{} ({})", num(s.median), num(s.min))
    })
}

/// A ratio with 2 decimals, or `-`.
pub fn ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.2}"))
}

/// Bandwidth in GB/s (10^9 B/s) for `bytes` moved in `us` microseconds.
pub fn bandwidth(bytes: u64, us: Option<f64>) -> Option<f64> {
    us.filter(|&t| t > 0.0)
        .map(|t| bytes as f64 / (t * 1e-6) / 1e9)
}

/// A byte count for table rows: `0`, `8`, `1 KiB`, `64 KiB`, `4 MiB`.
pub fn bytes(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        n.to_string()
    }
}

/// Verdict on a goal: `met` / `NOT met` / `not measured`.
pub fn verdict(value: Option<f64>, goal_ok: impl Fn(f64) -> bool) -> &'static str {
    match value {
        None => "not measured",
        Some(v) if goal_ok(v) => "met",
        Some(_) => "NOT met",
    }
}

/// Where results go: tables and notes as text, rows as JSON on stdout
/// (`--json`), as CSV in a file (`--csv`), and as figures at the end
/// (`--plot`). Every row is stamped with [`Provenance`] first.
#[derive(Debug)]
pub struct Out {
    json: bool,
    csv: Option<PathBuf>,
    plot: Option<PathBuf>,
    provenance: Provenance,
    /// Every row so far, kept when `--csv` or `--plot` wants them.
    rows: RefCell<Vec<Value>>,
}

impl Out {
    /// Tables to stdout, or with `--json` JSON rows to stdout and tables
    /// to stderr; `--csv FILE` and `--plot DIR` as given.
    ///
    /// # Errors
    /// When the CSV file cannot be created.
    pub fn new(c: &Common) -> Result<Out> {
        if let Some(p) = &c.csv {
            std::fs::write(p, "").with_context(|| format!("creating {}", p.display()))?;
        }
        Ok(Out {
            json: c.json,
            csv: c.csv.clone(),
            plot: c.plot.clone(),
            provenance: Provenance::of_this_process(),
            rows: RefCell::new(Vec::new()),
        })
    }

    /// Whether rows go to stdout.
    pub fn json_mode(&self) -> bool {
        self.json
    }

    /// Writes human-readable text (tables, notes).
    pub fn text(&self, s: &str) {
        if self.json {
            // Above `all`'s progress bar when it is drawn.
            crate::progress::println(s.strip_suffix('\n').unwrap_or(s));
        } else {
            crate::progress::suspend(|| {
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(s.as_bytes());
                let _ = o.flush();
            });
        }
    }

    /// Writes one row: on stdout in JSON mode; to the CSV file (rewritten
    /// whole, so an interrupted run keeps its rows), and kept for the
    /// figures.
    pub fn json(&self, v: &Value) {
        let row = self.provenance.stamp(v, SystemTime::now());
        if self.json {
            crate::progress::suspend(|| {
                let mut o = std::io::stdout().lock();
                let _ = writeln!(o, "{row}");
                let _ = o.flush();
            });
        }
        if self.csv.is_none() && self.plot.is_none() {
            return;
        }
        let mut rows = self.rows.borrow_mut();
        rows.push(row);
        if let Some(p) = &self.csv {
            if let Err(e) = std::fs::write(p, rows::csv(&rows)) {
                eprintln!("warning: cannot write {}: {e}", p.display());
            }
        }
    }

    /// Draws the figures of the rows so far into the `--plot` directory
    /// (nothing without `--plot`).
    ///
    /// # Errors
    /// When the directory or a figure cannot be written.
    pub fn finish(&self) -> Result<()> {
        let Some(dir) = &self.plot else {
            return Ok(());
        };
        let written = crate::plot::all(&self.rows.borrow(), dir)?;
        for p in written {
            eprintln!("figure: {}", p.display());
        }
        Ok(())
    }
}

/// Rounds to 4 decimals for JSON (keeps the rows short and stable).
pub fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// A JSON number from an optional float (`null` when missing).
pub fn jnum(x: Option<f64>) -> Value {
    x.map_or(Value::Null, |v| round4(v).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(table: &Table, expected: &str) {
        assert_eq!(table.render(), expected);
    }

    #[test]
    fn tables_are_padded_markdown() {
        let mut t = Table::new(["bytes", "us"]);
        t.row(vec!["0".into(), "0.112 (0.109)".into()]);
        t.row(vec!["1 MiB".into()]);
        check(
            &t,
            "| bytes | us            |\n\
             |-------|---------------|\n\
             | 0     | 0.112 (0.109) |\n\
             | 1 MiB |               |\n",
        );
        check(&Table::new(["a"]), "| a   |\n|-----|\n");
    }

    #[test]
    fn cells() {
        let s = Summary::of(&[0.2, 0.1, 0.3]).unwrap();
        assert_eq!(med_min(Some(s)), "0.200 (0.100)");
        assert_eq!(med_min(None), "-");
        assert_eq!(ratio(Some(0.934)), "0.93");
        assert_eq!(ratio(None), "-");
        assert_eq!(num(1234.56), "1234.6");
        assert_eq!(bytes(0), "0");
        assert_eq!(bytes(8), "8");
        assert_eq!(bytes(1024), "1 KiB");
        assert_eq!(bytes(65536), "64 KiB");
        assert_eq!(bytes(4 << 20), "4 MiB");
        assert_eq!(bytes(1500), "1500");
    }

    #[test]
    fn csv_and_figures_get_every_row_with_its_provenance() {
        use crate::cli::{parse, Command};
        let dir = std::env::temp_dir().join(format!("pertinax-bench-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("rows.csv");
        let figs = dir.join("figs");
        let (csv_arg, figs_arg) = (csv.display(), figs.display());
        let Ok(Command::Pingpong(a)) =
            parse(&format!("pingpong --csv {csv_arg} --plot {figs_arg}"))
        else {
            panic!("not pingpong")
        };
        let out = Out::new(&a.common).unwrap();
        assert_eq!(
            std::fs::read_to_string(&csv).unwrap(),
            "",
            "created at once"
        );
        for (imp, us) in [("pertinax", 0.2), ("ompi", 0.3)] {
            out.json(
                &serde_json::json!({"bench": "pingpong", "impl": imp, "bytes": 8, "median_us": us}),
            );
        }
        let text = std::fs::read_to_string(&csv).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0]
            .starts_with("bench,impl,bytes,median_us,commit,version,date,host_cores,cmdline"));
        assert!(lines[2].starts_with("pingpong,ompi,8,0.3,"), "{}", lines[2]);
        out.finish().unwrap();
        assert!(figs.join("pingpong-latency.svg").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bandwidth_and_verdicts() {
        let bw = bandwidth(1 << 20, Some(120.0)).unwrap();
        assert!((bw - 8.738).abs() < 1e-3, "{bw}");
        assert_eq!(bandwidth(8, Some(0.0)), None);
        assert_eq!(bandwidth(8, None), None);
        assert_eq!(verdict(Some(0.9), |r| r <= 1.0), "met");
        assert_eq!(verdict(Some(1.1), |r| r <= 1.0), "NOT met");
        assert_eq!(verdict(None, |r| r <= 1.0), "not measured");
        assert_eq!(jnum(Some(0.123456)), serde_json::json!(0.1235));
        assert_eq!(jnum(None), Value::Null);
    }
}
