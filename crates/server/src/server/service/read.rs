//! Read and StreamingRead: a read of one table (a demo table, or one `UpdateDatabaseDdl` created)
//! by key set becomes the parameterised SELECT
//! that asks the same rows (`sqlite/read_sql.rs`), and runs as ExecuteSql or ExecuteStreamingSql
//! would run it. Its transaction selector (single-use read-only, a begun read-only transaction, a
//! read-write transaction begun inline or named by its id, where the read sees the transaction's
//! own writes through the writer), its session, streaming, resume tokens, bounds, knobs and
//! statistics are the query path's own, so a read answers exactly as the equivalent query:
//! metadata with the row type of the columns asked, in their order, then the rows, in primary-key
//! order.
//!
//! What comes from the network is checked before any SQL is written: the table and each column
//! against the demo tables' catalog (NOT_FOUND with the name otherwise; the SQL carries the
//! catalog's spelling, never the request's), each key's arity and values against the primary
//! key's columns and types (INVALID_ARGUMENT), and the request's size: at most
//! [`MAX_READ_KEYS`] keys, [`MAX_READ_RANGES`] ranges and [`MAX_READ_COLUMNS`] columns, each
//! value a parameter. Seed23 is served too: its virtual table reads a key, a key range and
//! `ORDER BY Id` itself, without scanning.
//!
//! Refused: a read through an `index` (NOT_FOUND for a name that is no index; INVALID_ARGUMENT
//! for an index `UpdateDatabaseDdl` created, as the local instance reads by the primary key
//! only; a key of a created table with DESC columns is read in ascending order), and a
//! `partition_token` (PartitionRead is not served, so no token can be one of
//! its).
//!
//! A read in a read-write transaction locks as a query does (`txn/locking.rs`): ReaderShared on
//! the keys and ranges it reads in a pessimistic transaction, none in an optimistic or
//! repeatable-read one (validated at commit instead). `lock_hint` is checked (an unknown value is
//! INVALID_ARGUMENT) and honoured as Spanner documents it: EXCLUSIVE takes Exclusive instead of
//! ReaderShared on what a pessimistic transaction's read reads (so a later write of those rows
//! needs no upgrade at commit, and read-modify-writes of one row queue behind each other rather
//! than wound one another), carried to the statement as the request's [`ExclusiveRead`]
//! extension; it is ignored where reads take no lock (optimistic, repeatable read, outside a
//! read-write transaction). SHARED and UNSPECIFIED are the default, ReaderShared.

use std::collections::HashMap;

use prost_types::value::Kind;
use tonic::{Request, Response, Status};

use super::dml::ExclusiveRead;
use super::session_store::shown;
use super::{LocalSpanner, queries, streaming};
use crate::proto::google::spanner::v1 as pb;
use crate::server::encoded::EncodedResultSet;
use crate::server::sqlite::read_sql::{
    BoundShape, RangeShape, ReadShape, bound_param, key_param, read_sql,
};
use crate::server::sqlite::schema::{Schema, TableDef};
use crate::server::sqlite::sql_value::param_to_sql;
use crate::server::stream::live;

/// The most whole keys one read may name: ours, not production's (which documents none). Each
/// key is a parameter of the SELECT, and SQLite binds at most 32,766 of them; a key of the widest
/// demo key (two columns) takes two.
pub const MAX_READ_KEYS: usize = 10_000;

/// The most key ranges one read may name: ours. Ranges are joined by `OR`, and SQLite refuses an
/// expression deeper than 1,000.
pub const MAX_READ_RANGES: usize = 500;

/// The most columns one read may ask: production's most columns of a table (1,024).
pub const MAX_READ_COLUMNS: usize = 1_024;

/// Read: the rows as one ResultSet, as ExecuteSql answers.
pub(super) async fn read(
    spanner: &LocalSpanner,
    request: Request<pb::ReadRequest>,
) -> Result<Response<EncodedResultSet>, Status> {
    let query = as_query(spanner, request)?;
    queries::execute_sql(spanner, query).await
}

/// StreamingRead: the rows as PartialResultSets, as ExecuteStreamingSql streams them.
pub(super) async fn streaming_read(
    spanner: &LocalSpanner,
    request: Request<pb::ReadRequest>,
) -> Result<Response<live::Response>, Status> {
    let query = as_query(spanner, request)?;
    streaming::execute_streaming_sql(spanner, query).await
}

/// The read as the query request that asks its rows, with the call's metadata (its deadline)
/// and extensions (its connection) kept, and marked an [`ExclusiveRead`] when its lock hint is
/// EXCLUSIVE.
fn as_query(
    spanner: &LocalSpanner,
    request: Request<pb::ReadRequest>,
) -> Result<Request<pb::ExecuteSqlRequest>, Status> {
    let (metadata, mut extensions, read) = request.into_parts();
    let schema = spanner.db.schema();
    let query = query_of(&schema, &read, spanner.knobs.get().max_sql_bytes)?;
    if read.lock_hint == pb::read_request::LockHint::Exclusive as i32 {
        extensions.insert(ExclusiveRead);
    }
    Ok(Request::from_parts(metadata, extensions, query))
}

/// The query request asking what `read` asks, checked; its SQL at most `max_sql_bytes` long.
pub(super) fn query_of(
    schema: &Schema,
    read: &pb::ReadRequest,
    max_sql_bytes: u64,
) -> Result<pb::ExecuteSqlRequest, Status> {
    if !read.partition_token.is_empty() {
        return Err(Status::invalid_argument(
            "the built-in local instance does not serve PartitionRead: no partition token \
             can name a part of a read",
        ));
    }
    pb::read_request::LockHint::try_from(read.lock_hint)
        .map_err(|_| Status::invalid_argument(format!("unknown lock hint {}", read.lock_hint)))?;
    let table = table(schema, &read.table)?;
    if !read.index.is_empty() {
        if let Some(index) = schema.index(&read.index)
            && index.table.eq_ignore_ascii_case(&table.name)
        {
            return Err(Status::invalid_argument(format!(
                "the built-in local instance reads by the primary key only, not through index \
                 {} of table {}: query the table with SQL instead",
                index.name, table.name
            )));
        }
        return Err(Status::not_found(format!(
            "Index not found on table {}: {}",
            table.name,
            shown(&read.index)
        )));
    }
    let columns = columns(table, &read.columns)?;
    if read.limit < 0 {
        return Err(Status::invalid_argument(format!(
            "a read's limit cannot be negative: {}",
            read.limit
        )));
    }
    let key_set = read
        .key_set
        .as_ref()
        .ok_or_else(|| Status::invalid_argument("a read needs a key set (ReadRequest.key_set)"))?;
    let mut params = Params::new(table);
    let keys = params.keys(key_set)?;
    let ranges = params.ranges(key_set)?;
    let key_columns: Vec<&str> = table.primary_key.iter().map(String::as_str).collect();
    let shape = ReadShape {
        table: &table.name,
        columns,
        key_columns: &key_columns,
        keys,
        ranges,
        all: key_set.all,
        limit: read.limit.unsigned_abs(),
    };
    let sql = read_sql(&shape);
    if sql.len() as u64 > max_sql_bytes {
        return Err(Status::invalid_argument(format!(
            "the read's statement is {} bytes, more than the {max_sql_bytes} allowed \
             (max_sql_bytes): name fewer keys or ranges",
            sql.len()
        )));
    }
    Ok(pb::ExecuteSqlRequest {
        session: read.session.clone(),
        transaction: read.transaction.clone(),
        sql,
        params: Some(prost_types::Struct {
            fields: params.values,
        }),
        param_types: params.types,
        resume_token: read.resume_token.clone(),
        request_options: read.request_options.clone(),
        ..Default::default()
    })
}

/// The table called `name` (in any case).
fn table<'s>(schema: &'s Schema, name: &str) -> Result<&'s TableDef, Status> {
    schema
        .table(name)
        .map(|t| &**t)
        .ok_or_else(|| Status::not_found(format!("Table not found: {}", shown(name))))
}

/// The columns asked, as the table spells them, in the order asked.
fn columns<'t>(table: &'t TableDef, asked: &[String]) -> Result<Vec<&'t str>, Status> {
    if asked.is_empty() {
        return Err(Status::invalid_argument(format!(
            "a read of table {} names no columns (ReadRequest.columns)",
            table.name
        )));
    }
    if asked.len() > MAX_READ_COLUMNS {
        return Err(Status::invalid_argument(format!(
            "a read names {} columns, more than the {MAX_READ_COLUMNS} allowed",
            asked.len()
        )));
    }
    asked
        .iter()
        .map(|name| {
            table
                .columns
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(name))
                .map(|c| c.name.as_str())
                .ok_or_else(|| {
                    Status::not_found(format!(
                        "Column not found in table {}: {}",
                        table.name,
                        shown(name)
                    ))
                })
        })
        .collect()
}

/// The read's parameters as they are named and typed, gathered key by key.
struct Params<'t> {
    table: &'t TableDef,
    values: std::collections::BTreeMap<String, prost_types::Value>,
    types: HashMap<String, pb::Type>,
}

impl<'t> Params<'t> {
    fn new(table: &'t TableDef) -> Self {
        Params {
            table,
            values: Default::default(),
            types: HashMap::new(),
        }
    }

    /// The whole keys, each checked and made parameters; the number of them kept. A key with a
    /// NULL names no row (the demo tables' key columns are NOT NULL): it is checked, not kept.
    fn keys(&mut self, key_set: &pb::KeySet) -> Result<usize, Status> {
        if key_set.keys.len() > MAX_READ_KEYS {
            return Err(Status::invalid_argument(format!(
                "a read names {} keys, more than the {MAX_READ_KEYS} allowed",
                key_set.keys.len()
            )));
        }
        let width = self.table.primary_key.len();
        let mut kept = 0;
        for (i, key) in key_set.keys.iter().enumerate() {
            if key.values.len() != width {
                return Err(Status::invalid_argument(format!(
                    "key {i} of the read has {} values; table {}'s key has {width} columns ({})",
                    key.values.len(),
                    self.table.name,
                    self.table.primary_key.join(", ")
                )));
            }
            let nulls = self.check(&format!("key {i}"), &key.values)?;
            if nulls.is_none() {
                for (j, value) in key.values.iter().enumerate() {
                    self.add(key_param(kept, j), j, value);
                }
                kept += 1;
            }
        }
        Ok(kept)
    }

    /// The ranges, each end checked and made parameters.
    fn ranges(&mut self, key_set: &pb::KeySet) -> Result<Vec<RangeShape>, Status> {
        use pb::key_range::{EndKeyType, StartKeyType};
        if key_set.ranges.len() > MAX_READ_RANGES {
            return Err(Status::invalid_argument(format!(
                "a read names {} key ranges, more than the {MAX_READ_RANGES} allowed",
                key_set.ranges.len()
            )));
        }
        let mut shapes = Vec::with_capacity(key_set.ranges.len());
        for (i, range) in key_set.ranges.iter().enumerate() {
            let start = match &range.start_key_type {
                Some(StartKeyType::StartClosed(k)) => (k, true),
                Some(StartKeyType::StartOpen(k)) => (k, false),
                None => {
                    return Err(Status::invalid_argument(format!(
                        "key range {i} has no start"
                    )));
                }
            };
            let end = match &range.end_key_type {
                Some(EndKeyType::EndClosed(k)) => (k, true),
                Some(EndKeyType::EndOpen(k)) => (k, false),
                None => {
                    return Err(Status::invalid_argument(format!(
                        "key range {i} has no end"
                    )));
                }
            };
            shapes.push(RangeShape {
                start: self.bound(i, true, start)?,
                end: self.bound(i, false, end)?,
            });
        }
        Ok(shapes)
    }

    /// One end of range `i`: a prefix of the key. A NULL sorts before every value, and no key
    /// holds one: a start at a prefix ending in NULL is a closed start at the prefix before it,
    /// an end there an open end at the prefix before it.
    fn bound(
        &mut self,
        i: usize,
        start: bool,
        (key, closed): (&prost_types::ListValue, bool),
    ) -> Result<BoundShape, Status> {
        let width = self.table.primary_key.len();
        let side = if start { "start" } else { "end" };
        if key.values.len() > width {
            return Err(Status::invalid_argument(format!(
                "the {side} of key range {i} has {} values; table {}'s key has {width} columns \
                 ({})",
                key.values.len(),
                self.table.name,
                self.table.primary_key.join(", ")
            )));
        }
        let (len, closed) =
            match self.check(&format!("the {side} of key range {i}"), &key.values)? {
                Some(null_at) => (null_at, start),
                None => (key.values.len(), closed),
            };
        for (j, value) in key.values.iter().take(len).enumerate() {
            self.add(bound_param(i, start, j), j, value);
        }
        Ok(BoundShape { len, closed })
    }

    /// Checks each value against its key column's type; where the first NULL is, if any.
    fn check(&self, what: &str, values: &[prost_types::Value]) -> Result<Option<usize>, Status> {
        let mut null_at = None;
        for (j, value) in values.iter().enumerate() {
            if matches!(value.kind, Some(Kind::NullValue(_))) {
                null_at = null_at.or(Some(j));
                continue;
            }
            let (name, ty) = self.key_column(j);
            param_to_sql(Some(ty), value.clone()).map_err(|e| {
                Status::invalid_argument(format!(
                    "{what} of the read: invalid value for key column {name} of table {}: {e}",
                    self.table.name
                ))
            })?;
        }
        Ok(null_at)
    }

    /// Key column `j`'s name and type.
    fn key_column(&self, j: usize) -> (&'t str, &'t crate::wire::Type) {
        let name = self.table.primary_key[j].as_str();
        let ty = self
            .table
            .columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.ty)
            .unwrap_or(&crate::wire::Type::Int64);
        (name, ty)
    }

    fn add(&mut self, name: String, column: usize, value: &prost_types::Value) {
        let (_, ty) = self.key_column(column);
        self.types.insert(name.clone(), pb::Type::from(ty));
        self.values.insert(name, value.clone());
    }
}
