//! What the launches of one scheme at one rank count produced
//! ([`SchemeTally`]), and the hierarchy's weighted repair time over the
//! kinds of victim ([`Weighted`]).

use super::line::Line;
use super::scheme::{weighted, Scheme, Victim};
use super::KEY;
use crate::bench::{Campaign, Judged, Tally};
use crate::run::last_line;
use crate::stats::Summary;

/// What the launches of one scheme at one rank count produced.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct SchemeTally {
    pub(super) ranks: usize,
    pub(super) scheme: Scheme,
    /// The hierarchy's group size at this rank count.
    pub(super) k: usize,
    pub(super) runs: usize,
    pub(super) lines: Vec<Line>,
    /// Launches without a usable line: why.
    pub(super) failed: Vec<String>,
}

impl SchemeTally {
    /// The launches of `variant`, checked against `scheme`'s victim at
    /// `ranks` ranks in groups of `k`; a scheme without a victim there
    /// (skipped, never launched) has no launches.
    pub(super) fn of(
        c: &Campaign,
        variant: usize,
        ranks: usize,
        scheme: Scheme,
        k: usize,
    ) -> SchemeTally {
        let victim = scheme.victim(ranks, k);
        let Tally { ended, counted } = c.tally(variant, KEY, |l, rec| {
            let why = match rec.map(Line::parse) {
                _ if !l.outcome.ok() => {
                    format!("{}: {}", l.outcome.status(), last_line(&l.outcome.stderr))
                }
                Some(None) => "incomplete REPAIR line".into(),
                None => format!("no REPAIR line; stderr: {}", last_line(&l.outcome.stderr)),
                Some(Some(x)) if !scheme.matches(&x) => format!(
                    "line for {} {}",
                    if x.hier.is_some() { "hier" } else { "flat" },
                    x.check.name()
                ),
                Some(Some(x)) => match victim.and_then(|v| {
                    x.problem(ranks, &scheme.victims(v))
                        .or_else(|| scheme.kind_problem(&x, v, k))
                }) {
                    Some(p) => p,
                    None => return Judged::Counts(x),
                },
            };
            Judged::Fails(why)
        });
        SchemeTally {
            ranks,
            scheme,
            k,
            runs: ended.runs,
            lines: counted,
            failed: ended.failed,
        }
    }

    pub(super) fn summary(&self, f: impl Fn(&Line) -> Option<f64>) -> Option<Summary> {
        Summary::of(&self.lines.iter().filter_map(f).collect::<Vec<_>>())
    }

    /// The median repair time (max over survivors) over launches.
    pub(super) fn repair_median(&self) -> Option<f64> {
        self.summary(|l| Some(l.repair_max)).map(|s| s.median)
    }

    /// The median repair-procedure time (max over survivors) over launches.
    pub(super) fn proc_median(&self) -> Option<f64> {
        self.summary(|l| l.proc_max).map(|s| s.median)
    }

    /// The hierarchy's repair counts (`local/global`, most over survivors)
    /// as the launches reported them, each different pair once; `-` for
    /// the flat schemes.
    pub(super) fn repairs_cell(&self) -> String {
        let mut seen: Vec<String> = Vec::new();
        for h in self.lines.iter().filter_map(|l| l.hier.as_ref()) {
            let c = format!("{}/{}", h.local_repairs, h.global_repairs);
            if !seen.contains(&c) {
                seen.push(c);
            }
        }
        if seen.is_empty() {
            "-".into()
        } else {
            seen.join(", ")
        }
    }
}

/// The hierarchy's weighted repair time at one rank count, from the
/// master, deputy and member tallies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Weighted {
    pub(super) ranks: usize,
    pub(super) k: usize,
    pub(super) master: f64,
    pub(super) deputy: f64,
    /// `None` when there is no member at this rank count and k.
    pub(super) member: Option<f64>,
    /// [`weighted`] of the three.
    pub(super) value: f64,
}

impl Weighted {
    /// From the tallies of one rank count, when every kind that exists
    /// there (the member only when k >= 3) has a median.
    pub(super) fn of(tallies: &[SchemeTally], ranks: usize) -> Option<Weighted> {
        Weighted::of_metric(tallies, ranks, SchemeTally::repair_median)
    }

    /// [`Weighted::of`] the repair procedure's times.
    pub(super) fn of_proc(tallies: &[SchemeTally], ranks: usize) -> Option<Weighted> {
        Weighted::of_metric(tallies, ranks, SchemeTally::proc_median)
    }

    /// [`Weighted::of`] the medians `metric` gives.
    fn of_metric(
        tallies: &[SchemeTally],
        ranks: usize,
        metric: fn(&SchemeTally) -> Option<f64>,
    ) -> Option<Weighted> {
        let med = |v: Victim| {
            tallies
                .iter()
                .find(|t| t.ranks == ranks && t.scheme == Scheme::Hier(v))
                .and_then(|t| Some((t.k, metric(t)?)))
        };
        let (k, master) = med(Victim::Master)?;
        let (_, deputy) = med(Victim::Deputy)?;
        let member = med(Victim::Member).map(|(_, m)| m);
        Some(Weighted {
            ranks,
            k,
            master,
            deputy,
            member,
            value: weighted(ranks, k, master, deputy, member)?,
        })
    }

    /// `= P_m·master + P_d·deputy + P_r·member` with the numbers (the
    /// member term only when there are members).
    pub(super) fn formula(&self) -> String {
        let (n, k) = (self.ranks, self.k);
        let mut s = format!(
            "= {:.3}·{:.1} + {:.3}·{:.1}",
            Victim::Master.share(n, k),
            self.master,
            Victim::Deputy.share(n, k),
            self.deputy
        );
        if let (true, Some(m)) = (Victim::Member.count(n, k) > 0, self.member) {
            s.push_str(&format!(" + {:.3}·{m:.1}", Victim::Member.share(n, k)));
        }
        s
    }
}

/// `P(master) = 3/8 = 0.375, P(deputy) = …, P(member) = …`: the shares of
/// the kinds at `n` ranks in groups of `k`.
pub(super) fn shares_cell(n: usize, k: usize) -> String {
    Victim::ALL
        .iter()
        .map(|v| {
            format!(
                "P({}) = {}/{n} = {:.3}",
                v.name(),
                v.count(n, k),
                v.share(n, k)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
