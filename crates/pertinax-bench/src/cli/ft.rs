//! Options of `pertinax-bench ft`: rank counts, the scenarios compared
//! with Open MPI's `ft.c` ([`FtMode`]) and the parts ([`FtPart`]) (a
//! submodule, so that `cli.rs` stays one screenful per benchmark).

use clap::{Args, ValueEnum};

use super::ranks;

/// What the `ft` benchmark runs.
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct FtOpts {
    /// Rank counts (at least 3; the victim is rank N-1).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "4,8,16",
          value_parser = ranks::<3>)]
    pub ranks: Vec<usize>,

    /// Scenarios compared with Open MPI's ft.c.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_enum,
        default_value = "recv,allreduce,agreeblk,agree"
    )]
    pub modes: Vec<FtMode>,

    /// Parts to run: compare (pertinax vs ft.c), cost (ping-pong with and
    /// without failure detection), replace (replace_failed with and without
    /// a spare), spawn (spawn + merge + barrier).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_enum,
        default_value = "compare,cost,replace,spawn"
    )]
    pub parts: Vec<FtPart>,

    /// The victim's sleep between the barrier and its death, ms (ft.c -d).
    #[arg(long, value_name = "MS", default_value_t = 300)]
    pub delay_ms: u64,

    /// Calls per healthy-agree measurement (ft.c -a).
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    pub agree_reps: u64,

    /// Spawn part: repetitions of each spawn size per launch.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub spawn_reps: u64,

    /// Launches per variant of the cost part (default: 2x --launches, at
    /// least 6: the difference sought is small).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub cost_launches: Option<u32>,
}

impl FtOpts {
    /// Whether `part` is to run.
    pub fn wants(&self, part: FtPart) -> bool {
        self.parts.contains(&part)
    }
}

/// A fault-handling scenario of `worker ft`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum)]
pub enum FtMode {
    /// Survivors blocked in a receive from the victim; no revoke.
    Recv,
    /// Survivors blocked in an allreduce on the world.
    Allreduce,
    /// Survivors blocked in an agreement on the world.
    Agreeblk,
    /// As recv, then agree (unacknowledged), ack, agree again.
    Agree,
    /// Survivors blocked in an allreduce; replace_failed (pertinax only).
    Replace,
    /// spawn of 1 and N processes + merge + barrier (pertinax only).
    Spawn,
}

impl FtMode {
    /// The modes that ft.c has too.
    pub const COMPARED: [FtMode; 4] = [
        FtMode::Recv,
        FtMode::Allreduce,
        FtMode::Agreeblk,
        FtMode::Agree,
    ];

    /// The name on command lines and in `FT mode=` lines.
    pub fn name(self) -> &'static str {
        match self {
            FtMode::Recv => "recv",
            FtMode::Allreduce => "allreduce",
            FtMode::Agreeblk => "agreeblk",
            FtMode::Agree => "agree",
            FtMode::Replace => "replace",
            FtMode::Spawn => "spawn",
        }
    }
}

/// A part of the `ft` benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum)]
pub enum FtPart {
    /// pertinax vs Open MPI ft.c.
    Compare,
    /// Ping-pong with failure detection on and off.
    Cost,
    /// replace_failed with a spare and with a new process.
    Replace,
    /// spawn + merge + barrier.
    Spawn,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{parse, Command, PropagateOpts, WorkerKind};

    #[test]
    fn ft_command_lines() {
        let Ok(Command::Ft(d)) = parse("ft") else {
            panic!("not ft")
        };
        assert_eq!(d.opts, FtOpts::default());
        // What `all` runs: the defaults as the command line states them.
        let all = FtOpts::default();
        assert_eq!(all.ranks, [4, 8, 16]);
        assert_eq!(all.modes, FtMode::COMPARED);
        assert_eq!(
            all.parts,
            [
                FtPart::Compare,
                FtPart::Cost,
                FtPart::Replace,
                FtPart::Spawn
            ]
        );
        assert_eq!((all.delay_ms, all.agree_reps, all.spawn_reps), (300, 50, 2));
        assert_eq!(PropagateOpts::default().ranks, [2, 4, 8, 16]);
        assert!(d.opts.wants(FtPart::Cost));
        let Ok(Command::Ft(a)) =
            parse("ft --ranks 4,16 --modes recv,agree --parts compare --launches 3")
        else {
            panic!("not ft")
        };
        assert_eq!(a.opts.ranks, vec![4, 16]);
        assert_eq!(a.opts.modes, vec![FtMode::Recv, FtMode::Agree]);
        assert!(a.opts.wants(FtPart::Compare) && !a.opts.wants(FtPart::Spawn));
        assert_eq!(a.common.launches(), 3);
        assert!(parse("ft --ranks 2").is_err());

        let Ok(Command::Worker(w)) =
            parse("worker ft --mode agreeblk -k /tmp/k --revoke 0 --delay-ms 10")
        else {
            panic!("not worker")
        };
        assert_eq!(w.kind, WorkerKind::Ft);
        let p = w.ft(1.0);
        assert_eq!(p.mode, FtMode::Agreeblk);
        assert_eq!(p.revoke, Some(false));
        assert_eq!((p.delay_ms, p.agree_reps, p.t_main), (10, 50, 1.0));
        assert_eq!(p.kill_file.as_deref(), Some(std::path::Path::new("/tmp/k")));
        assert!(parse("worker ft --revoke 2").is_err());
        for m in FtMode::COMPARED {
            assert_eq!(FtMode::from_str(m.name(), false), Ok(m));
        }
    }
}
