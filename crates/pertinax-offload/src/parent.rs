//! [`Parent`]: what [`crate::Boosters::alloc`] takes, any communicator
//! that can be the boosters' parent.
//!
//! Boosters are spawned collectively over a plain [`Comm`] (spawning is an
//! operation of the core's communicators, not of the
//! [`pertinax::Communicator`] trait, which decorators implement without
//! being able to start processes). A communicator can be a parent when it
//! reaches such a `Comm`: the plain one itself, and whatever holds or
//! points to one (`&Comm`, `Box<Comm>`, `Rc<Comm>` such as
//! `pertinax_propagate::Guarded::comm()` of a guard over a plain
//! communicator, `Arc<Comm>`). A type of the application's that holds a
//! `Comm` implements [`Parent`] by returning it. A decorator that does
//! not give its `Comm` out (a resilient communicator) cannot be a parent:
//! allocate over the plain communicator it was made from.
//!
//! ```no_run
//! use std::rc::Rc;
//! use pertinax_offload::Boosters;
//!
//! # fn f(universe: &pertinax::Universe) -> Result<(), pertinax_offload::Error> {
//! let world = universe.world();
//! let plain = Boosters::alloc(&world, 2)?;
//! let shared: Rc<pertinax::Comm> = Rc::new(universe.world());
//! let pointed = Boosters::alloc(&shared, 2)?;
//! # Ok(()) }
//! ```

use std::rc::Rc;
use std::sync::Arc;

use pertinax::Comm;

/// A communicator that can be the parent of boosters: it gives the plain
/// [`Comm`] they are spawned over (collectively, by every member).
pub trait Parent {
    /// The plain communicator of the masters.
    fn parent_comm(&self) -> &Comm;
}

impl Parent for Comm {
    fn parent_comm(&self) -> &Comm {
        self
    }
}

impl<P: Parent + ?Sized> Parent for &P {
    fn parent_comm(&self) -> &Comm {
        (**self).parent_comm()
    }
}

impl<P: Parent + ?Sized> Parent for &mut P {
    fn parent_comm(&self) -> &Comm {
        (**self).parent_comm()
    }
}

impl<P: Parent + ?Sized> Parent for Box<P> {
    fn parent_comm(&self) -> &Comm {
        (**self).parent_comm()
    }
}

impl<P: Parent + ?Sized> Parent for Rc<P> {
    fn parent_comm(&self) -> &Comm {
        (**self).parent_comm()
    }
}

impl<P: Parent + ?Sized> Parent for Arc<P> {
    fn parent_comm(&self) -> &Comm {
        (**self).parent_comm()
    }
}
