//! Raw HTTP/2 clients for the hostile tests, whose flow control the test decides: a reader that
//! grants window at a chosen rate, a stream that is never read, a connection that never asks
//! anything. The h2 crate's connection task answers the server's pings for each of them.

use std::time::{Duration, Instant};

use prost::Message as _;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::wire::StreamDecoder;
use tonic::codegen::{Bytes, http};

/// HTTP/2's smallest windows: the server can hand such a client 64 KiB and must hold the rest.
const SMALL_WINDOW: u32 = 65_535;

/// A connection with HTTP/2's smallest windows; its task (answering pings) runs until the server
/// closes it, and says so through the returned handle.
pub async fn small_window_connection(
    host: &str,
) -> Option<(h2::client::SendRequest<Bytes>, tokio::task::JoinHandle<()>)> {
    let tcp = tokio::net::TcpStream::connect(host).await.ok()?;
    let (client, connection) = h2::client::Builder::new()
        .initial_window_size(SMALL_WINDOW)
        .initial_connection_window_size(SMALL_WINDOW)
        .handshake::<_, Bytes>(tcp)
        .await
        .ok()?;
    let task = tokio::spawn(async move {
        let _ = connection.await;
    });
    Some((client, task))
}

/// An ExecuteStreamingSql request of `sql` in `session` as one gRPC message.
pub fn streaming_request(session: &str, sql: &str) -> Bytes {
    let request = pb::ExecuteSqlRequest {
        session: session.into(),
        sql: sql.into(),
        ..Default::default()
    };
    let message = request.encode_to_vec();
    let mut frame = Vec::with_capacity(5 + message.len());
    frame.push(0);
    frame.extend_from_slice(&u32::try_from(message.len()).expect("small").to_be_bytes());
    frame.extend_from_slice(&message);
    Bytes::from(frame)
}

/// Starts `body` as an ExecuteStreamingSql call on `client`: its response, and the request's
/// stream (dropping either resets the stream).
pub async fn start_streaming(
    client: h2::client::SendRequest<Bytes>,
    host: &str,
    body: Bytes,
) -> Option<(h2::client::ResponseFuture, h2::SendStream<Bytes>)> {
    let mut client = client.ready().await.ok()?;
    let request = http::Request::builder()
        .method("POST")
        .uri(format!(
            "http://{host}/google.spanner.v1.Spanner/ExecuteStreamingSql"
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .ok()?;
    let (response, mut send) = client.send_request(request, false).ok()?;
    send.send_data(body, true).ok()?;
    Some((response, send))
}

/// How a slow read ended.
#[derive(Debug)]
pub struct SlowRead {
    /// Rows decoded.
    pub rows: usize,
    /// Bytes of the response body.
    pub bytes: u64,
    /// From the request to the end.
    pub took: Duration,
}

/// Streams `sql` on a connection of its own and reads the answer at `rate` bytes a second,
/// granting window only as it reads (and answering pings); every message decoded. `Err` says
/// how and when the stream broke.
pub async fn read_slowly(
    host: &str,
    session: &str,
    sql: &str,
    rate: u64,
) -> Result<SlowRead, String> {
    let (client, _task) = small_window_connection(host)
        .await
        .ok_or_else(|| "no connection".to_owned())?;
    let (response, _send, started) =
        accepted(client, host, streaming_request(session, sql)).await?;
    let broke = |what: String| format!("{what} after {:.1?}", started.elapsed());
    let mut body = response.into_body();
    let mut framing = Framing::default();
    let mut bytes = 0u64;
    while let Some(data) = body.data().await {
        let data = data.map_err(|e| broke(format!("the stream broke at byte {bytes}: {e}")))?;
        bytes += data.len() as u64;
        framing.push(&data).map_err(broke)?;
        let due = started + Duration::from_secs_f64(bytes as f64 / rate as f64);
        tokio::time::sleep_until(due.into()).await;
        let _ = body.flow_control().release_capacity(data.len());
    }
    let trailers = body
        .trailers()
        .await
        .map_err(|e| broke(format!("no trailers: {e}")))?;
    let status = trailers
        .as_ref()
        .and_then(|t| t.get("grpc-status"))
        .and_then(|s| s.to_str().ok())
        .unwrap_or("none");
    if status != "0" {
        return Err(broke(format!("ended with grpc-status {status}")));
    }
    let rows = framing.finish().map_err(broke)?;
    Ok(SlowRead {
        rows,
        bytes,
        took: started.elapsed(),
    })
}

/// The call started and answered with headers, asked again while the server refuses it with
/// RESOURCE_EXHAUSTED (every query slot taken, for a moment) for up to 10 s; when it was accepted.
async fn accepted(
    client: h2::client::SendRequest<Bytes>,
    host: &str,
    body: Bytes,
) -> Result<
    (
        http::Response<h2::RecvStream>,
        h2::SendStream<Bytes>,
        Instant,
    ),
    String,
> {
    let first = Instant::now();
    loop {
        let started = Instant::now();
        let (response, send) = start_streaming(client.clone(), host, body.clone())
            .await
            .ok_or_else(|| "not sent".to_owned())?;
        let response = response.await.map_err(|e| format!("no response: {e}"))?;
        match response.headers().get("grpc-status") {
            None => return Ok((response, send, started)),
            Some(status) if status == "8" && first.elapsed() < Duration::from_secs(10) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Some(status) => return Err(format!("refused with grpc-status {status:?}")),
        }
    }
}

/// gRPC messages cut out of a response body and decoded as they complete.
#[derive(Default)]
struct Framing {
    pending: Vec<u8>,
    decoder: StreamDecoder,
    rows: usize,
}

impl Framing {
    fn push(&mut self, data: &[u8]) -> Result<(), String> {
        self.pending.extend_from_slice(data);
        while self.pending.len() >= 5 {
            let len = u32::from_be_bytes([
                self.pending[1],
                self.pending[2],
                self.pending[3],
                self.pending[4],
            ]) as usize;
            if self.pending.len() < 5 + len {
                break;
            }
            let mut rows = Vec::new();
            self.decoder
                .feed_bytes(&self.pending[5..5 + len], &mut rows)
                .map_err(|e| format!("undecodable: {e}"))?;
            self.rows += rows.len();
            self.pending.drain(..5 + len);
        }
        Ok(())
    }

    fn finish(mut self) -> Result<usize, String> {
        if !self.pending.is_empty() {
            return Err(format!("{} bytes of a message left", self.pending.len()));
        }
        self.decoder
            .finish()
            .map_err(|e| format!("unfinished: {e}"))?;
        Ok(self.rows)
    }
}
