//! The admin calls a client may make of the local instance. It has one database: every name maps
//! to it, reads of instances and databases describe it, and creating them is accepted as a no-op so
//! that tools which "create if missing" work unchanged.
//!
//! `UpdateDatabaseDdl` changes its schema: GoogleSQL `CREATE TABLE`, `DROP TABLE`, `CREATE INDEX`
//! and `DROP INDEX` (`sqlite/ddl.rs` reads them and refuses the rest by name; `sqlite/schema.rs`
//! checks names and turns them into SQLite's). The demo tables are fixed. The whole request is
//! read first: a statement that does not parse, a statement not served, or a request past the
//! bounds ([`MAX_DDL_STATEMENTS`] statements, [`ddl::MAX_DDL_STATEMENT_BYTES`] bytes each; names,
//! columns and key columns as Spanner bounds them) fails the call with INVALID_ARGUMENT and
//! applies nothing. Then the statements apply in order on the writer, each whole or not at all;
//! the first that fails (a duplicate name, a table not found, a demo table, the bounds on tables
//! and indexes) stops the rest, and those before it stay applied, as Spanner does. The operation
//! returned is done: its metadata (`UpdateDatabaseDdlMetadata`) lists the statements and a commit
//! timestamp for each applied one, and its result is `google.protobuf.Empty` or the failure.
//! `GetOperation` answers the same operation again (the last [`KEPT_OPERATIONS`] are kept, at most
//! [`KEPT_OPERATION_BYTES`] of them; an operation forgotten or not a DDL one is answered done).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use tonic::{Request, Response, Status};

use super::commit::write_bounds;
use super::session_store::shown;
use crate::server::knobs::Knobs;
use crate::server::sqlite::ddl::{self, Ddl, MAX_DDL_STATEMENTS};
use crate::server::txn::write::Writer;

use crate::proto::google::longrunning::{self as lro, operations_server::Operations};
use crate::proto::google::spanner::admin::database::v1::{
    self as dbadmin, database_admin_server::DatabaseAdmin,
};
use crate::proto::google::spanner::admin::instance::v1::{
    self as instadmin, instance_admin_server::InstanceAdmin,
};

/// The DDL operations `GetOperation` can answer again: the latest ones.
pub const KEPT_OPERATIONS: usize = 64;

/// The most bytes the kept operations may hold (their metadata repeats their statements): the
/// oldest are forgotten past it, the latest always kept.
pub const KEPT_OPERATION_BYTES: usize = 8 << 20;

/// The admin services of the local instance.
#[derive(Debug, Clone)]
pub struct LocalAdmin {
    writer: Arc<Writer>,
    knobs: Arc<Knobs>,
    /// The latest DDL operations, oldest first.
    operations: Arc<Mutex<VecDeque<lro::Operation>>>,
    counter: Arc<AtomicU64>,
}

impl LocalAdmin {
    /// The admin services over the writer that applies DDL, bounded as `knobs` say.
    pub(super) fn new(writer: Arc<Writer>, knobs: Arc<Knobs>) -> Self {
        LocalAdmin {
            writer,
            knobs,
            operations: Arc::default(),
            counter: Arc::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, VecDeque<lro::Operation>> {
        self.operations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The operation's name: `operation_id` when the request gives one (checked as Spanner
    /// checks it), else one of ours.
    fn operation_name(&self, database: &str, id: &str) -> Result<String, Status> {
        if id.is_empty() {
            let n = self.counter.fetch_add(1, Ordering::Relaxed);
            return Ok(format!("{database}/operations/_auto_op_{n:016x}"));
        }
        let well_formed = id.len() <= 128
            && id.starts_with(|c: char| c.is_ascii_lowercase())
            && id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !well_formed {
            return Err(Status::invalid_argument(format!(
                "operation_id {} is not [a-z][a-z0-9_]* of at most 128 characters",
                shown(id)
            )));
        }
        let name = format!("{database}/operations/{id}");
        if self.kept().iter().any(|op| op.name == name) {
            return Err(Status::already_exists(format!(
                "Operation {name} already exists"
            )));
        }
        Ok(name)
    }
}

/// The statements of a request, read and checked: INVALID_ARGUMENT naming the first that is not.
fn parse_all(statements: &[String]) -> Result<Vec<Ddl>, Status> {
    if statements.is_empty() {
        return Err(Status::invalid_argument(
            "UpdateDatabaseDdl names no statements",
        ));
    }
    if statements.len() > MAX_DDL_STATEMENTS {
        return Err(Status::invalid_argument(format!(
            "UpdateDatabaseDdl carries {} statements, more than the {MAX_DDL_STATEMENTS} the local \
             instance takes in one request",
            statements.len()
        )));
    }
    statements
        .iter()
        .enumerate()
        .map(|(n, sql)| {
            ddl::parse(sql).map_err(|e| {
                Status::invalid_argument(format!(
                    "statement {} of UpdateDatabaseDdl ({}): {e}; nothing was applied",
                    n + 1,
                    shown(sql)
                ))
            })
        })
        .collect()
}

fn any<M: prost::Message>(type_name: &str, message: &M) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{type_name}"),
        value: message.encode_to_vec(),
    }
}

fn done<M: prost::Message>(name: String, type_name: &str, response: &M) -> lro::Operation {
    lro::Operation {
        name,
        metadata: None,
        done: true,
        result: Some(lro::operation::Result::Response(prost_types::Any {
            type_url: format!("type.googleapis.com/{type_name}"),
            value: response.encode_to_vec(),
        })),
    }
}

fn instance(name: String) -> instadmin::Instance {
    instadmin::Instance {
        name,
        config: "spanprof-local".into(),
        display_name: "spanprof built-in local instance".into(),
        node_count: 1,
        processing_units: 1000,
        state: instadmin::instance::State::Ready as i32,
        labels: Default::default(),
    }
}

fn database(name: String) -> dbadmin::Database {
    dbadmin::Database {
        name,
        state: dbadmin::database::State::Ready as i32,
        create_time: None,
        database_dialect: dbadmin::DatabaseDialect::GoogleStandardSql as i32,
    }
}

#[tonic::async_trait]
impl InstanceAdmin for LocalAdmin {
    async fn create_instance(
        &self,
        request: Request<instadmin::CreateInstanceRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        let r = request.into_inner();
        let name = format!("{}/instances/{}", r.parent, r.instance_id);
        let op = done(
            format!("{name}/operations/create"),
            "google.spanner.admin.instance.v1.Instance",
            &instance(name),
        );
        Ok(Response::new(op))
    }

    async fn get_instance(
        &self,
        request: Request<instadmin::GetInstanceRequest>,
    ) -> Result<Response<instadmin::Instance>, Status> {
        Ok(Response::new(instance(request.into_inner().name)))
    }
}

#[tonic::async_trait]
impl DatabaseAdmin for LocalAdmin {
    async fn create_database(
        &self,
        request: Request<dbadmin::CreateDatabaseRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        let r = request.into_inner();
        let id = r
            .create_statement
            .split_whitespace()
            .nth(2)
            .unwrap_or("database")
            .trim_matches('`');
        let name = format!("{}/databases/{id}", r.parent);
        let op = done(
            format!("{name}/operations/create"),
            "google.spanner.admin.database.v1.Database",
            &database(name),
        );
        Ok(Response::new(op))
    }

    async fn get_database(
        &self,
        request: Request<dbadmin::GetDatabaseRequest>,
    ) -> Result<Response<dbadmin::Database>, Status> {
        Ok(Response::new(database(request.into_inner().name)))
    }

    async fn update_database_ddl(
        &self,
        request: Request<dbadmin::UpdateDatabaseDdlRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        let r = request.into_inner();
        if r.database.len() > 1024 {
            return Err(Status::invalid_argument("the database name is too long"));
        }
        let parsed = parse_all(&r.statements)?;
        let name = self.operation_name(&r.database, &r.operation_id)?;
        let writer = Arc::clone(&self.writer);
        let bounds = write_bounds(&self.knobs.get());
        let (applied, failure) =
            tokio::task::spawn_blocking(move || writer.apply_ddl(&parsed, bounds))
                .await
                .map_err(|e| Status::internal(format!("the DDL did not finish: {e}")))?;
        let now = prost_types::Timestamp::from(SystemTime::now());
        let metadata = dbadmin::UpdateDatabaseDdlMetadata {
            database: r.database,
            statements: r.statements,
            commit_timestamps: vec![now; applied],
        };
        let result = match failure {
            Some(status) => lro::operation::Result::Error(crate::proto::google::rpc::Status {
                code: status.code() as i32,
                message: status.message().to_owned(),
                details: Vec::new(),
            }),
            None => lro::operation::Result::Response(any("google.protobuf.Empty", &())),
        };
        let op = lro::Operation {
            name,
            metadata: Some(any(
                "google.spanner.admin.database.v1.UpdateDatabaseDdlMetadata",
                &metadata,
            )),
            done: true,
            result: Some(result),
        };
        let mut kept = self.kept();
        kept.push_back(op.clone());
        let mut bytes: usize = kept.iter().map(prost::Message::encoded_len).sum();
        while kept.len() > 1 && (kept.len() > KEPT_OPERATIONS || bytes > KEPT_OPERATION_BYTES) {
            if let Some(old) = kept.pop_front() {
                bytes -= prost::Message::encoded_len(&old);
            }
        }
        Ok(Response::new(op))
    }
}

#[tonic::async_trait]
impl Operations for LocalAdmin {
    async fn get_operation(
        &self,
        request: Request<lro::GetOperationRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        // Every operation of this instance finishes before it is returned: a DDL operation is
        // answered as it ended (its error or its response), any other as done.
        let name = request.into_inner().name;
        if let Some(op) = self.kept().iter().find(|op| op.name == name) {
            return Ok(Response::new(op.clone()));
        }
        Ok(Response::new(lro::Operation {
            name,
            done: true,
            ..Default::default()
        }))
    }
}
