//! The operations every communicator offers, plain or resilient.

use bytemuck::Pod;
use pertinax::{Comm, Op, Rank, Source};

use crate::{Error, Outcome, Received, World};

/// A communicator: the plain [`Comm`], a [`Resilient`](crate::Resilient) one, or a
/// [`World`] that is either. Application code written against this trait
/// runs unchanged on both.
///
/// On a plain communicator every [`Outcome`] is complete and failures are
/// errors ([`Error::Comm`]); on a resilient one, failures are repaired and
/// reported through [`Outcome`] and [`Communicator::failed_ranks`].
pub trait Communicator {
    /// This process's rank (never changes).
    fn rank(&self) -> Rank;
    /// The number of ranks, failed ones included (never changes).
    fn size(&self) -> usize;
    /// The ranks known to have failed, in increasing order.
    fn failed_ranks(&self) -> Vec<Rank>;
    /// The number of failed ranks.
    fn fault_count(&self) -> usize {
        self.failed_ranks().len()
    }
    /// Blocks until every (live) rank has called it.
    ///
    /// # Errors
    /// See the implementations.
    fn barrier(&self) -> Result<Outcome, Error>;
    /// Broadcasts `buf` from `root`.
    ///
    /// # Errors
    /// See the implementations.
    fn bcast<T: Pod>(&self, buf: &mut [T], root: impl Into<Rank>) -> Result<Outcome, Error>;
    /// Combines every rank's `send` with `op` into `recv` at `root`.
    ///
    /// # Errors
    /// See the implementations.
    fn reduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error>;
    /// Combines every rank's `send` with `op` into every rank's `recv`.
    ///
    /// # Errors
    /// See the implementations.
    fn allreduce<T: Pod>(&self, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<Outcome, Error>;
    /// Collects every rank's `send` into `recv` at `root`, at the rank's
    /// position.
    ///
    /// # Errors
    /// See the implementations.
    fn gather<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error>;
    /// Sends block `i` of `send` at `root` to rank `i`.
    ///
    /// # Errors
    /// See the implementations.
    fn scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error>;
    /// Collects every rank's `send` into every rank's `recv`, at the
    /// rank's position.
    ///
    /// # Errors
    /// See the implementations.
    fn allgather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Error>;
    /// Sends `buf` to `dest`.
    ///
    /// # Errors
    /// See the implementations.
    fn send<T: Pod>(&self, buf: &[T], dest: impl Into<Rank>, tag: i32) -> Result<Outcome, Error>;
    /// Receives into `buf` from `src` (a rank, or any).
    ///
    /// # Errors
    /// See the implementations.
    fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        src: impl Into<Source>,
        tag: i32,
    ) -> Result<Received, Error>;
    /// A new communicator with the same ranks (collective).
    ///
    /// # Errors
    /// See the implementations.
    fn dup(&self) -> Result<Self, Error>
    where
        Self: Sized;
    /// One communicator per `color`, ranks ordered by `key` then rank;
    /// `None` takes part but gets no communicator (collective).
    ///
    /// # Errors
    /// See the implementations.
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Error>
    where
        Self: Sized;
}

impl Communicator for Comm {
    fn rank(&self) -> Rank {
        Comm::rank(self)
    }
    fn size(&self) -> usize {
        Comm::size(self)
    }
    fn failed_ranks(&self) -> Vec<Rank> {
        let Ok(failed) = self.get_failed() else {
            return Vec::new();
        };
        let ranks: Vec<Rank> = (0..failed.size()).map(|r| Rank(r as i32)).collect();
        let mut out: Vec<Rank> = failed
            .translate_ranks(&ranks, &self.group())
            .map(|v| v.into_iter().flatten().collect())
            .unwrap_or_default();
        out.sort();
        out
    }
    fn barrier(&self) -> Result<Outcome, Error> {
        Comm::barrier(self)?;
        Ok(Outcome::default())
    }
    fn bcast<T: Pod>(&self, buf: &mut [T], root: impl Into<Rank>) -> Result<Outcome, Error> {
        Comm::bcast(self, buf, root)?;
        Ok(Outcome::default())
    }
    fn reduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error> {
        Comm::reduce(self, send, recv, op, root)?;
        Ok(Outcome::default())
    }
    fn allreduce<T: Pod>(&self, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<Outcome, Error> {
        Comm::allreduce(self, send, recv, op)?;
        Ok(Outcome::default())
    }
    fn gather<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error> {
        Comm::gather(self, send, recv, root)?;
        Ok(Outcome::default())
    }
    fn scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error> {
        Comm::scatter(self, send, recv, root)?;
        Ok(Outcome::default())
    }
    fn allgather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Error> {
        Comm::allgather(self, send, recv)?;
        Ok(Outcome::default())
    }
    fn send<T: Pod>(&self, buf: &[T], dest: impl Into<Rank>, tag: i32) -> Result<Outcome, Error> {
        Comm::send(self, buf, dest, tag)?;
        Ok(Outcome::default())
    }
    fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        src: impl Into<Source>,
        tag: i32,
    ) -> Result<Received, Error> {
        Ok(Some(Comm::recv(self, buf, src, tag)?))
    }
    fn dup(&self) -> Result<Self, Error> {
        Ok(Comm::dup(self)?)
    }
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Error> {
        Ok(Comm::split(self, color, key)?)
    }
}

/// Forwards every operation to the plain or the resilient communicator.
macro_rules! both {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            World::Plain($c) => $e,
            World::Resilient(b) => {
                let $c = &**b;
                $e
            }
            World::Hierarchical(b) => {
                let $c = &**b;
                $e
            }
        }
    };
}

impl Communicator for World {
    fn rank(&self) -> Rank {
        both!(self, c => c.rank())
    }
    fn size(&self) -> usize {
        both!(self, c => c.size())
    }
    fn failed_ranks(&self) -> Vec<Rank> {
        both!(self, c => c.failed_ranks())
    }
    fn barrier(&self) -> Result<Outcome, Error> {
        both!(self, c => Communicator::barrier(c))
    }
    fn bcast<T: Pod>(&self, buf: &mut [T], root: impl Into<Rank>) -> Result<Outcome, Error> {
        both!(self, c => Communicator::bcast(c, buf, root))
    }
    fn reduce<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &Op<T>,
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error> {
        both!(self, c => Communicator::reduce(c, send, recv, op, root))
    }
    fn allreduce<T: Pod>(&self, send: &[T], recv: &mut [T], op: &Op<T>) -> Result<Outcome, Error> {
        both!(self, c => Communicator::allreduce(c, send, recv, op))
    }
    fn gather<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error> {
        both!(self, c => Communicator::gather(c, send, recv, root))
    }
    fn scatter<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        root: impl Into<Rank>,
    ) -> Result<Outcome, Error> {
        both!(self, c => Communicator::scatter(c, send, recv, root))
    }
    fn allgather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<Outcome, Error> {
        both!(self, c => Communicator::allgather(c, send, recv))
    }
    fn send<T: Pod>(&self, buf: &[T], dest: impl Into<Rank>, tag: i32) -> Result<Outcome, Error> {
        both!(self, c => Communicator::send(c, buf, dest, tag))
    }
    fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        src: impl Into<Source>,
        tag: i32,
    ) -> Result<Received, Error> {
        both!(self, c => Communicator::recv(c, buf, src, tag))
    }
    fn dup(&self) -> Result<Self, Error> {
        Ok(match self {
            World::Plain(c) => World::Plain(Communicator::dup(c)?),
            World::Resilient(c) => World::Resilient(Box::new(Communicator::dup(&**c)?)),
            World::Hierarchical(c) => World::Hierarchical(Box::new(Communicator::dup(&**c)?)),
        })
    }
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Self>, Error> {
        Ok(match self {
            World::Plain(c) => Communicator::split(c, color, key)?.map(World::Plain),
            World::Resilient(c) => {
                Communicator::split(&**c, color, key)?.map(|r| World::Resilient(Box::new(r)))
            }
            World::Hierarchical(c) => {
                Communicator::split(&**c, color, key)?.map(|r| World::Hierarchical(Box::new(r)))
            }
        })
    }
}
