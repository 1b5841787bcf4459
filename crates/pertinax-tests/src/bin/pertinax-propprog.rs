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
