//! The fault plan of a process ([`crate::env::FAULTS`]): where it kills
//! itself, and how.
//!
//! A plan is comma-separated shots `NAME@K:SIGNAL`: at the `K`-th hit
//! (counted from 1) of the fault point `NAME` (`*`: any point), the process
//! dies by `SIGNAL`, one of `kill`, `segv`, `stop` or `panic` (`:SIGNAL`
//! may be left out: `kill`). A shot may also name its victim, as
//! `pertinax run --kill` does: `RANK@NAME#K[:SIGNAL]` strikes only the rank
//! `RANK` of the job's world (grammar in [`crate::kill`]), so one plan can
//! be given to a whole job (`mpirun -x PERTINAX_FAULTS=3@chunk#6`), and
//! each rank keeps its own shots ([`Plan::for_rank`]). Time-based kills
//! (`RANK@TIME`) need the launcher and are refused in a plan. Blanks around
//! shots and empty shots are ignored; signal names are read without regard
//! to case. The launcher writes plans with [`Plan`]'s `Display`; the
//! runtime reads them with its `FromStr`, whoever set the variable.
//!
//! ```
//! use pertinax_wire::fault::{FaultSignal, Plan, Point};
//!
//! let plan: Plan = "iteration@3:kill, *@7:panic, 3@chunk#6".parse().unwrap();
//! assert_eq!(plan.shots[0].point, Point::Named("iteration".into()));
//! assert_eq!(plan.shots[1].signal, FaultSignal::Panic);
//! assert_eq!(plan.shots[2].rank, Some(3));
//! assert_eq!(plan.to_string(), "iteration@3:kill,*@7:panic,3@chunk#6:kill");
//! assert_eq!(plan.for_rank(3).to_string(), "iteration@3:kill,*@7:panic,chunk@6:kill");
//! assert_eq!(plan.for_rank(2).shots.len(), 2);
//! assert!("iteration@0:kill".parse::<Plan>().is_err());
//! assert!("3@250ms".parse::<Plan>().is_err());
//! ```

use std::fmt;
use std::str::FromStr;

/// How an injected fault kills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultSignal {
    /// SIGKILL.
    Kill,
    /// SIGSEGV.
    Segv,
    /// SIGSTOP: the process hangs until something kills it (the launcher
    /// does, for its silent heartbeat).
    Stop,
    /// A panic in the process (fault points only).
    Panic,
}

impl FaultSignal {
    /// Every signal, in the order of the names in messages.
    pub const ALL: [FaultSignal; 4] = [
        FaultSignal::Kill,
        FaultSignal::Segv,
        FaultSignal::Stop,
        FaultSignal::Panic,
    ];

    /// The name used on the command line and in plans.
    pub fn name(self) -> &'static str {
        match self {
            FaultSignal::Kill => "kill",
            FaultSignal::Segv => "segv",
            FaultSignal::Stop => "stop",
            FaultSignal::Panic => "panic",
        }
    }

    /// The signal number, `None` for a panic.
    pub fn number(self) -> Option<i32> {
        match self {
            FaultSignal::Kill => Some(libc::SIGKILL),
            FaultSignal::Segv => Some(libc::SIGSEGV),
            FaultSignal::Stop => Some(libc::SIGSTOP),
            FaultSignal::Panic => None,
        }
    }

    /// The `signal` of [`crate::ctrl::ToLauncher::Injected`]: the signal
    /// number, 0 for a panic.
    pub fn injected_code(self) -> i32 {
        self.number().unwrap_or(0)
    }
}

/// A signal name that is none of `kill`, `segv`, `stop`, `panic` (the
/// name as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown signal '{0}' (expected kill, segv, stop or panic)")]
pub struct UnknownSignal(pub String);

impl FromStr for FaultSignal {
    type Err = UnknownSignal;
    fn from_str(s: &str) -> Result<FaultSignal, UnknownSignal> {
        FaultSignal::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownSignal(s.to_string()))
    }
}

impl fmt::Display for FaultSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether `name` can name a fault point in a plan: not empty, and none of
/// `,:@#` nor a blank in it (`*` is read as any point).
pub fn valid_point_name(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| matches!(c, ',' | ':' | '@' | '#') || c.is_whitespace())
}

/// Where a shot strikes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Point {
    /// Any fault point (`*`).
    Any,
    /// The fault point of this name (see [`valid_point_name`]).
    Named(String),
}

impl Point {
    /// Whether a hit of the fault point `name` counts for this shot.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Point::Any => true,
            Point::Named(p) => p == name,
        }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Point::Any => f.write_str("*"),
            Point::Named(n) => f.write_str(n),
        }
    }
}

/// One planned death: at the `hit`-th hit of `point`, by `signal`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shot {
    /// The victim's rank in the job's world; `None`: the process that
    /// reads the plan.
    pub rank: Option<u32>,
    /// The point.
    pub point: Point,
    /// Which hit, from 1.
    pub hit: u64,
    /// How.
    pub signal: FaultSignal,
}

impl fmt::Display for Shot {
    /// `NAME@K:SIGNAL`, or `RANK@NAME#K:SIGNAL` for a shot with a victim.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rank {
            None => write!(f, "{}@{}:{}", self.point, self.hit, self.signal),
            Some(r) => write!(f, "{r}@{}#{}:{}", self.point, self.hit, self.signal),
        }
    }
}

/// A process's fault plan: the value of [`crate::env::FAULTS`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Plan {
    /// The shots, in the order given.
    pub shots: Vec<Shot>,
}

/// A plan that cannot be understood; each names the shot (quoted).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// No `@` in the shot.
    #[error("{shot:?}: expected NAME@K:SIGNAL")]
    Shape {
        /// The shot.
        shot: String,
    },
    /// The point name is not valid (see [`valid_point_name`]).
    #[error("{shot:?}: bad fault point name {point:?}")]
    Point {
        /// The shot.
        shot: String,
        /// The name.
        point: String,
    },
    /// The hit is not a whole number of at least 1.
    #[error("{shot:?}: the hit number must be a positive integer")]
    Hit {
        /// The shot.
        shot: String,
    },
    /// An unknown signal name.
    #[error("{shot:?}: unknown signal {signal:?}")]
    Signal {
        /// The shot.
        shot: String,
        /// The name.
        signal: String,
    },
    /// A shot with a victim (`RANK@NAME#K[:SIGNAL]`) that is not a valid
    /// point-based kill.
    #[error("{shot:?}: {reason}")]
    Kill {
        /// The shot.
        shot: String,
        /// Why.
        reason: crate::kill::KillParseError,
    },
    /// A time-based kill (`RANK@TIME`), which only the native launcher can
    /// carry out.
    #[error("{shot:?}: a time-based kill needs `pertinax run --kill`; a plan holds RANK@NAME#K[:SIGNAL]")]
    Timed {
        /// The shot.
        shot: String,
    },
}

impl FromStr for Shot {
    type Err = PlanError;
    /// One shot, `NAME@K[:SIGNAL]` or `RANK@NAME#K[:SIGNAL]` (no blanks
    /// around it).
    fn from_str(shot: &str) -> Result<Shot, PlanError> {
        if shot.contains('#') {
            let kill: crate::kill::Kill = shot.parse().map_err(|reason| PlanError::Kill {
                shot: shot.to_string(),
                reason,
            })?;
            // With a `#`, the kill is point-based.
            let mut s = kill.shot().ok_or_else(|| PlanError::Timed {
                shot: shot.to_string(),
            })?;
            s.rank = Some(kill.rank);
            return Ok(s);
        }
        if let Ok(crate::kill::Kill {
            when: crate::kill::KillWhen::After(_),
            ..
        }) = shot.parse::<crate::kill::Kill>()
        {
            return Err(PlanError::Timed {
                shot: shot.to_string(),
            });
        }
        let (point, rest) = shot.split_once('@').ok_or_else(|| PlanError::Shape {
            shot: shot.to_string(),
        })?;
        let point = match point {
            "*" => Point::Any,
            p if valid_point_name(p) => Point::Named(p.to_string()),
            p => {
                return Err(PlanError::Point {
                    shot: shot.to_string(),
                    point: p.to_string(),
                })
            }
        };
        let (k, sig) = rest.split_once(':').unwrap_or((rest, "kill"));
        let hit = k
            .parse::<u64>()
            .ok()
            .filter(|&k| k > 0)
            .ok_or_else(|| PlanError::Hit {
                shot: shot.to_string(),
            })?;
        let signal = sig
            .parse()
            .map_err(|UnknownSignal(signal)| PlanError::Signal {
                shot: shot.to_string(),
                signal,
            })?;
        Ok(Shot {
            rank: None,
            point,
            hit,
            signal,
        })
    }
}

impl FromStr for Plan {
    type Err = PlanError;
    fn from_str(s: &str) -> Result<Plan, PlanError> {
        let shots = s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect::<Result<_, _>>()?;
        Ok(Plan { shots })
    }
}

impl Plan {
    /// The plan of the world's rank `rank`: the shots without a victim and
    /// those for `rank` (their victim dropped), in order.
    pub fn for_rank(&self, rank: u32) -> Plan {
        Plan {
            shots: self
                .shots
                .iter()
                .filter(|s| s.rank.is_none_or(|r| r == rank))
                .map(|s| Shot {
                    rank: None,
                    ..s.clone()
                })
                .collect(),
        }
    }

    /// The shots without a victim (the plan of a process that is no rank
    /// of the job's first world: a spare, a spawned process, a
    /// replacement).
    pub fn own(&self) -> Plan {
        Plan {
            shots: self
                .shots
                .iter()
                .filter(|s| s.rank.is_none())
                .cloned()
                .collect(),
        }
    }
}

impl fmt::Display for Plan {
    /// The shots as `NAME@K:SIGNAL`, comma-separated, without blanks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.shots.iter().enumerate() {
            write!(f, "{}{s}", if i > 0 { "," } else { "" })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plan(s: &str) -> Result<Plan, PlanError> {
        s.parse()
    }

    #[test]
    fn plans_parse() {
        let p = plan("iteration@3:kill, *@7:panic,x@1,,y@2:SEGV")
            .unwrap()
            .shots;
        assert_eq!(p.len(), 4);
        assert_eq!(p[0].point, Point::Named("iteration".into()));
        assert_eq!((p[0].hit, p[0].signal), (3, FaultSignal::Kill));
        assert_eq!(
            (&p[1].point, p[1].signal),
            (&Point::Any, FaultSignal::Panic)
        );
        assert_eq!(p[2].signal, FaultSignal::Kill, "the default");
        assert_eq!(p[3].signal, FaultSignal::Segv);
        assert_eq!(plan("").unwrap(), Plan::default());
        assert_eq!(plan(" , ").unwrap(), Plan::default());
    }

    #[test]
    fn bad_plans_name_the_shot() {
        let err = |s: &str| plan(s).unwrap_err().to_string();
        assert_eq!(err("iteration"), "\"iteration\": expected NAME@K:SIGNAL");
        assert_eq!(
            err("a@0:kill"),
            "\"a@0:kill\": the hit number must be a positive integer"
        );
        assert_eq!(
            err("ok@1,a@x"),
            "\"a@x\": the hit number must be a positive integer"
        );
        assert_eq!(err("a@1:hup"), "\"a@1:hup\": unknown signal \"hup\"");
        assert_eq!(err("@1:kill"), "\"@1:kill\": bad fault point name \"\"");
        assert_eq!(err("a b@1"), "\"a b@1\": bad fault point name \"a b\"");
        assert_eq!(
            err("a@1:kill:kill"),
            "\"a@1:kill:kill\": unknown signal \"kill:kill\""
        );
    }

    #[test]
    fn shots_with_a_victim() {
        let p = plan("3@chunk#6, 1@*#2:panic, x@1").unwrap();
        assert_eq!(p.shots[0].rank, Some(3));
        assert_eq!(p.shots[0].point, Point::Named("chunk".into()));
        assert_eq!((p.shots[0].hit, p.shots[0].signal), (6, FaultSignal::Kill));
        assert_eq!((&p.shots[1].point, p.shots[1].rank), (&Point::Any, Some(1)));
        assert_eq!(p.for_rank(3).to_string(), "chunk@6:kill,x@1:kill");
        assert_eq!(p.for_rank(1).to_string(), "*@2:panic,x@1:kill");
        assert_eq!(p.for_rank(0).to_string(), "x@1:kill");
        assert_eq!(p.own().to_string(), "x@1:kill");
        let err = |s: &str| plan(s).unwrap_err().to_string();
        assert_eq!(
            err("3@250ms:stop"),
            "\"3@250ms:stop\": a time-based kill needs `pertinax run --kill`; \
             a plan holds RANK@NAME#K[:SIGNAL]"
        );
        assert_eq!(err("x@chunk#6"), "\"x@chunk#6\": bad rank 'x'");
        assert_eq!(
            err("3@chunk#0"),
            "\"3@chunk#0\": bad hit number '0' (counted from 1)"
        );
    }

    #[test]
    fn signals() {
        assert_eq!("STOP".parse::<FaultSignal>(), Ok(FaultSignal::Stop));
        assert_eq!(
            "term".parse::<FaultSignal>().unwrap_err().to_string(),
            "unknown signal 'term' (expected kill, segv, stop or panic)"
        );
        assert_eq!(FaultSignal::Kill.injected_code(), libc::SIGKILL);
        assert_eq!(FaultSignal::Panic.injected_code(), 0);
        assert!(Point::Any.matches("x"));
        assert!(!Point::Named("y".into()).matches("x"));
    }

    fn point() -> impl Strategy<Value = Point> {
        prop_oneof![
            Just(Point::Any),
            "[a-z.*_-][a-z0-9.*_-]{0,12}".prop_map(|n| if n == "*" {
                Point::Any
            } else {
                Point::Named(n)
            }),
        ]
    }

    fn shot() -> impl Strategy<Value = Shot> {
        (
            point(),
            1..=u64::MAX,
            proptest::sample::select(&FaultSignal::ALL[..]),
            proptest::option::of(any::<u32>()),
        )
            .prop_map(|(point, hit, signal, rank)| Shot {
                rank,
                point,
                hit,
                signal,
            })
    }

    proptest! {
        #[test]
        fn plans_round_trip(shots in proptest::collection::vec(shot(), 0..6)) {
            let p = Plan { shots };
            let text = p.to_string();
            prop_assert_eq!(text.parse::<Plan>(), Ok(p.clone()));
            // Blanks around the shots and empty shots change nothing.
            let loose = format!(" ,{} ,", text.replace(',', " , "));
            prop_assert_eq!(loose.parse::<Plan>(), Ok(p));
        }

        #[test]
        fn any_text_parses_or_names_a_shot(s in "[a-z*@:#, 0-9]{0,24}") {
            match s.parse::<Plan>() {
                // What parses formats to text that parses the same.
                Ok(p) => prop_assert_eq!(p.to_string().parse::<Plan>(), Ok(p)),
                Err(e) => prop_assert!(e.to_string().starts_with('"')),
            }
        }
    }
}
