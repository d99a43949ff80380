//! ROW_RANGE_START_KEY's text: the table, then the key's parts in parentheses, `+` after a range's
//! start (`Accounts(1)` is one row, `Accounts(1)+` the rows from key 1, `Accounts()+` the table
//! from its first row), as production writes it.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::super::journal::RowRangeStart;
use super::super::lock_key::{KeyPart, RowKey};
use crate::wire::{Date, Timestamp};

/// The text of `start` in `table` (the table as the schema spells it).
pub fn row_range_start_key(table: &str, start: &RowRangeStart) -> String {
    let mut text = String::with_capacity(table.len() + 16);
    text.push_str(table);
    text.push('(');
    let (key, range) = match start {
        RowRangeStart::Row(key) => (Some(key), false),
        RowRangeStart::Range(key) => (key.as_ref(), true),
    };
    if let Some(RowKey(parts)) = key {
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            write_part(&mut text, part);
        }
    }
    text.push(')');
    if range {
        text.push('+');
    }
    text
}

fn write_part(text: &mut String, part: &KeyPart) {
    // Writing to a String cannot fail.
    let _ = match part {
        KeyPart::Null => write!(text, "NULL"),
        KeyPart::Bool(b) => write!(text, "{b}"),
        KeyPart::Int64(n) => write!(text, "{n}"),
        KeyPart::Float64(f) => write!(text, "{}", f.0),
        KeyPart::Date(days) => match Date::from_days_since_epoch(i64::from(*days)) {
            Some(date) => write!(text, "{date}"),
            None => write!(text, "{days}"),
        },
        KeyPart::Timestamp(seconds, nanos) => match Timestamp::new(*seconds, *nanos) {
            Some(t) => write!(text, "{t}"),
            None => write!(text, "{seconds}.{nanos:09}"),
        },
        KeyPart::String(s) => write!(text, "{s}"),
        KeyPart::Bytes(b) => write!(text, "{}", BASE64.encode(b)),
        KeyPart::Numeric(n) => write!(text, "{n}"),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::txn::lock_key::NumericKey;

    #[test]
    fn a_row_a_range_and_the_whole_table_read_as_production_writes_them() {
        let one = RowRangeStart::Row(RowKey::ints(&[1]));
        assert_eq!(row_range_start_key("Accounts", &one), "Accounts(1)");
        let from = RowRangeStart::Range(Some(RowKey::ints(&[1])));
        assert_eq!(row_range_start_key("Accounts", &from), "Accounts(1)+");
        let whole = RowRangeStart::Range(None);
        assert_eq!(row_range_start_key("Accounts", &whole), "Accounts()+");
        let two = RowRangeStart::Row(RowKey(vec![
            KeyPart::Int64(2),
            KeyPart::String("b".into()),
            KeyPart::Null,
        ]));
        assert_eq!(row_range_start_key("Albums", &two), "Albums(2,b,NULL)");
        let dated = RowRangeStart::Row(RowKey(vec![KeyPart::Date(0)]));
        assert_eq!(row_range_start_key("T", &dated), "T(1970-01-01)");
        let numeric = |text: &str| {
            let key = NumericKey::parse(text).expect("a decimal");
            row_range_start_key(
                "T",
                &RowRangeStart::Row(RowKey(vec![KeyPart::Numeric(key)])),
            )
        };
        assert_eq!(numeric("-012.50"), "T(-12.5)");
        assert_eq!(numeric("-0.0"), "T(0)");
        assert_eq!(numeric(".25"), "T(0.25)");
    }
}
