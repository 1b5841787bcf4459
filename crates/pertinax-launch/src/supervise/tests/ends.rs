//! How processes end and how the job ends: finalize, exits, crashes and
//! their publication, the time limit, aborts, injected deaths, panics,
//! failing fast; the name table's answers.

use super::*;
use pertinax_wire::ctrl::NameAnswer;

#[test]
fn a_finalized_rank_is_published_finalized_and_everyone_is_woken() {
    let mut f = fixture(1);
    let writer = f.writer(0);
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
        finish_cleanly(tx, 0);
    });
    assert_eq!(report.exit_code(), 0);
    assert!(report.ranks[0].finalized && report.ranks[0].joined);
    assert_eq!(state(&f, 0), slot::FINALIZED);
    // An operation still waiting for it must end.
    assert_eq!(f.seg.header().event_epoch.load(SeqCst), 1);
}

#[test]
fn a_finalize_just_before_the_exit_is_not_missed() {
    let mut f = fixture(1);
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
        // The reaper is faster than the control reader.
        tx.send(exited(0, ExitKind::Code(0))).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        tx.send(msg(0, ToLauncher::Finalize)).unwrap();
        tx.send(ctrl(0, CtrlEvent::Closed)).unwrap();
    });
    assert!(report.ranks[0].finalized);
    assert_eq!(report.summary(), None);
    assert_eq!(state(&f, 0), slot::FINALIZED);
}

#[test]
fn exit_0_without_finalize_is_published_after_the_settle_time() {
    let mut f = fixture(2);
    let t = Instant::now();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
        // The control socket never closes (something inherited it).
        tx.send(exited(0, ExitKind::Code(0))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Code(0))).unwrap();
    });
    assert!(t.elapsed() >= SETTLE);
    assert_eq!(state(&f, 0), slot::FAILED);
    assert_eq!(
        state(&f, 1),
        slot::FAILED,
        "never joined: nobody can talk to it"
    );
    assert_eq!(f.seg.header().event_epoch.load(SeqCst), 2);
    assert_eq!(report.exit_code(), 0);
    let summary = report.summary().unwrap();
    assert!(
        summary.contains("rank 0") && summary.contains("without finalizing"),
        "{summary}"
    );
    assert!(!summary.contains("rank 1"), "{summary}");
}

#[test]
fn a_crash_is_published_at_once_and_completes_the_fence() {
    let mut f = fixture(2);
    let writer = f.writer(0);
    let mut rank0 = f.ends[0].try_clone().unwrap();
    let seg = f.seg.clone();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
        let put = ToLauncher::Put {
            key: "k0".into(),
            value: b"v".to_vec(),
        };
        tx.send(msg(0, put)).unwrap();
        tx.send(msg(0, ToLauncher::Fence)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
        // Rank 0 is answered without rank 1.
        let done = read_frame::<_, ToRank>(&mut rank0).unwrap();
        assert_eq!(
            done,
            Some(ToRank::FenceDone {
                entries: vec![("k0".into(), b"v".to_vec())]
            })
        );
        // Published before the control socket closed.
        assert_eq!(seg.proc_block(1).state.load(SeqCst), slot::FAILED);
        finish_cleanly(tx, 0);
    });
    assert_eq!(state(&f, 1), slot::FAILED);
    assert_eq!(state(&f, 0), slot::FINALIZED);
    assert_eq!(report.exit_code(), 128 + libc::SIGKILL);
}

#[test]
fn timeout_stops_the_job_and_tells_the_processes() {
    let mut f = fixture(1);
    let writer = f.writer(0);
    let mut rank0 = f.ends[0].try_clone().unwrap();
    f.cfg.timeout = Some(Duration::from_millis(50));
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
        assert_eq!(
            read_frame::<_, ToRank>(&mut rank0).unwrap(),
            Some(ToRank::Shutdown)
        );
        tx.send(exited(0, ExitKind::Signal(libc::SIGTERM))).unwrap();
    });
    assert!(report.timed_out());
    assert_eq!(report.exit_code(), 124);
    assert_eq!(
        f.seg.header().event_epoch.load(SeqCst),
        2,
        "shutdown, then the failure"
    );
}

#[test]
fn abort_after_the_exit_takes_the_exit_time() {
    let mut f = fixture(2);
    let report = supervise(&mut f, |tx| {
        tx.send(exited(1, ExitKind::Code(1))).unwrap();
        let abort = ToLauncher::Abort {
            code: 9,
            message: "test".into(),
        };
        tx.send(msg(1, abort)).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(0, ExitKind::Signal(libc::SIGTERM))).unwrap();
    });
    assert_eq!(report.exit_code(), 9);
    assert_eq!(report.stop.as_ref().map(|s| s.at), Some(report.ranks[1].at));
}

/// A death is dated by its early notice, not by the reaping, which can
/// come later: the summary's order is the order of the deaths.
#[test]
fn a_death_is_dated_by_its_early_notice() {
    let mut f = fixture(3);
    let report = supervise(&mut f, |tx| {
        tx.send(Event::Died(1)).unwrap();
        std::thread::sleep(Duration::from_millis(150));
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Code(4))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
        finish_cleanly(tx, 0);
    });
    let (one, two) = (report.ranks[1].at, report.ranks[2].at);
    assert!(one + Duration::from_millis(100) < two, "{one:?} {two:?}");
    let summary = report.summary().unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert!(
        lines.len() == 2
            && lines[0].starts_with("pertinax: rank 1 ")
            && lines[1].starts_with("pertinax: rank 2 "),
        "{summary}"
    );
}

#[test]
fn an_announced_injection_is_recorded_even_if_the_exit_comes_first() {
    let mut f = fixture(2);
    let report = supervise(&mut f, |tx| {
        tx.send(exited(1, ExitKind::Signal(libc::SIGSEGV))).unwrap();
        let injected = ToLauncher::Injected {
            point: "send".into(),
            hit: 2,
            signal: libc::SIGSEGV,
        };
        tx.send(msg(1, injected)).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        finish_cleanly(tx, 0);
    });
    assert!(report.ranks[1].is_injected());
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn a_signal_after_every_member_ended_is_no_interruption() {
    let mut f = fixture_with(1, 1, 2);
    let report = supervise(&mut f, |tx| {
        finish_cleanly(tx, 0);
        tx.send(Event::Signal(libc::SIGINT)).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
    });
    assert_eq!(report.interrupted(), None);
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn a_panic_seen_before_or_after_the_exit_reaches_the_report() {
    let mut f = fixture(3);
    f.started[2].outputs = 1;
    let panic = |place: &str| Panic {
        thread: "main".into(),
        place: place.into(),
        message: "boom".into(),
    };
    let (early, late) = (panic("a.rs:1:1"), panic("b.rs:2:2"));
    let sent = (early.clone(), late.clone());
    let report = supervise(&mut f, move |tx| {
        finish_cleanly(tx, 0);
        tx.send(Event::Panicked {
            slot: 1,
            panic: sent.0,
        })
        .unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Code(101))).unwrap();
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Code(101))).unwrap();
        // The stderr forwarder is slower than the reaper; the loop waits
        // for the stream's end.
        std::thread::sleep(Duration::from_millis(50));
        tx.send(Event::Panicked {
            slot: 2,
            panic: sent.1,
        })
        .unwrap();
        tx.send(Event::OutputClosed).unwrap();
    });
    assert_eq!(report.ranks[1].panic, Some(early));
    assert_eq!(report.ranks[2].panic, Some(late));
    let summary = report.summary().unwrap();
    assert!(
        summary.contains(&format!(
            "rank 2 (pid {}) panicked at b.rs:2:2 at ",
            PID0 + 2
        )),
        "{summary}"
    );
}

/// The fail-fast rule: a rank's non-zero exit code ends the job, the
/// others are told to shut down, and the status is that code.
#[test]
fn a_rank_that_exits_non_zero_ends_the_job_when_failing_fast() {
    let mut f = fixture(3);
    f.cfg.fail_fast = true;
    let writer = f.writer(0);
    let mut rank0 = f.ends[0].try_clone().unwrap();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Code(3))).unwrap();
        assert_eq!(
            read_frame::<_, ToRank>(&mut rank0).unwrap(),
            Some(ToRank::Shutdown)
        );
        tx.send(exited(0, ExitKind::Signal(libc::SIGTERM))).unwrap();
        tx.send(exited(2, ExitKind::Signal(libc::SIGTERM))).unwrap();
    });
    assert_eq!(report.exit_code(), 3);
    assert_eq!(
        report.stop.as_ref().map(|s| &s.cause),
        Some(&StopCause::RankExited { rank: 1, code: 3 })
    );
    let summary = report.summary().unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(lines.len(), 2, "{summary}");
    assert!(lines[0].starts_with("pertinax: rank 1 (pid "), "{summary}");
    assert!(lines[0].contains(") exited with code 3 at "), "{summary}");
    assert!(
        lines[1].starts_with("pertinax: rank 1 exited with code 3 at ")
            && lines[1].ends_with(
                "which ends the job (--keep-going lets the others run); \
                 ranks still running were terminated"
            ),
        "{summary}"
    );
}

/// Deaths by a signal, injected panics, and any exit when failing fast is
/// off leave the others running.
#[test]
fn kills_and_injected_panics_do_not_end_the_job() {
    for fail_fast in [true, false] {
        let mut f = fixture(3);
        f.cfg.fail_fast = fail_fast;
        let report = supervise(&mut f, |tx| {
            tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
            let injected = ToLauncher::Injected {
                point: "step".into(),
                hit: 2,
                signal: 0,
            };
            tx.send(msg(2, injected)).unwrap();
            tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
            tx.send(exited(2, ExitKind::Code(101))).unwrap();
            std::thread::sleep(Duration::from_millis(20));
            finish_cleanly(tx, 0);
        });
        assert_eq!(report.stop, None, "fail_fast {fail_fast}");
        assert_eq!(report.exit_code(), 128 + libc::SIGKILL);
    }
    let mut f = fixture(2);
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Code(4))).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        finish_cleanly(tx, 0);
    });
    assert_eq!((&report.stop, report.exit_code()), (&None, 4), "keep going");
}

#[test]
fn names_are_answered_to_the_asker_from_one_table() {
    let mut f = fixture(2);
    let (w0, w1) = (f.writer(0), f.writer(1));
    let mut rank0 = f.ends[0].try_clone().unwrap();
    let mut rank1 = f.ends[1].try_clone().unwrap();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(w0))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Joined(w1))).unwrap();
        let publish = |id, port: &str| ToLauncher::Publish {
            id,
            service: "svc".into(),
            port: port.into(),
        };
        let answer = |r: &mut UnixStream| read_frame::<_, ToRank>(r).unwrap();
        let name = |id, answer| Some(ToRank::Name { id, answer });
        tx.send(msg(0, publish(1, "p0"))).unwrap();
        assert_eq!(answer(&mut rank0), name(1, NameAnswer::Done));
        let lookup = ToLauncher::Lookup {
            id: 7,
            service: "svc".into(),
        };
        tx.send(msg(1, lookup.clone())).unwrap();
        assert_eq!(answer(&mut rank1), name(7, NameAnswer::Port("p0".into())));
        tx.send(msg(1, publish(8, "p1"))).unwrap();
        assert_eq!(
            answer(&mut rank1),
            name(8, NameAnswer::AlreadyPublished("p0".into()))
        );
        let unpublish = ToLauncher::Unpublish {
            id: 9,
            service: "svc".into(),
            port: "p0".into(),
        };
        tx.send(msg(1, unpublish)).unwrap();
        assert_eq!(answer(&mut rank1), name(9, NameAnswer::Done));
        tx.send(msg(0, lookup)).unwrap();
        assert_eq!(answer(&mut rank0), name(7, NameAnswer::NotFound));
        finish_cleanly(tx, 0);
        finish_cleanly(tx, 1);
    });
    assert_eq!(report.exit_code(), 0);
}
