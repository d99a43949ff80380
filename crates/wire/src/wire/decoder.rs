//! The streaming decoder: PartialResultSets in, typed rows out as soon as each is complete.

use prost::Message as _;

use super::chunk::merge;
use super::convert::decode_value;
use super::error::{DecodeError, DecodeErrorKind};
use super::stream_state::StreamState;
use super::value::Value;
use crate::proto::google::spanner::v1 as pb;

/// One decoded row: a value per column, in column order.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    /// The values, in column order.
    pub fn values(&self) -> &[Value] {
        &self.0
    }
}

/// Decodes one ExecuteStreamingSql answer, fed one PartialResultSet at a time.
///
/// Each call hands out the rows the message completed. Metadata is taken from the first message; a later
/// message may repeat it (or carry an empty row type) but never change it. After an error the decoder is
/// spent: every later call returns [`DecodeErrorKind::AlreadyFailed`].
#[derive(Debug, Default)]
pub struct StreamDecoder {
    stream: StreamState,
    /// The values of the row being completed.
    row: Vec<Value>,
}

impl StreamDecoder {
    /// A decoder waiting for the first message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes a serialized PartialResultSet and appends the rows it completes to `rows`.
    pub fn feed_bytes(&mut self, bytes: &[u8], rows: &mut Vec<Row>) -> Result<(), DecodeError> {
        self.stream.check_not_failed()?;
        let msg = match pb::PartialResultSet::decode(bytes) {
            Ok(msg) => msg,
            Err(e) => {
                let kind = DecodeErrorKind::Protobuf(e.to_string());
                return Err(self.stream.fail(kind, None));
            }
        };
        self.feed_counted(msg, bytes.len(), rows)
    }

    /// Takes one PartialResultSet and appends the rows it completes to `rows`.
    pub fn feed(
        &mut self,
        msg: pb::PartialResultSet,
        rows: &mut Vec<Row>,
    ) -> Result<(), DecodeError> {
        let size = msg.encoded_len();
        self.feed_counted(msg, size, rows)
    }

    /// Like [`StreamDecoder::feed`] for a message the caller decoded from `wire_bytes` bytes itself
    /// (to time the protobuf decoding apart from the row decoding).
    pub fn feed_decoded(
        &mut self,
        msg: pb::PartialResultSet,
        wire_bytes: usize,
        rows: &mut Vec<Row>,
    ) -> Result<(), DecodeError> {
        self.feed_counted(msg, wire_bytes, rows)
    }

    /// Decodes the bytes of the next PartialResultSet without taking it, naming the message in the
    /// error as the decoder would.
    pub fn parse(&self, bytes: &[u8]) -> Result<pb::PartialResultSet, DecodeError> {
        pb::PartialResultSet::decode(bytes).map_err(|e| {
            self.stream
                .error(DecodeErrorKind::Protobuf(e.to_string()), None)
        })
    }

    fn feed_counted(
        &mut self,
        msg: pb::PartialResultSet,
        wire_bytes: usize,
        rows: &mut Vec<Row>,
    ) -> Result<(), DecodeError> {
        self.stream.check_not_failed()?;
        let result = self.take(msg, rows);
        // Count the message whatever happened, so that the next error names the next message.
        self.stream.counters.messages += 1;
        self.stream.counters.wire_bytes += wire_bytes as u64;
        if result.is_err() {
            self.stream.failed = true;
        }
        result
    }

    fn take(&mut self, msg: pb::PartialResultSet, rows: &mut Vec<Row>) -> Result<(), DecodeError> {
        let columns = self
            .stream
            .begin_message(msg.metadata.as_ref(), msg.values.len())?;
        let mut values = msg.values;
        if let Some((piece, column)) = self.stream.pending.take() {
            if values.is_empty() {
                // A message with no values continues nothing; the piece waits for the next one.
                self.stream.pending = Some((piece, column));
            } else {
                let first = std::mem::take(&mut values[0]);
                values[0] = merge(piece, first)
                    .map_err(|e| self.stream.column_error(e.into(), &columns, column))?;
            }
        }
        if msg.chunked_value {
            let Some(last) = values.pop() else {
                return Err(self
                    .stream
                    .error(DecodeErrorKind::ChunkedWithoutValues, None));
            };
            self.stream.counters.chunked_values += 1;
            let column = (self.row.len() + values.len()) % columns.len();
            self.stream.pending = Some((last, column));
        }
        for value in values {
            let column = self.row.len();
            let typed = decode_value(&columns[column].ty, value)
                .map_err(|e| self.stream.column_error(e.into(), &columns, column))?;
            self.row.push(typed);
            if self.row.len() == columns.len() {
                rows.push(Row(std::mem::replace(
                    &mut self.row,
                    Vec::with_capacity(columns.len()),
                )));
                self.stream.counters.rows += 1;
            }
        }
        if let Some(token) = &msg.precommit_token {
            self.stream.keep_precommit_token(token);
        }
        self.stream
            .end_message(msg.resume_token.into(), msg.stats, msg.last);
        Ok(())
    }

    /// Checks the stream ended cleanly: no partial row, no value left chunked.
    pub fn finish(&mut self) -> Result<(), DecodeError> {
        self.stream.finish(self.row.len())
    }

    /// What the decoder has read of the stream besides rows: columns, counters, statistics, token.
    pub fn stream(&self) -> &StreamState {
        &self.stream
    }

    /// The same, to take the statistics out.
    pub fn stream_mut(&mut self) -> &mut StreamState {
        &mut self.stream
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Timestamp;

    fn first_message(read_timestamp: prost_types::Timestamp) -> pb::PartialResultSet {
        pb::PartialResultSet {
            metadata: Some(pb::ResultSetMetadata {
                row_type: Some(pb::StructType::default()),
                transaction: Some(pb::Transaction {
                    read_timestamp: Some(read_timestamp),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_read_timestamp_comes_from_the_metadata_and_is_checked() {
        let mut decoder = StreamDecoder::new();
        let when = prost_types::Timestamp {
            seconds: 1_700_000_000,
            nanos: 5,
        };
        decoder
            .feed(first_message(when), &mut Vec::new())
            .expect("decodes");
        assert_eq!(
            decoder.stream().read_timestamp(),
            Timestamp::new(1_700_000_000, 5)
        );

        let mut decoder = StreamDecoder::new();
        let broken = prost_types::Timestamp {
            seconds: 1,
            nanos: -1,
        };
        decoder
            .feed(first_message(broken), &mut Vec::new())
            .expect("decodes");
        assert_eq!(decoder.stream().read_timestamp(), None);
    }
}
