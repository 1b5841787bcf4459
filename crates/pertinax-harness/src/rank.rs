//! The scaffolding the rank programs share: `PROGRAM SCENARIO [ARGS]` on
//! the command line, the scenario one of the program's enum of scenarios
//! ([`scenario_enum!`](crate::scenario_enum), [`Scenarios`]), setup steps
//! that end the rank with a `FAIL` line, and one outcome line per rank that
//! the tests read:
//!
//! ```text
//! OK SCENARIO rank=R [EXTRA]      the scenario's checks passed
//! LEFT SCENARIO rank=R: MESSAGE   the rank left on purpose (an early return)
//! FAIL SCENARIO rank=R: MESSAGE   a check failed (the rank exits 1)
//! ```
//!
//! A program's scenarios are one enum, each variant with its name on the
//! command line (the name the outcome lines carry):
//!
//! ```text
//! scenario_enum! {
//!     /// The scenarios of `p2p-ranks`.
//!     pub enum P2p {
//!         Ring => "ring",
//!         Fanin => "fanin",
//!     }
//! }
//! ```
//!
//! A rank program's `main` then parses its enum from the command line (no
//! scenario or an unknown one: the usage on stderr, exit status 2) and
//! dispatches with an exhaustive `match`, so the compiler checks that
//! every scenario has an arm:
//!
//! ```text
//! fn main() {
//!     let sc = Scenario::<P2p>::from_args();
//!     let u = setup("init", pertinax::init());
//!     let w = u.world();
//!     let rest = sc.args();
//!     let r = match sc.scenario() {
//!         P2p::Ring => ring(&w, rest),
//!         P2p::Fanin => fanin(&w, rest),
//!     };
//!     report(sc.name(), w.rank().index(), r).or_exit();
//!     drop(u);
//! }
//! ```
//!
//! The tests name a scenario by its variant too
//! ([`Spec::scenario`](crate::Spec::scenario)`(n, P2p::Ring, &["20"])`).
//! What happens after the outcome line (finalize, a `finish` call, the
//! exit status of a rank that left) stays the program's, because the tests
//! check it.

use std::fmt::{Debug, Display};

/// The prefix of a scenario's error that means the rank left on purpose
/// (an early return with `?`): [`report`] prints a `LEFT` line for it.
pub const LEFT: &str = "left: ";

/// The scenarios of one rank program: an enum made by
/// [`scenario_enum!`](crate::scenario_enum), one value per scenario, each
/// with its name on the command line.
pub trait Scenarios: Copy + Eq + Debug + Display + 'static {
    /// Every scenario, in the enum's order.
    const ALL: &'static [Self];

    /// The scenario's name on the command line.
    fn as_str(self) -> &'static str;

    /// The scenario named `name`.
    ///
    /// # Errors
    /// [`UnknownScenario`] if no scenario has that name.
    fn from_name(name: &str) -> Result<Self, UnknownScenario> {
        Self::ALL
            .iter()
            .copied()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| UnknownScenario {
                name: name.to_string(),
                known: Self::ALL.iter().map(|s| s.as_str()).collect(),
            })
    }
}

/// A name that is none of a program's scenarios.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownScenario {
    /// The name given.
    pub name: String,
    /// The program's scenarios.
    pub known: Vec<&'static str>,
}

impl Display for UnknownScenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown scenario {:?}; scenarios: {}",
            self.name,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for UnknownScenario {}

/// Defines a rank program's enum of scenarios and their names on the
/// command line:
///
/// ```
/// pertinax_harness::scenario_enum! {
///     /// The scenarios of a program.
///     pub enum Demo {
///         /// Messages around a ring.
///         Ring => "ring",
///         AwaitCpu => "await-cpu",
///     }
/// }
/// use pertinax_harness::Scenarios;
///
/// assert_eq!(Demo::AwaitCpu.as_str(), "await-cpu");
/// assert_eq!(Demo::Ring.to_string(), "ring");
/// assert_eq!("await-cpu".parse(), Ok(Demo::AwaitCpu));
/// assert!("rign".parse::<Demo>().is_err());
/// assert_eq!(Demo::ALL, &[Demo::Ring, Demo::AwaitCpu]);
/// ```
///
/// The enum derives `Debug`, `Clone`, `Copy`, `PartialEq`, `Eq` and
/// `Hash`, and gets a `const fn as_str`, [`Scenarios`], `Display` (the
/// name) and `FromStr` (by name, else [`UnknownScenario`]).
#[macro_export]
macro_rules! scenario_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $enum:ident {
            $($(#[$vmeta:meta])* $variant:ident => $name:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $enum {
            $($(#[$vmeta])* $variant,)+
        }

        impl $enum {
            /// The scenario's name on the command line.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }
        }

        impl $crate::Scenarios for $enum {
            const ALL: &'static [Self] = &[$($enum::$variant,)+];

            fn as_str(self) -> &'static str {
                $enum::as_str(self)
            }
        }

        impl ::std::fmt::Display for $enum {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $enum {
            type Err = $crate::UnknownScenario;

            fn from_str(name: &str) -> ::std::result::Result<Self, Self::Err> {
                <$enum as $crate::Scenarios>::from_name(name)
            }
        }
    };
}

/// A rank program's command line: `PROGRAM SCENARIO [ARGS]`, the scenario
/// one of `S`.
#[derive(Debug, Clone)]
pub struct Scenario<S> {
    scenario: S,
    args: Vec<String>,
}

impl<S: Scenarios> Scenario<S> {
    /// This process's command line; without a scenario, or with a name
    /// that is none of `S`, prints the usage (and the scenarios) on stderr
    /// and exits with status 2.
    pub fn from_args() -> Scenario<S> {
        let mut argv = std::env::args();
        let program = argv.next().unwrap_or_default();
        match Scenario::parse(argv) {
            Ok(sc) => sc,
            Err(why) => {
                let base = program.rsplit('/').next().unwrap_or_default();
                eprintln!("usage: {base} SCENARIO [ARGS]\n{why}");
                std::process::exit(2)
            }
        }
    }

    /// The scenario and its arguments from the words of a command line
    /// after the program's name.
    ///
    /// # Errors
    /// What is wrong (no scenario, an unknown one), with the scenarios.
    pub fn parse(words: impl IntoIterator<Item = String>) -> Result<Scenario<S>, String> {
        let mut words = words.into_iter();
        let Some(name) = words.next() else {
            let known: Vec<&str> = S::ALL.iter().map(|s| s.as_str()).collect();
            return Err(format!("no scenario; scenarios: {}", known.join(", ")));
        };
        let scenario = S::from_name(&name).map_err(|x| x.to_string())?;
        Ok(Scenario {
            scenario,
            args: words.collect(),
        })
    }

    /// The scenario.
    pub fn scenario(&self) -> S {
        self.scenario
    }

    /// The scenario's name.
    pub fn name(&self) -> &'static str {
        self.scenario.as_str()
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
    use super::{Scenario, Scenarios, UnknownScenario};

    crate::scenario_enum! {
        /// Two scenarios.
        enum Two {
            A => "a",
            /// Documented, with a name that is no identifier.
            BeeCee => "bee-cee",
        }
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_parse_and_print() {
        assert_eq!(Two::ALL, &[Two::A, Two::BeeCee]);
        for &s in Two::ALL {
            assert_eq!(s.as_str().parse::<Two>(), Ok(s));
            assert_eq!(s.to_string(), s.as_str());
        }
        assert_eq!(Two::BeeCee.as_str(), "bee-cee");
        assert_eq!(
            "c".parse::<Two>(),
            Err(UnknownScenario {
                name: "c".into(),
                known: vec!["a", "bee-cee"],
            })
        );
        assert_eq!(
            Two::from_name("BeeCee").map_err(|e| e.to_string()),
            Err("unknown scenario \"BeeCee\"; scenarios: a, bee-cee".into())
        );
    }

    #[test]
    fn command_lines_name_a_scenario_then_its_arguments() {
        let sc = Scenario::<Two>::parse(words(&["bee-cee", "20", "x"])).unwrap();
        assert_eq!((sc.scenario(), sc.name()), (Two::BeeCee, "bee-cee"));
        assert_eq!(sc.args(), ["20", "x"]);
        assert!(Scenario::<Two>::parse(words(&["a"]))
            .unwrap()
            .args()
            .is_empty());
        assert_eq!(
            Scenario::<Two>::parse(words(&[])).unwrap_err(),
            "no scenario; scenarios: a, bee-cee"
        );
        assert_eq!(
            Scenario::<Two>::parse(words(&["ring", "20"])).unwrap_err(),
            "unknown scenario \"ring\"; scenarios: a, bee-cee"
        );
    }
}
