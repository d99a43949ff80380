//! What a run's timings say (comparisons, causes, timelines), and the exports of run reports.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod analysis;
pub mod export;

use spanprof_base::{files, stats, text};
use spanprof_model::{load, part, plan, report, retry_lab};
#[cfg(test)]
use spanprof_wire::kind;
use spanprof_wire::wire;
