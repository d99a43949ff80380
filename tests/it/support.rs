//! Helpers shared by the integration tests.

use std::path::PathBuf;

use prost::Message as _;
use prost_types::value::Kind;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::wire::{
    DecodeError, DecodeErrorKind, FastDecoder, Field, Row, RowBatch, StreamCounters, StreamDecoder,
    StreamState, Type, Value, struct_type,
};

/// A file under `tests/vectors/` (verbatim copies of `shared/vectors/`).
pub fn vector(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(name)
}

/// A named column.
pub fn col(name: &str, ty: Type) -> Field {
    Field {
        name: name.to_owned(),
        ty,
    }
}

/// Metadata declaring `columns`.
pub fn metadata(columns: &[Field]) -> Option<pb::ResultSetMetadata> {
    Some(pb::ResultSetMetadata {
        row_type: Some(struct_type(columns)),
        ..Default::default()
    })
}

/// A wire string value.
pub fn s(text: &str) -> prost_types::Value {
    kind(Kind::StringValue(text.to_owned()))
}

/// A wire number value.
pub fn num(x: f64) -> prost_types::Value {
    kind(Kind::NumberValue(x))
}

/// A wire bool value.
pub fn boolean(b: bool) -> prost_types::Value {
    kind(Kind::BoolValue(b))
}

/// A wire null value.
pub fn null() -> prost_types::Value {
    kind(Kind::NullValue(0))
}

/// A wire list value.
pub fn list(values: Vec<prost_types::Value>) -> prost_types::Value {
    kind(Kind::ListValue(prost_types::ListValue { values }))
}

fn kind(k: Kind) -> prost_types::Value {
    prost_types::Value { kind: Some(k) }
}

/// A PartialResultSet with these values.
pub fn prs(
    metadata: Option<pb::ResultSetMetadata>,
    values: Vec<prost_types::Value>,
    chunked: bool,
) -> pb::PartialResultSet {
    pb::PartialResultSet {
        metadata,
        values,
        chunked_value: chunked,
        ..Default::default()
    }
}

/// Feeds `messages` (serialized, the way they travel) and finishes the stream.
pub fn decode_all(
    messages: &[pb::PartialResultSet],
) -> Result<Vec<Row>, spanprof::wire::DecodeError> {
    let mut decoder = Twin::new();
    let mut rows = Vec::new();
    for msg in messages {
        decoder.feed_bytes(&msg.encode_to_vec(), &mut rows)?;
    }
    decoder.finish()?;
    Ok(rows)
}

/// The reference decoder and the fast decoder fed the same bytes. Every call answers what the reference
/// answers, after asserting that the fast decoder gave the same: the same rows (typed, NaN-safe), the
/// same error (class, message, column; protobuf errors may word their reason differently), the same
/// counters. Any test that decodes through a `Twin` is an equivalence test of the two decoders.
#[derive(Debug, Default)]
pub struct Twin {
    reference: StreamDecoder,
    fast: FastDecoder,
    batch: RowBatch,
    fed: usize,
}

impl Twin {
    /// Both decoders, waiting for the first message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds `bytes` to both; appends the reference's rows to `rows`.
    #[track_caller]
    pub fn feed_bytes(&mut self, bytes: &[u8], rows: &mut Vec<Row>) -> Result<(), DecodeError> {
        let before = rows.len();
        let want = self.reference.feed_bytes(bytes, rows);
        // Clear the batch every other message, so rows spanning messages are carried through a clear.
        if self.fed.is_multiple_of(2) {
            self.batch.clear();
        }
        let had = self.batch.len();
        let got = self
            .fast
            .feed_bytes(bytes::Bytes::copy_from_slice(bytes), &mut self.batch);
        let message = self.fed;
        self.fed += 1;
        assert_same_result(&got, &want, &format!("message {message}"));
        let fast_rows: Vec<Row> = self.batch.iter().skip(had).map(|r| r.to_row()).collect();
        assert!(
            same_rows(&fast_rows, &rows[before..]),
            "message {message}: the fast decoder's rows differ:\nfast {fast_rows:?}\nreference {:?}",
            &rows[before..]
        );
        assert_eq!(
            self.fast.stream().counters(),
            self.reference.stream().counters(),
            "message {message}: counters"
        );
        want
    }

    /// Feeds a message to both, serialized.
    #[track_caller]
    pub fn feed(
        &mut self,
        msg: pb::PartialResultSet,
        rows: &mut Vec<Row>,
    ) -> Result<(), DecodeError> {
        self.feed_bytes(&msg.encode_to_vec(), rows)
    }

    /// Finishes both.
    #[track_caller]
    pub fn finish(&mut self) -> Result<(), DecodeError> {
        let want = self.reference.finish();
        let got = self.fast.finish();
        assert_same_result(&got, &want, "finish");
        assert_same_stream(self.fast.stream(), self.reference.stream());
        want
    }

    /// The reference's counters (the fast decoder's are checked equal after every call).
    pub fn counters(&self) -> &StreamCounters {
        self.reference.stream().counters()
    }
}

/// Both decoders read the same of the stream besides its rows: counters, resume token, `last`,
/// statistics, columns and read timestamp.
#[track_caller]
pub fn assert_same_stream(fast: &StreamState, reference: &StreamState) {
    assert_eq!(fast.counters(), reference.counters(), "counters");
    assert_eq!(
        fast.resume_token(),
        reference.resume_token(),
        "resume token"
    );
    assert_eq!(fast.saw_last(), reference.saw_last(), "last");
    assert_eq!(fast.stats(), reference.stats(), "stats");
    assert_eq!(fast.columns(), reference.columns(), "columns");
    assert_eq!(
        fast.read_timestamp(),
        reference.read_timestamp(),
        "read timestamp"
    );
}

/// Asserts two decoders' answers agree: both fine, or the same error (any protobuf reason).
#[track_caller]
pub fn assert_same_result(got: &Result<(), DecodeError>, want: &Result<(), DecodeError>, at: &str) {
    match (got, want) {
        (Ok(()), Ok(())) => {}
        (Err(g), Err(w)) => {
            let same_kind = match (&g.kind, &w.kind) {
                (DecodeErrorKind::Protobuf(_), DecodeErrorKind::Protobuf(_)) => true,
                (a, b) => a == b,
            };
            assert!(
                same_kind && g.message == w.message && g.column == w.column,
                "{at}: fast decoder says {g}, reference says {w}"
            );
        }
        _ => panic!("{at}: fast decoder says {got:?}, reference says {want:?}"),
    }
}

/// Equal rows, comparing floats by bit pattern (so NaN equals NaN).
pub fn same_rows(a: &[Row], b: &[Row]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| same_values(x.values(), y.values()))
}

fn same_values(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float64(x), Value::Float64(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Value::Float32(x), Value::Float32(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Value::Array(x), Value::Array(y)) | (Value::Struct(x), Value::Struct(y)) => {
            same_values(x, y)
        }
        _ => a == b,
    }
}

/// A loopback port that is bound but not listening, held for as long as the value lives: nothing
/// else can take it, and a connection to it is refused at once. Tests that need "an address where
/// nothing answers" use it instead of binding port 0, dropping the listener and hoping the number
/// stays free.
pub struct ClosedPort {
    _socket: tokio::net::TcpSocket,
    /// `127.0.0.1:PORT`.
    pub host_port: String,
    /// The port.
    pub port: u16,
}

impl ClosedPort {
    /// Binds a fresh loopback port without listening on it.
    pub fn new() -> ClosedPort {
        let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
        socket
            .bind("127.0.0.1:0".parse().expect("a loopback address"))
            .expect("a free loopback port");
        let port = socket.local_addr().expect("a bound address").port();
        ClosedPort {
            _socket: socket,
            host_port: format!("127.0.0.1:{port}"),
            port,
        }
    }
}
