//! The backend contract ([`pertinax_backend`], its prose and traits) as the
//! API sees it, and the backend this process runs on ([`Active`],
//! [`start`]: `dispatch.rs`).

pub(crate) use pertinax_backend::*;

pub(crate) use crate::dispatch::{start, Active};
