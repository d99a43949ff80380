//! The history of runs: every finished run stored whole, in a local SQLite file or a team's Spanner
//! database.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod history;

use spanprof_analysis::{analysis, export};
use spanprof_base::{fnv, stats};
use spanprof_client::client;
use spanprof_model::{load, part, report};
#[cfg(test)]
use spanprof_wire::kind;
use spanprof_wire::wire;
