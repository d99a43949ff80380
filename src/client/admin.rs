//! Setting up an instance and a database through the admin API, and loading rows with mutations:
//! what `spanprof seed` does to the Cloud Spanner emulator (which starts empty).
//!
//! Every call carries `google-cloud-resource-prefix` naming the resource it is about. Long-running
//! operations are polled with GetOperation until done, for at most [`OPERATION_TIMEOUT`].

use std::time::Duration;

use prost::Message as _;
use tonic::transport::Channel;

pub use super::names::{database_name, instance_name};
use crate::demo::DemoTable;
use crate::proto::google::longrunning as lro;
use crate::proto::google::longrunning::operations_client::OperationsClient;
use crate::proto::google::spanner::admin::database::v1 as dbadmin;
use crate::proto::google::spanner::admin::database::v1::database_admin_client::DatabaseAdminClient;
use crate::proto::google::spanner::admin::instance::v1 as instadmin;
use crate::proto::google::spanner::admin::instance::v1::instance_admin_client::InstanceAdminClient;
use crate::proto::google::spanner::v1 as pb;
use crate::proto::google::spanner::v1::spanner_client::SpannerClient;
use crate::wire::{Value, encode_value};

/// How long a long-running admin operation may take before [`AdminError::Timeout`].
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(60);
/// The emulator's one instance configuration.
pub const EMULATOR_CONFIG: &str = "emulator-config";
/// The most mutation cells (rows x columns) one commit carries; the emulator rejects commits of
/// more than 20,000 (production allows 80,000).
pub const MAX_COMMIT_CELLS: usize = 19_000;
/// The most bytes of mutations one commit carries (a single larger row still goes, alone).
pub const MAX_COMMIT_BYTES: usize = 8_000_000;

/// The header that names the resource a call is about.
const RESOURCE_PREFIX: &str = "google-cloud-resource-prefix";
/// How often an unfinished operation is polled.
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// Responses the admin calls may receive (a large query result, say).
const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// What went wrong while setting up or loading a database.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// A call failed: the call, the resource it was about and the server's status.
    #[error("{call} {resource}: {message} ({code:?})")]
    Rpc {
        /// The RPC, e.g. `CreateDatabase`.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// The status code.
        code: tonic::Code,
        /// The server's message.
        message: String,
    },
    /// The endpoint did not answer a call within the channel's limit (see
    /// [`connect_plaintext_answering_within`](super::connect_plaintext_answering_within)).
    #[error("{call} {resource}: the endpoint did not answer in time (the call limit)")]
    Unanswered {
        /// The RPC.
        call: &'static str,
        /// The full resource name.
        resource: String,
    },
    /// The connection broke before the call was answered.
    #[error("{call} {resource}: the connection broke: {reason}")]
    Transport {
        /// The RPC.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// The transport's error and its sources.
        reason: String,
    },
    /// The endpoint is not a gRPC server.
    #[error("{call} {resource}: the endpoint does not speak gRPC: {what}")]
    NotGrpc {
        /// The RPC.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// What it did instead.
        what: String,
    },
    /// A long-running operation finished with an error.
    #[error("{call} {resource}: the operation failed: {message} (code {code})")]
    Operation {
        /// The RPC that started the operation.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// The `google.rpc.Code` of the operation's error.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// A long-running operation was not done in time.
    #[error("{call} {resource}: the operation {operation} was not done after {} s", timeout.as_secs())]
    Timeout {
        /// The RPC that started the operation.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// The operation's name.
        operation: String,
        /// How long it was waited for.
        timeout: Duration,
    },
    /// A resource name that cannot travel in a header (not visible ASCII).
    #[error("{resource:?} is not a valid resource name")]
    BadName {
        /// The offending name.
        resource: String,
    },
    /// A row whose width is not the table's.
    #[error("table {table}: a row has {found} values, the table has {expected} columns")]
    RowWidth {
        /// The table name.
        table: String,
        /// The number of columns of the table.
        expected: usize,
        /// The number of values in the row.
        found: usize,
    },
    /// The server answered with something unexpected.
    #[error("{call} {resource}: unexpected response: {detail}")]
    Unexpected {
        /// The RPC.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// What was unexpected.
        detail: String,
    },
}

/// Whether an `ensure_*` call found the resource or made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ensured {
    /// The resource did not exist and was created (with all the statements asked for).
    Created,
    /// The resource existed and was reused; these tables were missing and were added.
    Reused {
        /// The names of the tables created now, in statement order (empty for instances).
        added_tables: Vec<String>,
    },
}

/// Makes sure instance `projects/P/instances/I` exists: GetInstance, and CreateInstance (config
/// `emulator-config`, one node) if it was not found. Someone else creating it first counts as reuse.
pub async fn ensure_instance(
    channel: Channel,
    project: &str,
    instance: &str,
) -> Result<Ensured, AdminError> {
    let name = instance_name(project, instance);
    let mut client = InstanceAdminClient::new(channel.clone());
    let get = instadmin::GetInstanceRequest {
        name: name.clone(),
        field_mask: None,
    };
    match client.get_instance(request(get, &name)?).await {
        Ok(_) => return Ok(reused()),
        Err(s) if s.code() == tonic::Code::NotFound => {}
        Err(s) => return Err(rpc_error("GetInstance", &name, &s)),
    }
    let parent = format!("projects/{project}");
    let create = instadmin::CreateInstanceRequest {
        parent: parent.clone(),
        instance_id: instance.to_owned(),
        instance: Some(instadmin::Instance {
            name: name.clone(),
            config: format!("projects/{project}/instanceConfigs/{EMULATOR_CONFIG}"),
            display_name: display_name(instance),
            node_count: 1,
            ..Default::default()
        }),
    };
    match client.create_instance(request(create, &parent)?).await {
        Ok(op) => {
            wait(channel, "CreateInstance", &name, op.into_inner()).await?;
            Ok(Ensured::Created)
        }
        Err(s) if s.code() == tonic::Code::AlreadyExists => Ok(reused()),
        Err(s) => Err(rpc_error("CreateInstance", &name, &s)),
    }
}

/// Makes sure database `projects/P/instances/I/databases/D` exists with the tables of `ddl`
/// (GoogleSQL statements without semicolons). A missing database is created with all of `ddl`; for
/// an existing one, the `CREATE TABLE` statements of the tables it lacks are applied, in order
/// (other statements are applied only at creation).
pub async fn ensure_database(
    channel: Channel,
    project: &str,
    instance: &str,
    database: &str,
    ddl: &[String],
) -> Result<Ensured, AdminError> {
    let name = database_name(project, instance, database);
    let mut client = DatabaseAdminClient::new(channel.clone());
    let get = dbadmin::GetDatabaseRequest { name: name.clone() };
    match client.get_database(request(get, &name)?).await {
        Ok(_) => {}
        Err(s) if s.code() == tonic::Code::NotFound => {
            let create = dbadmin::CreateDatabaseRequest {
                parent: instance_name(project, instance),
                create_statement: format!("CREATE DATABASE `{database}`"),
                extra_statements: ddl.to_vec(),
                database_dialect: dbadmin::DatabaseDialect::GoogleStandardSql as i32,
            };
            match client.create_database(request(create, &name)?).await {
                Ok(op) => {
                    wait(channel, "CreateDatabase", &name, op.into_inner()).await?;
                    return Ok(Ensured::Created);
                }
                // Created by someone else meanwhile: go on and check its tables.
                Err(s) if s.code() == tonic::Code::AlreadyExists => {}
                Err(s) => return Err(rpc_error("CreateDatabase", &name, &s)),
            }
        }
        Err(s) => return Err(rpc_error("GetDatabase", &name, &s)),
    }
    let existing = existing_tables(channel.clone(), &name).await?;
    let missing: Vec<(&str, &String)> = ddl
        .iter()
        .filter_map(|stmt| created_table(stmt).map(|table| (table, stmt)))
        .filter(|(table, _)| !existing.iter().any(|e| e.eq_ignore_ascii_case(table)))
        .collect();
    if !missing.is_empty() {
        let update = dbadmin::UpdateDatabaseDdlRequest {
            database: name.clone(),
            statements: missing.iter().map(|(_, stmt)| (*stmt).clone()).collect(),
            operation_id: String::new(),
        };
        let op = client
            .update_database_ddl(request(update, &name)?)
            .await
            .map_err(|s| rpc_error("UpdateDatabaseDdl", &name, &s))?;
        wait(channel, "UpdateDatabaseDdl", &name, op.into_inner()).await?;
    }
    Ok(Ensured::Reused {
        added_tables: missing.iter().map(|(t, _)| (*t).to_owned()).collect(),
    })
}

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
    let mut session = Session::create(channel, database_name).await?;
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
    let mut session = Session::create(channel, database_name).await?;
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

/// Commits one mutation of `table` in a session of its own, deleted afterwards even when the
/// commit failed (the commit's error wins).
async fn commit_once(
    channel: Channel,
    database_name: &str,
    table: &str,
    operation: pb::mutation::Operation,
) -> Result<(), AdminError> {
    let mut session = Session::create(channel, database_name).await?;
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
    let mut session = Session::create(channel, database_name).await?;
    let rows = session.text_rows(sql, params).await;
    let deleted = session.delete().await;
    let rows = rows?;
    deleted?;
    Ok(rows)
}

/// The commits of [`load_rows`], through `session`.
async fn write_batches(
    session: &mut Session,
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

/// A session of one database, for the data calls of this module.
struct Session {
    client: SpannerClient<Channel>,
    database: String,
    name: String,
}

impl Session {
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
        Ok(Session {
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
        self.client
            .commit(request(commit, &self.database)?)
            .await
            .map_err(|s| rpc_error("Commit", &format!("{}/{table}", self.database), &s))?;
        Ok(())
    }

    /// Runs a query whose rows are single strings and returns them.
    async fn strings(&mut self, sql: &str) -> Result<Vec<String>, AdminError> {
        let execute = pb::ExecuteSqlRequest {
            session: self.name.clone(),
            sql: sql.to_owned(),
            ..Default::default()
        };
        let result = self
            .client
            .execute_sql(request(execute, &self.database)?)
            .await
            .map_err(|s| rpc_error("ExecuteSql", &self.database, &s))?
            .into_inner();
        result
            .rows
            .into_iter()
            .map(
                |row| match row.values.into_iter().next().and_then(|v| v.kind) {
                    Some(prost_types::value::Kind::StringValue(s)) => Ok(s),
                    other => Err(AdminError::Unexpected {
                        call: "ExecuteSql",
                        resource: self.database.clone(),
                        detail: format!("a row of `{sql}` is {other:?}, not a string"),
                    }),
                },
            )
            .collect()
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

/// The names of the user tables of `database` (those in the default schema).
async fn existing_tables(channel: Channel, database: &str) -> Result<Vec<String>, AdminError> {
    let mut session = Session::create(channel, database).await?;
    let tables = session
        .strings("SELECT table_name FROM information_schema.tables WHERE table_schema = ''")
        .await;
    let deleted = session.delete().await;
    let tables = tables?;
    deleted?;
    Ok(tables)
}

/// The table a `CREATE TABLE name (...)` statement creates, if it is one.
fn created_table(statement: &str) -> Option<&str> {
    let mut words = statement.split_whitespace();
    let create = words.next()?;
    let table = words.next()?;
    if !create.eq_ignore_ascii_case("CREATE") || !table.eq_ignore_ascii_case("TABLE") {
        return None;
    }
    let rest = words.next()?;
    let name = rest.split('(').next()?.trim_matches('`');
    (!name.is_empty()).then_some(name)
}

/// Waits until `op` is done (polling GetOperation) and turns its error, if any, into an
/// [`AdminError`] naming `call` and `resource`.
async fn wait(
    channel: Channel,
    call: &'static str,
    resource: &str,
    mut op: lro::Operation,
) -> Result<(), AdminError> {
    let deadline = tokio::time::Instant::now() + OPERATION_TIMEOUT;
    let mut client = OperationsClient::new(channel);
    while !op.done {
        if tokio::time::Instant::now() >= deadline {
            return Err(AdminError::Timeout {
                call,
                resource: resource.to_owned(),
                operation: op.name,
                timeout: OPERATION_TIMEOUT,
            });
        }
        tokio::time::sleep(POLL_INTERVAL).await;
        let get = lro::GetOperationRequest {
            name: op.name.clone(),
        };
        op = client
            .get_operation(request(get, resource)?)
            .await
            .map_err(|s| rpc_error("GetOperation", &op.name, &s))?
            .into_inner();
    }
    match op.result {
        Some(lro::operation::Result::Error(status)) => Err(AdminError::Operation {
            call,
            resource: resource.to_owned(),
            code: status.code,
            message: status.message,
        }),
        _ => Ok(()),
    }
}

/// `message` with the resource-prefix header naming `resource`.
fn request<T>(message: T, resource: &str) -> Result<tonic::Request<T>, AdminError> {
    let value = resource.parse().map_err(|_| AdminError::BadName {
        resource: resource.to_owned(),
    })?;
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(RESOURCE_PREFIX, value);
    Ok(request)
}

fn rpc_error(call: &'static str, resource: &str, status: &tonic::Status) -> AdminError {
    let resource = resource.to_owned();
    if let Some(what) = super::not_grpc(status) {
        return AdminError::NotGrpc {
            call,
            resource,
            what,
        };
    }
    if status.code() == tonic::Code::Cancelled && status.message() == "Timeout expired" {
        return AdminError::Unanswered { call, resource };
    }
    if super::broke_in_transport(status) {
        return AdminError::Transport {
            call,
            resource,
            reason: super::error_chain(status),
        };
    }
    AdminError::Rpc {
        call,
        resource,
        code: status.code(),
        message: status.message().to_owned(),
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

fn reused() -> Ensured {
    Ensured::Reused {
        added_tables: Vec::new(),
    }
}

/// A display name for an instance: at most 30 characters, as Spanner requires at least 4.
fn display_name(instance: &str) -> String {
    let mut name: String = format!("spanprof {instance}").chars().take(30).collect();
    while name.len() < 4 {
        name.push('_');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_table_reads_the_name_of_create_table_statements() {
        assert_eq!(
            created_table("CREATE TABLE Seed23 (Id INT64 NOT NULL) PRIMARY KEY (Id)"),
            Some("Seed23")
        );
        assert_eq!(
            created_table("create table `Blobs`(Id INT64) PRIMARY KEY (Id)"),
            Some("Blobs")
        );
        assert_eq!(created_table("CREATE INDEX ByName ON Seed23 (Name)"), None);
        assert_eq!(created_table("CREATE"), None);
    }

    #[test]
    fn display_names_fit_spanner_limits() {
        assert_eq!(display_name("test-instance"), "spanprof test-instance");
        assert_eq!(display_name(&"x".repeat(64)).len(), 30);
    }

    #[test]
    fn errors_name_the_call_the_resource_and_the_server_message() {
        let e = rpc_error(
            "CreateDatabase",
            "projects/p/instances/i/databases/d",
            &tonic::Status::invalid_argument("bad id"),
        );
        assert_eq!(
            e.to_string(),
            "CreateDatabase projects/p/instances/i/databases/d: bad id (InvalidArgument)"
        );
    }
}
