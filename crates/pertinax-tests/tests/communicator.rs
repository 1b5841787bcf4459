//! The `Communicator` trait covers every operation of a `Comm`: one
//! generic function calls them all (`communicator-ranks`) on the plain
//! world, a boxed communicator and a guard, and checks the results; a
//! resilient communicator answers what it does not repair with
//! `Unsupported` and its reason.

use pertinax_harness::{run, Spec};

fn job(n: usize, scenario: &str) -> pertinax_harness::Job {
    run(Spec::new(n, &[scenario])
        .program(env!("CARGO_BIN_EXE_communicator-ranks"))
        .bound(60))
}

#[test]
fn every_operation_through_the_trait() {
    for scenario in ["plain", "boxed", "guarded"] {
        for n in [1, 3, 4] {
            job(n, scenario).expect(0, n, scenario);
        }
    }
}

#[test]
fn a_resilient_communicator_says_what_it_does_not_offer() {
    job(3, "resilient").expect(0, 3, "resilient");
}
