//! Loom models of the ring's protocol: one producer thread and one
//! consumer thread on a ring of a few lines, every interleaving (up to the
//! preemption bound) tried. Run with
//! `RUSTFLAGS="--cfg loom" cargo test --release -p pertinax-os --lib loom`.

use super::*;

/// Runs `f` in every interleaving of its threads (no preemption
/// bound: the models are small enough to be explored exhaustively),
/// and prints how many there were (seen with `--nocapture`).
fn model(name: &str, bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let mut b = loom::model::Builder::new();
    b.preemption_bound = bound;
    b.check(move || {
        counted.fetch_add(1, Relaxed);
        f()
    });
    println!("{name}: {} interleavings", runs.load(Relaxed));
}

/// Byte `j` of record `i`'s payload.
fn byte(i: u64, j: usize) -> u8 {
    (i as usize * 31 + j) as u8 ^ 0x5a
}

/// Pushes records of these payload lengths from a second thread, and
/// checks that the consumer gets each once, in order, whole.
fn run(name: &str, bound: Option<usize>, lines: usize, start: u64, lens: &'static [usize]) {
    model(name, bound, move || {
        let size = (lines * LINE) as u64;
        // Stale stamp words that would pass for the record the consumer
        // expects at that line in this lap or the next: only the
        // zeroing of the line after each record keeps the consumer from
        // taking them.
        let garbage = move |line: usize| {
            let lap = start - start % size;
            let pos = lap + (line * LINE) as u64;
            if pos < start {
                pos + size + 1
            } else {
                pos + 1
            }
        };
        let (p, c) = loom_model::pair(lines, start, garbage);
        let (mut p, mut c) = (Producer::over(p), Consumer::over(c));
        let producer = loom::thread::spawn(move || {
            for (i, &len) in lens.iter().enumerate() {
                let i = i as u64;
                while !p.try_push_with(&[i, len as u64, !i], len, |dst| {
                    for (j, b) in dst.iter_mut().enumerate() {
                        *b = byte(i, j);
                    }
                }) {
                    loom::thread::yield_now();
                }
            }
        });
        for (i, &len) in lens.iter().enumerate() {
            let i = i as u64;
            loop {
                if let Some((meta, payload)) = c.peek::<[u64; 3]>() {
                    assert_eq!(meta, [i, len as u64, !i], "record {i}");
                    assert_eq!(payload.len(), len);
                    assert!(payload.iter().enumerate().all(|(j, &b)| b == byte(i, j)));
                    c.pop();
                    break;
                }
                assert!(!c.is_corrupt(), "a stale line was taken for a record");
                loom::thread::yield_now();
            }
        }
        assert!(c.peek::<[u64; 3]>().is_none(), "nothing more was pushed");
        producer.join().unwrap();
    });
}

/// Three records across the end of an 8-line ring: the second does
/// not fit before the end, so a padding record precedes it, and the
/// slack line after each record is a stale stamp until zeroed.
#[test]
fn loom_ring_publishes_and_consumes_across_the_wrap() {
    // Start at line 6 of lap 1: 10 B (1 line) at 6; 70 B (2 lines)
    // does not fit in line 7: pad, then lines 0-1; 100 B at lines 2-4.
    run("wrap", None, 8, 8 * 64 + 6 * 64, &[10, 70, 100]);
}

/// A producer that outruns the consumer: records of 3 lines in a ring
/// of 8, so the producer must wait for space the consumer hands back
/// through `head`, and then rewrites lines the consumer read.
#[test]
fn loom_ring_a_full_ring_waits_for_the_consumer() {
    run("full", None, 8, 0, &[100, 100, 100]);
}

/// Both at once, over a lap: records of 3 and 2 lines from line 4
/// (3 lines: 4-6; 2 lines: pad at 7, then 0-1; 3 lines: 2-4; 2 lines:
/// 5-6), so a padded wrap, with the producer waiting for space from the
/// third record on.
#[test]
fn loom_ring_laps_with_padding_and_waits() {
    run("laps", Some(3), 8, 3 * 8 * 64 + 4 * 64, &[100, 30, 100, 70]);
}
