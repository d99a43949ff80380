//! `Seed23` as a SQLite virtual table: rows are generated from their id when SQLite reads them, so a
//! table of any size costs nothing to set up and a scan holds one row at a time.
//!
//! rusqlite's virtual-table trait is `unsafe` because SQLite owns the table and cursor structs through
//! a C pointer to their first field. The two structs here are `#[repr(C)]` with that field first, which
//! is all the contract asks; nothing else in this module is unsafe.
#![allow(unsafe_code)]

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ffi::{CStr, CString, c_int};
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::vtab::{
    Context, Filters, IndexConstraintOp, IndexInfo, Module, VTab, VTabConnection, VTabCursor,
};
use rusqlite::{Connection, ffi};

use super::row_cache::{CachedRow, RowCache};
use super::scan::ScanRows;
use super::sql_value::{sqlite_type, to_sql};
use crate::demo::seed23;

/// What a connection's Seed23 table knows: how many rows it has, and where to count the rows scanned.
#[derive(Debug, Clone)]
pub struct Seed23Source {
    /// Rows, with ids 1 to `rows`.
    pub rows: i64,
    /// Incremented for every row a cursor produces.
    pub scanned: Arc<AtomicU64>,
    /// Rows generated recently, shared by every connection to the database.
    pub cache: Arc<RowCache>,
    /// The connection's plain scan, if its query is one (`scan.rs`).
    pub plain: Arc<ScanRows>,
}

/// Registers `Seed23` on `conn` (an eponymous table: no CREATE VIRTUAL TABLE needed).
pub fn register(conn: &Connection, source: Seed23Source) -> rusqlite::Result<()> {
    const MODULE: Module<'static, Seed23Table> = Module::eponymous_only_module();
    conn.create_module(c"Seed23", &MODULE, Some(source))
}

#[repr(C)]
struct Seed23Table {
    /// SQLite's part; must come first.
    base: ffi::sqlite3_vtab,
    source: Seed23Source,
}

// Bits of idx_num: which bounds on Id the cursor receives, in this order in argv.
const EQ: c_int = 1;
const LOWER: c_int = 2;
const LOWER_STRICT: c_int = 4;
const UPPER: c_int = 8;
const UPPER_STRICT: c_int = 16;

unsafe impl<'vtab> VTab<'vtab> for Seed23Table {
    type Aux = Seed23Source;
    type Cursor = Seed23Cursor<'vtab>;

    fn connect(
        _db: &mut VTabConnection,
        aux: Option<&Seed23Source>,
        _module_name: &[u8],
        _database_name: &[u8],
        _table_name: &[u8],
        _args: &[&[u8]],
    ) -> rusqlite::Result<(Cow<'static, CStr>, Self)> {
        let source = aux
            .cloned()
            .ok_or_else(|| rusqlite::Error::ModuleError("Seed23 needs its row source".into()))?;
        let columns: Vec<String> = seed23::table()
            .columns
            .iter()
            .map(|c| format!("\"{}\" {}", c.name, sqlite_type(&c.ty)))
            .collect();
        let schema = CString::new(format!("CREATE TABLE x({})", columns.join(", ")))
            .map_err(|e| rusqlite::Error::ModuleError(e.to_string()))?;
        let table = Seed23Table {
            base: ffi::sqlite3_vtab::default(),
            source,
        };
        Ok((Cow::Owned(schema), table))
    }

    fn best_index(&self, info: &mut IndexInfo) -> rusqlite::Result<bool> {
        // Use at most one bound of each kind on Id (column 0) or the rowid (-1); SQLite re-checks
        // every constraint (omit stays false), so a bound we cannot apply exactly costs only speed.
        let mut chosen: [Option<usize>; 3] = [None; 3];
        let mut flags = 0;
        for (i, c) in info.constraints().enumerate() {
            if !c.is_usable() || !(c.column() == 0 || c.column() == -1) {
                continue;
            }
            let (slot, flag) = match c.operator() {
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ => (0, EQ),
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GE => (1, LOWER),
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GT => (1, LOWER_STRICT),
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LE => (2, UPPER),
                IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LT => (2, UPPER_STRICT),
                _ => continue,
            };
            if chosen[slot].is_none() {
                chosen[slot] = Some(i);
                flags |= flag;
            }
        }
        let mut argv = 0;
        for constraint in chosen.into_iter().flatten() {
            argv += 1;
            info.constraint_usage(constraint).set_argv_index(argv);
        }
        let rows = self.source.rows.max(1) as f64;
        let estimate = if flags & EQ != 0 {
            1.0
        } else if flags & (LOWER | LOWER_STRICT) != 0 && flags & (UPPER | UPPER_STRICT) != 0 {
            rows / 16.0
        } else if flags != 0 {
            rows / 4.0
        } else {
            rows
        };
        info.set_idx_num(flags);
        info.set_estimated_cost(estimate);
        info.set_estimated_rows(estimate as i64);
        // Rows come out in Id order.
        let by_id = info.num_of_order_by() == 1
            && info
                .order_bys()
                .all(|o| (o.column() == 0 || o.column() == -1) && !o.is_order_by_desc());
        if by_id {
            info.set_order_by_consumed(true);
        }
        Ok(true)
    }

    fn open(&'vtab mut self) -> rusqlite::Result<Seed23Cursor<'vtab>> {
        Ok(Seed23Cursor {
            base: ffi::sqlite3_vtab_cursor::default(),
            source: self.source.clone(),
            id: 1,
            last: 0,
            row: OnceCell::new(),
            scan: 0,
            phantom: PhantomData,
        })
    }
}

#[repr(C)]
struct Seed23Cursor<'vtab> {
    /// SQLite's part; must come first.
    base: ffi::sqlite3_vtab_cursor,
    source: Seed23Source,
    id: i64,
    last: i64,
    /// The current row's cells, fetched from the cache when a column of it is first read (`None`: its
    /// slot holds a row in use; cells are generated as they are read).
    row: OnceCell<Option<Arc<CachedRow>>>,
    /// This scan's number, for the cache.
    scan: u64,
    phantom: PhantomData<&'vtab Seed23Table>,
}

/// A bound's value as an integer id, rounding toward the inside of the range; `None` when the value is
/// not a number (SQLite's own check then decides, over the whole table).
fn bound(args: &Filters<'_>, i: usize, lower: bool) -> Option<i64> {
    use rusqlite::types::Value;
    match args.get::<Value>(i).ok()? {
        Value::Integer(n) => Some(n),
        Value::Real(f) if f.is_finite() => {
            Some(if lower { f.ceil() } else { f.floor() }.clamp(-9e18, 9e18) as i64)
        }
        _ => None,
    }
}

impl Seed23Cursor<'_> {
    /// During a plain scan, tells the query thread which row the cursor is now on: the cached one, or
    /// one of its own when the cache has no room.
    fn publish(&mut self) {
        if !self.source.plain.is_on() {
            return;
        }
        if self.id > self.last {
            self.source.plain.publish(None);
            return;
        }
        let row = self
            .source
            .cache
            .row_for_scan(self.id, self.scan)
            .unwrap_or_else(|| Arc::new(CachedRow::uncached(self.id)));
        self.row = OnceCell::from(Some(Arc::clone(&row)));
        self.source.plain.publish(Some(row));
    }
}

unsafe impl VTabCursor for Seed23Cursor<'_> {
    fn filter(
        &mut self,
        flags: c_int,
        _: Option<&str>,
        args: &Filters<'_>,
    ) -> rusqlite::Result<()> {
        let (mut first, mut last) = (1i64, self.source.rows);
        let mut arg = 0;
        if flags & EQ != 0 {
            if let Some(v) = bound(args, arg, true) {
                first = first.max(v);
                last = last.min(v);
            }
            arg += 1;
        }
        if flags & (LOWER | LOWER_STRICT) != 0 {
            if let Some(v) = bound(args, arg, true) {
                let v = if flags & LOWER_STRICT != 0 {
                    v.saturating_add(1)
                } else {
                    v
                };
                first = first.max(v);
            }
            arg += 1;
        }
        if flags & (UPPER | UPPER_STRICT) != 0
            && let Some(v) = bound(args, arg, false)
        {
            let v = if flags & UPPER_STRICT != 0 {
                v.saturating_sub(1)
            } else {
                v
            };
            last = last.min(v);
        }
        self.id = first;
        self.last = last;
        self.row.take();
        self.scan = self.source.cache.begin_scan();
        self.publish();
        Ok(())
    }

    fn next(&mut self) -> rusqlite::Result<()> {
        self.id += 1;
        self.row.take();
        self.publish();
        Ok(())
    }

    fn eof(&self) -> bool {
        let done = self.id > self.last;
        if !done {
            self.source.scanned.fetch_add(1, Ordering::Relaxed);
        }
        done
    }

    fn column(&self, ctx: &mut Context, column: c_int) -> rusqlite::Result<()> {
        if self.source.plain.is_on() {
            // The query thread reads this row's cells from the published row; SQLite only passes
            // this value on to the result row, which nobody reads.
            return ctx.set_result(rusqlite::types::Null);
        }
        let Some(column) = usize::try_from(column)
            .ok()
            .filter(|&c| c < seed23::COLUMN_COUNT)
        else {
            return Err(rusqlite::Error::ModuleError(format!(
                "Seed23 has no column {column}"
            )));
        };
        let row = self
            .row
            .get_or_init(|| self.source.cache.row_for_scan(self.id, self.scan));
        match row.as_ref().and_then(|row| row.cell(column)) {
            Some(value) => ctx.set_result(value),
            None => ctx.set_result(to_sql(seed23::cell(self.id, column))),
        }
    }

    fn rowid(&self) -> rusqlite::Result<i64> {
        Ok(self.id)
    }
}
