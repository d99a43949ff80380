//! A Cloud Spanner stand-in written for the header tests, independent of the local instance: over
//! TLS with a self-signed certificate made here (or plaintext), it answers every query with ten
//! one-row messages, each with a resume token, breaks the first attempt of each query after five
//! of them (UNAVAILABLE, as a lost connection looks), returns `server-timing` with a `gfet4t7`
//! entry and an `afe` entry only to requests that opted in, and records every call's headers.

use std::sync::{Arc, Mutex};

use spanprof::client::headers::AFE_SERVER_TIMING_HEADER;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_server::{Spanner, SpannerServer};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::transport::{Identity, ServerTlsConfig};
use tonic::{Request, Response, Status};

/// Messages every query's answer has.
pub const MESSAGES: u32 = 10;
/// Messages the first attempt of a query sends before its stream breaks.
pub const FAULT_AFTER: u32 = 5;
/// The `gfet4t7` time the stand-in reports, in ms.
pub const GFE_MS: u32 = 7;
/// The `afe` time it reports to requests that opted in, in ms.
pub const AFE_MS: u32 = 3;

/// What the stand-in saw: each call's method and headers, in order.
pub type Calls = Arc<Mutex<Vec<(&'static str, MetadataMap)>>>;

/// How the stand-in answers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Answers {
    /// Send a `server-timing` that cannot be read and a request id echo that is not one, instead
    /// of well-formed ones.
    pub malformed: bool,
    /// Refuse every query (INVALID_ARGUMENT), as a query the server cannot run.
    pub refuse_queries: bool,
    /// Send this `server-timing` value instead (with a well-formed request id echo).
    pub server_timing: Option<&'static str>,
}

/// A running stand-in: its endpoint and, over TLS, its certificate in PEM.
pub struct StandIn {
    /// `https://127.0.0.1:PORT` or `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The self-signed certificate the client must trust (TLS only).
    pub certificate: Option<String>,
    /// Every call seen.
    pub calls: Calls,
    /// Whether each CreateSession asked for a multiplexed session.
    pub multiplexed_asked: Arc<Mutex<Vec<bool>>>,
}

impl StandIn {
    /// Starts a stand-in on a loopback port, over TLS when `tls`.
    pub async fn start(tls: bool, answers: Answers) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port is free");
        let port = listener.local_addr().expect("a bound address").port();
        let calls = Calls::default();
        let multiplexed_asked = Arc::<Mutex<Vec<bool>>>::default();
        let service = SpannerServer::new(Service {
            calls: calls.clone(),
            multiplexed_asked: Arc::clone(&multiplexed_asked),
            answers,
        });
        let mut builder = tonic::transport::Server::builder();
        let certificate = if tls {
            let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()])
                .expect("a self-signed certificate can be made");
            let (cert, key) = (made.cert.pem(), made.signing_key.serialize_pem());
            builder = builder
                .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(&cert, key)))
                .expect("the certificate is usable");
            Some(cert)
        } else {
            None
        };
        tokio::spawn(
            builder
                .add_service(service)
                .serve_with_incoming(TcpListenerStream::new(listener)),
        );
        let scheme = if tls { "https" } else { "http" };
        StandIn {
            endpoint: format!("{scheme}://127.0.0.1:{port}"),
            certificate,
            calls,
            multiplexed_asked,
        }
    }

    /// The calls seen so far.
    pub fn calls(&self) -> Vec<(&'static str, MetadataMap)> {
        self.calls.lock().expect("not poisoned").clone()
    }
}

struct Service {
    calls: Calls,
    multiplexed_asked: Arc<Mutex<Vec<bool>>>,
    answers: Answers,
}

impl Service {
    fn record<T>(&self, method: &'static str, request: &Request<T>) {
        self.calls
            .lock()
            .expect("not poisoned")
            .push((method, request.metadata().clone()));
    }

    /// The response headers: `server-timing` (with `afe` only when `asked` opted in) and an echo
    /// of the request id.
    fn timing_headers(&self, asked: &MetadataMap, headers: &mut MetadataMap) {
        let (timing, echo) = if self.answers.malformed {
            (
                "gfet4t7; dur=, afe;dur=-3, ;;;, afe; dur=NaN, gfet4t7;dur=1e999".to_owned(),
                "1.not-hex.-1..NaN.x y".to_owned(),
            )
        } else {
            let opted_in = asked
                .get(AFE_SERVER_TIMING_HEADER)
                .and_then(|v| v.to_str().ok())
                == Some("true");
            let afe = if opted_in {
                format!(", afe; dur={AFE_MS}")
            } else {
                String::new()
            };
            let id = asked
                .get("x-goog-spanner-request-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            let timing = match self.answers.server_timing {
                Some(timing) => timing.to_owned(),
                None => format!("gfet4t7; dur={GFE_MS}{afe}"),
            };
            (timing, id)
        };
        if let Ok(value) = MetadataValue::try_from(timing) {
            headers.insert("server-timing", value);
        }
        if let Ok(value) = MetadataValue::try_from(echo) {
            headers.insert("x-goog-spanner-request-id", value);
        }
    }
}

/// Message `n` (from 1) of a query's answer: one INT64 row with the value `n`, the metadata on the
/// first, the statistics on the last, a resume token on each.
fn message(n: u32) -> pb::PartialResultSet {
    let string = |s: String| prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(s)),
    };
    let metadata = (n == 1).then(|| pb::ResultSetMetadata {
        row_type: Some(pb::StructType {
            fields: vec![pb::struct_type::Field {
                name: "n".into(),
                r#type: Some(pb::Type {
                    code: pb::TypeCode::Int64 as i32,
                    ..Default::default()
                }),
            }],
        }),
        ..Default::default()
    });
    let stats = (n == MESSAGES).then(|| pb::ResultSetStats {
        query_stats: Some(prost_types::Struct {
            fields: [
                ("rows_returned".to_owned(), string(MESSAGES.to_string())),
                ("elapsed_time".to_owned(), string("1.25 msecs".into())),
            ]
            .into_iter()
            .collect(),
        }),
        ..Default::default()
    });
    pb::PartialResultSet {
        metadata,
        values: vec![string(n.to_string())],
        resume_token: format!("t{n}").into_bytes(),
        stats,
        ..Default::default()
    }
}

/// The message a resume token says was the last one taken (0 for no token).
fn resumed_after(token: &[u8]) -> Result<u32, Status> {
    if token.is_empty() {
        return Ok(0);
    }
    std::str::from_utf8(token)
        .ok()
        .and_then(|t| t.strip_prefix('t'))
        .and_then(|n| n.parse().ok())
        .filter(|&n| n <= MESSAGES)
        .ok_or_else(|| Status::invalid_argument("not a resume token of this stand-in"))
}

type Messages = std::pin::Pin<
    Box<dyn tokio_stream::Stream<Item = Result<pb::PartialResultSet, Status>> + Send>,
>;

#[tonic::async_trait]
impl Spanner for Service {
    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        self.record("CreateSession", &request);
        let template = request.get_ref().session.as_ref();
        self.multiplexed_asked
            .lock()
            .expect("not poisoned")
            .push(template.is_some_and(|s| s.multiplexed));
        Ok(Response::new(pb::Session {
            name: format!("{}/sessions/standin", request.get_ref().database),
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
        if self.answers.refuse_queries {
            return Err(Status::invalid_argument("the stand-in refuses this query"));
        }
        let after = resumed_after(&request.get_ref().resume_token)?;
        let mut answer: Vec<Result<pb::PartialResultSet, Status>> = if after == 0 {
            let mut first: Vec<_> = (1..=FAULT_AFTER).map(|n| Ok(message(n))).collect();
            first.push(Err(Status::unavailable(
                "the stand-in's fault after 5 messages",
            )));
            first
        } else {
            ((after + 1)..=MESSAGES).map(|n| Ok(message(n))).collect()
        };
        if answer.is_empty() {
            answer.push(Ok(pb::PartialResultSet::default()));
        }
        let mut response = Response::new(Box::pin(tokio_stream::iter(answer)) as Messages);
        self.timing_headers(request.metadata(), response.metadata_mut());
        Ok(response)
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
        _: Request<pb::PartitionQueryRequest>,
    ) -> Result<Response<pb::PartitionResponse>, Status> {
        Err(Status::unimplemented("PartitionQuery"))
    }

    async fn rollback(&self, _: Request<pb::RollbackRequest>) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("Rollback"))
    }
}
