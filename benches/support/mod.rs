//! What the benchmarks that talk to the local instance share: their arguments and a session.

use std::time::Instant;

use prost::bytes::Bytes;
use spanprof::client::execute_streaming_sql_raw;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_client::SpannerClient;
use tonic::transport::Channel;

/// Any database name maps to the local instance's one database.
const DATABASE: &str = "projects/bench/instances/bench/databases/bench";

/// The row count given as the first plain argument (`cargo bench --bench B -- ROWS`), or `default`;
/// and whether this is a measuring run (`cargo bench` passes `--bench`; `cargo test` does not, and
/// then a benchmark only checks that it works).
pub fn rows_and_mode(default: u64) -> anyhow::Result<(u64, bool)> {
    let rows = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(default);
    Ok((rows, std::env::args().any(|a| a == "--bench")))
}

/// A new session on the instance behind `channel`.
pub async fn session(channel: &Channel) -> anyhow::Result<String> {
    let session = SpannerClient::new(channel.clone())
        .create_session(pb::CreateSessionRequest {
            database: DATABASE.into(),
            session: None,
        })
        .await?
        .into_inner();
    Ok(session.name)
}

/// What a client that only receives the bytes saw of one answer.
pub struct Received {
    /// From sending the request to the end of the stream.
    pub seconds: f64,
    /// Bytes of all the messages.
    pub bytes: u64,
    /// The last message (it carries the statistics).
    pub last: Option<Bytes>,
}

/// Runs `sql` (with statistics) and receives the answer's messages without decoding them.
pub async fn receive(channel: &Channel, session: &str, sql: &str) -> anyhow::Result<Received> {
    let request = pb::ExecuteSqlRequest {
        session: session.into(),
        sql: sql.into(),
        query_mode: pb::execute_sql_request::QueryMode::WithStats as i32,
        ..Default::default()
    };
    let start = Instant::now();
    let mut stream = execute_streaming_sql_raw(channel.clone(), tonic::Request::new(request))
        .await?
        .into_inner();
    let mut bytes = 0u64;
    let mut last = None;
    while let Some(message) = stream.message().await? {
        bytes += message.len() as u64;
        last = Some(message);
    }
    Ok(Received {
        seconds: start.elapsed().as_secs_f64(),
        bytes,
        last,
    })
}
