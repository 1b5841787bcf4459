//! Command lines of `pertinax run` as the launcher receives them.

use super::*;

fn parse(args: &[&str]) -> Result<RunArgs, clap::Error> {
    let argv = ["pertinax", "run"].iter().chain(args).map(OsString::from);
    let cli = Cli::try_parse_from(normalize(argv.collect()))?;
    match cli.command {
        Command::Run(run) => Ok(*run),
        other => panic!("not run: {other:?}"),
    }
}

/// The job's variables but the `LD_LIBRARY_PATH` that puts pertinax's
/// `libmpi.so.12` first and the `MPI4PY_LIBMPI` that names it (when the
/// test finds one beside itself).
fn user_env(spec: &JobSpec) -> Vec<(OsString, OsString)> {
    spec.env
        .iter()
        .filter(|(k, _)| k != "LD_LIBRARY_PATH" && k != "MPI4PY_LIBMPI")
        .cloned()
        .collect()
}

fn os(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

#[test]
fn np_is_rewritten_among_the_launchers_options_only() {
    let r = parse(&["-np", "4", "prog", "-np", "7"]).unwrap();
    assert_eq!(r.ranks, 4);
    assert_eq!(r.command, os(&["prog", "-np", "7"]));
    // After an option that takes a value, after --, after the program.
    let n = |v: &[&str]| normalize(os(v));
    assert_eq!(
        n(&["p", "run", "-x", "-np", "-np", "2", "--", "a", "-np"]),
        os(&["p", "run", "-x", "-np", "--np", "2", "--", "a", "-np"])
    );
    assert_eq!(
        n(&[
            "p",
            "run",
            "--timeout",
            "5m",
            "-np",
            "2",
            "a",
            ":",
            "-np",
            "1",
            "b",
            "-np"
        ]),
        os(&[
            "p",
            "run",
            "--timeout",
            "5m",
            "--np",
            "2",
            "a",
            ":",
            "--np",
            "1",
            "b",
            "-np"
        ])
    );
    // --resilient takes its value only with '=': the next token is not it.
    assert_eq!(
        n(&["p", "run", "--resilient", "-np", "2", "a"]),
        os(&["p", "run", "--resilient", "--np", "2", "a"])
    );
    assert_eq!(n(&["p", "--version"]), os(&["p", "--version"]));
    let r = parse(&["--oversubscribe", "--allow-run-as-root", "-np", "3", "prog"]).unwrap();
    assert_eq!(r.to_spec().unwrap().ranks, 3);
}

#[test]
fn env_by_name_takes_the_launchers_value() {
    // PATH is set in any test environment.
    let path = std::env::var_os("PATH").unwrap();
    let r = parse(&["-n", "1", "-x", "PATH", "-x", "A=1", "prog"]).unwrap();
    assert_eq!(r.env, vec![("PATH".into(), path), ("A".into(), "1".into())]);
    let e = parse(&["-n", "1", "-x", "PERTINAX_TEST_SURELY_UNSET_42", "prog"]).unwrap_err();
    assert!(
        e.to_string().contains(
            "PERTINAX_TEST_SURELY_UNSET_42 is not set in the launcher's environment \
             (give its value: -x PERTINAX_TEST_SURELY_UNSET_42=VALUE)"
        ),
        "{e}"
    );
}

#[test]
fn timeouts_are_human_durations() {
    let t = |v: &str| parse(&["-n", "1", "--timeout", v, "prog"]).map(|r| r.timeout);
    let s = Duration::from_secs;
    assert_eq!(t("90").unwrap(), Some(s(90)));
    assert_eq!(t("1.5").unwrap(), Some(Duration::from_millis(1500)));
    assert_eq!(t("90s").unwrap(), Some(s(90)));
    assert_eq!(t("5m").unwrap(), Some(s(300)));
    assert_eq!(t("1h30m").unwrap(), Some(s(5400)));
    let e = t("5 min").unwrap_err().to_string();
    assert!(e.contains("'5 min' is not a duration"), "{e}");
    assert!(t("0s").unwrap_err().to_string().contains("longer than 0"));
}

#[test]
fn io_placement_and_failure_options() {
    let spec = parse(&[
        "-n",
        "2",
        "--stdin",
        "none",
        "--timestamp-output",
        "--output-filename",
        "out:nocopy",
        "--wdir",
        "/tmp",
        "--bind-to",
        "core",
        "--report-bindings",
        "--keep-going",
        "prog",
    ])
    .unwrap()
    .to_spec()
    .unwrap();
    assert_eq!(spec.stdin, StdinTo::Nobody);
    assert!(spec.timestamp_output && spec.report_bindings && spec.keep_going);
    assert_eq!(
        spec.output_files,
        Some(OutputFiles {
            dir: "out".into(),
            copy: false
        })
    );
    assert_eq!(spec.wdir, Some(PathBuf::from("/tmp")));
    assert_eq!(spec.bind, Binding::Core);
    let spec = parse(&["-n", "2", "--output-filename", "a:b", "prog"])
        .unwrap()
        .to_spec()
        .unwrap();
    assert_eq!(spec.stdin, StdinTo::Rank0, "pertinax run's default");
    assert_eq!(spec.bind, Binding::None);
    assert!(!spec.keep_going);
    assert_eq!(
        spec.output_files.map(|o| (o.dir, o.copy)),
        Some(("a:b".into(), true))
    );
    assert!(parse(&["-n", "2", "--bind-to", "socket", "prog"]).is_err());
    assert!(parse(&["-n", "2", "--stdin", "1", "prog"]).is_err());
    assert!(parse(&["-n", "2", "--output-filename", ":nocopy", "prog"]).is_err());
}

#[test]
fn mimd_contexts_number_their_ranks_in_order() {
    let spec = parse(&[
        "-n", "2", "-x", "A=1", "prog1", "a", ":", "-np", "3", "-x", "B=2", "prog2", "-n", "9",
        ":", "--np", "1", "--", "prog3",
    ])
    .unwrap()
    .to_spec()
    .unwrap();
    assert_eq!(spec.ranks, 6);
    assert_eq!(spec.program, PathBuf::from("prog1"));
    assert_eq!(spec.args, os(&["a"]));
    assert_eq!(user_env(&spec), vec![("A".into(), "1".into())]);
    assert_eq!(
        spec.apps,
        vec![
            App {
                ranks: 3,
                program: "prog2".into(),
                args: os(&["-n", "9"]),
                env: vec![("B".into(), "2".into())],
            },
            App {
                ranks: 1,
                program: "prog3".into(),
                args: vec![],
                env: vec![],
            }
        ]
    );
    let err = |v: &[&str]| parse(v).unwrap().to_spec().unwrap_err().to_string();
    assert!(err(&["-n", "1", "a", ":", "b"]).contains("--np <N>"));
    assert!(err(&["-n", "1", "a", ":", "-n", "1"]).contains("<PROGRAM>"));
    assert!(err(&["-n", "1", "a", ":", "-n", "0", "b"]).contains("at least 1"));
    assert!(err(&["-n", "1", ":", "-n", "1", "b"]).contains("no program before ':'"));
}

#[test]
fn full_command_line() {
    let r = parse(&[
        "-n",
        "4",
        "--tag-output",
        "--timeout",
        "1.5",
        "--ring-bytes",
        "8192",
        "-x",
        "A=1",
        "--env",
        "B=x=y",
        "--",
        "prog",
        "--flag",
        "arg",
    ])
    .unwrap();
    let spec = r.to_spec().unwrap();
    assert_eq!(spec.ranks, 4);
    assert!(spec.tag_output);
    assert_eq!(spec.timeout, Some(Duration::from_millis(1500)));
    assert_eq!(spec.ring_bytes, Some(8192));
    assert_eq!(
        user_env(&spec),
        vec![("A".into(), "1".into()), ("B".into(), "x=y".into())]
    );
    assert_eq!(spec.program, PathBuf::from("prog"));
    assert_eq!(
        spec.args,
        vec![OsString::from("--flag"), OsString::from("arg")]
    );
}

#[test]
fn program_without_double_dash_keeps_its_flags() {
    let r = parse(&["--np", "2", "prog", "-n", "7"]).unwrap();
    assert_eq!(r.ranks, 2);
    assert_eq!(
        r.command,
        vec![OsString::from("prog"), "-n".into(), "7".into()]
    );
}

#[test]
fn bad_command_lines_are_rejected() {
    assert!(parse(&["-n", "2"]).is_err(), "missing program");
    assert!(parse(&["-n", "0", "--", "true"]).is_err());
    assert!(parse(&["-n", "-3", "--", "true"]).is_err());
    assert!(parse(&["-n", "two", "--", "true"]).is_err());
    assert!(parse(&["--bogus", "-n", "2", "--", "true"]).is_err());
    assert!(parse(&["-n", "2", "--timeout", "0", "--", "true"]).is_err());
    assert!(parse(&["-n", "2", "--timeout", "nan", "--", "true"]).is_err());
    assert!(parse(&["-n", "2", "-x", "NOEQUALS", "--", "true"]).is_err());
    assert!(parse(&["-n", "2", "-x", "=v", "--", "true"]).is_err());
}

#[test]
fn defaults_of_the_fault_tolerance_options() {
    let spec = parse(&["-n", "3", "--", "prog"])
        .unwrap()
        .to_spec()
        .unwrap();
    assert_eq!(spec.spares, 0);
    assert_eq!(spec.max_spawn, None, "the launcher makes it the rank count");
    assert_eq!(spec.on_parent_failure, ParentFailure::Continue);
    assert_eq!(spec.heartbeat, None);
    assert!(spec.kills.is_empty());
    assert_eq!(spec.random_faults, None);
    assert_eq!(spec.resilient, None);
}

#[test]
fn fault_tolerance_options() {
    let spec = parse(&[
        "-n",
        "4",
        "--spares",
        "2",
        "--max-spawn",
        "0",
        "--on-parent-failure",
        "end",
        "--heartbeat",
        "50",
        "--heartbeat-mode",
        "progress",
        "--kill",
        "1@250ms",
        "--kill",
        "2@send#3:segv",
        "--fault-seed",
        "42",
        "--fault-max-hit",
        "5",
        "--",
        "prog",
    ])
    .unwrap()
    .to_spec()
    .unwrap();
    assert_eq!((spec.spares, spec.max_spawn), (2, Some(0)));
    assert_eq!(spec.on_parent_failure, ParentFailure::End);
    let ms = Duration::from_millis;
    assert_eq!(
        spec.heartbeat,
        Some(Heartbeat {
            period: ms(50),
            timeout: ms(500),
            mode: HeartbeatMode::Progress
        })
    );
    assert_eq!(
        spec.kills,
        vec![
            "1@250ms".parse::<Kill>().unwrap(),
            "2@send#3:segv".parse().unwrap()
        ]
    );
    assert_eq!(
        spec.random_faults,
        Some(RandomFaults {
            seed: 42,
            count: 1,
            max_hit: 5
        })
    );
    let spec = parse(&[
        "-n",
        "2",
        "--heartbeat",
        "20",
        "--heartbeat-timeout",
        "300",
        "--",
        "prog",
    ])
    .unwrap()
    .to_spec()
    .unwrap();
    assert_eq!(
        spec.heartbeat.map(|h| (h.timeout, h.mode)),
        Some((ms(300), HeartbeatMode::Thread))
    );
}

#[test]
fn malformed_fault_tolerance_options_are_rejected() {
    let bad = |opts: &[&str]| {
        let mut args = vec!["-n", "2"];
        args.extend_from_slice(opts);
        args.extend(["--", "prog"]);
        parse(&args).is_err()
    };
    assert!(bad(&["--spares", "-1"]));
    assert!(bad(&["--spares", "many"]));
    assert!(bad(&["--max-spawn", "x"]));
    assert!(bad(&["--on-parent-failure", "panic"]));
    assert!(bad(&["--heartbeat", "0"]));
    assert!(bad(&["--heartbeat", "1.5"]));
    assert!(bad(&["--heartbeat-timeout", "100"]), "needs --heartbeat");
    assert!(bad(&["--heartbeat-mode", "thread"]), "needs --heartbeat");
    assert!(bad(&["--heartbeat", "10", "--heartbeat-mode", "busy"]));
    assert!(bad(&["--kill", "1"]));
    assert!(bad(&["--kill", "x@1s"]));
    assert!(bad(&["--kill", "1@1"]));
    assert!(bad(&["--kill", "1@1s:term"]));
    assert!(bad(&["--kill", "1@1s:panic"]));
    assert!(bad(&["--kill", "1@send#0"]));
    assert!(bad(&["--fault-count", "2"]), "needs --fault-seed");
    assert!(bad(&["--fault-seed", "1", "--fault-count", "0"]));
    assert!(bad(&["--fault-seed", "1", "--fault-max-hit", "0"]));
    assert!(bad(&["--fault-seed", "-1"]));
}

/// A stop without heartbeats parses (clap does not see the pair) and
/// is refused by the launcher before anything starts, as a usage error;
/// with heartbeats the launcher goes on (to the missing program here).
#[test]
fn a_stop_needs_heartbeats() {
    let launch = |opts: &[&str]| {
        let mut args = vec!["-n", "2"];
        args.extend_from_slice(opts);
        args.extend(["--", "./no-such-program-pertinax"]);
        pertinax_launch::run(&parse(&args).unwrap().to_spec().unwrap()).unwrap_err()
    };
    for kill in ["1@1s:stop", "1@step#2:stop"] {
        let e = launch(&["--kill", kill]);
        assert!(e.is_usage(), "{e}");
        assert!(
            e.to_string()
                .contains("a stopped process is only detected by heartbeats"),
            "{e}"
        );
        let e = launch(&["--heartbeat", "50", "--kill", kill]);
        assert!(
            e.to_string()
                .starts_with("cannot execute './no-such-program-pertinax'"),
            "{e}"
        );
    }
    let e = launch(&["--kill", "1@1s:kill"]);
    assert!(e.to_string().starts_with("cannot execute"), "{e}");
}

#[test]
fn resilient_options() {
    let resilient = |opts: &[&str]| {
        let mut args = vec!["-n", "4"];
        args.extend_from_slice(opts);
        args.extend(["--", "prog"]);
        parse(&args).unwrap().to_spec().unwrap().resilient
    };
    assert_eq!(
        resilient(&["--resilient"]),
        Some(Resilient::new(ResilientMode::Flat))
    );
    assert_eq!(
        resilient(&["--resilient=flat"]),
        Some(Resilient::new(ResilientMode::Flat))
    );
    assert_eq!(
        resilient(&["--resilient=hier"]),
        Some(Resilient::new(ResilientMode::Hier))
    );
    assert_eq!(
        resilient(&[
            "--resilient=hier",
            "--resilient-k",
            "2",
            "--resilient-threshold",
            "1",
            "--resilient-policy",
            "bcast=ignore, recv=stop",
            "--resilient-check",
            "agree",
        ]),
        Some(Resilient {
            mode: ResilientMode::Hier,
            k: Some(2),
            threshold: Some(1),
            policy: Some("bcast=ignore,recv=stop".parse().unwrap()),
            check: Some(ResilientCheck::Agree),
        })
    );
    let r = resilient(&["--resilient", "--resilient-check", "log"]).unwrap();
    assert_eq!(r.check, Some(ResilientCheck::Log));
    // Without a value, `--resilient` does not take the program as its
    // mode.
    let r = parse(&["-n", "2", "--resilient", "hier"]).unwrap();
    assert_eq!(r.resilient, Some(ResilientArg::Flat));
    assert_eq!(r.command, vec![OsString::from("hier")]);
}

#[test]
fn malformed_resilient_options_are_rejected() {
    let err = |opts: &[&str]| {
        let mut args = vec!["-n", "2"];
        args.extend_from_slice(opts);
        args.extend(["--", "prog"]);
        match parse(&args) {
            Ok(r) => panic!("{opts:?} accepted: {r:?}"),
            Err(e) => e.to_string(),
        }
    };
    for opt in [
        &["--resilient-k", "4"][..],
        &["--resilient-threshold", "8"],
        &["--resilient-policy", "bcast=stop"],
        &["--resilient-check", "agree"],
    ] {
        let e = err(opt);
        assert!(
            e.contains("--resilient[=<MODE>]"),
            "{opt:?} needs --resilient: {e}"
        );
    }
    assert!(err(&["--resilient=ring"]).contains("invalid value 'ring'"));
    assert!(err(&["--resilient="]).contains("a value is required"));
    let e = err(&["--resilient", "--resilient-k", "1"]);
    assert!(e.contains("a local group needs at least 2 ranks"), "{e}");
    assert!(err(&["--resilient", "--resilient-k", "0"]).contains("at least 2"));
    assert!(err(&["--resilient", "--resilient-k", "-3"]).contains("at least 2"));
    assert!(err(&["--resilient", "--resilient-threshold", "-1"]).contains("at least 1"));
    assert!(err(&["--resilient", "--resilient-k", "two"]).contains("not a whole number"));
    let e = err(&["--resilient", "--resilient-threshold", "0"]);
    assert!(e.contains("must be at least 1"), "{e}");
    let e = err(&[
        "--resilient",
        "--resilient-policy",
        "bcast=stop,alltoall=ignore",
    ]);
    assert!(e.contains("unknown operation kind 'alltoall'"), "{e}");
    let e = err(&["--resilient", "--resilient-policy", "recv=retry"]);
    assert!(
        e.contains("unknown action 'retry' for recv (expected ignore or stop)"),
        "{e}"
    );
    let e = err(&["--resilient", "--resilient-policy", "bcast"]);
    assert!(e.contains("'bcast' is not KIND=ACTION"), "{e}");
    let e = err(&["--resilient", "--resilient-check", "vote"]);
    assert!(e.contains("invalid value 'vote'"), "{e}");
}

#[test]
fn mpiexec_keys_with_one_dash() {
    let a = parse(&[
        "-np",
        "2",
        "-wdir",
        "/tmp",
        "-host",
        "localhost:2",
        "-initial-errhandler",
        "mpi_errors_return",
        "./prog",
        "-wdir",
        "x",
    ])
    .expect("mpiexec's keys");
    assert_eq!(a.ranks, 2);
    assert_eq!(a.wdir, Some(PathBuf::from("/tmp")));
    assert_eq!(a.hosts, vec!["localhost:2".to_string()]);
    assert_eq!(a.initial_errhandler, Some(ErrhandlerArg::Return));
    // The program's own -wdir is its own.
    assert_eq!(a.command, os(&["./prog", "-wdir", "x"]));
    let spec = a.to_spec().expect("spec");
    assert!(spec
        .env
        .iter()
        .any(|(k, v)| k == "PERTINAX_INITIAL_ERRHANDLER" && v == "mpi_errors_return"));
    assert!(parse(&["-n", "1", "-hosts", "127.0.0.1,localhost", "p"]).is_ok());
    assert!(parse(&["-n", "1", "-host", "elsewhere.example", "p"]).is_err());
    assert!(parse(&["-n", "1", "-initial-errhandler", "sometimes", "p"]).is_err());
}
