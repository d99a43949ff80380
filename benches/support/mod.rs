//! What the benchmarks that talk to the local instance share: their arguments and a session.

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
