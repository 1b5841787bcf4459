//! `spawn-ranks` on the native backend: the same rank program that
//! `.ci/mpi-spawn` runs under `mpirun` (spawn across worlds there), so
//! both backends are held to the same checks. Every job has a wall-clock
//! bound and the harness checks that none of its processes survives it.

use pertinax_harness::{run, Job, Spec};
use pertinax_tests::scenario::Spawn;

fn spec(n: usize, scenario: Spawn, args: &[&str], max_spawn: usize) -> Spec<'static> {
    Spec::scenario(n, scenario, args)
        .program(std::path::PathBuf::from(env!("CARGO_BIN_EXE_spawn-ranks")))
        .bound(60)
        .launcher_arg("--max-spawn")
        .launcher_arg(&max_spawn.to_string())
}

fn lines<'a>(j: &'a Job, pat: &str) -> Vec<&'a str> {
    j.stdout.lines().filter(|l| l.contains(pat)).collect()
}

/// Three parents spawn two children: messages across, agreement, merge,
/// collectives on the merged communicator and on communicators split off
/// it, checked at all five processes.
#[test]
fn spawn_merge_and_split_across_parents_and_children() {
    let j = run(spec(3, Spawn::Cross, &["2"], 2));
    assert_eq!(j.code, Some(0), "{}\n{}", j.stdout, j.stderr);
    assert_eq!(lines(&j, " parent merged=").len(), 3, "{}", j.stdout);
    assert_eq!(lines(&j, " child merged=").len(), 2, "{}", j.stdout);
    assert!(!j.stdout.contains("FAIL"), "{}", j.stdout);
}

/// A spawn of a program that does not exist is `SpawnFailed` at every
/// parent, and a spawn afterwards works.
#[test]
fn a_missing_program_is_spawn_failed_everywhere() {
    let j = run(spec(2, Spawn::BadPath, &[], 2));
    assert_eq!(j.code, Some(0), "{}\n{}", j.stdout, j.stderr);
    assert_eq!(
        lines(&j, "error=SpawnFailed then parent").len(),
        2,
        "{}",
        j.stdout
    );
    assert_eq!(
        lines(&j, "OK bad_path rank=0 child").len(),
        1,
        "{}",
        j.stdout
    );
}

/// Name publishing: a name rank 0 publishes is found by every rank and
/// by a spawned child; a taken name, an unknown name and an unpublish of
/// what is not published are the typed errors (see `spawn-ranks names`).
#[test]
fn published_names_are_the_jobs() {
    let j = run(spec(3, Spawn::Names, &[], 1));
    assert_eq!(j.code, Some(0), "{}\n{}", j.stdout, j.stderr);
    assert_eq!(lines(&j, "OK names").len(), 4, "{}", j.stdout);
    assert_eq!(lines(&j, "parent published=yes").len(), 3, "{}", j.stdout);
    assert_eq!(lines(&j, "child found=yes").len(), 1, "{}", j.stdout);
    assert!(!j.stdout.contains("FAIL"), "{}", j.stdout);
}

/// The asker of a spawn dies once the two new processes are started
/// (`ft.spawn.started`): the job still ends within its bound, the other
/// parents each say what their spawn returned, and no process reports a
/// failure; the children start with the launcher's copy of their
/// assignment. (On MPI, where the asker hands the assignment out, the
/// other parents revoke the spawn's intercommunicator and each child ends
/// quietly saying its parents failed: `.ci/mpi-spawn`, which runs this
/// program under `mpirun`.)
#[test]
fn the_asker_dying_once_the_children_are_started_leaves_no_failure() {
    let j = run(spec(3, Spawn::AskerDies, &[], 2)
        .launcher_arg("--kill")
        .launcher_arg("0@ft.spawn.started#1"));
    assert!(!j.stdout.contains("FAIL"), "{}\n{}", j.stdout, j.stderr);
    assert!(
        j.stderr.contains("killed by SIGKILL at") && j.stderr.contains("point ft.spawn.started"),
        "{}",
        j.stderr
    );
    assert_eq!(lines(&j, " parent spawn=").len(), 2, "{}", j.stdout);
    assert_eq!(lines(&j, " child of=2").len(), 2, "{}", j.stdout);
}
