//! The targeted scenarios: typed errors for bad arguments, zero counts,
//! the self communicator and a freed communicator (`badargs`); ranks that
//! disagree with the root on a bcast count (`mismatch`); one allreduce of a
//! given count (`allreduce`); allgatherv displacements out of rank order or
//! with gaps (`agv`); an alltoallv with one large block (`skew`).

use pertinax::{Communicator as _, CommunicatorExt as _};
use pertinax::{Error, Op, PendingOp, Rank, Universe};
use pertinax_tests::{arg, check, e};

use super::random::plan;
use super::R;

/// `badargs`: consistent bad arguments give typed errors on every rank
/// without communication (a checked allreduce after each proves that the
/// ranks still agree); zero counts, the self communicator and a freed
/// communicator.
pub(super) fn badargs(u: &Universe, _a: &[String]) -> R {
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let mut step = 0u64;
    let mut sync = |what: &str| -> R {
        step += 1;
        let mut o = [0u64];
        w.allreduce(&[step], &mut o, &Op::sum())
            .map_err(|x| format!("after {what}: {}", e(x)))?;
        check!(
            o[0] == step * n as u64,
            "after {what}: ranks out of step ({})",
            o[0]
        );
        Ok(())
    };
    let rank_err = |bad: i32, what: &str, r: pertinax::Result<()>| -> R {
        match r {
            Err(Error::InvalidRank { rank, size }) if rank == Rank(bad) && size == n => Ok(()),
            other => Err(format!(
                "{what} with root {bad}: expected InvalidRank, got {other:?}"
            )),
        }
    };
    let arg_err = |what: &str, r: pertinax::Result<()>| -> R {
        match r {
            Err(Error::InvalidArgument(_)) => Ok(()),
            other => Err(format!("{what}: expected InvalidArgument, got {other:?}")),
        }
    };
    let nb = |r: pertinax::Result<PendingOp<'_>>| r.and_then(|q| q.wait()).map(|_| ());
    for bad in [n as i32, n as i32 + 5, -1, i32::MIN, i32::MAX] {
        let root = Rank(bad);
        let (x, mut o, mut b) = ([1u32; 4], [0u32; 4], [2u32; 4]);
        let mut big = vec![0u32; 4 * n];
        rank_err(bad, "bcast", w.bcast(&mut b, root).map(drop))?;
        rank_err(
            bad,
            "ibcast",
            pertinax::scope(|s| nb(w.ibcast(s, &mut b, root))),
        )?;
        rank_err(
            bad,
            "reduce",
            w.reduce(&x, &mut o, &Op::sum(), root).map(drop),
        )?;
        rank_err(
            bad,
            "reduce_in_place",
            w.reduce_in_place(&mut b, &Op::sum(), root).map(drop),
        )?;
        rank_err(
            bad,
            "ireduce",
            pertinax::scope(|s| nb(w.ireduce(s, &x, &mut o, &Op::sum(), root))),
        )?;
        rank_err(bad, "gather", w.gather(&x, &mut big, root).map(drop))?;
        rank_err(
            bad,
            "gatherv",
            w.gatherv(
                &x,
                &mut big,
                &vec![4; n],
                &(0..n).map(|i| 4 * i).collect::<Vec<_>>(),
                root,
            )
            .map(drop),
        )?;
        rank_err(bad, "scatter", w.scatter(&big, &mut o, root).map(drop))?;
        rank_err(
            bad,
            "scatterv",
            w.scatterv(
                &big,
                &vec![4; n],
                &(0..n).map(|i| 4 * i).collect::<Vec<_>>(),
                &mut o,
                root,
            )
            .map(drop),
        )?;
        sync("bad roots")?;
    }
    let op = Op::<u32>::sum();
    let (x3, mut o4) = ([1u32; 3], [0u32; 4]);
    arg_err(
        "allreduce 3 into 4",
        w.allreduce(&x3, &mut o4, &op).map(drop),
    )?;
    arg_err(
        "iallreduce 3 into 4",
        pertinax::scope(|s| nb(w.iallreduce(s, &x3, &mut o4, &op))),
    )?;
    arg_err("scan 3 into 4", w.scan(&x3, &mut o4, &op).map(drop))?;
    arg_err("exscan 3 into 4", w.exscan(&x3, &mut o4, &op).map(drop))?;
    sync("reduction lengths")?;
    let mut odd = vec![0u32; 2 * n + 1];
    arg_err("allgather", w.allgather(&[1u32, 2], &mut odd).map(drop))?;
    arg_err(
        "iallgather",
        pertinax::scope(|s| nb(w.iallgather(s, &[1u32, 2], &mut odd))),
    )?;
    if n > 1 {
        arg_err(
            "allgather_in_place",
            w.allgather_in_place(&mut odd).map(drop),
        )?;
        let send = vec![0u32; 2 * n + 1];
        arg_err(
            "alltoall of a non-multiple",
            w.alltoall(&send, &mut odd).map(drop),
        )?;
    }
    let send = vec![0u32; 2 * n];
    arg_err(
        "alltoall with unequal buffers",
        w.alltoall(&send, &mut odd).map(drop),
    )?;
    arg_err(
        "ialltoall with unequal buffers",
        pertinax::scope(|s| nb(w.ialltoall(s, &send, &mut odd))),
    )?;
    sync("gather/alltoall lengths")?;
    let mut one = [0u32; 1];
    arg_err(
        "reduce_scatter with n+1 counts",
        w.reduce_scatter(&send, &mut one, &vec![1; n + 1], &op)
            .map(drop),
    )?;
    arg_err(
        "reduce_scatter with send != sum of counts",
        w.reduce_scatter(&send, &mut one, &vec![1; n], &op)
            .map(drop),
    )?;
    arg_err(
        "reduce_scatter with recv != my count",
        w.reduce_scatter(&send, &mut odd, &vec![2; n], &op)
            .map(drop),
    )?;
    arg_err(
        "reduce_scatter_block with send != n*recv",
        w.reduce_scatter_block(&odd, &mut one, &op).map(drop),
    )?;
    sync("reduce_scatter lengths")?;
    let cnt = vec![2usize; n];
    let dis: Vec<usize> = (0..n).map(|i| 2 * i).collect();
    let mut recv = vec![0u32; 2 * n];
    arg_err(
        "allgatherv with n+1 counts",
        w.allgatherv(
            &[1u32, 2],
            &mut recv,
            &vec![2; n + 1],
            &(0..=n).collect::<Vec<_>>(),
        )
        .map(drop),
    )?;
    arg_err(
        "allgatherv with a block past the end",
        w.allgatherv(
            &[1u32, 2],
            &mut recv,
            &cnt,
            &dis.iter().map(|d| d + 1).collect::<Vec<_>>(),
        )
        .map(drop),
    )?;
    arg_err(
        "allgatherv with my count != send",
        w.allgatherv(&[1u32, 2, 3], &mut recv, &cnt, &dis).map(drop),
    )?;
    arg_err(
        "alltoallv with n-1 counts",
        w.alltoallv(&send, &cnt[1..], &dis[1..], &mut recv, &cnt, &dis)
            .map(drop),
    )?;
    arg_err(
        "alltoallv with a send block past the end",
        w.alltoallv(&send[1..], &cnt, &dis, &mut recv, &cnt, &dis)
            .map(drop),
    )?;
    arg_err(
        "alltoallv with a receive block past the end",
        w.alltoallv(&send, &cnt, &dis, &mut recv[1..], &cnt, &dis)
            .map(drop),
    )?;
    let mut rc = cnt.clone();
    rc[me] = 1;
    arg_err(
        "alltoallv with self block 2 vs 1",
        w.alltoallv(&send, &cnt, &dis, &mut recv, &rc, &dis)
            .map(drop),
    )?;
    sync("v-collective layouts")?;
    // Zero counts.
    let (z, mut zo) = ([0u64; 0], [0u64; 0]);
    let zc = vec![0usize; n];
    w.bcast(&mut zo, n - 1).map_err(e)?;
    w.reduce(&z, &mut zo, &Op::sum(), 0).map_err(e)?;
    w.allreduce(&z, &mut zo, &Op::sum()).map_err(e)?;
    w.allreduce_in_place(&mut zo, &Op::max()).map_err(e)?;
    w.scan(&z, &mut zo, &Op::sum()).map_err(e)?;
    w.exscan(&z, &mut zo, &Op::sum()).map_err(e)?;
    w.reduce_scatter(&z, &mut zo, &zc, &Op::sum()).map_err(e)?;
    w.reduce_scatter_block(&z, &mut zo, &Op::sum()).map_err(e)?;
    w.gather(&z, &mut zo, 0).map_err(e)?;
    w.gatherv(&z, &mut zo, &zc, &zc, n - 1).map_err(e)?;
    w.scatter(&z, &mut zo, 0).map_err(e)?;
    w.scatterv(&z, &zc, &zc, &mut zo, n - 1).map_err(e)?;
    w.allgather(&z, &mut zo).map_err(e)?;
    w.allgather_in_place(&mut zo).map_err(e)?;
    w.allgatherv(&z, &mut zo, &zc, &zc).map_err(e)?;
    w.alltoall(&z, &mut zo).map_err(e)?;
    w.alltoallv(&z, &zc, &zc, &mut zo, &zc, &zc).map_err(e)?;
    pertinax::scope(|s| -> pertinax::Result<()> {
        let mut reqs = vec![w.ibarrier(s)?];
        pertinax::wait_all(&mut reqs)
            .map(|_| ())
            .map_err(Into::into)
    })
    .map_err(e)?;
    sync("zero counts")?;
    // The self communicator: everything, and its own bad root.
    let me_only = u.self_comm();
    check!(
        me_only.size() == 1 && me_only.rank() == Rank(0),
        "self comm shape"
    );
    plan(&me_only, 99 + me as u64)?;
    let r = me_only.bcast(&mut [1u8], 1);
    check!(
        matches!(
            r,
            Err(Error::InvalidRank {
                rank: Rank(1),
                size: 1
            })
        ),
        "bcast on self with root 1: {r:?}"
    );
    // A freed communicator.
    let d = w.dup().map_err(e)?;
    d.free().map_err(e)?;
    let mut o = [0u32];
    for (what, r) in [
        ("barrier", d.barrier()),
        ("allreduce", d.allreduce(&[1u32], &mut o, &op)),
        ("bcast", d.bcast(&mut o, 0)),
        (
            "ibarrier",
            pertinax::scope(|s| nb(d.ibarrier(s))).map(|()| pertinax::Outcome::default()),
        ),
    ] {
        check!(
            matches!(r, Err(Error::CommFreed)),
            "{what} on a freed communicator: {r:?}"
        );
    }
    sync("freed communicator")
}

/// `mismatch BYTES less|more`: the root broadcasts BYTES, the other ranks
/// expect half as many (`less`) or twice as many (`more`). Run on at most
/// three ranks, so that every other rank receives from the root. The
/// receivers report `InvalidArgument` (as documented); the root succeeds;
/// afterwards the communicator still works.
pub(super) fn mismatch(u: &Universe, a: &[String]) -> R {
    let bytes = arg(a, 0, 64) as usize;
    let less = a.get(1).map(String::as_str) != Some("more");
    let w = u.world();
    let me = w.rank().index();
    check!(
        w.size() <= 3,
        "mismatch needs every rank to be a child of the root"
    );
    let theirs = if less { bytes / 2 } else { bytes * 2 };
    let mut buf = vec![7u8; if me == 0 { bytes } else { theirs }];
    let r = w.bcast(&mut buf, 0);
    // A wrong error kind is reported at the end: first see whether the
    // root finishes and the communicator still works.
    let mut kind = Ok(());
    if me == 0 {
        check!(r.is_ok(), "root sent {bytes} bytes: got {r:?}");
    } else if !matches!(r, Err(Error::InvalidArgument(_))) {
        let m = format!(
            "root sent {bytes} bytes, rank {me} expected {theirs}: got {r:?}, expected InvalidArgument"
        );
        eprintln!("rank {me}: {m} (checking the rest before failing)");
        kind = Err(m);
    }
    let mut o = [0u64];
    w.allreduce(&[1u64], &mut o, &Op::sum()).map_err(e)?;
    check!(
        o[0] == w.size() as u64,
        "allreduce after the mismatch gave {}",
        o[0]
    );
    kind
}

/// `allreduce COUNT`: one blocking allreduce of COUNT u64 (sum), checked.
pub(super) fn allreduce(u: &Universe, a: &[String]) -> R {
    let count = arg(a, 0, 1024) as usize;
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let mine: Vec<u64> = (0..count).map(|i| (i * n + me) as u64).collect();
    let mut out = vec![0u64; count];
    w.allreduce(&mine, &mut out, &Op::sum()).map_err(e)?;
    let tri = (n * (n - 1) / 2) as u64;
    let ok = out
        .iter()
        .enumerate()
        .all(|(i, &x)| x == (i * n * n) as u64 + tri);
    check!(ok, "allreduce of {count} u64 on {n} ranks: wrong sums");
    Ok(())
}

/// `agv reversed|gaps|zeros`: allgatherv of one u32 per rank (none for
/// `zeros`) with blocks in reverse rank order (`reversed`, `zeros`) or in
/// rank order with a one-element gap after each (`gaps`); the rest of the
/// receive buffer holds a pattern of this rank that must stay untouched.
pub(super) fn agv(u: &Universe, a: &[String]) -> R {
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let how = a.first().map(String::as_str).unwrap_or("reversed");
    let (count, displs): (usize, Vec<usize>) = match how {
        "gaps" => (1, (0..n).map(|i| 2 * i).collect()),
        "zeros" => (0, (0..n).map(|i| 2 * (n - 1 - i)).collect()),
        _ => (1, (0..n).map(|i| n - 1 - i).collect()),
    };
    let len = 2 * n;
    let mut out = vec![0xEE00 + me as u32; len];
    let counts = vec![count; n];
    let mine = vec![1000 + me as u32; count];
    w.allgatherv(&mine, &mut out, &counts, &displs).map_err(e)?;
    let mut want = vec![0xEE00 + me as u32; len];
    for (r, &d) in displs.iter().enumerate() {
        want[d..d + count].fill(1000 + r as u32);
    }
    check!(
        out == want,
        "allgatherv ({how}) with counts {counts:?} displs {displs:?}: got {out:x?}, expected {want:x?}"
    );
    Ok(())
}

/// `skew BYTES`: alltoallv in which rank 0 sends BYTES to rank 1 and every
/// other block is one byte.
pub(super) fn skew(u: &Universe, a: &[String]) -> R {
    let bytes = arg(a, 0, 20_000) as usize;
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let cnt = |i: usize, j: usize| if i == 0 && j == 1 { bytes } else { 1 };
    let sc: Vec<usize> = (0..n).map(|j| cnt(me, j)).collect();
    let rc: Vec<usize> = (0..n).map(|i| cnt(i, me)).collect();
    let disp = |c: &[usize]| {
        c.iter()
            .scan(0, |a, &x| Some(std::mem::replace(a, *a + x)))
            .collect::<Vec<_>>()
    };
    let (sd_, rd) = (disp(&sc), disp(&rc));
    let send: Vec<u8> = (0..n)
        .flat_map(|j| vec![(me * 16 + j) as u8; sc[j]])
        .collect();
    let mut recv = vec![0u8; rc.iter().sum()];
    w.alltoallv(&send, &sc, &sd_, &mut recv, &rc, &rd)
        .map_err(e)?;
    let want: Vec<u8> = (0..n)
        .flat_map(|i| vec![(i * 16 + me) as u8; rc[i]])
        .collect();
    check!(
        recv == want,
        "alltoallv with one {bytes}-byte block: wrong data"
    );
    Ok(())
}
