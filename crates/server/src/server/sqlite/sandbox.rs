//! What a client's SQL may do on a query's connection: read the tables of the schema (the demo
//! tables and those `UpdateDatabaseDdl` created, as the catalog of `schema.rs` lists them now), and
//! nothing else.
//!
//! SQLite asks an authorizer about every action while it prepares a statement; ours allows selecting,
//! recursive common table expressions, reading those tables (and the JSON table-valued functions),
//! and calling functions other than those that reach files or configuration. Everything else (any
//! PRAGMA, ATTACH and DETACH, every write, schema change and transaction) is refused before the
//! statement exists, so it never runs; which rule refused it is kept, to name it in the error.
//!
//! Defence in depth around that: SQLite's defensive flag, an untrusted schema, no FTS3 tokenizer
//! pointers, no attached databases, no sorter worker threads, and limits on the length of a value and
//! of the SQL text. The connection is `query_only` too (`db.rs`).
//!
//! The one read-write connection (`write.rs`) is confined the same way with one difference: it may
//! also insert, update and delete rows of the tables stored in SQLite (not Seed23, which is
//! generated), and it notes the tables each statement reads and writes, for the transactions'
//! validation. Schema changes, PRAGMA, ATTACH and transaction control stay refused to the client's
//! SQL; the server's own `BEGIN`, `COMMIT` and `ROLLBACK`, and the DDL of `UpdateDatabaseDdl`
//! (`write.rs`), pass while it says it is issuing them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;
use rusqlite::config::DbConfig;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;

use super::schema::Catalog;
use super::sys_tables;

/// The function the read-write connection's triggers call to report the rows a statement wrote
/// (`txn/rows_written.rs`); refused to a client's SQL.
pub const CAPTURE_FUNCTION: &str = "spanprof_row_written";
/// How the names of those triggers begin: their statements are the server's, let through and not
/// noted as the client's reads.
pub const CAPTURE_TRIGGER_PREFIX: &str = "spanprof_row_written_";

/// The bounds a query's connection runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlLimits {
    /// Longest string or blob, in bytes.
    pub max_value_bytes: u64,
    /// Longest SQL text, in bytes.
    pub max_sql_bytes: u64,
}

/// Why the authorizer refused a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It writes or changes the schema, or controls transactions.
    Write,
    /// Something else a query may not do (named: "PRAGMA", "ATTACH", "reading sqlite_schema" ...).
    Forbidden(String),
}

/// What the authorizer saw while the last statement was prepared.
#[derive(Debug)]
pub struct Sandbox {
    /// The tables there are now.
    catalog: Arc<Catalog>,
    refusal: Mutex<Option<Refusal>>,
    selects: AtomicUsize,
    /// Tables read by name rather than through a view (lower-cased), since the last reset.
    direct: Mutex<Vec<String>>,
    /// Whether rows of the stored demo tables may be written (the read-write connection only).
    writes: bool,
    /// While set, the server itself is preparing its own statements (`BEGIN`, `COMMIT`, a PRAGMA
    /// that reads the database's size): everything passes. Only the read-write connection sets it.
    server: AtomicBool,
    /// On the read-write connection: the tables read and written since the last reset.
    touched: Mutex<Touched>,
}

/// The demo tables a statement reads and writes (lower-cased, each once).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Touched {
    /// Tables it reads.
    pub read: Vec<String>,
    /// Tables it inserts into, updates or deletes from.
    pub written: Vec<String>,
    /// The columns its UPDATEs (and upserts) set: table and column, lower-cased.
    pub updated: Vec<(String, String)>,
}

impl Touched {
    fn note(list: &mut Vec<String>, table: &str) {
        // Bounded: one entry per table of the schema at most.
        if !list.iter().any(|t| t.eq_ignore_ascii_case(table)) {
            list.push(table.to_lowercase());
        }
    }
}

impl Sandbox {
    /// Forgets what it saw: call before preparing the statement to look at.
    pub fn reset(&self) {
        *self.lock() = None;
        self.selects.store(0, Ordering::Relaxed);
        self.direct_lock().clear();
        if self.writes {
            *self.touched_lock() = Touched::default();
        }
    }

    /// The tables read and written since the last reset (the read-write connection only).
    pub fn touched(&self) -> Touched {
        self.touched_lock().clone()
    }

    fn touched_lock(&self) -> std::sync::MutexGuard<'_, Touched> {
        self.touched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f`, in which the server (not a client) prepares its own statements: transaction
    /// control, and the PRAGMAs that read the database's size.
    pub fn as_server<R>(&self, f: impl FnOnce() -> R) -> R {
        self.server.store(true, Ordering::Relaxed);
        let out = f();
        self.server.store(false, Ordering::Relaxed);
        out
    }

    /// The tables the statement reads by their own name, not through a view (a partition's
    /// statement must read its table through the view of its key range), lower-cased.
    pub fn direct_reads(&self) -> Vec<String> {
        self.direct_lock().clone()
    }

    fn direct_lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.direct.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The first refusal since the last reset, taken.
    pub fn take_refusal(&self) -> Option<Refusal> {
        self.lock().take()
    }

    /// SELECTs (simple or compound arms, subqueries, common table expressions) since the last reset.
    pub fn selects(&self) -> usize {
        self.selects.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Refusal>> {
        self.refusal.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn refuse(&self, refusal: Refusal) -> Authorization {
        self.lock().get_or_insert(refusal);
        Authorization::Deny
    }

    /// The tables a query may read: those of the schema now, the JSON functions' table forms, and
    /// what the statement makes itself (common table expressions and subqueries, which belong to
    /// no database). Never SQLite's own tables (`sqlite_schema`...), which no schema table is
    /// named as (`ddl.rs` refuses names starting with `sqlite_`).
    fn readable(&self, database: Option<&str>, table: &str) -> bool {
        match database {
            None => true,
            // SPANNER_SYS's statistics, attached only to a query that names them.
            Some(d) if d.eq_ignore_ascii_case(sys_tables::SCHEMA) => sys_tables::is_table(table),
            // The temporary schema holds only what the server made before confining the
            // connection: the views of a partition's key range, named as their tables.
            Some(d) => {
                (d.eq_ignore_ascii_case("main") || d.eq_ignore_ascii_case("temp"))
                    && (table.eq_ignore_ascii_case("json_each")
                        || table.eq_ignore_ascii_case("json_tree")
                        || self.catalog.get().table(table).is_some())
            }
        }
    }

    /// The tables the read-write connection may write: those of the schema stored in SQLite
    /// (Seed23 is generated from its ids, and is read-only), in the main database only.
    fn writable(&self, database: Option<&str>, table: &str) -> bool {
        database.is_some_and(|d| d.eq_ignore_ascii_case("main"))
            && self
                .catalog
                .get()
                .table(table)
                .is_some_and(|t| t.writable())
    }

    fn authorize(&self, ctx: &AuthContext<'_>) -> Authorization {
        use AuthAction as A;
        if self.server.load(Ordering::Relaxed) {
            return Authorization::Allow;
        }
        // The statements of the write capture's triggers (`txn/rows_written.rs`), the server's own:
        // they read the row a statement wrote, which is no read of the client's.
        if ctx
            .accessor
            .is_some_and(|a| a.starts_with(CAPTURE_TRIGGER_PREFIX))
        {
            return Authorization::Allow;
        }
        match ctx.action {
            A::Select => {
                self.selects.fetch_add(1, Ordering::Relaxed);
                Authorization::Allow
            }
            A::Recursive => Authorization::Allow,
            A::Read { table_name, .. } if self.readable(ctx.database_name, table_name) => {
                let main = ctx
                    .database_name
                    .is_some_and(|d| d.eq_ignore_ascii_case("main"));
                if self.writes && main {
                    Touched::note(&mut self.touched_lock().read, table_name);
                }
                if ctx.accessor.is_none() && main {
                    let mut direct = self.direct_lock();
                    let name = table_name.to_lowercase();
                    // Bounded: one entry per table of the schema at most.
                    if !direct.contains(&name) {
                        direct.push(name);
                    }
                }
                Authorization::Allow
            }
            A::Read { table_name, .. } => self.refuse(Refusal::Forbidden(format!(
                "reading {}",
                bounded(table_name)
            ))),
            A::Function { function_name } if !forbidden_function(function_name) => {
                Authorization::Allow
            }
            A::Function { function_name } => self.refuse(Refusal::Forbidden(format!(
                "the function {}",
                bounded(function_name)
            ))),
            A::Pragma { .. } => self.refuse(Refusal::Forbidden("PRAGMA".into())),
            A::Attach { .. } => self.refuse(Refusal::Forbidden("ATTACH".into())),
            A::Detach { .. } => self.refuse(Refusal::Forbidden("DETACH".into())),
            A::Unknown { code, .. } => {
                self.refuse(Refusal::Forbidden(format!("SQLite action {code}")))
            }
            A::Update {
                table_name,
                column_name,
            } if self.writes && self.writable(ctx.database_name, table_name) => {
                let mut touched = self.touched_lock();
                Touched::note(&mut touched.written, table_name);
                let set = (table_name.to_lowercase(), column_name.to_lowercase());
                // Bounded: one entry per column of the schema's tables at most.
                if !touched.updated.contains(&set) {
                    touched.updated.push(set);
                }
                Authorization::Allow
            }
            A::Insert { table_name } | A::Delete { table_name }
                if self.writes && self.writable(ctx.database_name, table_name) =>
            {
                Touched::note(&mut self.touched_lock().written, table_name);
                Authorization::Allow
            }
            // Writes, schema changes, transactions and savepoints, and whatever comes later.
            _ => self.refuse(Refusal::Write),
        }
    }
}

/// Confines `conn`: the defensive settings, the limits, and an authorizer reporting to the sandbox it
/// returns. Call after the connection's own setup (pragmas, modules), which it would refuse.
pub fn confine(
    conn: &mut Connection,
    limits: SqlLimits,
    catalog: Arc<Catalog>,
) -> rusqlite::Result<Arc<Sandbox>> {
    confine_as(conn, limits, catalog, false)
}

/// Confines the read-write connection: as [`confine`], but rows of the stored tables may be
/// inserted, updated and deleted, and the tables each statement touches are noted.
pub fn confine_writer(
    conn: &mut Connection,
    limits: SqlLimits,
    catalog: Arc<Catalog>,
) -> rusqlite::Result<Arc<Sandbox>> {
    confine_as(conn, limits, catalog, true)
}

/// Sets `limits` on a connection already confined (the read-write connection lives on, while
/// the knobs may change).
pub fn set_limits(conn: &Connection, limits: SqlLimits) -> rusqlite::Result<()> {
    let clamp = |n: u64| i32::try_from(n).unwrap_or(i32::MAX);
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, clamp(limits.max_value_bytes))?;
    conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, clamp(limits.max_sql_bytes))?;
    Ok(())
}

fn confine_as(
    conn: &mut Connection,
    limits: SqlLimits,
    catalog: Arc<Catalog>,
    writes: bool,
) -> rusqlite::Result<Arc<Sandbox>> {
    for (setting, on) in [
        (DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true),
        (DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_ATTACH_CREATE, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_ATTACH_WRITE, false),
    ] {
        conn.set_db_config(setting, on)?;
    }
    let clamp = |n: u64| i32::try_from(n).unwrap_or(i32::MAX);
    for (limit, value) in [
        (Limit::SQLITE_LIMIT_LENGTH, clamp(limits.max_value_bytes)),
        (Limit::SQLITE_LIMIT_SQL_LENGTH, clamp(limits.max_sql_bytes)),
        (Limit::SQLITE_LIMIT_ATTACHED, 0),
        (Limit::SQLITE_LIMIT_WORKER_THREADS, 0),
    ] {
        conn.set_limit(limit, value)?;
    }
    let sandbox = Arc::new(Sandbox {
        catalog,
        refusal: Mutex::default(),
        selects: AtomicUsize::default(),
        direct: Mutex::default(),
        writes,
        server: AtomicBool::default(),
        touched: Mutex::default(),
    });
    let seen = Arc::clone(&sandbox);
    conn.authorizer(Some(move |ctx: AuthContext<'_>| seen.authorize(&ctx)))?;
    Ok(sandbox)
}

/// Functions that reach files, load code or change settings (most are absent from this build of
/// SQLite; refused by name all the same).
fn forbidden_function(name: &str) -> bool {
    const FORBIDDEN: [&str; 7] = [
        CAPTURE_FUNCTION,
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        "sqlite_dbpage",
    ];
    FORBIDDEN.iter().any(|f| f.eq_ignore_ascii_case(name))
}

/// A name from the SQL, cut short for an error message.
fn bounded(name: &str) -> &str {
    match name.char_indices().nth(64) {
        Some((at, _)) => name.get(..at).unwrap_or(name),
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::super::db::Database;
    use super::*;

    fn connect(limits: SqlLimits) -> (Database, Connection, Arc<Sandbox>) {
        let db = Database::open(10).expect("opens");
        let (conn, sandbox) = db
            .connect(Arc::default(), Arc::default(), limits, None)
            .expect("connects");
        (db, conn, sandbox)
    }

    const LIMITS: SqlLimits = SqlLimits {
        max_value_bytes: 1024,
        max_sql_bytes: 4096,
    };

    #[test]
    fn only_reading_the_demo_tables_is_allowed_and_a_refusal_says_why() {
        let (_db, conn, sandbox) = connect(LIMITS);
        let forbidden = |what: &str| Some(Refusal::Forbidden(what.into()));
        for (sql, refusal, selects) in [
            (
                "SELECT * FROM Seed23 JOIN Singers ON Id = SingerId",
                None,
                1,
            ),
            (
                "WITH t AS (SELECT AlbumTitle FROM Albums) SELECT count(*) FROM t",
                None,
                2,
            ),
            ("SELECT value FROM json_each('[1, 2]')", None, 1),
            ("SELECT 1 UNION ALL SELECT 2", None, 3),
            ("PRAGMA threads = 4", forbidden("PRAGMA"), 0),
            ("ATTACH 'x.db' AS x", forbidden("ATTACH"), 0),
            (
                "SELECT * FROM sqlite_master",
                forbidden("reading sqlite_master"),
                1,
            ),
            (
                "SELECT load_extension('x')",
                forbidden("the function load_extension"),
                1,
            ),
            ("DELETE FROM Singers", Some(Refusal::Write), 0),
            ("CREATE TEMP TABLE t (x)", Some(Refusal::Write), 0),
            ("BEGIN", Some(Refusal::Write), 0),
        ] {
            sandbox.reset();
            let prepared = conn.prepare(sql);
            assert_eq!(prepared.is_ok(), refusal.is_none(), "{sql}");
            assert_eq!(sandbox.take_refusal(), refusal, "{sql}");
            assert_eq!(sandbox.selects(), selects, "{sql}");
        }
    }

    #[test]
    fn values_and_statements_are_bounded() {
        let (_db, conn, _) = connect(LIMITS);
        let value = |sql: &str| conn.query_row(sql, [], |row| row.get::<_, i64>(0));
        assert_eq!(value("SELECT length(zeroblob(1024))").ok(), Some(1024));
        assert!(value("SELECT length(zeroblob(1025))").is_err());
        assert!(value("SELECT length(printf('%.*c', 2000, 'x'))").is_err());
        let long = format!("SELECT 1 /* {} */", "x".repeat(4096));
        assert!(conn.prepare(&long).is_err());
        assert_eq!(conn.limit(Limit::SQLITE_LIMIT_ATTACHED).ok(), Some(0));
        assert_eq!(conn.limit(Limit::SQLITE_LIMIT_WORKER_THREADS).ok(), Some(0));
        assert_eq!(
            conn.db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE).ok(),
            Some(true)
        );
    }
}
