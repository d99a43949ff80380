//! A Commit's mutations checked and typed: each names a table stored in SQLite (a demo table or
//! one `UpdateDatabaseDdl` created, as the schema is now) and its columns (NOT_FOUND otherwise,
//! as production says), gives every key column where a write needs
//! it, and values of the columns' types; what the SQLite room applies is plain data.

use rusqlite::types::Value as SqlValue;
use tonic::Status;

use crate::proto::google::spanner::v1 as pb;
use crate::server::sqlite::mutation::{KeyBound, Mutation, WriteKind};
use crate::server::sqlite::schema::{Schema, TableDef};
use crate::server::sqlite::sql_value::param_to_sql;

/// The mutations of a Commit, typed, in order.
pub(super) fn convert(
    schema: &Schema,
    mutations: &[pb::Mutation],
) -> Result<Vec<Mutation>, Status> {
    mutations.iter().map(|m| convert_one(schema, m)).collect()
}

fn convert_one(tables: &Schema, mutation: &pb::Mutation) -> Result<Mutation, Status> {
    use pb::mutation::Operation;
    let (kind, write) = match &mutation.operation {
        Some(Operation::Insert(w)) => (WriteKind::Insert, w),
        Some(Operation::Update(w)) => (WriteKind::Update, w),
        Some(Operation::InsertOrUpdate(w)) => (WriteKind::InsertOrUpdate, w),
        Some(Operation::Replace(w)) => (WriteKind::Replace, w),
        Some(Operation::Delete(d)) => return delete(tables, d),
        None => return Err(Status::invalid_argument("a mutation names no operation")),
    };
    let table = table(tables, &write.table)?;
    let columns: Vec<String> = write
        .columns
        .iter()
        .map(|c| column(table, c).map(|f| f.name.clone()))
        .collect::<Result<_, _>>()?;
    for (i, c) in columns.iter().enumerate() {
        if columns[..i].contains(c) {
            return Err(Status::invalid_argument(format!(
                "Column {c} is named twice in a mutation of table {}",
                table.name
            )));
        }
    }
    for key in &table.primary_key {
        if !columns.iter().any(|c| c == key) {
            return Err(Status::failed_precondition(format!(
                "A write to table {} must give every key column: {key} is missing",
                table.name
            )));
        }
    }
    let rows = write
        .values
        .iter()
        .map(|row| {
            if row.values.len() != columns.len() {
                return Err(Status::invalid_argument(format!(
                    "a row of {} values for {} columns in a mutation of table {}",
                    row.values.len(),
                    columns.len(),
                    table.name
                )));
            }
            columns
                .iter()
                .zip(&row.values)
                .map(|(c, v)| typed(table, c, v))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Mutation::Write {
        kind,
        table: table.name.clone(),
        columns,
        key_columns: key_columns(table),
        rows,
    })
}

fn delete(tables: &Schema, d: &pb::mutation::Delete) -> Result<Mutation, Status> {
    use pb::key_range::{EndKeyType, StartKeyType};
    let table = table(tables, &d.table)?;
    let key_set = d.key_set.clone().unwrap_or_default();
    let key = |values: &prost_types::ListValue, whole: bool| -> Result<Vec<SqlValue>, Status> {
        let n = values.values.len();
        if n > table.primary_key.len() || (whole && n != table.primary_key.len()) {
            return Err(Status::invalid_argument(format!(
                "a key of {n} values for table {}, whose key has {} columns",
                table.name,
                table.primary_key.len()
            )));
        }
        table
            .primary_key
            .iter()
            .zip(&values.values)
            .map(|(c, v)| typed(table, c, v))
            .collect()
    };
    let keys = key_set
        .keys
        .iter()
        .map(|k| key(k, true))
        .collect::<Result<Vec<_>, _>>()?;
    let ranges = key_set
        .ranges
        .iter()
        .map(|r| {
            let start = match &r.start_key_type {
                Some(StartKeyType::StartClosed(k)) => (k, true),
                Some(StartKeyType::StartOpen(k)) => (k, false),
                None => return Err(Status::invalid_argument("a key range has no start")),
            };
            let end = match &r.end_key_type {
                Some(EndKeyType::EndClosed(k)) => (k, true),
                Some(EndKeyType::EndOpen(k)) => (k, false),
                None => return Err(Status::invalid_argument("a key range has no end")),
            };
            Ok((
                KeyBound {
                    key: key(start.0, false)?,
                    closed: start.1,
                },
                KeyBound {
                    key: key(end.0, false)?,
                    closed: end.1,
                },
            ))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Mutation::Delete {
        table: table.name.clone(),
        key_columns: key_columns(table),
        keys,
        ranges,
        all: key_set.all,
    })
}

/// The table called `name` that mutations may write (not Seed23, which is generated).
fn table<'a>(tables: &'a Schema, name: &str) -> Result<&'a TableDef, Status> {
    tables
        .table(name)
        .filter(|t| t.writable())
        .map(|t| &**t)
        .ok_or_else(|| {
            Status::not_found(format!(
                "Table not found: {} (mutations may write Singers, Albums, Blobs, Accounts and \
                 the tables UpdateDatabaseDdl created)",
                super::session_store::shown(name)
            ))
        })
}

fn column<'a>(table: &'a TableDef, name: &str) -> Result<&'a crate::wire::Field, Status> {
    table.column(name).ok_or_else(|| {
        Status::not_found(format!(
            "Column not found in table {}: {}",
            table.name,
            super::session_store::shown(name)
        ))
    })
}

fn key_columns(table: &TableDef) -> Vec<String> {
    table.primary_key.clone()
}

/// A value of column `name`, decoded by the column's type and stored as the table stores it.
fn typed(table: &TableDef, name: &str, value: &prost_types::Value) -> Result<SqlValue, Status> {
    let field = column(table, name)?;
    param_to_sql(Some(&field.ty), value.clone()).map_err(|e| {
        Status::invalid_argument(format!(
            "Invalid value for column {} in table {}: {e}",
            field.name, table.name
        ))
    })
}
