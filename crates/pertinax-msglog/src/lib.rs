//! Message logging with local and hybrid rollback, for any iterative
//! kernel (seed `message-logging-local-rollback`, sections 3 to 8, made a
//! library: no replay code in the kernel).
//!
//! TODO(docs): written once the API settles.

#![warn(missing_docs)]

mod config;
mod error;
mod log;
mod logged;
mod report;
mod run;

pub use config::{Config, LogCap, Mode, RollbackPolicy};
pub use error::Error;
pub use logged::{Logged, FIRST_RESERVED_TAG};
pub use report::{Report, Rollback, Stats};
pub use run::run;
