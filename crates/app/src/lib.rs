//! The desktop app, over the engine: run a query N times, watch where the time goes, compare runs,
//! export them.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod app;

use spanprof_analysis::{analysis, export};
use spanprof_base::{stats, text};
use spanprof_client::{client, emulator, script, subject};
use spanprof_engine::engine;
use spanprof_history::history;
use spanprof_model::{load, part, plan, report};
use spanprof_server::server;
use spanprof_wire::{kind, wire};
