//! The command line of `pertinax`: one struct per subcommand, so that later
//! options (spares, fault injection, resilient mode) each land in one place.
//!
//! `pertinax run` takes the spellings of Open MPI's and MPICH's tutorials:
//! `-np 4` ([`normalize`] rewrites it to `--np 4` before clap, which would
//! read `-n p`), `--oversubscribe` and `--allow-run-as-root` (accepted; they
//! change nothing), `-x NAME` (exports the launcher's own variable), and
//! Open MPI's colon syntax for several programs in one job (MIMD):
//! `pertinax run -n 2 a : -n 2 b` ([`RunArgs::to_spec`]).

mod np;
mod values;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use pertinax_launch::{
    App, Binding, Heartbeat, HeartbeatMode, JobSpec, Kill, OutputFiles, ParentFailure,
    RandomFaults, Resilient, ResilientCheck, ResilientMode, ResilientPolicy, StdinTo,
};

pub use np::normalize;
use np::rewrite_np;
use values::{
    parse_count, parse_env, parse_group_size, parse_hosts, parse_kill, parse_max_hit, parse_ms,
    parse_output_files, parse_policy, parse_ranks, parse_ring_bytes, parse_slots, parse_threshold,
    parse_timeout,
};

/// Help headings of `pertinax run`, in the README's order.
const JOB: &str = "Job";
const IO: &str = "Input/output";
const PLACEMENT: &str = "Placement";
const SPAWN: &str = "Spawning and spares";
const FAILURES: &str = "Failures and recovery";
const FAULTS: &str = "Fault injection";
const RESILIENT: &str = "Resilient communicators";
const C_MPI: &str = "C MPI programs (pertinax's libmpi.so.12)";
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
    /// Compile and link a C MPI program against pertinax's mpi.h and
    /// libmpi.so.12.
    ///
    /// Runs cc (PERTINAX_CC overrides) as "cc -I<include> ARGS... -L<lib>
    /// -Wl,-rpath,<lib> -lmpi" (no link options with -c, -E, -S). -show
    /// prints that command, -compile-info and -link-info its halves,
    /// --version pertinax's version, where the headers and library are,
    /// and the compiler's. PERTINAX_INCLUDE_DIR and PERTINAX_ABI_DIR
    /// override where the headers and the library are looked for (beside
    /// the pertinax executable; see docs/c-programs.md).
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Mpicc {
        /// The compiler's arguments.
        #[arg(value_name = "ARGS", trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// As mpicc, for C++: c++ (PERTINAX_CXX overrides).
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Mpicxx {
        /// The compiler's arguments.
        #[arg(value_name = "ARGS", trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
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

    /// The hosts to run on, comma-separated (mpiexec's -host, -hosts):
    /// this machine only, as localhost, 127.0.0.1, ::1 or its hostname
    /// (NAME:SLOTS accepted). Any other host is an error.
    #[arg(long = "host", visible_alias = "hosts", value_name = "HOSTS", value_parser = parse_hosts, help_heading = PLACEMENT)]
    pub hosts: Vec<String>,

    /// Error handler that MPI_COMM_WORLD and MPI_COMM_SELF of a C MPI
    /// program start with (mpiexec's -initial-errhandler): errors are fatal
    /// by default.
    #[arg(long, value_enum, value_name = "HANDLER", help_heading = C_MPI)]
    pub initial_errhandler: Option<ErrhandlerArg>,

    /// Do not put the directory of pertinax's libmpi.so.12 first on the
    /// processes' LD_LIBRARY_PATH, nor name it in MPI4PY_LIBMPI (also
    /// PERTINAX_NO_ABI_LIB=1). By default it is, so that a program built by
    /// any MPICH-ABI mpicc, and the mpi4py wheel, run on pertinax.
    #[arg(long, help_heading = C_MPI)]
    pub no_abi_lib: bool,

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

/// `--initial-errhandler`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ErrhandlerArg {
    /// MPI_ERRORS_ARE_FATAL: an error ends the job (the default).
    #[value(name = "mpi_errors_are_fatal")]
    Fatal,
    /// MPI_ERRORS_RETURN: calls return the error code.
    #[value(name = "mpi_errors_return")]
    Return,
    /// MPI_ERRORS_ABORT: an error aborts the job.
    #[value(name = "mpi_errors_abort")]
    Abort,
}

impl ErrhandlerArg {
    fn env_value(self) -> &'static str {
        match self {
            ErrhandlerArg::Fatal => "mpi_errors_are_fatal",
            ErrhandlerArg::Return => "mpi_errors_return",
            ErrhandlerArg::Abort => "mpi_errors_abort",
        }
    }
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
        // `--host` was checked by its parser (this machine only).
        let _ = &self.hosts;
        let mut env = self.env.clone();
        if let Some(h) = self.initial_errhandler {
            env.push(("PERTINAX_INITIAL_ERRHANDLER".into(), h.env_value().into()));
        }
        let opted_out = self.no_abi_lib
            || std::env::var_os("PERTINAX_NO_ABI_LIB").is_some_and(|v| !v.is_empty() && v != "0");
        if !opted_out {
            // Pertinax's libmpi.so.12 first, when there is one (a Rust
            // program does not need it).
            if let Ok(dir) = crate::abi::lib_dir() {
                let current = env
                    .iter()
                    .rev()
                    .find(|(k, _)| k == "LD_LIBRARY_PATH")
                    .map(|(_, v)| v.clone())
                    .or_else(|| std::env::var_os("LD_LIBRARY_PATH"));
                let path = crate::abi::library_path(&dir, current.as_ref());
                env.push(("LD_LIBRARY_PATH".into(), path));
                // The mpi4py wheel loads the libmpi.so.12 this names (else
                // MPICH's, beside it in a venv), unless the user chose one.
                let chosen = env.iter().any(|(k, _)| k == "MPI4PY_LIBMPI")
                    || std::env::var_os("MPI4PY_LIBMPI").is_some();
                if !chosen {
                    env.push(("MPI4PY_LIBMPI".into(), dir.join("libmpi.so.12").into()));
                }
            }
        }
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
            env,
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

#[cfg(test)]
mod tests;
