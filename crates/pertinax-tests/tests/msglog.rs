//! Message logging with local and hybrid rollback (`pertinax-msglog`),
//! through its two applications, NAS CG (`pertinax-cg`) and the 3-D
//! stencil (`pertinax-stencil`), under real kills (SIGKILL) by the job's
//! fault plan (`PERTINAX_FAULTS`, on both backends).
//!
//! The paper's validation (section 8.1): for a fixed rank, one run per
//! crash iteration over a window of two checkpoint intervals; every run's
//! result must equal the fault-free run's bit for bit, and the rollback
//! must be local. Then the hard places: a crash during the replay, during
//! a checkpoint, of the buddy holding a restarted rank's checkpoint, two
//! crashes in one run, two neighbours at once (lost without a disk copy,
//! recovered with one; the buddy during a rank's recovery, likewise), a
//! capped log forcing a global rollback, and the rollback policies. A kill
//! just after the last iteration, or inside the final step, must leave
//! the final gather's result (made in the library's final step) bitwise
//! the fault-free one. A randomized campaign varies all of it. Every job
//! is bounded, and the harness checks that none of its processes
//! survives.

use pertinax_harness::{run, Job, Program, Spec};
use pertinax_tests::{field, num};
use pertinax_wire::rng::SplitMix64;

fn app(name: &'static str) -> std::path::PathBuf {
    Program::bin("pertinax-apps", name).path()
}

/// One job of `program args` on `ranks` ranks with the fault plan
/// `faults` (the `--kill` grammar, comma-separated; empty: none).
fn job(program: &'static str, ranks: usize, args: &str, faults: &str) -> Job {
    let args: Vec<&str> = args.split_whitespace().collect();
    let mut s = Spec::new(ranks, &args).program(app(program)).bound(60);
    if !faults.is_empty() {
        s = s.env("PERTINAX_FAULTS", faults);
    }
    run(s.protocol_mix_by_faults())
}

/// Whether the job ended as a job with `kills` kills may: 0 under
/// `pertinax run` (the only failures were the injected ones); under
/// `mpirun`, 137 (it reports the SIGKILLed process) or a hang in
/// `MPI_Finalize` after the result was printed (Open MPI, see README).
fn ended_well(j: &Job, kills: bool) -> bool {
    j.code == Some(0)
        || (kills && pertinax_harness::on_mpi() && (j.code == Some(137) || j.code.is_none()))
}

/// The fields of the summary line starting with `tag` of a job that
/// verified its result.
fn verified(j: &Job, tag: &str, kills: bool) -> Vec<(String, String)> {
    pertinax_tests::verified_summary(j, tag, ended_well(j, kills))
}

/// An application with its arguments, its summary tag and the fields
/// that hold its result's bits.
#[derive(Clone, Copy, Debug)]
struct App {
    program: &'static str,
    args: &'static str,
    tag: &'static str,
    results: &'static [&'static str],
}

const CG: App = App {
    program: "pertinax-cg",
    args: "S",
    tag: "cg ",
    results: &["zeta_bits"],
};

/// The stencil; `acc` digests its `allreduce` results.
const STENCIL: App = App {
    program: "pertinax-stencil",
    args: "--nx 20 --ny 16 --nz 12 --iters 14",
    tag: "stencil ",
    results: &["checksum", "acc"],
};

/// The stencil calling every collective in each iteration: what the
/// library serves to the ranks behind the front line.
const STENCIL_COLL: App = App {
    args: "--nx 20 --ny 16 --nz 12 --iters 14 --collectives",
    ..STENCIL
};

impl App {
    fn run(&self, ranks: usize, opts: &str, faults: &str) -> Vec<(String, String)> {
        let j = job(
            self.program,
            ranks,
            &format!("{} {opts}", self.args),
            faults,
        );
        verified(&j, self.tag, !faults.is_empty())
    }

    /// The result's fields of a run.
    fn result(&self, f: &[(String, String)]) -> String {
        let v: Vec<&str> = self.results.iter().map(|k| field(f, k)).collect();
        v.join(" ")
    }

    /// The fault-free result.
    fn reference(&self, ranks: usize, opts: &str) -> String {
        let f = self.run(ranks, opts, "");
        assert_eq!(field(&f, "rollback"), "none", "{f:?}");
        assert_eq!(num(&f, "recoveries"), 0, "{f:?}");
        self.result(&f)
    }

    /// A run with `faults` that must give `want` bitwise, after
    /// `recoveries` recoveries and a `rollback` rollback.
    fn check(
        &self,
        ranks: usize,
        opts: &str,
        faults: &str,
        want: &str,
        rollback: &str,
    ) -> Vec<(String, String)> {
        let f = self.run(ranks, opts, faults);
        let what = format!("{} {opts} with {faults}: {f:?}", self.program);
        assert_eq!(self.result(&f), want, "{what}");
        assert_eq!(field(&f, "rollback"), rollback, "{what}");
        assert!(num(&f, "recoveries") >= 1, "{what}");
        f
    }
}

/// The paper's validation: rank 1 crashes in each iteration of a window
/// of two checkpoint intervals (iterations 0 to 8 with a checkpoint every
/// 4), one run each; every result is the fault-free one, bitwise, by a
/// local rollback.
fn validation_window(a: App, ranks: usize) {
    let opts = "--cp-int 4";
    let want = a.reference(ranks, opts);
    for hit in 1..=9 {
        a.check(ranks, opts, &format!("1@iter#{hit}"), &want, "local");
    }
}

#[test]
fn cg_crash_in_every_iteration_of_two_intervals_is_a_bitwise_local_rollback() {
    validation_window(CG, 4);
}

#[test]
fn stencil_crash_in_every_iteration_of_two_intervals_is_a_bitwise_local_rollback() {
    validation_window(STENCIL, 4);
}

/// The same with every collective in every iteration: the ranks behind
/// the front line are served the logged results (3 ranks, so that the
/// rooted collectives' roots move around).
#[test]
fn collectives_behind_the_front_line_are_served_their_logged_results() {
    let opts = "--cp-int 4";
    let want = STENCIL_COLL.reference(3, opts);
    for hit in [2, 6, 9] {
        for victim in 0..3 {
            let kill = format!("{victim}@iter#{hit}");
            STENCIL_COLL.check(3, opts, &kill, &want, "local");
        }
    }
    // A replacement served in one recovery serves in the next: rank 0's
    // replacement is behind after the first recovery, then rank 1 dies
    // and rank 0's replacement is the lowest rank past some iterations
    // (found by the campaign: served results were not logged, the rank
    // behind waited for ever).
    let want4 = STENCIL_COLL.reference(4, opts);
    for kills in [
        "0@iter#4,1@iter#5",
        "0@iter#3,1@iter#6",
        "0@iter#5,2@iter#7",
    ] {
        let f = STENCIL_COLL.check(4, opts, kills, &want4, "local");
        assert!(num(&f, "recoveries") >= 2, "{kills}: {f:?}");
    }
    // Two ranks behind at once, and a capped log (global).
    STENCIL_COLL.check(
        4,
        opts,
        "0@iter#6,2@iter#6",
        &STENCIL_COLL.reference(4, opts),
        "local",
    );
    STENCIL_COLL.check(
        3,
        "--cp-int 4 --log-cap 1",
        "1@iter#8",
        &STENCIL_COLL.reference(3, "--cp-int 4 --log-cap 1"),
        "global",
    );
}

/// A local rollback recomputes only the restarted rank's iterations
/// (since its checkpoint) and the survivors' current one; a global one
/// every rank's since the checkpoint (the shape of the paper's figure 6).
#[test]
fn local_rollback_recomputes_less_than_global() {
    let opts = "--cp-int 5";
    let want = STENCIL.reference(4, opts);
    // Iteration 8: three iterations past the checkpoint of 5.
    let kill = "2@iter#9";
    let local = STENCIL.check(4, opts, kill, &want, "local");
    let global = STENCIL.check(
        4,
        &format!("{opts} --rollback global"),
        kill,
        &want,
        "global",
    );
    let (l, g) = (num(&local, "recomputed"), num(&global, "recomputed"));
    // Local: the restarted rank redoes 5..8 (3), the others at most 8
    // itself, which is not past the front line. Global: 4 ranks x 3.
    assert!(l <= 3 + 3, "local recomputed {l}: {local:?}");
    assert!(g >= 4 * 3, "global recomputed {g}: {global:?}");
    assert!(l < g);
}

#[test]
fn a_crash_during_the_replay_is_recovered() {
    // Rank 1 dies in iteration 6; rank 3, which replays to its
    // replacement, dies right after posting the replay.
    let opts = "--cp-int 4";
    for a in [CG, STENCIL] {
        let want = a.reference(4, opts);
        let f = a.check(4, opts, "1@iter#7,3@replay#2", &want, "local");
        assert!(num(&f, "recoveries") >= 2, "{f:?}");
    }
}

#[test]
fn a_crash_during_a_checkpoint_is_recovered() {
    let opts = "--cp-int 4";
    for a in [CG, STENCIL] {
        let want = a.reference(4, opts);
        // The second checkpoint is the one of iteration 4.
        a.check(4, opts, "2@ckpt#2", &want, "local");
    }
}

#[test]
fn the_buddy_holding_a_restarted_ranks_checkpoint_dies_later() {
    // Rank 1 dies; its replacement restores from rank 2, which dies in a
    // later interval: rank 2's replacement restores from rank 3, and rank
    // 1's copy of it was handed back to the replacement.
    let opts = "--cp-int 4";
    for a in [CG, STENCIL] {
        let want = a.reference(4, opts);
        let f = a.check(4, opts, "1@iter#3,2@iter#10", &want, "local");
        assert!(num(&f, "recoveries") >= 2, "{f:?}");
    }
}

/// The final step (`pertinax_msglog::run_and_finish`): the stencil
/// gathers every block's verdict and checksum at rank 0 there, CG every
/// rank's zeta. A kill just after the last iteration (`finish#1`, the
/// final step's start) or inside the final step (`finish.end#1`, after
/// the gather, before the final agreement) is recovered like one in an
/// iteration: the victim's replacement runs again from its checkpoint,
/// the survivors serve it the gather's logged result or take part again,
/// and the gathered result (`checksum`; CG's `verified` needs every
/// rank's zeta) is the fault-free one, bit for bit.
#[test]
fn a_kill_just_after_the_last_iteration_or_in_the_final_step_is_recovered() {
    let opts = "--cp-int 4";
    for a in [CG, STENCIL, STENCIL_COLL] {
        let want = a.reference(4, opts);
        for point in ["finish#1", "finish.end#1"] {
            for victim in [0, 3] {
                a.check(4, opts, &format!("{victim}@{point}"), &want, "local");
            }
        }
    }
    // Two recoveries at the end: a survivor of the first one dies in its
    // replay, or at the end of its final step (which cannot complete
    // before the first recovery: the gather needs the first victim).
    let want = STENCIL_COLL.reference(4, opts);
    for kills in ["1@finish.end#1,3@replay#2", "1@finish#1,2@finish.end#1"] {
        let f = STENCIL_COLL.check(4, opts, kills, &want, "local");
        assert!(num(&f, "recoveries") >= 2, "{kills}: {f:?}");
    }
    // A log that does not reach the final step, and the global policy:
    // every rank runs again from the checkpoint, the final step too.
    for opts in ["--cp-int 4 --log-cap 1", "--cp-int 4 --rollback global"] {
        let want = STENCIL_COLL.reference(3, opts);
        STENCIL_COLL.check(3, opts, "1@finish.end#1", &want, "global");
    }
}

#[test]
fn two_crashes_in_one_iteration_are_recovered_together() {
    let opts = "--cp-int 4";
    let want = STENCIL.reference(4, opts);
    STENCIL.check(4, opts, "0@iter#6,2@iter#6", &want, "local");
}

#[test]
fn two_neighbours_dying_at_once_lose_a_checkpoint_unless_it_is_on_disk() {
    // Ranks 1 and 2 hold each other's... rank 1's copy is at rank 2: both
    // gone, only a disk copy can bring rank 1 back.
    let opts = "--cp-int 4";
    let want = STENCIL.reference(4, opts);
    // "At once" is one recovery: on a loaded host rank 2 may notice rank
    // 1's death first and recover it (from rank 2's copy) before its own
    // kill, two recoveries that must then give the right answer. Up to
    // six tries for the two deaths to land in one recovery.
    let mut tries = Vec::new();
    let lost = (0..6).any(|_| {
        let j = job(
            STENCIL.program,
            4,
            &format!("{} {opts}", STENCIL.args),
            "1@iter#6,2@iter#6",
        );
        if j.code != Some(0) && j.stderr.contains("lost") && !j.stdout.contains("verified=true") {
            return true;
        }
        let f = verified(&j, STENCIL.tag, true);
        assert_eq!(STENCIL.result(&f), want, "{f:?}");
        assert_eq!(
            num(&f, "recoveries"),
            2,
            "one recovery must lose rank 1: {f:?}"
        );
        tries.push(j.stderr);
        false
    });
    assert!(
        lost,
        "the deaths never landed in one recovery in 6 tries: {tries:#?}"
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let opts = format!("{opts} --ckpt-dir {}", dir.path().display());
    STENCIL.check(4, &opts, "1@iter#6,2@iter#6", &want, "local");
}

/// "A rank and its buddy fail together" covers the buddy dying during
/// the rank's recovery: rank 1 dies, and rank 2 (which holds the only
/// copy of rank 1's checkpoint) dies in the restore of that recovery,
/// before its transfers. Without a disk copy rank 1's state is lost and
/// every rank says so; with one the run recovers, bitwise.
#[test]
fn the_buddy_dying_during_a_ranks_recovery_loses_its_checkpoint_unless_it_is_on_disk() {
    let opts = "--cp-int 4";
    let kills = "1@iter#6,2@ckpt.restore#1";
    let want = STENCIL.reference(4, opts);
    let j = job(
        STENCIL.program,
        4,
        &format!("{} {opts}", STENCIL.args),
        kills,
    );
    assert!(
        j.code != Some(0)
            && j.stderr.contains("lost")
            && j.stderr.contains("rank 1 and its buddy 2")
            && !j.stdout.contains("verified=true"),
        "code {:?}\nstdout:\n{}\nstderr:\n{}",
        j.code,
        j.stdout,
        j.stderr
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let opts = format!("{opts} --ckpt-dir {}", dir.path().display());
    let f = STENCIL.check(4, &opts, kills, &want, "local");
    assert!(num(&f, "recoveries") >= 2, "{f:?}");
}

#[test]
fn a_capped_log_forces_a_global_rollback_past_its_end() {
    // Logs of 2 iterations after each checkpoint of 5: a crash in
    // iteration 6 (1 past the checkpoint) is local, in iteration 8 (3
    // past) global.
    let opts = "--cp-int 5 --log-cap 2";
    for a in [CG, STENCIL] {
        let want = a.reference(4, opts);
        a.check(4, opts, "1@iter#7", &want, "local");
        a.check(4, opts, "1@iter#9", &want, "global");
    }
}

#[test]
fn transactional_mode_and_the_global_policy_roll_back_globally() {
    let want = CG.reference(4, "--cp-int 4");
    CG.check(
        4,
        "--cp-int 4 --mode transactional",
        "3@iter#6",
        &want,
        "global",
    );
    CG.check(
        4,
        "--cp-int 4 --rollback global",
        "3@iter#6",
        &want,
        "global",
    );
}

#[test]
fn plain_mode_does_not_recover_and_says_so() {
    let j = job(CG.program, 4, "S --mode plain", "1@iter#3");
    assert!(
        j.code != Some(0) && j.stderr.contains("plain") && !j.stdout.contains("verified=true"),
        "code {:?}\nstdout:\n{}\nstderr:\n{}",
        j.code,
        j.stdout,
        j.stderr
    );
}

/// Randomized campaign: application, rank count, checkpoint interval, log
/// cap, mode and policy, disk copies, one to three kills at iterations,
/// checkpoints, the final step (its start, just after the last
/// iteration, and its end, after the final gather), replays and restores
/// (several in one group, failures during recovery itself, neighbours
/// together when the checkpoints are on disk). Every job must end verified, bitwise equal to its fault-free
/// reference, with a rollback that fits its options.
/// `PERTINAX_MSGLOG_CAMPAIGN_RUNS` jobs (default 12) from seed
/// `PERTINAX_MSGLOG_CAMPAIGN_SEED` (default 1).
#[test]
fn randomized_campaign_has_no_hang_and_no_wrong_answer() {
    let runs: u64 = pertinax_harness::env_count("PERTINAX_MSGLOG_CAMPAIGN_RUNS", 12);
    let first: u64 = pertinax_harness::env_count("PERTINAX_MSGLOG_CAMPAIGN_SEED", 1);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut refs = std::collections::HashMap::new();
    let mut tally = std::collections::BTreeMap::new();
    let mut recoveries = 0;
    let t0 = std::time::Instant::now();
    for run in first..first + runs {
        let mut s = SplitMix64::new(run.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let a = [CG, STENCIL, STENCIL_COLL][s.below_mod(3) as usize];
        let ranks = if a.program == CG.program {
            [2, 4][s.below_mod(2) as usize]
        } else {
            [2, 3, 4][s.below_mod(3) as usize]
        };
        let cp = 2 + s.below_mod(4);
        let mut opts = format!("--cp-int {cp}");
        match s.below_mod(5) {
            0 => opts.push_str(&format!(" --log-cap {}", 1 + s.below_mod(cp))),
            1 => opts.push_str(" --rollback global"),
            2 => opts.push_str(" --mode transactional"),
            _ => {}
        }
        let disk = s.below_mod(4) == 0;
        if disk {
            let d = dir.path().join(format!("run-{run}"));
            opts.push_str(&format!(" --ckpt-dir {}", d.display()));
        }
        let mut kills = Vec::new();
        let mut victims = Vec::new();
        for _ in 0..1 + s.below_mod(3) {
            let v = s.below_mod(ranks as u64);
            // At least one survivor: recovery starts from the survivors.
            if victims.contains(&v) || victims.len() + 1 == ranks {
                continue;
            }
            // Neighbours dying together lose a checkpoint without a disk
            // copy: only with one.
            let n = ranks as u64;
            if !disk
                && victims
                    .iter()
                    .any(|&w| (w + 1) % n == v || (v + 1) % n == w)
            {
                continue;
            }
            victims.push(v);
            // The first kill strikes an iteration, a checkpoint or the
            // final step; later ones may strike the recovery it starts (a
            // replay, a restore), which exists only after a first failure,
            // or a final step run again after it.
            let during_recovery = if kills.is_empty() { 2 } else { 0 };
            let point = match during_recovery + s.below_mod(8 - during_recovery) {
                0 => "replay#2".to_string(),
                1 => "ckpt.restore#1".to_string(),
                2 => format!("ckpt#{}", 1 + s.below_mod(3)),
                3 => format!(
                    "finish#{}",
                    1 + s.below_mod(1 + u64::from(during_recovery == 0))
                ),
                4 => "finish.end#1".to_string(),
                _ => format!("iter#{}", 1 + s.below_mod(12)),
            };
            kills.push(format!("{v}@{point}"));
        }
        let faults = kills.join(",");
        eprintln!(
            "msglog campaign run {run}: {} {} on {ranks} {opts} with {faults:?}",
            a.program, a.args
        );
        // The reference needs no disk copy.
        let plain_opts = opts
            .split(" --ckpt-dir")
            .next()
            .unwrap_or(&opts)
            .to_string();
        let key = (a.program, a.args, ranks, plain_opts.clone());
        let want = refs
            .entry(key)
            .or_insert_with(|| a.reference(ranks, &plain_opts))
            .clone();
        let f = a.run(ranks, &opts, &faults);
        let what = format!(
            "run {run}: {} on {ranks} {opts} with {faults}: {f:?}",
            a.program
        );
        assert_eq!(a.result(&f), want, "{what}");
        let rb = field(&f, "rollback").to_string();
        if opts.contains("global") || opts.contains("transactional") {
            assert!(rb != "local", "{what}");
        }
        recoveries += num(&f, "recoveries");
        *tally.entry(rb).or_insert(0u64) += 1;
    }
    println!(
        "msglog campaign: {runs} jobs from seed {first} in {:.1} s: 0 hangs, 0 wrong answers, \
         {recoveries} recoveries; rollbacks {tally:?}",
        t0.elapsed().as_secs_f64()
    );
}

/// Replacements taken from idle spares (`pertinax run --spares`, the
/// native launcher's) instead of new processes: the same recovery.
#[test]
fn spares_take_the_dead_ranks_places() {
    let opts = "--cp-int 4";
    let want = STENCIL_COLL.reference(4, opts);
    let line = format!("{} {opts}", STENCIL_COLL.args);
    let args: Vec<&str> = line.split_whitespace().collect();
    let spec = Spec::new(4, &args)
        .program(app(STENCIL_COLL.program))
        .bound(60)
        .launcher_arg("--spares")
        .launcher_arg("2")
        .env("PERTINAX_FAULTS", "1@iter#6,3@iter#11");
    let j = run(spec);
    let f = verified(&j, STENCIL_COLL.tag, true);
    assert_eq!(STENCIL_COLL.result(&f), want, "{f:?}");
    assert_eq!(field(&f, "rollback"), "local", "{f:?}");
    assert!(num(&f, "recoveries") >= 2, "{f:?}");
}
