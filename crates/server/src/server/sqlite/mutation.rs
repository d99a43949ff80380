//! Mutations as the read-write connection applies them: plain data (a table, its columns, typed
//! values, keys), each turned into one SQLite statement per row or key, so that a commit's
//! mutations go through the same sandbox as its DML (Seed23 and unknown tables are refused there).
//! The names were checked against the demo tables before they reach here; they are quoted all the
//! same.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

/// How a write mutation treats the rows it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// Each row must not exist yet (else ALREADY_EXISTS).
    Insert,
    /// Each row must exist (else NOT_FOUND); only the columns given change.
    Update,
    /// A new row is inserted, an existing one has the columns given changed.
    InsertOrUpdate,
    /// The row is written whole: columns not given become NULL.
    Replace,
}

/// One end of a key range: a key prefix, and whether the range includes it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyBound {
    /// The first key columns' values (empty: unbounded).
    pub key: Vec<SqlValue>,
    /// Whether keys equal to it (on its columns) are in the range.
    pub closed: bool,
}

/// One mutation.
#[derive(Debug, Clone, PartialEq)]
pub enum Mutation {
    /// Rows written to `table`.
    Write {
        /// Insert, update, insert-or-update or replace.
        kind: WriteKind,
        /// The table, as the demo tables spell it.
        table: String,
        /// The columns given, as the table spells them.
        columns: Vec<String>,
        /// The key columns of the table, in key order.
        key_columns: Vec<String>,
        /// The rows, each one value per column.
        rows: Vec<Vec<SqlValue>>,
    },
    /// Rows deleted from `table`.
    Delete {
        /// The table, as the demo tables spell it.
        table: String,
        /// The key columns of the table, in key order.
        key_columns: Vec<String>,
        /// Whole keys to delete (a key that does not exist is no error).
        keys: Vec<Vec<SqlValue>>,
        /// Key ranges to delete: start and end.
        ranges: Vec<(KeyBound, KeyBound)>,
        /// Every row.
        all: bool,
    },
}

impl Mutation {
    /// Mutations as Spanner counts them for its limit and commit statistics: a write counts
    /// each column it gives in each row, a delete one per key and per range (and one for all).
    pub fn count(&self) -> u64 {
        match self {
            Mutation::Write { columns, rows, .. } => (columns.len() * rows.len()) as u64,
            Mutation::Delete {
                keys, ranges, all, ..
            } => (keys.len() + ranges.len() + usize::from(*all)) as u64,
        }
    }
}

/// Why a mutation was not applied: SQLite's error, or a row to update that does not exist.
#[derive(Debug, thiserror::Error)]
pub enum MutationError {
    /// SQLite refused or failed the statement.
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    /// An update named a row that does not exist.
    #[error("Row not found in table {table}: an update needs an existing row")]
    NotFound {
        /// The table.
        table: String,
    },
}

/// Applies `mutation` on `conn`, inside the caller's transaction.
pub fn apply(conn: &Connection, mutation: &Mutation) -> Result<(), MutationError> {
    match mutation {
        Mutation::Write {
            kind,
            table,
            columns,
            key_columns,
            rows,
        } => {
            let sql = write_sql(*kind, table, columns, key_columns);
            let mut stmt = conn.prepare(&sql)?;
            for row in rows {
                let changed = match kind {
                    // SET the non-key columns, WHERE the key columns: the values in that order.
                    WriteKind::Update => {
                        let order = update_order(columns, key_columns);
                        stmt.execute(params_from_iter(order.iter().filter_map(|&i| row.get(i))))?
                    }
                    _ => stmt.execute(params_from_iter(row.iter()))?,
                };
                if *kind == WriteKind::Update && changed == 0 {
                    return Err(MutationError::NotFound {
                        table: table.clone(),
                    });
                }
            }
        }
        Mutation::Delete {
            table,
            key_columns,
            keys,
            ranges,
            all,
        } => {
            if *all {
                conn.execute(&format!("DELETE FROM {}", quoted(table)), [])?;
                return Ok(());
            }
            if !keys.is_empty() {
                let equal = key_columns
                    .iter()
                    .map(|c| format!("{} = ?", quoted(c)))
                    .collect::<Vec<_>>()
                    .join(" AND ");
                let mut stmt =
                    conn.prepare(&format!("DELETE FROM {} WHERE {equal}", quoted(table)))?;
                for key in keys {
                    stmt.execute(params_from_iter(key.iter()))?;
                }
            }
            for (start, end) in ranges {
                let (condition, values) = range_condition(key_columns, start, end);
                conn.execute(
                    &format!("DELETE FROM {} WHERE {condition}", quoted(table)),
                    params_from_iter(values.iter()),
                )?;
            }
        }
    }
    Ok(())
}

/// The statement that writes one row of a write mutation.
fn write_sql(kind: WriteKind, table: &str, columns: &[String], key_columns: &[String]) -> String {
    let table = quoted(table);
    let names = columns.iter().map(|c| quoted(c)).collect::<Vec<_>>();
    let marks = vec!["?"; columns.len()].join(", ");
    let others: Vec<&String> = columns
        .iter()
        .filter(|c| !key_columns.iter().any(|k| k.eq_ignore_ascii_case(c)))
        .collect();
    match kind {
        WriteKind::Insert => format!(
            "INSERT INTO {table} ({}) VALUES ({marks})",
            names.join(", ")
        ),
        WriteKind::Replace => format!(
            "INSERT OR REPLACE INTO {table} ({}) VALUES ({marks})",
            names.join(", ")
        ),
        WriteKind::InsertOrUpdate => {
            let keys = key_columns.iter().map(|k| quoted(k)).collect::<Vec<_>>();
            let action = if others.is_empty() {
                "NOTHING".to_owned()
            } else {
                let sets = others
                    .iter()
                    .map(|c| format!("{q} = excluded.{q}", q = quoted(c)))
                    .collect::<Vec<_>>();
                format!("UPDATE SET {}", sets.join(", "))
            };
            format!(
                "INSERT INTO {table} ({}) VALUES ({marks}) ON CONFLICT ({}) DO {action}",
                names.join(", "),
                keys.join(", ")
            )
        }
        WriteKind::Update => {
            // A row named by its key alone changes nothing but must exist: set the key to itself.
            let sets = if others.is_empty() {
                key_columns
                    .iter()
                    .map(|k| format!("{q} = {q}", q = quoted(k)))
                    .collect::<Vec<_>>()
            } else {
                others
                    .iter()
                    .map(|c| format!("{} = ?", quoted(c)))
                    .collect()
            };
            let keys = key_columns
                .iter()
                .map(|k| format!("{} = ?", quoted(k)))
                .collect::<Vec<_>>();
            format!(
                "UPDATE {table} SET {} WHERE {}",
                sets.join(", "),
                keys.join(" AND ")
            )
        }
    }
}

/// An update's values in its statement's order: the non-key columns given, then the key columns.
/// The caller checked that every key column is given.
fn update_order(columns: &[String], key_columns: &[String]) -> Vec<usize> {
    let is_key = |c: &String| key_columns.iter().any(|k| k.eq_ignore_ascii_case(c));
    let mut order: Vec<usize> = (0..columns.len())
        .filter(|&i| !is_key(&columns[i]))
        .collect();
    for key in key_columns {
        if let Some(i) = columns.iter().position(|c| c.eq_ignore_ascii_case(key)) {
            order.push(i);
        }
    }
    order
}

/// The WHERE condition of a key range over its key columns' prefixes (SQLite's row values), and
/// the values it binds.
fn range_condition(
    key_columns: &[String],
    start: &KeyBound,
    end: &KeyBound,
) -> (String, Vec<SqlValue>) {
    let mut parts = vec!["1".to_owned()];
    let mut values = Vec::new();
    for (bound, closed_op, open_op) in [(start, ">=", ">"), (end, "<=", "<")] {
        if bound.key.is_empty() {
            continue;
        }
        let columns = key_columns
            .iter()
            .take(bound.key.len())
            .map(|c| quoted(c))
            .collect::<Vec<_>>()
            .join(", ");
        let marks = vec!["?"; bound.key.len()].join(", ");
        let op = if bound.closed { closed_op } else { open_op };
        parts.push(format!("({columns}) {op} ({marks})"));
        values.extend(bound.key.iter().cloned());
    }
    (parts.join(" AND "), values)
}

/// A name in double quotes, any double quote in it doubled.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn each_write_kind_makes_its_statement() {
        let (columns, keys) = (names(&["Balance", "AccountId"]), names(&["AccountId"]));
        assert_eq!(
            write_sql(WriteKind::Update, "Accounts", &columns, &keys),
            "UPDATE \"Accounts\" SET \"Balance\" = ? WHERE \"AccountId\" = ?"
        );
        assert_eq!(update_order(&columns, &keys), [0, 1]);
        assert_eq!(
            write_sql(WriteKind::InsertOrUpdate, "Accounts", &columns, &keys),
            "INSERT INTO \"Accounts\" (\"Balance\", \"AccountId\") VALUES (?, ?) ON CONFLICT \
             (\"AccountId\") DO UPDATE SET \"Balance\" = excluded.\"Balance\""
        );
        let (condition, values) = range_condition(
            &names(&["SingerId", "AlbumId"]),
            &KeyBound {
                key: vec![SqlValue::Integer(1)],
                closed: true,
            },
            &KeyBound {
                key: vec![SqlValue::Integer(2), SqlValue::Integer(3)],
                closed: false,
            },
        );
        assert_eq!(
            condition,
            "1 AND (\"SingerId\") >= (?) AND (\"SingerId\", \"AlbumId\") < (?, ?)"
        );
        assert_eq!(values.len(), 3);
        assert_eq!(quoted("a\"b"), "\"a\"\"b\"");
    }
}
