//! An FWI-like kernel with the structure of the offload paper's section 6.4
//! (figures 13 and 14): frequencies, gradients and line-search tests at the
//! master; one *kernel* per shot at a slave, which preprocesses, splits the
//! grid over its workers and post-processes what they return.
//!
//! The physics is a toy with the right shape: a 1-D model `m` (one value
//! per grid cell) is fitted to data observed from a hidden true model
//! ([`true_model`]). For frequency `f` and shot `s`, the synthetic datum of
//! cell `i` is `Σ_k w_k sin(m_i ω_k + φ_s)` over `work` harmonics
//! ([`Shot`], made by [`preprocess`]); a worker computes, for its slice of
//! cells ([`worker_range`]), the residuals against the true model's data,
//! their squares' sum (the misfit) and the gradient ([`worker`]); the
//! slave joins the slices in worker order and smooths the gradient across
//! them ([`postprocess`]). The master sums the shots in shot order
//! ([`combine`]), tries `tests` step lengths ([`trial`]) and keeps the one
//! of least misfit ([`best_trial`]).
//!
//! [`invert`] runs the whole inversion in one process, in the same order
//! as the distributed program, so a distributed run gives a bitwise equal
//! model. The cost is `grid × work` sines per kernel, set by the caller.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::split::block;

/// The sizes of an inversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Grid cells of the model.
    pub grid: usize,
    /// Shots (one slave each).
    pub shots: usize,
    /// Workers per slave.
    pub workers: usize,
    /// Frequencies.
    pub freqs: usize,
    /// Gradient iterations per frequency.
    pub grads: usize,
    /// Step lengths tried per gradient iteration.
    pub tests: usize,
    /// Harmonics per synthetic datum (the cost per cell).
    pub work: usize,
}

/// What a slave computes for a shot before its workers start: the shot's
/// phase and the weights of the harmonics at this frequency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shot {
    /// Frequency index.
    pub freq: usize,
    /// Phase of the shot.
    pub phase: f64,
    /// Angular frequency of each harmonic.
    pub omega: Vec<f64>,
    /// Weight of each harmonic.
    pub weight: Vec<f64>,
}

/// What a worker returns for its slice, and a slave for its shot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// The misfit's gradient, one value per cell of the slice.
    pub grad: Vec<f64>,
    /// The sum of the squared residuals over the slice.
    pub misfit: f64,
}

/// The starting model: a smooth background.
pub fn initial_model(grid: usize) -> Vec<f64> {
    (0..grid)
        .map(|i| 1.0 + 0.25 * (i as f64 / grid.max(1) as f64))
        .collect()
}

/// The hidden model the data were observed from: the background plus a
/// bump.
pub fn true_model(grid: usize) -> Vec<f64> {
    let n = grid.max(1) as f64;
    initial_model(grid)
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            let x = (i as f64 + 0.5) / n - 0.4;
            m + 0.2 * (-x * x * 60.0).exp()
        })
        .collect()
}

/// The slave's preprocessing of shot `shot` at frequency `freq`.
pub fn preprocess(freq: usize, shot: usize, work: usize) -> Shot {
    let base = 1.0 + freq as f64;
    Shot {
        freq,
        phase: 0.7 * shot as f64,
        omega: (0..work)
            .map(|k| base * (1.0 + k as f64 / work.max(1) as f64))
            .collect(),
        weight: (0..work).map(|k| 1.0 / (1.0 + k as f64)).collect(),
    }
}

/// The cells of worker `w` of `workers`.
///
/// # Panics
/// If `workers == 0` or `w >= workers`.
pub fn worker_range(grid: usize, w: usize, workers: usize) -> Range<usize> {
    let r = block(grid as u64, w, workers);
    r.start as usize..r.end as usize
}

/// Synthetic datum of one cell of model value `m`.
fn synthetic(shot: &Shot, m: f64) -> f64 {
    shot.omega
        .iter()
        .zip(&shot.weight)
        .map(|(o, w)| w * (m * o + shot.phase).sin())
        .sum()
}

/// A worker's computation over `cells` of `model`.
///
/// # Panics
/// If `cells` is not within the model.
pub fn worker(shot: &Shot, model: &[f64], cells: Range<usize>) -> Partial {
    let truth = true_model(model.len());
    let mut out = Partial {
        grad: Vec::with_capacity(cells.len()),
        misfit: 0.0,
    };
    for i in cells {
        let m = model[i];
        let r = synthetic(shot, m) - synthetic(shot, truth[i]);
        let d: f64 = shot
            .omega
            .iter()
            .zip(&shot.weight)
            .map(|(o, w)| w * o * (m * o + shot.phase).cos())
            .sum();
        out.misfit += r * r;
        out.grad.push(r * d);
    }
    out
}

/// The slave's post-processing: the workers' slices joined in worker
/// order, the misfits summed in that order, the gradient smoothed by a
/// three-point average (across slice boundaries).
pub fn postprocess(parts: &[Partial]) -> Partial {
    let raw: Vec<f64> = parts.iter().flat_map(|p| p.grad.iter().copied()).collect();
    let n = raw.len();
    let grad = (0..n)
        .map(|i| {
            let lo = raw[i.saturating_sub(1)];
            let hi = raw[(i + 1).min(n - 1)];
            (lo + 2.0 * raw[i] + hi) / 4.0
        })
        .collect();
    Partial {
        grad,
        misfit: parts.iter().map(|p| p.misfit).sum(),
    }
}

/// A whole kernel in one process: what a slave computes for one shot.
pub fn kernel(model: &[f64], freq: usize, shot: usize, workers: usize, work: usize) -> Partial {
    let s = preprocess(freq, shot, work);
    let parts: Vec<Partial> = (0..workers)
        .map(|w| worker(&s, model, worker_range(model.len(), w, workers)))
        .collect();
    postprocess(&parts)
}

/// The shots' results summed in shot order.
pub fn combine(shots: &[Partial]) -> Partial {
    let mut out = Partial {
        grad: vec![0.0; shots.first().map_or(0, |p| p.grad.len())],
        misfit: 0.0,
    };
    for p in shots {
        for (g, x) in out.grad.iter_mut().zip(&p.grad) {
            *g += x;
        }
        out.misfit += p.misfit;
    }
    out
}

/// The model of line-search test `test`: a step against the gradient,
/// halved at each test, scaled to the gradient's largest value.
pub fn trial(model: &[f64], grad: &[f64], test: usize) -> Vec<f64> {
    let top = grad.iter().fold(0.0f64, |a, g| a.max(g.abs()));
    let step = if top > 0.0 {
        0.05 / top / f64::from(1u32 << test.min(30))
    } else {
        0.0
    };
    model.iter().zip(grad).map(|(m, g)| m - step * g).collect()
}

/// The test of least misfit (the first of equal ones), given each test's
/// misfit summed over the shots.
pub fn best_trial(misfits: &[f64]) -> usize {
    let mut best = 0;
    for (t, m) in misfits.iter().enumerate() {
        if *m < misfits[best] {
            best = t;
        }
    }
    best
}

/// The whole inversion in one process, in the distributed program's order:
/// the reference a distributed run is compared with, bitwise. Returns the
/// final model and the misfit of each gradient iteration (before its
/// update).
pub fn invert(c: &Config) -> (Vec<f64>, Vec<f64>) {
    let mut model = initial_model(c.grid);
    let mut history = Vec::new();
    for f in 0..c.freqs {
        for _ in 0..c.grads {
            let shots: Vec<Partial> = (0..c.shots)
                .map(|s| kernel(&model, f, s, c.workers, c.work))
                .collect();
            let g = combine(&shots);
            history.push(g.misfit);
            if c.tests == 0 {
                continue;
            }
            let misfits: Vec<f64> = (0..c.tests)
                .map(|t| {
                    let m = trial(&model, &g.grad, t);
                    (0..c.shots)
                        .map(|s| kernel(&m, f, s, c.workers, c.work).misfit)
                        .sum()
                })
                .collect();
            model = trial(&model, &g.grad, best_trial(&misfits));
        }
    }
    (model, history)
}

/// A digest of every bit of a model (FNV-1a over the values' bits).
pub fn digest(model: &[f64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in model {
        for b in x.to_bits().to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Config {
        Config {
            grid: 40,
            shots: 3,
            workers: 4,
            freqs: 2,
            grads: 3,
            tests: 2,
            work: 8,
        }
    }

    #[test]
    fn the_inversion_lowers_the_misfit() {
        let (model, history) = invert(&small());
        assert_eq!(history.len(), 6);
        // Within a frequency the misfit falls.
        assert!(history[2] < history[0], "{history:?}");
        assert!(history[5] < history[3], "{history:?}");
        assert_ne!(model, initial_model(40));
    }

    #[test]
    fn the_split_over_workers_changes_nothing_but_the_work_division() {
        // Workers compute independent cells: the joined result is the same
        // for any number of workers (the smoothing runs after the join).
        let m = initial_model(33);
        let one = kernel(&m, 1, 2, 1, 5);
        let five = kernel(&m, 1, 2, 5, 5);
        assert_eq!(one.grad, five.grad);
        assert!((one.misfit - five.misfit).abs() <= 1e-12 * one.misfit.abs());
    }

    #[test]
    fn the_true_model_fits_exactly() {
        let t = true_model(20);
        let p = kernel(&t, 0, 1, 2, 4);
        assert_eq!(p.misfit, 0.0);
        assert!(p.grad.iter().all(|g| *g == 0.0));
    }

    #[test]
    fn reruns_are_bitwise_equal_and_the_digest_sees_a_bit() {
        let (a, _) = invert(&small());
        let (b, _) = invert(&small());
        assert_eq!(digest(&a), digest(&b));
        let mut c = a.clone();
        c[7] = f64::from_bits(c[7].to_bits() ^ 1);
        assert_ne!(digest(&a), digest(&c));
    }

    #[test]
    fn the_best_trial_is_the_first_least() {
        assert_eq!(best_trial(&[3.0, 1.0, 1.0, 2.0]), 1);
        assert_eq!(best_trial(&[0.5]), 0);
    }
}
