//! `pertinax-checkpoint` under real kills: `checkpoint-ranks` takes a
//! coordinated checkpoint every 10 of 60 iterations on 5 ranks, and
//! recovers by `replace_failed` and `Checkpointer::restore`. Every job must
//! end with every rank's state equal to the fault-free one (the program
//! checks it against a sequential simulation and prints `OK`), having
//! restored the version the kill plan implies; or, when a rank and its
//! buddy both lose their memory without files, with the same `Lost`
//! message at every rank.

use std::path::Path;

use pertinax_harness::{run, Job, Spec};
use pertinax_wire::rng::SplitMix64;

const N: usize = 5;
const ITERS: &str = "60";
const EVERY: &str = "10";
/// Words of state per rank (4 KiB).
const WORDS: &str = "512";

/// A job of `checkpoint-ranks` with `kills`, `spares`, the state size and
/// checkpoint folder (`-`: memory only), and more program arguments.
fn job(kills: &[&str], spares: usize, words: &str, dir: &str, more: &[&str]) -> Job {
    let mut args = vec![ITERS, EVERY, words, dir];
    args.extend_from_slice(more);
    job_on(N, &args, spares, kills)
}

/// A job of `checkpoint-ranks ARGS` on `n` ranks, with `spares` and
/// `kills`, on the protocol setting its kills choose.
fn job_on(n: usize, args: &[&str], spares: usize, kills: &[&str]) -> Job {
    let mut spec = Spec::new(n, args)
        .program(std::path::PathBuf::from(env!(
            "CARGO_BIN_EXE_checkpoint-ranks"
        )))
        .bound(60);
    // `--spares` is native-only: the tests without spares also run on MPI.
    if spares > 0 {
        spec = spec
            .launcher_arg("--spares")
            .launcher_arg(&spares.to_string());
    }
    for k in kills {
        spec = spec.launcher_arg("--kill").launcher_arg(k);
    }
    run(spec.protocol_mix_by_faults())
}

/// The `restored=[..]` list of an outcome line.
fn restored(line: &str) -> &str {
    line.split(" restored=")
        .nth(1)
        .and_then(|r| r.split(" from_scratch=").next())
        .unwrap_or("")
}

/// Checks a job that must recover: every rank OK (its state equals the
/// fault-free one), every kill landed, every rank restored `restored`
/// (the list of versions, e.g. "[30]", for the original ranks).
fn recovered(j: &Job, kills: usize, restored: &str, what: &str) {
    j.expect(0, N, what);
    assert_eq!(
        j.stderr.matches("(injected").count(),
        kills,
        "{what}: not every kill landed\n{}",
        j.stderr
    );
    for r in 0..N {
        let line = j.rank_lines("OK", r)[0];
        if line.contains("role=original") {
            assert_eq!(
                self::restored(line),
                restored,
                "{what}: rank {r}\n{}",
                j.stdout
            );
        }
    }
}

/// The iterations of the files in `dir/rank-R`, sorted.
fn files(dir: &Path, rank: usize) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join(format!("rank-{rank}")))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn fault_free() {
    let j = job(&[], 0, WORDS, "-", &[]);
    recovered(&j, 0, "[]", "no kill");
    assert!(j.stdout.contains("held=[50, 60]/[50, 60]"), "{}", j.stdout);
}

/// A rank dies in the middle of a segment: every rank rolls back to the
/// last checkpoint (30), the replacement gets its state from its buddy.
#[test]
fn kill_at_an_iteration() {
    let j = job(&["2@iter#37"], 0, WORDS, "-", &[]);
    recovered(&j, 1, "[30]", "2@iter#37");
}

/// A rank dies inside `checkpoint` (fault point `ckpt`, after its pending
/// image was written aside, before the buddy copy): the checkpoint of 20
/// is committed nowhere, every rank restores 10. At the very first
/// checkpoint nothing is committed yet: every rank starts over.
#[test]
fn kill_while_checkpointing() {
    let j = job(&["4@ckpt#3"], 0, WORDS, "-", &[]);
    recovered(&j, 1, "[10]", "4@ckpt#3");
    let j = job(&["1@ckpt#1"], 0, WORDS, "-", &[]);
    recovered(&j, 1, "[]", "1@ckpt#1");
    assert_eq!(
        j.stdout.matches("from_scratch=1").count(),
        N,
        "{}",
        j.stdout
    );
}

/// A large state (512 KiB per rank, past the eager limit) and a kill in
/// the checkpoint: the copies go by rendezvous.
#[test]
fn kill_while_checkpointing_a_large_state() {
    let j = job(&["3@ckpt#4"], 0, "65536", "-", &[]);
    recovered(&j, 1, "[20]", "large state");
}

/// Rank 2 dies, its replacement gets its state back from rank 3; later
/// rank 3 (the buddy, which now holds the copy of the replacement's
/// state) dies too: the second recovery gets it back from rank 4.
#[test]
fn buddy_of_a_replaced_rank_killed_later() {
    let j = job(&["2@iter#25", "3@iter#60"], 0, WORDS, "-", &[]);
    recovered(&j, 2, "[20, 50]", "buddy later");
}

/// A survivor dies during the restore (the library's `ckpt.restore`
/// point, before the transfers): another recovery replaces it, and the
/// restore, called again, works.
#[test]
fn kill_during_the_restore() {
    let j = job(&["2@iter#25", "0@ckpt.restore#1"], 0, WORDS, "-", &[]);
    recovered(&j, 2, "[20]", "restore");
}

/// Two adjacent ranks killed at once without files: rank 2's state is
/// nowhere (its buddy 3 died with it). Every rank ends with the same
/// clear `Lost` error, none hangs.
#[test]
fn adjacent_ranks_killed_at_once_without_disk_are_lost() {
    let j = job(&["2@ckpt#3", "3@ckpt#3"], 0, WORDS, "-", &[]);
    let want = "checkpoint lost: rank 2 and its buddy 3 both lost their memory and there is \
                no disk copy of rank 2's state";
    for r in 0..N {
        let lines = j.rank_lines("LEFT", r);
        assert!(
            lines.len() == 1 && lines[0].ends_with(want),
            "rank {r}: {lines:?}\n{}\n{}",
            j.stdout,
            j.stderr
        );
    }
    assert_eq!(j.oks(), 0, "{}", j.stdout);
    assert_eq!(j.fails(), 0, "{}", j.stdout);
}

/// The same kills with files: ranks 2 and 3 read their state back from
/// disk (their pending files of 20, written before they died, are not
/// used: nobody else committed 20). At the end each rank's folder holds
/// exactly its kept versions.
#[test]
fn adjacent_ranks_killed_at_once_with_disk_recover() {
    adjacent_with_disk(0);
}

/// As [`adjacent_ranks_killed_at_once_with_disk_recover`], the dead
/// replaced by spares (native-only: `--spares`).
#[test]
fn adjacent_ranks_killed_at_once_with_disk_and_spares_recover() {
    let j = adjacent_with_disk(2);
    for r in [2, 3] {
        assert!(
            j.rank_lines("OK", r)[0].contains("role=replacement(spare)"),
            "{}",
            j.stdout
        );
    }
}

fn adjacent_with_disk(spares: usize) -> Job {
    let t = tempfile::tempdir().expect("temp dir");
    let dir = t.path().to_str().expect("utf-8 path");
    let j = job(&["2@ckpt#3", "3@ckpt#3"], spares, WORDS, dir, &[]);
    recovered(&j, 2, "[10]", &format!("disk, spares {spares}"));
    for r in 0..N {
        assert_eq!(
            files(t.path(), r),
            ["ckpt-50.bin", "ckpt-60.bin"],
            "rank {r}"
        );
    }
    j
}

/// Deaths far apart with spares (native-only: `--spares`): two
/// recoveries, both by spares.
#[test]
fn spares() {
    let j = job(&["1@iter#15", "3@iter#40"], 2, WORDS, "-", &[]);
    recovered(&j, 2, "[10, 30]", "spares");
    for r in [1, 3] {
        assert!(
            j.rank_lines("OK", r)[0].contains("role=replacement(spare)"),
            "{}",
            j.stdout
        );
    }
}

/// A whole job restarts from the files of an earlier one: every rank of
/// the new job restores (fresh) from its folder. The first job completes
/// (files of 50 and 60); rank 3's newest file is then damaged, so the
/// second job falls back to 50 everywhere and computes 51 to 60 again.
#[test]
fn a_new_job_resumes_from_the_files() {
    let t = tempfile::tempdir().expect("temp dir");
    let dir = t.path().to_str().expect("utf-8 path");
    let j = job(&[], 0, WORDS, dir, &[]);
    recovered(&j, 0, "[]", "first job");
    let f = t.path().join("rank-3").join("ckpt-60.bin");
    let mut b = std::fs::read(&f).expect("read");
    let last = b.len() - 1;
    b[last] ^= 1;
    std::fs::write(&f, b).expect("write");
    let j = job(&[], 0, WORDS, dir, &["resume"]);
    recovered(&j, 0, "[50]", "resumed job");
}

/// A seeded campaign: `PERTINAX_CHECKPOINT_RUNS` jobs (default 12) from
/// seed `PERTINAX_CHECKPOINT_SEED` (default 1). Each job draws what a user
/// varies: the ranks (2 to 6), the iterations and checkpoint interval, the
/// state size (one word to 512 KiB a rank, past the eager limit, and each
/// job on one of the harness's protocol settings), memory only or files
/// too; and one to three victims, the first at an iteration, a checkpoint
/// or the checkpoint's agreement (`iter`, `ckpt`, `ft.agree.enter`,
/// `ft.agree.contributed`), later ones also inside the recovery the first
/// starts (`ckpt.restore`, the agreements of `replace_failed`). Without
/// files, a victim beside another is drawn in a quarter of the jobs: both
/// may lose their memory before a restore completes, and then every rank
/// must end with the same `Lost` message; otherwise, and always with
/// files, the job must exit 0 and every rank end with one `OK` line, its
/// state equal to the sequential simulation's (the program checks it),
/// but a victim that died after its last exchange, which no one notices.
#[test]
fn randomized_campaign() {
    let runs: u64 = pertinax_harness::env_count("PERTINAX_CHECKPOINT_RUNS", 12);
    let first: u64 = pertinax_harness::env_count("PERTINAX_CHECKPOINT_SEED", 1);
    let (mut killed, mut recoveries, mut lost, mut unnoticed, mut several) =
        (0usize, 0u64, 0u64, 0usize, 0u64);
    let t0 = std::time::Instant::now();
    for run in first..first + runs {
        let mut s = SplitMix64::new(run.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let n = 2 + s.below_mod(5) as usize;
        let words = [1u64, 64, 512, 4096, 65536][s.below_mod(5) as usize];
        // A large state with few iterations: every rank simulates them all.
        let iters = if words > 4096 {
            10 + s.below_mod(21)
        } else {
            20 + s.below_mod(41)
        };
        let every = 3 + s.below_mod(8);
        let syncs = iters / every + 2;
        let disk = s.below_mod(3) == 0;
        let neighbours = !disk && s.below_mod(4) == 0;
        let mut victims: Vec<usize> = Vec::new();
        let mut kills = Vec::new();
        for _ in 0..1 + s.below_mod(3) {
            let v = s.below_mod(n as u64) as usize;
            // At least one rank never dies: the recovery starts from it.
            if victims.contains(&v) || victims.len() + 1 == n {
                continue;
            }
            let beside = victims
                .iter()
                .any(|&w| (w + 1) % n == v || (v + 1) % n == w);
            if beside && !disk && !neighbours {
                continue;
            }
            // The first death comes in the computation; later ones may
            // come inside the recovery it starts (a restore exists only
            // after a first failure).
            let later = u64::from(!victims.is_empty());
            let point = match s.below_mod(4 + later) {
                0 => format!("ckpt#{}", 1 + s.below_mod(syncs)),
                1 => format!("ft.agree.enter#{}", 1 + s.below_mod(2 * syncs)),
                2 => format!("ft.agree.contributed#{}", 1 + s.below_mod(2 * syncs)),
                4 => "ckpt.restore#1".to_string(),
                _ => format!("iter#{}", 1 + s.below_mod(iters + 5)),
            };
            victims.push(v);
            kills.push(format!("{v}@{point}"));
        }
        let kills: Vec<&str> = kills.iter().map(String::as_str).collect();
        let t = tempfile::tempdir().expect("temp dir");
        let dir = if disk {
            t.path().to_str().expect("utf-8 path")
        } else {
            "-"
        };
        let what = format!(
            "run {run}: {n} ranks, {iters} iterations, a checkpoint every {every}, \
             {words} words, files {disk}, kills {kills:?}"
        );
        eprintln!("checkpoint campaign {what}");
        let (iters, every, words) = (iters.to_string(), every.to_string(), words.to_string());
        let j = job_on(n, &[&iters, &every, &words, dir], 0, &kills);
        // The ranks whose kill landed (the launcher's line, or on MPI the
        // rank's own: `pertinax: rank R (pid P) ... (injected ...`).
        let dead: Vec<usize> = j
            .stderr
            .lines()
            .filter(|l| l.contains("(injected"))
            .filter_map(|l| {
                l.strip_prefix("pertinax: rank ")?
                    .split(' ')
                    .next()?
                    .parse()
                    .ok()
            })
            .collect();
        let landed = dead.len();
        killed += landed;
        several += u64::from(landed >= 2);
        let left: Vec<&str> = (0..n).flat_map(|r| j.rank_lines("LEFT", r)).collect();
        let beside = dead
            .iter()
            .any(|&v| dead.iter().any(|&w| (w + 1) % n == v && w != v));
        if j.oks() == 0 && left.len() == n && neighbours && beside {
            // Two neighbours died, no file: their memory may be lost
            // before a restore completes. Then the same message everywhere.
            let m = |l: &str| l.split_once(": ").map(|(_, m)| m.to_string());
            assert!(
                left.iter()
                    .all(|l| m(l) == m(left[0]) && l.contains("checkpoint lost")),
                "{what}: ranks disagree on the loss\n{}",
                j.stdout
            );
            assert_eq!(j.code, Some(0), "{what}\n{}\n{}", j.stdout, j.stderr);
            lost += 1;
            continue;
        }
        // A victim that dies after its last exchange (in the final
        // checkpoint's agreement, after its contribution) is noticed by
        // no one: the others finish, and it has no line. Every other rank
        // ends OK, once (the replacement's line for a replaced one).
        let missing: Vec<usize> = (0..n)
            .filter(|&r| j.rank_lines("OK", r).is_empty())
            .collect();
        assert!(
            j.code == Some(0)
                && j.fails() == 0
                && left.is_empty()
                && (0..n).all(|r| j.rank_lines("OK", r).len() <= 1)
                && missing.iter().all(|r| victims.contains(r))
                && missing.len() <= landed,
            "{what}: code {:?}, ranks without an OK line {missing:?}, {} LEFT\nstdout:\n{}\nstderr:\n{}",
            j.code,
            left.len(),
            j.stdout,
            j.stderr
        );
        unnoticed += missing.len();
        // The recoveries of the rank that saw most (an original).
        recoveries += j
            .ok_lines()
            .iter()
            .filter_map(|l| l.split(" recoveries=").nth(1))
            .filter_map(|r| r.split(' ').next()?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
    }
    println!(
        "checkpoint campaign: {runs} jobs from seed {first} in {:.1} s: 0 hangs, 0 wrong answers, \
         {killed} ranks killed ({unnoticed} after their last exchange), {several} jobs with two or more \
         killed, {recoveries} recoveries, {lost} jobs where neighbours \
         lost their state (the same message at every rank)",
        t0.elapsed().as_secs_f64()
    );
}
