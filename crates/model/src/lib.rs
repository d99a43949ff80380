//! The record of a profile, plain data: the parts of an iteration's time, run reports and their
//! one accounting, query plans, a load test's steps and the demo tables.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod demo;
pub mod load;
pub mod part;
pub mod plan;
pub mod report;
pub mod retry_lab;

use spanprof_base::{fnv, stats, text, units};
use spanprof_wire::{kind, wire};
