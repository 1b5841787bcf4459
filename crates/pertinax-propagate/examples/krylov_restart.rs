//! A local problem with a global reset (the second situation of the
//! error-propagation paper): conjugate gradients on a distributed 1-D
//! Laplacian-like system. At iteration 7, rank 1 detects a local
//! inconsistency (here: simulated) and signals; every rank gets the error
//! at its next operation and the solver restarts on all ranks from the
//! current approximation (the residual is recomputed, the search direction
//! reset). The final residual, recomputed from scratch, is checked.
//!
//! `pertinax run -n 4 -- target/release/examples/krylov_restart`

use pertinax::CommunicatorExt as _;
use pertinax::{Comm, Error, Op};
use pertinax_propagate::{GuardError, Guarded};

/// Rows per rank.
const M: usize = 250;

/// y = A x for A = tridiag(-1, 2.5, -1), rows distributed in blocks; the
/// neighbours' boundary values come by sendrecv.
fn matvec(c: &Comm, x: &[f64], y: &mut [f64]) -> Result<(), Error> {
    let (me, n) = (c.rank().index(), c.size());
    let (mut left, mut right) = ([0.0], [0.0]);
    if n > 1 {
        if me + 1 < n {
            c.sendrecv(&x[M - 1..], me + 1, 1, &mut right, me + 1, 2)?;
        }
        if me > 0 {
            c.sendrecv(&x[..1], me - 1, 2, &mut left, me - 1, 1)?;
        }
    }
    for i in 0..M {
        let l = if i == 0 { left[0] } else { x[i - 1] };
        let r = if i == M - 1 { right[0] } else { x[i + 1] };
        y[i] = 2.5 * x[i] - l - r;
    }
    Ok(())
}

fn dot(c: &Comm, a: &[f64], b: &[f64]) -> Result<f64, Error> {
    let local: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let mut s = [0.0];
    c.allreduce(&[local], &mut s, &Op::sum())?;
    Ok(s[0])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = pertinax::init()?;
    let world = universe.world();
    let me = world.rank().index();
    let g = Guarded::new(&world)?;
    let b: Vec<f64> = (0..M).map(|i| ((me * M + i) % 7) as f64 + 1.0).collect();
    let mut x = vec![0.0; M];
    let (mut r, mut p, mut ap) = (vec![0.0; M], vec![0.0; M], vec![0.0; M]);
    let mut restart = true;
    let (mut rr, mut iters, mut restarts) = (0.0, 0, 0);
    let mut signalled = false;
    let tol = 1e-10;
    loop {
        let inconsistent = me == 1 && iters == 7 && !signalled;
        signalled |= inconsistent;
        let step = if inconsistent {
            // The signaller gets the same error as every other rank.
            g.signal(2, "local inconsistency in the Krylov basis")
                .and_then(|p| Err(GuardError::Propagated(p)))
        } else {
            g.run(|c| -> Result<bool, Error> {
                if restart {
                    // (Re)start from the current approximation.
                    matvec(c, &x, &mut ap)?;
                    for i in 0..M {
                        r[i] = b[i] - ap[i];
                    }
                    p.copy_from_slice(&r);
                    rr = dot(c, &r, &r)?;
                    restart = false;
                }
                if rr.sqrt() < tol {
                    return Ok(true);
                }
                matvec(c, &p, &mut ap)?;
                let alpha = rr / dot(c, &p, &ap)?;
                for i in 0..M {
                    x[i] += alpha * p[i];
                    r[i] -= alpha * ap[i];
                }
                let rr_new = dot(c, &r, &r)?;
                for i in 0..M {
                    p[i] = r[i] + rr_new / rr * p[i];
                }
                rr = rr_new;
                Ok(false)
            })
        };
        iters += 1;
        match step {
            Ok(true) => break,
            Ok(false) => {}
            Err(GuardError::Propagated(e)) => {
                if me == 0 {
                    println!("iteration {iters}: {e}: restarting the solver on every rank");
                }
                restart = true;
                restarts += 1;
            }
            Err(GuardError::Other(e)) => return Err(e.into()),
        }
        if iters > 10_000 {
            return Err("no convergence".into());
        }
    }
    // Check: the true residual, from scratch.
    let res = g.run(|c| -> Result<f64, Error> {
        matvec(c, &x, &mut ap)?;
        let d: Vec<f64> = b.iter().zip(&ap).map(|(b, a)| b - a).collect();
        Ok(dot(c, &d, &d)?.sqrt())
    })?;
    if me == 0 {
        println!("krylov restart: converged in {iters} iterations with {restarts} restart(s), true residual {res:.1e}");
    }
    if res > 1e-8 {
        return Err(format!("residual {res}").into());
    }
    Ok(())
}
