//! One collective against the sequential reference: the collectives under
//! test ([`Coll`], [`ALL`]) and one call of one of them on a communicator,
//! with an element type, an operation, a count and a root, its result
//! checked at every rank ([`one`]: the reducing collectives in `red`, the
//! others in `mov`).

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::fmt::Debug;
use std::time::Duration;

use pertinax::{Comm, Error, ValueIndex};
use pertinax_tests::{check, e};
use pertinax_wire::rng::SplitMix64;

use super::elem::{by_type, Elem, Rec};
use super::input::{
    backdrop, cmp, cmp_raw, complete, gen, layout, now_ns, placed, raw, sd, sentinel,
};
use super::R;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Coll {
    Barrier,
    Ibarrier,
    Bcast,
    Ibcast,
    Reduce,
    ReduceInPlace,
    Ireduce,
    Allreduce,
    AllreduceInPlace,
    Iallreduce,
    Scan,
    Exscan,
    ReduceScatter,
    ReduceScatterBlock,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    AllgatherInPlace,
    Iallgather,
    Allgatherv,
    Alltoall,
    Ialltoall,
    Alltoallv,
}
use Coll::*;

pub(super) const ALL: [Coll; 25] = [
    Barrier,
    Ibarrier,
    Bcast,
    Ibcast,
    Reduce,
    ReduceInPlace,
    Ireduce,
    Allreduce,
    AllreduceInPlace,
    Iallreduce,
    Scan,
    Exscan,
    ReduceScatter,
    ReduceScatterBlock,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    AllgatherInPlace,
    Iallgather,
    Allgatherv,
    Alltoall,
    Ialltoall,
    Alltoallv,
];

impl Coll {
    pub(super) fn rooted(self) -> bool {
        matches!(
            self,
            Bcast
                | Ibcast
                | Reduce
                | ReduceInPlace
                | Ireduce
                | Gather
                | Gatherv
                | Scatter
                | Scatterv
        )
    }
    pub(super) fn reducing(self) -> bool {
        matches!(
            self,
            Reduce
                | ReduceInPlace
                | Ireduce
                | Allreduce
                | AllreduceInPlace
                | Iallreduce
                | Scan
                | Exscan
                | ReduceScatter
                | ReduceScatterBlock
        )
    }
}

/// One call of `coll` on `c` with element type `t` (operation number `kp`
/// for reductions), `count` elements (per block for gathers, scatters and
/// all-to-alls), `root`; `cs` seeds the inputs.
pub(super) fn one(c: &Comm, coll: Coll, t: u64, kp: u64, count: usize, root: usize, cs: u64) -> R {
    if coll.reducing() {
        by_type!(t, red(c, coll, kp, count, root, cs))
    } else {
        by_type!(t, mov(c, coll, count, root, cs))
    }
}

/// A reducing collective against the sequential rank-order reference.
fn red<T: Elem>(c: &Comm, coll: Coll, kp: u64, count: usize, root: usize, cs: u64) -> R {
    let (n, me) = (c.size(), c.rank().index());
    let k = T::OPS[(kp % T::OPS.len() as u64) as usize];
    let op = T::op(k);
    let spin = cs & 2 != 0;
    let ctx = format!(
        "{coll:?}<{}> {k:?} n={n} count={count} root={root} seed={cs:#x}",
        T::NAME
    );
    let fail = |m: String| format!("{ctx}: {m}");
    let ee = |x: Error| fail(e(x));
    let counts: Vec<usize> = match coll {
        ReduceScatter => {
            let mut r = SplitMix64::new(sd(cs, 1, 1));
            (0..n)
                .map(|_| r.below_mod((2 * count / n + 2) as u64) as usize)
                .collect()
        }
        ReduceScatterBlock => vec![count.div_ceil(n); n],
        _ => Vec::new(),
    };
    let len = if counts.is_empty() {
        count
    } else {
        counts.iter().sum()
    };
    let input = |r: usize| gen::<T>(cs, r, 0, len, k);
    // x0 ⊕ x1 ⊕ ... ⊕ x(upto-1), left to right.
    let fold = |upto: usize| -> Vec<T> {
        let mut acc = input(0);
        for r in 1..upto {
            for (a, x) in acc.iter_mut().zip(input(r)) {
                *a = T::f(k, *a, x);
            }
        }
        acc
    };
    let mine = input(me);
    match coll {
        Reduce | Ireduce => {
            // Elsewhere than at the root, recv is ignored: pass an empty
            // one or a full one that must stay untouched.
            let mut out = if me == root || cs & 1 != 0 {
                sentinel::<T>(len)
            } else {
                Vec::new()
            };
            if coll == Reduce {
                c.reduce(&mine, &mut out, &op, root).map(drop)
            } else {
                pertinax::scope(|s| complete(c.ireduce(s, &mine, &mut out, &op, root)?, spin))
            }
            .map_err(ee)?;
            if me == root {
                cmp(&out, &fold(n)).map_err(fail)
            } else {
                cmp_raw(&out, &sentinel(out.len())).map_err(fail)
            }
        }
        ReduceInPlace => {
            let mut buf = mine.clone();
            c.reduce_in_place(&mut buf, &op, root).map_err(ee)?;
            if me == root {
                cmp(&buf, &fold(n)).map_err(fail)?;
            }
            Ok(())
        }
        Allreduce | AllreduceInPlace | Iallreduce => {
            let mut out = sentinel::<T>(len);
            match coll {
                Allreduce => c.allreduce(&mine, &mut out, &op).map(drop),
                AllreduceInPlace => {
                    out.copy_from_slice(&mine);
                    c.allreduce_in_place(&mut out, &op).map(drop)
                }
                _ => pertinax::scope(|s| complete(c.iallreduce(s, &mine, &mut out, &op)?, spin)),
            }
            .map_err(ee)?;
            cmp(&out, &fold(n)).map_err(fail)
        }
        Scan => {
            let mut out = sentinel::<T>(len);
            c.scan(&mine, &mut out, &op).map_err(ee)?;
            cmp(&out, &fold(me + 1)).map_err(fail)
        }
        Exscan => {
            let mut out = sentinel::<T>(len);
            c.exscan(&mine, &mut out, &op).map_err(ee)?;
            if me == 0 {
                cmp_raw(&out, &sentinel(len)).map_err(fail)
            } else {
                cmp(&out, &fold(me)).map_err(fail)
            }
        }
        ReduceScatter | ReduceScatterBlock => {
            let off: usize = counts[..me].iter().sum();
            let mut out = sentinel::<T>(counts[me]);
            if coll == ReduceScatter {
                c.reduce_scatter(&mine, &mut out, &counts, &op)
            } else {
                c.reduce_scatter_block(&mine, &mut out, &op)
            }
            .map_err(ee)?;
            cmp(&out, &fold(n)[off..off + counts[me]]).map_err(fail)
        }
        _ => Err(fail("not a reduction".into())),
    }
}

/// A data-movement collective (or barrier) against the reference.
fn mov<T: Elem>(c: &Comm, coll: Coll, count: usize, root: usize, cs: u64) -> R {
    let (n, me) = (c.size(), c.rank().index());
    let spin = cs & 2 != 0;
    let ctx = format!(
        "{coll:?}<{}> n={n} count={count} root={root} seed={cs:#x}",
        T::NAME
    );
    let fail = |m: String| format!("{ctx}: {m}");
    let ee = |x: Error| fail(e(x));
    // Block of data that rank `src` holds for `dst`.
    let blk = |src: usize, dst: usize, len: usize| raw::<T>(cs, src, dst, len);
    let rand_counts = |salt: usize| -> Vec<usize> {
        let mut r = SplitMix64::new(sd(cs, salt, 2));
        (0..n)
            .map(|_| r.below_mod(count as u64 + 1) as usize)
            .collect()
    };
    match coll {
        Barrier | Ibarrier => {
            // One rank enters late; nobody may leave before it entered.
            if (cs >> 8) as usize % n == me {
                std::thread::sleep(Duration::from_millis(2));
            }
            let enter = now_ns();
            if coll == Barrier {
                c.barrier().map(drop)
            } else {
                pertinax::scope(|s| complete(c.ibarrier(s)?, spin))
            }
            .map_err(ee)?;
            let exit = now_ns();
            let mut all = vec![0u64; 2 * n];
            c.allgather(&[enter, exit], &mut all).map_err(ee)?;
            let last_in = all.iter().step_by(2).max().copied().unwrap_or(0);
            let first_out = all.iter().skip(1).step_by(2).min().copied().unwrap_or(0);
            check!(
                last_in <= first_out,
                "{ctx}: a rank left at {first_out} before the last entered at {last_in}"
            );
            Ok(())
        }
        Bcast | Ibcast => {
            let want = blk(root, 0, count);
            let mut buf = if me == root {
                want.clone()
            } else {
                sentinel(count)
            };
            if coll == Bcast {
                c.bcast(&mut buf, root).map(drop)
            } else {
                pertinax::scope(|s| complete(c.ibcast(s, &mut buf, root)?, spin))
            }
            .map_err(ee)?;
            cmp_raw(&buf, &want).map_err(fail)
        }
        Gather => {
            let mine = blk(me, 0, count);
            let mut out = if me == root || cs & 1 != 0 {
                sentinel(n * count)
            } else {
                Vec::new()
            };
            c.gather(&mine, &mut out, root).map_err(ee)?;
            let want: Vec<T> = if me == root {
                (0..n).flat_map(|r| blk(r, 0, count)).collect()
            } else {
                sentinel(out.len())
            };
            cmp_raw(&out, &want).map_err(fail)
        }
        Gatherv => {
            let cnt = rand_counts(3);
            let (displs, len) = layout(sd(cs, 4, 4), &cnt);
            let mine = blk(me, 0, cnt[me]);
            let mut out = if me == root {
                backdrop(me, len)
            } else {
                Vec::new()
            };
            c.gatherv(&mine, &mut out, &cnt, &displs, root)
                .map_err(ee)?;
            if me == root {
                let blocks: Vec<Vec<T>> = (0..n).map(|r| blk(r, 0, cnt[r])).collect();
                cmp_raw(&out, &placed(backdrop(me, len), &displs, &blocks)).map_err(fail)?;
            }
            Ok(())
        }
        Scatter => {
            let all = blk(root, 0, n * count);
            let send = if me == root { all.clone() } else { Vec::new() };
            let mut out = sentinel(count);
            c.scatter(&send, &mut out, root).map_err(ee)?;
            cmp_raw(&out, &all[me * count..(me + 1) * count]).map_err(fail)
        }
        Scatterv => {
            // Blocks may overlap in the send buffer.
            let cnt = rand_counts(5);
            let mut r = SplitMix64::new(sd(cs, 6, 6));
            let len = cnt.iter().sum::<usize>() / 2 + cnt.iter().max().unwrap_or(&0) + 2;
            let displs: Vec<usize> = cnt
                .iter()
                .map(|&k| r.below_mod((len - k + 1) as u64) as usize)
                .collect();
            let all = blk(root, 0, len);
            let send = if me == root { all.clone() } else { Vec::new() };
            let mut out = sentinel(cnt[me]);
            c.scatterv(&send, &cnt, &displs, &mut out, root)
                .map_err(ee)?;
            cmp_raw(&out, &all[displs[me]..displs[me] + cnt[me]]).map_err(fail)
        }
        Allgather | AllgatherInPlace | Iallgather => {
            let want: Vec<T> = (0..n).flat_map(|r| blk(r, 0, count)).collect();
            let mine = blk(me, 0, count);
            let mut out = sentinel(n * count);
            match coll {
                Allgather => c.allgather(&mine, &mut out).map(drop),
                AllgatherInPlace => {
                    out[me * count..(me + 1) * count].copy_from_slice(&mine);
                    c.allgather_in_place(&mut out).map(drop)
                }
                _ => pertinax::scope(|s| complete(c.iallgather(s, &mine, &mut out)?, spin)),
            }
            .map_err(ee)?;
            cmp_raw(&out, &want).map_err(fail)
        }
        Allgatherv => {
            let cnt = rand_counts(7);
            let (displs, len) = layout(sd(cs, 8, 8), &cnt);
            let mine = blk(me, 0, cnt[me]);
            let mut out = backdrop(me, len);
            c.allgatherv(&mine, &mut out, &cnt, &displs).map_err(ee)?;
            let blocks: Vec<Vec<T>> = (0..n).map(|r| blk(r, 0, cnt[r])).collect();
            cmp_raw(&out, &placed(backdrop(me, len), &displs, &blocks)).map_err(fail)
        }
        Alltoall | Ialltoall => {
            let send: Vec<T> = (0..n).flat_map(|j| blk(me, j, count)).collect();
            let mut out = sentinel(n * count);
            if coll == Alltoall {
                c.alltoall(&send, &mut out).map(drop)
            } else {
                pertinax::scope(|s| complete(c.ialltoall(s, &send, &mut out)?, spin))
            }
            .map_err(ee)?;
            let want: Vec<T> = (0..n).flat_map(|j| blk(j, me, count)).collect();
            cmp_raw(&out, &want).map_err(fail)
        }
        Alltoallv => {
            let cnt = |i: usize, j: usize| {
                SplitMix64::new(sd(cs ^ 0xA11, i, j)).below_mod(count as u64 + 1) as usize
            };
            let sc: Vec<usize> = (0..n).map(|j| cnt(me, j)).collect();
            let rc: Vec<usize> = (0..n).map(|i| cnt(i, me)).collect();
            let (sdis, slen) = layout(sd(cs, 9, me), &sc);
            let (rdis, rlen) = layout(sd(cs, 10, me), &rc);
            let sblocks: Vec<Vec<T>> = (0..n).map(|j| blk(me, j, sc[j])).collect();
            let send = placed(backdrop(n + me, slen), &sdis, &sblocks);
            let mut out = backdrop(me, rlen);
            c.alltoallv(&send, &sc, &sdis, &mut out, &rc, &rdis)
                .map_err(ee)?;
            let rblocks: Vec<Vec<T>> = (0..n).map(|i| blk(i, me, rc[i])).collect();
            cmp_raw(&out, &placed(backdrop(me, rlen), &rdis, &rblocks)).map_err(fail)
        }
        _ => Err(fail("not a data-movement collective".into())),
    }
}
