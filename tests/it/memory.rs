//! A 1,000,000-row answer streams through `spanprof serve` with flat server memory: the server holds
//! a few batches and messages, never the answer.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use spanprof::client::{connect_plaintext, execute_streaming_sql_raw};
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof::wire::StreamDecoder;

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `spanprof serve` on a free port and returns it with its `host:port`.
fn serve(args: &[&str]) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .arg("serve")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spanprof serve starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let server = Server(child);
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let host = lines
        .find_map(|l| l.strip_prefix("SPANNER_EMULATOR_HOST=").map(str::to_owned))
        .expect("serve prints SPANNER_EMULATOR_HOST");
    // Keep reading what it prints, so its stdout never closes under it.
    std::thread::spawn(move || lines.for_each(drop));
    (server, host)
}

/// Resident memory of a process, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("a VmRSS line")
        * 1024
}

#[tokio::test(flavor = "multi_thread")]
async fn a_million_rows_stream_with_flat_server_memory() {
    const ROWS: u64 = 1_000_000;
    let (server, host) = serve(&["--rows", "1000000", "--max-message-bytes", "65536"]);
    let pid = server.0.id();
    let channel = connect_plaintext(&host).await.expect("connects");
    let session = SpannerClient::new(channel.clone())
        .create_session(pb::CreateSessionRequest {
            database: crate::client::DATABASE.into(),
            session: None,
        })
        .await
        .expect("a session")
        .into_inner()
        .name;
    let request = pb::ExecuteSqlRequest {
        session,
        sql: "SELECT Id, Name, Email, Country, Age, Score, Active, BirthDate FROM Seed23".into(),
        ..Default::default()
    };
    let mut stream = execute_streaming_sql_raw(channel, tonic::Request::new(request))
        .await
        .expect("streams")
        .into_inner();
    let idle = rss(pid);
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    let (mut count, mut at_100k, mut peak, mut bytes) = (0u64, None, 0u64, 0u64);
    let mut next_sample = 0;
    while let Some(message) = stream.message().await.expect("a message") {
        bytes += message.len() as u64;
        decoder.feed_bytes(&message, &mut rows).expect("decodes");
        count += rows.len() as u64;
        rows.clear();
        if count >= next_sample {
            let now = rss(pid);
            peak = peak.max(now);
            if count >= 100_000 && at_100k.is_none() {
                at_100k = Some(now);
            }
            next_sample += 25_000;
        }
    }
    decoder.finish().expect("the stream ends cleanly");
    assert_eq!(count, ROWS);
    let at_100k = at_100k.expect("sampled at 100k rows");
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!(
        "server RSS: idle {:.1} MiB, after 100k rows {:.1} MiB, peak over 1M rows {:.1} MiB ({:.0} MB streamed)",
        mib(idle),
        mib(at_100k),
        mib(peak),
        bytes as f64 / 1e6
    );
    // Flat: the last 900,000 rows add (almost) nothing to what the first 100,000 needed.
    assert!(
        peak <= at_100k + (16 << 20),
        "server memory grew from {:.1} MiB to {:.1} MiB",
        mib(at_100k),
        mib(peak)
    );
}
