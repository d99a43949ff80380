//! The built-in local instance: a Spanner-compatible gRPC server over an embedded SQLite database.
//! A sibling of the client: neither names the other; the engine starts one and hands the other
//! its endpoint.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod server;

use spanprof_base::fnv;
use spanprof_model::{demo, report};
use spanprof_wire::{proto, wire};
