//! ULFM from C: the loop of `ulfm.c` (revoke, shrink, agree) with ranks
//! killed by the launcher and by themselves, and the non-blocking calls
//! of `iagree.c`.

use pertinax_harness::Spec;

use super::support::{bounded, job, ours, program};

/// The ULFM loop of `ulfm.c` (revoke, shrink, agree, redo) with one and
/// with two ranks killed inside their `MPI_Allreduce` (fault points by
/// call name): every survivor ends with the survivors' count as the sum.
#[test]
fn an_unchanged_c_ulfm_program_recovers_from_kills() {
    for (n, kills) in [
        (4, &["2@mpi.Allreduce#3"][..]),
        (5, &["1@mpi.Allreduce#2", "3@mpi.Allreduce#5"][..]),
        (4, &["0@mpi.Allreduce#1"][..]),
    ] {
        let j = job(n, "ulfm", kills);
        let survivors = n - kills.len();
        let what = format!("ulfm on {n} ranks, kills {kills:?}");
        j.expect(0, survivors, &what);
        for l in j.ok_lines() {
            assert!(
                l.contains(&format!("size={survivors} sum={survivors} ")),
                "{what}: {l}\n{}",
                j.stderr
            );
        }
        assert_eq!(j.stderr.matches("(injected").count(), kills.len(), "{what}");
    }
}

/// A rank killed while it holds a window lock (`killed_holder.c`, killed
/// in its first `MPI_Put` inside an exclusive lock of rank 0's window):
/// the next rank to ask for that lock gets `MPIX_ERR_PROC_FAILED` instead
/// of waiting forever; a file opened on the world, which holds the dead
/// rank, fails the same way at both survivors, and works on the world's
/// shrink.
#[test]
fn a_dead_lock_holder_and_a_dead_file_member_are_errors_not_hangs() {
    let j = job(3, "killed_holder", &["1@mpi.Put#1"]);
    let what = "killed_holder on 3 ranks, rank 1 killed in MPI_Put";
    j.expect(0, 2, what);
    for r in [0, 2] {
        let lock = if r == 2 { 101 } else { -1 };
        let want = format!("OK killed_holder rank={r} lock={lock} open=101");
        assert_eq!(
            j.rank_lines("OK", r),
            [want.as_str()],
            "{what}\n{}\n{}",
            j.stdout,
            j.stderr
        );
    }
    assert_eq!(
        j.stderr.matches("(injected").count(),
        1,
        "{what}\n{}",
        j.stderr
    );
}

/// A seeded campaign of the ULFM loop: 3 to 6 ranks, none, one or two of
/// them killed inside a random `MPI_Allreduce` (the round, or a redo) by
/// the launcher, and in one job of three (every job without a planned
/// kill) one more killing itself with `raise(SIGKILL)`; several at once
/// or in turn, never all but one. Every
/// job: the exit code (0, or 137 for the unplanned death), one `OK` per
/// survivor, each with the survivors' count as size and sum.
/// `PERTINAX_ABI_CAMPAIGN_RUNS` jobs (40 by default).
#[test]
fn the_c_ulfm_loop_survives_a_seeded_campaign() {
    let runs: u64 = pertinax_harness::env_count("PERTINAX_ABI_CAMPAIGN_RUNS", 40);
    let mut killed = 0;
    for seed in 0..runs {
        let mut r = pertinax_wire::rng::SplitMix64::new(seed);
        let n = 3 + r.below(4) as usize;
        let mut victims: Vec<usize> = (0..n).collect();
        let mut kills = Vec::new();
        // One job in four plans no kill: with no fault plan, the library
        // takes its fast paths (fast.rs), which then meet the failure.
        let planned = if r.below(4) == 0 { 0 } else { 1 + r.below(2) };
        for _ in 0..planned {
            let v = victims.remove(r.below(victims.len() as u64) as usize);
            kills.push(format!("{v}@mpi.Allreduce#{}", 1 + r.below(8)));
        }
        // One job in three, and every job without a plan: one more rank
        // kills itself (raise(SIGKILL) before its N-th round), a death the
        // launcher did not plan.
        let own = (planned == 0 || r.below(3) == 0).then(|| {
            let v = victims.remove(r.below(victims.len() as u64) as usize);
            [v.to_string(), (1 + r.below(8)).to_string()]
        });
        let kills: Vec<&str> = kills.iter().map(String::as_str).collect();
        let args: Vec<&str> = own.iter().flatten().map(String::as_str).collect();
        let spec = Spec::new(n, &args).program(program("ulfm"));
        let j = bounded(spec, &kills);
        let dead = kills.len() + usize::from(own.is_some());
        let survivors = n - dead;
        let what = format!("seed {seed}: ulfm on {n} ranks, kills {kills:?}, own kill {own:?}");
        // An unplanned death is the job's failure: 128 + SIGKILL.
        j.expect(if own.is_some() { 137 } else { 0 }, survivors, &what);
        for l in j.ok_lines() {
            assert!(
                l.contains(&format!("size={survivors} sum={survivors} ")),
                "{what}: {l}\n{}",
                j.stderr
            );
        }
        killed += dead;
    }
    eprintln!("c ulfm campaign: {runs} jobs, {killed} ranks killed, 0 hangs, 0 wrong answers");
}

/// `iagree.c` (built by `pertinax mpicc`: Open MPI's spelling of the
/// non-blocking ULFM calls): `MPIX_Comm_iagree` started by one member and
/// tested before the others join, `MPIX_Comm_ishrink`, at 1, 2 and 4 ranks.
#[test]
fn non_blocking_ulfm_calls_from_c() {
    for n in [1, 2, 4] {
        let j = bounded(Spec::new(n, &[]).program(ours("iagree")), &[]);
        j.expect(0, n, &format!("iagree (pertinax mpicc) on {n} ranks"));
    }
}
