//! Helpers shared by the integration tests.

use std::path::PathBuf;

use prost::Message as _;
use prost_types::value::Kind;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::wire::{Field, Row, StreamDecoder, Type, struct_type};

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
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    for msg in messages {
        decoder.feed_bytes(&msg.encode_to_vec(), &mut rows)?;
    }
    decoder.finish()?;
    Ok(rows)
}
