//! Time-driven duties: heartbeats (a silent process is killed, a finalized
//! one no longer judged) and time-based kills after the fence.

use super::*;

#[test]
fn a_silent_heartbeat_is_killed_and_a_beating_one_is_not() {
    let mut f = fixture(2);
    let ms = Duration::from_millis;
    f.cfg.heartbeat = Some(Heartbeat {
        period: ms(10),
        timeout: ms(80),
        mode: HeartbeatMode::Thread,
    });
    let seg = f.seg.clone();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Joined(stray_socket()))).unwrap();
        for _ in 0..30 {
            seg.proc_block(1).beat.fetch_add(1, SeqCst);
            std::thread::sleep(ms(10));
        }
        // Rank 0 was killed by now: here is its death.
        tx.send(ctrl(0, CtrlEvent::Closed)).unwrap();
        tx.send(exited(0, ExitKind::Signal(libc::SIGKILL))).unwrap();
        finish_cleanly(tx, 1);
    });
    assert_eq!(
        report.ranks[0].cause,
        Some(Cause::Heartbeat { injected: false })
    );
    assert_eq!(report.ranks[1].cause, None);
    assert_eq!(report.exit_code(), 137);
}

#[test]
fn a_timed_kill_strikes_after_the_fence_and_is_injected() {
    let mut f = fixture(2);
    f.cfg.timed = vec!["1@60ms".parse().unwrap()];
    let writers = [f.writer(0), f.writer(1)];
    let t = Instant::now();
    let report = supervise(&mut f, |tx| {
        let [w0, w1] = writers;
        tx.send(ctrl(0, CtrlEvent::Joined(w0))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Joined(w1))).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // Nothing fired before the fence.
        tx.send(msg(0, ToLauncher::Fence)).unwrap();
        tx.send(msg(1, ToLauncher::Fence)).unwrap();
        std::thread::sleep(Duration::from_millis(120));
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
        finish_cleanly(tx, 0);
    });
    assert!(t.elapsed() >= Duration::from_millis(220));
    assert_eq!(
        report.ranks[1].cause,
        Some(Cause::Launcher {
            signal: libc::SIGKILL
        })
    );
    assert_eq!(report.exit_code(), 0, "an injected death");
    assert!(report
        .summary()
        .unwrap()
        .contains("(injected: SIGKILL from the launcher)"));
}

#[test]
fn a_finalized_process_is_no_longer_judged_by_its_heartbeat() {
    let mut f = fixture(1);
    let ms = Duration::from_millis;
    f.cfg.heartbeat = Some(Heartbeat {
        period: ms(10),
        timeout: ms(50),
        mode: HeartbeatMode::Progress,
    });
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
        tx.send(msg(0, ToLauncher::Finalize)).unwrap();
        // Writes its results, outside the library, for a while.
        std::thread::sleep(ms(200));
        tx.send(ctrl(0, CtrlEvent::Closed)).unwrap();
        tx.send(exited(0, ExitKind::Code(0))).unwrap();
    });
    assert_eq!(report.ranks[0].cause, None);
    assert_eq!(report.summary(), None);
}
