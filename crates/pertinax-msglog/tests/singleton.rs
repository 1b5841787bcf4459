//! `run` in a one-process job (no launcher): the three modes give the
//! same state and the same final step's result, and what the library
//! cannot replay is refused with a clear error. (One test: a process
//! joins one job.)

use pertinax::{Communicator, CommunicatorExt, Op, Source, Tag};
use pertinax_msglog::{run, run_and_finish, Config, Error, LogCap, Mode, FIRST_RESERVED_TAG};

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct State {
    x: Vec<u64>,
    sum: u64,
}

fn step(it: u64, s: &mut State, c: &pertinax_msglog::Logged) -> Result<(), pertinax::Error> {
    for v in s.x.iter_mut() {
        *v = v.wrapping_mul(6364136223846793005).wrapping_add(it);
    }
    let mut sum = [0u64];
    c.allreduce(
        &[s.x.iter().fold(0u64, |a, b| a ^ b)],
        &mut sum,
        &Op::bxor(),
    )?;
    s.sum = s.sum.wrapping_add(sum[0]);
    // A message to itself, through the logged path.
    let mut back = [0u64];
    pertinax::scope(|sc| {
        let r = c.irecv(sc, &mut back, 0, 3)?;
        c.send(&[sum[0]], 0, 3)?;
        r.wait()?;
        Ok(())
    })
}

#[test]
fn modes_agree_and_unreplayable_calls_are_refused() {
    let u = pertinax::init().expect("a singleton job");
    let init = || State {
        x: (0..64).collect(),
        sum: 0,
    };
    let mut results = Vec::new();
    for mode in [Mode::Plain, Mode::Transactional, Mode::Logged] {
        let cfg = Config {
            cp_int: 3,
            mode,
            log_cap: LogCap::Bytes(1 << 20),
            ..Config::default()
        };
        let r = run(&u, &cfg, 10, init, step).expect("a run without failures");
        assert_eq!(r.stats.iterations_run, 10);
        assert_eq!(r.recoveries, 0);
        assert_eq!(r.rollback.to_string(), "none");
        results.push(r.state);
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");

    // The final step runs once, on the final state, with its collectives
    // through the logged communicator, in every mode.
    let mut finals = Vec::new();
    for mode in [Mode::Plain, Mode::Transactional, Mode::Logged] {
        let cfg = Config {
            cp_int: 3,
            mode,
            ..Config::default()
        };
        let mut calls = 0;
        let r = run_and_finish(&u, &cfg, 10, init, step, |s: &State, c| {
            calls += 1;
            assert_eq!(c.iteration(), 10);
            let mut all = [0u64];
            c.gather(&[s.sum], &mut all, 0)?;
            Ok(all[0])
        })
        .expect("a run with a final step");
        assert_eq!((calls, r.stats.iterations_run), (1, 10));
        assert_eq!(r.result, r.state.sum);
        finals.push((r.state, r.result));
    }
    assert_eq!(finals[0].0, results[0]);
    assert!(finals.windows(2).all(|w| w[0] == w[1]), "{finals:?}");
    // An error of the final step that is not a failure ends the run,
    // named after the iteration it runs as.
    let e = run_and_finish(&u, &Config::default(), 4, init, step, |_, c| {
        let mut b = [0u8; 1];
        c.recv(&mut b, Source::Any, 0).map(drop)
    })
    .expect_err("an any-source receive in the final step");
    assert!(matches!(e, Error::Body { iteration: 4, .. }), "{e}");

    // An any-source receive is refused: its order cannot be replayed.
    let cfg = Config::default();
    let e = run(&u, &cfg, 2, init, |_, _, c| {
        let mut b = [0u8; 1];
        c.recv(&mut b, Source::Any, 0).map(drop)
    })
    .expect_err("an any-source receive");
    assert!(
        matches!(e, Error::Body { iteration: 0, .. }) && e.to_string().contains("any-source"),
        "{e}"
    );
    // The library's tags are refused.
    let e = run(&u, &cfg, 2, init, |_, _, c| {
        c.send_bytes(&[1], c.rank(), Tag(FIRST_RESERVED_TAG))
            .map(drop)
    })
    .expect_err("a reserved tag");
    assert!(e.to_string().contains("reserved"), "{e}");
    // So is a new communicator inside an iteration.
    let e = run(&u, &cfg, 2, init, |_, _, c| c.dup_boxed().map(drop))
        .expect_err("a dup inside an iteration");
    assert!(e.to_string().contains("creating communicators"), "{e}");
    // And a bad configuration.
    let bad = Config {
        cp_int: 0,
        ..Config::default()
    };
    assert!(matches!(
        run(&u, &bad, 2, init, step),
        Err(Error::InvalidConfig(_))
    ));
}
