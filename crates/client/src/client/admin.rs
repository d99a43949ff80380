//! Setting up an instance and a database through the admin API (what `spanprof seed` does to the
//! Cloud Spanner emulator, which starts empty, and the team history to its database); the rows
//! themselves go through `rows.rs`.
//!
//! Every call carries `google-cloud-resource-prefix` naming the resource it is about. Long-running
//! operations are polled with GetOperation until done, for at most [`OPERATION_TIMEOUT`].

use std::time::Duration;

use tonic::transport::Channel;

pub use super::admin_call::AdminError;
use super::admin_call::{request, rpc_error};
pub use super::names::{database_name, instance_name};
use crate::proto::google::longrunning as lro;
use crate::proto::google::longrunning::operations_client::OperationsClient;
use crate::proto::google::spanner::admin::database::v1 as dbadmin;
use crate::proto::google::spanner::admin::database::v1::database_admin_client::DatabaseAdminClient;
use crate::proto::google::spanner::admin::instance::v1 as instadmin;
use crate::proto::google::spanner::admin::instance::v1::instance_admin_client::InstanceAdminClient;

/// How long a long-running admin operation may take before [`AdminError::Timeout`].
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(60);
/// The emulator's one instance configuration.
pub const EMULATOR_CONFIG: &str = "emulator-config";

/// How often an unfinished operation is polled.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

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

/// The names of the user tables of `database` (those in the default schema).
async fn existing_tables(channel: Channel, database: &str) -> Result<Vec<String>, AdminError> {
    let rows = super::rows::text_rows(
        channel,
        database,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = ''",
        &[],
    )
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| row.into_iter().next().flatten())
        .collect())
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
