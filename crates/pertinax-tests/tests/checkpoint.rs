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
    let mut spec = Spec::new(N, &args)
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

/// A sweep of two-death plans: the first victim dies in an iteration, the
/// second at one of the program's or the library's points (`iter`,
/// `ckpt`, `ckpt.restore`, and the core's `ft.agree.enter` and
/// `ft.agree.contributed`, the checkpoint's own agreement), often inside
/// the first recovery. Without files the second victim is never a
/// neighbour of the first (the buddy scheme cannot survive both before a
/// restore completes); with files it may be. Every job must end with every
/// rank's state right.
#[test]
fn two_death_sweep() {
    let points = [
        "iter",
        "ckpt",
        "ckpt.restore",
        "ft.agree.enter",
        "ft.agree.contributed",
    ];
    for i in 0..12u64 {
        let disk = i % 2 == 1;
        let v1 = (i * 3 % N as u64) as usize;
        let step = if disk {
            1 + (i / 2) % 4
        } else {
            2 + (i / 2) % 2
        };
        let v2 = (v1 + step as usize) % N;
        let h1 = 3 + (i * 37) % 54;
        let point = points[(i / 2 % points.len() as u64) as usize];
        let h2 = match point {
            "iter" => 1 + (i * 53) % 58,
            "ckpt.restore" => 1,
            _ => 1 + (i * 7) % 6,
        };
        let kills = [format!("{v1}@iter#{h1}"), format!("{v2}@{point}#{h2}")];
        let kills: Vec<&str> = kills.iter().map(String::as_str).collect();
        let t = tempfile::tempdir().expect("temp dir");
        let dir = if disk {
            t.path().to_str().expect("utf-8 path")
        } else {
            "-"
        };
        let what = format!("job {i}: kills {kills:?} disk {disk}");
        let j = job(&kills, 0, WORDS, dir, &[]);
        j.expect(0, N, &what);
    }
}
