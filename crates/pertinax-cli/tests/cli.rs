//! `pertinax run` from the outside: exit statuses, summaries, output
//! forwarding, bad command lines.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use pertinax_harness::{sh, Outcome, Sandbox};

const BOUND: Duration = Duration::from_secs(20);

/// Runs `pertinax run -n N [opts] -- sh -c SCRIPT` in a fresh sandbox.
fn run_sh(n: usize, opts: &[&str], script: &str) -> Outcome {
    let sb = Sandbox::new();
    let n = n.to_string();
    let mut args = vec!["run", "-n", &n];
    args.extend_from_slice(opts);
    args.push("--");
    args.extend(sh(script));
    sb.run(&args, BOUND)
}

#[test]
fn all_ranks_exit_0_gives_0_and_no_summary() {
    let o = run_sh(4, &[], "echo rank $PERTINAX_RANK of $PERTINAX_SIZE");
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.stderr, "");
    let mut lines = o.lines();
    lines.sort();
    assert_eq!(
        lines,
        ["rank 0 of 4", "rank 1 of 4", "rank 2 of 4", "rank 3 of 4"]
    );
}

#[test]
fn one_rank_exiting_3_gives_3_and_is_named() {
    let script = "if [ $PERTINAX_RANK = 2 ]; then exit 3; fi; sleep 0.2";
    for keep_going in [false, true] {
        let opts: &[&str] = if keep_going { &["--keep-going"] } else { &[] };
        let o = run_sh(3, opts, script);
        assert_eq!(o.code, Some(3), "{o:?}");
        let lines: Vec<&str> = o.stderr.lines().collect();
        assert!(
            lines[0].starts_with("pertinax: rank 2 (pid "),
            "{}",
            o.stderr
        );
        assert!(
            lines[0].contains(") exited with code 3 at "),
            "{}",
            o.stderr
        );
        // Failing fast, the others' SIGTERM is the launcher's doing: only
        // the failed rank is listed, then the stop.
        let stop = "which ends the job (--keep-going lets the others run); \
                    ranks still running were terminated";
        match keep_going {
            true => assert_eq!(lines.len(), 1, "only the failed rank: {}", o.stderr),
            false => {
                assert_eq!(lines.len(), 2, "{}", o.stderr);
                assert!(lines[1].ends_with(stop), "{}", o.stderr);
            }
        }
    }
}

#[test]
fn rank_killed_by_sigkill_gives_137() {
    let o = run_sh(
        2,
        &[],
        "if [ $PERTINAX_RANK = 1 ]; then kill -9 $$; fi; sleep 0.2",
    );
    assert_eq!(o.code, Some(137), "{o:?}");
    assert!(o.stderr.contains("rank 1 (pid "), "{}", o.stderr);
    assert!(o.stderr.contains("killed by SIGKILL"), "{}", o.stderr);
}

#[test]
fn first_failure_in_time_gives_the_status() {
    // Both failures are told when the others keep going.
    let o = run_sh(
        2,
        &["--keep-going"],
        "if [ $PERTINAX_RANK = 0 ]; then sleep 0.3; exit 5; else exit 7; fi",
    );
    assert_eq!(o.code, Some(7), "{o:?}");
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", o.stderr);
    assert!(
        lines[0].contains("rank 1") && lines[0].contains("code 7"),
        "{}",
        o.stderr
    );
    assert!(
        lines[1].contains("rank 0") && lines[1].contains("code 5"),
        "{}",
        o.stderr
    );
}

#[test]
fn with_resilient_a_rank_that_dies_does_not_fail_the_job() {
    let script = "case $PERTINAX_RANK in 1) kill -9 $$;; 2) kill -SEGV $$;; esac; sleep 0.2";
    // Without --resilient the job fails with the status of the first death
    // the launcher reaps: the two deaths are simultaneous, so either.
    let o = run_sh(3, &[], script);
    assert!(matches!(o.code, Some(137 | 139)), "{o:?}");
    let o = run_sh(3, &["--resilient"], script);
    assert_eq!(o.code, Some(0), "{o:?}");
    // The deaths are still told.
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", o.stderr);
    assert!(o.stderr.contains("rank 1 (pid "), "{}", o.stderr);
    assert!(o.stderr.contains("killed by SIGKILL"), "{}", o.stderr);
    assert!(o.stderr.contains("killed by SIGSEGV"), "{}", o.stderr);
    // A survivor that fails on its own still gives the status.
    let o = run_sh(
        3,
        &["--resilient=hier"],
        "case $PERTINAX_RANK in 1) kill -9 $$;; 2) sleep 0.2; exit 3;; esac",
    );
    assert_eq!(o.code, Some(3), "{o:?}");
    // And when every rank died, nobody continued: the job failed.
    let o = run_sh(2, &["--resilient"], "kill -SEGV $$");
    assert_eq!(o.code, Some(139), "{o:?}");
}

#[test]
fn programs_that_do_not_speak_the_protocol_succeed() {
    let sb = Sandbox::new();
    let o = sb.run(&["run", "-n", "3", "--", "true"], BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.stderr, "");
}

#[test]
fn environment_options_reach_the_ranks() {
    let o = run_sh(
        2,
        &["-x", "GREETING=hi there", "--env", "N=1"],
        "echo \"$GREETING/$N\"",
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.lines(), ["hi there/1", "hi there/1"]);
}

#[test]
fn resilient_options_reach_every_process() {
    let show = "echo ${PERTINAX_RESILIENT-unset} ${PERTINAX_RESILIENT_K-unset} \
                ${PERTINAX_RESILIENT_THRESHOLD-unset} ${PERTINAX_RESILIENT_POLICY-unset} \
                ${PERTINAX_RESILIENT_CHECK-unset}";
    let o = run_sh(2, &[], show);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.lines(), ["unset unset unset unset unset"; 2]);
    let o = run_sh(2, &["--resilient"], show);
    assert_eq!(o.lines(), ["flat unset unset unset unset"; 2], "{o:?}");
    let o = run_sh(
        2,
        &[
            "--resilient=hier",
            "--resilient-k",
            "4",
            "--resilient-threshold",
            "16",
            "--resilient-policy",
            "bcast=ignore, recv=stop",
            "--resilient-check",
            "agree",
            "--spares",
            "1",
        ],
        show,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    // Two ranks and the spare.
    assert_eq!(
        o.lines(),
        ["hier 4 16 bcast=ignore,recv=stop agree"; 3],
        "{o:?}"
    );
}

#[test]
fn without_resilient_the_variables_are_not_inherited_from_the_launcher() {
    // The outer job's rank is a launcher that inherits PERTINAX_RESILIENT*;
    // its own rank must not see them.
    let inner = format!(
        "{} run -n 1 -- sh -c 'echo \"${{PERTINAX_RESILIENT-unset}} ${{PERTINAX_RESILIENT_K-unset}}\"'",
        env!("CARGO_BIN_EXE_pertinax")
    );
    let o = run_sh(1, &["--resilient=hier", "--resilient-k", "3"], &inner);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.lines(), ["unset unset"], "{o:?}");
}

#[test]
fn tag_output_prefixes_every_line_of_both_streams() {
    let o = run_sh(
        3,
        &["--tag-output"],
        "echo one; echo two; echo oops >&2; printf 'no newline'",
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    for r in 0..3 {
        let mine: Vec<&str> = o
            .stdout
            .lines()
            .filter(|l| l.starts_with(&format!("[{r}] ")))
            .collect();
        assert_eq!(
            mine,
            [
                format!("[{r}] one"),
                format!("[{r}] two"),
                format!("[{r}] no newline")
            ]
        );
        assert!(o.stderr.contains(&format!("[{r}] oops\n")), "{}", o.stderr);
    }
    assert_eq!(o.stdout.lines().count(), 9, "{}", o.stdout);
}

#[test]
fn partial_lines_wait_for_their_end() {
    // Rank 0 writes half a line, rank 1 a whole line in the middle of it.
    let o = run_sh(
        2,
        &[],
        "if [ $PERTINAX_RANK = 0 ]; then printf 'begin-'; sleep 0.4; echo end; \
         else sleep 0.1; echo 'whole line'; fi",
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(o.lines(), ["whole line", "begin-end"]);
}

#[test]
fn many_lines_from_many_ranks_stay_whole() {
    let lines = 500;
    let script = format!(
        "i=0; while [ $i -lt {lines} ]; do \
         echo \"rank=$PERTINAX_RANK line=$i ................................................................\"; \
         i=$((i+1)); done"
    );
    let o = run_sh(4, &[], &script);
    assert_eq!(o.code, Some(0), "{:?}", o.stderr);
    let mut next = [0usize; 4];
    for line in o.lines() {
        let rest = line
            .strip_prefix("rank=")
            .unwrap_or_else(|| panic!("mangled line {line:?}"));
        let (r, rest) = rest
            .split_once(" line=")
            .unwrap_or_else(|| panic!("mangled line {line:?}"));
        let (i, dots) = rest
            .split_once(' ')
            .unwrap_or_else(|| panic!("mangled line {line:?}"));
        let r: usize = r.parse().unwrap();
        assert_eq!(i.parse::<usize>().unwrap(), next[r], "order of rank {r}");
        assert_eq!(dots.len(), 64, "mangled line {line:?}");
        next[r] += 1;
    }
    assert_eq!(next, [lines; 4]);
}

/// Checks that `pertinax ARGS` is refused with status 2 and a one-line
/// message containing `message`.
fn check_usage_error(args: &[&str], message: &str) {
    let sb = Sandbox::new();
    let o = sb.run(args, BOUND);
    assert_eq!(o.code, Some(2), "{args:?}: {o:?}");
    assert_eq!(o.stdout, "");
    assert_eq!(o.stderr.lines().count(), 1, "{args:?}: {}", o.stderr);
    assert!(o.stderr.starts_with("pertinax: "), "{args:?}: {}", o.stderr);
    assert!(o.stderr.contains(message), "{args:?}: {}", o.stderr);
}

#[test]
fn bad_invocations_exit_2_with_one_clear_line() {
    check_usage_error(&["run", "-n", "2"], "<PROGRAM>");
    check_usage_error(&["run", "-n", "2", "--"], "<PROGRAM>");
    check_usage_error(
        &["run", "-n", "0", "--", "true"],
        "the number of ranks must be at least 1",
    );
    check_usage_error(
        &["run", "-n", "-2", "--", "true"],
        "the number of ranks must be at least 1",
    );
    check_usage_error(
        &["run", "--bogus", "-n", "2", "--", "true"],
        "unexpected argument '--bogus'",
    );
    check_usage_error(&["run", "--", "true"], "--np <N>");
    check_usage_error(
        &["run", "-n", "2", "--", "no-such-program-pertinax"],
        "cannot execute 'no-such-program-pertinax': no such file in PATH",
    );
    check_usage_error(
        &["run", "-n", "2", "--", "./missing"],
        "cannot execute './missing': no such file",
    );
    check_usage_error(
        &["run", "-n", "2", "--", "/"],
        "cannot execute '/': is a directory",
    );
}

#[test]
fn bad_fault_tolerance_options_exit_2_with_one_clear_line() {
    let run = |opts: &[&str], message: &str| {
        let mut args = vec!["run", "-n", "2"];
        args.extend_from_slice(opts);
        args.extend(["--", "true"]);
        check_usage_error(&args, message);
    };
    run(
        &["--kill", "2@1s"],
        "--kill names rank 2, but the job's ranks are 0..2",
    );
    run(
        &["--kill", "1@soon"],
        "bad time 'soon' (expected e.g. 250ms or 1.5s)",
    );
    run(&["--kill", "1@1s:term"], "unknown signal 'term'");
    run(&["--kill", "1@1s:panic"], "a time-based kill cannot panic");
    run(&["--kill", "one@1s"], "bad rank 'one'");
    run(&["--kill", "1@send#0"], "bad hit number '0'");
    // A stopped process is only ever noticed by its silent heartbeat:
    // without heartbeats the job would hang until its timeout.
    for (kill, said) in [
        ("1@200ms:stop", "rank 1 at 0.2 s (stop)"),
        ("1@step#3:stop", "rank 1 at hit 3 of point step (stop)"),
    ] {
        run(
            &["--timeout", "20", "--kill", kill],
            &format!(
                "--kill for {said}: a stopped process is only detected by heartbeats, \
                 so the job would hang until its timeout; add --heartbeat MS"
            ),
        );
    }
    run(
        &["--fault-seed", "3", "--fault-count", "2"],
        "cannot draw 2 distinct fault victims among the 1 ranks 1..N-1",
    );
    run(&["--fault-count", "2"], "--fault-seed <SEED>");
    run(
        &["--heartbeat", "100", "--heartbeat-timeout", "100"],
        "the heartbeat timeout (100 ms) must be longer than its period (100 ms)",
    );
    run(&["--heartbeat-timeout", "100"], "--heartbeat <MS>");
    run(&["--heartbeat", "0"], "must be at least 1 millisecond");
    run(
        &["--spares", "-1"],
        "invalid value '-1' for '--spares <K>': must be a whole number of processes, 0 or more",
    );
    run(&["--max-spawn", "x"], "must be a whole number of processes");
    run(
        &["--on-parent-failure", "later"],
        "--on-parent-failure <WHAT>",
    );
    run(
        &["--max-spawn", "5000"],
        "2 ranks + 0 spares + 5000 slots for spawned processes exceed the limit of 4096 process slots",
    );
}

#[test]
fn bad_resilient_options_exit_2_with_one_clear_line() {
    let run = |opts: &[&str], message: &str| {
        let mut args = vec!["run", "-n", "2"];
        args.extend_from_slice(opts);
        args.extend(["--", "true"]);
        check_usage_error(&args, message);
    };
    run(&["--resilient-k", "4"], "--resilient[=<MODE>]");
    run(&["--resilient-check", "agree"], "--resilient[=<MODE>]");
    run(
        &["--resilient=tree"],
        "invalid value 'tree' for '--resilient[=<MODE>]'",
    );
    run(
        &["--resilient=hier", "--resilient-k", "1"],
        "invalid value '1' for '--resilient-k <K>': a local group needs at least 2 ranks",
    );
    run(
        &["--resilient=hier", "--resilient-threshold", "0"],
        "invalid value '0' for '--resilient-threshold <S>': must be at least 1",
    );
    run(
        &["--resilient", "--resilient-policy", "bcast=ignore,allreduce=stop"],
        "unknown operation kind 'allreduce' (expected bcast, reduce, gather, scatter, send or recv)",
    );
    run(
        &["--resilient", "--resilient-policy", "send=drop"],
        "unknown action 'drop' for send (expected ignore or stop)",
    );
    run(
        &["--resilient", "--resilient-k", "4"],
        "--resilient-k applies to the hierarchical mode only: use --resilient=hier",
    );
}

#[test]
fn non_executable_file_is_refused() {
    let sb = Sandbox::new();
    let script = sb.file("script.sh");
    std::fs::write(&script, "#!/bin/sh\necho should not run\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let path = script.to_str().unwrap();
    check_usage_error(
        &["run", "-n", "2", "--", path],
        &format!("cannot execute '{path}': permission denied"),
    );
}

#[test]
fn version_and_help() {
    let sb = Sandbox::new();
    let o = sb.run(&["--version"], BOUND);
    assert_eq!(o.code, Some(0));
    assert_eq!(
        o.stdout.trim(),
        format!("pertinax {}", env!("CARGO_PKG_VERSION"))
    );
    let o = sb.run(&["run", "--help"], BOUND);
    assert_eq!(o.code, Some(0));
    assert!(
        o.stdout
            .contains("pertinax run [OPTIONS] -n <N> [--] <PROGRAM> [ARGS]..."),
        "{}",
        o.stdout
    );
}
