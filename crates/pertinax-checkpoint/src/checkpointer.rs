//! [`Checkpointer`]: one rank's side of the coordinated checkpoint
//! (construction, [`Checkpointer::checkpoint`], the queries, the files).
//! The restore is in `restore.rs`; both end with the same kind of
//! agreement, judged by [`Step::verdict`].

use pertinax::CommunicatorExt as _;
use std::path::PathBuf;

use pertinax::{Agreement, Comm, Rank};

use crate::disk::Disk;
use crate::store::Versions;
use crate::{format, Error};

/// The first of the tags this crate uses on the communicator given to
/// [`Checkpointer::checkpoint`] and [`Checkpointer::restore`]: the 16 tags
/// `FIRST_RESERVED_TAG..=FIRST_RESERVED_TAG + 15` are reserved (the
/// program must not send with them on that communicator, nor receive
/// with `ANY_TAG` while a checkpoint or restore runs). They lie below the
/// tags `pertinax-msglog` and `pertinax-propagate` keep.
pub const FIRST_RESERVED_TAG: i32 = pertinax::TAG_UB - 31;
/// The buddy copy of a checkpoint.
pub(crate) const TAG_COPY: i32 = FIRST_RESERVED_TAG;
/// A restore's first step: a rank's own image, from its buddy.
pub(crate) const TAG_OWN: i32 = FIRST_RESERVED_TAG + 1;
/// A restore's second step: the buddy copy, from the previous rank.
pub(crate) const TAG_BUDDY: i32 = FIRST_RESERVED_TAG + 2;

/// What a [`Checkpointer`] is asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Committed versions kept per rank (its own, and as many copies of
    /// its previous rank's): at least 2, so that a version that fails
    /// verification leaves an older one. Default 2.
    pub keep: usize,
    /// Also keep each rank's own versions on disk, in `dir/rank-R/` (the
    /// folder `dir` is the caller's; it must hold only checkpoints of
    /// this computation, since a restore uses what it finds there).
    /// Without it a rank and its buddy must not fail together, nor the
    /// buddy during the rank's recovery (see the [crate's
    /// limits](crate#limits)).
    pub dir: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Config {
        Config { keep: 2, dir: None }
    }
}

/// The committed versions a rank holds in memory that verify.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// Its own versions (iterations), in increasing order.
    pub own: Vec<u64>,
    /// The versions of the copies it keeps for its previous rank
    /// (`(rank - 1 + n) % n`), in increasing order.
    pub buddy: Vec<u64>,
}

/// One rank's checkpoints: see the [crate documentation](crate).
#[derive(Debug)]
pub struct Checkpointer {
    pub(crate) rank: usize,
    pub(crate) size: usize,
    pub(crate) keep: usize,
    pub(crate) disk: Option<Disk>,
    /// This rank's committed images.
    pub(crate) own: Versions,
    /// The committed images of the previous rank's state.
    pub(crate) buddy: Versions,
}

// The bits of the flags each member contributes to a step's agreement: a
// member clears the bit of each thing that went wrong at it, so the AND
// tells every member what went wrong somewhere.
/// No fault (process failure, revocation) in the transfers.
pub(crate) const OK_FAULT: u32 = 1;
/// The files were written.
pub(crate) const OK_IO: u32 = 2;
/// Every copy received or read verified.
pub(crate) const OK_CORRUPT: u32 = 4;
/// No other error of the core.
pub(crate) const OK_OTHER: u32 = 8;
/// The restore found a version (no `Lost`, no `NoCheckpoint`).
pub(crate) const OK_PLAN: u32 = 16;
/// Everything went well.
pub(crate) const ALL_OK: u32 = 31;

/// One member's record of a collective step until its agreement.
#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) flags: u32,
    /// The first error seen here.
    pub(crate) local: Option<Error>,
}

impl Step {
    pub(crate) fn new() -> Step {
        Step {
            flags: ALL_OK,
            local: None,
        }
    }

    /// Records an error. A fault also revokes `comm`, so that no member
    /// waits for a message from this one, which goes to the agreement.
    pub(crate) fn fail(&mut self, comm: &Comm, e: Error) {
        let bit = match &e {
            _ if e.is_fault() => {
                // Its error does not matter: the agreement follows.
                let _ = comm.revoke();
                OK_FAULT
            }
            Error::Io(_) => OK_IO,
            Error::Corrupt { .. } => OK_CORRUPT,
            Error::Lost { .. } | Error::NoCheckpoint => OK_PLAN,
            _ => OK_OTHER,
        };
        self.flags &= !bit;
        if self.local.is_none() {
            self.local = Some(e);
        }
    }

    /// The agreement on this step, and what it means here: `Ok` iff every
    /// member did its part and none failed or finalized (the same
    /// everywhere). Otherwise, in this order: `ProcFailed` naming the
    /// failed members; a fault (this rank's own, or `Revoked`, after
    /// revoking); the restore's `Lost` or `NoCheckpoint` (computed from the
    /// same data everywhere); `Incomplete` if members finalized; this
    /// rank's own error, or `Incomplete` saying what went wrong elsewhere.
    pub(crate) fn verdict(mut self, comm: &Comm, iteration: u64) -> Result<(), Error> {
        let a: Agreement = comm.agree_detailed(self.flags)?;
        if a.flags == ALL_OK && a.failed.is_empty() && a.finalized.is_empty() {
            return Ok(());
        }
        if !a.failed.is_empty() {
            return Err(Error::Comm(pertinax::Error::ProcFailed { ranks: a.failed }));
        }
        if a.flags & OK_FAULT == 0 {
            return Err(match self.local.take() {
                Some(e) if e.is_fault() => e,
                _ => {
                    let _ = comm.revoke();
                    Error::Comm(pertinax::Error::Revoked)
                }
            });
        }
        if a.flags & OK_PLAN == 0 {
            if let Some(e) = self.local.take() {
                return Err(e);
            }
        }
        if !a.finalized.is_empty() {
            let f: Vec<usize> = a.finalized.iter().map(|r: &Rank| r.index()).collect();
            return Err(Error::Incomplete {
                iteration,
                why: format!("rank(s) {f:?} finalized and took no part"),
            });
        }
        if let Some(e) = self.local.take() {
            return Err(e);
        }
        let mut what = Vec::new();
        for (bit, says) in [
            (OK_IO, "a member could not write its file"),
            (
                OK_CORRUPT,
                "a member received or read a copy that failed verification",
            ),
            (OK_OTHER, "a member's transfer failed (not a fault)"),
        ] {
            if a.flags & bit == 0 {
                what.push(says);
            }
        }
        Err(Error::Incomplete {
            iteration,
            why: what.join("; "),
        })
    }
}

/// Exchanges with two peers at once: sends `send.0` to rank `send.1` (if
/// any) while it receives a message of any length from `recv` (if any),
/// both with `tag`.
pub(crate) fn exchange(
    comm: &Comm,
    send: Option<(&[u8], usize)>,
    recv: Option<usize>,
    tag: i32,
) -> Result<Option<Vec<u8>>, pertinax::Error> {
    pertinax::scope(|s| {
        let req = match send {
            Some((buf, dest)) => Some(comm.isend(s, buf, dest, tag)?),
            None => None,
        };
        let got = match recv {
            Some(src) => comm.recv_vec::<u8>(src, tag)?.map(|(v, _)| v),
            None => None,
        };
        if let Some(r) = req {
            r.wait()?;
        }
        Ok(got)
    })
}

impl Checkpointer {
    /// A checkpointer for this rank of `comm` (its rank and size are the
    /// ones every later call must have).
    ///
    /// # Errors
    /// `InvalidArgument` for `keep < 2` or an intercommunicator; `Io` if
    /// `dir/rank-R` cannot be created.
    ///
    /// # Panics
    /// Never.
    pub fn new(comm: &Comm, config: Config) -> Result<Checkpointer, Error> {
        if config.keep < 2 {
            return Err(Error::InvalidArgument(format!(
                "keep must be at least 2 (got {}): an older version must remain if the newest \
                 fails verification",
                config.keep
            )));
        }
        if comm.is_inter() {
            return Err(Error::InvalidArgument(
                "checkpoints need an intracommunicator".into(),
            ));
        }
        let rank = comm.rank().index();
        let disk = match &config.dir {
            Some(d) => Some(Disk::create(d, rank)?),
            None => None,
        };
        Ok(Checkpointer {
            rank,
            size: comm.size(),
            keep: config.keep,
            disk,
            own: Versions::default(),
            buddy: Versions::default(),
        })
    }

    pub(crate) fn check_comm(&self, comm: &Comm, what: &str) -> Result<(), Error> {
        let (r, n) = (comm.rank().index(), comm.size());
        if comm.is_inter() || r != self.rank || n != self.size {
            return Err(Error::InvalidArgument(format!(
                "{what} on rank {r} of {n}, but this checkpointer is rank {} of {} (use a \
                 communicator of the same size and rank order, e.g. after replace_failed)",
                self.rank, self.size
            )));
        }
        Ok(())
    }

    pub(crate) fn prev(&self) -> usize {
        (self.rank + self.size - 1) % self.size
    }

    pub(crate) fn next(&self) -> usize {
        (self.rank + 1) % self.size
    }

    /// Takes a coordinated checkpoint of `state` at `iteration`: collective
    /// over `comm` (every rank, the same iteration).
    ///
    /// The steps: encode `state` ([`crate::encode`]) as the pending
    /// version, kept aside; with a folder, write its file atomically; the
    /// fault point `ckpt`; send a copy to the buddy `(rank + 1) % n` while
    /// receiving the copy of `(rank - 1 + n) % n` (tag
    /// [`FIRST_RESERVED_TAG`]), and verify it; then agree. If every member
    /// did its part and none failed, every member commits (the pending own
    /// and buddy versions become current, versions beyond `keep` are
    /// dropped, oldest first, with their files) and returns `Ok`;
    /// otherwise every member discards the pending version (and its file)
    /// and returns an error. The agreement is uniform, so the survivors
    /// all commit, or none does.
    ///
    /// # Errors
    /// A fault ([`Error::is_fault`]: `Comm(ProcFailed)` naming the failed
    /// members, or `Comm(Revoked)`) at every member when a member failed
    /// or met a fault; the caller recovers (revoke, `replace_failed`,
    /// [`Checkpointer::restore`]). Without a fault, a member that could
    /// not write its file returns `Io`, one whose received copy failed
    /// verification `Corrupt`, and the others `Incomplete`: nothing was
    /// committed and the communicator is intact. `InvalidArgument` (at
    /// once, before any communication) for another communicator than the
    /// checkpointer's or an iteration not above [`Checkpointer::latest`].
    /// `Comm` with another error of the core's agreement.
    ///
    /// # Panics
    /// Never.
    pub fn checkpoint(&mut self, comm: &Comm, iteration: u64, state: &[u8]) -> Result<(), Error> {
        self.check_comm(comm, "checkpoint")?;
        if let Some(l) = self.latest() {
            if iteration <= l {
                return Err(Error::InvalidArgument(format!(
                    "checkpoint of iteration {iteration}, but {l} is already committed \
                     (versions must increase)"
                )));
            }
        }
        let (me, n, prev) = (self.rank, self.size, self.prev());
        let mut step = Step::new();
        // The pending version, aside until the agreement.
        let image = format::encode(me, n, iteration, state);
        let mut wrote = false;
        if let Some(d) = &self.disk {
            match d.write(iteration, &image) {
                Ok(()) => wrote = true,
                Err(e) => step.fail(comm, e),
            }
        }
        pertinax::fault_point("ckpt");
        let copy = if n == 1 {
            Some(image.clone())
        } else {
            match exchange(comm, Some((&image, self.next())), Some(prev), TAG_COPY) {
                Ok(got) => got,
                Err(e) => {
                    step.fail(comm, e.into());
                    None
                }
            }
        };
        if let Some(c) = &copy {
            if let Err(why) = format::verify(c, prev, n, iteration) {
                step.fail(
                    comm,
                    Error::Corrupt {
                        rank: prev,
                        iteration,
                        why: format!("copy received from rank {prev}: {why}"),
                    },
                );
            }
        }
        match (step.verdict(comm, iteration), copy) {
            (Ok(()), Some(copy)) => {
                self.own.insert(iteration, image);
                self.buddy.insert(iteration, copy);
                self.own.prune(self.keep);
                self.buddy.prune(self.keep);
                self.sync_disk();
                Ok(())
            }
            (r, _) => {
                if wrote {
                    if let Some(d) = &self.disk {
                        // Best effort: a file left behind is of a version
                        // no survivor holds, never chosen by a restore
                        // (which also deletes files newer than the version
                        // it restores), and deleted by the next commit.
                        let _ = d.remove(iteration);
                    }
                }
                // `Ok` without a copy cannot happen: a member without its
                // copy cleared a bit.
                r.and(Err(Error::Incomplete {
                    iteration,
                    why: "no copy received".into(),
                }))
            }
        }
    }

    /// Takes part in the checkpoint of `iteration` without a state, in the
    /// place of [`Checkpointer::checkpoint`], for a rank that met a fault
    /// before it (in its computation): passes the fault point `ckpt`,
    /// revokes `comm` (so the members that are exchanging copies stop
    /// waiting for this one) and joins the checkpoint's agreement, so that
    /// every member makes the same recovery calls. Nothing is committed
    /// anywhere; returns the error every member gets, a fault.
    ///
    /// ```text
    /// let r = compute(&comm, &mut state, to);        // iterations up to the sync point
    /// let c = match r {
    ///     Ok(()) => ck.checkpoint(&comm, to, &state),
    ///     Err(e) if e.is_fault() => Err(ck.abandon(&comm, to)),
    ///     Err(e) => return Err(e),
    /// };
    /// ```
    ///
    /// # Errors
    /// Returns the error rather than a `Result`: the fault every member
    /// gets (`Comm(ProcFailed)` or `Comm(Revoked)`), or `InvalidArgument`
    /// at once for another communicator than the checkpointer's.
    ///
    /// # Panics
    /// Never.
    pub fn abandon(&mut self, comm: &Comm, iteration: u64) -> Error {
        if let Err(e) = self.check_comm(comm, "abandon") {
            return e;
        }
        pertinax::fault_point("ckpt");
        let mut step = Step::new();
        step.fail(comm, Error::Comm(pertinax::Error::Revoked));
        match step.verdict(comm, iteration) {
            Err(e) => e,
            Ok(()) => Error::Incomplete {
                iteration,
                why: "abandoned, yet agreed complete".into(),
            },
        }
    }

    /// Makes the folder hold exactly the files of the own versions in
    /// memory (after a commit or a restore). Best effort: a file that
    /// cannot be deleted now is deleted by a later call; a restore never
    /// uses a version some survivor does not hold.
    pub(crate) fn sync_disk(&self) {
        if let Some(d) = &self.disk {
            if let Ok(list) = d.list() {
                for it in list {
                    if self.own.get(it).is_none() {
                        let _ = d.remove(it);
                    }
                }
            }
        }
    }

    /// The committed versions held in memory that verify (checksum and
    /// header): this rank's own, and the copies of its previous rank's.
    pub fn held(&self) -> Held {
        Held {
            own: self.own.verified(self.rank, self.size),
            buddy: self.buddy.verified(self.prev(), self.size),
        }
    }

    /// The newest committed version of this rank's own state, if any.
    pub fn latest(&self) -> Option<u64> {
        self.own.newest()
    }

    /// The folder of this rank's files (`dir/rank-R`), with a `dir`.
    pub fn files_dir(&self) -> Option<&std::path::Path> {
        self.disk.as_ref().map(Disk::dir)
    }

    /// Deletes this rank's checkpoint files and, if nothing else is in
    /// it, its folder `dir/rank-R` (the folder `dir` stays the user's).
    /// The versions in memory stay.
    ///
    /// # Errors
    /// `Io` if a file cannot be deleted.
    pub fn remove_files(&self) -> Result<(), Error> {
        match &self.disk {
            Some(d) => d.remove_all(),
            None => Ok(()),
        }
    }
}
