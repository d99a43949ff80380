//! What the built-in local instance sustains over loopback: a client that only receives the bytes
//! reads Seed23 answers, and the benchmark prints MB/s and rows/s per message size.
//!
//! Wall-clock MB/s depends on whatever else the machine runs; the query thread's own CPU time (from the
//! query statistics) does not, so the benchmark also prints the MB/s one core of query thread produces.
//!
//! `cargo bench --bench server` (optionally `-- ROWS`, default 100000). Under `cargo test` (no `--bench`
//! argument) it only checks that it works, on 2,000 rows.

use spanprof::client::connect_plaintext;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod support;

#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn main() -> anyhow::Result<()> {
    let (rows, measuring) = support::rows_and_mode(100_000)?;
    let (rows, repeats) = if measuring { (rows, 3) } else { (2_000, 1) };
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let instance = LocalInstance::start(ServerConfig {
            port: 0,
            seed23_rows: rows,
            knobs: KnobSettings::default(),
            connections: Default::default(),
        })
        .await?;
        let channel = connect_plaintext(&instance.host_port()).await?;
        let session = support::session(&channel).await?;
        println!(
            "server: SELECT * FROM Seed23 ({rows} rows), bytes-only client, best of {repeats}"
        );
        for max in [16 << 10, 64 << 10, 1 << 20] {
            let mut knobs = instance.knobs().get();
            knobs.max_message_bytes = max;
            instance.knobs().set(knobs);
            let mut best: Option<(f64, u64, f64)> = None;
            for _ in 0..repeats {
                let support::Received {
                    seconds,
                    bytes,
                    last,
                } = support::receive(&channel, &session, "SELECT * FROM Seed23").await?;
                let cpu_seconds = last
                    .as_deref()
                    .and_then(query_cpu_seconds)
                    .unwrap_or(f64::NAN);
                if best.is_none_or(|(s, _, _)| seconds < s) {
                    best = Some((seconds, bytes, cpu_seconds));
                }
            }
            if let Some((seconds, bytes, cpu_seconds)) = best {
                println!(
                    "  {:>5} KiB messages: {:7.1} MB/s  {:9.0} rows/s  ({:.1} MB in {:.3} s); \
                     query thread {:.3} s of CPU: {:.1} MB/s a core",
                    max >> 10,
                    bytes as f64 / 1e6 / seconds,
                    rows as f64 / seconds,
                    bytes as f64 / 1e6,
                    seconds,
                    cpu_seconds,
                    bytes as f64 / 1e6 / cpu_seconds,
                );
            }
        }
        instance.stop(std::time::Duration::from_secs(1)).await;
        anyhow::Ok(())
    })
}

/// The query thread's CPU time, from the statistics of the stream's last message.
fn query_cpu_seconds(last: &[u8]) -> Option<f64> {
    use prost::Message as _;
    use prost_types::value::Kind;
    let message = pb::PartialResultSet::decode(last).ok()?;
    let stats = message.stats?.query_stats?;
    match &stats.fields.get("cpu_time")?.kind {
        Some(Kind::StringValue(text)) => {
            spanprof::wire::result_stats::parse_duration(text).map(|d| d.as_secs_f64())
        }
        _ => None,
    }
}
