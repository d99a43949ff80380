//! Clients that never read: each connection holding one unread stream of
//! a large answer kept the whole answer in the server (about 6.4 MB for Seed23 at 5,000 rows; 850
//! connections aborted it), and 32 of them held every query slot. Now a stream's query pauses once
//! `max_stream_buffer_bytes` wait for its client, and gives its slot back while it waits. And
//! connections are capped and silent ones closed.

use std::time::Duration;

use prost::Message as _;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof::wire::StreamDecoder;
use tonic::transport::Channel;

use crate::client::{DATABASE, TestClient};
use crate::serve_process::ServeProcess;

/// A connection whose client grants HTTP/2's smallest windows and never reads: the server can
/// hand it 64 KiB and must hold the rest of what it produces.
async fn silent_connection(host: &str) -> SpannerClient<Channel> {
    let channel = Channel::from_shared(format!("http://{host}"))
        .expect("a valid URI")
        .initial_stream_window_size(65_535)
        .initial_connection_window_size(65_535)
        .connect()
        .await
        .expect("connects");
    SpannerClient::new(channel)
}

async fn session(client: &mut SpannerClient<Channel>) -> String {
    client
        .create_session(pb::CreateSessionRequest {
            database: DATABASE.into(),
            session: None,
        })
        .await
        .expect("a session")
        .into_inner()
        .name
}

/// Opens a stream, trying again for up to 2 s while every slot is taken: a query gives its slot
/// back once it has filled its budget, a few milliseconds after it starts.
async fn open_when_a_slot_frees(
    client: &mut SpannerClient<Channel>,
    request: pb::ExecuteSqlRequest,
    n: usize,
) -> tonic::Streaming<pb::PartialResultSet> {
    let mut tries = 0;
    loop {
        match client.execute_streaming_sql(request.clone()).await {
            Ok(stream) => return stream.into_inner(),
            Err(e) if e.code() == tonic::Code::ResourceExhausted && tries < 100 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("stream {n} is refused: {e:?}"),
        }
    }
}

/// Scaled down from 900 connections: 60 of them, each holding one never-read stream of a 25 MB
/// answer (Seed23 at 20,000 rows), on a server that runs 4 queries at once. The bound shown: a paused
/// stream costs the server a constant, whatever its answer's size: its budget (1 MiB), the message
/// being built, tonic's encoding buffer and hyper's send buffer (400 KiB and a message), its SQLite
/// connection: measured 6.8 MiB with 1 MiB messages, asserted under 8 MiB. Main held 14.9 MiB a
/// stream (and a 6.4 MB answer whole), and refused the fifth stream outright.
#[tokio::test(flavor = "multi_thread")]
async fn unread_streams_pause_their_queries_hold_little_and_leave_room_for_others() {
    const CONNECTIONS: usize = 60;
    const PER_STREAM: u64 = 8 << 20;
    let server = ServeProcess::start(&["--rows", "20000", "--max-concurrent-queries", "4"]);
    let before = server.rss();
    let mut held = Vec::new();
    for n in 0..CONNECTIONS {
        let mut client = silent_connection(&server.host).await;
        let request = pb::ExecuteSqlRequest {
            session: session(&mut client).await,
            sql: "SELECT * FROM Seed23".into(),
            ..Default::default()
        };
        let stream = open_when_a_slot_frees(&mut client, request, n).await;
        held.push((client, stream));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let grown = server.rss().saturating_sub(before);
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!(
        "{CONNECTIONS} unread streams: server RSS grew {:.1} MiB ({:.2} MiB a stream); {} query threads paused",
        mib(grown),
        mib(grown) / CONNECTIONS as f64,
        server.query_threads()
    );
    assert!(
        grown < CONNECTIONS as u64 * PER_STREAM,
        "the server grew {:.1} MiB for {CONNECTIONS} unread streams",
        mib(grown)
    );
    assert_eq!(
        server.query_threads(),
        CONNECTIONS,
        "each query is paused, not finished: its answer is larger than it may hold"
    );
    let mut other = TestClient::connect(&server.host).await;
    let answer = tokio::time::timeout(Duration::from_secs(20), other.query("SELECT 1"))
        .await
        .expect("answers within 20 s")
        .expect("the paused streams hold no query slot");
    assert_eq!(answer.rows.len(), 1);
    drop(held);
    assert!(
        server
            .wait_for_query_threads(0, Duration::from_secs(5))
            .await
            .is_some(),
        "the paused queries stop with their clients"
    );
}

/// Lets this process (and the server it starts after) open `n` files, within its hard limit: CI's
/// default soft limit is 1,024, under what 900 connections and the test's own files need.
pub fn allow_files(n: u64) {
    let hard = std::process::Command::new("sh")
        .args(["-c", "ulimit -Hn"])
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(n);
    let status = std::process::Command::new("prlimit")
        .arg(format!("--pid={}", std::process::id()))
        .arg(format!("--nofile={}:{hard}", n.min(hard)))
        .status()
        .expect("prlimit (util-linux) runs");
    assert!(status.success(), "prlimit raises the file limit");
}

/// Unread streams at full size: 900 connections, each holding one never-read stream of a 25 MB
/// answer (Seed23 at 20,000 rows, 1 MiB messages). A paused stream costs about 6-7 MiB, so without
/// the cap (`--max-unread-streams 1000000`, as main was) the server peaked at 5.31 GiB with 900
/// query threads paused. Now at most `--max-unread-streams` (64) streams wait on their clients past
/// a second; the connection of the one that has waited longest is closed. Measured: peak 0.64 GiB,
/// 64 query threads left; asserted under 2 GiB.
#[tokio::test(flavor = "multi_thread")]
async fn nine_hundred_never_read_streams_leave_the_server_alive_and_small() {
    const CONNECTIONS: usize = 900;
    const PEAK: u64 = 2 << 30;
    allow_files(4096);
    let mut server = ServeProcess::start(&["--rows", "20000"]);
    let started = std::time::Instant::now();
    let mut held = Vec::new();
    for n in 0..CONNECTIONS {
        let mut client = silent_connection(&server.host).await;
        let request = pb::ExecuteSqlRequest {
            session: session(&mut client).await,
            sql: "SELECT * FROM Seed23".into(),
            ..Default::default()
        };
        let stream = open_when_a_slot_frees(&mut client, request, n).await;
        held.push((client, stream));
    }
    let opened = started.elapsed();
    // Past the grace, the cap holds: the query threads left are the capped ones, a few more.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let threads = server.query_threads();
    let peak = server.peak_rss();
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    eprintln!(
        "{CONNECTIONS} never-read streams opened in {opened:.1?}: peak RSS {:.2} GiB, now {:.2} GiB, {threads} query threads",
        gib(peak),
        gib(server.rss())
    );
    assert!(server.is_running(), "serve is alive");
    assert!(
        peak < PEAK,
        "the server peaked at {:.2} GiB for {CONNECTIONS} never-read streams",
        gib(peak)
    );
    assert!(
        threads <= 64 + 8,
        "{threads} queries still wait on clients that never read"
    );
    let mut other = TestClient::connect(&server.host).await;
    let answer = tokio::time::timeout(Duration::from_secs(20), other.query("SELECT 1"))
        .await
        .expect("answers within 20 s")
        .expect("room for another client");
    assert_eq!(answer.rows.len(), 1);
    drop(held);
}

/// The cap closes only connections whose streams go unread: a client that reads slowly, a message
/// every 40 ms, keeps its stream to the last row while streams that are never read come and go
/// around it, past a cap of 2.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_reader_keeps_its_stream_while_never_read_ones_are_closed() {
    let server = ServeProcess::start(&["--rows", "20000", "--max-unread-streams", "2"]);
    let mut slow = silent_connection(&server.host).await;
    let request = pb::ExecuteSqlRequest {
        session: session(&mut slow).await,
        sql: "SELECT * FROM Seed23".into(),
        ..Default::default()
    };
    let mut stream = open_when_a_slot_frees(&mut slow, request.clone(), 0).await;
    let host = server.host.clone();
    let never_read = tokio::spawn(async move {
        let mut held = Vec::new();
        for n in 1..=12 {
            let mut client = silent_connection(&host).await;
            let request = pb::ExecuteSqlRequest {
                session: session(&mut client).await,
                ..request.clone()
            };
            held.push((
                open_when_a_slot_frees(&mut client, request, n).await,
                client,
            ));
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        held
    });
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    while let Some(message) = stream
        .message()
        .await
        .expect("the slow reader's stream goes on")
    {
        decoder
            .feed_bytes(&message.encode_to_vec(), &mut rows)
            .expect("decodes");
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    decoder.finish().expect("ends cleanly");
    assert_eq!(rows.len(), 20_000, "every row, once");
    let mut held = never_read.await.expect("opens them");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut closed = 0;
    for (stream, _) in &mut held {
        // A closed connection ends its stream with an error once the buffered bytes are read.
        let ended = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match stream.message().await {
                    Ok(Some(_)) => {}
                    Ok(None) => return false,
                    Err(_) => return true,
                }
            }
        })
        .await;
        closed += usize::from(ended == Ok(true));
    }
    // At most 2 may still wait; the slow reader's own moments of waiting count against the cap
    // too, so one or both of the last two may have gone as well.
    assert!(
        closed >= 10,
        "{closed} of 12 never-read streams were closed (at most 2 may wait)"
    );
}

/// A stream that pauses for its client goes on when the client reads: every row arrives.
#[tokio::test(flavor = "multi_thread")]
async fn a_paused_stream_finishes_when_its_client_reads_again() {
    let server = ServeProcess::start(&["--rows", "20000", "--max-concurrent-queries", "1"]);
    let mut slow = silent_connection(&server.host).await;
    let request = pb::ExecuteSqlRequest {
        session: session(&mut slow).await,
        sql: "SELECT * FROM Seed23".into(),
        ..Default::default()
    };
    let mut stream = slow
        .execute_streaming_sql(request)
        .await
        .expect("streams")
        .into_inner();
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    let first = stream.message().await.expect("a message").expect("one");
    decoder
        .feed_bytes(&first.encode_to_vec(), &mut rows)
        .expect("decodes");
    // The first stream waits on its reader, so the one slot is free for another query (once the
    // paused query has filled its budget: a few milliseconds, more on a loaded machine).
    let mut other = TestClient::connect(&server.host).await;
    let mut tries = 0;
    let answer = loop {
        match other.query("SELECT 1").await {
            Err(e) if e.code() == tonic::Code::ResourceExhausted && tries < 250 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            answer => break answer.expect("room"),
        }
    };
    assert_eq!(answer.rows.len(), 1);
    assert!(
        server
            .wait_for_query_threads(1, Duration::from_secs(2))
            .await
            .is_some(),
        "the first query paused, not finished (SELECT 1's thread ends just after its answer)"
    );
    while let Some(message) = stream.message().await.expect("the rest") {
        decoder
            .feed_bytes(&message.encode_to_vec(), &mut rows)
            .expect("decodes");
    }
    decoder.finish().expect("ends cleanly");
    assert_eq!(rows.len(), 20_000, "every row, once");
}

/// Reads a connection until the server closes it; the bytes it sent (its SETTINGS, a GOAWAY).
async fn to_the_end(conn: &mut tokio::net::TcpStream) -> usize {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 4096];
    let mut total = 0;
    while let Ok(n @ 1..) = conn.read(&mut buf).await {
        total += n;
    }
    total
}

/// Silent TCP connections were kept for ever (1,100 of them locked every client out
/// under `ulimit -n 1024`). Now a connection that sends nothing for `--idle-timeout-ms` is closed,
/// and at `--max-connections` an idle one (the one that never asked) makes room for
/// the new one; only when every connection has a request in flight is the new one closed at once.
#[tokio::test(flavor = "multi_thread")]
async fn at_the_cap_idle_connections_make_room_and_silent_ones_time_out() {
    let server = ServeProcess::start(&[
        "--rows",
        "20000",
        "--max-connections",
        "3",
        "--idle-timeout-ms",
        "700",
    ]);
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(
            tokio::net::TcpStream::connect(&server.host)
                .await
                .expect("connects"),
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut newest = tokio::net::TcpStream::connect(&server.host)
        .await
        .expect("the kernel accepts it");
    tokio::time::timeout(Duration::from_millis(500), to_the_end(&mut silent[0]))
        .await
        .expect("the oldest that never asked is closed at once, to make room");
    for (n, conn) in silent.iter_mut().chain([&mut newest]).enumerate().skip(1) {
        tokio::time::timeout(Duration::from_secs(5), to_the_end(conn))
            .await
            .unwrap_or_else(|_| panic!("silent connection {n} still open after 5 s"));
    }
    // Three connections, each with a stream in flight that is never read: no room.
    let mut busy = Vec::new();
    for n in 0..3 {
        let mut client = silent_connection(&server.host).await;
        let request = pb::ExecuteSqlRequest {
            session: session(&mut client).await,
            sql: "SELECT * FROM Seed23".into(),
            ..Default::default()
        };
        busy.push((
            open_when_a_slot_frees(&mut client, request, n).await,
            client,
        ));
    }
    let mut refused = tokio::net::TcpStream::connect(&server.host)
        .await
        .expect("the kernel accepts it");
    let closed = tokio::time::timeout(Duration::from_millis(500), to_the_end(&mut refused))
        .await
        .expect("closed at once: every connection is busy");
    assert_eq!(closed, 0, "not a byte: not even the server's SETTINGS");
    drop(busy);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut client = TestClient::connect(&server.host).await;
    assert_eq!(client.query("SELECT 1").await.expect("room").rows.len(), 1);
}
