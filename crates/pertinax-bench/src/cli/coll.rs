//! Options of `pertinax-bench coll` and `worker coll`: the operations,
//! sizes and batch counts of a collective launch (a submodule, so that
//! `cli.rs` stays one screenful per benchmark).

use clap::{Args, ValueEnum};

use super::{parse_sizes, ranks, Sizes};

/// Options of `coll`.
#[derive(Clone, Debug, Args)]
pub struct CollArgs {
    /// Rank counts; each gets its own interleaved launches.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "2,4,8,16",
          value_parser = ranks::<2>)]
    pub ranks: Vec<usize>,
    #[command(flatten)]
    pub coll: CollOpts,
}

/// What one collective launch measures and how (shared by `coll` and
/// `worker coll`; the Open MPI program `c/coll_sweep.c` takes the same).
#[derive(Clone, Debug, Default, Args)]
pub struct CollOpts {
    /// Operations, e.g. `barrier,allreduce` (default: all six).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub ops: Vec<CollOp>,

    /// Message sizes, e.g. `8,1K,64K,1M` (default); barrier ignores them.
    /// bcast/reduce/allreduce: the whole vector; allgather: each rank's
    /// block; alltoall: the block for each destination.
    #[arg(long, value_name = "LIST", value_parser = parse_sizes)]
    pub sizes: Option<Sizes>,

    /// Upper bound on calls per timed batch (default 1000, 100 with --quick).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_reps: Option<u32>,

    /// Untimed calls before the calibration (default 20, 5 with --quick).
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,

    /// Timed batches per case (default 5, 3 with --quick).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub batches: Option<u32>,

    /// Target duration of one batch in ms; calls per batch =
    /// clamp(target / slowest rank's calibrated call time, 20, max-reps)
    /// (default 300, 50 with --quick).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u32).range(1..))]
    pub target_ms: Option<u32>,
}

/// The counts of a collective launch with the defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollCounts {
    /// Upper bound on calls per batch (the lower bound is [`MIN_COLL_REPS`]).
    pub max_reps: usize,
    /// Untimed calls before the calibration.
    pub warmup: usize,
    /// Timed batches.
    pub batches: usize,
    /// Target batch duration, ms.
    pub target_ms: u32,
}

/// Calls in the calibration step (as the anchor `coll.c`).
pub const COLL_CALIBRATION: usize = 10;

/// Lower bound on calls per batch (as the anchor `coll.c`).
pub const MIN_COLL_REPS: usize = 20;

/// The default collective sizes: 8 B, 1 KiB, 64 KiB, 1 MiB.
pub const COLL_SIZES: [usize; 4] = [8, 1 << 10, 64 << 10, 1 << 20];

impl CollOpts {
    /// The operations, or all of them.
    pub fn ops(&self) -> Vec<CollOp> {
        if self.ops.is_empty() {
            CollOp::ALL.to_vec()
        } else {
            self.ops.clone()
        }
    }

    /// The sizes, or [`COLL_SIZES`].
    pub fn sizes(&self) -> Sizes {
        self.sizes.clone().unwrap_or(Sizes(COLL_SIZES.to_vec()))
    }

    /// The counts, defaults filled in (those of the anchor `coll.c`).
    pub fn counts(&self, quick: bool) -> CollCounts {
        let (r, w, b, t) = if quick {
            (100, 5, 3, 50)
        } else {
            (1000, 20, 5, 300)
        };
        CollCounts {
            max_reps: self.max_reps.map_or(r, |x| x as usize).max(MIN_COLL_REPS),
            warmup: self.warmup.map_or(w, |x| x as usize),
            batches: self.batches.map_or(b, |x| x as usize),
            target_ms: self.target_ms.unwrap_or(t),
        }
    }

    /// The (op, bytes) cases in the order a launch measures them.
    pub fn cases(&self) -> Vec<(CollOp, usize)> {
        cases(&self.ops(), &self.sizes().0)
    }
}

impl CollCounts {
    /// Calls per batch for a calibrated time per call (slowest rank), as
    /// the anchor: clamp(target / t_call, 20, max_reps).
    pub fn reps(&self, t_call_s: f64) -> usize {
        let raw = f64::from(self.target_ms) * 1e-3 / t_call_s.max(1e-9);
        // `as` saturates: an absurdly fast call gives usize::MAX, then the clamp.
        (raw as usize).clamp(MIN_COLL_REPS, self.max_reps.max(MIN_COLL_REPS))
    }
}

/// Every op at every size, barrier once (bytes 0), in the given order.
pub fn cases(ops: &[CollOp], sizes: &[usize]) -> Vec<(CollOp, usize)> {
    let mut out = Vec::new();
    for &op in ops {
        if op == CollOp::Barrier {
            if !out.contains(&(op, 0)) {
                out.push((op, 0));
            }
            continue;
        }
        for &n in sizes {
            if !out.contains(&(op, n)) {
                out.push((op, n));
            }
        }
    }
    out
}

/// A collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum)]
pub enum CollOp {
    /// No data.
    Barrier,
    /// From rank 0, bytes.
    Bcast,
    /// Sum to rank 0: f64 elements (u8 if the size is not a multiple of 8).
    Reduce,
    /// Sum to all: f64 elements (u8 if the size is not a multiple of 8).
    Allreduce,
    /// Every rank's block to every rank, bytes.
    Allgather,
    /// One block from every rank to every rank, bytes.
    Alltoall,
}

impl CollOp {
    /// All operations in report order.
    pub const ALL: [CollOp; 6] = [
        CollOp::Barrier,
        CollOp::Bcast,
        CollOp::Reduce,
        CollOp::Allreduce,
        CollOp::Allgather,
        CollOp::Alltoall,
    ];

    /// The name in `COLL op=<name>` lines and on command lines.
    pub fn name(self) -> &'static str {
        match self {
            CollOp::Barrier => "barrier",
            CollOp::Bcast => "bcast",
            CollOp::Reduce => "reduce",
            CollOp::Allreduce => "allreduce",
            CollOp::Allgather => "allgather",
            CollOp::Alltoall => "alltoall",
        }
    }

    /// The operation named `name`.
    pub fn from_name(name: &str) -> Option<CollOp> {
        CollOp::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// A list of ops as a command-line argument: `barrier,bcast`.
pub fn ops_arg(ops: &[CollOp]) -> String {
    ops.iter().map(|o| o.name()).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{parse, Command, WorkerKind};

    #[test]
    fn coll_command_lines() {
        let Ok(Command::Coll(a)) =
            parse("coll --ranks 2,16 --ops barrier,allreduce --sizes 8,1M --json")
        else {
            panic!("not coll")
        };
        assert_eq!(a.opts.ranks, vec![2, 16]);
        assert_eq!(a.opts.coll.ops(), vec![CollOp::Barrier, CollOp::Allreduce]);
        assert_eq!(a.opts.coll.sizes().0, vec![8, 1 << 20]);
        assert_eq!(a.common.launches_or(3), 3);
        assert_eq!(a.common.timeout, None);
        assert!(a.common.json);

        let Ok(Command::Coll(d)) = parse("coll") else {
            panic!("not coll")
        };
        assert_eq!(d.opts.ranks, vec![2, 4, 8, 16]);
        assert_eq!(d.opts.coll.ops(), CollOp::ALL.to_vec());
        assert_eq!(d.opts.coll.sizes().0, COLL_SIZES.to_vec());
        assert_eq!(
            d.opts.coll.counts(false),
            CollCounts {
                max_reps: 1000,
                warmup: 20,
                batches: 5,
                target_ms: 300
            }
        );

        assert!(parse("coll --ranks 1,2").is_err());
        assert!(parse("coll --ops scan").is_err());
        assert!(parse("coll --timeout 0").is_err());

        let Ok(Command::Worker(w)) = parse("worker coll --ops bcast --sizes 64K --max-reps 5 --warmup 2 --batches 3 --target-ms 10") else {
            panic!("not worker")
        };
        assert_eq!(w.kind, WorkerKind::Coll);
        let c = w.coll();
        assert_eq!(c.cases(), vec![(CollOp::Bcast, 65536)]);
        // The lower bound of 20 calls per batch wins over --max-reps 5.
        assert_eq!(
            c.counts(false),
            CollCounts {
                max_reps: 20,
                warmup: 2,
                batches: 3,
                target_ms: 10
            }
        );

        let Ok(Command::All(a)) = parse("all --coll-ranks 2,4") else {
            panic!("not all")
        };
        assert_eq!(a.opts.coll_ranks, vec![2, 4]);
    }

    #[test]
    fn coll_cases_and_reps() {
        let ops = [
            CollOp::Bcast,
            CollOp::Barrier,
            CollOp::Bcast,
            CollOp::Barrier,
        ];
        assert_eq!(
            cases(&ops, &[8, 1024, 8]),
            vec![
                (CollOp::Bcast, 8),
                (CollOp::Bcast, 1024),
                (CollOp::Barrier, 0)
            ]
        );
        assert_eq!(
            cases(&[CollOp::Barrier], &[8, 16]),
            vec![(CollOp::Barrier, 0)]
        );
        assert_eq!(
            ops_arg(&CollOp::ALL),
            "barrier,bcast,reduce,allreduce,allgather,alltoall"
        );
        for op in CollOp::ALL {
            assert_eq!(CollOp::from_name(op.name()), Some(op));
        }
        assert_eq!(CollOp::from_name("bcast_8B"), None);

        let c = CollCounts {
            max_reps: 1000,
            warmup: 20,
            batches: 5,
            target_ms: 300,
        };
        assert_eq!(c.reps(1e-6), 1000); // 300 000 calls would fit: capped
        assert_eq!(c.reps(1e-3), 300);
        assert_eq!(c.reps(0.05), 20); // 6 would fit: at least 20
        assert_eq!(c.reps(0.0), 1000);
        assert_eq!(c.reps(f64::NAN), 1000); // as coll.c: a NaN time counts as 1 ns
    }
}
