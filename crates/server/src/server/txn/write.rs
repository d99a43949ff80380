//! The local instance's one read-write connection, and the model of concurrency its read-write
//! transactions run under. It is a model, simple on purpose, not Spanner's locking:
//!
//! - A transaction's writes stay with the transaction (its DML, kept by the service). Each of its
//!   statements runs in a short SQLite write transaction on this connection that replays the
//!   transaction's earlier DML, runs the statement, and rolls back: a statement sees the
//!   transaction's own writes, and nobody else sees them before its commit.
//! - Validation is optimistic and per table: the writer keeps a clock, moved on by every commit, and
//!   the clock value at which each table was last written. A transaction's footprint is the clock
//!   at its first statement and the tables its statements read and wrote; a statement or commit
//!   finding one of those tables written since then aborts (ABORTED), before anything is applied.
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

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, ErrorCode};
use tonic::Status;

use super::columns::{self, Column, Param, Pending};
use super::db::{self, Database};
use super::ddl::Ddl;
use super::memory;
use super::mutation::{self, Mutation, MutationError};
use super::sandbox::{self, Refusal, Sandbox, SqlLimits, Touched};
use super::statement::{bind, refused, sql_error};
use crate::wire::{Field, Type};

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

/// What a transaction's statements have touched so far, for its validation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    /// The writer's clock at its first statement (`None` before it).
    pub since: Option<u64>,
    /// The tables its statements read or wrote (lower-cased).
    pub tables: BTreeSet<String>,
    /// The tables its DML wrote (lower-cased).
    pub written: BTreeSet<String>,
}

impl Footprint {
    /// Adds what a statement touched, at the clock value `since`.
    pub fn add(&mut self, since: u64, touched: &Touched) {
        self.since.get_or_insert(since);
        self.tables.extend(touched.read.iter().cloned());
        self.tables.extend(touched.written.iter().cloned());
        self.written.extend(touched.written.iter().cloned());
    }
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
    /// Its wait for the write lock: for the connection, which another transaction's statement or
    /// commit held, and in SQLite's busy handler for readers to let go of the database.
    pub lock_wait: Duration,
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
    /// The clock value of each table's last commit, by lower-cased name.
    versions: HashMap<String, u64>,
}

impl Writer {
    /// The writer of `db`; its connection opens on first use.
    pub fn new(db: Arc<Database>) -> Self {
        Writer {
            db,
            open: Mutex::new(None),
        }
    }

    /// Runs `statement` after replaying `earlier` (the transaction's DML so far), then rolls it
    /// all back: what the statement answers, as the transaction sees the database. ABORTED when a
    /// table the transaction touched (or the statement touches) was written by a commit since
    /// the transaction's first statement.
    pub fn run(
        &self,
        footprint: &Footprint,
        earlier: &[TxnStatement],
        statement: &TxnStatement,
        bounds: WriteBounds,
    ) -> Result<Answer, Status> {
        self.with_open(bounds, |db, open, waited| {
            let (on, cpu) = (Instant::now(), cpu_time::ThreadTime::try_now().ok());
            super::db::take_reader_wait();
            let since = footprint.since.unwrap_or(open.clock);
            open.validate(&footprint.tables, since)?;
            open.server_sql("BEGIN IMMEDIATE")?;
            let ran = open.size().and_then(|before| {
                replay(open, earlier)?;
                let answer = execute(db, open, statement, bounds.max_result_bytes)?;
                open.check_growth(before, bounds.max_database_bytes)?;
                Ok(answer)
            });
            open.server_sql("ROLLBACK")?;
            let mut answer = ran?;
            let tables: BTreeSet<String> = answer
                .touched
                .read
                .iter()
                .chain(&answer.touched.written)
                .cloned()
                .collect();
            open.validate(&tables, since)?;
            answer.since = since;
            answer.cost = Cost {
                on_writer: on.elapsed(),
                cpu: cpu.map(|t| t.elapsed()).unwrap_or_default(),
                lock_wait: waited + super::db::take_reader_wait(),
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
        outcome.unwrap_or_else(|e| (0, Some(e)))
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
            *guard = Some(Open {
                conn,
                sandbox,
                clock: 0,
                versions: HashMap::new(),
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
    /// ABORTED when one of `tables` was written by a commit after clock value `since`.
    fn validate(&self, tables: &BTreeSet<String>, since: u64) -> Result<(), Status> {
        match tables
            .iter()
            .find(|t| self.versions.get(*t).is_some_and(|&v| v > since))
        {
            Some(table) => Err(Status::aborted(format!(
                "Transaction aborted: table {table} was written by another transaction's commit \
                 since this transaction's first statement (the local instance validates read-write \
                 transactions per table)"
            ))),
            None => Ok(()),
        }
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
    let since = work.footprint.since.unwrap_or(open.clock);
    open.validate(&work.footprint.tables, since)?;
    open.server_sql("BEGIN IMMEDIATE")?;
    let mut written = work.footprint.written.clone();
    let before = open.size();
    let applied = before
        .and_then(|before| replay(open, &work.statements).map(|()| before))
        .and_then(|before| {
            for m in &work.mutations {
                open.sandbox.reset();
                mutation::apply(&open.conn, m).map_err(|e| match e {
                    MutationError::Sql(e) => write_error(e, &open.sandbox),
                    not_found @ MutationError::NotFound { .. } => {
                        Status::not_found(not_found.to_string())
                    }
                })?;
                written.extend(open.sandbox.touched().written);
            }
            open.check_growth(before, bounds.max_database_bytes)
        })
        .and_then(|()| {
            open.sandbox
                .as_server(|| open.conn.execute_batch("COMMIT"))
                .map_err(|e| match e.sqlite_error_code() {
                    Some(ErrorCode::DatabaseBusy) => Status::aborted(
                        "Transaction aborted: the local instance could not write while long reads \
                         held the database (it waits 2 s for them); retry",
                    ),
                    _ => sql_error(e),
                })
        });
    if applied.is_err() {
        if !open.conn.is_autocommit() {
            open.server_sql("ROLLBACK")?;
        }
        return applied;
    }
    open.clock += 1;
    for table in written {
        open.versions.insert(table, open.clock);
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
    open.versions.insert(change.table, open.clock);
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

/// GoogleSQL's `THEN RETURN` as SQLite's `RETURNING`: the two words, outside quotes and comments,
/// become one. Everything else is left as written.
pub fn then_return(sql: &str) -> std::borrow::Cow<'_, str> {
    let words = words_outside_quotes(sql);
    let at = words.windows(2).find(|w| {
        sql[w[0].0..w[0].1].eq_ignore_ascii_case("then")
            && sql[w[1].0..w[1].1].eq_ignore_ascii_case("return")
            && sql[w[0].1..w[1].0].chars().all(char::is_whitespace)
    });
    match at {
        Some(w) => format!("{}RETURNING{}", &sql[..w[0].0], &sql[w[1].1..]).into(),
        None => sql.into(),
    }
}

/// The byte ranges of the bare words of `sql` (letters, digits, `_`), skipping quoted strings and
/// names and comments.
fn words_outside_quotes(sql: &str) -> Vec<(usize, usize)> {
    let bytes = sql.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\'' | b'"' | b'`' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            _ if b.is_ascii_alphanumeric() || b == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                words.push((start, i));
            }
            _ => i += 1,
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn then_return_becomes_returning_outside_quotes_only() {
        assert_eq!(
            then_return("UPDATE Accounts SET Balance = 1 WHERE AccountId = 1 THEN  RETURN Balance"),
            "UPDATE Accounts SET Balance = 1 WHERE AccountId = 1 RETURNING Balance"
        );
        let quoted = "SELECT 'then return' AS x -- then return\n";
        assert_eq!(then_return(quoted), quoted);
        assert_eq!(
            then_return("DELETE FROM Accounts WHERE AccountId = 3 then return *"),
            "DELETE FROM Accounts WHERE AccountId = 3 RETURNING *"
        );
    }
}
