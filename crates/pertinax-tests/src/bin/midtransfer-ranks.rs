//! Rank program of `tests/midtransfer.rs`: a process dies while a message
//! is between two processes, on every protocol (eager, streamed
//! rendezvous, single copy), and no survivor hangs or takes a partial
//! message for a whole one.
//!
//! `midtransfer-ranks SCENARIO SIZE HOW`:
//! - `p2p SIZE HOW`: rank 0 sends `SIZE`-byte messages to rank 1 in a
//!   loop, message `seq` filled with [`fill`]`(0, seq)`; rank 1 receives
//!   them by `HOW`: `recv` (blocking, into a buffer), `irecv` (a request
//!   waited for in a scope), `probe` (probe, then a receive of the probed
//!   length), `vec` (`recv_vec`), `any` (an any-source receive). Ranks past
//!   1 only take part in the final barrier-free exit. The launcher kills
//!   one of the two (by time, `--kill R@Nms`, or at a protocol's fault
//!   point, `--kill R@p2p.frag#K`).
//! - `bcast SIZE HOW`: every rank broadcasts `SIZE` bytes from rank 0 in a
//!   loop (`HOW`: `blocking` or `nonblocking`), contents checked; a member
//!   is killed.
//!
//! Each rank writes `ready.R` in its working directory once initialized
//! (the tests time their kills from outside after it).
//!
//! - `bsend SIZE`: no kill; every rank sends `SIZE` bytes to every other
//!   in buffered mode (`bsend`), then a barrier, then receives them.
//!
//! The survivors loop until an operation fails because of the victim (at
//! most 20 s: then `FAIL no failure`). Every message received must be
//! whole and right. Each survivor prints `OK SCENARIO rank=R got=N
//! err=CLASS`, where `CLASS` is the error that ended its loop
//! (`PROC_FAILED` naming the victim, or `PENDING` for an any-source
//! receive); any other error, or a failure naming a live rank, is a `FAIL`.

use pertinax::{Communicator as _, CommunicatorExt as _};
use std::time::{Duration, Instant};

use pertinax::{Comm, Error, Rank, ANY_SOURCE};
use pertinax_harness::{report, setup, Scenario};
use pertinax_tests::scenario::Midtransfer;
use pertinax_tests::{arg, check, fill, first_bad};

type R = Result<String, String>;

const TAG: i32 = 7;
/// How long a survivor waits for the victim's failure at most.
const LIMIT: Duration = Duration::from_secs(20);

/// The class of an error that ended a survivor's loop, if it is one the
/// victim's death explains (`victims`: the ranks that may have died).
fn class(x: &Error, victims: &[usize]) -> Result<&'static str, String> {
    let names = |ranks: &[Rank]| ranks.iter().all(|r| victims.contains(&r.index()));
    match x {
        Error::ProcFailed { ranks } if names(ranks) => Ok("PROC_FAILED"),
        Error::ProcFailedPending { ranks } if names(ranks) => Ok("PENDING"),
        other => Err(format!("unexpected error: {other}")),
    }
}

/// Receives message `seq` from rank 0 by `how` into (or as) a buffer of
/// `size` bytes; checks it.
fn recv_one(w: &Comm, how: &str, size: usize, buf: &mut [u8], seq: u64) -> Result<(), Fail> {
    let got: Vec<u8>;
    let data: &[u8] = match how {
        "recv" => {
            let st = w.recv(buf, 0, TAG)?;
            &buf[..st.unwrap().len]
        }
        "any" => {
            let st = w.recv(buf, ANY_SOURCE, TAG)?;
            &buf[..st.unwrap().len]
        }
        "irecv" => {
            let done = pertinax::scope(|s| w.irecv(s, &mut *buf, 0, TAG)?.wait())?;
            &buf[..done.status.unwrap().len]
        }
        "probe" => {
            let len = w.probe(Rank(0).into(), TAG.into())?.map_or(0, |st| st.len);
            if len != size {
                return Err(Fail::Check(format!("probe: {len} bytes, sent {size}")));
            }
            let st = w.recv(&mut buf[..len], 0, TAG)?;
            &buf[..st.unwrap().len]
        }
        "vec" => {
            got = w.recv_vec::<u8>(0, TAG)?.unwrap().0;
            &got
        }
        other => return Err(Fail::Check(format!("unknown receive {other:?}"))),
    };
    if data.len() != size {
        return Err(Fail::Check(format!(
            "message {seq}: {} bytes, sent {size}",
            data.len()
        )));
    }
    if let Some(i) = first_bad(data, 0, seq) {
        return Err(Fail::Check(format!(
            "message {seq} of {size} bytes: byte {i} wrong (a partial message delivered)"
        )));
    }
    Ok(())
}

/// Why a survivor's loop ended: an operation's error, or a failed check.
enum Fail {
    Op(Error),
    Check(String),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Op(e)
    }
}

/// Runs `step(seq)` until it fails, for at most [`LIMIT`]; the outcome
/// line's extra fields.
fn until_failure(victims: &[usize], mut step: impl FnMut(u64) -> Result<(), Fail>) -> R {
    let t = Instant::now();
    let mut seq = 0u64;
    loop {
        match step(seq) {
            Ok(()) => seq += 1,
            Err(Fail::Op(x)) => return Ok(format!("got={seq} err={}", class(&x, victims)?)),
            Err(Fail::Check(m)) => return Err(m),
        }
        check!(
            t.elapsed() < LIMIT,
            "no failure in {LIMIT:?} ({seq} messages)"
        );
    }
}

fn p2p(w: &Comm, a: &[String]) -> R {
    let size = arg(a, 0, 65536) as usize;
    let how = a.get(1).map_or("recv", String::as_str);
    check!(w.size() >= 2, "needs two ranks");
    match w.rank().index() {
        0 => {
            let mut msg = vec![0u8; size];
            until_failure(&[1], |seq| {
                fill(&mut msg, 0, seq);
                w.send(&msg, 1, TAG)?;
                Ok(())
            })
        }
        1 => {
            let mut buf = vec![0u8; size];
            until_failure(&[0], |seq| recv_one(w, how, size, &mut buf, seq))
        }
        _ => Ok(String::new()),
    }
}

fn bcast(w: &Comm, a: &[String]) -> R {
    let size = arg(a, 0, 65536) as usize;
    let how = a.get(1).map_or("blocking", String::as_str);
    let me = w.rank().index();
    let everyone: Vec<usize> = (0..w.size()).filter(|&r| r != me).collect();
    let mut buf = vec![0u8; size];
    until_failure(&everyone, |seq| {
        if me == 0 {
            fill(&mut buf, 0, seq);
        } else {
            buf.fill(0);
        }
        match how {
            "nonblocking" => {
                pertinax::scope(|s| w.ibcast(s, &mut buf, 0)?.wait())?;
            }
            _ => w.bcast(&mut buf, 0).map(drop)?,
        }
        match first_bad(&buf, 0, seq) {
            Some(i) => Err(Fail::Check(format!(
                "bcast {seq} of {size} bytes: byte {i} wrong (a partial message delivered)"
            ))),
            None => Ok(()),
        }
    })
}

/// Every rank sends `SIZE` bytes to every other in buffered mode, then
/// a barrier, then receives them: with sends that waited for their
/// receivers past the eager limit, nobody would reach the barrier.
fn bsend(w: &Comm, a: &[String]) -> R {
    let size = arg(a, 0, 65536) as usize;
    let (me, n) = (w.rank().index(), w.size());
    let mut msg = vec![0u8; size];
    fill(&mut msg, me, 1);
    for r in (0..n).filter(|&r| r != me) {
        w.bsend(&msg, r, TAG)
            .map_err(|x| format!("bsend to {r}: {x}"))?;
    }
    w.barrier().map_err(|x| format!("barrier: {x}"))?;
    for r in (0..n).filter(|&r| r != me) {
        let (got, _) = w
            .recv_vec::<u8>(r, TAG)
            .map_err(|x| format!("recv from {r}: {x}"))?
            .ok_or(format!("recv from {r}: skipped"))?;
        check!(
            got.len() == size,
            "from {r}: {} bytes, sent {size}",
            got.len()
        );
        check!(first_bad(&got, r, 1).is_none(), "from {r}: wrong bytes");
    }
    Ok(format!("sent={}", n - 1))
}

fn main() {
    let sc = Scenario::<Midtransfer>::from_args();
    let u = setup("init", pertinax::init());
    let w = u.world();
    let rest = sc.args();
    // The tests kill a rank from outside some time after this file appears.
    setup(
        "ready file",
        std::fs::write(format!("ready.{}", w.rank().index()), "ready\n"),
    );
    let r = match sc.scenario() {
        Midtransfer::P2p => p2p(&w, rest),
        Midtransfer::Bcast => bcast(&w, rest),
        Midtransfer::Bsend => bsend(&w, rest),
    };
    report(sc.name(), w.rank().index(), r).or_exit();
    drop(u);
}
