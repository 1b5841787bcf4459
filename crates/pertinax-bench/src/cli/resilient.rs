//! Options of `pertinax-bench resilient` and the communicator kinds its
//! worker measures (a submodule, so that `cli.rs` stays one screenful per
//! benchmark).

use clap::{Args, ValueEnum};

use super::{cases, parse_sizes, ranks, CollOp, Sizes, WorkerArgs};
use crate::worker::{RepairParams, ResParams};

/// What the `resilient` benchmark runs (launches: `--launches`, default 3
/// for overhead and apps, 5 for repair).
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct ResilientOpts {
    /// Parts to run: overhead (per-operation cost, plain vs agree vs log vs
    /// hierarchical), repair (kill -> the allreduce that spans the failure,
    /// flat and hierarchical), apps (EP and screening end to end, when their
    /// binaries are built).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_enum,
        default_value = "overhead,repair,apps"
    )]
    pub parts: Vec<ResPart>,

    /// Overhead: rank counts of the 1-byte barrier, bcast, reduce and
    /// allreduce; each gets its own interleaved launches.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "2,4,8,16",
          value_parser = ranks::<2>)]
    pub ranks: Vec<usize>,

    /// Overhead: the rank count whose launches also sweep the message
    /// sizes (bcast, reduce, allreduce).
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = ranks::<2>)]
    pub sweep_ranks: usize,

    /// Overhead: the sizes of the sweep (default 8 B to 1 MiB, powers of 8
    /// and 1 MiB).
    #[arg(long, value_name = "LIST", value_parser = parse_sizes)]
    pub sizes: Option<Sizes>,

    /// Overhead: calls per timed series up to 4 KiB (default 2000, 200
    /// with --quick); above, fewer in proportion to the size, at least 20.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: Option<u32>,

    /// Overhead: untimed calls before each series, scaled like --reps
    /// (default 200, 20 with --quick).
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,

    /// Repair: rank counts (at least 3; flat: the victim is rank N-1;
    /// hierarchical: a master, a deputy and a member victim, named in the
    /// table; no member when k = 2).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "4,8,16",
          value_parser = ranks::<3>)]
    pub repair_ranks: Vec<usize>,

    /// Repair: fault-free allreduce iterations timed before the victim
    /// dies (default 300, 100 with --quick; 50 more are untimed warm-up,
    /// 100 more follow the failure).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(10..))]
    pub repair_iters: Option<u32>,

    /// Overhead and repair: the local group size k of the hierarchical
    /// communicator (default: `pertinax_resilient::default_k(N)`, the
    /// paper's equation 4, per rank count N).
    #[arg(long, value_name = "K", value_parser = parse_hier_k)]
    pub hier_k: Option<usize>,

    /// Apps: rank counts.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "2,4,8",
          value_parser = ranks::<2>)]
    pub app_ranks: Vec<usize>,

    /// Apps: the EP class (default A, about 16 s of CPU in all; W with
    /// --quick).
    #[arg(long, value_name = "CLASS", value_parser = parse_ep_class)]
    pub ep_class: Option<String>,

    /// Apps: poses tried per molecule by the screening (its default 64
    /// gives a run under a second; 640 about ten times longer).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub screen_work: Option<u32>,
}

/// The default sizes of the sweep: 8 B to 256 KiB in powers of 8, then 1 MiB.
pub const RES_SIZES: [usize; 7] = [8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20];

/// Untimed allreduce iterations before the repair part's timed ones.
pub const REPAIR_WARMUP: usize = 50;

/// Allreduce iterations after the failure in the repair part.
pub const REPAIR_AFTER: usize = 100;

impl ResilientOpts {
    /// Whether `part` is to run.
    pub fn wants(&self, part: ResPart) -> bool {
        self.parts.contains(&part)
    }

    /// The sweep's sizes, or [`RES_SIZES`].
    pub fn sizes(&self) -> Sizes {
        self.sizes.clone().unwrap_or(Sizes(RES_SIZES.to_vec()))
    }

    /// (calls per series up to 4 KiB, warm-up calls) with the defaults.
    pub fn counts(&self, quick: bool) -> (usize, usize) {
        let (r, w) = if quick { (200, 20) } else { (2000, 200) };
        (
            self.reps.map_or(r, |x| x as usize),
            self.warmup.map_or(w, |x| x as usize),
        )
    }

    /// Timed fault-free iterations of the repair part.
    pub fn repair_iters(&self, quick: bool) -> usize {
        self.repair_iters
            .map_or(if quick { 100 } else { 300 }, |x| x as usize)
    }

    /// The hierarchical communicator's local group size at `n` ranks:
    /// `--hier-k`, else [`pertinax_resilient::default_k`].
    pub fn hier_k(&self, n: usize) -> usize {
        self.hier_k
            .unwrap_or_else(|| pertinax_resilient::default_k(n))
    }

    /// The EP class of the apps part.
    pub fn ep_class(&self, quick: bool) -> String {
        self.ep_class
            .clone()
            .unwrap_or_else(|| if quick { "W" } else { "A" }.into())
    }
}

/// Calls of a timed series of `bytes`-byte messages when `base` are made up
/// to 4 KiB: proportionally fewer above (the same bytes moved), at least
/// 20 (and never more than `base`).
pub fn reps_for(bytes: usize, base: usize) -> usize {
    if bytes <= 4 << 10 {
        base
    } else {
        (base.saturating_mul(4 << 10) / bytes).max(20).min(base)
    }
}

/// A local group size of the hierarchical communicator: at least 2.
fn parse_hier_k(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(k) if k >= 2 => Ok(k),
        Ok(k) => Err(format!("a local group needs at least 2 ranks, not {k}")),
        Err(_) => Err(format!("`{s}` is not a group size")),
    }
}

/// An NPB class name `pertinax-ep` takes.
fn parse_ep_class(s: &str) -> Result<String, String> {
    let c = s.trim().to_ascii_uppercase();
    if ["S", "W", "A", "B", "C"].contains(&c.as_str()) {
        Ok(c)
    } else {
        Err(format!(
            "`{s}` is not an EP class for this machine (S, W, A, B or C)"
        ))
    }
}

/// A part of the `resilient` benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum)]
pub enum ResPart {
    /// Per-operation cost: plain vs resilient (flat agree, flat log,
    /// hierarchical).
    Overhead,
    /// Kill one rank in an allreduce loop: detection + repair + redo, flat
    /// and hierarchical (master, deputy and member victims).
    Repair,
    /// EP and screening end to end, plain vs resilient.
    Apps,
}

/// A communicator the overhead worker measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum)]
pub enum ResComm {
    /// The plain `pertinax::Comm` (a duplicate of the world).
    Plain,
    /// `Resilient` with `Check::Agree` (Legio's agreement per collective).
    Agree,
    /// `Resilient` with `Check::Log` (replay log, no agreement).
    Log,
    /// `Hierarchical` (Legio's section 5: local groups of at most k ranks
    /// joined by a global communicator of masters and deputies) with `Check::Agree`, its only check; built
    /// at every rank count (no threshold).
    Hier,
}

impl ResComm {
    /// Every kind, in report order.
    pub const ALL: [ResComm; 4] = [ResComm::Plain, ResComm::Agree, ResComm::Log, ResComm::Hier];

    /// The flat kinds: what `worker resilient` measures without `--comms`,
    /// and the variants of the apps part.
    pub const FLAT: [ResComm; 3] = [ResComm::Plain, ResComm::Agree, ResComm::Log];

    /// The name in `RES comm=` lines and on command lines.
    pub fn name(self) -> &'static str {
        match self {
            ResComm::Plain => "plain",
            ResComm::Agree => "agree",
            ResComm::Log => "log",
            ResComm::Hier => "hier",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<ResComm> {
        ResComm::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The resilient check, `None` for the plain communicator.
    pub fn check(self) -> Option<ResCheck> {
        match self {
            ResComm::Plain => None,
            ResComm::Agree | ResComm::Hier => Some(ResCheck::Agree),
            ResComm::Log => Some(ResCheck::Log),
        }
    }
}

/// The check of a resilient communicator (`pertinax_resilient::Check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum)]
pub enum ResCheck {
    /// An agreement after every collective (the default, Legio's).
    Agree,
    /// A replay log, no agreement on the fault-free path.
    Log,
}

impl ResCheck {
    /// Both, in report order.
    pub const ALL: [ResCheck; 2] = [ResCheck::Agree, ResCheck::Log];

    /// The name in `REPAIR check=` lines and on command lines.
    pub fn name(self) -> &'static str {
        match self {
            ResCheck::Agree => "agree",
            ResCheck::Log => "log",
        }
    }

    /// The check named `name`.
    pub fn from_name(name: &str) -> Option<ResCheck> {
        ResCheck::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The library's value.
    pub fn to_check(self) -> pertinax_resilient::Check {
        match self {
            ResCheck::Agree => pertinax_resilient::Check::Agree,
            ResCheck::Log => pertinax_resilient::Check::Log,
        }
    }
}

/// The operations of the overhead part.
pub const RES_OPS: [CollOp; 4] = [
    CollOp::Barrier,
    CollOp::Bcast,
    CollOp::Reduce,
    CollOp::Allreduce,
];

impl WorkerArgs {
    /// The options of `worker resilient`: by default the flat communicators
    /// ([`ResComm::FLAT`]), [`RES_OPS`] at 1 byte, 2000 calls after 200
    /// warm-up calls.
    pub fn res(&self) -> ResParams {
        let ops = if self.ops.is_empty() {
            RES_OPS.to_vec()
        } else {
            self.ops.clone()
        };
        let sizes = self.sizes.clone().map_or(vec![1], |s| s.0);
        ResParams {
            comms: if self.comms.is_empty() {
                ResComm::FLAT.to_vec()
            } else {
                self.comms.clone()
            },
            cases: cases(&ops, &sizes),
            reps: self.reps.unwrap_or(2000).max(1),
            warmup: self.warmup.unwrap_or(200),
        }
    }

    /// The options of `worker repair`.
    pub fn repair(&self) -> RepairParams {
        RepairParams {
            check: self.check,
            iters: self
                .iters
                .unwrap_or(REPAIR_WARMUP + 300 + REPAIR_AFTER)
                .max(1),
            warmup: self.warmup.unwrap_or(REPAIR_WARMUP),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{parse, Bench, Command};

    fn check(args: &str) -> Bench<ResilientOpts> {
        match parse(&format!("resilient {args}")) {
            Ok(Command::Resilient(a)) => a,
            other => panic!("{args}: {other:?}"),
        }
    }

    #[test]
    fn defaults() {
        let d = check("");
        assert_eq!(d.opts, ResilientOpts::default());
        let o = &d.opts;
        assert!([ResPart::Overhead, ResPart::Repair, ResPart::Apps]
            .iter()
            .all(|&p| o.wants(p)));
        assert_eq!(o.sizes().0, RES_SIZES.to_vec());
        assert_eq!((o.counts(false), o.counts(true)), ((2000, 200), (200, 20)));
        assert_eq!((o.repair_iters(false), o.repair_iters(true)), (300, 100));
        // The paper's equation 4 unless --hier-k is given.
        assert_eq!((o.hier_k(4), o.hier_k(8), o.hier_k(16)), (2, 3, 3));
        assert_eq!(
            (o.ep_class(false), o.ep_class(true)),
            ("A".into(), "W".into())
        );
    }

    #[test]
    fn options() {
        let a = check(
            "--parts overhead,apps --ranks 2,16 --sweep-ranks 4 --sizes 8,1M --reps 50 --warmup 5 \
             --repair-ranks 3 --repair-iters 20 --app-ranks 2 --ep-class w --hier-k 4 --launches 4",
        );
        let o = &a.opts;
        assert!(o.wants(ResPart::Apps) && !o.wants(ResPart::Repair));
        assert_eq!((o.ranks.clone(), o.sweep_ranks), (vec![2, 16], 4));
        assert_eq!(o.sizes().0, vec![8, 1 << 20]);
        assert_eq!(o.counts(true), (50, 5));
        assert_eq!(
            (o.repair_ranks.clone(), o.repair_iters(false)),
            (vec![3], 20)
        );
        assert_eq!(o.ep_class(false), "W");
        assert_eq!((o.hier_k(8), o.hier_k(16)), (4, 4));
        assert_eq!(a.common.launches_or(3), 4);
        for bad in [
            "--ranks 1",
            "--repair-ranks 2",
            "--repair-iters 5",
            "--ep-class E",
            "--parts hier",
            "--reps 0",
            "--hier-k 1",
            "--hier-k x",
        ] {
            assert!(parse(&format!("resilient {bad}")).is_err(), "{bad}");
        }
    }

    #[test]
    fn workers() {
        let w = |args: &str| match parse(&format!("worker {args}")) {
            Ok(Command::Worker(w)) => w,
            other => panic!("{args}: {other:?}"),
        };
        let d = w("resilient").res();
        assert_eq!(d.comms, ResComm::FLAT.to_vec());
        assert_eq!((d.reps, d.warmup), (2000, 200));
        assert_eq!(
            d.cases,
            [
                (CollOp::Barrier, 0),
                (CollOp::Bcast, 1),
                (CollOp::Reduce, 1),
                (CollOp::Allreduce, 1)
            ]
        );
        let p = w("resilient --comms log,plain,hier --ops bcast").res();
        assert_eq!(p.comms, [ResComm::Log, ResComm::Plain, ResComm::Hier]);
        assert_eq!(p.cases, [(CollOp::Bcast, 1)]);
        let r = w("repair --check log --iters 40 --warmup 5").repair();
        assert_eq!(
            r,
            RepairParams {
                check: ResCheck::Log,
                iters: 40,
                warmup: 5
            }
        );
        let d = w("repair").repair();
        assert_eq!(d.check, ResCheck::Agree);
        assert_eq!(d.iters, REPAIR_WARMUP + 300 + REPAIR_AFTER);
        for c in ResComm::ALL {
            assert_eq!(ResComm::from_name(c.name()), Some(c));
        }
        for c in ResCheck::ALL {
            assert_eq!(ResCheck::from_name(c.name()), Some(c));
        }
        assert_eq!(
            ResComm::Log.check().map(ResCheck::to_check),
            Some(pertinax_resilient::Check::Log)
        );
        assert_eq!(ResComm::Plain.check(), None);
        assert_eq!(ResComm::Hier.check(), Some(ResCheck::Agree));
    }

    #[test]
    fn series_shrink_above_4_kib() {
        assert_eq!(reps_for(1, 2000), 2000);
        assert_eq!(reps_for(4096, 2000), 2000);
        assert_eq!(reps_for(32 << 10, 2000), 250);
        assert_eq!(reps_for(1 << 20, 2000), 20);
        assert_eq!(reps_for(1 << 20, 10), 10);
    }
}
