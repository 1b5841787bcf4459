//! `all`'s progress: a bar on stderr with the part under way and an
//! estimate of the time left, drawn only when stderr is a terminal.
//!
//! The estimate starts from a rough cost per part ([`ALL_PARTS`], seconds
//! at 5 launches, scaled by `--launches`) and is corrected by how long the
//! finished parts took against their estimates ([`estimate`]). The bar
//! moves at each launch ([`tick`], called by [`crate::run::interleave`]).
//! Lines printed while the bar is drawn go through [`println()`], so they
//! do not tear it.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `all`'s parts and a rough guess of their cost in seconds at 5
/// launches on 2 cores, default options: only the starting point of the
/// estimate, which the finished parts correct.
pub const ALL_PARTS: [(&str, f64); 8] = [
    ("pingpong", 90.0),
    ("pingping", 90.0),
    ("launch", 60.0),
    ("coll", 1500.0),
    ("ft", 1200.0),
    ("propagate", 300.0),
    ("resilient", 1200.0),
    ("msglog", 900.0),
];

/// The bar's state.
#[derive(Debug)]
struct State {
    bar: ProgressBar,
    /// (name, estimated seconds) per part.
    parts: Vec<(&'static str, f64)>,
    /// Parts finished.
    done: usize,
    /// Seconds the finished parts took.
    spent: f64,
    /// When the part under way started.
    part_started: Instant,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Bar positions per whole run.
const SCALE: u64 = 1000;

/// Where the run stands: the fraction done and the seconds left.
/// `est`: the parts' estimates; `done`: parts finished, which took
/// `spent` s; `in_part`: seconds into the part under way. The estimates
/// are scaled by spent / estimated of the finished parts (within 0.2 to
/// 5), and the part under way counts as at most 95 % done.
pub fn estimate(est: &[f64], done: usize, spent: f64, in_part: f64) -> (f64, f64) {
    let total: f64 = est.iter().sum::<f64>().max(1e-9);
    let est_done: f64 = est.iter().take(done).sum();
    let factor = if est_done > 0.0 && spent > 0.0 {
        (spent / est_done).clamp(0.2, 5.0)
    } else {
        1.0
    };
    let current = est.get(done).copied().unwrap_or(0.0);
    let into = (in_part / factor).min(0.95 * current);
    let fraction = ((est_done + into) / total).clamp(0.0, 1.0);
    let left = (total - est_done - into).max(0.0) * factor;
    (fraction, left)
}

/// `1 h 05 min`, `12 min`, `40 s`.
pub fn human(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{} min", s.div_ceil(60))
    } else {
        format!("{s} s")
    }
}

/// Starts the bar for these parts (estimates already scaled); hidden when
/// stderr is not a terminal.
pub fn start(parts: Vec<(&'static str, f64)>) {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(SCALE), target);
    // The template is a constant: it parses or this is a programming error.
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{wide_bar}] {percent:>3}% {msg}")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_secs(1));
    let state = State {
        bar,
        parts,
        done: 0,
        spent: 0.0,
        part_started: Instant::now(),
    };
    refresh(&state);
    if let Ok(mut s) = STATE.lock() {
        *s = Some(state);
    }
}

/// Marks the part under way finished and starts the next.
pub fn next_part() {
    with(|s| {
        s.spent += s.part_started.elapsed().as_secs_f64();
        s.done += 1;
        s.part_started = Instant::now();
    });
}

/// Moves the bar (after a launch).
pub fn tick() {
    with(|_| {});
}

/// Clears the bar.
pub fn finish() {
    if let Ok(mut s) = STATE.lock() {
        if let Some(state) = s.take() {
            state.bar.finish_and_clear();
        }
    }
}

/// Prints a line on stderr, above the bar when one is drawn.
pub fn println(line: &str) {
    let guard = STATE.lock();
    match guard.as_ref().ok().and_then(|s| s.as_ref()) {
        Some(state) if !state.bar.is_hidden() => state.bar.println(line),
        _ => eprintln!("{line}"),
    }
}

/// Runs `f` (which writes to the terminal) with the bar out of the way.
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    let guard = STATE.lock();
    match guard.as_ref().ok().and_then(|s| s.as_ref()) {
        Some(state) => state.bar.suspend(f),
        None => f(),
    }
}

fn with(f: impl FnOnce(&mut State)) {
    if let Ok(mut s) = STATE.lock() {
        if let Some(state) = s.as_mut() {
            f(state);
            refresh(state);
        }
    }
}

fn refresh(s: &State) {
    let est: Vec<f64> = s.parts.iter().map(|p| p.1).collect();
    let in_part = s.part_started.elapsed().as_secs_f64();
    let (fraction, left) = estimate(&est, s.done, s.spent, in_part);
    s.bar.set_position((fraction * SCALE as f64).round() as u64);
    let name = s.parts.get(s.done).map_or("done", |p| p.0);
    s.bar.set_message(format!(
        "part {}/{} {name}, about {} left",
        (s.done + 1).min(s.parts.len()),
        s.parts.len(),
        human(left)
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_follow_the_finished_parts() {
        let est = [100.0, 300.0];
        assert_eq!(estimate(&est, 0, 0.0, 0.0), (0.0, 400.0));
        let (f, left) = estimate(&est, 0, 0.0, 50.0);
        assert!((f - 0.125).abs() < 1e-9 && (left - 350.0).abs() < 1e-9);
        // A part under way past its estimate counts as 95 % done.
        let (f, _) = estimate(&est, 0, 0.0, 500.0);
        assert!((f - 95.0 / 400.0).abs() < 1e-9);
        // The first part took twice its estimate: the rest will too.
        let (f, left) = estimate(&est, 1, 200.0, 0.0);
        assert!(
            (f - 0.25).abs() < 1e-9 && (left - 600.0).abs() < 1e-9,
            "{left}"
        );
        let (f, left) = estimate(&est, 2, 400.0, 0.0);
        assert_eq!((f, left), (1.0, 0.0));
        // Scaling is bounded.
        let (_, left) = estimate(&est, 1, 100_000.0, 0.0);
        assert!((left - 1500.0).abs() < 1e-9);
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(human(40.2), "40 s");
        assert_eq!(human(61.0), "2 min");
        assert_eq!(human(3900.0), "1 h 05 min");
        assert_eq!(human(-3.0), "0 s");
    }

    #[test]
    fn a_hidden_bar_prints_plain_lines() {
        // Tests do not run on a terminal here, or do: either way no panic,
        // and the state is cleared.
        start(vec![("a", 1.0), ("b", 2.0)]);
        tick();
        println("a line");
        assert_eq!(suspend(|| 7), 7);
        next_part();
        finish();
        assert!(STATE.lock().unwrap().is_none());
    }
}
