//! `pertinax run`: launch the job, print the summary, give the exit status.

use std::io::Write;

use pertinax_launch::{run, JobSpec, LaunchError};

/// What ended a `pertinax run` that could not launch its job.
#[derive(Debug)]
pub enum Failure {
    /// The user asked for something impossible (exit status 2).
    Usage(LaunchError),
    /// The machine refused (exit status 1).
    Launch(anyhow::Error),
    /// `pertinax mpicc`: no headers, library or compiler (exit status 1).
    Tool(String),
}

/// Runs the job and returns its exit status; the summary of failed ranks,
/// if any, goes to stderr.
///
/// # Errors
/// When the job could not be launched.
pub fn execute(spec: &JobSpec) -> Result<i32, Failure> {
    let report = run(spec).map_err(|e| {
        if e.is_usage() {
            Failure::Usage(e)
        } else {
            Failure::Launch(anyhow::Error::new(e).context("cannot launch the job"))
        }
    })?;
    let _ = std::io::stdout().flush();
    if let Some(summary) = report.summary() {
        let _ = writeln!(std::io::stderr().lock(), "{summary}");
    }
    Ok(report.exit_code())
}
