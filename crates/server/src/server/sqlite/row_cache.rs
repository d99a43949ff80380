//! Recently generated Seed23 rows, kept the way a database's buffer cache keeps recently read pages: a
//! scan that repeats (the iterations of a profile) reads cells instead of generating them again, and
//! the first scan of a range is the cold one.
//!
//! Direct-mapped by row id into a fixed number of slots, so its size is bounded however large the table;
//! within a row each cell is generated at most once, when a query first reads it (a query that reads one
//! column never pays for the other 22). A row is only evicted when neither the current scan nor the one
//! before it read it, so a scan longer than the cache keeps what fits instead of churning it to no one's
//! benefit, and a new working set takes over after one scan.
//!
//! Next to each cell as SQLite stores it, a row can keep the cell's wire encoding (a
//! `google.protobuf.Value`), made the first time a plain scan streams it (see `scan.rs`): repeated
//! plain scans then copy bytes instead of converting every value again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rusqlite::types::{Value as SqlValue, ValueRef};

use super::sql_value::{encode_sql, to_sql};
use crate::demo::seed23;
use crate::wire::Type;

/// Rows kept at most: about 18 MB of Seed23 cells, and as much again for their wire encodings once
/// plain scans have streamed them.
pub const SLOTS: usize = 16 * 1024;

/// The Spanner type of each Seed23 column, by position.
fn column_types() -> &'static [Type] {
    static TYPES: OnceLock<Vec<Type>> = OnceLock::new();
    TYPES.get_or_init(|| seed23::table().columns.into_iter().map(|c| c.ty).collect())
}

/// One row's cells, each generated on first read.
#[derive(Debug)]
pub struct CachedRow {
    id: i64,
    /// The last scan that read it.
    used: AtomicU64,
    cells: [OnceLock<SqlValue>; seed23::COLUMN_COUNT],
    /// Each cell's body as a `google.protobuf.Value`, encoded on first use.
    encoded: [OnceLock<Box<[u8]>>; seed23::COLUMN_COUNT],
}

impl CachedRow {
    fn new(id: i64, scan: u64) -> Self {
        CachedRow {
            id,
            used: AtomicU64::new(scan),
            cells: std::array::from_fn(|_| OnceLock::new()),
            encoded: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// Row `id` outside any cache: for a scan whose row's slot is taken by a row in use.
    pub fn uncached(id: i64) -> Self {
        CachedRow::new(id, 0)
    }

    /// The row's id.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// Cell `column` as SQLite stores it, generated now if no query read it before; `None` for a
    /// column the table does not have.
    pub fn cell(&self, column: usize) -> Option<&SqlValue> {
        let slot = self.cells.get(column)?;
        Some(slot.get_or_init(|| to_sql(seed23::cell(self.id, column))))
    }

    /// Cell `column` in wire form, the body of a `google.protobuf.Value`: exactly what
    /// `encode_sql` makes of the cell for the column's type, encoded now if no scan needed it before.
    pub fn encoded(&self, column: usize) -> Result<&[u8], String> {
        let slot = self
            .encoded
            .get(column)
            .ok_or_else(|| format!("Seed23 has no column {column}"))?;
        if let Some(bytes) = slot.get() {
            return Ok(bytes);
        }
        let (Some(ty), Some(cell)) = (column_types().get(column), self.cell(column)) else {
            return Err(format!("Seed23 has no column {column}"));
        };
        let mut body = Vec::new();
        encode_sql(ty, ValueRef::from(cell), &mut body)?;
        Ok(slot.get_or_init(|| body.into_boxed_slice()))
    }
}

/// The cache: a slot per `id % SLOTS`, holding the last row that mapped there.
#[derive(Debug)]
pub struct RowCache {
    slots: Box<[Mutex<Option<Arc<CachedRow>>>]>,
    scans: AtomicU64,
}

impl Default for RowCache {
    fn default() -> Self {
        RowCache::with_slots(SLOTS)
    }
}

impl RowCache {
    /// A cache of `slots` rows (at least one).
    pub fn with_slots(slots: usize) -> Self {
        RowCache {
            slots: (0..slots.max(1)).map(|_| Mutex::new(None)).collect(),
            scans: AtomicU64::new(0),
        }
    }

    /// A number for a new scan (each cursor's pass over the table).
    pub fn begin_scan(&self) -> u64 {
        self.scans.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Row `id` for `scan`: the cached one, or a fresh one that takes its slot when the slot is free
    /// or its row was read by neither this scan nor the one before; `None` when the slot's row is in
    /// use (the caller generates the cells directly).
    pub fn row_for_scan(&self, id: i64, scan: u64) -> Option<Arc<CachedRow>> {
        let mut slot = self
            .slot(id)?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(row) = &*slot {
            if row.id == id {
                row.used.store(scan, Ordering::Relaxed);
                return Some(Arc::clone(row));
            }
            if row.used.load(Ordering::Relaxed).saturating_add(1) >= scan {
                return None;
            }
        }
        let row = Arc::new(CachedRow::new(id, scan));
        *slot = Some(Arc::clone(&row));
        Some(row)
    }

    /// Row `id` if the cache holds it.
    pub fn get(&self, id: i64) -> Option<Arc<CachedRow>> {
        let slot = self
            .slot(id)?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        slot.as_ref().filter(|row| row.id == id).map(Arc::clone)
    }

    fn slot(&self, id: i64) -> Option<&Mutex<Option<Arc<CachedRow>>>> {
        let index = id.rem_euclid(self.slots.len() as i64) as usize;
        self.slots.get(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_the_generated_ones_and_come_back_from_the_cache() {
        let cache = RowCache::with_slots(4);
        let scan = cache.begin_scan();
        let row = cache.row_for_scan(7, scan).expect("a free slot");
        for column in 0..seed23::COLUMN_COUNT {
            assert_eq!(
                row.cell(column),
                Some(&to_sql(seed23::cell(7, column))),
                "column {column}"
            );
        }
        assert!(row.cell(seed23::COLUMN_COUNT).is_none());
        let again = cache.row_for_scan(7, scan).expect("cached");
        assert!(Arc::ptr_eq(&row, &again), "a repeat read hits");
        assert!(cache.get(7).is_some_and(|r| Arc::ptr_eq(&r, &row)));
        assert!(cache.get(8).is_none(), "get never adds");
        assert!(cache.get(8).is_none());
        assert_eq!(
            cache.row_for_scan(-2, scan).map(|r| r.id()),
            Some(-2),
            "negative ids have a slot too"
        );
    }

    #[test]
    fn a_row_is_evicted_only_when_the_last_two_scans_left_it_alone() {
        let cache = RowCache::with_slots(4);
        let first = cache.begin_scan();
        assert!(cache.row_for_scan(1, first).is_some());
        // Row 5 maps to row 1's slot: not while this scan or the next use row 1.
        assert!(cache.row_for_scan(5, first).is_none());
        let second = cache.begin_scan();
        assert!(cache.row_for_scan(5, second).is_none());
        let third = cache.begin_scan();
        let five = cache
            .row_for_scan(5, third)
            .expect("row 1 went unread for a scan");
        assert_eq!(five.id(), 5);
        assert!(cache.get(1).is_none());
    }

    #[test]
    fn a_cell_is_generated_only_when_read() {
        let cache = RowCache::with_slots(1);
        let row = cache.row_for_scan(3, cache.begin_scan()).expect("free");
        assert!(row.cells.iter().all(|c| c.get().is_none()));
        let _ = row.cell(0);
        assert_eq!(row.cells.iter().filter(|c| c.get().is_some()).count(), 1);
        assert!(row.encoded.iter().all(|c| c.get().is_none()));
    }

    #[test]
    fn a_cells_wire_form_is_what_encode_sql_makes_of_it() {
        let cache = RowCache::with_slots(256);
        let scan = cache.begin_scan();
        // Enough rows to meet NULLs, empty arrays and every column's odd cases.
        for id in 1..200 {
            let row = cache.row_for_scan(id, scan).expect("a slot");
            for (column, ty) in column_types().iter().enumerate() {
                let mut want = Vec::new();
                encode_sql(
                    ty,
                    ValueRef::from(&to_sql(seed23::cell(id, column))),
                    &mut want,
                )
                .expect("encodes");
                assert_eq!(
                    row.encoded(column),
                    Ok(&want[..]),
                    "row {id} column {column}"
                );
                let again = row.encoded(column).expect("kept");
                assert!(std::ptr::eq(again, row.encoded(column).expect("kept")));
            }
            assert!(row.encoded(seed23::COLUMN_COUNT).is_err());
        }
        let lone = CachedRow::uncached(5);
        assert_eq!(lone.id(), 5);
        assert!(lone.encoded(0).is_ok());
    }
}
