//! The `ResultSetStats` an answer ends with (the query-plan room): what a query measured
//! (`totals.rs`), what its mode asks to report (`report.rs`), `query_stats` in production's formats
//! (`query_stats.rs`), the QueryPlan of SQLite's plan with PROFILE's measured figures
//! (`plan_nodes.rs`), and the optimizer a query asked for (`optimizer.rs`). It reads what the
//! SQLite room says (plan steps, per-loop counters, bytecode) and names nothing else of the server.

pub mod optimizer;
pub mod plan_nodes;
pub mod query_stats;
pub mod report;
pub mod totals;

pub use optimizer::Optimizer;
pub use report::{Report, Waits};
pub use totals::{Measured, ProgramTraits, QueryTotals, ScanTarget};
