//! Recently generated Seed23 rows, kept the way a database's buffer cache keeps recently read pages: a
//! scan that repeats (the iterations of a profile) reads cells instead of generating them again, and
//! the first scan of a range is the cold one.
//!
//! Direct-mapped by row id into a fixed number of slots, so its size is bounded however large the table;
//! within a row each cell is generated at most once, when a query first reads it (a query that reads one
//! column never pays for the other 22). A scan longer than the cache stops adding rows once it has added
//! as many as the cache holds (the cursor decides), so a full scan does not churn it to no one's benefit.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rusqlite::types::Value as SqlValue;

use super::sql_value::to_sql;
use crate::demo::seed23;

/// Rows kept at most: about 18 MB of Seed23 cells.
pub const SLOTS: usize = 16 * 1024;

/// One row's cells, each generated on first read.
#[derive(Debug)]
pub struct CachedRow {
    id: i64,
    cells: [OnceLock<SqlValue>; seed23::COLUMN_COUNT],
}

impl CachedRow {
    fn new(id: i64) -> Self {
        CachedRow {
            id,
            cells: std::array::from_fn(|_| OnceLock::new()),
        }
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
}

/// The cache: a slot per `id % SLOTS`, holding the last row that mapped there.
#[derive(Debug)]
pub struct RowCache {
    slots: Box<[Mutex<Option<Arc<CachedRow>>>]>,
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
        }
    }

    /// Rows the cache holds at most.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Row `id` if the cache holds it.
    pub fn get(&self, id: i64) -> Option<Arc<CachedRow>> {
        let slot = self
            .slot(id)?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        slot.as_ref().filter(|row| row.id == id).map(Arc::clone)
    }

    /// Row `id`: the cached one, or a fresh one that takes its slot.
    pub fn row(&self, id: i64) -> Arc<CachedRow> {
        let Some(slot) = self.slot(id) else {
            return Arc::new(CachedRow::new(id));
        };
        // A panic while holding a slot leaves a valid Option behind: keep using it.
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        match &*slot {
            Some(row) if row.id == id => Arc::clone(row),
            _ => {
                let row = Arc::new(CachedRow::new(id));
                *slot = Some(Arc::clone(&row));
                row
            }
        }
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
        let row = cache.row(7);
        for column in 0..seed23::COLUMN_COUNT {
            assert_eq!(
                row.cell(column),
                Some(&to_sql(seed23::cell(7, column))),
                "column {column}"
            );
        }
        assert!(row.cell(seed23::COLUMN_COUNT).is_none());
        assert!(Arc::ptr_eq(&row, &cache.row(7)), "a repeat read hits");
        assert!(cache.get(7).is_some_and(|r| Arc::ptr_eq(&r, &row)));
        assert!(cache.get(8).is_none(), "get never adds");
        assert!(cache.get(8).is_none());
        // Row 11 maps to the same slot and evicts row 7.
        let other = cache.row(11);
        assert_eq!(other.id(), 11);
        assert!(!Arc::ptr_eq(&row, &cache.row(7)), "evicted, made again");
        assert_eq!(cache.row(-1).id(), -1, "negative ids have a slot too");
    }

    #[test]
    fn a_cell_is_generated_only_when_read() {
        let cache = RowCache::with_slots(1);
        let row = cache.row(3);
        assert!(row.cells.iter().all(|c| c.get().is_none()));
        let _ = row.cell(0);
        assert_eq!(row.cells.iter().filter(|c| c.get().is_some()).count(), 1);
    }
}
