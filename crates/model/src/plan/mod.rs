//! Query plans, pure: what the server's box holds.
//!
//! - [`model`](mod@model): the `QueryPlan` tree as Spanner sends it (relational and scalar nodes,
//!   child links, metadata, short representations) and PROFILE mode's `execution_stats`,
//!   parsed and checked; a malformed plan is a [`PlanError`], never a panic. The same parser
//!   reads the local instance's plans, production's (from the wire, or the REST JSON the Cloud
//!   console downloads) and the plans a report stored.
//! - [`operators`](mod@operators): the relational operator tree, each operator's total and
//!   **self** time (total minus its children's), rows, scanned rows and executions.
//! - [`signature`](mod@signature): a stable hash of a plan's shape, to tell iterations that
//!   ran the same plan from those that did not.
//! - [`history`](mod@history): what a run's report keeps of its plans (each distinct plan, each
//!   iteration's per-operator figures), the aggregate per operator over iterations with the
//!   same plan (median and p90), and where the plan changed.
//! - [`diff`](mod@diff): two plans matched operator by operator.
//! - [`render`](mod@render): trees and diffs as text, JSON and Graphviz DOT.
//!
//! No I/O, no clocks, no UI.

pub mod diff;
pub mod history;
pub mod model;
pub mod operators;
pub mod render;
pub mod signature;

pub use diff::{DiffEntry, DiffKind, PlanDiff, diff};
pub use history::{
    IterationPlan, OperatorSample, OperatorSpread, PlanAggregate, PlanChange, PlanHistory, Spread,
    StoredPlan,
};
pub use model::{ExecutionStats, Figure, Node, NodeKind, PlanError, QueryPlan};
pub use operators::{Figures, Operator, OperatorTree, SelfTime};
pub use signature::signature;
