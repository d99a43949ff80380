//! The rows one statement reads on the read-write connection: the keys it looks up and the key
//! ranges it scans, per table, for the lock table's read locks. Read from the statement's bytecode
//! (`EXPLAIN`, on the connection that runs it, so the write capture's triggers are compiled in and
//! left out), before or after it runs, at the cost of one more prepare ([`ReadCapture::rows_read`]).
//!
//! Why the bytecode: SQLite tells nobody which rows a statement reads (no hook sees a cursor
//! move), so the choice is between shadowing every stored table with a virtual table that watches
//! its lookups, and reading the program. A shadow in the `temp` schema would also take the
//! statements' writes (an unqualified name resolves to `temp` first): every INSERT, UPDATE and
//! DELETE would go through the virtual table's update method, upserts would be refused (SQLite
//! has no upsert on a virtual table), the authorizer would see other tables, and every read would
//! pay for a second statement per lookup. The program names the same lookups at the cost of one
//! prepare, and where it cannot name a key it can always name a wider range.
//!
//! How: each cursor the program opens on a stored table or its primary-key index is classified by
//! the instructions that position it. A rowid lookup (`SeekRowid`, `NotExists`) on a table whose
//! key is its rowid, or an equality seek on the primary-key index (`SeekGE` and `IdxGT` over the
//! same registers, or `Found`/`NotFound`), is a lookup of the keys in those registers: every key of
//! a full-width seek, a prefix range for a shorter one. Any other positioning is a scan, whose
//! range runs from its seeks' lowest start to its end tests' highest stop, each side open (the
//! table's start or end) when it cannot be read. The values in a key's registers are read from the
//! program only when every instruction that writes the register gives a known value: a literal, a
//! parameter (by its bound value), a copy of such a register, or a column of an `IN (…)` list's
//! ephemeral table filled from such registers. Anything else — a key that comes from another
//! table's row (a join whose value SQLite did not fold into a constant), a function of a value, a
//! subquery's result — makes that access a scan of the range its known bounds allow, often the
//! whole table.
//!
//! Limits, all wider than the truth, never narrower:
//! - A lookup of a key that does not exist is reported (Spanner locks it too); a scan is reported
//!   as the range its bounds allow, not the rows it met.
//! - A read through a secondary index, or of the table's rowid by a client's `WHERE rowid …`,
//!   reports the whole table; so does a key column stored descending when the access is a range.
//! - A value whose type is not its key column's (SQLite would convert it first) reports the table
//!   whole, rather than a key SQLite may not have looked up.
//! - More keys than the bound (a long `IN` list, or the product of several) report the table whole.
//! - A count of a table's rows, a test whether it has any, a sort of it, or a scan down from its
//!   end (`ORDER BY` the key `DESC`, `max(key)`) reads the whole table.
//! - An INSERT's check that its key is free (`NoConflict` or `Found` on a cursor it writes, a
//!   `NotExists` that fails with the primary-key constraint) is not a read: that key is in its
//!   written rows (`rows_written.rs`). A rowid a DELETE or UPDATE found in a first pass and looks
//!   up again in a second is read by the first pass.
//! - The bound is the capture's own: the wiring adds the write capture's keys to it, or not.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

mod registers;
#[cfg(test)]
mod tests;

use super::lock_key::{KeyRange, LockKey, RowKey};
use crate::server::sqlite::columns::Param;
use crate::server::sqlite::sandbox::Sandbox;
use crate::server::sqlite::schema::{Schema, TableDef};
use crate::wire::Type;
use registers::{MAX_DEPTH, Op, Program, program, successor};

/// What a statement read of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadRows {
    /// These keys and these ranges.
    Some {
        /// Rows looked up by their full key.
        keys: BTreeSet<RowKey>,
        /// Ranges scanned, or looked up by a key's prefix.
        ranges: Vec<KeyRange>,
    },
    /// Every row: a scan of it all, or more keys than the bound.
    Whole,
}

/// The rows one statement reads, by lower-cased table name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowsRead {
    /// Each table read, and its rows.
    pub tables: BTreeMap<String, ReadRows>,
}

impl RowsRead {
    /// The rows of `table` (any case), if the statement read it.
    pub fn table(&self, table: &str) -> Option<&ReadRows> {
        self.tables.get(&table.to_lowercase())
    }

    /// The lock table's keys for these reads: a row per key, a range per range, every column.
    pub fn lock_keys(&self) -> Vec<LockKey> {
        let mut locks = Vec::new();
        for (table, rows) in &self.tables {
            match rows {
                ReadRows::Whole => locks.push(LockKey::table(table)),
                ReadRows::Some { keys, ranges } => {
                    locks.extend(keys.iter().map(|k| LockKey::row(table, k.clone())));
                    locks.extend(ranges.iter().map(|r| LockKey::range(table, r.clone())));
                }
            }
        }
        locks
    }
}

/// What a cursor of the program is open on.
#[derive(Debug, Clone)]
struct Target {
    table: Arc<TableDef>,
    how: Access,
    /// Opened to write (`OpenWrite`).
    writes: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// The table's b-tree, whose rowid is its key (a one-column INT64 key).
    RowidKey,
    /// The table's b-tree, its key in an index: the rowid is SQLite's own.
    RowidOnly,
    /// The primary-key index, every column ascending.
    KeyIndex,
    /// The primary-key index with a descending column, or another index.
    OtherIndex,
}

/// The most programs a [`ReadCapture`] keeps, by SQL text (a load runs the same few statements
/// with other parameters); past it, it forgets them all and starts again.
pub const MAX_PROGRAMS: usize = 256;
/// The longest SQL text whose program is kept.
pub const MAX_KEPT_SQL_BYTES: usize = 4096;

/// Reads the rows statements read, on the read-write connection: it knows the stored tables'
/// b-trees and primary-key indexes by their root pages ([`ReadCapture::refresh`] after DDL), and
/// keeps the programs of the statements it read last.
#[derive(Debug, Default)]
pub struct ReadCapture {
    roots: HashMap<i64, (Arc<TableDef>, Access)>,
    programs: HashMap<String, Arc<Explained>>,
}

/// A statement's program and the names of its parameters by number.
#[derive(Debug)]
struct Explained {
    ops: Vec<Op>,
    names: Vec<Option<String>>,
}

impl ReadCapture {
    /// The capture for `schema` as `conn` (confined by `sandbox`) stores it.
    pub fn new(conn: &Connection, sandbox: &Sandbox, schema: &Schema) -> rusqlite::Result<Self> {
        let mut capture = ReadCapture::default();
        capture.refresh(conn, sandbox, schema)?;
        Ok(capture)
    }

    /// Reads the root pages again and forgets the programs kept (call after DDL).
    pub fn refresh(
        &mut self,
        conn: &Connection,
        sandbox: &Sandbox,
        schema: &Schema,
    ) -> rusqlite::Result<()> {
        self.roots = sandbox.as_server(|| roots(conn, schema))?;
        self.programs.clear();
        Ok(())
    }

    /// The program of `sql`, kept or explained now.
    fn explained(&mut self, conn: &Connection, sql: &str) -> rusqlite::Result<Arc<Explained>> {
        if let Some(kept) = self.programs.get(sql) {
            return Ok(Arc::clone(kept));
        }
        let (ops, names) = program(conn, sql)?;
        let explained = Arc::new(Explained { ops, names });
        if sql.len() <= MAX_KEPT_SQL_BYTES {
            if self.programs.len() >= MAX_PROGRAMS {
                self.programs.clear();
            }
            self.programs.insert(sql.to_owned(), Arc::clone(&explained));
        }
        Ok(explained)
    }

    /// The rows `sql` reads (as the read-write connection runs it, `THEN RETURN` already
    /// `RETURNING`), its parameters' values `params`, with at most `max_keys` keys. It prepares
    /// `EXPLAIN sql` on `conn` under the sandbox, as the statement itself was, unless it kept the
    /// program from before.
    pub fn rows_read(
        &mut self,
        conn: &Connection,
        sql: &str,
        params: &HashMap<String, Param>,
        max_keys: usize,
    ) -> rusqlite::Result<RowsRead> {
        let explained = self.explained(conn, sql)?;
        let ops = &explained.ops;
        let values = explained
            .names
            .iter()
            .map(|n| {
                n.as_deref()
                    .and_then(|n| n.strip_prefix('@'))
                    .and_then(|n| params.get(n))
                    .map(|p| p.value.clone())
            })
            .collect();
        let program = Program::new(ops, values, max_keys);
        let mut cursors: BTreeMap<i64, Target> = BTreeMap::new();
        let mut read = Reads::new(max_keys);
        for op in ops {
            let opens = matches!(op.opcode.as_str(), "OpenRead" | "OpenWrite" | "ReopenIdx");
            if let Some((table, how)) = self.roots.get(&op.p2).filter(|_| opens && op.p3 == 0) {
                let target = Target {
                    table: Arc::clone(table),
                    how: *how,
                    writes: op.opcode == "OpenWrite",
                };
                if let Some(before) = cursors.insert(op.p1, target) {
                    let same = Arc::ptr_eq(&before.table, table) && before.how == *how;
                    if !same {
                        // One cursor number on two b-trees: neither is read more narrowly.
                        read.whole(&before.table);
                        read.whole(table);
                    }
                }
            }
        }
        for (&cursor, target) in &cursors {
            program.classify(cursor, target, &cursors, &mut read);
        }
        Ok(read.done())
    }
}

/// The stored tables' b-trees and primary-key indexes, by root page.
fn roots(
    conn: &Connection,
    schema: &Schema,
) -> rusqlite::Result<HashMap<i64, (Arc<TableDef>, Access)>> {
    let mut stmt = conn.prepare(
        "SELECT s.type, s.name, s.tbl_name, s.rootpage, \
         (SELECT count(*) FROM pragma_index_xinfo(s.name) x WHERE x.key AND x.desc) \
         FROM main.sqlite_schema s WHERE s.rootpage > 0",
    )?;
    let rows = stmt
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, i64>(3)?,
                row.get::<_, i64>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let key_index = |table: &str| {
        rows.iter().any(|(ty, name, of, _, _)| {
            ty == "index" && of.eq_ignore_ascii_case(table) && name.starts_with("sqlite_autoindex_")
        })
    };
    let mut map = HashMap::new();
    for (ty, name, of, root, descending) in &rows {
        let Some(table) = schema.table(of).filter(|t| t.writable()) else {
            continue;
        };
        let how = match ty.as_str() {
            "table" if key_index(of) => Access::RowidOnly,
            "table" if rowid_key(table) => Access::RowidKey,
            "table" => Access::RowidOnly,
            _ if name.starts_with("sqlite_autoindex_") && *descending == 0 => Access::KeyIndex,
            _ => Access::OtherIndex,
        };
        map.insert(*root, (Arc::clone(table), how));
    }
    Ok(map)
}

/// Whether SQLite keeps `table`'s key as its rowid: one INT64 column.
fn rowid_key(table: &TableDef) -> bool {
    matches!(table.primary_key.as_slice(), [k] if table.column(k).is_some_and(|c| c.ty == Type::Int64))
}

/// Bounds read from the program, while classifying one cursor.
#[derive(Debug, Default)]
struct Bounds {
    /// Each loop's start (inclusive); None: a start that could not be read.
    low: Vec<Option<RowKey>>,
    /// Each loop's stop (exclusive); None: a stop that could not be read.
    high: Vec<Option<RowKey>>,
    /// Every loop's start has a stop: the high side is known.
    high_complete: bool,
}

impl Program<'_> {
    /// Notes in `read` what cursor `cursor` on `target` reads.
    fn classify(
        &self,
        cursor: i64,
        target: &Target,
        cursors: &BTreeMap<i64, Target>,
        read: &mut Reads,
    ) {
        let table = &target.table;
        let on: Vec<&Op> = self.ops.iter().filter(|op| on_cursor(op, cursor)).collect();
        let counts = self.ops.iter().any(|op| {
            op.p1 == cursor && matches!(op.opcode.as_str(), "Count" | "IfEmpty" | "Sort")
        });
        if counts {
            // It counts the rows, asks whether there are any, or sorts them all.
            return read.whole(table);
        }
        match target.how {
            Access::OtherIndex => read.whole(table),
            Access::RowidOnly => {
                let internal = on
                    .iter()
                    .filter(|op| matches!(op.opcode.as_str(), "SeekRowid" | "NotExists"))
                    .all(|op| self.rowid_from_same_table(op.p3, table, cursors, 0));
                let scans = on
                    .iter()
                    .any(|op| !matches!(op.opcode.as_str(), "SeekRowid" | "NotExists"));
                if !internal || scans && self.iterates(&on) {
                    read.whole(table);
                }
            }
            Access::RowidKey => self.classify_rowid(cursor, target, &on, cursors, read),
            Access::KeyIndex => self.classify_index(target, &on, read),
        }
    }

    /// Whether `op` is an INSERT's check that its rowid key is free: the next instruction fails
    /// the statement with SQLite's primary-key constraint error.
    fn key_check(&self, op: &Op) -> bool {
        const PRIMARY_KEY_CONSTRAINT: i64 = 1555;
        let at = self.ops.iter().position(|o| std::ptr::eq(o, op));
        at.and_then(|i| self.ops.get(i + 1))
            .is_some_and(|next| next.opcode == "Halt" && next.p1 == PRIMARY_KEY_CONSTRAINT)
    }

    /// Whether the cursor is stepped (a scan or a range).
    fn iterates(&self, on: &[&Op]) -> bool {
        on.iter()
            .any(|op| matches!(op.opcode.as_str(), "Next" | "Prev" | "Rewind" | "Last"))
    }

    /// Whether every value of register `r` is a rowid read from a cursor on `table` (an index's
    /// entry, the table's own row, or a set of those): a row that other instructions found.
    fn rowid_from_same_table(
        &self,
        r: i64,
        table: &TableDef,
        cursors: &BTreeMap<i64, Target>,
        depth: usize,
    ) -> bool {
        let Some(writers) = self.writers_of(r) else {
            return false;
        };
        let mut writers = writers.peekable();
        writers.peek().is_some()
            && depth <= MAX_DEPTH
            && writers.all(|op| match op.opcode.as_str() {
                "IdxRowid" | "Rowid" => cursors
                    .get(&op.p1)
                    .is_some_and(|t| t.table.name == table.name),
                "RowSetRead" => self
                    .ops
                    .iter()
                    .filter(|add| add.opcode == "RowSetAdd" && add.p1 == op.p1)
                    // A register that is both (the set's rowids read back into the register
                    // that added them) is judged by its other writers, here.
                    .all(|add| {
                        add.p2 == r || self.rowid_from_same_table(add.p2, table, cursors, depth + 1)
                    }),
                _ => false,
            })
    }

    fn classify_rowid(
        &self,
        cursor: i64,
        target: &Target,
        on: &[&Op],
        cursors: &BTreeMap<i64, Target>,
        read: &mut Reads,
    ) {
        let table = &target.table;
        let mut bounds = Bounds::default();
        let mut starts = Vec::new();
        for op in on {
            match op.opcode.as_str() {
                "NotExists" if target.writes && self.key_check(op) => {}
                // A row an earlier pass of the statement found (a DELETE's or UPDATE's rowids).
                "SeekRowid" | "NotExists"
                    if self.rowid_from_same_table(op.p3, table, cursors, 0) => {}
                "SeekRowid" | "NotExists" => match self.prefixes(table, op.p3, 1) {
                    Some(keys) => read.keys(table, keys),
                    None => return read.whole(table),
                },
                "SeekGE" | "SeekGT" => {
                    starts.push(op.p2);
                    bounds.low.push(self.one(table, op.p3, 1));
                }
                "Rewind" => {
                    starts.push(op.p2);
                    bounds.low.push(None);
                }
                // A scan down from the end: read as the whole table.
                "SeekLE" | "SeekLT" | "Last" | "Prev" => return read.whole(table),
                _ => {}
            }
        }
        if starts.is_empty() {
            return;
        }
        let rowid_registers: Vec<i64> = self
            .ops
            .iter()
            .filter(|op| op.opcode == "Rowid" && op.p1 == cursor)
            .map(|op| op.p2)
            .collect();
        let mut ended = BTreeSet::new();
        for op in self.ops {
            let stop = matches!(op.opcode.as_str(), "Gt" | "Ge")
                && rowid_registers.contains(&op.p3)
                && starts.contains(&op.p2);
            if stop {
                let bound = self.one(table, op.p1, 1);
                ended.insert(op.p2);
                bounds.high.push(match op.opcode.as_str() {
                    "Gt" => bound.and_then(|k| successor(&k)),
                    _ => bound,
                });
            }
        }
        bounds.high_complete = starts.iter().all(|s| ended.contains(s));
        read.range(table, bounds);
    }

    fn classify_index(&self, target: &Target, on: &[&Op], read: &mut Reads) {
        let table = &target.table;
        let width = table.primary_key.len() as i64;
        let count = |op: &Op| match &op.p4 {
            SqlValue::Integer(n) => *n,
            SqlValue::Text(t) => t.parse().unwrap_or(0),
            _ => 0,
        };
        let seeks: Vec<(&str, i64, i64, i64)> = on
            .iter()
            .map(|op| (op.opcode.as_str(), op.p2, op.p3, count(op)))
            .collect();
        let is = |names: &[&str], s: &str| names.contains(&s);
        let starts: Vec<_> = seeks
            .iter()
            .filter(|s| {
                is(
                    &["SeekGE", "SeekGT", "SeekLE", "SeekLT", "Rewind", "Last"],
                    s.0,
                )
            })
            .collect();
        let stops: Vec<_> = seeks
            .iter()
            .filter(|s| is(&["IdxGT", "IdxGE", "IdxLT", "IdxLE"], s.0))
            .collect();
        for &(name, _, r, n) in &seeks {
            let check = is(&["Found", "NotFound", "NoConflict", "IfNoHope"], name);
            if check && !(target.writes && name != "NotFound") {
                self.lookup(table, r, n, width, read);
            }
        }
        // An equality seek: each start a SeekGE whose registers an IdxGT tests.
        let equal = !starts.is_empty()
            && starts.iter().all(|s| {
                s.0 == "SeekGE"
                    && stops
                        .iter()
                        .any(|t| t.0 == "IdxGT" && (t.2, t.3) == (s.2, s.3))
            })
            && stops
                .iter()
                .all(|t| t.0 == "IdxGT" && starts.iter().any(|s| (s.2, s.3) == (t.2, t.3)));
        if equal {
            for s in &starts {
                self.lookup(table, s.2, s.3, width, read);
            }
            return;
        }
        if starts.is_empty() {
            return;
        }
        let descending = ["SeekLE", "SeekLT", "Last", "IdxLT", "IdxLE"];
        if seeks.iter().any(|s| is(&descending, s.0)) {
            // A scan down from the end: read as the whole table.
            return read.whole(table);
        }
        let mut bounds = Bounds::default();
        for &&(name, _, r, n) in &starts {
            bounds.low.push(match name {
                "Rewind" => None,
                _ => self.one(table, r, n),
            });
        }
        let exits: Vec<i64> = starts.iter().map(|s| s.1).collect();
        let mut ended = BTreeSet::new();
        for &&(name, exit, r, n) in stops.iter().filter(|t| exits.contains(&t.1)) {
            ended.insert(exit);
            let key = self.one(table, r, n);
            bounds.high.push(match name {
                "IdxGT" => key.and_then(|k| successor(&k)),
                _ => key,
            });
        }
        bounds.high_complete = exits.iter().all(|e| ended.contains(e));
        read.range(table, bounds);
    }

    /// A lookup of registers `r .. r + n` on the key: keys when `n` is the key's width, a
    /// prefix's range when shorter.
    fn lookup(&self, table: &TableDef, r: i64, n: i64, width: i64, read: &mut Reads) {
        match self.prefixes(table, r, n) {
            Some(keys) if n == width => read.keys(table, keys),
            Some(prefixes) => {
                for prefix in prefixes {
                    let end = successor(&prefix);
                    read.ranges(
                        table,
                        KeyRange {
                            start: Some(prefix),
                            end,
                        },
                    );
                }
            }
            None => read.whole(table),
        }
    }

    /// The one key prefix registers `r .. r + n` hold; None when they may hold several (a bound
    /// that moves, as in a loop over an `IN` list, is not read).
    fn one(&self, table: &TableDef, r: i64, n: i64) -> Option<RowKey> {
        match self.prefixes(table, r, n)?.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }
}

/// Whether `op` positions or steps cursor `cursor` (its P1).
fn on_cursor(op: &Op, cursor: i64) -> bool {
    op.p1 == cursor
        && matches!(
            op.opcode.as_str(),
            "SeekRowid"
                | "NotExists"
                | "SeekGE"
                | "SeekGT"
                | "SeekLE"
                | "SeekLT"
                | "Rewind"
                | "Last"
                | "Next"
                | "Prev"
                | "IdxGT"
                | "IdxGE"
                | "IdxLT"
                | "IdxLE"
                | "Found"
                | "NotFound"
                | "NoConflict"
                | "IfNoHope"
                | "Sort"
                | "SorterSort"
        )
}

/// What the cursors read, gathered, with the bound on keys.
struct Reads {
    tables: BTreeMap<String, ReadRows>,
    keys: usize,
    max_keys: usize,
}

impl Reads {
    fn new(max_keys: usize) -> Reads {
        Reads {
            tables: BTreeMap::new(),
            keys: 0,
            max_keys,
        }
    }

    fn entry(&mut self, table: &TableDef) -> Option<(&mut BTreeSet<RowKey>, &mut Vec<KeyRange>)> {
        let rows = self
            .tables
            .entry(table.name.to_lowercase())
            .or_insert_with(|| ReadRows::Some {
                keys: BTreeSet::new(),
                ranges: Vec::new(),
            });
        match rows {
            ReadRows::Some { keys, ranges } => Some((keys, ranges)),
            ReadRows::Whole => None,
        }
    }

    fn keys(&mut self, table: &TableDef, new: Vec<RowKey>) {
        let room = self.max_keys.saturating_sub(self.keys);
        let Some((keys, _)) = self.entry(table) else {
            return;
        };
        let before = keys.len();
        keys.extend(new);
        let added = keys.len() - before;
        self.keys += added;
        if added > room {
            self.whole(table);
        }
    }

    fn ranges(&mut self, table: &TableDef, range: KeyRange) {
        let full = self.keys >= self.max_keys;
        let Some((_, ranges)) = self.entry(table) else {
            return;
        };
        if full {
            return self.whole(table);
        }
        if !ranges.contains(&range) {
            ranges.push(range);
            self.keys += 1;
        }
    }

    /// A scan between `bounds`' lowest start and highest stop.
    fn range(&mut self, table: &TableDef, bounds: Bounds) {
        let start = match bounds.low.iter().any(Option::is_none) || bounds.low.is_empty() {
            true => None,
            false => bounds.low.into_iter().flatten().min(),
        };
        let open = !bounds.high_complete
            || bounds.high.is_empty()
            || bounds.high.iter().any(Option::is_none);
        let end = match open {
            true => None,
            false => bounds.high.into_iter().flatten().max(),
        };
        self.ranges(table, KeyRange { start, end });
    }

    fn whole(&mut self, table: &TableDef) {
        let name = table.name.to_lowercase();
        if let Some(ReadRows::Some { keys, ranges }) = self.tables.insert(name, ReadRows::Whole) {
            self.keys -= (keys.len() + ranges.len()).min(self.keys);
        }
    }

    /// What was read; a table read as a range with no bounds is read whole.
    fn done(self) -> RowsRead {
        let tables = self
            .tables
            .into_iter()
            .map(|(name, rows)| match rows {
                ReadRows::Some { ranges, .. } if ranges.contains(&KeyRange::whole()) => {
                    (name, ReadRows::Whole)
                }
                other => (name, other),
            })
            .collect();
        RowsRead { tables }
    }
}
