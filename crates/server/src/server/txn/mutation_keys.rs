//! The locks a commit's mutations take: a row for each row an insert or replace writes whole, a
//! cell for each column an update or insert-or-update gives (its key columns are the row's
//! identity, not cells it writes), a row for each key a delete names, and the whole table for a
//! delete of a key range or of every row (wider than the rows it deletes, never narrower). A key
//! whose values its columns' types do not store names the whole table too.

use rusqlite::types::{Value as SqlValue, ValueRef};

use super::lock_key::{LockKey, RowKey};
use super::row_key::row_key;
use crate::server::sqlite::mutation::{Mutation, WriteKind};
use crate::server::sqlite::schema::Schema;
use crate::wire::Type;

/// The lock keys of `mutations` against `schema` (the tables were checked when they were
/// converted; a table no longer there is locked whole).
pub fn mutation_lock_keys(schema: &Schema, mutations: &[Mutation]) -> Vec<LockKey> {
    let mut keys = Vec::new();
    for m in mutations {
        match m {
            Mutation::Write {
                kind,
                table,
                columns,
                key_columns,
                rows,
            } => {
                let Some(types) = key_types(schema, table, key_columns) else {
                    keys.push(LockKey::table(table));
                    continue;
                };
                let at: Vec<Option<usize>> = key_columns
                    .iter()
                    .map(|k| columns.iter().position(|c| c.eq_ignore_ascii_case(k)))
                    .collect();
                let cells: Vec<&String> = columns
                    .iter()
                    .filter(|c| !key_columns.iter().any(|k| k.eq_ignore_ascii_case(c)))
                    .collect();
                for row in rows {
                    let Some(key) = key_of(&types, &at, row) else {
                        keys.push(LockKey::table(table));
                        continue;
                    };
                    match kind {
                        WriteKind::Insert | WriteKind::Replace => {
                            keys.push(LockKey::row(table, key));
                        }
                        WriteKind::Update | WriteKind::InsertOrUpdate if cells.is_empty() => {
                            keys.push(LockKey::row(table, key));
                        }
                        WriteKind::Update | WriteKind::InsertOrUpdate => {
                            keys.extend(cells.iter().map(|c| LockKey::cell(table, key.clone(), c)));
                        }
                    }
                }
            }
            Mutation::Delete {
                table,
                key_columns,
                keys: deleted,
                ranges,
                all,
            } => {
                let types = key_types(schema, table, key_columns);
                if *all || !ranges.is_empty() || types.is_none() {
                    keys.push(LockKey::table(table));
                    continue;
                }
                let types = types.unwrap_or_default();
                let at: Vec<Option<usize>> = (0..key_columns.len()).map(Some).collect();
                for key in deleted {
                    match key_of(&types, &at, key) {
                        Some(key) => keys.push(LockKey::row(table, key)),
                        None => keys.push(LockKey::table(table)),
                    }
                }
            }
        }
    }
    keys
}

/// The types of `table`'s key columns, if the schema has them all.
fn key_types(schema: &Schema, table: &str, key_columns: &[String]) -> Option<Vec<Type>> {
    let def = schema.table(table)?;
    key_columns
        .iter()
        .map(|k| def.column(k).map(|c| c.ty.clone()))
        .collect()
}

/// The row key made of `row`'s values at positions `at`, typed `types`.
fn key_of(types: &[Type], at: &[Option<usize>], row: &[SqlValue]) -> Option<RowKey> {
    let values: Vec<&SqlValue> = at
        .iter()
        .map(|i| i.and_then(|i| row.get(i)))
        .collect::<Option<_>>()?;
    row_key(
        types
            .iter()
            .zip(values)
            .map(|(ty, value)| (ty, ValueRef::from(value))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::sqlite::mutation::KeyBound;
    use std::collections::BTreeMap;

    fn write(kind: WriteKind, columns: &[&str], rows: &[&[i64]]) -> Mutation {
        Mutation::Write {
            kind,
            table: "Accounts".into(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            key_columns: vec!["AccountId".into()],
            rows: rows
                .iter()
                .map(|r| r.iter().map(|v| SqlValue::Integer(*v)).collect())
                .collect(),
        }
    }

    #[test]
    fn writes_lock_their_rows_or_cells_and_range_deletes_the_table() {
        let schema = Schema::demo(BTreeMap::new());
        let update = write(WriteKind::Update, &["Balance", "AccountId"], &[&[5, 1]]);
        let insert = write(
            WriteKind::Insert,
            &["AccountId", "Balance"],
            &[&[2, 0], &[3, 0]],
        );
        let delete = Mutation::Delete {
            table: "Accounts".into(),
            key_columns: vec!["AccountId".into()],
            keys: vec![vec![SqlValue::Integer(9)]],
            ranges: vec![],
            all: false,
        };
        assert_eq!(
            mutation_lock_keys(&schema, &[update, insert, delete]),
            [
                LockKey::cell("accounts", RowKey::ints(&[1]), "balance"),
                LockKey::row("accounts", RowKey::ints(&[2])),
                LockKey::row("accounts", RowKey::ints(&[3])),
                LockKey::row("accounts", RowKey::ints(&[9])),
            ]
        );
        let range = Mutation::Delete {
            table: "Accounts".into(),
            key_columns: vec!["AccountId".into()],
            keys: vec![],
            ranges: vec![(
                KeyBound {
                    key: vec![SqlValue::Integer(1)],
                    closed: true,
                },
                KeyBound {
                    key: vec![SqlValue::Integer(5)],
                    closed: false,
                },
            )],
            all: false,
        };
        assert_eq!(
            mutation_lock_keys(&schema, &[range]),
            [LockKey::table("accounts")]
        );
        let wrong_type = Mutation::Write {
            kind: WriteKind::Replace,
            table: "Accounts".into(),
            columns: vec!["AccountId".into()],
            key_columns: vec!["AccountId".into()],
            rows: vec![vec![SqlValue::Text("x".into())]],
        };
        assert_eq!(
            mutation_lock_keys(&schema, &[wrong_type]),
            [LockKey::table("accounts")]
        );
    }
}
