//! The measured launch, the unit every benchmark is made of.
//!
//! A benchmark builds its variants (pertinax and, where installed, Open
//! MPI; or one configuration per mode, check, build...), prints their
//! [`head`], and runs them interleaved at a [`Pace`] with
//! [`Context::campaign`] (one campaign per rank count where each gets its
//! own launches). The [`Campaign`] it gets back is read variant by variant:
//!
//! - as [`Campaign::series`] of one record field, for programs that print
//!   one value per row (ping-pong sizes, collective cases): only the
//!   launches that exited with 0 count;
//! - as a [`Tally`] ([`Campaign::tally`]), for programs whose launches are
//!   judged one by one from their summary line: each launch counts with
//!   what it gave, or fails with a reason, or ran into the time limit
//!   ([`Ended`] keeps the hangs and the reasons for the report).
//!
//! Every report ends with [`Campaign::hosts`], the host's state launch by
//! launch; [`Campaign::append`] puts several rank counts into one such
//! table.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Result;

use super::Context;
use crate::host::{percent, Sample};
use crate::parse::Record;
use crate::report::Table;
use crate::run::{interleave, Launch, Plan, Variant};
use crate::stats::{self, median, Selector, Series};

/// How many launches each variant gets and how long one may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pace {
    /// Launches per variant (rounds of the interleaving).
    pub rounds: usize,
    /// Wall-clock limit per launch.
    pub limit: Duration,
}

/// The launches of some variants, run interleaved.
#[derive(Clone, Debug, Default)]
pub struct Campaign {
    /// The configurations, in the order given.
    pub variants: Vec<Variant>,
    /// Every launch, in the order run (round by round).
    pub launches: Vec<Launch>,
}

impl Context {
    /// Runs `variants` interleaved at `pace` ([`crate::run::interleave`]:
    /// a sentinel sample before and after every launch, progress on
    /// stderr, every launch's output to `--log`); `title` names the
    /// progress lines.
    ///
    /// # Errors
    /// When a program cannot be started or the log cannot be written.
    pub fn campaign(
        &mut self,
        title: &str,
        variants: Vec<Variant>,
        pace: Pace,
    ) -> Result<Campaign> {
        let plan = Plan {
            title,
            variants: &variants,
            rounds: pace.rounds,
            limit: pace.limit,
            sentinel: &self.sentinel,
        };
        let launches = interleave(&plan, self.log.as_mut())?;
        Ok(Campaign { variants, launches })
    }
}

impl Campaign {
    /// For tests: a campaign that ran these launches.
    #[cfg(test)]
    pub fn fake(launches: &[Launch]) -> Campaign {
        Campaign {
            variants: Vec::new(),
            launches: launches.to_vec(),
        }
    }

    /// The launches of variant `v`, in the order run.
    pub fn of(&self, v: usize) -> impl Iterator<Item = &Launch> {
        self.launches.iter().filter(move |l| l.variant == v)
    }

    /// The records of variant `v`'s launches that exited with 0, one
    /// series per row ([`stats::series`]).
    pub fn series(&self, v: usize, sel: Selector<'_>) -> Vec<Series> {
        stats::series(&self.launches, v, sel)
    }

    /// Variant `v`'s launches judged one by one ([`Tally::of`]).
    pub fn tally<'a, T>(
        &'a self,
        v: usize,
        key: &str,
        judge: impl FnMut(&'a Launch, Option<&'a Record>) -> Judged<T>,
    ) -> Tally<T> {
        Tally::of(self.of(v), key, judge)
    }

    /// Adds `other`'s variants and launches after these (one host table
    /// for several campaigns).
    pub fn append(&mut self, other: Campaign) {
        let offset = self.variants.len();
        self.variants.extend(other.variants);
        self.launches
            .extend(other.launches.into_iter().map(|mut l| {
                l.variant += offset;
                l
            }));
    }

    /// Per-variant sentinel summary: how many launches were in the fast
    /// state, the median one-way latency, and every launch's reading.
    pub fn hosts(&self) -> String {
        let mut t = Table::new([
            "variant",
            "launches ok/run",
            "fast before",
            "fast before+after",
            "c2c one-way ns median",
            "memcpy GB/s median",
            "load1 median",
            "others' CPU median",
        ]);
        let mut detail = String::new();
        for (i, v) in self.variants.iter().enumerate() {
            let mine: Vec<&Launch> = self.of(i).collect();
            let samples: Vec<_> = mine.iter().filter_map(|l| l.sentinel).collect();
            let ok = mine.iter().filter(|l| l.outcome.ok()).count();
            let fast = samples.iter().filter(|s| s.fast()).count();
            let med = |f: &dyn Fn(&Sample) -> Option<f64>| {
                median(&samples.iter().filter_map(f).collect::<Vec<_>>())
                    .map_or("-".into(), |m| format!("{m:.1}"))
            };
            let of_samples = |n: usize| {
                if samples.is_empty() {
                    "n/a".into()
                } else {
                    format!("{n}/{}", samples.len())
                }
            };
            let both = mine.iter().filter(|l| l.fast() == Some(true)).count();
            t.row(vec![
                v.name.clone(),
                format!("{ok}/{}", mine.len()),
                of_samples(fast),
                of_samples(both),
                med(&|s| Some(s.oneway_ns)),
                med(&|s| Some(s.memcpy_gbps)),
                med(&|s| s.load1),
                percent(median(
                    &mine.iter().filter_map(|l| l.others_cpu).collect::<Vec<_>>(),
                )),
            ]);
            let per: Vec<String> = mine
                .iter()
                .map(|l| {
                    let ns = |s: Option<Sample>| {
                        s.map_or("n/a".into(), |s| format!("{:.0}", s.oneway_ns))
                    };
                    let c2c = format!("{}>{}", ns(l.sentinel), ns(l.sentinel_after));
                    let cell = format!("{c2c}/{}", percent(l.others_cpu));
                    if l.outcome.ok() {
                        cell
                    } else {
                        format!("{cell}[{}]", l.outcome.status())
                    }
                })
                .collect();
            detail.push_str(&format!("{:<24} {}\n", v.name, per.join(" ")));
        }
        format!(
            "\nHost state per launch: the c2c.c sentinel right before and right after it \
             (fast = one-way <= 60 ns; a launch counts as fast-state when both readings are \
             fast), the 1-minute load average, and others' CPU = the share of both cores' time \
             that processes outside this session (other people's builds and tests, kernel \
             threads) used while the launch ran (a lower bound; 10 ms ticks, so rough for \
             launches under a second). Per launch below: one-way ns before>after / others' \
             CPU.\n\n{}\n```\n{detail}```\n",
            t.render()
        )
    }
}

/// `\n<title>\n\n` and every variant's command line, one per line: the
/// head of a report, printed before its launches run.
pub fn head(title: &str, variants: &[Variant]) -> String {
    let mut s = format!("\n{title}\n\n");
    for v in variants {
        s.push_str(&format!("- {}: `{}`\n", v.name, v.cmd.display()));
    }
    s
}

/// `\n<title>:\n\n<items>`, or nothing when there are no items (the lists
/// of launches without usable results under a table).
pub fn listed(title: &str, items: &str) -> String {
    if items.is_empty() {
        String::new()
    } else {
        format!("\n{title}:\n\n{items}")
    }
}

/// How the launches of one variant ended: what every tally of a variant's
/// results starts with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ended {
    /// Launches run.
    pub runs: usize,
    /// Launches that printed their results and then ran into the time
    /// limit (Open MPI's finalize hang).
    pub hung_after: usize,
    /// Launches that ran into the time limit without results.
    pub hung_before: usize,
    /// Launches without usable results that did not hang: why.
    pub failed: Vec<String>,
    /// How the launches ended, e.g. `rc=0` -> 4.
    pub exits: BTreeMap<String, usize>,
}

impl Ended {
    /// Counts launch `l`, which printed its result line or not
    /// (`printed`).
    pub fn count(&mut self, l: &Launch, printed: bool) {
        self.runs += 1;
        *self.exits.entry(l.outcome.status()).or_default() += 1;
        match (l.timed_out(), printed) {
            (true, true) => self.hung_after += 1,
            (true, false) => self.hung_before += 1,
            _ => {}
        }
    }

    /// Launches that ran into the time limit.
    pub fn hangs(&self) -> usize {
        self.hung_after + self.hung_before
    }

    /// `- <name>: <why>`, one line per failed launch.
    pub fn failures(&self, name: &str) -> String {
        self.failed
            .iter()
            .map(|f| format!("- {name}: {f}\n"))
            .collect()
    }
}

/// What one launch counts for.
#[derive(Clone, Debug, PartialEq)]
pub enum Judged<T> {
    /// It counts, with what it gave.
    Counts(T),
    /// It does not, for this reason (listed under the report's tables).
    Fails(String),
    /// It does not and needs no reason: it ran into the time limit
    /// ([`Ended`] counts it as a hang).
    Hung,
}

/// What the launches of one variant produced: how they ended, and what
/// each launch that counts gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Tally<T> {
    /// How the launches ended.
    pub ended: Ended,
    /// One entry per launch that counts, in the order run.
    pub counted: Vec<T>,
}

impl<T> Tally<T> {
    /// Judges `launches` one by one: `judge` gets each launch and its
    /// first `key` record (the summary line, if it printed one).
    pub fn of<'a>(
        launches: impl IntoIterator<Item = &'a Launch>,
        key: &str,
        mut judge: impl FnMut(&'a Launch, Option<&'a Record>) -> Judged<T>,
    ) -> Tally<T> {
        let mut t = Tally {
            ended: Ended::default(),
            counted: Vec::new(),
        };
        for l in launches {
            let rec = l.records.iter().find(|r| r.key == key);
            t.ended.count(l, rec.is_some());
            match judge(l, rec) {
                Judged::Counts(x) => t.counted.push(x),
                Judged::Fails(why) => t.ended.failed.push(why),
                Judged::Hung => {}
            }
        }
        t
    }

    /// `counted/runs`: the launches that count of those run.
    pub fn ok_of_runs(&self) -> String {
        format!("{}/{}", self.counted.len(), self.ended.runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Exit;

    #[test]
    fn tallies_judge_launch_by_launch() {
        let launches = [
            Launch::fake(0, Exit::Code(0), "X v=1\n"),
            Launch::fake(0, Exit::TimedOut, "X v=2\n"),
            Launch::fake(0, Exit::TimedOut, ""),
            Launch::fake(0, Exit::Code(1), ""),
            Launch::fake(1, Exit::Code(0), "X v=9\n"),
        ];
        let c = Campaign::fake(&launches);
        let t = c.tally(0, "X", |l, rec| match rec.and_then(|r| r.f64("v")) {
            Some(v) => Judged::Counts(v),
            None if l.timed_out() => Judged::Hung,
            None => Judged::Fails(l.outcome.status()),
        });
        assert_eq!(t.counted, [1.0, 2.0]);
        assert_eq!(
            (t.ended.runs, t.ended.hung_after, t.ended.hung_before),
            (4, 1, 1)
        );
        assert_eq!(t.ended.hangs(), 2);
        assert_eq!(t.ended.failures("x n=2"), "- x n=2: rc=1\n");
        assert_eq!(t.ended.exits.get("TIMEOUT"), Some(&2));
        assert_eq!(t.ok_of_runs(), "2/4");
        assert_eq!(listed("none", ""), "");
        assert_eq!(listed("some", "- a\n"), "\nsome:\n\n- a\n");
    }

    #[test]
    fn appended_campaigns_keep_their_variants_apart() {
        let v = |name: &str| Variant::new(name, crate::run::Cmd::new("/bin/true"));
        let mut all = Campaign::default();
        for n in [2, 4] {
            let mut c = Campaign::fake(&[Launch::fake(0, Exit::Code(0), "")]);
            c.variants = vec![v(&format!("a n={n}"))];
            all.append(c);
        }
        assert_eq!(all.of(1).count(), 1);
        let hosts = all.hosts();
        assert!(hosts.contains("| a n=4   | 1/1 "), "{hosts}");
        assert_eq!(
            head("## t", &all.variants[..1]),
            "\n## t\n\n- a n=2: `/bin/true`\n"
        );
    }
}
