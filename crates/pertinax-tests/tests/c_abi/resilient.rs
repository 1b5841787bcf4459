//! `pertinax run --resilient` for unchanged programs: `montecarlo.c` (and
//! `montecarlo.py` through the mpi4py wheel) with ranks killed, each
//! survivor's result checked against the ranks alive in each round, and
//! the calls `--resilient` refuses (`resilient_limits.c`).

use std::path::Path;

use pertinax_harness::Spec;

use super::support::{abi_dir, bounded, mpicc, program};

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
/// (`MPI_Iallreduce` with `nb`; round `k - 1`: it contributed the rounds
/// before), or in the ring's `MPI_Sendrecv` (`MPI_Isend`; after every
/// round).
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
            McKill::Allreduce(k) if nb => format!("{v}@mpi.Iallreduce#{k}"),
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

/// `montecarlo.c`, the same through the non-blocking calls (`nb`), or
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
        if lang != McLang::Python {
            // MPIX_Comm_get_failed knows every death by the end (the
            // split after the ring excluded them).
            let want = format!("KNOWN montecarlo rank={r} failed={}", kills.len());
            let got = j.rank_lines("KNOWN", r);
            assert_eq!(got, [want.as_str()], "{what}\n{}\n{}", j.stdout, j.stderr);
        }
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

/// The same through the non-blocking calls (`montecarlo.c nb`: per round
/// `MPI_Iallreduce` and `MPI_Ibarrier`, waited for in the other order; the
/// ring's `MPI_Irecv`, `MPI_Isend`, `MPI_Wait`) under `--resilient`:
/// fault-free, and with ranks killed in an `MPI_Iallreduce` or the ring's
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
/// `stop` (the default) or `ignore`; half the jobs through the
/// non-blocking calls (`nb`: the kills in `MPI_Iallreduce` and
/// `MPI_Isend`). Every job: exit 0, no hang (the
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
    let runs: u64 = pertinax_harness::env_count(var, default);
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
        // Half the C jobs make their rounds and ring non-blocking.
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
