//! The only module that knows the Spanner wire format: PartialResultSet merging, column types, typed
//! values and rows, result statistics, stream files and the canonical row encoding.
//!
//! Everything it hands out is plain data ([`Row`], [`Value`], [`ResultStats`], [`StreamCounters`]); the
//! generated protobuf types stop here, apart from the messages the client sends and the server builds.

pub mod bounded_json;
mod canonical;
pub mod chunk;
mod convert;
mod decoder;
mod either;
mod error;
pub mod fast;
pub mod fields;
mod metadata;
pub mod result_stats;
pub mod stream_file;
mod stream_state;
mod types;
mod value;

pub use chunk::MergeError;
pub use convert::{ValueError, decode_value, encode_value};
pub use decoder::{Row, StreamDecoder};
pub use either::{AnyDecoder, DecoderKind, Parsed, RowsView};
pub use error::{ColumnRef, DecodeError, DecodeErrorKind};
pub use fast::{FastDecoder, PeekError, RowBatch, RowRef, Scanned, ValueRef, peek_resume_token};
pub use result_stats::{PlanNode, QueryStats, ResultStats, RowCount};
pub use stream_file::{DecodedStream, StreamFileError, decode_stream_file};
pub use stream_state::StreamCounters;
pub use stream_state::StreamState;
pub use types::{Field, Type, TypeError, struct_type};
pub use value::{Date, Interval, Numeric, ParseError, Timestamp, Uuid, Value};
