//! Unchanged C MPI programs on pertinax: the programs of
//! `crates/pertinax-abi/tests/c/`, built by MPICH's own `mpicc` (so
//! against MPICH's `mpi.h` and `libmpi.so.12`), run under `pertinax run`
//! with `pertinax-abi`'s `libmpi.so.12` first on the loader's path.
//!
//! MPICH's compiler wrapper comes from `pip install mpich`:
//! `PERTINAX_MPICH_CC`, else `/tmp/mpich/bin/mpicc` (the venv `.ci/run`
//! makes); the Python tests use the `python3` beside it, with `pip install
//! mpi4py` in the same venv. Native backend only: these programs bring
//! their own MPI.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pertinax_harness::{launcher, run, Job, Spec, MPI_ABI};

/// MPICH's `mpicc`.
fn mpicc() -> PathBuf {
    let cc = std::env::var_os("PERTINAX_MPICH_CC")
        .map_or_else(|| PathBuf::from("/tmp/mpich/bin/mpicc"), PathBuf::from);
    assert!(
        cc.exists(),
        "{} is missing: these tests build C programs with MPICH's mpicc \
         (python3 -m venv /tmp/mpich && /tmp/mpich/bin/pip install mpich, \
         or set PERTINAX_MPICH_CC)",
        cc.display()
    );
    cc
}

/// A directory holding `libmpi.so.12`, the library's soname, linked to
/// the `libmpi.so` Cargo built.
fn abi_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = MPI_ABI.path();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi-abi");
        std::fs::create_dir_all(&dir).expect("mpi-abi dir");
        let link = dir.join("libmpi.so.12");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&lib, &link).expect("libmpi.so.12 link");
        dir
    })
}

/// C program `name` (`tests/c/<name>.c` of pertinax-abi), built once per
/// test process (tests run in parallel threads: a second build would
/// rewrite the binary under a running job).
fn program(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, p)) = built.iter().find(|(n, _)| n == name) {
        return p.clone();
    }
    let p = build(name);
    built.push((name.to_string(), p.clone()));
    p
}

fn build(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../pertinax-abi/tests/c")
        .join(format!("{name}.c"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c-{name}"));
    compile(Command::new(mpicc()), &src, &out);
    out
}

/// `cc` (a compiler wrapper) `-O1 -pthread -o out src`, which must
/// succeed (`threads.c` uses POSIX threads).
fn compile(mut cc: Command, src: &Path, out: &Path) {
    let res = cc
        .arg("-O1")
        .arg("-pthread")
        .arg("-o")
        .arg(out)
        .arg(src)
        .output()
        .expect("run mpicc");
    assert!(
        res.status.success(),
        "{cc:?} {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&res.stderr)
    );
}

fn job(n: usize, name: &str, kills: &[&str]) -> Job {
    bounded(Spec::new(n, &[]).program(program(name)), kills)
}

fn bounded<'a>(spec: Spec<'a>, kills: &[&str]) -> Job {
    let lib = abi_dir().join("libmpi.so.12");
    let mut spec = spec
        .env("LD_LIBRARY_PATH", &abi_dir().to_string_lossy())
        // mpi4py's `MPI.mpich` loads this library by path.
        .env("MPI4PY_LIBMPI", &lib.to_string_lossy())
        .bound(60);
    for k in kills {
        spec = spec.launcher_arg("--kill").launcher_arg(k);
    }
    run(spec)
}

/// Every program of `tests/c/` but the ULFM one (which is run with kills
/// below), fault-free at 2, 3 and 4 ranks: each checks its area and
/// prints `OK` per rank when every check held. `basics.c`: point-to-point
/// in every size class, requests, probes, truncation as a visible error,
/// bad arguments as errors, an unimplemented call's
/// `MPI_ERR_UNSUPPORTED_OPERATION`, collectives with `MPI_IN_PLACE`,
/// split and dup, groups, attributes; `datatypes.c`: derived datatypes
/// (constructors, bounds, Pack/Unpack) through point-to-point, the
/// collectives and the reductions; the others say what they check at
/// their top.
#[test]
fn unchanged_c_programs_run_on_pertinax() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pertinax-abi/tests/c");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/c")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "c" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        // ulfm.c runs with kills below, resilient_limits.c under
        // --resilient; iagree.c calls Open MPI's MPIX_Comm_iagree, which
        // MPICH's headers and library lack (pertinax mpicc builds it below).
        .filter(|n| n != "ulfm" && n != "resilient_limits" && n != "iagree")
        .collect();
    names.sort();
    assert!(names.contains(&"basics".to_string()), "{names:?}");
    for name in &names {
        for n in [2, 3, 4] {
            let j = job(n, name, &[]);
            j.expect(0, n, &format!("{name} on {n} ranks"));
        }
    }
}

/// `wcoll.c` (the w-collectives with a datatype per peer, the persistent
/// neighbourhood collectives, `MPI_Type_create_darray` against layouts
/// computed by hand, `MPI_Op_create_c`, large-count type contents) at 1
/// rank, where every peer is the process itself; the test above runs it
/// at 2, 3 and 4.
#[test]
fn the_w_collectives_darrays_and_large_count_ops_run_on_one_rank() {
    job(1, "wcoll", &[]).expect(0, 1, "wcoll on 1 rank");
}

/// Bad input from C is an error, never a crash (`badargs.c`): seeded
/// cases, each one call with ONE bad argument among good ones (an invalid,
/// freed or null handle, a negative count, a rank, root or tag out of
/// range, an uncommitted type, a NULL buffer with data, an op that does
/// not fit the type, a bad request, dims, a too small pack buffer), must
/// return that argument's error class under `MPI_ERRORS_RETURN`; then an
/// allreduce, a ring and a barrier still work. Every call implemented
/// that takes such arguments, at 1, 2 and 3 ranks, seeds 1 to
/// `PERTINAX_ABI_BADARGS_SEEDS` (8 by default), 3 rounds each.
#[test]
fn bad_arguments_from_c_are_errors_never_crashes() {
    let seeds: u64 = std::env::var("PERTINAX_ABI_BADARGS_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    for seed in 1..=seeds {
        for n in [1, 2, 3] {
            let s = seed.to_string();
            let spec = Spec::new(n, &[&s, "3"]).program(program("badargs"));
            let j = bounded(spec, &[]);
            j.expect(0, n, &format!("badargs seed {seed} on {n} ranks"));
        }
    }
}

/// `inter.c` with exactly the room its spawn takes (`--max-spawn 2`, below
/// the default of one slot per rank): the spawn of 2 children fills it, so
/// its later spawns fail with `MPI_ERR_SPAWN` because no slot is left, and
/// nothing else is started.
#[test]
fn a_c_spawn_beyond_max_spawn_is_mpi_err_spawn() {
    for n in [2, 4] {
        let spec = Spec::new(n, &[])
            .program(program("inter"))
            .launcher_arg("--max-spawn")
            .launcher_arg("2");
        bounded(spec, &[]).expect(0, n, &format!("inter with --max-spawn 2 on {n} ranks"));
    }
}

/// Sessions (`session.c`) at 1 to 3 ranks: by default a session before
/// `MPI_Init`, a second one after, `MPI_Finalize` while it lives; with
/// `only`, sessions without `MPI_Init`, the last one's finalize leaving
/// the job (a later `MPI_Session_init` is `MPI_ERR_OTHER`).
#[test]
fn c_sessions_join_the_job_with_or_without_mpi_init() {
    for n in [1, 2, 3] {
        for mode in [&[][..], &["only"][..]] {
            let spec = Spec::new(n, mode).program(program("session"));
            bounded(spec, &[]).expect(0, n, &format!("session {mode:?} on {n} ranks"));
        }
    }
}

/// Threads (`threads.c`) at 2 ranks, built by MPICH's `mpicc` and by
/// `pertinax mpicc`: at `MPI_THREAD_SERIALIZED` (asked as `MULTIPLE` and
/// as `SERIALIZED`) worker threads take turns with blocking calls, poll
/// non-blocking ones, and call without the program's mutex; at
/// `MPI_THREAD_FUNNELED` (`MPI_Init`) a worker's calls are
/// `MPI_ERR_OTHER` and the library stays usable.
#[test]
fn c_threads_call_mpi_at_mpi_thread_serialized() {
    for prog in [program("threads"), ours("threads")] {
        for mode in [&[][..], &["funneled"][..]] {
            let spec = Spec::new(2, mode).program(prog.clone());
            bounded(spec, &[]).expect(0, 2, &format!("{} {mode:?} on 2 ranks", prog.display()));
        }
    }
}

/// Partitioned point-to-point (`partitioned.c`) at 1 to 4 ranks: a ring
/// restarted with every way of marking partitions ready, and the errors.
#[test]
fn c_partitioned_sends_start_when_every_partition_is_ready() {
    for n in [1, 2, 4] {
        job(n, "partitioned", &[]).expect(0, n, &format!("partitioned on {n} ranks"));
    }
}

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
    let runs: u64 = std::env::var("PERTINAX_ABI_CAMPAIGN_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
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

/// `montecarlo.c`'s rounds and draws per round and rank.
const MC_ROUNDS: usize = 8;
const MC_SAMPLES: usize = 2000;

/// `montecarlo.c`'s hits of `rank` in `round`, recomputed (splitmix64
/// seeded by (rank, round), integers only).
fn mc_hits(rank: usize, round: usize) -> i64 {
    let mut s = ((rank as u64) << 32) | round as u64;
    let mut next = || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut h = 0;
    for _ in 0..MC_SAMPLES {
        let (x, y) = (next() >> 33, next() >> 33);
        if x * x + y * y < 1 << 62 {
            h += 1;
        }
    }
    h
}

/// Where a rank of `montecarlo.c` dies: in its `k`-th `MPI_Allreduce`
/// (round `k - 1`: it contributed the rounds before), or in the ring's
/// `MPI_Sendrecv` (after every round).
#[derive(Clone, Copy, Debug)]
enum McKill {
    Allreduce(usize),
    Sendrecv,
}

impl McKill {
    /// The launcher's `--kill` for rank `v` (the calls `lang` makes).
    fn spec(self, v: usize, lang: McLang) -> String {
        let nb = lang == McLang::CNonBlocking;
        match self {
            McKill::Allreduce(k) => format!("{v}@mpi.Allreduce#{k}"),
            McKill::Sendrecv if nb => format!("{v}@mpi.Isend#1"),
            McKill::Sendrecv => format!("{v}@mpi.Sendrecv#1"),
        }
    }
    /// The rounds rank `v` contributed to.
    fn rounds(self) -> usize {
        match self {
            McKill::Allreduce(k) => k - 1,
            McKill::Sendrecv => MC_ROUNDS,
        }
    }
}

/// `montecarlo.c`, the same with its ring non-blocking (`nb`), or
/// `tests/py/montecarlo.py` (the same program through the mpi4py wheel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum McLang {
    C,
    CNonBlocking,
    Python,
}

/// Runs `montecarlo.c` (or `.py`, `lang`) on `n` ranks with `kills` (rank,
/// where) and the launcher options `extra` (`--resilient` ...), and checks every
/// survivor's line against the values computed here from who was alive
/// in each round: the total of the hits, the contributors per round, the
/// size (the world's, failed ranks included), the ring (the left
/// neighbour's rank, or `dead_left` when it has failed: -1 for the `recv`
/// policy `stop`, -2 for `ignore`) and the sum of the surviving ranks of
/// the same parity (over `MPI_Comm_split`). Returns the total.
fn montecarlo(
    lang: McLang,
    n: usize,
    kills: &[(usize, McKill)],
    extra: &[&str],
    dead_left: i64,
    what: &str,
) -> i64 {
    let alive_in = |r: usize, round: usize| {
        kills
            .iter()
            .find(|(v, _)| *v == r)
            .is_none_or(|(_, k)| round < k.rounds())
    };
    let dead = |r: usize| kills.iter().any(|(v, _)| *v == r);
    let total: i64 = (0..MC_ROUNDS)
        .flat_map(|round| (0..n).map(move |r| (r, round)))
        .filter(|&(r, round)| alive_in(r, round))
        .map(|(r, round)| mc_hits(r, round))
        .sum();
    let contrib: Vec<String> = (0..MC_ROUNDS)
        .map(|round| (0..n).filter(|&r| alive_in(r, round)).count().to_string())
        .collect();
    let specs: Vec<String> = kills.iter().map(|&(v, k)| k.spec(v, lang)).collect();
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../pertinax-abi/tests/py/montecarlo.py")
        .to_string_lossy()
        .into_owned();
    let mut spec = match lang {
        McLang::C => Spec::new(n, &[]).program(program("montecarlo")),
        McLang::CNonBlocking => Spec::new(n, &["nb"]).program(program("montecarlo")),
        McLang::Python => Spec::new(n, &[&script]).program(mpicc().with_file_name("python3")),
    };
    for a in extra {
        spec = spec.launcher_arg(a);
    }
    let j = bounded(spec, &specs);
    let survivors = n - kills.len();
    let what = format!("{what}: montecarlo ({lang:?}) on {n} ranks, {extra:?}, kills {specs:?}");
    j.expect(0, survivors, &what);
    for r in (0..n).filter(|&r| !dead(r)) {
        let left = (r + n - 1) % n;
        let ring = if dead(left) { dead_left } else { left as i64 };
        let split: usize = (0..n).filter(|&q| q % 2 == r % 2 && !dead(q)).sum();
        let want = format!(
            "OK montecarlo rank={r} size={n} total={total} contrib={} ring={ring} split={split}",
            contrib.join(",")
        );
        let got = j.rank_lines("OK", r);
        assert_eq!(got, [want.as_str()], "{what}\n{}\n{}", j.stdout, j.stderr);
    }
    assert_eq!(
        j.stderr.matches("(injected").count(),
        kills.len(),
        "{what}\n{}",
        j.stderr
    );
    total
}

/// `pertinax run --resilient` makes an unchanged C program resilient
/// (`montecarlo.c`): fault-free it gives the plain run's result; with one
/// and with two ranks killed (in an `MPI_Allreduce` of the rounds, or in
/// the ring's `MPI_Sendrecv`) every survivor ends with exit 0 and the
/// exact result of the ranks alive in each round, ranks and size stable.
#[test]
fn an_unchanged_c_program_is_resilient_under_pertinax_run_resilient() {
    let plain = montecarlo(McLang::C, 4, &[], &[], -1, "plain");
    let resilient = montecarlo(McLang::C, 4, &[], &["--resilient"], -1, "fault-free");
    assert_eq!(plain, resilient);
    montecarlo(
        McLang::C,
        4,
        &[(2, McKill::Allreduce(3))],
        &["--resilient"],
        -1,
        "one kill",
    );
    montecarlo(
        McLang::C,
        5,
        &[(1, McKill::Allreduce(2)), (3, McKill::Allreduce(5))],
        &["--resilient"],
        -1,
        "two kills",
    );
    montecarlo(
        McLang::C,
        4,
        &[(0, McKill::Allreduce(1))],
        &["--resilient"],
        -1,
        "rank 0",
    );
    montecarlo(
        McLang::C,
        4,
        &[(1, McKill::Sendrecv)],
        &["--resilient"],
        -1,
        "ring",
    );
    montecarlo(
        McLang::C,
        4,
        &[(1, McKill::Sendrecv)],
        &["--resilient", "--resilient-policy", "recv=ignore"],
        -2,
        "ring, recv=ignore",
    );
    // Legio's hierarchical mode, with a hierarchy at 5 ranks.
    montecarlo(
        McLang::C,
        5,
        &[(2, McKill::Allreduce(3))],
        &[
            "--resilient=hier",
            "--resilient-threshold",
            "4",
            "--resilient-k",
            "2",
        ],
        -1,
        "hier",
    );
}

/// The same with its ring through the non-blocking calls (`montecarlo.c
/// nb`: `MPI_Irecv`, `MPI_Isend`, `MPI_Wait`) under `--resilient`:
/// fault-free, and with ranks killed in an `MPI_Allreduce` or the ring's
/// `MPI_Isend`, under both `recv` policies.
#[test]
fn an_unchanged_c_program_with_nonblocking_calls_is_resilient() {
    let nb = McLang::CNonBlocking;
    let plain = montecarlo(nb, 4, &[], &[], -1, "plain");
    let resilient = montecarlo(nb, 4, &[], &["--resilient"], -1, "fault-free");
    assert_eq!(plain, resilient);
    montecarlo(
        nb,
        5,
        &[(1, McKill::Allreduce(2)), (3, McKill::Allreduce(5))],
        &["--resilient"],
        -1,
        "two kills",
    );
    montecarlo(
        nb,
        4,
        &[(1, McKill::Sendrecv)],
        &["--resilient"],
        -1,
        "ring",
    );
    montecarlo(
        nb,
        4,
        &[(2, McKill::Sendrecv)],
        &["--resilient", "--resilient-policy", "recv=ignore"],
        -2,
        "ring, recv=ignore",
    );
}

/// The same Monte Carlo program in Python through the mpi4py wheel
/// (`tests/py/montecarlo.py`), unchanged, under `pertinax run
/// --resilient`: fault-free equal to the plain run, and the exact
/// survivors' result with one and two ranks killed (in an `MPI_Allreduce`
/// and in the ring's `MPI_Sendrecv`, whose failed source is an
/// `MPI.Exception` of class `MPIX_ERR_PROC_FAILED`).
#[test]
fn an_unchanged_mpi4py_program_is_resilient_under_pertinax_run_resilient() {
    let _ = abi_dir();
    let py = McLang::Python;
    let plain = montecarlo(py, 3, &[], &[], -1, "plain");
    assert_eq!(
        plain,
        montecarlo(py, 3, &[], &["--resilient"], -1, "fault-free")
    );
    montecarlo(
        py,
        4,
        &[(2, McKill::Allreduce(3))],
        &["--resilient"],
        -1,
        "one kill",
    );
    montecarlo(
        py,
        5,
        &[(0, McKill::Allreduce(6)), (3, McKill::Sendrecv)],
        &["--resilient"],
        -1,
        "two kills",
    );
}

/// Generalized requests, MPI 4.1's `MPI_Request_get_status_all`/`_any`/
/// `_some`, the MPI 4.1 buffers and the ABI queries (`grequest.c`, also
/// run at 2 to 4 ranks with the others): each callback called as MPI
/// says (once, with its `extra_state`, `query_fn` filling the status,
/// `free_fn` after it or at `MPI_Grequest_complete` for a request freed
/// first, the callbacks' error codes the call's), through every wait and
/// test; the `get_status` forms free and deactivate nothing; a
/// communicator's buffer before the process's, `MPI_BUFFER_AUTOMATIC`.
/// At one rank too, where every send is to itself.
#[test]
fn generalized_requests_get_status_and_buffers_from_c() {
    job(1, "grequest", &[]).expect(0, 1, "grequest on 1 rank");
}

/// The limits of `--resilient` for unchanged programs
/// (`resilient_limits.c`): on the resilient world and a duplicate, the
/// calls without a resilient form are `MPI_ERR_UNSUPPORTED_OPERATION`;
/// `MPI_COMM_SELF` stays plain; attributes work.
#[test]
fn calls_without_a_resilient_form_are_unsupported_under_resilient() {
    for n in [1, 3] {
        let spec = Spec::new(n, &[])
            .program(program("resilient_limits"))
            .launcher_arg("--resilient");
        bounded(spec, &[]).expect(0, n, &format!("resilient_limits on {n} ranks"));
    }
}

/// A seeded campaign of `montecarlo.c` under `pertinax run --resilient`:
/// 3 to 6 ranks, one or two killed (in a random round's `MPI_Allreduce`,
/// or one time in four in the ring's `MPI_Sendrecv`), the `recv` policy
/// `stop` (the default) or `ignore`. Every job: exit 0, no hang (the
/// harness's bound), every survivor's exact result.
/// `PERTINAX_ABI_RESILIENT_RUNS` jobs (20 by default).
#[test]
fn an_unchanged_c_program_survives_a_seeded_resilient_campaign() {
    resilient_campaign(McLang::C, "PERTINAX_ABI_RESILIENT_RUNS", 20);
}

/// The same campaign with `tests/py/montecarlo.py` through the mpi4py
/// wheel (other seeds): `PERTINAX_ABI_RESILIENT_PY_RUNS` jobs (6 by
/// default; each starts a Python interpreter per rank).
#[test]
fn an_unchanged_python_program_survives_a_seeded_resilient_campaign() {
    resilient_campaign(McLang::Python, "PERTINAX_ABI_RESILIENT_PY_RUNS", 6);
}

fn resilient_campaign(lang: McLang, var: &str, default: u64) {
    let runs: u64 = std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    let base = match lang {
        McLang::C | McLang::CNonBlocking => 1000,
        McLang::Python => 5000,
    };
    let mut killed = 0;
    for seed in 0..runs {
        let mut r = pertinax_wire::rng::SplitMix64::new(base + seed);
        let n = 3 + r.below(4) as usize;
        let mut victims: Vec<usize> = (0..n).collect();
        let mut kills = Vec::new();
        for _ in 0..1 + r.below(2) {
            let v = victims.remove(r.below(victims.len() as u64) as usize);
            let at = if r.below(4) == 0 {
                McKill::Sendrecv
            } else {
                McKill::Allreduce(1 + r.below(MC_ROUNDS as u64) as usize)
            };
            kills.push((v, at));
        }
        let ignore = r.below(2) == 0;
        let extra: &[&str] = if ignore {
            &["--resilient", "--resilient-policy", "recv=ignore"]
        } else {
            &["--resilient"]
        };
        // Half the C jobs make the ring's calls non-blocking.
        let lang = if lang == McLang::C && r.below(2) == 0 {
            McLang::CNonBlocking
        } else {
            lang
        };
        let what = format!("seed {}", base + seed);
        montecarlo(lang, n, &kills, extra, if ignore { -2 } else { -1 }, &what);
        killed += kills.len();
    }
    let name = match lang {
        McLang::C | McLang::CNonBlocking => "c",
        McLang::Python => "python",
    };
    eprintln!(
        "{name} resilient campaign: {runs} jobs, {killed} ranks killed, 0 hangs, 0 wrong answers"
    );
}

/// Python script `name` (`tests/py/<name>.py` of pertinax-abi) under the
/// venv's `python3`.
fn python(n: usize, name: &str) -> Job {
    let py = mpicc().with_file_name("python3");
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../pertinax-abi/tests/py")
        .join(format!("{name}.py"));
    let script = script.to_string_lossy().into_owned();
    // No LD_LIBRARY_PATH, no MPI4PY_LIBMPI: `pertinax run` makes the
    // wheel load pertinax's library (beside the launcher) by itself.
    let _ = abi_dir();
    run(Spec::new(n, &[&script]).program(py).bound(60))
}

/// The mpi4py wheel, unchanged and with no other step, on pertinax:
/// objects through every collective mpi4py builds on, buffers (a 1 MiB
/// message among them), split, and an error class as `MPI.Exception`
/// (`basics.py`); topologies, neighbourhood collectives and
/// intercommunicators (`topo.py`); at 1 to 4 ranks.
#[test]
fn the_mpi4py_wheel_runs_on_pertinax() {
    for n in [1, 2, 3, 4] {
        for name in ["basics", "topo"] {
            let j = python(n, name);
            j.expect(0, n, &format!("mpi4py {name} on {n} ranks"));
        }
    }
}

/// The functions and data `nm -D` lists as defined in a shared library,
/// whose names start with `MPI_`, `PMPI_`, `MPIX_` or `PMPIX_`.
fn exported(lib: &Path) -> std::collections::BTreeSet<String> {
    let out = Command::new("nm")
        .arg("-D")
        .arg("--defined-only")
        .arg(lib)
        .output()
        .expect("run nm (binutils)");
    assert!(out.status.success(), "nm {}", lib.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| {
            ["MPI_", "PMPI_", "MPIX_", "PMPIX_"]
                .iter()
                .any(|p| s.starts_with(p))
        })
        .map(str::to_string)
        .collect()
}

/// Every `MPI_`, `PMPI_` and `MPIX_` symbol MPICH's `libmpi.so.12`
/// exports is exported by ours, so a program linked against MPICH never
/// fails to load on pertinax.
#[test]
fn every_symbol_of_mpichs_libmpi_is_exported() {
    let theirs = mpicc()
        .parent()
        .and_then(Path::parent)
        .map(|v| v.join("lib/libmpi.so.12"))
        .expect("MPICH's lib directory");
    let ours = abi_dir().join("libmpi.so.12");
    let (want, have) = (exported(&theirs), exported(&ours));
    assert!(
        want.len() > 1400,
        "{}: {} symbols",
        theirs.display(),
        want.len()
    );
    let missing: Vec<&String> = want.difference(&have).collect();
    assert!(missing.is_empty(), "missing from ours: {missing:?}");
    // And every function pertinax's headers declare.
    let mut declared = 0;
    for h in ["mpi.h", "mpi-ext.h"] {
        let text = std::fs::read_to_string(include_dir().join(h)).expect("header");
        for line in text
            .lines()
            .filter(|l| l.ends_with(");") && !l.starts_with("typedef"))
        {
            let Some(name) = line
                .split('(')
                .next()
                .and_then(|head| head.rsplit([' ', '*']).next())
            else {
                continue;
            };
            assert!(
                have.contains(name) || name == "MPIR_Dup_fn",
                "{h} declares {name}, not exported"
            );
            declared += 1;
        }
    }
    assert!(declared > 1400, "{declared} functions declared");
}

/// The headers of pertinax-abi (`include/`).
fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pertinax-abi/include")
}

/// `pertinax mpicc` (or `mpicxx`), with the library Cargo built.
fn pertinax_cc(sub: &str) -> Command {
    let mut c = Command::new(launcher());
    c.arg(sub).env("PERTINAX_ABI_DIR", abi_dir());
    c
}

/// C program `name` of `tests/c/` built by `pertinax mpicc` against
/// pertinax's own `mpi.h`, once per test process.
fn ours(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c-ours-{name}"));
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if !built.iter().any(|n| n == name) {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pertinax-abi/tests/c")
            .join(format!("{name}.c"));
        compile(pertinax_cc("mpicc"), &src, &out);
        built.push(name.to_string());
    }
    out
}

/// A program written here (`src`, C or C++ by `ext`) built by `cc`.
fn inline(name: &str, ext: &str, src: &str, cc: Command) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("{name}.{ext}"));
    std::fs::write(&file, src).expect("write the source");
    let out = dir.join(format!("inline-{name}"));
    compile(cc, &file, &out);
    out
}

/// The MPICH 5 `mpi_proto.h` and `include/` beside MPICH's `mpicc`.
fn mpich_include() -> PathBuf {
    mpicc()
        .parent()
        .and_then(Path::parent)
        .map(|v| v.join("include"))
        .expect("MPICH's include directory")
}

/// `include/mpi.h`, `include/mpi-ext.h` and the tables of
/// `docs/c-functions.md` are what `gen/header.py` writes from the sources
/// now (re-run it after changing a constant or a function).
#[test]
fn the_generated_headers_and_tables_are_up_to_date() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pertinax-abi/gen/header.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("--check")
        .arg(mpich_include().join("mpi_proto.h"))
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every constant pertinax's `mpi.h` and `mpi-ext.h` define has the value
/// MPICH's `mpi.h` gives it (the ABI), and `MPI_Status` the same layout: a
/// program printing them, built against each header.
#[test]
fn the_headers_values_are_mpichs() {
    let text = std::fs::read_to_string(include_dir().join("mpi.h")).expect("mpi.h")
        + &std::fs::read_to_string(include_dir().join("mpi-ext.h")).expect("mpi-ext.h");
    let mut body = String::new();
    let mut n = 0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("#define ") else {
            continue;
        };
        let Some((name, value)) = rest.split_once(' ') else {
            continue;
        };
        if !name.starts_with("MPI") || name == "MPIX_ULFM" || value.contains("_function") {
            continue;
        }
        if value.starts_with('"') {
            body += &format!("    printf(\"{name} %s\\n\", {name});\n");
        } else {
            body += &format!("    printf(\"{name} %lld\\n\", (long long)({name}));\n");
        }
        n += 1;
    }
    assert!(n > 350, "{n} constants");
    for f in [
        "count_lo",
        "count_hi_and_cancelled",
        "MPI_SOURCE",
        "MPI_TAG",
        "MPI_ERROR",
    ] {
        body += &format!("    printf(\"{f} %zu\\n\", offsetof(MPI_Status, {f}));\n");
    }
    body += "    printf(\"MPI_Status %zu\\n\", sizeof(MPI_Status));\n";
    let src = format!(
        "#include <mpi.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {{\n{body}    return 0;\n}}\n"
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("values.c");
    std::fs::write(&file, src).expect("values.c");
    let print = |inc: &Path, tag: &str| {
        let exe = dir.join(format!("values-{tag}"));
        let res = Command::new("cc")
            .arg("-w")
            .arg("-I")
            .arg(inc)
            .arg("-o")
            .arg(&exe)
            .arg(&file)
            .output()
            .expect("run cc");
        assert!(
            res.status.success(),
            "cc with {tag}'s mpi.h:\n{}",
            String::from_utf8_lossy(&res.stderr)
        );
        let out = Command::new(&exe).output().expect("run the values program");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (ours, theirs) = (
        print(&include_dir(), "pertinax"),
        print(&mpich_include(), "mpich"),
    );
    let differ: Vec<(&str, &str)> = ours
        .lines()
        .zip(theirs.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert!(differ.is_empty(), "(ours, MPICH's): {differ:?}");
    assert_eq!(ours.lines().count(), theirs.lines().count());
}

/// `pertinax mpicc -show` prints the command with pertinax's headers and
/// library; `--version` names pertinax's version and the compiler's.
#[test]
fn pertinax_mpicc_shows_its_command_and_versions() {
    let out = pertinax_cc("mpicc")
        .args(["-show", "-O2", "-o", "prog", "prog.c"])
        .output()
        .expect("pertinax mpicc -show");
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{line}");
    let inc = include_dir().canonicalize().expect("include dir");
    for want in [
        format!("-I{}", inc.display()),
        "-O2 -o prog prog.c".to_string(),
        format!("-L{}", abi_dir().display()),
        format!("-Wl,-rpath,{}", abi_dir().display()),
        // abi_dir() holds only the soname.
        "-l:libmpi.so.12".to_string(),
    ] {
        assert!(line.contains(&want), "{want} in {line}");
    }
    let out = pertinax_cc("mpicc")
        .arg("-c")
        .arg("-show")
        .arg("x.c")
        .output()
        .expect("-c -show");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("-lmpi"),
        "compile only: no link options"
    );
    for sub in ["mpicc", "mpicxx"] {
        let out = pertinax_cc(sub)
            .arg("--version")
            .output()
            .expect("--version");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{sub} --version: {text}");
        assert!(
            text.starts_with(&format!("pertinax {sub} {}\n", env!("CARGO_PKG_VERSION"))),
            "{text}"
        );
        // The compiler's own `--version` follows (gcc, clang: "Copyright").
        assert!(text.lines().count() > 3, "{text}");
    }
}

/// The programs of `tests/c/` built by `pertinax mpicc` against
/// pertinax's own `mpi.h` (not MPICH's): every one fault-free at 3 ranks,
/// and the ULFM loop with a rank killed in its `MPI_Allreduce`.
#[test]
fn c_programs_built_by_pertinax_mpicc_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pertinax-abi/tests/c");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/c")
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "c")
                .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))?
        })
        .collect();
    names.sort();
    // resilient_limits.c checks what --resilient refuses: run with it.
    for name in names.iter().filter(|n| *n != "ulfm") {
        let mut spec = Spec::new(3, &[]).program(ours(name));
        if name == "resilient_limits" {
            spec = spec.launcher_arg("--resilient");
        }
        let j = bounded(spec, &[]);
        j.expect(0, 3, &format!("{name} (pertinax mpicc) on 3 ranks"));
    }
    let j = bounded(
        Spec::new(4, &[]).program(ours("ulfm")),
        &["2@mpi.Allreduce#3"],
    );
    j.expect(0, 3, "ulfm (pertinax mpicc) on 4 ranks, rank 2 killed");
    for l in j.ok_lines() {
        assert!(l.contains("size=3 sum=3 "), "{l}\n{}", j.stderr);
    }
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

/// A C++ program built by `pertinax mpicxx`: the headers compile as C++
/// (`extern "C"`), `mpi-ext.h` says ULFM is there, and the calls work.
#[test]
fn a_cxx_program_built_by_pertinax_mpicxx_runs() {
    let src = r#"#include <mpi.h>
#include <mpi-ext.h>
#include <cstdio>
#include <vector>
#ifndef MPIX_ULFM
#error "mpi-ext.h: no MPIX_ULFM"
#endif
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> all(size);
    MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int flag = 1;
    int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    long sum = 0;
    for (int v : all) sum += v;
    if (rc == MPI_SUCCESS && flag == 1 && sum == (long)size * (size - 1) / 2)
        std::printf("OK cxx rank=%d\n", rank);
    MPI_Finalize();
    return 0;
}
"#;
    let prog = inline("cxx", "cpp", src, pertinax_cc("mpicxx"));
    let j = bounded(Spec::new(3, &[]).program(prog), &[]);
    j.expect(0, 3, "a C++ program on 3 ranks");
}

/// A C program (built by MPICH's `mpicc`) that sends to a rank that does
/// not exist and says what the call returned, and which library it runs
/// on.
fn erroneous() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let src = r#"#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, x = 1, len, class;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(lib, &len);
    int rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &class);
    printf("OK errors rank=%d class=%d lib=%s\n", rank, class, strtok(lib, " "));
    MPI_Finalize();
    return 0;
}
"#;
        inline("erroneous", "c", src, Command::new(mpicc()))
    })
    .clone()
}

/// `pertinax run -initial-errhandler mpi_errors_return` (mpiexec's key):
/// an erroneous call returns its error class instead of ending the job,
/// as it does by default (`MPI_ERRORS_ARE_FATAL`).
#[test]
fn initial_errhandler_makes_errors_return() {
    let j = bounded(Spec::new(2, &[]).program(erroneous()), &[]);
    assert_ne!(j.code, Some(0), "fatal by default:\n{}", j.stderr);
    assert_eq!(j.oks(), 0, "{}", j.stderr);
    assert!(j.stderr.contains("MPI_Send"), "{}", j.stderr);
    let spec = Spec::new(2, &[])
        .program(erroneous())
        .launcher_arg("-initial-errhandler")
        .launcher_arg("mpi_errors_return");
    let j = bounded(spec, &[]);
    j.expect(0, 2, "-initial-errhandler mpi_errors_return");
    for l in j.ok_lines() {
        assert!(l.contains("class=6 lib=pertinax"), "MPI_ERR_RANK: {l}");
    }
}

/// A program built by MPICH's `mpicc` runs on pertinax's library under
/// `pertinax run` with no `LD_LIBRARY_PATH` set by anyone: the launcher
/// puts the library's directory first (its `RUNPATH` names MPICH's).
#[test]
fn pertinax_run_needs_no_library_path() {
    let _ = abi_dir(); // Cargo's libmpi.so beside the launcher
    let out = Command::new(launcher())
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("PERTINAX_ABI_DIR")
        .args(["run", "-n", "2", "--timeout", "60", "-host", "localhost:2"])
        .args(["-initial-errhandler", "mpi_errors_return", "-wdir", "/"])
        .arg(erroneous())
        .output()
        .expect("run the launcher");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.matches("OK errors").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("lib=pertinax").count(), 2, "{stdout}");
}
