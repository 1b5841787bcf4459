//! Rank program for the collective tests: `collective-ranks SCENARIO [ARGS]`.
//!
//! Every collective is compared with a sequential reference. Inputs are a
//! function of (call seed, rank, block), so every rank recomputes what
//! every other rank contributed and checks its own result exactly:
//! integer and user operations bit for bit, floats with inputs chosen so
//! that any grouping is exact (dyadic sums, power-of-two products,
//! min/max with NaN and signed zeros). The `fp` scenario uses full
//! precision floats instead and checks closeness to the rank-order
//! reference plus bitwise agreement across ranks, variants and runs.
//!
//! Prints `OK SCENARIO rank=R` when every check passed; prints the first
//! failed check and exits 1 otherwise.
//!
//! Scenarios:
//! - `all SEED [world|split|self]`: every collective, every root, random
//!   counts, element types and operations (see [`plan`]).
//! - `large SEED`: the same with counts of more than 1 MiB per call.
//! - `noncomm SEED`: user operations (commutative and not) on every
//!   reducing collective, every root, counts up to the large-message paths.
//! - `fp SEED JITTER_US`: full-precision float reductions; prints
//!   `HASH rank=R H` over every result's bits.
//! - `overlap SEED ITERS`: non-blocking collectives outstanding at once on
//!   four communicators, mixed with point-to-point messages and blocking
//!   collectives.
//! - `longrun COUNT SEED`: back-to-back small collectives, each checked.
//! - `pending ITERS`: blocking collectives while a rank's receives and
//!   agreement that its peers wait for are pending.
//! - `badargs`: typed errors for bad roots and lengths, zero counts, the
//!   self communicator, a freed communicator.
//! - `mismatch BYTES less|more`: ranks disagree with the root on a bcast
//!   count.
//! - `allreduce COUNT`: one allreduce of COUNT u64.
//! - `agv reversed|gaps|zeros`: allgatherv with equal counts and
//!   displacements out of rank order or with gaps.
//! - `skew BYTES`: alltoallv where only the block from rank 0 to rank 1
//!   is large.
//!
//! Layout: the element types and operations are in `elem.rs`, the inputs
//! and comparisons in `input.rs`, one collective against the reference in
//! `coll.rs`; the scenarios in `random.rs` (`all`, `large`, `noncomm`),
//! `fp.rs`, `overlap.rs` (`overlap`, `longrun`), `pending.rs` and `edge.rs` (the
//! others).

use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::scenario::Collective;

mod coll;
mod edge;
mod elem;
mod fp;
mod input;
mod overlap;
mod pending;
mod random;

use edge::{agv, allreduce, badargs, mismatch, skew};
use fp::fp;
use overlap::{longrun, overlap};
use pending::pending;
#[cfg(doc)]
use random::plan;
use random::{all, large, noncomm};

type R = Result<(), String>;

fn main() {
    let sc = Scenario::<Collective>::from_args();
    let u = setup("init", pertinax::init());
    let w = u.world();
    let a = sc.args();
    let r: R = match sc.scenario() {
        Collective::All => all(&u, a),
        Collective::Large => large(&u, a),
        Collective::Noncomm => noncomm(&u, a),
        Collective::Fp => fp(&u, a),
        Collective::Overlap => overlap(&u, a),
        Collective::Longrun => longrun(&u, a),
        Collective::Badargs => badargs(&u, a),
        Collective::Mismatch => mismatch(&u, a),
        Collective::Skew => skew(&u, a),
        Collective::Agv => agv(&u, a),
        Collective::Allreduce => allreduce(&u, a),
        Collective::Pending => pending(&u, a),
    };
    report(sc.name(), w.rank().index(), r.map(|()| String::new())).or_exit();
    setup("finalize", u.finalize());
}
