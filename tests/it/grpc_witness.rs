//! A witness for gRPC calls: a transparent HTTP/2 proxy between a client and a server (the Cloud
//! Spanner emulator) that forwards every call untouched and writes down, per call, its method
//! (the `:path`, such as `/google.spanner.v1.Spanner/Commit`) and the grpc-status the server
//! ended it with. A test compares what a program reports about its calls with what went over the
//! wire, without trusting the program's own figures.
//!
//! How it forwards: each downstream connection (plaintext HTTP/2 on a loopback port) gets an
//! upstream HTTP/2 connection of its own; each request stream becomes one upstream stream. Headers,
//! data and trailers go across as they come, both ways, a frame's data at a time: data is sent
//! only as the receiving side's flow-control window grants room, and the window of the side it
//! came from is released once it is handed on, so nothing is buffered beyond the windows. A reset
//! on either side resets the other. The status comes from the trailers, or from the headers of a
//! trailers-only answer (how a gRPC server answers an error at once); it is written down before
//! the end of the answer is passed on, so a client that has its answer finds its call recorded.
//!
//! Network data is hostile here too: a path is kept to [`MAX_PATH_BYTES`], at most [`MAX_CALLS`]
//! calls are kept (the rest only counted), a status that is not a number is kept as none.

use std::future::poll_fn;
use std::sync::{Arc, Mutex, PoisonError};

use tonic::codegen::{Bytes, http};

/// The most calls a witness keeps; later ones are only counted ([`Witness::unrecorded`]).
pub const MAX_CALLS: usize = 100_000;
/// The longest `:path` kept, in bytes (longer ones are cut at a character boundary).
pub const MAX_PATH_BYTES: usize = 256;

/// One call that went through, as the wire showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The request's `:path`: `/package.Service/Method`.
    pub path: String,
    /// The grpc-status the server ended it with; `None` when the stream ended without one (a
    /// reset, a broken connection, a status that is not a number).
    pub status: Option<u32>,
}

/// What the witness has written down.
#[derive(Debug, Default)]
struct Log {
    calls: Vec<Call>,
    unrecorded: u64,
}

type Shared = Arc<Mutex<Log>>;

fn lock(log: &Shared) -> std::sync::MutexGuard<'_, Log> {
    log.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running witness: listens on a loopback port, forwards to its upstream until dropped.
pub struct Witness {
    address: String,
    log: Shared,
    accepting: tokio::task::JoinHandle<()>,
}

impl Witness {
    /// Starts a witness in front of `upstream` (`host:port`, plaintext HTTP/2) on a port of its own;
    /// its connections run on the current tokio runtime.
    pub async fn start(upstream: &str) -> Witness {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let address = listener.local_addr().expect("its address").to_string();
        let log = Shared::default();
        let accepting = tokio::spawn(accept(listener, upstream.to_owned(), Arc::clone(&log)));
        Witness {
            address,
            log,
            accepting,
        }
    }

    /// The `host:port` a client connects to instead of the upstream.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Every call recorded so far, in the order they ended.
    pub fn calls(&self) -> Vec<Call> {
        lock(&self.log).calls.clone()
    }

    /// Calls that went through but were not kept (past [`MAX_CALLS`]).
    pub fn unrecorded(&self) -> u64 {
        lock(&self.log).unrecorded
    }

    /// How many recorded calls of `method` (the last part of the path, `Commit`) ended with
    /// `status` (any status: `None`).
    pub fn count(&self, method: &str, status: Option<u32>) -> usize {
        lock(&self.log)
            .calls
            .iter()
            .filter(|c| c.path.rsplit('/').next() == Some(method))
            .filter(|c| status.is_none_or(|s| c.status == Some(s)))
            .count()
    }

    /// How many recorded calls, of any method, ended with `status`.
    pub fn count_status(&self, status: u32) -> usize {
        lock(&self.log)
            .calls
            .iter()
            .filter(|c| c.status == Some(status))
            .count()
    }
}

impl Drop for Witness {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// Accepts downstream connections until the witness is dropped, each served on a task of its own.
async fn accept(listener: tokio::net::TcpListener, upstream: String, log: Shared) {
    // The connections' tasks end with the accepting one (a JoinSet aborts them when dropped).
    let mut connections = tokio::task::JoinSet::new();
    while let Ok((tcp, _)) = listener.accept().await {
        connections.spawn(connection(tcp, upstream.clone(), Arc::clone(&log)));
        while connections.try_join_next().is_some() {}
    }
}

/// Serves one downstream connection through one upstream connection of its own; either one
/// failing ends both.
async fn connection(downstream: tokio::net::TcpStream, upstream: String, log: Shared) {
    let Ok(tcp) = tokio::net::TcpStream::connect(&upstream).await else {
        return;
    };
    let Ok((client, driver)) = h2::client::handshake(tcp).await else {
        return;
    };
    let driving = tokio::spawn(async move {
        let _ = driver.await;
    });
    let Ok(mut server) = h2::server::handshake(downstream).await else {
        driving.abort();
        return;
    };
    let mut calls = tokio::task::JoinSet::new();
    // Accepting is what drives the downstream connection: it runs until the client goes away.
    while let Some(Ok((request, respond))) = server.accept().await {
        calls.spawn(call(request, respond, client.clone(), Arc::clone(&log)));
        while calls.try_join_next().is_some() {}
    }
    calls.abort_all();
    driving.abort();
}

/// Forwards one call: its request upstream, the answer back; records it once its status is known
/// (or once it broke without one).
async fn call(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    client: h2::client::SendRequest<Bytes>,
    log: Shared,
) {
    let path = bounded_path(request.uri().path());
    let mut record = Some(|status: Option<u32>| {
        let mut log = lock(&log);
        if log.calls.len() < MAX_CALLS {
            log.calls.push(Call { path, status });
        } else {
            log.unrecorded += 1;
        }
    });
    let mut record_once = |status| {
        if let Some(record) = record.take() {
            record(status);
        }
    };
    let (parts, body) = request.into_parts();
    let ended = body.is_end_stream();
    let sent = match client.ready().await {
        Ok(mut client) => client.send_request(http::Request::from_parts(parts, ()), ended),
        Err(e) => Err(e),
    };
    let (answer, upward) = match sent {
        Ok(sent) => sent,
        Err(e) => {
            respond.send_reset(e.reason().unwrap_or(h2::Reason::REFUSED_STREAM));
            return record_once(None);
        }
    };
    // The request's body streams up while the answer comes down; once the answer has ended, the
    // call is over and whatever is left of the request is dropped (which resets it upstream).
    let pumping = tokio::spawn(pump(body, upward, ended));
    let answered = tokio::select! {
        answer = answer => answer,
        _ = poll_fn(|cx| respond.poll_reset(cx)) => {
            pumping.abort();
            return record_once(None);
        }
    };
    let response = match answered {
        Ok(response) => response,
        Err(e) => {
            pumping.abort();
            respond.send_reset(e.reason().unwrap_or(h2::Reason::INTERNAL_ERROR));
            return record_once(None);
        }
    };
    let (parts, mut body) = response.into_parts();
    if body.is_end_stream() {
        // Trailers-only: the status is in the headers.
        record_once(grpc_status(&parts.headers));
        let _ = respond.send_response(http::Response::from_parts(parts, ()), true);
        pumping.abort();
        return;
    }
    let Ok(mut downward) = respond.send_response(http::Response::from_parts(parts, ()), false)
    else {
        pumping.abort();
        return record_once(None);
    };
    let mut status = None;
    let forwarded = async {
        loop {
            // A client that resets the call while the server is quiet is heard at once.
            let data = tokio::select! {
                data = body.data() => data,
                reset = poll_fn(|cx| downward.poll_reset(cx)) => return Err(h2::Error::from(reset?)),
            };
            let Some(data) = data else { break };
            let data = data?;
            let n = data.len();
            send_all(&mut downward, data).await?;
            body.flow_control().release_capacity(n)?;
        }
        match body.trailers().await? {
            Some(trailers) => {
                status = grpc_status(&trailers);
                record_once(status);
                downward.send_trailers(trailers)
            }
            None => {
                record_once(None);
                downward.send_data(Bytes::new(), true)
            }
        }
    }
    .await;
    if let Err(e) = forwarded {
        downward.send_reset(e.reason().unwrap_or(h2::Reason::INTERNAL_ERROR));
        record_once(status);
    }
    pumping.abort();
}

/// Forwards a request's body (its data, then its trailers if it has any) to `upward`; nothing
/// when the request `ended` with its headers.
async fn pump(mut body: h2::RecvStream, mut upward: h2::SendStream<Bytes>, ended: bool) {
    if ended {
        return;
    }
    let forwarded = async {
        while let Some(data) = body.data().await {
            let data = data?;
            let n = data.len();
            send_all(&mut upward, data).await?;
            body.flow_control().release_capacity(n)?;
        }
        match body.trailers().await? {
            Some(trailers) => upward.send_trailers(trailers),
            None => upward.send_data(Bytes::new(), true),
        }
    }
    .await;
    if let Err(e) = forwarded {
        upward.send_reset(e.reason().unwrap_or(h2::Reason::CANCEL));
    }
}

/// Sends `data` on `stream` as the peer's window grants room for it, never more at once.
async fn send_all(stream: &mut h2::SendStream<Bytes>, mut data: Bytes) -> Result<(), h2::Error> {
    while !data.is_empty() {
        stream.reserve_capacity(data.len());
        let granted = match poll_fn(|cx| stream.poll_capacity(cx)).await {
            Some(granted) => granted?,
            // The stream can take no more data: it was reset or closed.
            None => return Err(h2::Error::from(h2::Reason::CANCEL)),
        };
        if granted > 0 {
            stream.send_data(data.split_to(granted.min(data.len())), false)?;
        }
    }
    Ok(())
}

/// A grpc-status header's value, when it is a number.
fn grpc_status(headers: &http::HeaderMap) -> Option<u32> {
    headers.get("grpc-status")?.to_str().ok()?.parse().ok()
}

/// `path`, cut to [`MAX_PATH_BYTES`] at a character boundary.
fn bounded_path(path: &str) -> String {
    let mut end = path.len().min(MAX_PATH_BYTES);
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    path[..end].to_owned()
}

/// The witness against what is known: on the emulator, a long answer read at full speed and one
/// read slowly through HTTP/2's smallest windows, a request many windows long, and an error
/// answered at once each go through whole, and each is recorded once, in order, with the status
/// the client got.
#[tokio::test(flavor = "multi_thread")]
async fn the_witness_passes_long_answers_and_requests_whole_and_records_each_calls_status() {
    use prost::Message as _;

    use crate::client::TestClient;
    use crate::emulator::{seed, seed_args, start_emulator};

    let emulator = start_emulator();
    let host = emulator.address().to_owned();
    tokio::task::spawn_blocking(move || seed(&seed_args(&host, "test-project", 2000)))
        .await
        .expect("joins");
    let witness = Witness::start(emulator.address()).await;
    let all = "SELECT * FROM Seed23 ORDER BY Id";
    let direct = TestClient::connect(emulator.address())
        .await
        .query(all)
        .await
        .expect("the direct read");
    let mut client = TestClient::connect(witness.address()).await;
    // A window never released would stall the answer: that fails here instead of hanging.
    let through = tokio::time::timeout(std::time::Duration::from_secs(30), client.query(all))
        .await
        .expect("the answer stalled in the witness")
        .expect("the read through the witness");
    let bytes: usize = through.messages.iter().map(|m| m.encoded_len()).sum();
    assert!(bytes > 8 * 65_535, "many windows long: {bytes} bytes");
    assert_eq!(through.rows, direct.rows);
    // The client's windows are HTTP/2's smallest, granted as it reads, 4 MB a second.
    let slow = crate::raw_h2::read_slowly(witness.address(), &client.session, all, 4_000_000)
        .await
        .expect("the slow read");
    assert_eq!(slow.rows, 2000);
    let long = "x".repeat(300_000);
    let echoed = client
        .query(&format!("SELECT '{long}' AS s"))
        .await
        .expect("a long request");
    assert_eq!(
        echoed.rows.first().map(|r| r.values().to_vec()),
        Some(vec![spanprof::wire::Value::String(long)])
    );
    let refused = client
        .query("SELECT * FROM NoSuchTable")
        .await
        .expect_err("no such table");
    let streaming = "/google.spanner.v1.Spanner/ExecuteStreamingSql";
    let call = |path: &str, status: u32| Call {
        path: path.to_owned(),
        status: Some(status),
    };
    assert_eq!(
        witness.calls(),
        [
            call("/google.spanner.v1.Spanner/CreateSession", 0),
            call(streaming, 0),
            call(streaming, 0),
            call(streaming, 0),
            call(streaming, refused.code() as u32),
        ]
    );
    assert_ne!(refused.code(), tonic::Code::Ok);
    assert_eq!(witness.count_status(refused.code() as u32), 1);
    assert_eq!(witness.unrecorded(), 0);
}

#[test]
fn a_path_is_kept_to_its_bound_at_a_character_boundary() {
    let path = format!("/{}", "é".repeat(200));
    let kept = bounded_path(&path);
    assert!(kept.len() <= MAX_PATH_BYTES && kept.len() >= MAX_PATH_BYTES - 1);
    assert!(path.starts_with(&kept));
    assert_eq!(bounded_path("/a.B/C"), "/a.B/C");
}
