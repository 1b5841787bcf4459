//! Rank program of the offload tests (`tests/offload.rs`), on either
//! backend: `offload-ranks run KEY=VALUE...`. The masters (the job's
//! ranks) allocate boosters (this program again, in the booster role),
//! offload tasks with faults planned in their inputs, and check every
//! result bitwise against the value computed locally (what a run without
//! faults returns). Each master prints `OK run rank=R ...` with what
//! recovery did, or `FAIL run rank=R: ...`.
//!
//! Keys (defaults in brackets):
//! - `alloc=self|world` \[world\]: a private set per master, or one shared
//!   set (failure consensus among the masters);
//! - `boosters=B` \[2\], `tasks=T` \[4\] tasks per master (per round for
//!   `ring`), `rounds=R` \[1\] waits, `spares=S` \[0\] spare groups,
//!   `attempts=A` \[8\] the retry limit, `recover=0|1` \[1\];
//! - `kind=work|ring|nested|domains` \[work\]: independent tasks; a ring
//!   exchange among all boosters in an explicit domain (master 0
//!   offloads, every round); slave tasks that each allocate `workers=W`
//!   \[2\] workers of their own and offload to them; two named domains per
//!   round, `a` (the master's first `tasks` tasks, onto booster 0) and
//!   `b` (the next `tasks`, onto booster 1): the master waits for `b`
//!   first and checks (with `poll`) that every task of `b` is cleared and
//!   none of `a`, then waits for `a`; each execution of a `domains` task
//!   prints `EXEC master=M task=K attempt=A` on the booster's stdout;
//! - `collect=taskwait|wait|poll` \[taskwait\] (`work` and `nested`; for
//!   `domains`, how a domain is waited for): a `taskwait` then `take`;
//!   [`Boosters::wait`] on each task in turn (for `domains`: on the
//!   domain's first task); or [`Boosters::poll`] on each task in turn
//!   until it is no longer running (counted in `waiting=` when it waits
//!   for clearance, `awaiting=` when a booster failure was seen), then a
//!   `taskwait` after which every task must poll as cleared or failed;
//! - `faults=F,F,...`: `M.K\[.W\]:HOW:WHEN\[:ATTEMPT\]`: task K (in offload
//!   order, over all rounds) of master M, or its worker W for `nested`,
//!   fails at its ATTEMPT-th execution \[0\] (for a worker: of the slave's
//!   0th execution); HOW: `kill`, `stop` (SIGSTOP: needs heartbeats),
//!   `panic`, `exit` (exits 1), `error` (the task returns an error, on
//!   the booster it was offloaded onto only, not on its replica); WHEN: `before` (at task start), `during`
//!   (half-way, after a sleep of `ms=MS` \[30\] ms), `after` (a thread
//!   kills the booster MS ms after the task returned: while waiting for
//!   clearance, or later, during free).
//! - `replicate=0|1` \[0\]: `work` tasks also run on the next booster
//!   (first successful result wins);
//! - `expect=ok|lost|retries|task` \[ok\]: every result right; or tasks may
//!   fail with `BoosterFailed` (recover=0), `RetriesExceeded` or a task
//!   error (`Error::Task`), their input
//!   handed back intact, and at least one does.
//!
//! The library marks the start of every task with
//! `pertinax::fault_point("task")`, and of every task of booster B of a
//! top-level allocation's group G with `task.G.B`, so
//! `PERTINAX_FAULTS=task@K` and `task.0.1@K` work too.
//!
//! `offload-ranks api` checks the library's interface on every master,
//! without faults, over one shared allocation made over an `Rc<Comm>`
//! and one private allocation over a `Box<Comm>` (both [`Parent`]s): a
//! right result; a `String` input and a `String` output for the task
//! registered as `u64 -> u64` (`square`), each a typed
//! [`Error::TypeMismatch`] naming both signatures, never a value; and
//! `TaskContext::master`, the offloading master's rank (each master's own
//! in the shared allocation, 0 in its private one).

use pertinax::CommunicatorExt as _;
use std::rc::Rc;
use std::time::Duration;

use pertinax::{Comm, Universe};
use pertinax_harness::{report, setup, Scenario};
use pertinax_offload::{
    Boosters, Domain, Error, Offload, Options, Parent, Registry, Task, TaskContext, TaskError,
    TaskFailure, TaskState,
};
use pertinax_tests::{check, kill_self, scenario};
use pertinax_wire::rng::SplitMix64;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum How {
    Kill,
    Stop,
    Panic,
    Exit,
    /// The task returns an error (not a process failure), on its primary
    /// booster only (so a replica succeeds).
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum When {
    Before,
    During,
    After,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Fault {
    how: How,
    when: When,
    attempt: u32,
    ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Work {
    x: u64,
    /// Faults of this task.
    faults: Vec<Fault>,
    /// For `nested`: the workers and their faults (by worker).
    workers: Vec<Vec<Fault>>,
    /// For `ring`: the round (the tag of the exchange).
    round: u32,
    /// The booster the task was offloaded onto (its replica runs elsewhere).
    primary: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Out {
    /// The result, compared bitwise with the locally computed one.
    value: u64,
    /// For `nested`: the recoveries the slave made among its workers.
    inner_recoveries: u32,
}

fn out(value: u64) -> Out {
    Out {
        value,
        inner_recoveries: 0,
    }
}

/// The deterministic work of a task (a few hundred microseconds).
fn f(x: u64) -> u64 {
    let mut r = SplitMix64::new(x);
    let mut acc = 0u64;
    for _ in 0..20_000 {
        acc = acc.rotate_left(5) ^ r.next_u64();
    }
    acc
}

fn strike(how: How) {
    match how {
        How::Kill => {
            let _ = kill_self();
        }
        How::Stop => {
            use rustix::process::{getpid, kill_process, Signal};
            let _ = kill_process(getpid(), Signal::STOP);
        }
        How::Panic => panic!("offprog: planned panic in a task"),
        How::Exit => std::process::exit(1),
        How::Error => {}
    }
}

fn faults_at(ctx: &TaskContext<'_>, faults: &[Fault], when: When) {
    for fl in faults
        .iter()
        .filter(|fl| fl.attempt == ctx.attempt() && fl.when == when)
    {
        if when == When::After {
            let (how, ms) = (fl.how, fl.ms);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(ms));
                strike(how);
            });
        } else {
            if when == When::During {
                std::thread::sleep(Duration::from_millis(fl.ms));
            }
            strike(fl.how);
        }
    }
}

fn work(ctx: &TaskContext<'_>, w: Work) -> Result<Out, TaskFailure> {
    if ctx.booster() == w.primary
        && w.faults
            .iter()
            .any(|fl| fl.how == How::Error && fl.attempt == ctx.attempt())
    {
        return Err(TaskFailure::Message("planned task error".into()));
    }
    faults_at(ctx, &w.faults, When::Before);
    let a = f(w.x);
    std::thread::sleep(Duration::from_millis(2));
    faults_at(ctx, &w.faults, When::During);
    let b = f(a);
    faults_at(ctx, &w.faults, When::After);
    Ok(out(b))
}

/// A task of the `domains` kind: `work`, with each execution printed (the
/// tests count them).
fn domains(ctx: &TaskContext<'_>, w: Work) -> Result<Out, TaskFailure> {
    println!(
        "EXEC master={} task={} attempt={}",
        w.x >> 32,
        w.x & 0xffff_ffff,
        ctx.attempt()
    );
    work(ctx, w)
}

fn ring_value(x: u64, left: u64) -> u64 {
    f(x ^ left.rotate_left(17))
}

/// Sends `x` to the next booster, receives the previous one's, over the
/// boosters' communicator: the tasks of one round depend on each other.
fn ring(ctx: &TaskContext<'_>, w: Work) -> Result<Out, TaskFailure> {
    faults_at(ctx, &w.faults, When::Before);
    let c = ctx.comm();
    let (me, n) = (c.rank().index(), c.size());
    let tag = w.round as i32 + 1;
    let mut left = [0u64];
    c.sendrecv(&[w.x], (me + 1) % n, tag, &mut left, (me + n - 1) % n, tag)?;
    faults_at(ctx, &w.faults, When::During);
    let v = ring_value(w.x, left[0]);
    faults_at(ctx, &w.faults, When::After);
    Ok(out(v))
}

fn nested_value(x: u64, workers: usize) -> u64 {
    (0..workers as u64).fold(0u64, |s, k| s.wrapping_add(f(f(x * 64 + k))))
}

/// A slave task: allocates workers of its own, offloads `work` to each
/// (with recovery), sums.
fn nested(ctx: &TaskContext<'_>, w: Work) -> Result<Out, TaskFailure> {
    faults_at(ctx, &w.faults, When::Before);
    let nw = w.workers.len();
    let mut b = Boosters::alloc(&ctx.universe().self_comm(), nw)?;
    let mut hs = Vec::new();
    for (k, wf) in w.workers.iter().enumerate() {
        let faults = if ctx.attempt() == 0 {
            wf.clone()
        } else {
            Vec::new()
        };
        let job = Work {
            x: w.x * 64 + k as u64,
            faults,
            workers: Vec::new(),
            round: 0,
            primary: k,
        };
        hs.push(b.offload::<Work, Out>(Offload::new("work", k).recover(), &job)?);
    }
    faults_at(ctx, &w.faults, When::During);
    b.taskwait()?;
    let mut sum = 0u64;
    for h in hs {
        sum = sum.wrapping_add(b.take(h).map_err(|e| e.error)?.value);
    }
    let inner_recoveries = b.stats().recoveries;
    b.free()?;
    faults_at(ctx, &w.faults, When::After);
    Ok(Out {
        value: sum,
        inner_recoveries,
    })
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register("work", work)
        .register("ring", ring)
        .register("nested", nested)
        .register("domains", domains)
        .register("square", |_ctx, x: u64| Ok(x * x))
        .register("master", |ctx, x: u64| {
            Ok(x << 32 | ctx.master().index() as u64)
        });
    r
}

/// The error of a task that must fail with [`Error::TypeMismatch`], with
/// the registered and the offloaded signatures.
fn mismatch<I, O: std::fmt::Debug>(r: Result<O, TaskError<I>>, given: &str) -> Result<(), String> {
    match r {
        Err(TaskError {
            error:
                Error::TypeMismatch {
                    name,
                    expected,
                    given: g,
                },
            input,
        }) => {
            check!(
                name == "square" && expected == "u64 -> u64" && g == given,
                "mismatch of {name:?}: registered {expected:?}, offloaded {g:?}, want {given:?}"
            );
            check!(input.is_some(), "the input was not handed back");
            Ok(())
        }
        Err(e) => Err(format!("{given}: {} instead of a type mismatch", e.error)),
        Ok(v) => Err(format!(
            "{given}: a value ({v:?}) instead of a type mismatch"
        )),
    }
}

/// One allocation of `api`: a right result, both type mismatches, and
/// the master's rank seen by the task (`me`).
fn api_on(comm: &(impl Parent + ?Sized), me: usize) -> Result<(), String> {
    let mut b = Boosters::alloc(comm, 2).map_err(|e| format!("alloc: {e}"))?;
    let ok = b
        .offload::<u64, u64>(Offload::new("square", 1).recover(), &7)
        .map_err(|e| format!("offload: {e}"))?;
    let input = b
        .offload::<String, u64>(Offload::new("square", 0), &"five".to_string())
        .map_err(|e| format!("offload: {e}"))?;
    let output = b
        .offload::<u64, String>(Offload::new("square", 1).recover(), &5)
        .map_err(|e| format!("offload: {e}"))?;
    let whoami = b
        .offload::<u64, u64>(Offload::new("master", me % 2), &3)
        .map_err(|e| format!("offload: {e}"))?;
    b.taskwait().map_err(|e| format!("taskwait: {e}"))?;
    let v = b.take(ok).map_err(|e| format!("square: {}", e.error))?;
    check!(v == 49, "square(7) = {v}");
    mismatch(b.take(input), "alloc::string::String -> u64")?;
    mismatch(b.take(output), "u64 -> alloc::string::String")?;
    let m = b.take(whoami).map_err(|e| format!("master: {}", e.error))?;
    let st = b.stats();
    check!(st.recoveries == 0, "recoveries {}", st.recoveries);
    check!(m == (3 << 32 | me as u64), "master: got {m:#x}, want {me}");
    b.free().map_err(|e| format!("free: {e}"))?;
    Ok(())
}

/// `offload-ranks api`: see the module documentation.
fn api(u: &Universe, w: &Comm) -> Result<String, String> {
    let shared: Rc<Comm> = Rc::new(w.clone());
    api_on(&shared, w.rank().index())?;
    let private: Box<Comm> = Box::new(u.self_comm());
    api_on(&private, 0)?;
    Ok(String::new())
}

struct Conf {
    shared: bool,
    boosters: usize,
    tasks: usize,
    rounds: usize,
    spares: usize,
    attempts: u32,
    recover: bool,
    kind: String,
    workers: usize,
    faults: Vec<(usize, usize, Option<usize>, Fault)>,
    expect: String,
    replicate: bool,
    collect: String,
}

fn parse_fault(s: &str, ms: u64) -> Result<(usize, usize, Option<usize>, Fault), String> {
    let parts: Vec<&str> = s.split(':').collect();
    check!(parts.len() >= 3, "fault {s:?}: M.K[.W]:HOW:WHEN[:ATTEMPT]");
    let ids: Vec<usize> = parts[0]
        .split('.')
        .map(|x| x.parse::<usize>().map_err(|e| format!("{s:?}: {e}")))
        .collect::<Result<_, _>>()?;
    check!(ids.len() == 2 || ids.len() == 3, "fault {s:?}: M.K[.W]");
    let how = match parts[1] {
        "kill" => How::Kill,
        "stop" => How::Stop,
        "panic" => How::Panic,
        "exit" => How::Exit,
        "error" => How::Error,
        o => return Err(format!("fault {s:?}: how {o:?}")),
    };
    let when = match parts[2] {
        "before" => When::Before,
        "during" => When::During,
        "after" => When::After,
        o => return Err(format!("fault {s:?}: when {o:?}")),
    };
    let attempt = parts
        .get(3)
        .map_or(Ok(0), |a| a.parse().map_err(|e| format!("{e}")))?;
    Ok((
        ids[0],
        ids[1],
        ids.get(2).copied(),
        Fault {
            how,
            when,
            attempt,
            ms,
        },
    ))
}

fn conf(a: &[String]) -> Result<Conf, String> {
    let get = |k: &str| {
        a.iter()
            .find_map(|kv| kv.strip_prefix(k).and_then(|r| r.strip_prefix('=')))
            .map(str::to_string)
    };
    let num = |k: &str, d: usize| get(k).and_then(|v| v.parse().ok()).unwrap_or(d);
    let ms = num("ms", 30) as u64;
    let faults = match get("faults") {
        Some(v) if !v.is_empty() => v
            .split(',')
            .map(|s| parse_fault(s, ms))
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    Ok(Conf {
        shared: get("alloc").as_deref() != Some("self"),
        boosters: num("boosters", 2),
        tasks: num("tasks", 4),
        rounds: num("rounds", 1),
        spares: num("spares", 0),
        attempts: num("attempts", 8) as u32,
        recover: num("recover", 1) == 1,
        kind: get("kind").unwrap_or_else(|| "work".into()),
        workers: num("workers", 2),
        faults,
        expect: get("expect").unwrap_or_else(|| "ok".into()),
        replicate: num("replicate", 0) == 1,
        collect: get("collect").unwrap_or_else(|| "taskwait".into()),
    })
}

/// The input of task `k` of master `m`, and its expected output.
fn input(c: &Conf, m: usize, k: usize, round: usize) -> Work {
    let faults_of = |w: Option<usize>| -> Vec<Fault> {
        c.faults
            .iter()
            .filter(|(fm, fk, fw, _)| *fm == m && *fk == k && *fw == w)
            .map(|(_, _, _, fl)| fl.clone())
            .collect()
    };
    Work {
        x: (m as u64) << 32 | k as u64,
        faults: faults_of(None),
        workers: if c.kind == "nested" {
            (0..c.workers).map(|w| faults_of(Some(w))).collect()
        } else {
            Vec::new()
        },
        round: round as u32,
        primary: 0,
    }
}

type Handle = Task<Work, Out>;
type Outcome = Result<Out, TaskError<Work>>;

/// What `collect=poll` saw.
#[derive(Default)]
struct Polled {
    waiting: usize,
    awaiting: usize,
}

/// `Boosters::poll` on each task in turn while it runs (never blocking,
/// never collective).
fn poll_until_done(b: &mut Boosters, hs: &[(Work, Handle)], p: &mut Polled) -> Result<(), String> {
    for (_, h) in hs {
        loop {
            match b.poll(h) {
                TaskState::Running => std::thread::sleep(Duration::from_micros(200)),
                TaskState::WaitingForClearance => {
                    p.waiting += 1;
                    break;
                }
                TaskState::AwaitingRecovery => {
                    p.awaiting += 1;
                    break;
                }
                TaskState::Failed => break,
                s => return Err(format!("task {}: {s:?} before its wait", h.id())),
            }
        }
    }
    Ok(())
}

/// Every task of `hs` polls as cleared (or failed): its wait is over.
fn all_cleared(b: &mut Boosters, hs: &[(Work, Handle)], after: &str) -> Result<(), String> {
    for (_, h) in hs {
        let s = b.poll(h);
        check!(
            matches!(s, TaskState::Cleared | TaskState::Failed),
            "task {}: {s:?} after {after}",
            h.id()
        );
    }
    Ok(())
}

fn take_all(b: &mut Boosters, hs: Vec<(Work, Handle)>) -> Vec<(Work, Outcome)> {
    hs.into_iter()
        .map(|(j, h)| {
            let r = b.take(h);
            (j, r)
        })
        .collect()
}

/// Waits for explicit domain `d`: `wait` on its first task of `part`
/// (taken out, with its outcome) for `collect=wait`, else `wait_domain`.
fn wait_for(
    b: &mut Boosters,
    c: &Conf,
    d: Domain,
    part: &mut Vec<(Work, Handle)>,
) -> Result<Option<(Work, Outcome)>, String> {
    if c.collect == "wait" && !part.is_empty() {
        let (job, h) = part.remove(0);
        let r = b.wait(h);
        return Ok(Some((job, r)));
    }
    b.wait_domain(d).map_err(|e| format!("wait_domain: {e}"))?;
    Ok(None)
}

/// `kind=domains`: domain `b` (the second half of `hs`) is waited for
/// first; then every task of `b` polls as cleared and none of `a`; then
/// domain `a`.
fn collect_domains(
    b: &mut Boosters,
    c: &Conf,
    mut part_a: Vec<(Work, Handle)>,
) -> Result<Vec<(Work, Outcome)>, String> {
    let (da, db) = (b.domain("a"), b.domain("b"));
    let mut part_b = part_a.split_off(c.tasks.min(part_a.len()));
    let mut out: Vec<(Work, Outcome)> = wait_for(b, c, db, &mut part_b)?.into_iter().collect();
    all_cleared(b, &part_b, "the wait for domain b")?;
    for (_, h) in &part_a {
        let s = b.poll(h);
        check!(
            s != TaskState::Cleared,
            "task {} of domain a cleared by the wait for domain b",
            h.id()
        );
    }
    out.extend(take_all(b, part_b));
    out.extend(wait_for(b, c, da, &mut part_a)?);
    all_cleared(b, &part_a, "the wait for domain a")?;
    out.extend(take_all(b, part_a));
    Ok(out)
}

fn run(u: &Universe, w: &Comm, a: &[String]) -> Result<String, String> {
    let c = conf(a)?;
    let me = w.rank().index();
    let comm = if c.shared { w.clone() } else { u.self_comm() };
    let opts = Options::new().spares(c.spares).max_attempts(c.attempts);
    let mut b = Boosters::alloc_with(&comm, c.boosters, opts).map_err(|e| format!("alloc: {e}"))?;
    let (mut right, mut failed, mut inner) = (0usize, 0usize, 0u32);
    let mut polled = Polled::default();
    let mut k = 0usize;
    for round in 0..c.rounds {
        let mut hs = Vec::new();
        let ring = c.kind == "ring";
        let two = c.kind == "domains";
        let ring_domain = b.domain("ring");
        let (da, db) = (b.domain("a"), b.domain("b"));
        let n = match (ring, me) {
            (true, 0) => c.boosters,
            (true, _) => 0,
            (false, _) if two => 2 * c.tasks,
            (false, _) => c.tasks,
        };
        for i in 0..n {
            let (onto, domain) = if ring {
                (i, Some(ring_domain))
            } else if two && i < c.tasks {
                (0, Some(da))
            } else if two {
                (1 % c.boosters, Some(db))
            } else {
                ((me * c.tasks + i) % c.boosters, None)
            };
            let mut job = input(&c, me, k, round);
            job.primary = onto;
            k += 1;
            let mut spec = Offload::new(&c.kind, onto);
            if c.replicate && !ring && c.boosters > 1 {
                spec = spec.replicate((onto + 1) % c.boosters);
            }
            if c.recover {
                spec = spec.recover();
            }
            if let Some(d) = domain {
                spec = spec.domain(d);
            }
            hs.push((
                job.clone(),
                b.offload::<Work, Out>(spec, &job)
                    .map_err(|e| format!("offload: {e}"))?,
            ));
        }
        let results = match (c.kind.as_str(), c.collect.as_str()) {
            ("ring", _) => {
                b.wait_domain(ring_domain)
                    .map_err(|e| format!("wait_domain: {e}"))?;
                take_all(&mut b, hs)
            }
            ("domains", _) => collect_domains(&mut b, &c, hs)?,
            (_, "wait") => hs
                .into_iter()
                .map(|(j, h)| {
                    let r = b.wait(h);
                    (j, r)
                })
                .collect(),
            (_, "poll") => {
                poll_until_done(&mut b, &hs, &mut polled)?;
                b.taskwait().map_err(|e| format!("taskwait: {e}"))?;
                all_cleared(&mut b, &hs, "the taskwait")?;
                take_all(&mut b, hs)
            }
            (_, "taskwait") => {
                b.taskwait().map_err(|e| format!("taskwait: {e}"))?;
                take_all(&mut b, hs)
            }
            (_, other) => return Err(format!("collect={other}: taskwait, wait or poll")),
        };
        let xs: Vec<u64> = results.iter().map(|(j, _)| j.x).collect();
        for (i, (job, r)) in results.into_iter().enumerate() {
            let want = match c.kind.as_str() {
                "ring" => ring_value(job.x, xs[(i + xs.len() - 1) % xs.len()]),
                "nested" => nested_value(job.x, c.workers),
                _ => f(f(job.x)),
            };
            match r {
                Ok(got) => {
                    check!(
                        got.value == want,
                        "task {i} (x={:#x}): wrong result {:#x}, want {want:#x}",
                        job.x,
                        got.value
                    );
                    inner += got.inner_recoveries;
                    right += 1;
                }
                Err(e) => {
                    check!(c.expect != "ok", "task {i}: {}", e.error);
                    let allowed = matches!(
                        (&e.error, c.expect.as_str()),
                        (Error::BoosterFailed { .. }, "lost")
                            | (Error::RetriesExceeded { .. }, "retries")
                            | (Error::Task { .. }, "task")
                    );
                    check!(allowed, "task {i}: unexpected error {}", e.error);
                    check!(
                        e.input.as_ref() == Some(&job),
                        "task {i}: input not handed back intact"
                    );
                    failed += 1;
                }
            }
        }
    }
    let st = b.stats();
    b.free().map_err(|e| format!("free: {e}"))?;
    if c.expect != "ok" {
        // Every master sees the same recoveries; the faulted master must
        // have lost a task.
        let planned_here = c.faults.iter().any(|(m, ..)| *m == me);
        check!(!planned_here || failed > 0, "no task failed");
    }
    Ok(format!(
        "right={right} failed={failed} recoveries={} spares_used={} reexec={} inner={inner} \
         waiting={} awaiting={}",
        st.recoveries, st.spares_used, st.reexecutions, polled.waiting, polled.awaiting
    ))
}

fn main() {
    let u: Universe = setup("init", pertinax::init());
    let reg = registry();
    if pertinax_offload::is_booster(&u) {
        pertinax_offload::booster_main(u, &reg);
    }
    let sc = Scenario::<scenario::Offload>::from_args();
    let w = u.world();
    let rest = sc.args();
    let r = match sc.scenario() {
        scenario::Offload::Run => run(&u, &w, rest),
        scenario::Offload::Api => api(&u, &w),
    };
    report(sc.name(), w.rank().index(), r).or_exit();
    drop(u);
}
