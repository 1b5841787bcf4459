//! Reports of made-up jobs: exit statuses, summaries, labels.

use super::summary::seconds;
use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn rank(rank: u32, end: ExitKind, at_ms: u64, finalized: bool) -> ProcOutcome {
    ProcOutcome {
        slot: rank,
        role: Role::Rank,
        pid: 4240 + rank,
        end,
        at: ms(at_ms),
        finalized,
        joined: true,
        cause: None,
        panic: None,
        replaces: None,
    }
}

fn report(ranks: Vec<ProcOutcome>, stop: Option<Stop>) -> JobReport {
    JobReport {
        ranks,
        others: Vec::new(),
        stop,
        elapsed: ms(500),
        schedule: Vec::new(),
        resilient: false,
    }
}

fn with(mut p: ProcOutcome, role: Role, cause: Option<Cause>) -> ProcOutcome {
    p.role = role;
    p.cause = cause;
    p
}

/// Checks a report's exit code and summary.
fn check(r: &JobReport, code: i32, summary: Option<&str>) {
    assert_eq!(r.exit_code(), code, "exit code of {r:?}");
    assert_eq!(r.summary().as_deref(), summary, "summary of {r:?}");
}

#[test]
fn all_finalized_is_success() {
    let r = report(
        vec![
            rank(0, ExitKind::Code(0), 10, true),
            rank(1, ExitKind::Code(0), 12, true),
        ],
        None,
    );
    check(&r, 0, None);
    assert!(!r.timed_out());
    assert_eq!(r.interrupted(), None);
}

#[test]
fn programs_that_never_joined_succeed_with_code_0() {
    let mut r0 = rank(0, ExitKind::Code(0), 10, false);
    r0.joined = false;
    check(&report(vec![r0], None), 0, None);
}

#[test]
fn first_failure_in_time_gives_the_code() {
    let r = report(
        vec![
            rank(0, ExitKind::Code(0), 300, true),
            rank(1, ExitKind::Code(0), 100, false),
            rank(2, ExitKind::Signal(9), 153, false),
            rank(3, ExitKind::Code(1), 201, false),
        ],
        None,
    );
    check(
        &r,
        137,
        Some(
            "pertinax: rank 1 (pid 4241) exited with code 0 without finalizing at 0.1 s\n\
             pertinax: rank 2 (pid 4242) killed by SIGKILL at 0.153 s\n\
             pertinax: rank 3 (pid 4243) exited with code 1 at 0.201 s",
        ),
    );
}

#[test]
fn exit_0_without_finalizing_is_reported_but_keeps_status_0() {
    let r = report(vec![rank(0, ExitKind::Code(0), 50, false)], None);
    check(
        &r,
        0,
        Some("pertinax: rank 0 (pid 4240) exited with code 0 without finalizing at 0.05 s"),
    );
}

#[test]
fn timeout_gives_124_and_hides_the_ranks_it_terminated() {
    let stop = Stop {
        at: ms(5000),
        cause: StopCause::Timeout { limit: ms(5000) },
    };
    let r = report(
        vec![
            rank(0, ExitKind::Signal(15), 5001, false),
            rank(1, ExitKind::Signal(9), 6001, false),
        ],
        Some(stop),
    );
    assert!(r.timed_out());
    check(
        &r,
        124,
        Some("pertinax: job timed out after 5 s; ranks still running were terminated"),
    );
}

#[test]
fn a_failure_before_the_stop_wins() {
    let stop = Stop {
        at: ms(1000),
        cause: StopCause::Signal(2),
    };
    let r = report(
        vec![
            rank(0, ExitKind::Code(3), 400, false),
            rank(1, ExitKind::Signal(2), 1002, false),
        ],
        Some(stop),
    );
    assert_eq!(r.interrupted(), Some(2));
    check(
        &r,
        3,
        Some(
            "pertinax: rank 0 (pid 4240) exited with code 3 at 0.4 s\n\
             pertinax: interrupted by SIGINT at 1 s; ranks still running were terminated",
        ),
    );
}

#[test]
fn abort_gives_its_code() {
    let stop = Stop {
        at: ms(250),
        cause: StopCause::Abort {
            slot: 1,
            code: 7,
            message: "bad input".into(),
        },
    };
    // The aborting rank itself ended at the stop: not a failure of its own.
    let r = report(
        vec![
            rank(0, ExitKind::Signal(15), 260, false),
            rank(1, ExitKind::Code(1), 250, false),
        ],
        Some(stop),
    );
    check(
            &r,
            7,
            Some("pertinax: rank 1 aborted the job (code 7) at 0.25 s; ranks still running were terminated"),
        );
}

#[test]
fn injected_deaths_are_listed_but_keep_status_0() {
    let killed = ExitKind::Signal(libc::SIGKILL);
    let injected = Cause::Injected {
        point: "send".into(),
        hit: 3,
        signal: libc::SIGKILL,
    };
    let mut r = report(
        vec![
            rank(0, ExitKind::Code(0), 300, true),
            with(rank(1, killed, 100, false), Role::Rank, Some(injected)),
            with(
                rank(2, killed, 150, false),
                Role::Rank,
                Some(Cause::Launcher {
                    signal: libc::SIGKILL,
                }),
            ),
            with(
                rank(3, killed, 200, false),
                Role::Rank,
                Some(Cause::Heartbeat { injected: true }),
            ),
        ],
        None,
    );
    r.schedule = vec!["1@*#3".parse().unwrap()];
    check(
            &r,
            0,
            Some(
                "pertinax: fault schedule: rank 1 at hit 3 of any point (kill)\n\
             pertinax: rank 1 (pid 4241) killed by SIGKILL at 0.1 s (injected at hit 3 of point send)\n\
             pertinax: rank 2 (pid 4242) killed by SIGKILL at 0.15 s (injected: SIGKILL from the launcher)\n\
             pertinax: rank 3 (pid 4243) killed by SIGKILL at 0.2 s (injected stop, then heartbeat timeout)",
            ),
        );
    // A real failure after injected ones gives the status.
    r.ranks[0].end = ExitKind::Code(4);
    assert_eq!(r.exit_code(), 4);
}

#[test]
fn with_resilient_communicators_deaths_are_listed_but_keep_status_0() {
    let p = Panic {
        thread: "main".into(),
        place: "src/main.rs:7:5".into(),
        message: "boom".into(),
    };
    let mut panicked = rank(3, ExitKind::Code(101), 300, false);
    panicked.panic = Some(p);
    let mut r = report(
        vec![
            rank(0, ExitKind::Code(0), 500, true),
            rank(1, ExitKind::Signal(libc::SIGKILL), 100, false),
            rank(2, ExitKind::Signal(libc::SIGSEGV), 200, false),
            panicked,
            rank(4, ExitKind::Code(0), 450, true),
        ],
        None,
    );
    let deaths = "pertinax: rank 1 (pid 4241) killed by SIGKILL at 0.1 s\n\
                  pertinax: rank 2 (pid 4242) killed by SIGSEGV at 0.2 s\n\
                  pertinax: rank 3 (pid 4243) panicked at src/main.rs:7:5 at 0.3 s: boom";
    check(&r, 137, Some(deaths));
    r.resilient = true;
    check(&r, 0, Some(deaths));
    // A spawned process that dies is a death like a rank's.
    r.others = vec![with(
        rank(5, ExitKind::Signal(libc::SIGKILL), 350, false),
        Role::Spawned {
            parent: 0,
            index: 0,
        },
        None,
    )];
    assert_eq!(r.exit_code(), 0);
    // A process that ends on its own with a failure still fails the
    // job, even after the deaths.
    r.ranks[4].end = ExitKind::Code(3);
    assert_eq!(r.exit_code(), 3);
    r.ranks[4].end = ExitKind::Code(0);
    // So does the launcher's stop.
    r.stop = Some(Stop {
        at: ms(600),
        cause: StopCause::Timeout { limit: ms(600) },
    });
    assert_eq!(r.exit_code(), 124);
}

#[test]
fn with_resilient_communicators_the_death_of_every_rank_fails_the_job() {
    let mut r = report(
        vec![
            rank(0, ExitKind::Signal(libc::SIGSEGV), 300, false),
            rank(1, ExitKind::Signal(libc::SIGKILL), 100, false),
        ],
        None,
    );
    r.resilient = true;
    check(
        &r,
        137,
        Some(
            "pertinax: rank 1 (pid 4241) killed by SIGKILL at 0.1 s\n\
             pertinax: rank 0 (pid 4240) killed by SIGSEGV at 0.3 s",
        ),
    );
    // As without resilient communicators, injected deaths do not count.
    r.ranks[1].cause = Some(Cause::Launcher {
        signal: libc::SIGKILL,
    });
    assert_eq!(r.exit_code(), 139);
    // One rank that ended on its own is a survivor, whatever its code.
    r.ranks[1] = rank(1, ExitKind::Code(0), 400, true);
    assert_eq!(r.exit_code(), 0);
    r.ranks[1].end = ExitKind::Code(2);
    assert_eq!(r.exit_code(), 2);
}

#[test]
fn a_heartbeat_timeout_is_a_failure() {
    let r = report(
        vec![with(
            rank(0, ExitKind::Signal(libc::SIGKILL), 2000, false),
            Role::Rank,
            Some(Cause::Heartbeat { injected: false }),
        )],
        None,
    );
    check(
        &r,
        137,
        Some("pertinax: rank 0 (pid 4240) killed by SIGKILL at 2 s (heartbeat timeout)"),
    );
}

#[test]
fn spares_and_spawned_processes_are_labelled_by_slot() {
    let mut r = report(
        vec![
            rank(0, ExitKind::Code(0), 500, true),
            rank(1, ExitKind::Code(2), 100, false),
        ],
        None,
    );
    r.others = vec![
        // Idle spares are never failures, whatever their end.
        with(
            rank(2, ExitKind::Signal(9), 50, false),
            Role::IdleSpare,
            None,
        ),
        with(
            rank(3, ExitKind::Signal(9), 110, false),
            Role::Spare {
                parent: 1,
                index: 0,
            },
            Some(Cause::ParentFailed { parent: 1 }),
        ),
        with(
            rank(4, ExitKind::Code(5), 120, false),
            Role::Spawned {
                parent: 3,
                index: 1,
            },
            None,
        ),
        with(
            rank(5, ExitKind::Code(127), 130, false),
            Role::Spawned {
                parent: 0,
                index: 0,
            },
            Some(Cause::NotStarted {
                error: "out of memory".into(),
            }),
        ),
    ];
    check(
            &r,
            2,
            Some(
                "pertinax: rank 1 (pid 4241) exited with code 2 at 0.1 s\n\
             pertinax: slot 3 (spare assigned by rank 1) (pid 4243) killed by SIGKILL at 0.11 s (its parent rank 1 failed)\n\
             pertinax: slot 4 (spawned by slot 3) (pid 4244) exited with code 5 at 0.12 s\n\
             pertinax: slot 5 (spawned by rank 0) could not be started at 0.13 s: out of memory",
            ),
        );
    // Without rank 1's failure, the spawned process's code tells; the
    // one killed because of its parent does not.
    r.ranks[1].end = ExitKind::Code(0);
    r.ranks[1].finalized = true;
    assert_eq!(r.exit_code(), 5);
    assert_eq!(r.label(&r.others[0]), "slot 2 (idle spare)");
}

/// A process that took over a rank is named by that rank (as it calls
/// itself) and its slot, also as the parent of what it spawned and as
/// the process that aborted the job.
#[test]
fn replacements_are_labelled_by_the_rank_they_took_over() {
    let mut r = report(
        vec![
            rank(0, ExitKind::Code(0), 500, true),
            with(
                rank(1, ExitKind::Signal(9), 100, false),
                Role::Rank,
                Some(Cause::Launcher { signal: 9 }),
            ),
        ],
        None,
    );
    let mut spare = with(
        rank(2, ExitKind::Code(3), 200, false),
        Role::Spare {
            parent: 0,
            index: 0,
        },
        None,
    );
    spare.replaces = Some(1);
    let mut fresh = with(
        rank(3, ExitKind::Code(4), 300, false),
        Role::Spawned {
            parent: 2,
            index: 0,
        },
        None,
    );
    fresh.replaces = None;
    r.others = vec![spare, fresh];
    check(
            &r,
            3,
            Some(
                "pertinax: rank 1 (pid 4241) killed by SIGKILL at 0.1 s (injected: SIGKILL from the launcher)\n\
             pertinax: rank 1 (replacement, slot 2) (pid 4242) exited with code 3 at 0.2 s\n\
             pertinax: slot 3 (spawned by rank 1 (replacement, slot 2)) (pid 4243) exited with code 4 at 0.3 s",
            ),
        );
    r.stop = Some(Stop {
        cause: StopCause::Abort {
            slot: 2,
            code: 7,
            message: "bad".into(),
        },
        at: ms(250),
    });
    let summary = r.summary().unwrap();
    assert!(
            summary.ends_with(
                "pertinax: rank 1 (replacement, slot 2) aborted the job (code 7) at 0.25 s; ranks still running were terminated"
            ),
            "{summary}"
        );
}

fn panicked(mut p: ProcOutcome, thread: &str, place: &str, message: &str) -> ProcOutcome {
    p.panic = Some(Panic {
        thread: thread.into(),
        place: place.into(),
        message: message.into(),
    });
    p
}

#[test]
fn a_panic_seen_on_stderr_is_told_with_its_place_and_message() {
    let code = ExitKind::Code(101);
    let r = report(
        vec![
            rank(0, ExitKind::Code(0), 400, true),
            rank(1, code, 100, false),
            panicked(
                rank(2, code, 153, false),
                "main",
                "src/main.rs:10:5",
                "boom",
            ),
            panicked(rank(3, code, 200, false), "<unnamed>", "src/w.rs:2:9", ""),
            // A hook of its own ended it with another code.
            panicked(
                rank(4, ExitKind::Code(3), 300, false),
                "main",
                "a.rs:1:1",
                "x",
            ),
        ],
        None,
    );
    check(
            &r,
            101,
            Some(
                "pertinax: rank 1 (pid 4241) exited with code 101 (a panic: its message and place are above) at 0.1 s\n\
             pertinax: rank 2 (pid 4242) panicked at src/main.rs:10:5 at 0.153 s: boom\n\
             pertinax: rank 3 (pid 4243) panicked in thread '<unnamed>' at src/w.rs:2:9 at 0.2 s\n\
             pertinax: rank 4 (pid 4244) exited with code 3 at 0.3 s",
            ),
        );
}

#[test]
fn an_injected_panic_gives_its_cause_before_the_message() {
    let injected = Cause::Injected {
        point: "send".into(),
        hit: 3,
        signal: 0,
    };
    let p = panicked(
        rank(1, ExitKind::Code(101), 100, false),
        "main",
        "crates/pertinax/src/fault.rs:40:9",
        "injected panic",
    );
    let r = report(
        vec![
            rank(0, ExitKind::Code(0), 300, true),
            with(p, Role::Rank, Some(injected)),
        ],
        None,
    );
    check(
        &r,
        0,
        Some(
            "pertinax: rank 1 (pid 4241) panicked at crates/pertinax/src/fault.rs:40:9 \
             at 0.1 s (injected at hit 3 of point send): injected panic",
        ),
    );
}

#[test]
fn seconds_are_trimmed() {
    assert_eq!(seconds(ms(153)), "0.153");
    assert_eq!(seconds(ms(100)), "0.1");
    assert_eq!(seconds(ms(5000)), "5");
    assert_eq!(seconds(Duration::from_micros(1)), "0");
    assert_eq!(seconds(ms(1500)), "1.5");
}
