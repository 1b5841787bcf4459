//! Rank program for the error-propagation tests: `pertinax-propprog
//! SCENARIO [ARGS]`. Every rank that finishes prints `OK SCENARIO rank=R
//! seen=<the propagated errors it got, in order>` so the test can compare
//! them across ranks; a failed check prints `FAIL` and exits 1.

use pertinax::{Op, Rank};
use pertinax_propagate::{Cause, GuardError, Guarded, Propagated};
use pertinax_tests::{arg, check, e};

type R = Result<String, String>;

/// One line per propagated error, in a form every rank prints the same.
fn show(p: &Propagated) -> String {
    let mut s: Vec<String> = p
        .signals
        .iter()
        .map(|x| format!("sig{}:{}:{}", x.rank.0, x.code, x.message))
        .collect();
    for c in &p.corrupted {
        s.push(match &c.cause {
            Cause::Panic(m) => {
                format!("panic{}:{}", c.rank.0, m.split(" at ").next().unwrap_or(""))
            }
            Cause::ProcessFailed => format!("dead{}", c.rank.0),
        });
    }
    s.join(",")
}

/// A loop of checked allreduces; `hook(step, guard)` runs once before each
/// step (not again when a step is redone after an error).
fn steps(
    g: &mut Guarded,
    n: u64,
    mut hook: impl FnMut(u64, &mut Guarded) -> Result<(), String>,
) -> Result<Vec<String>, String> {
    let mut seen = Vec::new();
    let mut step = 0;
    let mut hooked: Option<u64> = None;
    while step < n {
        if hooked.is_none_or(|h| step > h) {
            hooked = Some(step);
            hook(step, g)?;
        }
        let mut s = [0u64];
        match g.run(|c| c.allreduce(&[1u64], &mut s, &Op::sum())) {
            Ok(()) => {
                check!(
                    s[0] as usize == g.comm().size(),
                    "step {step}: sum {}",
                    s[0]
                );
                step += 1;
            }
            Err(GuardError::Propagated(p)) => {
                seen.push(show(&p));
                // The error may have caught ranks in different steps (one
                // that had finished a step, one still in it): go on from
                // the earliest.
                loop {
                    let mut m = [0u64];
                    match g.run(|c| c.allreduce(&[step], &mut m, &Op::min())) {
                        Ok(()) => {
                            step = m[0];
                            break;
                        }
                        Err(GuardError::Propagated(p)) => seen.push(show(&p)),
                        Err(GuardError::Other(x)) => return Err(e(x)),
                    }
                }
            }
            Err(GuardError::Other(x)) => return Err(e(x)),
        }
    }
    // Nobody leaves while another still needs it for a step.
    loop {
        match g.run(|c| c.barrier()) {
            Ok(()) => break,
            Err(GuardError::Propagated(p)) => seen.push(show(&p)),
            Err(GuardError::Other(x)) => return Err(e(x)),
        }
    }
    Ok(seen)
}

/// The `nonblocking` scenario (see `main`).
fn nonblocking(g: &mut Guarded, me: usize, n: usize) -> Result<Vec<String>, String> {
    use pertinax_propagate::block_on;
    let mut seen = Vec::new();
    // Round 1: rank 1 signals while the others wait on a receive from it.
    // Round 2: rank 2 % n signals while the others await a receive from it.
    for (round, signaller) in [(1i32, 1 % n), (2, 2 % n)] {
        if me == signaller {
            std::thread::sleep(std::time::Duration::from_millis(50));
            g.signal(round, "nb").map_err(|x| x.to_string())?;
            match g.run(|c| c.barrier()) {
                Err(GuardError::Propagated(p)) => seen.push(show(&p)),
                other => return Err(format!("signaller: {other:?}")),
            }
        } else {
            let mut b = [0u64];
            let got = pertinax::scope(|s| {
                let req = g.comm().irecv(s, &mut b, signaller as i32, 5)?;
                Ok::<_, pertinax::Error>(if round == 1 {
                    g.request(req).wait()
                } else {
                    block_on(g.request(req))
                })
            })
            .map_err(e)?;
            match got {
                Err(GuardError::Propagated(p)) => seen.push(show(&p)),
                other => return Err(format!("round {round}: {other:?}")),
            }
        }
    }
    // Round 3: no error; every rank sends its rank to the right and awaits
    // both operations in one async block.
    let size = g.comm().size();
    let right = ((me + 1) % size) as i32;
    let left = ((me + size - 1) % size) as i32;
    let mine = [me as u64 * 10];
    let mut from_left = [u64::MAX];
    let r = pertinax::scope(|s| {
        let rr = g.comm().irecv(s, &mut from_left, left, 6)?;
        let sr = g.comm().isend(s, &mine, right, 6)?;
        let mut reqs = [rr, sr];
        Ok::<_, pertinax::Error>(g.wait_all(&mut reqs))
    })
    .map_err(e)?;
    r.map_err(|x| x.to_string())?;
    check!(from_left[0] == left as u64 * 10, "ring got {from_left:?}");
    let mut one = [0u64];
    let r = pertinax::scope(|s| {
        let req = g.comm().iallreduce(s, &[1u64], &mut one, &Op::sum())?;
        Ok::<_, pertinax::Error>(block_on(async { g.request(req).await }))
    })
    .map_err(e)?;
    r.map_err(|x| x.to_string())?;
    check!(one[0] as usize == size, "iallreduce sum {}", one[0]);
    Ok(seen)
}

/// Median, 10th and 90th percentile of `v` (µs).
fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

fn bench(w: &pertinax::Comm, reps: usize) -> R {
    use std::time::Instant;
    let me = w.rank().index();
    let mut times = Vec::with_capacity(reps);
    let mut prop = Vec::with_capacity(reps);
    for _ in 0..reps {
        w.barrier().map_err(e)?;
        let t = Instant::now();
        let mut g = Guarded::new(w).map_err(e)?;
        // Synchronize on the world, not on the guarded communicator (a
        // revocation could catch a rank still finishing that barrier).
        w.barrier().map_err(e)?;
        let t1 = Instant::now();
        if me == 0 {
            g.signal(1, "bench").map_err(|x| x.to_string())?;
        }
        match g.run(|c| c.barrier()) {
            Err(GuardError::Propagated(p)) => check!(p.signals.len() == 1, "{p}"),
            other => return Err(format!("no error: {other:?}")),
        }
        let p1 = t1.elapsed().as_secs_f64() * 1e6;
        drop(g);
        let mut m = [0f64; 2];
        w.allreduce(&[t.elapsed().as_secs_f64() * 1e6, p1], &mut m, &Op::max())
            .map_err(e)?;
        times.push(m[0]);
        prop.push(m[1]);
    }
    let (med, p10, p90) = stats(times);
    let (pmed, pp10, pp90) = stats(prop);
    // Guarded against unguarded ping-pong of 8 bytes between ranks 0 and 1.
    let pp = |guarded: bool| -> Result<f64, String> {
        let mut g = Guarded::new(w).map_err(e)?;
        let mut buf = [0u8; 8];
        let n = 20_000;
        w.barrier().map_err(e)?;
        let t = Instant::now();
        if me < 2 && w.size() > 1 {
            for _ in 0..n {
                let step = |c: &pertinax::Comm, buf: &mut [u8; 8]| -> Result<(), pertinax::Error> {
                    if me == 0 {
                        c.send(&buf[..], 1, 3)?;
                        c.recv(&mut buf[..], 1, 3).map(|_| ())
                    } else {
                        c.recv(&mut buf[..], 0, 3)?;
                        c.send(&buf[..], 0, 3)
                    }
                };
                if guarded {
                    g.run(|c| step(c, &mut buf)).map_err(|x| x.to_string())?;
                } else {
                    step(g.comm(), &mut buf).map_err(e)?;
                }
            }
        }
        Ok(t.elapsed().as_secs_f64() * 1e6 / (2.0 * n as f64))
    };
    let mut plain = Vec::new();
    let mut guarded = Vec::new();
    for _ in 0..7 {
        plain.push(pp(false)?);
        guarded.push(pp(true)?);
    }
    let (pm, _, _) = stats(plain);
    let (gm, _, _) = stats(guarded);
    if me == 0 {
        println!(
            "PROPAGATE N={} reps={reps} total_med_us={med:.1} p10={p10:.1} p90={p90:.1} propagate_med_us={pmed:.1} p10={pp10:.1} p90={pp90:.1} pingpong_plain_us={pm:.3} pingpong_guarded_us={gm:.3}",
            w.size()
        );
    }
    Ok(String::new())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scenario = args.first().cloned().unwrap_or_default();
    let u = match pertinax::init() {
        Ok(u) => u,
        Err(x) => {
            println!("FAIL init: {x}");
            std::process::exit(1);
        }
    };
    let w = u.world();
    let me = w.rank().index();
    let rest = &args[1.min(args.len())..];
    let r: R = (|| {
        let mut g = Guarded::new(&w).map_err(e)?;
        let seen = match scenario.as_str() {
            // One rank signals at step 3 while the others run allreduces.
            "one" => steps(&mut g, 10, |s, g| {
                if s == 3 && me == 1 {
                    let p = g.signal(42, "diverged").map_err(|x| x.to_string())?;
                    check!(
                        p.signals.len() == 1 && p.signals[0].rank == Rank(1),
                        "own error {p:?}"
                    );
                }
                Ok(())
            })?,
            // Several ranks signal at the same step.
            "many" => steps(&mut g, 10, |s, g| {
                if s == 5 && me % 2 == 1 {
                    g.signal(me as i32, &format!("from {me}"))
                        .map_err(|x| x.to_string())?;
                }
                Ok(())
            })?,
            // Rank 0 is blocked in a receive nobody answers when rank 1
            // signals.
            "blocked" => {
                let mut seen = Vec::new();
                if me == 1 {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    g.signal(9, "stop").map_err(|x| x.to_string())?;
                    match g.run(|c| c.barrier()) {
                        Err(GuardError::Propagated(p)) => seen.push(show(&p)),
                        other => return Err(format!("signaller: {other:?}")),
                    }
                } else {
                    let mut b = [0u64];
                    let peer = if me == 0 { 2 % w.size() } else { 0 };
                    let r = g.run(|c| c.recv(&mut b, peer, 77).map(|_| ()));
                    match r {
                        Err(GuardError::Propagated(p)) => seen.push(show(&p)),
                        other => return Err(format!("blocked receive: {other:?}")),
                    }
                }
                g.run(|c| c.barrier()).map_err(|x| x.to_string())?;
                seen
            }
            // A rank panics while it holds the guard (the others are in a
            // collective); the panic reaches everyone, then the rank dies.
            "panic" => steps(&mut g, 8, |s, _| {
                if s == 4 && me == 2 {
                    panic!("solver blew up");
                }
                Ok(())
            })?,
            // A rank is killed in the guarded region.
            "kill" => steps(&mut g, 8, |s, _| {
                if s == 4 && me == 2 {
                    let _ = pertinax_tests::kill_self();
                }
                Ok(())
            })?,
            // Signal and recover, many times.
            "cycles" => {
                let n = arg(rest, 0, 100);
                steps(&mut g, n, |s, g| {
                    if me == (s as usize % w.size()) {
                        g.signal(s as i32, "cycle").map_err(|x| x.to_string())?;
                    }
                    Ok(())
                })?
            }
            // Non-blocking operations: the propagated error reaches a
            // blocking wait on a request, then an awaited one (async form);
            // then a ring exchange through futures succeeds with checked data.
            "nonblocking" => nonblocking(&mut g, me, w.size())?,
            // The paper's measurement: guard a duplicate of the world,
            // propagate an error from rank 0, clean up; then a guarded and
            // an unguarded ping-pong. Rank 0 prints the figures.
            "bench" => return bench(&w, arg(rest, 0, 1000) as usize),
            other => return Err(format!("unknown scenario {other:?}")),
        };
        Ok(format!("seen={}", seen.join("|")))
    })();
    match r {
        Ok(extra) => println!("OK {scenario} rank={me} {extra}"),
        Err(m) => {
            println!("FAIL {scenario} rank={me}: {m}");
            std::process::exit(1);
        }
    }
}
