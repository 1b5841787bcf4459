//! `pertinax`: the command-line tool of the pertinax runtime.
//!
//! Its main subcommand, `run`, starts N ranks of a program on this
//! machine, serves their bootstrap, forwards their input, output and
//! signals, and exits with the status of the first failure:
//!
//! ```text
//! pertinax run -np 4 --tag-output --timeout 5m -- ./my_solver input.dat
//! pertinax run -n 1 ./server : -n 3 ./worker      # MIMD, ranks 0 | 1..3
//! ```
//!
//! `pertinax completions bash|zsh|fish|elvish|powershell` prints a shell
//! completion script and `pertinax man [run]` a manual page, both
//! generated from the same clap definitions as `--help`.
//!
//! The options live in [`args`], the work in [`run`] and in the
//! `pertinax-launch` library. Bad command lines exit with status 2 and one
//! line on stderr.
#![forbid(unsafe_code)]

mod abi;
mod args;
mod mpicc;
mod run;

use std::io::Write;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use args::{Cli, Command};
use run::Failure;

/// Exit status of a bad command line (as clap and most tools use).
const USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(args::normalize(std::env::args_os().collect())) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let status = match &cli.command {
        Command::Run(args) => match args.to_spec() {
            Ok(spec) => run::execute(&spec),
            Err(e) => return usage_error(&e),
        },
        Command::Mpicc { args } => mpicc::execute(mpicc::Lang::C, args).map_err(Failure::Tool),
        Command::Mpicxx { args } => mpicc::execute(mpicc::Lang::Cxx, args).map_err(Failure::Tool),
        Command::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(*shell, &mut cmd, "pertinax", &mut std::io::stdout());
            Ok(0)
        }
        Command::Man { subcommand } => return man(subcommand.as_deref()),
    };
    let _ = std::io::stdout().flush();
    match status {
        Ok(code) => ExitCode::from(status_byte(code)),
        Err(Failure::Usage(e)) => {
            eprintln!("pertinax: {e}");
            ExitCode::from(USAGE)
        }
        Err(Failure::Tool(e)) => {
            eprintln!("pertinax: {e}");
            ExitCode::FAILURE
        }
        Err(Failure::Launch(e)) => {
            eprintln!("pertinax: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Prints the manual page of `pertinax` or of one of its subcommands.
fn man(subcommand: Option<&str>) -> ExitCode {
    let cli = Cli::command();
    let page = match subcommand {
        None => cli,
        Some(name) => match cli.find_subcommand(name) {
            // Named as its page is (pertinax-run), with the version; clap
            // takes a 'static name (the process ends right after).
            Some(sub) => sub
                .clone()
                .name(&*String::leak(format!("pertinax-{name}")))
                .version(env!("CARGO_PKG_VERSION")),
            None => {
                eprintln!("pertinax: no subcommand '{name}' (see 'pertinax --help')");
                return ExitCode::from(USAGE);
            }
        },
    };
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(page).render(&mut out) {
        eprintln!("pertinax: cannot render the manual page: {e}");
        return ExitCode::FAILURE;
    }
    match std::io::stdout().write_all(&out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// The byte a shell sees for exit status `code` (as `exit(2)` truncates it),
/// except that a non-zero status never becomes 0.
fn status_byte(code: i32) -> u8 {
    match (code & 0xff) as u8 {
        0 if code != 0 => 1,
        b => b,
    }
}

/// Prints help and version as clap does; any other parse error as one line.
fn usage_error(e: &clap::Error) -> ExitCode {
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.use_stderr() {
            ExitCode::from(USAGE)
        } else {
            ExitCode::SUCCESS
        };
    }
    eprintln!(
        "pertinax: {} (see 'pertinax run --help')",
        one_line(&e.render().to_string())
    );
    ExitCode::from(USAGE)
}

/// The first paragraph of a clap message on one line, without "error: ".
fn one_line(msg: &str) -> String {
    let first = msg.split("\n\n").next().unwrap_or(msg);
    let first = first.trim().strip_prefix("error:").unwrap_or(first);
    first.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn statuses_fit_a_byte_and_failures_stay_failures() {
        assert_eq!(super::status_byte(0), 0);
        assert_eq!(super::status_byte(137), 137);
        assert_eq!(super::status_byte(-1), 255);
        assert_eq!(super::status_byte(256), 1);
        assert_eq!(super::status_byte(300), 44);
    }

    #[test]
    fn clap_messages_become_one_line() {
        let m = "error: the following required arguments were not provided:\n  <PROGRAM>...\n\nUsage: x\n";
        assert_eq!(
            super::one_line(m),
            "the following required arguments were not provided: <PROGRAM>..."
        );
    }
}
