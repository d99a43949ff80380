//! The SQLite room of the local instance: the in-memory database and each query's confined
//! connection, the Seed23 virtual table and its row cache, plain scans read from the bytecode,
//! SQLite's per-loop counters, the bound on each block SQLite takes on a query thread, values between SQLite and the wire, result columns and their
//! types, statements prepared and explained, PartitionQuery's planner, the SELECT a Read runs
//! (`read_sql.rs`), the mutations a commit applies (`mutation.rs`), and the schema with the
//! GoogleSQL DDL that changes it (`schema.rs`, `ddl.rs`). The read-write connection is the
//! transactions room's (`txn/write.rs`). It names nothing else
//! of the server but two leaves: the encoded value bodies (`encoded.rs`) and how often a statement
//! is checked for its stop (`control.rs`'s `PROGRESS_OPS`).

pub mod columns;
pub mod db;
pub mod ddl;
pub mod memory;
pub mod mutation;
pub mod opcodes;
pub mod partition;
pub mod read_sql;
pub mod row_cache;
pub mod sandbox;
pub mod scan;
pub(crate) mod scanstatus;
pub mod schema;
mod seed23_table;
pub mod sql_value;
pub mod statement;
pub mod sys_tables;
