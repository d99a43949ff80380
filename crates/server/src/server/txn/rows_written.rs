//! The rows one statement wrote on the read-write connection, by primary key, with the columns an
//! UPDATE set: what the lock table (`txn/locks.rs`) needs to take a statement's write locks.
//!
//! How: on the read-write connection only, each stored table gets three temporary triggers
//! (`AFTER INSERT`, `AFTER DELETE`, `AFTER UPDATE ON main.<table>`) whose one statement calls a
//! function of ours with the table's number and the key columns' values (`NEW`, `OLD`, or both for
//! an UPDATE). SQLite runs them for every row a statement inserts, deletes or updates, whatever
//! chose the row (a key, a range, a scan, `INSERT … SELECT`, an upsert, `INSERT OR REPLACE`'s
//! delete, with recursive triggers on), before the statement's rows are rolled back or committed,
//! so a DELETE's old key is still there to read. The columns an UPDATE sets are the ones SQLite's
//! authorizer is asked about when it prepares the statement (`Sandbox`'s `Touched::updated`), so
//! `SET Balance = Balance` writes Balance as Spanner's lock would, though no value changed.
//! SQLite's preupdate hook would give the same rows without triggers, but rusqlite exposes it only
//! by generating its bindings at build time (libclang), which this build does not have; the update
//! hook gives only rowids, after the row is gone.
//!
//! What it reports, and its limits:
//! - An INSERT or a DELETE writes the whole row; an UPDATE writes the columns it sets, and an
//!   UPDATE that changes the key writes both keys' whole rows (Spanner refuses a key change; the
//!   local instance's SQLite does not, so it is reported as a delete and an insert).
//! - At most `max_keys` keys per statement: past that, the table whose key would be one more is
//!   reported whole ([`WrittenRows::Whole`]) and its keys are let go: memory stays bounded, and
//!   the report wider, never narrower.
//! - A key value its column's type does not store (so no [`RowKey`] can name it) reports the
//!   table whole too.
//! - The triggers name the tables of the schema when they were made: after DDL, call
//!   [`WriteCapture::refresh`] (a dropped table's triggers go with it).
//! - The read-only query connections have none of this: their speed does not change.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;

use super::lock_key::{LockKey, RowKey};
use super::row_key::row_key;
use crate::server::sqlite::sandbox::{
    CAPTURE_FUNCTION as FUNCTION, CAPTURE_TRIGGER_PREFIX as TRIGGER_PREFIX, Sandbox,
};
use crate::server::sqlite::schema::Schema;
use crate::wire::Type;

/// What a statement wrote of one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cells {
    /// The whole row: an INSERT or a DELETE.
    Row,
    /// These columns (lower-cased): an UPDATE's.
    Columns(BTreeSet<String>),
}

/// What a statement wrote of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WrittenRows {
    /// These rows, by key.
    Keys(BTreeMap<RowKey, Cells>),
    /// Every row, every column: the keys passed the bound, or a key could not be named.
    Whole,
}

/// The rows one statement wrote, by lower-cased table name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowsWritten {
    /// Each table written, and its rows.
    pub tables: BTreeMap<String, WrittenRows>,
}

impl RowsWritten {
    /// The rows of `table` (any case), if the statement wrote it.
    pub fn table(&self, table: &str) -> Option<&WrittenRows> {
        self.tables.get(&table.to_lowercase())
    }

    /// The lock table's keys for these writes: a row for an INSERT or DELETE, a cell per column
    /// for an UPDATE, the whole table when the rows were not named one by one.
    pub fn lock_keys(&self) -> Vec<LockKey> {
        let mut keys = Vec::new();
        for (table, rows) in &self.tables {
            match rows {
                WrittenRows::Whole => keys.push(LockKey::table(table)),
                WrittenRows::Keys(rows) => {
                    for (key, cells) in rows {
                        match cells {
                            Cells::Row => keys.push(LockKey::row(table, key.clone())),
                            Cells::Columns(columns) => keys.extend(
                                columns.iter().map(|c| LockKey::cell(table, key.clone(), c)),
                            ),
                        }
                    }
                }
            }
        }
        keys
    }
}

/// The capture installed on the read-write connection: [`WriteCapture::start`] before a
/// statement, [`WriteCapture::take`] after it (before its transaction ends).
#[derive(Debug, Clone)]
pub struct WriteCapture {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// The tables the triggers name, by their number.
    tables: Vec<Watched>,
    /// What the triggers reported since the last start, by table number.
    rows: BTreeMap<usize, Pending>,
    /// Keys held in `rows`.
    keys: usize,
    max_keys: usize,
}

#[derive(Debug)]
struct Watched {
    /// Lower-cased.
    name: String,
    key_types: Vec<Type>,
}

#[derive(Debug)]
enum Pending {
    Keys(BTreeMap<RowKey, Kind>),
    Whole,
}

/// How a row was written, before the UPDATE's columns are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Row,
    Update,
}

/// The trigger's second argument: the keys that follow are one row's, written whole.
const WHOLE_ROW: i64 = 0;
/// The trigger's second argument: an UPDATE's old keys, then its new keys.
const UPDATE: i64 = 1;

impl WriteCapture {
    /// Installs the capture on `conn` (the read-write connection, confined by `sandbox`) for the
    /// stored tables of `schema`, holding at most `max_keys` keys per statement
    /// ([`super::row_key::MAX_KEYS_PER_STATEMENT`] for the server).
    pub fn install(
        conn: &Connection,
        sandbox: &Sandbox,
        schema: &Schema,
        max_keys: usize,
    ) -> rusqlite::Result<WriteCapture> {
        let capture = WriteCapture {
            state: Arc::new(Mutex::new(State {
                max_keys,
                ..State::default()
            })),
        };
        let state = Arc::clone(&capture.state);
        // Innocuous: the schema is untrusted, and a trigger may call only innocuous functions. It
        // changes nothing of the database, and the sandbox keeps it from a client's SQL.
        conn.create_scalar_function(
            FUNCTION,
            -1,
            FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_INNOCUOUS,
            move |ctx| {
                let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
                state.note(ctx).map(|()| 0i64)
            },
        )?;
        sandbox.as_server(|| conn.execute_batch("PRAGMA recursive_triggers = ON"))?;
        capture.refresh(conn, sandbox, schema)?;
        Ok(capture)
    }

    /// Makes the triggers again for the stored tables of `schema` (call after DDL).
    pub fn refresh(
        &self,
        conn: &Connection,
        sandbox: &Sandbox,
        schema: &Schema,
    ) -> rusqlite::Result<()> {
        let mut tables = Vec::new();
        let mut sql = drop_triggers_sql(conn, sandbox)?;
        for table in schema.tables().filter(|t| t.writable()) {
            let number = tables.len();
            let keys: Vec<&str> = table.primary_key.iter().map(String::as_str).collect();
            let key_types = keys
                .iter()
                .map(|k| table.column(k).map(|c| c.ty.clone()))
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default();
            sql.push_str(&triggers_sql(number, &table.name, &keys));
            tables.push(Watched {
                name: table.name.to_lowercase(),
                key_types,
            });
        }
        sandbox.as_server(|| conn.execute_batch(&sql))?;
        let mut state = self.lock();
        state.tables = tables;
        state.rows.clear();
        state.keys = 0;
        Ok(())
    }

    /// Forgets what was written before: call before the statement to capture.
    pub fn start(&self) {
        let mut state = self.lock();
        state.rows.clear();
        state.keys = 0;
    }

    /// The rows written since [`WriteCapture::start`], an UPDATE's columns being `updated`'s
    /// (the sandbox's `Touched::updated`: lower-cased table and column), and starts again.
    pub fn take(&self, updated: &[(String, String)]) -> RowsWritten {
        let mut state = self.lock();
        let rows = std::mem::take(&mut state.rows);
        state.keys = 0;
        let mut written = RowsWritten::default();
        for (number, pending) in rows {
            let Some(table) = state.tables.get(number) else {
                continue;
            };
            let columns: BTreeSet<String> = updated
                .iter()
                .filter(|(t, _)| *t == table.name)
                .map(|(_, c)| c.clone())
                .collect();
            let rows = match pending {
                Pending::Whole => WrittenRows::Whole,
                Pending::Keys(keys) => WrittenRows::Keys(
                    keys.into_iter()
                        .map(|(key, kind)| match kind {
                            Kind::Update if !columns.is_empty() => {
                                (key, Cells::Columns(columns.clone()))
                            }
                            _ => (key, Cells::Row),
                        })
                        .collect(),
                ),
            };
            written.tables.insert(table.name.clone(), rows);
        }
        written
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// One call of the function: `(table number, WHOLE_ROW, key…)` or `(table number, UPDATE,
    /// old key…, new key…)`.
    fn note(&mut self, ctx: &Context<'_>) -> rusqlite::Result<()> {
        let number = usize::try_from(ctx.get::<i64>(0)?).unwrap_or(usize::MAX);
        let kind = ctx.get::<i64>(1)?;
        let Some(table) = self.tables.get(number) else {
            return Err(rusqlite::Error::UserFunctionError(
                format!("{FUNCTION}: no table {number}").into(),
            ));
        };
        let width = table.key_types.len();
        let key_at = |from: usize| {
            let values: Vec<ValueRef<'_>> = (from..from + width).map(|i| ctx.get_raw(i)).collect();
            if width == 0 {
                return None;
            }
            row_key(table.key_types.iter().zip(values))
        };
        let first = key_at(2);
        let keys = match kind {
            UPDATE => {
                let second = key_at(2 + width);
                match (first, second) {
                    (Some(old), Some(new)) if old == new => vec![(old, Kind::Update)],
                    (Some(old), Some(new)) => vec![(old, Kind::Row), (new, Kind::Row)],
                    _ => Vec::new(),
                }
            }
            _ => first.map(|k| vec![(k, Kind::Row)]).unwrap_or_default(),
        };
        if keys.is_empty() {
            self.whole(number);
        }
        for (key, kind) in keys {
            self.add(number, key, kind);
        }
        Ok(())
    }

    fn add(&mut self, number: usize, key: RowKey, kind: Kind) {
        let full = self.keys >= self.max_keys;
        let Pending::Keys(keys) = self
            .rows
            .entry(number)
            .or_insert_with(|| Pending::Keys(BTreeMap::new()))
        else {
            return;
        };
        match keys.get_mut(&key) {
            // A row written whole and updated too is written whole.
            Some(held) => {
                if kind == Kind::Row {
                    *held = Kind::Row;
                }
            }
            None if full => self.whole(number),
            None => {
                keys.insert(key, kind);
                self.keys += 1;
            }
        }
    }

    /// Reports table `number` whole, letting go of its keys.
    fn whole(&mut self, number: usize) {
        if let Some(Pending::Keys(keys)) = self.rows.insert(number, Pending::Whole) {
            self.keys -= keys.len();
        }
    }
}

/// `"name"`, SQLite's quoting of an identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The three triggers of table `number`.
fn triggers_sql(number: usize, table: &str, keys: &[&str]) -> String {
    let of = |row: &str| {
        keys.iter()
            .map(|k| format!(", {row}.{}", quoted(k)))
            .collect::<String>()
    };
    let (new, old) = (of("NEW"), of("OLD"));
    let on = format!("ON main.{}", quoted(table));
    let call =
        |kind: i64, args: &str| format!("BEGIN SELECT {FUNCTION}({number}, {kind}{args}); END;\n");
    format!(
        "CREATE TEMP TRIGGER {p}{number}_i AFTER INSERT {on} {}\
         CREATE TEMP TRIGGER {p}{number}_d AFTER DELETE {on} {}\
         CREATE TEMP TRIGGER {p}{number}_u AFTER UPDATE {on} {}",
        call(WHOLE_ROW, &new),
        call(WHOLE_ROW, &old),
        call(UPDATE, &format!("{old}{new}")),
        p = TRIGGER_PREFIX,
    )
}

/// The SQL that drops the triggers there are now.
fn drop_triggers_sql(conn: &Connection, sandbox: &Sandbox) -> rusqlite::Result<String> {
    let names: Vec<String> = sandbox.as_server(|| {
        let mut stmt = conn.prepare(
            "SELECT name FROM temp.sqlite_master WHERE type = 'trigger' AND name GLOB ?1",
        )?;
        stmt.query_map([format!("{TRIGGER_PREFIX}*")], |row| {
            row.get::<_, String>(0)
        })?
        .collect::<rusqlite::Result<Vec<String>>>()
    })?;
    Ok(names
        .iter()
        .map(|n| format!("DROP TRIGGER IF EXISTS temp.{};\n", quoted(n)))
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::server::sqlite::db::Database;
    use crate::server::sqlite::ddl;
    use crate::server::sqlite::sandbox::SqlLimits;
    use crate::server::txn::lock_key::KeyPart;
    use crate::server::txn::write::{WriteBounds, Writer, then_return};

    const LIMITS: SqlLimits = SqlLimits {
        max_value_bytes: 1 << 20,
        max_sql_bytes: 1 << 16,
    };

    /// A database, a read-write connection of it with the capture, inside a transaction.
    struct Bench {
        _db: Arc<Database>,
        conn: Connection,
        sandbox: Arc<Sandbox>,
        capture: WriteCapture,
    }

    impl Bench {
        fn open(max_keys: usize, ddl: &[&str]) -> Bench {
            let db = Arc::new(Database::open(10).expect("opens"));
            let statements: Vec<_> = ddl.iter().map(|s| ddl::parse(s).expect("DDL")).collect();
            let bounds = WriteBounds {
                limits: LIMITS,
                max_result_bytes: 1 << 20,
                max_database_bytes: 1 << 30,
            };
            let (applied, failed) = Writer::new(Arc::clone(&db)).apply_ddl(&statements, bounds);
            assert_eq!((applied, failed.map(|s| s.to_string())), (ddl.len(), None));
            let (conn, sandbox) = db.connect_writer(LIMITS).expect("a writer");
            let capture =
                WriteCapture::install(&conn, &sandbox, &db.schema(), max_keys).expect("installs");
            sandbox
                .as_server(|| conn.execute_batch("BEGIN IMMEDIATE"))
                .expect("begins");
            Bench {
                _db: db,
                conn,
                sandbox,
                capture,
            }
        }

        fn run(&self, sql: &str) -> RowsWritten {
            self.sandbox.reset();
            self.capture.start();
            let mut stmt = self.conn.prepare(&then_return(sql)).expect(sql);
            let mut rows = stmt.raw_query();
            while rows.next().expect(sql).is_some() {}
            drop(rows);
            self.capture.take(&self.sandbox.touched().updated)
        }
    }

    fn keys(ids: &[i64], cells: &Cells) -> WrittenRows {
        WrittenRows::Keys(
            ids.iter()
                .map(|&i| (RowKey::ints(&[i]), cells.clone()))
                .collect(),
        )
    }

    fn columns(names: &[&str]) -> Cells {
        Cells::Columns(names.iter().map(|c| (*c).to_owned()).collect())
    }

    #[test]
    fn an_update_by_key_writes_its_row_and_the_columns_it_sets() {
        let bench = Bench::open(100, &[]);
        let written = bench.run("UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2");
        assert_eq!(
            written.table("Accounts"),
            Some(&keys(&[2], &columns(&["balance"])))
        );
        assert_eq!(
            written.lock_keys(),
            vec![LockKey::cell("accounts", RowKey::ints(&[2]), "balance")]
        );
        let same = bench.run("UPDATE Accounts SET Balance = Balance WHERE AccountId = 3");
        assert_eq!(
            same.table("accounts"),
            Some(&keys(&[3], &columns(&["balance"]))),
            "a column set to its own value is written all the same"
        );
        let none = bench.run("UPDATE Accounts SET Balance = 0 WHERE AccountId = 999999");
        assert_eq!(none, RowsWritten::default());
    }

    #[test]
    fn inserts_and_deletes_write_whole_rows_by_key_or_by_range() {
        let bench = Bench::open(100, &[]);
        let inserted = bench.run(
            "INSERT INTO Accounts (AccountId, Balance) VALUES (5000, 1), (5001, 2) \
             THEN RETURN AccountId",
        );
        assert_eq!(
            inserted.table("accounts"),
            Some(&keys(&[5000, 5001], &Cells::Row))
        );
        let deleted = bench.run("DELETE FROM Accounts WHERE AccountId = 7");
        assert_eq!(deleted.table("accounts"), Some(&keys(&[7], &Cells::Row)));
        let range = bench.run("DELETE FROM Accounts WHERE AccountId BETWEEN 10 AND 14");
        assert_eq!(
            range.table("accounts"),
            Some(&keys(&[10, 11, 12, 13, 14], &Cells::Row))
        );
        let copied = bench.run(
            "INSERT INTO Accounts (AccountId, Balance) \
             SELECT AccountId + 10000, Balance FROM Accounts WHERE AccountId <= 3",
        );
        assert_eq!(
            copied.table("accounts"),
            Some(&keys(&[10001, 10002, 10003], &Cells::Row))
        );
    }

    #[test]
    fn then_return_and_an_upsert_write_what_they_change() {
        let bench = Bench::open(100, &[]);
        let returned =
            bench.run("UPDATE Accounts SET Balance = 5 WHERE AccountId IN (1, 4) THEN RETURN *");
        assert_eq!(
            returned.table("accounts"),
            Some(&keys(&[1, 4], &columns(&["balance"])))
        );
        let upsert = bench.run(
            "INSERT INTO Accounts (AccountId, Balance) VALUES (6, 1), (7000, 1) \
             ON CONFLICT (AccountId) DO UPDATE SET Balance = excluded.Balance",
        );
        let Some(WrittenRows::Keys(rows)) = upsert.table("accounts") else {
            panic!("keys: {upsert:?}");
        };
        assert_eq!(rows.get(&RowKey::ints(&[6])), Some(&columns(&["balance"])));
        assert_eq!(
            rows.get(&RowKey::ints(&[7000])),
            Some(&Cells::Row),
            "an upsert that inserts writes the whole row"
        );
    }

    #[test]
    fn a_created_table_with_a_two_part_key_of_a_string_is_captured_after_ddl() {
        let bench = Bench::open(
            100,
            &[
                "CREATE TABLE Notes (Owner STRING(MAX), Seq INT64, Body STRING(MAX)) PRIMARY KEY (Owner, Seq)",
            ],
        );
        let written = bench
            .run("INSERT INTO Notes (Owner, Seq, Body) VALUES ('ann', 1, 'x'), ('bob', 2, 'y')");
        let key = |owner: &str, seq: i64| {
            RowKey(vec![KeyPart::String(owner.into()), KeyPart::Int64(seq)])
        };
        assert_eq!(
            written.table("notes"),
            Some(&WrittenRows::Keys(
                [(key("ann", 1), Cells::Row), (key("bob", 2), Cells::Row)].into()
            ))
        );
        let moved = bench.run("UPDATE Notes SET Seq = 3 WHERE Owner = 'ann'");
        assert_eq!(
            moved.table("notes"),
            Some(&WrittenRows::Keys(
                [(key("ann", 1), Cells::Row), (key("ann", 3), Cells::Row)].into()
            )),
            "a key changed writes the old row and the new one whole"
        );
    }

    #[test]
    fn past_the_bound_a_table_is_written_whole_and_its_keys_let_go() {
        let bench = Bench::open(3, &[]);
        let few = bench.run("DELETE FROM Accounts WHERE AccountId <= 3");
        assert_eq!(few.table("accounts"), Some(&keys(&[1, 2, 3], &Cells::Row)));
        let many = bench.run("DELETE FROM Accounts WHERE AccountId <= 10");
        assert_eq!(many.table("accounts"), Some(&WrittenRows::Whole));
        assert_eq!(many.lock_keys(), vec![LockKey::table("accounts")]);
        let after = bench.run("DELETE FROM Accounts WHERE AccountId = 20");
        assert_eq!(
            after.table("accounts"),
            Some(&keys(&[20], &Cells::Row)),
            "the bound is per statement"
        );
    }

    #[test]
    fn a_client_cannot_call_the_capture_function_and_its_triggers_note_no_reads() {
        let bench = Bench::open(100, &[]);
        bench.sandbox.reset();
        let called = bench.conn.prepare(&format!("SELECT {FUNCTION}(0, 0, 1)"));
        assert!(called.is_err(), "refused");
        bench.run("INSERT INTO Accounts (AccountId, Balance) VALUES (9000, 1)");
        let touched = bench.sandbox.touched();
        assert!(
            touched.read.is_empty(),
            "a blind insert reads nothing: {touched:?}"
        );
        assert_eq!(touched.written, ["accounts"]);
        assert_eq!(
            bench.sandbox.selects(),
            0,
            "the trigger's SELECT is not the client's"
        );
    }
}
