//! The SQLite bytecode opcodes the local instance looks for in a statement's program (`EXPLAIN`),
//! named once: the plan reads whether a query aggregates or stops after a number of rows, and
//! PartitionQuery refuses a query with either above its scan. A leaf.

/// The opcodes of aggregate functions: each step, the final value, and a window's value and
/// inverse step (`AggInverse` only ever appears beside `AggStep`, in a sliding window's program).
pub const AGGREGATE: &[&str] = &["AggStep", "AggStep1", "AggFinal", "AggValue", "AggInverse"];
/// LIMIT's counter: the program stops after a number of rows.
pub const LIMIT: &str = "DecrJumpZero";
/// OFFSET's bookkeeping (with a LIMIT).
pub const OFFSET: &str = "OffsetLimit";

/// Whether `opcode` is one of an aggregate function's.
pub fn is_aggregate(opcode: &str) -> bool {
    AGGREGATE.contains(&opcode)
}
