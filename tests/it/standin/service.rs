//! The stand-in's Spanner service, once: each RPC it answers writes the call in the log, then
//! answers as its [`Behaviour`] says; the RPCs no test needs answer UNIMPLEMENTED.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_server::Spanner;
use tonic::metadata::MetadataMap;
use tonic::{Request, Response, Status};

use super::answers::{Commits, Messages, Queries, Timing};

/// How the stand-in answers; by default, as [`Behaviour::answering`] says with [`Queries::Bare`].
#[derive(Debug, Clone, Copy)]
pub struct Behaviour {
    /// Serve TLS with a self-signed certificate for 127.0.0.1, made at the start.
    pub tls: bool,
    /// CreateSession fails with INTERNAL and this message.
    pub fail_sessions: Option<&'static str>,
    /// DeleteSession answers only after this long.
    pub stall_delete: Option<Duration>,
    /// What ExecuteStreamingSql answers.
    pub queries: Queries,
    /// The timing headers of ExecuteStreamingSql's answers.
    pub timing: Timing,
    /// A header of this many bytes on ExecuteStreamingSql's answers.
    pub padding: Option<usize>,
    /// What Commit answers.
    pub commits: Commits,
}

impl Behaviour {
    /// Plaintext, granting sessions and deleting them at once, answering queries as `queries` say
    /// with no headers of note.
    pub const fn answering(queries: Queries) -> Behaviour {
        Behaviour {
            tls: false,
            fail_sessions: None,
            stall_delete: None,
            queries,
            timing: Timing::None,
            padding: None,
            commits: Commits::Ok,
        }
    }
}

impl Default for Behaviour {
    fn default() -> Behaviour {
        Behaviour::answering(Queries::Bare)
    }
}

/// A request the stand-in answered (DeleteSession's without its body, which no test reads).
#[derive(Debug, Clone)]
pub enum Body {
    /// A CreateSession request.
    CreateSession(pb::CreateSessionRequest),
    /// An ExecuteStreamingSql request.
    ExecuteStreamingSql(pb::ExecuteSqlRequest),
    /// A PartitionQuery request.
    PartitionQuery(pb::PartitionQueryRequest),
    /// A BeginTransaction request.
    BeginTransaction(pb::BeginTransactionRequest),
    /// A Commit request.
    Commit(pb::CommitRequest),
    /// A Rollback request.
    Rollback(pb::RollbackRequest),
    /// A DeleteSession request.
    DeleteSession,
}

impl Body {
    /// The RPC's name.
    pub fn method(&self) -> &'static str {
        match self {
            Body::CreateSession(_) => "CreateSession",
            Body::ExecuteStreamingSql(_) => "ExecuteStreamingSql",
            Body::PartitionQuery(_) => "PartitionQuery",
            Body::BeginTransaction(_) => "BeginTransaction",
            Body::Commit(_) => "Commit",
            Body::Rollback(_) => "Rollback",
            Body::DeleteSession => "DeleteSession",
        }
    }

    /// The session the request names (none for DeleteSession, whose body is not kept).
    pub fn session(&self) -> Option<&str> {
        match self {
            Body::ExecuteStreamingSql(r) => Some(&r.session),
            Body::PartitionQuery(r) => Some(&r.session),
            Body::BeginTransaction(r) => Some(&r.session),
            Body::Commit(r) => Some(&r.session),
            Body::Rollback(r) => Some(&r.session),
            Body::CreateSession(_) | Body::DeleteSession => None,
        }
    }

    /// The transaction tag of the request's options, when it carries one.
    pub fn transaction_tag(&self) -> Option<&str> {
        let options = match self {
            Body::ExecuteStreamingSql(r) => r.request_options.as_ref(),
            Body::BeginTransaction(r) => r.request_options.as_ref(),
            Body::Commit(r) => r.request_options.as_ref(),
            Body::CreateSession(_)
            | Body::PartitionQuery(_)
            | Body::Rollback(_)
            | Body::DeleteSession => None,
        };
        options.map(|o| o.transaction_tag.as_str())
    }
}

/// Every call the stand-in answered, in order: the request and its headers.
pub type Log = Arc<Mutex<Vec<(Body, MetadataMap)>>>;

/// The service: what it does, what it saw, and how many sessions, transactions and commits it
/// counted.
pub struct Service {
    /// How it answers.
    behaviour: Behaviour,
    /// Every call it answered.
    log: Log,
    sessions: AtomicU32,
    transactions: AtomicU32,
    commits: AtomicU32,
}

/// The next of `counter`, from 1.
fn next(counter: &AtomicU32) -> u32 {
    counter.fetch_add(1, Ordering::SeqCst) + 1
}

impl Service {
    /// A service answering as `behaviour` says, writing every call into `log`.
    pub fn new(behaviour: Behaviour, log: Log) -> Service {
        Service {
            behaviour,
            log,
            sessions: AtomicU32::new(0),
            transactions: AtomicU32::new(0),
            commits: AtomicU32::new(0),
        }
    }

    fn record<T: Clone>(&self, request: &Request<T>, body: fn(T) -> Body) {
        self.log
            .lock()
            .expect("the stand-in's log is not poisoned")
            .push((body(request.get_ref().clone()), request.metadata().clone()));
    }
}

/// The answer of every RPC no test needs.
fn unanswered<T>(rpc: &str) -> Result<Response<T>, Status> {
    Err(Status::unimplemented(rpc))
}

#[tonic::async_trait]
impl Spanner for Service {
    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        self.record(&request, Body::CreateSession);
        if let Some(message) = self.behaviour.fail_sessions {
            return Err(Status::internal(message));
        }
        let number = next(&self.sessions);
        Ok(Response::new(pb::Session {
            name: format!("{}/sessions/s{number}", request.get_ref().database),
            ..Default::default()
        }))
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<()>, Status> {
        self.record(&request, |_| Body::DeleteSession);
        if let Some(stall) = self.behaviour.stall_delete {
            tokio::time::sleep(stall).await;
        }
        Ok(Response::new(()))
    }

    type ExecuteStreamingSqlStream = Messages;

    async fn execute_streaming_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<Messages>, Status> {
        self.record(&request, Body::ExecuteStreamingSql);
        if request.get_ref().resume_token.len() > 1 << 20 {
            return Err(Status::invalid_argument(
                "the client sent back a huge resume token",
            ));
        }
        let mut response = Response::new(self.behaviour.queries.answer(request.get_ref())?);
        let headers = response.metadata_mut();
        self.behaviour.timing.write(request.metadata(), headers);
        if let Some(bytes) = self.behaviour.padding {
            let value = "x".repeat(bytes).parse().expect("a header value");
            headers.insert("x-stand-in-padding", value);
        }
        Ok(response)
    }

    /// Two partitions, `first` and `second`, in the transaction `txn-1`.
    async fn partition_query(
        &self,
        request: Request<pb::PartitionQueryRequest>,
    ) -> Result<Response<pb::PartitionResponse>, Status> {
        self.record(&request, Body::PartitionQuery);
        let partition = |token: &[u8]| pb::Partition {
            partition_token: token.to_vec(),
        };
        Ok(Response::new(pb::PartitionResponse {
            partitions: vec![partition(b"first"), partition(b"second")],
            transaction: Some(pb::Transaction {
                id: b"txn-1".to_vec(),
                ..Default::default()
            }),
        }))
    }

    async fn batch_create_sessions(
        &self,
        _: Request<pb::BatchCreateSessionsRequest>,
    ) -> Result<Response<pb::BatchCreateSessionsResponse>, Status> {
        unanswered("BatchCreateSessions")
    }

    async fn get_session(
        &self,
        _: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        unanswered("GetSession")
    }

    async fn execute_sql(
        &self,
        _: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<pb::ResultSet>, Status> {
        unanswered("ExecuteSql")
    }

    /// A new transaction each time: `txn-1`, `txn-2`...
    async fn begin_transaction(
        &self,
        request: Request<pb::BeginTransactionRequest>,
    ) -> Result<Response<pb::Transaction>, Status> {
        self.record(&request, Body::BeginTransaction);
        let number = next(&self.transactions);
        Ok(Response::new(pb::Transaction {
            id: format!("txn-{number}").into_bytes(),
            ..Default::default()
        }))
    }

    async fn commit(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<Response<pb::CommitResponse>, Status> {
        self.record(&request, Body::Commit);
        let number = next(&self.commits);
        self.behaviour.commits.answer(number).map(Response::new)
    }

    async fn rollback(
        &self,
        request: Request<pb::RollbackRequest>,
    ) -> Result<Response<()>, Status> {
        self.record(&request, Body::Rollback);
        Ok(Response::new(()))
    }

    async fn execute_batch_dml(
        &self,
        _: Request<pb::ExecuteBatchDmlRequest>,
    ) -> Result<Response<pb::ExecuteBatchDmlResponse>, Status> {
        unanswered("ExecuteBatchDml")
    }

    async fn read(&self, _: Request<pb::ReadRequest>) -> Result<Response<pb::ResultSet>, Status> {
        unanswered("Read")
    }

    type StreamingReadStream = Messages;

    async fn streaming_read(
        &self,
        _: Request<pb::ReadRequest>,
    ) -> Result<Response<Messages>, Status> {
        unanswered("StreamingRead")
    }
}
