//! The job runner is `pertinax-harness`; this module only re-exports it for
//! test files that still say `mod common;` (to be ported to
//! `use pertinax_harness::...`, then this file removed).
#![allow(unused_imports)]

pub use pertinax_harness::*;
