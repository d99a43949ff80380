//! The locks the lock table holds: per table, the entries on single rows by key and the range
//! entries as a list, and per transaction the keys it holds, with the counts its bounds are
//! checked against. Storage only: who waits and who wounds is `locks.rs`'s.

use std::collections::HashMap;
use std::collections::btree_map::{BTreeMap, Entry as MapEntry};
use std::ops::Bound;
use std::sync::Arc;

use super::lock_key::{KeyRange, LockKey, LockMode, RowKey, Rows, TxnId, columns_overlap};

/// One entry: a transaction's lock on a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldLock {
    /// The holder.
    pub txn: TxnId,
    /// What it holds.
    pub key: LockKey,
    /// In which mode.
    pub mode: LockMode,
}

/// One entry as a table keeps it (the table and the rows are where it is kept).
#[derive(Debug, Clone)]
struct Hold {
    txn: TxnId,
    mode: LockMode,
    column: Option<Arc<str>>,
}

impl Hold {
    fn is(&self, txn: TxnId, column: &Option<Arc<str>>) -> bool {
        self.txn == txn && self.column == *column
    }
}

#[derive(Debug, Default)]
struct TableLocks {
    rows: BTreeMap<RowKey, Vec<Hold>>,
    ranges: Vec<(KeyRange, Hold)>,
}

impl TableLocks {
    fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.ranges.is_empty()
    }

    fn hold_mut(&mut self, txn: TxnId, key: &LockKey) -> Option<&mut Hold> {
        match &key.rows {
            Rows::Row(row) => self
                .rows
                .get_mut(row)?
                .iter_mut()
                .find(|h| h.is(txn, &key.column)),
            Rows::Range(range) => self
                .ranges
                .iter_mut()
                .find(|(r, h)| r == range && h.is(txn, &key.column))
                .map(|(_, h)| h),
        }
    }
}

/// Every lock held, by table and by transaction.
#[derive(Debug, Default)]
pub struct Held {
    tables: HashMap<Arc<str>, TableLocks>,
    by_txn: HashMap<TxnId, Vec<LockKey>>,
    entries: usize,
    ranges: usize,
}

impl Held {
    /// Entries held in all (an upgrade is still one).
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Range entries held in all.
    pub fn ranges(&self) -> usize {
        self.ranges
    }

    /// The entries `txn` holds.
    pub fn count_of(&self, txn: TxnId) -> usize {
        self.by_txn.get(&txn).map_or(0, Vec::len)
    }

    /// The mode `txn` holds on exactly `key` (same rows, same column), if it holds it.
    pub fn mode_of(&self, txn: TxnId, key: &LockKey) -> Option<LockMode> {
        let table = self.tables.get(&key.table)?;
        match &key.rows {
            Rows::Row(row) => table
                .rows
                .get(row)?
                .iter()
                .find(|h| h.is(txn, &key.column))
                .map(|h| h.mode),
            Rows::Range(range) => table
                .ranges
                .iter()
                .find(|(r, h)| r == range && h.is(txn, &key.column))
                .map(|(_, h)| h.mode),
        }
    }

    /// The other transactions' entries that conflict with `txn` asking `key` in `mode`: on a
    /// common cell, in a conflicting mode.
    pub fn conflicting(&self, txn: TxnId, key: &LockKey, mode: LockMode) -> Vec<HeldLock> {
        let Some(table) = self.tables.get(&key.table) else {
            return Vec::new();
        };
        let blocks = |h: &Hold| {
            h.txn != txn
                && columns_overlap(h.column.as_deref(), key.column.as_deref())
                && LockMode::conflicts(h.mode, mode)
        };
        let found = |rows: Rows, h: &Hold| HeldLock {
            txn: h.txn,
            key: LockKey {
                table: key.table.clone(),
                rows,
                column: h.column.clone(),
            },
            mode: h.mode,
        };
        let points: Vec<(&RowKey, &Vec<Hold>)> = match &key.rows {
            Rows::Row(row) => table.rows.get_key_value(row).into_iter().collect(),
            Rows::Range(range) if range.is_empty() => Vec::new(),
            Rows::Range(range) => {
                let start = range
                    .start
                    .as_ref()
                    .map_or(Bound::Unbounded, Bound::Included);
                let end = range.end.as_ref().map_or(Bound::Unbounded, Bound::Excluded);
                table.rows.range::<RowKey, _>((start, end)).collect()
            }
        };
        let on_points = points.into_iter().flat_map(|(row, holds)| {
            holds
                .iter()
                .filter(|h| blocks(h))
                .map(|h| found(Rows::Row(row.clone()), h))
        });
        let on_ranges = table
            .ranges
            .iter()
            .filter(|(range, h)| blocks(h) && key.rows.overlaps(&Rows::Range(range.clone())))
            .map(|(range, h)| found(Rows::Range(range.clone()), h));
        on_points.chain(on_ranges).collect()
    }

    /// A new entry: `txn` holds `key` in `mode` (the caller knows it held nothing on exactly
    /// `key`, and checked the bounds).
    pub fn add(&mut self, txn: TxnId, key: &LockKey, mode: LockMode) {
        let table = self.tables.entry(key.table.clone()).or_default();
        let hold = Hold {
            txn,
            mode,
            column: key.column.clone(),
        };
        match &key.rows {
            Rows::Row(row) => table.rows.entry(row.clone()).or_default().push(hold),
            Rows::Range(range) => {
                table.ranges.push((range.clone(), hold));
                self.ranges += 1;
            }
        }
        self.entries += 1;
        self.by_txn.entry(txn).or_default().push(key.clone());
    }

    /// Changes the mode of `txn`'s entry on exactly `key` (an upgrade, or its undoing).
    pub fn set_mode(&mut self, txn: TxnId, key: &LockKey, mode: LockMode) {
        if let Some(hold) = self
            .tables
            .get_mut(&key.table)
            .and_then(|t| t.hold_mut(txn, key))
        {
            hold.mode = mode;
        }
    }

    /// Removes `txn`'s entry on exactly `key`.
    pub fn remove(&mut self, txn: TxnId, key: &LockKey) {
        let Some(table) = self.tables.get_mut(&key.table) else {
            return;
        };
        let removed = match &key.rows {
            Rows::Row(row) => match table.rows.entry(row.clone()) {
                MapEntry::Occupied(mut holds) => {
                    let before = holds.get().len();
                    holds.get_mut().retain(|h| !h.is(txn, &key.column));
                    let removed = before - holds.get().len();
                    if holds.get().is_empty() {
                        holds.remove();
                    }
                    removed
                }
                MapEntry::Vacant(_) => 0,
            },
            Rows::Range(range) => {
                let before = table.ranges.len();
                table
                    .ranges
                    .retain(|(r, h)| !(r == range && h.is(txn, &key.column)));
                let removed = before - table.ranges.len();
                self.ranges -= removed;
                removed
            }
        };
        self.entries -= removed;
        if table.is_empty() {
            self.tables.remove(&key.table);
        }
        if let Some(keys) = self.by_txn.get_mut(&txn) {
            if let Some(at) = keys.iter().position(|k| k == key) {
                keys.swap_remove(at);
            }
            if keys.is_empty() {
                self.by_txn.remove(&txn);
            }
        }
    }

    /// Removes every entry of `txn` (each table's ranges in one pass).
    pub fn release(&mut self, txn: TxnId) {
        let Some(keys) = self.by_txn.remove(&txn) else {
            return;
        };
        let mut range_tables = Vec::new();
        for key in keys {
            let Some(table) = self.tables.get_mut(&key.table) else {
                continue;
            };
            match &key.rows {
                Rows::Row(row) => {
                    if let MapEntry::Occupied(mut holds) = table.rows.entry(row.clone()) {
                        let before = holds.get().len();
                        holds.get_mut().retain(|h| h.txn != txn);
                        self.entries -= before - holds.get().len();
                        if holds.get().is_empty() {
                            holds.remove();
                        }
                    }
                }
                Rows::Range(_) => {
                    if !range_tables.contains(&key.table) {
                        range_tables.push(key.table.clone());
                    }
                }
            }
        }
        for name in &range_tables {
            if let Some(table) = self.tables.get_mut(name) {
                let before = table.ranges.len();
                table.ranges.retain(|(_, h)| h.txn != txn);
                let removed = before - table.ranges.len();
                self.ranges -= removed;
                self.entries -= removed;
            }
        }
        self.tables.retain(|_, t| !t.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_counted_in_and_out_per_table_and_transaction() {
        let mut held = Held::default();
        let (a, b) = (TxnId(1), TxnId(2));
        let row = |k| LockKey::row("t", RowKey::ints(&[k]));
        held.add(a, &row(1), LockMode::ReaderShared);
        held.add(b, &row(1), LockMode::ReaderShared);
        held.add(a, &LockKey::table("t"), LockMode::ReaderShared);
        held.add(a, &LockKey::table("u"), LockMode::ReaderShared);
        assert_eq!((held.entries(), held.ranges(), held.count_of(a)), (4, 2, 3));
        held.set_mode(a, &row(1), LockMode::Exclusive);
        assert_eq!(held.mode_of(a, &row(1)), Some(LockMode::Exclusive));
        assert_eq!(held.mode_of(b, &row(1)), Some(LockMode::ReaderShared));
        assert_eq!(
            held.conflicting(b, &row(1), LockMode::ReaderShared).len(),
            1
        );
        held.release(a);
        assert_eq!((held.entries(), held.ranges(), held.count_of(a)), (1, 0, 0));
        assert!(held.conflicting(TxnId(3), &row(1), LockMode::Exclusive)[0].txn == b);
        held.remove(b, &row(1));
        assert_eq!(held.entries(), 0);
        assert!(held.tables.is_empty() && held.by_txn.is_empty());
    }
}
