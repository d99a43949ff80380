//! Issue 32, F6, F8 and F9: the caps that protect the local instance choose their victim by what
//! it holds, and never the client that is reading, asking or sending.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::client::TestClient;
use crate::raw_h2::{read_slowly, small_window_connection, start_streaming, streaming_request};
use crate::serve_process::ServeProcess;

/// Streams that are never read, each on a connection of its own, opened again as soon as the
/// server closes one: what an attacker does against the cap on unread streams.
struct NeverRead {
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Connections the server closed so far.
    closed: Arc<AtomicU64>,
}

impl NeverRead {
    fn start(host: &str, session: &str, sql: &str, streams: usize) -> NeverRead {
        let closed = Arc::new(AtomicU64::new(0));
        let body = streaming_request(session, sql);
        let tasks = (0..streams)
            .map(|_| {
                let (host, body, closed) = (host.to_owned(), body.clone(), Arc::clone(&closed));
                tokio::spawn(async move {
                    loop {
                        hold_one(&host, body.clone()).await;
                        closed.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        NeverRead { tasks, closed }
    }
}

impl Drop for NeverRead {
    fn drop(&mut self) {
        self.tasks.iter().for_each(tokio::task::JoinHandle::abort);
    }
}

/// One never-read stream, held until the server closes its connection (a refusal, every query
/// slot taken, is asked again on the same connection).
async fn hold_one(host: &str, body: tonic::codegen::Bytes) {
    let Some((client, task)) = small_window_connection(host).await else {
        tokio::time::sleep(Duration::from_millis(20)).await;
        return;
    };
    loop {
        let Some((response, send)) = start_streaming(client.clone(), host, body.clone()).await
        else {
            break;
        };
        match response.await {
            Ok(r) if r.headers().get("grpc-status").is_none() => {
                // Headers only: the body stays unread, its window never granted.
                let _held = (r, send);
                let _ = task.await;
                return;
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            Err(_) => break,
        }
    }
    let _ = task.await;
}

/// Issue 32, F6: with 80 streams never read (past the cap of 64), each reopened when the server
/// closes it, the cap closed the connection of a client reading its 5.7 MB answer at 128 KiB/s
/// (granting window as it read): its query had waited longest. Against the tree before the fix
/// (ef0cf4c) none of 10 such readers finished, each closed 3.4 to 4.0 s in. Now a stream whose
/// transport took a piece of its response within the grace is never counted: all 10 finish (in
/// 43 s, at their own pace) while 500 and more never-read connections are closed around them.
#[tokio::test(flavor = "multi_thread")]
async fn readers_at_128_kib_a_second_finish_beside_eighty_never_read_streams() {
    const READERS: usize = 10;
    const RATE: u64 = 128 << 10;
    const ROWS: usize = 5_000;
    let server = ServeProcess::start(&["--rows", &ROWS.to_string()]);
    let session = TestClient::connect(&server.host).await.session;
    let sql = "SELECT * FROM Seed23";
    let attack = NeverRead::start(&server.host, &session, sql, 80);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let (host, session) = (server.host.clone(), session.clone());
            tokio::spawn(async move { read_slowly(&host, &session, sql, RATE).await })
        })
        .collect();
    let mut finished = 0;
    for (n, reader) in readers.into_iter().enumerate() {
        match reader.await.expect("the reader's task") {
            Ok(read) => {
                eprintln!(
                    "reader {n}: {} rows, {:.1} MB in {:.1?}",
                    read.rows,
                    read.bytes as f64 / 1e6,
                    read.took
                );
                assert_eq!(read.rows, ROWS, "reader {n}: every row");
                finished += 1;
            }
            Err(broke) => eprintln!("reader {n}: {broke}"),
        }
    }
    let closed = attack.closed.load(Ordering::Relaxed);
    eprintln!("{finished} of {READERS} readers finished; {closed} never-read connections closed");
    assert_eq!(finished, READERS, "every reader finishes");
    assert!(
        closed >= 16,
        "the cap held: at least the 16 never-read streams past it were closed ({closed})"
    );
}
