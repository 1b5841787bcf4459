//! The scenarios of many collectives in a row: `overlap` (non-blocking
//! collectives outstanding at once on four communicators, mixed with
//! point-to-point messages and blocking collectives, completed in each
//! rank's own way) and `longrun` (back-to-back small collectives, each
//! checked).

use pertinax::{Comm, Error, Op, PendingOp, Universe, ValueIndex};
use pertinax::{Communicator as _, CommunicatorExt as _};
use pertinax_tests::{arg, check, e};
use pertinax_wire::rng::SplitMix64;

use super::elem::{affine, Elem, Rec, K};
use super::input::{cmp, cmp_raw, gen, raw, sd, sentinel};
use super::R;

/// Checks that `c` holds exactly `members` (world ranks, in rank order)
/// and that this process, world rank `me`, has its place among them.
fn check_members(c: &Comm, members: &[usize], me: usize, what: &str) -> R {
    check!(
        c.size() == members.len() && members.get(c.rank().index()) == Some(&me),
        "{what}: size {} rank {} for members {members:?}",
        c.size(),
        c.rank()
    );
    Ok(())
}

/// `overlap SEED ITERS`: each iteration starts nine non-blocking
/// collectives on four communicators (world, a dup, a split in halves, a
/// split in thirds with reversed keys; two or three on each), plus a
/// point-to-point exchange. Each rank starts them in its own random order
/// (keeping the order per communicator, as MPI requires), runs a blocking
/// allreduce and bcast while they are in flight, and completes them in its
/// own way (wait_all, wait_any, test_any, or one by one in reverse); then
/// every result is checked.
pub(super) fn overlap(u: &Universe, a: &[String]) -> R {
    let (seed, iters) = (arg(a, 0, 1), arg(a, 1, 50));
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    let d = w.dup().map_err(e)?;
    let h = w
        .split(Some((me % 2) as u32), me as i32)
        .map_err(e)?
        .ok_or("no half")?;
    let t = w
        .split(Some((me % 3) as u32), -(me as i32))
        .map_err(e)?
        .ok_or("no third")?;
    let hm: Vec<usize> = (0..n).filter(|r| r % 2 == me % 2).collect();
    let tm: Vec<usize> = (0..n).filter(|r| r % 3 == me % 3).rev().collect();
    check_members(&h, &hm, me, "half")?;
    check_members(&t, &tm, me, "third")?;
    let tr = t.rank().index();
    let mut mine = SplitMix64::new(sd(seed, me, 77));
    let counts = [0usize, 1, 5, 300, 5000];
    for it in 0..iters as usize {
        let cs = sd(seed, it, 5);
        let mut p = SplitMix64::new(cs);
        let mut cnt = || counts[p.below_mod(counts.len() as u64) as usize];
        let (ca, cb, cc, cd, ce, cg, ch, cq, cp) = (
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
            cnt(),
        );
        let (rb, re) = ((cs >> 8) as usize % n, (cs >> 16) as usize % n);
        let rq = (cs >> 24) as usize % t.size();
        let ctx = format!("overlap iteration {it} seed {cs:#x}");
        // Inputs (by world rank) and output buffers.
        let a_in = gen::<u64>(cs, me, 1, ca, K::Sum);
        let mut a_out = sentinel::<u64>(ca);
        let mut b_buf = if me == rb {
            raw::<Rec>(cs, rb, 2, cb)
        } else {
            sentinel(cb)
        };
        let c_in = raw::<i32>(cs, me, 3, cc);
        let mut c_out = sentinel::<i32>(hm.len() * cc);
        let d_in: Vec<u8> = tm
            .iter()
            .flat_map(|&j| raw::<u8>(cs, me, 100 + j, cd))
            .collect();
        let mut d_out = sentinel::<u8>(tm.len() * cd);
        let e_in = gen::<[u64; 2]>(cs, me, 5, ce, K::UserNc);
        let mut e_out = if me == re {
            sentinel::<[u64; 2]>(ce)
        } else {
            Vec::new()
        };
        let g_in = gen::<[f64; 4]>(cs, me, 7, cg, K::UserNc);
        let mut g_out = sentinel::<[f64; 4]>(cg);
        let h_in = gen::<ValueIndex<f64>>(cs, me, 8, ch, K::MinLoc);
        let mut h_out = sentinel::<ValueIndex<f64>>(ch);
        let mut q_buf = if tr == rq {
            raw::<f64>(cs, tm[rq], 10, cq)
        } else {
            sentinel(cq)
        };
        let p_in = raw::<u8>(cs, me, 9, cp);
        let mut p_out = sentinel::<u8>(cp);
        let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
        // Start order: the four communicators' queues interleaved at random.
        let mut queues: Vec<Vec<u8>> = vec![
            vec![b'A', b'F', b'G', b'S', b'R'],
            vec![b'B', b'E'],
            vec![b'C', b'H'],
            vec![b'D', b'Q'],
        ];
        let mut order = Vec::new();
        while queues.iter().any(|q| !q.is_empty()) {
            let live: Vec<usize> = (0..4).filter(|&i| !queues[i].is_empty()).collect();
            let q = live[mine.below_mod(live.len() as u64) as usize];
            order.push(queues[q].remove(0));
        }
        let mode = mine.below_mod(4);
        pertinax::scope(|s| -> R {
            let mut slots = (
                Some(&mut a_out),
                Some(&mut b_buf),
                Some(&mut c_out),
                Some(&mut d_out),
                Some(&mut e_out),
                Some(&mut g_out),
                Some(&mut h_out),
                Some(&mut q_buf),
                Some(&mut p_out),
            );
            let mut reqs: Vec<PendingOp<'_>> = Vec::new();
            for &op in &order {
                let miss = || format!("{ctx}: operation {} started twice", op as char);
                let r = match op {
                    b'A' => w.iallreduce(s, &a_in, slots.0.take().ok_or_else(miss)?, &Op::sum()),
                    b'B' => d.ibcast(s, slots.1.take().ok_or_else(miss)?, rb),
                    b'C' => h.iallgather(s, &c_in, slots.2.take().ok_or_else(miss)?),
                    b'D' => t.ialltoall(s, &d_in, slots.3.take().ok_or_else(miss)?),
                    b'E' => d.ireduce(
                        s,
                        &e_in,
                        slots.4.take().ok_or_else(miss)?,
                        &<[u64; 2]>::op(K::UserNc),
                        re,
                    ),
                    b'F' => w.ibarrier(s),
                    b'G' => w.iallreduce(
                        s,
                        &g_in,
                        slots.5.take().ok_or_else(miss)?,
                        &<[f64; 4]>::op(K::UserNc),
                    ),
                    b'H' => h.iallreduce(s, &h_in, slots.6.take().ok_or_else(miss)?, &Op::minloc()),
                    b'Q' => t.ibcast(s, slots.7.take().ok_or_else(miss)?, rq),
                    b'S' => w.isend(s, &p_in, next, (it % 1000) as i32),
                    _ => w.irecv(
                        s,
                        slots.8.take().ok_or_else(miss)?,
                        prev,
                        (it % 1000) as i32,
                    ),
                }
                .map_err(|x| format!("{ctx}: starting {}: {}", op as char, e(x)))?;
                reqs.push(r);
            }
            // Blocking collectives while all that is in flight, on two of
            // the same communicators (after the non-blocking ones on every
            // rank, so in the same order everywhere).
            let mut sum = [0u64; 3];
            w.allreduce(&[it as u64, me as u64, 1], &mut sum, &Op::sum())
                .map_err(|x| format!("{ctx}: blocking allreduce: {}", e(x)))?;
            let tri = (n * (n - 1) / 2) as u64;
            check!(
                sum == [(it * n) as u64, tri, n as u64],
                "{ctx}: blocking allreduce in flight gave {sum:?}"
            );
            let mut x = [if me == rb { cs } else { 0 }];
            d.bcast(&mut x, rb)
                .map_err(|x| format!("{ctx}: blocking bcast: {}", e(x)))?;
            check!(
                x[0] == cs,
                "{ctx}: blocking bcast in flight gave {:#x}",
                x[0]
            );
            let done = |x: Error| format!("{ctx}: completion mode {mode}: {}", e(x));
            match mode {
                0 => {
                    pertinax::wait_all(&mut reqs).map_err(|x| done(x.into()))?;
                }
                1 => {
                    while pertinax::wait_any(&mut reqs)
                        .map_err(|x| done(x.into()))?
                        .is_some()
                    {}
                }
                2 => {
                    let mut left = reqs.len();
                    while left > 0 {
                        if pertinax::test_any(&mut reqs)
                            .map_err(|x| done(x.into()))?
                            .is_some()
                        {
                            left -= 1;
                        } else {
                            std::thread::yield_now();
                        }
                    }
                }
                _ => {
                    while let Some(r) = reqs.pop() {
                        r.wait().map_err(done)?;
                    }
                }
            }
            Ok(())
        })?;
        let ctx = &ctx;
        let f = |what: &'static str| move |m: String| format!("{ctx}: {what}: {m}");
        let world: Vec<usize> = (0..n).collect();
        cmp(&a_out, &ref_fold::<u64>(cs, &world, 1, ca, K::Sum)).map_err(f("world iallreduce"))?;
        cmp_raw(&b_buf, &raw::<Rec>(cs, rb, 2, cb)).map_err(f("dup ibcast"))?;
        let want_c: Vec<i32> = hm.iter().flat_map(|&r| raw::<i32>(cs, r, 3, cc)).collect();
        cmp_raw(&c_out, &want_c).map_err(f("half iallgather"))?;
        let want_d: Vec<u8> = tm
            .iter()
            .flat_map(|&j| raw::<u8>(cs, j, 100 + me, cd))
            .collect();
        cmp_raw(&d_out, &want_d).map_err(f("third ialltoall"))?;
        if me == re {
            let want = ref_fold::<[u64; 2]>(cs, &world, 5, ce, K::UserNc);
            cmp(&e_out, &want).map_err(f("dup ireduce (affine)"))?;
        }
        cmp(&g_out, &ref_fold::<[f64; 4]>(cs, &world, 7, cg, K::UserNc))
            .map_err(f("world iallreduce (matrix)"))?;
        cmp(
            &h_out,
            &ref_fold::<ValueIndex<f64>>(cs, &hm, 8, ch, K::MinLoc),
        )
        .map_err(f("half iallreduce (minloc)"))?;
        cmp_raw(&q_buf, &raw::<f64>(cs, tm[rq], 10, cq)).map_err(f("third ibcast"))?;
        cmp_raw(&p_out, &raw::<u8>(cs, prev, 9, cp)).map_err(f("point-to-point"))?;
    }
    w.barrier().map_err(e).map(drop)
}

/// Rank-order fold of `gen::<T>(cs, r, stream, len, k)` over `ranks`.
fn ref_fold<T: Elem>(cs: u64, ranks: &[usize], stream: usize, len: usize, k: K) -> Vec<T> {
    let mut acc: Option<Vec<T>> = None;
    for &r in ranks {
        let x = gen::<T>(cs, r, stream, len, k);
        acc = Some(match acc {
            None => x,
            Some(mut a) => {
                for (p, q) in a.iter_mut().zip(x) {
                    *p = T::f(k, *p, q);
                }
                a
            }
        });
    }
    acc.unwrap_or_default()
}

/// `longrun COUNT SEED`: COUNT small collectives back to back, alternating
/// between the world and a dup, each checked.
pub(super) fn longrun(u: &Universe, a: &[String]) -> R {
    let (count, seed) = (arg(a, 0, 20_000), arg(a, 1, 1));
    let w = u.world();
    let d = w.dup().map_err(e)?;
    let mix = |i: u64, r: usize, j: usize| sd(seed ^ i.wrapping_mul(0x1_0000_0001), r, j);
    for i in 0..count {
        let c = if i % 3 == 2 { &d } else { &w };
        let (n, me) = (c.size(), c.rank().index());
        let root = (i as usize / 7) % n;
        let m = (i % 4) as usize;
        let fail = |m: String| format!("call {i} ({}): {m}", i % 10);
        let ee = |x: Error| fail(e(x));
        match i % 10 {
            0 => {
                let mine: Vec<u64> = (0..m).map(|j| mix(i, me, j)).collect();
                let mut out = vec![0u64; m];
                c.allreduce(&mine, &mut out, &Op::sum()).map_err(ee)?;
                let want: Vec<u64> = (0..m)
                    .map(|j| (0..n).fold(0u64, |s, r| s.wrapping_add(mix(i, r, j))))
                    .collect();
                check!(
                    out == want,
                    "{}",
                    fail(format!("allreduce {out:?} != {want:?}"))
                );
            }
            1 => {
                let want: Vec<u32> = (0..m).map(|j| mix(i, root, j) as u32).collect();
                let mut buf = if me == root { want.clone() } else { vec![0; m] };
                c.bcast(&mut buf, root).map_err(ee)?;
                check!(
                    buf == want,
                    "{}",
                    fail(format!("bcast {buf:?} != {want:?}"))
                );
            }
            2 => c.barrier().map(drop).map_err(ee)?,
            3 => {
                let mine = [mix(i, me, 0)];
                let mut out = [0u64];
                c.reduce(
                    &mine,
                    if me == root { &mut out[..] } else { &mut [] },
                    &Op::max(),
                    root,
                )
                .map_err(ee)?;
                let want = (0..n).map(|r| mix(i, r, 0)).max().unwrap_or(0);
                check!(
                    me != root || out[0] == want,
                    "{}",
                    fail(format!("reduce {out:?} != {want}"))
                );
            }
            4 => {
                let mut out = vec![0u16; n];
                c.allgather(&[mix(i, me, 0) as u16], &mut out).map_err(ee)?;
                let want: Vec<u16> = (0..n).map(|r| mix(i, r, 0) as u16).collect();
                check!(out == want, "{}", fail(format!("allgather {out:?}")));
            }
            5 => {
                let send: Vec<u8> = (0..n).map(|j| mix(i, me, j) as u8).collect();
                let mut out = vec![0u8; n];
                c.alltoall(&send, &mut out).map_err(ee)?;
                let want: Vec<u8> = (0..n).map(|j| mix(i, j, me) as u8).collect();
                check!(
                    out == want,
                    "{}",
                    fail(format!("alltoall {out:?} != {want:?}"))
                );
            }
            6 => {
                let x = |r: usize| [mix(i, r, 0) | 1, mix(i, r, 1)];
                let op = <[u64; 2]>::op(K::UserNc);
                let mut out = [[0u64; 2]];
                c.scan(&[x(me)], &mut out, &op).map_err(ee)?;
                let want = (1..=me).fold(x(0), |acc, r| affine(&acc, &x(r)));
                check!(out[0] == want, "{}", fail("scan (affine)".into()));
                let mut ex = [[7u64; 2]];
                c.exscan(&[x(me)], &mut ex, &op).map_err(ee)?;
                let want = if me == 0 {
                    [7, 7]
                } else {
                    (1..me).fold(x(0), |acc, r| affine(&acc, &x(r)))
                };
                check!(ex[0] == want, "{}", fail("exscan (affine)".into()));
            }
            7 => {
                let mine = [mix(i, me, 0)];
                let mut sum = [0u64];
                let mut b = if me == root { [mix(i, root, 1)] } else { [0] };
                pertinax::scope(|s| -> pertinax::Result<()> {
                    let mut reqs = vec![
                        c.iallreduce(s, &mine, &mut sum, &Op::bxor())?,
                        c.ibcast(s, &mut b, root)?,
                        c.ibarrier(s)?,
                    ];
                    pertinax::wait_all(&mut reqs)
                        .map(|_| ())
                        .map_err(Into::into)
                })
                .map_err(ee)?;
                let want = (0..n).fold(0, |x, r| x ^ mix(i, r, 0));
                check!(
                    sum[0] == want && b[0] == mix(i, root, 1),
                    "{}",
                    fail("overlapped trio".into())
                );
            }
            8 => {
                let send: Vec<u32> = (0..n * m).map(|j| mix(i, me, j) as u32).collect();
                let mut out = vec![0u32; m];
                c.reduce_scatter_block(&send, &mut out, &Op::bxor())
                    .map_err(ee)?;
                let want: Vec<u32> = (0..m)
                    .map(|j| (0..n).fold(0, |x, r| x ^ mix(i, r, me * m + j) as u32))
                    .collect();
                check!(
                    out == want,
                    "{}",
                    fail(format!("reduce_scatter_block {out:?} != {want:?}"))
                );
            }
            _ => {
                let mut all = if me == root {
                    vec![0i64; n]
                } else {
                    Vec::new()
                };
                c.gather(&[mix(i, me, 0) as i64], &mut all, root)
                    .map_err(ee)?;
                let send: Vec<i64> = if me == root {
                    all.iter().rev().copied().collect()
                } else {
                    Vec::new()
                };
                let mut got = [0i64];
                c.scatter(&send, &mut got, root).map_err(ee)?;
                check!(
                    got[0] == mix(i, n - 1 - me, 0) as i64,
                    "{}",
                    fail("gather then scatter".into())
                );
            }
        }
    }
    w.barrier().map_err(e).map(drop)
}
