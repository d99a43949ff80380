//! The local instance's database: an in-memory SQLite database (the memdb VFS) that every query's
//! connection opens by name, holding Singers, Albums, Blobs and Accounts, with Seed23 generated on
//! demand, the tables `UpdateDatabaseDdl` created, and the Spanner type of every column (the
//! catalog of `schema.rs`, which the writer changes after each DDL statement).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags, params_from_iter};

use super::row_cache::RowCache;
use super::sandbox::{self, Sandbox, SqlLimits};
use super::scan::ScanRows;
use super::schema::{Catalog, Schema, TableDef};
use super::seed23_table::{self, Seed23Source};
use super::sql_value::{sqlite_type, to_sql};
use super::sys_tables::SysTables;
use crate::demo::{self, DemoTable};
use crate::wire::{Type, Value};

/// A key range of one demo table: the rows a partition reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    /// The table (a demo table's name).
    pub table: &'static str,
    /// The first rowid in the range.
    pub lo: i64,
    /// One past the last rowid.
    pub hi: i64,
}

impl KeyRange {
    /// The statement that makes the range the table's name on a partition's connection.
    pub fn view_sql(&self) -> String {
        format!(
            "CREATE TEMP VIEW \"{t}\" AS SELECT * FROM main.\"{t}\" WHERE rowid >= {lo} AND rowid < {hi}",
            t = self.table,
            lo = self.lo,
            hi = self.hi
        )
    }
}

/// The demo database. Cheap to share: queries open their own connections to it.
#[derive(Debug)]
pub struct Database {
    uri: String,
    seed23_rows: i64,
    /// Seed23's recently generated rows, shared by every query.
    seed23_cache: Arc<RowCache>,
    /// The tables, their columns' Spanner types and the indexes, as of the last DDL.
    catalog: Arc<Catalog>,
    /// Keeps the shared in-memory database alive while the instance lives.
    _keeper: Mutex<Connection>,
}

/// Why the database could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the local database: {0}")]
pub struct SetupError(#[from] rusqlite::Error);

impl Database {
    /// Creates the demo tables and loads their rows; Seed23 gets `seed23_rows` rows (ids 1 to N).
    pub fn open(seed23_rows: u64) -> Result<Self, SetupError> {
        static INSTANCE: AtomicU64 = AtomicU64::new(0);
        let n = INSTANCE.fetch_add(1, Ordering::Relaxed);
        // SQLite's memdb VFS, not a shared cache: a name starting with '/' is one in-memory database
        // for every connection of the process, each with a page cache and locks of its own, so readers
        // run side by side. A shared cache serializes every step of every connection on one mutex:
        // one long query held up all the others.
        let uri = format!("file:/spanprof-local-{}-{n}?vfs=memdb", std::process::id());
        let keeper = Connection::open_with_flags(&uri, flags())?;
        load(&keeper, &demo::music::singers(), demo::music::singer_rows())?;
        load(&keeper, &demo::music::albums(), demo::music::album_rows())?;
        let blobs = demo::blobs::ids().filter_map(demo::blobs::row);
        load(&keeper, &demo::blobs::table(), blobs)?;
        load(&keeper, &demo::accounts::table(), demo::accounts::rows())?;
        let catalog = Arc::new(Catalog::new(Schema::demo(sqlite_indexes(&keeper)?)));
        Ok(Database {
            uri,
            seed23_rows: i64::try_from(seed23_rows).unwrap_or(i64::MAX),
            seed23_cache: Arc::new(RowCache::default()),
            catalog,
            _keeper: Mutex::new(keeper),
        })
    }

    /// A new read-only connection for one query, confined to reading the demo tables within
    /// `limits` (`sandbox.rs`), with the sandbox that reports what its authorizer refused. `scanned`
    /// counts the Seed23 rows its scans produce; `plain` links its Seed23 cursor with the query thread
    /// during a plain scan (`scan.rs`). For one partition of a query, `partition`'s table name is a
    /// temporary view of its key range (`partition.rs`), made before the connection is confined.
    pub fn connect(
        &self,
        scanned: Arc<AtomicU64>,
        plain: Arc<ScanRows>,
        limits: SqlLimits,
        partition: Option<&KeyRange>,
    ) -> rusqlite::Result<(Connection, Arc<Sandbox>)> {
        self.connect_with(scanned, plain, limits, partition, None)
    }

    /// As [`Database::connect`], with SPANNER_SYS's statistics tables attached when `sys` is given
    /// (`sys_tables.rs`), filled before the connection is confined.
    pub fn connect_with(
        &self,
        scanned: Arc<AtomicU64>,
        plain: Arc<ScanRows>,
        limits: SqlLimits,
        partition: Option<&KeyRange>,
        sys: Option<&SysTables>,
    ) -> rusqlite::Result<(Connection, Arc<Sandbox>)> {
        let mut conn = Connection::open_with_flags(&self.uri, flags())?;
        // A read meets the read-write connection's lock only while a transaction's statement or
        // commit runs (`write.rs`): it waits for it rather than failing.
        conn.busy_handler(Some(wait_for_writer))?;
        // Pages are read in place from the in-memory database rather than copied into this
        // connection's page cache.
        conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
        if let Some(range) = partition {
            conn.execute_batch(&range.view_sql())?;
        }
        if let Some(sys) = sys {
            sys.attach(&conn)?;
        }
        conn.pragma_update(None, "query_only", true)?;
        // SQLite's per-loop counters are built in and on by default: off unless a query asks.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_STMT_SCANSTATUS,
            false,
        )?;
        seed23_table::register(
            &conn,
            Seed23Source {
                rows: self.seed23_rows,
                scanned,
                cache: Arc::clone(&self.seed23_cache),
                plain,
            },
        )?;
        let sandbox = sandbox::confine(&mut conn, limits, Arc::clone(&self.catalog))?;
        Ok((conn, sandbox))
    }

    /// The one read-write connection (`write.rs` keeps it): confined to reading the demo tables
    /// and writing the stored ones within `limits`, and waiting (bounded) for readers to finish
    /// when it commits.
    pub fn connect_writer(
        &self,
        limits: SqlLimits,
    ) -> rusqlite::Result<(Connection, Arc<Sandbox>)> {
        let mut conn = Connection::open_with_flags(&self.uri, flags())?;
        conn.busy_handler(Some(wait_for_readers))?;
        conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
        seed23_table::register(
            &conn,
            Seed23Source {
                rows: self.seed23_rows,
                scanned: Arc::default(),
                cache: Arc::clone(&self.seed23_cache),
                plain: Arc::default(),
            },
        )?;
        let sandbox = sandbox::confine_writer(&mut conn, limits, Arc::clone(&self.catalog))?;
        Ok((conn, sandbox))
    }

    /// The Spanner type of a table's column, as the schema is now.
    pub fn column_type(&self, table: &str, column: &str) -> Option<Type> {
        self.catalog.get().column_type(table, column).cloned()
    }

    /// The table an index belongs to, as SQLite names it (its primary-key indexes included).
    pub fn index_table(&self, name: &str) -> Option<String> {
        self.catalog.get().index_table(name).map(str::to_owned)
    }

    /// The table called `name` (in any case), as the schema is now.
    pub fn table(&self, name: &str) -> Option<Arc<TableDef>> {
        self.catalog.get().table(name).cloned()
    }

    /// The schema now, a snapshot.
    pub fn schema(&self) -> Arc<Schema> {
        self.catalog.get()
    }

    /// The catalog the writer changes after each DDL statement.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Rows in Seed23.
    pub fn seed23_rows(&self) -> i64 {
        self.seed23_rows
    }
}

/// Past every demo table's size (the Blobs table, the largest, holds about 21 MB).
const MMAP_BYTES: i64 = 1 << 30;

/// A reader's wait while the read-write connection holds its lock (SQLite's memdb refuses new
/// readers then): 50 µs at a time for the first 10 ms (a statement or a commit usually takes
/// less), then 1 ms at a time, up to about 10 s in all; then SQLite's "database is locked".
fn wait_for_writer(attempt: i32) -> bool {
    match attempt {
        0..200 => std::thread::sleep(std::time::Duration::from_micros(50)),
        200..10_200 => std::thread::sleep(std::time::Duration::from_millis(1)),
        _ => return false,
    }
    true
}

/// The read-write connection's wait, at a commit, for readers to finish (it cannot write the
/// pages while a reader holds its lock): 1 ms at a time, up to 2 s; then the commit fails
/// (`write.rs` turns it into ABORTED) and the readers that wait behind it go on. Shorter than
/// [`wait_for_writer`]'s, so a reader waiting on a commit that waits on a slow reader never
/// fails first.
fn wait_for_readers(attempt: i32) -> bool {
    if attempt >= 2_000 {
        return false;
    }
    let slept = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(1));
    READER_WAIT.set(READER_WAIT.get() + slept.elapsed());
    true
}

thread_local! {
    /// The read-write connection's waits for readers on this thread since it last asked.
    static READER_WAIT: std::cell::Cell<std::time::Duration> =
        const { std::cell::Cell::new(std::time::Duration::ZERO) };
}

/// How long the read-write connection waited for readers on this thread (its busy handler's
/// sleeps) since the last call; the count starts again from zero.
pub fn take_reader_wait() -> std::time::Duration {
    READER_WAIT.take()
}

fn flags() -> OpenFlags {
    OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
}

/// The table of each index SQLite has (its own primary-key indexes included), by lower-cased
/// index name.
pub fn sqlite_indexes(conn: &Connection) -> rusqlite::Result<BTreeMap<String, String>> {
    conn.prepare("SELECT name, tbl_name FROM sqlite_schema WHERE type = 'index'")?
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?.to_lowercase(), row.get(1)?))
        })?
        .collect()
}

/// Creates `table` in SQLite (columns stored as `sql_value::to_sql` stores them) and inserts `rows`.
fn load(
    conn: &Connection,
    table: &DemoTable,
    rows: impl IntoIterator<Item = Vec<Value>>,
) -> rusqlite::Result<()> {
    let columns: Vec<String> = table
        .columns
        .iter()
        .map(|c| {
            let not_null = if table.not_null.contains(&c.name.as_str()) {
                " NOT NULL"
            } else {
                ""
            };
            format!("\"{}\" {}{not_null}", c.name, sqlite_type(&c.ty))
        })
        .collect();
    conn.execute_batch(&format!(
        "CREATE TABLE \"{}\" ({}, PRIMARY KEY ({}))",
        table.name,
        columns.join(", "),
        table.primary_key.join(", ")
    ))?;
    let placeholders = vec!["?"; table.columns.len()].join(", ");
    let mut insert = conn.prepare(&format!(
        "INSERT INTO \"{}\" VALUES ({placeholders})",
        table.name
    ))?;
    for row in rows {
        insert.execute(params_from_iter(row.into_iter().map(to_sql)))?;
    }
    Ok(())
}

/// The default knobs' limits, for tests that connect directly.
#[cfg(test)]
pub(crate) fn test_limits() -> SqlLimits {
    crate::server::KnobSettings::default().sql_limits()
}

#[cfg(test)]
mod tests {
    use super::super::row_cache::SLOTS;
    use super::*;

    fn count(db: &Database, sql: &str) -> i64 {
        let (conn, _) = db
            .connect(Arc::default(), Arc::default(), test_limits(), None)
            .expect("connects");
        conn.query_row(sql, [], |row| row.get(0)).expect("runs")
    }

    #[test]
    fn scans_fill_the_row_cache_up_to_its_size_and_repeat_from_it() {
        let rows = SLOTS as i64 + 3_000;
        let db = Database::open(rows as u64).expect("opens");
        assert!(db.seed23_cache.get(1).is_none(), "cold");
        let sql = "SELECT count(*) FROM Seed23 WHERE Name IS NULL OR Name IS NOT NULL";
        assert_eq!(count(&db, sql), rows);
        let first = db
            .seed23_cache
            .get(5_000)
            .expect("the scan cached row 5000");
        // Past the cache's size the scan kept what fit: row 3 was not evicted by row SLOTS + 3.
        assert_eq!(db.seed23_cache.get(3).map(|r| r.id()), Some(3));
        assert!(db.seed23_cache.get(SLOTS as i64 + 3).is_none());
        // Read again (by a new connection, as each query has its own): the same cells, not new ones,
        // and still no churn.
        assert_eq!(count(&db, sql), rows);
        let again = db.seed23_cache.get(5_000).expect("still cached");
        assert!(Arc::ptr_eq(&first, &again));
        assert!(db.seed23_cache.get(SLOTS as i64 + 3).is_none());
        // A new working set takes over once the old one went unread for a scan.
        let tail = format!("SELECT count(Name IS NULL) FROM Seed23 WHERE Id > {SLOTS}");
        assert_eq!(count(&db, &tail), 3_000);
        assert!(
            db.seed23_cache.get(SLOTS as i64 + 3).is_none(),
            "row 3 was read by the last scan"
        );
        assert_eq!(count(&db, &tail), 3_000);
        assert!(db.seed23_cache.get(SLOTS as i64 + 3).is_some());
        assert!(db.seed23_cache.get(3).is_none());
    }
}
