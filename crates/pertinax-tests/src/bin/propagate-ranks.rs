//! Rank program for the error-propagation tests: `propagate-ranks
//! SCENARIO [ARGS]`. Every rank that finishes prints `OK SCENARIO rank=R
//! seen=<the propagated errors it got, in order>` so the test can compare
//! them across ranks; a failed check prints `FAIL` and exits 1.

use pertinax::{Communicator as _, CommunicatorExt as _};
use pertinax::{Op, Rank};
use pertinax_harness::{report, setup, Scenario};
use pertinax_propagate::{Cause, GuardError, Guarded, Propagated};
use pertinax_tests::scenario::Propagate;
use pertinax_tests::{arg, check, e};
use pertinax_wire::rng::SplitMix64;

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
/// step (not again when a step is redone after an error) and returns the
/// error of the signal it raised, if any (handled like a step's error).
fn steps(
    g: &mut Guarded,
    n: u64,
    hook: impl FnMut(u64, &mut Guarded) -> Result<Option<Propagated>, String>,
) -> Result<Vec<String>, String> {
    steps_then(g, n, hook, |_| Ok(()))
}

/// [`steps`], with `after(guard)` run after every propagated error (before
/// the ranks re-synchronize).
fn steps_then(
    g: &mut Guarded,
    n: u64,
    mut hook: impl FnMut(u64, &mut Guarded) -> Result<Option<Propagated>, String>,
    mut after: impl FnMut(&mut Guarded) -> Result<(), String>,
) -> Result<Vec<String>, String> {
    let mut seen = Vec::new();
    let mut step = 0;
    let mut hooked: Option<u64> = None;
    while step < n {
        let mut error = None;
        if hooked.is_none_or(|h| step > h) {
            hooked = Some(step);
            error = hook(step, g)?;
        }
        if error.is_none() {
            let mut s = [0u64];
            match g.run(|c| c.allreduce(&[1u64], &mut s, &Op::sum())) {
                Ok(_) => {
                    check!(
                        s[0] as usize == g.comm().size(),
                        "step {step}: sum {}",
                        s[0]
                    );
                    step += 1;
                }
                Err(GuardError::Propagated(p)) => error = Some(p),
                Err(GuardError::Other(x)) => return Err(e(x)),
            }
        }
        if let Some(p) = error {
            seen.push(show(&p));
            after(g)?;
            // The error may have caught ranks in different steps (one
            // that had finished a step, one still in it): go on from
            // the earliest.
            loop {
                let mut m = [0u64];
                match g.run(|c| c.allreduce(&[step], &mut m, &Op::min())) {
                    Ok(_) => {
                        step = m[0];
                        break;
                    }
                    Err(GuardError::Propagated(p)) => seen.push(show(&p)),
                    Err(GuardError::Other(x)) => return Err(e(x)),
                }
            }
        }
    }
    // Nobody leaves while another still needs it for a step.
    loop {
        match g.run(|c| c.barrier()) {
            Ok(_) => break,
            Err(GuardError::Propagated(p)) => seen.push(show(&p)),
            Err(GuardError::Other(x)) => return Err(e(x)),
        }
    }
    Ok(seen)
}

/// Signals, and checks that the error names this signal.
fn signal(g: &mut Guarded, me: usize, code: i32, msg: &str) -> Result<Propagated, String> {
    let p = g.signal(code, msg).map_err(|x| x.to_string())?;
    check!(
        p.signals
            .iter()
            .any(|s| s.rank == Rank(me as i32) && s.code == code && s.message == msg),
        "own signal missing from {p}"
    );
    Ok(p)
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
            seen.push(show(&signal(g, me, round, "nb")?));
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
        let mut reqs = [g.request(rr), g.request(sr)];
        Ok::<_, pertinax::Error>(pertinax::wait_all(&mut reqs).map_err(|w| w.error))
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

/// The signaller of `leave`, `early` and `killed`: signals, then returns
/// the error at once (as `?` would).
fn early_return(g: &mut Guarded, me: usize, what: &str) -> Result<Propagated, GuardError> {
    let p = g.signal(7, &format!("{what} {me}"))?;
    Err(GuardError::Propagated(p))
}

/// CPU seconds this process used so far (user + system).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // Fields 14 and 15 of the line (utime, stime), in clock ticks of 10 ms.
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

/// A minimal executor of the usual kind (like `futures::executor::block_on`):
/// parks between wake-ups, so a future that wakes itself at once spins.
fn park_on<F: std::future::Future>(fut: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let std::task::Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// The `await-cpu` scenario (see `main`).
fn await_cpu(g: &mut Guarded, me: usize, mode: &str) -> R {
    let now_ns = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    };
    g.run(|c| c.barrier()).map_err(|x| x.to_string())?;
    if me == 1 {
        std::thread::sleep(std::time::Duration::from_secs(2));
        g.run(|c| c.send(&[now_ns()], 0, 9))
            .map_err(|x| x.to_string())?;
    } else if me == 0 {
        let mut got = [0u64];
        let (c0, t0) = (cpu_s(), std::time::Instant::now());
        let r = pertinax::scope(|s| {
            let req = g.comm().irecv(s, &mut got, 1, 9)?;
            let fut = g.request(req);
            Ok::<_, pertinax::Error>(if mode == "park" {
                park_on(fut)
            } else {
                pertinax_propagate::block_on(fut)
            })
        })
        .map_err(e)?;
        let late_us = now_ns().saturating_sub(got[0]) as f64 / 1e3;
        r.map_err(|x| x.to_string())?;
        let (cpu, wall) = (cpu_s() - c0, t0.elapsed().as_secs_f64());
        println!(
            "AWAITCPU mode={mode} wall_s={wall:.3} cpu_s={cpu:.3} cpu_pct={:.1} late_us={late_us:.0}",
            100.0 * cpu / wall
        );
    }
    g.run(|c| c.barrier()).map_err(|x| x.to_string())?;
    Ok(String::new())
}

/// What a rank does at a step of the campaign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    /// Signals; every rank then runs an unguarded barrier (while no rank
    /// may have left).
    Signal,
    /// Signals, then leaves: drops its guard and finalizes (exit 0).
    Leave,
    /// Signals, then returns the error with `?` (finalizes, exit 1).
    Early,
    /// Panics inside a guarded operation.
    Panic,
}

/// The campaign's plan, the same at every rank: `(step, rank, event)`.
/// Rank 0 never has an event (it always reports).
fn plan(seed: u64, n: usize, steps: u64) -> Vec<(u64, usize, Ev)> {
    let mut rng = SplitMix64::new(seed);
    let mut out: Vec<(u64, usize, Ev)> = Vec::new();
    if n < 2 {
        return out;
    }
    for _ in 0..1 + rng.below_mod(3) {
        let r = 1 + rng.below_mod(n as u64 - 1) as usize;
        let step = rng.below_mod(steps);
        let ev = match rng.below_mod(8) {
            0 => Ev::Leave,
            1 => Ev::Early,
            2 => Ev::Panic,
            _ => Ev::Signal,
        };
        // A rank that leaves or panics has no event after that step, nor
        // two events in one step.
        let gone_before =
            |o: &(u64, usize, Ev)| o.1 == r && (o.0 == step || (o.2 != Ev::Signal && o.0 <= step));
        if ev != Ev::Signal && out.iter().any(|o| o.1 == r && o.0 >= step) {
            continue;
        }
        if !out.iter().any(gone_before) {
            out.push((step, r, ev));
        }
    }
    out.sort_by_key(|o| (o.0, o.1));
    out
}

/// The campaign: `steps` steps of guarded operations (an allreduce, a
/// ring exchange through guarded requests and `wait_all`, an iallreduce
/// awaited as a future, in turn), with the seeded events of [`plan`] and
/// the launcher's kills. Each rank checks every result, that every signal
/// it sees carries the code and message of its own step and rank, and
/// that its own signals are listed; the test compares the ranks' digests.
fn campaign(g: &mut Guarded, w: &pertinax::Comm, me: usize, seed: u64, steps: u64) -> R {
    let events = plan(seed, w.size(), steps);
    let plain = w.dup().map_err(e)?;
    // Unguarded operations stay safe while no rank may have left or died.
    let mut plain_ok = true;
    let leavers: Vec<usize> = events
        .iter()
        .filter(|o| o.2 != Ev::Signal)
        .map(|o| o.1)
        .collect();
    let mut seen: Vec<String> = Vec::new();
    // What every rank does with every error, wherever it meets it.
    let after_error =
        |p: &Propagated, seen: &mut Vec<String>, plain_ok: &mut bool| -> Result<(), String> {
            for sig in &p.signals {
                let (st, r) = (sig.code / 100, sig.code % 100);
                check!(
                    r == sig.rank.0 && sig.message == format!("s{st}r{r}"),
                    "a signal mixes reports: {p}"
                );
            }
            seen.push(show(p));
            *plain_ok &= p.corrupted.is_empty()
                && !p
                    .signals
                    .iter()
                    .any(|s| leavers.contains(&(s.rank.0 as usize)));
            if *plain_ok {
                // Unguarded, right after the error (the signaller's first). A
                // rank that died since makes it fail (at every rank, or after
                // one more barrier at those where it completed): no more.
                match plain.barrier() {
                    Ok(_) => {}
                    Err(x) if x.is_fault() => *plain_ok = false,
                    Err(x) => return Err(e(x)),
                }
            }
            Ok(())
        };
    let mut step = 0u64;
    let mut hooked: Option<u64> = None;
    let mut finished = false;
    // Set-up (the dups) is not guarded: a guarded barrier before the first
    // fault point makes sure every rank has finished it (and a successful
    // re-synchronization, which every rank reaches only after it).
    let mut started = false;
    loop {
        let mut error = None;
        if !started {
            match g.run(|c| c.barrier()) {
                Ok(_) => {
                    started = true;
                    continue;
                }
                Err(GuardError::Propagated(p)) => error = Some(p),
                Err(GuardError::Other(x)) => return Err(e(x)),
            }
        } else if step < steps && hooked.is_none_or(|h| step > h) {
            hooked = Some(step);
            pertinax::fault_point("prop.campaign.step");
            for &(_, _, ev) in events.iter().filter(|o| o.0 == step && o.1 == me) {
                let code = (step * 100 + me as u64) as i32;
                let msg = format!("s{step}r{me}");
                match ev {
                    Ev::Signal => error = Some(signal(g, me, code, &msg)?),
                    Ev::Leave | Ev::Early => {
                        let p = signal(g, me, code, &msg)?;
                        return Err(format!(
                            "LEFT {} rank={me}: {}",
                            if ev == Ev::Leave { "leave" } else { "early" },
                            show(&p)
                        ));
                    }
                    Ev::Panic => {
                        let _ = g.run(|_| -> Result<(), pertinax::Error> {
                            panic!("campaign panic at step {step}")
                        });
                    }
                }
            }
        }
        if error.is_none() && started {
            match campaign_step(g, step, steps) {
                Ok(true) => {
                    if step >= steps {
                        finished = true;
                    } else {
                        step += 1;
                    }
                }
                Ok(false) => return Err(format!("step {step}: wrong result")),
                Err(GuardError::Propagated(p)) => error = Some(p),
                Err(GuardError::Other(x)) => return Err(e(x)),
            }
        }
        let Some(p) = error else {
            if finished {
                break;
            }
            continue;
        };
        after_error(&p, &mut seen, &mut plain_ok)?;
        // Re-synchronize on the earliest step.
        loop {
            let mut m = [0u64];
            match g.run(|c| c.allreduce(&[step], &mut m, &Op::min())) {
                Ok(_) => {
                    step = m[0];
                    started = true;
                    break;
                }
                // The same handling wherever a rank meets an error: the
                // others may meet this one elsewhere.
                Err(GuardError::Propagated(p)) => after_error(&p, &mut seen, &mut plain_ok)?,
                Err(GuardError::Other(x)) => return Err(e(x)),
            }
        }
        finished = false;
    }
    let joined = seen.join("|");
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in joined.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    Ok(format!("digest={h:016x} seen={joined}"))
}

/// One step of the campaign; `Ok(false)` for a wrong result. Step
/// `steps` is the final barrier.
fn campaign_step(g: &mut Guarded, step: u64, steps: u64) -> Result<bool, GuardError> {
    let size = g.comm().size();
    let me = g.comm().rank().index();
    if step >= steps {
        return g.run(|c| c.barrier()).map(|_| true);
    }
    match step % 3 {
        0 => {
            let mut s = [0u64];
            g.run(|c| c.allreduce(&[step + 1], &mut s, &Op::sum()))?;
            Ok(s[0] == (step + 1) * size as u64)
        }
        1 => {
            let right = ((me + 1) % size) as i32;
            let left = (me + size - 1) % size;
            let mine = [step * 1000 + me as u64];
            let mut got = [u64::MAX];
            let r = pertinax::scope(|s| {
                let rr = g.comm().irecv(s, &mut got, left as i32, 6)?;
                let sr = g.comm().isend(s, &mine, right, 6)?;
                let mut reqs = [g.request(rr), g.request(sr)];
                Ok::<_, pertinax::Error>(pertinax::wait_all(&mut reqs).map_err(|w| w.error))
            });
            match r {
                Ok(r) => r?,
                Err(x) if x.is_fault() => return g.run(|_| Err(x)).map(|()| false),
                Err(x) => return Err(GuardError::Other(x)),
            };
            Ok(got[0] == step * 1000 + left as u64)
        }
        _ => {
            let mut s = [0u64];
            let input = [step];
            let r = pertinax::scope(|sc| {
                let req = g.comm().iallreduce(sc, &input, &mut s, &Op::sum())?;
                Ok::<_, pertinax::Error>(pertinax_propagate::block_on(g.request(req)))
            });
            match r {
                Ok(r) => r?,
                Err(x) if x.is_fault() => return g.run(|_| Err(x)).map(|()| false),
                Err(x) => return Err(GuardError::Other(x)),
            };
            Ok(s[0] == step * size as u64)
        }
    }
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
        let g = Guarded::new(w).map_err(e)?;
        // Synchronize on the world, not on the guarded communicator (a
        // revocation could catch a rank still finishing that barrier).
        w.barrier().map_err(e)?;
        let t1 = Instant::now();
        let got = if me == 0 {
            g.signal(1, "bench").map(Some)
        } else {
            g.run(|c| c.barrier()).map(|_| None)
        };
        match got {
            Ok(Some(p)) | Err(GuardError::Propagated(p)) => check!(p.signals.len() == 1, "{p}"),
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
        let g = Guarded::new(w).map_err(e)?;
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
                        c.send(&buf[..], 0, 3).map(drop)
                    }
                };
                if guarded {
                    g.run(|c| step(c, &mut buf)).map_err(|x| x.to_string())?;
                } else {
                    step(&g.comm(), &mut buf).map_err(e)?;
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

/// A guard over a resilient communicator, used only through the
/// `Communicator` trait: ten steps of checked allreduces; the launcher
/// kills rank 2 at one of the steps' fault point `prop.res.step`
/// (`--kill 2@prop.res.step#K`); rank 1 signals at step 6. A death is
/// absorbed by the resilient layer (the outcome lists the dead rank as
/// missing, the sum counts the survivors); the signal reaches every
/// survivor as the guard's propagated error (which lists the dead rank);
/// afterwards the guard's new resilient communicator holds the survivors
/// (and absorbs a death after the signal).
/// `seen` lists, in order, each change of the missing ranks and each
/// propagated error, the same at every survivor.
fn guarded_resilient(w: &pertinax::Comm, me: usize) -> Result<Vec<String>, String> {
    use pertinax::{Communicator, CommunicatorExt};
    use pertinax_resilient::{Config, Resilient};
    let g = Guarded::over(w, |c| Resilient::with_config(&c, Config::default()))
        .map_err(|x| x.to_string())?;
    // Through a trait object: the stack is a communicator like any other.
    let c: &dyn Communicator<Error = GuardError<pertinax_resilient::Error>> = &g;
    let mut seen = Vec::new();
    let mut missing: Vec<Rank> = Vec::new();
    // The size of the guarded communicator once the signal is resolved: at
    // most the ranks the resolution did not list dead (a rank that dies
    // while the new communicator is made is not in it).
    let mut size = w.size();
    for step in 0..10u64 {
        pertinax::fault_point("prop.res.step");
        let r = if step == 6 && me == 1 {
            g.signal(7, "res")
                .and_then(|p| Err(GuardError::Propagated(p)))
        } else {
            let mut s = [0u64];
            c.allreduce(&[1u64], &mut s, &Op::sum()).map(|o| (o, s[0]))
        };
        match r {
            Ok((o, sum)) => {
                check!(
                    sum as usize + o.missing.len() == c.size(),
                    "step {step}: sum {sum}, size {}, outcome {o}",
                    c.size()
                );
                if o.missing != missing {
                    missing = o.missing.clone();
                    let m: Vec<String> = missing.iter().map(|r| r.0.to_string()).collect();
                    seen.push(format!("missing{}", m.join("+")));
                }
            }
            Err(GuardError::Propagated(p)) => {
                check!(step == 6, "a propagated error at step {step}: {p}");
                seen.push(show(&p));
                // A new resilient communicator of the survivors.
                missing.clear();
                size = w.size() - p.corrupted.len();
            }
            Err(GuardError::Other(x)) => return Err(format!("step {step}: {x}")),
        }
    }
    // The guard's resilient communicator since the signal: the ranks that
    // were alive then, renumbered (one that died later is missing).
    let mut s = [0u64];
    let o = c
        .allreduce(&[1u64], &mut s, &Op::sum())
        .map_err(|x| x.to_string())?;
    check!(
        s[0] as usize + o.missing.len() == c.size() && c.size() <= size,
        "after: sum {}, size {} (at most {size}), {o}",
        s[0],
        c.size()
    );
    c.barrier().map_err(|x| x.to_string())?;
    Ok(seen)
}

fn main() {
    let sc = Scenario::<Propagate>::from_args();
    let (scenario, rest) = (sc.scenario(), sc.args());
    let u = setup("init", pertinax::init());
    let w = u.world();
    let me = w.rank().index();
    let r: R = (|| {
        // The guard of a duplicate of the world, which the scenarios run
        // under (but `resguard` and `bench`, which make their own).
        let guard = || Guarded::new(&w).map_err(e);
        let seen = match scenario {
            // Its own guard (over a resilient communicator; a fault-tolerant
            // set-up, unlike the `dup` of `Guarded::new`).
            Propagate::Resguard => guarded_resilient(&w, me),
            // One rank signals at step 3 while the others run allreduces.
            Propagate::One => steps(&mut guard()?, 10, |s, g| {
                if s == 3 && me == 1 {
                    return signal(g, me, 42, "diverged").map(Some);
                }
                Ok(None)
            }),
            // Several ranks signal at the same step.
            Propagate::Many => steps(&mut guard()?, 10, |s, g| {
                if s == 5 && me % 2 == 1 {
                    return signal(g, me, me as i32, &format!("from {me}")).map(Some);
                }
                Ok(None)
            }),
            // Rank 0 is blocked in a receive nobody answers when rank 1
            // signals.
            Propagate::Blocked => {
                let mut g = guard()?;
                let mut seen = Vec::new();
                if me == 1 {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    seen.push(show(&signal(&mut g, me, 9, "stop")?));
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
                Ok(seen)
            }
            // A rank panics while it holds the guard (the others are in a
            // collective); the panic reaches everyone, then the rank dies.
            Propagate::Panic => steps(&mut guard()?, 8, |s, _| {
                if s == 4 && me == 2 {
                    panic!("solver blew up");
                }
                Ok(None)
            }),
            // A rank is killed in the guarded region.
            Propagate::Kill => steps(&mut guard()?, 8, |s, _| {
                if s == 4 && me == 2 {
                    let _ = pertinax_tests::kill_self();
                }
                Ok(None)
            }),
            // Signal and recover, many times.
            Propagate::Cycles => {
                let n = arg(rest, 0, 100);
                steps(&mut guard()?, n, |s, g| {
                    if me == (s as usize % w.size()) {
                        return signal(g, me, s as i32, &format!("cycle {s}")).map(Some);
                    }
                    Ok(None)
                })
            }
            // Rank 1 signals at step 3, then every rank (rank 1 first, right
            // after its signal) runs an unguarded barrier on the world.
            Propagate::Plain => steps_then(
                &mut guard()?,
                8,
                |s, g| {
                    if s == 3 && me == 1 {
                        return signal(g, me, 42, "then plain").map(Some);
                    }
                    Ok(None)
                },
                |_| w.barrier().map_err(e).map(drop),
            ),
            // Rank 1 signals at step 3 and leaves at once: `leave` drops
            // its guard and finalizes (exit 0), `early` returns the error
            // with `?` up to `main`, which finalizes and exits 1; `killed`
            // signals while the launcher kills it at a fault point of the
            // resolution (`--kill 1@prop...`).
            Propagate::Leave | Propagate::Early | Propagate::Killed => {
                steps(&mut guard()?, 8, |s, g| {
                    if s == 3 && me == 1 {
                        let p = match early_return(g, me, scenario.as_str()) {
                            Err(GuardError::Propagated(p)) => p,
                            other => return Err(format!("signaller: {other:?}")),
                        };
                        return Err(format!("LEFT {scenario} rank={me}: {}", show(&p)));
                    }
                    Ok(None)
                })
            }
            // Seeded random campaign (see `campaign`).
            Propagate::Campaign => {
                return campaign(&mut guard()?, &w, me, arg(rest, 0, 1), arg(rest, 1, 12))
            }
            // CPU use and lateness of an awaited receive that completes
            // after 2 s, under this crate's `block_on` or a parking
            // executor of the test's own.
            Propagate::AwaitCpu => {
                return await_cpu(&mut guard()?, me, rest.first().map_or("crate", |s| s))
            }
            // Non-blocking operations: the propagated error reaches a
            // blocking wait on a request, then an awaited one (async form);
            // then a ring exchange through futures succeeds with checked data.
            Propagate::Nonblocking => nonblocking(&mut guard()?, me, w.size()),
            // The paper's measurement: guard a duplicate of the world,
            // propagate an error from rank 0, clean up; then a guarded and
            // an unguarded ping-pong. Rank 0 prints the figures.
            Propagate::Bench => return bench(&w, arg(rest, 0, 1000) as usize),
        }?;
        Ok(format!("seen={}", seen.join("|")))
    })();
    match r {
        // A rank that leaves on purpose (its line is whole, named by the
        // event that made it leave): finalize, then exit.
        Err(m) if m.starts_with("LEFT ") => {
            println!("{m}");
            drop(w);
            drop(u);
            std::process::exit(i32::from(scenario == Propagate::Early));
        }
        r => report(sc.name(), me, r).or_exit(),
    }
}
