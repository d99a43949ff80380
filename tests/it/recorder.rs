//! A small Spanner service for tests that records what it was sent: every call's headers and the
//! query requests' bodies (ExecuteStreamingSql, PartitionQuery). It answers each query with one
//! INT64 row and statistics that count it (or, by default, a value without metadata), PartitionQuery
//! with two partitions, and can stall.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_server::{Spanner, SpannerServer};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status};

/// The query requests the recording server received, in order.
pub type Bodies = Arc<Mutex<Vec<Body>>>;

/// One query request.
#[derive(Debug, Clone)]
pub enum Body {
    /// An ExecuteStreamingSql request.
    Execute(pb::ExecuteSqlRequest),
    /// A PartitionQuery request.
    Partition(pb::PartitionQueryRequest),
}

/// What the recording server saw: the method and the request's metadata.
pub type Seen = Arc<Mutex<Vec<(&'static str, MetadataMap)>>>;

/// How the recording server answers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Behaviour {
    /// ExecuteStreamingSql never sends a message (a query still running).
    pub stall_execute: bool,
    /// DeleteSession answers only after this long.
    pub stall_delete: Option<Duration>,
    /// Queries get a whole answer (metadata, one row, statistics); else one value with no
    /// metadata, which a decoder refuses (for tests of the calls alone).
    pub answer_rows: bool,
    /// Queries fail with INTERNAL and this message (a hostile server's text).
    pub fail_queries: Option<&'static str>,
    /// CreateSession fails with INTERNAL and this message.
    pub fail_sessions: Option<&'static str>,
}

/// A Spanner service answering CreateSession, ExecuteStreamingSql and DeleteSession, recording their
/// headers.
struct Recorder {
    seen: Seen,
    bodies: Bodies,
    behaviour: Behaviour,
}

impl Recorder {
    fn record<T>(&self, method: &'static str, request: &Request<T>) {
        self.seen
            .lock()
            .expect("the recorder's lock is not poisoned")
            .push((method, request.metadata().clone()));
    }

    fn keep(&self, body: Body) {
        self.bodies
            .lock()
            .expect("the recorder's lock is not poisoned")
            .push(body);
    }
}

/// The one row every query gets: a column `n` of INT64, the value 1, and statistics saying one
/// row was returned.
fn one_row() -> pb::PartialResultSet {
    let column = pb::struct_type::Field {
        name: "n".into(),
        r#type: Some(pb::Type {
            code: pb::TypeCode::Int64 as i32,
            ..Default::default()
        }),
    };
    let string = |s: &str| prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(s.to_owned())),
    };
    pb::PartialResultSet {
        metadata: Some(pb::ResultSetMetadata {
            row_type: Some(pb::StructType {
                fields: vec![column],
            }),
            ..Default::default()
        }),
        values: vec![string("1")],
        stats: Some(pb::ResultSetStats {
            query_stats: Some(prost_types::Struct {
                fields: [("rows_returned".to_owned(), string("1"))]
                    .into_iter()
                    .collect(),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

type Messages = std::pin::Pin<
    Box<dyn tokio_stream::Stream<Item = Result<pb::PartialResultSet, Status>> + Send>,
>;

#[tonic::async_trait]
impl Spanner for Recorder {
    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        self.record("CreateSession", &request);
        if let Some(message) = self.behaviour.fail_sessions {
            return Err(Status::internal(message));
        }
        Ok(Response::new(pb::Session {
            name: format!("{}/sessions/s1", request.get_ref().database),
            ..Default::default()
        }))
    }

    async fn batch_create_sessions(
        &self,
        _: Request<pb::BatchCreateSessionsRequest>,
    ) -> Result<Response<pb::BatchCreateSessionsResponse>, Status> {
        Err(Status::unimplemented("BatchCreateSessions"))
    }

    async fn get_session(
        &self,
        _: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        Err(Status::unimplemented("GetSession"))
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<()>, Status> {
        self.record("DeleteSession", &request);
        if let Some(stall) = self.behaviour.stall_delete {
            tokio::time::sleep(stall).await;
        }
        Ok(Response::new(()))
    }

    async fn execute_sql(
        &self,
        _: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<pb::ResultSet>, Status> {
        Err(Status::unimplemented("ExecuteSql"))
    }

    type ExecuteStreamingSqlStream = Messages;

    async fn execute_streaming_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<Messages>, Status> {
        self.record("ExecuteStreamingSql", &request);
        self.keep(Body::Execute(request.get_ref().clone()));
        if self.behaviour.stall_execute {
            return Ok(Response::new(Box::pin(tokio_stream::pending())));
        }
        if let Some(message) = self.behaviour.fail_queries {
            return Err(Status::internal(message));
        }
        let mut answer = one_row();
        if !self.behaviour.answer_rows {
            answer.metadata = None;
            answer.stats = None;
        }
        Ok(Response::new(Box::pin(tokio_stream::iter(vec![Ok(
            answer,
        )]))))
    }

    async fn begin_transaction(
        &self,
        _: Request<pb::BeginTransactionRequest>,
    ) -> Result<Response<pb::Transaction>, Status> {
        Err(Status::unimplemented("BeginTransaction"))
    }

    async fn commit(
        &self,
        _: Request<pb::CommitRequest>,
    ) -> Result<Response<pb::CommitResponse>, Status> {
        Err(Status::unimplemented("Commit"))
    }

    async fn partition_query(
        &self,
        request: Request<pb::PartitionQueryRequest>,
    ) -> Result<Response<pb::PartitionResponse>, Status> {
        self.record("PartitionQuery", &request);
        self.keep(Body::Partition(request.into_inner()));
        Ok(Response::new(pb::PartitionResponse {
            partitions: vec![
                pb::Partition {
                    partition_token: b"first".to_vec(),
                },
                pb::Partition {
                    partition_token: b"second".to_vec(),
                },
            ],
            transaction: Some(pb::Transaction {
                id: b"txn-1".to_vec(),
                ..Default::default()
            }),
        }))
    }

    async fn rollback(&self, _: Request<pb::RollbackRequest>) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("Rollback"))
    }
}

/// Starts the recording server on a loopback port; returns its `http://` endpoint.
pub async fn start_recorder(seen: Seen) -> String {
    start_recorder_with(seen, Behaviour::default()).await
}

/// Starts a recording server that answers as `behaviour` says; returns its `http://` endpoint.
pub async fn start_recorder_with(seen: Seen, behaviour: Behaviour) -> String {
    start_recording_server(seen, Bodies::default(), behaviour).await
}

/// Starts a recording server that also keeps the query requests' bodies in `bodies`.
pub async fn start_recording_server(seen: Seen, bodies: Bodies, behaviour: Behaviour) -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let port = listener.local_addr().expect("a bound address").port();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(SpannerServer::new(Recorder {
                seen,
                bodies,
                behaviour,
            }))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    format!("http://127.0.0.1:{port}")
}
