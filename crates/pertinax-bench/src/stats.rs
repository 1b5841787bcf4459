//! Aggregation over launches: medians, minima, ratios, and the grouping of
//! parsed records into per-launch series.
//!
//! A measuring program reports one value per row and launch (e.g. the
//! median over batches of a ping-pong size). Over K launches we report the
//! median of those K values and their minimum, as the Open MPI baselines
//! do, plus the median over the launches that ran while the host was in its
//! fast state (see [`crate::host::Sentinel`]).

use crate::run::Launch;

/// Median of the values (NaNs sort last); `None` for an empty slice.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// `a / b`, or `None` when either is missing or `b` is not positive.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() && b.is_finite() => Some(a / b),
        _ => None,
    }
}

/// Median, minimum and maximum of a non-empty set of per-launch values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// How many launches contributed.
    pub n: usize,
    /// Median over launches.
    pub median: f64,
    /// Minimum over launches.
    pub min: f64,
    /// Maximum over launches.
    pub max: f64,
}

impl Summary {
    /// The summary of `values`, or `None` if there are none.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let median = median(values)?;
        Some(Summary {
            n: values.len(),
            median,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// One launch's value of one row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// The value the program printed.
    pub value: f64,
    /// Whether the sentinel saw the host in its fast state before this
    /// launch (`None`: no sentinel).
    pub fast: Option<bool>,
}

/// The values of one row (e.g. one message size) over launches.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The row's label: the value of the grouping field, e.g. `"65536"`.
    pub label: String,
    /// One point per launch that printed this row.
    pub points: Vec<Point>,
}

impl Series {
    /// Summary over all launches.
    pub fn all(&self) -> Option<Summary> {
        let v: Vec<f64> = self.points.iter().map(|p| p.value).collect();
        Summary::of(&v)
    }

    /// Summary over the launches in the fast host state only.
    pub fn fast(&self) -> Option<Summary> {
        let v: Vec<f64> = self
            .points
            .iter()
            .filter(|p| p.fast == Some(true))
            .map(|p| p.value)
            .collect();
        Summary::of(&v)
    }
}

/// Which records make a series: lines with `key`, one row per distinct
/// combination of the `group` fields, the number in field `value`.
#[derive(Clone, Copy, Debug)]
pub struct Selector<'a> {
    /// Record key, e.g. `"PP"`.
    pub key: &'a str,
    /// Fields that name the row, e.g. `["size"]` or `["op", "bytes"]`; the
    /// row's label is their values joined by one space (`"bcast 8"`). A
    /// record lacking one of them is skipped.
    pub group: &'a [&'a str],
    /// Field holding the per-launch value, e.g. `"t_half_us_med"`.
    pub value: &'a str,
}

/// Groups the records of the successful launches of `variant` into one
/// series per row, rows in order of first appearance.
pub fn series(launches: &[Launch], variant: usize, sel: Selector<'_>) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for l in launches
        .iter()
        .filter(|l| l.variant == variant && l.outcome.ok())
    {
        for r in l.records.iter().filter(|r| r.key == sel.key) {
            let parts: Option<Vec<&str>> = sel.group.iter().map(|g| r.get(g)).collect();
            let (Some(parts), Some(value)) = (parts, r.f64(sel.value)) else {
                continue;
            };
            let label = parts.join(" ");
            let point = Point {
                value,
                fast: l.fast(),
            };
            match out.iter_mut().find(|s| s.label == label) {
                Some(s) => s.points.push(point),
                None => out.push(Series {
                    label,
                    points: vec![point],
                }),
            }
        }
    }
    out
}

/// The series labelled `label`, if any.
pub fn find<'s>(series: &'s [Series], label: &str) -> Option<&'s Series> {
    series.iter().find(|s| s.label == label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[5.0, 5.0, 1.0, 9.0, 9.0]), Some(5.0));
    }

    #[test]
    fn summaries() {
        let s = Summary::of(&[0.3, 0.1, 0.2, 0.9]).unwrap();
        assert_eq!(s.n, 4);
        assert!((s.median - 0.25).abs() < 1e-12);
        assert_eq!(s.min, 0.1);
        assert_eq!(s.max, 0.9);
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(Some(1.0), Some(2.0)), Some(0.5));
        assert_eq!(ratio(Some(1.0), Some(0.0)), None);
        assert_eq!(ratio(None, Some(2.0)), None);
        assert_eq!(ratio(Some(1.0), None), None);
        assert_eq!(ratio(Some(f64::NAN), Some(1.0)), None);
    }

    /// A successful (or failed) launch of `variant` that printed `out`.
    fn launch(variant: usize, oneway_ns: f64, ok: bool, out: &str) -> Launch {
        use crate::host::Sample;
        use crate::run::Exit;
        let mut l = Launch::fake(variant, Exit::Code(if ok { 0 } else { 1 }), out);
        l.sentinel = Some(Sample {
            oneway_ns,
            memcpy_gbps: 40.0,
            load1: None,
        });
        l
    }

    #[test]
    fn series_group_rows_over_successful_launches() {
        let launches = [
            launch(
                0,
                26.0,
                true,
                "PP size=0 t_half_us_med=0.2\nPP size=8 t_half_us_med=0.3\n",
            ),
            launch(1, 26.0, true, "PP size=0 t_half_us_med=0.1\n"),
            launch(
                0,
                170.0,
                true,
                "PP size=0 t_half_us_med=0.6\nPP size=8 t_half_us_med=0.9\n",
            ),
            launch(0, 26.0, false, "PP size=0 t_half_us_med=99\n"),
            launch(
                0,
                26.0,
                true,
                "PP size=0 t_half_us_med=0.4\nPI size=0 t_half_us_med=5\n",
            ),
        ];
        let sel = Selector {
            key: "PP",
            group: &["size"],
            value: "t_half_us_med",
        };
        let s = series(&launches, 0, sel);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].label.as_str(), s[1].label.as_str()), ("0", "8"));
        let all = s[0].all().unwrap();
        assert_eq!((all.n, all.median, all.min, all.max), (3, 0.4, 0.2, 0.6));
        let fast = s[0].fast().unwrap();
        assert_eq!(fast.n, 2);
        assert!((fast.median - 0.3).abs() < 1e-12, "{}", fast.median);
        assert_eq!(find(&s, "8").unwrap().points.len(), 2);
        assert!(find(&s, "1024").is_none());
        assert_eq!(series(&launches, 1, sel)[0].all().unwrap().median, 0.1);
    }

    #[test]
    fn series_group_by_several_fields() {
        let launches = [
            launch(
                0,
                26.0,
                true,
                "COLL op=barrier bytes=0 ranks=4 t_max_us_med=3\n\
                 COLL op=bcast bytes=8 ranks=4 t_max_us_med=1\n\
                 COLL op=bcast bytes=1024 ranks=4 t_max_us_med=2\n\
                 COLL op=bcast ranks=4 t_max_us_med=99\n",
            ),
            launch(
                0,
                26.0,
                true,
                "COLL op=bcast bytes=8 ranks=4 t_max_us_med=1.5\n",
            ),
        ];
        let s = series(
            &launches,
            0,
            Selector {
                key: "COLL",
                group: &["op", "bytes"],
                value: "t_max_us_med",
            },
        );
        let labels: Vec<&str> = s.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["barrier 0", "bcast 8", "bcast 1024"]);
        assert_eq!(s[1].all().unwrap().median, 1.25);
    }

    #[test]
    fn fast_state_filter() {
        let s = Series {
            label: "0".into(),
            points: vec![
                Point {
                    value: 1.0,
                    fast: Some(true),
                },
                Point {
                    value: 5.0,
                    fast: Some(false),
                },
                Point {
                    value: 3.0,
                    fast: Some(true),
                },
                Point {
                    value: 9.0,
                    fast: None,
                },
            ],
        };
        assert_eq!(s.all().unwrap().median, 4.0);
        let f = s.fast().unwrap();
        assert_eq!((f.n, f.median, f.min), (2, 2.0, 1.0));
    }
}
