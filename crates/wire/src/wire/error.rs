//! The decoder's error: which message, which column, and why.

use std::fmt;

use super::chunk::MergeError;
use super::convert::ValueError;
use super::types::TypeError;

/// A stream that cannot be decoded. Names the message (0-based index in the stream) and, where one is
/// involved, the column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct DecodeError {
    /// Index of the message at fault, counting from 0; for an error at the end of the stream, the
    /// number of messages received.
    pub message: usize,
    /// The column involved, if any.
    pub column: Option<ColumnRef>,
    /// What went wrong.
    pub kind: DecodeErrorKind,
}

/// A column by position and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnRef {
    /// Position in the row, from 0.
    pub index: usize,
    /// Name as the metadata gave it (may be empty).
    pub name: String,
}

impl ColumnRef {
    /// Column `index` of `columns` (named if it exists).
    pub(crate) fn of(columns: &[super::types::Field], index: usize) -> Self {
        let name = columns
            .get(index)
            .map(|f| f.name.clone())
            .unwrap_or_default();
        ColumnRef { index, name }
    }
}

/// The classes of decoding error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorKind {
    /// The bytes are not a PartialResultSet.
    #[error("not a PartialResultSet: {0}")]
    Protobuf(String),
    /// The first message has no metadata (or no row type).
    #[error("the first message carries no metadata")]
    NoMetadata,
    /// A column's type cannot be used.
    #[error("column type: {0}")]
    BadType(#[from] TypeError),
    /// A later message carries a different row type.
    #[error("metadata changed mid-stream: columns were {before}, now {after}")]
    MetadataChanged {
        /// The columns of the first message.
        before: String,
        /// The columns the later message declares.
        after: String,
    },
    /// Values arrived for a row type with no columns.
    #[error("{0} values but the row type has no columns")]
    ValuesWithoutColumns(usize),
    /// `chunked_value` set on a message with no values.
    #[error("chunked_value is set on a message with no values")]
    ChunkedWithoutValues,
    /// A chunk whose kind cannot be merged onto the previous piece.
    #[error("{0}")]
    CannotMerge(#[from] MergeError),
    /// A value that is not a valid value of its column's type.
    #[error("{0}")]
    BadValue(#[from] ValueError),
    /// The stream ended with a partial row.
    #[error("the stream ended mid-row, after {have} of {want} values")]
    EndedMidRow {
        /// Values of the last row received.
        have: usize,
        /// Columns in a row.
        want: usize,
    },
    /// The stream ended while a value was still chunked.
    #[error("the stream ended inside a chunked value")]
    EndedInChunk,
    /// The stream had no messages at all.
    #[error("the stream has no messages")]
    NoMessages,
    /// The decoder was used after it had reported an error.
    #[error("the decoder already failed on an earlier message")]
    AlreadyFailed,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {}", self.message)?;
        if let Some(column) = &self.column {
            if column.name.is_empty() {
                write!(f, ", column {}", column.index)?;
            } else {
                write!(f, ", column {} ({})", column.index, column.name)?;
            }
        }
        write!(f, ": {}", self.kind)
    }
}
