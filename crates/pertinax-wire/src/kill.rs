//! Job-wide kills: `RANK@TIME[:SIGNAL]`, `RANK@NAME#K[:SIGNAL]`, and the
//! seeded schedule, read alike by the native launcher (`pertinax run
//! --kill`, `--fault-seed`) and by every rank from its environment
//! ([`crate::env::FAULTS`], [`crate::env::FAULT_SEED`]; how a job started
//! by `mpirun` or `srun` gets its kills). One parser, one generator.
//!
//! Two kinds of kill exist:
//!
//! - **time-based** (`RANK@TIME[:SIGNAL]`): the native launcher signals the
//!   rank when `TIME` has passed since every rank left the start-up fence
//!   (launcher only: nothing else keeps the time of a job);
//! - **point-based** (`RANK@NAME#K[:SIGNAL]`): the rank kills itself at the
//!   `K`-th hit of its fault point `NAME` (`*`: any point). The launcher
//!   passes these in the rank's `PERTINAX_FAULTS` as `NAME@K:SIGNAL`; a
//!   plan may also hold them as they are, for every rank to pick its own
//!   ([`crate::fault::Plan::for_rank`]).
//!
//! A **seeded schedule** ([`RandomFaults`]) draws point-based kills: `count`
//! distinct victims among ranks `1..n`, each at a hit drawn from
//! `1..=max_hit` of any point, with SIGKILL. Rank 0 is never drawn: it keeps
//! a reporter alive, so that a run always has a survivor to say whether the
//! application recovered. The generator is [`SplitMix64`] with its unbiased
//! [`SplitMix64::below`], so a seed gives the same schedule on every
//! machine, in every process, and with every version of the dependencies.
//!
//! ```
//! use pertinax_wire::kill::{Kill, RandomFaults};
//!
//! let k: Kill = "2@1.5s:stop".parse().unwrap();
//! assert_eq!(k.to_string(), "rank 2 at 1.5 s (stop)");
//! let schedule = RandomFaults { seed: 7, count: 2, max_hit: 20 }.schedule(8).unwrap();
//! assert_eq!(schedule.len(), 2);
//! assert!(schedule.iter().all(|k| k.rank != 0));
//! let r: RandomFaults = "7:2:20".parse().unwrap();
//! assert_eq!(r, RandomFaults { seed: 7, count: 2, max_hit: 20 });
//! ```

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::fault::{valid_point_name, FaultSignal, Plan, Point, Shot, UnknownSignal};
use crate::rng::SplitMix64;

/// When a kill strikes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KillWhen {
    /// This long after every rank left the start-up fence.
    After(Duration),
    /// At the `hit`-th hit (from 1) of fault point `point` (`*`: any).
    Hit {
        /// The point's name, or `*`.
        point: String,
        /// Which hit.
        hit: u64,
    },
}

/// One injected fault: `--kill RANK@TIME[:SIGNAL]` or
/// `--kill RANK@NAME#K[:SIGNAL]` (the signal defaults to `kill`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kill {
    /// The victim.
    pub rank: u32,
    /// When.
    pub when: KillWhen,
    /// How.
    pub signal: FaultSignal,
}

/// A `--kill` value that cannot be understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KillParseError {
    /// No `@` between the rank and the time or point.
    #[error("expected RANK@TIME[:SIGNAL] or RANK@NAME#K[:SIGNAL]")]
    Shape,
    /// The rank is not a whole number.
    #[error("bad rank '{0}'")]
    Rank(String),
    /// The time is not a number followed by `ms` or `s`.
    #[error("bad time '{0}' (expected e.g. 250ms or 1.5s)")]
    Time(String),
    /// The point name is empty or holds one of `,:@#` or a blank.
    #[error("bad fault point name '{0}'")]
    Point(String),
    /// The hit is not a whole number of at least 1.
    #[error("bad hit number '{0}' (counted from 1)")]
    Hit(String),
    /// An unknown signal name.
    #[error("unknown signal '{0}' (expected kill, segv, stop or panic)")]
    Signal(String),
    /// `panic` for a time-based kill.
    #[error("a time-based kill cannot panic (panic needs a fault point: RANK@NAME#K:panic)")]
    TimedPanic,
}

/// Parses a duration written as a number and a unit, `ms` or `s`: `250ms`,
/// `1.5s`.
///
/// # Errors
/// [`KillParseError::Time`] for anything else, negative or too large.
pub fn parse_time(s: &str) -> Result<Duration, KillParseError> {
    let bad = || KillParseError::Time(s.to_string());
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else {
        return Err(bad());
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    Duration::try_from_secs_f64(v * scale).map_err(|_| bad())
}

impl FromStr for Kill {
    type Err = KillParseError;
    fn from_str(s: &str) -> Result<Kill, KillParseError> {
        let (rank, rest) = s.split_once('@').ok_or(KillParseError::Shape)?;
        let rank = rank
            .parse::<u32>()
            .map_err(|_| KillParseError::Rank(rank.to_string()))?;
        let (what, signal) = match rest.rsplit_once(':') {
            Some((what, sig)) => (
                what,
                sig.parse()
                    .map_err(|UnknownSignal(s)| KillParseError::Signal(s))?,
            ),
            None => (rest, FaultSignal::Kill),
        };
        let when = match what.split_once('#') {
            Some((point, hit)) => {
                if !valid_point_name(point) {
                    return Err(KillParseError::Point(point.to_string()));
                }
                let hit = match hit.parse::<u64>() {
                    Ok(h) if h >= 1 => h,
                    _ => return Err(KillParseError::Hit(hit.to_string())),
                };
                KillWhen::Hit {
                    point: point.to_string(),
                    hit,
                }
            }
            None => {
                if signal == FaultSignal::Panic {
                    return Err(KillParseError::TimedPanic);
                }
                KillWhen::After(parse_time(what)?)
            }
        };
        Ok(Kill { rank, when, signal })
    }
}

impl fmt::Display for Kill {
    /// `rank 2 at 1.5 s (stop)`, `rank 3 at hit 4 of any point (kill)`,
    /// `rank 1 at hit 2 of point send (panic)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.when {
            KillWhen::After(t) => write!(f, "rank {} at {} s", self.rank, seconds(*t))?,
            KillWhen::Hit { point, hit } if point == "*" => {
                write!(f, "rank {} at hit {hit} of any point", self.rank)?
            }
            KillWhen::Hit { point, hit } => {
                write!(f, "rank {} at hit {hit} of point {point}", self.rank)?
            }
        }
        write!(f, " ({})", self.signal.name())
    }
}

/// A seeded random schedule of point-based kills (`--fault-seed`,
/// `--fault-count`, `--fault-max-hit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RandomFaults {
    /// The seed.
    pub seed: u64,
    /// Number of distinct victims.
    pub count: usize,
    /// Hits are drawn from `1..=max_hit`.
    pub max_hit: u64,
}

impl RandomFaults {
    /// The kills this seed gives for a job of `ranks` ranks, in rank order.
    ///
    /// # Errors
    /// [`ScheduleError`] when `count` is 0 or more than the `ranks - 1`
    /// eligible victims, or `max_hit` is 0.
    pub fn schedule(&self, ranks: usize) -> Result<Vec<Kill>, ScheduleError> {
        let eligible = ranks.saturating_sub(1);
        if self.count == 0 || self.count > eligible || self.max_hit == 0 {
            return Err(ScheduleError {
                count: self.count,
                eligible,
            });
        }
        let mut rng = SplitMix64::new(self.seed);
        // A partial Fisher-Yates shuffle of ranks 1..n.
        let mut pool: Vec<u32> = (1..ranks as u32).collect();
        for i in 0..self.count {
            let j = i + rng.below((pool.len() - i) as u64) as usize;
            pool.swap(i, j);
        }
        let mut kills: Vec<Kill> = pool[..self.count]
            .iter()
            .map(|&rank| Kill {
                rank,
                when: KillWhen::Hit {
                    point: "*".into(),
                    hit: 1 + rng.below(self.max_hit),
                },
                signal: FaultSignal::Kill,
            })
            .collect();
        kills.sort_by_key(|k| k.rank);
        Ok(kills)
    }
}

/// A seeded schedule that cannot be drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot draw {count} distinct fault victims among the {eligible} ranks 1..N-1 \
     (rank 0 is never a victim), with at least one hit each"
)]
pub struct ScheduleError {
    /// Victims asked for.
    pub count: usize,
    /// Ranks that may be victims.
    pub eligible: usize,
}

/// A [`crate::env::FAULT_SEED`] value that cannot be understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: expected SEED[:COUNT[:MAX_HIT]] (whole numbers; COUNT and MAX_HIT at least 1)")]
pub struct SeedParseError(pub String);

impl FromStr for RandomFaults {
    type Err = SeedParseError;
    /// `SEED[:COUNT[:MAX_HIT]]`, with the launcher's defaults: one victim,
    /// hits from 1 to 20.
    fn from_str(s: &str) -> Result<RandomFaults, SeedParseError> {
        let bad = || SeedParseError(s.to_string());
        let nums: Vec<u64> = s
            .trim()
            .split(':')
            .map(|p| p.parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let (seed, count, max_hit) = match nums[..] {
            [seed] => (seed, 1, 20),
            [seed, count] => (seed, count, 20),
            [seed, count, max_hit] => (seed, count, max_hit),
            _ => return Err(bad()),
        };
        if count == 0 || max_hit == 0 {
            return Err(bad());
        }
        Ok(RandomFaults {
            seed,
            count: usize::try_from(count).map_err(|_| bad())?,
            max_hit,
        })
    }
}

impl fmt::Display for RandomFaults {
    /// `SEED:COUNT:MAX_HIT`, as [`crate::env::FAULT_SEED`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.seed, self.count, self.max_hit)
    }
}

impl Kill {
    /// The shot of a point-based kill (for its victim), `None` for a
    /// time-based one.
    pub fn shot(&self) -> Option<Shot> {
        match &self.when {
            KillWhen::Hit { point, hit } => Some(Shot {
                rank: None,
                point: if point == "*" {
                    Point::Any
                } else {
                    Point::Named(point.clone())
                },
                hit: *hit,
                signal: self.signal,
            }),
            KillWhen::After(_) => None,
        }
    }
}

/// The plan of rank `rank`: its point-based kills among `kills` (the
/// `PERTINAX_FAULTS` the native launcher gives it), or `None` when it has
/// none.
pub fn plan_of(kills: &[Kill], rank: u32) -> Option<Plan> {
    let shots: Vec<Shot> = kills
        .iter()
        .filter(|k| k.rank == rank)
        .filter_map(Kill::shot)
        .collect();
    (!shots.is_empty()).then_some(Plan { shots })
}

/// Seconds with at most three decimals, trailing zeros trimmed.
fn seconds(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kill(s: &str) -> Result<Kill, KillParseError> {
        s.parse()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn time_based_kills() {
        assert_eq!(
            kill("3@250ms").unwrap(),
            Kill {
                rank: 3,
                when: KillWhen::After(ms(250)),
                signal: FaultSignal::Kill
            }
        );
        let k = kill("0@1.5s:segv").unwrap();
        assert_eq!(
            (k.when, k.signal),
            (KillWhen::After(ms(1500)), FaultSignal::Segv)
        );
        assert_eq!(kill("1@0s:STOP").unwrap().signal, FaultSignal::Stop);
        assert_eq!(kill("1@2s:panic"), Err(KillParseError::TimedPanic));
    }

    #[test]
    fn point_based_kills() {
        let k = kill("2@send#3").unwrap();
        assert_eq!(
            k.when,
            KillWhen::Hit {
                point: "send".into(),
                hit: 3
            }
        );
        assert_eq!(k.signal, FaultSignal::Kill);
        let k = kill("1@*#7:panic").unwrap();
        assert_eq!(k.signal, FaultSignal::Panic);
        assert_eq!(k.to_string(), "rank 1 at hit 7 of any point (panic)");
        assert_eq!(
            kill("2@coll.bcast#1:stop").unwrap().to_string(),
            "rank 2 at hit 1 of point coll.bcast (stop)"
        );
    }

    #[test]
    fn malformed_kills_are_refused() {
        assert_eq!(kill("3"), Err(KillParseError::Shape));
        assert_eq!(kill("x@1s"), Err(KillParseError::Rank("x".into())));
        assert_eq!(kill("-1@1s"), Err(KillParseError::Rank("-1".into())));
        assert_eq!(kill("1@soon"), Err(KillParseError::Time("soon".into())));
        assert_eq!(kill("1@5"), Err(KillParseError::Time("5".into())));
        assert_eq!(kill("1@-5s"), Err(KillParseError::Time("-5s".into())));
        assert_eq!(kill("1@ms"), Err(KillParseError::Time("ms".into())));
        assert_eq!(kill("1@1e9s"), Err(KillParseError::Time("1e9s".into())));
        assert_eq!(
            kill("1@1s:term"),
            Err(KillParseError::Signal("term".into()))
        );
        assert_eq!(kill("1@#3"), Err(KillParseError::Point("".into())));
        assert_eq!(kill("1@a,b#3"), Err(KillParseError::Point("a,b".into())));
        assert_eq!(kill("1@x#0"), Err(KillParseError::Hit("0".into())));
        assert_eq!(kill("1@x#"), Err(KillParseError::Hit("".into())));
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("250ms"), Ok(ms(250)));
        assert_eq!(parse_time("1.5s"), Ok(ms(1500)));
        assert_eq!(parse_time("0s"), Ok(ms(0)));
        assert!(parse_time("1.5").is_err());
        assert!(parse_time("nans").is_err());
        assert!(parse_time("infs").is_err());
    }

    fn random(seed: u64, count: usize, max_hit: u64) -> RandomFaults {
        RandomFaults {
            seed,
            count,
            max_hit,
        }
    }

    fn summary(kills: &[Kill]) -> Vec<(u32, u64)> {
        kills
            .iter()
            .map(|k| match &k.when {
                KillWhen::Hit { point, hit } => {
                    assert_eq!(point, "*");
                    assert_eq!(k.signal, FaultSignal::Kill);
                    (k.rank, *hit)
                }
                KillWhen::After(_) => panic!("a seeded kill is point-based"),
            })
            .collect()
    }

    #[test]
    fn a_seed_always_gives_the_same_schedule() {
        let a = random(42, 3, 20).schedule(16).unwrap();
        assert_eq!(a, random(42, 3, 20).schedule(16).unwrap());
        // Pinned: a change here changes every recorded reproduction.
        assert_eq!(summary(&a), [(4, 1), (6, 18), (12, 7)]);
        assert_ne!(a, random(43, 3, 20).schedule(16).unwrap());
    }

    #[test]
    fn victims_are_distinct_never_rank_0_and_hits_in_range() {
        let mut seen = [false; 8];
        for seed in 0..500 {
            for count in 1..=7 {
                let s = summary(&random(seed, count, 5).schedule(8).unwrap());
                assert_eq!(s.len(), count);
                assert!(s.windows(2).all(|w| w[0].0 < w[1].0), "sorted, distinct");
                for (rank, hit) in s {
                    assert!(rank != 0 && rank < 8);
                    assert!((1..=5).contains(&hit));
                    seen[rank as usize] = true;
                }
            }
        }
        assert_eq!(seen, [false, true, true, true, true, true, true, true]);
    }

    #[test]
    fn impossible_schedules_are_refused() {
        assert!(random(1, 2, 20).schedule(2).is_err(), "one eligible rank");
        assert!(random(1, 1, 20).schedule(1).is_err(), "no eligible rank");
        assert!(random(1, 0, 20).schedule(4).is_err());
        assert!(random(1, 1, 0).schedule(4).is_err());
        assert_eq!(random(1, 1, 1).schedule(2).unwrap()[0].rank, 1);
    }

    #[test]
    fn plan_of_lists_the_point_kills_of_one_rank() {
        let kills = [
            kill("1@send#3").unwrap(),
            kill("1@2s").unwrap(),
            kill("1@*#5:segv").unwrap(),
            kill("2@recv#1:panic").unwrap(),
        ];
        let text = |r| plan_of(&kills, r).map(|p| p.to_string());
        assert_eq!(text(1).as_deref(), Some("send@3:kill,*@5:segv"));
        assert_eq!(text(2).as_deref(), Some("recv@1:panic"));
        assert_eq!(text(0), None);
    }

    #[test]
    fn seeds_parse_with_the_launcher_defaults() {
        let r = |s: &str| s.parse::<RandomFaults>();
        assert_eq!(r("42"), Ok(random(42, 1, 20)));
        assert_eq!(r("42:3"), Ok(random(42, 3, 20)));
        assert_eq!(r(" 42:3:5 "), Ok(random(42, 3, 5)));
        assert_eq!(random(42, 3, 5).to_string().parse(), Ok(random(42, 3, 5)));
        for bad in ["", "x", "1:0", "1:2:0", "1:2:3:4", "-1", "1:"] {
            assert!(r(bad).is_err(), "{bad}");
        }
    }
}
