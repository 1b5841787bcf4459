//! The command line of `pertinax`: one struct per subcommand, so that later
//! options (spares, fault injection, resilient mode) each land in one place.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use pertinax_launch::{
    Heartbeat, HeartbeatMode, JobSpec, Kill, ParentFailure, RandomFaults, Resilient,
    ResilientCheck, ResilientMode, ResilientPolicy,
};

/// pertinax: a fault-tolerant message-passing runtime.
#[derive(Debug, Parser)]
#[command(name = "pertinax", version, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start N ranks of a program on this machine and supervise them.
    ///
    /// The exit status is 0 when every rank (and every process started for
    /// the job) exited with code 0 or died of an injected fault; otherwise
    /// the first failure's code (128 + signal for a process killed by a
    /// signal, 124 for a timeout). With --resilient, processes that die
    /// (killed, crashed, panicked) are listed but do not fail the job, since
    /// the survivors continue: the status comes from the processes that
    /// ended on their own, unless every rank died.
    #[command(override_usage = "pertinax run [OPTIONS] -n <N> [--] <PROGRAM> [ARGS]...")]
    Run(RunArgs),
}

/// Options of `pertinax run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Number of ranks to start.
    #[arg(short = 'n', long = "np", value_name = "N", value_parser = parse_ranks, allow_negative_numbers = true)]
    pub ranks: usize,

    /// Prefix every line of output with "[RANK] " (a rank), "[slot S] "
    /// (a spare or spawned process), or "[R (replacement, slot S)] " (a
    /// process that took over rank R by replace_failed).
    #[arg(long)]
    pub tag_output: bool,

    /// Terminate the job when it runs longer than this (SIGTERM, then
    /// SIGKILL one second later); the exit status is then 124.
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,

    /// Bytes of each shared-memory ring between two processes (default, by
    /// the number of ranks: 256 KiB up to 8, 64 KiB up to 16, 32 KiB up to
    /// 64, 16 KiB above).
    #[arg(long, value_name = "BYTES", value_parser = parse_ring_bytes)]
    pub ring_bytes: Option<usize>,

    /// Set an environment variable in every process (repeatable).
    #[arg(short = 'x', long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
    pub env: Vec<(OsString, OsString)>,

    /// Start K idle spare processes of the program with the ranks; spawn
    /// requests take them before starting new processes.
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = parse_slots, allow_negative_numbers = true)]
    pub spares: usize,

    /// Slots reserved for processes started by spawn requests (default: the
    /// number of ranks, fewer if the job would pass 4096 slots).
    #[arg(long, value_name = "M", value_parser = parse_slots, allow_negative_numbers = true)]
    pub max_spawn: Option<usize>,

    /// When a process that made spawn requests fails: leave what it spawned
    /// running (continue), or kill it (end).
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = OnParentFailure::Continue)]
    pub on_parent_failure: OnParentFailure,

    /// Heartbeat period: every process beats this often and one silent for
    /// the heartbeat timeout is killed (default: off).
    #[arg(long, value_name = "MS", value_parser = parse_ms)]
    pub heartbeat: Option<u64>,

    /// Silence after which a process is killed (default: 10 heartbeat
    /// periods; must be longer than one).
    #[arg(long, value_name = "MS", value_parser = parse_ms, requires = "heartbeat")]
    pub heartbeat_timeout: Option<u64>,

    /// Who beats: a runtime thread (catches stopped and deadlocked
    /// processes), or library calls (also catches a process stuck outside
    /// the library) [default: thread].
    #[arg(long, value_enum, value_name = "MODE", requires = "heartbeat")]
    pub heartbeat_mode: Option<Mode>,

    /// Inject a fault (repeatable): RANK@TIME[:SIGNAL] signals the rank
    /// TIME (e.g. 250ms, 1.5s) after every rank passed the start-up fence;
    /// RANK@NAME#K[:SIGNAL] makes the rank die at the K-th hit of its fault
    /// point NAME (* = any point). SIGNAL: kill (default), segv, stop (needs
    /// --heartbeat: only a silent heartbeat reveals a stopped process), or
    /// panic (fault points only). A kill strikes the process started as
    /// RANK only, never one that replaces it later (replace_failed).
    #[arg(long = "kill", value_name = "SPEC", value_parser = parse_kill)]
    pub kills: Vec<Kill>,

    /// Draw a random fault schedule from this seed: victims among ranks
    /// 1..N-1 (rank 0 is spared to report), each killed at a random hit of
    /// any fault point.
    #[arg(long, value_name = "SEED")]
    pub fault_seed: Option<u64>,

    /// Number of distinct victims of the seeded schedule [default: 1].
    #[arg(long, value_name = "C", value_parser = parse_count, requires = "fault_seed")]
    pub fault_count: Option<usize>,

    /// Hits of the seeded schedule are drawn from 1..=H [default: 20].
    #[arg(long, value_name = "H", value_parser = parse_max_hit, requires = "fault_seed")]
    pub fault_max_hit: Option<u64>,

    /// Resilient communicators: programs continue with the survivors when
    /// ranks die (sets PERTINAX_RESILIENT in every process); MODE: flat
    /// (default) or hier. Deaths then do not fail the job while a rank
    /// survives.
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1, require_equals = true, default_missing_value = "flat")]
    pub resilient: Option<ResilientArg>,

    /// Largest size of the local groups of --resilient=hier (at least 2).
    #[arg(long, value_name = "K", value_parser = parse_group_size, requires = "resilient", allow_negative_numbers = true)]
    pub resilient_k: Option<usize>,

    /// Communicator size from which --resilient=hier builds its hierarchy
    /// (at least 1).
    #[arg(long, value_name = "S", value_parser = parse_threshold, requires = "resilient", allow_negative_numbers = true)]
    pub resilient_threshold: Option<usize>,

    /// What a resilient operation does when the rank it depends on has
    /// died: comma-separated KIND=ACTION, KIND one of bcast, reduce,
    /// gather, scatter, send, recv; ACTION ignore or stop (e.g.
    /// bcast=ignore,recv=stop).
    #[arg(long, value_name = "SPEC", value_parser = parse_policy, requires = "resilient")]
    pub resilient_policy: Option<ResilientPolicy>,

    /// How resilient collectives make sure no rank is left behind: agree
    /// (default: an agreement after every collective, as Legio does), or
    /// log (a replay log instead, for collective-only programs).
    #[arg(long, value_enum, value_name = "HOW", requires = "resilient")]
    pub resilient_check: Option<CheckArg>,

    /// The program to run, then its arguments (after "--").
    #[arg(value_name = "PROGRAM", required = true, num_args = 1.., trailing_var_arg = true)]
    pub command: Vec<OsString>,
}

/// `--on-parent-failure`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnParentFailure {
    /// Leave them running.
    Continue,
    /// Kill them.
    End,
}

/// `--resilient[=MODE]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ResilientArg {
    /// Every operation involves the whole communicator.
    Flat,
    /// Local groups of at most K ranks, joined by their leaders.
    Hier,
}

/// `--resilient-check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckArg {
    /// No agreement after collectives: survivors replay what laggards
    /// missed from a log (collective-only programs).
    Log,
    /// An agreement after every collective (the default).
    Agree,
}

/// `--heartbeat-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// A runtime thread beats.
    Thread,
    /// Library calls beat.
    Progress,
}

impl RunArgs {
    /// The job these options describe.
    pub fn to_spec(&self) -> JobSpec {
        let (program, args) = match self.command.split_first() {
            Some((p, a)) => (PathBuf::from(p), a.to_vec()),
            None => (PathBuf::new(), Vec::new()),
        };
        JobSpec {
            ranks: self.ranks,
            program,
            args,
            tag_output: self.tag_output,
            timeout: self.timeout,
            ring_bytes: self.ring_bytes,
            env: self.env.clone(),
            spares: self.spares,
            max_spawn: self.max_spawn,
            on_parent_failure: match self.on_parent_failure {
                OnParentFailure::Continue => ParentFailure::Continue,
                OnParentFailure::End => ParentFailure::End,
            },
            heartbeat: self.heartbeat.map(|ms| {
                let mode = match self.heartbeat_mode {
                    Some(Mode::Progress) => HeartbeatMode::Progress,
                    Some(Mode::Thread) | None => HeartbeatMode::Thread,
                };
                let mut hb = Heartbeat::new(Duration::from_millis(ms), mode);
                if let Some(t) = self.heartbeat_timeout {
                    hb.timeout = Duration::from_millis(t);
                }
                hb
            }),
            kills: self.kills.clone(),
            random_faults: self.fault_seed.map(|seed| RandomFaults {
                seed,
                count: self.fault_count.unwrap_or(1),
                max_hit: self.fault_max_hit.unwrap_or(20),
            }),
            resilient: self.resilient.map(|mode| Resilient {
                mode: match mode {
                    ResilientArg::Flat => ResilientMode::Flat,
                    ResilientArg::Hier => ResilientMode::Hier,
                },
                k: self.resilient_k,
                threshold: self.resilient_threshold,
                policy: self.resilient_policy.clone(),
                check: self.resilient_check.map(|c| match c {
                    CheckArg::Log => ResilientCheck::Log,
                    CheckArg::Agree => ResilientCheck::Agree,
                }),
            }),
        }
    }
}

fn parse_ranks(s: &str) -> Result<usize, String> {
    let n: i64 = s.parse().map_err(|_| "not a whole number".to_string())?;
    if n < 1 {
        return Err("the number of ranks must be at least 1".into());
    }
    usize::try_from(n).map_err(|_| "too large".into())
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| "not a number of seconds".to_string())?;
    if secs.is_nan() || secs <= 0.0 || !secs.is_finite() {
        return Err("must be a positive number of seconds".into());
    }
    Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())
}

fn parse_ring_bytes(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|_| "not a number of bytes".to_string())?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    Ok(n)
}

fn parse_slots(s: &str) -> Result<usize, String> {
    s.parse()
        .map_err(|_| "must be a whole number of processes, 0 or more".into())
}

fn parse_ms(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("must be at least 1 millisecond".into()),
        Ok(ms) => Ok(ms),
        Err(_) => Err("not a whole number of milliseconds".into()),
    }
}

fn parse_kill(s: &str) -> Result<Kill, String> {
    s.parse()
        .map_err(|e: pertinax_launch::KillParseError| e.to_string())
}

fn parse_count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a whole number".into()),
    }
}

fn parse_max_hit(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("must be at least 1 (hits count from 1)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a whole number".into()),
    }
}

fn parse_group_size(s: &str) -> Result<usize, String> {
    let k: i64 = s.parse().map_err(|_| "not a whole number".to_string())?;
    if k < 2 {
        return Err("a local group needs at least 2 ranks".into());
    }
    usize::try_from(k).map_err(|_| "too large".into())
}

fn parse_threshold(s: &str) -> Result<usize, String> {
    let n: i64 = s.parse().map_err(|_| "not a whole number".to_string())?;
    if n < 1 {
        return Err("must be at least 1 (a communicator size)".into());
    }
    usize::try_from(n).map_err(|_| "too large".into())
}

fn parse_policy(s: &str) -> Result<ResilientPolicy, String> {
    s.parse()
        .map_err(|e: pertinax_launch::PolicyParseError| e.to_string())
}

fn parse_env(s: &str) -> Result<(OsString, OsString), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.into(), v.into())),
        _ => Err("expected KEY=VALUE".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<RunArgs, clap::Error> {
        let cli = Cli::try_parse_from(["pertinax", "run"].iter().chain(args))?;
        let Command::Run(run) = cli.command;
        Ok(run)
    }

    #[test]
    fn full_command_line() {
        let r = parse(&[
            "-n",
            "4",
            "--tag-output",
            "--timeout",
            "1.5",
            "--ring-bytes",
            "8192",
            "-x",
            "A=1",
            "--env",
            "B=x=y",
            "--",
            "prog",
            "--flag",
            "arg",
        ])
        .unwrap();
        let spec = r.to_spec();
        assert_eq!(spec.ranks, 4);
        assert!(spec.tag_output);
        assert_eq!(spec.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(spec.ring_bytes, Some(8192));
        assert_eq!(
            spec.env,
            vec![("A".into(), "1".into()), ("B".into(), "x=y".into())]
        );
        assert_eq!(spec.program, PathBuf::from("prog"));
        assert_eq!(
            spec.args,
            vec![OsString::from("--flag"), OsString::from("arg")]
        );
    }

    #[test]
    fn program_without_double_dash_keeps_its_flags() {
        let r = parse(&["--np", "2", "prog", "-n", "7"]).unwrap();
        assert_eq!(r.ranks, 2);
        assert_eq!(
            r.command,
            vec![OsString::from("prog"), "-n".into(), "7".into()]
        );
    }

    #[test]
    fn bad_command_lines_are_rejected() {
        assert!(parse(&["-n", "2"]).is_err(), "missing program");
        assert!(parse(&["-n", "0", "--", "true"]).is_err());
        assert!(parse(&["-n", "-3", "--", "true"]).is_err());
        assert!(parse(&["-n", "two", "--", "true"]).is_err());
        assert!(parse(&["--bogus", "-n", "2", "--", "true"]).is_err());
        assert!(parse(&["-n", "2", "--timeout", "0", "--", "true"]).is_err());
        assert!(parse(&["-n", "2", "--timeout", "nan", "--", "true"]).is_err());
        assert!(parse(&["-n", "2", "-x", "NOEQUALS", "--", "true"]).is_err());
        assert!(parse(&["-n", "2", "-x", "=v", "--", "true"]).is_err());
    }

    #[test]
    fn defaults_of_the_fault_tolerance_options() {
        let spec = parse(&["-n", "3", "--", "prog"]).unwrap().to_spec();
        assert_eq!(spec.spares, 0);
        assert_eq!(spec.max_spawn, None, "the launcher makes it the rank count");
        assert_eq!(spec.on_parent_failure, ParentFailure::Continue);
        assert_eq!(spec.heartbeat, None);
        assert!(spec.kills.is_empty());
        assert_eq!(spec.random_faults, None);
        assert_eq!(spec.resilient, None);
    }

    #[test]
    fn fault_tolerance_options() {
        let spec = parse(&[
            "-n",
            "4",
            "--spares",
            "2",
            "--max-spawn",
            "0",
            "--on-parent-failure",
            "end",
            "--heartbeat",
            "50",
            "--heartbeat-mode",
            "progress",
            "--kill",
            "1@250ms",
            "--kill",
            "2@send#3:segv",
            "--fault-seed",
            "42",
            "--fault-max-hit",
            "5",
            "--",
            "prog",
        ])
        .unwrap()
        .to_spec();
        assert_eq!((spec.spares, spec.max_spawn), (2, Some(0)));
        assert_eq!(spec.on_parent_failure, ParentFailure::End);
        let ms = Duration::from_millis;
        assert_eq!(
            spec.heartbeat,
            Some(Heartbeat {
                period: ms(50),
                timeout: ms(500),
                mode: HeartbeatMode::Progress
            })
        );
        assert_eq!(
            spec.kills,
            vec![
                "1@250ms".parse::<Kill>().unwrap(),
                "2@send#3:segv".parse().unwrap()
            ]
        );
        assert_eq!(
            spec.random_faults,
            Some(RandomFaults {
                seed: 42,
                count: 1,
                max_hit: 5
            })
        );
        let spec = parse(&[
            "-n",
            "2",
            "--heartbeat",
            "20",
            "--heartbeat-timeout",
            "300",
            "--",
            "prog",
        ])
        .unwrap()
        .to_spec();
        assert_eq!(
            spec.heartbeat.map(|h| (h.timeout, h.mode)),
            Some((ms(300), HeartbeatMode::Thread))
        );
    }

    #[test]
    fn malformed_fault_tolerance_options_are_rejected() {
        let bad = |opts: &[&str]| {
            let mut args = vec!["-n", "2"];
            args.extend_from_slice(opts);
            args.extend(["--", "prog"]);
            parse(&args).is_err()
        };
        assert!(bad(&["--spares", "-1"]));
        assert!(bad(&["--spares", "many"]));
        assert!(bad(&["--max-spawn", "x"]));
        assert!(bad(&["--on-parent-failure", "panic"]));
        assert!(bad(&["--heartbeat", "0"]));
        assert!(bad(&["--heartbeat", "1.5"]));
        assert!(bad(&["--heartbeat-timeout", "100"]), "needs --heartbeat");
        assert!(bad(&["--heartbeat-mode", "thread"]), "needs --heartbeat");
        assert!(bad(&["--heartbeat", "10", "--heartbeat-mode", "busy"]));
        assert!(bad(&["--kill", "1"]));
        assert!(bad(&["--kill", "x@1s"]));
        assert!(bad(&["--kill", "1@1"]));
        assert!(bad(&["--kill", "1@1s:term"]));
        assert!(bad(&["--kill", "1@1s:panic"]));
        assert!(bad(&["--kill", "1@send#0"]));
        assert!(bad(&["--fault-count", "2"]), "needs --fault-seed");
        assert!(bad(&["--fault-seed", "1", "--fault-count", "0"]));
        assert!(bad(&["--fault-seed", "1", "--fault-max-hit", "0"]));
        assert!(bad(&["--fault-seed", "-1"]));
    }

    /// A stop without heartbeats parses (clap does not see the pair) and
    /// is refused by the launcher before anything starts, as a usage error;
    /// with heartbeats the launcher goes on (to the missing program here).
    #[test]
    fn a_stop_needs_heartbeats() {
        let launch = |opts: &[&str]| {
            let mut args = vec!["-n", "2"];
            args.extend_from_slice(opts);
            args.extend(["--", "./no-such-program-pertinax"]);
            pertinax_launch::run(&parse(&args).unwrap().to_spec()).unwrap_err()
        };
        for kill in ["1@1s:stop", "1@step#2:stop"] {
            let e = launch(&["--kill", kill]);
            assert!(e.is_usage(), "{e}");
            assert!(
                e.to_string()
                    .contains("a stopped process is only detected by heartbeats"),
                "{e}"
            );
            let e = launch(&["--heartbeat", "50", "--kill", kill]);
            assert!(
                e.to_string()
                    .starts_with("cannot execute './no-such-program-pertinax'"),
                "{e}"
            );
        }
        let e = launch(&["--kill", "1@1s:kill"]);
        assert!(e.to_string().starts_with("cannot execute"), "{e}");
    }

    #[test]
    fn resilient_options() {
        let resilient = |opts: &[&str]| {
            let mut args = vec!["-n", "4"];
            args.extend_from_slice(opts);
            args.extend(["--", "prog"]);
            parse(&args).unwrap().to_spec().resilient
        };
        assert_eq!(
            resilient(&["--resilient"]),
            Some(Resilient::new(ResilientMode::Flat))
        );
        assert_eq!(
            resilient(&["--resilient=flat"]),
            Some(Resilient::new(ResilientMode::Flat))
        );
        assert_eq!(
            resilient(&["--resilient=hier"]),
            Some(Resilient::new(ResilientMode::Hier))
        );
        assert_eq!(
            resilient(&[
                "--resilient=hier",
                "--resilient-k",
                "2",
                "--resilient-threshold",
                "1",
                "--resilient-policy",
                "bcast=ignore, recv=stop",
                "--resilient-check",
                "agree",
            ]),
            Some(Resilient {
                mode: ResilientMode::Hier,
                k: Some(2),
                threshold: Some(1),
                policy: Some("bcast=ignore,recv=stop".parse().unwrap()),
                check: Some(ResilientCheck::Agree),
            })
        );
        let r = resilient(&["--resilient", "--resilient-check", "log"]).unwrap();
        assert_eq!(r.check, Some(ResilientCheck::Log));
        // Without a value, `--resilient` does not take the program as its
        // mode.
        let r = parse(&["-n", "2", "--resilient", "hier"]).unwrap();
        assert_eq!(r.resilient, Some(ResilientArg::Flat));
        assert_eq!(r.command, vec![OsString::from("hier")]);
    }

    #[test]
    fn malformed_resilient_options_are_rejected() {
        let err = |opts: &[&str]| {
            let mut args = vec!["-n", "2"];
            args.extend_from_slice(opts);
            args.extend(["--", "prog"]);
            match parse(&args) {
                Ok(r) => panic!("{opts:?} accepted: {r:?}"),
                Err(e) => e.to_string(),
            }
        };
        for opt in [
            &["--resilient-k", "4"][..],
            &["--resilient-threshold", "8"],
            &["--resilient-policy", "bcast=stop"],
            &["--resilient-check", "agree"],
        ] {
            let e = err(opt);
            assert!(
                e.contains("--resilient[=<MODE>]"),
                "{opt:?} needs --resilient: {e}"
            );
        }
        assert!(err(&["--resilient=ring"]).contains("invalid value 'ring'"));
        assert!(err(&["--resilient="]).contains("a value is required"));
        let e = err(&["--resilient", "--resilient-k", "1"]);
        assert!(e.contains("a local group needs at least 2 ranks"), "{e}");
        assert!(err(&["--resilient", "--resilient-k", "0"]).contains("at least 2"));
        assert!(err(&["--resilient", "--resilient-k", "-3"]).contains("at least 2"));
        assert!(err(&["--resilient", "--resilient-threshold", "-1"]).contains("at least 1"));
        assert!(err(&["--resilient", "--resilient-k", "two"]).contains("not a whole number"));
        let e = err(&["--resilient", "--resilient-threshold", "0"]);
        assert!(e.contains("must be at least 1"), "{e}");
        let e = err(&[
            "--resilient",
            "--resilient-policy",
            "bcast=stop,alltoall=ignore",
        ]);
        assert!(e.contains("unknown operation kind 'alltoall'"), "{e}");
        let e = err(&["--resilient", "--resilient-policy", "recv=retry"]);
        assert!(
            e.contains("unknown action 'retry' for recv (expected ignore or stop)"),
            "{e}"
        );
        let e = err(&["--resilient", "--resilient-policy", "bcast"]);
        assert!(e.contains("'bcast' is not KIND=ACTION"), "{e}");
        let e = err(&["--resilient", "--resilient-check", "vote"]);
        assert!(e.contains("invalid value 'vote'"), "{e}");
    }
}
