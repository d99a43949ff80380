//! The headers the official Spanner clients send beside the resource prefix and the token
//! (`shared/SPANNER_WIRE.md`, "Headers"): the AFE server-timing opt-in, `x-goog-api-client`, a
//! request id on every call (`1.<process>.<client>.<channel>.<request>.<attempt>`, the attempt
//! counting up on a resume), and, when asked, end-to-end tracing with a W3C `traceparent` carrying
//! a new trace id per iteration. The session ([`super::CallHeaders`]) attaches them; the iteration,
//! the wire floor and partitioned reads take one [`CallMetadata`] per call and ask it for each
//! attempt's headers.

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};
use tonic::metadata::{MetadataMap, MetadataValue};

/// Asks the Spanner API front end for its `afe` entry in `server-timing`.
pub const AFE_SERVER_TIMING_HEADER: &str = "x-goog-spanner-enable-afe-server-timing";
/// The id of one attempt of one call: `1.<process>.<client>.<channel>.<request>.<attempt>`.
pub const REQUEST_ID_HEADER: &str = "x-goog-spanner-request-id";
/// Names the client library and its versions.
pub const API_CLIENT_HEADER: &str = "x-goog-api-client";
/// Asks Spanner to record its own spans of the call under the `traceparent`'s trace.
pub const END_TO_END_TRACING_HEADER: &str = "x-goog-spanner-end-to-end-tracing";
/// The W3C trace context: `00-<32 hex trace id>-<16 hex parent span id>-01`.
pub const TRACEPARENT_HEADER: &str = "traceparent";

/// The version of tonic, the gRPC library, in `x-goog-api-client`'s `grpc/` token (a test checks it
/// against Cargo.lock).
pub const GRPC_VERSION: &str = "0.14.9";

/// Which optional headers the calls carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HeaderOptions {
    /// Send `x-goog-spanner-enable-afe-server-timing: true` on every call (the default, as the
    /// official clients do with their built-in metrics on); `--no-afe-timing` turns it off.
    pub afe_timing: bool,
    /// Send `x-goog-spanner-end-to-end-tracing: true` and a `traceparent` on every query, a new
    /// trace per iteration (`--end-to-end-tracing`).
    pub end_to_end_tracing: bool,
}

impl Default for HeaderOptions {
    fn default() -> Self {
        HeaderOptions {
            afe_timing: true,
            end_to_end_tracing: false,
        }
    }
}

/// `x-goog-api-client`: spanprof and its version, the Rust version the crate is built for (its
/// `rust-version`) and the gRPC library's, in the official clients' `name/version` tokens, e.g.
/// `gl-rust/1.95 spanprof/0.1.0 grpc/0.14.9`.
pub fn api_client() -> String {
    format!(
        "gl-rust/{} spanprof/{} grpc/{GRPC_VERSION}",
        env!("CARGO_PKG_RUST_VERSION"),
        env!("CARGO_PKG_VERSION")
    )
}

/// Puts the headers every call of a session carries (the AFE opt-in when asked, the API client)
/// into `fixed`.
pub fn add_fixed(fixed: &mut MetadataMap, options: HeaderOptions) {
    fixed.remove(AFE_SERVER_TIMING_HEADER);
    if options.afe_timing {
        fixed.insert(AFE_SERVER_TIMING_HEADER, MetadataValue::from_static("true"));
    }
    // spanprof's name and version are ASCII tokens: the value is always a valid header.
    if let Ok(value) = MetadataValue::try_from(api_client()) {
        fixed.insert(API_CLIENT_HEADER, value);
    }
}

/// Random bytes from the system, or (should it ever fail) from std's per-process random keys.
fn random_bytes<const N: usize>() -> [u8; N] {
    use ring::rand::SecureRandom as _;
    let mut bytes = [0u8; N];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        use std::hash::BuildHasher as _;
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let bits = std::hash::RandomState::new().hash_one((i, std::time::Instant::now()));
            chunk.copy_from_slice(&bits.to_le_bytes()[..chunk.len()]);
        }
    }
    bytes
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut out, b| {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// This process's random id in request ids: 16 lowercase hex digits, drawn once.
pub fn process_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| hex(&random_bytes::<8>()))
}

/// Client objects made in this process so far (each session is one).
static CLIENTS: AtomicU32 = AtomicU32::new(0);

/// The request ids of one client object (a session): its number in the process, its one channel,
/// and a counter of its requests.
#[derive(Debug)]
pub struct RequestIds {
    client: u32,
    channel: u32,
    requests: AtomicU32,
}

impl RequestIds {
    /// The ids of a new client object: the next client number of the process, channel 1.
    pub fn new() -> Self {
        RequestIds {
            client: CLIENTS.fetch_add(1, Ordering::Relaxed).wrapping_add(1),
            channel: 1,
            requests: AtomicU32::new(0),
        }
    }

    /// The id of the client's next request, first attempt.
    pub fn next(&self) -> RequestId {
        RequestId {
            client: self.client,
            channel: self.channel,
            request: self
                .requests
                .fetch_add(1, Ordering::Relaxed)
                .wrapping_add(1),
            attempt: 1,
        }
    }
}

impl Default for RequestIds {
    fn default() -> Self {
        Self::new()
    }
}

/// One attempt of one request: shown as `1.<process>.<client>.<channel>.<request>.<attempt>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestId {
    /// The client object, from 1.
    pub client: u32,
    /// Its channel, from 1.
    pub channel: u32,
    /// The request on that client, from 1.
    pub request: u32,
    /// The attempt of that request, from 1 (a resume or retry adds 1).
    pub attempt: u32,
}

impl RequestId {
    /// The same request's attempt `attempt`.
    pub fn with_attempt(self, attempt: u32) -> RequestId {
        RequestId { attempt, ..self }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "1.{}.{}.{}.{}.{}",
            process_id(),
            self.client,
            self.channel,
            self.request,
            self.attempt
        )
    }
}

/// A W3C trace context of one iteration: a new trace id, and the span id of spanprof's iteration
/// as the parent of the server's spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: [u8; 16],
    span_id: [u8; 8],
}

impl TraceContext {
    /// A new random trace (W3C forbids an all-zero trace or span id; one is drawn again).
    pub fn new() -> Self {
        let mut trace_id = random_bytes::<16>();
        while trace_id == [0; 16] {
            trace_id = random_bytes();
        }
        let mut span_id = random_bytes::<8>();
        while span_id == [0; 8] {
            span_id = random_bytes();
        }
        TraceContext { trace_id, span_id }
    }

    /// The trace id, 32 lowercase hex digits (what Cloud Trace finds the trace by).
    pub fn trace_id(&self) -> String {
        hex(&self.trace_id)
    }

    /// `00-<trace id>-<span id>-01` (sampled).
    pub fn traceparent(&self) -> String {
        format!("00-{}-{}-01", self.trace_id(), hex(&self.span_id))
    }
}

impl Default for TraceContext {
    fn default() -> Self {
        Self::new()
    }
}

/// The headers of one call: the session's and the iteration's, and the call's request id, whose
/// attempt each attempt sets.
#[derive(Debug, Clone)]
pub struct CallMetadata {
    base: MetadataMap,
    id: RequestId,
    /// The attempt number of the call's first attempt: 1, or more for a call that a read-write
    /// transaction's retry makes again ([`CallMetadata::from_attempt`]).
    first_attempt: u32,
}

impl CallMetadata {
    /// `base` for the request `id` (its first attempt).
    pub fn new(base: MetadataMap, id: RequestId) -> Self {
        CallMetadata {
            base,
            id,
            first_attempt: 1,
        }
    }

    /// The same call made again as attempt `attempt` (from 1) of its request: a read-write
    /// transaction's retry sends each of its calls again under the same request number, the
    /// attempt counted up; a resume within it counts on from there.
    pub fn from_attempt(&self, attempt: u32) -> CallMetadata {
        CallMetadata {
            first_attempt: attempt.max(1),
            ..self.clone()
        }
    }

    /// The call's first attempt's id.
    pub fn id(&self) -> RequestId {
        self.id
    }

    /// The headers of attempt `attempt` (from 1).
    pub fn attempt(&self, attempt: u32) -> MetadataMap {
        let mut headers = self.base.clone();
        let attempt = self.first_attempt.saturating_add(attempt.saturating_sub(1));
        let id = self.id.with_attempt(attempt).to_string();
        // The id is digits, dots and hex: always a valid header value.
        if let Ok(value) = MetadataValue::try_from(id) {
            headers.insert(REQUEST_ID_HEADER, value);
        }
        headers
    }
}

impl Default for CallMetadata {
    /// No headers but a request id, from a client object of its own (a call outside a session).
    fn default() -> Self {
        CallMetadata::new(MetadataMap::new(), RequestIds::new().next())
    }
}

/// The headers of every call of one iteration: the session's (with a current token), the
/// iteration's trace when end-to-end tracing is on, and the session's request counter.
#[derive(Debug)]
pub struct IterationHeaders<'a> {
    base: MetadataMap,
    ids: &'a RequestIds,
    trace: Option<TraceContext>,
    first: OnceLock<RequestId>,
}

impl<'a> IterationHeaders<'a> {
    /// `base` for the calls of one iteration, numbered by `ids`; with a new trace when `tracing`.
    pub fn new(mut base: MetadataMap, ids: &'a RequestIds, tracing: bool) -> Self {
        let trace = tracing.then(TraceContext::new);
        if let Some(trace) = &trace {
            base.insert(
                END_TO_END_TRACING_HEADER,
                MetadataValue::from_static("true"),
            );
            if let Ok(value) = MetadataValue::try_from(trace.traceparent()) {
                base.insert(TRACEPARENT_HEADER, value);
            }
        }
        IterationHeaders {
            base,
            ids,
            trace,
            first: OnceLock::new(),
        }
    }

    /// The headers of the iteration's next call (a new request number).
    pub fn next_call(&self) -> CallMetadata {
        let id = self.ids.next();
        let _ = self.first.set(id);
        CallMetadata::new(self.base.clone(), id)
    }

    /// The id of the iteration's first call (its first attempt), once it was made.
    pub fn first_request(&self) -> Option<RequestId> {
        self.first.get().copied()
    }

    /// The iteration's trace id, when it is traced.
    pub fn trace_id(&self) -> Option<String> {
        self.trace.as_ref().map(TraceContext::trace_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text<'a>(headers: &'a MetadataMap, name: &str) -> Option<&'a str> {
        headers.get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn the_process_id_is_16_lowercase_hex_digits_and_stays() {
        let id = process_id();
        assert_eq!(id.len(), 16, "{id}");
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{id}"
        );
        assert_eq!(process_id(), id);
    }

    #[test]
    fn requests_count_up_and_an_attempt_keeps_the_request_number() {
        let (first_client, second_client) = (RequestIds::new(), RequestIds::new());
        assert_ne!(first_client.client, second_client.client);
        let one = first_client.next();
        let two = first_client.next();
        assert_eq!((one.request, two.request), (1, 2));
        assert_eq!((one.attempt, one.channel), (1, 1));
        let prefix = format!("1.{}.{}.1.", process_id(), first_client.client);
        assert_eq!(two.to_string(), format!("{prefix}2.1"));
        let call = CallMetadata::new(MetadataMap::new(), two);
        assert_eq!(
            text(&call.attempt(3), REQUEST_ID_HEADER),
            Some(format!("{prefix}2.3").as_str())
        );
    }

    #[test]
    fn a_traced_iteration_carries_a_traceparent_whose_trace_is_new_each_time() {
        let ids = RequestIds::new();
        let traced = IterationHeaders::new(MetadataMap::new(), &ids, true);
        let headers = traced.next_call().attempt(1);
        assert_eq!(text(&headers, END_TO_END_TRACING_HEADER), Some("true"));
        let parent = text(&headers, TRACEPARENT_HEADER).expect("a traceparent");
        let parts: Vec<&str> = parent.split('-').collect();
        assert_eq!(parts.len(), 4, "{parent}");
        assert_eq!((parts[0], parts[3]), ("00", "01"));
        assert_eq!((parts[1].len(), parts[2].len()), (32, 16));
        assert_eq!(traced.trace_id().as_deref(), Some(parts[1]));
        let first = traced.first_request().expect("a call was made");
        traced.next_call();
        assert_eq!(
            traced.first_request(),
            Some(first),
            "the first call's id stays"
        );
        let again = IterationHeaders::new(MetadataMap::new(), &ids, true);
        assert_ne!(again.trace_id(), traced.trace_id());
        let plain = IterationHeaders::new(MetadataMap::new(), &ids, false);
        let headers = plain.next_call().attempt(1);
        assert!(headers.get(TRACEPARENT_HEADER).is_none());
        assert!(headers.get(END_TO_END_TRACING_HEADER).is_none());
        assert_eq!(plain.trace_id(), None);
    }

    #[test]
    fn the_afe_opt_in_is_on_by_default_and_can_be_left_out() {
        let mut fixed = MetadataMap::new();
        add_fixed(&mut fixed, HeaderOptions::default());
        assert_eq!(text(&fixed, AFE_SERVER_TIMING_HEADER), Some("true"));
        let client = text(&fixed, API_CLIENT_HEADER).expect("the api client");
        assert!(
            client.contains(&format!("spanprof/{}", env!("CARGO_PKG_VERSION"))),
            "{client}"
        );
        add_fixed(
            &mut fixed,
            HeaderOptions {
                afe_timing: false,
                ..HeaderOptions::default()
            },
        );
        assert!(fixed.get(AFE_SERVER_TIMING_HEADER).is_none());
    }

    #[test]
    fn the_grpc_version_is_the_locked_tonic() {
        let lock = include_str!("../../../../Cargo.lock");
        let locked = lock
            .split("[[package]]")
            .find(|p| p.contains("\nname = \"tonic\"\n"))
            .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
            .map(|v| v.trim_matches('"'));
        assert_eq!(locked, Some(GRPC_VERSION));
    }
}
