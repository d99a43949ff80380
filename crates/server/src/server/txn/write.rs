//! The local instance's one read-write connection, on which its read-write transactions'
//! statements and commits run. Who may read and write what, and when, is the lock table's
//! (`txn/locks.rs`, a model of Spanner's locking; the service takes the locks): this file runs
//! the statements and commits, names the rows each one reads and writes, and validates the
//! transactions whose reads take no locks.
//!
//! - A transaction's writes stay with the transaction (its DML, kept by the service). Each of its
//!   statements runs in a short SQLite write transaction on this connection that replays the
//!   transaction's earlier DML, runs the statement, and rolls back: a statement sees the
//!   transaction's own writes, and nobody else sees them before its commit.
//! - The rows a statement reads are named from its program before it runs ([`Writer::reads`],
//!   `txn/rows_read.rs`), so that a pessimistic transaction holds ReaderShared locks on them
//!   before it reads; the rows it writes are caught as it runs (`txn/rows_written.rs`) and locked
//!   at its commit.
//! - The writer keeps a clock, moved on by every commit, and the clock value of each row's last
//!   commit (`txn/versions.rs`). A transaction's snapshot is the clock at its first statement. A
//!   transaction whose reads take no locks (optimistic, or repeatable read) aborts at its commit
//!   when a row it read (optimistic) or writes (repeatable read) was written after its snapshot,
//!   as Spanner validates them. The local instance keeps no older versions: until then its reads
//!   see the latest commits, so a transaction that will abort may have read newer values than its
//!   snapshot's (it never commits them).
//! - A commit replays the DML, applies the mutations and commits in one SQLite transaction: all of
//!   it or nothing.
//!
//! - A DDL statement (`UpdateDatabaseDdl`) runs here too, on its own SQLite transaction: the
//!   SQLite DDL, then the new schema read back, then COMMIT, and only then the catalog replaced
//!   (`schema.rs`); a failure rolls it back whole. It counts as a commit writing the table it
//!   creates, drops or indexes, so a transaction that touched that table aborts at its next
//!   statement or its commit (the simplest safe rule: nothing of a transaction is replayed
//!   against a table that changed under it).
//!
//! One statement or commit runs at a time (the connection is behind a mutex), each bounded in time
//! ([`STATEMENT_TIME`]) because readers that start meanwhile wait for it (`db.rs`): SQLite's memdb
//! refuses new readers while a writer holds its lock. A commit waits (2 s at most) for readers
//! already running to finish before it can write its pages; past that it aborts.

mod footprint;
mod then_return;

pub use footprint::{Footprint, MAX_KEYS_PER_TRANSACTION, Validation};
pub use then_return::then_return;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, ErrorCode};
use tonic::Status;

use crate::report::LockWaitSeen;
use crate::server::sqlite::columns::{self, Column, Param, Pending};
use crate::server::sqlite::db::{self, Database};
use crate::server::sqlite::ddl::Ddl;
use crate::server::sqlite::memory;
use crate::server::sqlite::mutation::{self, Mutation, MutationError};
use crate::server::sqlite::sandbox::{self, Refusal, Sandbox, SqlLimits, Touched};
use crate::server::sqlite::statement::{bind, refused, sql_error};
use crate::server::txn::journal::AbortCause;
use crate::server::txn::lock_key::LockKey;
use crate::server::txn::row_key::MAX_KEYS_PER_STATEMENT;
use crate::server::txn::rows_read::ReadCapture;
use crate::server::txn::rows_written::WriteCapture;
use crate::server::txn::versions::{VERSION_ENTRIES, Versions};
use crate::wire::{Field, Type};

/// The words of an abort for a schema change, and of one for long reads holding the database:
/// [`abort_cause`] tells the aborts this file makes apart by them.
const SCHEMA_CHANGE: &str = "schema change";
const LONG_READS: &str = "long reads";

/// Why this file's ABORTED `status` aborted: a schema change, long reads at a commit, or (every
/// other abort it makes) a lock-free read or repeatable-read write written since the snapshot.
pub fn abort_cause(status: &Status) -> AbortCause {
    let message = status.message();
    if message.contains(LONG_READS) {
        AbortCause::Busy
    } else if message.contains(SCHEMA_CHANGE) {
        AbortCause::SchemaChanged
    } else {
        AbortCause::Validation
    }
}

/// The longest a statement (its replay included) or a commit may run on the read-write
/// connection, while new readers wait for it.
pub const STATEMENT_TIME: Duration = Duration::from_secs(5);

/// A DML statement or query of a read-write transaction, as its request gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct TxnStatement {
    /// The SQL, in GoogleSQL (`THEN RETURN` becomes SQLite's `RETURNING`).
    pub sql: String,
    /// Its `@name` parameters, typed.
    pub params: HashMap<String, Param>,
}

/// What one statement answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Its result columns (none for DML without `THEN RETURN`).
    pub columns: Vec<Field>,
    /// Each row's values, encoded `google.protobuf.Value` bodies, row after row.
    pub values: Vec<Vec<u8>>,
    /// Whether it is DML.
    pub dml: bool,
    /// The rows a DML changed, or a query returned.
    pub row_count: i64,
    /// The tables it read and wrote.
    pub touched: Touched,
    /// The rows it read (as its program names them).
    pub reads: Vec<LockKey>,
    /// The rows and cells it wrote.
    pub writes: Vec<LockKey>,
    /// Its waits for locks, named (the service's to fill in).
    pub lock_waits: Vec<LockWaitSeen>,
    /// The writer's clock when it ran.
    pub since: u64,
    /// What running it cost on the read-write connection.
    pub cost: Cost,
}

/// What one statement cost on the read-write connection, as measured there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Its time on the connection: the replay of its transaction's earlier DML, the statement,
    /// and the rollback after them.
    pub on_writer: Duration,
    /// The CPU time of that work.
    pub cpu: Duration,
    /// Its wait for locks in the lock table (the service's to fill in).
    pub lock_wait: Duration,
    /// Its wait for the connection, which another transaction's statement or commit held, and in
    /// SQLite's busy handler for readers to let go of the database: the model's one writer, not a
    /// lock Spanner has (so not counted as a lock wait).
    pub connection_wait: Duration,
}

/// The bounds a statement or a commit runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteBounds {
    /// SQLite's limits on a value and on SQL text.
    pub limits: SqlLimits,
    /// Bytes of values a statement may return.
    pub max_result_bytes: u64,
    /// Bytes the database may grow to.
    pub max_database_bytes: u64,
}

/// One transaction's commit: its DML to replay, its mutations, and its footprint to validate.
#[derive(Debug, Clone, Default)]
pub struct CommitWork {
    /// The DML its statements ran, in order.
    pub statements: Vec<TxnStatement>,
    /// Its mutations, in order.
    pub mutations: Vec<Mutation>,
    /// What its statements touched.
    pub footprint: Footprint,
    /// What it validates.
    pub validation: Validation,
}

/// The read-write connection and the clock of commits.
#[derive(Debug)]
pub struct Writer {
    db: Arc<Database>,
    open: Mutex<Option<Open>>,
}

#[derive(Debug)]
struct Open {
    conn: Connection,
    sandbox: Arc<Sandbox>,
    /// Commits so far.
    clock: u64,
    /// The clock value of each table's last schema change, by lower-cased name.
    schema_changes: HashMap<String, u64>,
    /// The clock value of each row's last commit.
    rows: Versions,
    /// Names the rows each statement and commit writes.
    write_capture: WriteCapture,
    /// Names the rows each statement reads.
    read_capture: ReadCapture,
}

impl Writer {
    /// The writer of `db`; its connection opens on first use.
    pub fn new(db: Arc<Database>) -> Self {
        Writer {
            db,
            open: Mutex::new(None),
        }
    }

    /// The rows `statement` will read, as its program names them (`txn/rows_read.rs`): what a
    /// pessimistic transaction locks before it runs the statement. A statement that cannot be
    /// prepared fails here as it would when run.
    pub fn reads(
        &self,
        statement: &TxnStatement,
        bounds: WriteBounds,
    ) -> Result<Vec<LockKey>, Status> {
        self.with_open(bounds, |_, open, _| open.reads_of(statement))
    }

    /// Runs `statement` after replaying `earlier` (the transaction's DML so far), then rolls it
    /// all back: what the statement answers, as the transaction sees the database, with the rows
    /// it read and wrote (`reads`: those the caller named already with [`Writer::reads`], else
    /// named here). ABORTED when a table the transaction touched (or the statement touches) was
    /// changed by DDL since the transaction's first statement.
    pub fn run(
        &self,
        footprint: &Footprint,
        earlier: &[TxnStatement],
        (statement, reads): (&TxnStatement, Option<Vec<LockKey>>),
        bounds: WriteBounds,
    ) -> Result<Answer, Status> {
        self.with_open(bounds, |db, open, waited| {
            let (on, cpu) = (Instant::now(), cpu_time::ThreadTime::try_now().ok());
            db::take_reader_wait();
            let since = footprint.since.unwrap_or(open.clock);
            open.validate_schema(footprint.tables.iter(), since)?;
            let reads = match reads {
                Some(reads) => reads,
                None => open.reads_of(statement)?,
            };
            open.server_sql("BEGIN IMMEDIATE")?;
            let ran = open.size().and_then(|before| {
                replay(open, earlier)?;
                open.write_capture.start();
                let answer = execute(db, open, statement, bounds.max_result_bytes)?;
                open.check_growth(before, bounds.max_database_bytes)?;
                Ok(answer)
            });
            let written = open.write_capture.take(&open.sandbox.touched().updated);
            open.server_sql("ROLLBACK")?;
            let mut answer = ran?;
            let touched = &answer.touched;
            open.validate_schema(touched.read.iter().chain(&touched.written), since)?;
            answer.reads = reads;
            answer.writes = written.lock_keys();
            answer.since = since;
            answer.cost = Cost {
                on_writer: on.elapsed(),
                cpu: cpu.map(|t| t.elapsed()).unwrap_or_default(),
                lock_wait: Duration::ZERO,
                connection_wait: waited + db::take_reader_wait(),
            };
            Ok(answer)
        })
    }

    /// Commits each of `works` in order, each in its own SQLite transaction (validated, its DML
    /// replayed, its mutations applied), under one hold of the connection: the commits of one
    /// batch (`max_commit_delay`) are applied together. Each gets its own outcome.
    pub fn commit_all(&self, works: &[CommitWork], bounds: WriteBounds) -> Vec<Result<(), Status>> {
        let outcome = self.with_open(bounds, |_, open, _| {
            Ok(works
                .iter()
                .map(|work| commit_one(open, work, bounds))
                .collect::<Vec<_>>())
        });
        match outcome {
            Ok(each) => each,
            Err(status) => works.iter().map(|_| Err(status.clone())).collect(),
        }
    }

    /// Applies `statements` in order, each in its own SQLite transaction, under one hold of the
    /// connection; the first that fails stops the rest, and those before it stay applied. How
    /// many were applied, and the failure, if one did.
    pub fn apply_ddl(&self, statements: &[Ddl], bounds: WriteBounds) -> (usize, Option<Status>) {
        let outcome = self.with_open(bounds, |db, open, _| {
            for (n, ddl) in statements.iter().enumerate() {
                if let Err(e) = apply_one_ddl(db, open, ddl, bounds) {
                    return Ok((n, Some(e)));
                }
            }
            Ok((statements.len(), None))
        });
        let (applied, failed) = outcome.unwrap_or_else(|e| (0, Some(e)));
        if applied == 0 {
            return (applied, failed);
        }
        // The row watch follows the new schema, once for the batch, in its own time bound.
        let followed = self.with_open(bounds, |db, open, _| {
            let schema = db.schema();
            let (conn, sandbox) = (&open.conn, &open.sandbox);
            open.write_capture
                .refresh(conn, sandbox, &schema)
                .and_then(|()| open.read_capture.refresh(conn, sandbox, &schema))
                .map_err(|e| {
                    Status::internal(format!(
                        "the schema changed, but the read-write connection's row watch could not \
                         follow it: {e}"
                    ))
                })
        });
        match followed {
            Ok(()) => (applied, failed),
            Err(e) => {
                // The connection's next use opens it again, its watch made afresh.
                *self.lock() = None;
                (applied, failed.or(Some(e)))
            }
        }
    }

    /// Runs `f` on the open connection (opened now if it is not), with the time and memory bounds
    /// set, telling it how long it waited for the connection; a connection left inside a
    /// transaction by a failure is closed (which rolls it back).
    fn with_open<R>(
        &self,
        bounds: WriteBounds,
        f: impl FnOnce(&Database, &mut Open, Duration) -> Result<R, Status>,
    ) -> Result<R, Status> {
        let asked = Instant::now();
        let mut guard = self.lock();
        let waited = asked.elapsed();
        if guard.is_none() {
            let (conn, sandbox) = self.db.connect_writer(bounds.limits).map_err(|e| {
                Status::internal(format!("cannot open the read-write connection: {e}"))
            })?;
            let schema = self.db.schema();
            let captures = WriteCapture::install(&conn, &sandbox, &schema, MAX_KEYS_PER_STATEMENT)
                .and_then(|w| Ok((w, ReadCapture::new(&conn, &sandbox, &schema)?)))
                .map_err(|e| {
                    Status::internal(format!(
                        "cannot watch the read-write connection's rows: {e}"
                    ))
                })?;
            *guard = Some(Open {
                conn,
                sandbox,
                clock: 0,
                schema_changes: HashMap::new(),
                rows: Versions::new(VERSION_ENTRIES),
                write_capture: captures.0,
                read_capture: captures.1,
            });
        }
        let Some(open) = guard.as_mut() else {
            return Err(Status::internal("the read-write connection is not open"));
        };
        sandbox::set_limits(&open.conn, bounds.limits).map_err(sql_error)?;
        let deadline = Instant::now() + STATEMENT_TIME;
        open.conn
            .progress_handler(
                crate::server::control::PROGRESS_OPS,
                Some(move || Instant::now() > deadline),
            )
            .map_err(sql_error)?;
        memory::bound_this_thread(Some(bounds.limits.max_value_bytes));
        let out = f(&self.db, open, waited);
        memory::bound_this_thread(None);
        if !open.conn.is_autocommit() {
            // A failure between BEGIN and its end: closing the connection rolls it back.
            *guard = None;
        }
        out
    }

    fn lock(&self) -> MutexGuard<'_, Option<Open>> {
        // A panic leaves at worst a connection inside a transaction, which `with_open` closes.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Open {
    /// ABORTED when one of `tables` was changed by DDL after clock value `since`.
    fn validate_schema<'a>(
        &self,
        mut tables: impl Iterator<Item = &'a String>,
        since: u64,
    ) -> Result<(), Status> {
        match tables.find(|t| self.schema_changes.get(*t).is_some_and(|&v| v > since)) {
            Some(table) => Err(Status::aborted(format!(
                "Transaction aborted: table {table} was changed by a {SCHEMA_CHANGE} since this \
                 transaction's first statement"
            ))),
            None => Ok(()),
        }
    }

    /// ABORTED when one of `keys` was written by a commit after clock value `since`.
    fn validate_rows<'a>(
        &self,
        keys: impl IntoIterator<Item = &'a LockKey>,
        since: u64,
    ) -> Result<(), Status> {
        self.rows.validate(keys, since).map_err(|conflict| {
            Status::aborted(format!(
                "Transaction aborted: {} was written by another transaction's commit after this \
                 transaction's snapshot (the local instance validates optimistic reads and \
                 repeatable-read writes at commit)",
                conflict.key
            ))
        })
    }

    /// The rows `statement` reads, named from its program.
    fn reads_of(&mut self, statement: &TxnStatement) -> Result<Vec<LockKey>, Status> {
        let sql = then_return(&statement.sql);
        self.sandbox.reset();
        self.read_capture
            .rows_read(&self.conn, &sql, &statement.params, MAX_KEYS_PER_STATEMENT)
            .map(|read| read.lock_keys())
            .map_err(|e| write_error(e, &self.sandbox))
    }

    /// Runs the server's own statement (transaction control, PRAGMA), which the sandbox lets
    /// through only here.
    fn server_sql(&self, sql: &str) -> Result<(), Status> {
        self.sandbox
            .as_server(|| self.conn.execute_batch(sql))
            .map_err(|e| {
                Status::internal(format!("the read-write connection failed at {sql}: {e}"))
            })
    }

    /// The database's size in bytes, this connection's changes included.
    fn size(&self) -> Result<u64, Status> {
        let pages = |pragma: &str| {
            self.sandbox.as_server(|| {
                self.conn
                    .query_row(&format!("PRAGMA {pragma}"), [], |row| row.get::<_, i64>(0))
            })
        };
        let bytes = pages("page_count")
            .and_then(|count| Ok(count.saturating_mul(pages("page_size")?)))
            .map_err(sql_error)?;
        Ok(u64::try_from(bytes).unwrap_or(0))
    }

    /// RESOURCE_EXHAUSTED when the database grew from `before` bytes past `max_bytes` (a database
    /// already larger may still be read, and shrink).
    fn check_growth(&self, before: u64, max_bytes: u64) -> Result<(), Status> {
        let bytes = self.size()?;
        if bytes > before && bytes > max_bytes {
            return Err(Status::resource_exhausted(format!(
                "the database would grow to {bytes} bytes, more than the {max_bytes} the local \
                 instance allows (max_database_bytes): nothing was written"
            )));
        }
        Ok(())
    }
}

/// Validates, replays, applies and commits one transaction; on any failure nothing of it stays.
fn commit_one(open: &mut Open, work: &CommitWork, bounds: WriteBounds) -> Result<(), Status> {
    let footprint = &work.footprint;
    let since = footprint.since.unwrap_or(open.clock);
    open.validate_schema(footprint.tables.iter(), since)?;
    match work.validation {
        Validation::None => {}
        Validation::Reads => open.validate_rows(&footprint.reads, since)?,
        Validation::Writes => open.validate_rows(&footprint.writes, since)?,
    }
    open.server_sql("BEGIN IMMEDIATE")?;
    open.write_capture.start();
    let mut updated = Vec::new();
    let before = open.size();
    let applied = before
        .and_then(|before| {
            for statement in &work.statements {
                replay(open, std::slice::from_ref(statement))?;
                updated.extend(open.sandbox.touched().updated);
            }
            Ok(before)
        })
        .and_then(|before| {
            for m in &work.mutations {
                open.sandbox.reset();
                mutation::apply(&open.conn, m).map_err(|e| match e {
                    MutationError::Sql(e) => write_error(e, &open.sandbox),
                    not_found @ MutationError::NotFound { .. } => {
                        Status::not_found(not_found.to_string())
                    }
                })?;
                updated.extend(open.sandbox.touched().updated);
            }
            open.check_growth(before, bounds.max_database_bytes)
        })
        .and_then(|()| {
            open.sandbox
                .as_server(|| open.conn.execute_batch("COMMIT"))
                .map_err(|e| match e.sqlite_error_code() {
                    Some(ErrorCode::DatabaseBusy) => Status::aborted(format!(
                        "Transaction aborted: the local instance could not write while {LONG_READS} \
                         held the database (it waits 2 s for them); retry"
                    )),
                    _ => sql_error(e),
                })
        });
    let written = open.write_capture.take(&updated);
    if applied.is_err() {
        if !open.conn.is_autocommit() {
            open.server_sql("ROLLBACK")?;
        }
        return applied;
    }
    open.clock += 1;
    for key in written.lock_keys() {
        open.rows.wrote(&key, open.clock);
    }
    Ok(())
}

/// Applies one DDL statement: planned against the schema now, run, committed, and only then
/// made the catalog's; on any failure nothing of it stays.
fn apply_one_ddl(
    db: &Database,
    open: &mut Open,
    ddl: &Ddl,
    bounds: WriteBounds,
) -> Result<(), Status> {
    let mut change = db.schema().plan(ddl)?;
    if change.sql.is_empty() {
        return Ok(());
    }
    open.server_sql("BEGIN IMMEDIATE")?;
    let applied = open.size().and_then(|before| {
        for sql in &change.sql {
            open.sandbox
                .as_server(|| open.conn.execute_batch(sql))
                .map_err(|e| match e.sqlite_error_code() {
                    Some(ErrorCode::ConstraintViolation) => Status::failed_precondition(format!(
                        "the table's rows break the new index's constraint ({e})"
                    )),
                    _ => write_error(e, &open.sandbox),
                })?;
        }
        open.check_growth(before, bounds.max_database_bytes)?;
        let indexes = open
            .sandbox
            .as_server(|| db::sqlite_indexes(&open.conn))
            .map_err(sql_error)?;
        change.after.set_sqlite_indexes(indexes);
        open.sandbox
            .as_server(|| open.conn.execute_batch("COMMIT"))
            .map_err(|e| match e.sqlite_error_code() {
                Some(ErrorCode::DatabaseBusy) => Status::unavailable(
                    "the local instance could not change the schema while long reads held the \
                     database (it waits 2 s for them); nothing of the statement was applied, retry",
                ),
                _ => sql_error(e),
            })
    });
    if let Err(e) = applied {
        if !open.conn.is_autocommit() {
            open.server_sql("ROLLBACK")?;
        }
        return Err(e);
    }
    open.clock += 1;
    open.schema_changes.insert(change.table, open.clock);
    db.catalog().set(change.after);
    Ok(())
}

/// Runs the transaction's earlier DML again, its answers dropped.
fn replay(open: &Open, earlier: &[TxnStatement]) -> Result<(), Status> {
    for statement in earlier {
        open.sandbox.reset();
        let sql = then_return(&statement.sql);
        let mut stmt = open
            .conn
            .prepare(&sql)
            .map_err(|e| write_error(e, &open.sandbox))?;
        bind(&mut stmt, &statement.params)?;
        let mut rows = stmt.raw_query();
        while rows
            .next()
            .map_err(|e| write_error(e, &open.sandbox))?
            .is_some()
        {}
    }
    Ok(())
}

/// Runs one statement, its rows collected (at most `max_bytes` of values) and typed as a query's.
fn execute(
    db: &Database,
    open: &Open,
    statement: &TxnStatement,
    max_bytes: u64,
) -> Result<Answer, Status> {
    open.sandbox.reset();
    let sql = then_return(&statement.sql);
    let mut stmt = open
        .conn
        .prepare(&sql)
        .map_err(|e| write_error(e, &open.sandbox))?;
    bind(&mut stmt, &statement.params)?;
    let dml = !stmt.readonly();
    let touched = open.sandbox.touched();
    let declared: Vec<Option<Type>> = stmt
        .columns_with_metadata()
        .map(|c| db.column_type(c.table_name()?, c.origin_name()?))
        .collect();
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let width = names.len();
    let simple = open.sandbox.selects() <= 1;
    let mut pending: Vec<Pending> = columns::plan(names, declared, simple, &vec![None; width]);
    let mut held: Vec<Vec<SqlValue>> = Vec::new();
    let mut bytes = 0u64;
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next().map_err(|e| write_error(e, &open.sandbox))? {
        let values: Vec<SqlValue> = (0..width)
            .map(|i| row.get::<_, SqlValue>(i))
            .collect::<Result<_, _>>()
            .map_err(sql_error)?;
        for (column, value) in pending.iter_mut().zip(&values) {
            column.look_at(ValueRef::from(value));
            bytes += sql_len(value);
        }
        if bytes > max_bytes {
            return Err(Status::failed_precondition(format!(
                "the statement's answer passed {max_bytes} bytes, the most a statement of a \
                 read-write transaction may return on the local instance (max_unary_result_bytes)"
            )));
        }
        held.push(values);
    }
    drop(rows);
    let columns: Vec<Column> = pending.into_iter().map(Pending::decide).collect();
    let mut values = Vec::with_capacity(held.len() * width);
    for (n, row) in held.iter().enumerate() {
        for (column, value) in columns.iter().zip(row) {
            let mut body = Vec::new();
            column
                .encode(ValueRef::from(value), n as u64 + 1, &mut body)
                .map_err(Status::invalid_argument)?;
            values.push(body);
        }
    }
    let row_count = if dml {
        i64::try_from(open.conn.changes()).unwrap_or(i64::MAX)
    } else {
        i64::try_from(held.len()).unwrap_or(i64::MAX)
    };
    Ok(Answer {
        columns: columns.into_iter().map(|c| c.field).collect(),
        values,
        dml,
        row_count,
        touched,
        reads: Vec::new(),
        writes: Vec::new(),
        lock_waits: Vec::new(),
        since: 0,
        cost: Cost::default(),
    })
}

/// About how many bytes a value takes.
fn sql_len(value: &SqlValue) -> u64 {
    match value {
        SqlValue::Text(s) => s.len() as u64,
        SqlValue::Blob(b) => b.len() as u64,
        _ => 8,
    }
}

/// An error of a statement on the read-write connection, in Spanner's words: what the sandbox
/// refused, a duplicate key (ALREADY_EXISTS), a NULL where none may be (FAILED_PRECONDITION), the
/// database full (RESOURCE_EXHAUSTED), or SQLite's error as a query's.
pub fn write_error(e: rusqlite::Error, sandbox: &Sandbox) -> Status {
    match sandbox.take_refusal() {
        Some(Refusal::Write) => {
            return Status::invalid_argument(
                "a read-write transaction on the built-in local instance may read the tables and \
                 INSERT, UPDATE or DELETE rows of the stored ones (not Seed23); DDL (use \
                 UpdateDatabaseDdl), PRAGMA, ATTACH and transaction control are not allowed",
            );
        }
        Some(Refusal::Forbidden(what)) => {
            return Status::invalid_argument(format!(
                "{what} is not allowed: a read-write transaction on the built-in local instance \
                 reads the tables and writes rows of the stored ones"
            ));
        }
        None => {}
    }
    let message = match &e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        other => other.to_string(),
    };
    match e.sqlite_error_code() {
        Some(ErrorCode::ConstraintViolation) if message.contains("UNIQUE") => {
            Status::already_exists(format!("Row already exists ({message})"))
        }
        Some(ErrorCode::ConstraintViolation) => Status::failed_precondition(message),
        Some(ErrorCode::DiskFull) => {
            Status::resource_exhausted(format!("the local instance's database is full ({message})"))
        }
        Some(ErrorCode::OperationInterrupted) => Status::deadline_exceeded(format!(
            "a statement of a read-write transaction ran longer than the local instance allows \
             ({} s)",
            STATEMENT_TIME.as_secs()
        )),
        _ => refused(e, sandbox),
    }
}
