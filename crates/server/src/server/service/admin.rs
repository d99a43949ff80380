//! The admin calls a client may make of the local instance. It has one fixed database: every name maps
//! to it, reads of instances and databases describe it, and creating them is accepted as a no-op so
//! that tools which "create if missing" work unchanged. Schema changes are refused.

use tonic::{Request, Response, Status};

use crate::proto::google::longrunning::{self as lro, operations_server::Operations};
use crate::proto::google::spanner::admin::database::v1::{
    self as dbadmin, database_admin_server::DatabaseAdmin,
};
use crate::proto::google::spanner::admin::instance::v1::{
    self as instadmin, instance_admin_server::InstanceAdmin,
};

/// The admin services of the local instance.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalAdmin;

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
        _request: Request<dbadmin::UpdateDatabaseDdlRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        Err(Status::failed_precondition(
            "the built-in local instance has a fixed demo schema (Seed23, Singers, Albums, Blobs)",
        ))
    }
}

#[tonic::async_trait]
impl Operations for LocalAdmin {
    async fn get_operation(
        &self,
        request: Request<lro::GetOperationRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        // Every operation of this instance finishes before it is returned.
        Ok(Response::new(lro::Operation {
            name: request.into_inner().name,
            done: true,
            ..Default::default()
        }))
    }
}
