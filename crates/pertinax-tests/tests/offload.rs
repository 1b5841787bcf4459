//! `pertinax-offload` through the real launcher: masters offload tasks to
//! boosters (`offload-ranks`, both roles), boosters are killed
//! (SIGKILL, SIGSTOP, panics, exits) before, during and after tasks,
//! while their tasks wait for clearance, during `free` (also at the
//! library's `shutdown` fault point), deep in nested allocations, in one
//! of two recover domains; results are collected by `taskwait`, `wait`
//! and `poll`; every result is checked bitwise against the value the
//! master computes itself (what a fault-free run returns). Also: task
//! types checked against their registration and the task's master
//! (`offload-ranks api`), one booster of the first group killed once
//! by the per-group fault point (`task.G.B`) with the job's status 0, and
//! the error that says which `--max-spawn` to pass. Every job has a
//! wall-clock bound, and the harness checks that none of its processes
//! (boosters included) survives it.

use pertinax_harness::{run, Job, Spec};
use pertinax_tests::scenario::Offload;
use pertinax_wire::rng::SplitMix64;

/// A job of `masters` masters of `offload-ranks run ARGS` (`ARGS`: the
/// scenario's keys, separated by spaces).
fn spec(masters: usize, args: &str) -> Spec<'static> {
    let args: Vec<&str> = args.split_whitespace().collect();
    let s = Spec::scenario(masters, Offload::Run, &args)
        .program(std::path::PathBuf::from(env!(
            "CARGO_BIN_EXE_offload-ranks"
        )))
        .bound(60);
    if pertinax_harness::on_mpi() {
        // mpirun spawns without a limit of its own.
        s
    } else {
        s.launcher_arg("--max-spawn").launcher_arg("256")
    }
}

/// Runs a job; every master must print `OK` (its checks passed) and none
/// `FAIL`. Returns the job and the masters' `OK` lines.
fn check(masters: usize, args: &str) -> (Job, Vec<String>) {
    check_spec(masters, spec(masters, args))
}

fn check_spec(masters: usize, s: Spec<'static>) -> (Job, Vec<String>) {
    let j = run(s);
    let oks: Vec<String> = j
        .stdout
        .lines()
        .filter(|l| l.starts_with("OK run"))
        .map(str::to_string)
        .collect();
    assert!(
        oks.len() == masters && !j.stdout.contains("FAIL"),
        "code {:?} after {:?}\n{}\n{}",
        j.code,
        j.elapsed,
        j.stdout,
        j.stderr
    );
    (j, oks)
}

/// The number after `key=` in an `OK` line.
fn field(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}

#[test]
fn fault_free_shared_and_private_allocations() {
    for (args, right) in [
        ("alloc=world boosters=3 tasks=5 rounds=2", 10),
        ("alloc=self boosters=2 tasks=4 rounds=2", 8),
    ] {
        let (j, oks) = check(3, args);
        assert_eq!(j.code, Some(0), "{args}: {}", j.stderr);
        for l in &oks {
            assert_eq!(field(l, "recoveries"), 0, "{l}");
            assert_eq!(field(l, "right"), right, "{l}");
        }
    }
}

#[test]
fn a_booster_killed_during_a_task_is_recovered_shared() {
    let (_, oks) = check(2, "boosters=2 tasks=3 faults=1.1:kill:during");
    // Failure consensus: every master recovered, the same once.
    for l in &oks {
        assert_eq!(field(l, "recoveries"), 1, "{l}");
        assert_eq!(field(l, "right"), 3, "{l}");
    }
}

/// Master 0's task finishes at once and waits for clearance while master
/// 1's task, on the other booster, runs 300 ms and its booster dies: the
/// masters agree on the failure and master 0's finished task is run again
/// too (its output was held, never handed out).
#[test]
fn a_finished_task_waiting_for_clearance_is_re_executed() {
    let (_, oks) = check(2, "boosters=2 tasks=1 ms=300 faults=1.0:kill:during");
    for l in &oks {
        assert_eq!(
            (
                field(l, "recoveries"),
                field(l, "reexec"),
                field(l, "right")
            ),
            (1, 1, 1),
            "{l}"
        );
    }
}

#[test]
fn a_private_booster_killed_is_recovered_by_its_master_only() {
    let (_, oks) = check(2, "alloc=self boosters=2 tasks=3 faults=0.1:kill:during");
    let rec: Vec<u64> = oks.iter().map(|l| field(l, "recoveries")).collect();
    assert_eq!(rec.iter().sum::<u64>(), 1, "{oks:?}");
}

#[test]
fn kills_before_a_task_panics_and_exits() {
    for f in ["0.0:kill:before", "1.2:panic:before", "0.1:exit:during"] {
        let (_, oks) = check(2, &format!("boosters=2 tasks=3 faults={f}"));
        assert!(
            oks.iter().all(|l| field(l, "recoveries") == 1),
            "{f}: {oks:?}"
        );
    }
}

#[test]
fn several_failures_in_a_row() {
    // The task fails at its first, second and third execution.
    let (_, oks) = check(
        2,
        "boosters=2 tasks=2 faults=0.1:kill:during:0,0.1:panic:before:1,0.1:exit:during:2",
    );
    assert!(oks.iter().all(|l| field(l, "recoveries") == 3), "{oks:?}");
}

#[test]
fn kills_after_tasks_while_waiting_for_clearance_and_during_free() {
    // A booster dies a few ms after its task returned: while its task
    // waits for clearance (then it is re-executed), or during free (then
    // nothing is lost). Either way every result is right.
    for ms in [1, 5, 20, 60] {
        check(
            2,
            &format!("boosters=2 tasks=3 rounds=2 ms={ms} faults=0.0:kill:after,1.1:kill:after"),
        );
    }
}

#[test]
fn without_recover_a_task_fails_and_hands_its_input_back() {
    let (_, oks) = check(
        2,
        "boosters=2 tasks=3 recover=0 expect=lost faults=1.1:kill:during",
    );
    assert!(oks.iter().any(|l| field(l, "failed") > 0), "{oks:?}");
}

#[test]
fn the_retry_limit_ends_with_a_typed_error() {
    let (_, oks) = check(
        1,
        "alloc=self boosters=1 tasks=1 attempts=2 expect=retries faults=0.0:kill:during:0,0.0:kill:during:1",
    );
    assert_eq!(field(&oks[0], "failed"), 1, "{oks:?}");
}

#[test]
fn spares_replace_a_failed_group_without_a_spawn() {
    let (_, oks) = check(2, "boosters=2 tasks=2 spares=1 faults=0.1:kill:during");
    for l in &oks {
        assert_eq!(field(l, "spares_used"), 1, "{l}");
    }
    // More failures than spares: the next recovery spawns.
    let (_, oks) = check(
        2,
        "boosters=2 tasks=2 spares=1 faults=0.1:kill:during:0,0.1:kill:during:1",
    );
    for l in &oks {
        assert_eq!(
            (field(l, "recoveries"), field(l, "spares_used")),
            (2, 1),
            "{l}"
        );
    }
}

/// A task replicated on two boosters: the replica's result wins when the
/// task fails on its own booster; without the replica the same task fails
/// with its error and its input; replicas are re-run after a booster
/// failure like any task.
#[test]
fn a_replica_wins_when_the_task_fails_on_its_booster() {
    let (_, oks) = check(2, "boosters=2 tasks=3 replicate=1 faults=0.1:error:before");
    assert!(oks.iter().all(|l| field(l, "right") == 3), "{oks:?}");
    let (_, oks) = check(2, "boosters=2 tasks=3 expect=task faults=0.1:error:before");
    let failed: u64 = oks.iter().map(|l| field(l, "failed")).sum();
    assert_eq!(failed, 1, "{oks:?}");
    let (_, oks) = check(
        2,
        "boosters=3 tasks=3 replicate=1 faults=1.1:kill:during,0.0:error:before",
    );
    assert!(
        oks.iter()
            .all(|l| field(l, "right") == 3 && field(l, "recoveries") == 1),
        "{oks:?}"
    );
}

#[test]
fn a_recover_domain_of_communicating_tasks_restarts_together() {
    // Ring exchanges among the boosters (explicit domain); booster 1 of
    // the second round is killed mid-exchange.
    let (_, oks) = check(2, "kind=ring boosters=3 rounds=3 faults=0.4:kill:during");
    let master0 = oks.iter().find(|l| l.contains("rank=0 ")).expect("rank 0");
    assert_eq!(field(master0, "right"), 9, "{oks:?}");
    assert!(oks.iter().all(|l| field(l, "recoveries") == 1), "{oks:?}");
}

#[test]
fn a_nested_worker_failure_is_recovered_by_its_slave_only() {
    let (_, oks) = check(
        2,
        "kind=nested boosters=2 tasks=2 workers=2 faults=0.1.1:kill:during,1.0.0:panic:before",
    );
    for l in &oks {
        assert_eq!(field(l, "recoveries"), 0, "recovered above the slave: {l}");
    }
    let inner: u64 = oks.iter().map(|l| field(l, "inner")).sum();
    assert_eq!(inner, 2, "{oks:?}");
}

#[test]
fn a_slave_killed_with_its_workers_running_is_recovered_at_the_top() {
    let (_, oks) = check(
        2,
        "kind=nested boosters=2 tasks=2 workers=2 faults=1.1:kill:during",
    );
    assert!(oks.iter().all(|l| field(l, "recoveries") == 1), "{oks:?}");
}

#[test]
fn a_stopped_booster_is_found_by_heartbeats() {
    let s = spec(2, "boosters=2 tasks=2 faults=0.1:stop:during")
        .launcher_arg("--heartbeat")
        .launcher_arg("100");
    let (_, oks) = check_spec(2, s);
    assert!(oks.iter().all(|l| field(l, "recoveries") == 1), "{oks:?}");
}

#[test]
fn the_launchers_fault_plan_reaches_booster_tasks() {
    // A shot without a victim strikes every process at its second
    // `fault_point("task")`: the first booster, at round 2 (the boosters
    // started later run only one or two tasks each).
    let s = spec(1, "alloc=self boosters=1 tasks=1 rounds=3").env("PERTINAX_FAULTS", "task@2");
    let (j, oks) = check_spec(1, s);
    assert!(field(&oks[0], "recoveries") >= 1, "{oks:?}\n{}", j.stderr);
}

/// `Boosters::wait` on each task in turn (the first waits for the
/// implicit domain, collectively) and a `Boosters::poll` loop on each task
/// until it is no longer running, then a `taskwait` (every task then polls
/// as cleared); fault free, shared and private, and with a booster killed
/// during a task: the poll loop ends (`AwaitingRecovery`) instead of
/// spinning, and the wait recovers.
#[test]
fn wait_on_single_tasks_and_poll_until_done() {
    for collect in ["wait", "poll"] {
        for alloc in ["world", "self"] {
            let args = format!("alloc={alloc} boosters=2 tasks=3 collect={collect}");
            let (_, oks) = check(2, &args);
            for l in &oks {
                assert_eq!(
                    (field(l, "right"), field(l, "recoveries")),
                    (3, 0),
                    "{args}: {l}"
                );
                if collect == "poll" {
                    // Finished, held until the taskwait.
                    assert_eq!(field(l, "waiting"), 3, "{args}: {l}");
                }
            }
        }
        let args = format!("boosters=2 tasks=3 collect={collect} faults=1.1:kill:during");
        let (_, oks) = check(2, &args);
        for l in &oks {
            assert_eq!(
                (field(l, "right"), field(l, "recoveries")),
                (3, 1),
                "{args}: {l}"
            );
        }
        if collect == "poll" {
            // Master 1 polls its killed task: its loop ends on the failure.
            let awaiting: u64 = oks.iter().map(|l| field(l, "awaiting")).sum();
            assert!(awaiting >= 1, "{args}: {oks:?}");
        }
    }
}

/// Boosters killed when they receive the masters' shutdown in `free` (the
/// library's `shutdown.B` and `shutdown` fault points): one booster; every
/// booster and every spare; every slave and every nested worker (in the
/// slaves' own `free`). Every task was cleared before, so every result is
/// right and nothing is re-executed; `free` returns at every master
/// (neither hangs nor fails) and the job ends before its bound.
#[test]
fn boosters_killed_at_shutdown_lose_nothing() {
    for (args, plan) in [
        ("boosters=2 tasks=3 rounds=2", "shutdown.1@1"),
        ("boosters=2 tasks=3 spares=1", "shutdown@1"),
        ("kind=nested boosters=2 tasks=2 workers=2", "shutdown@1"),
    ] {
        let s = spec(2, args).env("PERTINAX_FAULTS", plan);
        let (j, oks) = check_spec(2, s);
        for l in &oks {
            assert_eq!(
                (
                    field(l, "recoveries"),
                    field(l, "reexec"),
                    field(l, "inner")
                ),
                (0, 0, 0),
                "{args} with {plan}: {l}"
            );
        }
        assert!(
            j.stderr.contains("shutdown"),
            "{args} with {plan}: no kill reported\n{}",
            j.stderr
        );
        assert!(
            j.code.is_some() && j.elapsed.as_secs() < 30,
            "{args} with {plan}: code {:?} after {:?}\n{}",
            j.code,
            j.elapsed,
            j.stderr
        );
    }
}

/// The `EXEC` lines of a `kind=domains` job: executions per (master, task).
fn executions(stdout: &str) -> std::collections::BTreeMap<(u64, u64), u64> {
    let mut n = std::collections::BTreeMap::new();
    for l in stdout.lines().filter(|l| l.starts_with("EXEC ")) {
        *n.entry((field(l, "master"), field(l, "task"))).or_insert(0) += 1;
    }
    n
}

/// Two named recover domains per master: `a` (tasks 0-1, booster 0) and
/// `b` (tasks 2-3, booster 1). The masters wait for `b` first: `b` is
/// cleared and `a` is not (the program checks both with `poll`). Then a
/// kill in `a` (master 0's task 0, 500 ms into it, after `b` was cleared)
/// restarts the tasks of `a` only: each task of `b` ran once, and each
/// master re-executed exactly its two tasks of `a`. The kill job waits
/// with `Boosters::wait` on each domain's first task.
#[test]
fn two_recover_domains_a_kill_in_one_restarts_only_its_tasks() {
    let (j, oks) = check(2, "kind=domains boosters=2 tasks=2");
    for l in &oks {
        assert_eq!((field(l, "right"), field(l, "recoveries")), (4, 0), "{l}");
    }
    let n = executions(&j.stdout);
    assert!(n.len() == 8 && n.values().all(|&c| c == 1), "{n:?}");

    let (j, oks) = check(
        2,
        "kind=domains collect=wait boosters=2 tasks=2 ms=500 faults=0.0:kill:during",
    );
    for l in &oks {
        assert_eq!(
            (
                field(l, "right"),
                field(l, "recoveries"),
                field(l, "reexec")
            ),
            (4, 1, 2),
            "{l}"
        );
    }
    let n = executions(&j.stdout);
    assert_eq!(n.len(), 8, "{n:?}\n{}", j.stdout);
    for ((m, k), c) in &n {
        match k {
            // Domain b: cleared before the kill, never run again.
            2 | 3 => assert_eq!(*c, 1, "master {m} task {k}: {n:?}"),
            // The killed task ran twice; the others of a, queued behind
            // it on booster 0, once or twice.
            _ if (*m, *k) == (0, 0) => assert_eq!(*c, 2, "{n:?}"),
            _ => assert!((1..=2).contains(c), "master {m} task {k}: {n:?}"),
        }
    }
}

/// A seeded random configuration for the campaign.
fn random_args(seed: u64, heartbeats: bool) -> (usize, String) {
    let mut r = SplitMix64::new(seed);
    let masters = 1 + r.below_mod(3) as usize;
    let boosters = 1 + r.below_mod(3) as usize;
    let tasks = 1 + r.below_mod(3) as usize;
    let rounds = 1 + r.below_mod(2) as usize;
    let kind = ["work", "work", "ring", "nested"][r.below_mod(4) as usize];
    let alloc = if r.below_mod(2) == 0 { "self" } else { "world" };
    let spares = r.below_mod(2);
    let workers = 1 + r.below_mod(2) as usize;
    let replicate = r.below_mod(3) == 0;
    let nfaults = r.below_mod(4);
    let mut faults = Vec::new();
    for _ in 0..nfaults {
        let (m, k) = if kind == "ring" {
            (0, r.below_mod((boosters * rounds) as u64) as usize)
        } else {
            (
                r.below_mod(masters as u64) as usize,
                r.below_mod((tasks * rounds) as u64) as usize,
            )
        };
        let hows: &[&str] = if heartbeats {
            &["kill", "kill", "panic", "exit", "stop"]
        } else {
            &["kill", "kill", "panic", "exit"]
        };
        let how = hows[r.below_mod(hows.len() as u64) as usize];
        let when = ["before", "during", "after"][r.below_mod(3) as usize];
        let attempt = r.below_mod(2);
        let who = if kind == "nested" && r.below_mod(2) == 0 {
            format!("{m}.{k}.{}", r.below_mod(workers as u64))
        } else {
            format!("{m}.{k}")
        };
        faults.push(format!("{who}:{how}:{when}:{attempt}"));
    }
    let args = format!(
        "alloc={alloc} boosters={boosters} tasks={tasks} rounds={rounds} kind={kind} spares={spares} workers={workers} replicate={} ms={} faults={}",
        u8::from(replicate),
        1 + r.below_mod(20),
        faults.join(",")
    );
    (masters, args)
}

/// Random kills over every kind of allocation and task: each job's
/// results must be right at every master, within the bound, without
/// leftovers. `PERTINAX_OFFLOAD_CAMPAIGN=N` sets the number of jobs
/// (default 20), `PERTINAX_OFFLOAD_SEED` the first seed.
#[test]
fn randomized_campaign() {
    let n: u64 = pertinax_harness::env_count("PERTINAX_OFFLOAD_CAMPAIGN", 20);
    let first: u64 = pertinax_harness::env_count("PERTINAX_OFFLOAD_SEED", 1);
    let heartbeats = !pertinax_harness::on_mpi();
    let (mut hangs, mut wrong) = (Vec::new(), Vec::new());
    let mut recoveries = 0u64;
    for seed in first..first + n {
        let (masters, args) = random_args(seed, heartbeats);
        let mut s = spec(masters, &args).bound(90);
        if heartbeats {
            // 100 ms periods (1 s of silence): with 20 ms, a master and a
            // booster printing a panic's backtrace on the loaded 2-core
            // machine were both killed as silent (seed 388 of a 500-job
            // run).
            s = s.launcher_arg("--heartbeat").launcher_arg("100");
        }
        let j = run(s.protocol_mix(seed));
        let oks: Vec<&str> = j
            .stdout
            .lines()
            .filter(|l| l.starts_with("OK run"))
            .collect();
        // A job that reached its bound hung, whatever its masters printed
        // (a spawned process that never ends is a hang too).
        if j.elapsed.as_secs() >= 90 {
            hangs.push(format!("seed {seed}: {masters} masters {args}"));
        } else if oks.len() == masters && !j.stdout.contains("FAIL") {
            recoveries += oks.iter().map(|l| field(l, "recoveries")).sum::<u64>();
        } else {
            wrong.push(format!(
                "seed {seed}: {masters} masters {args}\n{}\n{}",
                j.stdout, j.stderr
            ));
        }
    }
    eprintln!(
        "offload campaign: {n} jobs from seed {first}: {} hung, {} wrong, {recoveries} recoveries",
        hangs.len(),
        wrong.len()
    );
    assert!(
        hangs.is_empty() && wrong.is_empty(),
        "hangs: {hangs:#?}\nwrong: {wrong:#?}"
    );
}

/// The library's interface (`offload-ranks api`, on 2 and 3 masters):
/// allocations over an `Rc<Comm>` and a `Box<Comm>`; a task registered as
/// `u64 -> u64` offloaded with a `String` input, then with a `String`
/// output, fails at its master with `Error::TypeMismatch` naming both
/// signatures (it used to return a value); `TaskContext::master` is the
/// offloading master's rank.
#[test]
fn types_are_checked_and_a_task_knows_its_master() {
    for masters in [2, 3] {
        let s = Spec::scenario(masters, Offload::Api, &[])
            .program(std::path::PathBuf::from(env!(
                "CARGO_BIN_EXE_offload-ranks"
            )))
            .bound(60);
        let s = if pertinax_harness::on_mpi() {
            s
        } else {
            s.launcher_arg("--max-spawn").launcher_arg("64")
        };
        let j = run(s);
        let oks = j.stdout.lines().filter(|l| l.starts_with("OK api")).count();
        assert!(
            oks == masters && !j.stdout.contains("FAIL") && j.code == Some(0),
            "code {:?}\n{}\n{}",
            j.code,
            j.stdout,
            j.stderr
        );
    }
}

/// The launcher's report of the injected kills of a job (`... killed by
/// SIGKILL at 0.013 s (injected at hit 2 of point task.0.1)`).
fn injected_kills(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("(injected at"))
        .collect()
}

/// The point of a one-shot plan `POINT@K`.
fn point(plan: &str) -> &str {
    plan.split('@').next().unwrap_or(plan)
}

/// A plan that names one booster of the first group (`task.0.1@K`, the
/// library's per-group fault point): exactly that booster dies, once (its
/// replacement, generation 1, runs the same tasks and is not struck), the
/// masters recover once, every result is right, and the job, whose only
/// failure was recovered, exits 0 (the killed booster's siblings leave
/// with code 0). Shared allocations over 1 to 3 masters, several rounds,
/// and a private allocation of one master.
#[test]
fn one_booster_of_the_first_group_dies_once_and_the_job_exits_0() {
    for (masters, args, plan) in [
        (2, "boosters=2 tasks=3 rounds=3", "task.0.1@2"),
        (3, "boosters=3 tasks=2 rounds=2", "task.0.0@1"),
        (1, "alloc=self boosters=2 tasks=2 rounds=3", "task.0.1@1"),
        (2, "kind=ring boosters=3 rounds=3", "task.0.2@2"),
        (2, "boosters=2 tasks=2 rounds=2", "task.0.1@2:panic"),
    ] {
        let s = spec(masters, args).env("PERTINAX_FAULTS", plan);
        let (j, oks) = check_spec(masters, s);
        for l in &oks {
            assert_eq!(field(l, "recoveries"), 1, "{args} with {plan}: {l}");
        }
        if !pertinax_harness::on_mpi() {
            // mpirun reports the SIGKILLed booster in its own status.
            assert_eq!(
                j.code,
                Some(0),
                "{args} with {plan}: a recovered job\n{}",
                j.stderr
            );
            let kills = injected_kills(&j.stderr);
            assert!(
                kills.len() == 1 && kills[0].contains(&format!("point {}", point(plan))),
                "{args} with {plan}: {kills:?}\n{}",
                j.stderr
            );
        }
    }
}

/// A new user's program under random booster kills: seeded shared or
/// private allocations of 1 to 3 boosters over 1 to 3 masters, plain or
/// ring tasks, and one or two shots at the library's per-group points
/// (`task.G.B@K`: booster B of group generation G, at its K-th task, so
/// a replacement group may be struck too), killed or panicking. Every
/// master's results are right, and every job, whose failures were all
/// recovered, exits 0. `PERTINAX_OFFLOAD_EXIT_RUNS` sets the number of
/// jobs (16 by default); the summary line counts the injected kills.
#[test]
fn random_booster_kills_of_a_recovered_job_exit_0() {
    let runs: u64 = pertinax_harness::env_count("PERTINAX_OFFLOAD_EXIT_RUNS", 16);
    let t0 = std::time::Instant::now();
    let (mut kills, mut recovered) = (0, 0);
    for seed in 1..=runs {
        let mut r = SplitMix64::new(0x6f66_666c ^ seed);
        let masters = 1 + r.below_mod(3) as usize;
        let boosters = 1 + r.below_mod(3) as usize;
        let rounds = 1 + r.below_mod(3) as usize;
        let ring = r.below_mod(3) == 0;
        let alloc = if r.below_mod(3) == 0 { "self" } else { "world" };
        let tasks = if ring {
            boosters
        } else {
            1 + r.below_mod(3) as usize
        };
        let args = if ring {
            format!("kind=ring alloc={alloc} boosters={boosters} rounds={rounds}")
        } else {
            format!("alloc={alloc} boosters={boosters} tasks={tasks} rounds={rounds}")
        };
        let shots: Vec<String> = (0..1 + r.below_mod(2))
            .map(|g| {
                // On MPI, a booster that panics outside a task finalizes
                // while unwinding, and MPI never fails a receive from a
                // finalized process: its master would wait (kills only).
                let panic = r.below_mod(4) == 0 && !pertinax_harness::on_mpi();
                let how = if panic { ":panic" } else { "" };
                format!(
                    "task.{g}.{}@{}{how}",
                    r.below_mod(boosters as u64),
                    1 + r.below_mod((tasks * rounds) as u64)
                )
            })
            .collect();
        let plan = shots.join(",");
        let what = format!("seed {seed}: {masters} masters, {args}, {plan}");
        let s = spec(masters, &args).env("PERTINAX_FAULTS", &plan);
        let (j, oks) = check_spec(masters, s);
        let rec: u64 = oks.iter().map(|l| field(l, "recoveries")).sum();
        recovered += u64::from(rec > 0);
        if !pertinax_harness::on_mpi() {
            // mpirun reports a SIGKILLed booster in its own status.
            assert_eq!(j.code, Some(0), "{what}: a recovered job\n{}", j.stderr);
            let k = injected_kills(&j.stderr).len();
            assert!(
                k == 0 || rec > 0,
                "{what}: {k} kills, no recovery\n{}",
                j.stdout
            );
            kills += k;
        }
    }
    eprintln!(
        "offload exit campaign: {runs} jobs in {:.1} s, every one exit 0 with right results; \
         {kills} injected kills, {recovered} jobs recovered",
        t0.elapsed().as_secs_f64()
    );
}

/// Without a larger `--max-spawn` (its default is the number of ranks),
/// the first recovery of a shared allocation of one booster per master
/// finds no slot: the masters' error says which `--max-spawn` to pass,
/// and with exactly that the same job recovers and exits 0.
#[test]
fn without_room_to_respawn_the_error_says_which_max_spawn_to_pass() {
    if pertinax_harness::on_mpi() {
        // mpirun spawns without a limit of its own.
        return;
    }
    let prog = std::path::PathBuf::from(env!("CARGO_BIN_EXE_offload-ranks"));
    let job = |extra: &[&'static str]| {
        let mut s = Spec::scenario(2, Offload::Run, &["boosters=2", "tasks=2", "rounds=2"])
            .program(prog.clone())
            .bound(60)
            .env("PERTINAX_FAULTS", "task.0.1@1");
        for a in extra {
            s = s.launcher_arg(a);
        }
        run(s)
    };
    let j = job(&[]);
    assert!(
        j.stdout
            .contains("start the job with `pertinax run --max-spawn 4`")
            && j.code != Some(0),
        "code {:?}\n{}\n{}",
        j.code,
        j.stdout,
        j.stderr
    );
    let j = job(&["--max-spawn", "4"]);
    let oks: Vec<&str> = j
        .stdout
        .lines()
        .filter(|l| l.starts_with("OK run"))
        .collect();
    assert!(
        oks.len() == 2 && oks.iter().all(|l| field(l, "recoveries") == 1) && j.code == Some(0),
        "code {:?}\n{}\n{}",
        j.code,
        j.stdout,
        j.stderr
    );
}
