//! Matching and protocol logic without processes: two engines on two
//! slots of one segment, in one thread.
use super::registry::SEQ_MASK;
use super::*;
use crate::backend::Record;
use crate::backend::TOKEN_WORLD as ENTRY_WORLD;
use crate::backend::{Cell, Store};
use pertinax_os::segment::Layout;
use pertinax_os::{cma, lend};
use std::rc::Rc;

fn pair(ring: usize, cma: bool) -> (Engine, Engine) {
    let seg = Segment::create_anonymous(Layout::new(2, ring)).unwrap();
    for s in 0..2 {
        seg.proc_block(s)
            .pid
            .store(std::process::id(), Ordering::Release);
    }
    let p = WaitPolicy {
        spin: std::time::Duration::from_micros(1),
        yields: std::time::Duration::ZERO,
        sleep: std::time::Duration::from_millis(1),
    };
    (
        Engine::new(seg.clone(), 0, 2, p, Some(1000), cma),
        Engine::new(seg, 1, 2, p, Some(1000), cma),
    )
}

fn peers() -> Peers {
    Rc::from([0u32, 1])
}

fn spec(src: Option<u32>, tag: Option<i32>) -> MatchSpec {
    MatchSpec { ctx: 0, src, tag }
}

/// Drives both engines until `k` on `b` completes.
fn finish(a: &mut Engine, b: &mut Engine, k: ReqKey) -> Result<Status> {
    for _ in 0..100_000 {
        a.progress();
        b.progress();
        if let Some(r) = b.take(k).unwrap() {
            return r;
        }
    }
    panic!("request never completed");
}

#[test]
fn posted_and_unexpected_match_in_order_with_wildcards() {
    let (mut a, mut b) = pair(4096, false);
    for (tag, v) in [(1, 10u8), (2, 20), (1, 11)] {
        a.send_eager(1, 1, 0, 0, tag, &[v]).unwrap();
    }
    b.progress(); // all three are now unexpected
    let mut bufs = [[0u8; 1]; 3];
    lend::scope(
        |s| {
            let [x, y, z] = &mut bufs;
            let k1 = b.irecv(
                spec(Some(0), Some(1)),
                peers(),
                RecvBuf::Lent(s.lend_mut(x)),
                1,
            );
            let k2 = b.irecv(spec(None, None), peers(), RecvBuf::Lent(s.lend_mut(y)), 1);
            let k3 = b.irecv(
                spec(None, Some(1)),
                peers(),
                RecvBuf::Lent(s.lend_mut(z)),
                1,
            );
            for k in [k1, k2, k3] {
                finish(&mut a, &mut b, k).unwrap();
            }
        },
        || {},
    );
    // First tag-1 message, then the first remaining (tag 2), then tag 1.
    assert_eq!(bufs, [[10], [20], [11]]);
}

#[test]
fn a_truncated_receive_consumes_the_message() {
    let (mut a, mut b) = pair(4096, false);
    let mut small = [0u8; 2];
    let mut big = [0u8; 8];
    lend::scope(
        |s| {
            let k = b.irecv(
                spec(Some(0), Some(3)),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut small)),
                1,
            );
            a.send_eager(1, 1, 0, 0, 3, b"hello").unwrap();
            a.send_eager(1, 1, 0, 0, 3, b"world!").unwrap();
            assert_eq!(
                finish(&mut a, &mut b, k),
                Err(Error::Truncated {
                    sent: 5,
                    capacity: 2
                })
            );
            let k = b.irecv(
                spec(Some(0), Some(3)),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut big)),
                1,
            );
            let st = finish(&mut a, &mut b, k).unwrap();
            assert_eq!(st.len, 6);
        },
        || {},
    );
    assert_eq!(&big[..6], b"world!");
}

#[test]
fn a_truncated_rendezvous_is_consumed_and_its_sender_completes() {
    let (mut a, mut b) = pair(4096, false);
    let data: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
    let mut small = [0u8; 16];
    lend::scope(
        |s| {
            let ks = a
                .isend(1, 1, 0, 0, 9, SendBuf::Lent(s.lend(&data)))
                .unwrap();
            let kr = b.irecv(
                spec(Some(0), Some(9)),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut small)),
                1,
            );
            assert_eq!(
                finish(&mut a, &mut b, kr),
                Err(Error::Truncated {
                    sent: 50_000,
                    capacity: 16
                })
            );
            // The engine streams the refused message into a scratch buffer.
            finish(&mut b, &mut a, ks).unwrap();
            assert!(b.find(&spec(None, None)).is_none());
        },
        || {},
    );
}

#[test]
fn element_size_mismatch_is_reported_and_consumed() {
    let (mut a, mut b) = pair(4096, false);
    let mut words = [0u8; 16];
    lend::scope(
        |s| {
            a.send_eager(1, 1, 0, 0, 0, &[1, 2, 3]).unwrap();
            let k = b.irecv(
                spec(None, None),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut words)),
                4,
            );
            assert_eq!(
                finish(&mut a, &mut b, k),
                Err(Error::LengthNotMultiple { len: 3, elem: 4 })
            );
            assert!(b.find(&spec(None, None)).is_none());
        },
        || {},
    );
}

#[test]
fn rendezvous_streams_through_a_small_ring() {
    let (mut a, mut b) = pair(4096, false);
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let mut got = vec![0u8; 100_000];
    lend::scope(
        |s| {
            let ks = a
                .isend(1, 1, 0, 0, 9, SendBuf::Lent(s.lend(&data)))
                .unwrap();
            let kr = b.irecv(
                spec(Some(0), Some(9)),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut got)),
                1,
            );
            let st = finish(&mut a, &mut b, kr).unwrap();
            assert_eq!(st.len, 100_000);
            // The sender completes once every fragment is out.
            finish(&mut b, &mut a, ks).unwrap();
        },
        || {},
    );
    assert_eq!(got, data);
}

#[test]
fn rendezvous_by_single_copy_when_allowed() {
    if !cma::probe() {
        return;
    }
    let (mut a, mut b) = pair(4096, true);
    let data = vec![7u8; 50_000];
    let mut got = vec![0u8; 50_000];
    lend::scope(
        |s| {
            let ks = a
                .isend(1, 1, 0, 0, 9, SendBuf::Lent(s.lend(&data)))
                .unwrap();
            let kr = b.irecv(
                spec(Some(0), None),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut got)),
                1,
            );
            finish(&mut a, &mut b, kr).unwrap();
            finish(&mut b, &mut a, ks).unwrap();
        },
        || {},
    );
    assert_eq!(got, data);
}

#[test]
fn full_ring_backlogs_in_order() {
    let (mut a, mut b) = pair(4096, false);
    for i in 0..200u32 {
        a.send_eager(1, 1, 0, 0, 0, &i.to_le_bytes()).unwrap();
    }
    let mut x = [0u8; 4];
    for i in 0..200u32 {
        lend::scope(
            |s| {
                let k = b.irecv(
                    spec(Some(0), Some(0)),
                    peers(),
                    RecvBuf::Lent(s.lend_mut(&mut x)),
                    1,
                );
                finish(&mut a, &mut b, k).unwrap();
            },
            || {},
        );
        assert_eq!(u32::from_le_bytes(x), i);
    }
}

#[test]
fn taking_a_result_twice_is_an_error() {
    let (mut a, _b) = pair(4096, false);
    let k = lend::scope(
        |s| {
            a.isend(1, 1, 0, 0, 0, SendBuf::Lent(s.lend(&[1u8])))
                .unwrap()
        },
        || {},
    );
    assert!(a.take(k).unwrap().is_some());
    assert_eq!(a.take(k), Err(Error::RequestInactive));
}

#[test]
fn a_failed_peer_fails_pending_receives() {
    let (a, mut b) = pair(4096, false);
    let mut x = [0u8; 4];
    let mut y = [0u8; 4];
    lend::scope(
        |s| {
            let k1 = b.irecv(
                spec(Some(0), None),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut x)),
                1,
            );
            let k2 = b.irecv(
                spec(None, None),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut y)),
                1,
            );
            a.seg
                .proc_block(0)
                .state
                .store(slot::FAILED, Ordering::SeqCst);
            a.seg.header().event_epoch.fetch_add(1, Ordering::SeqCst);
            b.progress();
            assert_eq!(
                b.take(k1).unwrap(),
                Some(Err(Error::ProcFailed {
                    ranks: vec![Rank(0)]
                }))
            );
            assert_eq!(
                b.take(k2).unwrap(),
                Some(Err(Error::ProcFailedPending {
                    ranks: vec![Rank(0)]
                }))
            );
        },
        || {},
    );
    assert_eq!(
        b.send_eager(0, 0, 0, 1, 0, &[1]),
        Err(Error::ProcFailed {
            ranks: vec![Rank(0)]
        })
    );
}

// ---- fault tolerance ------------------------------------------------------

fn three() -> (Segment, Vec<Engine>) {
    let seg = Segment::create_anonymous(Layout::new(3, 4096)).unwrap();
    let p = WaitPolicy {
        spin: std::time::Duration::from_micros(1),
        yields: std::time::Duration::ZERO,
        sleep: std::time::Duration::from_millis(1),
    };
    let es = (0..3)
        .map(|s| Engine::new(seg.clone(), s, 3, p, Some(1000), false))
        .collect();
    (seg, es)
}

fn members3(entries: [u16; 3]) -> Rc<[Member]> {
    (0..3)
        .map(|s| Member {
            slot: s as u32,
            entry: entries[s],
        })
        .collect()
}

#[test]
fn revocation_spreads_through_the_segment_and_fails_pending_requests() {
    let (_seg, mut es) = three();
    let entries: Vec<u16> = es.iter_mut().map(|e| e.alloc_entry().unwrap()).collect();
    let m = members3([entries[0], entries[1], entries[2]]);
    for e in es.iter_mut() {
        e.register(8, m[e.me].entry, m.clone());
    }
    // Slot 2 waits for a message from slot 1 on the revoked context.
    let cell: Cell = Rc::new(std::cell::RefCell::new(Store::scratch(8)));
    let k = es[2].irecv(
        MatchSpec {
            ctx: 8,
            src: Some(1),
            tag: None,
        },
        Rc::from([0u32, 1, 2]),
        RecvBuf::Part(cell, 0..8),
        1,
    );
    es[0].revoke(8);
    assert!(es[0].is_revoked(8) && es[0].is_revoked(9) && !es[0].is_revoked(12));
    for e in es.iter_mut() {
        e.progress();
    }
    assert!(es[1].is_revoked(8));
    assert_eq!(es[2].take(k).unwrap(), Some(Err(Error::Revoked)));
    // Later sends on the p2p and collective contexts fail too; the
    // internal context of recovery does not.
    assert_eq!(es[1].send_eager(0, 0, 8, 1, 0, b"x"), Err(Error::Revoked));
    assert_eq!(es[1].send_eager(0, 0, 9, 1, 0, b"x"), Err(Error::Revoked));
    assert_eq!(es[1].send_eager(0, 0, 10, 1, 0, b"x"), Ok(()));
}

#[test]
fn a_revocation_reaches_a_member_still_creating_the_communicator() {
    let (_seg, mut es) = three();
    let entries: Vec<u16> = es.iter_mut().map(|e| e.alloc_entry().unwrap()).collect();
    let m = members3([entries[0], entries[1], entries[2]]);
    es[0].register(8, entries[0], m.clone());
    es[0].revoke(8);
    // Slot 1 registers only now: its reserved entry kept the mark.
    es[1].register(8, entries[1], m);
    assert!(es[1].is_revoked(8));
}

#[test]
fn agreement_decides_from_contributions_and_ended_members() {
    let (seg, mut es) = three();
    let m = members3([ENTRY_WORLD; 3]);
    for e in es.iter_mut() {
        e.register(0, ENTRY_WORLD, m.clone());
    }
    let c = |words| Some(Record::Contributed { kind: 1, words });
    es[0].contribute(ENTRY_WORLD, 0, 1, 1, [0b110, 0, 0, 0], &m);
    es[1].contribute(ENTRY_WORLD, 0, 1, 1, [0b011, 0, 0, 0], &m);
    // Slot 2 has not contributed and is alive: undecided.
    assert_eq!(es[0].contribution(m[2], 0, 1), None);
    assert_eq!(es[0].contribution(m[1], 0, 1), c([0b011, 0, 0, 0]));
    // It dies without contributing: final, and the same for everyone.
    seg.proc_block(2)
        .state
        .store(slot::FAILED, Ordering::SeqCst);
    assert_eq!(es[0].contribution(m[2], 0, 1), Some(Record::Failed));
    assert_eq!(es[1].contribution(m[2], 0, 1), Some(Record::Failed));
    // The next instance uses the other record; the first stays readable.
    es[0].contribute(ENTRY_WORLD, 0, 2, 1, [1, 0, 0, 0], &m);
    assert_eq!(es[1].contribution(m[0], 0, 1), c([0b110, 0, 0, 0]));
    assert_eq!(es[1].contribution(m[0], 0, 2), c([1, 0, 0, 0]));
}

#[test]
fn agreement_records_carry_the_kind_of_call_and_tell_finalized_from_failed() {
    let (seg, mut es) = three();
    let m = members3([ENTRY_WORLD; 3]);
    for e in es.iter_mut() {
        e.register(0, ENTRY_WORLD, m.clone());
    }
    // Same instance, different kinds of call: both records are final and
    // name their kind (the decision above the engine turns that into a
    // mismatch at every member).
    es[0].contribute(ENTRY_WORLD, 0, 1, 1, [7, 0, 0, 0], &m);
    es[1].contribute(ENTRY_WORLD, 0, 1, 5, [9, 0, 0, 0], &m);
    for e in &es {
        assert_eq!(
            e.contribution(m[0], 0, 1),
            Some(Record::Contributed {
                kind: 1,
                words: [7, 0, 0, 0]
            })
        );
        assert_eq!(
            e.contribution(m[1], 0, 1),
            Some(Record::Contributed {
                kind: 5,
                words: [9, 0, 0, 0]
            })
        );
    }
    // A record of another instance (or communicator) is not taken.
    assert_eq!(es[2].contribution(m[0], 0, 3), None);
    assert_eq!(es[2].contribution(m[0], 4, 1), None);
    // A member that finalized without contributing is final, not failed.
    seg.proc_block(2)
        .state
        .store(slot::FINALIZED, Ordering::SeqCst);
    assert_eq!(es[0].contribution(m[2], 0, 1), Some(Record::Finalized));
}

#[test]
fn sequence_numbers_stay_nonzero_and_alternate_parity_when_they_wrap() {
    assert_eq!(next_seq(0), 1);
    assert_eq!(next_seq(1), 2);
    let mut s = SEQ_MASK - 2;
    for _ in 0..6 {
        let n = next_seq(s);
        assert_ne!(n, 0);
        assert_ne!(n & 1, s & 1, "{s} -> {n}");
        assert!(n <= SEQ_MASK);
        s = n;
    }
}

#[test]
fn entries_of_freed_communicators_are_reused_only_when_every_member_let_go() {
    let (_seg, mut es) = three();
    let e0 = es[0].alloc_entry().unwrap();
    let e1 = es[1].alloc_entry().unwrap();
    let m: Rc<[Member]> = Rc::from([Member { slot: 0, entry: e0 }, Member { slot: 1, entry: e1 }]);
    es[0].register(8, e0, m.clone());
    es[1].register(8, e1, m);
    es[0].release(8, e0);
    // Fill every other entry of slot 0: the released one is not free yet.
    let mut got = Vec::new();
    while let Ok(e) = es[0].alloc_entry() {
        assert_ne!(e, e0, "reused while slot 1 still holds the communicator");
        got.push(e);
    }
    es[1].release(8, e1);
    assert_eq!(es[0].alloc_entry().unwrap(), e0);
}

#[test]
fn a_revocation_reaches_a_process_that_has_not_started_yet() {
    let (_seg, mut es) = three();
    let m = members3([ENTRY_WORLD; 3]);
    es[0].register(0, ENTRY_WORLD, m.clone());
    es[1].register(0, ENTRY_WORLD, m.clone());
    es[0].revoke(0);
    // Slot 2 joins only now (a replacement, or a rank slow in `init`).
    es[2].register(0, ENTRY_WORLD, m);
    assert!(es[2].is_revoked(0));
}

#[test]
fn cancel_takes_only_unmatched_receives() {
    let (mut a, mut b) = pair(4096, false);
    let data: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    let mut first = [9u8; 4];
    let mut big = vec![0u8; 3000];
    lend::scope(
        |s| {
            // Unmatched: cancelled, the buffer untouched, the message that
            // arrives later stays for the next receive.
            let k = b.irecv(
                spec(Some(0), Some(1)),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut first)),
                1,
            );
            assert_eq!(b.cancel(k), Ok(true));
            assert_eq!(b.take(k).unwrap(), Some(Err(Error::Cancelled)));
            assert_eq!(b.cancel(k), Err(Error::RequestInactive));
            // Streaming (no single copy): matched, fragments pending; not
            // cancelled, and it completes with every byte.
            let q = a
                .isend(1, 1, 0, 0, 1, SendBuf::Lent(s.lend(&data)))
                .unwrap();
            let k = b.irecv(
                spec(Some(0), Some(1)),
                peers(),
                RecvBuf::Lent(s.lend_mut(&mut big)),
                1,
            );
            for _ in 0..1000 {
                b.progress();
                if matches!(b.m.get(k), Some(ReqState::Recv(r)) if r.stream.is_some()) {
                    break;
                }
            }
            assert!(matches!(b.m.get(k), Some(ReqState::Recv(r)) if r.stream.is_some()));
            assert_eq!(b.cancel(k), Ok(false));
            // A send is never cancelled.
            assert_eq!(a.cancel(q), Ok(false));
            finish(&mut a, &mut b, k).unwrap();
            for _ in 0..100_000 {
                a.progress();
                if a.is_done(q) {
                    break;
                }
            }
            assert!(a.take(q).unwrap().unwrap().is_ok());
        },
        || {},
    );
    assert_eq!(first, [9; 4]);
    assert_eq!(big, data);
}
