//! Progress rounds, waits, the masters' consensus and recovery (see the
//! documentation of [`super`]): how tasks complete, are cleared, fail or
//! run again, and how a master takes their results.

use pertinax::Communicator as _;
use pertinax::CommunicatorExt as _;
use pertinax::{Comm, ANY_SOURCE};
use serde::de::DeserializeOwned;

use super::{retire, Boosters, Domain, Rec, State, Task, TaskState};
use crate::error::{Error, TaskError};
use crate::wire::{self, DoneHeader};

impl Boosters {
    /// One progress round: a receive for the completion header of any
    /// booster of the group, posted before it arrives; waits for it (or,
    /// with `block == false`, only looks whether one is there). A failure
    /// of any booster fails it (an any-source receive cannot complete
    /// while a possible sender's failure is unacknowledged), which sets
    /// `failed`.
    pub(super) fn progress(&mut self, block: bool) {
        if self.failed {
            return;
        }
        let Some(g) = self.group.clone() else {
            self.failed = true;
            return;
        };
        let tag = wire::done_tag(self.stats.recoveries.into());
        let mut hdr: DoneHeader = [0; 4];
        let got = if block {
            g.recv(&mut hdr, ANY_SOURCE, tag)
        } else {
            match g.iprobe(ANY_SOURCE, tag.into()) {
                Ok(Some(st)) => g.recv(&mut hdr, st.source, tag),
                Ok(None) => Ok(None),
                Err(e) => Err(e),
            }
        };
        match got {
            Ok(Some(st)) => self.complete(&g, st.source.index(), hdr, tag + 1),
            Ok(None) => {}
            Err(_) => self.failed = true,
        }
    }

    /// Reads the body that follows booster `j`'s completion header.
    fn complete(&mut self, g: &Comm, j: usize, hdr: DoneHeader, body_tag: i32) {
        let [id, attempt, status, _] = hdr;
        let body = match g.recv_vec::<u8>(j, body_tag) {
            Ok(Some((b, _))) => b,
            Ok(None) | Err(_) => {
                self.failed = true;
                return;
            }
        };
        // The other replica of a task already decided.
        if self.straggling.remove(&(id, attempt)) {
            return;
        }
        let Some(rec) = self.tasks.get_mut(&id) else {
            return;
        };
        if !matches!(rec.state, State::Running) || u64::from(rec.attempts - 1) != attempt {
            return;
        }
        rec.out = rec.out.saturating_sub(1);
        let error = match status {
            wire::DONE_OK => None,
            wire::DONE_UNKNOWN => Some(Error::UnknownTask(rec.name.clone())),
            wire::DONE_TYPE_MISMATCH => Some(Error::TypeMismatch {
                name: rec.name.clone(),
                expected: match wire::decode::<(String, String)>(&body) {
                    Ok((i, o)) => format!("{i} -> {o}"),
                    Err(e) => format!("(unreadable: {e})"),
                },
                given: format!("{} -> {}", rec.types.0, rec.types.1),
            }),
            _ => Some(Error::Task {
                name: rec.name.clone(),
                message: String::from_utf8_lossy(&body).into_owned(),
            }),
        };
        rec.state = match error {
            None => State::Finished(body),
            // The other replica may still succeed.
            Some(e) if rec.out > 0 => {
                rec.first_error.get_or_insert(e);
                return;
            }
            Some(e) => State::Failed(rec.first_error.take().unwrap_or(e)),
        };
        if rec.out > 0 {
            self.straggling.insert((id, attempt));
        }
    }

    /// Waits until every task for which `covered` holds is cleared or
    /// failed: local completion, then (shared) the masters' agreement that
    /// no booster failed, else recovery and again.
    fn wait_set(&mut self, covered: impl Fn(&Rec) -> bool) -> Result<(), Error> {
        if self.group.is_none() {
            return Err(Error::Freed);
        }
        loop {
            loop {
                if self.failed {
                    break;
                }
                let pending = self
                    .tasks
                    .values()
                    .any(|t| covered(t) && matches!(t.state, State::Running));
                if !pending {
                    // Pick up a failure already known (of an idle booster
                    // too), so the consensus below hears of it.
                    self.progress(false);
                    break;
                }
                self.progress(true);
            }
            let ok = !self.failed;
            let all_ok = if self.shared {
                self.masters.agree(u32::from(ok)).map_err(Error::Masters)? == 1
            } else {
                ok
            };
            if all_ok {
                for t in self.tasks.values_mut().filter(|t| covered(t)) {
                    if let State::Finished(out) = &mut t.state {
                        t.state = State::Cleared(std::mem::take(out));
                    }
                }
                return Ok(());
            }
            self.recover()?;
        }
    }

    /// Replaces the group (a spare or a new spawn) and re-offloads every
    /// task that was running or waiting for clearance.
    fn recover(&mut self) -> Result<(), Error> {
        if let Some(old) = self.group.take() {
            let _ = old.revoke();
            retire(old);
        }
        self.failed = false;
        self.straggling.clear();
        self.stats.recoveries += 1;
        let g = match self.spares.pop_front() {
            Some(g) => {
                self.stats.spares_used += 1;
                g
            }
            None => self.spawn_group()?,
        };
        self.group = Some(g);
        let ids: Vec<u64> = self
            .tasks
            .iter()
            .filter(|(_, t)| matches!(t.state, State::Running | State::Finished(_)))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let max = self.max_attempts;
            let Some(t) = self.tasks.get_mut(&id) else {
                continue;
            };
            if !t.recover {
                t.state = State::Failed(Error::BoosterFailed { booster: t.onto });
                continue;
            }
            if t.attempts >= max {
                t.state = State::Failed(Error::RetriesExceeded {
                    attempts: t.attempts,
                });
                continue;
            }
            t.attempts += 1;
            t.state = State::Running;
            t.out = 1 + u8::from(t.replica.is_some());
            t.first_error = None;
            self.stats.reexecutions += 1;
            if !self.failed {
                if let Some(t) = self.tasks.get(&id) {
                    let r = self.send(id, t);
                    if r.is_err() {
                        self.failed = true;
                    }
                }
            }
        }
        Ok(())
    }

    /// Waits for every outstanding task (the end of the implicit recover
    /// domain, and of every explicit one): afterwards each is cleared or
    /// failed. Collective over the masters for a shared allocation.
    ///
    /// # Errors
    /// [`Error::NoSpawnRoom`] or [`Error::Spawn`] if a replacement group
    /// cannot be started, [`Error::Masters`] if the masters' agreement
    /// fails, [`Error::Freed`].
    pub fn taskwait(&mut self) -> Result<(), Error> {
        self.wait_set(|_| true)
    }

    /// Waits for the tasks of domain `d` only (collective over the masters
    /// for a shared allocation). Tasks of other domains go on running or
    /// waiting for clearance.
    ///
    /// # Errors
    /// As [`Boosters::taskwait`].
    pub fn wait_domain(&mut self, d: Domain) -> Result<(), Error> {
        self.wait_set(|t| t.domain == Some(d))
    }

    /// Advances the tasks without blocking and says where `task` stands:
    /// a loop polls while it is [`TaskState::Running`], then waits for it
    /// ([`Boosters::wait`], or its domain's wait), which clears it or
    /// recovers. Never collective, never blocks.
    ///
    /// ```no_run
    /// # use pertinax_offload::{Boosters, Offload, TaskState};
    /// # fn f(b: &mut Boosters) -> Result<(), pertinax_offload::Error> {
    /// let t = b.offload::<u64, u64>(Offload::new("square", 0).recover(), &7)?;
    /// while b.poll(&t) == TaskState::Running {
    ///     // ... other work ...
    /// }
    /// // WaitingForClearance, or AwaitingRecovery after a booster failure
    /// assert_eq!(b.wait(t).map_err(|e| e.error)?, 49);
    /// # Ok(()) }
    /// ```
    pub fn poll<I, O>(&mut self, task: &Task<I, O>) -> TaskState {
        self.progress(false);
        match self.tasks.get(&task.id).map(|t| &t.state) {
            Some(State::Running | State::Finished(_)) if self.failed => TaskState::AwaitingRecovery,
            Some(State::Running) | None => TaskState::Running,
            Some(State::Finished(_)) => TaskState::WaitingForClearance,
            Some(State::Cleared(_)) => TaskState::Cleared,
            Some(State::Failed(_)) => TaskState::Failed,
        }
    }

    /// Waits for `task`'s domain (for a task of the implicit domain, a
    /// [`Boosters::taskwait`]), then takes its result. Collective over the
    /// masters for a shared allocation.
    ///
    /// # Errors
    /// As [`Boosters::take`], or the wait's error with the input.
    pub fn wait<I: DeserializeOwned, O: DeserializeOwned>(
        &mut self,
        task: Task<I, O>,
    ) -> Result<O, TaskError<I>> {
        let r = match task.domain {
            Some(d) => self.wait_domain(d),
            None => self.taskwait(),
        };
        match r {
            Ok(()) => self.take(task),
            Err(error) => {
                let input = self.tasks.remove(&task.id).map(|t| t.input);
                Err(TaskError {
                    error,
                    input: input.and_then(|b| wire::decode(&b).ok()),
                })
            }
        }
    }

    /// The output of a cleared task, or its error and input.
    ///
    /// # Errors
    /// The task's [`Error`] (with the input handed back), or
    /// [`Error::NotCleared`] (the handle is consumed; the task stays
    /// recorded until its wait, and its output is dropped then).
    pub fn take<I: DeserializeOwned, O: DeserializeOwned>(
        &mut self,
        task: Task<I, O>,
    ) -> Result<O, TaskError<I>> {
        let cleared = matches!(
            self.tasks.get(&task.id).map(|t| &t.state),
            Some(State::Cleared(_) | State::Failed(_))
        );
        let rec = match (cleared, self.tasks.get(&task.id)) {
            (true, _) => self.tasks.remove(&task.id),
            (false, Some(t)) => {
                return Err(TaskError {
                    error: Error::NotCleared,
                    input: wire::decode(&t.input).ok(),
                })
            }
            (false, None) => None,
        };
        let Some(rec) = rec else {
            return Err(TaskError {
                error: Error::NotCleared,
                input: None,
            });
        };
        match rec.state {
            State::Cleared(out) => wire::decode(&out).map_err(|error| TaskError {
                error,
                input: wire::decode(&rec.input).ok(),
            }),
            State::Failed(error) => Err(TaskError {
                error,
                input: wire::decode(&rec.input).ok(),
            }),
            State::Running | State::Finished(_) => Err(TaskError {
                error: Error::NotCleared,
                input: wire::decode(&rec.input).ok(),
            }),
        }
    }
}
