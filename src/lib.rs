//! spanprof: a profiler for Cloud Spanner queries.
//!
//! The top floor: the command line (`cli`) and, for the binary, the tests and the benchmarks, every
//! floor below by the name it has inside its crate (`spanprof::report`, `spanprof::server`...).
//! See `ARCHITECTURE.md` for a table per floor and a line on each module.

pub mod cli;

pub use spanprof_analysis::{analysis, export};
pub use spanprof_app::app;
pub use spanprof_base::{children, files, fnv, stats, text, units};
pub use spanprof_client::{client, emulator, script, subject};
pub use spanprof_engine::engine;
pub use spanprof_history::history;
pub use spanprof_model::{demo, load, part, plan, report, retry_lab};
pub use spanprof_server::server;
pub use spanprof_wire::{kind, proto, wire};
