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
//!
//! By subject: `programs.rs` (every program of `tests/c/` fault-free, the
//! mpi4py wheel), `ulfm.rs` (ULFM with kills), `resilient.rs` (`pertinax
//! run --resilient` with kills), `toolchain.rs` (symbols, headers,
//! `pertinax mpicc`/`mpicxx`, the launcher's loading of the library);
//! `support.rs` builds and runs the programs. One test binary: a program
//! is built once per process and shared by the tests that run it.

mod programs;
mod resilient;
mod support;
mod toolchain;
mod ulfm;
