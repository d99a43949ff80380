//! Talking to an instance: endpoints, sessions with the headers of every call, queries made into
//! requests, one timed iteration with resume, and typed errors. The only layer above the wire that
//! knows tonic, prost or the generated types: the engine, the app and the command line use
//! [`Session`] and plain data.

pub mod admin;
mod admin_call;
pub mod auth;
pub mod cloud;
pub mod codec;
pub mod cold;
pub mod connect;
pub mod endpoint;
pub mod error;
pub mod floor;
pub mod headers;
pub mod iteration;
pub mod names;
pub mod options;
pub mod params;
pub mod partitioned;
pub mod read_write;
pub mod resume;
pub mod retry_info;
pub mod rows;
pub mod server_timing;
pub mod session;
pub mod session_kind;
mod tcp;
pub mod timeline;
pub mod timeouts;
pub mod timing;
pub mod transaction;

pub use cold::ColdStart;
pub use connect::{ConnectError, Dialer};
pub use endpoint::{DatabasePath, Endpoint, EndpointError, QueryMode, check_host_port};
pub use error::ClientError;
pub use headers::{HeaderOptions, RequestId};
pub use iteration::Decoding;
pub use names::{database_name, instance_name};
pub use options::{
    DirectedReads, OptionError, Partitioned, Priority, ReplicaSelection, ReplicaType,
    RequestOptions, Staleness,
};
pub use params::{Bound, Param, ParamError};
pub use resume::ResumePolicy;
pub use server_timing::ServerTiming;
pub use session::{CallHeaders, CallIds, PreparedQuery, Query, Session};
pub use session_kind::SessionKind;
pub use timeouts::{DurationError, Readable, Timeouts, parse_duration};
pub use timing::{IterationError, IterationTiming, PartitionTiming};

use prost::bytes::Bytes;
use tonic::codec::Streaming;
use tonic::transport::{Channel, Endpoint as GrpcEndpoint};

use crate::proto::google::spanner::v1 as pb;
use codec::RawResponseCodec;

/// HTTP/2 windows large enough that a fast server is not throttled by flow control on loopback.
pub const STREAM_WINDOW: u32 = 8 << 20;
/// See [`STREAM_WINDOW`].
pub const CONNECTION_WINDOW: u32 = 16 << 20;

/// The largest response message a query's stream may carry. Spanner's PartialResultSets are a
/// few MiB at most (values are chunked across messages); a larger length prefix is refused before
/// its bytes are read, as [`IterationError::TooLarge`].
pub const MAX_MESSAGE_BYTES: usize = 128 << 20;

/// The most bytes of response headers, and of trailers, a call takes, as HTTP/2 counts them (each
/// name and value plus 32): hyper's default, set on every channel so that [`oversized_headers`]
/// says what holds. Cloud Spanner's are a few hundred bytes.
pub const MAX_RESPONSE_HEADER_BYTES: u32 = 16 << 10;

/// Connects to a plaintext endpoint (`host:port`), as the emulator and the local instance serve.
pub async fn connect_plaintext(host_port: &str) -> Result<Channel, tonic::transport::Error> {
    GrpcEndpoint::from_shared(format!("http://{host_port}"))?
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .http2_max_header_list_size(MAX_RESPONSE_HEADER_BYTES)
        .tcp_nodelay(true)
        .connect()
        .await
}

/// [`connect_plaintext`], with every call on the channel given at most `call` for its answer (its
/// response headers): a call past it fails with CANCELLED "Timeout expired". For the admin calls;
/// a query's stream has limits of its own ([`Timeouts`]).
pub async fn connect_plaintext_answering_within(
    host_port: &str,
    call: std::time::Duration,
) -> Result<Channel, tonic::transport::Error> {
    GrpcEndpoint::from_shared(format!("http://{host_port}"))?
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .http2_max_header_list_size(MAX_RESPONSE_HEADER_BYTES)
        .tcp_nodelay(true)
        .timeout(call)
        .connect()
        .await
}

/// Calls ExecuteStreamingSql; the response's messages arrive as raw bytes, and its headers (such as
/// `server-timing`) are kept.
pub async fn execute_streaming_sql_raw(
    channel: Channel,
    request: tonic::Request<pb::ExecuteSqlRequest>,
) -> Result<tonic::Response<Streaming<Bytes>>, tonic::Status> {
    streaming_raw(
        channel,
        request,
        "/google.spanner.v1.Spanner/ExecuteStreamingSql",
    )
    .await
}

/// Calls StreamingRead as [`execute_streaming_sql_raw`] calls ExecuteStreamingSql.
pub async fn streaming_read_raw(
    channel: Channel,
    request: tonic::Request<pb::ReadRequest>,
) -> Result<tonic::Response<Streaming<Bytes>>, tonic::Status> {
    streaming_raw(channel, request, "/google.spanner.v1.Spanner/StreamingRead").await
}

/// Calls the server-streaming method at `path`, its messages kept as raw bytes.
async fn streaming_raw<Req: prost::Message + Send + 'static>(
    channel: Channel,
    request: tonic::Request<Req>,
    path: &'static str,
) -> Result<tonic::Response<Streaming<Bytes>>, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(MAX_MESSAGE_BYTES);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(format!("the channel is not ready: {e}")))?;
    let path = tonic::codegen::http::uri::PathAndQuery::from_static(path);
    grpc.server_streaming(request, path, RawResponseCodec::default())
        .await
}

/// Waits for a unary `call` to `endpoint` at most `within`; an endpoint that says nothing in that
/// time is [`ClientError::Unanswered`], naming the call.
pub async fn answered<T>(
    endpoint: &str,
    call: &'static str,
    within: std::time::Duration,
    future: impl std::future::Future<Output = T>,
) -> Result<T, ClientError> {
    tokio::time::timeout(within, future)
        .await
        .map_err(|_| ClientError::Unanswered {
            endpoint: endpoint.to_owned(),
            call,
            after: within,
        })
}

/// When `status` says that the other end speaks HTTP/2 but is not a gRPC server, what it did, in
/// words.
pub fn not_grpc(status: &tonic::Status) -> Option<String> {
    let message = status.message();
    (message.contains("grpc-status header missing") || message.contains("invalid content-type"))
        .then(|| format!("it answers HTTP/2, but not as a gRPC server does: {message}"))
}

/// When the call broke because the server's response headers (or trailers) were past
/// [`MAX_RESPONSE_HEADER_BYTES`], that, in words; tonic says only "h2 protocol error". HTTP/2
/// (h2) refuses a header list past 4 times the limit by closing the connection with
/// `header_list_way_too_large`: certain. One past the limit but under that it refuses by
/// resetting the stream with PROTOCOL_ERROR, as it does a malformed header block: the words say
/// both.
pub fn oversized_headers(status: &tonic::Status) -> Option<String> {
    let refused = h2_error(status)?;
    if !refused.is_library() {
        return None;
    }
    let limit = MAX_RESPONSE_HEADER_BYTES >> 10;
    let closed = refused.is_go_away()
        && refused.reason() == Some(h2::Reason::ENHANCE_YOUR_CALM)
        && refused.to_string().contains("header_list_way_too_large");
    let reset = refused.is_reset() && refused.reason() == Some(h2::Reason::PROTOCOL_ERROR);
    if closed {
        Some(format!(
            "the server's response headers were larger than the {limit} KiB this client takes \
             (more than {} KiB: its HTTP/2 layer closed the connection)",
            limit * 4
        ))
    } else if reset {
        Some(format!(
            "the server's response headers were larger than the {limit} KiB this client takes, \
             or malformed (its HTTP/2 layer refused them and reset the stream)"
        ))
    } else {
        None
    }
}

/// The HTTP/2 error among `status`'s sources, if any.
fn h2_error(status: &tonic::Status) -> Option<&h2::Error> {
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        if let Some(h2) = e.downcast_ref::<h2::Error>() {
            return Some(h2);
        }
        source = e.source();
    }
    None
}

/// What `status` says, in words: [`oversized_headers`] when that is why it failed, else its
/// message.
pub fn status_words(status: &tonic::Status) -> std::borrow::Cow<'_, str> {
    match oversized_headers(status) {
        Some(words) => words.into(),
        None => status.message().into(),
    }
}

/// Whether the call broke in the connection (HTTP/2 or the socket), rather than being answered.
pub fn broke_in_transport(status: &tonic::Status) -> bool {
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        if e.is::<tonic::transport::Error>() {
            return true;
        }
        source = e.source();
    }
    false
}

/// The HTTP/2 connection preface and an empty SETTINGS frame, as a client opens a connection.
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";

/// Asks `host_port` what it speaks: opens a connection, sends what an HTTP/2 client sends first,
/// and reads the first bytes of the answer (waiting at most `within`). `None` when it answers as an
/// HTTP/2 server does (a SETTINGS frame) or cannot be asked; else what it did, in words.
pub async fn probe(host_port: &str, within: std::time::Duration) -> Option<String> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let asked = async {
        let mut socket = tokio::net::TcpStream::connect(host_port).await.ok()?;
        socket.write_all(HTTP2_PREFACE).await.ok()?;
        let mut answer = vec![0u8; 256];
        let mut read = 0;
        while read < 9 {
            match socket.read(&mut answer[read..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
        answer.truncate(read);
        Some(answer)
    };
    let answer = tokio::time::timeout(within, asked).await.ok()??;
    describe_first_bytes(&answer)
}

/// What an endpoint's first bytes after the HTTP/2 preface say about it; `None` for HTTP/2.
fn describe_first_bytes(answer: &[u8]) -> Option<String> {
    match answer {
        [] => Some("it closed the connection without answering in HTTP/2".into()),
        [_, _, _, 0x04, ..] if answer.len() >= 9 => None,
        [b'H', b'T', b'T', b'P', b'/', ..] => {
            let line = answer
                .split(|&b| b == b'\r' || b == b'\n')
                .next()
                .unwrap_or(answer);
            Some(format!(
                "it answers in HTTP/1, not HTTP/2: {:?}",
                String::from_utf8_lossy(line)
            ))
        }
        [0x15 | 0x16, 0x03, ..] => {
            Some("it answers in TLS: plaintext gRPC was expected (Cloud Spanner is --cloud)".into())
        }
        _ if answer
            .iter()
            .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()) =>
        {
            let line = String::from_utf8_lossy(answer);
            let line: String = line
                .trim_start()
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(40)
                .collect();
            Some(format!("it answers in text, not HTTP/2: {line:?}"))
        }
        _ => Some(format!(
            "its first {} bytes are not HTTP/2",
            answer.len().min(9)
        )),
    }
}

/// An error and its sources on one line, `: `-separated.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bytes_of_an_answer_tell_what_an_endpoint_speaks() {
        let settings = [0, 0, 6, 0x04, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100];
        assert_eq!(describe_first_bytes(&settings), None, "HTTP/2");
        let http1 =
            describe_first_bytes(b"HTTP/1.0 400 Bad request\r\nServer: x\r\n").expect("not h2");
        assert!(
            http1.contains("HTTP/1, not HTTP/2: \"HTTP/1.0 400 Bad request\""),
            "{http1}"
        );
        let tls = describe_first_bytes(&[0x15, 0x03, 0x01, 0, 2, 2, 50]).expect("not h2");
        assert!(tls.contains("TLS"), "{tls}");
        let closed = describe_first_bytes(&[]).expect("not h2");
        assert!(closed.contains("closed the connection"), "{closed}");
        let text = describe_first_bytes(b"<!DOCTYPE HTML>\n<html>").expect("not h2");
        assert!(
            text.contains("in text, not HTTP/2: \"<!DOCTYPE HTML>\""),
            "{text}"
        );
        let binary = describe_first_bytes(&[0xff, 0, 1, 2, 3, 4, 5, 6, 7, 8]).expect("not h2");
        assert!(binary.contains("first 9 bytes are not HTTP/2"), "{binary}");
    }

    #[test]
    fn an_http2_server_without_grpc_is_named() {
        let status =
            tonic::Status::unknown("grpc-status header missing, mapped from HTTP status code 404");
        assert!(not_grpc(&status).is_some_and(|w| w.contains("not as a gRPC server")));
        assert_eq!(not_grpc(&tonic::Status::unavailable("try again")), None);
    }
}
