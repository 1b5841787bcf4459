//! The command line of `pertinax`: one struct per subcommand, so that later
//! options (spares, fault injection, resilient mode) each land in one place.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use pertinax_launch::JobSpec;

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
    /// The exit status is 0 when every rank exited with code 0; otherwise
    /// the first failure's code (128 + signal for a rank killed by a
    /// signal, 124 for a timeout).
    #[command(override_usage = "pertinax run [OPTIONS] -n <N> [--] <PROGRAM> [ARGS]...")]
    Run(RunArgs),
}

/// Options of `pertinax run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Number of ranks to start.
    #[arg(short = 'n', long = "np", value_name = "N", value_parser = parse_ranks, allow_negative_numbers = true)]
    pub ranks: usize,

    /// Prefix every line of the ranks' output with "[RANK] ".
    #[arg(long)]
    pub tag_output: bool,

    /// Terminate the job when it runs longer than this (SIGTERM, then
    /// SIGKILL one second later); the exit status is then 124.
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,

    /// Bytes of each shared-memory ring between two ranks (default: 256 KiB
    /// up to 8 ranks, 64 KiB up to 16, 32 KiB up to 64, 16 KiB above).
    #[arg(long, value_name = "BYTES", value_parser = parse_ring_bytes)]
    pub ring_bytes: Option<usize>,

    /// Set an environment variable in every rank (repeatable).
    #[arg(short = 'x', long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
    pub env: Vec<(OsString, OsString)>,

    /// The program to run, then its arguments (after "--").
    #[arg(value_name = "PROGRAM", required = true, num_args = 1.., trailing_var_arg = true)]
    pub command: Vec<OsString>,
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
}
