//! What the lock table locks and who asks: a cell, a row or a range of a table's key space
//! ([`LockKey`]), in one of Spanner's four lock modes ([`LockMode`], with its conflict matrix), by a
//! transaction named by a [`TxnId`] and ranked by its [`Age`]. The words the lock table, its journal
//! and the optimistic commit's versions share, and nothing else.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

mod words;

/// One attempt of a read-write transaction, as the lock table names it (the wiring maps the
/// server's transaction ids to these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxnId(pub u64);

impl fmt::Display for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "txn {}", self.0)
    }
}

/// A transaction's priority under wound-wait: the time of its first read, query or commit, as an
/// offset from the lock table's start; a retry passes its aborted attempt's age, so its priority
/// rises with each abort. Smaller is older; two equal ages are ordered by [`TxnId`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Age(pub Duration);

/// One part of a primary key, ordered as Spanner orders an ascending key column: NULL first, then
/// the values of the column's one type. A descending column is the caller's to turn into ascending
/// bounds (or a whole-table range).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyPart {
    /// NULL, which sorts before every value.
    Null,
    /// BOOL.
    Bool(bool),
    /// INT64.
    Int64(i64),
    /// FLOAT64, in IEEE total order.
    Float64(Float64Key),
    /// DATE, as days since 1970-01-01.
    Date(i32),
    /// TIMESTAMP, as seconds since the Unix epoch and nanoseconds within the second.
    Timestamp(i64, u32),
    /// STRING.
    String(Box<str>),
    /// BYTES.
    Bytes(Box<[u8]>),
    /// NUMERIC, by its value.
    Numeric(NumericKey),
}

/// A FLOAT64 key part: ordered, compared and hashed by [`f64::total_cmp`]'s total order.
#[derive(Debug, Clone, Copy)]
pub struct Float64Key(pub f64);

impl PartialEq for Float64Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Float64Key {}

impl PartialOrd for Float64Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Float64Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl Hash for Float64Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// A NUMERIC key part in a canonical decimal form (no leading zeros in the integer part, no
/// trailing zeros in the fraction, no negative zero), ordered by value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NumericKey {
    negative: bool,
    integer: Box<str>,
    fraction: Box<str>,
}

impl NumericKey {
    /// The key of a decimal text (`-12.50`, `0.5`, `7`), or None when it is not one.
    pub fn parse(text: &str) -> Option<NumericKey> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let (integer, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if integer.is_empty() && fraction.is_empty()
            || !all_digits(integer)
            || !all_digits(fraction)
        {
            return None;
        }
        let integer = integer.trim_start_matches('0');
        let fraction = fraction.trim_end_matches('0');
        let zero = integer.is_empty() && fraction.is_empty();
        Some(NumericKey {
            negative: negative && !zero,
            integer: integer.into(),
            fraction: fraction.into(),
        })
    }

    fn magnitude_cmp(&self, other: &Self) -> Ordering {
        self.integer
            .len()
            .cmp(&other.integer.len())
            .then_with(|| self.integer.cmp(&other.integer))
            .then_with(|| self.fraction.cmp(&other.fraction))
    }
}

impl fmt::Display for NumericKey {
    /// The canonical decimal (`-12.5`, `0`, `0.25`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        f.write_str(if self.integer.is_empty() {
            "0"
        } else {
            &self.integer
        })?;
        if !self.fraction.is_empty() {
            write!(f, ".{}", self.fraction)?;
        }
        Ok(())
    }
}

impl PartialOrd for NumericKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NumericKey {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => self.magnitude_cmp(other),
            (true, true) => other.magnitude_cmp(self),
        }
    }
}

/// A primary key: its parts in the key's column order, compared part by part (a shorter key that
/// is a prefix of a longer one sorts first, so a prefix is a range's natural start).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RowKey(pub Vec<KeyPart>);

impl RowKey {
    /// A key of INT64 parts, the shape most tests and examples use.
    pub fn ints(parts: &[i64]) -> RowKey {
        RowKey(parts.iter().map(|&i| KeyPart::Int64(i)).collect())
    }
}

/// A half-open range `[start, end)` of one table's key space; a missing bound is open (no start:
/// from the first row; no end: to the last), so the whole table is one range with neither.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KeyRange {
    /// The first key in the range, or None for the table's start.
    pub start: Option<RowKey>,
    /// The first key after the range, or None for the table's end.
    pub end: Option<RowKey>,
}

impl KeyRange {
    /// Every row of the table.
    pub fn whole() -> KeyRange {
        KeyRange::default()
    }

    /// Whether `key` is in the range.
    pub fn contains(&self, key: &RowKey) -> bool {
        self.start.as_ref().is_none_or(|s| s <= key) && self.end.as_ref().is_none_or(|e| key < e)
    }

    /// Whether the two ranges share a key.
    pub fn overlaps(&self, other: &KeyRange) -> bool {
        let before = |end: &Option<RowKey>, start: &Option<RowKey>| match (end, start) {
            (Some(end), Some(start)) => end <= start,
            _ => false,
        };
        !self.is_empty()
            && !other.is_empty()
            && !before(&self.end, &other.start)
            && !before(&other.end, &self.start)
    }

    /// Whether the range holds no key (its end at or before its start).
    pub fn is_empty(&self) -> bool {
        matches!((&self.start, &self.end), (Some(s), Some(e)) if e <= s)
    }
}

/// Which rows of a table a lock covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Rows {
    /// One row, by its primary key.
    Row(RowKey),
    /// A range of rows, for a scan (a whole-table range is one entry however many rows it covers).
    Range(KeyRange),
}

impl Rows {
    /// Whether the two share a row.
    pub fn overlaps(&self, other: &Rows) -> bool {
        match (self, other) {
            (Rows::Row(a), Rows::Row(b)) => a == b,
            (Rows::Row(a), Rows::Range(r)) | (Rows::Range(r), Rows::Row(a)) => r.contains(a),
            (Rows::Range(a), Rows::Range(b)) => a.overlaps(b),
        }
    }
}

/// What one lock covers: a table (its name lower-cased, as Spanner's names are case-insensitive),
/// a row or a range of its rows, and one column of them or (None) every column.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LockKey {
    /// The table, lower-cased.
    pub table: Arc<str>,
    /// The rows.
    pub rows: Rows,
    /// The column, lower-cased, or None for the whole row.
    pub column: Option<Arc<str>>,
}

impl LockKey {
    /// A whole row.
    pub fn row(table: &str, key: RowKey) -> LockKey {
        LockKey::new(table, Rows::Row(key), None)
    }

    /// One column of one row.
    pub fn cell(table: &str, key: RowKey, column: &str) -> LockKey {
        LockKey::new(table, Rows::Row(key), Some(column))
    }

    /// The rows `[start, end)` of a table, every column.
    pub fn range(table: &str, range: KeyRange) -> LockKey {
        LockKey::new(table, Rows::Range(range), None)
    }

    /// Every row of a table.
    pub fn table(table: &str) -> LockKey {
        LockKey::range(table, KeyRange::whole())
    }

    /// A key of any shape, names lower-cased.
    pub fn new(table: &str, rows: Rows, column: Option<&str>) -> LockKey {
        LockKey {
            table: table.to_lowercase().into(),
            rows,
            column: column.map(|c| c.to_lowercase().into()),
        }
    }

    /// Whether two locks cover a common cell: one table, a common row, and one column or a whole
    /// row on either side.
    pub fn overlaps(&self, other: &LockKey) -> bool {
        self.table == other.table
            && columns_overlap(self.column.as_deref(), other.column.as_deref())
            && self.rows.overlaps(&other.rows)
    }

    /// The column as SPANNER_SYS.LOCK_STATS names it: `table.column`, or `table._exists` for a
    /// whole row (Spanner's name for a row's existence).
    pub fn stats_column(&self) -> String {
        format!(
            "{}.{}",
            self.table,
            self.column.as_deref().unwrap_or("_exists")
        )
    }
}

/// Whether two column choices share a cell (None is every column).
pub fn columns_overlap(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// Spanner's lock modes (the lock statistics documentation's "lock modes").
///
/// The conflict matrix ([`LockMode::conflicts`]), `x` where the two conflict:
///
/// | held \ asked          | ReaderShared | WriterShared | Exclusive | WriterSharedTimestamp |
/// |-----------------------|--------------|--------------|-----------|-----------------------|
/// | ReaderShared          |              | x            | x         | x                     |
/// | WriterShared          | x            |              | x         |                       |
/// | Exclusive             | x            | x            | x         | x                     |
/// | WriterSharedTimestamp | x            |              | x         |                       |
///
/// Why: a ReaderShared lock lets other reads at the data until the reader is ready to commit, so
/// readers share and a writer waits for them (a write beside a reader's lock would let the reader
/// commit having read a value another transaction replaced). WriterShared is what a write that
/// read nothing of the cell (a blind write) takes at commit: several blind writers may queue on a
/// cell together, since none depends on the value; they still commit one at a time, which the local
/// instance's one writer connection does, so the matrix lets them share. Exclusive is a
/// ReaderShared and a WriterShared held at once (a read then a write of the same cell) and no other
/// transaction may hold any lock on its cell. WriterSharedTimestamp is the WriterShared taken for a
/// write of a commit-timestamp column (a row whose key holds the commit timestamp): a writer's lock
/// like WriterShared, so it shares with writers and conflicts with readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockMode {
    /// Taken by a read in a pessimistic read-write transaction.
    ReaderShared,
    /// Taken at commit by a write of a cell the transaction did not read.
    WriterShared,
    /// A read and a write of one cell: the upgrade of a ReaderShared by a write.
    Exclusive,
    /// A WriterShared for a write of a commit-timestamp column.
    WriterSharedTimestamp,
}

impl LockMode {
    /// Every mode, in the matrix's order.
    pub const ALL: [LockMode; 4] = [
        LockMode::ReaderShared,
        LockMode::WriterShared,
        LockMode::Exclusive,
        LockMode::WriterSharedTimestamp,
    ];

    /// Whether a lock in `held` by one transaction keeps another from taking `asked` on a common
    /// cell (the matrix on [`LockMode`]; it is symmetric).
    pub fn conflicts(held: LockMode, asked: LockMode) -> bool {
        use LockMode::{Exclusive, ReaderShared};
        match (held, asked) {
            (Exclusive, _) | (_, Exclusive) => true,
            (ReaderShared, ReaderShared) => false,
            (ReaderShared, _) | (_, ReaderShared) => true,
            // Both are writers' modes (WriterShared or WriterSharedTimestamp): blind writes share.
            _ => false,
        }
    }

    /// The mode one transaction holds after holding `self` and asking `asked` on the same cell:
    /// a reader's and a writer's lock together are Exclusive (the ReaderShared to Exclusive
    /// upgrade of a read then a write, or a read after a write); two writers' modes are the
    /// stronger of the two (WriterSharedTimestamp over WriterShared); a mode with itself is itself.
    pub fn combined_with(self, asked: LockMode) -> LockMode {
        use LockMode::{Exclusive, ReaderShared, WriterShared, WriterSharedTimestamp};
        match (self, asked) {
            (a, b) if a == b => a,
            (Exclusive, _) | (_, Exclusive) => Exclusive,
            (ReaderShared, _) | (_, ReaderShared) => Exclusive,
            (WriterSharedTimestamp, _) | (_, WriterSharedTimestamp) => WriterSharedTimestamp,
            (WriterShared, WriterShared) => WriterShared,
        }
    }

    /// The name Spanner's lock statistics give the mode.
    pub fn name(self) -> &'static str {
        match self {
            LockMode::ReaderShared => "ReaderShared",
            LockMode::WriterShared => "WriterShared",
            LockMode::Exclusive => "Exclusive",
            LockMode::WriterSharedTimestamp => "WriterSharedTimestamp",
        }
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_keys_order_by_value_whatever_their_spelling() {
        let n = |s: &str| NumericKey::parse(s).expect(s);
        assert_eq!(n("007.50"), n("7.5"));
        assert_eq!(n("-0.0"), n("0"));
        assert!(n("-10") < n("-9.99"));
        assert!(n("-0.5") < n("0"));
        assert!(n("9.99") < n("10"));
        assert!(n("0.5") < n("0.51"));
        assert!(n("123") > n("99.999"));
        assert_eq!(NumericKey::parse("1.2.3"), None);
        assert_eq!(NumericKey::parse("-"), None);
        assert_eq!(NumericKey::parse("1e5"), None);
    }

    #[test]
    fn null_sorts_first_and_a_prefix_starts_its_range() {
        let null = RowKey(vec![KeyPart::Null]);
        assert!(null < RowKey::ints(&[i64::MIN]));
        assert!(RowKey::ints(&[1]) < RowKey::ints(&[1, 0]));
        let prefix = KeyRange {
            start: Some(RowKey::ints(&[1])),
            end: Some(RowKey::ints(&[2])),
        };
        assert!(prefix.contains(&RowKey::ints(&[1, 99])));
        assert!(!prefix.contains(&RowKey::ints(&[2])));
    }

    #[test]
    fn ranges_overlap_only_when_they_share_a_key() {
        let r = |a: i64, b: i64| KeyRange {
            start: Some(RowKey::ints(&[a])),
            end: Some(RowKey::ints(&[b])),
        };
        assert!(r(1, 5).overlaps(&r(4, 9)));
        assert!(!r(1, 5).overlaps(&r(5, 9)), "half-open: 5 is not in [1, 5)");
        assert!(
            !r(5, 5).overlaps(&KeyRange::whole()),
            "an empty range holds nothing"
        );
        assert!(KeyRange::whole().overlaps(&r(100, 101)));
    }

    #[test]
    fn a_row_lock_covers_every_column_and_two_columns_do_not_meet() {
        let k = RowKey::ints(&[1]);
        let row = LockKey::row("Singers", k.clone());
        let name = LockKey::cell("singers", k.clone(), "Name");
        let age = LockKey::cell("SINGERS", k, "age");
        assert!(row.overlaps(&name));
        assert!(!name.overlaps(&age));
        assert_eq!(name.stats_column(), "singers.name");
        assert_eq!(row.stats_column(), "singers._exists");
    }
}
