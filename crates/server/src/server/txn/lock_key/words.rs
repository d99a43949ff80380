//! Keys and locks in words, as a person reads them in an error, the journal and the conflict
//! view: `Accounts(1)` for a row, `Accounts(1).Balance` for a cell, `Accounts[(1)..(5))` for a
//! range (an open side left empty), `Accounts[..)` for the whole table.

use std::fmt;

use super::{KeyPart, KeyRange, LockKey, RowKey, Rows};
use crate::wire::{Date, Timestamp};

impl fmt::Display for KeyPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyPart::Null => f.write_str("NULL"),
            KeyPart::Bool(b) => write!(f, "{b}"),
            KeyPart::Int64(n) => write!(f, "{n}"),
            KeyPart::Float64(x) => write!(f, "{}", x.0),
            KeyPart::Date(days) => match Date::from_days_since_epoch(i64::from(*days)) {
                Some(date) => write!(f, "{date}"),
                None => write!(f, "DATE({days})"),
            },
            KeyPart::Timestamp(seconds, nanos) => match Timestamp::new(*seconds, *nanos) {
                Some(ts) => write!(f, "{ts}"),
                None => write!(f, "TIMESTAMP({seconds}.{nanos:09})"),
            },
            KeyPart::String(s) => write!(f, "{s:?}"),
            KeyPart::Bytes(b) => {
                f.write_str("b\"")?;
                for byte in b.iter() {
                    write!(f, "\\x{byte:02x}")?;
                }
                f.write_str("\"")
            }
            KeyPart::Numeric(n) => write!(f, "{n}"),
        }
    }
}

impl fmt::Display for RowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, part) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{part}")?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for KeyRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        if let Some(start) = &self.start {
            write!(f, "{start}")?;
        }
        f.write_str("..")?;
        if let Some(end) = &self.end {
            write!(f, "{end}")?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for LockKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rows_in_words())?;
        match &self.column {
            Some(column) => write!(f, ".{column}"),
            None => Ok(()),
        }
    }
}

impl LockKey {
    /// Its table and rows in words, without the column: `accounts(1)`, `accounts[(1)..)`.
    pub fn rows_in_words(&self) -> String {
        match &self.rows {
            Rows::Row(key) => format!("{}{key}", self.table),
            Rows::Range(range) => format!("{}{range}", self.table),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_cells_and_ranges_read_as_a_person_writes_them() {
        let row = LockKey::row("Accounts", RowKey::ints(&[1]));
        assert_eq!(row.to_string(), "accounts(1)");
        let cell = LockKey::cell("Accounts", RowKey::ints(&[1, 2]), "Balance");
        assert_eq!(cell.to_string(), "accounts(1, 2).balance");
        let range = LockKey::range(
            "Accounts",
            KeyRange {
                start: Some(RowKey::ints(&[1])),
                end: None,
            },
        );
        assert_eq!(range.to_string(), "accounts[(1)..)");
        assert_eq!(LockKey::table("T").to_string(), "t[..)");
        let text = RowKey(vec![KeyPart::String("a\"b".into()), KeyPart::Null]);
        assert_eq!(text.to_string(), "(\"a\\\"b\", NULL)");
    }
}
