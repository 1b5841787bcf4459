//! Machine-readable output lines: `KEY k=v k=v ...`.
//!
//! Every measuring program (the pertinax worker, the Open MPI anchors, the
//! `c2c` sentinel) prints its results as one line per measurement that
//! starts with an upper-case key (`PP`, `PI`, `COLL`, `FT`, `HELLO`, `C2C`)
//! followed by `name=value` fields. Lines starting with `#`, fields without
//! `=` and free text are ignored, so a human-readable tail such as
//! `(1.0 = spinning, 0 = blocked)` does no harm.

/// One parsed line: its key and its `name=value` fields in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The first word, e.g. `PP`.
    pub key: String,
    fields: Vec<(String, String)>,
}

impl Record {
    /// A record made by the bench itself (e.g. a launch's wall time).
    pub fn new(key: &str, fields: &[(&str, String)]) -> Record {
        Record {
            key: key.to_string(),
            fields: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    /// The raw text of field `name`, if present (the first one wins).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Field `name` as a number; `None` if absent or not a number.
    pub fn f64(&self, name: &str) -> Option<f64> {
        self.get(name)?.parse().ok()
    }

    /// The first field `name` after field `anchor`, as a number: for lines
    /// that repeat a name, e.g. `total_med_us=9 p10=8 propagate_med_us=6
    /// p10=5`, where `p10` after `propagate_med_us` is 5.
    pub fn f64_after(&self, anchor: &str, name: &str) -> Option<f64> {
        let start = self.fields.iter().position(|(k, _)| k == anchor)?;
        self.fields[start + 1..]
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse().ok())
    }
}

/// Parses one line; `None` unless it starts with a key made of upper-case
/// letters, digits and `_` (at least one letter) followed by a field.
pub fn parse_line(line: &str) -> Option<Record> {
    let mut words = line.split_whitespace();
    let key = words.next()?;
    let is_key = key.chars().any(|c| c.is_ascii_uppercase())
        && key
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if !is_key {
        return None;
    }
    let fields: Vec<(String, String)> = words
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if fields.is_empty() {
        return None;
    }
    Some(Record {
        key: key.to_string(),
        fields,
    })
}

/// All records in a program's output, in order.
pub fn parse_output(text: &str) -> Vec<Record> {
    text.lines().filter_map(parse_line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, key: &str, fields: &[(&str, &str)]) {
        let r = parse_line(line).unwrap_or_else(|| panic!("no record in {line:?}"));
        assert_eq!(r.key, key);
        for (k, v) in fields {
            assert_eq!(r.get(k), Some(*v), "field {k} of {line:?}");
        }
    }

    #[test]
    fn pingpong_lines() {
        check(
            "PP size=65536 t_half_us_med=12.615 t_half_us_min=12.457 bw_GBps=5.195 reps=1000",
            "PP",
            &[
                ("size", "65536"),
                ("t_half_us_med", "12.615"),
                ("reps", "1000"),
            ],
        );
        let r = parse_line("PI size=0 t_half_us_med=0.2 bw_GBps=0.000").unwrap();
        assert_eq!(r.f64("t_half_us_med"), Some(0.2));
        assert_eq!(r.f64("size"), Some(0.0));
        assert_eq!(r.f64("missing"), None);
    }

    #[test]
    fn free_text_and_odd_values_are_tolerated() {
        check(
            "POLL ranks=2 waiting_ranks=1 cpu_per_wall_mean=0.99 (1.0 = spinning, 0 = blocked)",
            "POLL",
            &[("ranks", "2"), ("cpu_per_wall_mean", "0.99")],
        );
        let r = parse_line("FTRANK mode=agree agree_after_fail_ms=0.119(PROC_FAILED)").unwrap();
        assert_eq!(r.get("agree_after_fail_ms"), Some("0.119(PROC_FAILED)"));
        assert_eq!(r.f64("agree_after_fail_ms"), None);
        check(
            "C2C oneway_ns=26.6 memcpy_GBps=47.40",
            "C2C",
            &[("oneway_ns", "26.6")],
        );
    }

    #[test]
    fn repeated_names_are_read_after_an_anchor() {
        let r = parse_line("X a=1 p10=2 b=3 p10=4 c=x p10=y").unwrap();
        assert_eq!(r.f64("p10"), Some(2.0));
        assert_eq!(r.f64_after("a", "p10"), Some(2.0));
        assert_eq!(r.f64_after("b", "p10"), Some(4.0));
        assert_eq!(r.f64_after("c", "p10"), None);
        assert_eq!(r.f64_after("p10", "p10"), Some(4.0));
        assert_eq!(r.f64_after("missing", "p10"), None);
    }

    #[test]
    fn non_records_are_skipped() {
        for line in [
            "",
            "# impl=openmpi ranks=2 errhandler=fatal",
            "pertinax: rank 1 exited with code 1",
            "PP",
            "PP no fields here",
            "123 a=b",
            "Pp size=1",
        ] {
            assert_eq!(parse_line(line), None, "{line:?}");
        }
    }

    #[test]
    fn output_keeps_order_and_first_field_wins() {
        let out =
            "# header\nPP size=0 t=1\nnoise\nPP size=8 t=2 t=3\nHELLO ranks=2 init_max_ms=1.5\n";
        let recs = parse_output(out);
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[1].get("size"), Some("8"));
        assert_eq!(recs[1].f64("t"), Some(2.0));
        assert_eq!(recs[2].key, "HELLO");
    }
}
