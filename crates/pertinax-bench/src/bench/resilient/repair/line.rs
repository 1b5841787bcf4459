//! One `REPAIR` line as the worker prints it ([`Line`]), and why it does
//! not count for a launch.

use super::KEY;
use crate::cli::ResCheck;
use crate::parse::Record;

/// The hierarchical fields of a `REPAIR` line.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct HierFields {
    pub(super) k: usize,
    /// The masters when the communicator was made.
    pub(super) masters: Vec<usize>,
    /// The deputies when the communicator was made.
    pub(super) deputies: Vec<usize>,
    /// The most local and global repairs a survivor made.
    pub(super) local_repairs: u64,
    pub(super) global_repairs: u64,
}

/// One `REPAIR` line (on one line; `shape=flat` where it is absent):
///
/// ```text
/// REPAIR shape=flat check=log ranks=8 survivors=7 spanned=7 failed=7 repairs=1 iters=450
///   span_iter=349..349 repair_max_us=812.5 repair_min_us=640.2 span_max_us=830.1
///   base_med_us=17.6 after_med_us=16.9 bad=0
/// ```
///
/// and with `shape=hier`, at the end: `k=3 masters=0,3,6 deputies=1,4,7
/// local_repairs=1 global_repairs=0`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Line {
    pub(super) check: ResCheck,
    pub(super) ranks: usize,
    pub(super) survivors: usize,
    /// Survivors that saw the failure.
    pub(super) spanned: usize,
    /// The failed ranks (`-`: none).
    pub(super) failed: Vec<usize>,
    pub(super) repairs: u64,
    /// Spanning call minus fault-free median, max and min over survivors.
    pub(super) repair_max: f64,
    pub(super) repair_min: f64,
    /// The spanning call, max over survivors.
    pub(super) span_max: f64,
    /// The median fault-free call, max over survivors.
    pub(super) base: f64,
    /// The median call after the spanning one, max over survivors.
    pub(super) after: Option<f64>,
    /// The most time a survivor spent in the library's repair procedure
    /// (`proc_max_us`; absent from older workers).
    pub(super) proc_max: Option<f64>,
    /// Calls with a wrong sum, over survivors.
    pub(super) bad: u64,
    /// `shape=hier`: the hierarchy's fields.
    pub(super) hier: Option<HierFields>,
}

/// A comma-separated list of ranks, `-` for none.
fn ranks_list(s: &str) -> Option<Vec<usize>> {
    match s {
        "-" => Some(Vec::new()),
        list => list.split(',').map(|x| x.parse().ok()).collect(),
    }
}

impl Line {
    /// Reads a `REPAIR` record; `None` if a required field is missing.
    pub(super) fn parse(r: &Record) -> Option<Line> {
        if r.key != KEY {
            return None;
        }
        let int = |k: &str| r.get(k)?.parse::<u64>().ok();
        let hier = match r.get("shape").unwrap_or("flat") {
            "flat" => None,
            "hier" => Some(HierFields {
                k: int("k")? as usize,
                masters: ranks_list(r.get("masters")?)?,
                deputies: ranks_list(r.get("deputies")?)?,
                local_repairs: int("local_repairs")?,
                global_repairs: int("global_repairs")?,
            }),
            _ => return None,
        };
        Some(Line {
            check: ResCheck::from_name(r.get("check")?)?,
            ranks: int("ranks")? as usize,
            survivors: int("survivors")? as usize,
            spanned: int("spanned")? as usize,
            failed: ranks_list(r.get("failed")?)?,
            repairs: int("repairs")?,
            repair_max: r.f64("repair_max_us")?,
            repair_min: r.f64("repair_min_us")?,
            span_max: r.f64("span_max_us")?,
            base: r.f64("base_med_us")?,
            after: r.f64("after_med_us").filter(|x| x.is_finite()),
            proc_max: r.f64("proc_max_us").filter(|x| x.is_finite()),
            bad: int("bad")?,
            hier,
        })
    }

    /// Why the line does not count for a launch of `ranks` ranks whose
    /// victim is rank `victim`, if it does not.
    pub(super) fn problem(&self, ranks: usize, victims: &[usize]) -> Option<String> {
        if self.ranks != ranks {
            Some(format!("line for N={}", self.ranks))
        } else if self.failed != victims {
            Some(format!(
                "failed ranks {:?}, expected {victims:?}",
                self.failed
            ))
        } else if self.spanned != self.survivors || self.survivors != ranks - victims.len() {
            Some(format!(
                "{} of {} survivors saw the failure",
                self.spanned, self.survivors
            ))
        } else if self.bad > 0 {
            Some(format!("{} allreduce results were wrong", self.bad))
        } else if !self.repair_max.is_finite() {
            Some("no repair time".into())
        } else {
            None
        }
    }
}
