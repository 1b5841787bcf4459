//! A job specification checked and completed ([`Plan`]): the limits, the
//! segment's shape, the faults, the resolved programs of the application
//! contexts.

use std::path::{Path, PathBuf};

use crate::fault::{FaultSignal, Kill, KillWhen};
use crate::resilient;
use crate::spec::{default_ring_bytes, resolve_program, App, Heartbeat, JobSpec};
use crate::LaunchError;

/// Largest number of ranks of one job. The segment holds a ring per ordered
/// pair of slots; beyond this its size stops making sense on one machine.
pub const MAX_RANKS: usize = 4096;

/// Largest number of process slots (ranks + spares + room for spawned
/// processes) of one job's segment.
pub const MAX_SLOTS: usize = 4096;

/// Largest ring size (bytes) a job may ask for.
pub const MAX_RING_BYTES: usize = 1 << 30;

/// A job specification, checked and completed.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// Slots of the segment: ranks, spares, room for spawned processes.
    pub(super) capacity: usize,
    pub(super) ring_bytes: usize,
    /// The job's program, resolved.
    pub(super) program: PathBuf,
    /// Every kill: the `--kill` ones, then the seeded ones.
    pub(super) kills: Vec<Kill>,
    /// The seeded kills alone.
    pub(super) schedule: Vec<Kill>,
    /// Ranks of the first application context (all of them unless MIMD).
    first: usize,
    /// The further contexts' programs, resolved.
    apps: Vec<PathBuf>,
}

/// Checks `spec` and works out the segment's shape and the faults.
pub(super) fn plan(spec: &JobSpec) -> Result<Plan, LaunchError> {
    let n = spec.ranks;
    if n == 0 {
        return Err(LaunchError::NoRanks);
    }
    if n > MAX_RANKS {
        return Err(LaunchError::TooManyRanks {
            ranks: n,
            max: MAX_RANKS,
        });
    }
    // By default as many slots for spawned processes as ranks, but a big
    // job is not refused for want of them.
    let max_spawn = spec
        .max_spawn
        .unwrap_or_else(|| n.min(MAX_SLOTS.saturating_sub(n + spec.spares)));
    let capacity = n
        .checked_add(spec.spares)
        .and_then(|c| c.checked_add(max_spawn))
        .filter(|&c| c <= MAX_SLOTS)
        .ok_or(LaunchError::TooManySlots {
            ranks: n,
            spares: spec.spares,
            max_spawn,
            max: MAX_SLOTS,
        })?;
    if let Some(Heartbeat {
        period, timeout, ..
    }) = spec.heartbeat
    {
        if period.as_millis() == 0 || timeout <= period {
            return Err(LaunchError::Heartbeat { period, timeout });
        }
    }
    for k in &spec.kills {
        if k.rank as usize >= n {
            return Err(LaunchError::KillRank {
                rank: k.rank,
                ranks: n,
            });
        }
        if matches!(k.when, KillWhen::After(_)) && k.signal == FaultSignal::Panic {
            return Err(LaunchError::TimedPanic { rank: k.rank });
        }
        // SIGSTOP neither ends the process nor tells anyone: only a silent
        // heartbeat gives it away (in both heartbeat modes).
        if k.signal == FaultSignal::Stop && spec.heartbeat.is_none() {
            return Err(LaunchError::StopWithoutHeartbeat {
                kill: k.to_string(),
            });
        }
    }
    let schedule = match &spec.random_faults {
        Some(r) => r.schedule(n).map_err(|e| LaunchError::FaultVictims {
            count: e.count,
            eligible: e.eligible,
        })?,
        None => Vec::new(),
    };
    let asked = spec.apps.iter().try_fold(1usize, |sum, a| {
        (a.ranks > 0).then(|| sum.checked_add(a.ranks)).flatten()
    });
    let first = match asked {
        Some(asked) if asked <= n => n - (asked - 1),
        _ => {
            return Err(LaunchError::Apps {
                ranks: n,
                asked: asked.unwrap_or(usize::MAX),
            })
        }
    };
    if let Some(dir) = &spec.wdir {
        if !dir.is_dir() {
            return Err(LaunchError::Wdir { dir: dir.clone() });
        }
    }
    let resolve = |program: &Path| {
        let path = std::env::var_os("PATH");
        resolve_program(program, path.as_deref())
            .map_err(|problem| LaunchError::Program {
                program: program.to_path_buf(),
                problem,
            })
            // Absolute, so that --wdir does not change which file runs.
            .map(|p| match std::env::current_dir() {
                Ok(cwd) if p.is_relative() => cwd.join(p),
                _ => p,
            })
    };
    let program = resolve(&spec.program)?;
    let apps = spec
        .apps
        .iter()
        .map(|a| resolve(&a.program))
        .collect::<Result<Vec<_>, _>>()?;
    // Sized by the ranks, not the capacity: the slots for spares and
    // spawned processes are mostly never used, and their rings cost nothing
    // until touched (pages appear on first use), while smaller rings slow
    // every large message of the ranks.
    let ring_bytes = spec.ring_bytes.unwrap_or_else(|| default_ring_bytes(n));
    if ring_bytes > MAX_RING_BYTES {
        return Err(LaunchError::RingTooLarge {
            ring_bytes,
            max: MAX_RING_BYTES,
        });
    }
    if let Some(r) = &spec.resilient {
        resilient::validate(r)?;
    }
    let kills = spec.kills.iter().chain(&schedule).cloned().collect();
    Ok(Plan {
        capacity,
        ring_bytes,
        program,
        kills,
        schedule,
        first,
        apps,
    })
}

/// The application context of rank `rank` after the first (its spec and
/// resolved program), or `None` for the first context.
pub(super) fn context_of<'s>(
    rank: usize,
    plan: &'s Plan,
    spec: &'s JobSpec,
) -> Option<(&'s App, &'s Path)> {
    let mut end = plan.first;
    for (app, program) in spec.apps.iter().zip(&plan.apps) {
        if rank < end {
            return None;
        }
        end += app.ranks;
        if rank < end {
            return Some((app, program));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::RandomFaults;
    use crate::spec::HeartbeatMode;
    use std::time::Duration;

    fn spec(n: usize) -> JobSpec {
        JobSpec::new(n, "true")
    }

    #[test]
    fn capacity_is_ranks_spares_and_room_to_spawn() {
        let p = plan(&spec(4)).unwrap();
        assert_eq!(p.capacity, 8, "max-spawn defaults to the rank count");
        assert_eq!(p.ring_bytes, default_ring_bytes(4));
        let mut s = spec(4);
        s.spares = 2;
        s.max_spawn = Some(0);
        assert_eq!(plan(&s).unwrap().capacity, 6);
        s.max_spawn = Some(20);
        let p = plan(&s).unwrap();
        assert_eq!(p.capacity, 26);
        assert_eq!(p.ring_bytes, default_ring_bytes(4), "sized by the ranks");
    }

    #[test]
    fn big_jobs_get_less_room_to_spawn_by_default_but_are_not_refused() {
        assert_eq!(plan(&spec(MAX_RANKS)).unwrap().capacity, MAX_SLOTS);
        assert_eq!(plan(&spec(3000)).unwrap().capacity, MAX_SLOTS);
        let mut s = spec(3000);
        s.max_spawn = Some(2000);
        assert!(matches!(plan(&s), Err(LaunchError::TooManySlots { .. })));
        let mut s = spec(4000);
        s.spares = 200;
        assert!(matches!(plan(&s), Err(LaunchError::TooManySlots { .. })));
    }

    #[test]
    fn fault_and_heartbeat_options_are_checked() {
        let mut s = spec(2);
        s.kills = vec!["2@1s".parse().unwrap()];
        assert!(matches!(
            plan(&s),
            Err(LaunchError::KillRank { rank: 2, ranks: 2 })
        ));
        s.kills = vec![Kill {
            rank: 1,
            when: KillWhen::After(Duration::ZERO),
            signal: FaultSignal::Panic,
        }];
        assert!(matches!(plan(&s), Err(LaunchError::TimedPanic { rank: 1 })));
        // A stop is refused without heartbeats, by time or at a point, and
        // accepted with them.
        for stop in ["1@1s:stop", "1@x#2:stop", "1@*#1:STOP"] {
            s.kills = vec![stop.parse().unwrap()];
            s.heartbeat = None;
            match plan(&s) {
                Err(e @ LaunchError::StopWithoutHeartbeat { .. }) => {
                    assert!(e.is_usage());
                    let m = e.to_string();
                    assert!(
                        m.starts_with("--kill for rank 1 at ")
                            && m.contains(
                                "(stop): a stopped process is only detected by heartbeats"
                            )
                            && m.contains("add --heartbeat MS")
                            && !m.contains('\n'),
                        "{m}"
                    );
                }
                other => panic!("{stop} without heartbeats: {other:?}"),
            }
            s.heartbeat = Some(Heartbeat::new(
                Duration::from_millis(50),
                HeartbeatMode::Progress,
            ));
            assert!(plan(&s).is_ok(), "{stop} with heartbeats");
        }
        s.heartbeat = None;
        s.kills = vec!["1@x#2".parse().unwrap()];
        s.random_faults = Some(RandomFaults {
            seed: 1,
            count: 1,
            max_hit: 4,
        });
        let p = plan(&s).unwrap();
        assert_eq!(p.schedule.len(), 1);
        assert_eq!(p.kills.len(), 2);
        s.random_faults = Some(RandomFaults {
            seed: 1,
            count: 2,
            max_hit: 4,
        });
        assert!(matches!(
            plan(&s),
            Err(LaunchError::FaultVictims {
                count: 2,
                eligible: 1
            })
        ));
        let mut s = spec(2);
        let ms = Duration::from_millis;
        s.heartbeat = Some(Heartbeat {
            period: ms(100),
            timeout: ms(100),
            mode: HeartbeatMode::Thread,
        });
        assert!(matches!(plan(&s), Err(LaunchError::Heartbeat { .. })));
        s.heartbeat = Some(Heartbeat::new(ms(100), HeartbeatMode::Progress));
        assert!(plan(&s).is_ok());
        assert_eq!(s.heartbeat.unwrap().env(), "progress:100");
        assert_eq!(s.heartbeat.unwrap().timeout, ms(1000));
    }

    #[test]
    fn application_contexts_number_their_ranks_in_order() {
        let app = |ranks| App {
            ranks,
            program: "true".into(),
            args: Vec::new(),
            env: Vec::new(),
        };
        let mut s = spec(6);
        s.apps = vec![app(3), app(1)];
        let p = plan(&s).unwrap();
        assert_eq!(p.first, 2);
        let ctx: Vec<Option<usize>> = (0..6)
            .map(|r| context_of(r, &p, &s).map(|(a, _)| a.ranks))
            .collect();
        assert_eq!(ctx, [None, None, Some(3), Some(3), Some(3), Some(1)]);
        assert!(p.apps.iter().all(|a| a.is_absolute()));
        // The first context needs a rank, and every other one too.
        s.apps = vec![app(6)];
        assert!(matches!(
            plan(&s),
            Err(LaunchError::Apps { ranks: 6, asked: 7 })
        ));
        s.apps = vec![app(0)];
        let e = plan(&s).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("at least 1"), "{e}");
    }

    #[test]
    fn a_working_directory_must_be_one() {
        let mut s = spec(1);
        s.wdir = Some("/no/such/dir/pertinax".into());
        let e = plan(&s).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert_eq!(
            e.to_string(),
            "--wdir /no/such/dir/pertinax: not a directory"
        );
        s.wdir = Some("/".into());
        assert!(plan(&s).is_ok());
    }
}
