//! Unit tests of the ring: records in order, a full ring, many laps of
//! varied sizes over stale bytes, payload words that look like stamps, and
//! two threads.

use super::*;
use crate::segment::{Layout, Segment};

fn pair(size: usize) -> (Producer, Consumer, Segment) {
    let seg = Segment::create_anonymous(Layout::new(2, size)).unwrap();
    (seg.producer(0, 1), seg.consumer(0, 1), seg)
}

#[test]
fn push_peek_pop_in_order() {
    let (mut p, mut c, _s) = pair(4096);
    assert!(c.peek::<[u64; 3]>().is_none());
    for i in 0..10u64 {
        assert!(p.try_push(&[i, i + 1, i + 2], &vec![i as u8; i as usize * 3]));
    }
    for i in 0..10u64 {
        let (m, pl) = c.peek::<[u64; 3]>().unwrap();
        assert_eq!(m, [i, i + 1, i + 2]);
        assert_eq!(pl, &vec![i as u8; i as usize * 3][..]);
        c.pop();
    }
    assert!(c.peek::<[u64; 3]>().is_none());
}

#[test]
fn full_ring_refuses_then_accepts() {
    let (mut p, mut c, _s) = pair(4096);
    let mut n = 0;
    while p.try_push(&[0u64; 3], &[7u8; 200]) {
        n += 1;
    }
    assert!((5..20).contains(&n), "{n}");
    c.peek::<[u64; 3]>().unwrap();
    c.pop();
    assert!(p.try_push(&[0u64; 3], &[7u8; 200]));
}

#[test]
fn wraps_many_laps_with_varied_sizes_and_stale_bytes() {
    // Payloads full of values that look like stamps must never be
    // mistaken for records.
    let (mut p, mut c, _s) = pair(4096);
    let mut sent = 0u64;
    let mut got = 0u64;
    let mut x = 12345u64;
    let mut lens = std::collections::VecDeque::new();
    while got < 20_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = (x >> 33) as usize % 900;
        let pos_like: Vec<u8> = (0..len)
            .map(|i| ((sent as usize * 64 + i) >> 3) as u8)
            .collect();
        if !(x >> 7).is_multiple_of(3) && p.try_push(&[sent, len as u64, 0], &pos_like) {
            lens.push_back(pos_like);
            sent += 1;
        } else if let Some((m, pl)) = c.peek::<[u64; 3]>() {
            assert_eq!(m[0], got);
            assert_eq!(pl, &lens.pop_front().unwrap()[..]);
            c.pop();
            got += 1;
        }
    }
}

#[test]
fn payload_words_that_are_next_laps_stamps_are_never_records() {
    // Every line-start word inside a payload holds the exact stamp the
    // consumer would accept there one or two laps later: only the
    // producer's zeroing of the slack line keeps them from
    // being read as records.
    let size = 4096u64;
    let (mut p, mut c, _s) = pair(size as usize);
    let mut x = 99u64;
    let (mut sent, mut got) = (0u64, 0u64);
    let mut queued = std::collections::VecDeque::new();
    while got < 50_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = (x >> 35) as usize % 700;
        let rec = round_up(HEADER_BYTES + len) as u64;
        let off = p.tail & (size - 1);
        let start = if rec > size - off {
            p.tail + size - off
        } else {
            p.tail
        };
        let lap = if (x >> 20) & 1 == 0 { size } else { 2 * size };
        let mut payload = vec![0xA5u8; len];
        let mut q = start + LINE as u64;
        while q < start + HEADER_BYTES as u64 + len as u64 {
            let at = (q - start) as usize - HEADER_BYTES;
            let w = (q + lap + 1).to_le_bytes();
            let n = (len - at).min(8);
            payload[at..at + n].copy_from_slice(&w[..n]);
            q += LINE as u64;
        }
        if (x >> 9) % 5 < 3 && p.try_push(&[sent, 0, 0], &payload) {
            queued.push_back(payload);
            sent += 1;
        } else if let Some((m, pl)) = c.peek::<[u64; 3]>() {
            assert_eq!(m[0], got, "records in order, none invented");
            assert_eq!(pl, &queued.pop_front().unwrap()[..]);
            c.pop();
            got += 1;
        } else {
            assert!(queued.is_empty(), "a published record is always seen");
        }
    }
}

#[test]
fn two_threads_stress() {
    let (mut p, mut c, _s) = pair(8192);
    let n = 200_000u64;
    let t = std::thread::spawn(move || {
        for i in 0..n {
            let len = (i % 97) as usize;
            let payload: Vec<u8> = (0..len).map(|j| (i as usize + j) as u8).collect();
            while !p.try_push(&[i, 0, 0], &payload) {
                std::hint::spin_loop();
            }
        }
    });
    for i in 0..n {
        loop {
            if let Some((m, pl)) = c.peek::<[u64; 3]>() {
                assert_eq!(m[0], i);
                assert_eq!(pl.len(), (i % 97) as usize);
                assert!(pl
                    .iter()
                    .enumerate()
                    .all(|(j, &b)| b == (i as usize + j) as u8));
                c.pop();
                break;
            }
            std::hint::spin_loop();
        }
    }
    t.join().unwrap();
}
