//! Plain scans of Seed23: queries such as `SELECT * FROM Seed23 LIMIT 10000`, whose every result column
//! is a column of the row the scan is on, unchanged.
//!
//! For those the query thread need not take each value out of SQLite and encode it again: it copies the
//! wire form the row cache keeps for each cell (`CachedRow::encoded`), so a repeated scan streams at
//! the speed of copying bytes, the way a database serves a table scan from its buffer cache. SQLite
//! still runs the statement (the scan, LIMIT and OFFSET, ORDER BY Id): the cursor tells the query thread
//! which row each result row is ([`ScanRows`]) and hands SQLite NULLs it never looks at.
//!
//! Whether a statement is plain is read from its bytecode (`EXPLAIN`), conservatively: one virtual-table
//! cursor, opcodes from a short list that cannot compute, compare, sort or group, and a result row made
//! only of that cursor's columns, each written once and read by nothing else. Anything else (a WHERE
//! clause, an expression, a join, an aggregate, a sort) takes the general path, value by value.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;

use super::row_cache::CachedRow;
use crate::demo::seed23;

/// Between a connection's Seed23 cursor and its query thread during a plain scan.
#[derive(Debug, Default)]
pub struct ScanRows {
    /// Set while a plain scan runs: the cursor publishes its rows and gives SQLite NULLs.
    on: AtomicBool,
    /// The row the cursor is on.
    current: Mutex<Option<Arc<CachedRow>>>,
}

impl ScanRows {
    /// Whether a plain scan is running.
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// The cursor moved to `row` (`None`: past the end).
    pub fn publish(&self, row: Option<Arc<CachedRow>>) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = row;
    }

    /// The row the cursor is on, taken: each result row is read once.
    pub fn take(&self) -> Option<Arc<CachedRow>> {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Runs the plain scan's mode while the guard lives.
    pub fn start(&self) -> PlainScanGuard<'_> {
        self.on.store(true, Ordering::Relaxed);
        PlainScanGuard(self)
    }
}

/// Ends a plain scan's mode when dropped, however the scan ended.
#[derive(Debug)]
pub struct PlainScanGuard<'a>(&'a ScanRows);

impl Drop for PlainScanGuard<'_> {
    fn drop(&mut self) {
        self.0.on.store(false, Ordering::Relaxed);
        self.0.publish(None);
    }
}

/// Where a result column comes from, as SQLite's column metadata says: table and column names.
pub type Origin = Option<(String, String)>;

/// The Seed23 column behind each result column when `sql` is a plain scan of Seed23, `None` otherwise
/// (including when it cannot be explained).
pub fn plain_scan(conn: &Connection, sql: &str, origins: &[Origin]) -> Option<Vec<usize>> {
    let ops = program(conn, sql).ok()?;
    let columns = projection(&ops)?;
    let names = seed23::table().columns;
    let all_from_seed23 = columns.len() == origins.len()
        && columns.iter().zip(origins).all(|(&c, origin)| {
            origin.as_ref().is_some_and(|(table, column)| {
                table.eq_ignore_ascii_case("Seed23")
                    && names
                        .get(c)
                        .is_some_and(|f| f.name.eq_ignore_ascii_case(column))
            })
        });
    all_from_seed23.then_some(columns)
}

/// One instruction of a prepared statement's bytecode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// Its name, as `EXPLAIN` lists it.
    pub opcode: String,
    /// Operands P1 to P3.
    pub p: [i64; 3],
}

/// The bytecode of `sql`, as `EXPLAIN` lists it.
pub fn program(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<Op>> {
    let mut stmt = conn.prepare(&format!("EXPLAIN {sql}"))?;
    let mut rows = stmt.raw_query();
    let mut ops = Vec::new();
    while let Some(row) = rows.next()? {
        ops.push(Op {
            opcode: row.get(1)?,
            p: [row.get(2)?, row.get(3)?, row.get(4)?],
        });
    }
    Ok(ops)
}

/// Registers an instruction reads or writes (besides a virtual-table column's output and the result
/// row, handled apart); `None` for an opcode a plain scan does not use. `argc` is the constant an
/// `Integer` instruction put in a register, for `VFilter`'s argument count.
fn registers(op: &Op, argc: impl Fn(i64) -> Option<i64>) -> Option<Vec<i64>> {
    let [p1, p2, p3] = op.p;
    Some(match op.opcode.as_str() {
        // `Explain` marks a plan element for SQLite's per-loop counters (PROFILE): it does nothing.
        "Init" | "Goto" | "Halt" | "Transaction" | "Noop" | "Explain" | "VOpen" | "VNext" => {
            Vec::new()
        }
        "Integer" | "Variable" => vec![p2],
        "MustBeInt" | "IfNot" | "IfPos" | "DecrJumpZero" => vec![p1],
        "OffsetLimit" => vec![p1, p2, p3],
        // idxNum in P3, the argument count in P3+1, then the arguments.
        "VFilter" => (p3..p3 + 2 + argc(p3 + 1)?.clamp(0, 64)).collect(),
        _ => return None,
    })
}

/// The column each result column reads, when the bytecode is a plain scan: one virtual-table cursor
/// whose columns go straight into the one result row and nowhere else.
pub fn projection(ops: &[Op]) -> Option<Vec<usize>> {
    let mut cursor = None;
    let mut result = None;
    // Output register -> column.
    let mut columns = std::collections::HashMap::new();
    let mut touched = HashSet::new();
    let argc = |register: i64| {
        ops.iter()
            .filter(|op| op.opcode == "Integer" && op.p[1] == register)
            .map(|op| op.p[0])
            .max()
    };
    for op in ops {
        let [p1, p2, p3] = op.p;
        // A second cursor, result row or write to a result register: not a plain scan.
        let repeated = match op.opcode.as_str() {
            "VOpen" => cursor.replace(p1).is_some(),
            "VColumn" => columns.insert(p3, (p1, p2)).is_some(),
            "ResultRow" => result.replace((p1, p2)).is_some(),
            _ => false,
        };
        if repeated {
            return None;
        }
        if matches!(op.opcode.as_str(), "VFilter" | "VNext") && Some(p1) != cursor {
            return None;
        }
        if op.opcode != "VColumn" && op.opcode != "ResultRow" {
            touched.extend(registers(op, argc)?);
        }
    }
    let (cursor, (first, count)) = (cursor?, result?);
    if count <= 0 || usize::try_from(count).ok()? != columns.len() {
        return None;
    }
    (first..first + count)
        .map(|register| {
            let &(c, column) = columns.get(&register)?;
            let plain = c == cursor && !touched.contains(&register);
            plain.then(|| usize::try_from(column).ok())?
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::db::Database;
    use super::*;

    fn columns_of(sql: &str) -> Option<Vec<usize>> {
        let db = Database::open(50).expect("opens");
        let (conn, _) = db
            .connect(
                Arc::default(),
                Arc::default(),
                super::super::db::test_limits(),
                None,
            )
            .expect("connects");
        let stmt = conn.prepare(sql).expect("prepares");
        let origins: Vec<Origin> = stmt
            .columns_with_metadata()
            .map(|c| Some((c.table_name()?.to_owned(), c.origin_name()?.to_owned())))
            .collect();
        plain_scan(&conn, sql, &origins)
    }

    #[test]
    fn plain_scans_are_recognised_with_their_columns() {
        let all: Vec<usize> = (0..seed23::COLUMN_COUNT).collect();
        assert_eq!(
            columns_of("SELECT * FROM Seed23 LIMIT 10000"),
            Some(all.clone())
        );
        assert_eq!(columns_of("select * from seed23"), Some(all));
        assert_eq!(
            columns_of("SELECT Name, Id FROM Seed23 LIMIT @n OFFSET 5"),
            Some(vec![1, 0])
        );
        assert_eq!(
            columns_of("SELECT Notes FROM Seed23 ORDER BY Id"),
            Some(vec![17])
        );
        assert_eq!(
            columns_of("SELECT Id, Id AS Again FROM Seed23"),
            Some(vec![0, 0])
        );
        assert_eq!(
            columns_of("SELECT s.Email FROM Seed23 AS s LIMIT 3"),
            Some(vec![2])
        );
    }

    #[test]
    fn a_plain_scan_stays_plain_with_the_plan_counters_on() {
        // PROFILE turns SQLite's per-loop counters on, which marks each plan element with an
        // `Explain` instruction: the scan is still the same plain scan.
        let db = Database::open(50).expect("opens");
        let (conn, _) = db
            .connect(
                Arc::default(),
                Arc::default(),
                super::super::db::test_limits(),
                None,
            )
            .expect("connects");
        let sql = "SELECT * FROM Seed23 LIMIT 10";
        let without = program(&conn, sql).expect("explains");
        assert!(!without.iter().any(|op| op.opcode == "Explain"));
        super::super::scanstatus::enable(&conn, true).expect("counters on");
        let with = program(&conn, sql).expect("explains");
        assert!(with.iter().any(|op| op.opcode == "Explain"), "{with:?}");
        let all: Vec<usize> = (0..seed23::COLUMN_COUNT).collect();
        assert_eq!(projection(&with), Some(all.clone()));
        assert_eq!(projection(&without), Some(all));
    }

    #[test]
    fn anything_that_computes_takes_the_general_path() {
        for sql in [
            "SELECT * FROM Seed23 WHERE Id < 10",
            "SELECT * FROM Seed23 WHERE Age > 30",
            "SELECT Name FROM Seed23 ORDER BY Name",
            "SELECT Name FROM Seed23 ORDER BY Id DESC",
            "SELECT upper(Name) FROM Seed23",
            "SELECT Id + 1 FROM Seed23",
            "SELECT count(*) FROM Seed23",
            "SELECT max(Name) FROM Seed23",
            "SELECT DISTINCT Country FROM Seed23",
            "SELECT Country FROM Seed23 GROUP BY Country",
            "SELECT a.Id FROM Seed23 a JOIN Seed23 b ON a.Id = b.Id",
            "SELECT Id FROM (SELECT Id FROM Seed23 ORDER BY Name)",
            "SELECT Id, 1 FROM Seed23",
            "SELECT SingerId FROM Singers",
            "SELECT Id FROM Seed23 UNION ALL SELECT Id FROM Seed23",
            "SELECT 1",
        ] {
            assert_eq!(columns_of(sql), None, "{sql}");
        }
    }

    #[test]
    fn the_bytecode_rules() {
        let op = |opcode: &str, p1, p2, p3| Op {
            opcode: opcode.into(),
            p: [p1, p2, p3],
        };
        let scan = vec![
            op("Init", 0, 9, 0),
            op("VOpen", 0, 0, 0),
            op("Integer", 0, 1, 0),
            op("Integer", 0, 2, 0),
            op("VFilter", 0, 8, 1),
            op("VColumn", 0, 3, 4),
            op("VColumn", 0, 1, 5),
            op("ResultRow", 4, 2, 0),
            op("VNext", 0, 5, 0),
            op("Halt", 0, 0, 0),
        ];
        assert_eq!(projection(&scan), Some(vec![3, 1]));
        // A result register some other instruction also touches.
        let mut compared = scan.clone();
        compared.insert(6, op("IfPos", 5, 8, 1));
        assert_eq!(projection(&compared), None);
        // An opcode off the list.
        let mut computed = scan.clone();
        computed.insert(7, op("Function", 0, 5, 5));
        assert_eq!(projection(&computed), None);
        // A register written twice, a second cursor, a second result row.
        let mut twice = scan.clone();
        twice.insert(6, op("VColumn", 0, 2, 4));
        assert_eq!(projection(&twice), None);
        let mut two_cursors = scan.clone();
        two_cursors.insert(2, op("VOpen", 1, 0, 0));
        assert_eq!(projection(&two_cursors), None);
        let mut two_results = scan.clone();
        two_results.insert(8, op("ResultRow", 4, 2, 0));
        assert_eq!(projection(&two_results), None);
        // A result row that is not all the cursor's columns.
        let mut short = scan.clone();
        short[7] = op("ResultRow", 4, 3, 0);
        assert_eq!(projection(&short), None);
        // A filter argument read from a result register; a filter whose argument count is unknown.
        let mut argument = scan.clone();
        argument[3] = op("Integer", 3, 2, 0);
        assert_eq!(projection(&argument), None);
        let mut unknown = scan.clone();
        unknown.remove(3);
        assert_eq!(projection(&unknown), None);
        assert_eq!(projection(&[]), None);
    }
}
