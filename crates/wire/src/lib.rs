//! The Spanner wire: the message types and gRPC stubs generated from `proto/`, the decoders of a
//! PartialResultSet stream, column types and typed values, and what kind of run a report holds.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod kind;
pub mod proto;
pub mod wire;

use spanprof_base::{text, units};
