//! The `Communicator` trait covers every operation of a `Comm`: one
//! generic function calls them all (`communicator-ranks`) on the plain
//! world, a boxed communicator and a guard, and checks the results; a
//! resilient communicator answers what it does not repair with
//! `Unsupported` and its reason. On the native backend, and on the MPI
//! backend when the tests are built for it and Open MPI is there.

use pertinax_harness::{mpi_ready, run, Job, Spec, TestBackend};
use pertinax_tests::scenario::Communicator as Sc;

/// The backends this build runs on.
fn backends() -> Vec<TestBackend> {
    let mut b = vec![TestBackend::Native];
    if mpi_ready() {
        b.push(TestBackend::Mpi);
    }
    b
}

fn job(on: TestBackend, n: usize, scenario: Sc) -> Job {
    run(Spec::scenario(n, scenario, &[])
        .program(env!("CARGO_BIN_EXE_communicator-ranks"))
        .on(on)
        .bound(60))
}

#[test]
fn every_operation_through_the_trait() {
    for on in backends() {
        for scenario in [Sc::Plain, Sc::Boxed, Sc::Guarded] {
            for n in [1, 3, 4] {
                job(on, n, scenario).expect(0, n, &format!("{scenario} on {on:?}"));
            }
        }
    }
}

#[test]
fn a_resilient_communicator_says_what_it_does_not_offer() {
    for on in backends() {
        job(on, 3, Sc::Resilient).expect(0, 3, &format!("resilient on {on:?}"));
    }
}
