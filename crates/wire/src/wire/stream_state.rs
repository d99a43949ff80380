//! What a decoder knows of a stream besides its rows: the columns, a value left chunked, the counters,
//! the statistics, the last resume token, whether `last` came, and whether decoding failed. Both
//! decoders keep one, so they answer these questions, end a message and check the end of the stream
//! the same way.

use std::sync::Arc;

use prost::bytes::Bytes;

use super::error::{ColumnRef, DecodeError, DecodeErrorKind};
use super::metadata::Header;
use super::result_stats::ResultStats;
use super::types::{Field, Type};
use super::value::Timestamp;
use crate::proto::google::spanner::v1 as pb;

/// What the decoder counted over a stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StreamCounters {
    /// PartialResultSets received.
    pub messages: u64,
    /// Values received, counting each piece of a chunked value.
    pub values: u64,
    /// Messages whose last value was chunked (continued in the next message).
    pub chunked_values: u64,
    /// Serialized size of the messages, in bytes.
    pub wire_bytes: u64,
    /// Complete rows handed out.
    pub rows: u64,
    /// Messages that carried a resume token.
    pub resume_tokens: u64,
}

/// A decoder's view of the stream so far, apart from the rows ([`StreamDecoder::stream`],
/// [`FastDecoder::stream`]).
///
/// [`StreamDecoder::stream`]: super::StreamDecoder::stream
/// [`FastDecoder::stream`]: super::FastDecoder::stream
#[derive(Debug, Default)]
pub struct StreamState {
    pub(super) header: Header,
    /// The incomplete last value of the previous message, and its column.
    pub(super) pending: Option<(prost_types::Value, usize)>,
    pub(super) counters: StreamCounters,
    stats: Option<ResultStats>,
    /// A read-write transaction's precommit token with the highest sequence number so far.
    precommit_token: Option<pb::MultiplexedSessionPrecommitToken>,
    resume_token: Bytes,
    saw_last: bool,
    /// Set by the first error: every later call fails with [`DecodeErrorKind::AlreadyFailed`].
    pub(super) failed: bool,
}

impl StreamState {
    /// The columns, once the first message has arrived.
    pub fn columns(&self) -> Option<&[Field]> {
        self.header.columns().map(|c| &c[..])
    }

    /// The columns' types, once the first message has arrived.
    pub fn column_types(&self) -> impl Iterator<Item = &Type> {
        self.header
            .columns()
            .into_iter()
            .flat_map(|c| c.iter().map(|f| &f.ty))
    }

    /// What has been counted so far.
    pub fn counters(&self) -> &StreamCounters {
        &self.counters
    }

    /// The statistics, if a message carried them.
    pub fn stats(&self) -> Option<&ResultStats> {
        self.stats.as_ref()
    }

    /// Takes the statistics out.
    pub fn take_stats(&mut self) -> Option<ResultStats> {
        self.stats.take()
    }

    /// The last resume token received (empty if none).
    pub fn resume_token(&self) -> &[u8] {
        &self.resume_token
    }

    /// Whether a message had `last = true`.
    pub fn saw_last(&self) -> bool {
        self.saw_last
    }

    /// The id of the transaction the request began (an inline begin), once the first message
    /// named it.
    pub fn transaction_id(&self) -> Option<&[u8]> {
        self.header.transaction_id()
    }

    /// The read timestamp of the transaction, when the metadata carried a valid one.
    pub fn read_timestamp(&self) -> Option<Timestamp> {
        self.header.read_timestamp()
    }

    /// An error at the message being decoded (the next one, counting from 0).
    pub(super) fn error(&self, kind: DecodeErrorKind, column: Option<ColumnRef>) -> DecodeError {
        DecodeError {
            message: self.counters.messages as usize,
            column,
            kind,
        }
    }

    /// An error in column `index` of `columns`.
    pub(super) fn column_error(
        &self,
        kind: DecodeErrorKind,
        columns: &[Field],
        index: usize,
    ) -> DecodeError {
        self.error(kind, Some(ColumnRef::of(columns, index)))
    }

    /// Counts the message that failed with `kind` and marks the decoder failed.
    pub(super) fn fail(&mut self, kind: DecodeErrorKind, column: Option<ColumnRef>) -> DecodeError {
        let error = self.error(kind, column);
        self.counters.messages += 1;
        self.failed = true;
        error
    }

    /// Fails if an earlier call failed.
    pub(super) fn check_not_failed(&self) -> Result<(), DecodeError> {
        if self.failed {
            return Err(self.error(DecodeErrorKind::AlreadyFailed, None));
        }
        Ok(())
    }

    /// What a message says before its values: the metadata (taken from the first, checked on later
    /// ones) and how many values it holds. Returns the columns.
    pub(super) fn begin_message(
        &mut self,
        metadata: Option<&pb::ResultSetMetadata>,
        values: usize,
    ) -> Result<Arc<[Field]>, DecodeError> {
        self.header
            .take(metadata)
            .map_err(|(kind, column)| self.error(kind, column))?;
        let columns = match self.header.columns() {
            Some(columns) => Arc::clone(columns),
            None => return Err(self.error(DecodeErrorKind::NoMetadata, None)),
        };
        self.counters.values += values as u64;
        if values > 0 && columns.is_empty() {
            return Err(self.error(DecodeErrorKind::ValuesWithoutColumns(values), None));
        }
        Ok(columns)
    }

    /// Keeps `token` when its sequence number is the highest the stream has carried: a
    /// multiplexed session's commit sends the highest one back.
    pub(super) fn keep_precommit_token(&mut self, token: &pb::MultiplexedSessionPrecommitToken) {
        if self
            .precommit_token
            .as_ref()
            .is_none_or(|kept| token.seq_num > kept.seq_num)
        {
            self.precommit_token = Some(token.clone());
        }
    }

    /// The precommit token with the highest sequence number the stream carried.
    pub fn precommit_token(&self) -> Option<&pb::MultiplexedSessionPrecommitToken> {
        self.precommit_token.as_ref()
    }

    /// What a decoded message says after its values: its resume token, statistics and `last`.
    pub(super) fn end_message(
        &mut self,
        resume_token: Bytes,
        stats: Option<pb::ResultSetStats>,
        last: bool,
    ) {
        if !resume_token.is_empty() {
            self.resume_token = resume_token;
            self.counters.resume_tokens += 1;
        }
        if let Some(stats) = stats {
            self.stats = Some(ResultStats::from(stats));
        }
        self.saw_last |= last;
    }

    /// Checks the stream ended cleanly, with `partial_row` values of an unfinished row left over: no
    /// partial row, no value left chunked.
    pub(super) fn finish(&self, partial_row: usize) -> Result<(), DecodeError> {
        self.check_not_failed()?;
        let pending = self.pending.as_ref().map(|(_, column)| *column);
        self.header
            .check_end(self.counters.messages, pending, partial_row)
            .map_err(|(kind, column)| self.error(kind, column))
    }
}
