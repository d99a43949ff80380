//! Talking to an instance: targets, sessions with the headers of every call, queries made into
//! requests, one timed iteration with resume, and typed errors. The only layer above the wire that
//! knows tonic, prost or the generated types: the engine, the app and the command line use
//! [`Session`] and plain data.

pub mod admin;
pub mod auth;
pub mod cloud;
pub mod codec;
pub mod error;
pub mod iteration;
pub mod params;
pub mod server_timing;
pub mod session;
pub mod target;

pub use error::ClientError;
pub use iteration::{Decoding, IterationError, IterationTiming, ResumePolicy};
pub use params::{Param, ParamError};
pub use server_timing::ServerTiming;
pub use session::{CallHeaders, PreparedQuery, Query, Session};
pub use target::{DatabasePath, QueryMode, Target, database_name, instance_name};

use prost::bytes::Bytes;
use tonic::codec::Streaming;
use tonic::transport::{Channel, Endpoint};

use crate::proto::google::spanner::v1 as pb;
use codec::RawResponseCodec;

/// HTTP/2 windows large enough that a fast server is not throttled by flow control on loopback.
pub const STREAM_WINDOW: u32 = 8 << 20;
/// See [`STREAM_WINDOW`].
pub const CONNECTION_WINDOW: u32 = 16 << 20;

/// Connects to a plaintext endpoint (`host:port`), as the emulator and the local instance serve.
pub async fn connect_plaintext(host_port: &str) -> Result<Channel, tonic::transport::Error> {
    Endpoint::from_shared(format!("http://{host_port}"))?
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .tcp_nodelay(true)
        .connect()
        .await
}

/// Calls ExecuteStreamingSql; the response's messages arrive as raw bytes, and its headers (such as
/// `server-timing`) are kept.
pub async fn execute_streaming_sql_raw(
    channel: Channel,
    request: tonic::Request<pb::ExecuteSqlRequest>,
) -> Result<tonic::Response<Streaming<Bytes>>, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(usize::MAX);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(format!("the channel is not ready: {e}")))?;
    let path = tonic::codegen::http::uri::PathAndQuery::from_static(
        "/google.spanner.v1.Spanner/ExecuteStreamingSql",
    );
    grpc.server_streaming(request, path, RawResponseCodec::default())
        .await
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
