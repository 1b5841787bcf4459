//! [`Checkpointer::restore`]: the collective that gives every rank its
//! state back after a non-shrinking recovery.

use pertinax::Comm;
use pertinax::CommunicatorExt as _;

use crate::checkpointer::{exchange, Step, TAG_BUDDY, TAG_OWN};
use crate::plan::{plan, Avail, BuddyFrom, OwnFrom, Plan};
use crate::{format, Checkpointer, Error};

impl Checkpointer {
    /// Restores the newest version every rank can obtain: collective over
    /// a repaired communicator of the same size and rank order as the
    /// checkpointer's (after `replace_failed`). `fresh`: this process lost
    /// its memory (a replacement; its checkpointer is new); what it holds
    /// is forgotten. Returns the version (iteration) and this rank's state
    /// at it.
    ///
    /// The steps: every rank lists what it holds that verifies (its own
    /// versions and its buddy copies in memory, its files) and the lists
    /// are allgathered; every rank computes the same plan (the newest
    /// version `v` that every rank can obtain: its own copy, else its file,
    /// else its buddy's copy); the fault point `ckpt.restore`; a rank that
    /// lacks its own `v` gets it (file, or from its buddy `(rank + 1) % n`),
    /// then a rank that lacks its buddy copy of `v` gets it from
    /// `(rank - 1 + n) % n`; everything received or read is verified; a
    /// rank with a folder writes its `v` if its file is missing; then all
    /// agree. On success every rank holds its own `v` and the buddy copy
    /// of its previous rank's `v`, and no version newer than `v` (in
    /// memory or on disk: they belong to the future being rolled back).
    ///
    /// A copy that does not verify is never used: it counts as not held,
    /// so an older version may be chosen. A failure during the restore
    /// gives a fault at every rank, and the restore can be called again
    /// after the next `replace_failed`; verified copies received in the
    /// failed attempt are kept (pass `fresh = false` then, unless the
    /// process is new).
    ///
    /// # Errors
    /// At every rank alike: `Lost` naming the rank whose state has no
    /// verified copy anywhere (e.g. "rank 2 and its buddy 3 both lost
    /// their memory and there is no disk copy of rank 2's state"), or no
    /// version common to all; `NoCheckpoint` if nobody holds any version;
    /// a fault (`Comm(ProcFailed)`, `Comm(Revoked)`). Without a fault, the
    /// rank whose received or read copy fails verification returns
    /// `Corrupt`, one that cannot write its file `Io`, the others
    /// `Incomplete`. `InvalidArgument` (at once) for a communicator of
    /// another size or rank.
    ///
    /// # Panics
    /// Never.
    pub fn restore(&mut self, comm: &Comm, fresh: bool) -> Result<(u64, Vec<u8>), Error> {
        self.check_comm(comm, "restore")?;
        if fresh {
            self.own.clear();
            self.buddy.clear();
        }
        let own = self.own.verified(self.rank, self.size);
        let buddy = self.buddy.verified(self.prev(), self.size);
        let mine = Avail {
            // A process that holds nothing in memory lost it for the
            // messages' purpose (a replacement whose first restore failed).
            fresh: fresh || (own.is_empty() && buddy.is_empty()),
            own,
            buddy,
            disk: self.verified_files(),
        };
        let mut step = Step::new();
        let mut v = None;
        match gather(comm, &mine) {
            Err(e) => step.fail(comm, e),
            Ok(all) => match plan(&all) {
                Err(e) => step.fail(comm, e),
                Ok(p) => {
                    pertinax::fault_point("ckpt.restore");
                    v = Some(p.v);
                    self.transfer(comm, &p, &mine, &mut step);
                }
            },
        }
        step.verdict(comm, v.unwrap_or(0))?;
        let v = v.ok_or_else(|| Error::InvalidArgument("restore agreed without a plan".into()))?;
        self.own.drop_newer(v);
        self.buddy.drop_newer(v);
        self.own.prune(self.keep);
        self.buddy.prune(self.keep);
        self.sync_disk();
        let img = self.own.get(v).ok_or(Error::Lost {
            rank: self.rank,
            why: format!(
                "rank {} does not hold the version {v} it restored",
                self.rank
            ),
        })?;
        let payload =
            format::verify(img, self.rank, self.size, v).map_err(|why| Error::Corrupt {
                rank: self.rank,
                iteration: v,
                why: why.to_string(),
            })?;
        Ok((v, payload.to_vec()))
    }

    /// The iterations of this rank's files that verify.
    fn verified_files(&self) -> Vec<u64> {
        let Some(d) = &self.disk else {
            return Vec::new();
        };
        // A folder that cannot be listed holds nothing usable.
        let list = d.list().unwrap_or_default();
        list.into_iter()
            .filter(|&it| {
                d.read(it)
                    .is_ok_and(|b| format::verify(&b, self.rank, self.size, it).is_ok())
            })
            .collect()
    }

    /// The restore's transfers and checks (see [`Checkpointer::restore`]):
    /// every error goes into `step`; the verified images go into memory
    /// at once (they are copies of a committed version, useful to a
    /// repeated restore even if this one fails).
    ///
    /// Every message of the plan is sent, whatever went wrong before
    /// (an image that could not be had goes as an empty message, which its
    /// receiver refuses), so that no rank waits for a message that does
    /// not come; a fault revokes the communicator, which ends every wait.
    fn transfer(&mut self, comm: &Comm, p: &Plan, mine: &Avail, step: &mut Step) {
        let (me, n, prev, next, v) = (self.rank, self.size, self.prev(), self.next(), p.v);
        // 1. Own images: from memory, the file, or the buddy (which sends
        //    its copy to the previous rank if that one needs it).
        let own = match self.own_image(comm, p) {
            Ok(img) => img,
            Err(e) => {
                step.fail(comm, e);
                None
            }
        };
        let mut verified = false;
        if let Some(img) = &own {
            match format::verify(img, me, n, v) {
                Ok(_) => {
                    verified = true;
                    self.own.insert(v, img.clone());
                }
                Err(why) => step.fail(
                    comm,
                    Error::Corrupt {
                        rank: me,
                        iteration: v,
                        why: format!("own image obtained from {:?}: {why}", p.own[me]),
                    },
                ),
            }
        }
        // 2. Buddy copies: from memory, or from the previous rank, which
        //    now has its own image.
        let send = n > 1 && p.buddy[next] == BuddyFrom::Previous;
        let recv = n > 1 && p.buddy[me] == BuddyFrom::Previous;
        let mut copy = match p.buddy[me] {
            BuddyFrom::Memory => self.buddy.get(v).map(<[u8]>::to_vec),
            BuddyFrom::Previous if n == 1 => own.clone(),
            BuddyFrom::Previous => None,
        };
        if send || recv {
            let out = own.as_deref().unwrap_or_default();
            match exchange(
                comm,
                send.then_some((out, next)),
                recv.then_some(prev),
                TAG_BUDDY,
            ) {
                Ok(got) if recv => copy = got,
                Ok(_) => {}
                Err(e) => step.fail(comm, e.into()),
            }
        }
        match copy {
            Some(c) => match format::verify(&c, prev, n, v) {
                Ok(_) => self.buddy.insert(v, c),
                Err(why) => step.fail(
                    comm,
                    Error::Corrupt {
                        rank: prev,
                        iteration: v,
                        why: format!("buddy copy of rank {prev}'s state: {why}"),
                    },
                ),
            },
            None if step.local.is_none() => step.fail(
                comm,
                Error::Incomplete {
                    iteration: v,
                    why: format!("no copy of rank {prev}'s state at {v} arrived"),
                },
            ),
            None => {}
        }
        // 3. The file of `v`, if it is missing.
        if let (Some(d), Some(img), true) = (&self.disk, &own, verified) {
            if !mine.disk.contains(&v) {
                if let Err(e) = d.write(v, img) {
                    step.fail(comm, e);
                }
            }
        }
    }

    /// Step 1 of the transfers: this rank's own image of `p.v` (not yet
    /// verified if it came from elsewhere), sending the buddy copy this
    /// rank holds to the previous rank if that one needs it.
    fn own_image(&self, comm: &Comm, p: &Plan) -> Result<Option<Vec<u8>>, Error> {
        let (me, n, prev, next, v) = (self.rank, self.size, self.prev(), self.next(), p.v);
        let from = p.own[me];
        if n == 1 {
            return Ok(match from {
                OwnFrom::Memory => self.own.get(v).map(<[u8]>::to_vec),
                OwnFrom::Disk => Some(self.read_file(v)?),
                OwnFrom::Buddy => self.buddy.get(v).map(<[u8]>::to_vec),
            });
        }
        let out = if p.own[prev] == OwnFrom::Buddy {
            Some((self.buddy.get(v).unwrap_or_default(), prev))
        } else {
            None
        };
        let got = exchange(comm, out, (from == OwnFrom::Buddy).then_some(next), TAG_OWN)?;
        Ok(match from {
            OwnFrom::Memory => self.own.get(v).map(<[u8]>::to_vec),
            OwnFrom::Disk => Some(self.read_file(v)?),
            OwnFrom::Buddy => got,
        })
    }

    fn read_file(&self, v: u64) -> Result<Vec<u8>, Error> {
        match &self.disk {
            Some(d) => d.read(v),
            None => Err(Error::Io(format!("no folder to read version {v} from"))),
        }
    }
}

/// Every rank's holdings, in rank order.
fn gather(comm: &Comm, mine: &Avail) -> Result<Vec<Avail>, Error> {
    let n = comm.size();
    let words = mine.to_words();
    let mut counts = vec![0u64; n];
    comm.allgather(&[words.len() as u64], &mut counts)?;
    let counts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
    let mut displs = Vec::with_capacity(n);
    let mut total = 0usize;
    for &c in &counts {
        displs.push(total);
        total = total.saturating_add(c);
    }
    let mut all = vec![0u64; total];
    comm.allgatherv(&words, &mut all, &counts, &displs)?;
    (0..n)
        .map(|r| {
            Avail::from_words(&all[displs[r]..displs[r] + counts[r]]).ok_or_else(|| {
                Error::Comm(pertinax::Error::InvalidArgument(format!(
                    "rank {r}'s list of versions does not decode"
                )))
            })
        })
        .collect()
}
