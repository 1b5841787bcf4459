//! `pertinax`: the command-line tool of the pertinax runtime.
//!
//! Today it has one subcommand, `run`, which starts N ranks of a program
//! on this machine, serves their bootstrap, forwards their output and
//! signals, and exits with the status of the first failure:
//!
//! ```text
//! pertinax run -n 4 --tag-output --timeout 60 -- ./my_solver input.dat
//! ```
//!
//! The options live in [`args`], the work in [`run`] and in the
//! `pertinax-launch` library. Bad command lines exit with status 2 and one
//! line on stderr.
#![forbid(unsafe_code)]

mod args;
mod run;

use std::io::Write;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use args::{Cli, Command};
use run::Failure;

/// Exit status of a bad command line (as clap and most tools use).
const USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let status = match &cli.command {
        Command::Run(args) => run::execute(args),
    };
    let _ = std::io::stdout().flush();
    match status {
        Ok(code) => ExitCode::from(status_byte(code)),
        Err(Failure::Usage(e)) => {
            eprintln!("pertinax: {e}");
            ExitCode::from(USAGE)
        }
        Err(Failure::Launch(e)) => {
            eprintln!("pertinax: {e:#}");
            ExitCode::FAILURE
        }
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
