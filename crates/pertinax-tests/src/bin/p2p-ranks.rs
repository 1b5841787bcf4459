//! Rank program for the multi-process tests: `p2p-ranks SCENARIO [ARGS]`.
//! Prints `OK SCENARIO rank=R` and exits 0 when every check passed;
//! prints the first failed check and exits 1 otherwise.

use pertinax::{Comm, Error, Rank, Tag, Universe, ANY_SOURCE, ANY_TAG};
use pertinax::{Communicator as _, CommunicatorExt as _};
use pertinax_tests::{fill, first_bad, mixed_size};
use pertinax_wire::rng::SplitMix64;

type R = Result<(), String>;

use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::scenario::P2p;
use pertinax_tests::{arg, check, e};

/// Ping-pong with content checks over many sizes between ranks 0 and 1.
fn pingpong(w: &Comm, _a: &[String]) -> R {
    let me = w.rank().index();
    if me > 1 {
        return Ok(());
    }
    let peer = 1 - me;
    for &n in &[
        0usize,
        1,
        7,
        8,
        24,
        25,
        100,
        4096,
        8192,
        8193,
        16000,
        65536,
        1 << 20,
        (4 << 20) + 3,
    ] {
        for rep in 0..3u64 {
            let mut buf = vec![0u8; n];
            if me == 0 {
                fill(&mut buf, 0, rep);
                w.send(&buf, peer, 5).map_err(e)?;
                let st = w.recv(&mut buf, peer, 6).map_err(e)?;
                check!(
                    st.unwrap().len == n
                        && st.unwrap().source == Rank(1)
                        && st.unwrap().tag == Tag(6),
                    "bad status {st:?}"
                );
                check!(
                    first_bad(&buf, 1, rep).is_none(),
                    "pong of {n} bytes corrupted"
                );
            } else {
                let st = w.recv(&mut buf, peer, 5).map_err(e)?;
                check!(
                    st.unwrap().len == n,
                    "got {} bytes, expected {n}",
                    st.unwrap().len
                );
                check!(
                    first_bad(&buf, 0, rep).is_none(),
                    "ping of {n} bytes corrupted at {:?}",
                    first_bad(&buf, 0, rep)
                );
                fill(&mut buf, 1, rep);
                w.send(&buf, peer, 6).map_err(e)?;
            }
        }
    }
    Ok(())
}

/// A token goes around the ring `laps` times, incremented by every rank.
fn ring(w: &Comm, a: &[String]) -> R {
    let laps = arg(a, 0, 10);
    let (me, n) = (w.rank().index(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let mut tok = [0u64];
    for lap in 0..laps {
        if me == 0 {
            w.send(&[lap * n as u64], next, 1).map_err(e)?;
            w.recv(&mut tok, prev, 1).map_err(e)?;
            check!(
                tok[0] == lap * n as u64 + n as u64 - 1,
                "lap {lap}: token {}",
                tok[0]
            );
        } else {
            w.recv(&mut tok, prev, 1).map_err(e)?;
            w.send(&[tok[0] + 1], next, 1).map_err(e)?;
        }
    }
    Ok(())
}

/// Every rank sends `k` numbered messages to rank 0, which receives them
/// with any-source and checks per-sender order and completeness.
fn fanin(w: &Comm, a: &[String]) -> R {
    let k = arg(a, 0, 1000);
    let (me, n) = (w.rank().index(), w.size());
    if me == 0 {
        let mut next = vec![0u64; n];
        for _ in 0..k * (n as u64 - 1) {
            let mut m = [0u64; 2];
            let st = w.recv(&mut m, ANY_SOURCE, ANY_TAG).map_err(e)?;
            let s = st.unwrap().source.index();
            check!(
                m[0] == s as u64 && st.unwrap().tag == Tag(s as i32),
                "message claims {} from {s}",
                m[0]
            );
            check!(m[1] == next[s], "from {s}: seq {} before {}", m[1], next[s]);
            next[s] += 1;
        }
        check!(next[1..].iter().all(|&c| c == k), "counts {next:?}");
    } else {
        for i in 0..k {
            w.send(&[me as u64, i], 0, me as i32).map_err(e)?;
        }
    }
    Ok(())
}

/// All-to-all streams of `count` messages per ordered pair with mixed sizes
/// (0 B to 4 MiB), mixing blocking and non-blocking sends and any-source
/// receives; checks order and every byte. Sends go out in bursts of
/// non-blocking requests while the rank keeps receiving (two ranks doing
/// blocking rendezvous sends to each other would deadlock, as in MPI).
fn order(w: &Comm, a: &[String]) -> R {
    let count = arg(a, 0, 10_000);
    let seed = arg(a, 1, 7);
    let (me, n) = (w.rank().index(), w.size());
    let sizes = |src: usize, dst: usize| {
        let mut r = SplitMix64::new(seed ^ ((src as u64) << 32) ^ dst as u64);
        (0..count).map(move |_| mixed_size(&mut r))
    };
    let mut recv_sizes: Vec<_> = (0..n).map(|s| sizes(s, me)).collect();
    let mut send_sizes: Vec<_> = (0..n).map(|d| sizes(me, d)).collect();
    let mut next_recv = vec![0u64; n];
    let mut next_send = vec![0u64; n];
    let total_in = count * (n as u64 - 1);
    let mut got = 0u64;
    let mut rng = SplitMix64::new(seed + me as u64);
    let mut rbuf = vec![0u8; 4 << 20];
    let mut recv_some = |w: &Comm, got: &mut u64| -> R {
        while *got < total_in {
            let Some(st) = w.iprobe(ANY_SOURCE, Tag(3).into()).map_err(e)? else {
                break;
            };
            let s = st.source.index();
            let exp = recv_sizes[s].next().unwrap_or(usize::MAX);
            check!(
                st.len == exp,
                "from {s} msg {}: {} bytes, expected {exp}",
                next_recv[s],
                st.len
            );
            let st2 = w.recv(&mut rbuf[..exp], s, 3).map_err(e)?;
            check!(st2.unwrap().len == exp, "probe/recv mismatch");
            check!(
                first_bad(&rbuf[..exp], s * 1_000_000 + me, next_recv[s]).is_none(),
                "from {s} msg {} ({exp} B) corrupted",
                next_recv[s]
            );
            next_recv[s] += 1;
            *got += 1;
        }
        Ok(())
    };
    while got < total_in
        || next_send
            .iter()
            .enumerate()
            .any(|(d, &c)| d != me && c < count)
    {
        let d = rng.below_mod(n as u64) as usize;
        if d != me && next_send[d] < count {
            let burst = (1 + rng.below_mod(8)).min(count - next_send[d]);
            let bufs: Vec<Vec<u8>> = (0..burst)
                .map(|i| {
                    let mut b = vec![0u8; send_sizes[d].next().unwrap_or(0)];
                    fill(&mut b, me * 1_000_000 + d, next_send[d] + i);
                    b
                })
                .collect();
            next_send[d] += burst;
            pertinax::scope(|s| -> R {
                let mut reqs = bufs
                    .iter()
                    .map(|b| w.isend(s, b, d, 3))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(e)?;
                let mut left = reqs.len();
                while left > 0 {
                    if pertinax::test_any(&mut reqs)
                        .map_err(|x| e(x.into()))?
                        .is_some()
                    {
                        left -= 1;
                    } else {
                        recv_some(w, &mut got)?;
                    }
                }
                Ok(())
            })?;
        }
        recv_some(w, &mut got)?;
    }
    w.barrier().map_err(e)?;
    Ok(())
}

/// Messages on a dup'd and a split communicator never match the world's.
fn isolation(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let d = w.dup().map_err(e)?;
    check!(d.size() == n && d.rank() == w.rank(), "dup shape");
    let half = w
        .split(Some((me % 2) as u32), -(me as i32))
        .map_err(e)?
        .ok_or("no comm")?;
    let exp_size = (n + 1 - me % 2) / 2;
    check!(
        half.size() == exp_size,
        "split size {} expected {exp_size}",
        half.size()
    );
    // key = -rank: reversed order.
    let members: Vec<usize> = (0..n).filter(|r| r % 2 == me % 2).rev().collect();
    check!(members[half.rank().index()] == me, "split order");
    let none = w.split(None, 0).map_err(e)?;
    check!(none.is_none(), "undefined color got a communicator");
    // Same tag, same peers, three communicators: receive in reverse order.
    let next = (me + 1) % n;
    let prev = (me + n - 1) % n;
    w.send(&[1u32], next, 9).map_err(e)?;
    d.send(&[2u32], next, 9).map_err(e)?;
    let mut x = [0u32];
    d.recv(&mut x, prev, 9).map_err(e)?;
    check!(x[0] == 2, "dup got {}", x[0]);
    w.recv(&mut x, prev, 9).map_err(e)?;
    check!(x[0] == 1, "world got {}", x[0]);
    if half.size() > 1 {
        let hn = half.size();
        let hr = half.rank().index();
        half.send(&[me as u32], (hr + 1) % hn, 9).map_err(e)?;
        half.recv(&mut x, (hr + hn - 1) % hn, 9).map_err(e)?;
        check!(
            x[0] as usize % 2 == me % 2,
            "split got a message from the other half"
        );
    }
    // Create from a group of the even ranks.
    let g = w
        .group()
        .incl(&(0..n).step_by(2).map(Rank::from).collect::<Vec<_>>())
        .map_err(e)?;
    let c = w.create(&g).map_err(e)?;
    check!(c.is_some() == (me % 2 == 0), "create membership");
    if let Some(c) = c {
        c.barrier().map_err(e)?;
        check!(c.size() == n.div_ceil(2), "create size");
    }
    d.free().map_err(e)?;
    check!(
        matches!(d.send(&[1u8], 0, 0), Err(Error::CommFreed)),
        "freed comm still usable"
    );
    w.barrier().map_err(e)?;
    Ok(())
}

/// Every bad input gives its typed error and leaves things consistent.
fn badinput(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    check!(
        matches!(w.send(&[1u8], n, 0), Err(Error::InvalidRank { .. })),
        "rank n"
    );
    check!(
        matches!(w.send(&[1u8], -1, 0), Err(Error::InvalidRank { .. })),
        "rank -1"
    );
    check!(
        matches!(w.send(&[1u8], 0, -5), Err(Error::InvalidTag { .. })),
        "tag -5"
    );
    check!(
        matches!(
            w.send(&[1u8], 0, pertinax::TAG_UB + 1),
            Err(Error::InvalidTag { .. })
        ),
        "tag ub+1"
    );
    let mut small = [0u8; 4];
    check!(
        matches!(w.recv(&mut small, n + 3, 0), Err(Error::InvalidRank { .. })),
        "recv rank"
    );
    let next = (me + 1) % n;
    let prev = (me + n - 1) % n;
    for len in [10usize, 100_000] {
        let data: Vec<u8> = (0..len).map(|i| i as u8).collect();
        pertinax::scope(|s| -> Result<(), String> {
            // Three copies: each refused receive consumes one (MPI's
            // semantics), so the next receive gets the next copy.
            let qs = (0..3)
                .map(|_| w.isend(s, &data, next, 4))
                .collect::<Result<Vec<_>, _>>()
                .map_err(e)?;
            let mut small = [0u8; 4];
            match w.recv(&mut small, prev, 4) {
                Err(Error::Truncated { sent, capacity }) => {
                    check!(
                        sent == len && capacity == 4,
                        "truncated sizes {sent} {capacity}"
                    )
                }
                other => return Err(format!("expected Truncated, got {other:?}")),
            }
            // Not a whole number of u32 (len 10) / fine (100000).
            let mut words = vec![0u32; len / 4 + 1];
            let r = w.recv(&mut words, prev, 4);
            if len % 4 != 0 {
                check!(
                    matches!(r, Err(Error::LengthNotMultiple { len: 10, elem: 4 })),
                    "expected LengthNotMultiple, got {r:?}"
                );
            } else {
                let st = r.map_err(e)?;
                check!(
                    st.unwrap().len == len && bytemuck_eq(&words, &data),
                    "the copy after a truncated receive lost data"
                );
            }
            let mut right = vec![0u8; len];
            let st = w.recv(&mut right, prev, 4).map_err(e)?;
            check!(
                st.unwrap().len == len && right == data,
                "the last copy lost data"
            );
            for q in qs {
                q.wait().map_err(e)?;
            }
            Ok(())
        })?;
    }
    // A request waited on twice.
    let mut got = [0u8; 1];
    pertinax::scope(|s| -> Result<(), String> {
        let mut r = w.irecv(s, &mut got, me, 8).map_err(e)?;
        w.send(&[7u8], me, 8).map_err(e)?;
        let mut done = None;
        for _ in 0..1000 {
            if let Some(st) = r.test().map_err(e)? {
                done = Some(st);
                break;
            }
        }
        check!(done.is_some(), "test never completed a self-message");
        check!(
            matches!(r.test(), Err(Error::RequestInactive)),
            "second test"
        );
        check!(
            matches!(r.wait(), Err(Error::RequestInactive)),
            "wait after test"
        );
        Ok(())
    })?;
    check!(
        matches!(w.split(Some(u32::MAX), 0), Err(Error::InvalidArgument(_))),
        "bad color"
    );
    w.barrier().map_err(e)?;
    Ok(())
}

fn bytemuck_eq(words: &[u32], data: &[u8]) -> bool {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    &bytes[..data.len()] == data
}

/// probe, iprobe, sendrecv, recv_vec, values, wait_any, test_any.
fn misc(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let next = (me + 1) % n;
    let prev = (me + n - 1) % n;
    let mut got = [0i64; 3];
    let st = w
        .sendrecv(&[me as i64; 3], next, 2, &mut got, prev, 2)
        .map_err(e)?;
    check!(
        got == [prev as i64; 3] && st.unwrap().source == Rank::from(prev),
        "sendrecv {got:?}"
    );
    w.send(&[1.5f32; 5], next, 3).map_err(e)?;
    let st = w.probe(ANY_SOURCE, Tag(3).into()).map_err(e)?;
    check!(
        st.is_some_and(|st| st.len == 20 && st.count::<f32>() == Some(5)),
        "probe {st:?}"
    );
    let (v, _) = w
        .recv_vec::<f32>(prev, 3)
        .map_err(e)?
        .expect("a plain receive is never skipped");
    check!(v == vec![1.5f32; 5], "recv_vec {v:?}");
    check!(
        w.iprobe(ANY_SOURCE, Tag(77).into()).map_err(e)?.is_none(),
        "iprobe found a ghost"
    );
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Msg {
        name: String,
        xs: Vec<u16>,
    }
    let m = Msg {
        name: format!("rank {me}"),
        xs: vec![me as u16; me + 1],
    };
    w.send_value(&m, next, 4).map_err(e)?;
    let (r, _) = w
        .recv_value::<Msg>(prev, 4)
        .map_err(e)?
        .expect("a plain receive is never skipped");
    check!(
        r.name == format!("rank {prev}") && r.xs.len() == prev + 1,
        "value {r:?}"
    );
    // wait_any over receives from every other rank.
    let mut bufs = vec![[0u32; 1]; n];
    pertinax::scope(|s| -> Result<(), String> {
        let mut reqs = Vec::new();
        for (r, b) in bufs.iter_mut().enumerate() {
            if r != me {
                reqs.push(w.irecv(s, b, r, 5).map_err(e)?);
            }
        }
        for r in 0..n {
            if r != me {
                w.send(&[(me * 100) as u32], r, 5).map_err(e)?;
            }
        }
        let mut seen = 0;
        while let Some((_, st)) = pertinax::wait_any(&mut reqs).map_err(|x| e(x.into()))? {
            check!(st.status.map(|s| s.tag) == Some(Tag(5)), "wait_any status");
            seen += 1;
        }
        check!(seen == n - 1, "wait_any saw {seen}");
        check!(
            pertinax::test_any(&mut reqs)
                .map_err(|x| e(x.into()))?
                .is_none(),
            "test_any on spent requests"
        );
        Ok(())
    })?;
    for (r, b) in bufs.iter().enumerate() {
        check!(
            r == me || b[0] == (r * 100) as u32,
            "wait_any data from {r}: {}",
            b[0]
        );
    }
    w.barrier().map_err(e)?;
    Ok(())
}

/// Rank 0 waits for a message from the last rank, which dies: rank 0 must
/// get ProcFailed instead of hanging.
fn peerdeath(w: &Comm, _a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let victim = n - 1;
    w.barrier().map_err(e)?;
    // The victim dies only once everyone is out of the barrier: a
    // collective on a communicator with a dead member fails, also at a rank
    // that already has every message it needed.
    if me == victim {
        let mut t = [0u8; 1];
        for r in 0..n - 1 {
            w.recv(&mut t, r, 9).map_err(e)?;
        }
        std::process::abort();
    }
    w.send(&[1u8], victim, 9).map_err(e)?;
    if me == 0 {
        let mut x = [0u8; 8];
        match w.recv(&mut x, victim, 0) {
            Err(Error::ProcFailed { ranks }) => {
                check!(ranks == vec![Rank::from(victim)], "ranks {ranks:?}")
            }
            other => return Err(format!("expected ProcFailed, got {other:?}")),
        }
        let big = vec![0u8; 1 << 20];
        match w.send(&big, victim, 0) {
            Err(Error::ProcFailed { .. }) => {}
            other => {
                return Err(format!(
                    "send to the dead: expected ProcFailed, got {other:?}"
                ))
            }
        }
    }
    Ok(())
}

/// The last rank writes its pid to the file named by the first argument and
/// sleeps; every other rank blocks receiving from it (a blocking receive on
/// rank 0, an any-source receive in a request scope elsewhere). The test
/// kills the victim: survivors must see the failure and finish.
fn victim(w: &Comm, a: &[String]) -> R {
    let (me, n) = (w.rank().index(), w.size());
    let v = n - 1;
    if me == v {
        let path = a.first().ok_or("victim needs a pid file")?;
        std::fs::write(format!("{path}.tmp"), std::process::id().to_string())
            .map_err(|x| x.to_string())?;
        std::fs::rename(format!("{path}.tmp"), path).map_err(|x| x.to_string())?;
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
    let mut x = [0u8; 16];
    if me == 0 {
        match w.recv(&mut x, v, 0) {
            Err(Error::ProcFailed { ranks }) => {
                check!(ranks == vec![Rank::from(v)], "ranks {ranks:?}")
            }
            other => return Err(format!("expected ProcFailed, got {other:?}")),
        }
    } else {
        let r = pertinax::scope(|s| w.irecv(s, &mut x, ANY_SOURCE, 0)?.wait());
        check!(
            matches!(r, Err(Error::ProcFailedPending { .. })),
            "any-source: expected ProcFailedPending, got {r:?}"
        );
    }
    Ok(())
}

/// Arguments that only the root checks are wrong at the root alone: the
/// root reports them, nobody is left waiting, and the communicator stays
/// usable (the barrier after each call proves the ranks still agree).
fn rootargs(w: &Comm, _a: &[String]) -> R {
    use pertinax::Op;
    let (me, n) = (w.rank().index(), w.size());
    let root = n - 1;
    let is_root = me == root;
    for len in [3usize, 5000] {
        // gather: the root's receive buffer is one element short.
        let send = vec![me as u32; len];
        let mut recv = vec![0u32; if is_root { n * len - 1 } else { 0 }];
        let r = w.gather(&send, &mut recv, root);
        check!(
            is_root == matches!(r, Err(Error::InvalidArgument(_))),
            "gather: {r:?}"
        );
        check!(is_root || r.is_ok(), "gather at a non-root: {r:?}");
        w.barrier().map_err(e)?;
        // gatherv: the root's layout does not fit.
        let counts = vec![len; n];
        let displs: Vec<usize> = (0..n).map(|i| i * len + 1).collect();
        let mut recv = vec![0u32; if is_root { n * len } else { 0 }];
        let r = w.gatherv(&send, &mut recv, &counts, &displs, root);
        check!(is_root == r.is_err(), "gatherv: {r:?}");
        w.barrier().map_err(e)?;
        // scatter: the root's send buffer is one element short.
        let sendbuf = vec![7u32; if is_root { n * len - 1 } else { 0 }];
        let mut got = vec![0u32; len];
        let r = w.scatter(&sendbuf, &mut got, root);
        check!(
            matches!(r, Err(Error::InvalidArgument(_))),
            "scatter should fail everywhere: {r:?}"
        );
        w.barrier().map_err(e)?;
        // scatterv: bad layout at the root.
        let r = w.scatterv(&sendbuf, &counts, &displs, &mut got, root);
        check!(
            matches!(r, Err(Error::InvalidArgument(_))),
            "scatterv: {r:?}"
        );
        w.barrier().map_err(e)?;
        // reduce: the root's receive buffer has the wrong length.
        let vals = vec![1.0f64; len];
        let mut out = vec![0.0f64; if is_root { len + 1 } else { 0 }];
        let r = w.reduce(&vals, &mut out, &Op::sum(), root);
        check!(
            is_root == r.is_err() && (is_root || r.is_ok()),
            "reduce: {r:?}"
        );
        w.barrier().map_err(e)?;
        let r = pertinax::scope(|s| match w.ireduce(s, &vals, &mut out, &Op::sum(), root) {
            Ok(q) => q.wait().map(|_| ()),
            Err(x) => Err(x),
        });
        check!(is_root == r.is_err(), "ireduce: {r:?}");
        w.barrier().map_err(e)?;
    }
    // And the communicator still computes right.
    let mut sum = [0u64];
    w.allreduce(&[me as u64], &mut sum, &Op::sum()).map_err(e)?;
    check!(
        sum[0] == (n * (n - 1) / 2) as u64,
        "allreduce after the errors: {}",
        sum[0]
    );
    Ok(())
}

/// Sleeps forever (for launcher kill tests).
fn hang(_w: &Comm, _a: &[String]) -> R {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// Every rank aborts at once (after a barrier), with a message of LEN
/// (default 3000) bytes: `rank R gives up: xxx...`. For the launcher's
/// test that no two messages share a line.
fn abortall(u: &Universe, w: &Comm, a: &[String]) -> R {
    let len = arg(a, 0, 3000) as usize;
    // A rank that left the barrier first may have aborted already: the
    // others abort all the same.
    let _ = w.barrier();
    let message = format!("rank {} gives up: {}", w.rank().index(), "x".repeat(len));
    u.abort(3, &message)
}

/// A rank is replaced after its death. The launcher kills rank VICTIM
/// (default 2) at its fault point `doomed` (`--kill VICTIM@doomed#1`); the
/// others find out at a barrier and call `replace_failed`. The replacement
/// prints `replacement rank=R size=N` and exits with code 3 without
/// finalizing, so that the launcher's summary names it; the survivors
/// check that exactly VICTIM was replaced.
fn replacement(u: &Universe, w: &Comm, a: &[String]) -> R {
    let victim = arg(a, 0, 2) as usize;
    if let pertinax::Role::Replacement { rank, .. } = u.role() {
        println!("replacement rank={} size={}", rank.index(), w.size());
        eprintln!("replacement rank={} gives up", w.rank().index());
        std::process::exit(3);
    }
    pertinax::fault_point("doomed");
    let r = w.barrier();
    check!(r.is_err(), "the barrier completed without rank {victim}");
    w.revoke().map_err(e)?;
    let rep = w.replace_failed().map_err(e)?;
    let replaced: Vec<usize> = rep.replaced.iter().map(|x| x.index()).collect();
    check!(replaced == vec![victim], "replaced {replaced:?}");
    Ok(())
}

fn main() {
    let sc = Scenario::<P2p>::from_args();
    let u = setup("init", pertinax::init());
    let w = u.world();
    let a = sc.args();
    let r: R = match sc.scenario() {
        P2p::Abortall => abortall(&u, &w, a),
        P2p::Replacement => replacement(&u, &w, a),
        P2p::Pingpong => pingpong(&w, a),
        P2p::Ring => ring(&w, a),
        P2p::Fanin => fanin(&w, a),
        P2p::Order => order(&w, a),
        P2p::Isolation => isolation(&w, a),
        P2p::Badinput => badinput(&w, a),
        P2p::Misc => misc(&w, a),
        P2p::Peerdeath => peerdeath(&w, a),
        P2p::Hang => hang(&w, a),
        P2p::Victim => victim(&w, a),
        P2p::Rootargs => rootargs(&w, a),
        P2p::Hello => Ok(()),
    };
    report(sc.name(), w.rank().index(), r.map(|()| String::new())).or_exit();
    setup("finalize", u.finalize());
}
