//! Rank program for the resilient-communicator tests: `pertinax-resprog
//! SCENARIO [ARGS]`, run with `PERTINAX_RESILIENT` set (or `--resilient`).
//!
//! `ops ROUNDS [full|coll]`: every round runs bcast, reduce, allreduce, gather,
//! scatter, allgather, a point-to-point ring and a barrier (roots rotate),
//! with fault points between them (`res.before.OP`, `res.after.OP`), and
//! every few rounds a dup and a split. Every result is checked against the
//! values of the ranks the outcome says contributed. Each survivor prints
//! `OK ops rank=R failed=[..] digest=D`; the digest covers every result and
//! outcome that must be the same at every survivor, so the test can check
//! that nobody was left behind with different data.
//!
//! `stop`: a bcast from a root that is killed first must end with
//! `Error::Failed` under the default policy (stop).

use pertinax::{Op, Rank};
use pertinax_resilient::{Communicator, Error, Outcome, SharedFile};
use pertinax_tests::{arg, check};

type R = Result<String, String>;

fn e(x: Error) -> String {
    format!("unexpected error: {x}")
}

/// The value rank `r` contributes in round `k` for operation `op`.
fn val(r: usize, k: u64, op: u64) -> u64 {
    (r as u64 + 1) * 1_000_003 + k * 7919 + op * 104_729
}

/// A running digest (FNV-1a over 64-bit words).
struct Digest(u64);

impl Digest {
    fn add(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn outcome(&mut self, o: &Outcome) {
        self.add(o.skipped.map_or(u64::MAX, |r| r.0 as u64));
        self.add(o.missing.len() as u64);
        for r in &o.missing {
            self.add(r.0 as u64);
        }
    }
}

fn point(name: &str) {
    pertinax::fault_point(name);
}

/// Checks a reduction or allreduce result: the sum over every rank not in
/// `missing`.
fn check_sum(got: u64, o: &Outcome, n: usize, k: u64, op: u64, what: &str) -> Result<(), String> {
    let want: u64 = (0..n)
        .filter(|r| !o.missing.contains(&Rank(*r as i32)))
        .map(|r| val(r, k, op))
        .sum();
    check!(
        got == want,
        "round {k} {what}: got {got}, want {want} ({o:?})"
    );
    Ok(())
}

/// Checks that every rank `o` reports missing is dead (known failed at
/// this rank): a survivor's contribution is never dropped.
fn check_dead<C: Communicator>(w: &C, o: &Outcome, k: u64, what: &str) -> Result<(), String> {
    let failed = w.failed_ranks();
    let alive: Vec<&Rank> = o.missing.iter().filter(|r| !failed.contains(r)).collect();
    check!(
        alive.is_empty(),
        "round {k} {what}: live ranks {alive:?} reported missing ({o:?}, failed {failed:?})"
    );
    Ok(())
}

/// Checks a gathered array: contributors' slots hold their values (the
/// missing ranks' slots are unspecified).
fn check_slots(got: &[u64], o: &Outcome, k: u64, op: u64, what: &str) -> Result<(), String> {
    for (r, &g) in got.iter().enumerate() {
        if !o.missing.contains(&Rank(r as i32)) {
            let want = val(r, k, op);
            check!(
                g == want,
                "round {k} {what}: slot {r} holds {g}, want {want} ({o:?})"
            );
        }
    }
    Ok(())
}

fn ops<C: Communicator>(w: &C, rounds: u64, full: bool, d: &mut Digest) -> Result<(), String> {
    let n = w.size();
    let me = w.rank().index();
    for k in 0..rounds {
        let root = (k as usize) % n;
        point("res.round");

        // bcast
        point("res.before.bcast");
        let mut b = [if me == root { val(root, k, 0) } else { 0 }];
        let o = w.bcast(&mut b, root).map_err(e)?;
        if o.skipped.is_none() {
            check!(b[0] == val(root, k, 0), "round {k} bcast got {}", b[0]);
        }
        d.outcome(&o);
        d.add(if o.skipped.is_none() { b[0] } else { 0 });
        point("res.after.bcast");

        // reduce (root's result only)
        point("res.before.reduce");
        let mut s = [0u64];
        let o = w
            .reduce(&[val(me, k, 1)], &mut s, &Op::sum(), root)
            .map_err(e)?;
        if me == root && o.skipped.is_none() {
            check_sum(s[0], &o, n, k, 1, "reduce")?;
            check_dead(w, &o, k, "reduce")?;
        }
        point("res.after.reduce");

        // allreduce
        point("res.before.allreduce");
        let mut s = [0u64];
        let o = w
            .allreduce(&[val(me, k, 2)], &mut s, &Op::sum())
            .map_err(e)?;
        check_sum(s[0], &o, n, k, 2, "allreduce")?;
        check_dead(w, &o, k, "allreduce")?;
        d.outcome(&o);
        d.add(s[0]);
        point("res.after.allreduce");

        // gather
        point("res.before.gather");
        let mut g = vec![u64::MAX; if me == root { n } else { 0 }];
        let o = w.gather(&[val(me, k, 3)], &mut g, root).map_err(e)?;
        if me == root && o.skipped.is_none() {
            check_slots(&g, &o, k, 3, "gather")?;
            check_dead(w, &o, k, "gather")?;
        }
        point("res.after.gather");

        // scatter
        point("res.before.scatter");
        let src: Vec<u64> = if me == root {
            (0..n).map(|r| val(r, k, 4)).collect()
        } else {
            Vec::new()
        };
        let mut one = [0u64];
        let o = w.scatter(&src, &mut one, root).map_err(e)?;
        if o.skipped.is_none() {
            check!(one[0] == val(me, k, 4), "round {k} scatter got {}", one[0]);
        }
        point("res.after.scatter");

        // allgather
        point("res.before.allgather");
        let mut g = vec![u64::MAX; n];
        let o = w.allgather(&[val(me, k, 5)], &mut g).map_err(e)?;
        check_slots(&g, &o, k, 5, "allgather")?;
        check_dead(w, &o, k, "allgather")?;
        d.outcome(&o);
        for (r, x) in g.iter().enumerate() {
            if !o.missing.contains(&Rank(r as i32)) {
                d.add(*x);
            }
        }
        point("res.after.allgather");

        // point-to-point ring
        point("res.before.ring");
        if full {
            let right = (me + 1) % n;
            let left = (me + n - 1) % n;
            w.send(&[val(me, k, 6)], right, 6).map_err(e)?;
            let mut r = [0u64];
            if let Some(st) = w.recv(&mut r, left, 6).map_err(e)? {
                check!(
                    r[0] == val(left, k, 6) && st.source == Rank(left as i32),
                    "round {k} ring got {} from {:?}",
                    r[0],
                    st.source
                );
            }
        }
        point("res.after.ring");

        // barrier
        point("res.before.barrier");
        w.barrier().map_err(e)?;
        point("res.after.barrier");

        if full && k % 5 == 4 {
            point("res.before.dup");
            let c = w.dup().map_err(e)?;
            check!(c.size() == n && c.rank() == w.rank(), "dup numbering");
            let mut s = [0u64];
            let o = c.allreduce(&[1], &mut s, &Op::sum()).map_err(e)?;
            check!(
                s[0] as usize == n - o.missing.len(),
                "dup allreduce {} with {o:?}",
                s[0]
            );
            point("res.before.split");
            let half = w
                .split(Some(me as u32 % 2), 0)
                .map_err(e)?
                .ok_or("split gave no communicator")?;
            let mut s = [0u64];
            let o = half.allreduce(&[1], &mut s, &Op::sum()).map_err(e)?;
            check!(
                s[0] as usize == half.size() - o.missing.len(),
                "split allreduce {} with {o:?}",
                s[0]
            );
            point("res.after.split");
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scenario = args.first().cloned().unwrap_or_default();
    let rest = &args[1.min(args.len())..];
    let u = match pertinax::init() {
        Ok(u) => u,
        Err(x) => {
            println!("FAIL init: {x}");
            std::process::exit(1);
        }
    };
    let w = match pertinax_resilient::world(&u) {
        Ok(w) => w,
        Err(x) => {
            println!("FAIL world: {x}");
            std::process::exit(1);
        }
    };
    let me = w.rank().index();
    let r: R = (|| match scenario.as_str() {
        "ops" => {
            check!(w.is_resilient(), "run with PERTINAX_RESILIENT");
            let mut d = Digest(0xcbf2_9ce4_8422_2325);
            // `coll`: collectives on the world only (no point-to-point, no
            // other communicator), the pattern `--resilient-check log` is
            // made for.
            let full = rest.get(1).map(String::as_str) != Some("coll");
            ops(&w, arg(rest, 0, 20), full, &mut d)?;
            // Every survivor writes its rank at its original offset.
            let path = std::env::var("RESPROG_FILE").unwrap_or_default();
            if !path.is_empty() {
                let f = SharedFile::create(&w, &path).map_err(e)?;
                f.write_at(&(me as u64).to_le_bytes(), me as u64 * 8)
                    .map_err(e)?;
                w.barrier().map_err(e)?;
                let bytes = std::fs::read(&path).map_err(|x| x.to_string())?;
                let failed = w.failed_ranks();
                for r in (0..w.size()).filter(|r| !failed.contains(&Rank(*r as i32))) {
                    let at = bytes.get(r * 8..r * 8 + 8).ok_or("file too short")?;
                    check!(
                        at == (r as u64).to_le_bytes(),
                        "file: rank {r}'s part is {at:?}"
                    );
                }
            }
            let failed: Vec<i32> = w.failed_ranks().iter().map(|r| r.0).collect();
            Ok(format!("failed={failed:?} digest={:016x}", d.0))
        }
        "stop" => {
            // Rank 1 dies; then a bcast from it must stop everywhere.
            if me == 1 {
                let _ = pertinax_tests::kill_self();
            }
            let mut s = [0u64];
            // The allreduce repairs around the dead rank.
            w.allreduce(&[1u64], &mut s, &Op::sum()).map_err(e)?;
            let mut b = [0u64];
            match w.bcast(&mut b, 1) {
                Err(Error::Failed { rank: Rank(1), .. }) => {}
                other => return Err(format!("bcast from a dead root: {other:?}")),
            }
            Ok(format!("sum={}", s[0]))
        }
        // Per-operation cost: `bench ITERS` times 1-byte bcast, reduce,
        // allreduce and barrier; rank 0 prints µs per call.
        "bench" => {
            let iters = arg(rest, 0, 2000) as usize;
            let mut t = Vec::new();
            for which in 0..4 {
                let mut b = [0u8];
                let mut s = [0u8];
                w.barrier().map_err(e)?;
                let t0 = std::time::Instant::now();
                for _ in 0..iters {
                    match which {
                        0 => w.bcast(&mut b, 0).map(|_| ()),
                        1 => w.reduce(&[1u8], &mut s, &Op::bor(), 0).map(|_| ()),
                        2 => w.allreduce(&[1u8], &mut s, &Op::bor()).map(|_| ()),
                        _ => w.barrier().map(|_| ()),
                    }
                    .map_err(e)?;
                }
                t.push(t0.elapsed().as_secs_f64() * 1e6 / iters as f64);
            }
            Ok(format!(
                "bcast_us={:.2} reduce_us={:.2} allreduce_us={:.2} barrier_us={:.2}",
                t[0], t[1], t[2], t[3]
            ))
        }
        other => Err(format!("unknown scenario {other:?}")),
    })();
    let ok = r.is_ok();
    match r {
        Ok(extra) => println!("OK {scenario} rank={me} {extra}"),
        Err(m) => println!("FAIL {scenario} rank={me}: {m}"),
    }
    drop(w);
    if !ok {
        std::process::exit(1);
    }
}
