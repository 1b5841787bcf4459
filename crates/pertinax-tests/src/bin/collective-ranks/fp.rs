//! The `fp` scenario: full-precision float reductions, checked for
//! closeness to the rank-order reference, and hashed (FNV-1a over every
//! result's bits) for the test to compare across ranks, variants and runs.

use pertinax::CommunicatorExt as _;
use std::time::Duration;

use pertinax::bytemuck::{self, Pod};
use pertinax::{Comm, Error, Universe};
use pertinax_tests::{arg, check, e};
use pertinax_wire::rng::SplitMix64;

use super::elem::{Float, K};
use super::input::{cmp_raw, now_ns, sd};
use super::R;

/// FNV-1a over result bytes.
struct Fnv(u64);

impl Fnv {
    fn add<T: Pod>(&mut self, v: &[T]) {
        for &b in bytemuck::cast_slice::<T, u8>(v) {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// Full-precision float reductions of one type, operation and count.
fn fp_case<T: Float>(
    w: &Comm,
    k: K,
    count: usize,
    cs: u64,
    jitter: &mut dyn FnMut(),
    h: &mut Fnv,
) -> R {
    let (n, me) = (w.size(), w.rank().index());
    let ctx = format!("fp<{}> {k:?} n={n} count={count} seed={cs:#x}", T::NAME);
    let fail = |m: String| format!("{ctx}: {m}");
    let ee = |x: Error| fail(e(x));
    let op = T::op(k);
    let input = |r: usize, len: usize| -> Vec<T> {
        let mut g = SplitMix64::new(sd(cs, r, 0));
        (0..len)
            .map(|_| {
                let u = (g.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                T::of(if k == K::Sum {
                    (u - 0.5) * 2f64.powi(g.below_mod(16) as i32 - 8)
                } else {
                    1.0 + (u - 0.5) / 8.0
                })
            })
            .collect()
    };
    // The rank-order reference and the error bound of any grouping.
    let reference = |lo: usize, hi: usize, len: usize| -> (Vec<T>, Vec<f64>) {
        let mut acc = input(lo, len);
        let mut mag: Vec<f64> = acc.iter().map(|x| x.to_f64().abs()).collect();
        for r in lo + 1..hi {
            for ((a, m), x) in acc.iter_mut().zip(&mut mag).zip(input(r, len)) {
                *a = T::f(k, *a, x);
                if k == K::Sum {
                    *m += x.to_f64().abs();
                }
            }
        }
        if k == K::Prod {
            mag = acc.iter().map(|x| x.to_f64().abs()).collect();
        }
        (acc, mag)
    };
    let close = |what: &str, got: &[T], (want, mag): &(Vec<T>, Vec<f64>)| -> R {
        let tol = 4.0 * n as f64 * T::EPS;
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let (g, w) = (g.to_f64(), w.to_f64());
            // `<=` so that a NaN fails.
            let ok = (g - w).abs() <= tol * mag[i] + f64::MIN_POSITIVE;
            check!(
                ok,
                "{ctx}: {what}: element {i}: {g:e}, rank-order reference {w:e}"
            );
        }
        Ok(())
    };
    let mine = input(me, count);
    let want = reference(0, n, count);
    // Allreduce: every variant, repeated, on every rank: one bit pattern.
    let mut first = vec![T::zeroed(); count];
    jitter();
    w.allreduce(&mine, &mut first, &op).map_err(ee)?;
    close("allreduce", &first, &want)?;
    for variant in 0..3 {
        let mut again = vec![T::zeroed(); count];
        jitter();
        match variant {
            0 => w.allreduce(&mine, &mut again, &op).map(drop),
            1 => {
                again.copy_from_slice(&mine);
                w.allreduce_in_place(&mut again, &op).map(drop)
            }
            _ => pertinax::scope(|s| w.iallreduce(s, &mine, &mut again, &op)?.wait().map(|_| ())),
        }
        .map_err(ee)?;
        cmp_raw(&again, &first)
            .map_err(|m| fail(format!("allreduce variant {variant} differs: {m}")))?;
    }
    let mut everyone = vec![T::zeroed(); n * count];
    w.allgather(&first, &mut everyone).map_err(ee)?;
    for r in 0..n {
        cmp_raw(&everyone[r * count..(r + 1) * count], &first)
            .map_err(|m| fail(format!("allreduce on rank {r} differs from rank {me}: {m}")))?;
    }
    h.add(&first);
    // Reduce to every root: the same bits at every root.
    let mut at_root = vec![T::zeroed(); count];
    for root in 0..n {
        let mut out = if me == root {
            vec![T::zeroed(); count]
        } else {
            Vec::new()
        };
        jitter();
        w.reduce(&mine, &mut out, &op, root).map_err(ee)?;
        if me == root {
            close("reduce", &out, &want)?;
            at_root = out;
        }
    }
    w.allgather(&at_root, &mut everyone).map_err(ee)?;
    for r in 0..n {
        cmp_raw(&everyone[r * count..(r + 1) * count], &at_root)
            .map_err(|m| fail(format!("reduce to root {r} differs from root {me}: {m}")))?;
    }
    h.add(&at_root);
    // Scan and exscan, twice each.
    for exclusive in [false, true] {
        let mut outs = [vec![T::zeroed(); count], vec![T::zeroed(); count]];
        for out in &mut outs {
            jitter();
            if exclusive {
                w.exscan(&mine, out, &op)
            } else {
                w.scan(&mine, out, &op)
            }
            .map_err(ee)?;
        }
        cmp_raw(&outs[1], &outs[0]).map_err(|m| fail(format!("repeated scan differs: {m}")))?;
        let hi = if exclusive { me } else { me + 1 };
        if hi > 0 {
            close("scan", &outs[0], &reference(0, hi, count))?;
        }
        h.add(&outs[0]);
    }
    // Reduce-scatter of blocks of count/n (at least 1).
    let b = count.div_ceil(n);
    let send = input(me, n * b);
    let whole = reference(0, n, n * b);
    let mut outs = [vec![T::zeroed(); b], vec![T::zeroed(); b]];
    for out in &mut outs {
        jitter();
        w.reduce_scatter_block(&send, out, &op).map_err(ee)?;
    }
    cmp_raw(&outs[1], &outs[0])
        .map_err(|m| fail(format!("repeated reduce_scatter differs: {m}")))?;
    let part = (
        whole.0[me * b..(me + 1) * b].to_vec(),
        whole.1[me * b..(me + 1) * b].to_vec(),
    );
    close("reduce_scatter_block", &outs[0], &part)?;
    h.add(&outs[0]);
    Ok(())
}

/// `fp SEED JITTER_US`: full-precision float sums and products; ranks sleep
/// up to JITTER_US before each call (seeded by the clock, so timing differs
/// between runs). Prints `HASH rank=R H` over the results' bits.
pub(super) fn fp(u: &Universe, a: &[String]) -> R {
    let (seed, jit) = (arg(a, 0, 1), arg(a, 1, 0));
    let w = u.world();
    let me = w.rank().index();
    let mut jr = SplitMix64::new(now_ns() ^ me as u64);
    let mut jitter = || {
        if jit > 0 {
            std::thread::sleep(Duration::from_micros(jr.below_mod(jit + 1)));
        }
    };
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    let mut call = 0;
    for k in [K::Sum, K::Prod] {
        for count in [1, 3, 100, 5000, 20_000] {
            call += 1;
            fp_case::<f32>(&w, k, count, sd(seed, call, 2), &mut jitter, &mut h)?;
        }
        for count in [1, 2, 4099, 70_000] {
            call += 1;
            fp_case::<f64>(&w, k, count, sd(seed, call, 3), &mut jitter, &mut h)?;
        }
    }
    println!("HASH rank={me} {:016x}", h.0);
    Ok(())
}
