//! The command line of `pertinax`: one struct per subcommand, so that later
//! options (spares, fault injection, resilient mode) each land in one place.
//!
//! `pertinax run` takes the spellings of Open MPI's and MPICH's tutorials:
//! `-np 4` ([`normalize`] rewrites it to `--np 4` before clap, which would
//! read `-n p`), `--oversubscribe` and `--allow-run-as-root` (accepted; they
//! change nothing), `-x NAME` (exports the launcher's own variable), and
//! Open MPI's colon syntax for several programs in one job (MIMD):
//! `pertinax run -n 2 a : -n 2 b` ([`RunArgs::to_spec`]).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use pertinax_launch::{
    App, Binding, Heartbeat, HeartbeatMode, JobSpec, Kill, OutputFiles, ParentFailure,
    RandomFaults, Resilient, ResilientCheck, ResilientMode, ResilientPolicy, StdinTo,
};

/// Help headings of `pertinax run`, in the README's order.
const JOB: &str = "Job";
const IO: &str = "Input/output";
const PLACEMENT: &str = "Placement";
const SPAWN: &str = "Spawning and spares";
const FAILURES: &str = "Failures and recovery";
const FAULTS: &str = "Fault injection";
const RESILIENT: &str = "Resilient communicators";
const COMPAT: &str = "Accepted for compatibility with mpirun (no effect)";

/// pertinax: a fault-tolerant message-passing runtime.
#[derive(Debug, Parser)]
#[command(name = "pertinax", version, propagate_version = true, term_width = 100)]
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
    /// signal, 124 for a timeout). A rank that exits with a non-zero code
    /// ends the job (the others get SIGTERM), unless --keep-going,
    /// --resilient, --kill or --fault-seed; a rank killed by a signal does
    /// not: the survivors go on. With --resilient, processes that die
    /// (killed, crashed, panicked) are listed but do not fail the job, since
    /// the survivors continue: the status comes from the processes that
    /// ended on their own, unless every rank died.
    #[command(
        override_usage = "pertinax run [OPTIONS] -n <N> [--] <PROGRAM> [ARGS]... \
                          [: -n <N> [-x <VAR>]... <PROGRAM> [ARGS]...]..."
    )]
    Run(Box<RunArgs>),
    /// Print a shell completion script for pertinax on stdout.
    ///
    /// For example `pertinax completions bash > ~/.local/share/bash-completion/completions/pertinax`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print pertinax's manual page (roff) on stdout.
    ///
    /// For example `pertinax man > pertinax.1 && man ./pertinax.1`; `pertinax man
    /// run` prints the page of `pertinax run` (pertinax-run.1).
    Man {
        /// The subcommand whose page to print (default: the main page).
        #[arg(value_name = "SUBCOMMAND")]
        subcommand: Option<String>,
    },
}

/// Options of `pertinax run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Number of ranks to start (-np N works too).
    #[arg(short = 'n', long = "np", value_name = "N", value_parser = parse_ranks, allow_negative_numbers = true, help_heading = JOB)]
    pub ranks: usize,

    /// Set an environment variable in every process: NAME=VALUE, or NAME
    /// alone to pass the launcher's own value (repeatable).
    #[arg(short = 'x', long = "env", value_name = "VAR", value_parser = parse_env, help_heading = JOB)]
    pub env: Vec<(OsString, OsString)>,

    /// Working directory of every process (default: the launcher's).
    #[arg(long, value_name = "DIR", help_heading = JOB)]
    pub wdir: Option<PathBuf>,

    /// Terminate the job when it runs longer than this: 90, 1.5, 90s, 5m,
    /// 1h30m, 250ms (a bare number is seconds). SIGTERM, then SIGKILL one
    /// second later; the exit status is then 124.
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, help_heading = JOB)]
    pub timeout: Option<Duration>,

    /// Bytes of each shared-memory ring between two processes (default, by
    /// the number of ranks: 256 KiB up to 8, 64 KiB up to 16, 32 KiB up to
    /// 64, 16 KiB above).
    #[arg(long, value_name = "BYTES", value_parser = parse_ring_bytes, help_heading = JOB)]
    pub ring_bytes: Option<usize>,

    /// Who reads the launcher's standard input: rank 0 (the process
    /// started as rank 0; one that replaces it reads /dev/null) or none.
    /// The others always read /dev/null.
    #[arg(long, value_enum, value_name = "WHO", default_value_t = StdinArg::Rank0, help_heading = IO)]
    pub stdin: StdinArg,

    /// Prefix every line of output with "[RANK] " (a rank), "[slot S] "
    /// (a spare or spawned process), or "[R (replacement, slot S)] " (a
    /// process that took over rank R by replace_failed).
    #[arg(long, help_heading = IO)]
    pub tag_output: bool,

    /// Prefix every line of output with the UTC time the launcher read it
    /// ("[2026-11-27 02:15:02.153] ").
    #[arg(long, help_heading = IO)]
    pub timestamp_output: bool,

    /// Also write each process's output to files, in Open MPI's layout:
    /// DIR/1/rank.N/stdout and DIR/1/rank.N/stderr (DIR/1/slot.S/... for a
    /// spare or spawned process). DIR:nocopy writes only the files.
    #[arg(long, value_name = "DIR", value_parser = parse_output_files, help_heading = IO)]
    pub output_filename: Option<OutputFiles>,

    /// Pin each rank to a CPU: core (rank R on the R-th CPU the launcher
    /// may use, wrapping around) or none (the default: the kernel places
    /// processes, and concurrent jobs do not pile onto the same CPUs).
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = BindArg::None, help_heading = PLACEMENT)]
    pub bind_to: BindArg,

    /// Print each rank's binding on stderr when it starts.
    #[arg(long, help_heading = PLACEMENT)]
    pub report_bindings: bool,

    /// Start K idle spare processes of the program with the ranks; spawn
    /// requests take them before starting new processes.
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = parse_slots, allow_negative_numbers = true, help_heading = SPAWN)]
    pub spares: usize,

    /// Slots reserved for processes started by spawn requests (default: the
    /// number of ranks, fewer if the job would pass 4096 slots).
    #[arg(long, value_name = "M", value_parser = parse_slots, allow_negative_numbers = true, help_heading = SPAWN)]
    pub max_spawn: Option<usize>,

    /// When a process that made spawn requests fails: leave what it spawned
    /// running (continue), or kill it (end).
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = OnParentFailure::Continue, help_heading = SPAWN)]
    pub on_parent_failure: OnParentFailure,

    /// Let the other processes run when a rank exits with a non-zero code.
    /// Without it such an exit ends the job as mpirun does (the others get
    /// SIGTERM, the status is that rank's code), except with --resilient,
    /// --kill or --fault-seed. Deaths by a signal never end the job.
    #[arg(long, help_heading = FAILURES)]
    pub keep_going: bool,

    /// Heartbeat period: every process beats this often and one silent for
    /// the heartbeat timeout is killed (default: off).
    #[arg(long, value_name = "MS", value_parser = parse_ms, help_heading = FAILURES)]
    pub heartbeat: Option<u64>,

    /// Silence after which a process is killed (default: 10 heartbeat
    /// periods; must be longer than one).
    #[arg(long, value_name = "MS", value_parser = parse_ms, requires = "heartbeat", help_heading = FAILURES)]
    pub heartbeat_timeout: Option<u64>,

    /// Who beats: a runtime thread (catches stopped and deadlocked
    /// processes), or library calls (also catches a process stuck outside
    /// the library) [default: thread].
    #[arg(long, value_enum, value_name = "MODE", requires = "heartbeat", help_heading = FAILURES)]
    pub heartbeat_mode: Option<Mode>,

    /// Inject a fault (repeatable): RANK@TIME[:SIGNAL] signals the rank
    /// TIME (e.g. 250ms, 1.5s) after every rank passed the start-up fence;
    /// RANK@NAME#K[:SIGNAL] makes the rank die at the K-th hit of its fault
    /// point NAME (* = any point). SIGNAL: kill (default), segv, stop (needs
    /// --heartbeat: only a silent heartbeat reveals a stopped process), or
    /// panic (fault points only). A kill strikes the process started as
    /// RANK only, never one that replaces it later (replace_failed).
    #[arg(long = "kill", value_name = "SPEC", value_parser = parse_kill, help_heading = FAULTS)]
    pub kills: Vec<Kill>,

    /// Draw a random fault schedule from this seed: victims among ranks
    /// 1..N-1 (rank 0 is spared to report), each killed at a random hit of
    /// any fault point.
    #[arg(long, value_name = "SEED", help_heading = FAULTS)]
    pub fault_seed: Option<u64>,

    /// Number of distinct victims of the seeded schedule [default: 1].
    #[arg(long, value_name = "C", value_parser = parse_count, requires = "fault_seed", help_heading = FAULTS)]
    pub fault_count: Option<usize>,

    /// Hits of the seeded schedule are drawn from 1..=H [default: 20].
    #[arg(long, value_name = "H", value_parser = parse_max_hit, requires = "fault_seed", help_heading = FAULTS)]
    pub fault_max_hit: Option<u64>,

    /// Resilient communicators: programs continue with the survivors when
    /// ranks die (sets PERTINAX_RESILIENT in every process); MODE: flat
    /// (default) or hier. Deaths then do not fail the job while a rank
    /// survives.
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1, require_equals = true, default_missing_value = "flat", help_heading = RESILIENT)]
    pub resilient: Option<ResilientArg>,

    /// Largest size of the local groups of --resilient=hier (at least 2).
    #[arg(long, value_name = "K", value_parser = parse_group_size, requires = "resilient", allow_negative_numbers = true, help_heading = RESILIENT)]
    pub resilient_k: Option<usize>,

    /// Communicator size from which --resilient=hier builds its hierarchy
    /// (at least 1).
    #[arg(long, value_name = "S", value_parser = parse_threshold, requires = "resilient", allow_negative_numbers = true, help_heading = RESILIENT)]
    pub resilient_threshold: Option<usize>,

    /// What a resilient operation does when the rank it depends on has
    /// died: comma-separated KIND=ACTION, KIND one of bcast, reduce,
    /// gather, scatter, send, recv; ACTION ignore or stop (e.g.
    /// bcast=ignore,recv=stop).
    #[arg(long, value_name = "SPEC", value_parser = parse_policy, requires = "resilient", help_heading = RESILIENT)]
    pub resilient_policy: Option<ResilientPolicy>,

    /// How resilient collectives make sure no rank is left behind: agree
    /// (default: an agreement after every collective, as Legio does), or
    /// log (a replay log instead, for collective-only programs).
    #[arg(long, value_enum, value_name = "HOW", requires = "resilient", help_heading = RESILIENT)]
    pub resilient_check: Option<CheckArg>,

    /// Accepted for mpirun's command lines: pertinax always allows more
    /// processes than CPUs.
    #[arg(long, help_heading = COMPAT)]
    pub oversubscribe: bool,

    /// Accepted for mpirun's command lines: pertinax runs as root without
    /// being asked.
    #[arg(long, help_heading = COMPAT)]
    pub allow_run_as_root: bool,

    /// The program to run, then its arguments (after "--"). " : -n N
    /// [-x VAR]... PROGRAM [ARGS]..." adds ranks that run another program
    /// (MIMD, numbered in order).
    #[arg(value_name = "PROGRAM", required = true, num_args = 1.., trailing_var_arg = true)]
    pub command: Vec<OsString>,
}

/// One application context after a `:` (MIMD).
#[derive(Debug, Parser)]
#[command(name = "pertinax run ... :", no_binary_name = true)]
struct AppArgs {
    /// Number of its ranks.
    #[arg(short = 'n', long = "np", value_name = "N", value_parser = parse_ranks, allow_negative_numbers = true)]
    ranks: usize,
    /// Variables of its ranks only.
    #[arg(short = 'x', long = "env", value_name = "VAR", value_parser = parse_env)]
    env: Vec<(OsString, OsString)>,
    /// Its program and arguments.
    #[arg(value_name = "PROGRAM", required = true, num_args = 1.., trailing_var_arg = true)]
    command: Vec<OsString>,
}

/// `--stdin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StdinArg {
    /// Rank 0.
    #[value(name = "0")]
    Rank0,
    /// Nobody: every process reads /dev/null.
    None,
}

/// `--bind-to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BindArg {
    /// One CPU per rank.
    Core,
    /// No binding.
    None,
}

/// The arguments of `pertinax` with mpirun's `-np` rewritten to `--np`,
/// among `pertinax run`'s own options only: the rewriting stops at `--` or
/// at the program (and starts again after a `:` that begins another
/// application context), so a program's own `-np` is passed on untouched.
/// (clap would read `-np 4` as `-n p`, then fail on `4`.)
pub fn normalize(args: Vec<OsString>) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    for a in it.by_ref() {
        let is_run = a == "run";
        out.push(a);
        if is_run {
            out.extend(rewrite_np(it.collect()));
            break;
        }
    }
    out
}

/// The tokens after `run` (or after a `:`) with `-np` rewritten among the
/// launcher's options.
fn rewrite_np(args: Vec<OsString>) -> Vec<OsString> {
    let cli = Cli::command();
    let Some(run) = cli.find_subcommand("run") else {
        return args;
    };
    // Whether an option token takes the next token as its value.
    let takes_next = |tok: &str| {
        run.get_arguments().any(|a| {
            let named = match tok.strip_prefix("--") {
                Some(long) => a.get_long() == Some(long),
                None => tok.len() == 2 && a.get_short() == tok.chars().nth(1),
            };
            named && a.get_action().takes_values() && !a.is_require_equals_set()
        })
    };
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    let mut options = true;
    while let Some(a) = it.next() {
        let tok = a.to_str().map(str::to_owned);
        match tok.as_deref() {
            Some(":") => {
                options = true;
                out.push(a);
            }
            _ if !options => out.push(a),
            Some("--") => {
                options = false;
                out.push(a);
            }
            Some("-np") => out.push("--np".into()),
            Some(t) if t.starts_with('-') && t.len() > 1 && !t.contains('=') => {
                out.push(a);
                if takes_next(t) {
                    out.extend(it.next());
                }
            }
            Some(t) if t.starts_with('-') && t.len() > 1 => out.push(a),
            // The program.
            _ => {
                options = false;
                out.push(a);
            }
        }
    }
    out
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
    ///
    /// # Errors
    /// A malformed application context after a `:` (clap's message).
    pub fn to_spec(&self) -> Result<JobSpec, clap::Error> {
        let mut contexts = self.command.split(|a| a == ":");
        let first = contexts.next().unwrap_or(&[]);
        let (program, args) = match first.split_first() {
            Some((p, a)) => (PathBuf::from(p), a.to_vec()),
            None => {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::MissingRequiredArgument,
                    "no program before ':'",
                ))
            }
        };
        let mut apps = Vec::new();
        for ctx in contexts {
            let a = AppArgs::try_parse_from(rewrite_np(ctx.to_vec()))?;
            let Some((p, args)) = a.command.split_first() else {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::MissingRequiredArgument,
                    "no program after ':'",
                ));
            };
            apps.push(App {
                ranks: a.ranks,
                program: PathBuf::from(p),
                args: args.to_vec(),
                env: a.env,
            });
        }
        let extra: usize = apps.iter().map(|a| a.ranks).sum();
        Ok(JobSpec {
            ranks: self.ranks + extra,
            apps,
            keep_going: self.keep_going,
            stdin: match self.stdin {
                StdinArg::Rank0 => StdinTo::Rank0,
                StdinArg::None => StdinTo::Nobody,
            },
            output_files: self.output_filename.clone(),
            timestamp_output: self.timestamp_output,
            wdir: self.wdir.clone(),
            bind: match self.bind_to {
                BindArg::Core => Binding::Core,
                BindArg::None => Binding::None,
            },
            report_bindings: self.report_bindings,
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
        })
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
    match pertinax_launch::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be longer than 0".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_output_files(s: &str) -> Result<OutputFiles, String> {
    let (dir, copy) = match s.rsplit_once(':') {
        Some((dir, opt)) if opt.eq_ignore_ascii_case("nocopy") => (dir, false),
        _ => (s, true),
    };
    if dir.is_empty() {
        return Err("expected a directory".into());
    }
    Ok(OutputFiles {
        dir: dir.into(),
        copy,
    })
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
        Some(_) => Err("expected NAME=VALUE or NAME".into()),
        None if s.is_empty() => Err("expected NAME=VALUE or NAME".into()),
        None => match std::env::var_os(s) {
            Some(v) => Ok((s.into(), v)),
            None => Err(format!(
                "{s} is not set in the launcher's environment (give its value: -x {s}=VALUE)"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<RunArgs, clap::Error> {
        let argv = ["pertinax", "run"].iter().chain(args).map(OsString::from);
        let cli = Cli::try_parse_from(normalize(argv.collect()))?;
        match cli.command {
            Command::Run(run) => Ok(*run),
            other => panic!("not run: {other:?}"),
        }
    }

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn np_is_rewritten_among_the_launchers_options_only() {
        let r = parse(&["-np", "4", "prog", "-np", "7"]).unwrap();
        assert_eq!(r.ranks, 4);
        assert_eq!(r.command, os(&["prog", "-np", "7"]));
        // After an option that takes a value, after --, after the program.
        let n = |v: &[&str]| normalize(os(v));
        assert_eq!(
            n(&["p", "run", "-x", "-np", "-np", "2", "--", "a", "-np"]),
            os(&["p", "run", "-x", "-np", "--np", "2", "--", "a", "-np"])
        );
        assert_eq!(
            n(&[
                "p",
                "run",
                "--timeout",
                "5m",
                "-np",
                "2",
                "a",
                ":",
                "-np",
                "1",
                "b",
                "-np"
            ]),
            os(&[
                "p",
                "run",
                "--timeout",
                "5m",
                "--np",
                "2",
                "a",
                ":",
                "--np",
                "1",
                "b",
                "-np"
            ])
        );
        // --resilient takes its value only with '=': the next token is not it.
        assert_eq!(
            n(&["p", "run", "--resilient", "-np", "2", "a"]),
            os(&["p", "run", "--resilient", "--np", "2", "a"])
        );
        assert_eq!(n(&["p", "--version"]), os(&["p", "--version"]));
        let r = parse(&["--oversubscribe", "--allow-run-as-root", "-np", "3", "prog"]).unwrap();
        assert_eq!(r.to_spec().unwrap().ranks, 3);
    }

    #[test]
    fn env_by_name_takes_the_launchers_value() {
        // PATH is set in any test environment.
        let path = std::env::var_os("PATH").unwrap();
        let r = parse(&["-n", "1", "-x", "PATH", "-x", "A=1", "prog"]).unwrap();
        assert_eq!(r.env, vec![("PATH".into(), path), ("A".into(), "1".into())]);
        let e = parse(&["-n", "1", "-x", "PERTINAX_TEST_SURELY_UNSET_42", "prog"]).unwrap_err();
        assert!(
            e.to_string().contains(
                "PERTINAX_TEST_SURELY_UNSET_42 is not set in the launcher's environment \
                 (give its value: -x PERTINAX_TEST_SURELY_UNSET_42=VALUE)"
            ),
            "{e}"
        );
    }

    #[test]
    fn timeouts_are_human_durations() {
        let t = |v: &str| parse(&["-n", "1", "--timeout", v, "prog"]).map(|r| r.timeout);
        let s = Duration::from_secs;
        assert_eq!(t("90").unwrap(), Some(s(90)));
        assert_eq!(t("1.5").unwrap(), Some(Duration::from_millis(1500)));
        assert_eq!(t("90s").unwrap(), Some(s(90)));
        assert_eq!(t("5m").unwrap(), Some(s(300)));
        assert_eq!(t("1h30m").unwrap(), Some(s(5400)));
        let e = t("5 min").unwrap_err().to_string();
        assert!(e.contains("'5 min' is not a duration"), "{e}");
        assert!(t("0s").unwrap_err().to_string().contains("longer than 0"));
    }

    #[test]
    fn io_placement_and_failure_options() {
        let spec = parse(&[
            "-n",
            "2",
            "--stdin",
            "none",
            "--timestamp-output",
            "--output-filename",
            "out:nocopy",
            "--wdir",
            "/tmp",
            "--bind-to",
            "core",
            "--report-bindings",
            "--keep-going",
            "prog",
        ])
        .unwrap()
        .to_spec()
        .unwrap();
        assert_eq!(spec.stdin, StdinTo::Nobody);
        assert!(spec.timestamp_output && spec.report_bindings && spec.keep_going);
        assert_eq!(
            spec.output_files,
            Some(OutputFiles {
                dir: "out".into(),
                copy: false
            })
        );
        assert_eq!(spec.wdir, Some(PathBuf::from("/tmp")));
        assert_eq!(spec.bind, Binding::Core);
        let spec = parse(&["-n", "2", "--output-filename", "a:b", "prog"])
            .unwrap()
            .to_spec()
            .unwrap();
        assert_eq!(spec.stdin, StdinTo::Rank0, "pertinax run's default");
        assert_eq!(spec.bind, Binding::None);
        assert!(!spec.keep_going);
        assert_eq!(
            spec.output_files.map(|o| (o.dir, o.copy)),
            Some(("a:b".into(), true))
        );
        assert!(parse(&["-n", "2", "--bind-to", "socket", "prog"]).is_err());
        assert!(parse(&["-n", "2", "--stdin", "1", "prog"]).is_err());
        assert!(parse(&["-n", "2", "--output-filename", ":nocopy", "prog"]).is_err());
    }

    #[test]
    fn mimd_contexts_number_their_ranks_in_order() {
        let spec = parse(&[
            "-n", "2", "-x", "A=1", "prog1", "a", ":", "-np", "3", "-x", "B=2", "prog2", "-n", "9",
            ":", "--np", "1", "--", "prog3",
        ])
        .unwrap()
        .to_spec()
        .unwrap();
        assert_eq!(spec.ranks, 6);
        assert_eq!(spec.program, PathBuf::from("prog1"));
        assert_eq!(spec.args, os(&["a"]));
        assert_eq!(spec.env, vec![("A".into(), "1".into())]);
        assert_eq!(
            spec.apps,
            vec![
                App {
                    ranks: 3,
                    program: "prog2".into(),
                    args: os(&["-n", "9"]),
                    env: vec![("B".into(), "2".into())],
                },
                App {
                    ranks: 1,
                    program: "prog3".into(),
                    args: vec![],
                    env: vec![],
                }
            ]
        );
        let err = |v: &[&str]| parse(v).unwrap().to_spec().unwrap_err().to_string();
        assert!(err(&["-n", "1", "a", ":", "b"]).contains("--np <N>"));
        assert!(err(&["-n", "1", "a", ":", "-n", "1"]).contains("<PROGRAM>"));
        assert!(err(&["-n", "1", "a", ":", "-n", "0", "b"]).contains("at least 1"));
        assert!(err(&["-n", "1", ":", "-n", "1", "b"]).contains("no program before ':'"));
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
        let spec = r.to_spec().unwrap();
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
        let spec = parse(&["-n", "3", "--", "prog"])
            .unwrap()
            .to_spec()
            .unwrap();
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
        .to_spec()
        .unwrap();
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
        .to_spec()
        .unwrap();
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
            pertinax_launch::run(&parse(&args).unwrap().to_spec().unwrap()).unwrap_err()
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
            parse(&args).unwrap().to_spec().unwrap().resilient
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
