//! What an optimistic read-write transaction is validated against at commit: per row (and per
//! range written as a whole), the sequence number of the last commit that wrote it. An optimistic
//! transaction reads without locks at a snapshot (the commit sequence it saw); at commit, a row or
//! range it read that a later commit wrote aborts it ([`Versions::validate`]).
//!
//! Versions are kept per row, not per cell: a write of any column counts for every column, so
//! validation may abort where Spanner would not, never the other way. The entries are bounded
//! ([`VERSION_ENTRIES`] by default): past the bound, a table's entries fold into one floor (the
//! newest sequence among them) that every read of the table is checked against, so forgetting is
//! again only ever stricter. [`Versions::forget_before`] drops what no open snapshot can see.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use super::lock_key::{KeyRange, LockKey, RowKey, Rows};

/// The row and range versions kept by default.
pub const VERSION_ENTRIES: usize = 1_000_000;

/// A read written after the reader's snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key:?} was written by commit {written} after the snapshot at {snapshot}")]
pub struct Conflict {
    /// What was read.
    pub key: LockKey,
    /// The commit that wrote it since.
    pub written: u64,
    /// The reader's snapshot.
    pub snapshot: u64,
}

#[derive(Debug, Default)]
struct TableVersions {
    rows: BTreeMap<RowKey, u64>,
    ranges: Vec<(KeyRange, u64)>,
    /// The newest commit among the entries folded away.
    floor: u64,
}

impl TableVersions {
    fn len(&self) -> usize {
        self.rows.len() + self.ranges.len()
    }

    /// The newest commit that wrote any of `rows`.
    fn newest(&self, rows: &Rows) -> u64 {
        let in_ranges = self
            .ranges
            .iter()
            .filter(|(r, _)| rows.overlaps(&Rows::Range(r.clone())))
            .map(|(_, seq)| *seq);
        let in_rows = match rows {
            Rows::Row(key) => self.rows.get(key).copied(),
            Rows::Range(range) if range.is_empty() => None,
            Rows::Range(range) => {
                let start = range
                    .start
                    .as_ref()
                    .map_or(Bound::Unbounded, Bound::Included);
                let end = range.end.as_ref().map_or(Bound::Unbounded, Bound::Excluded);
                self.rows
                    .range::<RowKey, _>((start, end))
                    .map(|(_, seq)| *seq)
                    .max()
            }
        };
        in_ranges.chain(in_rows).fold(self.floor, u64::max)
    }
}

/// The last commit to write each row and range, per table.
#[derive(Debug)]
pub struct Versions {
    tables: HashMap<Arc<str>, TableVersions>,
    entries: usize,
    bound: usize,
}

impl Versions {
    /// Empty, keeping at most `bound` entries (at least one).
    pub fn new(bound: usize) -> Versions {
        Versions {
            tables: HashMap::new(),
            entries: 0,
            bound: bound.max(1),
        }
    }

    /// Records that commit `seq` wrote `key` (its column is ignored: versions are per row).
    pub fn wrote(&mut self, key: &LockKey, seq: u64) {
        let table = self.tables.entry(key.table.clone()).or_default();
        match &key.rows {
            Rows::Row(row) => {
                let slot = table.rows.entry(row.clone()).or_insert_with(|| {
                    self.entries += 1;
                    0
                });
                *slot = (*slot).max(seq);
            }
            Rows::Range(range) => match table.ranges.iter_mut().find(|(r, _)| r == range) {
                Some((_, at)) => *at = (*at).max(seq),
                None => {
                    table.ranges.push((range.clone(), seq));
                    self.entries += 1;
                }
            },
        }
        if self.entries > self.bound {
            self.fold_largest();
        }
    }

    /// Fails on the first key of `read_set` that a commit after `snapshot` wrote.
    pub fn validate<'a>(
        &self,
        read_set: impl IntoIterator<Item = &'a LockKey>,
        snapshot: u64,
    ) -> Result<(), Conflict> {
        for key in read_set {
            let Some(table) = self.tables.get(&key.table) else {
                continue;
            };
            let written = table.newest(&key.rows);
            if written > snapshot {
                return Err(Conflict {
                    key: key.clone(),
                    written,
                    snapshot,
                });
            }
        }
        Ok(())
    }

    /// Drops the versions at or before `oldest_snapshot`, which no open snapshot can conflict
    /// with (the caller passes its oldest open optimistic snapshot).
    pub fn forget_before(&mut self, oldest_snapshot: u64) {
        for table in self.tables.values_mut() {
            table.rows.retain(|_, seq| *seq > oldest_snapshot);
            table.ranges.retain(|(_, seq)| *seq > oldest_snapshot);
        }
        self.tables
            .retain(|_, t| t.len() > 0 || t.floor > oldest_snapshot);
        self.entries = self.tables.values().map(TableVersions::len).sum();
    }

    /// Entries kept.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Folds the table with the most entries into its floor.
    fn fold_largest(&mut self) {
        let Some(table) = self.tables.values_mut().max_by_key(|t| t.len()) else {
            return;
        };
        let newest = table
            .rows
            .values()
            .chain(table.ranges.iter().map(|(_, seq)| seq))
            .copied()
            .fold(table.floor, u64::max);
        self.entries -= table.len();
        table.rows.clear();
        table.ranges.clear();
        table.floor = newest;
    }
}

impl Default for Versions {
    fn default() -> Self {
        Versions::new(VERSION_ENTRIES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(k: i64) -> LockKey {
        LockKey::row("t", RowKey::ints(&[k]))
    }

    fn range(a: i64, b: i64) -> LockKey {
        LockKey::range(
            "t",
            KeyRange {
                start: Some(RowKey::ints(&[a])),
                end: Some(RowKey::ints(&[b])),
            },
        )
    }

    #[test]
    fn a_read_row_written_after_the_snapshot_fails_validation() {
        let mut versions = Versions::default();
        versions.wrote(&row(1), 5);
        assert_eq!(
            versions.validate([&row(1)], 5),
            Ok(()),
            "written at the snapshot"
        );
        assert_eq!(versions.validate([&row(2)], 0), Ok(()), "another row");
        let conflict = versions
            .validate([&row(2), &row(1)], 4)
            .expect_err("conflict");
        assert_eq!(conflict.key, row(1));
        assert_eq!((conflict.written, conflict.snapshot), (5, 4));
        // A column read meets a write of the row.
        let cell = LockKey::cell("T", RowKey::ints(&[1]), "v");
        assert!(versions.validate([&cell], 4).is_err());
    }

    #[test]
    fn ranges_meet_the_rows_they_hold_both_ways() {
        let mut versions = Versions::default();
        versions.wrote(&row(5), 3);
        assert!(
            versions.validate([&range(1, 10)], 2).is_err(),
            "a scan over a written row"
        );
        assert!(versions.validate([&range(6, 10)], 2).is_ok());
        assert!(versions.validate([&LockKey::table("t")], 2).is_err());
        versions.wrote(&range(20, 30), 4);
        assert!(
            versions.validate([&row(25)], 3).is_err(),
            "a row inside a written range"
        );
        assert!(versions.validate([&row(30)], 3).is_ok(), "half-open");
        assert!(versions.validate([&range(29, 40)], 3).is_err());
    }

    #[test]
    fn past_the_bound_a_table_folds_into_a_floor_that_stays_strict() {
        let mut versions = Versions::new(3);
        for k in 0..3 {
            versions.wrote(&row(k), 10 + k as u64);
        }
        assert_eq!(versions.entries(), 3);
        versions.wrote(&row(3), 20);
        assert_eq!(versions.entries(), 0, "folded");
        // A row never written now conflicts with any snapshot before the newest fold.
        assert!(versions.validate([&row(99)], 19).is_err());
        assert!(versions.validate([&row(99)], 20).is_ok());
        assert!(
            versions
                .validate([&LockKey::row("u", RowKey::ints(&[1]))], 0)
                .is_ok()
        );
    }

    #[test]
    fn forgetting_before_the_oldest_snapshot_keeps_what_it_could_still_see() {
        let mut versions = Versions::default();
        versions.wrote(&row(1), 1);
        versions.wrote(&row(2), 7);
        versions.wrote(&range(10, 20), 3);
        versions.forget_before(5);
        assert_eq!(versions.entries(), 1);
        assert!(versions.validate([&row(2)], 6).is_err());
    }
}
