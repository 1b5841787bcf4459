//! How pertinax starts Open MPI's `mpirun` for its MPI backend.

/// `mpirun`'s options for every job of the MPI backend that the harness
/// and the benchmarks start: ULFM's failure semantics, no PMIx fence in
/// `MPI_Finalize` (it waits for dead processes, ompi issue 11404), no HAN
/// collectives (not fault tolerant, ompi issue 13915; Open MPI selects
/// them only across nodes). Measured in docs/cluster.md, "Which Open MPI".
pub const FT: &[&str] = &[
    "--with-ft",
    "ulfm",
    "--mca",
    "async_mpi_finalize",
    "1",
    "--mca",
    "coll",
    "^han",
];
