use std::sync::OnceLock;

use super::*;

/// Class S computed once per test binary, two ways: in one run, and batch by
/// batch. Each is one pass over the class (about a second, optimized or
/// not), so they run on two threads.
fn class_s() -> &'static (EpSums, Vec<EpSums>) {
    static CELL: OnceLock<(EpSums, Vec<EpSums>)> = OnceLock::new();
    CELL.get_or_init(|| {
        std::thread::scope(|s| {
            let each = s.spawn(|| (0..Class::S.batches()).map(batch).collect());
            let whole = batches(0..Class::S.batches());
            (whole, each.join().expect("the batch-by-batch thread"))
        })
    })
}

/// The sums of the cached batches `range` of class S.
fn sum_of(range: Range<u64>) -> EpSums {
    let (_, each) = class_s();
    each[range.start as usize..range.end as usize].iter().sum()
}

/// `a` and `b` have the same counts and sums equal to 1e-12 relative.
fn check_same(a: &EpSums, b: &EpSums, what: &str) {
    assert_eq!(a.q, b.q, "{what}: counts differ");
    for (x, y, name) in [(a.sx, b.sx, "sx"), (a.sy, b.sy, "sy")] {
        let rel = ((x - y) / y).abs();
        assert!(rel <= 1e-12, "{what}: {name} {x:e} vs {y:e} ({rel:e})");
    }
}

#[test]
fn class_s_verifies() {
    let (whole, _) = class_s();
    assert!(whole.verify(Class::S), "class S: {whole:?}");
    // The counts that NPB 3.3's serial C version prints for class S.
    let npb = [6140517, 5865300, 1100361, 68546, 1648, 17, 0, 0, 0, 0];
    assert_eq!(whole.q, npb.map(f64::from));
    assert_eq!(whole.gaussian_pairs(), 13_176_389.0);
    // A one-batch change is far outside the tolerance.
    assert!(!sum_of(1..Class::S.batches()).verify(Class::S));
}

#[test]
fn batch_by_batch_equals_one_run() {
    let (whole, _) = class_s();
    check_same(&sum_of(0..Class::S.batches()), whole, "sum of 256 batches");
}

#[test]
fn runs_of_batches_equal_their_batches() {
    for range in [0..1, 3..17, 100..140, 250..256] {
        check_same(
            &batches(range.clone()),
            &sum_of(range.clone()),
            &format!("{range:?}"),
        );
    }
    assert_eq!(batches(5..5), EpSums::default());
}

#[test]
fn split_among_1_to_16_ranks() {
    let (whole, _) = class_s();
    for n in 1..=16 {
        let parts: Vec<EpSums> = (0..n)
            .map(|rank| sum_of(portion(Class::S, rank, n)))
            .collect();
        // As an allreduce would add them: element-wise over the arrays.
        let mut total = [0.0; EpSums::LEN];
        for part in &parts {
            for (t, v) in total.iter_mut().zip(part.to_array()) {
                *t += v;
            }
        }
        let total = EpSums::from_array(total);
        check_same(&total, whole, &format!("{n} ranks"));
        assert!(total.verify(Class::S), "{n} ranks");
        assert_eq!(parts.iter().sum::<EpSums>().q, whole.q);
    }
}

#[test]
fn portion_follows_npb() {
    // 256 batches among 3 ranks: 86, 85, 85.
    assert_eq!(portion(Class::S, 0, 3), 0..86);
    assert_eq!(portion(Class::S, 1, 3), 86..171);
    assert_eq!(portion(Class::S, 2, 3), 171..256);
    assert_eq!(portion(Class::C, 7, 8), 57344..65536);
}

#[test]
fn counts_sum_to_accepted_pairs() {
    // Count the pairs in the unit disc independently: the whole class in one
    // sequential stream from the seed, with no skipping ahead.
    let (whole, _) = class_s();
    let mut x = SEED;
    let mut y = vec![0.0; 2 * NK];
    let mut accepted = 0u64;
    for _ in 0..Class::S.batches() {
        vranlc(&mut x, A, &mut y);
        accepted += y
            .chunks_exact(2)
            .filter(|p| {
                let (x1, x2) = (2.0 * p[0] - 1.0, 2.0 * p[1] - 1.0);
                x1 * x1 + x2 * x2 <= 1.0
            })
            .count() as u64;
    }
    assert_eq!(whole.gaussian_pairs(), accepted as f64);
    // About pi/4 of the pairs.
    let fraction = accepted as f64 / Class::S.pairs() as f64;
    assert!((fraction - std::f64::consts::FRAC_PI_4).abs() < 1e-3);
    // Counts fall off with the annulus: nothing past |X|, |Y| ~ 6.
    assert!(whole.q.windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn array_round_trip_and_merge() {
    let a = batch(0);
    let b = batch(1);
    assert_eq!(EpSums::from_array(a.to_array()), a);
    let mut m = a;
    m += &b;
    assert_eq!(m, a + b);
    assert_eq!(m.gaussian_pairs(), a.gaussian_pairs() + b.gaussian_pairs());
    assert_eq!([a, b].into_iter().sum::<EpSums>(), m);
}
