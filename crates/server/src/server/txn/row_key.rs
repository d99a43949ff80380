//! A row's primary key as the lock table names it (`txn/lock_key.rs`: [`RowKey`], [`KeyPart`]),
//! from the values SQLite stores for the key's columns, and the bound on how many keys one
//! statement's rows may name before its table is reported whole ([`MAX_KEYS_PER_STATEMENT`]). What
//! the captures of the rows a statement wrote (`rows_written.rs`) and read share.

use rusqlite::types::ValueRef;

use super::lock_key::{Float64Key, KeyPart, NumericKey, RowKey};
use crate::wire::{Date, Timestamp, Type};

/// The most row keys one statement's capture holds (written and read together); past it, the
/// table whose key would be one more is reported whole, and the keys held for it are let go.
pub const MAX_KEYS_PER_STATEMENT: usize = 100_000;

/// The key part of a value SQLite stores for a key column of Spanner type `ty`, or None when the
/// value is not one that type stores (the caller then names the whole table, never a guess).
pub fn key_part(ty: &Type, value: ValueRef<'_>) -> Option<KeyPart> {
    let text = |v: ValueRef<'_>| match v {
        ValueRef::Text(t) => std::str::from_utf8(t).ok().map(str::to_owned),
        _ => None,
    };
    Some(match (ty, value) {
        (_, ValueRef::Null) => KeyPart::Null,
        (Type::Bool, ValueRef::Integer(n)) => KeyPart::Bool(n != 0),
        (Type::Int64 | Type::Enum(_), ValueRef::Integer(n)) => KeyPart::Int64(n),
        (Type::Float64 | Type::Float32, ValueRef::Real(f)) => KeyPart::Float64(Float64Key(f)),
        (Type::Float64 | Type::Float32, ValueRef::Integer(n)) => {
            KeyPart::Float64(Float64Key(n as f64))
        }
        (Type::Bytes | Type::Proto(_), ValueRef::Blob(b)) => KeyPart::Bytes(b.into()),
        (Type::Date, v) => {
            let days = Date::parse(&text(v)?).ok()?.days_since_epoch();
            KeyPart::Date(i32::try_from(days).ok()?)
        }
        (Type::Timestamp, v) => {
            let t = Timestamp::parse(&text(v)?).ok()?;
            KeyPart::Timestamp(t.seconds(), t.nanos())
        }
        (Type::Numeric { .. }, v) => KeyPart::Numeric(NumericKey::parse(&text(v)?)?),
        (Type::String | Type::Json { .. } | Type::Uuid | Type::Interval, v) => {
            KeyPart::String(text(v)?.into())
        }
        _ => return None,
    })
}

/// The key of a row from its key columns' values, each with its column's Spanner type, or None
/// when a value is not one its type stores.
pub fn row_key<'a>(parts: impl IntoIterator<Item = (&'a Type, ValueRef<'a>)>) -> Option<RowKey> {
    parts
        .into_iter()
        .map(|(ty, value)| key_part(ty, value))
        .collect::<Option<Vec<_>>>()
        .map(RowKey)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_values_become_the_key_parts_of_their_spanner_type() {
        assert_eq!(
            key_part(&Type::Int64, ValueRef::Integer(7)),
            Some(KeyPart::Int64(7))
        );
        assert_eq!(
            key_part(&Type::String, ValueRef::Text(b"ab")),
            Some(KeyPart::String("ab".into()))
        );
        assert_eq!(
            key_part(&Type::Date, ValueRef::Text(b"1970-01-02")),
            Some(KeyPart::Date(1))
        );
        assert_eq!(
            key_part(&Type::Timestamp, ValueRef::Text(b"1970-01-01T00:00:01.5Z")),
            Some(KeyPart::Timestamp(1, 500_000_000))
        );
        assert_eq!(key_part(&Type::Int64, ValueRef::Null), Some(KeyPart::Null));
        assert_eq!(
            key_part(&Type::Int64, ValueRef::Text(b"7")),
            None,
            "a value its type does not store is no key"
        );
    }
}
