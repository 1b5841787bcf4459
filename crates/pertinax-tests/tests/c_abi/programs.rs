//! The programs of `tests/c/` fault-free, each checking its area (built by
//! MPICH's `mpicc`, and by `pertinax mpicc`), and the mpi4py wheel's
//! scripts of `tests/py/`.

use std::path::Path;

use pertinax_harness::{run, Job, Spec};

use super::support::{abi_dir, bounded, job, mpicc, ours, program};

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
        // ulfm.c and killed_holder.c run with kills (ulfm.rs),
        // resilient_limits.c under --resilient; iagree.c calls Open MPI's
        // MPIX_Comm_iagree, which MPICH's headers and library lack
        // (pertinax mpicc builds it below).
        .filter(|n| !["ulfm", "killed_holder", "resilient_limits", "iagree"].contains(&n.as_str()))
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

/// Name publishing (`names.c`, also run at 2 to 4 ranks with the others)
/// at 1 rank: the launcher's table answers a singleton world as well
/// (publish, lookup, the error classes; no connect).
#[test]
fn c_names_are_published_at_one_rank() {
    job(1, "names", &[]).expect(0, 1, "names on 1 rank");
}

/// MPI-IO (`file.c`, also run at 2 to 4 ranks with the others) at 1
/// rank: the shared pointer in memory, every call on a one-process
/// communicator.
#[test]
fn c_file_io_runs_at_one_rank() {
    job(1, "file", &[]).expect(0, 1, "file on 1 rank");
}

/// One-sided communication (`rma.c`, also run at 2 to 4 ranks with the
/// others) at 1 rank: every target is the process itself.
#[test]
fn c_rma_runs_at_one_rank() {
    job(1, "rma", &[]).expect(0, 1, "rma on 1 rank");
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
    let seeds: u64 = pertinax_harness::env_count("PERTINAX_ABI_BADARGS_SEEDS", 8);
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
    for name in names
        .iter()
        .filter(|n| *n != "ulfm" && *n != "killed_holder")
    {
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
