//! A client's statement on its SQLite connection: its `@name` parameters bound, what the sandbox
//! refused said in Spanner's words, its plan steps (`EXPLAIN QUERY PLAN`), and SQLite's errors as
//! Spanner reports them. The query thread and PartitionQuery's planner both prepare statements
//! this way.

use std::collections::HashMap;

use rusqlite::{Connection, Statement};
use tonic::Status;

use super::columns::Param;
use super::sandbox::{Refusal, Sandbox};

/// One line of SQLite's `EXPLAIN QUERY PLAN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanLine {
    /// Its id.
    pub id: i64,
    /// Its parent's id (0 at the top).
    pub parent: i64,
    /// SQLite's description ("SCAN Seed23 VIRTUAL TABLE INDEX 0:").
    pub detail: String,
}

/// Binds `@name` parameters; a parameter in the SQL without a value is an error, as in Spanner.
pub fn bind(stmt: &mut Statement<'_>, params: &HashMap<String, Param>) -> Result<(), Status> {
    for i in 1..=stmt.parameter_count() {
        let name = stmt.parameter_name(i).map(str::to_owned);
        let Some(name) = name.as_deref().and_then(|n| n.strip_prefix('@')) else {
            return Err(Status::invalid_argument(format!(
                "query parameter {i} is not named: use @name parameters"
            )));
        };
        let param = params.get(name).ok_or_else(|| {
            Status::invalid_argument(format!("No parameter found for binding: {name}"))
        })?;
        stmt.raw_bind_parameter(i, &param.value)
            .map_err(sql_error)?;
    }
    Ok(())
}

/// A statement the sandbox refused, as the rule that refused it says; any other error as SQLite's.
pub fn refused(e: rusqlite::Error, sandbox: &Sandbox) -> Status {
    match sandbox.take_refusal() {
        Some(Refusal::Write) => read_only(),
        Some(Refusal::Forbidden(what)) => Status::invalid_argument(format!(
            "{what} is not allowed: the built-in local instance only reads its tables"
        )),
        None => sql_error(e),
    }
}

/// A statement that would write, outside a read-write transaction (a query's connection only
/// reads): DML needs a read-write transaction, and DDL goes through the admin API.
pub fn read_only() -> Status {
    Status::failed_precondition(
        "DML statements can only be performed in a read-write transaction (begin one, or use the          selector's begin with read_write options); single-use and read-only transactions only          read, and DDL is not served by ExecuteSql",
    )
}

/// The plan steps of `sql` (SQLite's `EXPLAIN QUERY PLAN`); none when SQLite cannot explain it.
pub fn explain(conn: &Connection, sql: &str) -> Result<Vec<PlanLine>, Status> {
    let mut stmt = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .map_err(sql_error)?;
    let steps = stmt
        .query_map([], |row| {
            Ok(PlanLine {
                id: row.get(0)?,
                parent: row.get(1)?,
                detail: row.get(3)?,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>());
    // Unbound parameters make EXPLAIN fail in a few cases; the plan is then simply missing a step list.
    Ok(steps.unwrap_or_default())
}

/// An SQLite error as Spanner would report it: INVALID_ARGUMENT with the engine's message, and the
/// table named when it is unknown.
pub fn sql_error(e: rusqlite::Error) -> Status {
    if let Some(refusal) = super::memory::take_refusal() {
        return Status::invalid_argument(format!(
            "string or blob too big: a value the query was building needed {} bytes while it \
             grew, more than twice the largest value the local instance allows ({} bytes, \
             max_value_bytes)",
            refusal.block_bytes, refusal.max_value_bytes
        ));
    }
    let message = match &e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        other => other.to_string(),
    };
    if let Some(table) = message.strip_prefix("no such table: ") {
        return Status::invalid_argument(format!("Table not found: {table} ({message})"));
    }
    if let Some(column) = message.strip_prefix("no such column: ") {
        return Status::invalid_argument(format!("Unrecognized name: {column} ({message})"));
    }
    if message.contains("string or blob too big") {
        return Status::invalid_argument(format!(
            "{message}: a value would be longer than the local instance allows (max_value_bytes)"
        ));
    }
    if message.contains("syntax error") {
        return Status::invalid_argument(format!("Syntax error: {message}"));
    }
    if matches!(e, rusqlite::Error::MultipleStatement) {
        return Status::invalid_argument("only one SQL statement may be executed at a time");
    }
    Status::invalid_argument(message)
}
