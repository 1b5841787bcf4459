//! The native backend: processes of one machine, started and watched by
//! `pertinax run`, talking through one shared-memory segment.
//!
//! - `boot`: bootstrap with the launcher over its control socket (or as a
//!   singleton), the heartbeat, the connection guard.
//! - `engine`: the progress engine: rings in and out (`outbox`), MPI
//!   matching and the request slab (`matcher`), eager, streamed and
//!   single-copy protocols, the fault-tolerance registry (`registry`: per
//!   communicator entries in the segment, doom rules, revocation through
//!   the segment, agreement records, the launcher's publications), waiting.
//! - this file: [`Native`], the [`Backend`] implementation over them, and
//!   the launcher requests (finalize, abort, spawn, injected faults, the
//!   name service).
//!
//! Every optional part of the contract is provided: spares, single-copy
//! transfers, heartbeats, fault injection by the launcher, the name
//! service (the launcher's table; a singleton keeps its own). A singleton
//! process (no launcher) answers a spawn with `SpawnFailed`, as before.

pub(crate) use pertinax_backend as backend;
pub(crate) use pertinax_backend::{error, inject, types, wait};

use std::cell::{Cell, RefCell};
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use pertinax_wire::ctrl::{self, NameAnswer, ToLauncher};
use pertinax_wire::env;
use pertinax_wire::names::Names;

use crate::backend::{
    Backend, Capabilities, MatchSpec, NameService, Peers, ProcRequest, Record, RecvBuf, ReqKey,
    SendBuf, Started, Task, Token,
};
use crate::error::{Error, RecoveryCall, Result};
use crate::types::Status;
use crate::wait::{Backoff, WaitPolicy};

mod boot;
pub(crate) mod engine;

use engine::{Engine, Member};

/// The native backend of this process.
#[derive(Debug)]
pub struct Native {
    engine: RefCell<Engine>,
    ctrl: RefCell<Option<UnixStream>>,
    /// The launcher's answers to name requests (`None`: a singleton).
    names: Option<Receiver<(u64, NameAnswer)>>,
    /// The last name request's id.
    name_id: Cell<u64>,
    /// A singleton's own name table.
    local_names: RefCell<Names>,
    next_ctx: Cell<u32>,
    /// The engine's, read without a borrow on the send path.
    eager_limit: usize,
}

/// What the native backend keeps per communicator: this process's
/// fault-tolerance entry and every member's slot and entry (group, then
/// remote group).
#[derive(Debug)]
pub struct CommState {
    entry: u16,
    members: Rc<[Member]>,
}

/// Bootstraps this process and builds its engine.
pub fn start() -> Result<Started<Native>> {
    let boot = boot::bootstrap()?;
    // The job's CPUs, not this process's mask: a rank bound to one CPU
    // (`--bind-to core`) would otherwise count itself oversubscribed and
    // yield on every wait.
    let cpus = std::env::var(env::CPUS)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&c: &usize| c > 0)
        .unwrap_or_else(pertinax_os::online_cpus);
    let policy = WaitPolicy::for_job(boot.job.size, cpus);
    let eager = std::env::var(env::tune::EAGER_LIMIT)
        .ok()
        .and_then(|v| v.trim().parse().ok());
    // Ranks of the job poll the job's slots from the start; processes that
    // join later poll what their communicators name.
    let nslots = if boot.assign.is_some() {
        0
    } else {
        boot.job.size
    };
    // Fault in this rank's rings now rather than one page per message later
    // (best effort: without MADV_POPULATE_WRITE pages come on first use).
    let _ = boot.seg.prefault(boot.slot, nslots);
    let single_copy = boot.cma
        && match std::env::var(env::tune::LARGE).as_deref().map(str::trim) {
            Ok("cma") => true,
            Ok("stream") => false,
            _ => boot.job.size > 2 * cpus,
        };
    let mut engine = Engine::new(boot.seg, boot.slot, nslots, policy, eager, single_copy);
    engine.beat_in_progress = boot.beat_in_progress;
    let eager_limit = engine.eager_limit();
    Ok(Started {
        backend: Native {
            engine: RefCell::new(engine),
            ctrl: RefCell::new(boot.ctrl),
            names: boot.names,
            name_id: Cell::new(0),
            local_names: RefCell::new(Names::default()),
            next_ctx: Cell::new(8),
            eager_limit,
        },
        rank: boot.job.rank,
        size: boot.job.size,
        job_id: boot.job.job_id,
        me: boot.slot as u32,
        assigned: boot.assign,
        bound: None,
    })
}

impl Native {
    /// Writes a frame to the launcher; false without one (singleton) or if
    /// the socket is busy (a fault point firing inside a launcher call).
    fn tell(&self, msg: &ToLauncher) -> Option<std::result::Result<(), ctrl::FrameError>> {
        let mut c = self.ctrl.try_borrow_mut().ok()?;
        let sock = c.as_mut()?;
        Some(ctrl::write_frame(sock, msg))
    }

    /// Sends the name request `ask(id)` to the launcher and waits (making
    /// progress) for its answer, at most [`NAME_WAIT`]; `None` for a
    /// singleton.
    fn ask_names(&self, ask: impl FnOnce(u64) -> ToLauncher) -> Option<Result<NameAnswer>> {
        let rx = self.names.as_ref()?;
        let id = self.name_id.get() + 1;
        self.name_id.set(id);
        match self.tell(&ask(id)) {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                return Some(Err(Error::Transport(format!(
                    "name service: cannot reach the launcher: {e}"
                ))))
            }
            None => {
                return Some(Err(Error::Transport(
                    "name service: the launcher's socket is busy".into(),
                )))
            }
        }
        let deadline = Instant::now() + NAME_WAIT;
        loop {
            self.engine.borrow_mut().progress();
            let now = Instant::now();
            if now >= deadline {
                return Some(Err(Error::Transport(format!(
                    "name service: the launcher did not answer within {} s",
                    NAME_WAIT.as_secs()
                ))));
            }
            match rx.recv_timeout((deadline - now).min(Duration::from_millis(1))) {
                Ok((got, answer)) if got == id => return Some(Ok(answer)),
                // The late answer to a request that timed out.
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Some(Err(Error::Transport(
                        "name service: lost the connection to the launcher".into(),
                    )))
                }
            }
        }
    }

    /// The name table's answer: the launcher's, or a singleton's own.
    fn names_answer(
        &self,
        ask: impl FnOnce(u64) -> ToLauncher,
        own: impl FnOnce(&mut Names) -> NameAnswer,
    ) -> Result<NameAnswer> {
        match self.ask_names(ask) {
            Some(a) => a,
            None => Ok(own(&mut self.local_names.borrow_mut())),
        }
    }
}

/// How long a name request waits for the launcher's answer (it comes at
/// once from a launcher that runs; one that is gone stops this process
/// through the connection guard).
const NAME_WAIT: Duration = Duration::from_secs(30);

/// The launcher's name table answered something its request cannot get.
fn odd_answer(a: NameAnswer) -> Error {
    Error::Transport(format!("name service: unexpected answer {a:?}"))
}

impl NameService for Native {
    fn publish_name(&self, service: &str, port: &str) -> Result<()> {
        let (s, p) = (service.to_string(), port.to_string());
        let ask = |id| ToLauncher::Publish {
            id,
            service: s.clone(),
            port: p.clone(),
        };
        match self.names_answer(ask, |t| t.publish(s.clone(), p.clone()))? {
            NameAnswer::Done => Ok(()),
            NameAnswer::AlreadyPublished(port) => Err(Error::NameTaken { service: s, port }),
            other => Err(odd_answer(other)),
        }
    }

    fn unpublish_name(&self, service: &str, port: &str) -> Result<()> {
        let ask = |id| ToLauncher::Unpublish {
            id,
            service: service.to_string(),
            port: port.to_string(),
        };
        match self.names_answer(ask, |t| t.unpublish(service, port))? {
            NameAnswer::Done => Ok(()),
            NameAnswer::NotPublished(_) => Err(Error::NameNotPublished {
                service: service.to_string(),
                port: port.to_string(),
            }),
            other => Err(odd_answer(other)),
        }
    }

    fn lookup_name(&self, service: &str) -> Result<String> {
        let ask = |id| ToLauncher::Lookup {
            id,
            service: service.to_string(),
        };
        match self.names_answer(ask, |t| t.lookup(service))? {
            NameAnswer::Port(p) => Ok(p),
            NameAnswer::NotFound => Err(Error::NameNotFound {
                service: service.to_string(),
            }),
            other => Err(odd_answer(other)),
        }
    }
}

/// Members from slots and entry numbers.
fn members_of<'a>(slots: &'a [u32], entries: &'a [u16]) -> impl Iterator<Item = Member> + 'a {
    slots
        .iter()
        .zip(entries)
        .map(|(&slot, &entry)| Member { slot, entry })
}

impl Backend for Native {
    type CommState = CommState;

    #[inline]
    fn progress(&self) -> bool {
        self.engine.borrow_mut().progress()
    }

    #[inline]
    fn idle(&self, b: &mut Backoff) {
        self.engine.borrow_mut().idle(b)
    }

    #[inline]
    fn eager_limit(&self) -> usize {
        self.eager_limit
    }

    fn single_copy(&self) -> bool {
        self.engine.borrow().uses_cma()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            name_service: true,
            ..Capabilities::default()
        }
    }

    fn finalize(&self) -> Result<()> {
        {
            let mut e = self.engine.borrow_mut();
            e.drain_outbox();
            e.finish_buffered();
            e.cancel_all();
        }
        if self.ctrl.borrow().is_some() {
            // A clean end: the kernel must not report this process dead.
            self.engine.borrow().release_death_notice();
            if let Some(Err(e)) = self.tell(&ToLauncher::Finalize) {
                return Err(Error::Bootstrap(format!("finalize: {e}")));
            }
        }
        Ok(())
    }

    fn abort(&self, code: i32, message: &str) {
        let _ = self.tell(&ToLauncher::Abort {
            code,
            message: message.to_string(),
        });
    }

    fn report_injection(&self, point: &str, hit: u64, signal: i32) {
        let _ = self.tell(&ToLauncher::Injected {
            point: point.to_string(),
            hit,
            signal,
        });
    }

    fn flush(&self) {
        self.engine.borrow_mut().drain_outbox();
    }

    // ---- communicators ----------------------------------------------------

    #[inline]
    fn next_ctx(&self) -> u32 {
        self.next_ctx.get()
    }

    #[inline]
    fn use_ctx(&self, ctx: u32) {
        self.next_ctx.set(self.next_ctx.get().max(ctx + 4));
    }

    fn reserve(&self) -> Result<Token> {
        self.engine.borrow_mut().alloc_entry()
    }

    fn unreserve(&self, t: Token) {
        self.engine.borrow_mut().unreserve_entry(t);
    }

    fn token_from(&self, w: u32) -> Option<Token> {
        (w < pertinax_os::segment::FT_ENTRIES as u32).then_some(w as u16)
    }

    fn attach(
        &self,
        ctx: u32,
        rank: u32,
        peers: &Peers,
        tokens: &[Token],
        remote: Option<(&Peers, &[Token])>,
    ) -> CommState {
        self.use_ctx(ctx);
        let mut members: Vec<Member> = members_of(peers, tokens).collect();
        let entry = tokens.get(rank as usize).copied().unwrap_or(0);
        if let Some((p, e)) = remote {
            members.extend(members_of(p, e));
        }
        let members: Rc<[Member]> = members.into();
        let mut e = self.engine.borrow_mut();
        let top = members
            .iter()
            .map(|m| m.slot as usize + 1)
            .max()
            .unwrap_or(0);
        e.watch_slots(top);
        e.register(ctx, entry, members.clone());
        CommState { entry, members }
    }

    fn release(&self, ctx: u32, st: &CommState) {
        if let Ok(mut e) = self.engine.try_borrow_mut() {
            e.release(ctx, st.entry);
        }
    }

    // ---- point-to-point ---------------------------------------------------

    #[inline]
    fn send_eager(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        self.engine
            .borrow_mut()
            .send_eager(dest, dest_rank, ctx, src, tag, data)
    }

    fn bsend(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        data: &[u8],
    ) -> Result<()> {
        self.engine
            .borrow_mut()
            .bsend(dest, dest_rank, ctx, src, tag, data)
    }

    #[inline]
    fn isend(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        self.engine
            .borrow_mut()
            .isend(dest, dest_rank, ctx, src, tag, buf)
    }

    fn issend(
        &self,
        dest: usize,
        dest_rank: u32,
        ctx: u32,
        src: u32,
        tag: i32,
        buf: SendBuf,
    ) -> Result<ReqKey> {
        self.engine
            .borrow_mut()
            .issend(dest, dest_rank, ctx, src, tag, buf)
    }

    #[inline]
    fn irecv(&self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> ReqKey {
        self.engine.borrow_mut().irecv(spec, peers, buf, elem)
    }

    /// One borrow of the engine for the post and the wait (as before the
    /// contract: the blocking receive is the ping-pong's hot path).
    #[inline]
    fn recv(&self, spec: MatchSpec, peers: Peers, buf: RecvBuf, elem: usize) -> Result<Status> {
        let mut e = self.engine.borrow_mut();
        let k = e.irecv(spec, peers, buf, elem);
        e.wait(k)
    }

    #[inline]
    fn recv_direct(&self, spec: &MatchSpec, buf: &mut [u8], elem: usize) -> Option<Result<Status>> {
        self.engine.borrow_mut().recv_direct(spec, buf, elem)
    }

    #[inline]
    fn find(&self, spec: &MatchSpec) -> Option<Status> {
        self.engine.borrow().find(spec)
    }

    fn probe_doomed(&self, spec: &MatchSpec, peers: &[u32]) -> Option<Error> {
        self.engine.borrow().probe_doomed(spec, peers)
    }

    // ---- requests ---------------------------------------------------------

    #[inline]
    fn take(&self, k: ReqKey) -> Result<Option<Result<Status>>> {
        self.engine.borrow_mut().take(k)
    }

    #[inline]
    fn wait(&self, k: ReqKey) -> Result<Status> {
        self.engine.borrow_mut().wait(k)
    }

    fn cancel(&self, k: ReqKey) -> Result<bool> {
        self.engine.borrow_mut().cancel(k)
    }

    fn forget(&self, k: ReqKey) {
        if let Ok(mut e) = self.engine.try_borrow_mut() {
            e.forget(k);
        }
    }

    #[inline]
    fn is_done(&self, k: ReqKey) -> bool {
        self.engine.borrow().is_done(k)
    }

    fn request_failed(&self, k: ReqKey) -> bool {
        self.engine.borrow().failed(k)
    }

    fn start_task(&self, t: Box<dyn Task>) -> ReqKey {
        self.engine.borrow_mut().start_task(t)
    }

    // ---- failures and revocation -----------------------------------------

    fn revoke(&self, ctx: u32) {
        self.engine.borrow_mut().revoke(ctx);
    }

    #[inline]
    fn is_revoked(&self, ctx: u32) -> bool {
        self.engine.borrow().is_revoked(ctx)
    }

    fn failed_among(&self, st: &CommState) -> Vec<u32> {
        let slots: Vec<u32> = st.members.iter().map(|m| m.slot).collect();
        self.engine.borrow().failed_among(&slots)
    }

    fn ack_failed(&self, ctx: u32, st: &CommState, n: usize) -> usize {
        let slots: Vec<u32> = st.members.iter().map(|m| m.slot).collect();
        self.engine.borrow_mut().ack_failed(ctx, &slots, n)
    }

    fn acked(&self, ctx: u32) -> Vec<u32> {
        self.engine.borrow().acked(ctx)
    }

    // ---- agreement --------------------------------------------------------

    fn next_agree_seq(&self, seq: u32) -> u32 {
        engine::next_seq(seq)
    }

    fn contribute(&self, ctx: u32, seq: u32, call: RecoveryCall, words: [u32; 4], st: &CommState) {
        self.engine
            .borrow()
            .contribute(st.entry, ctx, seq, call.code(), words, &st.members);
    }

    fn poll_agreement(
        &self,
        ctx: u32,
        seq: u32,
        st: &CommState,
        got: &mut [Option<Record>],
    ) -> bool {
        let e = self.engine.borrow();
        let mut all = true;
        for (g, &m) in got.iter_mut().zip(st.members.iter()) {
            if g.is_none() {
                *g = e.contribution(m, ctx, seq);
                all &= g.is_some();
            }
        }
        all
    }

    fn member_id(&self, st: &CommState, i: usize) -> u32 {
        st.members.get(i).map_or(u32::MAX, |m| m.slot)
    }

    // ---- spawn ------------------------------------------------------------

    fn spawn_max(&self) -> usize {
        pertinax_os::segment::PUBLISH_MAX
    }

    fn request_stamp(&self, ctx: u32, attempt: u32) -> u64 {
        engine::stamp(ctx, attempt)
    }

    fn request_processes(&self, r: ProcRequest<'_>) -> Result<()> {
        let msg = ToLauncher::Spawn {
            stamp: r.stamp,
            program: r.program.map(|p| p.0.to_string()),
            args: r
                .program
                .map_or_else(Vec::new, |p| p.1.iter().map(|s| s.to_string()).collect()),
            count: r.count as u32,
            use_spares: r.spares,
            payload: r.payload,
            replaces: r.replaces,
        };
        let mut c = self.ctrl.borrow_mut();
        let sock = c.as_mut().ok_or_else(|| {
            Error::SpawnFailed("a singleton job has no launcher to start processes".into())
        })?;
        ctrl::write_frame(sock, &msg)
            .map_err(|e| Error::SpawnFailed(format!("cannot reach the launcher: {e}")))
    }

    fn await_processes(
        &self,
        asker: usize,
        stamp: u64,
        _among: &[u32],
        _parent: &CommState,
    ) -> Option<Result<Vec<u32>, u32>> {
        let mut e = self.engine.borrow_mut();
        loop {
            e.progress();
            if let Some(p) = e.publication(asker, stamp) {
                if asker == e.slot() && p.is_ok() {
                    drop(e);
                    crate::inject::fault_point("ft.spawn.started");
                }
                return Some(p);
            }
            if e.slot_ended(asker) {
                // Read again: the launcher answers before it marks a death.
                return e.publication(asker, stamp);
            }
            pertinax_os::yield_cpu();
        }
    }
}
