//! spanprof: a profiler for Cloud Spanner queries.
//!
//! The binary is a thin layer over this library, so that tests, the command line and the
//! desktop app drive the same code. See `ARCHITECTURE.md` for a line on each module.

pub mod analysis;
pub mod app;
pub mod children;
pub mod cli;
pub mod client;
pub mod demo;
pub mod emulator;
pub mod engine;
pub mod export;
pub mod files;
pub mod fnv;
pub mod history;
pub mod kind;
pub mod load;
pub mod part;
pub mod plan;
pub mod proto;
pub mod report;
pub mod server;
pub mod stats;
pub mod subject;
pub mod text;
pub mod units;
pub mod wire;
