//! Rows in and out of a database outside any profiled query: the emulator's seed (`load_rows`,
//! batched within a commit's limits), the team history's rows (inserted, updated, deleted by key
//! or key prefix, read back as text), each call in a session of its own, deleted after it.

use prost::Message as _;
use tonic::transport::Channel;

use super::admin_call::{AdminError, MAX_RESPONSE_BYTES, request, rpc_error};
use crate::demo::DemoTable;
use crate::proto::google::spanner::v1 as pb;
use crate::proto::google::spanner::v1::spanner_client::SpannerClient;
use crate::wire::{Value, encode_value};

/// The most mutation cells (rows x columns) one commit carries; the emulator rejects commits of
/// more than 20,000 (production allows 80,000).
pub const MAX_COMMIT_CELLS: usize = 19_000;
/// The most bytes of mutations one commit carries (a single larger row still goes, alone).
pub const MAX_COMMIT_BYTES: usize = 8_000_000;

/// Writes `rows` (each a full row of `table`'s columns, in column order) to `table` of
/// `database_name` with `insert_or_update` mutations, committed in single-use read-write
/// transactions of at most `batch` rows (fewer to stay under [`MAX_COMMIT_CELLS`] and
/// [`MAX_COMMIT_BYTES`]). Returns the number of rows written. Uses one session, deleted at the end.
pub async fn load_rows(
    channel: Channel,
    database_name: &str,
    table: &DemoTable,
    rows: impl Iterator<Item = Vec<Value>>,
    batch: usize,
) -> Result<u64, AdminError> {
    let mut session = DataSession::create(channel, database_name).await?;
    let written = write_batches(&mut session, table, rows, batch).await;
    // Delete the session even when a commit failed; the first error wins.
    let deleted = session.delete().await;
    let written = written?;
    deleted?;
    Ok(written)
}

/// Inserts `rows` (each a value per column of `columns`) into `table` of `database_name` in one
/// single-use read-write commit (the run history's team store writes a run this way).
pub async fn insert_rows(
    channel: Channel,
    database_name: &str,
    table: &str,
    columns: &[String],
    rows: &[Vec<Value>],
) -> Result<u64, AdminError> {
    let mut session = DataSession::create(channel, database_name).await?;
    let mut values = list_values(rows);
    let written = session.commit(table, columns, &mut values).await;
    let deleted = session.delete().await;
    let written = written?;
    deleted?;
    Ok(written)
}

/// Updates columns of rows that exist (each row a value per column of `columns`, the key
/// first) in one single-use read-write commit; a row that does not exist fails the commit.
pub async fn update_rows(
    channel: Channel,
    database_name: &str,
    table: &str,
    columns: &[String],
    rows: &[Vec<Value>],
) -> Result<(), AdminError> {
    let write = pb::mutation::Write {
        table: table.to_owned(),
        columns: columns.to_vec(),
        values: list_values(rows),
    };
    let update = pb::mutation::Operation::Update(write);
    commit_once(channel, database_name, table, update).await
}

/// Deletes the rows of `table` whose one-column primary keys are `keys` (strings), in one
/// single-use read-write commit; keys without a row are no error.
pub async fn delete_rows(
    channel: Channel,
    database_name: &str,
    table: &str,
    keys: &[String],
) -> Result<(), AdminError> {
    let key_set = pb::KeySet {
        keys: keys
            .iter()
            .map(|k| prost_types::ListValue {
                values: vec![encode_value(&Value::String(k.clone()))],
            })
            .collect(),
        ..Default::default()
    };
    let delete = pb::mutation::Operation::Delete(pb::mutation::Delete {
        table: table.to_owned(),
        key_set: Some(key_set),
    });
    commit_once(channel, database_name, table, delete).await
}

/// Deletes the rows of `table` whose primary key begins with the string `prefix` (a key range
/// from it to it, which covers every longer key it begins), in one single-use read-write commit.
pub async fn delete_prefixed(
    channel: Channel,
    database_name: &str,
    table: &str,
    prefix: &str,
) -> Result<(), AdminError> {
    let key = prost_types::ListValue {
        values: vec![encode_value(&Value::String(prefix.to_owned()))],
    };
    let range = pb::KeyRange {
        start_key_type: Some(pb::key_range::StartKeyType::StartClosed(key.clone())),
        end_key_type: Some(pb::key_range::EndKeyType::EndClosed(key)),
    };
    let delete = pb::mutation::Operation::Delete(pb::mutation::Delete {
        table: table.to_owned(),
        key_set: Some(pb::KeySet {
            ranges: vec![range],
            ..Default::default()
        }),
    });
    commit_once(channel, database_name, table, delete).await
}

/// Attempts of one commit of the seed or the team history, the first included, when the server
/// aborts it.
const COMMIT_ATTEMPTS: u32 = 5;

/// Commits one mutation of `table` in a session of its own, deleted afterwards even when the
/// commit failed (the commit's error wins).
async fn commit_once(
    channel: Channel,
    database_name: &str,
    table: &str,
    operation: pb::mutation::Operation,
) -> Result<(), AdminError> {
    let mut session = DataSession::create(channel, database_name).await?;
    let mutation = pb::Mutation {
        operation: Some(operation),
    };
    let committed = session.commit_mutations(table, vec![mutation]).await;
    let ended = session.delete().await;
    committed?;
    ended
}

/// Rows as the `ListValue`s a mutation carries.
fn list_values(rows: &[Vec<Value>]) -> Vec<prost_types::ListValue> {
    rows.iter()
        .map(|row| prost_types::ListValue {
            values: row.iter().map(encode_value).collect(),
        })
        .collect()
}

/// Runs `sql` with `params` (a strong read) and returns its rows, each cell as text: strings as
/// they are (INT64 and TIMESTAMP travel as strings), numbers and booleans written out, NULL as
/// `None`. What the run history's team store reads its table with.
pub async fn text_rows(
    channel: Channel,
    database_name: &str,
    sql: &str,
    params: &[super::params::Param],
) -> Result<Vec<Vec<Option<String>>>, AdminError> {
    let mut session = DataSession::create(channel, database_name).await?;
    let rows = session.text_rows(sql, params).await;
    let deleted = session.delete().await;
    let rows = rows?;
    deleted?;
    Ok(rows)
}

/// The commits of [`load_rows`], through `session`.
async fn write_batches(
    session: &mut DataSession,
    table: &DemoTable,
    rows: impl Iterator<Item = Vec<Value>>,
    batch: usize,
) -> Result<u64, AdminError> {
    let width = table.columns.len();
    let max_rows = batch.min(MAX_COMMIT_CELLS / width.max(1)).max(1);
    let columns: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
    let mut pending: Vec<prost_types::ListValue> = Vec::new();
    let mut pending_bytes = 0;
    let mut written = 0;
    for row in rows {
        if row.len() != width {
            return Err(AdminError::RowWidth {
                table: table.name.to_owned(),
                expected: width,
                found: row.len(),
            });
        }
        let values = prost_types::ListValue {
            values: row.iter().map(encode_value).collect(),
        };
        let bytes = values.encoded_len();
        if !pending.is_empty() && pending_bytes + bytes > MAX_COMMIT_BYTES {
            written += session.commit(table.name, &columns, &mut pending).await?;
            pending_bytes = 0;
        }
        pending.push(values);
        pending_bytes += bytes;
        if pending.len() >= max_rows {
            written += session.commit(table.name, &columns, &mut pending).await?;
            pending_bytes = 0;
        }
    }
    if !pending.is_empty() {
        written += session.commit(table.name, &columns, &mut pending).await?;
    }
    Ok(written)
}

/// A session of one database for the data calls of this module (not the profiled queries'
/// [`super::Session`]).
struct DataSession {
    client: SpannerClient<Channel>,
    database: String,
    name: String,
}

impl DataSession {
    async fn create(channel: Channel, database: &str) -> Result<Self, AdminError> {
        let mut client = SpannerClient::new(channel)
            .max_decoding_message_size(MAX_RESPONSE_BYTES)
            .max_encoding_message_size(usize::MAX);
        let create = pb::CreateSessionRequest {
            database: database.to_owned(),
            session: None,
        };
        let name = client
            .create_session(request(create, database)?)
            .await
            .map_err(|s| rpc_error("CreateSession", database, &s))?
            .into_inner()
            .name;
        Ok(DataSession {
            client,
            database: database.to_owned(),
            name,
        })
    }

    /// Commits `rows` of `table` (emptying it) and returns how many rows that was.
    async fn commit(
        &mut self,
        table: &str,
        columns: &[String],
        rows: &mut Vec<prost_types::ListValue>,
    ) -> Result<u64, AdminError> {
        let count = rows.len() as u64;
        let write = pb::mutation::Write {
            table: table.to_owned(),
            columns: columns.to_vec(),
            values: std::mem::take(rows),
        };
        let mutation = pb::Mutation {
            operation: Some(pb::mutation::Operation::InsertOrUpdate(write)),
        };
        self.commit_mutations(table, vec![mutation]).await?;
        Ok(count)
    }

    /// Commits `mutations` (of `table`, for the error's words) in a single-use transaction.
    async fn commit_mutations(
        &mut self,
        table: &str,
        mutations: Vec<pb::Mutation>,
    ) -> Result<(), AdminError> {
        let commit = pb::CommitRequest {
            session: self.name.clone(),
            transaction: Some(pb::commit_request::Transaction::SingleUseTransaction(
                pb::TransactionOptions {
                    mode: Some(pb::transaction_options::Mode::ReadWrite(
                        pb::transaction_options::ReadWrite::default(),
                    )),
                    ..Default::default()
                },
            )),
            mutations,
            ..Default::default()
        };
        // A single-use commit that ABORTED applied nothing: it is sent again after the delay the
        // server asked for (else 10 ms, doubling), as every client must (the emulator with fault
        // injection aborts some commits at random; Cloud Spanner may abort any).
        let mut attempt = 0u32;
        loop {
            match self
                .client
                .commit(request(commit.clone(), &self.database)?)
                .await
            {
                Ok(_) => return Ok(()),
                Err(s) if s.code() == tonic::Code::Aborted && attempt + 1 < COMMIT_ATTEMPTS => {
                    let delay = super::retry_info::retry_delay(&s).map_or_else(
                        || std::time::Duration::from_millis(10 << attempt),
                        |(d, _)| d,
                    );
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                Err(s) => {
                    return Err(rpc_error(
                        "Commit",
                        &format!("{}/{table}", self.database),
                        &s,
                    ));
                }
            }
        }
    }

    /// Runs a query and returns each cell as text (see [`text_rows`]).
    async fn text_rows(
        &mut self,
        sql: &str,
        params: &[super::params::Param],
    ) -> Result<Vec<Vec<Option<String>>>, AdminError> {
        let mut execute = pb::ExecuteSqlRequest {
            session: self.name.clone(),
            sql: sql.to_owned(),
            ..Default::default()
        };
        super::params::apply(params, &mut execute).map_err(|e| AdminError::Unexpected {
            call: "ExecuteSql",
            resource: self.database.clone(),
            detail: e.to_string(),
        })?;
        let result = self
            .client
            .execute_sql(request(execute, &self.database)?)
            .await
            .map_err(|s| rpc_error("ExecuteSql", &self.database, &s))?
            .into_inner();
        Ok(result
            .rows
            .into_iter()
            .map(|row| row.values.into_iter().map(cell_text).collect())
            .collect())
    }

    async fn delete(mut self) -> Result<(), AdminError> {
        let delete = pb::DeleteSessionRequest {
            name: self.name.clone(),
        };
        self.client
            .delete_session(request(delete, &self.database)?)
            .await
            .map_err(|s| rpc_error("DeleteSession", &self.name, &s))?;
        Ok(())
    }
}

/// A cell of a result row as text; `None` for NULL.
fn cell_text(value: prost_types::Value) -> Option<String> {
    use prost_types::value::Kind;
    match value.kind? {
        Kind::NullValue(_) => None,
        Kind::StringValue(s) => Some(s),
        Kind::NumberValue(n) => Some(n.to_string()),
        Kind::BoolValue(b) => Some(b.to_string()),
        Kind::StructValue(_) | Kind::ListValue(_) => None,
    }
}
