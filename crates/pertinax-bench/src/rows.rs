//! JSON rows: the provenance every row carries, the same rows as CSV, and
//! rows read back from a saved `--json` output.
//!
//! Every row a benchmark emits through [`crate::report::Out`] gets the
//! fields of [`Provenance`] appended (a benchmark's own field of the same
//! name wins): `commit` (the commit this binary was built from, with
//! `-dirty` when the tree's tracked files differed from it; see
//! `build.rs`), `version` (this crate's), `date` (UTC,
//! when the row was made), `host_cores` (the cores this process may use)
//! and `cmdline` (this program's arguments, shell-quoted). The CSV form has
//! one column per key seen in any row, `bench` and `impl` first, the
//! provenance last; a key a row lacks is an empty cell.
//!
//! ```text
//! pertinax-bench pingpong --json --csv pp.csv > pp.json
//! pertinax-bench plot --in pp.json --out figures/
//! ```

use std::io::BufRead;
use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::{Context as _, Result};
use serde_json::{Map, Value};

/// The provenance keys, in CSV column order.
pub const PROVENANCE: [&str; 5] = ["commit", "version", "date", "host_cores", "cmdline"];

/// What every row says about where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// The commit this binary was built from (12 hex digits), `-dirty`
    /// appended when tracked files differed from it at build time;
    /// `unknown` without git.
    pub commit: String,
    /// This crate's version.
    pub version: String,
    /// Cores this process may use.
    pub host_cores: usize,
    /// The command line, shell-quoted.
    pub cmdline: String,
}

impl Provenance {
    /// The provenance of this process; the commit is the one this binary
    /// was built from (recorded by `build.rs`).
    pub fn of_this_process() -> Provenance {
        let args: Vec<String> = std::env::args().collect();
        Provenance {
            commit: env!("PERTINAX_BENCH_COMMIT").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            host_cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cmdline: shell_line(&args),
        }
    }

    /// `row` with the provenance appended (its own fields win), `date`
    /// set to `now`.
    pub fn stamp(&self, row: &Value, now: SystemTime) -> Value {
        let Value::Object(fields) = row else {
            return row.clone();
        };
        let mut out = fields.clone();
        let add = [
            ("commit", Value::from(self.commit.clone())),
            ("version", Value::from(self.version.clone())),
            ("date", Value::from(rfc3339(now))),
            ("host_cores", Value::from(self.host_cores)),
            ("cmdline", Value::from(self.cmdline.clone())),
        ];
        for (k, v) in add {
            out.entry(k).or_insert(v);
        }
        Value::Object(out)
    }
}

/// Arguments joined with spaces, each quoted for a POSIX shell when it
/// needs to be.
pub fn shell_line(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./,=:@%+".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `t` as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn rfc3339(t: SystemTime) -> String {
    pertinax_wire::utc::Utc::of(t).rfc3339()
}

/// The rows as CSV (RFC 4180): a header of every key, `bench` and `impl`
/// first, then the others in the order first seen, the provenance last.
pub fn csv(rows: &[Value]) -> String {
    let mut keys: Vec<String> = Vec::new();
    let objects: Vec<&Map<String, Value>> = rows.iter().filter_map(Value::as_object).collect();
    let seen = |k: &str, keys: &mut Vec<String>| {
        if !keys.iter().any(|x| x == k) {
            keys.push(k.to_string());
        }
    };
    for first in ["bench", "impl"] {
        if objects.iter().any(|o| o.contains_key(first)) {
            seen(first, &mut keys);
        }
    }
    for o in &objects {
        for k in o.keys().filter(|k| !PROVENANCE.contains(&k.as_str())) {
            seen(k, &mut keys);
        }
    }
    for p in PROVENANCE {
        if objects.iter().any(|o| o.contains_key(p)) {
            seen(p, &mut keys);
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<String>| format!("{}\n", cells.join(","));
    out.push_str(&line(keys.iter().map(|k| csv_cell(k)).collect()));
    for o in objects {
        out.push_str(&line(
            keys.iter()
                .map(|k| match o.get(k) {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => csv_cell(s),
                    Some(v) => csv_cell(&v.to_string()),
                })
                .collect(),
        ));
    }
    out
}

/// One CSV cell, quoted when it holds a comma, a quote or a line break.
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The JSON rows in a saved `--json` output: one object per line; other
/// lines (tables, notes) are skipped.
///
/// # Errors
/// When a file cannot be read.
pub fn read(paths: &[PathBuf]) -> Result<Vec<Value>> {
    let mut rows = Vec::new();
    for p in paths {
        let f = std::fs::File::open(p).with_context(|| format!("opening {}", p.display()))?;
        for line in std::io::BufReader::new(f).lines() {
            let line = line.with_context(|| format!("reading {}", p.display()))?;
            let t = line.trim();
            if t.starts_with('{') {
                if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(t) {
                    rows.push(v);
                }
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::{Duration, UNIX_EPOCH};

    fn prov() -> Provenance {
        Provenance {
            commit: "0123456789ab".into(),
            version: "0.1.0".into(),
            host_cores: 2,
            cmdline: "pertinax-bench pingpong --json".into(),
        }
    }

    #[test]
    fn rows_are_stamped() {
        let t = UNIX_EPOCH + Duration::from_secs(1_795_750_500);
        let row = prov().stamp(&json!({"bench": "pingpong", "version": "mine"}), t);
        assert_eq!(row["commit"], "0123456789ab");
        assert_eq!(row["version"], "mine", "the row's own field wins");
        assert_eq!(row["date"], rfc3339(t));
        assert_eq!(row["host_cores"], 2);
        assert_eq!(row["cmdline"], "pertinax-bench pingpong --json");
        assert_eq!(prov().stamp(&json!(3), t), json!(3));
        let me = Provenance::of_this_process();
        assert!(!me.commit.is_empty() && me.host_cores >= 1);
        assert!(!me.cmdline.is_empty());
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let at = |s: u64| rfc3339(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_795_745_445), "2026-11-27T02:10:45Z");
        assert_eq!(at(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn command_lines_are_quoted() {
        let a = |v: &[&str]| shell_line(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(a(&["b", "coll", "--sizes", "8,1K"]), "b coll --sizes 8,1K");
        assert_eq!(a(&["x y", "", "it's"]), r"'x y' '' 'it'\''s'");
    }

    #[test]
    fn csv_has_every_key_once() {
        let t = UNIX_EPOCH;
        let rows = [
            prov().stamp(
                &json!({"bench": "pingpong", "impl": "ompi", "bytes": 8, "median_us": 0.5}),
                t,
            ),
            prov().stamp(
                &json!({"bench": "coll", "op": "bcast", "note": "a, \"b\"", "x": null}),
                t,
            ),
        ];
        let text = csv(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "bench,impl,bytes,median_us,note,op,x,commit,version,date,host_cores,cmdline"
        );
        assert_eq!(
            lines[1],
            "pingpong,ompi,8,0.5,,,,0123456789ab,0.1.0,1970-01-01T00:00:00Z,2,pertinax-bench pingpong --json"
        );
        assert!(
            lines[2].starts_with("coll,,,,\"a, \"\"b\"\"\",bcast,,"),
            "{}",
            lines[2]
        );
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn saved_rows_are_read_back() {
        let dir = std::env::temp_dir().join(format!("pertinax-bench-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("rows.json");
        std::fs::write(
            &p,
            "| table |\n{\"bench\":\"pingpong\",\"bytes\":8}\n{broken\n[1]\n",
        )
        .unwrap();
        let rows = read(&[p]).unwrap();
        assert_eq!(rows, vec![json!({"bench": "pingpong", "bytes": 8})]);
        assert!(read(&[dir.join("missing.json")]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
