//! The client against a hostile server: a stand-in Spanner service
//! that streams without end faster than the client reads, sends a message past the client's size
//! limit, a resume token of 100 MB, or answers every query with UNAVAILABLE.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use spanprof::client::iteration::{Decoding, run_iteration};
use spanprof::client::{
    IterationError, MAX_MESSAGE_BYTES, ResumePolicy, Timeouts, connect_plaintext,
};
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_server::{Spanner, SpannerServer};
use spanprof::wire::DecoderKind;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

/// What the stand-in does with each query.
#[derive(Debug, Clone, Copy)]
enum Hostility {
    /// Messages of one INT64 row each, without end, as fast as the connection takes them.
    Endless,
    /// One message of this many bytes (a STRING value of about that size).
    Huge(usize),
    /// A first message whose resume token has this many bytes.
    Token(usize),
    /// Response headers, then UNAVAILABLE.
    Unavailable,
    /// Response headers of about this many bytes, then one row.
    HugeHeaders(usize),
}

/// A Spanner service that answers queries as its [`Hostility`] says, counting them.
struct StandIn {
    hostility: Hostility,
    queries: Arc<AtomicUsize>,
}

type Messages = std::pin::Pin<
    Box<dyn tokio_stream::Stream<Item = Result<pb::PartialResultSet, Status>> + Send>,
>;

fn string(s: String) -> prost_types::Value {
    prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(s)),
    }
}

/// A message with one value (`value`) of a one-column result of `code`, with `metadata` or not.
fn message(metadata: bool, code: pb::TypeCode, value: String) -> pb::PartialResultSet {
    let column = pb::struct_type::Field {
        name: "v".into(),
        r#type: Some(pb::Type {
            code: code as i32,
            ..Default::default()
        }),
    };
    pb::PartialResultSet {
        metadata: metadata.then(|| pb::ResultSetMetadata {
            row_type: Some(pb::StructType {
                fields: vec![column],
            }),
            ..Default::default()
        }),
        values: vec![string(value)],
        ..Default::default()
    }
}

impl StandIn {
    fn answer(&self) -> Messages {
        match self.hostility {
            Hostility::Endless => {
                let rows = (0u64..).map(|n| {
                    let mut m = message(n == 0, pb::TypeCode::Int64, n.to_string());
                    m.resume_token = n.to_le_bytes().to_vec();
                    Ok(m)
                });
                Box::pin(tokio_stream::iter(rows))
            }
            Hostility::Huge(bytes) => {
                let m = message(true, pb::TypeCode::String, "x".repeat(bytes));
                Box::pin(tokio_stream::iter([Ok(m)]))
            }
            Hostility::Token(bytes) => {
                let mut m = message(true, pb::TypeCode::Int64, "1".into());
                m.resume_token = vec![7; bytes];
                // The stream then breaks, so that a client which kept the token would send it back.
                let broke = Err(Status::unavailable("the stand-in breaks the stream"));
                Box::pin(tokio_stream::iter([Ok(m), broke]))
            }
            Hostility::Unavailable => Box::pin(tokio_stream::iter([Err(Status::unavailable(
                "the stand-in is always unavailable",
            ))])),
            Hostility::HugeHeaders(_) => {
                let m = message(true, pb::TypeCode::Int64, "1".into());
                Box::pin(tokio_stream::iter([Ok(m)]))
            }
        }
    }
}

#[tonic::async_trait]
impl Spanner for StandIn {
    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
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
        _: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<()>, Status> {
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
        self.queries.fetch_add(1, Ordering::SeqCst);
        if request.get_ref().resume_token.len() > 1 << 20 {
            return Err(Status::invalid_argument(
                "the client sent back a huge resume token",
            ));
        }
        let mut response = Response::new(self.answer());
        if let Hostility::HugeHeaders(bytes) = self.hostility {
            let value = "x".repeat(bytes).parse().expect("a header value");
            response.metadata_mut().insert("x-stand-in-padding", value);
        }
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

/// Starts a stand-in on a loopback port; returns its `host:port` and the count of queries it got.
async fn start(hostility: Hostility) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let port = listener.local_addr().expect("a bound address").port();
    let queries = Arc::new(AtomicUsize::new(0));
    let service = SpannerServer::new(StandIn {
        hostility,
        queries: queries.clone(),
    })
    .max_encoding_message_size(usize::MAX);
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    (format!("127.0.0.1:{port}"), queries)
}

/// One iteration against `host`, limited to `iteration`, each message's rows handed to a callback
/// that takes `per_message` (a client slower than its server); in a task of its own, so that a
/// test can stop waiting for an iteration that never yields.
fn iterate(
    host: String,
    iteration: Duration,
    per_message: Duration,
) -> std::sync::mpsc::Receiver<Result<u64, IterationError>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let _ = tx.send(runtime.block_on(async move {
            let channel = connect_plaintext(&host).await.expect("connects");
            let request = pb::ExecuteSqlRequest {
                session: "projects/p/instances/i/databases/d/sessions/s1".into(),
                sql: "SELECT hostility".into(),
                ..Default::default()
            };
            let timeouts = Timeouts {
                iteration,
                ..Timeouts::DEFAULT
            };
            let mut on_rows = |_: spanprof::wire::RowsView<'_>, _: usize| {
                if !per_message.is_zero() {
                    std::thread::sleep(per_message);
                }
            };
            let timing = run_iteration(
                channel,
                &request,
                Default::default(),
                ResumePolicy::default(),
                timeouts,
                Decoding::new(DecoderKind::Fast, &mut on_rows),
            )
            .await?;
            Ok(timing.rows)
        }));
    });
    rx
}

/// Waits at most `within` for `iteration` to end; its error.
async fn error_within(
    iteration: std::sync::mpsc::Receiver<Result<u64, IterationError>>,
    within: Duration,
) -> IterationError {
    let ended = tokio::task::block_in_place(|| iteration.recv_timeout(within));
    ended
        .unwrap_or_else(|_| panic!("the iteration did not end within {within:?}"))
        .expect_err("the hostile server's answer is refused")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_iteration_limit_holds_against_a_server_that_outruns_the_client() {
    let (host, _) = start(Hostility::Endless).await;
    let started = Instant::now();
    let iteration = iterate(host, Duration::from_secs(2), Duration::from_millis(2));
    let error = error_within(iteration, Duration::from_secs(10)).await;
    let took = started.elapsed();
    assert!(matches!(error, IterationError::Deadline { .. }), "{error}");
    assert!(
        error.to_string().contains("did not finish within 2 s"),
        "{error}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_past_the_size_limit_is_refused_before_it_is_read() {
    let (host, _) = start(Hostility::Huge(MAX_MESSAGE_BYTES + (1 << 20))).await;
    let iteration = iterate(host, Duration::from_secs(60), Duration::ZERO);
    let error = error_within(iteration, Duration::from_secs(30)).await;
    assert!(matches!(error, IterationError::TooLarge(_)), "{error}");
    let text = error.to_string();
    assert!(
        text.contains("larger than the 128 MiB one message may be"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_resume_token_is_refused_not_sent_back() {
    let (host, queries) = start(Hostility::Token(100_000_000)).await;
    let iteration = iterate(host, Duration::from_secs(60), Duration::ZERO);
    let error = error_within(iteration, Duration::from_secs(30)).await;
    assert!(matches!(error, IterationError::TooLarge(_)), "{error}");
    let text = error.to_string();
    assert!(
        text.contains("message 1 carries a resume token of 100000000 bytes, more than the 64 KiB"),
        "{text}"
    );
    assert_eq!(queries.load(Ordering::SeqCst), 1, "no resume was asked");
}

#[tokio::test(flavor = "multi_thread")]
async fn resumes_against_an_always_unavailable_server_back_off() {
    let (host, queries) = start(Hostility::Unavailable).await;
    let window = Duration::from_secs(3);
    let iteration = iterate(host, window, Duration::ZERO);
    let error = error_within(iteration, Duration::from_secs(10)).await;
    assert!(matches!(error, IterationError::Deadline { .. }), "{error}");
    // Waits of 5 ms doubling to 1 s, each between half and all of it: 9 to 13 requests in 3 s;
    // without a back-off that backs off, hundreds.
    let asked = queries.load(Ordering::SeqCst);
    assert!((5..=16).contains(&asked), "{asked} requests in {window:?}");
}

/// The client's HTTP/2 layer refuses response headers past its limit,
/// and tonic says "h2 protocol error"; the iteration says what it was. Past 4 times the limit
/// the connection is closed (certain); past the limit only, the stream is reset (as for a
/// malformed block, which the words name too).
#[tokio::test(flavor = "multi_thread")]
async fn response_headers_past_the_limit_are_named_not_called_a_protocol_error() {
    for (bytes, said) in [
        (
            80 << 10,
            "the server's response headers were larger than the 16 KiB this client takes (more than 64 KiB",
        ),
        (
            20 << 10,
            "the server's response headers were larger than the 16 KiB this client takes, or malformed",
        ),
    ] {
        let (host, queries) = start(Hostility::HugeHeaders(bytes)).await;
        let iteration = iterate(host, Duration::from_secs(30), Duration::ZERO);
        let error = error_within(iteration, Duration::from_secs(20)).await;
        let text = error.to_string();
        assert!(text.contains(said), "{bytes}: {text}");
        assert!(!text.contains("h2 protocol error"), "{text}");
        assert_eq!(queries.load(Ordering::SeqCst), 1, "not resumed");
    }
}
