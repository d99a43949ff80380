//! Running a profile or a load test: the only composer. It starts the local instance once per run,
//! hands the client its endpoint and runs the iterations on its own tokio runtime.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod engine;

use spanprof_base::{fnv, stats, text};
use spanprof_client::{client, script, subject};
use spanprof_model::{load, report, retry_lab};
use spanprof_server::server;
use spanprof_wire::{kind, wire};
