//! The scaffolding the rank programs share: `PROGRAM SCENARIO [ARGS]` on
//! the command line, setup steps that end the rank with a `FAIL` line, the
//! scenario dispatch ([`scenarios!`](crate::scenarios)), and one outcome
//! line per rank that the tests read:
//!
//! ```text
//! OK SCENARIO rank=R [EXTRA]      the scenario's checks passed
//! LEFT SCENARIO rank=R: MESSAGE   the rank left on purpose (an early return)
//! FAIL SCENARIO rank=R: MESSAGE   a check failed (the rank exits 1)
//! ```
//!
//! A rank program's `main` is then:
//!
//! ```text
//! fn main() {
//!     let sc = Scenario::from_args();
//!     let u = setup("init", pertinax::init());
//!     let w = u.world();
//!     let (scenario, rest) = (sc.name(), sc.args());
//!     let r = scenarios!(match scenario {
//!         "ring" => ring(&w, rest),
//!         "fanin" => fanin(&w, rest),
//!     });
//!     report(scenario, w.rank().index(), r).or_exit();
//!     drop(u);
//! }
//! ```
//!
//! What happens after the outcome line (finalize, a `finish` call, the
//! exit status of a rank that left) stays the program's, because the tests
//! check it.

use std::fmt::Display;

/// The prefix of a scenario's error that means the rank left on purpose
/// (an early return with `?`): [`report`] prints a `LEFT` line for it.
pub const LEFT: &str = "left: ";

/// A rank program's command line: `PROGRAM SCENARIO [ARGS]`.
#[derive(Debug, Clone)]
pub struct Scenario {
    name: String,
    args: Vec<String>,
}

impl Scenario {
    /// This process's command line; without a scenario, prints the usage
    /// and exits with status 2.
    pub fn from_args() -> Scenario {
        let mut argv = std::env::args();
        let program = argv.next().unwrap_or_default();
        let rest: Vec<String> = argv.collect();
        match rest.split_first() {
            Some((name, args)) => Scenario {
                name: name.clone(),
                args: args.to_vec(),
            },
            None => {
                let base = program.rsplit('/').next().unwrap_or_default();
                eprintln!("usage: {base} SCENARIO [ARGS]");
                std::process::exit(2)
            }
        }
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The scenario's arguments.
    pub fn args(&self) -> &[String] {
        &self.args
    }
}

/// The value of a setup step (init, the world, finalize); if it failed,
/// prints `FAIL {what}: {error}` and exits with status 1.
pub fn setup<T, E: Display>(what: &str, r: Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        Err(x) => {
            println!("FAIL {what}: {x}");
            std::process::exit(1)
        }
    }
}

/// Dispatches on a scenario's name: `scenarios!(match NAME { ARMS })`
/// is the `match` with one more arm, an unknown name, whose value is
/// `Err("unknown scenario ...")` (so the arms' type is a `Result<_,
/// String>`). `NAME` is a variable (a `&str`); the arms are ordinary match
/// arms, the last one ending with a comma or a block.
#[macro_export]
macro_rules! scenarios {
    (match $name:ident { $($arms:tt)* }) => {
        match $name {
            $($arms)*
            other => ::std::result::Result::Err(::std::format!("unknown scenario {other:?}")),
        }
    };
}

/// What [`report`] printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Reported {
    /// `OK`.
    Ok,
    /// `LEFT` (the error began with [`LEFT`]).
    Left,
    /// `FAIL`.
    Failed,
}

impl Reported {
    /// Exits with status 1, at once (without finalizing), if the scenario
    /// failed.
    pub fn or_exit(self) {
        if self == Reported::Failed {
            std::process::exit(1);
        }
    }
}

/// Prints the outcome line of scenario `name` at `rank`.
pub fn report(name: &str, rank: usize, r: Result<String, String>) -> Reported {
    match r {
        Ok(extra) if extra.is_empty() => {
            println!("OK {name} rank={rank}");
            Reported::Ok
        }
        Ok(extra) => {
            println!("OK {name} rank={rank} {extra}");
            Reported::Ok
        }
        Err(m) => match m.strip_prefix(LEFT) {
            Some(m) => {
                println!("LEFT {name} rank={rank}: {m}");
                Reported::Left
            }
            None => {
                println!("FAIL {name} rank={rank}: {m}");
                Reported::Failed
            }
        },
    }
}

#[cfg(test)]
mod tests {
    fn dispatch(scenario: &str) -> Result<String, String> {
        crate::scenarios!(match scenario {
            "a" => Ok("first".into()),
            "b" => {
                let x = 2;
                Ok(format!("second {x}"))
            }
        })
    }

    #[test]
    fn scenarios_dispatch_and_refuse_unknown_names() {
        assert_eq!(dispatch("a"), Ok("first".into()));
        assert_eq!(dispatch("b"), Ok("second 2".into()));
        assert_eq!(dispatch("c"), Err("unknown scenario \"c\"".into()));
    }
}
