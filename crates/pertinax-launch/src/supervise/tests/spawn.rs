//! Spawn requests and spares: slots, publications before anything starts,
//! refused requests, spares assigned and shut down, the parent's failure,
//! replacements named by the rank they take over.

use super::*;

#[test]
fn slots_go_to_idle_spares_first_then_fresh_slots_in_order() {
    assert_eq!(choose_slots(3, &[2, 3], 5, 8), Ok(vec![2, 3, 5]));
    assert_eq!(choose_slots(1, &[2, 3], 5, 8), Ok(vec![2]));
    assert_eq!(choose_slots(3, &[], 5, 8), Ok(vec![5, 6, 7]));
    assert_eq!(choose_slots(4, &[], 5, 8), Err(SPAWN_NO_ROOM));
    assert_eq!(choose_slots(4, &[2], 5, 8), Ok(vec![2, 5, 6, 7]));
    assert_eq!(choose_slots(0, &[2], 5, 8), Err(SPAWN_REFUSED));
    let max = pertinax_os::segment::PUBLISH_MAX as u32;
    assert_eq!(choose_slots(max + 1, &[], 0, 4096), Err(SPAWN_REFUSED));
    assert_eq!(
        choose_slots(max, &[], 0, 4096).map(|v| v.len()),
        Ok(max as usize)
    );
}

#[test]
fn a_spawn_is_published_before_anything_starts_and_assigned_after_the_welcome() {
    // Two ranks, room for two spawned processes.
    let mut f = fixture_with(2, 0, 4);
    let writer = f.writer(0);
    let (report, seen) = supervise_spawning(&mut f, 0, |tx, procs| {
        tx.send(ctrl(0, CtrlEvent::Joined(writer))).unwrap();
        tx.send(msg(0, spawn(7, 2, false))).unwrap();
        for index in 0..2u32 {
            let mut p = procs.recv_timeout(Duration::from_secs(5)).unwrap();
            assert_eq!(p.slot, 2 + index);
            tx.send(ctrl(p.slot, CtrlEvent::Joined(p.writer))).unwrap();
            assert_eq!(
                read_frame::<_, ToRank>(&mut p.theirs).unwrap(),
                Some(ToRank::Assign {
                    slots: vec![2, 3],
                    index,
                    payload: b"job".to_vec()
                })
            );
            finish_cleanly(tx, p.slot);
        }
        finish_cleanly(tx, 0);
        finish_cleanly(tx, 1);
    });
    let published = (7, 2, SPAWN_OK);
    assert_eq!(
        seen,
        [
            Seen {
                slot: 2,
                index: 0,
                count: 2,
                publication: published
            },
            Seen {
                slot: 3,
                index: 1,
                count: 2,
                publication: published
            },
        ],
        "the answer was published before the first start"
    );
    assert_eq!(f.publication(0), (7, 2, SPAWN_OK, vec![2, 3]));
    assert_eq!(report.exit_code(), 0, "{:?}", report.summary());
    assert_eq!(report.others.len(), 2);
    assert_eq!(
        report.others[1].role,
        Role::Spawned {
            parent: 0,
            index: 1
        }
    );
    assert_eq!(
        (state(&f, 2), state(&f, 3)),
        (slot::FINALIZED, slot::FINALIZED)
    );
}

#[test]
fn a_request_from_a_slot_published_failed_is_ignored() {
    let mut f = fixture_with(2, 0, 4);
    let (report, seen) = supervise_spawning(&mut f, 1, |tx, _| {
        // The reaper saw the death before the reader delivered the request.
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
        tx.send(msg(1, spawn(3, 1, false))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        finish_cleanly(tx, 0);
    });
    assert!(seen.is_empty());
    assert_eq!(f.publication(1), (0, 0, 0, vec![]), "never answered");
    assert!(report.others.is_empty());
}

#[test]
fn impossible_requests_publish_an_error_and_start_nothing() {
    // One slot left for spawned processes.
    let mut f = fixture_with(2, 0, 3);
    let (report, seen) = supervise_spawning(&mut f, 0, |tx, _| {
        tx.send(msg(0, spawn(1, 2, true))).unwrap();
        let bad_program = ToLauncher::Spawn {
            stamp: 2,
            program: Some("/nonexistent/pertinax-program".into()),
            args: Vec::new(),
            count: 1,
            use_spares: false,
            payload: Vec::new(),
            replaces: Vec::new(),
        };
        tx.send(msg(1, bad_program)).unwrap();
        finish_cleanly(tx, 0);
        finish_cleanly(tx, 1);
    });
    assert!(seen.is_empty());
    assert_eq!(f.publication(0), (1, 0, SPAWN_NO_ROOM, vec![]));
    assert_eq!(f.publication(1), (2, 0, SPAWN_REFUSED, vec![]));
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn spares_are_assigned_at_once_and_idle_ones_shut_down_at_the_end() {
    // One rank, two spares (slots 1 and 2), one slot to spawn into.
    let mut f = fixture_with(1, 2, 4);
    let writers: Vec<UnixStream> = (0..3).map(|s| f.writer(s)).collect();
    let mut spare1 = f.ends[1].try_clone().unwrap();
    let mut spare2 = f.ends[2].try_clone().unwrap();
    let (report, seen) = supervise_spawning(&mut f, 0, |tx, _| {
        for (s, w) in writers.into_iter().enumerate() {
            tx.send(ctrl(s as u32, CtrlEvent::Joined(w))).unwrap();
        }
        tx.send(msg(0, spawn(5, 1, true))).unwrap();
        assert_eq!(
            read_frame::<_, ToRank>(&mut spare1).unwrap(),
            Some(ToRank::Assign {
                slots: vec![1],
                index: 0,
                payload: b"job".to_vec()
            })
        );
        finish_cleanly(tx, 1);
        finish_cleanly(tx, 0);
        // Every member ended: the idle spare is told to go.
        assert_eq!(
            read_frame::<_, ToRank>(&mut spare2).unwrap(),
            Some(ToRank::Shutdown)
        );
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Code(0))).unwrap();
    });
    assert!(seen.is_empty(), "no fresh process");
    assert_eq!(f.publication(0), (5, 1, SPAWN_OK, vec![1]));
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.summary(), None, "an idle spare is never a failure");
    assert_eq!(
        report.others[0].role,
        Role::Spare {
            parent: 0,
            index: 0
        }
    );
    assert_eq!(report.others[1].role, Role::IdleSpare);
}

#[test]
fn an_idle_spare_that_ignores_shutdown_is_killed_and_not_reported() {
    let mut f = fixture_with(1, 1, 2);
    let t = Instant::now();
    let report = supervise(&mut f, |tx| {
        tx.send(ctrl(0, CtrlEvent::Joined(stray_socket()))).unwrap();
        finish_cleanly(tx, 0);
        // The loop kills it after the grace period; here is its death.
        std::thread::sleep(SPARE_GRACE + Duration::from_millis(100));
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Signal(libc::SIGKILL))).unwrap();
    });
    assert!(t.elapsed() >= SPARE_GRACE);
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.summary(), None);
}

#[test]
fn on_parent_failure_end_kills_what_the_parent_spawned() {
    let mut f = fixture_with(2, 0, 4);
    f.cfg.on_parent_failure = ParentFailure::End;
    let (report, _) = supervise_spawning(&mut f, 1, |tx, procs| {
        tx.send(msg(1, spawn(1, 1, false))).unwrap();
        let p = procs.recv_timeout(Duration::from_secs(5)).unwrap();
        tx.send(ctrl(p.slot, CtrlEvent::Joined(p.writer))).unwrap();
        tx.send(exited(1, ExitKind::Code(3))).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        // The launcher's SIGKILL, as the child's end.
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Signal(libc::SIGKILL))).unwrap();
        finish_cleanly(tx, 0);
    });
    assert_eq!(
        report.others[0].cause,
        Some(Cause::ParentFailed { parent: 1 })
    );
    assert_eq!(
        report.exit_code(),
        3,
        "the parent's failure gives the status"
    );
}

#[test]
fn a_spawned_process_failure_is_only_published() {
    let mut f = fixture_with(1, 0, 2);
    let seg = f.seg.clone();
    let (report, _) = supervise_spawning(&mut f, 0, |tx, procs| {
        tx.send(msg(0, spawn(1, 1, false))).unwrap();
        let p = procs.recv_timeout(Duration::from_secs(5)).unwrap();
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(p.slot, ExitKind::Code(4))).unwrap();
        wait_until(|| seg.proc_block(1).state.load(SeqCst) == slot::FAILED);
        finish_cleanly(tx, 0);
    });
    assert_eq!(report.ranks[0].end, ExitKind::Code(0));
    assert_eq!(report.exit_code(), 4);
    assert!(report
        .summary()
        .unwrap()
        .starts_with("pertinax: slot 1 (spawned by rank 0) (pid "));
}

#[test]
fn a_spare_welcomed_after_the_end_is_told_to_shut_down_at_once() {
    let mut f = fixture_with(1, 1, 2);
    let writer = f.writer(1);
    let mut spare = f.ends[1].try_clone().unwrap();
    let t = Instant::now();
    let report = supervise(&mut f, |tx| {
        finish_cleanly(tx, 0);
        std::thread::sleep(Duration::from_millis(50));
        tx.send(ctrl(1, CtrlEvent::Joined(writer))).unwrap();
        assert_eq!(
            read_frame::<_, ToRank>(&mut spare).unwrap(),
            Some(ToRank::Shutdown)
        );
        tx.send(ctrl(1, CtrlEvent::Closed)).unwrap();
        tx.send(exited(1, ExitKind::Code(0))).unwrap();
    });
    assert!(t.elapsed() < SPARE_GRACE, "{:?}", t.elapsed());
    assert_eq!(report.summary(), None);
}

/// A request of `replace_failed` names the ranks its processes take over:
/// a spare is renamed (report and output tag) before it gets its
/// assignment, a fresh process from its start, and the summary names each
/// by the rank it calls itself and its slot.
#[test]
fn replacements_are_named_by_the_rank_they_take_over() {
    let mut f = fixture_with(2, 1, 4);
    let tag = Tag::new(2, 2);
    f.started[2].tag = Some(tag.clone());
    let writers: Vec<UnixStream> = (0..3).map(|s| f.writer(s)).collect();
    let mut spare = f.ends[2].try_clone().unwrap();
    let seen_tag = tag.clone();
    let (report, _) = supervise_spawning(&mut f, 0, |tx, procs| {
        for (s, w) in writers.into_iter().enumerate() {
            tx.send(ctrl(s as u32, CtrlEvent::Joined(w))).unwrap();
        }
        let mut req = spawn(9, 2, true);
        if let ToLauncher::Spawn { replaces, .. } = &mut req {
            *replaces = vec![1, 0];
        }
        tx.send(msg(0, req)).unwrap();
        assert!(matches!(
            read_frame::<_, ToRank>(&mut spare).unwrap(),
            Some(ToRank::Assign { index: 0, .. })
        ));
        // Renamed before the assignment was sent.
        assert_eq!(seen_tag.get().as_str(), "[1 (replacement, slot 2)] ");
        let p = procs.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(p.slot, 3);
        tx.send(ctrl(3, CtrlEvent::Joined(p.writer))).unwrap();
        tx.send(ctrl(2, CtrlEvent::Closed)).unwrap();
        tx.send(exited(2, ExitKind::Code(3))).unwrap();
        let abort = ToLauncher::Abort {
            code: 4,
            message: "replacement gives up".into(),
        };
        tx.send(msg(3, abort)).unwrap();
        tx.send(ctrl(3, CtrlEvent::Closed)).unwrap();
        tx.send(exited(3, ExitKind::Code(4))).unwrap();
        finish_cleanly(tx, 0);
        finish_cleanly(tx, 1);
    });
    assert_eq!(
        report.others.iter().map(|p| p.replaces).collect::<Vec<_>>(),
        [Some(1), Some(0)]
    );
    let summary = report.summary().unwrap();
    assert!(
        summary.contains("pertinax: rank 1 (replacement, slot 2) (pid ")
            && summary.contains(") exited with code 3 at ")
            && summary
                .contains("pertinax: rank 0 (replacement, slot 3) aborted the job (code 4) at "),
        "{summary}"
    );
}
