//! `pertinax run`'s launcher conventions from the outside: mpirun's
//! spellings, standard input, the fail-fast rule, output files and
//! timestamps, the working directory, CPU binding, MIMD jobs, and the help,
//! completions and manual page generated from one definition.

use std::process::Command;
use std::time::Duration;

use pertinax_harness::{launcher, sh, Outcome, Sandbox};

const BOUND: Duration = Duration::from_secs(20);

/// Runs `pertinax run [args]` in a fresh sandbox.
fn run(args: &[&str]) -> (Sandbox, Outcome) {
    let sb = Sandbox::new();
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    let o = sb.run(&all, BOUND);
    (sb, o)
}

/// Runs `pertinax ARGS` through `sh -c` in `sb`, so that the shell can
/// redirect the launcher's standard input: `shell` is the command line,
/// with `"$0"` standing for the launcher.
fn run_shell(sb: &Sandbox, shell: &str) -> Outcome {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(shell).arg(launcher());
    let o = sb.spawn_command(cmd).wait(BOUND);
    sb.assert_no_leftovers();
    o
}

fn sorted(o: &Outcome) -> Vec<&str> {
    let mut l = o.lines();
    l.sort();
    l
}

#[test]
fn np_and_mpiruns_no_op_options_are_accepted() {
    let mut args = vec!["-np", "3", "--oversubscribe", "--allow-run-as-root", "--"];
    args.extend(sh("echo $PERTINAX_SIZE -np"));
    let (_, o) = run(&args);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(sorted(&o), ["3 -np", "3 -np", "3 -np"]);
}

#[test]
fn env_by_name_passes_the_launchers_value_or_says_it_is_unset() {
    let sb = Sandbox::new();
    let mut cmd = Command::new(launcher());
    cmd.args(["run", "-n", "2", "-x", "PERTINAX_TEST_PASSED", "--"])
        .args(sh("echo $PERTINAX_TEST_PASSED"))
        .env("PERTINAX_TEST_PASSED", "forty two");
    let o = sb.spawn_command(cmd).wait(BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(sorted(&o), ["forty two", "forty two"]);
    let (_, o) = run(&["-n", "1", "-x", "PERTINAX_TEST_UNSET_HERE", "true"]);
    assert_eq!(o.code, Some(2), "{o:?}");
    assert!(
        o.stderr
            .contains("PERTINAX_TEST_UNSET_HERE is not set in the launcher's environment"),
        "{}",
        o.stderr
    );
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
}

#[test]
fn human_timeouts() {
    let mut args = vec!["-n", "2", "--timeout", "500ms", "--"];
    args.extend(sh("sleep 10"));
    let (_, o) = run(&args);
    assert_eq!(o.code, Some(124), "{o:?}");
    assert!(o.elapsed < Duration::from_secs(5), "{o:?}");
    let (_, o) = run(&["-n", "1", "--timeout", "5 min", "true"]);
    assert_eq!(o.code, Some(2), "{o:?}");
    assert!(
        o.stderr.contains("'5 min' is not a duration"),
        "{}",
        o.stderr
    );
}

#[test]
fn stdin_goes_to_rank_0_only() {
    let sb = Sandbox::new();
    std::fs::write(sb.file("in.txt"), "hello\nworld\n").unwrap();
    let prog = r#"sh -c 'echo "$PERTINAX_RANK:$(cat | tr "\n" " ")"'"#;
    let o = run_shell(&sb, &format!(r#""$0" run -n 3 -- {prog} < in.txt"#));
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(sorted(&o), ["0:hello world ", "1:", "2:"]);
    let o = run_shell(
        &sb,
        &format!(r#""$0" run -n 2 --stdin none -- {prog} < in.txt"#),
    );
    assert_eq!(sorted(&o), ["0:", "1:"]);
    // Rank 0 need not read it all, nor at all.
    let o = run_shell(&sb, r#"yes | "$0" run -n 2 -- sh -c 'head -n 2'"#);
    assert_eq!((o.code, o.lines()), (Some(0), vec!["y", "y"]), "{o:?}");
    let o = run_shell(&sb, r#"yes | "$0" run -n 2 -- true"#);
    assert_eq!(o.code, Some(0), "{o:?}");
}

#[test]
fn a_rank_exiting_non_zero_ends_the_job_unless_keep_going() {
    // Rank 1 fails at once; the others would sleep for 10 s.
    let script = "if [ $PERTINAX_RANK = 1 ]; then exit 4; fi; sleep 10; echo done";
    let mut args = vec!["-n", "3", "--"];
    args.extend(sh(script));
    let (_, o) = run(&args);
    assert_eq!(o.code, Some(4), "{o:?}");
    assert!(o.elapsed < Duration::from_secs(5), "{o:?}");
    assert!(
        o.stderr.contains("rank 1 exited with code 4 at "),
        "{}",
        o.stderr
    );
    // A panic's 101 is an exit code like any other outside fault injection.
    let mut args = vec!["-n", "2", "--"];
    args.extend(sh("if [ $PERTINAX_RANK = 1 ]; then exit 101; fi; sleep 10"));
    let (_, o) = run(&args);
    assert_eq!(o.code, Some(101), "{o:?}");
    assert!(o.elapsed < Duration::from_secs(5), "{o:?}");
    // Keep going: the others finish.
    let script = "if [ $PERTINAX_RANK = 1 ]; then exit 4; fi; sleep 0.3; echo done";
    let mut args = vec!["-n", "3", "--keep-going", "--"];
    args.extend(sh(script));
    let (_, o) = run(&args);
    assert_eq!(o.code, Some(4), "{o:?}");
    assert_eq!(o.lines(), ["done", "done"], "{o:?}");
    // A rank killed by a signal does not end the job: survivors go on.
    let script = "if [ $PERTINAX_RANK = 1 ]; then kill -9 $$; fi; sleep 0.3; echo survived";
    let mut args = vec!["-n", "3", "--"];
    args.extend(sh(script));
    let (_, o) = run(&args);
    assert_eq!(o.code, Some(137), "{o:?}");
    assert_eq!(o.lines(), ["survived", "survived"], "{o:?}");
}

#[test]
fn output_files_in_open_mpis_layout() {
    let script = "echo out $PERTINAX_RANK; echo err $PERTINAX_RANK >&2";
    let mut args = vec!["-n", "2", "--output-filename", "logs", "--"];
    args.extend(sh(script));
    let (sb, o) = run(&args);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(sorted(&o), ["out 0", "out 1"], "copied to the terminal too");
    for r in 0..2 {
        let dir = sb.file(&format!("logs/1/rank.{r}"));
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!(read("stdout"), format!("out {r}\n"));
        assert_eq!(read("stderr"), format!("err {r}\n"));
    }
    let mut args = vec!["-n", "1", "--output-filename", "quiet:nocopy", "--"];
    args.extend(sh(script));
    let (sb, o) = run(&args);
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (Some(0), "", "")
    );
    let out = std::fs::read_to_string(sb.file("quiet/1/rank.0/stdout")).unwrap();
    assert_eq!(out, "out 0\n");
}

#[test]
fn timestamps_prefix_every_line() {
    let mut args = vec!["-n", "1", "--timestamp-output", "--tag-output", "--"];
    args.extend(sh("echo a; echo b"));
    let (_, o) = run(&args);
    assert_eq!(o.code, Some(0), "{o:?}");
    let lines = o.lines();
    assert_eq!(lines.len(), 2, "{o:?}");
    for (line, want) in lines.iter().zip(["a", "b"]) {
        // [2026-11-27 02:15:02.153] [0] a
        let (stamp, rest) = line.split_at(26);
        assert_eq!(rest, format!("[0] {want}"), "{line}");
        let shape: String = stamp
            .chars()
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect();
        assert_eq!(shape, "[9999-99-99 99:99:99.999] ", "{line}");
    }
}

#[test]
fn wdir_sets_the_ranks_working_directory() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.file("sub")).unwrap();
    let mut args = vec!["run", "-n", "2", "--wdir", "sub", "--"];
    args.extend(sh("pwd"));
    let o = sb.run(&args, BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    let sub = sb.file("sub").canonicalize().unwrap();
    for line in o.lines() {
        assert_eq!(std::path::Path::new(line).canonicalize().unwrap(), sub);
    }
    let o = sb.run(&["run", "-n", "1", "--wdir", "nowhere", "true"], BOUND);
    assert_eq!(o.code, Some(2), "{o:?}");
    assert!(
        o.stderr.contains("--wdir nowhere: not a directory"),
        "{}",
        o.stderr
    );
}

#[test]
fn bind_to_core_pins_each_rank_and_reports_it() {
    let mut args = vec!["-n", "2", "--bind-to", "core", "--report-bindings", "--"];
    args.extend(sh(
        "echo $PERTINAX_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)",
    ));
    let (_, o) = run(&args);
    assert_eq!(o.code, Some(0), "{o:?}");
    for line in o.lines() {
        let (rank, cpus) = line.split_once(' ').unwrap();
        let reported = format!("pertinax: rank {rank} (pid ");
        let said = o
            .stderr
            .lines()
            .find(|l| l.starts_with(&reported))
            .unwrap_or_else(|| panic!("no binding for rank {rank}: {}", o.stderr));
        assert!(
            said.ends_with(&format!(") bound to CPU {cpus}")),
            "{said} / {line}"
        );
    }
    // Unbound by default.
    let mut args = vec!["-n", "1", "--report-bindings", "--"];
    args.extend(sh("true"));
    let (_, o) = run(&args);
    assert!(o.stderr.contains(") not bound"), "{}", o.stderr);
}

#[test]
fn mimd_contexts_run_their_programs_with_ranks_in_order() {
    let (_, o) = run(&[
        "-n",
        "1",
        "-x",
        "WHO=first",
        "sh",
        "-c",
        "echo $WHO $PERTINAX_RANK $PERTINAX_SIZE",
        ":",
        "-np",
        "2",
        "-x",
        "WHO=second",
        "sh",
        "-c",
        "echo $WHO $PERTINAX_RANK $PERTINAX_SIZE",
    ]);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(sorted(&o), ["first 0 3", "second 1 3", "second 2 3"]);
    let (_, o) = run(&["-n", "1", "true", ":", "-n", "1"]);
    assert_eq!(o.code, Some(2), "{o:?}");
}

#[test]
fn completions_and_man_pages_come_from_the_clap_definitions() {
    let sb = Sandbox::new();
    for shell in ["bash", "zsh", "fish"] {
        let o = sb.run(&["completions", shell], BOUND);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("keep-going"), "{shell}: {}", o.stdout);
    }
    let o = sb.run(&["man"], BOUND);
    assert!(
        o.code == Some(0) && o.stdout.contains(".TH pertinax"),
        "{o:?}"
    );
    let o = sb.run(&["man", "run"], BOUND);
    assert!(o.stdout.contains(".TH pertinax-run"), "{o:?}");
    assert!(o.stdout.contains("keep\\-going"), "{o:?}");
    let o = sb.run(&["man", "nope"], BOUND);
    assert_eq!(o.code, Some(2), "{o:?}");
}

/// The launcher manual's usage block is `pertinax run --help`, verbatim:
/// they cannot drift apart.
#[test]
fn the_launcher_manual_shows_pertinax_run_help() {
    let manual = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/launcher.md"
    ))
    .expect("docs/launcher.md at the workspace's root");
    let section = manual
        .split_once("\n## Options\n")
        .expect("a section '## Options'")
        .1;
    let block = section
        .split_once("```text\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("a ```text block in the options section")
        .0;
    let sb = Sandbox::new();
    let o = sb.run(&["run", "--help"], BOUND);
    assert_eq!(o.code, Some(0), "{o:?}");
    // Trailing blanks (clap leaves some on empty lines) do not count.
    let tidy = |t: &str| {
        t.trim_end()
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let help = tidy(&o.stdout);
    if tidy(block) != help {
        panic!(
            "docs/launcher.md's block under '## Options' differs from `pertinax run --help`; \
             paste this in:\n{help}"
        );
    }
}
