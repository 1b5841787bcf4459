//! Rank program for spawn across worlds, on either backend (written for
//! the MPI backend's `.ci/mpi-spawn`, where the children live in another
//! `MPI_COMM_WORLD`): `spawn-ranks SCENARIO [ARGS]`. Every process
//! (parents and children) prints `OK SCENARIO rank=R ...` when its checks
//! passed; a failed check prints `FAIL ...` and exits 1.
//!
//! Scenarios:
//! - `cross KIDS`: the world spawns `KIDS` children of this program; both
//!   sides exchange messages across the intercommunicator (every parent
//!   to every child and back, checked by content and source), agree on it,
//!   merge it (parents first) and check an allreduce and a broadcast on
//!   the merged communicator; then split the merged communicator into
//!   the even and odd merged ranks (communicators that mix parents and
//!   children, i.e. span two worlds) and check an allreduce on each.
//! - `bad_path`: the world spawns a program that does not exist: every
//!   parent gets `SpawnFailed` (a typed error, the same everywhere), the
//!   world still works, and a spawn of this program afterwards succeeds
//!   (merge and allreduce checked, as in `cross` with one child).
//! - `names` (native only: the MPI backend has no name service): rank 0
//!   publishes a service name; after a barrier every rank looks it up,
//!   the last one's publish of the same name is `NameTaken` and a lookup
//!   of an unknown name `NameNotFound`; a spawned child finds the name
//!   too (the table is the job's); rank 0's unpublish for another port is
//!   `NameNotPublished`, for the right one succeeds; after a barrier every
//!   lookup is `NameNotFound` and a second unpublish `NameNotPublished`.

use pertinax::{Comm, Error, Op, Rank, Universe};
use pertinax::{Communicator as _, CommunicatorExt as _};

use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::scenario::Spawn;
use pertinax_tests::{arg, check, e};

type R = Result<String, String>;

/// The value parent `p` sends child `c`, and the reply.
fn down(p: usize, c: usize) -> u64 {
    1000 * p as u64 + c as u64
}
fn up(p: usize, c: usize) -> u64 {
    7 * down(p, c) + 3
}

/// Both sides of a spawn: messages across, an agreement, the merge, and
/// collectives on the merged communicator and on communicators split off
/// it that mix both worlds.
fn exercise(inter: &Comm, child: bool, parents: usize, kids: usize) -> Result<String, String> {
    check!(inter.is_inter(), "not an intercommunicator");
    let me = inter.rank().index();
    check!(
        inter.remote_size() == if child { parents } else { kids },
        "remote size {}",
        inter.remote_size()
    );
    if child {
        for p in 0..parents {
            let mut b = [0u64];
            let st = inter.recv(&mut b, p, 11).map_err(e)?;
            check!(
                st.unwrap().source == Rank::from(p),
                "source {}",
                st.unwrap().source
            );
            check!(b[0] == down(p, me), "from parent {p}: {}", b[0]);
            inter.send(&[up(p, me)], p, 12).map_err(e)?;
        }
    } else {
        for c in 0..kids {
            inter.send(&[down(me, c)], c, 11).map_err(e)?;
        }
        for c in 0..kids {
            let mut b = [0u64];
            inter.recv(&mut b, c, 12).map_err(e)?;
            check!(b[0] == up(me, c), "reply of child {c}: {}", b[0]);
        }
    }
    check!(
        inter.agree(6).map_err(e)? == 6,
        "agreement on the intercommunicator"
    );
    let m = inter.merge(child).map_err(e)?;
    let n = parents + kids;
    check!(m.size() == n, "merged size {}", m.size());
    let want = if child { parents + me } else { me };
    let mr = m.rank().index();
    check!(mr == want, "merged rank {mr} want {want}");
    let mut sum = [0u64];
    m.allreduce(&[mr as u64 + 1], &mut sum, &Op::sum())
        .map_err(e)?;
    check!(
        sum[0] == (n * (n + 1) / 2) as u64,
        "allreduce on the merged comm: {}",
        sum[0]
    );
    // From the last child: crosses the worlds.
    let mut b = [if mr == n - 1 { 4242u64 } else { 0 }];
    m.bcast(&mut b, n - 1).map_err(e)?;
    check!(b[0] == 4242, "bcast on the merged comm: {}", b[0]);
    let half = m
        .split(Some((mr % 2) as u32), mr as i32)
        .map_err(e)?
        .ok_or("no color")?;
    let members: Vec<u64> = (0..n as u64).filter(|r| r % 2 == mr as u64 % 2).collect();
    check!(half.size() == members.len(), "half size {}", half.size());
    let mut s = [0u64];
    half.allreduce(&[mr as u64], &mut s, &Op::sum())
        .map_err(e)?;
    check!(
        s[0] == members.iter().sum::<u64>(),
        "allreduce on the split comm: {}",
        s[0]
    );
    half.free().map_err(e)?;
    m.free().map_err(e)?;
    Ok(format!(
        "{} merged={mr}/{n}",
        if child { "child" } else { "parent" }
    ))
}

fn spawn_self(w: &Comm, args: &[&str], kids: usize) -> Result<Comm, Error> {
    let exe = std::env::current_exe().map_err(|x| Error::SpawnFailed(x.to_string()))?;
    w.spawn(&exe.to_string_lossy(), args, kids, Rank(0))
}

fn cross(u: &Universe, w: &Comm, a: &[String]) -> R {
    let kids = arg(a, 0, 2) as usize;
    match u.parent() {
        Some(p) => exercise(&p, true, p.remote_size(), w.size()),
        None => {
            let inter =
                spawn_self(w, &[Spawn::Cross.as_str(), &kids.to_string()], kids).map_err(e)?;
            exercise(&inter, false, w.size(), kids)
        }
    }
}

fn bad_path(u: &Universe, w: &Comm, _a: &[String]) -> R {
    if let Some(p) = u.parent() {
        return exercise(&p, true, p.remote_size(), w.size());
    }
    let r = w.spawn("/nonexistent/pertinax-no-such-program", &[], 2, Rank(0));
    check!(
        matches!(r, Err(Error::SpawnFailed(_))),
        "spawn of a missing program: {r:?}"
    );
    w.barrier().map_err(e)?;
    let inter = spawn_self(w, &[Spawn::BadPath.as_str()], 1).map_err(e)?;
    let done = exercise(&inter, false, w.size(), 1)?;
    Ok(format!("error=SpawnFailed then {done}"))
}

const SERVICE: &str = "pertinax-test-service";
const PORT: &str = "pertinax-port:0:0";

fn names(u: &Universe, w: &Comm, _a: &[String]) -> R {
    if let Some(p) = u.parent() {
        let found = u.lookup_name(SERVICE).map_err(e)?;
        check!(found == PORT, "child looked up {found:?}");
        // Parent 0 unpublishes only after this lookup.
        p.send(&[1u64], 0, 21).map_err(e)?;
        return Ok("child found=yes".into());
    }
    let me = w.rank().index();
    let last = w.size() - 1;
    if me == 0 {
        u.publish_name(SERVICE, PORT).map_err(e)?;
    }
    w.barrier().map_err(e)?;
    let found = u.lookup_name(SERVICE).map_err(e)?;
    check!(found == PORT, "looked up {found:?}");
    if me == last {
        let again = u.publish_name(SERVICE, "pertinax-port:1:0");
        check!(
            matches!(&again, Err(Error::NameTaken { port, .. }) if port == PORT),
            "publish of a taken name: {again:?}"
        );
    }
    let unknown = u.lookup_name("pertinax-no-such-service");
    check!(
        matches!(unknown, Err(Error::NameNotFound { .. })),
        "lookup of an unknown name: {unknown:?}"
    );
    let inter = spawn_self(w, &[Spawn::Names.as_str()], 1).map_err(e)?;
    if me == 0 {
        let mut b = [0u64];
        inter.recv(&mut b, 0, 21).map_err(e)?;
        check!(b[0] == 1, "child's word {}", b[0]);
        let wrong = u.unpublish_name(SERVICE, "pertinax-port:1:0");
        check!(
            matches!(wrong, Err(Error::NameNotPublished { .. })),
            "unpublish for another port: {wrong:?}"
        );
        u.unpublish_name(SERVICE, PORT).map_err(e)?;
    }
    w.barrier().map_err(e)?;
    let gone = u.lookup_name(SERVICE);
    check!(
        matches!(gone, Err(Error::NameNotFound { .. })),
        "lookup after the unpublish: {gone:?}"
    );
    if me == 0 {
        let twice = u.unpublish_name(SERVICE, PORT);
        check!(
            matches!(twice, Err(Error::NameNotPublished { .. })),
            "second unpublish: {twice:?}"
        );
    }
    Ok("parent published=yes".into())
}

/// Three parents spawn two children; the test kills the asker (rank 0)
/// at `ft.spawn.started`. A child that starts says so; a surviving parent
/// says what its spawn returned (`ok`, or the error's kind).
fn asker_dies(u: &Universe, w: &Comm, _a: &[String]) -> R {
    if u.parent().is_some() {
        return Ok(format!("child of={}", w.size()));
    }
    match spawn_self(w, &[Spawn::AskerDies.as_str()], 2) {
        Ok(_) => Ok("parent spawn=ok".into()),
        Err(Error::SpawnFailed(_)) => Ok("parent spawn=SpawnFailed".into()),
        Err(Error::ProcFailed { .. }) => Ok("parent spawn=ProcFailed".into()),
        Err(x) => Err(format!("spawn: {x}")),
    }
}

fn main() {
    let sc = Scenario::<Spawn>::from_args();
    let u: Universe = setup("init", pertinax::init());
    let w = u.world();
    let rest = sc.args();
    let r = match sc.scenario() {
        Spawn::Cross => cross(&u, &w, rest),
        Spawn::BadPath => bad_path(&u, &w, rest),
        Spawn::Names => names(&u, &w, rest),
        Spawn::AskerDies => asker_dies(&u, &w, rest),
    };
    report(sc.name(), w.rank().index(), r).or_exit();
    drop(u);
}
