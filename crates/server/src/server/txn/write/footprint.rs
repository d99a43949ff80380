//! What a read-write transaction's statements touched, kept for its locks and its validation:
//! the writer's clock at its first statement (its snapshot), the tables it touched (a schema
//! change to one aborts it), the rows it read lock-free (validated at commit) and the rows its DML
//! wrote (locked at commit). Bounded: past [`MAX_KEYS_PER_TRANSACTION`] keys of one kind, the
//! keys fold into their tables whole, wider and never narrower.

use std::collections::{BTreeSet, HashSet};

use crate::server::txn::lock_key::LockKey;

/// The most read keys, and the most written keys, one transaction keeps before they fold into
/// whole tables (the lock table's own bound on locks per transaction).
pub const MAX_KEYS_PER_TRANSACTION: usize = 100_000;

/// What a transaction validates at commit, by its options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Validation {
    /// Nothing: pessimistic serializable, its reads held by ReaderShared locks.
    #[default]
    None,
    /// Its reads: optimistic serializable (lock-free reads at its snapshot).
    Reads,
    /// Its writes: repeatable read (a row it writes must not have been written since its
    /// snapshot; its reads are not validated at commit).
    Writes,
}

/// What a transaction's statements have touched so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    /// The writer's clock at its first statement (`None` before it): its snapshot.
    pub since: Option<u64>,
    /// The tables its statements read or wrote (lower-cased).
    pub tables: BTreeSet<String>,
    /// The rows it read, when its reads are lock-free (kept for validation).
    pub reads: HashSet<LockKey>,
    /// The rows and cells its DML wrote (locked at its commit).
    pub writes: HashSet<LockKey>,
}

impl Footprint {
    /// Adds what a statement touched at the clock value `since`: its tables, and its keys (its
    /// reads only when `keep_reads`).
    pub fn add(
        &mut self,
        since: u64,
        tables: impl IntoIterator<Item = String>,
        reads: &[LockKey],
        writes: &[LockKey],
        keep_reads: bool,
    ) {
        self.since.get_or_insert(since);
        self.tables.extend(tables);
        if keep_reads {
            add_bounded(&mut self.reads, reads);
        }
        add_bounded(&mut self.writes, writes);
    }
}

/// Adds `keys` to `set`, folding the set into whole tables past the bound.
fn add_bounded(set: &mut HashSet<LockKey>, keys: &[LockKey]) {
    set.extend(keys.iter().cloned());
    if set.len() > MAX_KEYS_PER_TRANSACTION {
        let tables: BTreeSet<std::sync::Arc<str>> = set.iter().map(|k| k.table.clone()).collect();
        set.clear();
        set.extend(tables.iter().map(|t| LockKey::table(t)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::txn::lock_key::RowKey;

    #[test]
    fn keys_past_the_bound_fold_into_their_tables_whole() {
        let mut footprint = Footprint::default();
        let rows: Vec<LockKey> = (0..=MAX_KEYS_PER_TRANSACTION as i64)
            .map(|i| LockKey::row("Accounts", RowKey::ints(&[i])))
            .collect();
        footprint.add(3, ["accounts".to_owned()], &rows[..10], &[], false);
        assert!(
            footprint.reads.is_empty(),
            "pessimistic reads are locked, not kept"
        );
        footprint.add(4, [], &[], &rows, true);
        assert_eq!(footprint.since, Some(3));
        assert_eq!(
            footprint.writes,
            HashSet::from([LockKey::table("accounts")]),
            "wider, never narrower"
        );
    }
}
