//! The ends of a job that the ranks do not choose: timeouts, signals to the
//! launcher, the launcher's own death, and what ranks leave behind.

use std::time::Duration;

use pertinax_harness::{alive, sh, wait_for, Sandbox};

const BOUND: Duration = Duration::from_secs(20);

/// Pids written by the ranks to `pid.R` files, once all `n` are there.
fn rank_pids(sb: &Sandbox, n: usize) -> Vec<u32> {
    (0..n)
        .map(|r| {
            let text = sb.read_when_ready(&format!("pid.{r}"), Duration::from_secs(10));
            text.trim().parse().expect("a pid")
        })
        .collect()
}

#[test]
fn timeout_terminates_the_job_with_124() {
    let sb = Sandbox::new();
    let o = sb.run(
        &["run", "-n", "3", "--timeout", "1", "--", "sleep", "100"],
        BOUND,
    );
    assert_eq!(o.code, Some(124), "{o:?}");
    assert!(o.elapsed >= Duration::from_millis(950), "{:?}", o.elapsed);
    assert!(o.elapsed < Duration::from_secs(4), "{:?}", o.elapsed);
    assert_eq!(
        o.stderr.trim(),
        "pertinax: job timed out after 1 s; ranks still running were terminated"
    );
}

#[test]
fn timeout_kills_ranks_that_ignore_sigterm() {
    let sb = Sandbox::new();
    let script = "trap '' TERM; echo $$ > pid.$PERTINAX_RANK; while :; do sleep 0.05; done";
    let mut args = vec!["run", "-n", "2", "--timeout", "0.5", "--"];
    args.extend(sh(script));
    let o = sb.run(&args, BOUND);
    assert_eq!(o.code, Some(124), "{o:?}");
    // 0.5 s, then 1 s of grace before SIGKILL.
    assert!(o.elapsed >= Duration::from_millis(1400), "{:?}", o.elapsed);
    assert!(o.elapsed < Duration::from_secs(5), "{:?}", o.elapsed);
}

#[test]
fn sigterm_to_the_launcher_is_forwarded_to_the_ranks() {
    let sb = Sandbox::new();
    let script = "trap 'echo rank $PERTINAX_RANK got TERM; exit 0' TERM; \
                  echo $$ > pid.$PERTINAX_RANK; while :; do sleep 0.05; done";
    let mut args = vec!["run", "-n", "3", "--"];
    args.extend(sh(script));
    let job = sb.spawn(&args);
    rank_pids(&sb, 3);
    job.signal(libc::SIGTERM);
    let o = job.wait(BOUND);
    sb.assert_no_leftovers();
    assert_eq!(o.code, Some(128 + libc::SIGTERM), "{o:?}");
    let mut lines = o.lines();
    lines.sort();
    assert_eq!(
        lines,
        ["rank 0 got TERM", "rank 1 got TERM", "rank 2 got TERM"]
    );
    assert!(
        o.stderr.contains("pertinax: interrupted by SIGTERM"),
        "{}",
        o.stderr
    );
}

#[test]
fn second_sigint_kills_ranks_that_ignore_the_first() {
    let sb = Sandbox::new();
    let script = "trap '' INT; echo $$ > pid.$PERTINAX_RANK; while :; do sleep 0.05; done";
    let mut args = vec!["run", "-n", "2", "--"];
    args.extend(sh(script));
    let job = sb.spawn(&args);
    let pids = rank_pids(&sb, 2);
    job.signal(libc::SIGINT);
    std::thread::sleep(Duration::from_millis(200));
    assert!(pids.iter().all(|&p| alive(p)), "the ranks ignore SIGINT");
    job.signal(libc::SIGINT);
    let o = job.wait(BOUND);
    sb.assert_no_leftovers();
    assert_eq!(o.code, Some(128 + libc::SIGINT), "{o:?}");
    assert!(
        o.elapsed < Duration::from_millis(1900),
        "no 2 s grace: {:?}",
        o.elapsed
    );
}

#[test]
fn killing_the_launcher_takes_every_rank_with_it() {
    let sb = Sandbox::new();
    let script = "echo $$ > pid.$PERTINAX_RANK; exec sleep 100";
    let mut args = vec!["run", "-n", "4", "--"];
    args.extend(sh(script));
    let job = sb.spawn(&args);
    let pids = rank_pids(&sb, 4);
    assert!(pids.iter().all(|&p| alive(p)));
    let mut expected = pids.clone();
    expected.push(job.pid());
    expected.sort();
    // A rank between its `echo` and its `exec` can briefly hide its
    // environment from /proc: look again for a moment.
    let mut seen = Vec::new();
    let visible = wait_for(Duration::from_secs(1), || {
        seen = sb.live_processes();
        seen.sort();
        seen == expected
    });
    assert!(
        visible,
        "the helper sees the launcher and its ranks: {seen:?} vs {expected:?}"
    );
    job.signal(libc::SIGKILL);
    let o = job.wait(BOUND);
    assert_eq!(o.code, None, "killed by a signal");
    let gone = wait_for(Duration::from_secs(1), || pids.iter().all(|&p| !alive(p)));
    assert!(
        gone,
        "ranks still alive 1 s after the launcher died: {pids:?}"
    );
    sb.assert_no_leftovers();
}

#[test]
fn what_a_rank_leaves_behind_is_killed() {
    let sb = Sandbox::new();
    // The rank exits at once, leaving a background process that holds its
    // output and control socket.
    let script = "sleep 100 & echo $! > pid.$PERTINAX_RANK; exit 0";
    let mut args = vec!["run", "-n", "2", "--"];
    args.extend(sh(script));
    let o = sb.run(&args, BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert!(o.elapsed < Duration::from_secs(3), "{:?}", o.elapsed);
    for pid in rank_pids(&sb, 2) {
        assert!(!alive(pid), "background process {pid} survived");
    }
}
