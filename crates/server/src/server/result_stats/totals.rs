//! What a finished query measured, for its statistics and plan: its totals, what its bytecode
//! does besides its plan steps, what each loop reads, and (PROFILE) the time inside SQLite and
//! SQLite's per-loop counters.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::server::sqlite::opcodes;
use crate::server::sqlite::scan;
use crate::server::sqlite::scanstatus::ScanStatus;
use crate::server::sqlite::statement::PlanLine;

/// Figures about a finished query.
#[derive(Debug, Clone, Default)]
pub struct QueryTotals {
    /// Rows returned.
    pub rows: u64,
    /// Rows the scans read (Seed23 rows generated plus SQLite's full-scan steps).
    pub rows_scanned: u64,
    /// CPU time of the query thread.
    pub cpu_time: Duration,
    /// Time to prepare (parse and plan) the statement.
    pub plan_time: Duration,
    /// `EXPLAIN QUERY PLAN` steps, when asked for.
    pub plan: Option<Vec<PlanLine>>,
    /// What the statement's bytecode does besides its plan steps, when the plan was asked for.
    pub program: ProgramTraits,
    /// What each loop of the plan reads, by plan step id, when the plan was asked for.
    pub targets: BTreeMap<i64, ScanTarget>,
    /// What a PROFILE query measured of its execution.
    pub measured: Option<Measured>,
    /// Whether the rows came from a plain scan's cached wire form (`scan.rs`).
    pub plain_scan: bool,
}

/// What a statement's bytecode shows that `EXPLAIN QUERY PLAN` does not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgramTraits {
    /// It computes aggregate functions (`AggStep`): an aggregate, grouped or not.
    pub aggregate: bool,
    /// It stops after a number of rows (`DecrJumpZero`, LIMIT's counter).
    pub limit: bool,
}

impl ProgramTraits {
    /// The traits of a statement's bytecode.
    pub fn of(ops: &[scan::Op]) -> Self {
        let has = |pick: fn(&str) -> bool| ops.iter().any(|op| pick(op.opcode.as_str()));
        ProgramTraits {
            aggregate: has(opcodes::is_aggregate),
            limit: has(|opcode| opcode == opcodes::LIMIT),
        }
    }
}

/// The table a loop of the plan reads, and the index it reads it through (not the table's own
/// primary-key index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanTarget {
    /// The table (its name, not the query's alias for it).
    pub table: String,
    /// A secondary index, when the loop reads one.
    pub index: Option<String>,
}

/// What a PROFILE query measured of its own execution on the query thread.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// From the first step to the last row handed over: SQLite's work, and the encoding and
    /// handing over of every row.
    pub execution: Duration,
    /// The part of it spent inside SQLite's step.
    pub stepping: Duration,
    /// SQLite's counters per plan element, when it kept them.
    pub scan: Option<ScanStatus>,
}
